"""Score fusion: semantic similarity, bandit reliability and metadata prior on one [0, 1] scale.

The three signals live on different ranges (cosine in [-1, 1], a UCB score that can leave [0, 1],
a prior in [0, 1]); mapping each to [0, 1] first makes the weights mean what they say.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rated.config import DEFAULT_WEIGHTS, validate_weights


def semantic_unit(cosine: np.ndarray) -> np.ndarray:
    """Cosine similarity in [-1, 1] mapped affinely to [0, 1]: ``(1 + cos) / 2`` (order is kept)."""
    return np.clip((1.0 + np.asarray(cosine, dtype=np.float64)) * 0.5, 0.0, 1.0)


def fuse(
    sem: np.ndarray | Sequence[float],
    bandit: np.ndarray | Sequence[float],
    prior: np.ndarray | Sequence[float],
    weights: tuple[float, float, float] = DEFAULT_WEIGHTS,
) -> np.ndarray:
    """``S_final = w1 * (1 + sem) / 2 + w2 * clip(bandit, 0, 1) + w3 * clip(prior, 0, 1)``.

    Args:
        sem: cosine similarities of the candidates (dot products of L2-normalized embeddings).
        bandit: the bandit's UCB scores of the candidates.
        prior: the candidates' metadata priors.
        weights: ``(w1, w2, w3)``, non-negative and summing to 1 (paper: 0.75, 0.15, 0.10).

    Returns:
        The fused scores in [0, 1], one per candidate.

    Example:
        >>> fuse([1.0, 0.0], [0.2, 1.4], [0.5, 0.5]).round(3).tolist()
        [0.83, 0.575]
    """
    w1, w2, w3 = validate_weights(weights)
    sem_u = semantic_unit(np.asarray(sem))
    bandit_u = np.clip(np.asarray(bandit, dtype=np.float64), 0.0, 1.0)
    prior_u = np.clip(np.asarray(prior, dtype=np.float64), 0.0, 1.0)
    if not sem_u.shape == bandit_u.shape == prior_u.shape:
        raise ValueError(f"score shapes differ: {sem_u.shape}, {bandit_u.shape}, {prior_u.shape}")
    return w1 * sem_u + w2 * bandit_u + w3 * prior_u


def fuse_unchecked(
    sem: np.ndarray, bandit: np.ndarray, prior: np.ndarray, weights: tuple[float, float, float]
) -> np.ndarray:
    """``fuse`` for the hot path: weights validated, priors clipped, equal shapes; same result for |sem| <= 1."""
    w1, w2, w3 = weights
    out = np.clip(bandit, 0.0, 1.0)
    out *= w2
    out += (0.5 * w1) * (1.0 + sem)  # sem is a dot of unit vectors: |sem| <= 1 up to rounding
    out += w3 * prior  # priors are clipped to [0, 1] when the retriever is built
    return out
