"""Recall: top-k by cosine on real embeddings, the embedding cache, and the threshold grid."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ecoagent.config import MINILM
from ecoagent.embeddings import embed
from ecoagent.schemas import tool_documents
from validators.recall import distribution, threshold_grid, top_k


@pytest.fixture(scope="module")
def embedded(tools_slice: pl.DataFrame, parsed, tmp_path_factory) -> tuple[np.ndarray, np.ndarray, Path]:
    cache = tmp_path_factory.mktemp("emb") / "embeddings.sqlite"
    queries = [q.query for q in parsed.queries[:12]]
    return embed(MINILM, queries, cache=cache), embed(MINILM, tool_documents(tools_slice), cache=cache), cache


def test_top_k_matches_brute_force(embedded) -> None:
    q, t, _ = embedded
    assert np.allclose(np.linalg.norm(q, axis=1), 1, atol=1e-4)
    idx, sims = top_k(q, t, 5)
    assert idx.shape == sims.shape == (len(q), 5)
    full = q @ t.T
    for i in range(len(q)):
        assert np.all(np.diff(sims[i]) <= 1e-7)  # best first
        assert np.allclose(sims[i], np.sort(full[i])[::-1][:5], atol=1e-6)
        assert np.allclose(full[i, idx[i]], sims[i])


def test_top_k_caps_at_table_size_and_rejects_empty(embedded) -> None:
    q, t, _ = embedded
    idx, _ = top_k(q, t[:3], 5)
    assert idx.shape == (len(q), 3)
    with pytest.raises(ValueError, match="tool table is empty"):
        top_k(q, t[:0], 5)
    with pytest.raises(ValueError, match="k must be"):
        top_k(q, t, 0)


def test_embedding_cache_is_reused(embedded, parsed, monkeypatch: pytest.MonkeyPatch) -> None:
    q, t, cache = embedded
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT COUNT(*) FROM emb").fetchone()[0] == len(q) + len(t)

    def no_model(name: str):  # a cache hit must not load the encoder at all
        raise AssertionError("encoder loaded despite a cached embedding")

    monkeypatch.setattr("ecoagent.models.load_encoder", no_model)
    again = embed(MINILM, [x.query for x in parsed.queries[:12]], cache=cache)
    assert np.array_equal(again, q)
    with pytest.raises(ValueError, match="nothing to embed"):
        embed(MINILM, [], cache=cache)


def test_threshold_grid_counts_pairs_and_queries() -> None:
    scores = [0.9, 0.72, 0.7, 0.5, 0.31, 0.2]
    qids = ["a", "a", "b", "b", "c", "c"]
    rows = {r["threshold"]: r for r in threshold_grid(scores, qids, grid=(0.3, 0.5, 0.7, 0.8))}
    assert (rows[0.3]["pairs"], rows[0.3]["queries"]) == (5, 3)
    assert (rows[0.5]["pairs"], rows[0.5]["queries"]) == (4, 2)
    assert (rows[0.7]["pairs"], rows[0.7]["queries"]) == (3, 2)  # 0.7 itself passes: >= threshold
    assert (rows[0.8]["pairs"], rows[0.8]["queries"]) == (1, 1)
    assert rows[0.5]["share"] == pytest.approx(4 / 6)


def test_distribution_summary() -> None:
    d = distribution([0.1, 0.2, 0.3, 0.4])
    assert d["count"] == 4 and d["mean"] == pytest.approx(0.25)
    assert d["p50"] == pytest.approx(0.25) and d["min"] == 0.1 and d["max"] == 0.4
    assert sum(h["count"] for h in d["histogram"]) == 4
    assert distribution([]) == {"count": 0}


def test_bm25_scores_every_tool_and_matches_rare_words(tools_slice: pl.DataFrame) -> None:
    from validators.recall import retriever_name, score_matrix, top_k_of_scores

    docs = tool_documents(tools_slice)
    name = tools_slice["name"][7]
    scores = score_matrix("bm25", [f"please use {name}", "zzzz qqqq"], docs)
    assert scores.shape == (2, len(docs))
    idx, _ = top_k_of_scores(scores, 3)
    assert 7 in idx[0]  # its own name finds the tool lexically
    assert not scores[1].any()  # words in no document score nothing
    assert retriever_name("bm25") == "BM25" and retriever_name(MINILM) == "all-MiniLM-L6-v2"


def test_floor_is_a_quantile_of_the_retrievers_own_scores() -> None:
    from validators.recall import floor_from_distribution

    top = np.array([[9.0, 7.0], [5.0, 3.0], [1.0, 0.5]])  # BM25-scale scores
    assert floor_from_distribution(top, 0.0) == 0.5
    assert floor_from_distribution(top, 0.5) == 3.0  # 'lower': an observed score
    assert floor_from_distribution(top, 1.0) == 9.0
    with pytest.raises(ValueError, match="not in"):
        floor_from_distribution(top, 1.2)
