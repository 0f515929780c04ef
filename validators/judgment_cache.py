"""Judgments kept across builds: a (prompt, model, pair) already scored is never sent to the LLM again.

The stage's checkpoints live in one artifact folder, so a new ``--out`` (a fresh build, another profile's
folder, a test of a flag) judged every pair again: about 1.2 s a pair on 2 cores. This cache is keyed by
what the score depends on and nothing else: the model's identity (backend, model id, weights file hash
or served revision), the prompt version, and the exact chat the model reads (``pair_conversation``: query,
tool name, description, context, arguments), hashed. A changed description, prompt or model is a miss.

It is one SQLite file beside the embedding cache (``ecoagent.models.cache_dir()``), safe for the stage's
concurrent shards (SQLite's own locking, a 30 s busy timeout).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ecoagent.llm.base import Conversation

CACHE_FILE = "judgments.sqlite"


def model_identity(info: Mapping[str, Any]) -> str:
    """What a score depends on about the model (``LLMClient.info()``): backend, id, weights."""
    weights = info.get("model_file_sha256") or info.get("revision") or info.get("model_file") or "?"
    return f"{info.get('backend')}|{info.get('model')}|{weights}"


def conversation_key(conversation: Conversation) -> str:
    """A hash of the exact chat the model reads."""
    return hashlib.sha256(json.dumps(conversation, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


class JudgmentCache:
    """Scores by (model identity, prompt version, conversation hash)."""

    def __init__(self, path: Path, model: str, prompt_version: str) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.model = model
        self.prompt_version = prompt_version
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS judgment (model TEXT, prompt TEXT, sha TEXT, score REAL, "
                "PRIMARY KEY (model, prompt, sha))"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get(self, keys: Sequence[str]) -> dict[str, float]:
        """The cached scores among ``keys``."""
        out: dict[str, float] = {}
        with self._connect() as db:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start : start + 500])
                marks = ",".join("?" * len(chunk))
                rows = db.execute(
                    f"SELECT sha, score FROM judgment WHERE model = ? AND prompt = ? AND sha IN ({marks})",
                    [self.model, self.prompt_version, *chunk],
                )
                out.update({sha: float(score) for sha, score in rows})
        return out

    def put(self, scores: Mapping[str, float]) -> None:
        with self._connect() as db:
            db.executemany(
                "INSERT OR REPLACE INTO judgment VALUES (?, ?, ?, ?)",
                [(self.model, self.prompt_version, sha, float(s)) for sha, s in scores.items()],
            )
