"""Negatives on the real crawled tools: never the positive or an equivalent, and the SBERT top choice."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pytest

from ecoagent.config import MINILM
from ecoagent.models import load_encoder
from ecoagent.schemas import tool_documents
from generators.equivalents import find_equivalents, name_words, names_similar
from generators.negatives import NegativeConfig, mine_negatives


@pytest.fixture(scope="module")
def slice_(tools: pl.DataFrame) -> dict[str, object]:
    """CrewAI + LangChain tools (two platforms that share many functions), their embeddings, and one
    query per tool taken from the first sentence of its description."""
    part = tools.filter(pl.col("platform").is_in(["crewai", "langchain"])).sort("tool_id")
    encoder = load_encoder(MINILM)
    docs = tool_documents(part)
    emb = encoder.encode(docs, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    queries = [re.split(r"(?<=[.!?])\s", d.split(": ", 1)[1].strip(), maxsplit=1)[0][:200] for d in docs]
    q_emb = encoder.encode(queries, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
    equivalents = find_equivalents(part["name"].to_list(), part["platform"].to_list(), emb)
    return {"tools": part, "docs": docs, "emb": emb, "queries": queries, "q_emb": q_emb, "equiv": equivalents}


def test_name_words_split_camel_and_drop_generic_words() -> None:
    assert name_words("SerperDevTool") == {"serper", "dev"}
    assert name_words("tavily_search_results_json") == {"tavily", "search", "results", "json"}
    assert names_similar("TavilySearchTool", "tavily_search", 0.5)
    assert not names_similar("GithubSearchTool", "YoutubeVideoSearchTool", 0.5)


def test_equivalents_cross_platforms_only(slice_: dict[str, object]) -> None:
    part: pl.DataFrame = slice_["tools"]  # type: ignore[assignment]
    equiv: dict[int, set[int]] = slice_["equiv"]  # type: ignore[assignment]
    platforms = part["platform"].to_list()
    names = part["name"].to_list()
    assert equiv, "CrewAI and LangChain share functions; some equivalents must be found"
    for i, others in equiv.items():
        for j in others:
            assert platforms[i] != platforms[j]
            assert i in equiv[j]
    pairs = {(names[i], names[j]) for i, js in equiv.items() for j in js}
    assert any("tavily" in a.lower() and "tavily" in b.lower() for a, b in pairs), sorted(pairs)[:20]


def test_negatives_never_positive_or_equivalent(slice_: dict[str, object]) -> None:
    emb: np.ndarray = slice_["emb"]  # type: ignore[assignment]
    q_emb: np.ndarray = slice_["q_emb"]  # type: ignore[assignment]
    equiv: dict[int, set[int]] = slice_["equiv"]  # type: ignore[assignment]
    positive = np.arange(len(q_emb))
    negs = mine_negatives(q_emb, emb, positive, equiv, NegativeConfig(hard=1, random=1), seed=3)
    assert len(negs.query) == 2 * len(q_emb)
    for q, t in zip(negs.query, negs.tool, strict=True):
        assert t != positive[q]
        assert t not in equiv.get(int(positive[q]), set())
    kinds = negs.kind.reshape(-1, 2)
    assert (kinds[:, 0] == "hard").all() and (kinds[:, 1] == "random").all()
    hard, rand = negs.score[negs.kind == "hard"], negs.score[negs.kind == "random"]
    assert hard.mean() > rand.mean() + 0.2
    np.testing.assert_allclose(negs.score, (q_emb[negs.query] * emb[negs.tool]).sum(1), atol=1e-5)
    again = mine_negatives(q_emb, emb, positive, equiv, NegativeConfig(hard=1, random=1), seed=3)
    assert np.array_equal(again.tool, negs.tool)


def test_hard_negatives_agree_with_sentence_transformers(slice_: dict[str, object]) -> None:
    from datasets import Dataset
    from sentence_transformers.util import mine_hard_negatives

    docs: list[str] = slice_["docs"]  # type: ignore[assignment]
    queries: list[str] = slice_["queries"]  # type: ignore[assignment]
    emb: np.ndarray = slice_["emb"]  # type: ignore[assignment]
    q_emb: np.ndarray = slice_["q_emb"]  # type: ignore[assignment]
    unique = [i for i in range(40) if docs.count(docs[i]) == 1 and queries.count(queries[i]) == 1]
    mined = mine_hard_negatives(
        Dataset.from_dict({"query": [queries[i] for i in unique], "tool": [docs[i] for i in unique]}),
        load_encoder(MINILM),
        corpus=docs,
        num_negatives=1,
        sampling_strategy="top",
        output_format="triplet",
        verbose=False,
    )
    ours = mine_negatives(q_emb[unique], emb, np.array(unique), {}, NegativeConfig(hard=1, random=1))
    ours_docs = [docs[t] for t, k in zip(ours.tool, ours.kind, strict=True) if k == "hard"]
    assert mined["negative"] == ours_docs
