"""AUC, its bootstrap interval, precision/recall and the calibrated threshold on sets with known answers."""

from __future__ import annotations

import pytest

from validators.calibration import (
    auc_report,
    bootstrap_auc,
    calibrate_threshold,
    precision_recall,
    roc_auc,
    threshold_interval,
)


def test_roc_auc_known_values() -> None:
    # positives 0.9, 0.4 vs negatives 0.5, 0.1: 3 of 4 orderings right
    assert roc_auc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1]) == 0.75
    assert roc_auc([1, 0], [0.5, 0.5]) == 0.5  # a tie counts one half
    assert roc_auc([0, 1, 1], [0.2, 0.3, 0.9]) == 1.0
    with pytest.raises(ValueError, match="positive and one negative"):
        roc_auc([1, 1], [0.2, 0.3])


def test_calibration_finds_the_lowest_threshold_with_target_precision() -> None:
    # sorted by score: 0.95+ 0.9+ 0.85+ 0.8- 0.7+ 0.6+ 0.5- 0.4- 0.3+ 0.2-
    scores = [0.95, 0.9, 0.85, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2]
    labels = [1, 1, 1, 0, 1, 1, 0, 0, 1, 0]
    # precision at t: 0.6 -> 5/6 = 0.833; 0.7 -> 4/5 = 0.8; 0.85 -> 3/3 = 1.0; so 0.85 is the lowest >= 0.9
    got = calibrate_threshold(labels, scores, min_precision=0.9)
    assert got["threshold"] == 0.85 and got["reached"] and got["precision"] == 1.0
    assert got["recall"] == pytest.approx(3 / 6)
    # at 0.8 the lowest is 0.6 (5/6 = 0.833 >= 0.8), not the higher 0.7
    assert calibrate_threshold(labels, scores, min_precision=0.8)["threshold"] == 0.6
    # unreachable: the best precision is reported, flagged
    worse = calibrate_threshold([0, 1, 0, 1], [0.9, 0.8, 0.7, 0.6], min_precision=0.9)
    assert not worse["reached"] and worse["precision"] == pytest.approx(0.5)


def test_precision_recall_counts() -> None:
    pr = precision_recall([1, 0, 1, 0], [0.9, 0.8, 0.3, 0.1], 0.5)
    assert (pr["tp"], pr["fp"], pr["fn"], pr["tn"]) == (1, 1, 1, 1)
    assert pr["precision"] == 0.5 and pr["recall"] == 0.5
    assert precision_recall([1, 0], [0.1, 0.2], 0.9)["precision"] is None


def test_bootstrap_interval_covers_and_is_seeded() -> None:
    labels = [1] * 30 + [0] * 30
    scores = [0.5 + 0.01 * i for i in range(30)] + [0.3 + 0.01 * i for i in range(30)]
    auc = roc_auc(labels, scores)
    lo, hi = bootstrap_auc(labels, scores, n_boot=300, seed=1)
    assert lo <= auc <= hi and 0 < hi - lo < 0.3
    assert bootstrap_auc(labels, scores, n_boot=300, seed=1) == (lo, hi)
    assert auc_report([1, 1, 0], [0.9, 0.8, 0.1], n_boot=50)["auc"] == 1.0


def test_threshold_interval_collapses_when_the_classes_are_apart() -> None:
    # every positive scores 0.8, every negative 0.2: any resample calibrates to 0.8
    got = threshold_interval([1] * 10 + [0] * 20, [0.8] * 10 + [0.2] * 20, n_boot=200)
    assert (got["low"], got["median"], got["high"]) == (0.8, 0.8, 0.8)
    assert got["reached_share"] == 1.0 and got["resamples"] == 200


def test_threshold_interval_spans_the_jump_a_few_negatives_cause() -> None:
    # 20 positives (10 at 0.9, 10 at 0.6) and 21 negatives, two of them at 0.7, the rest at 0.1.
    # Keeping >= 0.6 has precision 20 / (20 + k) for the k high negatives drawn: >= 0.9 while k <= 2
    # (threshold 0.6, the full sample's answer) and below it for k >= 3 (P about 0.3: threshold 0.9).
    labels = [1] * 20 + [0] * 21
    scores = [0.9] * 10 + [0.6] * 10 + [0.7] * 2 + [0.1] * 19
    assert calibrate_threshold(labels, scores)["threshold"] == 0.6
    got = threshold_interval(labels, scores, n_boot=400, seed=1)
    assert got["low"] == 0.6 and got["median"] == 0.6 and got["high"] == 0.9
    with pytest.raises(ValueError, match="positive"):
        threshold_interval([0, 0], [0.1, 0.2])
