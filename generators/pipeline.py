"""The Syn stage: tools -> LLM queries -> near-duplicate removal -> negatives -> splits -> ``syn/``.

Reads ``tools.parquet``; writes ``syn/queries.parquet``, ``syn/positives.parquet``,
``syn/negatives.parquet`` and ``syn/stats.json`` (schemas in docs/CONTRACTS.md). Generation is
checkpointed per tool under ``syn/checkpoint/``, so a killed run resumes where it stopped.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json, write_parquet
from ecoagent.bootstrap import stratified_interval
from ecoagent.config import SMOLLM2, Profile
from ecoagent.embeddings import embed, encode_backend, encode_dtype
from ecoagent.models import canonical
from ecoagent.schemas import tool_documents, validate_tools
from generators.dedup import MinHashConfig, MinHashDeduper, within_group_similarity
from generators.equivalents import EquivalenceRule, find_equivalents
from generators.filters import names_service, names_tool, word_count
from generators.generate import LIST_MAX_ROUNDS, GenerationConfig, QueryGenerator, read_checkpoint
from generators.negatives import NegativeConfig, mine_negatives
from generators.prompts import prompt_version
from generators.retrieval import label_ranks, self_ranks
from generators.rivals import with_rivals
from generators.sample import stratified_sample
from generators.splits import RATIOS, assign_splits

log = logging.getLogger(__name__)

STAGE = "syn"
TOP_K = 10

QUERY_SCHEMA: dict[str, pl.DataType] = {
    "query_id": pl.String(),
    "query": pl.String(),
    "tool_id": pl.String(),
    "split": pl.String(),  # the paper's query split
    "split_tool": pl.String(),  # the tool-disjoint split: test tools (and their equivalents) unseen in train
    "n_words": pl.Int64(),
    "names_tool": pl.Boolean(),
    "names_service": pl.Boolean(),
    "model": pl.String(),
    "model_file_sha256": pl.String(),
    "prompt_version": pl.String(),
    "sampling": pl.String(),
    "seed": pl.Int64(),
}
POSITIVE_COLUMNS = ["query_id", "query", "tool_id", "split", "split_tool"]
SPLIT_COLUMNS = {"query": "split", "tool": "split_tool"}


def query_id(tool_id: str, query: str) -> str:
    """A stable id from the tool and the query text."""
    return hashlib.sha256(f"{tool_id}\x1f{query}".encode()).hexdigest()[:16]


def _quantiles(values: np.ndarray) -> dict[str, float]:
    if not len(values):
        return {}
    q = np.quantile(values, [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])
    keys = ["min", "p10", "p25", "median", "p75", "p90", "max"]
    return {k: round(float(v), 4) for k, v in zip(keys, q, strict=True)} | {
        "mean": round(float(values.mean()), 4)
    }


# how the model ran, not what it is: not in the key
RUNTIME_INFO = ("threads", "slots", "runtime", "runtime_openmp", "runtime_amx_patched", "runtime_workload")


def generation_key(info: dict[str, Any], profile: Profile) -> tuple[GenerationConfig, str]:
    """The generation settings for a model and the key of their checkpoints (model, prompt, decoding,
    seed; not the threads or slots it ran with)."""
    # the 135M test model repeats itself when asked for a list; every capable model gets the paper's list
    mode = "single" if canonical(str(info.get("model"))) == SMOLLM2 else "list"
    rivals = profile.syn_rivals if mode == "list" else 0
    rounds = LIST_MAX_ROUNDS if mode == "list" else GenerationConfig.max_rounds
    gen_config = GenerationConfig(
        queries_per_tool=profile.syn_queries_per_tool, mode=mode, rivals=rivals, max_rounds=rounds
    )
    model = {k: v for k, v in info.items() if k not in RUNTIME_INFO}
    return gen_config, fingerprint({"llm": model, "generation": gen_config.to_dict(), "seed": profile.seed})


def tool_space(
    tools: pl.DataFrame, profile: Profile, rule: EquivalenceRule
) -> tuple[np.ndarray, dict[int, set[int]]]:
    """The table's tool-document embeddings by the profile's SBERT and the equivalents they imply."""
    emb = embed(profile.models.sbert, tool_documents(tools))
    return emb, find_equivalents(tools["name"].to_list(), tools["platform"].to_list(), emb, rule)


def sample_with_rivals(
    tools: pl.DataFrame,
    sample: pl.DataFrame,
    rivals: int,
    space: tuple[np.ndarray, dict[int, set[int]]] | None,
) -> list[dict[str, Any]]:
    """The sample's tool dicts, each with its ``rivals`` nearest tools when ``rivals`` > 0."""
    if not rivals or space is None:
        return sample.to_dicts()
    index = {t: i for i, t in enumerate(tools["tool_id"].to_list())}
    table = tools.select("name", "description").to_dicts()
    return with_rivals(sample.to_dicts(), table, index, space[0], space[1], rivals)


