"""Splits by query: every query in exactly one split, reproducible from the seed."""

from __future__ import annotations

import pytest

from validators.splits import split_queries


def test_each_query_in_one_split(parsed) -> None:
    ids = [q.query_id for q in parsed.queries] * 2  # repeated ids (several kept tools) map once
    splits = split_queries(ids, seed=0)
    assert set(splits) == {q.query_id for q in parsed.queries}
    counts = {s: sum(v == s for v in splits.values()) for s in ("train", "val", "test")}
    assert counts == {"train": 840, "val": 105, "test": 105}


def test_seeded_and_order_free(parsed) -> None:
    ids = [q.query_id for q in parsed.queries]
    assert split_queries(ids, seed=3) == split_queries(list(reversed(ids)), seed=3)
    assert split_queries(ids, seed=3) != split_queries(ids, seed=4)


def test_bad_fractions() -> None:
    with pytest.raises(ValueError, match="sum to 1"):
        split_queries(["a"], seed=0, fractions=(0.5, 0.2, 0.2))


def test_real_fractions_leave_val_and_test_the_larger_shares(parsed) -> None:
    from validators.config import REAL_SPLITS

    splits = split_queries([q.query_id for q in parsed.queries], seed=0, fractions=REAL_SPLITS)
    counts = {s: sum(v == s for v in splits.values()) for s in ("train", "val", "test")}
    assert counts == {"train": 210, "val": 420, "test": 420}
