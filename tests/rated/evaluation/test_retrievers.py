"""The lexical baselines rank the obvious tool first; the dense baseline reads the shared embedding cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ecoagent.config import MINILM
from ecoagent.embeddings import CACHE_FILE, EmbeddingCache, static_encoder_key
from rated.evaluation.retrievers import BM25Retriever, DenseRetriever, TfidfRetriever

DOCS = ["Gmail: send and read email", "PDF Reader: extract text from pdf files", "Weather: city forecast"]
QUERIES = ["send an email to Bob", "extract the text of a pdf", "forecast for my city"]


def test_lexical_retrievers_rank_the_matching_tool_first() -> None:
    for retriever in (TfidfRetriever(), BM25Retriever()):
        scores = retriever.fit(DOCS).scores(QUERIES)
        assert scores.shape == (3, 3)
        assert scores.argmax(axis=1).tolist() == [0, 1, 2], retriever.name


def test_bm25_scores_zero_for_a_query_without_known_words() -> None:
    assert not BM25Retriever().fit(DOCS).scores(["zzz qqq"]).any()


def test_dense_retriever_reads_the_shared_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Embeddings another stage stored under the same encoder key are read back; no model is loaded."""
    name = MINILM
    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path))
    cached = np.eye(3, 4, dtype=np.float32)
    store = EmbeddingCache(tmp_path / CACHE_FILE, static_encoder_key(name))
    assert np.array_equal(store.encode(DOCS, lambda: FakeEncoder(cached)), cached)

    def no_model(*_: object) -> None:
        raise AssertionError("the encoder was loaded despite cached embeddings")

    monkeypatch.setattr("ecoagent.models.load_encoder", no_model)
    dense = DenseRetriever(name).fit(DOCS)
    assert np.array_equal(dense.tool_emb, cached)


class FakeEncoder:
    """Returns fixed rows: stands in for the stage that embedded the documents first."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        return self.rows[: len(texts)]