def generate_shard(
    out: Path,
    profile: Profile,
    shard: int,
    shards: int,
    max_tools: int | None = None,
    llm_url: str | None = None,
    llm: Any = None,
) -> dict[str, Any]:
    """Generate for every ``shards``-th tool of the sample, starting at ``shard``, into its own checkpoint.

    The Prefect flow maps these as tasks (``--syn-shards``), so ``--task-runner dask`` spreads them over a
    cluster's workers; ``llm_url`` points a shard at one of several OpenAI-compatible servers. ``run``
    then reads every shard's checkpoint and does the rest (dedup, negatives, splits) once.
    """
    if not 0 <= shard < shards:
        raise ValueError(f"shard {shard} is not in 0..{shards - 1}")
    art = ArtifactDir(out)
    tools = validate_tools(pl.read_parquet(art.require(art.tools, "crawl")))
    limit = max_tools if max_tools is not None else profile.syn_max_tools
    if llm is None:
        from ecoagent.llm import make_llm

        models = profile.models
        if llm_url:
            models = dataclasses.replace(models, llm_base_url=llm_url)
        llm = make_llm(models)
    gen_config, gen_key = generation_key(llm.info(), profile)
    space = tool_space(tools, profile, EquivalenceRule()) if gen_config.rivals else None
    sample = sample_with_rivals(
        tools, stratified_sample(tools, limit, profile.seed), gen_config.rivals, space
    )
    sample = sample[shard::shards]
    checkpoint = art.syn / "checkpoint" / f"generations-{gen_key}.shard-{shard:03d}-of-{shards:03d}.jsonl"
    started = time.perf_counter()
    records = list(QueryGenerator(llm, gen_config, seed=profile.seed).run(sample, checkpoint))
    return {
        "shard": shard,
        "shards": shards,
        "tools": len(records),
        "queries": sum(len(r["queries"]) for r in records),
        "seconds": round(time.perf_counter() - started, 2),
    }


