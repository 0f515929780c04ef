"""build-ecoagent over the real stage functions (slow: they load the packaged models)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
import pytest

from flows.build import build_ecoagent
from flows.stages import STAGES

pytestmark = pytest.mark.slow


def _require(*stages: str) -> None:
    for stage in stages:
        module = STAGES[stage].target.partition(":")[0]
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"stage {stage} ({module}) is not implemented yet")


def test_real_crawl_runs_then_is_cached(prefect_api: str, tmp_path: Path) -> None:
    _require("crawl")
    out = tmp_path / "out"
    summary = build_ecoagent(out=str(out), stages=["crawl"], platforms=["crewai"])
    assert summary["stages"]["crawl"]["status"] == "ran"
    tools = pl.read_parquet(out / "tools.parquet")
    assert tools.height > 0 and set(tools["platform"]) == {"crewai"}
    marker = out / ".done" / "crawl.json"
    before = marker.stat().st_mtime_ns

    summary = build_ecoagent(out=str(out), stages=["crawl"], platforms=["crewai"])
    assert summary["stages"]["crawl"]["status"] == "cached"
    assert marker.stat().st_mtime_ns == before  # the stage did not run again


def test_whole_chain_on_a_small_config(prefect_api: str, tmp_path: Path) -> None:
    """The README's main job on one platform and a few Syn tools; then a rerun reuses every stage."""
    _require(*STAGES)
    out = tmp_path / "out"
    params = {"out": str(out), "platforms": ["crewai"], "max_tools": 8, "eval_seeds": 1, "review_n": 20}
    summary = build_ecoagent(**params)
    assert {info["status"] for info in summary["stages"].values()} == {"ran"}
    assert (out / "dataset").is_dir()
    summary = build_ecoagent(**params)
    assert {info["status"] for info in summary["stages"].values()} == {"cached"}
