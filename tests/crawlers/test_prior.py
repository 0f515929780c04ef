"""The metadata prior, hand-computed on a small case, with the real all-MiniLM-L6-v2 for consistency."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from crawlers.prior import PriorWeights, consistency, doc_quality, metadata_prior
from crawlers.record import identifier_words
from ecoagent.config import MINILM
from ecoagent.embeddings import EmbeddingCache, encoder_key
from ecoagent.models import load_encoder


def sigma(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def test_doc_quality_by_hand() -> None:
    # description lengths 10, 20, 40 -> median 20; tag strings 0, 6, 6 -> median 6; logistic(2 (x - 1))
    q = doc_quality(["a" * 10, "b" * 20, "c" * 40], ["", "search", "search"], PriorWeights())
    expected = [
        0.6 * sigma(-1.0) + 0.4 * sigma(-2.0),
        0.6 * sigma(0.0) + 0.4 * sigma(0.0),
        0.6 * sigma(2.0) + 0.4 * sigma(0.0),
    ]
    assert q == pytest.approx(expected)
    # centred at the median: a median-length doc is 0.5, an empty one is low, not 0.5 as before
    assert q[1] == pytest.approx(0.5)
    empty = doc_quality(["", "x" * 50, "y" * 50], ["", "t", "t"], PriorWeights())[0]
    assert empty == pytest.approx(sigma(-2.0)) and empty < 0.13


def test_prior_combines_the_parts_with_the_paper_weights() -> None:
    cons = np.array([0.9, 0.2, 0.0, 0.5, 0.5])
    quality = np.array([0.7, 0.5, 0.6, 0.4, 0.4])
    # "official" is what the crawl passes for a tool on an official MCP list; "mcp" for a community server
    lists = ["crewai", "n8n", "toolbench", "official", "mcp"]
    source, prior = metadata_prior(cons, lists, quality, PriorWeights())
    assert source.tolist() == [0.9, 0.8, 0.6, 1.0, 0.6]
    assert [PriorWeights().weight_of(p) for p in ("langchain", "llamaindex")] == [0.9, 0.9]
    assert prior == pytest.approx(
        [
            0.5 * 0.9 + 0.3 * 0.9 + 0.2 * 0.7,
            0.5 * 0.2 + 0.3 * 0.8 + 0.2 * 0.5,
            0.3 * 0.6 + 0.2 * 0.6,
            0.5 * 0.5 + 0.3 * 1.0 + 0.2 * 0.4,
            0.5 * 0.5 + 0.3 * 0.6 + 0.2 * 0.4,
        ]
    )


def test_names_given_by_the_source_are_read_as_words() -> None:
    assert identifier_words("brave_web_search") == "brave web search"
    assert identifier_words("getJiraIssue") == "get jira issue"
    assert identifier_words("Slack channel Archive") == "Slack channel Archive"


def test_weights_are_validated() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        PriorWeights(consistency=0.6)
    with pytest.raises(ValueError, match=">= 0"):
        PriorWeights(consistency=1.2, source=-0.2, doc_quality=0.0)


def test_consistency_is_the_clipped_sbert_cosine(tmp_path: Path) -> None:
    encoder = load_encoder(MINILM)
    names = ["Slack: Send a message", "Search the internet with Serper", "Slack: Send a message"]
    descriptions = [
        "Send a message",
        "A tool that can be used to search the internet with a search_query.",
        "zzzz qqqq",
    ]
    got = consistency(names, descriptions, encoder)
    a = encoder.encode(names, normalize_embeddings=True)
    b = encoder.encode(descriptions, normalize_embeddings=True)
    assert got == pytest.approx(np.clip((a * b).sum(axis=1), 0, 1), abs=1e-5)
    assert got[0] > 0.5 and got[0] > got[2]
    assert ((got >= 0) & (got <= 1)).all()
    # the on-disk cache returns the same numbers and encodes nothing the second time
    cache = EmbeddingCache(tmp_path / "emb.sqlite", encoder_key(encoder, MINILM))
    first = consistency(names, descriptions, encoder, cache=cache)

    class NoEncode:
        def encode(self, *args: object, **kwargs: object) -> np.ndarray:
            raise AssertionError("cache miss")

    again = consistency(names, descriptions, NoEncode(), cache=cache)  # type: ignore[arg-type]
    assert first == pytest.approx(got, abs=1e-5) and again == pytest.approx(first)