def run(
    out: Path,
    profile: Profile,
    max_tools: int | None = None,
    llm: Any = None,
) -> dict[str, Any]:
    """Run the Syn stage and return its stats.

    Args:
        out: the artifact folder (must hold ``tools.parquet``).
        profile: models, sample size (``syn_max_tools``), queries per tool and seed.
        max_tools: tools to generate for (a platform-stratified, seeded sample); ``None`` uses the
            profile's ``syn_max_tools`` (``None`` there means every tool).
        llm: an ``LLMClient`` to use instead of ``make_llm(profile.models)`` (e.g. one already loaded).
    """
    art = ArtifactDir(out)
    tools = validate_tools(pl.read_parquet(art.require(art.tools, "crawl")))
    limit = max_tools if max_tools is not None else profile.syn_max_tools
    timings: dict[str, float] = {}
    started = time.perf_counter()

    if llm is None:
        from ecoagent.llm import make_llm

        llm = make_llm(profile.models)
    info = llm.info()
    gen_config, gen_key = generation_key(info, profile)
    mode = gen_config.mode
    dedup_config, neg_config, equiv_rule = MinHashConfig(), NegativeConfig(), EquivalenceRule()
    tools_key = hashlib.sha256("".join(sorted(tools["content_hash"].fill_null(""))).encode()).hexdigest()
    config = {
        "generation": gen_key,
        "max_tools": limit,
        "splits": f"query+tool {RATIOS}",  # a changed ratio must redo the splits
        "yield_encoders": [profile.models.sbert, profile.models.recall_encoder],
        # bfloat16 on CPUs with native bf16 (ecoagent.embeddings): yield and negatives rest on these vectors
        "encode_dtype": encode_dtype(),
        "encode_backend": encode_backend(),  # torch or OpenVINO's CPU runtime: vectors agree to bf16 rounding
        "dedup": str(dedup_config),
        "negatives": str(neg_config),
        "equivalence": str(equiv_rule),
        "sbert": profile.models.sbert,
        "tools": tools_key,
    }
    fp = fingerprint(config)
    if art.is_done(STAGE, fp) and art.syn_queries.exists():
        log.info("syn already done with this config; delete %s to redo it", art.markers / "syn.json")
        return json.loads(art.syn_stats.read_text())

    # 1. generate (checkpointed per tool); tools that shards (generate_shard) finished are read back
    sample = stratified_sample(tools, limit, profile.seed)
    space = None
    if gen_config.rivals:  # the rivals come from the tool space that step 3 needs anyway
        t0 = time.perf_counter()
        space = tool_space(tools, profile, equiv_rule)
        timings["tool_space_s"] = time.perf_counter() - t0
    log.info("generating for %d of %d tools with %s", sample.height, tools.height, info.get("model"))
    generator = QueryGenerator(llm, gen_config, seed=profile.seed)
    checkpoint = art.syn / "checkpoint" / f"generations-{gen_key}.jsonl"
    from_shards = {
        k: v
        for path in sorted(checkpoint.parent.glob(f"generations-{gen_key}.shard-*.jsonl"))
        for k, v in read_checkpoint(path).items()
    }
    todo = [
        t
        for t in sample_with_rivals(tools, sample, gen_config.rivals, space)
        if t["tool_id"] not in from_shards
    ]
    generated = {r["tool_id"]: r for r in generator.run(todo, checkpoint)}
    records = [from_shards.get(t) or generated[t] for t in sample["tool_id"]]
    timings["generate_s"] = time.perf_counter() - started

    sampling = json.dumps(
        {k: v for k, v in gen_config.sampling(0).to_dict().items() if k != "seed"}, sort_keys=True
    )
    names = dict(zip(tools["tool_id"], tools["name"], strict=True))
    rows = [
        {"tool_id": r["tool_id"], "query": q["query"], "seed": q["seed"]}
        for r in records
        for q in r["queries"]
    ]
    failures = Counter(f["reason"].split(" (")[0] for r in records for f in r["failures"])
    failure_examples = [
        {"tool_id": r["tool_id"], "reason": f["reason"], "raw": f["raw"][:200]}
        for r in records
        for f in r["failures"][:1]
    ][:20]

    # 2. near-duplicate removal over all queries (within and across tools)
    t0 = time.perf_counter()
    keep, pairs = MinHashDeduper(dedup_config).keep_mask([r["query"] for r in rows])
    removed = [
        {
            "query": rows[j]["query"],
            "tool_id": rows[j]["tool_id"],
            "duplicate_of": rows[i]["query"],
            "duplicate_tool_id": rows[i]["tool_id"],
        }
        for i, j in pairs
        if not keep[j] and keep[i]
    ]
    removed_within = sum(1 for x in removed if x["tool_id"] == x["duplicate_tool_id"])
    rows = [r for r, k in zip(rows, keep, strict=True) if k]
    timings["dedup_s"] = time.perf_counter() - t0
    if not rows:
        raise ValueError(
            f"no query survived generation and dedup for {sample.height} tools; see {checkpoint}"
        )

    # 3. embeddings, equivalents, yield
    t0 = time.perf_counter()
    tool_ids = tools["tool_id"].to_list()
    tool_index = {t: i for i, t in enumerate(tool_ids)}
    tool_emb, equivalents = space or tool_space(tools, profile, equiv_rule)
    query_emb = embed(profile.models.sbert, [r["query"] for r in rows])
    positive = np.array([tool_index[r["tool_id"]] for r in rows])
    ranks = self_ranks(query_emb, tool_emb, positive)
    equiv_ranks = label_ranks(query_emb, tool_emb, positive, equivalents)
    timings["encode_s"] = time.perf_counter() - t0

    # 4. splits
    for r in rows:
        r["query_id"] = query_id(r["tool_id"], r["query"])
    equiv_ids = {tool_ids[i]: {tool_ids[j] for j in js} for i, js in equivalents.items()}
    qids, tids = [r["query_id"] for r in rows], [r["tool_id"] for r in rows]
    splits = assign_splits(qids, tids, "query", profile.seed, equiv_ids)
    tool_splits = assign_splits(qids, tids, "tool", profile.seed, equiv_ids)
    leaks = cross_split_duplicates([r["query"] for r in rows], {"query": splits, "tool": tool_splits})

    # the yield under a second packaged encoder, so the number is not one encoder's opinion
    t0 = time.perf_counter()
    second = profile.models.recall_encoder
    second_ranks = second_equiv_ranks = None
    if second and second != profile.models.sbert:
        tool_emb2 = embed(second, tool_documents(tools))
        query_emb2 = embed(second, [r["query"] for r in rows])
        second_ranks = self_ranks(query_emb2, tool_emb2, positive)
        second_equiv_ranks = label_ranks(query_emb2, tool_emb2, positive, equivalents)
    timings["encode_second_s"] = time.perf_counter() - t0

    # 5. negatives
    t0 = time.perf_counter()
    negs = mine_negatives(query_emb, tool_emb, positive, equivalents, neg_config, seed=profile.seed)
    timings["negatives_s"] = time.perf_counter() - t0

    queries = pl.DataFrame(
        [
            {
                "query_id": r["query_id"],
                "query": r["query"],
                "tool_id": r["tool_id"],
                "split": s,
                "split_tool": st,
                "n_words": word_count(r["query"]),
                "names_tool": names_tool(r["query"], names[r["tool_id"]]),
                "names_service": names_service(r["query"], {"tool_id": r["tool_id"]}),
                "model": info.get("model"),
                "model_file_sha256": info.get("model_file_sha256"),
                "prompt_version": prompt_version(gen_config.rivals),
                "sampling": sampling,
                "seed": r["seed"],
            }
            for r, s, st in zip(rows, splits, tool_splits, strict=True)
        ],
        schema=QUERY_SCHEMA,
    )
    negatives = pl.DataFrame(
        {
            "query_id": queries["query_id"].gather(negs.query),
            "query": queries["query"].gather(negs.query),
            "tool_id": [tool_ids[t] for t in negs.tool],
            "positive_tool_id": queries["tool_id"].gather(negs.query),
            "score": negs.score.astype(np.float64),
            "kind": negs.kind.tolist(),
            "split": queries["split"].gather(negs.query),
            "split_tool": queries["split_tool"].gather(negs.query),
        }
    )
    write_parquet(queries, art.syn_queries)
    write_parquet(queries.select(POSITIVE_COLUMNS), art.syn_positives)
    write_parquet(negatives, art.syn_negatives)

    per_tool = queries.group_by("tool_id").len()["len"].to_numpy()
    similarity = within_group_similarity(queries["query"].to_list(), queries["tool_id"].to_list())
    catalog = dict(Counter(tools["platform"].to_list()))
    timings["total_s"] = time.perf_counter() - started
    stats: dict[str, Any] = {
        "config": config,
        "model": info,
        "prompt_version": prompt_version(gen_config.rivals),
        "mode": mode,
        "rivals": gen_config.rivals,
        "tools": {
            "table": tools.height,
            "sampled": sample.height,
            "sampled_per_platform": dict(Counter(sample["platform"].to_list())),
            "table_per_platform": catalog,
            "with_queries": int(len(per_tool)),
        },
        "generation": {
            "samples": sum(r["samples"] for r in records),
            "accepted": sum(len(r["queries"]) for r in records),
            "failures": sum(failures.values()),
            "failures_by_reason": dict(failures.most_common()),
            "failure_examples": failure_examples,
            "tools_without_queries": [r["tool_id"] for r in records if not r["queries"]],
            "generated_tokens": generator.generated_tokens,
            "tokens_per_s": round(generator.generated_tokens / generator.generation_seconds, 2)
            if generator.generation_seconds
            else None,
            # this run's cost (tools resumed from a checkpoint cost nothing here)
            "tools_generated": generator.tools_generated,
            # list answers ended at a line once their tool had enough queries (the rest is not decoded)
            "stopped_early": generator.stopped_early,
            # list answers ended after ``give_up_after`` rejected items in a row (their tool asks again)
            "given_up": generator.given_up,
            "llm_wall_s": round(generator.generation_seconds, 1),
            "llm_cpu_s": round(generator.generation_cpu_seconds, 1),
            "llm_cpu_s_per_tool": round(generator.generation_cpu_seconds / generator.tools_generated, 2)
            if generator.tools_generated
            else None,
        },
        "dedup": {
            "method": str(dedup_config),
            "pairs": len(pairs),
            "removed": len(removed),
            "removed_within_tool": removed_within,
            "removed_across_tools": len(removed) - removed_within,
            "examples": removed[:10],
        },
        "queries": {
            "total": queries.height,
            "per_tool": _quantiles(per_tool.astype(float)),
            "n_words": _quantiles(queries["n_words"].to_numpy().astype(float)),
            "names_tool_share": round(float(queries["names_tool"].mean() or 0.0), 4),
            "names_service_share": round(float(queries["names_service"].mean() or 0.0), 4),
            "within_tool_similarity": _similarity(similarity),
            "splits": dict(Counter(splits)),
            "splits_tool": dict(Counter(tool_splits)),
            "test_distinct": {
                "query_split": int(sum(1 for x in splits if x == "test")),
                "tool_split": int(sum(1 for x in tool_splits if x == "test")),
                "tool_split_tools": len({t for t, x in zip(tids, tool_splits, strict=True) if x == "test"}),
            },
        },
        "yield": {
            "definition": f"distinct queries per tool, after dedup, whose own tool ranks in the top {TOP_K} "
            f"of all {tools.height} tools; reported for two packaged encoders. No retriever filtered the "
            "queries (round-trip filtering would favour that encoder on the test split)",
            "target": "median >= 7 of 10 per tool (MiniLM, own tool only)",
            "encode_dtype": config["encode_dtype"],
            "encode_backend": config["encode_backend"],
            "with_equivalents": "the same count when the top 10 holds the query's own tool or one of its "
            "cross-platform equivalents, the true tools the evaluation scores Syn queries against",
            "not_naming_tool": "the same count over the queries that do not name their tool (an encoder "
            "finds a query that names its tool by the name): how much of the yield the request itself earns",
            "per_tool_median_catalog": "the median over the whole table's tools that the sample estimates: "
            "each sampled tool weighs its platform's tools in the table over its platform's tools in the "
            "sample (the sample is equal per platform, the table is not); with its 90% interval. The "
            "target is judged on the sample's own median, this says what a larger run would likely show",
            **{
                name: {
                    **_yield(r, rows, sample, catalog),
                    "with_equivalents": _yield(er, rows, sample, catalog),
                    "not_naming_tool": _yield(
                        r, rows, sample, catalog, keep=~queries["names_tool"].to_numpy()
                    ),
                }
                for name, r, er in (
                    (profile.models.sbert, ranks, equiv_ranks),
                    (second, second_ranks, second_equiv_ranks),
                )
                if r is not None and er is not None
            },
        },
        "per_platform": _per_platform(queries, sample, records, ranks, equiv_ranks, similarity),
        "leakage": {
            "definition": "pairs of kept queries with word 1-2-gram Jaccard > 0.7 that fall in different "
            "splits (0 is required of the tool-disjoint split)",
            **leaks,
        },
        "equivalents": {
            "rule": str(equiv_rule),
            "tools_with_equivalents": len(equivalents),
            "pairs": sum(len(v) for v in equivalents.values()) // 2,
        },
        "negatives": {
            "total": negatives.height,
            "per_kind": dict(Counter(negs.kind.tolist())),
            "score_hard": _quantiles(negs.score[negs.kind == "hard"]),
            "score_random": _quantiles(negs.score[negs.kind == "random"]),
        },
        "timings_s": {k: round(v, 2) for k, v in timings.items()},
    }
    write_json(art.syn_stats, stats)
    art.mark_done(STAGE, fp, {"queries": queries.height, "negatives": negatives.height})
    return stats


