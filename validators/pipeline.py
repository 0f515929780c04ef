"""EcoAgent-Real: ToolBench queries -> recall union -> LLM validator (measured, calibrated) -> splits.

``run`` is the stage's one entry point (CLI and Prefect flow):

1. every ToolBench query is scored against the whole tool table by each recall retriever (BM25 and the
   packaged dense encoders); the candidates are the union of their top-k, each recorded with the
   retrievers that proposed it, and only candidates above a proposer's floor reach the validator;
2. the validator scores ToolBench's own labelled pairs (``validators.labels``): dev pairs calibrate its
   threshold, test pairs give the AUCs with bootstrap intervals and precision/recall at that threshold;
3. it scores the recalled pairs; those at or above the threshold are kept, every kept tool of a query
   stays a true tool, and kept queries are split by query.

Every candidate is a row of ``real/decisions.parquet``; kept pairs go to ``real/pairs.parquet``; counts,
floors, the measurement and timings to ``real/stats.json``. Scores are checkpointed per batch and
embeddings read from the shared cache (``ecoagent.embeddings``), so a killed or re-configured run redoes only what changed.

``judge_shard`` does the scoring of steps 2-3 (and of the MCP prompts) for every N-th query on another
worker or LLM server, into shard files the stage's checkpoints read back.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import random
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json, write_parquet
from ecoagent.config import Profile, default_intake, default_mirror
from ecoagent.embeddings import embed
from ecoagent.schemas import tool_document, tool_documents, validate_tools
from validators.calibration import auc_report, calibrate_threshold, precision_recall, threshold_interval
from validators.config import RealConfig
from validators.labels import LabeledPair, argument_lines, build_labels, sample_labels
from validators.n8n_templates import GROUP as TEMPLATE_GROUP
from validators.n8n_templates import ParsedTemplates, load_templates, node_catalog
from validators.prompt import PROMPT_VERSIONS
from validators.recall import (
    THRESHOLD_GRID,
    distribution,
    floor_from_distribution,
    retriever_name,
    score_matrix,
    threshold_grid,
    top_k_of_scores,
)
from validators.splits import SPLITS, service, split_stratified, tool_disjoint_splits
from validators.toolbench import ParsedToolBench, load_toolbench, merge, toolbench_root
from validators.validator import PairText, Validator, shard_checkpoint, shard_pairs

log = logging.getLogger(__name__)

STAGE = "real"
VALIDATOR_GRID: tuple[float, ...] = (0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.98)

DECISION_SCHEMA: dict[str, pl.DataType] = {
    "query_id": pl.String(),
    "query": pl.String(),
    "group": pl.String(),
    "tool_id": pl.String(),
    "rank": pl.Int32(),  # best rank among the retrievers that proposed the pair
    "cosine": pl.Float64(),  # the profile's recall encoder's cosine
    "proposed_by": pl.List(pl.String()),  # retrievers whose top-k holds the pair
    "above_floor": pl.List(pl.String()),  # proposers whose score reaches their floor
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
    "proposed_by": pl.List(pl.String()),
    "validator_score": pl.Float64(),
    "split": pl.String(),
    "source": pl.String(),  # toolbench | n8n_templates
    "label_source": pl.String(),  # validator (kept by the judge) | template (the workflow's own nodes)
    "tool_split": pl.String(),  # the tool-disjoint split by service; null where a query's tools straddle two
}


def load_tool_table(art: ArtifactDir) -> pl.DataFrame:
    """The crawled tool table, checked; an empty table is an error, not an empty benchmark."""
    tools = pl.read_parquet(art.require(art.tools, "crawl"))
    if tools.height == 0:
        raise ValueError(f"{art.tools} holds no tools: nothing to recall against")
    return validate_tools(tools)


def recall_union(
    parsed: ParsedToolBench, tools: pl.DataFrame, cfg: RealConfig
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """Every candidate of the union of the retrievers' top-k, with its provenance; and per-retriever stats.

    A candidate passes recall when at least one retriever that proposed it scores it at or above that
    retriever's floor, so a pair only BM25 proposed reaches the validator like any other.
    """
    queries = [q.query for q in parsed.queries]
    docs = tool_documents(tools)
    n_q = len(queries)
    proposals: dict[tuple[int, int], list[tuple[str, int, bool]]] = {}
    per_retriever: dict[str, Any] = {}
    recall_cos: np.ndarray | None = None
    for retriever in cfg.retrievers:
        name = retriever_name(retriever)
        t0 = time.process_time()
        scores = score_matrix(retriever, queries, docs)
        idx, top = top_k_of_scores(scores, cfg.top_k)
        floor = cfg.floors.get(retriever)
        if floor is None:
            floor = floor_from_distribution(top, cfg.floor_quantile)
        for qi in range(n_q):
            for rank, (ti, s) in enumerate(zip(idx[qi], top[qi], strict=True), start=1):
                proposals.setdefault((qi, int(ti)), []).append((name, rank, bool(s >= floor)))
        per_retriever[name] = {
            "retriever": retriever,
            "floor": float(floor),
            "floor_from": "fixed" if retriever in cfg.floors else f"quantile {cfg.floor_quantile} of top-k",
            "scores_top_k": distribution(top.ravel()) if name != "BM25" else _raw_distribution(top),
            "scores_top1": distribution(top[:, 0]) if name != "BM25" else _raw_distribution(top[:, 0]),
            "proposed": int(idx.size),
            "above_floor": int((top >= floor).sum()),
            "scoring_cpu_s": time.process_time() - t0,
        }
        if retriever == cfg.recall_encoder:
            recall_cos = scores
    assert recall_cos is not None  # RealConfig checks recall_encoder is a retriever
    tool_ids = tools["tool_id"].to_list()
    rows = []
    for (qi, ti), props in sorted(proposals.items()):
        q = parsed.queries[qi]
        above = [n for n, _, ok in props if ok]
        rows.append(
            {
                "query_id": q.query_id,
                "query": q.query,
                "group": q.group,
                "tool_id": tool_ids[ti],
                "rank": min(r for _, r, _ in props),
                "cosine": float(recall_cos[qi, ti]),
                "proposed_by": sorted(n for n, _, _ in props),
                "above_floor": sorted(above),
                "passed_recall": bool(above),
            }
        )
    frame = pl.DataFrame(rows, schema={k: DECISION_SCHEMA[k] for k in rows[0]}, orient="row")
    return cap_per_query(frame, cfg.max_per_query), per_retriever


def cap_per_query(frame: pl.DataFrame, cap: int | None) -> pl.DataFrame:
    """Keep at most ``cap`` candidates above the floor per query for the validator: those more retrievers
    put above their floor, then the best rank, then the higher cosine. Spreads the judging budget over
    queries instead of spending it on the few with many near-duplicate candidates (n8n lists one
    operation per row). The others keep ``passed_recall = false`` and their ``above_floor``."""
    if cap is None:
        return frame
    order = (
        frame.with_row_index("_row")
        .filter(pl.col("passed_recall"))
        .sort(
            ["query_id", pl.col("above_floor").list.len(), "rank", "cosine", "tool_id"],
            descending=[False, True, False, True, False],
        )
        .group_by("query_id", maintain_order=True)
        .head(cap)
    )
    chosen = set(order["_row"].to_list())
    return frame.with_columns(
        pl.Series("passed_recall", [i in chosen for i in range(frame.height)], dtype=pl.Boolean)
    )


def _raw_distribution(values: np.ndarray) -> dict[str, Any]:
    """``distribution`` without the [-1, 1] histogram (BM25 scores are unbounded)."""
    d = distribution(values)
    d.pop("histogram", None)
    return d


def tool_pair(row: dict[str, Any], tool: dict[str, Any]) -> PairText:
    """A (query, crawled tool) pair as the validator reads it: platform and tags as context, arguments."""
    tags = [t for t in (tool.get("tags") or []) if t]
    context = f"{tool['platform']} integration" + (f"; tags: {', '.join(tags[:6])}" if tags else "")
    args = [
        (a["name"], a.get("description") or "", bool(a.get("required"))) for a in tool.get("arguments") or []
    ]
    return PairText(
        row["query_id"],
        row["tool_id"],
        row["query"],
        tool["name"],
        tool["description"],
        context=context,
        arguments=argument_lines(args),
    )


def labelled_sets(cfg: RealConfig, labels: list[LabeledPair]) -> tuple[list[LabeledPair], list[LabeledPair]]:
    """The labelled dev pairs (calibration) and test pairs (AUCs) the stage scores."""
    return (
        sample_labels(labels, "dev", cfg.calibration_per_kind),
        sample_labels(labels, "test", cfg.measure_per_kind),
    )


def measure(cfg: RealConfig, validator: Validator, labels: list[LabeledPair]) -> tuple[dict[str, Any], float]:
    """Score the labelled pairs; calibrate the threshold on dev, report AUCs and precision/recall on test.

    Returns the measurement (for ``stats.validator.measurement``) and the threshold the build uses.
    """
    dev, test = labelled_sets(cfg, labels)
    scores = validator.score([lp.pair for lp in dev + test])
    out: dict[str, Any] = {
        "source": "ToolBench solvable + example files: relevant APIs (positive) vs an API of another "
        "category (random) and the query's other candidates (hard, soft labels)",
        "labelled_pairs": dict(Counter(f"{lp.part}/{lp.kind}" for lp in labels)),
    }
    calibration = None
    if dev:
        dev_labels, dev_scores = [lp.label for lp in dev], [scores[lp.pair.key] for lp in dev]
        calibration = calibrate_threshold(dev_labels, dev_scores, cfg.min_precision)
        out["calibration"] = {
            **calibration,
            "bootstrap": threshold_interval(dev_labels, dev_scores, cfg.min_precision, seed=cfg.seed),
            "model": validator.model,
            "prompt_version": validator.prompt_version,
            "on": f"dev: {len(dev)} pairs ({Counter(lp.kind for lp in dev)['positive']} per kind)",
        }
    threshold = cfg.validator_threshold if cfg.validator_threshold is not None else calibration["threshold"]
    out["threshold_used"] = threshold
    out["threshold_source"] = "profile" if cfg.validator_threshold is not None else "calibrated on dev"
    if test:
        pos = [lp for lp in test if lp.kind == "positive"]
        out["test"] = {"pairs_per_kind": len(pos)}
        for kind in ("random", "hard"):
            neg = [lp for lp in test if lp.kind == kind]
            if not pos or not neg:
                continue
            y = [lp.label for lp in pos + neg]
            s = [scores[lp.pair.key] for lp in pos + neg]
            out["test"][kind] = {
                **auc_report(y, s, seed=cfg.seed),
                "at_threshold": precision_recall(y, s, threshold),
                "encoder_auc": {
                    retriever_name(r): auc_report(y, _pair_cosines(r, pos + neg), seed=cfg.seed)["auc"]
                    for r in cfg.retrievers
                    if r != "bm25"
                },
            }
        y_all = [lp.label for lp in test]
        out["test"]["all"] = precision_recall(y_all, [scores[lp.pair.key] for lp in test], threshold)
    return out, float(threshold)


def _threshold_sensitivity(
    measurement: dict[str, Any], threshold: float, validated: pl.DataFrame, unjudged_queries: int = 0
) -> dict[str, Any] | None:
    """What the build would keep at the ends of the calibrated threshold's bootstrap interval: the size of
    the Real split is only as fixed as this range (None when the threshold was not calibrated here).
    ``real_queries`` adds the queries no judge decides (templates), so the range of the whole set shows."""
    interval = (measurement.get("calibration") or {}).get("bootstrap")
    if measurement.get("threshold_source") != "calibrated on dev" or not interval:
        return None
    points = {"low": interval["low"], "used": threshold, "high": interval["high"]}
    rows = threshold_grid(
        validated["validator_score"].to_numpy(), validated["query_id"].to_list(), list(points.values())
    )
    return {
        "interval": f"{interval['level']:.0%} bootstrap interval of the threshold over the dev pairs",
        **{name: row for name, row in zip(points, rows, strict=True)},
        "real_queries": {
            name: row["queries"] + unjudged_queries for name, row in zip(points, rows, strict=True)
        },
    }


def _pair_cosines(encoder: str, labelled: Sequence[LabeledPair]) -> list[float]:
    """An encoder's cosine on labelled pairs: a reference AUC beside the validator's."""
    q = embed(encoder, [lp.pair.query for lp in labelled])
    t = embed(encoder, [tool_document(lp.pair.tool_name, lp.pair.description) for lp in labelled])
    return [float(x) for x in (q * t).sum(axis=1)]


def _template_stats(
    templates: ParsedTemplates | None, absent: str | None, measurement: dict[str, Any]
) -> dict[str, Any]:
    """What reading the n8n templates gave, and the judge measured against their labels."""
    if templates is None:
        return {"absent": absent}
    tools = Counter(t for q in templates.queries for t in q.tool_ids)
    return {
        "folder": TEMPLATES,
        "licence": "unclear: templates by their n8n.io authors; collection MIT at a later commit (README there)",
        "files": templates.files,
        "queries": len(templates.queries),
        "tools": len(tools),
        "labels_per_query": round(sum(tools.values()) / max(len(templates.queries), 1), 2),
        "skipped": dict(sorted(templates.skipped.items())),
        "duplicates_merged": templates.duplicates_merged,
        "near_duplicates_removed": templates.near_duplicates_removed,
        "errors": {"count": len(templates.errors), "lines": templates.errors[:50]},
        "judge_vs_template_labels": measurement,
    }


def _counts(frame: pl.DataFrame, by: str) -> dict[str, dict[str, int]]:
    """Pairs recalled / passing recall / kept, and queries kept, per value of ``by``."""
    agg = (
        frame.group_by(by)
        .agg(
            pl.len().alias("recalled"),
            pl.col("passed_recall").sum().alias("after_recall"),
            pl.col("kept").sum().alias("after_validation"),
            pl.col("query_id").filter(pl.col("kept")).n_unique().alias("queries_kept"),
        )
        .sort(by)
    )
    return {r[by]: {k: int(v) for k, v in r.items() if k != by} for r in agg.iter_rows(named=True)}


def _provenance(decisions: pl.DataFrame) -> dict[str, Any]:
    """How many candidates / kept pairs each retriever proposed, and proposed alone."""
    out: dict[str, Any] = {}
    kept = decisions.filter(pl.col("kept"))
    names = sorted({n for ns in decisions["proposed_by"].to_list() for n in ns})
    for name in names:
        has = pl.col("proposed_by").list.contains(name)
        alone = has & (pl.col("proposed_by").list.len() == 1)
        out[name] = {
            "candidates": int(decisions.filter(has).height),
            "candidates_alone": int(decisions.filter(alone).height),
            "passed_recall": int(decisions.filter(has & pl.col("passed_recall")).height),
            "kept": int(kept.filter(has).height),
            "kept_alone": int(kept.filter(alone).height),
        }
    combos = Counter("+".join(ns) for ns in kept["proposed_by"].to_list())
    return {"per_retriever": out, "kept_by_proposer_set": dict(sorted(combos.items()))}


@dataclass(frozen=True)
class McpCandidates:
    """The MCP prompts the stage judges: the sample, each prompt's closest server tools, and their pairs.

    ``empty`` says why there are none (no MCP records, or no mcpm files in the snapshot).
    """

    read: int = 0
    sampled: int = 0
    prompts: tuple[Any, ...] = ()  # every prompt read, labelled with all of its server's records
    top: tuple[Any, ...] = ()
    pairs: tuple[PairText, ...] = ()
    documents: dict[tuple[str, str], str] = field(default_factory=dict)
    empty: str | None = None


def mcp_candidates(tools: pl.DataFrame, mirror: Path, cfg: RealConfig) -> McpCandidates:
    """mcpm.sh's example prompts, a seeded sample of at most ``cfg.mcp_prompts_max``, each cut to the
    ``cfg.mcp_prompt_candidates`` server tools closest by the recall encoder's cosine."""
    from crawlers.mcp import MCPM
    from crawlers.source import MirrorSource
    from validators.mcp_prompts import read_prompts, sample_prompts, top_candidates

    if "sources" not in tools.columns or not (tools["platform"] == "mcp").any():
        return McpCandidates(empty="tools.parquet has no MCP records")
    if not (Path(mirror) / MCPM).is_dir():
        return McpCandidates(empty=f"the snapshot has no {MCPM}/ folder")
    prompts = read_prompts(MirrorSource(Path(mirror)), tools)
    sampled = sample_prompts(prompts, cfg.mcp_prompts_max, cfg.seed)

    def cosine(queries: list[str], documents: list[str]) -> list[list[float]]:
        q = embed(cfg.recall_encoder, queries)
        t = embed(cfg.recall_encoder, documents)
        return (q @ t.T).tolist()

    top = top_candidates(sampled, tools, cosine, cfg.mcp_prompt_candidates)
    rows = {r["tool_id"]: r for r in tools.filter(pl.col("platform") == "mcp").iter_rows(named=True)}
    pairs = tuple(
        tool_pair({"query_id": p.query_id, "tool_id": t, "query": p.query}, rows[t])
        for p in top
        for t in p.tool_ids
    )
    documents = {
        (p.query_id, t): tool_document(rows[t]["name"], rows[t]["description"], rows[t]["tags"])
        for p in top
        for t in p.tool_ids
    }
    return McpCandidates(len(prompts), len(sampled), tuple(prompts), tuple(top), pairs, documents)


