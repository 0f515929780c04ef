"""`ecoagent real` and `ecoagent review sample|report` through the console entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ecoagent.cli import build_parser, main
from validators.review.labels import append_label


def test_real_options_parse() -> None:
    args = build_parser().parse_args(
        ["real", "--out", "o", "--floor-quantile", "0.55", "--validator-threshold", "0.9", "--mirror", "m"]
    )
    assert (args.floor_quantile, args.validator_threshold, args.mirror, args.profile) == (
        0.55,
        0.9,
        Path("m"),
        "embedded",
    )
    assert build_parser().parse_args(["review", "--out", "o"]).action == "serve"
    assert build_parser().parse_args(
        ["review", "report", "--out", "o", "--labels", "l.jsonl"]
    ).labels == Path("l.jsonl")


def test_real_without_tools_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["real", "--out", str(tmp_path)]) == 1
    assert "run `ecoagent crawl --out" in capsys.readouterr().err


def test_review_sample_and_report(real_out: tuple[Path, dict[str, Any]], tmp_path: Path, capsys) -> None:
    out, _ = real_out
    work = tmp_path / "out"
    shutil.copytree(out, work)
    assert main(["review", "sample", "--out", str(work), "--n", "8", "--seed", "3"]) == 0
    printed = capsys.readouterr().out
    assert "review sample" in printed and "| total" in printed
    sample = pl.read_parquet(work / "review" / "sample.parquet")
    labels = tmp_path / "mine.jsonl"
    for r in sample.iter_rows(named=True):  # a reviewer who always agrees with the validator
        append_label(labels, r["item_id"], "match" if r["kept"] else "no_match")
    assert main(["review", "report", "--out", str(work), "--labels", str(labels)]) == 0
    printed = capsys.readouterr().out
    assert "percent agreement" in printed and "| 100" in printed
    report = json.loads((work / "review" / "report.json").read_text())
    assert report["overall"]["percent_agreement"] == 100.0 and report["overall"]["n"] == 8


@pytest.mark.slow
def test_real_on_the_snapshot_with_embedded_models(
    crawled_out: Path, mirror: Path, tmp_path: Path, capsys
) -> None:
    """The whole stage as users run it: every ToolBench query, the full tool table, mpnet + SmolLM2."""
    shutil.copy(crawled_out / "tools.parquet", tmp_path / "tools.parquet")
    assert main(["real", "--out", str(tmp_path), "--mirror", str(mirror)]) == 0
    assert "EcoAgent-Real" in capsys.readouterr().out
    stats = json.loads((tmp_path / "real" / "stats.json").read_text())
    assert stats["queries"]["unique"] == 1050 and stats["pairs"]["recalled"] > 5250  # a union of top-5s
    assert stats["pairs"]["after_recall"] > 0 and stats["validator"]["measurement"]["test"]["random"]["auc"]
