"""Failure injection: which tools are down when, fixed before a simulation run starts.

The paper's protocol: sort the tools by how often they are the true tool in the replayed stream, skip
the most frequent 10% (ceil(0.1 N), so the benchmark does not hinge on a handful of head tools), and mark
the next floor(rho * N) tools (at least one) as failed, where N is the number of distinct tools that are
a true tool somewhere in the stream. Failed tools are unavailable from the onset (0-based step 2000, the
paper's step 2,001) to the end. Past the paper, the same schedule also expresses tools that come back,
flaky tools that fail each call with probability p, tools that join the catalog mid-stream (cold
start), and any list of events "tool unavailable from step s" / "tool arrives at step s"
(``FailureSchedule.from_events``, ``Scenario(kind="events")``: a scenario is data).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

ScenarioKind = Literal["permanent", "recovering", "flaky", "cold_start", "events"]
EventKind = Literal["remove", "arrive", "restore"]
_EPS = 1e-9  # 0.3 * 10 is 3.0000000000000004 in floating point: ceil/floor must not see that
NEVER = np.iinfo(np.int64).max


def true_tool_counts(relevant_per_step: Sequence[frozenset[int]], n_tools: int) -> np.ndarray:
    """How often each tool is a true tool over the steps of the stream (a query with two true tools
    counts once for each)."""
    counts = np.zeros(n_tools, dtype=np.int64)
    for rel in relevant_per_step:
        for tool in rel:
            counts[tool] += 1
    return counts


def select_failed_tools(counts: np.ndarray, rho: float, skip: float = 0.10) -> np.ndarray:
    """The paper's choice of failed tools: skip the top ``skip`` share by frequency, take the next rho*N.

    N counts the tools with a nonzero count. Ties are broken by tool index, so the choice is a pure
    function of the stream. The sizes are explicit: skip ``ceil(skip * N)`` (any N >= 1 skips a head
    tool when skip > 0), fail ``floor(rho * N)``, at least one when rho > 0 and a tool is left
    (N = 57, rho = 0.2: skips 6, fails 11; N = 5: skips 1, fails 1).
    """
    if not 0.0 <= rho <= 1.0 or not 0.0 <= skip < 1.0:
        raise ValueError(f"rho must be in [0, 1] and skip in [0, 1), got rho={rho}, skip={skip}")
    present = np.flatnonzero(counts > 0)
    order = present[np.lexsort((present, -counts[present]))]  # most frequent first, then by index
    n = order.size
    n_skip = math.ceil(skip * n - _EPS)
    n_fail = math.floor(rho * n + _EPS)
    if rho > 0 and n_fail == 0 and n > n_skip:
        n_fail = 1
    return np.sort(order[n_skip : n_skip + n_fail])


@dataclass
class FailureSchedule:
    """When each tool is present and available, as per-tool arrays; ``available`` is O(1) per call.

    Args:
        n_tools: size of the tool catalog.
        fail_start: first step of each tool's outage (``NEVER`` = never fails).
        fail_end: first step after the outage (exclusive; ``NEVER`` = down to the end).
        flaky_p: probability that a call during the outage fails; 1.0 = hard outage.
        arrival: first step at which a tool is in the catalog (0 = from the start); before it, no
            retriever may return it.
        seed: seeds the flaky draws, which are fixed per (step, tool) so every policy faces the same
            coin flips and a Retry that calls a tool twice in one step sees the same outcome.
        horizon: number of steps the flaky draws cover.
    """

    n_tools: int
    fail_start: np.ndarray
    fail_end: np.ndarray
    flaky_p: np.ndarray
    arrival: np.ndarray
    seed: int = 0
    horizon: int = 0
    _column: np.ndarray = field(init=False, repr=False)
    _draws: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("fail_start", "fail_end", "flaky_p", "arrival"):
            if len(getattr(self, name)) != self.n_tools:
                raise ValueError(f"{name} has {len(getattr(self, name))} entries, expected {self.n_tools}")
        flaky = np.flatnonzero((self.flaky_p < 1.0) & (self.fail_start != NEVER))
        self._column = np.full(self.n_tools, -1, dtype=np.int64)
        self._column[flaky] = np.arange(flaky.size)
        rng = np.random.default_rng([self.seed, 0xF1A])
        self._draws = rng.random((self.horizon, flaky.size)) if flaky.size else np.zeros((0, 0))

    @classmethod
    def healthy(cls, n_tools: int) -> FailureSchedule:
        """Every tool present and available at every step."""
        return cls(
            n_tools,
            np.full(n_tools, NEVER, dtype=np.int64),
            np.full(n_tools, NEVER, dtype=np.int64),
            np.ones(n_tools),
            np.zeros(n_tools, dtype=np.int64),
        )

    @classmethod
    def outage(
        cls,
        n_tools: int,
        failed: np.ndarray,
        onset: int,
        end: int | None = None,
        flaky_p: float = 1.0,
        seed: int = 0,
        horizon: int = 0,
    ) -> FailureSchedule:
        """``failed`` tools are down from ``onset`` until ``end`` (None = forever), failing each call with
        probability ``flaky_p``."""
        s = cls.healthy(n_tools)
        s.fail_start[failed] = onset
        s.fail_end[failed] = NEVER if end is None else end
        s.flaky_p[failed] = flaky_p
        return cls(n_tools, s.fail_start, s.fail_end, s.flaky_p, s.arrival, seed, horizon)

    @classmethod
    def from_events(
        cls,
        n_tools: int,
        removed: Mapping[int, int] | None = None,
        arrived: Mapping[int, int] | None = None,
        restored: Mapping[int, int] | None = None,
    ) -> FailureSchedule:
        """The general schedule: ``removed[tool] = s`` makes a tool unavailable from step s (to the end,
        or to ``restored[tool]``), ``arrived[tool] = s`` keeps it out of the catalog before step s."""
        s = cls.healthy(n_tools)
        for tool, step in (removed or {}).items():
            s.fail_start[tool] = max(int(step), 0)
        for tool, step in (restored or {}).items():
            if s.fail_start[tool] != NEVER and step > s.fail_start[tool]:
                s.fail_end[tool] = int(step)
        for tool, step in (arrived or {}).items():
            s.arrival[tool] = max(int(step), 0)
        return s

    def with_arrivals(self, tools: np.ndarray, step: int) -> FailureSchedule:
        """A copy in which ``tools`` join the catalog at ``step`` (cold start)."""
        arrival = self.arrival.copy()
        arrival[tools] = step
        return FailureSchedule(
            self.n_tools, self.fail_start, self.fail_end, self.flaky_p, arrival, self.seed, self.horizon
        )

    def present(self, step: int, tool: int) -> bool:
        return bool(self.arrival[tool] <= step)

    def available(self, step: int, tool: int) -> bool:
        """True when a call to ``tool`` at ``step`` works (the tool exists and is not down)."""
        if self.arrival[tool] > step:
            return False
        if not self.fail_start[tool] <= step < self.fail_end[tool]:
            return True
        col = self._column[tool]
        if col < 0:
            return False
        return bool(self._draws[step, col] >= self.flaky_p[tool])

    def failed_tools(self) -> np.ndarray:
        return np.flatnonzero(self.fail_start != NEVER)

    def to_dict(self) -> dict[str, object]:
        failed = self.failed_tools()
        return {
            "failed_tools": failed.tolist(),
            "fail_start": sorted({int(x) for x in self.fail_start[failed]}),
            "fail_end": sorted({int(x) if x != NEVER else -1 for x in self.fail_end[failed]}),
            "flaky_p": sorted({float(x) for x in self.flaky_p[failed]}),
            "new_tools": np.flatnonzero(self.arrival > 0).tolist(),
            "arrival": sorted({int(x) for x in self.arrival[self.arrival > 0]}),
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Scenario:
    """One failure scenario of Table 2 or of the extensions past the paper.

    Args:
        kind: ``permanent`` (the paper), ``recovering`` (failed tools come back at ``recover_at``),
            ``flaky`` (failed tools fail each call with probability ``flaky_p`` from the onset), or
            ``cold_start`` (the paper's permanent failures, plus ``new_share`` x N other true tools that
            are absent from the catalog until ``arrival``), or ``events`` (the schedule is
            ``events``, ``(tool, step, "remove" | "arrive")`` triples, nothing drawn).
        rho: share of the stream's N true tools that fail.
        onset: 0-based step at which failures begin (the paper: 2000).
        theta: AdaptationSteps threshold (the paper: 0.9 at rho = 20%, 0.8 at rho = 30%).
    """

    name: str
    kind: ScenarioKind = "permanent"
    rho: float = 0.2
    onset: int = 2000
    theta: float = 0.9
    skip: float = 0.10
    recover_at: int = 5000
    flaky_p: float = 0.5
    new_share: float = 0.10
    arrival: int = 5000
    events: tuple[tuple[int, int, str], ...] = ()

    @property
    def adds_tools(self) -> bool:
        """Whether tools join the catalog during a run (RATED then encodes and indexes them)."""
        return self.kind == "cold_start" or any(kind == "arrive" for _, _, kind in self.events)

    def build(self, relevant_per_step: Sequence[frozenset[int]], n_tools: int, seed: int) -> FailureSchedule:
        """The schedule for a stream (``relevant_per_step`` = the true tools of each step's query)."""
        if self.kind == "events":
            removed = {t: s for t, s, kind in self.events if kind == "remove"}
            arrived = {t: s for t, s, kind in self.events if kind == "arrive"}
            restored = {t: s for t, s, kind in self.events if kind == "restore"}
            unknown = {kind for _, _, kind in self.events} - {"remove", "arrive", "restore"}
            if unknown:
                raise ValueError(f"scenario {self.name!r}: unknown event kinds {sorted(unknown)}")
            return FailureSchedule.from_events(n_tools, removed, arrived, restored)
        counts = true_tool_counts(relevant_per_step, n_tools)
        failed = select_failed_tools(counts, self.rho, self.skip)
        horizon = len(relevant_per_step)
        if self.kind == "permanent":
            return FailureSchedule.outage(n_tools, failed, self.onset)
        if self.kind == "recovering":
            return FailureSchedule.outage(n_tools, failed, self.onset, end=self.recover_at)
        if self.kind == "flaky":
            return FailureSchedule.outage(
                n_tools, failed, self.onset, flaky_p=self.flaky_p, seed=seed, horizon=horizon
            )
        if self.kind == "cold_start":
            schedule = FailureSchedule.outage(n_tools, failed, self.onset)
            n = int((counts > 0).sum())
            pool = np.setdiff1d(np.flatnonzero(counts > 0), failed)
            rng = np.random.default_rng([seed, 0xC01D])
            k = min(pool.size, math.ceil(self.new_share * n - _EPS))
            new = np.sort(rng.choice(pool, size=k, replace=False)) if k else np.zeros(0, dtype=np.int64)
            return schedule.with_arrivals(new, self.arrival)
        raise ValueError(f"unknown scenario kind {self.kind!r}")