def build_mcp_prompts(
    tools: pl.DataFrame,
    mirror: Path,
    cfg: RealConfig,
    validator: Validator,
    threshold: float,
    out_path: Path,
    server_path: Path | None = None,
) -> dict[str, Any]:
    """The third query stream: mcpm.sh's example prompts labelled with their server's right tools.

    The validator (the stage's own, at its calibrated threshold) keeps the candidates (``mcp_candidates``)
    it says yes to. Writes ``out_path`` (empty, with the reason in the
    returned stats, when the tool table has no MCP records or the snapshot no mcpm files).
    ``server_path`` gets every prompt read, not only the sample, labelled with all of its server's
    records: server-level labels that no LLM and no retriever chose (the ``mcp_server`` stream).
    """
    from validators.mcp_prompts import narrow, write_prompts

    base = {"cap": cfg.mcp_prompts_max, "candidates_per_prompt": cfg.mcp_prompt_candidates}
    found = mcp_candidates(tools, mirror, cfg)
    if server_path is not None:
        server = write_prompts(list(found.prompts), server_path)
        base["server_level"] = {
            "prompts": server.height,
            "servers": server["server"].n_unique() if server.height else 0,
            "labels": int(server["tool_ids"].list.len().sum()) if server.height else 0,
            "path": server_path.name,
        }
    if found.empty:
        write_prompts([], out_path)
        log.warning("MCP prompt set is empty: %s", found.empty)
        return {**base, "prompts": 0, "empty": found.empty}
    scores = validator.score(list(found.pairs)) if found.pairs else {}
    by_text = {
        (p.query, found.documents[(p.query_id, t)]): scores[(p.query_id, t)]
        for p in found.top
        for t in p.tool_ids
    }
    kept, counts = narrow(list(found.top), tools, lambda q, docs: [by_text[(q, d)] for d in docs], threshold)
    frame = write_prompts(kept, out_path)
    return {
        **base,
        "read": found.read,
        "sampled": found.sampled,
        "judged_pairs": len(found.pairs),
        "threshold": threshold,
        **counts,
        "servers": frame["server"].n_unique() if frame.height else 0,
    }


