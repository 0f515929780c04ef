"""The one embedding cache of every stage: text -> normalized vector under one encoder, in SQLite.

The crawl's prior, Syn's yield and negatives, Real's recall and the evaluation's dense baselines embed
the same catalog documents with the same packaged encoders; all-mpnet-base-v2 over the 8,638-tool
catalog alone costs minutes on 2 cores. ``embed`` computes a text once per encoder and machine and every
later stage, build or shard reads it back. The cache is a SQLite file in ``ecoagent.models.cache_dir()``
(stdlib, safe across processes) keyed by the encoder's identity and the text's sha256; values are the
normalized float32 vectors. A different model or different weights are a different key, never a stale hit;
the weights are named by content (``ecoagent.models.weights_id``), so a new clone's ``.venv`` or a moved
cache folder reads the same vectors back.

On a CPU that multiplies bfloat16 natively (AMX-BF16 or AVX512-BF16) the cache encodes under torch's
bfloat16 autocast (``encode_dtype``): all-mpnet-base-v2 over the catalog ran 2.0x faster on the Intel
Xeon VM, its vectors within cosine 0.9999 of float32 (``bench/bench_encode.py --dtypes``). The dtype is
part of the key, so float32 and bfloat16 vectors are never mixed.

Where OpenVINO is installed (a default dependency) the cache runs the packaged sentence-transformers
encoders on its CPU runtime (``encode_backend``, ``ecoagent.openvino_encoder``): all-mpnet-base-v2 encoded
catalog documents 1.29x faster than torch's bfloat16 autocast on a Zen 4 EPYC, its vectors within cosine
0.998 of float32 torch (mean 0.99995; ``bench/bench_encode.py --backends``). The backend is part of the key
too (``|backend=openvino``); ``ECOAGENT_ENCODE_BACKEND=torch`` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ecoagent.summary import cpu_flags

CACHE_FILE = "embeddings.sqlite"

# Texts per forward pass. sentence-transformers sorts a call's texts by length, so only the long tail's
# batches are padded; on a CPU, a batch of 64 long documents (64 x 384 tokens for mpnet) spends more on
# padded attention than a small one. Over the whole 8,638-tool catalog MiniLM ran 1.07x faster at 8 than at
# 64 (one run), and all-mpnet-base-v2 took 615 s in a build against 777 s in the build before (1.26x); the
# vectors agree to 2e-7 (bench/bench_encode.py, bench/results/encode.md).
BATCH_SIZE = 8
# Under the bfloat16 autocast the best batch depends on the CPU. With AMX (the Intel Xeon VM) MiniLM ran
# 1.56x faster at 32 than at 8 over the catalog and mpnet about the same (132 / 130 / 139 s at 8 / 16 / 32);
# with AVX512-BF16 alone (a Zen 4 EPYC) 8 was the fastest for both, by 1.14x (MiniLM) and 1.37x (mpnet)
# over 32 on 800 documents (bench/results/encode.md). The cache encodes with ``default_batch_size(dtype)``
# unless a caller sets one.
AMX_BATCH_SIZE = 32


def default_batch_size(dtype: str) -> int:
    """Texts per encoder call for ``dtype`` on this CPU: 32 under bfloat16 where AMX tiles do the
    matrix products, else ``BATCH_SIZE``."""
    return AMX_BATCH_SIZE if dtype == "bfloat16" and "amx_bf16" in cpu_flags() else BATCH_SIZE


DTYPE_ENV = "ECOAGENT_ENCODE_DTYPE"
DTYPES = ("auto", "float32", "bfloat16")
NATIVE_BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def encode_dtype() -> str:
    """``float32`` or ``bfloat16``: the precision the cache encodes in on this machine.

    ``$ECOAGENT_ENCODE_DTYPE`` (``auto``, ``float32``, ``bfloat16``) decides; ``auto`` (the default) picks
    bfloat16 only where the CPU has native bf16 arithmetic and no GPU is visible (the autocast is torch's
    CPU one), since emulated bf16 on an AVX2 CPU is slower than float32.
    """
    choice = os.environ.get(DTYPE_ENV, "auto").strip().lower() or "auto"
    if choice not in DTYPES:
        raise ValueError(f"{DTYPE_ENV}={choice!r}: expected one of {', '.join(DTYPES)}")
    if choice != "auto":
        return choice
    if not cpu_flags() & set(NATIVE_BF16_FLAGS):
        return "float32"
    import torch

    return "float32" if torch.cuda.is_available() else "bfloat16"


BACKEND_ENV = "ECOAGENT_ENCODE_BACKEND"
BACKENDS = ("auto", "torch", "openvino")


def encode_backend() -> str:
    """``torch`` or ``openvino``: the runtime the cache encodes with.

    ``$ECOAGENT_ENCODE_BACKEND`` (``auto``, ``torch``, ``openvino``) decides; ``auto`` (the default) takes
    OpenVINO wherever it is installed and no GPU is visible (its runtime here is the CPU one).
    """
    from ecoagent import openvino_encoder

    choice = os.environ.get(BACKEND_ENV, "auto").strip().lower() or "auto"
    if choice not in BACKENDS:
        raise ValueError(f"{BACKEND_ENV}={choice!r}: expected one of {', '.join(BACKENDS)}")
    if choice == "openvino" and not openvino_encoder.available():
        raise ImportError(f"{BACKEND_ENV}=openvino but openvino is not installed: pip install openvino")
    if choice != "auto":
        return choice
    if not openvino_encoder.available():
        return "torch"
    import torch

    return "torch" if torch.cuda.is_available() else "openvino"


_COMPILED: dict[tuple[str, str], Any] = {}


def _on_openvino(encoder: Any, encoder_key: str, dtype: str) -> Any:
    """``encoder`` compiled by OpenVINO, once per process for each encoder identity and precision."""
    from sentence_transformers import SentenceTransformer

    from ecoagent.openvino_encoder import OpenVINOEncoder

    if not isinstance(encoder, SentenceTransformer):
        raise TypeError(
            f"the openvino backend runs sentence-transformers models, not {type(encoder).__name__}: "
            "give this cache backend='torch'"
        )
    compiled = _COMPILED.get((encoder_key, dtype))
    if compiled is None:
        if len(_COMPILED) >= 2:  # a build's two packaged encoders; a third (a test's) replaces the oldest
            _COMPILED.pop(next(iter(_COMPILED)))
        compiled = _COMPILED[(encoder_key, dtype)] = OpenVINOEncoder(encoder, dtype)
    return compiled


@contextlib.contextmanager
def precision(dtype: str) -> Iterator[None]:
    """Run the encoder calls inside under ``dtype`` (bfloat16: torch's CPU autocast; float32: as is)."""
    if dtype == "float32":
        yield
        return
    import torch

    with torch.autocast("cpu", dtype=getattr(torch, dtype)):
        yield


class EmbeddingCache:
    """Normalized embeddings of texts under one encoder identity, computed in ``dtype`` by ``backend``.

    ``dtype`` defaults to ``encode_dtype()``, ``backend`` to ``encode_backend()``; a bfloat16 cache stores
    under ``encoder_key + "|dtype=bfloat16"``, an OpenVINO one adds ``"|backend=openvino"`` (float32 torch
    keys are the bare identity, as before either existed). The openvino backend takes only
    sentence-transformers models (anything else, such as a dual encoder's tower, needs ``backend="torch"``).
    """

    def __init__(
        self, path: Path, encoder_key: str, dtype: str | None = None, backend: str | None = None
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.dtype = dtype or encode_dtype()
        if self.dtype not in DTYPES[1:]:
            raise ValueError(f"dtype {self.dtype!r}: expected float32 or bfloat16")
        self.backend = backend or encode_backend()
        if self.backend not in BACKENDS[1:]:
            raise ValueError(f"backend {self.backend!r}: expected torch or openvino")
        self.base_key = encoder_key
        self.encoder_key = encoder_key if self.dtype == "float32" else f"{encoder_key}|dtype={self.dtype}"
        if self.backend != "torch":
            self.encoder_key += f"|backend={self.backend}"
        with self._connect() as db:
            db.execute(
                "CREATE TABLE IF NOT EXISTS emb (model TEXT, sha TEXT, vec BLOB, PRIMARY KEY (model, sha))"
            )

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    @staticmethod
    def _sha(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()

    def encode(self, texts: Sequence[str], encoder: Any, batch_size: int | None = None) -> np.ndarray:
        """Embeddings of ``texts`` (rows in order), encoding only those not cached yet.

        ``encoder`` is a sentence-transformers model or a zero-argument function that loads one; the
        function is called only when some text is missing, so a full hit never loads a model.
        ``batch_size`` defaults to ``default_batch_size(dtype)``.
        """
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
            if not hasattr(encoder, "encode"):
                encoder = encoder()
            if self.backend == "openvino":
                encoder = _on_openvino(encoder, self.base_key, self.dtype)
            with precision(self.dtype if self.backend == "torch" else "float32"):
                new = encoder.encode(
                    [texts[i] for i in missing],
                    batch_size=batch_size or default_batch_size(self.dtype),
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
            new = np.asarray(new, dtype=np.float32)  # float32 and normalized on either backend
            with self._connect() as db:
                db.executemany(
                    "INSERT OR REPLACE INTO emb VALUES (?, ?, ?)",
                    [(self.encoder_key, shas[i], new[j].tobytes()) for j, i in enumerate(missing)],
                )
            for j, i in enumerate(missing):
                found[shas[i]] = new[j]
        return np.stack([found[s] for s in shas]) if shas else np.zeros((0, 0), dtype=np.float32)


def key_for(name: str, max_seq_length: Any) -> str:
    """The cache key of encoder ``name`` (as configured; its weights by content) at ``max_seq_length``."""
    from ecoagent.models import weights_id

    return f"{name}|{weights_id(name)}|max_seq_length={max_seq_length}"


def encoder_key(encoder: Any, name: str) -> str:
    """Identity of an encoder: its configured name, where its weights come from, and its max length."""
    return key_for(name, getattr(encoder, "max_seq_length", ""))


def static_encoder_key(name: str) -> str | None:
    """``encoder_key`` read from the packaged weights' config, without loading the model (None if absent)."""
    from ecoagent.models import resolve_encoder

    config = Path(resolve_encoder(name)) / "sentence_bert_config.json"
    try:
        max_seq_length = json.loads(config.read_text())["max_seq_length"]
    except (OSError, ValueError, KeyError):
        return None
    return key_for(name, max_seq_length)


def shipped_encoder(key: str) -> str | None:
    """The encoder name whose model as it ships has cache identity ``key`` (``static_encoder_key``), else
    None: a key ``embed`` would compute under that name, whichever runtime the cache uses."""
    name = key.split("|", 1)[0]
    return name if name and static_encoder_key(name) == key else None


def embed(
    model_name: str, texts: Sequence[str], batch_size: int | None = None, cache: Path | None = None
) -> np.ndarray:
    """L2-normalized float32 embeddings of ``texts`` by a packaged encoder, each text encoded at most once.

    Args:
        model_name: hub name or packaged alias (``ecoagent.models.load_encoder``).
        texts: rows of the result, in order; must not be empty.
        batch_size: texts per encoder call (default: ``default_batch_size`` of the cache's dtype).
        cache: the SQLite file (default ``cache_dir()/embeddings.sqlite``, shared by all stages).
    """
    if not texts:
        raise ValueError("nothing to embed: empty list of texts")
    from ecoagent import models

    key = static_encoder_key(model_name) or encoder_key(models.load_encoder(model_name), model_name)
    store = EmbeddingCache(cache or models.cache_dir() / CACHE_FILE, key)
    return store.encode(list(texts), lambda: models.load_encoder(model_name), batch_size=batch_size)
