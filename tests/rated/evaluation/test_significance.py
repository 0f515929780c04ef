"""Paired tests: no difference gives p = 1, a consistent difference a small p, and seeds reproduce."""

from __future__ import annotations

import numpy as np

from rated.evaluation.significance import compare, paired_bootstrap, paired_randomization_p


def test_identical_scores_are_not_significant() -> None:
    a = np.array([1.0, 0.5, 0.0, 0.25])
    assert paired_randomization_p(a, a, 200) == 1.0
    assert paired_bootstrap(a, a, 200)[0] == 1.0


def test_consistent_difference_is_significant() -> None:
    rng = np.random.default_rng(0)
    b = rng.random(200)
    a = b + 0.2
    assert paired_randomization_p(a, b, 2000) < 0.01
    p, lo, hi = paired_bootstrap(a, b, 2000)
    assert p < 0.01 and lo > 0.19 and hi < 0.21


def test_same_seed_same_numbers() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random(50), rng.random(50)
    assert compare(a, b, 500, seed=3) == compare(a, b, 500, seed=3)


def test_small_n_is_enumerated_exactly() -> None:
    # 5 queries all better by 1: only the all-plus and all-minus assignments reach |mean| = 1 -> 2/32
    a, b = np.ones(5), np.zeros(5)
    assert paired_randomization_p(a, b, n_resamples=10) == 2 / 32
    assert compare(a, b, 10).exact and not compare(np.ones(21), np.zeros(21), 10).exact
    # one query of five worse: |mean| >= 0.6 needs at most one minus among the +1 ... (6 of 32 each side)
    d = np.array([1.0, 1.0, 1.0, 1.0, -1.0])
    assert paired_randomization_p(d, np.zeros(5)) == 12 / 32


def test_fine_tuned_vs_backbone_on_known_answers() -> None:
    """A pool where the fine-tuned encoder ranks every true tool first and the backbone second: the mean
    paired difference is exactly 0.5 and every bootstrap resample says so; an equal pair gives 0 and a
    split pool (+0.5 on half, -0.5 on the other half) an interval around 0."""
    from rated.evaluation.offline import score_rankings
    from rated.evaluation.pipeline import BACKBONE, FINE_TUNED, DatasetInputs, fine_tuned_vs_backbone
    from rated.evaluation.simulator import QueryPool

    n = 40
    pool = QueryPool(
        [f"q{i}" for i in range(n)], [frozenset({i % 4}) for i in range(n)], [str(i) for i in range(n)]
    )
    inputs = {"syn_tool": DatasetInputs("syn_tool", pool, pool, "train", 0)}
    first = [np.array([i % 4] + [j for j in range(4) if j != i % 4]) for i in range(n)]
    second = [
        np.array([(i + 1) % 4, i % 4] + [j for j in range(4) if j not in (i % 4, (i + 1) % 4)])
        for i in range(n)
    ]
    rows = [
        score_rankings(FINE_TUNED, "syn_tool", first, pool, "rated"),
        score_rankings(BACKBONE, "syn_tool", second, pool, "rated"),
    ]
    t = fine_tuned_vs_backbone(rows, inputs, 2000, 0)["syn_tool"]
    assert (t["mrr_fine_tuned"], t["mrr_backbone"], t["mean_diff"]) == (1.0, 0.5, 0.5)
    assert t["ci_low"] == t["ci_high"] == 0.5 and t["ci_excludes_zero"]
    assert (t["queries"], t["true_tools"], t["n_resamples"], t["seed"]) == (n, 4, 2000, 0)
    same = fine_tuned_vs_backbone(
        [rows[0], score_rankings(BACKBONE, "syn_tool", first, pool, "rated")], inputs, 2000, 0
    )
    assert same["syn_tool"]["mean_diff"] == 0.0 and not same["syn_tool"]["ci_excludes_zero"]
    mixed = [first[i] if i % 2 else second[i] for i in range(n)]
    flip = [second[i] if i % 2 else first[i] for i in range(n)]
    split = fine_tuned_vs_backbone(
        [
            score_rankings(FINE_TUNED, "syn_tool", mixed, pool, "rated"),
            score_rankings(BACKBONE, "syn_tool", flip, pool, "rated"),
        ],
        inputs,
        2000,
        0,
    )
    s = split["syn_tool"]
    assert s["mean_diff"] == 0.0 and s["ci_low"] < 0 < s["ci_high"] and not s["ci_excludes_zero"]
    assert fine_tuned_vs_backbone(rows, inputs, 2000, 0) == fine_tuned_vs_backbone(rows, inputs, 2000, 0)