# ToolBench queries snapshotted into the repo (data/queries) beyond the catalog snapshot's: read with
# ``RealConfig.whole_intake`` (``ecoagent real --whole-intake``); label -> (folder, group renames)
TOOLBENCH_INTAKE: dict[str, tuple[str, dict[str, str]]] = {
    "THUNLP-MT__StableToolBench": ("THUNLP-MT__StableToolBench", {}),
    "quchangle1__DRAFT": (
        "quchangle1__DRAFT/dataset/ToolBench",
        {"G2": "DRAFT_G2_category", "G3": "DRAFT_G3_instruction"},
    ),
}


def load_queries(cfg: RealConfig, mirror: Path | None, intake: Path | None = None) -> ParsedToolBench:
    """The ToolBench queries of the snapshot (plus the intake's with ``cfg.whole_intake``), or a seeded
    sample of ``cfg.max_queries`` of them."""
    parsed = load_toolbench(toolbench_root(Path(mirror) if mirror else default_mirror()))
    if cfg.whole_intake:
        base = Path(intake) if intake else default_intake()
        parts = {"snapshot": parsed}
        for label, (folder, _) in TOOLBENCH_INTAKE.items():
            if (base / folder).is_dir():
                parts[label] = load_toolbench(base / folder)
            else:
                log.warning("real: %s is missing; the whole intake reads without it", base / folder)
        parsed = merge(parts, {label: renames for label, (_, renames) in TOOLBENCH_INTAKE.items()})
    if not parsed.queries:
        raise ValueError("the ToolBench files hold no queries")
    if cfg.max_queries is not None and cfg.max_queries < len(parsed.queries):
        rng = random.Random(cfg.seed)
        keep = set(rng.sample(range(len(parsed.queries)), cfg.max_queries))
        parsed.queries = [q for i, q in enumerate(parsed.queries) if i in keep]
        log.info("real: a seeded sample of %d ToolBench queries (max_queries)", cfg.max_queries)
    return parsed


