"""The whole Real stage on real files and models: recall union with provenance, the measured and
calibrated validator, tables, stats, resume, bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from ecoagent.artifacts import ArtifactDir, write_parquet
from ecoagent.schemas import empty_tools
from validators.pipeline import DECISION_SCHEMA, PAIR_SCHEMA, cap_per_query, run


def test_decisions_record_the_union_with_provenance(real_out: tuple[Path, dict[str, Any]]) -> None:
    out, stats = real_out
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert dict(decisions.schema) == DECISION_SCHEMA
    # 12 records in the example files, the open-domain demo repeats the demo query: 11 unique queries;
    # each of 2 retrievers proposes 2 tools, so 2 to 4 candidates per query
    assert stats["queries"]["unique"] == 11 and stats["queries"]["duplicates_removed"] == 1
    per_query = decisions.group_by("query_id").len()["len"]
    assert decisions["query_id"].n_unique() == 11 and per_query.min() >= 2 and per_query.max() <= 4
    assert decisions.select("query_id", "tool_id").is_duplicated().sum() == 0
    names = {n for ns in decisions["proposed_by"].to_list() for n in ns}
    assert names == {"BM25", "all-MiniLM-L6-v2"}
    # floor at the minimum: every candidate is above its proposers' floors and reaches the validator
    assert (decisions["above_floor"].list.len() == decisions["proposed_by"].list.len()).all()
    assert decisions["passed_recall"].all() and decisions["validator_score"].null_count() == 0
    threshold = stats["validator"]["threshold"]
    assert ((decisions["validator_score"] >= threshold) == decisions["kept"]).all()
    assert set(decisions["model"].unique()) == {"HuggingFaceTB/SmolLM2-135M-Instruct"}
    assert set(decisions["prompt_version"].unique()) == {"real-judge-v2"}


def test_a_pair_only_bm25_proposed_reaches_the_validator_and_can_be_kept(
    real_out, small_mirror: Path, test_profile, real_options
) -> None:
    out, _ = real_out
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    bm25_only = decisions.filter(pl.col("proposed_by") == pl.lit(["BM25"], dtype=pl.List(pl.String)))
    assert bm25_only.height > 0  # lexical and dense top-2 differ on real queries
    assert bm25_only["passed_recall"].all() and bm25_only["validator_score"].null_count() == 0
    # keeping depends on the score alone: at threshold 0 every judged pair, BM25-only ones included, is kept
    run(out, test_profile, mirror=small_mirror, **{**real_options, "validator_threshold": 0.0})
    pairs = pl.read_parquet(out / "real" / "pairs.parquet")
    kept_bm25 = pairs.filter(pl.col("proposed_by") == pl.lit(["BM25"], dtype=pl.List(pl.String)))
    assert kept_bm25.height == bm25_only.height
    run(out, test_profile, mirror=small_mirror, **real_options)  # put the session's run back


def test_threshold_is_calibrated_on_dev_labels(real_out) -> None:
    _, stats = real_out
    m = stats["validator"]["measurement"]
    cal = m["calibration"]
    assert m["threshold_source"] == "calibrated on dev"
    assert stats["validator"]["threshold"] == m["threshold_used"] == cal["threshold"]
    assert cal["model"] == "HuggingFaceTB/SmolLM2-135M-Instruct" and cal["prompt_version"] == "real-judge-v2"
    # the calibration's counts are those of the 6 dev pairs (2 positives, 2 random, 2 hard)
    assert cal["tp"] + cal["fn"] == 2 and cal["tp"] + cal["fp"] + cal["fn"] + cal["tn"] == 6
    test = m["test"]
    for kind in ("random", "hard"):
        assert test[kind]["positives"] == test[kind]["negatives"] == 2
        lo, hi = test[kind]["ci95"]
        assert 0.0 <= lo <= test[kind]["auc"] <= hi <= 1.0
        assert set(test[kind]["encoder_auc"]) == {"all-MiniLM-L6-v2"}
    # labelled pairs are checkpointed apart from the Real pairs
    lines = (Path(real_out[0]) / "real" / "labels_checkpoint.jsonl").read_text().splitlines()
    assert len(lines) == 12
    # how far the threshold moves over resamples of the dev pairs, and what the build keeps at its ends
    boot = cal["bootstrap"]
    assert boot["low"] <= boot["median"] <= boot["high"] and boot["resamples"] == 1000
    sens = stats["validator"]["threshold_sensitivity"]
    assert [sens[k]["threshold"] for k in ("low", "used", "high")] == [
        boot["low"],
        cal["threshold"],
        boot["high"],
    ]
    assert sens["used"]["queries"] == stats["pairs"]["queries_after_validation"]
    assert sens["used"]["pairs"] == stats["pairs"]["after_validation"]
    assert sens["low"]["queries"] >= sens["used"]["queries"] >= sens["high"]["queries"]


def test_pairs_splits_and_stats(real_out: tuple[Path, dict[str, Any]]) -> None:
    out, stats = real_out
    pairs = pl.read_parquet(out / "real" / "pairs.parquet")
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert dict(pairs.schema) == PAIR_SCHEMA
    assert pairs.height == decisions["kept"].sum() == stats["pairs"]["after_validation"]
    assert (pairs.group_by("query_id").agg(pl.col("split").n_unique())["split"] == 1).all()
    assert set(pairs["split"].to_list()) <= {"train", "val", "test"}
    on_disk = json.loads((out / "real" / "stats.json").read_text())
    assert on_disk["pairs"] == stats["pairs"]
    per_platform = stats["pairs"]["per_platform"]
    assert sum(p["recalled"] for p in per_platform.values()) == decisions.height
    assert sum(p["after_validation"] for p in per_platform.values()) == pairs.height
    prov = stats["recall"]["provenance"]["per_retriever"]
    assert (
        sum(p["candidates_alone"] for p in prov.values())
        == decisions.filter(pl.col("proposed_by").list.len() == 1).height
    )
    floors = stats["recall"]["retrievers"]
    assert set(floors) == {"BM25", "all-MiniLM-L6-v2"}
    assert stats["recall"]["threshold"] == floors["all-MiniLM-L6-v2"]["floor"]
    assert stats["validator"]["model"]["backend"] == "llamacpp"
    assert stats["timings"]["total_s"] > 0


def test_floors_and_cap_select_what_reaches_the_validator(
    real_out, small_mirror: Path, test_profile, real_options
) -> None:
    out, _ = real_out
    ckpt = out / "real" / "validator_checkpoint.jsonl"
    lines = ckpt.read_text().count("\n")
    before = json.loads((out / "real" / "stats.json").read_text())
    again = run(out, test_profile, mirror=small_mirror, **real_options)
    assert again == before  # same config: the completion marker makes the rerun a no-op
    # a higher floor quantile: fewer candidates are above a floor, none is scored again
    raised = run(out, test_profile, mirror=small_mirror, **{**real_options, "floor_quantile": 0.75})
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert ckpt.read_text().count("\n") == lines
    assert 0 < raised["pairs"]["after_recall"] < decisions.height
    assert (decisions["passed_recall"] == (decisions["above_floor"].list.len() > 0)).all()
    for name, r in raised["recall"]["retrievers"].items():
        above = decisions.filter(pl.col("above_floor").list.contains(name))
        assert above.height == r["above_floor"]
    assert (
        decisions.filter(~pl.col("passed_recall"))["validator_score"].null_count()
        == (~decisions["passed_recall"]).sum()
    )
    # one per query: at most one judged candidate per query
    capped = run(out, test_profile, mirror=small_mirror, **{**real_options, "max_per_query": 1})
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    assert (
        capped["pairs"]["after_recall"]
        == 11
        == decisions.filter(pl.col("passed_recall"))["query_id"].n_unique()
    )
    run(out, test_profile, mirror=small_mirror, **real_options)


def test_cap_prefers_candidates_more_retrievers_agree_on() -> None:
    frame = pl.DataFrame(
        {
            "query_id": ["q", "q", "q", "r"],
            "tool_id": ["a", "b", "c", "a"],
            "rank": [1, 2, 1, 3],
            "cosine": [0.5, 0.4, 0.9, 0.1],
            "above_floor": [["BM25"], ["BM25", "MiniLM"], [], ["MiniLM"]],
            "passed_recall": [True, True, False, True],
        }
    )
    got = cap_per_query(frame, 1)
    # b: two retrievers above the floor beats a's better rank; c was never above a floor
    assert got["passed_recall"].to_list() == [False, True, False, True]
    assert cap_per_query(frame, None)["passed_recall"].to_list() == frame["passed_recall"].to_list()


def test_empty_or_missing_tool_table(tmp_path: Path, small_mirror: Path, test_profile) -> None:
    with pytest.raises(FileNotFoundError, match="ecoagent crawl"):
        run(tmp_path, test_profile, mirror=small_mirror)
    write_parquet(empty_tools(), ArtifactDir(tmp_path).tools)
    with pytest.raises(ValueError, match="holds no tools"):
        run(tmp_path, test_profile, mirror=small_mirror)


def test_config_rejects_bad_settings(test_profile) -> None:
    from validators.config import RealConfig

    with pytest.raises(ValueError, match="must be one of retrievers"):
        RealConfig.for_profile(test_profile, retrievers=("bm25",))
    with pytest.raises(ValueError, match="floor_quantile"):
        RealConfig.for_profile(test_profile, floor_quantile=1.5)
    with pytest.raises(ValueError, match="calibration_per_kind > 0"):
        RealConfig.for_profile(test_profile, calibration_per_kind=0)
    assert np.isclose(sum(RealConfig.for_profile(test_profile).split_fractions), 1.0)


def test_templates_are_labelled_queries_in_stratified_and_tool_disjoint_splits(
    templates_out: tuple[Path, dict[str, Any]],
) -> None:
    out, stats = templates_out
    pairs = pl.read_parquet(out / "real" / "pairs.parquet")
    assert dict(pairs.schema) == PAIR_SCHEMA
    templates = pairs.filter(pl.col("source") == "n8n_templates")
    # six files, each with a write-up and Gmail / Telegram / Sheets / Slack / Calendar nodes in the table
    assert templates["query_id"].n_unique() == stats["templates"]["queries"] == 6
    assert (templates["label_source"] == "template").all() and templates["validator_score"].is_null().all()
    assert (templates["group"] == "n8n_templates").all()
    assert templates["tool_id"].str.starts_with("n8n:").all()
    toolbench = pairs.filter(pl.col("source") == "toolbench")
    assert (toolbench["label_source"] == "validator").all()
    assert pairs.height == toolbench.height + templates.height
    # a query in one split of each kind; a service in one tool-disjoint split
    assert (pairs.group_by("query_id").agg(pl.col("split").n_unique())["split"] == 1).all()
    placed = pairs.drop_nulls("tool_split").with_columns(
        pl.col("tool_id").str.extract(r"^([^:]+:[^:]+)").alias("svc")
    )
    assert (placed.group_by("svc").agg(pl.col("tool_split").n_unique())["tool_split"] == 1).all()
    # the judge was measured against the template labels: 2 pairs of each kind
    measured = stats["templates"]["judge_vs_template_labels"]
    assert measured["pairs_per_kind"] == 2 and measured["hard"]["positives"] == 2
    lines = (out / "real" / "templates_checkpoint.jsonl").read_text().splitlines()
    assert len(lines) == 6
    assert (
        sum(v["queries"] for v in stats["pairs"]["per_source"]["n8n_templates"].values())
        == templates["query_id"].n_unique()
    )