def median_interval(
    values: np.ndarray,
    strata: list[str],
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.9,
    weights: np.ndarray | None = None,
) -> list[float]:
    """Percentile bootstrap interval of the median of ``values``, resampling within each stratum
    (of the ``weights``-weighted median when given: ``catalog_median``).

    Syn's tool sample is stratified by platform, so tools are resampled within their platform. Per-tool
    yields are bimodal (generic tools with dozens of same-purpose rivals find themselves rarely), and the
    median of 100 of them moves by a whole query between two generations of the same tools. The interval
    says whether a median clears the target by more than that noise.
    """
    values = np.asarray(values, dtype=float)
    if not values.size:
        return []

    def statistic(idx: np.ndarray) -> float:
        if weights is None:
            return float(np.median(values[idx]))
        return weighted_median(values[idx], weights[idx])

    low, high, _ = stratified_interval(strata, statistic, n_boot=n_boot, seed=seed, level=level)
    return [low, high]


def weighted_median(values: np.ndarray, weights: np.ndarray) -> float:
    """The median of ``values`` when value ``i`` stands for ``weights[i]`` items; with equal weights it is
    ``np.median`` (the two middle values averaged when the weight splits exactly in half)."""
    values, weights = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
    if not values.size:
        raise ValueError("no values")
    if (weights <= 0).any():
        raise ValueError("weights must be > 0")
    order = np.argsort(values, kind="stable")
    v, share = values[order], np.cumsum(weights[order]) / weights.sum()
    k = int(np.searchsorted(share, 0.5 - 1e-12))
    # exactly half; np.isclose's relative 1e-5 would take (n/2 + 1)/n for a half at large n
    if abs(share[k] - 0.5) <= 1e-9 and k + 1 < v.size:
        return float((v[k] + v[k + 1]) / 2)
    return float(v[k])