def validator_pairs(recalled: pl.DataFrame, tools: pl.DataFrame) -> list[PairText]:
    """The recalled candidates that passed recall, as the validator reads them, in recall order."""
    rows = {r["tool_id"]: r for r in tools.iter_rows(named=True)}
    return [
        tool_pair(r, rows[r["tool_id"]])
        for r in recalled.filter(pl.col("passed_recall")).iter_rows(named=True)
    ]


TEMPLATES = "Zie619__n8n-workflows/workflows"  # under the intake (data/queries)


def load_template_queries(
    cfg: RealConfig, tools: pl.DataFrame, mirror: Path | None, intake: Path | None
) -> tuple[ParsedTemplates | None, str | None]:
    """The n8n templates of the intake as labelled queries (a seeded sample of ``cfg.max_queries`` when set),
    or ``(None, why not)``. The node defaults come from the snapshot's n8n-nodes-base ``types.nodes``."""
    from crawlers.files import read_json
    from crawlers.report import CrawlErrors
    from crawlers.source import MirrorSource

    if not cfg.templates:
        return None, "templates = false"
    root = (Path(intake) if intake else default_intake()) / TEMPLATES
    if not root.is_dir():
        return None, f"{root} is missing"
    errors = CrawlErrors()
    entries = read_json(
        MirrorSource(Path(mirror) if mirror else default_mirror()),
        "n8n/nodes-base/types.nodes.json",
        "n8n",
        errors,
        missing="missing: template nodes map with the parameters they set only",
    )
    catalog = node_catalog(tools.select("tool_id", "tags").iter_rows(named=True), entries or [])
    parsed = load_templates(root, catalog)
    if cfg.max_queries is not None and cfg.max_queries < len(parsed.queries):
        rng = random.Random(cfg.seed)
        keep = set(rng.sample(range(len(parsed.queries)), cfg.max_queries))
        parsed.queries = [q for i, q in enumerate(parsed.queries) if i in keep]
    return parsed, None


