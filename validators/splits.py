"""Train / val / test splits of the kept Real pairs, by query, so no query appears in two splits."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

SPLITS: tuple[str, ...] = ("train", "val", "test")


def split_queries(
    query_ids: Sequence[str], seed: int, fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)
) -> dict[str, str]:
    """Assign every distinct query id to one split.

    The ids are sorted before a seeded shuffle, so the assignment depends only on the set of ids and the
    seed. Cut points are rounded, so for tiny sets a split can be empty.

    Raises:
        ValueError: fractions that are negative or do not sum to 1.
    """
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"split fractions {fractions} must be >= 0 and sum to 1")
    ids = sorted(set(query_ids))
    order = np.random.default_rng(seed).permutation(len(ids))
    n_train = round(fractions[0] * len(ids))
    n_val = round(fractions[1] * len(ids))
    out = {}
    for rank, i in enumerate(order):
        out[ids[i]] = "train" if rank < n_train else "val" if rank < n_train + n_val else "test"
    return out