def catalog_weights(platforms: list[str], catalog: dict[str, int]) -> np.ndarray:
    """Per sampled tool: its platform's tools in the table over its platform's tools in the sample, so a
    weighted statistic of the sample estimates the same statistic over the whole table."""
    sampled = Counter(platforms)
    missing = sorted(set(sampled) - set(catalog))
    if missing:
        raise ValueError(f"sampled platforms {missing} are not in the tool table's counts")
    return np.array([catalog[p] / sampled[p] for p in platforms], dtype=float)


def catalog_median(
    values: np.ndarray, platforms: list[str], catalog: dict[str, int], n_boot: int = 2000, seed: int = 0
) -> dict[str, Any]:
    """The whole table's median that a platform-stratified sample estimates, with a 90 % interval.

    The sample gives every platform an equal share, but MCP and n8n hold 94 % of the table, so the
    sample's own median over-weights the small framework platforms (whose generic tools have many
    rivals). Resampling within platforms keeps the design; the weights stay each platform's share.
    """
    values = np.asarray(values, dtype=float)
    if not values.size:
        return {"median": None, "ci90": []}
    weights = catalog_weights(platforms, catalog)
    return {
        "median": weighted_median(values, weights),
        "ci90": median_interval(values, platforms, n_boot=n_boot, seed=seed, weights=weights),
    }


