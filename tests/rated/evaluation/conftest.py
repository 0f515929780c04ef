"""Small hand-made worlds for the simulation tests: a few tools, a few queries, known candidate lists."""

from __future__ import annotations

import numpy as np
import pytest

from rated.evaluation.candidates import CandidateLists
from rated.evaluation.simulator import QueryPool


@pytest.fixture
def toy_pool() -> QueryPool:
    """Two queries: q0's true tools are {0, 1}; q1's is {2}."""
    return QueryPool(["q0", "q1"], [frozenset({0, 1}), frozenset({2})], ["a", "b"])


@pytest.fixture
def toy_candidates() -> CandidateLists:
    """q0 ranks 0 > 1 > 3; q1 ranks 2 > 3 > 0."""
    return CandidateLists(
        idx=np.array([[0, 1, 3], [2, 3, 0]]),
        sem=np.array([[0.9, 0.8, 0.1], [0.9, 0.5, 0.1]]),
    )
