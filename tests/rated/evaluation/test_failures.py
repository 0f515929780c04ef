"""The failure schedule: the paper's choice of failed tools, and each scenario's availability over time."""

from __future__ import annotations

import numpy as np
import pytest

from rated.evaluation.failures import FailureSchedule, Scenario, select_failed_tools, true_tool_counts


def test_select_failed_tools_skips_the_head_and_takes_the_next_rho_n() -> None:
    # 10 tools appear as true tools, counts 100, 90, ..., 10; tool 10 never appears
    counts = np.array([100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0])
    # N = 10: skip ceil(1.0) = 1 (tool 0), fail floor(2.0) = 2 -> tools 1 and 2
    assert select_failed_tools(counts, 0.2).tolist() == [1, 2]
    assert select_failed_tools(counts, 0.3).tolist() == [1, 2, 3]


def test_ties_are_broken_by_tool_index() -> None:
    counts = np.array([5, 5, 5, 5, 5, 5, 5, 5, 5, 5])
    assert select_failed_tools(counts, 0.2).tolist() == [1, 2]


def test_counts_follow_the_stream() -> None:
    steps = [frozenset({0}), frozenset({0, 2}), frozenset({2})]
    assert true_tool_counts(steps, 4).tolist() == [2, 0, 2, 0]


def test_permanent_outage_starts_at_onset_and_never_ends() -> None:
    s = FailureSchedule.outage(3, np.array([1]), onset=5)
    assert [s.available(t, 1) for t in (0, 4, 5, 10**6)] == [True, True, False, False]
    assert all(s.available(t, 0) for t in range(20))


def test_recovering_outage_ends() -> None:
    s = FailureSchedule.outage(3, np.array([1]), onset=5, end=8)
    assert [s.available(t, 1) for t in range(4, 10)] == [True, False, False, False, True, True]


def test_flaky_tools_fail_with_probability_p_and_draws_are_fixed() -> None:
    s = FailureSchedule.outage(2, np.array([0]), onset=0, flaky_p=0.3, seed=7, horizon=20000)
    draws = np.array([s.available(t, 0) for t in range(20000)])
    assert 1 - draws.mean() == pytest.approx(0.3, abs=0.02)
    again = FailureSchedule.outage(2, np.array([0]), onset=0, flaky_p=0.3, seed=7, horizon=20000)
    assert all(again.available(t, 0) == draws[t] for t in range(0, 20000, 97))


def test_arrivals_hide_tools_until_their_step() -> None:
    s = FailureSchedule.healthy(3).with_arrivals(np.array([2]), 10)
    assert not s.available(9, 2) and s.available(10, 2)
    assert not s.present(9, 2) and s.present(10, 2)


def test_scenarios_build_from_the_stream() -> None:
    # 10 true tools, frequency falls with the index
    steps = [frozenset({i}) for i in range(10) for _ in range(10 - i)]
    permanent = Scenario("p", "permanent", rho=0.2, onset=3).build(steps, 12, seed=0)
    assert permanent.failed_tools().tolist() == [1, 2]
    recovering = Scenario("r", "recovering", rho=0.2, onset=3, recover_at=6).build(steps, 12, seed=0)
    assert recovering.available(6, 1) and not recovering.available(5, 1)
    cold = Scenario("c", "cold_start", rho=0.2, onset=3, new_share=0.2, arrival=30).build(steps, 12, 0)
    new = np.flatnonzero(cold.arrival > 0)
    assert new.size == 2 and not set(new) & {1, 2} and set(new) <= set(range(10))


@pytest.mark.parametrize(
    ("n", "rho", "skipped", "failed"),
    [(5, 0.2, 1, 1), (57, 0.2, 6, 11), (10, 0.3, 1, 3), (3, 0.2, 1, 1), (1, 0.2, 1, 0)],
)
def test_failure_set_sizes_use_explicit_ceil_and_floor(n: int, rho: float, skipped: int, failed: int) -> None:
    counts = np.arange(n, 0, -1)  # tool 0 most frequent
    chosen = select_failed_tools(counts, rho)
    assert chosen.tolist() == list(range(skipped, skipped + failed))


def test_an_events_schedule_is_data() -> None:
    events = ((0, 5, "remove"), (0, 8, "restore"), (1, 3, "arrive"), (2, 0, "remove"))
    s = Scenario("churn", "events", events=events).build([], 4, seed=0)
    assert [s.available(t, 0) for t in (4, 5, 7, 8)] == [True, False, False, True]
    assert not s.present(2, 1) and s.available(3, 1)
    assert not s.available(0, 2) and s.available(9, 3)
    with pytest.raises(ValueError, match="unknown event kinds"):
        Scenario("bad", "events", events=((0, 1, "explode"),)).build([], 4, seed=0)