def _yield(
    ranks: np.ndarray,
    rows: list[dict[str, Any]],
    sample: pl.DataFrame,
    catalog: dict[str, int],
    keep: np.ndarray | None = None,
) -> dict[str, Any]:
    """Yield per tool (queries whose own tool is in the top 10) and rank metrics for one encoder.

    ``catalog`` (tools per platform in the whole table) weighs the sample into an estimate of the whole
    table's median. ``keep`` counts only some queries (``not_naming_tool``: those that do not name their
    tool, which an encoder finds by the name alone), still per sampled tool, so the yields compare directly.
    """
    if keep is not None:
        rows = [r for r, k in zip(rows, keep, strict=True) if k]
        ranks = ranks[keep]
    hits = Counter(r["tool_id"] for r, rank in zip(rows, ranks, strict=True) if rank <= TOP_K)
    per_tool = np.array([hits.get(t, 0) for t in sample["tool_id"]], float)
    if not ranks.size:
        return {"queries": 0, "per_tool_mean": 0.0, "per_tool": _quantiles(per_tool)}
    platforms = sample["platform"].to_list()
    whole = catalog_median(per_tool, platforms, catalog)
    return {
        "queries": int(ranks.size),
        "per_tool_mean": round(float(per_tool.mean()), 3),
        "per_tool": _quantiles(per_tool),
        "tools_by_hits": tools_by_hits(per_tool),
        "per_tool_median_ci90": median_interval(per_tool, platforms),
        "per_tool_median_catalog": whole["median"],
        "per_tool_median_catalog_ci90": whole["ci90"],
        "query_share_top10": round(float((ranks <= TOP_K).mean()), 4),
        "query_share_top1": round(float((ranks == 1).mean()), 4),
        "mrr": round(float((1.0 / ranks).mean()), 4),
    }


