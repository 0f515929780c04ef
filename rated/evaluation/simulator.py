"""The dynamic simulation (Table 2): replay a query stream against a failure schedule, one policy at a time.

Each step draws a query; the policy selects a tool; the call succeeds when the tool is a true tool for
the query and is available. The policy observes only its own call (success, and whether the call
errored because the tool was down), never the state of other tools. A policy may call several tools in
one step (``max_attempts``; Retry uses 3): the simulator stops at the first success, and every call
counts as a selection for FSR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from rated.evaluation.failures import FailureSchedule


@dataclass(frozen=True)
class QueryPool:
    """The queries a stream samples from, with their true tools as indices into the tool table."""

    queries: list[str]
    relevant: list[frozenset[int]]
    query_ids: list[str]

    def __post_init__(self) -> None:
        if not len(self.queries) == len(self.relevant) == len(self.query_ids):
            raise ValueError("queries, relevant and query_ids must have the same length")

    def __len__(self) -> int:
        return len(self.queries)


@dataclass(frozen=True)
class Stream:
    """A replayed stream: ``order[t]`` is the pool index of the query at step t."""

    pool: QueryPool
    order: np.ndarray
    seed: int

    @classmethod
    def sample(cls, pool: QueryPool, steps: int, seed: int) -> Stream:
        """``steps`` queries drawn uniformly with replacement (the paper's replay), seeded."""
        if len(pool) == 0:
            raise ValueError("cannot sample a stream from an empty query pool")
        rng = np.random.default_rng([seed, 0x57E])
        return cls(pool, rng.integers(0, len(pool), size=steps), seed)

    def __len__(self) -> int:
        return int(self.order.size)

    def relevant_per_step(self) -> list[frozenset[int]]:
        return [self.pool.relevant[q] for q in self.order]


@runtime_checkable
class Policy(Protocol):
    """What every method in the simulation implements.

    ``reset`` is called once before a run with the catalog's arrival steps (a tool with
    ``arrival[i] > step`` is not in the catalog yet and must not be selected); ``select`` names one
    tool for the query at ``step``; ``observe`` reports that one call's outcome.
    """

    name: str
    max_attempts: int

    def reset(self, arrival: np.ndarray) -> None: ...

    def select(self, step: int, query: int) -> int: ...

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None: ...


@dataclass(frozen=True)
class Trace:
    """Per-step record of one run: what the metrics in ``metrics.py`` read."""

    success: np.ndarray  # bool: a call in this step succeeded
    attempts: np.ndarray  # int: calls made in this step
    unavailable: np.ndarray  # int: calls to an unavailable tool in this step
    selected: np.ndarray  # int: the last tool called in this step
    oracle: np.ndarray  # bool: some true tool of the query was available (the oracle's success)
    query: np.ndarray  # int: pool index of the step's query


def oracle_success(stream: Stream, schedule: FailureSchedule) -> np.ndarray:
    """Whether an oracle that knows availability could succeed at each step."""
    out = np.zeros(len(stream), dtype=bool)
    for t, q in enumerate(stream.order):
        out[t] = any(schedule.available(t, tool) for tool in stream.pool.relevant[q])
    return out


def simulate(
    policy: Policy, stream: Stream, schedule: FailureSchedule, oracle: np.ndarray | None = None
) -> Trace:
    """Run ``policy`` over every step of ``stream`` under ``schedule``.

    Args:
        oracle: precomputed ``oracle_success(stream, schedule)``, shared between policies of one run.
    """
    steps = len(stream)
    success = np.zeros(steps, dtype=bool)
    attempts = np.zeros(steps, dtype=np.int64)
    unavailable = np.zeros(steps, dtype=np.int64)
    selected = np.full(steps, -1, dtype=np.int64)
    relevant = stream.pool.relevant
    policy.reset(schedule.arrival)
    for t in range(steps):
        q = int(stream.order[t])
        rel = relevant[q]
        for _ in range(policy.max_attempts):
            tool = int(policy.select(t, q))
            available = schedule.available(t, tool)
            ok = available and tool in rel
            policy.observe(t, q, tool, ok, not available)
            attempts[t] += 1
            unavailable[t] += not available
            selected[t] = tool
            if ok:
                success[t] = True
                break
    return Trace(
        success=success,
        attempts=attempts,
        unavailable=unavailable,
        selected=selected,
        oracle=oracle_success(stream, schedule) if oracle is None else oracle,
        query=stream.order.copy(),
    )


def run_policies(policies: Sequence[Policy], stream: Stream, schedule: FailureSchedule) -> dict[str, Trace]:
    """Every policy over the same stream and schedule (the oracle is computed once)."""
    oracle = oracle_success(stream, schedule)
    return {p.name: simulate(p, stream, schedule, oracle) for p in policies}
