"""The lexical baselines rank the obvious tool first; the dense baseline reads the shared embedding cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ecoagent.config import MINILM
from ecoagent.embeddings import CACHE_FILE, EmbeddingCache, static_encoder_key
from ecoagent.retrievers import BM25Retriever, DenseRetriever, TfidfRetriever

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
    """Documents and queries another stage stored under the same encoder key are read back (Syn's
    second yield encoder embeds the queries Table 1 later scores); no model is loaded."""
    name = MINILM
    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path))
    cached = np.eye(3, 4, dtype=np.float32)
    cached_queries = np.eye(3, 4, k=1, dtype=np.float32)
    store = EmbeddingCache(tmp_path / CACHE_FILE, static_encoder_key(name))
    assert np.array_equal(store.encode(DOCS, lambda: FakeEncoder(cached)), cached)
    assert np.array_equal(store.encode(QUERIES, lambda: FakeEncoder(cached_queries)), cached_queries)

    monkeypatch.setattr("ecoagent.models.load_encoder", no_model)
    dense = DenseRetriever(name).fit(DOCS)
    assert np.array_equal(dense.tool_emb, cached)
    assert np.array_equal(dense.scores(QUERIES[::-1]), (cached_queries[::-1] @ cached.T).astype(np.float64))
    assert dense.scores([]).shape == (0, 3)


def test_dense_retriever_ranks_the_matching_tool_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The packaged MiniLM, queries encoded through the cache: each query finds its tool, and the
    query vectors are the cache's (a second retriever reads them back without loading the model)."""
    monkeypatch.setenv("ECOAGENT_CACHE", str(tmp_path))
    scores = DenseRetriever(MINILM).fit(DOCS).scores(QUERIES)
    assert scores.argmax(axis=1).tolist() == [0, 1, 2]

    monkeypatch.setattr("ecoagent.models.load_encoder", no_model)
    assert np.array_equal(DenseRetriever(MINILM).fit(DOCS).scores(QUERIES), scores)


def no_model(*_: object) -> None:
    raise AssertionError("the encoder was loaded despite cached embeddings")


class FakeEncoder:
    """Returns fixed rows: stands in for the stage that embedded the documents first."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        return self.rows[: len(texts)]
