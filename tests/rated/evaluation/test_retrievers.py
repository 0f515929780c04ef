"""The lexical baselines rank the obvious tool first; the dense baseline reads cached tool embeddings."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rated.evaluation.retrievers import BM25Retriever, DenseRetriever, TfidfRetriever
from validators.recall import texts_hash

DOCS = ["Gmail: send and read email", "PDF Reader: extract text from pdf files", "Weather: city forecast"]
QUERIES = ["send an email to Bob", "extract the text of a pdf", "forecast for my city"]


def test_lexical_retrievers_rank_the_matching_tool_first() -> None:
    for retriever in (TfidfRetriever(), BM25Retriever()):
        scores = retriever.fit(DOCS).scores(QUERIES)
        assert scores.shape == (3, 3)
        assert scores.argmax(axis=1).tolist() == [0, 1, 2], retriever.name


def test_bm25_scores_zero_for_a_query_without_known_words() -> None:
    assert not BM25Retriever().fit(DOCS).scores(["zzz qqq"]).any()


def test_dense_retriever_reads_cached_tool_embeddings(tmp_path: Path) -> None:
    name = "sentence-transformers/all-mpnet-base-v2"
    cached = np.eye(3, 4, dtype=np.float32)
    np.save(tmp_path / f"emb-{texts_hash(name, DOCS)}.npy", cached)
    dense = DenseRetriever(name, cache_dirs=(tmp_path / "missing", tmp_path)).fit(DOCS)
    assert dense.cache_hit == tmp_path / f"emb-{texts_hash(name, DOCS)}.npy"
    assert np.array_equal(dense.tool_emb, cached)
