"""EcoAgent-Real: ToolBench queries -> recall against the tool table -> LLM validator -> splits.

``run`` is the stage's one entry point (CLI and Prefect flow). Every recalled pair is a row of
``real/decisions.parquet`` with its cosine, validator score and decision; kept pairs go to
``real/pairs.parquet`` with a split; ``real/stats.json`` holds the counts and the measured
distributions the thresholds are chosen from. Validator scores are checkpointed per batch
(``real/validator_checkpoint.jsonl``) and tool embeddings cached (``real/cache/``), so a killed or
re-configured run redoes only what changed.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json, write_parquet
from ecoagent.config import Profile, default_mirror
from ecoagent.schemas import tool_documents, validate_tools
from validators.config import RealConfig
from validators.prompt import PROMPT_VERSIONS
from validators.recall import THRESHOLD_GRID, distribution, embed, threshold_grid, top_k
from validators.sanity import labeled_pairs, roc_auc
from validators.splits import split_queries
from validators.toolbench import ParsedToolBench, load_toolbench, toolbench_root
from validators.validator import PairText, Validator

log = logging.getLogger(__name__)

STAGE = "real"
VALIDATOR_GRID: tuple[float, ...] = (0.3, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)

DECISION_SCHEMA: dict[str, pl.DataType] = {
    "query_id": pl.String(),
    "query": pl.String(),
    "group": pl.String(),
    "tool_id": pl.String(),
    "rank": pl.Int32(),
    "cosine": pl.Float64(),
    "passed_recall": pl.Boolean(),
    "validator_score": pl.Float64(),
    "kept": pl.Boolean(),
    "model": pl.String(),
    "prompt_version": pl.String(),
}
PAIR_SCHEMA: dict[str, pl.DataType] = {
    "query_id": pl.String(),
    "query": pl.String(),
    "group": pl.String(),
    "tool_id": pl.String(),
    "cosine": pl.Float64(),
    "validator_score": pl.Float64(),
    "split": pl.String(),
}


def load_tool_table(art: ArtifactDir) -> pl.DataFrame:
    """The crawled tool table, checked; an empty table is an error, not an empty benchmark."""
    tools = pl.read_parquet(art.require(art.tools, "crawl"))
    if tools.height == 0:
        raise ValueError(f"{art.tools} holds no tools: nothing to recall against")
    return validate_tools(tools)


def recall_frame(parsed: ParsedToolBench, tools: pl.DataFrame, cfg: RealConfig, cache: Path) -> pl.DataFrame:
    """Every (query, top-k tool) pair with rank, cosine and whether it passes the recall threshold."""
    queries = parsed.queries
    q_emb = embed(cfg.recall_encoder, [q.query for q in queries], cache=cache)
    t_emb = embed(cfg.recall_encoder, tool_documents(tools), cache=cache)
    idx, sims = top_k(q_emb, t_emb, cfg.top_k)
    tool_ids = tools["tool_id"].to_list()
    rows = []
    for qi, q in enumerate(queries):
        for rank, (ti, cos) in enumerate(zip(idx[qi], sims[qi], strict=True), start=1):
            rows.append(
                {
                    "query_id": q.query_id,
                    "query": q.query,
                    "group": q.group,
                    "tool_id": tool_ids[ti],
                    "rank": rank,
                    "cosine": float(cos),
                    "passed_recall": bool(cos >= cfg.recall_threshold),
                }
            )
    return pl.DataFrame(rows, schema={k: DECISION_SCHEMA[k] for k in rows[0]}, orient="row")


def _counts(frame: pl.DataFrame, by: str) -> dict[str, dict[str, int]]:
    """Pairs recalled / passing recall / kept per value of ``by``."""
    agg = (
        frame.group_by(by)
        .agg(
            pl.len().alias("recalled"),
            pl.col("passed_recall").sum().alias("after_recall"),
            pl.col("kept").sum().alias("after_validation"),
        )
        .sort(by)
    )
    return {r[by]: {k: int(v) for k, v in r.items() if k != by} for r in agg.iter_rows(named=True)}


def run(
    out: Path,
    profile: Profile,
    mirror: Path | None = None,
    recall_threshold: float | None = None,
    validator_threshold: float | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Build the Real set into ``out/real/``; returns the stats (also written to ``real/stats.json``).

    Args:
        out: the artifact folder; needs ``tools.parquet`` from the crawl.
        profile: models and seed.
        mirror: the catalog snapshot (default ``ecoagent.config.default_mirror()``).
        recall_threshold / validator_threshold: override the profile's thresholds.
        **options: other ``RealConfig`` fields (``top_k``, ``batch_size``, ``sanity_pairs``).
    """
    art = ArtifactDir(Path(out))
    cfg = RealConfig.for_profile(
        profile, recall_threshold=recall_threshold, validator_threshold=validator_threshold, **options
    )
    timings: dict[str, float] = {}
    started = time.perf_counter()
    cpu_started = time.process_time()  # CPU seconds: comparable across runs on a busy, shared machine

    tools = load_tool_table(art)
    parsed = load_toolbench(toolbench_root(Path(mirror) if mirror else default_mirror()))
    if not parsed.queries:
        raise ValueError("the ToolBench files hold no queries")
    config_fp = fingerprint(
        {
            "config": cfg.to_dict(),
            "prompt_version": PROMPT_VERSIONS[cfg.few_shot],
            "tools": fingerprint(tools.select("tool_id", "content_hash").sort("tool_id").rows()),
            "queries": fingerprint(sorted(q.query_id for q in parsed.queries)),
        }
    )
    if art.is_done(STAGE, config_fp) and art.real_pairs.exists() and art.real_stats.exists():
        log.info("real: already done with this config; nothing to do")
        return json.loads(art.real_stats.read_text())
    timings["parse_s"] = time.perf_counter() - started

    t0 = time.perf_counter()
    recalled = recall_frame(parsed, tools, cfg, art.real / "cache")
    timings["recall_s"] = time.perf_counter() - t0

    from ecoagent.llm import make_llm

    t0 = time.perf_counter()
    llm = make_llm(profile.models, batch_size=cfg.batch_size)
    timings["llm_load_s"] = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        validator = Validator(
            llm, art.real / "validator_checkpoint.jsonl", batch_size=cfg.batch_size, few_shot=cfg.few_shot
        )
        tool_rows = {
            r["tool_id"]: r for r in tools.select("tool_id", "name", "description").iter_rows(named=True)
        }
        todo = [
            PairText(
                r["query_id"],
                r["tool_id"],
                r["query"],
                tool_rows[r["tool_id"]]["name"],
                tool_rows[r["tool_id"]]["description"],
            )
            for r in recalled.filter(pl.col("passed_recall")).iter_rows(named=True)
        ]
        scores = validator.score(todo)
        timings["validator_s"] = time.perf_counter() - t0
        timings["validator_s_per_pair"] = timings["validator_s"] / max(len(todo), 1)

        t0 = time.perf_counter()
        sanity: dict[str, Any] = {"pairs_per_class": 0}
        if cfg.sanity_pairs:
            labeled = labeled_pairs(parsed.queries, cfg.sanity_pairs, cfg.seed)
            checker = Validator(
                llm, art.real / "sanity_checkpoint.jsonl", batch_size=cfg.batch_size, few_shot=cfg.few_shot
            )
            s_scores = checker.score([lp.pair for lp in labeled])
            labels = [lp.label for lp in labeled]
            values = [s_scores[lp.pair.key] for lp in labeled]
            cos = _sanity_cosines(cfg, labeled, art.real / "cache")
            sanity = {
                "pairs_per_class": len(labeled) // 2,
                "validator_auc": roc_auc(labels, values),
                "recall_encoder_auc": roc_auc(labels, cos),
                "mean_score_relevant": float(np.mean([v for v, y in zip(values, labels, strict=True) if y])),
                "mean_score_other": float(np.mean([v for v, y in zip(values, labels, strict=True) if not y])),
                "kept_relevant": int(
                    sum(v >= cfg.validator_threshold and y for v, y in zip(values, labels, strict=True))
                ),
                "kept_other": int(
                    sum(v >= cfg.validator_threshold and not y for v, y in zip(values, labels, strict=True))
                ),
            }
        timings["sanity_s"] = time.perf_counter() - t0
        model_info = llm.info()
    finally:
        llm.close()

    score_col = [
        scores.get((q, t)) if p else None
        for q, t, p in recalled.select("query_id", "tool_id", "passed_recall").iter_rows()
    ]
    decisions = (
        recalled.with_columns(
            pl.Series("validator_score", score_col, dtype=pl.Float64),
            pl.lit(validator.model).alias("model"),
            pl.lit(validator.prompt_version).alias("prompt_version"),
        )
        .with_columns(
            (
                pl.col("passed_recall")
                & (pl.col("validator_score").fill_null(-1.0) >= cfg.validator_threshold)
            ).alias("kept")
        )
        .select(list(DECISION_SCHEMA))
    )

    kept = decisions.filter(pl.col("kept")).unique(["query_id", "tool_id"], keep="first", maintain_order=True)
    splits = split_queries(kept["query_id"].to_list(), cfg.seed)
    pairs = kept.with_columns(
        pl.col("query_id").replace_strict(splits, default=None, return_dtype=pl.String).alias("split")
    ).select(list(PAIR_SCHEMA))

    write_parquet(decisions, art.real_decisions)
    write_parquet(pairs, art.real_pairs)

    platform = dict(zip(tools["tool_id"].to_list(), tools["platform"].to_list(), strict=True))
    with_platform = decisions.with_columns(
        pl.col("tool_id").replace_strict(platform, return_dtype=pl.String).alias("platform")
    )
    validated = decisions.filter(pl.col("passed_recall"))
    from ecoagent.models import encoder_provenance

    timings["total_s"] = time.perf_counter() - started
    timings["total_cpu_s"] = time.process_time() - cpu_started
    timings["load_average_1m"] = os.getloadavg()[0]
    stats: dict[str, Any] = {
        "config": cfg.to_dict(),
        "profile": profile.name,
        "queries": {
            "in_files": sum(f.get("queries", 0) for f in parsed.per_file.values()),
            "duplicates_removed": parsed.duplicates_removed,
            "unique": len(parsed.queries),
            "per_kind": dict(Counter(q.kind for q in parsed.queries)),
            "per_group": dict(sorted(Counter(q.group for q in parsed.queries).items())),
            "unlisted_in_query_ids": len(parsed.unlisted_ids),
            "files": parsed.per_file,
            "errors": {"count": len(parsed.errors), "lines": parsed.errors},
        },
        "tools": {
            "count": tools.height,
            "per_platform": dict(sorted(Counter(tools["platform"].to_list()).items())),
        },
        "pairs": {
            "recalled": decisions.height,
            "after_recall": validated.height,
            "after_validation": pairs.height,
            "queries_after_recall": validated["query_id"].n_unique(),
            "queries_after_validation": pairs["query_id"].n_unique(),
            "per_platform": _counts(with_platform, "platform"),
            "per_group": _counts(decisions, "group"),
            "per_split": {
                s: {
                    "pairs": int((pairs["split"] == s).sum()),
                    "queries": int(pairs.filter(pl.col("split") == s)["query_id"].n_unique()),
                }
                for s in ("train", "val", "test")
            },
        },
        "recall": {
            "encoder": encoder_provenance(cfg.recall_encoder),
            "top_k": cfg.top_k,
            "threshold": cfg.recall_threshold,
            "cosine_all": distribution(decisions["cosine"].to_numpy()),
            "cosine_top1": distribution(decisions.filter(pl.col("rank") == 1)["cosine"].to_numpy()),
            "threshold_grid": threshold_grid(
                decisions["cosine"].to_numpy(), decisions["query_id"].to_list(), THRESHOLD_GRID
            ),
        },
        "validator": {
            "model": model_info,
            "prompt_version": validator.prompt_version,
            "method": "yes_probability: P(yes)/(P(yes)+P(no)) of the next token",
            "threshold": cfg.validator_threshold,
            "scored": validated.height,
            "score": distribution(validated["validator_score"].to_numpy()),
            "threshold_grid": threshold_grid(
                validated["validator_score"].to_numpy(), validated["query_id"].to_list(), VALIDATOR_GRID
            ),
            "sanity_toolbench": sanity,
        },
        "timings": timings,
    }
    write_json(art.real_stats, stats)
    art.mark_done(STAGE, config_fp, {"pairs": pairs.height})
    return stats


def _sanity_cosines(cfg: RealConfig, labeled: list[Any], cache: Path) -> list[float]:
    """The recall encoder's cosine on the sanity pairs: a reference AUC for the validator's."""
    from ecoagent.schemas import tool_document

    q = embed(cfg.recall_encoder, [lp.pair.query for lp in labeled], cache=cache)
    t = embed(
        cfg.recall_encoder,
        [tool_document(lp.pair.tool_name, lp.pair.description) for lp in labeled],
        cache=cache,
    )
    return [float(x) for x in (q * t).sum(axis=1)]
