"""Each metric on small hand-made rankings and traces whose answers are worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rated.evaluation.metrics import (
    AdaptationSteps,
    AdaptationStepsPaper,
    CumulativeRegret,
    FailedSelectionRate,
    PostFailSuccessRate,
    RetrievalScores,
    WindowSuccessRate,
    moving_success_rate,
    ndcg_at_k,
    recall_at_k,
    reciprocal_ranks,
)
from rated.evaluation.simulator import Trace

RANKINGS = [[3, 1, 2], [0, 1, 2], [5, 6, 7]]
RELEVANT = [frozenset({1}), frozenset({0, 2}), frozenset({9})]


def test_reciprocal_ranks() -> None:
    assert reciprocal_ranks(RANKINGS, RELEVANT).tolist() == [0.5, 1.0, 0.0]


def test_recall_counts_every_relevant_tool() -> None:
    assert recall_at_k(RANKINGS, RELEVANT, 1).tolist() == [0.0, 0.5, 0.0]
    assert recall_at_k(RANKINGS, RELEVANT, 3).tolist() == [1.0, 1.0, 0.0]


def test_ndcg() -> None:
    got = ndcg_at_k(RANKINGS, RELEVANT, 10)
    assert got[0] == pytest.approx(1 / math.log2(3))
    # hits at ranks 1 and 3 of 2 relevant: (1 + 1/log2(4)) / (1 + 1/log2(3))
    assert got[1] == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert got[2] == 0.0


def test_retrieval_scores_means() -> None:
    means = RetrievalScores.compute(RANKINGS, RELEVANT).means()
    assert means["MRR"] == pytest.approx(0.5)
    assert means["Recall@1"] == pytest.approx(0.5 / 3)
    assert means["Recall@5"] == pytest.approx(2 / 3)


def _trace(
    success: list[int],
    attempts: list[int] | None = None,
    unavailable: list[int] | None = None,
    oracle: list[int] | None = None,
) -> Trace:
    n = len(success)
    return Trace(
        success=np.array(success, dtype=bool),
        attempts=np.array(attempts or [1] * n),
        unavailable=np.array(unavailable or [0] * n),
        selected=np.zeros(n, dtype=np.int64),
        oracle=np.array(oracle or [1] * n, dtype=bool),
        query=np.zeros(n, dtype=np.int64),
    )


def test_post_fail_success_rate_and_fsr_use_their_window() -> None:
    trace = _trace([1, 1, 0, 1, 0, 0], attempts=[1, 1, 3, 1, 2, 1], unavailable=[0, 0, 2, 0, 2, 1])
    assert PostFailSuccessRate(2, 5)(trace) == pytest.approx(1 / 3)
    # calls in steps 2..4: 3 + 1 + 2 = 6, of which 2 + 0 + 2 = 4 to a dead tool
    assert FailedSelectionRate(2, 5)(trace) == pytest.approx(4 / 6)


def test_moving_success_rate() -> None:
    assert moving_success_rate(np.array([1, 0, 1, 1]), 2).tolist() == [0.5, 0.5, 1.0]


def test_adaptation_steps_known_answer() -> None:
    # pre-onset (4 steps): window-2 peak = 1.0; post-onset: 0 0 0 1 1 ...
    trace = _trace([1, 1, 1, 0] + [0, 0, 0, 1, 1, 1])
    metric = AdaptationSteps(onset=4, theta=0.9, window=2)
    assert metric.peak(trace) == 1.0
    # the first all-post-onset window with SR >= 0.9 covers post-onset steps 3, 4 -> 5 steps after onset
    assert metric(trace) == 5
    assert AdaptationSteps(onset=4, theta=0.5, window=2)(trace) == 4


def test_adaptation_steps_failed() -> None:
    trace = _trace([1, 1, 1, 1] + [0, 1, 0, 1, 0, 1])
    assert AdaptationSteps(onset=4, theta=0.9, window=2)(trace) is None
    # a policy that never succeeded before the onset has nothing to adapt back to
    assert AdaptationSteps(onset=4, theta=0.9, window=2)(_trace([0] * 10)) is None
    # needs a full post-onset window: an immediately perfect policy needs `window` steps
    assert AdaptationSteps(onset=4, theta=0.9, window=2)(_trace([1] * 10)) == 2


def test_cumulative_regret() -> None:
    trace = _trace([1, 0, 0, 1], oracle=[1, 1, 0, 1])
    assert CumulativeRegret.curve(trace).tolist() == [0, 1, 1, 1]
    assert CumulativeRegret()(trace) == 1.0
    assert CumulativeRegret(end=1)(trace) == 0.0


def test_window_success_rate_with_mask() -> None:
    trace = _trace([1, 0, 1, 1])
    mask = np.array([True, True, False, False])
    assert WindowSuccessRate(0, 4)(trace) == 0.75
    assert WindowSuccessRate(0, 4)(trace, mask) == 0.5


def test_paper_adaptation_steps_can_be_zero_and_count_from_the_window_ending_at_the_step() -> None:
    # success everywhere but 30 failed steps right after the onset (step 100), window 20
    s = np.ones(300, dtype=bool)
    s[100:130] = False
    trace = _trace(s)
    # theta 0.9: the window ending at the onset still holds 19 pre-onset successes -> 0 (the paper's 0)
    assert AdaptationStepsPaper(onset=100, theta=0.9, window=20)(trace) == 0
    # post-onset windows: post-onset steps j..j+19 need <= 2 of the 30 failures -> j = 28, AS = 48
    assert AdaptationSteps(onset=100, theta=0.9, window=20)(trace) == 48
    # theta 0.99 needs a clean window: it ends at step 149 (m = 49) / post-onset j = 30 (AS = 50)
    assert AdaptationStepsPaper(onset=100, theta=0.99, window=20)(trace) == 49
    assert AdaptationSteps(onset=100, theta=0.99, window=20)(trace) == 50
    healthy = _trace(np.ones(300, dtype=bool))
    assert AdaptationStepsPaper(onset=100, theta=0.9, window=20)(healthy) == 0
    assert AdaptationSteps(onset=100, theta=0.9, window=20)(healthy) == 20  # >= window by construction
