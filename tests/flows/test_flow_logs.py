"""The stages' own log lines reach the Prefect run's log (UI, deployment logs), redacted."""

from __future__ import annotations

import logging
from pathlib import Path

from flows.build import build_ecoagent


def test_stage_logger_lines_reach_the_run_log(
    prefect_api: str, fake_targets: dict[str, str], tmp_path: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId, LogFilter, LogFilterFlowRunId
    from prefect.logging.handlers import APILogHandler

    logging.getLogger().setLevel(logging.WARNING)  # as under a served deployment
    state = build_ecoagent(
        out=str(tmp_path / "out"), stage_targets=fake_targets, stages=["crawl"], return_state=True
    )
    assert state.is_completed()
    APILogHandler().flush()
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[state.state_details.flow_run_id]))
        )
        ids = [runs[0].id] + [r.id for r in client.read_flow_runs() if r.parent_task_run_id is not None]
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=ids)))
    lines = [(log.name, log.message) for log in logs]
    assert ("crawlers.fake", "fake crawl: 4 platforms") in lines, lines
