"""The shared embedding cache's precision: float32 by default in tests, bfloat16 where a CPU has it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ecoagent import embeddings, models
from ecoagent.config import MINILM
from ecoagent.embeddings import DTYPE_ENV, EmbeddingCache, encode_dtype, key_for, static_encoder_key


def test_env_decides_and_auto_needs_native_bf16(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DTYPE_ENV, "bfloat16")
    assert encode_dtype() == "bfloat16"
    monkeypatch.setenv(DTYPE_ENV, "float32")
    assert encode_dtype() == "float32"
    monkeypatch.setenv(DTYPE_ENV, "auto")
    monkeypatch.setattr(embeddings, "cpu_flags", lambda: {"avx2", "avx512f"})
    assert encode_dtype() == "float32"  # AVX2 / plain AVX-512: bf16 would be emulated, slower
    monkeypatch.setattr(embeddings, "cpu_flags", lambda: {"avx2", "amx_bf16"})
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert encode_dtype() == "bfloat16"
    monkeypatch.setenv(DTYPE_ENV, "fp8")
    with pytest.raises(ValueError, match=f"{DTYPE_ENV}='fp8'"):
        encode_dtype()


def test_batch_of_32_only_under_bf16_on_amx(monkeypatch: pytest.MonkeyPatch) -> None:
    # measured: with AMX batch 32 was fastest under bf16; with AVX512-BF16 alone (Zen 4) batch 8 was
    monkeypatch.setattr(embeddings, "cpu_flags", lambda: {"avx512f", "avx512_bf16", "amx_bf16"})
    assert (embeddings.default_batch_size("bfloat16"), embeddings.default_batch_size("float32")) == (32, 8)
    monkeypatch.setattr(embeddings, "cpu_flags", lambda: {"avx512f", "avx512_bf16"})
    assert (embeddings.default_batch_size("bfloat16"), embeddings.default_batch_size("float32")) == (8, 8)


def test_bfloat16_vectors_agree_and_never_mix_with_float32(tmp_path, minilm, docs) -> None:
    path, key = tmp_path / "emb.sqlite", static_encoder_key(MINILM)
    full = EmbeddingCache(path, key, "float32").encode(docs, minilm)
    half_cache = EmbeddingCache(path, key, "bfloat16")
    assert half_cache.encoder_key == f"{key}|dtype=bfloat16"
    half = half_cache.encode(docs, minilm)
    assert half.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(half, axis=1), 1.0, atol=1e-5)
    cos = (full * half).sum(axis=1)
    assert cos.min() > 0.999  # the same vectors to bf16 rounding...
    assert np.abs(full - half).max() > 1e-6  # ...but computed in bf16, not read from the float32 rows
    # each dtype reads back its own rows; a full hit never calls the loader
    again = EmbeddingCache(path, key, "bfloat16").encode(docs, lambda: pytest.fail("loaded on a hit"))
    np.testing.assert_array_equal(again, half)
    with sqlite3.connect(path) as db:
        counts = dict(db.execute("SELECT model, COUNT(*) FROM emb GROUP BY model").fetchall())
    assert counts == {key: len(set(docs)), f"{key}|dtype=bfloat16": len(set(docs))}


def test_unknown_dtype_is_refused(tmp_path) -> None:
    with pytest.raises(ValueError, match="float16"):
        EmbeddingCache(tmp_path / "emb.sqlite", "k", "float16")


def test_keys_name_the_weights_by_content_not_by_folder(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two copies of the same weights (a new clone's .venv, a moved cache folder) share a key, so their
    vectors are read back; changed weights get a new key; a hub name without local weights is kept."""
    copies = []
    for where in ("clone-a/.venv", "clone-b/.venv"):
        root = tmp_path / where / "model"
        root.mkdir(parents=True)
        (root / "config.json").write_text('{"hidden_size": 4}')
        (root / "model.safetensors").write_bytes(bytes(range(64)))
        copies.append(root)

    def key_at(root: Path) -> str:
        monkeypatch.setattr(models, "resolve_encoder", lambda name: str(root))
        return key_for(MINILM, 256)

    first = key_at(copies[0])
    assert first == key_at(copies[1])
    assert str(tmp_path) not in first
    (copies[1] / "model.safetensors").write_bytes(bytes(range(65)))
    assert key_at(copies[1]) != first
    assert key_at(copies[0]) == first
    monkeypatch.setattr(models, "resolve_encoder", lambda name: name)
    assert key_for("org/not-installed", 128) == "org/not-installed|org/not-installed|max_seq_length=128"
