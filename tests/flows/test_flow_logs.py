"""The stages' own log lines reach the Prefect run's log (UI, deployment logs), redacted."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from flows.build import build_ecoagent


def test_stage_logger_lines_reach_the_run_log(
    prefect_api: str, fake_targets: dict[str, str], tmp_path: Path
) -> None:
    lines = _build_and_read_log(out=str(tmp_path / "out"), stage_targets=fake_targets, stages=["crawl"])
    assert ("crawlers.fake", "fake crawl: 4 platforms") in lines, lines


def test_prints_are_logged_and_a_redirected_print_reaches_its_buffer(
    prefect_api: str, fake_targets: dict[str, str], tmp_path: Path
) -> None:
    """log_prints alone sends a print inside ``redirect_stdout`` to the log, and dill then finds no globals."""
    out = tmp_path / "out"
    targets = {**fake_targets, "crawl": "flows_fake_stages:crawl_prints"}
    lines = _build_and_read_log(out=str(out), stage_targets=targets, stages=["crawl"])
    messages = [message for _, message in lines]
    assert "fake crawl printed" in messages, lines
    assert "into the buffer" not in messages, lines
    assert json.loads((out / "prints.json").read_text()) == {
        "buffer": "into the buffer\n",
        "globals": ["json"],
    }


def _build_and_read_log(**build: Any) -> list[tuple[str, str]]:
    """Run ``build_ecoagent(**build)``; (logger, message) of every line of its flow run and subflow."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    logging.getLogger().setLevel(logging.WARNING)  # as under a served deployment
    state = build_ecoagent(**build, return_state=True)
    assert state.is_completed()
    APILogHandler().flush()
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
        )
        ids = [runs[0].id] + [r.id for r in client.read_flow_runs() if r.parent_task_run_id is not None]
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=ids)))
    return [(log.name, log.message) for log in logs]
