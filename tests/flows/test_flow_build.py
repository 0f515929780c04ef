"""build-ecoagent in process against a real local Prefect server: graph order, cache reuse, artifacts.

The stages are the stand-ins of ``flows_fake_stages`` (each call is logged to ``OUT/calls.log``), so the
cache is checked by what actually ran: a cached stage leaves no call and its task state is ``Cached``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import flows_fake_stages as fake
import pytest

from flows.build import STAGE_TASKS, build_ecoagent, is_transient, stage_cache_key


def _statuses(summary: dict[str, Any]) -> dict[str, str]:
    return {stage: info["status"] for stage, info in summary["stages"].items()}


def _ran(out: Path, before: int = 0) -> list[str]:
    return [c["stage"] for c in fake.calls(out)[before:]]


def _artifacts(keys: list[str]) -> dict[str, Any]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys)))
    return {a.key: a for a in sorted(found, key=lambda a: a.created)}


def test_build_runs_graph_then_reuses_cache(
    prefect_api: str, fake_targets: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    monkeypatch.setenv("FAKE_RENDEZVOUS", "1")
    summary = build_ecoagent(out=str(out), stage_targets=fake_targets, max_tools=3, max_workers=2)
    assert set(_statuses(summary).values()) == {"ran"}
    order = _ran(out)
    assert sorted(order) == sorted(fake_targets)
    assert order[0] == "crawl" and order[-1] == "publish"
    assert order.index("train") > order.index("syn")
    assert order.index("evaluate") > max(order.index("train"), order.index("real"))
    assert order.index("review-sample") > order.index("real")
    # syn and real are independent branches: each saw the other running
    met = {c["stage"]: c["met"] for c in fake.calls(out) if c["stage"] in ("syn", "real")}
    assert met == {"syn": True, "real": True}
    assert summary["stages"]["syn"]["stats"] == {"queries": 3}
    assert (out / ".prefect" / "build-summary.json").exists()
    assert any((out / ".prefect" / "results").iterdir())

    # each stage's stats became a table artifact, the build a markdown summary
    arts = _artifacts(["crawl-stats", "evaluate-stats", "build-ecoagent-summary"])
    assert set(arts) == {"crawl-stats", "evaluate-stats", "build-ecoagent-summary"}
    assert "recall@5" in str(arts["evaluate-stats"].data)
    assert "publish" in str(arts["build-ecoagent-summary"].data)

    # the same build again: nothing runs, every task is Cached
    monkeypatch.delenv("FAKE_RENDEZVOUS")
    n = len(fake.calls(out))
    summary = build_ecoagent(out=str(out), stage_targets=fake_targets, max_tools=3)
    assert set(_statuses(summary).values()) == {"cached"}
    assert summary["stages"]["syn"]["state"] == "Cached"
    assert _ran(out, n) == []

    # a Syn option changed: Syn and what reads its outputs rerun, crawl / real / review-sample do not
    n = len(fake.calls(out))
    summary = build_ecoagent(out=str(out), stage_targets=fake_targets, max_tools=4)
    assert _ran(out, n) == ["syn", "train", "evaluate", "publish"]
    assert _statuses(summary)["crawl"] == "cached"
    assert _statuses(summary)["review-sample"] == "cached"

    # an output deleted since: only that stage reruns; it writes the same bytes, so publish stays cached
    shutil.rmtree(out / "eval")
    n = len(fake.calls(out))
    summary = build_ecoagent(out=str(out), stage_targets=fake_targets, max_tools=4)
    assert _ran(out, n) == ["evaluate"]
    assert _statuses(summary)["publish"] == "cached"

    # --force reruns what is selected; a subset runs only those stages, reading earlier outputs
    n = len(fake.calls(out))
    marker = out / ".done" / "evaluate.json"
    marker.write_text('{"fingerprint": "x"}')  # a stage that skips finished work would trust it
    summary = build_ecoagent(
        out=str(out), stage_targets=fake_targets, max_tools=4, stages=["train", "evaluate"], force=True
    )
    assert _ran(out, n) == ["train", "evaluate"]
    assert list(summary["stages"]) == ["train", "evaluate"]
    assert not marker.exists()  # --force cleared it before the stage ran


def test_failed_stage_skips_its_downstream(
    prefect_api: str, fake_targets: dict[str, str], tmp_path: Path
) -> None:
    out = tmp_path / "out"
    targets = {**fake_targets, "real": "flows_fake_stages:real_fails"}
    state = build_ecoagent(out=str(out), stage_targets=targets, return_state=True)
    assert state.is_failed()
    assert "real" in str(state.message)
    import json

    summary = json.loads((out / ".prefect" / "build-summary.json").read_text())
    statuses = _statuses(summary)
    assert statuses["crawl"] == statuses["syn"] == "ran"
    assert statuses["real"] == "failed"
    assert "ToolBench queries are missing" in summary["stages"]["real"]["error"]
    # train reads Real's test split for its held-out comparison (model/metrics.json), so it waits for Real
    for stage in ("review-sample", "train", "evaluate", "publish"):
        assert statuses[stage] == "skipped"
    # a bad-input error is not retried
    assert _ran(out).count("real_fails") == 1


def test_transient_error_is_retried(
    prefect_api: str, fake_targets: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import flows.build

    monkeypatch.setitem(
        flows.build.STAGE_TASKS, "real", STAGE_TASKS["real"].with_options(retry_delay_seconds=0)
    )
    out = tmp_path / "out"
    targets = {**fake_targets, "real": "flows_fake_stages:real_flaky"}
    summary = build_ecoagent(out=str(out), stage_targets=targets, stages=["crawl", "real"])
    assert _statuses(summary) == {"crawl": "ran", "real": "ran"}
    assert _ran(out).count("real_flaky") == 2
    assert is_transient(ConnectionError()) and not is_transient(ValueError())


def test_cache_key_follows_inputs(tmp_path: Path, fake_targets: dict[str, str]) -> None:
    call = {
        "stage": "syn",
        "target": fake_targets["syn"],
        "out": str(tmp_path),
        "profile": {"name": "embedded", "seed": 0},
        "options": {"max_tools": 3},
    }
    (tmp_path / "tools.parquet").write_bytes(b"a")
    key = stage_cache_key(None, {"call": call})
    assert key.startswith("syn-")
    assert stage_cache_key(None, {"call": call}) == key
    (tmp_path / "tools.parquet").write_bytes(b"b")
    assert stage_cache_key(None, {"call": call}) != key
    changed = {**call, "options": {"max_tools": 4}}
    assert stage_cache_key(None, {"call": changed}) != stage_cache_key(None, {"call": call})
    # what Syn does not read leaves its key alone
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "pairs.parquet").write_bytes(b"x")
    assert stage_cache_key(None, {"call": call}) == stage_cache_key(None, {"call": dict(call)})


@pytest.mark.slow
def test_dask_task_runner(prefect_api: str, fake_targets: dict[str, str], tmp_path: Path) -> None:
    """The same flow on prefect-dask's DaskTaskRunner (a temporary local cluster of 2 processes)."""
    pytest.importorskip("prefect_dask")
    out = tmp_path / "out"
    summary = build_ecoagent(out=str(out), stage_targets=fake_targets, task_runner="dask", max_workers=2)
    assert set(_statuses(summary).values()) == {"ran"}
    summary = build_ecoagent(out=str(out), stage_targets=fake_targets, task_runner="dask", max_workers=2)
    assert set(_statuses(summary).values()) == {"cached"}
    assert len(fake.calls(out)) == len(fake_targets)
