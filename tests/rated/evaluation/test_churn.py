"""The churn replay: the matcher is a pure function of a tools frame and the history, on real history."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from ecoagent.config import default_mirror
from rated.evaluation.churn import HISTORY, load_history, match_events, normalize_server
from rated.evaluation.failures import Scenario


def _event(kind: str, server: str, date: str, **extra: object) -> dict:
    return {"kind": kind, "server": server, "date": date, "_date": datetime.fromisoformat(date), **extra}


HISTORY_TOY = [
    _event("server_added", "SQLite", "2025-01-01T00:00:00+00:00"),
    _event("server_added", "Brave Search", "2025-01-11T00:00:00+00:00"),
    _event(
        "tools_changed", "SQLite", "2025-01-06T00:00:00+00:00", tools_added=["vacuum"], tools_removed=["drop"]
    ),
    _event("server_removed", "Brave Search", "2025-01-21T00:00:00+00:00"),
    _event("server_removed", "not-in-catalog", "2025-01-21T00:00:00+00:00"),
]


def _tools() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "tool_id": [
                "lc:x",
                "mcp:sqlite:query",
                "mcp:sqlite:drop",
                "mcp:sqlite:vacuum",
                "mcp:brave_search:web",
            ],
            "platform": ["langchain", "mcp", "mcp", "mcp", "mcp"],
            "server": [None, "sqlite", "sqlite", "sqlite", "brave_search"],  # the crawler's keys
            "name": ["x", "query", "drop", "vacuum", "brave_web_search"],
        }
    )


def test_normalize_server() -> None:
    # the MCP crawler's rule, so events meet the keys the records carry
    assert normalize_server("  Brave Search!! (v2) ") == "brave_search_v2"
    assert normalize_server("mcp-server-tmdb") == "tmdb" == normalize_server("TMDB MCP Server")


def test_events_map_dates_linearly_onto_steps_and_tools_by_contract() -> None:
    history = sorted(HISTORY_TOY, key=lambda e: e["_date"])
    m = match_events(_tools(), history, steps=21)  # 20 days onto steps 0..20: one step per day
    assert set(m.events) == {(3, 5, "arrive"), (2, 5, "remove"), (4, 10, "arrive"), (4, 20, "remove")}
    assert m.matched_history == 4 and m.n_history == 5 and m.mcp_tools == 4
    schedule = Scenario("churn", "events", events=m.events).build([], 5, seed=0)
    assert schedule.available(4, 2) and not schedule.available(5, 2)  # drop removed at day 5
    assert not schedule.present(4, 3) and schedule.present(5, 3)  # vacuum arrives at day 5
    assert schedule.available(20, 0) and schedule.available(20, 1)  # untouched tools stay


def test_a_table_without_mcp_records_matches_nothing() -> None:
    tools = pl.DataFrame({"tool_id": ["lc:x"], "platform": ["langchain"], "name": ["x"]})
    m = match_events(tools, sorted(HISTORY_TOY, key=lambda e: e["_date"]), 100)
    assert m.events == () and m.matched_history == 0 and m.n_history == 5


def test_the_real_registry_history_replays() -> None:
    path = default_mirror() / HISTORY
    if not path.exists():
        pytest.skip(f"no {path}")
    history = load_history(path)
    assert len(history) == 496 and history[0]["_date"] <= history[-1]["_date"]
    # a catalog holding two real servers' tools under the contract: their removals and arrivals match
    removed = next(e for e in history if e["kind"] == "server_removed")
    added = next(e for e in history if e["kind"] == "server_added" and e["_date"] > history[0]["_date"])
    tools = pl.DataFrame(
        {
            "tool_id": ["mcp:a:t", "mcp:b:t"],
            "platform": ["mcp", "mcp"],
            "server": [normalize_server(removed["server"]), normalize_server(added["server"])],
            "name": ["t", "t"],
        }
    )
    m = match_events(tools, history, 10_000)
    kinds = {(row, kind) for row, _, kind in m.events}
    assert (0, "remove") in kinds and (1, "arrive") in kinds
    steps = np.array([s for _, s, _ in m.events])
    assert steps.min() >= 0 and steps.max() <= 9_999


def test_bad_history_line_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "history.jsonl"
    bad.write_text('{"kind": "server_added", "server": "x"}\n')
    with pytest.raises(ValueError, match="history.jsonl:1"):
        load_history(bad)


def test_the_real_history_meets_the_real_mcp_crawl(crawled_out: Path) -> None:
    """The contract holds on real data: most of docker's dated events name servers the crawl keyed."""
    tools = pl.read_parquet(crawled_out / "tools.parquet")
    history = load_history(default_mirror() / HISTORY)
    m = match_events(tools, history, steps=10_000)
    assert m.n_history == 496 and m.mcp_tools == tools.filter(pl.col("platform") == "mcp").height
    assert m.matched_history >= 250  # 279 on the snapshot
    kinds = m.summary()
    assert kinds["schedule_remove"] > 0 and kinds["schedule_arrive"] > 0
