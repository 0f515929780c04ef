"""The embedding cache on OpenVINO's CPU runtime: the same vectors as torch, its own cache rows."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from ecoagent import embeddings
from ecoagent.config import MINILM
from ecoagent.embeddings import BACKEND_ENV, EmbeddingCache, embed, encode_backend, static_encoder_key
from ecoagent.openvino_encoder import OpenVINOEncoder


def test_openvino_float32_computes_torchs_vectors_row_for_row(minilm, docs) -> None:
    torch_vectors = minilm.encode(docs, batch_size=8, normalize_embeddings=True, convert_to_numpy=True)
    ov = OpenVINOEncoder(minilm, "float32").encode(docs, batch_size=8)
    assert ov.dtype == np.float32 and ov.shape == torch_vectors.shape
    np.testing.assert_allclose(np.linalg.norm(ov, axis=1), 1.0, atol=1e-5)
    # row i is text i: each row matches its own torch vector, not merely the set of them
    assert (ov * torch_vectors).sum(axis=1).min() > 0.99999
    # the longest documents are cut at max_seq_length as sentence-transformers cuts them
    assert max(len(minilm.tokenizer(d)["input_ids"]) for d in docs[:10]) > minilm.max_seq_length


def test_openvino_bfloat16_stays_within_rounding(minilm, docs) -> None:
    full = OpenVINOEncoder(minilm, "float32").encode(docs)
    half = OpenVINOEncoder(minilm, "bfloat16").encode(docs)
    cos = (full * half).sum(axis=1)
    assert cos.min() > 0.99  # bfloat16 rounding; on CPUs without native bf16 OpenVINO keeps float32
    with pytest.raises(ValueError, match="float16"):
        OpenVINOEncoder(minilm, "float16")


def test_the_cache_keeps_openvino_rows_apart_and_reads_them_back(tmp_path, minilm, docs) -> None:
    path, key = tmp_path / "emb.sqlite", static_encoder_key(MINILM)
    by_torch = EmbeddingCache(path, key, "float32", backend="torch").encode(docs, minilm)
    ov_cache = EmbeddingCache(path, key, "float32", backend="openvino")
    assert ov_cache.encoder_key == f"{key}|backend=openvino"
    assert (
        EmbeddingCache(path, key, "bfloat16", "openvino").encoder_key
        == f"{key}|dtype=bfloat16|backend=openvino"
    )
    by_ov = ov_cache.encode(docs, lambda: minilm)
    assert (by_ov * by_torch).sum(axis=1).min() > 0.99999
    assert np.abs(by_ov - by_torch).max() > 0  # computed by OpenVINO, not read from torch's rows
    again = EmbeddingCache(path, key, "float32", "openvino").encode(
        docs, lambda: pytest.fail("loaded on a hit")
    )
    np.testing.assert_array_equal(again, by_ov)
    with sqlite3.connect(path) as db:
        counts = dict(db.execute("SELECT model, COUNT(*) FROM emb GROUP BY model").fetchall())
    assert counts == {key: len(set(docs)), f"{key}|backend=openvino": len(set(docs))}


def test_openvino_refuses_what_is_not_a_sentence_transformer(tmp_path) -> None:
    class Tower:
        def encode(self, texts: list[str], **_: object) -> np.ndarray:
            return np.ones((len(texts), 2), dtype=np.float32)

    cache = EmbeddingCache(tmp_path / "emb.sqlite", "tower|x", "float32", backend="openvino")
    with pytest.raises(TypeError, match="backend='torch'"):
        cache.encode(["a tool"], Tower())
    with pytest.raises(ValueError, match="onnx"):
        EmbeddingCache(tmp_path / "emb.sqlite", "k", "float32", backend="onnx")


def test_env_decides_the_backend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKEND_ENV, "torch")
    assert encode_backend() == "torch"
    monkeypatch.setenv(BACKEND_ENV, "openvino")
    assert encode_backend() == "openvino"
    monkeypatch.setenv(BACKEND_ENV, "auto")
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    assert encode_backend() == "openvino"  # installed with the project
    monkeypatch.setattr("ecoagent.openvino_encoder.available", lambda: False)
    assert encode_backend() == "torch"
    monkeypatch.setenv(BACKEND_ENV, "openvino")
    with pytest.raises(ImportError, match="pip install openvino"):
        encode_backend()
    monkeypatch.setenv(BACKEND_ENV, "tensorrt")
    with pytest.raises(ValueError, match=f"{BACKEND_ENV}='tensorrt'"):
        encode_backend()


def test_a_frozen_backbone_tower_reads_what_openvino_embedded(tmp_path, monkeypatch, docs) -> None:
    """The train stage's frozen tool tower shares the crawl's key: under OpenVINO it must read (and on a
    miss compute) OpenVINO's vectors under that key, never store torch's tower vectors there."""
    from rated.encoder import DualEncoder

    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path))
    monkeypatch.setenv(BACKEND_ENV, "openvino")
    monkeypatch.setattr(embeddings, "_COMPILED", {})
    tower = DualEncoder.from_backbones(MINILM).freeze()
    monkeypatch.setattr(tower, "_encode_documents", lambda *a: pytest.fail("the torch tower ran"))
    first = tower.encode_tools(docs[:12])  # a miss: computed by OpenVINO under the shared key
    np.testing.assert_array_equal(first, embed(MINILM, docs[:12]))
    with sqlite3.connect(tmp_path / embeddings.CACHE_FILE) as db:
        keys = {k for (k,) in db.execute("SELECT DISTINCT model FROM emb")}
    assert keys == {f"{static_encoder_key(MINILM)}|backend=openvino"}
