"""The stratified sample: allocation on known sizes, and the real decisions of the session's Real run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from validators.review.sample import SAMPLE_SCHEMA, allocate, candidates_frame, item_id, run, score_band


def test_allocate_known_sizes() -> None:
    # 10 items over 60/30/6/4: one each first, then the units go to the strata furthest below 10*size/100
    assert allocate({"a": 60, "b": 30, "c": 6, "d": 4}, 10) == {"a": 6, "b": 2, "c": 1, "d": 1}
    assert allocate({"a": 3, "b": 1}, 10) == {"a": 3, "b": 1}  # fewer candidates than n: take all
    assert allocate({"a": 5, "b": 5, "c": 5}, 2) == {"a": 1, "b": 1}  # n below the number of strata
    assert allocate({"a": 0, "b": 7}, 3) == {"b": 3}
    assert sum(allocate({"x": 97, "y": 2, "z": 1}, 20).values()) == 20
    with pytest.raises(ValueError):
        allocate({"a": 1}, -1)


def test_score_bands() -> None:
    assert [score_band(s) for s in (0.0, 0.19, 0.2, 0.85, 1.0)] == [
        "0.0-0.2",
        "0.0-0.2",
        "0.2-0.4",
        "0.8-1.0",
        "0.8-1.0",
    ]


def test_sample_of_real_decisions(real_out: tuple[Path, dict[str, Any]], test_profile) -> None:
    out, _ = real_out
    stats = run(out, test_profile, n=12, seed=7)
    sample = pl.read_parquet(out / "review" / "sample.parquet")
    assert dict(sample.schema) == SAMPLE_SCHEMA and sample.height == 12 == stats["items"]
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    tools = pl.read_parquet(out / "tools.parquet")
    candidates = candidates_frame(decisions, tools)
    # only pairs the validator judged, every non-empty stratum represented when n allows
    assert set(zip(sample["query_id"], sample["tool_id"], strict=True)) <= set(
        zip(candidates["query_id"], candidates["tool_id"], strict=True)
    )
    strata = set(candidates["stratum"].to_list())
    if len(strata) <= 12:
        assert set(sample["stratum"].to_list()) == strata
    row = sample.row(0, named=True)
    platform, decision, band = row["stratum"].split("|")
    assert platform == row["platform"] and decision == ("kept" if row["kept"] else "dropped")
    assert band == score_band(row["validator_score"])
    assert row["item_id"] == item_id(row["query_id"], row["tool_id"])
    tool = tools.filter(pl.col("tool_id") == row["tool_id"]).row(0, named=True)
    assert (row["tool_name"], row["tool_description"]) == (tool["name"], tool["description"])
    # reproducible from the seed, different under another seed
    first = sample["item_id"].to_list()
    run(out, test_profile, n=12, seed=7)
    assert pl.read_parquet(out / "review" / "sample.parquet")["item_id"].to_list() == first
    run(out, test_profile, n=12, seed=8)
    assert pl.read_parquet(out / "review" / "sample.parquet")["item_id"].to_list() != first


def test_sample_needs_validated_pairs(tmp_path: Path, real_out, test_profile) -> None:
    out, _ = real_out
    decisions = pl.read_parquet(out / "real" / "decisions.parquet").with_columns(
        pl.lit(False).alias("passed_recall"), pl.lit(None, dtype=pl.Float64).alias("validator_score")
    )
    (tmp_path / "real").mkdir()
    decisions.write_parquet(tmp_path / "real" / "decisions.parquet")
    pl.read_parquet(out / "tools.parquet").write_parquet(tmp_path / "tools.parquet")
    with pytest.raises(ValueError, match="no pair that reached the validator"):
        run(tmp_path, test_profile, n=5)
