"""The stratified, seeded sample of validated Real pairs that a person labels (``review/sample.parquet``).

Only pairs that reached the validator are sampled (those dropped by recall were never judged). Strata
are platform x validator decision x score band, so rare strata (kept pairs of a small platform,
confident rejections) are seen at all; every non-empty stratum gets at least one item when ``n``
allows, the rest is allocated in proportion to stratum size. The same decisions and seed always give
the same sample.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir, fingerprint, write_parquet
from ecoagent.config import Profile

STAGE = "review-sample"
SCORE_BANDS: tuple[float, ...] = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)

SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "item_id": pl.String(),
    "query_id": pl.String(),
    "query": pl.String(),
    "tool_id": pl.String(),
    "tool_name": pl.String(),
    "tool_description": pl.String(),
    "platform": pl.String(),
    "validator_score": pl.Float64(),
    "kept": pl.Boolean(),
    "stratum": pl.String(),
}


def score_band(score: float) -> str:
    """The band label (``0.8-1.0``) of a validator score; 1.0 falls in the top band."""
    for lo, hi in zip(SCORE_BANDS[:-1], SCORE_BANDS[1:], strict=True):
        if score < hi or hi == SCORE_BANDS[-1]:
            return f"{lo:.1f}-{hi:.1f}"
    raise AssertionError("unreachable")


def item_id(query_id: str, tool_id: str) -> str:
    """A stable id of a (query, tool) pair, the key labels are stored under."""
    return "r-" + hashlib.sha1(f"{query_id}\0{tool_id}".encode()).hexdigest()[:12]


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """Items per stratum: at least one per non-empty stratum (when n allows), then by size.

    Units go one at a time to the stratum furthest below its proportional target that still has
    room, ties broken by name, so the result is deterministic and sums to ``min(n, total)``.
    """
    if n < 0:
        raise ValueError("n must be >= 0")
    keys = sorted(k for k, v in sizes.items() if v > 0)
    total = sum(sizes[k] for k in keys)
    if n >= total:
        return {k: sizes[k] for k in keys}
    alloc = {k: 0 for k in keys}
    if n >= len(keys):
        alloc = {k: 1 for k in keys}
    target = {k: n * sizes[k] / total for k in keys}
    for _ in range(n - sum(alloc.values())):
        open_ = [k for k in keys if alloc[k] < sizes[k]]
        best = max(open_, key=lambda k: (target[k] - alloc[k], sizes[k], [-ord(c) for c in k]))
        alloc[best] += 1
    return {k: v for k, v in alloc.items() if v}


def stratified_sample(candidates: pl.DataFrame, n: int, seed: int) -> pl.DataFrame:
    """``n`` rows of ``candidates`` (needs ``stratum``, ``query_id``, ``tool_id``), in a seeded order."""
    rng = np.random.default_rng(seed)
    sizes = dict(candidates.group_by("stratum").len().iter_rows())
    alloc = allocate(sizes, n)
    parts = []
    for stratum in sorted(alloc):
        rows = candidates.filter(pl.col("stratum") == stratum).sort("query_id", "tool_id")
        pick = np.sort(rng.choice(rows.height, size=alloc[stratum], replace=False))
        parts.append(rows[pick.tolist()])
    sample = pl.concat(parts)
    # shuffle so the reviewer never sees one stratum in a block (the order could bias labels)
    return sample[rng.permutation(sample.height).tolist()]


def candidates_frame(decisions: pl.DataFrame, tools: pl.DataFrame) -> pl.DataFrame:
    """Validated pairs joined with their tool's name, description and platform, with the stratum."""
    validated = decisions.filter(pl.col("passed_recall") & pl.col("validator_score").is_not_null())
    if validated.height == 0:
        raise ValueError("real/decisions.parquet has no pair that reached the validator: nothing to sample")
    joined = validated.join(
        tools.select(
            "tool_id",
            pl.col("name").alias("tool_name"),
            pl.col("description").alias("tool_description"),
            "platform",
        ),
        on="tool_id",
        how="left",
    )
    missing = joined.filter(pl.col("tool_name").is_null())
    if missing.height:
        raise ValueError(f"decision for tool {missing['tool_id'][0]!r} names a tool not in tools.parquet")
    return joined.with_columns(
        pl.struct("query_id", "tool_id")
        .map_elements(lambda r: item_id(r["query_id"], r["tool_id"]), return_dtype=pl.String)
        .alias("item_id"),
        (
            pl.col("platform")
            + "|"
            + pl.when(pl.col("kept")).then(pl.lit("kept")).otherwise(pl.lit("dropped"))
            + "|"
            + pl.col("validator_score").map_elements(score_band, return_dtype=pl.String)
        ).alias("stratum"),
    )


def run(out: Path, profile: Profile, n: int = 200, seed: int | None = None) -> dict[str, Any]:
    """Write ``review/sample.parquet``: ``n`` stratified pairs from ``real/decisions.parquet``."""
    art = ArtifactDir(Path(out))
    decisions = pl.read_parquet(art.require(art.real_decisions, "real"))
    tools = pl.read_parquet(art.require(art.tools, "crawl"))
    seed = profile.seed if seed is None else seed
    candidates = candidates_frame(decisions, tools)
    sample = stratified_sample(candidates, n, seed).select(list(SAMPLE_SCHEMA))
    write_parquet(sample, art.review_sample)
    per_stratum = dict(sorted(sample.group_by("stratum").len().iter_rows()))
    stats = {
        "items": sample.height,
        "candidates": candidates.height,
        "seed": seed,
        "strata": len(per_stratum),
        "per_stratum": per_stratum,
        "kept": int(sample["kept"].sum()),
    }
    art.mark_done(STAGE, fingerprint({"n": n, "seed": seed, "decisions": candidates.height}), stats)
    return stats
