"""Construction advantage on a constructed world with known MRRs."""

from __future__ import annotations

import polars as pl
import pytest

from validators.provenance import construction_advantage

PAIRS = pl.DataFrame(
    {
        "query_id": ["q1", "q1", "q2", "q3"],
        "tool_id": ["a", "b", "c", "d"],
        "proposed_by": [["BM25"], ["BM25", "MiniLM"], ["MiniLM"], ["BM25"]],
    }
)
RANKINGS = {
    "BM25": {"q1": ["a", "b", "x"], "q2": ["x", "y", "c"], "q3": ["d"]},
    "MiniLM": {"q1": ["x", "b", "a"], "q2": ["c"], "q3": ["y", "x", "z", "d"]},
    "RATED": {"q1": ["b"], "q2": ["x", "c"], "q3": ["d"]},
}


def test_mrr_on_pairs_not_proposed() -> None:
    got = construction_advantage(RANKINGS, PAIRS)
    # BM25 proposed a, b, d; it did not propose c (q2, rank 3)
    assert (
        got["BM25"]["mrr_not_proposed"] == pytest.approx(1 / 3) and got["BM25"]["queries_not_proposed"] == 1
    )
    assert got["BM25"]["mrr_proposed"] == pytest.approx((1 + 1) / 2)  # q1 a at 1, q3 d at 1
    # MiniLM did not propose a (q1, rank 3) nor d (q3, rank 4)
    assert got["MiniLM"]["mrr_not_proposed"] == pytest.approx((1 / 3 + 1 / 4) / 2)
    assert got["MiniLM"]["mrr_proposed"] == pytest.approx((1 / 2 + 1) / 2)  # q1 b at 2, q2 c at 1
    # a method outside the union is scored on every pair: q1 1, q2 1/2, q3 1
    assert got["RATED"]["mrr_not_proposed"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert got["RATED"]["mrr_proposed"] is None and got["RATED"]["queries_proposed"] == 0


def test_rows_input_and_missing_ranking() -> None:
    rows = PAIRS.to_dicts()
    assert construction_advantage(RANKINGS, rows) == construction_advantage(RANKINGS, PAIRS)
    with pytest.raises(ValueError, match="no ranking for query 'q3'"):
        construction_advantage({"BM25": {"q1": ["a"], "q2": ["c"]}}, PAIRS)
    # a true tool missing from the ranking scores 0
    got = construction_advantage({"X": {"q1": [], "q2": [], "q3": ["d"]}}, PAIRS)
    assert got["X"]["mrr_not_proposed"] == pytest.approx(1 / 3)
