"""Real's splits: by query, stratified by group and tool, reproducible from the seed; and tool-disjoint."""

from __future__ import annotations

from collections import Counter

import pytest

from validators.config import REAL_SPLITS
from validators.splits import service, split_stratified, tool_disjoint_splits


def _strata(parsed) -> dict[str, tuple[str, ...]]:
    return {q.query_id: (q.group,) for q in parsed.queries}


def test_each_query_in_one_split_in_the_fractions(parsed) -> None:
    splits = split_stratified(_strata(parsed), seed=0, fractions=REAL_SPLITS)
    assert set(splits) == {q.query_id for q in parsed.queries}
    counts = Counter(splits.values())
    n = len(parsed.queries)
    for name, share in zip(("train", "val", "test"), REAL_SPLITS, strict=True):
        assert abs(counts[name] - share * n) <= 2, (name, counts)


def test_every_stratum_has_its_share_of_each_split(parsed) -> None:
    """ToolBench's groups differ in size (11 demo queries, hundreds per test group): each gets its share."""
    strata = _strata(parsed)
    splits = split_stratified(strata, seed=0, fractions=REAL_SPLITS)
    for group, size in Counter(g for (g,) in strata.values()).items():
        got = Counter(splits[q] for q, (g,) in strata.items() if g == group)
        for name, share in zip(("train", "val", "test"), REAL_SPLITS, strict=True):
            assert abs(got[name] - share * size) <= 2, (group, size, got)


def test_seeded_and_order_free(parsed) -> None:
    strata = _strata(parsed)
    reordered = dict(reversed(list(strata.items())))
    assert split_stratified(strata, 3, REAL_SPLITS) == split_stratified(reordered, 3, REAL_SPLITS)
    assert split_stratified(strata, 3, REAL_SPLITS) != split_stratified(strata, 4, REAL_SPLITS)


def test_bad_fractions() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        split_stratified({"a": ("g",)}, seed=0, fractions=(0.5, 0.2, 0.2))
    with pytest.raises(ValueError, match="sum to 1"):
        tool_disjoint_splits({"a": ("t",)}, seed=0, fractions=(0.5, 0.2, 0.2))


def test_tool_disjoint_keeps_every_service_in_one_split() -> None:
    labels = {
        "q1": ("n8n:gmail:message_send", "n8n:gmail:message_get"),  # one service: always placed
        "q2": ("n8n:gmail:label_get_all",),
        "q3": ("n8n:slack:message_post",),
        "q4": ("n8n:gmail:message_send", "n8n:slack:message_post"),  # straddles when the two differ
    }
    labels |= {f"x{i}": (f"n8n:svc{i}:op",) for i in range(40)}
    queries, units = tool_disjoint_splits(labels, seed=0, fractions=(0.5, 0.2, 0.3), unit=service)
    assert set(units) == {service(t) for ts in labels.values() for t in ts}
    for q, tools in labels.items():
        placed = {units[service(t)] for t in tools}
        assert queries[q] == (placed.pop() if len(placed) == 1 else None)
    assert queries["q1"] == queries["q2"] == units["n8n:gmail"]
    assert Counter(units.values()) == {"train": 21, "val": 8, "test": 13}
    assert service("mcp:github:create_issue") == "mcp:github"
