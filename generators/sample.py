"""The seeded, platform-stratified sample of tools that Syn generates for on a small machine.

Platforms are very unequal (n8n has thousands of operations, CrewAI about a hundred tools), so the
sample gives every platform an equal share, capped by what it has, and hands the rest to the others;
the tools inside a platform are drawn with the run's seed. Samples nest: the first ``n`` tools of a
platform's seeded order are the sample's, so a larger ``--max-tools`` keeps every tool of a smaller one
and a grown run resumes from the smaller run's checkpoint instead of starting over.
"""

from __future__ import annotations

import hashlib

import numpy as np
import polars as pl


def stratified_sample(tools: pl.DataFrame, max_tools: int | None, seed: int) -> pl.DataFrame:
    """At most ``max_tools`` rows, balanced over ``platform``; all rows when ``max_tools`` is None.

    The result is sorted by ``tool_id`` so it does not depend on the table's row order.
    """
    if max_tools is not None and max_tools <= 0:
        raise ValueError("max_tools must be > 0")
    if max_tools is None or max_tools >= tools.height:
        return tools.sort("tool_id")
    counts = dict(tools.group_by("platform").len().sort("platform").iter_rows())
    quota = dict.fromkeys(counts, 0)
    left = max_tools
    while left > 0:
        open_platforms = [p for p in counts if quota[p] < counts[p]]
        share = max(1, left // len(open_platforms))
        for p in open_platforms:
            take = min(share, counts[p] - quota[p], left)
            quota[p] += take
            left -= take
            if left == 0:
                break
    parts = []
    for platform, n in quota.items():
        group = tools.filter(pl.col("platform") == platform).sort("tool_id")
        parts.append(group[np.sort(platform_order(platform, group.height, seed)[:n]).tolist()])
    return pl.concat(parts).sort("tool_id")


def platform_order(platform: str, n: int, seed: int) -> np.ndarray:
    """A seeded permutation of a platform's ``n`` tools (sorted by id); its own generator per platform, so
    one platform's quota never shifts another's draw."""
    key = int.from_bytes(hashlib.sha256(platform.encode()).digest()[:8], "big")
    return np.random.default_rng([seed, key]).permutation(n)