def tools_by_hits(per_tool: np.ndarray) -> dict[str, int]:
    """How many tools have each yield, from 0 to the largest: the shape the quantiles hide.

    A tool's queries tend to find it all or not at all, so the per-tool yield has two modes and its
    median can fall in the gap between them, moving by several queries between builds of the same settings.
    """
    counts = Counter(int(x) for x in per_tool)
    return {str(k): counts.get(k, 0) for k in range(int(per_tool.max(initial=0)) + 1)}


def _similarity(per_tool: dict[str, float]) -> dict[str, Any]:
    """How alike a tool's kept queries are: the mean over tools of their mean pairwise Jaccard on the
    dedup rule's shingles (``per_tool``, from ``generators.dedup.within_group_similarity``), with its
    quantiles."""
    values = np.array(list(per_tool.values()), dtype=float)
    return {
        "definition": "per tool, the mean Jaccard of its kept queries' word 1-2-gram sets, pair by pair "
        "(0: no shared words, 1: identical); near-duplicates above 0.7 were already removed",
        "tools": int(values.size),
        **_quantiles(values),
    }


def _per_platform(
    queries: pl.DataFrame,
    sample: pl.DataFrame,
    records: list[dict[str, Any]],
    ranks: np.ndarray,
    equiv_ranks: np.ndarray,
    similarity: dict[str, float],
) -> dict[str, Any]:
    """The quality table per platform: tools, kept queries, yield (own tool; with equivalents), name
    leakage, lengths, within-tool similarity (``similarity``: tool -> its mean pairwise Jaccard),
    rejections."""
    platform_of = dict(zip(sample["tool_id"], sample["platform"], strict=True))
    in_top = dict(zip(queries["query_id"], (ranks <= TOP_K).tolist(), strict=True))
    in_top_eq = dict(zip(queries["query_id"], (equiv_ranks <= TOP_K).tolist(), strict=True))
    out: dict[str, Any] = {}
    for platform in sorted(set(platform_of.values())):
        tools = [t for t, p in platform_of.items() if p == platform]
        part = queries.filter(pl.col("tool_id").is_in(tools))
        hits = Counter(t for t, q in zip(part["tool_id"], part["query_id"], strict=True) if in_top[q])
        hits_eq = Counter(t for t, q in zip(part["tool_id"], part["query_id"], strict=True) if in_top_eq[q])
        rejected = Counter(
            f["reason"].split(" (")[0] for r in records if r["tool_id"] in set(tools) for f in r["failures"]
        )
        out[platform] = {
            "tools": len(tools),
            "queries": part.height,
            "yield_median": float(np.median([hits.get(t, 0) for t in tools])) if tools else 0.0,
            "yield_median_with_equivalents": float(np.median([hits_eq.get(t, 0) for t in tools]))
            if tools
            else 0.0,
            "names_tool_share": round(float(part["names_tool"].mean() or 0.0), 4) if part.height else 0.0,
            "names_service_share": round(float(part["names_service"].mean() or 0.0), 4)
            if part.height
            else 0.0,
            "n_words_median": float(part["n_words"].median() or 0) if part.height else 0.0,
            "within_tool_similarity_mean": _quantiles(
                np.array([similarity[t] for t in tools if t in similarity], dtype=float)
            ).get("mean"),
            "rejected": dict(rejected.most_common()),
        }
    return out


def cross_split_duplicates(texts: list[str], splits: dict[str, list[str]]) -> dict[str, int]:
    """Near-duplicate pairs (exact Jaccard > 0.7) whose two queries fall in different splits, per split
    kind; after the global dedup every count should be 0, and this measures that it is."""
    pairs = MinHashDeduper(MinHashConfig()).duplicate_pairs(texts)
    return {
        f"{kind}_split": sum(1 for i, j in pairs if labels[i] != labels[j]) for kind, labels in splits.items()
    } | {"near_duplicate_pairs_kept": len(pairs)}