def template_pairs(parsed: ParsedTemplates, tools: pl.DataFrame, cfg: RealConfig) -> pl.DataFrame:
    """One row per (template query, labelled tool), with the recall encoder's cosine (not used to choose)."""
    rows = {
        r["tool_id"]: r for r in tools.select("tool_id", "name", "description", "tags").iter_rows(named=True)
    }
    flat = [(q, t) for q in parsed.queries for t in q.tool_ids]
    if not flat:
        return pl.DataFrame(schema={k: v for k, v in PAIR_SCHEMA.items() if k not in ("split", "tool_split")})
    q_vec = embed(cfg.recall_encoder, [q.query for q, _ in flat])
    t_vec = embed(
        cfg.recall_encoder,
        [tool_document(rows[t]["name"], rows[t]["description"], rows[t]["tags"]) for _, t in flat],
    )
    cos = (q_vec * t_vec).sum(axis=1)
    return pl.DataFrame(
        {
            "query_id": [q.query_id for q, _ in flat],
            "query": [q.query for q, _ in flat],
            "group": [q.group for q, _ in flat],
            "tool_id": [t for _, t in flat],
            "cosine": cos.astype(float).tolist(),
            "proposed_by": [[] for _ in flat],
            "validator_score": [None] * len(flat),
            "source": [TEMPLATE_GROUP] * len(flat),
            "label_source": ["template"] * len(flat),
        },
        schema={k: v for k, v in PAIR_SCHEMA.items() if k not in ("split", "tool_split")},
    )


def template_measure_pairs(
    parsed: ParsedTemplates, tools: pl.DataFrame, cfg: RealConfig
) -> list[tuple[str, int, PairText]]:
    """``(kind, label, pair)`` for the judge's measurement against template labels: a labelled tool
    (positive), the recall encoder's best tool of a service outside the query's labels (hard), a random tool of
    another service (random); ``cfg.template_measure_per_kind`` of each, seeded."""
    n = cfg.template_measure_per_kind
    if not n or not parsed.queries:
        return []
    rng = random.Random(cfg.seed + 1)
    queries = sorted(parsed.queries, key=lambda q: q.query_id)
    picked = rng.sample(queries, min(n, len(queries)))
    table = {r["tool_id"]: r for r in tools.iter_rows(named=True)}
    ids = tools["tool_id"].to_list()
    docs = tool_documents(tools)
    q_vec = embed(cfg.recall_encoder, [q.query for q in picked])
    scores = q_vec @ embed(cfg.recall_encoder, docs).T
    out: list[tuple[str, int, PairText]] = []
    for qi, q in enumerate(picked):
        row = {"query_id": q.query_id, "query": q.query}
        positive = rng.choice(q.tool_ids)
        services = {service(t) for t in q.tool_ids}
        # outside the labelled services: another operation of a labelled service may well serve the request
        hard = next(ids[i] for i in np.argsort(-scores[qi]) if service(ids[i]) not in services)
        others = [t for t in ids if service(t) not in services]
        random_tool = others[rng.randrange(len(others))]
        for kind, tool, label in (("positive", positive, 1), ("hard", hard, 0), ("random", random_tool, 0)):
            out.append((kind, label, tool_pair({**row, "tool_id": tool}, table[tool])))
    return out


