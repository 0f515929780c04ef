"""The yield check's ranks: the own tool's rank, and the best true tool's when equivalents count."""

from __future__ import annotations

import numpy as np

from generators.retrieval import label_ranks, self_ranks


def _unit(rows: list[list[float]]) -> np.ndarray:
    a = np.asarray(rows, dtype=np.float32)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


# four tools; tool 2 is tool 0's equivalent on another platform (the same function)
TOOLS = _unit([[1, 0, 0], [0, 1, 0], [0.95, 0.1, 0], [0, 0, 1]])
QUERIES = _unit([[1, -0.1, 0], [0, 0.2, 1], [0.2, 1, 0]])
POSITIVE = np.array([2, 3, 1])


def test_self_rank_counts_tools_scoring_at_least_the_own_one() -> None:
    # query 0 prefers tool 0 over its own tool 2; queries 1 and 2 rank their own tool first
    assert self_ranks(QUERIES, TOOLS, POSITIVE).tolist() == [2, 1, 1]


def test_an_equivalent_ranked_first_is_a_hit_and_nothing_else_moves() -> None:
    equivalents = {0: {2}, 2: {0}}
    assert label_ranks(QUERIES, TOOLS, POSITIVE, equivalents).tolist() == [1, 1, 1]
    assert label_ranks(QUERIES, TOOLS, POSITIVE, {}).tolist() == self_ranks(QUERIES, TOOLS, POSITIVE).tolist()


def test_label_ranks_never_exceed_self_ranks_on_random_data() -> None:
    rng = np.random.default_rng(0)
    tools = _unit(rng.normal(size=(50, 8)).tolist())
    queries = _unit(rng.normal(size=(40, 8)).tolist())
    positive = rng.integers(0, 50, size=40)
    equivalents = {i: {int(j) for j in rng.choice(50, 3, replace=False)} - {i} for i in range(50)}
    own = self_ranks(queries, tools, positive, chunk=7)
    best = label_ranks(queries, tools, positive, equivalents, chunk=7)
    assert (best <= own).all() and (best < own).any()
