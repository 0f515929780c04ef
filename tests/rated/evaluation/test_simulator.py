"""The simulator's accounting: success = true tool and available, every call counted, the oracle, seeds."""

from __future__ import annotations

import numpy as np

from rated.evaluation.baselines import StaticRetriever
from rated.evaluation.candidates import CandidateLists
from rated.evaluation.failures import FailureSchedule
from rated.evaluation.metrics import FailedSelectionRate, PostFailSuccessRate
from rated.evaluation.simulator import QueryPool, Stream, oracle_success, simulate


def test_success_requires_a_true_and_available_tool(
    toy_pool: QueryPool, toy_candidates: CandidateLists
) -> None:
    stream = Stream(toy_pool, np.array([0, 1, 0, 1, 0, 1]), seed=0)
    schedule = FailureSchedule.outage(4, np.array([0]), onset=2)  # q0's top tool dies at step 2
    trace = simulate(StaticRetriever(toy_candidates, "top1"), stream, schedule)
    assert trace.success.tolist() == [True, True, False, True, False, True]
    assert trace.unavailable.tolist() == [0, 0, 1, 0, 1, 0]
    # q0 still has tool 1 alive, so the oracle always succeeds
    assert trace.oracle.all()
    assert PostFailSuccessRate(2, 6)(trace) == 0.5
    assert FailedSelectionRate(2, 6)(trace) == 0.5


def test_wrong_but_available_tool_is_a_failure_not_an_error(toy_pool: QueryPool) -> None:
    wrong = CandidateLists(np.array([[3, 0], [3, 2]]), np.array([[1.0, 0.5], [1.0, 0.5]]))
    stream = Stream(toy_pool, np.array([0, 1]), seed=0)
    trace = simulate(StaticRetriever(wrong), stream, FailureSchedule.healthy(4))
    assert not trace.success.any() and trace.unavailable.sum() == 0


def test_oracle_fails_only_when_every_true_tool_is_down(toy_pool: QueryPool) -> None:
    stream = Stream(toy_pool, np.array([0, 1, 0, 1]), seed=0)
    schedule = FailureSchedule.outage(4, np.array([0, 1]), onset=2)
    assert oracle_success(stream, schedule).tolist() == [True, True, False, True]


def test_same_seed_same_stream(toy_pool: QueryPool) -> None:
    a, b = Stream.sample(toy_pool, 100, seed=3), Stream.sample(toy_pool, 100, seed=3)
    assert np.array_equal(a.order, b.order)
    assert not np.array_equal(a.order, Stream.sample(toy_pool, 100, seed=4).order)


def test_a_policy_must_call_before_it_ends_a_step(
    toy_pool: QueryPool, toy_candidates: CandidateLists
) -> None:
    import pytest

    class Silent(StaticRetriever):
        def select(self, step: int, query: int) -> None:
            return None

    with pytest.raises(ValueError, match="without calling a tool"):
        simulate(
            Silent(toy_candidates, "silent"),
            Stream(toy_pool, np.array([0]), seed=0),
            FailureSchedule.healthy(4),
        )


def test_feedback_is_execution_unless_the_policy_asks_for_task_success(
    toy_pool: QueryPool, toy_candidates: CandidateLists
) -> None:
    seen: list[bool] = []

    class Recorder(StaticRetriever):
        def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None:
            seen.append(success)

    wrong = CandidateLists(np.array([[3, 0], [3, 2]]), np.ones((2, 2)))  # tool 3 works but serves nobody
    stream = Stream(toy_pool, np.array([0, 1]), seed=0)
    simulate(Recorder(wrong, "exec"), stream, FailureSchedule.healthy(4))
    simulate(Recorder(wrong, "task", feedback="task"), stream, FailureSchedule.healthy(4))
    assert seen == [True, True, False, False]


def test_bootstrap_cis_cover_the_pooled_sr_and_shrink_with_more_queries() -> None:
    from rated.evaluation.dynamic import bootstrap_sr

    def runs(n_q: int) -> list[dict]:
        counts = np.full(n_q, 10.0)
        succ = np.where(np.arange(n_q) % 2 == 0, 10.0, 0.0)  # half the queries always served
        return [{"query_counts": {"post": counts}, "per_query": {"A": {"post": succ}}} for _ in range(2)]

    small, large = bootstrap_sr(runs(10), "post")["A"], bootstrap_sr(runs(200), "post")["A"]
    assert small["ci_low"] < 0.5 < small["ci_high"] and large["ci_low"] < 0.5 < large["ci_high"]
    assert large["ci_high"] - large["ci_low"] < 0.5 * (small["ci_high"] - small["ci_low"])