def measure_templates(
    cfg: RealConfig, validator: Validator, labelled: list[tuple[str, int, PairText]], threshold: float
) -> dict[str, Any]:
    """The judge's AUC and precision at the build's threshold against template labels, beside the recall
    encoders' cosine AUC on the same pairs: what the judge would add on requests whose labels it did not
    choose."""
    if not labelled:
        return {"skipped": "no template pairs (template_measure_per_kind = 0 or no templates)"}
    scores = validator.score([p for _, _, p in labelled])
    out: dict[str, Any] = {
        "source": "n8n templates: a labelled service node (positive) vs the recall encoder's best tool of "
        "another service (hard) and a random tool of another service (random)",
        "pairs_per_kind": sum(1 for k, _, _ in labelled if k == "positive"),
    }
    pos = [(lab, p) for k, lab, p in labelled if k == "positive"]
    for kind in ("hard", "random"):
        neg = [(lab, p) for k, lab, p in labelled if k == kind]
        y = [lab for lab, _ in pos + neg]
        s = [scores[p.key] for _, p in pos + neg]
        fake = [LabeledPair(p, lab, kind, "test") for lab, p in pos + neg]
        out[kind] = {
            **auc_report(y, s, seed=cfg.seed),
            "at_threshold": precision_recall(y, s, threshold),
            "encoder_auc": {
                retriever_name(r): auc_report(y, _pair_cosines(r, fake), seed=cfg.seed)["auc"]
                for r in cfg.retrievers
                if r != "bm25"
            },
        }
    y_all = [lab for _, lab, _ in labelled]
    out["all"] = precision_recall(y_all, [scores[p.key] for _, _, p in labelled], threshold)
    return out


def assign_splits(pairs: pl.DataFrame, cfg: RealConfig) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The query split, stratified by source group and each query's rarest tool, and the tool-disjoint
    split by service (``validators.splits``); with the per-split counts of both."""
    if pairs.height == 0:
        return pairs.with_columns(
            pl.lit(None, pl.String).alias("split"), pl.lit(None, pl.String).alias("tool_split")
        ), {}
    labels = {q: tuple(ts) for q, ts in pairs.group_by("query_id").agg(pl.col("tool_id").sort()).iter_rows()}
    groups = dict(pairs.select("query_id", "group").unique("query_id").iter_rows())
    per_tool = Counter(t for ts in labels.values() for t in ts)
    strata = {q: (groups[q], min(ts, key=lambda t: (per_tool[t], t))) for q, ts in labels.items()}
    query_split = split_stratified(strata, cfg.seed, cfg.split_fractions)
    tool_split, units = tool_disjoint_splits(labels, cfg.seed, cfg.split_fractions, unit=service)
    out = pairs.with_columns(
        pl.col("query_id").replace_strict(query_split, default=None, return_dtype=pl.String).alias("split"),
        pl.col("query_id")
        .replace_strict(tool_split, default=None, return_dtype=pl.String)
        .alias("tool_split"),
    )
    counts = {
        "tool_disjoint": {
            "unit": "service (n8n:<node>, mcp:<server>, ...): no operation of a test service is in train",
            "units": dict(Counter(units.values())),
            "queries": dict(Counter(s or "straddles" for s in tool_split.values())),
        }
    }
    return out, counts


def stage_fingerprint(
    cfg: RealConfig,
    profile: Profile,
    tools: pl.DataFrame,
    parsed: ParsedToolBench,
    templates: ParsedTemplates | None = None,
) -> str:
    """What the stage's outputs depend on: a finished stage with this fingerprint is not redone."""
    return fingerprint(
        {
            "config": cfg.to_dict(),
            "model": profile.models.llm,
            "prompt_version": PROMPT_VERSIONS[cfg.few_shot],
            "tools": fingerprint(tools.select("tool_id", "content_hash").sort("tool_id").rows()),
            "queries": fingerprint(sorted(q.query_id for q in parsed.queries)),
            "templates": fingerprint(sorted((q.query_id, q.tool_ids) for q in templates.queries))
            if templates
            else None,
        }
    )


def _done(art: ArtifactDir, config_fp: str) -> bool:
    return (
        art.is_done(STAGE, config_fp)
        and art.real_pairs.exists()
        and art.real_stats.exists()
        and art.real_mcp_server_prompts.exists()
    )


def make_validator(llm: Any, checkpoint: Path, cfg: RealConfig) -> Validator:
    """The stage's validator on one checkpoint, with the cross-build judgment cache when configured."""
    cache = None
    if cfg.judgment_cache:
        from ecoagent.models import cache_dir
        from validators.judgment_cache import CACHE_FILE, JudgmentCache, model_identity

        cache = JudgmentCache(
            cache_dir() / CACHE_FILE, model_identity(llm.info()), PROMPT_VERSIONS[cfg.few_shot]
        )
    return Validator(llm, checkpoint, batch_size=cfg.batch_size, few_shot=cfg.few_shot, cache=cache)


# the stage's three validator checkpoints, in the order it scores them
CHECKPOINTS = {
    "labels": "labels_checkpoint.jsonl",
    "validator": "validator_checkpoint.jsonl",
    "mcp_prompts": "mcp_prompts_checkpoint.jsonl",
    "templates": "templates_checkpoint.jsonl",
}


