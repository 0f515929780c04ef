"""Train / val / test splits of the Real queries: by query (no query in two splits), stratified by source
group and tool, and a tool-disjoint split by service (no operation of a test service in train)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SPLITS: tuple[str, ...] = ("train", "val", "test")


_GOLDEN = (5**0.5 - 1) / 2  # the low-discrepancy step: any run of consecutive ranks is split in proportion


def _cut(u: float, fractions: tuple[float, float, float]) -> str:
    return "train" if u < fractions[0] else "val" if u < fractions[0] + fractions[1] else "test"


def _check(fractions: tuple[float, float, float]) -> None:
    if any(f < 0 for f in fractions) or abs(sum(fractions) - 1.0) > 1e-9:
        raise ValueError(f"split fractions {fractions} must be >= 0 and sum to 1")


def split_stratified(
    strata: dict[str, tuple[str, ...]], seed: int, fractions: tuple[float, float, float]
) -> dict[str, str]:
    """Assign every query id to one split, in proportion within each stratum.

    ``strata[query_id]`` is its stratum key, most significant first (e.g. ``(group, rarest tool)``).
    Queries are ordered by key, then by a seeded shuffle, and rank ``k`` goes to the split that
    ``frac(k·φ + offset)`` falls in: consecutive ranks spread evenly over the fractions, so every source
    group, and every tool with a few queries, has its share in each split (systematic sampling), and the
    assignment depends only on the ids, their keys and the seed.
    """
    _check(fractions)
    rng = np.random.default_rng(seed)
    ids = sorted(strata)
    tiebreak = dict(zip(ids, rng.permutation(len(ids)).tolist(), strict=True))
    offset = float(rng.random())
    ordered = sorted(ids, key=lambda q: (strata[q], tiebreak[q]))
    return {q: _cut((k * _GOLDEN + offset) % 1.0, fractions) for k, q in enumerate(ordered)}


def tool_disjoint_splits(
    labels: dict[str, tuple[str, ...]],
    seed: int,
    fractions: tuple[float, float, float],
    unit: Callable[[str], str] | None = None,
) -> tuple[dict[str, str | None], dict[str, str]]:
    """A tool-disjoint split: every tool unit (``unit(tool_id)``, default the tool) goes to one split, and
    a query to the split that holds all of its tools, or to none (``None``) when they straddle two.

    Returns ``(query -> split or None, unit -> split)``. Units are ordered by a seeded shuffle and cut by the
    fractions of the units, so the share of queries per split follows from the labels.
    """
    _check(fractions)
    unit = unit or (lambda t: t)
    units = sorted({unit(t) for tools in labels.values() for t in tools})
    order = np.random.default_rng(seed).permutation(len(units))
    n_train, n_val = round(fractions[0] * len(units)), round(fractions[1] * len(units))
    of_unit = {}
    for rank, i in enumerate(order):
        of_unit[units[i]] = "train" if rank < n_train else "val" if rank < n_train + n_val else "test"
    out: dict[str, str | None] = {}
    for q, tools in labels.items():
        seen = {of_unit[unit(t)] for t in tools}
        out[q] = seen.pop() if len(seen) == 1 else None
    return out, of_unit


def service(tool_id: str) -> str:
    """The service a tool belongs to (``n8n:gmail:message_send`` -> ``n8n:gmail``): the unit of the Real
    tool-disjoint split, so no operation of a test service is seen in training."""
    return ":".join(tool_id.split(":")[:2])
