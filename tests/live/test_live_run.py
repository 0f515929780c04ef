"""The whole live run on the real servers: a short one by default, the issue's 1,000 steps as `slow`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from live_testutil import needs_servers, server_children

from live.run import LiveConfig, run_live

pytestmark = needs_servers


def _check(out: Path, steps: int) -> dict:
    result = json.loads((out / "eval" / "live.json").read_text())
    assert result["n_tools"] >= 30 and result["n_servers"] >= 5
    assert result["orphans"] == [] and server_children() == []
    assert len(result["methods"]) >= 8
    assert {"RATED Full", "HealthCheckBlacklist", "Retry (k=3)", "Dense all-MiniLM-L6-v2 (static)"} <= set(
        result["methods"]
    )
    by = result["calls"]["by_outcome"]
    assert by.get("ok", 0) > 0
    assert by.get("closed", 0) > 0  # the killed servers' calls failed for real
    stub = result["http_stub"]
    assert stub["closed"] is True  # the loopback stub's thread and port are gone
    servers = {s["name"]: s for s in result["servers"]}
    assert servers["fetch-b"]["started_without_credential"] == 1
    assert servers["fetch-b"]["processes_started"] == 3  # start, without credential, with it again
    actions = {e["action"] for e in result["schedule"]}
    assert {"http_429", "http_503", "http_ok", "restart_no_credential"} <= actions
    md = (out / "eval" / "live.md").read_text()
    assert "Post-Fail SR" in md and "What this does not show" in md
    rows = (out / "live" / "calls.jsonl").read_text().splitlines()
    assert len(rows) == result["calls"]["n"]
    return result


def test_short_live_run(tmp_path: Path) -> None:
    from rated.evaluation.live_report import include_if_present, with_live_section

    # a build's report, with a live section of an earlier run: the run replaces that section, once
    (tmp_path / "eval").mkdir()
    stale = "# EcoAgent evaluation report\n\n## Table 2\n\nrows\n\n## Live runtime (real MCP servers, `ecoagent live`)\n\nold\n"
    (tmp_path / "eval" / "report.md").write_text(stale)
    run_live(tmp_path, LiveConfig(steps=60, n_bootstrap=200))
    result = _check(tmp_path, 60)
    assert {s["name"]: s["processes_started"] for s in result["servers"]}["memory"] == 2  # restarted once
    # the hook eval/report.md and the dataset card use
    assert include_if_present(tmp_path).startswith("## Live runtime")
    report = (tmp_path / "eval" / "report.md").read_text()
    assert report.startswith("# EcoAgent evaluation report\n\n## Table 2\n\nrows\n\n## Live runtime")
    assert report.count("## Live runtime") == 1 and "\nold\n" not in report and "Post-Fail SR" in report
    assert with_live_section(report, tmp_path) == report  # the evaluation appends the same text
    assert include_if_present(tmp_path / "nowhere") == ""
    assert with_live_section("# r\n\nrows\n", tmp_path / "nowhere") == "# r\n\nrows\n"


@pytest.mark.slow
def test_issue_run_1000_steps(tmp_path: Path) -> None:
    run_live(tmp_path, LiveConfig(steps=1000))
    result = _check(tmp_path, 1000)
    assert result["calls"]["by_outcome"].get("timeout", 0) > 0  # the SIGSTOPped server's calls hung
    assert result["calls"]["by_outcome"].get("tool_error", 0) > 0  # bad arguments, HTTP statuses
    answered = result["http_stub"]["responses"]
    assert answered.get("origin 429", 0) + answered.get("proxy 429", 0) > 0
    assert answered.get("origin 503", 0) + answered.get("proxy 503", 0) > 0
    assert answered.get("proxy 407", 0) > 0  # fetch-b without its credential
    assert answered.get("origin 200", 0) > 0 and answered.get("proxy 200", 0) > 0  # both read it when healthy
    assert "live:fetch:fetch" not in result["never_ok_tools"]
