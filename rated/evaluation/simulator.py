"""The dynamic simulation (Table 2): replay a query stream against an availability schedule, one policy at a time.

Each step draws a query; the policy selects a tool and the tool is called. Feedback and metric are
kept apart, as in the paper: the call **executes** when the tool is in the catalog and up (that is all a
policy observes by default, ``feedback = "execution"``); the step **succeeds** (the metric SR) when an
executed call was to a true tool of the query. A policy that declares ``feedback = "task"`` is told
``executed and true tool`` instead: the upper-bound variant, never a default row. A policy may call
several tools in one step (``max_attempts``; Retry uses 3): after each call it either names the next
tool or ends the step by returning ``None`` from ``select``; every call counts as a selection for FSR.
A tool selected before its arrival counts as an unavailable call and is recorded in ``Trace.absent``.

"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

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


Feedback = Literal["execution", "task"]


@runtime_checkable
class Policy(Protocol):
    """What every method in the simulation implements.

    ``reset`` is called once before a run with the catalog's arrival steps (a tool with
    ``arrival[i] > step`` is not in the catalog yet and must not be selected); ``select`` names one
    tool for the query at ``step`` (or ``None`` to end the step, allowed after its first call);
    ``observe`` reports that one call's outcome: ``success`` is the reward of the policy's
    ``feedback`` kind (``"execution"`` when the attribute is missing), ``error`` that the call did
    not execute.
    """

    name: str
    max_attempts: int

    def reset(self, arrival: np.ndarray) -> None: ...

    def select(self, step: int, query: int) -> int | None: ...

    def observe(self, step: int, query: int, tool: int, success: bool, error: bool) -> None: ...


def feedback_of(policy: Policy) -> Feedback:
    """The policy's feedback kind; execution-only unless it declares ``feedback = "task"``."""
    kind = getattr(policy, "feedback", "execution")
    if kind not in ("execution", "task"):
        raise ValueError(f"policy {policy.name!r} declares unknown feedback {kind!r}")
    return kind


@dataclass(frozen=True)
class Trace:
    """Per-step record of one run: what the metrics in ``metrics.py`` read."""

    success: np.ndarray  # bool: a call in this step succeeded
    attempts: np.ndarray  # int: calls made in this step
    unavailable: np.ndarray  # int: calls to an unavailable tool in this step
    selected: np.ndarray  # int: the last tool called in this step
    oracle: np.ndarray  # bool: some true tool of the query was available (the oracle's success)
    query: np.ndarray  # int: pool index of the step's query
    first: np.ndarray | None = None  # int: the first tool called in this step
    absent: int = 0  # calls to a tool before its arrival (a policy bug when > 0)


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
    first = np.full(steps, -1, dtype=np.int64)
    absent = 0
    relevant = stream.pool.relevant
    task = feedback_of(policy) == "task"
    arrival = schedule.arrival
    policy.reset(arrival)
    for t in range(steps):
        q = int(stream.order[t])
        rel = relevant[q]
        for attempt in range(policy.max_attempts):
            choice = policy.select(t, q)
            if choice is None:
                if attempt == 0:
                    raise ValueError(f"policy {policy.name!r} ended step {t} without calling a tool")
                break
            tool = int(choice)
            absent += bool(arrival[tool] > t)
            executed = schedule.available(t, tool)
            correct = executed and tool in rel
            policy.observe(t, q, tool, correct if task else executed, not executed)
            attempts[t] += 1
            unavailable[t] += not executed
            selected[t] = tool
            if attempt == 0:
                first[t] = tool
            success[t] |= correct
    return Trace(
        success=success,
        attempts=attempts,
        unavailable=unavailable,
        selected=selected,
        oracle=oracle_success(stream, schedule) if oracle is None else oracle,
        query=stream.order.copy(),
        first=first,
        absent=absent,
    )


def run_policies(policies: Sequence[Policy], stream: Stream, schedule: FailureSchedule) -> dict[str, Trace]:
    """Every policy over the same stream and schedule (the oracle is computed once)."""
    oracle = oracle_success(stream, schedule)
    return {p.name: simulate(p, stream, schedule, oracle) for p in policies}
