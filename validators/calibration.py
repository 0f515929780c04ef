"""The validator measured on labelled pairs: ROC AUC with bootstrap intervals, precision/recall at a
threshold, and the threshold calibrated from labels (never a constant picked by hand)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ecoagent.bootstrap import stratified_interval

MIN_PRECISION = 0.9  # the calibration target: the lowest threshold whose precision reaches it


def roc_auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """ROC AUC as the Mann-Whitney probability that a positive outranks a negative (ties count 1/2).

    Raises:
        ValueError: only one class present.
    """
    y = np.asarray(labels, dtype=int)
    s = np.asarray(scores, dtype=float)
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        raise ValueError("AUC needs at least one positive and one negative")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))


def bootstrap_auc(
    labels: Sequence[int], scores: Sequence[float], n_boot: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the AUC, resampling positives and negatives separately (so every
    replicate has both classes and the class sizes of the sample)."""
    y = np.asarray(labels, dtype=int)
    s = np.asarray(scores, dtype=float)
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        raise ValueError("AUC needs at least one positive and one negative")
    rng = np.random.default_rng(seed)
    stats = np.empty(n_boot)
    for b in range(n_boot):
        p = pos[rng.integers(0, pos.size, pos.size)]
        n = neg[rng.integers(0, neg.size, neg.size)]
        stats[b] = ((p[:, None] > n[None, :]).mean()) + 0.5 * ((p[:, None] == n[None, :]).mean())
    alpha = (1.0 - level) / 2
    return float(np.quantile(stats, alpha)), float(np.quantile(stats, 1 - alpha))


def precision_recall(labels: Sequence[int], scores: Sequence[float], threshold: float) -> dict[str, Any]:
    """Precision and recall of "keep when score >= threshold"; precision is None when nothing is kept."""
    y = np.asarray(labels, dtype=int).astype(bool)
    kept = np.asarray(scores, dtype=float) >= threshold
    tp, fp, fn = int((kept & y).sum()), int((kept & ~y).sum()), int((~kept & y).sum())
    return {
        "threshold": float(threshold),
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": int((~kept & ~y).sum()),
    }


def calibrate_threshold(
    labels: Sequence[int], scores: Sequence[float], min_precision: float = MIN_PRECISION
) -> dict[str, Any]:
    """The lowest threshold (one of the observed scores) whose precision is at least ``min_precision``.

    When no threshold reaches the target, the one with the highest precision (then the lower one) is
    returned with ``reached = False``, so a weak validator shows as such instead of failing the build.
    """
    s = np.asarray(scores, dtype=float)
    if s.size == 0 or not (np.asarray(labels) == 1).any():
        raise ValueError("calibration needs at least one positive labelled pair")
    best: dict[str, Any] | None = None
    for t in np.unique(s):  # ascending: the first that reaches the target is the lowest
        pr = precision_recall(labels, scores, float(t))
        if pr["precision"] is not None and pr["precision"] >= min_precision:
            return {**pr, "min_precision": min_precision, "reached": True}
        if pr["precision"] is not None and (best is None or pr["precision"] > best["precision"]):
            best = pr
    assert best is not None  # the highest score keeps at least one pair
    return {**best, "min_precision": min_precision, "reached": False}


def threshold_interval(
    labels: Sequence[int],
    scores: Sequence[float],
    min_precision: float = MIN_PRECISION,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.9,
) -> dict[str, Any]:
    """How far the calibrated threshold moves when other dev pairs are drawn: ``calibrate_threshold`` on
    bootstrap resamples of the labelled pairs (positives and negatives resampled separately, keeping the
    sample's class sizes), as a percentile interval.

    A threshold set at a high precision rests on the few negatives that score highest, so the same
    validator on another draw of dev pairs can keep a very different number of pairs; this interval is
    what the size of the Real split depends on.
    """
    y = np.asarray(labels, dtype=int)
    s = np.asarray(scores, dtype=float)
    if not (y == 1).any():
        raise ValueError("calibration needs at least one positive labelled pair")
    reached: list[bool] = []

    def refit(idx: np.ndarray) -> float:
        fit = calibrate_threshold(y[idx].tolist(), s[idx].tolist(), min_precision)
        reached.append(bool(fit["reached"]))
        return float(fit["threshold"])

    low, high, found = stratified_interval(y == 1, refit, n_boot=n_boot, seed=seed, level=level)
    return {
        "level": level,
        "low": low,
        "median": float(np.median(found)),
        "high": high,
        "resamples": n_boot,
        "reached_share": sum(reached) / n_boot,
    }


def auc_report(labels: Sequence[int], scores: Sequence[float], n_boot: int = 1000, seed: int = 0) -> dict:
    """AUC with its 95% bootstrap interval and the class sizes it rests on."""
    lo, hi = bootstrap_auc(labels, scores, n_boot=n_boot, seed=seed)
    y = np.asarray(labels, dtype=int)
    return {
        "auc": roc_auc(labels, scores),
        "ci95": [lo, hi],
        "positives": int((y == 1).sum()),
        "negatives": int((y == 0).sum()),
    }
