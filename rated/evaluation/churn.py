"""A churn scenario replayed from a real registry's history: MCP servers and tools that came and went.

``docker/mcp-registry``'s git history (the ``history.jsonl`` sidecar of the catalog snapshot, see
``catalogs/mcp/README.md``) lists dated ``server_added`` / ``server_removed`` events and
``tools_changed`` events with the tool names added and removed. The replay maps event dates linearly
onto the stream's steps (first event -> step 0, last -> the last step), makes the matched tools of a
removed server or removed tool unavailable from that step, and lets added ones arrive at their step
(cold start: RATED indexes them through ``RATED.add_tools`` then).

Matching contract with the MCP crawler (issue #13): MCP tool records have ``platform == "mcp"``,
``tool_id == "mcp:<server_key>:<tool_slug>"``, a ``server`` column holding the normalized server key
(``crawlers.mcp.normalize_server_name``, which ``normalize_server`` applies to the events) and ``name`` (the tool name as the source gives it). ``match_events`` is a pure
function of a tools frame and the events; on a table without MCP records it matches nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import polars as pl

from rated.evaluation.failures import Scenario

HISTORY = Path("mcp") / "docker__mcp-registry" / "history.jsonl"


def normalize_server(name: str) -> str:
    """The server key of a registry name, by the MCP crawler's own rule (``crawlers.mcp``), so that a
    history event names the key the crawled records carry in their ``server`` column."""
    from crawlers.mcp import normalize_server_name

    return normalize_server_name(str(name))


def load_history(path: Path) -> list[dict[str, Any]]:
    """The events of ``history.jsonl``, oldest first; a bad line fails naming the file and line."""
    events = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
            event["_date"] = datetime.fromisoformat(event["date"])
        except (ValueError, KeyError) as exc:
            raise ValueError(f"{path}:{n}: not a history event ({exc})") from exc
        events.append(event)
    return sorted(events, key=lambda e: e["_date"])


@dataclass(frozen=True)
class ChurnMatch:
    """The scenario's events as ``(tool row, step, kind)`` and how much of the history they cover."""

    events: tuple[tuple[int, int, str], ...]
    n_history: int
    matched_history: int  # history events that touched at least one catalog tool
    mcp_tools: int  # MCP records in the tools table
    by_kind: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {
            "history_events": self.n_history,
            "matched_events": self.matched_history,
            "mcp_tools_in_catalog": self.mcp_tools,
            "schedule_events": len(self.events),
            **{f"schedule_{k}": v for k, v in sorted(self.by_kind.items())},
        }


def _step(date: datetime, first: datetime, last: datetime, steps: int) -> int:
    span = (last - first).total_seconds()
    return 0 if span <= 0 else round((date - first).total_seconds() / span * (steps - 1))


def match_events(tools: pl.DataFrame, history: Sequence[dict[str, Any]], steps: int) -> ChurnMatch:
    """Map history events onto catalog rows and stream steps (see the module docstring).

    A server's addition covers its tools except those a later ``tools_added`` names (they arrive
    then); a tool removed and added again later gets a ``restore`` event; a tool whose first event is
    an addition at step 0 needs no event.
    """
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    rows: dict[str, list[int]] = {}
    by_name: dict[tuple[str, str], list[int]] = {}
    if {"platform", "server", "name"} <= set(tools.columns):
        mcp = tools.with_row_index("_row").filter(pl.col("platform") == "mcp")
        for row, server, name in mcp.select("_row", "server", "name").iter_rows():
            key = server or ""  # the crawler stored the normalized key
            rows.setdefault(key, []).append(int(row))
            by_name.setdefault((key, str(name)), []).append(int(row))
    n_mcp = sum(len(v) for v in rows.values())
    if not history:
        return ChurnMatch((), 0, 0, n_mcp)
    first, last = history[0]["_date"], history[-1]["_date"]
    # a tool named in a later ``tools_added`` joined then, not with its server
    named_later = {
        r
        for e in history
        if e["kind"] == "tools_changed"
        for name in e.get("tools_added", [])
        for r in by_name.get((normalize_server(e.get("server", "")), str(name)), [])
    }
    changes: list[tuple[int, int, str]] = []  # (step, row, "remove" | "add")
    matched = 0
    for event in history:
        key = normalize_server(event.get("server", ""))
        step = _step(event["_date"], first, last, steps)
        touched: list[tuple[int, str]] = []
        if event["kind"] == "server_added":
            touched = [(r, "add") for r in rows.get(key, []) if r not in named_later]
        elif event["kind"] == "server_removed":
            touched = [(r, "remove") for r in rows.get(key, [])]
        elif event["kind"] == "tools_changed":
            for name in event.get("tools_added", []):
                touched += [(r, "add") for r in by_name.get((key, str(name)), [])]
            for name in event.get("tools_removed", []):
                touched += [(r, "remove") for r in by_name.get((key, str(name)), [])]
        matched += bool(touched)
        changes += [(step, r, kind) for r, kind in touched]
    events: list[tuple[int, int, str]] = []
    state: dict[int, str] = {}
    for step, row, kind in sorted(changes, key=lambda c: c[0]):  # stable: history order within a step
        before = state.get(row)
        state[row] = kind
        if kind == "add" and before is None:
            if step > 0:
                events.append((row, step, "arrive"))
        elif kind == "add" and before == "remove":
            events.append((row, step, "restore"))
        elif kind == "remove" and before != "remove":
            events.append((row, step, "remove"))
    # one outage interval per tool in the schedule: keep the first removal and the restore after it
    kept: dict[tuple[int, str], tuple[int, int, str]] = {}
    for e in events:
        kept.setdefault((e[0], e[2]), e)
    final = tuple(sorted(kept.values(), key=lambda e: (e[1], e[0])))
    by_kind: dict[str, int] = {}
    for _, _, kind in final:
        by_kind[kind] = by_kind.get(kind, 0) + 1
    return ChurnMatch(final, len(history), matched, n_mcp, by_kind)


def churn_scenario(
    tools: pl.DataFrame, history_path: Path, steps: int, theta: float = 0.9
) -> tuple[Scenario, dict[str, Any]]:
    """The ``events`` scenario of the replayed registry history, and its match summary."""
    match = match_events(tools, load_history(history_path), steps)
    scenario = Scenario("MCP registry churn (replayed history)", "events", theta=theta, events=match.events)
    return scenario, {**match.summary(), "history": str(HISTORY)}


def tool_rows(events: Iterable[tuple[int, int, str]]) -> set[int]:
    return {row for row, _, _ in events}