def judge_shard(
    out: Path,
    profile: Profile,
    shard: int,
    shards: int,
    mirror: Path | None = None,
    llm_url: str | None = None,
    llm: Any = None,
    intake: Path | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Score every ``shards``-th query's pairs, starting at ``shard``, into the stage's checkpoints' shards.

    The three sets are the stage's own (ToolBench's labelled pairs, the recalled candidates, the MCP
    prompts' candidates), computed the same way here, so ``run`` then finds every pair scored and only
    decides. The Prefect flow maps these as tasks (``--real-shards``), so ``--task-runner dask`` spreads
    Real's judgments over a cluster's workers; ``llm_url`` points a shard at one of several
    OpenAI-compatible servers. ``options`` are ``run``'s (``RealConfig`` fields).
    """
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is not in 0..{shards - 1}")
    art = ArtifactDir(Path(out))
    cfg = RealConfig.for_profile(profile, **options)
    tools = load_tool_table(art)
    parsed = load_queries(cfg, mirror, intake)
    templates, _ = load_template_queries(cfg, tools, mirror, intake)
    started = time.perf_counter()
    if _done(
        art, stage_fingerprint(cfg, profile, tools, parsed, templates)
    ):  # a rebuild: nothing to judge, no recall
        return {
            "shard": shard,
            "shards": shards,
            "pairs": {},
            "skipped": "the real stage is done with this config",
        }
    sets: dict[str, list[PairText]] = {"labels": [], "validator": [], "mcp_prompts": [], "templates": []}
    if cfg.calibration_per_kind or cfg.measure_per_kind:
        dev, test = labelled_sets(cfg, build_labels(parsed.queries))
        sets["labels"] = [lp.pair for lp in dev + test]
    sets["validator"] = validator_pairs(recall_union(parsed, tools, cfg)[0], tools)
    sets["mcp_prompts"] = list(mcp_candidates(tools, Path(mirror) if mirror else default_mirror(), cfg).pairs)
    if templates:
        sets["templates"] = [p for _, _, p in template_measure_pairs(templates, tools, cfg)]
    own = llm is None
    if own:
        from ecoagent.llm import make_llm

        models = dataclasses.replace(profile.models, llm_base_url=llm_url) if llm_url else profile.models
        llm = make_llm(models, batch_size=cfg.batch_size, workload="judge")
    pairs: dict[str, int] = {}
    try:
        for name, todo in sets.items():
            mine = shard_pairs(todo, shard, shards)
            path = shard_checkpoint(art.real / CHECKPOINTS[name], shard, shards)
            make_validator(llm, path, cfg).score(mine)
            pairs[name] = len(mine)
    finally:
        if own:
            llm.close()
    return {
        "shard": shard,
        "shards": shards,
        "pairs": pairs,
        "seconds": round(time.perf_counter() - started, 2),
    }


def run(
    out: Path,
    profile: Profile,
    mirror: Path | None = None,
    validator_threshold: float | None = None,
    intake: Path | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Build the Real set into ``out/real/``; returns the stats (also written to ``real/stats.json``).

    Args:
        out: the artifact folder; needs ``tools.parquet`` from the crawl.
        profile: models and seed.
        mirror: the catalog snapshot (default ``ecoagent.config.default_mirror()``).
        intake: the real queries snapshotted into the repo (default ``ecoagent.config.default_intake()``).
        validator_threshold: a fixed threshold instead of the profile's (calibrated on the embedded one).
        **options: other ``RealConfig`` fields (``retrievers``, ``top_k``, ``floor_quantile``, ``batch_size``,
            ``calibration_per_kind``, ``measure_per_kind``, ...).
    """
    art = ArtifactDir(Path(out))
    cfg = RealConfig.for_profile(profile, validator_threshold=validator_threshold, **options)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    cpu_started = time.process_time()  # CPU seconds: comparable across runs on a busy, shared machine

    tools = load_tool_table(art)
    parsed = load_queries(cfg, mirror, intake)
    templates, templates_absent = load_template_queries(cfg, tools, mirror, intake)
    if templates_absent:
        log.warning("real: no n8n templates: %s", templates_absent)
    config_fp = stage_fingerprint(cfg, profile, tools, parsed, templates)
    if _done(art, config_fp):
        log.info("real: already done with this config; nothing to do")
        return json.loads(art.real_stats.read_text())
    timings["parse_s"] = time.perf_counter() - started

    t0 = time.perf_counter()
    recalled, per_retriever = recall_union(parsed, tools, cfg)
    timings["recall_s"] = time.perf_counter() - t0

    from ecoagent.llm import make_llm

    t0 = time.perf_counter()
    llm = make_llm(profile.models, batch_size=cfg.batch_size, workload="judge")
    timings["llm_load_s"] = time.perf_counter() - t0
    try:
        t0 = time.perf_counter()
        measurement: dict[str, Any] = {}
        threshold = cfg.validator_threshold
        labeled = bool(cfg.calibration_per_kind or cfg.measure_per_kind)
        if labeled:
            labeler = make_validator(llm, art.real / CHECKPOINTS["labels"], cfg)
            measurement, threshold = measure(cfg, labeler, build_labels(parsed.queries))
            timings["labels_scored"] = labeler.scored
        assert threshold is not None  # RealConfig: no calibration pairs means a fixed threshold
        timings["measure_s"] = time.perf_counter() - t0

        t0 = time.perf_counter()
        validator = make_validator(llm, art.real / CHECKPOINTS["validator"], cfg)
        todo = validator_pairs(recalled, tools)
        scores = validator.score(todo)
        timings["validator_s"] = time.perf_counter() - t0
        timings["validator_s_per_pair"] = timings["validator_s"] / max(len(todo), 1)
        timings["validator_scored"] = validator.scored
        t0 = time.perf_counter()
        mcp_validator = make_validator(llm, art.real / CHECKPOINTS["mcp_prompts"], cfg)
        mcp_stats = build_mcp_prompts(
            tools,
            Path(mirror) if mirror else default_mirror(),
            cfg,
            mcp_validator,
            threshold,
            art.real_mcp_prompts,
            art.real_mcp_server_prompts,
        )
        timings["mcp_prompts_s"] = time.perf_counter() - t0
        timings["mcp_prompts_scored"] = mcp_validator.scored
        t0 = time.perf_counter()
        template_validator = make_validator(llm, art.real / CHECKPOINTS["templates"], cfg)
        template_measurement = (
            measure_templates(
                cfg, template_validator, template_measure_pairs(templates, tools, cfg), threshold
            )
            if templates
            else {"skipped": templates_absent}
        )
        timings["templates_measure_s"] = time.perf_counter() - t0
        timings["templates_scored"] = template_validator.scored
        timings["judgments_from_cache"] = sum(
            v.from_cache
            for v in (validator, mcp_validator, template_validator, *([labeler] if labeled else []))
        )
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
            (pl.col("passed_recall") & (pl.col("validator_score").fill_null(-1.0) >= threshold)).alias("kept")
        )
        .select(list(DECISION_SCHEMA))
    )

    kept = decisions.filter(pl.col("kept")).select(  # a query keeps every verified tool (several true tools)
        [c for c in PAIR_SCHEMA if c in decisions.columns]
    )
    kept = kept.with_columns(pl.lit("toolbench").alias("source"), pl.lit("validator").alias("label_source"))
    labelled = template_pairs(templates, tools, cfg) if templates else kept.clear()
    # a template query the validator also kept from ToolBench cannot happen: ids differ by prefix (tb- / n8n-)
    pairs, split_counts = assign_splits(pl.concat([kept, labelled], how="vertical"), cfg)
    pairs = pairs.select(list(PAIR_SCHEMA))

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
    tools_per_query = pairs.group_by("query_id").len()["len"].to_numpy() if pairs.height else np.zeros(0)
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
            "kept_tools_per_query": {
                "mean": float(tools_per_query.mean()) if tools_per_query.size else 0.0,
                "max": int(tools_per_query.max()) if tools_per_query.size else 0,
                "queries_with_2_or_more": int((tools_per_query >= 2).sum()),
            },
            "per_platform": _counts(with_platform, "platform"),
            "per_group": _counts(decisions, "group"),
            "per_split": {
                s: {
                    "pairs": int((pairs["split"] == s).sum()),
                    "queries": int(pairs.filter(pl.col("split") == s)["query_id"].n_unique()),
                }
                for s in SPLITS
            },
            "split_fractions": list(cfg.split_fractions),
            "split": "by query, stratified by source group and each query's rarest tool",
            **split_counts,
            "per_source": {
                src: {
                    s: {
                        "pairs": int(((pairs["source"] == src) & (pairs["split"] == s)).sum()),
                        "queries": int(
                            pairs.filter((pl.col("source") == src) & (pl.col("split") == s))[
                                "query_id"
                            ].n_unique()
                        ),
                        "tools": int(
                            pairs.filter((pl.col("source") == src) & (pl.col("split") == s))[
                                "tool_id"
                            ].n_unique()
                        ),
                    }
                    for s in SPLITS
                }
                for src in sorted(set(pairs["source"].to_list()))
            },
        },
        "templates": _template_stats(templates, templates_absent, template_measurement),
        "recall": {
            "encoder": encoder_provenance(cfg.recall_encoder),
            "retrievers": per_retriever,
            "top_k": cfg.top_k,
            "union": "a candidate passes when a retriever that proposed it scores it >= that retriever's floor",
            "max_per_query": cfg.max_per_query,
            "above_floor": int((decisions["above_floor"].list.len() > 0).sum()),
            # the recall encoder's floor: what `decisions.cosine` is compared with (manual-check report)
            "threshold": per_retriever[retriever_name(cfg.recall_encoder)]["floor"],
            "cosine_all": distribution(decisions["cosine"].to_numpy()),
            "threshold_grid": threshold_grid(
                decisions["cosine"].to_numpy(), decisions["query_id"].to_list(), THRESHOLD_GRID
            ),
            "provenance": _provenance(decisions),
        },
        "validator": {
            "model": model_info,
            "prompt_version": validator.prompt_version,
            "method": "yes_probability: P(yes)/(P(yes)+P(no)) of the next token",
            "threshold": threshold,
            "measurement": measurement,
            "scored": validated.height,
            "score": distribution(validated["validator_score"].to_numpy()),
            "threshold_grid": threshold_grid(
                validated["validator_score"].to_numpy(), validated["query_id"].to_list(), VALIDATOR_GRID
            ),
            "threshold_sensitivity": _threshold_sensitivity(
                measurement, threshold, validated, len(templates.queries) if templates else 0
            ),
        },
        "mcp_prompts": mcp_stats,
        "timings": timings,
    }
    write_json(art.real_stats, stats)
    art.mark_done(STAGE, config_fp, {"pairs": pairs.height})
    return stats
