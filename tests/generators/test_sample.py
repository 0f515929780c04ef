"""The platform-stratified tool sample."""

from __future__ import annotations

from collections import Counter

import polars as pl
import pytest

from generators.sample import stratified_sample


def test_sample_is_balanced_seeded_and_sorted(tools: pl.DataFrame) -> None:
    sample = stratified_sample(tools, 40, seed=0)
    assert sample.height == 40
    assert Counter(sample["platform"].to_list()) == {  # five platforms since MCP joined the crawl
        "langchain": 8,
        "crewai": 8,
        "llamaindex": 8,
        "n8n": 8,
        "mcp": 8,
    }
    assert sample["tool_id"].to_list() == sorted(sample["tool_id"].to_list())
    assert sample.equals(stratified_sample(tools.reverse(), 40, seed=0))
    assert not sample.equals(stratified_sample(tools, 40, seed=1))


def test_a_larger_sample_keeps_every_tool_of_a_smaller_one(tools: pl.DataFrame) -> None:
    small, large = stratified_sample(tools, 20, seed=3), stratified_sample(tools, 45, seed=3)
    assert set(small["tool_id"]) < set(large["tool_id"])  # so a grown Syn run resumes its checkpoint
    assert not set(small["tool_id"]) <= set(stratified_sample(tools, 45, seed=4)["tool_id"])


def test_small_platforms_hand_their_share_to_the_others(tools: pl.DataFrame) -> None:
    small = tools.filter(pl.col("platform") != "crewai").vstack(
        tools.filter(pl.col("platform") == "crewai").head(3)
    )
    counts = Counter(stratified_sample(small, 40, seed=0)["platform"].to_list())
    assert counts["crewai"] == 3 and sum(counts.values()) == 40


def test_no_limit_means_every_tool(tools: pl.DataFrame) -> None:
    assert stratified_sample(tools, None, seed=0).height == tools.height
    with pytest.raises(ValueError):
        stratified_sample(tools, 0, seed=0)
