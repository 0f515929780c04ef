"""Fusion: the three scales mapped to [0, 1] and the weights validated."""

from __future__ import annotations

import numpy as np
import pytest

from rated.fusion import coefficients, effective_weights, fuse, fuse_unchecked, semantic_unit


def test_semantic_unit_maps_cosine_affinely() -> None:
    np.testing.assert_allclose(semantic_unit(np.array([-1.0, 0.0, 1.0])), [0.0, 0.5, 1.0])


def test_fuse_by_hand_is_the_papers_raw_cosine() -> None:
    out = fuse([0.6], [0.3], [0.9], weights=(0.75, 0.15, 0.10))
    assert out[0] == pytest.approx(0.75 * 0.6 + 0.15 * 0.3 + 0.10 * 0.9)


def test_unit_option_rescales_the_cosine_and_reports_its_effective_weights() -> None:
    out = fuse([0.6], [0.3], [0.9], weights=(0.75, 0.15, 0.10), semantic="unit")
    assert out[0] == pytest.approx(0.75 * 0.8 + 0.15 * 0.3 + 0.10 * 0.9)
    np.testing.assert_allclose(effective_weights((0.75, 0.15, 0.10), "unit"), [0.6, 0.24, 0.16])
    np.testing.assert_allclose(effective_weights((0.75, 0.15, 0.10), "cosine"), [0.75, 0.15, 0.10])


def test_unit_option_can_change_the_ranking() -> None:
    # a semantic gap of 0.2 against a bandit gap of 0.9: w1 * 0.2 = 0.15 > w2 * 0.9 = 0.135 only unscaled
    sem, bandit, prior = [0.9, 0.7], [0.0, 0.9], [0.5, 0.5]
    assert np.argmax(fuse(sem, bandit, prior)) == 0
    assert np.argmax(fuse(sem, bandit, prior, semantic="unit")) == 1


def test_the_paper_exact_floor_clips_the_bandit_to_unit_range() -> None:
    out = fuse([0.0, 0.0], [1.7, -0.4], [0.5, 0.5], weights=(0.0, 1.0, 0.0), floor=0.0)
    np.testing.assert_allclose(out, [1.0, 0.0])


def test_by_default_the_bandit_is_clipped_above_only() -> None:
    """A tool that learned a negative reward keeps it: that is how an erroring tool loses a cosine lead."""
    out = fuse([0.0, 0.0], [1.7, -0.4], [0.5, 0.5], weights=(0.0, 1.0, 0.0))
    np.testing.assert_allclose(out, [1.0, -0.4])
    # a cosine lead of 0.3 survives any bandit score under the paper's clip, not a score of -1.5 here
    sem, bandit, prior = [0.9, 0.6], [-1.5, 1.0], [0.5, 0.5]
    assert np.argmax(fuse(sem, bandit, prior, floor=0.0)) == 0
    assert np.argmax(fuse(sem, bandit, prior)) == 1


def test_unit_output_stays_in_unit_range_and_cosine_in_its_bounds() -> None:
    rng = np.random.default_rng(0)
    args = (rng.uniform(-1, 1, 100), rng.normal(0.5, 1, 100), rng.random(100))
    out = fuse(*args, semantic="unit", floor=0.0)
    assert out.min() >= 0.0 and out.max() <= 1.0
    raw = fuse(*args, floor=0.0)
    assert raw.min() >= -0.75 and raw.max() <= 1.0


def test_hot_path_matches() -> None:
    rng = np.random.default_rng(1)
    sem, bandit, prior = rng.uniform(-1, 1, 10), rng.normal(0.3, 0.8, 10), rng.random(10)
    w = (0.5, 0.3, 0.2)
    np.testing.assert_allclose(fuse_unchecked(sem, bandit, prior, w), fuse(sem, bandit, prior, w))
    unit = coefficients(w, "unit")
    np.testing.assert_allclose(fuse_unchecked(sem, bandit, prior, unit), fuse(sem, bandit, prior, w, "unit"))
    floored = coefficients(w, "cosine", 0.0)
    np.testing.assert_allclose(
        fuse_unchecked(sem, bandit, prior, floored), fuse(sem, bandit, prior, w, floor=0.0)
    )
    assert (fuse(sem, bandit, prior, w) < fuse(sem, bandit, prior, w, floor=0.0)).any()  # some scores < 0


@pytest.mark.parametrize(
    "weights", [(0.5, 0.5, 0.5), (1.2, -0.1, -0.1), (0.5, 0.5), (float("nan"), 0.5, 0.5)]
)
def test_invalid_weights_are_refused(weights: tuple) -> None:
    with pytest.raises(ValueError):
        fuse([0.0], [0.0], [0.0], weights=weights)


def test_shape_mismatch_is_refused() -> None:
    with pytest.raises(ValueError, match="shapes"):
        fuse([0.0, 0.1], [0.0], [0.0])
