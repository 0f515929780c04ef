"""The fault schedule of a live run: real failures the harness causes at fixed steps, and their recovery.

The simulator marks a tool unavailable with a flag; here nothing is marked. At a scheduled step the
harness does something to a real server (SIGKILL its process, SIGSTOP it so calls hang into the
timeout, start sending arguments its schema rejects, restart it without the credential it needs) or to
the HTTP upstream behind fetch (the loopback stub answers 429 or 503), and undoes it later (restart,
SIGCONT, good arguments, the credential, 200s again). Whether a call failed is then only what the call itself returned. A schedule is data
(``FaultEvent`` rows, JSON-loadable) so a run states exactly what it did; the default one is scaled to
the run's length, with the onset at 30 % of the steps (the simulation's is at 20 %, 2,000 of 10,000; a
1,000-step run needs more pre-failure steps for the Adaptation Steps peak).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Literal

Action = Literal[
    "kill",
    "restart",
    "pause",
    "resume",
    "bad_args",
    "good_args",
    "http_429",
    "http_503",
    "http_ok",
    "restart_no_credential",
]
ACTIONS: tuple[str, ...] = (
    "kill",
    "restart",
    "pause",
    "resume",
    "bad_args",
    "good_args",
    "http_429",
    "http_503",
    "http_ok",
    "restart_no_credential",
)
# actions on the loopback HTTP stub: they hit every server that reads from it, not only ``server``
HTTP_ACTIONS = {"http_429": 429, "http_503": 503}
WHAT = {
    "kill": "SIGKILL of the server process (calls then fail: connection closed)",
    "restart": "a new server process and session, with its credential (recovery after a kill or a lost credential)",
    "pause": "SIGSTOP of the server process (calls hang until the timeout)",
    "resume": "SIGCONT (recovery after a pause)",
    "bad_args": "arguments the tool's schema rejects (the server answers with an error)",
    "good_args": "valid arguments again",
    "http_429": "the loopback HTTP stub answers every document with 429 and Retry-After (fetch: an isError result)",
    "http_503": "the loopback HTTP stub answers every document with 503 and Retry-After",
    "http_ok": "the loopback HTTP stub serves its documents again (recovery after a 429 / 503)",
    "restart_no_credential": "a new server process started without its credential (the proxy then answers 407)",
}


@dataclass(frozen=True)
class FaultEvent:
    """At ``step`` (before its query is served), do ``action`` to ``server`` (bad_args: to ``tools``)."""

    step: int
    action: Action
    server: str
    tools: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown fault action {self.action!r}; expected one of {ACTIONS}")
        if self.action in ("bad_args", "good_args") and not self.tools:
            raise ValueError(f"{self.action} at step {self.step} names no tools")
        if self.step < 0:
            raise ValueError(f"fault step must be >= 0, got {self.step}")


@dataclass(frozen=True)
class FaultSchedule:
    """Events sorted by step; ``onset`` is the first one's step (where Post-Fail SR and FSR start)."""

    events: tuple[FaultEvent, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(sorted(self.events, key=lambda e: e.step)))
        if not self.events:
            raise ValueError("a fault schedule needs at least one event")

    @property
    def onset(self) -> int:
        return self.events[0].step

    def at(self, step: int) -> list[FaultEvent]:
        return [e for e in self.events if e.step == step]

    def servers(self) -> set[str]:
        return {e.server for e in self.events}

    def to_list(self) -> list[dict[str, object]]:
        return [asdict(e) | {"tools": list(e.tools), "what": WHAT[e.action]} for e in self.events]

    @classmethod
    def from_json(cls, path: Path) -> FaultSchedule:
        rows = json.loads(Path(path).read_text())
        return cls(tuple(_event(r) for r in rows))

    @classmethod
    def default(cls, steps: int, servers: Iterable[str] | None = None) -> FaultSchedule:
        """The schedule of ``ecoagent live``: seven faults from 30 % of the steps, four recoveries.

        - filesystem (13 tools): SIGKILL at 30 %, never restarted; its replica filesystem-b stays up, so
          every filesystem query keeps a working substitute;
        - memory (9 tools): SIGKILL at 30 %, restarted at 70 % (a crash, then a recovery; no substitute);
        - time (2 tools): SIGSTOP at 30 %, SIGCONT at 50 % (a hang: each call waits out the timeout;
          the replica time-b stays up);
        - sequential-thinking (1 tool): SIGKILL at 30 %, never restarted (a permanent outage, no substitute);
        - git_log and git_diff: bad arguments from 30 % to the end (the server is up, the calls fail);
        - the HTTP stub behind fetch and fetch-b: 429 from 30 %, 503 from 40 %, 200 again at 50 % (a rate
          limit, then an outage upstream; both fetch processes read from it, so no substitute);
        - fetch-b (1 tool): restarted without its proxy credential at 30 %, with it at 70 % (from 50 % to
          70 % fetch is a working substitute).

        ``servers``: the servers the run has; events on others are left out (``--no-fetch``, no replicas).
        """
        if steps < 10:
            raise ValueError(f"a live run needs at least 10 steps for its schedule, got {steps}")
        onset, mid, late = round(0.3 * steps), round(0.5 * steps), round(0.7 * steps)
        return cls(
            (
                FaultEvent(onset, "kill", "filesystem"),
                FaultEvent(onset, "kill", "memory"),
                FaultEvent(late, "restart", "memory"),
                FaultEvent(onset, "pause", "time"),
                FaultEvent(mid, "resume", "time"),
                FaultEvent(onset, "kill", "sequential-thinking"),
                FaultEvent(onset, "bad_args", "git", ("git_log", "git_diff")),
                FaultEvent(onset, "http_429", "fetch"),
                FaultEvent(round(0.4 * steps), "http_503", "fetch"),
                FaultEvent(mid, "http_ok", "fetch"),
                FaultEvent(onset, "restart_no_credential", "fetch-b"),
                FaultEvent(late, "restart", "fetch-b"),
            )
        ).only(servers)

    def only(self, servers: Iterable[str] | None) -> FaultSchedule:
        """The events on ``servers`` (all of them when None)."""
        if servers is None:
            return self
        keep = set(servers)
        return FaultSchedule(tuple(e for e in self.events if e.server in keep))


def _event(row: dict[str, object]) -> FaultEvent:
    tools = row.get("tools") or ()
    return FaultEvent(
        int(row["step"]),  # type: ignore[call-overload]
        str(row["action"]),  # type: ignore[arg-type]
        str(row["server"]),
        tuple(str(t) for t in tools) if isinstance(tools, Iterable) else (),
    )
