"""The whole Real stage on real files and models: tables, threshold logic, stats, resume, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, write_parquet
from ecoagent.schemas import empty_tools
from validators.pipeline import DECISION_SCHEMA, PAIR_SCHEMA, run


def test_decisions_record_every_recalled_pair(real_out: tuple[Path, dict[str, Any]]) -> None:
    out, stats = real_out
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert dict(decisions.schema) == DECISION_SCHEMA
    # 12 records in the example files, the open-domain demo repeats the demo query: 11 unique x top-2
    assert stats["queries"]["unique"] == 11 and stats["queries"]["duplicates_removed"] == 1
    assert decisions.height == 22 and decisions["query_id"].n_unique() == 11
    assert sorted(decisions["rank"].unique().to_list()) == [1, 2]
    # recall threshold 0: every pair with a non-negative cosine reaches the validator and is scored
    assert decisions.filter(pl.col("passed_recall"))["validator_score"].null_count() == 0
    assert (
        decisions.filter(~pl.col("passed_recall"))["validator_score"].null_count()
        == (~decisions["passed_recall"]).sum()
    )
    assert (decisions["passed_recall"] == (decisions["cosine"] >= 0.0)).all()
    scored = decisions.filter(pl.col("passed_recall"))
    threshold = stats["config"]["validator_threshold"]
    assert threshold == 0.5  # the embedded profile's default
    assert ((scored["validator_score"] >= threshold) == scored["kept"]).all()
    assert set(decisions["model"].unique()) == {"HuggingFaceTB/SmolLM2-135M-Instruct"}
    assert set(decisions["prompt_version"].unique()) == {"real-yesno-v1"}
    # cosines descend with rank within each query
    for _, g in decisions.group_by("query_id"):
        assert np.all(np.diff(g.sort("rank")["cosine"].to_numpy()) <= 1e-6)


def test_pairs_and_splits(real_out: tuple[Path, dict[str, Any]]) -> None:
    out, stats = real_out
    pairs = pl.read_parquet(out / "real" / "pairs.parquet")
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert dict(pairs.schema) == PAIR_SCHEMA
    assert pairs.height == decisions["kept"].sum() == stats["pairs"]["after_validation"]
    assert pairs.select("query_id", "tool_id").is_duplicated().sum() == 0
    assert (pairs.group_by("query_id").agg(pl.col("split").n_unique())["split"] == 1).all()
    assert set(pairs["split"].to_list()) <= {"train", "val", "test"}


def test_stats_report(real_out: tuple[Path, dict[str, Any]]) -> None:
    out, stats = real_out
    on_disk = json.loads((out / "real" / "stats.json").read_text())
    assert on_disk["pairs"] == stats["pairs"]
    assert stats["pairs"]["recalled"] == 22
    per_platform = stats["pairs"]["per_platform"]
    assert sum(p["recalled"] for p in per_platform.values()) == 22
    assert sum(p["after_validation"] for p in per_platform.values()) == stats["pairs"]["after_validation"]
    grid = {r["threshold"]: r["pairs"] for r in stats["recall"]["threshold_grid"]}
    assert list(grid.values()) == sorted(grid.values(), reverse=True)
    assert stats["recall"]["cosine_all"]["count"] == 22
    sanity = stats["validator"]["sanity_toolbench"]
    assert sanity["pairs_per_class"] == 3 and 0.0 <= sanity["validator_auc"] <= 1.0
    assert 0.0 <= sanity["recall_encoder_auc"] <= 1.0
    assert stats["validator"]["model"]["backend"] == "embedded"
    assert stats["timings"]["total_s"] > 0


def test_rerun_resumes_and_thresholds_reuse_scores(
    real_out, small_mirror: Path, test_profile, real_options
) -> None:
    out, stats = real_out
    ckpt = out / "real" / "validator_checkpoint.jsonl"
    lines = ckpt.read_text().count("\n")
    # same config: the completion marker makes the rerun a no-op
    again = run(out, test_profile, mirror=small_mirror, **real_options)
    assert again == stats  # the saved stats, timings included: nothing was recomputed
    # a higher recall threshold: fewer pairs reach the validator, and none is scored again
    cos = pl.read_parquet(out / "real" / "decisions.parquet")["cosine"].to_numpy()
    t = float(np.median(cos))
    raised = run(out, test_profile, mirror=small_mirror, **{**real_options, "recall_threshold": t})
    assert ckpt.read_text().count("\n") == lines
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert raised["pairs"]["after_recall"] == int((cos >= t).sum()) == decisions["passed_recall"].sum()
    assert (
        decisions.filter(~pl.col("passed_recall"))["validator_score"].null_count()
        == (~decisions["passed_recall"]).sum()
    )
    assert not decisions.filter(~pl.col("passed_recall"))["kept"].any()
    # a validator threshold of 0 keeps every pair that passed recall
    everything = run(
        out,
        test_profile,
        mirror=small_mirror,
        **{**real_options, "recall_threshold": t, "validator_threshold": 0.0},
    )
    assert everything["pairs"]["after_validation"] == everything["pairs"]["after_recall"]
    assert ckpt.read_text().count("\n") == lines
    # put the session's run back for the tests that read it
    run(out, test_profile, mirror=small_mirror, **real_options)


def test_empty_or_missing_tool_table(tmp_path: Path, small_mirror: Path, test_profile) -> None:
    with pytest.raises(FileNotFoundError, match="ecoagent crawl"):
        run(tmp_path, test_profile, mirror=small_mirror)
    write_parquet(empty_tools(), ArtifactDir(tmp_path).tools)
    with pytest.raises(ValueError, match="holds no tools"):
        run(tmp_path, test_profile, mirror=small_mirror)
