"""Score fusion: semantic similarity, bandit reliability and metadata prior in one weighted sum.

The paper's score is ``w1 * e_q . e_a + w2 * S_bandit + w3 * r`` with the raw cosine; that is the
default (``semantic="cosine"``). ``semantic="unit"`` maps the cosine to ``(1 + cos) / 2`` first, which
puts all three signals on [0, 1] but halves the semantic term's slope: its effective weights
(``effective_weights``) are then about 0.60 / 0.24 / 0.16 for the paper's 0.75 / 0.15 / 0.10.

The bandit score is clipped above at 1 (a tool's UCB can grow past any reward it saw, and must not
outweigh the cosine for tools that merely work) and below at ``floor``: ``None`` (no floor, the default)
lets a tool whose calls error, and so learn a negative reward, fall below any cosine lead; ``0.0`` is
the paper-exact clip to [0, 1], under which the bandit can move a tool by at most ``w2`` and so never
overturns a cosine lead above ``w2 / w1`` (docs/evaluation.md, "Why one failure did not move RATED").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

# the paper's (w_sem, w_bandit, w_prior)
DEFAULT_WEIGHTS: tuple[float, float, float] = (0.75, 0.15, 0.10)
SemanticScale = Literal["cosine", "unit"]
# (c, a, w2, w3, lo): S = c + a * cos + w2 * clip(ucb, lo, 1) + w3 * prior
Coefficients = tuple[float, float, float, float, float]


def validate_weights(weights: tuple[float, float, float]) -> tuple[float, float, float]:
    """Check fusion weights: three non-negative numbers that sum to 1 (to 1e-6).

    Raises:
        ValueError: the weights are not three, one is negative or not finite, or they do not sum to 1.
    """
    w = tuple(float(v) for v in weights)
    if len(w) != 3:
        raise ValueError(f"fusion needs three weights (semantic, bandit, prior), got {len(w)}")
    if any(not math.isfinite(v) or v < 0 for v in w):
        raise ValueError(f"fusion weights must be finite and >= 0, got {w}")
    if abs(sum(w) - 1.0) > 1e-6:
        raise ValueError(f"fusion weights must sum to 1, got {w} (sum {sum(w):.6g})")
    return w  # type: ignore[return-value]


def lower_clip(floor: float | None) -> float:
    """The bandit score's lower clip as the kernels take it: ``-inf`` for no floor."""
    return -math.inf if floor is None else float(floor)


def semantic_unit(cosine: np.ndarray) -> np.ndarray:
    """Cosine similarity in [-1, 1] mapped affinely to [0, 1]: ``(1 + cos) / 2`` (order is kept)."""
    return np.clip((1.0 + np.asarray(cosine, dtype=np.float64)) * 0.5, 0.0, 1.0)


def coefficients(
    weights: Sequence[float], semantic: SemanticScale = "cosine", floor: float | None = None
) -> Coefficients:
    """``(c, a, w2, w3, lo)`` with ``S = c + a * cos + w2 * clip(ucb, lo, 1) + w3 * prior``, the form the
    compiled kernel evaluates: ``(0, w1, w2, w3, lo)`` for the paper's cosine, ``(w1/2, w1/2, w2, w3, lo)``
    for unit; ``lo = lower_clip(floor)`` (0 for the paper's clip to [0, 1])."""
    w1, w2, w3 = validate_weights(tuple(weights))  # type: ignore[arg-type]
    lo = lower_clip(floor)
    if semantic == "cosine":
        return 0.0, w1, w2, w3, lo
    if semantic == "unit":
        return 0.5 * w1, 0.5 * w1, w2, w3, lo
    raise ValueError(f"semantic must be 'cosine' or 'unit', got {semantic!r}")


def as_coefficients(weights: Sequence[float]) -> Coefficients:
    """A 5-tuple from ``coefficients`` as is, or a 3-tuple of weights read as ``fuse`` reads them (raw
    cosine, no floor)."""
    w = tuple(float(v) for v in weights)
    if len(w) == 5:
        return w  # type: ignore[return-value]
    if len(w) != 3:
        raise ValueError(f"fusion needs 3 weights or 5 coefficients, got {len(w)} values")
    return coefficients(w, "cosine")


def effective_weights(
    weights: Sequence[float], semantic: SemanticScale = "cosine"
) -> tuple[float, float, float]:
    """The weights per unit of each raw signal's slope, normalized to sum 1: what the ranking really uses.

    Example:
        >>> [round(w, 2) for w in effective_weights((0.75, 0.15, 0.10), "unit")]
        [0.6, 0.24, 0.16]
    """
    _, a, w2, w3, _ = coefficients(weights, semantic)
    total = a + w2 + w3
    return (a / total, w2 / total, w3 / total) if total else (0.0, 0.0, 0.0)


def fuse(
    sem: np.ndarray | Sequence[float],
    bandit: np.ndarray | Sequence[float],
    prior: np.ndarray | Sequence[float],
    weights: tuple[float, float, float] = DEFAULT_WEIGHTS,
    semantic: SemanticScale = "cosine",
    floor: float | None = None,
) -> np.ndarray:
    """``S_final = w1 * cos + w2 * clip(bandit, floor, 1) + w3 * clip(prior, 0, 1)`` (the paper's fusion).

    Args:
        sem: cosine similarities of the candidates (dot products of L2-normalized embeddings).
        bandit: the bandit's UCB scores of the candidates.
        prior: the candidates' metadata priors.
        weights: ``(w1, w2, w3)``, non-negative and summing to 1 (paper: 0.75, 0.15, 0.10).
        semantic: ``cosine`` (paper) or ``unit`` (``(1 + cos) / 2`` in place of ``cos``).
        floor: the bandit score's lower clip: ``None`` none (``RATEDConfig``'s default), ``0.0`` the
            paper-exact [0, 1].

    Returns:
        The fused scores, one per candidate.

    Example:
        >>> fuse([1.0, 0.0], [0.2, 1.4], [0.5, 0.5]).round(3).tolist()
        [0.83, 0.2]
    """
    c, a, w2, w3, lo = coefficients(weights, semantic, floor)
    sem_raw = np.clip(np.asarray(sem, dtype=np.float64), -1.0, 1.0)
    bandit_u = np.clip(np.asarray(bandit, dtype=np.float64), lo, 1.0)
    prior_u = np.clip(np.asarray(prior, dtype=np.float64), 0.0, 1.0)
    if not sem_raw.shape == bandit_u.shape == prior_u.shape:
        raise ValueError(f"score shapes differ: {sem_raw.shape}, {bandit_u.shape}, {prior_u.shape}")
    return c + a * sem_raw + w2 * bandit_u + w3 * prior_u


def fuse_unchecked(
    sem: np.ndarray, bandit: np.ndarray, prior: np.ndarray, coef: Sequence[float]
) -> np.ndarray:
    """``fuse`` for the hot path: ``coef`` from ``coefficients`` (or paper weights), priors clipped already."""
    c, a, w2, w3, lo = as_coefficients(coef)
    out = np.clip(bandit, lo, 1.0)
    out *= w2
    out += c + a * np.asarray(sem, dtype=np.float64)  # sem is a dot of unit vectors: |sem| <= 1
    out += w3 * prior  # priors are clipped to [0, 1] when the retriever is built
    return out
