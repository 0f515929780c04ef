"""Agreement of human labels with the validator (``review/report.json``), from any labels file.

The report is computed from a labels file, not from state in this repository, so anyone can label the
sample themselves and rerun the check: ``ecoagent review report --out DIR --labels FILE``. It also
recommends the thresholds the labels support (see ``recommend_validator_threshold`` and
``recommend_recall_threshold`` for what "support" means).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir, write_json
from validators.review.agreement import Confusion, agreement, cohen_kappa, rounded
from validators.review.labels import read_labels

RECALL_MATCH_COVERAGE = 0.95  # a recall threshold may lose at most 5% of the pairs people call a match
MIN_LABELS_FOR_THRESHOLDS = 40  # decided labels below which no threshold is recommended
FIT_SHARE = 0.5  # share of decided labels the thresholds are fitted on; agreement is reported on the rest


def _in_fit_half(item_id: str) -> bool:
    """A fixed split of items by id hash, so the fit/held-out halves do not depend on label order."""
    return int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < FIT_SHARE


def population_weighted(decided: pl.DataFrame, population: dict[str, int]) -> dict[str, Any]:
    """Agreement re-weighted to the population of pairs: each stratum counts by its share of all pairs.

    The sample over-draws small strata (every stratum is seen), so the plain agreement describes the
    sample, not the validated pairs; this is the estimate for the latter. Strata without a decided label
    cannot be estimated: their share of the population is reported as not covered.
    """
    total = sum(population.values())
    rates: dict[str, float] = {}
    for stratum, part in decided.group_by("stratum"):
        rates[str(stratum[0])] = float((part["human_match"] == part["kept"]).mean())  # type: ignore[arg-type]
    covered = {s: n for s, n in population.items() if s in rates}
    weight = sum(covered.values())
    if not total or not weight:
        return {"percent_agreement": None, "population_pairs": total, "covered_share": 0.0}
    estimate = sum(rates[s] * n for s, n in covered.items()) / weight
    return {
        "percent_agreement": rounded(100.0 * estimate, 1),
        "population_pairs": total,
        "covered_share": rounded(weight / total, 3),
        "strata_without_labels": sorted(set(population) - set(rates)),
    }


def _recommendations(
    decided: pl.DataFrame, recall_threshold: float | None, with_cosine: bool
) -> dict[str, Any]:
    """Thresholds fitted on one half of the decided labels, with the agreement they reach on the other."""
    n = decided.height
    if n < MIN_LABELS_FOR_THRESHOLDS:
        why = (
            f"only {n} decided labels (match / no match): at least {MIN_LABELS_FOR_THRESHOLDS} are needed "
            "before thresholds are recommended"
        )
        return {"validator_threshold": None, "recall_threshold": None, "refused": why}
    fit = decided.filter(pl.col("item_id").map_elements(_in_fit_half, return_dtype=pl.Boolean))
    held = decided.join(fit.select("item_id"), on="item_id", how="anti")
    validator = recommend_validator_threshold(fit["validator_score"].to_list(), fit["human_match"].to_list())
    if validator is not None:
        at = held["validator_score"] >= validator["threshold"]
        validator["fitted_on"] = fit.height
        validator["held_out"] = agreement(held["human_match"].to_list(), at.to_list())
        validator["held_out_current"] = agreement(held["human_match"].to_list(), held["kept"].to_list())
    recall = (
        recommend_recall_threshold(fit["cosine"].to_list(), fit["human_match"].to_list(), recall_threshold)
        if with_cosine and recall_threshold is not None
        else None
    )
    if recall is not None:
        h = held.filter(pl.col("human_match"))
        recall["fitted_on"] = fit.height
        recall["held_out_matches_kept"] = int((h["cosine"] >= recall["threshold"]).sum())
        recall["held_out_matches"] = h.height
    return {"validator_threshold": validator, "recall_threshold": recall, "refused": None}


def recommend_validator_threshold(scores: Sequence[float], human: Sequence[bool]) -> dict[str, Any] | None:
    """The validator threshold whose decisions agree best with the labels (kappa, then agreement).

    Candidates are the midpoints between consecutive distinct labelled scores (plus 0 and 1), so
    every distinct decision rule the labels can tell apart is tried once. Ties go to the higher
    threshold, the more conservative set.
    """
    if not scores:
        return None
    s = np.asarray(scores, dtype=float)
    h = list(human)
    distinct = np.unique(s)
    cands = sorted({0.0, 1.0, *((distinct[:-1] + distinct[1:]) / 2).tolist(), *distinct.tolist()})
    best: tuple[float, float, float] | None = None
    for t in cands:
        c = Confusion.from_pairs(h, (s >= t).tolist())
        kappa = cohen_kappa(c)
        agree = (c.both_match + c.both_no) / c.n
        key = (kappa if kappa is not None else -1.0, agree, t)
        if best is None or key >= best:
            best = key
    assert best is not None
    return {
        "threshold": float(best[2]),
        "cohen_kappa": rounded(best[0]),
        "agreement": rounded(100.0 * best[1], 1),
    }


def recommend_recall_threshold(
    cosines: Sequence[float], human: Sequence[bool], current: float, coverage: float = RECALL_MATCH_COVERAGE
) -> dict[str, Any] | None:
    """The highest cosine threshold that still keeps ``coverage`` of the human-confirmed matches.

    The sample only holds pairs above the current recall threshold, so the labels can support raising
    it (saving validator calls on pairs people rarely accept) but never lowering it.
    """
    c = np.asarray(cosines, dtype=float)
    h = np.asarray(human, dtype=bool)
    if not h.any():
        return None
    matched = np.sort(c[h])
    # keep at least ceil(coverage * m) matches: threshold = the cosine of the match at that rank from the top
    keep = int(np.ceil(coverage * matched.size))
    t = float(max(current, matched[matched.size - keep]))
    return {
        "threshold": t,
        "coverage": coverage,
        "matches_kept": int((c[h] >= t).sum()),
        "matches": int(h.sum()),
        "match_rate_above": float(h[c >= t].mean()) if (c >= t).any() else None,
        "current": current,
    }


def _group(frame: pl.DataFrame, by: str) -> dict[str, Any]:
    out = {}
    for key in sorted(frame[by].unique().to_list()):
        part = frame.filter(pl.col(by) == key)
        out[key] = agreement(part["human_match"].to_list(), part["kept"].to_list())
    return out


def build_report(
    sample: pl.DataFrame,
    labels: dict[str, dict[str, str]],
    decisions: pl.DataFrame | None,
    recall_threshold: float | None,
    population: dict[str, int] | None = None,
) -> dict[str, Any]:
    """The report for a sample and its labels (last label per item).

    ``population``: pairs per stratum among all validated pairs (``sample.candidates_frame``), for the
    re-weighted agreement.
    """
    ids = set(sample["item_id"].to_list())
    label_frame = pl.DataFrame(
        {"item_id": list(labels), "label": [r["label"] for r in labels.values()]},
        schema={"item_id": pl.String, "label": pl.String},
    )
    joined = sample.join(label_frame, on="item_id", how="left")
    if decisions is not None:
        joined = joined.join(
            decisions.select("query_id", "tool_id", "cosine"), on=["query_id", "tool_id"], how="left"
        )
    decided = joined.filter(pl.col("label").is_in(["match", "no_match"])).with_columns(
        (pl.col("label") == "match").alias("human_match"),
        pl.col("stratum").str.split("|").list.get(0).alias("platform_"),
    )
    report: dict[str, Any] = {
        "items": sample.height,
        "labeled": int(joined["label"].is_not_null().sum()),
        "unlabeled": int(joined["label"].is_null().sum()),
        "unsure": int((joined["label"] == "unsure").sum()),
        "labels_for_unknown_items": len(set(labels) - ids),
        "validator_positive": "kept (validator score >= its threshold)",
        "overall": agreement(decided["human_match"].to_list(), decided["kept"].to_list()),
        "per_stratum": _group(decided, "stratum") if decided.height else {},
        "per_platform": _group(decided, "platform_") if decided.height else {},
        "human_match_rate": rounded(float(decided["human_match"].mean())) if decided.height else None,
        "population_weighted": population_weighted(decided, population) if population else None,
    }
    report["recommended"] = _recommendations(decided, recall_threshold, decisions is not None)
    return report


def run(out: Path, labels: Path | None = None) -> dict[str, Any]:
    """Write ``review/report.json`` from the sample and a labels file (default ``review/labels.jsonl``).

    Raises:
        FileNotFoundError: no sample, or an explicit labels file that does not exist.
        ValueError: the labels file has a bad line, or no label matches a sample item.
    """
    art = ArtifactDir(Path(out))
    sample = pl.read_parquet(art.require(art.review_sample, "review sample"))
    path = Path(labels) if labels else art.review_labels
    if labels and not path.exists():
        raise FileNotFoundError(f"labels file {path} does not exist")
    label_map = read_labels(path)
    known = set(sample["item_id"].to_list())
    if label_map and not set(label_map) & known:
        raise ValueError(f"{path}: none of its {len(label_map)} item ids is in {art.review_sample}")
    decisions = pl.read_parquet(art.real_decisions) if art.real_decisions.exists() else None
    population = None
    if decisions is not None and art.tools.exists():
        from validators.review.sample import candidates_frame

        population = dict(
            candidates_frame(decisions, pl.read_parquet(art.tools)).group_by("stratum").len().iter_rows()
        )
    recall_threshold = None
    if art.real_stats.exists():
        import json

        recall_threshold = json.loads(art.real_stats.read_text()).get("recall", {}).get("threshold")
    report = build_report(sample, label_map, decisions, recall_threshold, population)
    report["labels_file"] = str(path)
    write_json(art.review_report, report)
    return report
