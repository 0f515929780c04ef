"""A persistent text -> embedding cache, so re-crawling an unchanged catalog does not re-encode it.

Consistency needs ~7k SBERT embeddings; on 2 busy CPU cores that is minutes. The cache is a SQLite file
(stdlib, safe across processes) keyed by the encoder's identity and the text's sha256; values are the
normalized float32 vectors. A different model or weights path is a different key, never a stale hit.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np


class EmbeddingCache:
    """Normalized embeddings of texts under one encoder identity."""

    def __init__(self, path: Path, encoder_key: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.encoder_key = encoder_key
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS emb (model TEXT, sha TEXT, vec BLOB, PRIMARY KEY (model, sha))"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    @staticmethod
    def _sha(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def encode(self, texts: Sequence[str], encoder: Any, batch_size: int = 64) -> np.ndarray:
        """Embeddings of ``texts`` (rows in order), encoding only those not cached yet."""
        shas = [self._sha(t) for t in texts]
        found: dict[str, np.ndarray] = {}
        with self._connect() as db:
            for i in range(0, len(shas), 500):
                chunk = shas[i : i + 500]
                rows = db.execute(
                    f"SELECT sha, vec FROM emb WHERE model = ? AND sha IN ({','.join('?' * len(chunk))})",
                    [self.encoder_key, *chunk],
                ).fetchall()
                found.update((sha, np.frombuffer(vec, dtype=np.float32)) for sha, vec in rows)
        missing = [i for i, s in enumerate(shas) if s not in found]
        if missing:
            new = encoder.encode(
                [texts[i] for i in missing],
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            ).astype(np.float32)
            with self._connect() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO emb VALUES (?, ?, ?)",
                    [(self.encoder_key, shas[i], new[j].tobytes()) for j, i in enumerate(missing)],
                )
            for j, i in enumerate(missing):
                found[shas[i]] = new[j]
        return np.stack([found[s] for s in shas]) if shas else np.zeros((0, 0), dtype=np.float32)


def encoder_key(encoder: Any, name: str) -> str:
    """Identity of an encoder: its configured name, where its weights come from, and its max length."""
    from ecoagent.models import resolve_encoder

    return f"{name}|{resolve_encoder(name)}|max_seq_length={getattr(encoder, 'max_seq_length', '')}"
