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
    assert o["cohen_kappa"] == round(cohen_kappa(Confusion.from_pairs(human, validator)), 3)
    # 10 decided labels are too few to recommend thresholds: refused, with the reason
    assert report["recommended"]["validator_threshold"] is None
    assert "only 10 decided labels" in report["recommended"]["refused"]
    pw = report["population_weighted"]
    assert pw["population_pairs"] >= 12 and 0 < pw["covered_share"] <= 1
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
    append_label(path, "r-3", "no_match")  # the next label is not glued onto the fragment
    assert list(read_labels(path)) == ["r-1", "r-3"]


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


def test_kappa_noise_is_rounded_to_zero() -> None:
    from validators.review.agreement import agreement, rounded

    assert str(rounded(-8.327e-17)) == "0.0" and rounded(None) is None
    # no human match, the validator keeps 1 of 3: kappa is 0 exactly, -3.3e-16 in floats
    assert cohen_kappa(Confusion(0, 0, 1, 2)) != 0.0
    assert str(agreement([False] * 3, [True, False, False])["cohen_kappa"]) == "0.0"
    assert agreement([True, False, True], [True, True, False])["cohen_kappa"] == -0.5


def test_thresholds_are_fitted_on_half_and_checked_on_the_rest() -> None:
    from validators.review.report import MIN_LABELS_FOR_THRESHOLDS, build_report

    n = 80
    scores = [i / n for i in range(n)]
    sample = pl.DataFrame(
        {
            "item_id": [f"r-{i}" for i in range(n)],
            "stratum": ["crewai|kept|high" if s >= 0.5 else "crewai|dropped|low" for s in scores],
            "kept": [s >= 0.5 for s in scores],
            "validator_score": scores,
            "query_id": [f"q{i}" for i in range(n)],
            "tool_id": ["t"] * n,
        }
    )
    # people call a match from 0.7 up: the current threshold 0.5 over-keeps
    labels = {f"r-{i}": {"label": "match" if s >= 0.7 else "no_match"} for i, s in enumerate(scores)}
    population = {"crewai|kept|high": 900, "crewai|dropped|low": 100}
    report = build_report(sample, labels, None, None, population)
    v = report["recommended"]["validator_threshold"]
    assert n >= MIN_LABELS_FOR_THRESHOLDS and report["recommended"]["refused"] is None
    assert 0.65 <= v["threshold"] <= 0.7
    assert v["fitted_on"] + v["held_out"]["n"] == n and 20 < v["fitted_on"] < 60
    assert v["held_out"]["percent_agreement"] > v["held_out_current"]["percent_agreement"]
    # kept stratum: 0.5..0.7 disagree (16 of 40 items agree... 24/40); dropped stratum: all agree
    pw = report["population_weighted"]
    assert pw["percent_agreement"] == pytest.approx(100 * (0.9 * 24 / 40 + 0.1 * 1.0), abs=0.1)
    assert report["overall"]["percent_agreement"] == pytest.approx(100 * 64 / 80, abs=0.1)
