"""The agreement report from a labels file written by the test (no human labels exist in the repo)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from validators.review.agreement import Confusion, cohen_kappa
from validators.review.labels import append_label, read_labels
from validators.review.report import recommend_recall_threshold, recommend_validator_threshold, run
from validators.review.sample import run as sample_run


@pytest.fixture
def sampled(real_out: tuple[Path, dict[str, Any]], test_profile) -> tuple[Path, pl.DataFrame]:
    out, _ = real_out
    sample_run(out, test_profile, n=12, seed=7)
    return out, pl.read_parquet(out / "review" / "sample.parquet")


def test_report_from_test_written_labels(sampled, tmp_path: Path) -> None:
    out, sample = sampled
    labels = tmp_path / "labels.jsonl"
    rows = sample.rows(named=True)
    # agree with the validator on all but the first two items, mark one unsure, leave one unlabelled
    for i, r in enumerate(rows[:-1]):
        agree = i >= 2
        human_match = r["kept"] if agree else not r["kept"]
        append_label(labels, r["item_id"], "unsure" if i == 2 else ("match" if human_match else "no_match"))
    append_label(labels, rows[0]["item_id"], "match" if rows[0]["kept"] else "no_match")  # relabel: last wins
    report = run(out, labels=labels)
    decided = rows[: len(rows) - 1]
    human = [r["kept"] if i != 1 else not r["kept"] for i, r in enumerate(decided) if i != 2]
    validator = [r["kept"] for i, r in enumerate(decided) if i != 2]
    o = report["overall"]
    assert (report["items"], report["labeled"], report["unsure"], report["unlabeled"]) == (12, 11, 1, 1)
    assert o["n"] == 10 and o["agree"] == 9 and o["percent_agreement"] == pytest.approx(90.0)
    assert o["cohen_kappa"] == cohen_kappa(Confusion.from_pairs(human, validator))
    assert sum(g["n"] for g in report["per_stratum"].values()) == 10
    assert json.loads((out / "review" / "report.json").read_text())["overall"] == o


def test_labels_file_errors_name_the_line(sampled, tmp_path: Path) -> None:
    out, sample = sampled
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"item_id": sample["item_id"][0], "label": "maybe"}) + "\n")
    with pytest.raises(ValueError, match=r"bad\.jsonl:1: .*'maybe'"):
        run(out, labels=bad)
    with pytest.raises(FileNotFoundError):
        run(out, labels=tmp_path / "absent.jsonl")
    foreign = tmp_path / "foreign.jsonl"
    append_label(foreign, "r-notinsample", "match")
    with pytest.raises(ValueError, match="none of its 1 item ids"):
        run(out, labels=foreign)


def test_torn_last_line_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    append_label(path, "r-1", "match")
    with path.open("a") as fh:
        fh.write('{"item_id": "r-2", "lab')
    assert list(read_labels(path)) == ["r-1"]


def test_recommended_thresholds_known_inputs() -> None:
    # perfect split between 0.3 and 0.6: candidates 0.45 and 0.6 both give kappa 1; the higher wins
    rec = recommend_validator_threshold([0.1, 0.3, 0.6, 0.9], [False, False, True, True])
    assert rec == {"threshold": 0.6, "cohen_kappa": 1.0, "agreement": 100.0}
    # 3 matches at cosines 0.5/0.6/0.7: keeping 95% of them needs all three -> 0.5 (above current 0.4)
    rec = recommend_recall_threshold([0.5, 0.6, 0.7, 0.8], [True, True, True, False], current=0.4)
    assert rec is not None and rec["threshold"] == 0.5 and rec["matches_kept"] == 3
    # the labels never support a threshold below the one the sample was drawn with
    rec = recommend_recall_threshold([0.5, 0.6], [True, True], current=0.55)
    assert rec is not None and rec["threshold"] == 0.55
    assert recommend_recall_threshold([0.5], [False], current=0.4) is None
