"""Splits: disjoint by query, or by tool with equivalent tools kept together."""

from __future__ import annotations

from collections import Counter, defaultdict

import polars as pl
import pytest

from generators.splits import assign_splits


def test_query_split_is_stable_and_near_ratio() -> None:
    ids = [f"q{i}" for i in range(4000)]
    tools = [f"t{i % 50}" for i in range(4000)]
    splits = assign_splits(ids, tools, "query", seed=0)
    assert splits == assign_splits(ids, tools, "query", seed=0)
    share = Counter(splits)
    assert abs(share["train"] / 4000 - 0.60) < 0.03 and abs(share["test"] / 4000 - 0.30) < 0.03
    assert abs(share["val"] / 4000 - 0.10) < 0.02
    assert assign_splits(ids, tools, "query", seed=1) != splits


def test_tool_split_keeps_tools_and_their_equivalents_whole(tools: pl.DataFrame) -> None:
    tool_ids = tools["tool_id"].to_list()[:600]
    queries = [f"{t}#{k}" for t in tool_ids for k in range(3)]
    owners = [t for t in tool_ids for _ in range(3)]
    equivalents = {
        tool_ids[0]: {tool_ids[1], tool_ids[2]},
        tool_ids[1]: {tool_ids[0]},
        tool_ids[2]: {tool_ids[0]},
    }
    splits = assign_splits(queries, owners, "tool", seed=0, equivalents=equivalents)
    per_tool = defaultdict(set)
    for owner, split in zip(owners, splits, strict=True):
        per_tool[owner].add(split)
    assert all(len(s) == 1 for s in per_tool.values())
    assert per_tool[tool_ids[0]] == per_tool[tool_ids[1]] == per_tool[tool_ids[2]]
    assert set(splits) == {"train", "val", "test"}


def test_unknown_split_mode_is_an_error() -> None:
    with pytest.raises(ValueError, match="split_by"):
        assign_splits(["q"], ["t"], "platform", seed=0)  # type: ignore[arg-type]
