"""Does the train stage's recipe beat its backbone on unseen tools? Cross-fitted over every Syn tool.

The default build's tool-disjoint test holds about 40 of Syn's 112 tools, too few to tell a gain of
+0.02 MRR from none. This retrains the train stage's own recipe (``TrainConfig.for_profile``:
``rated.train.training_selection``, the Syn queries of the training tools plus the MCP authors' prompts of
the eligible servers, the frozen tool tower) K times on a finished build. Each time one seeded group of
Syn's tools is the tool-disjoint test: none of them (nor a cross-platform equivalent) is a positive or a
negative, no MCP server with a record among them trains, and no query of theirs trains. The fine-tuned
towers and the untrained backbone then rank the whole catalog for all of that group's queries (MRR@100,
Table 1's cut, as the stage's ``held_out``). Pooled over the K folds every Syn tool is scored by a model
that never saw it, so the comparison rests on all of Syn's tools, not on one split's 40.

It prints, per fold and pooled, the queries and true tools, MRR backbone -> fine-tuned, the paired
bootstrap interval over queries (Table 1's ``compare``) and one that resamples whole tools (the interval
that says whether a gain would carry to other tools), for all queries and for those that do not name
their tool (Syn's ``names_tool``). Nothing is written to the build.

    .venv/bin/python bench/bench_unseen_tools.py --out OUT --folds 3

What it does not show: the shipped model is the one the stage trained on its own split (it saw ~65 % of
the tools, as each fold's model sees ~(K-1)/K); one Syn draw and one trainer seed per fold; Syn's queries
are LLM-written (docs/syn.md), so this says nothing of real requests (the stage's MCP and Real blocks do).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
from bench_train_recipe import clustered_ci, clusters_of, tool_folds
from datasets import Dataset

from ecoagent.artifacts import ArtifactDir
from ecoagent.config import get_profile
from ecoagent.summary import cpu_model, print_table
from rated.config import TrainConfig
from rated.encoder import DualEncoder
from rated.evaluation.data import Catalog, naming_queries, pool_from_pairs
from rated.evaluation.significance import compare
from rated.train import (
    equivalent_tool_ids,
    fine_tune,
    held_out_sets,
    retrieval_scores,
    training_selection,
    triples_from_pairs,
)

SETS = {"unseen": "syn_tool_split_test", "unseen, not naming": "syn_tool_split_test_not_naming_tool"}


def fold_split(positives: pl.DataFrame, group: list[str]) -> pl.DataFrame:
    """``split_tool`` for one fold: the group's tools ``test``, every other tool ``train`` (the query
    split's test queries still never train: ``rated.train.train_rows``)."""
    return positives.with_columns(
        pl.when(pl.col("tool_id").is_in(group))
        .then(pl.lit("test"))
        .otherwise(pl.lit("train"))
        .alias("split_tool")
    )


def row(label: str, a: np.ndarray, b: np.ndarray, units: np.ndarray) -> tuple:
    test = compare(a, b, n_resamples=10_000, seed=0)
    low, high = clustered_ci(a - b, units)
    return (
        label,
        len(a),
        len(np.unique(units)),
        f"{b.mean():.3f} -> {a.mean():.3f}",
        f"{test.mean_diff:+.3f} [{test.ci_low:+.3f}, {test.ci_high:+.3f}]",
        f"[{low:+.3f}, {high:+.3f}]",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="a finished build folder (read only)")
    parser.add_argument("--folds", type=int, default=3)
    parser.add_argument("--fold-seed", type=int, default=0)
    parser.add_argument("--profile", default="embedded")
    args = parser.parse_args()

    profile = get_profile(args.profile)
    art = ArtifactDir(args.out)
    tools = pl.read_parquet(art.require(art.tools, "crawl"))
    positives = pl.read_parquet(art.require(art.syn_positives, "syn"))
    negatives = pl.read_parquet(art.syn_negatives) if art.syn_negatives.exists() else None
    mcp = pl.read_parquet(art.real_mcp_server_prompts) if art.real_mcp_server_prompts.exists() else None
    naming = naming_queries(art) or set()
    config = TrainConfig.for_profile(profile)
    catalog = Catalog.from_frame(tools)
    equivalents = equivalent_tool_ids(tools, profile) if config.mcp_server_share > 0 else None
    backbone = DualEncoder.from_backbones(
        config.query_encoder, config.tool_encoder, config.pooling, config.max_seq_length
    ).freeze()
    print(f"CPU: {cpu_model()}")
    print(
        f"build: {args.out}; {positives['tool_id'].n_unique()} Syn tools, {args.folds} folds (seed {args.fold_seed})"
    )

    pooled: dict[str, dict[str, list[np.ndarray]]] = {s: {"ft": [], "bb": [], "units": []} for s in SETS}
    rows = []
    started = time.perf_counter()
    for k, group in enumerate(tool_folds(positives, args.folds, args.fold_seed)):
        split = fold_split(positives, group)
        pairs, selection = training_selection(tools, split, negatives, config, mcp, equivalents)
        triples = triples_from_pairs(tools, pairs, config.hard_negatives)
        work = Path(tempfile.mkdtemp(prefix="unseen-tools-"))
        t0 = time.perf_counter()
        try:
            model, record = fine_tune(Dataset.from_polars(triples), None, config, work, backbone)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        tuned = DualEncoder(model, record["backbone_tools_key"]).freeze()
        sets = held_out_sets(split, set(pairs["tool_id"].to_list()), None, naming)
        pools = {short: pool_from_pairs(sets[long][0], catalog)[0] for short, long in SETS.items()}
        ft, bb = retrieval_scores(tuned, catalog, pools), retrieval_scores(backbone, catalog, pools)
        for short, pool in pools.items():
            a, b = ft[short].rr, bb[short].rr
            units = clusters_of(short, sets[SETS[short]][0], pool.query_ids)
            pooled[short]["ft"].append(a)
            pooled[short]["bb"].append(b)
            pooled[short]["units"].append(units)
            rows.append(row(f"fold {k + 1}: {short}", a, b, units))
        print(
            f"fold {k + 1}/{args.folds}: {len(group)} tools held out, {selection['syn_pairs']} Syn + "
            f"{selection['mcp_pairs']} MCP pairs, {record['steps']} steps, {time.perf_counter() - t0:.0f} s"
        )
    for short, parts in pooled.items():
        rows.append(
            row(
                f"pooled: {short}",
                np.concatenate(parts["ft"]),
                np.concatenate(parts["bb"]),
                np.concatenate(parts["units"]),
            )
        )
    print_table(
        [
            "set",
            "queries",
            "true tools",
            "MRR backbone -> fine-tuned",
            "gain [95 % CI, queries]",
            "CI, tools",
        ],
        rows,
        title=f"Fine-tuned vs backbone on unseen Syn tools, {args.folds}-fold cross-fitted "
        f"({time.perf_counter() - started:.0f} s)",
    )


if __name__ == "__main__":
    main()
