"""Benchmark of the train stage's recipe: does a longer or faster run move the encoder on unseen tools?

The train stage (``rated.train``) fine-tunes RATED's towers on the Syn pairs that are ``train`` in both
split columns. This retrains them on one or more finished builds with each recipe (epochs x learning
rate x which pairs) and ranks the whole catalog with the fine-tuned towers and the untrained backbone on

- ``unseen val``: ``split_tool == val``, tools no recipe trains on: **the set a recipe is chosen on**;
- ``unseen test``: ``split_tool == test``, what the stage reports (read it only after choosing);
- ``seen test``: ``split == test`` restricted to the training tools (the paper's setting);
- ``mcp server``: MCP server authors' example prompts, any record of the author's server a hit
  (``real/mcp_server_prompts.parquet``, when the build has it): real requests no LLM labelled; as in the
  stage, the prompts of servers with a record among the training tools are left out.

Per build and pooled over builds (the per-query reciprocal ranks of all builds together), it prints the
MRR of each recipe minus the backbone's, with Table 1's paired bootstrap interval over queries and,
pooled, one that resamples whole tools (MCP: servers). Several builds are several draws of Syn's queries;
builds of the default profile share their 100 tools (the sample is seeded), so pooling adds queries, not
tools: the interval over tools is the one that says whether a gain would carry to other tools.

    .venv/bin/python bench/bench_train_recipe.py --builds OUT1 OUT2 OUT3 \
        --recipes 1:2e-5,1:1e-5,1:5e-5,3:5e-5,1:1e-4,3:1e-4

A recipe is ``EPOCHS:LR`` with optional flags: ``:wide`` adds the query split's val queries of training
tools (``split_tool == train and split == val``: pairs no test set holds); ``:query`` trains the query
tower only (``TrainConfig.freeze_tool_tower``: the catalog's vectors stay the backbone's; the embedded
default), and a recipe without it trains both towers, as the paper does. Nothing is written to the builds.

``--folds K`` chooses on more tools than the split's val (8 on the default build): the tools outside the
tool-disjoint test (train and val, 66 on the default build) are cut into K seeded groups; each recipe is
trained K times, each time without one group's queries, and ranks that group's queries (all of them, every
split). The pooled rows are then one query set over all those tools, each scored by a model that never
saw its tool (``cv unseen``), with an interval that resamples tools. Test sets are not read in this mode.

    .venv/bin/python bench/bench_train_recipe.py --builds OUT --folds 5 --recipes 1:1e-5,1:2e-5,1:5e-5

``--train-seed S`` trains with another seed than the profile's (order of the pairs, random negatives), to
see how much of a difference between recipes is the trainer's own noise; ``--backbone NAME`` starts both
towers from another encoder (e.g. the packaged ``sentence-transformers/all-mpnet-base-v2``).

``--tool-fractions 1,0.5`` asks what more Syn buys: each recipe is also trained on a share of the
training tools (the first ones of a permutation seeded by ``--subsample-seed``, so smaller shares are
subsets of larger ones) and every share is judged on the same held-out sets, those of the whole share
(``mcp server`` leaves out the servers of every training tool, ``seen test`` holds the query-split test
of all of them).

    .venv/bin/python bench/bench_train_recipe.py --builds SYN200 --recipes 1:2e-5 --tool-fractions 1,0.5,0.25

``--interpolations 1,0.5`` asks whether less of the fine-tuning transfers better (WiSE-FT,
``rated.interpolation``): each trained model is also ranked with its weights moved that share of the way
from the backbone's (1 = as trained), without training again; each share is a row of its own.

    .venv/bin/python bench/bench_train_recipe.py --builds OUT1 OUT2 --recipes 1:2e-5 --interpolations 1,0.75,0.5
"""

from __future__ import annotations

import argparse
import copy
import itertools
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir
from ecoagent.config import get_profile
from ecoagent.summary import cpu_model, print_table
from rated.config import TrainConfig
from rated.encoder import DualEncoder
from rated.evaluation.data import Catalog, naming_queries, pool_from_pairs
from rated.evaluation.significance import compare
from rated.interpolation import interpolate_weights
from rated.train import fine_tune, held_out_sets, retrieval_scores, train_rows, training_triples
from validators.mcp_prompts import PROMPT_SCHEMA

SETS = ("cv unseen", "unseen val", "unseen test", "unseen test, not naming", "seen test", "mcp server")


def held_out(positives: pl.DataFrame, naming: set[str], mcp_server: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """The query sets above, as (query_id, query, tool_id) pairs: the train stage's own held-out sets
    (``rated.train.held_out_sets``) under shorter names, and the tool-disjoint val to choose on."""
    train_tools = set(positives.filter(train_rows(positives))["tool_id"].to_list())
    stage = held_out_sets(positives, train_tools, None, naming, mcp_server)
    names = {
        "unseen test": "syn_tool_split_test",
        "unseen test, not naming": "syn_tool_split_test_not_naming_tool",
        "seen test": "syn_query_split_test_seen_tools",
        "mcp server": "mcp_server_prompts",
    }
    val = positives.filter(pl.col("split_tool") == "val").select("query_id", "query", "tool_id")
    return {"unseen val": val} | {short: stage[long][0] for short, long in names.items() if long in stage}


def share_of_tools(positives: pl.DataFrame, fraction: float, seed: int) -> pl.DataFrame:
    """``positives`` with only ``fraction`` of the training tools (``split_tool == train``) left
    ``train``: the first ones of a seeded permutation, so a smaller share is a subset of a larger one.
    The others become ``dropped``, which no training or held-out set reads."""
    if fraction >= 1:
        return positives
    tools = sorted(set(positives.filter(pl.col("split_tool") == "train")["tool_id"].to_list()))
    keep = max(1, round(fraction * len(tools)))
    order = np.random.default_rng(seed).permutation(len(tools))
    kept = sorted(tools[i] for i in order[:keep])
    dropped = (pl.col("split_tool") == "train") & ~pl.col("tool_id").is_in(kept)
    return positives.with_columns(
        pl.when(dropped).then(pl.lit("dropped")).otherwise(pl.col("split_tool")).alias("split_tool")
    )


def clusters_of(name: str, frame: pl.DataFrame, query_ids: list[str]) -> np.ndarray:
    """The unit each query shares with others: its tool (Syn: the builds share their 100 tools, so
    their queries of one tool are not independent) or, for MCP prompts, its server."""
    if name == "mcp server":  # ids are mcp:<server>:<example index> (validators.mcp_prompts)
        return np.array([q.split(":", 1)[1].rsplit(":", 1)[0] for q in query_ids])
    first = dict(frame.group_by("query_id").agg(pl.col("tool_id").min()).iter_rows())
    return np.array([first[q] for q in query_ids])


def clustered_ci(
    diff: np.ndarray, clusters: np.ndarray, n: int = 10_000, seed: int = 0
) -> tuple[float, float]:
    """95% interval of the mean difference, resampling whole clusters (tools or servers) with replacement."""
    keys, inverse = np.unique(clusters, return_inverse=True)
    sums = np.bincount(inverse, weights=diff, minlength=len(keys))
    counts = np.bincount(inverse, minlength=len(keys)).astype(np.float64)
    pick = np.random.default_rng(seed).integers(0, len(keys), size=(n, len(keys)))
    means = sums[pick].sum(axis=1) / counts[pick].sum(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def reciprocal_ranks(encoder: DualEncoder, catalog: Catalog, pools: dict) -> dict[str, np.ndarray]:
    """Per-query reciprocal rank (MRR@100, Table 1's cut) of each set, ranking the whole catalog."""
    return {name: scores.rr for name, scores in retrieval_scores(encoder, catalog, pools).items()}


def cv_pairs(positives: pl.DataFrame) -> pl.DataFrame:
    """The pairs of the tools outside the tool-disjoint test: what ``--folds`` trains and ranks on."""
    return positives.filter(pl.col("split_tool") != "test").select("query_id", "query", "tool_id")


def tool_folds(cv: pl.DataFrame, folds: int, seed: int = 0) -> list[list[str]]:
    """The tools of ``cv`` (``cv_pairs``, or any frame with a ``tool_id`` column), shuffled with ``seed``
    and dealt into ``folds`` groups."""
    tools = sorted(set(cv["tool_id"].to_list()))
    if folds < 2 or folds > len(tools):
        raise SystemExit(f"--folds {folds}: need 2 to {len(tools)} (the tools dealt into folds)")
    order = np.random.default_rng(seed).permutation(len(tools))
    return [sorted(tools[i] for i in order[k::folds]) for k in range(folds)]


def hold_out_fold(positives: pl.DataFrame, fold: list[str]) -> pl.DataFrame:
    """``split_tool`` relabelled for one fold: its tools ``val`` (never trained on), every other tool
    outside the test split ``train`` (the split's own val tools included), test tools left as they are."""
    return positives.with_columns(
        pl.when(pl.col("split_tool") == "test")
        .then(pl.lit("test"))
        .when(pl.col("tool_id").is_in(fold))
        .then(pl.lit("val"))
        .otherwise(pl.lit("train"))
        .alias("split_tool")
    )


def train_and_rank(
    tools: pl.DataFrame,
    positives: pl.DataFrame,
    negatives: pl.DataFrame | None,
    config: TrainConfig,
    catalog: Catalog,
    pools: dict,
    backbone: DualEncoder,
    shares: list[float],
) -> tuple[dict[float, dict[str, np.ndarray]], dict[str, Any], float]:
    """Fine-tune on ``positives``' train rows (``rated.train.training_triples``) and rank ``pools`` with
    the result moved ``share`` of the way from ``backbone`` (``rated.interpolation``; 1 = as trained), for
    each share: reciprocal ranks per share and pool, the trainer's record, training seconds."""
    from datasets import Dataset

    triples = training_triples(tools, positives, negatives, config)
    work = Path(tempfile.mkdtemp(prefix="train-recipe-"))
    started = time.perf_counter()
    try:
        model, record = fine_tune(Dataset.from_polars(triples), None, config, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.perf_counter() - started
    # a frozen tool tower left training bit-identical (fine_tune checks it and names the backbone's key):
    # its catalog vectors are the cached ones, for every share (the move leaves an unchanged tower as it is)
    tools_key = record["backbone_tools_key"]
    ranks = {}
    for share in sorted(shares, reverse=True):  # 1 first: the trained weights before any move
        moved = model if share == 1 else interpolate_weights(copy.deepcopy(model), backbone.model, share)
        ranks[share] = reciprocal_ranks(DualEncoder(moved, tools_key).freeze(), catalog, pools)
    return ranks, record, seconds


def parse_recipe(text: str) -> tuple[float, float, bool, bool]:
    """``EPOCHS:LR`` with optional flags ``:wide`` and ``:query``: (epochs, lr, wide, query tower only)."""
    parts = text.split(":")
    flags = set(parts[2:])
    if len(parts) < 2 or len(flags) != len(parts) - 2 or not flags <= {"wide", "query"}:
        raise SystemExit(f"recipe {text!r}: expected EPOCHS:LR with optional :wide and :query")
    return float(parts[0]), float(parts[1]), "wide" in flags, "query" in flags


def widen(positives: pl.DataFrame) -> pl.DataFrame:
    """Relabel the query split's val queries of training tools as train, so ``training_triples`` takes them."""
    extra = (pl.col("split_tool") == "train") & (pl.col("split") == "val")
    return positives.with_columns(
        pl.when(extra).then(pl.lit("train")).otherwise(pl.col("split")).alias("split")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--builds", nargs="+", type=Path, required=True, help="finished build folders")
    parser.add_argument("--recipes", default="1:2e-5,1:1e-5,1:5e-5,3:5e-5")
    parser.add_argument("--profile", default="embedded")
    parser.add_argument(
        "--folds", type=int, default=0, help="cross-validate over the non-test tools (0: off)"
    )
    parser.add_argument("--fold-seed", type=int, default=0)
    parser.add_argument(
        "--train-seed", type=int, default=None, help="the trainer's seed (default: the profile's)"
    )
    parser.add_argument(
        "--tool-fractions", default="1", help="shares of the training tools to train on, e.g. 1,0.5,0.25"
    )
    parser.add_argument("--subsample-seed", type=int, default=0)
    parser.add_argument(
        "--interpolations",
        default="1",
        help="shares of the fine-tuning kept (rated.interpolation), e.g. 1,0.5: each trained model is also "
        "ranked with its weights moved that far from the backbone's (1 = as trained)",
    )
    parser.add_argument(
        "--backbone", default=None, help="both towers' backbone instead of the profile's, e.g. mpnet's name"
    )
    args = parser.parse_args()

    recipes = [parse_recipe(r) for r in args.recipes.split(",")]
    fractions = [float(f) for f in args.tool_fractions.split(",")]
    try:
        shares = [float(x) for x in args.interpolations.split(",")]
    except ValueError as err:
        raise SystemExit(f"--interpolations {args.interpolations!r}: {err}") from None
    if any(not 0 < x <= 1 for x in shares):
        raise SystemExit(f"--interpolations {args.interpolations!r}: shares in (0, 1]")
    if any(not 0 < f <= 1 for f in fractions) or (args.folds and fractions != [1.0]):
        raise SystemExit("--tool-fractions: shares in (0, 1], and only without --folds")
    profile = get_profile(args.profile)
    towers = {"query_encoder": args.backbone, "tool_encoder": args.backbone}  # None keeps the profile's
    print(f"CPU: {cpu_model()}")
    pooled: dict[tuple[str, str], list[np.ndarray]] = {}
    clusters: dict[str, list[np.ndarray]] = {}
    rows = []
    for build in args.builds:
        art = ArtifactDir(build)
        tools = pl.read_parquet(art.require(art.tools, "crawl"))  # a folder without them: says which stage
        positives = pl.read_parquet(art.require(art.syn_positives, "syn"))
        negatives = pl.read_parquet(art.syn_negatives) if art.syn_negatives.exists() else None
        catalog = Catalog.from_frame(tools)
        server = (
            pl.read_parquet(art.real_mcp_server_prompts)
            if art.real_mcp_server_prompts.exists()
            else pl.DataFrame(schema=PROMPT_SCHEMA)
        )
        if args.folds:
            cv = cv_pairs(positives)
            sets = {"cv unseen": cv}
        else:
            sets = held_out(positives, naming_queries(art) or set(), server)
        pools = {k: pool_from_pairs(v, catalog)[0] for k, v in sets.items()}
        pools = {k: p for k, p in pools.items() if len(p)}  # a build without the MCP set leaves it out
        for name, pool in pools.items():
            clusters.setdefault(name, []).append(clusters_of(name, sets[name], pool.query_ids))
        base_cfg = TrainConfig.for_profile(profile, **towers)
        backbone = DualEncoder.from_backbones(
            base_cfg.query_encoder, base_cfg.tool_encoder, base_cfg.pooling, base_cfg.max_seq_length
        ).freeze()
        base_rr = reciprocal_ranks(backbone, catalog, pools)
        for name in pools:
            pooled.setdefault(("backbone", name), []).append(base_rr[name])
        for (epochs, lr, wide, query_only), fraction in itertools.product(recipes, fractions):
            label = f"{epochs:g} ep, lr {lr:g}" + (", wide" if wide else "")
            label += ", query tower only" if query_only else ""
            label += f", {fraction:.0%} of tools" if fractions != [1.0] else ""
            config = TrainConfig.for_profile(
                profile,
                epochs=epochs,
                learning_rate=lr,
                max_steps=100_000,
                seed=args.train_seed,
                freeze_tool_tower=query_only,
                # this bench compares recipes on the pairs train in both splits (its held-out sets assume
                # it); issue #54's selection (syn_rows="tool_train" + MCP prompts) is measured by the stage
                syn_rows="both_train",
                mcp_server_share=0.0,
                **towers,
            )
            if args.folds:
                by_query: dict[float, dict[str, float]] = {share: {} for share in shares}
                steps = examples = 0
                seconds = 0.0
                for k, fold in enumerate(tool_folds(cv, args.folds, args.fold_seed)):
                    fold_pos = hold_out_fold(positives, fold)
                    fold_pos = widen(fold_pos) if wide else fold_pos
                    fold_pool = pool_from_pairs(cv.filter(pl.col("tool_id").is_in(fold)), catalog)[0]
                    rr_k, record, secs = train_and_rank(
                        tools, fold_pos, negatives, config, catalog, {"fold": fold_pool}, backbone, shares
                    )
                    for share, ranks in rr_k.items():
                        by_query[share].update(zip(fold_pool.query_ids, ranks["fold"].tolist(), strict=True))
                    steps += record["steps"]
                    examples += record["train_examples"]
                    seconds += secs
                    print(
                        f"{build}: {label}: fold {k + 1}/{args.folds} ({len(fold)} tools): {record['steps']} steps, {secs:.0f} s",
                        flush=True,
                    )
                ids = pools["cv unseen"].query_ids
                by_share = {s: {"cv unseen": np.array([by_query[s][q] for q in ids])} for s in shares}
                record = {"steps": f"{steps} in {args.folds} folds", "train_examples": examples}
            else:
                train_pos = share_of_tools(positives, fraction, args.subsample_seed)
                train_pos = widen(train_pos) if wide else train_pos
                by_share, record, seconds = train_and_rank(
                    tools, train_pos, negatives, config, catalog, pools, backbone, shares
                )
            for share in shares:
                rr = by_share[share]
                row_label = label + (f", {share:g} of the way" if shares != [1.0] else "")
                for name in pools:
                    pooled.setdefault((row_label, name), []).append(rr[name])
                    test = compare(rr[name], base_rr[name], n_resamples=10_000, seed=0)
                    rows.append(
                        (
                            build.name if build.name != "out" else str(build),
                            row_label,
                            record["steps"],
                            record["train_examples"],
                            f"{seconds:.0f}",
                            name,
                            len(rr[name]),
                            f"{float(base_rr[name].mean()):.3f}",
                            f"{float(rr[name].mean()):.3f}",
                            f"{test.mean_diff:+.3f} [{test.ci_low:+.3f}, {test.ci_high:+.3f}]",
                        )
                    )
            print(f"{build}: {label}: {record['steps']} steps, {seconds:.0f} s", flush=True)
    print_table(
        [
            "build",
            "recipe",
            "steps",
            "pairs",
            "train s",
            "set",
            "queries",
            "backbone MRR",
            "tuned MRR",
            "gain [95% CI]",
        ],
        rows,
        title="Per build: fine-tuned minus backbone, MRR@100 over the whole catalog",
    )
    labels = [label for label in dict.fromkeys(k[0] for k in pooled) if label != "backbone"]
    notes = []
    if args.folds:
        notes.append(f"cv unseen: {args.folds} folds over the non-test tools, fold seed {args.fold_seed}")
    if fractions != [1.0]:
        notes.append(f"shares of the training tools seeded {args.subsample_seed}")
    if args.train_seed is not None:
        notes.append(f"trainer seed {args.train_seed}")
    if args.backbone:
        notes.append(f"backbone {args.backbone}")
    title = f"Pooled over {len(args.builds)} builds (each a draw of Syn's data)" + "".join(
        f"; {n}" for n in notes
    )
    head = ["recipe", "set", "queries", "{ref} MRR", "recipe MRR"]
    head += ["gain [95% CI over queries]", "95% CI over tools / servers (how many)", "builds won"]
    print_table(
        [h.format(ref="backbone") for h in head],
        pooled_against(pooled, clusters, labels, "backbone"),
        title=f"{title}: fine-tuned minus backbone",
    )
    if len(labels) > 1:  # the choice itself: each recipe against the first one listed
        print_table(
            [h.format(ref="first recipe") for h in head],
            pooled_against(pooled, clusters, labels[1:], labels[0]),
            title=f"{title}: each recipe minus {labels[0]}",
        )


def pooled_against(
    pooled: dict[tuple[str, str], list[np.ndarray]],
    clusters: dict[str, list[np.ndarray]],
    labels: list[str],
    reference: str,
) -> list[tuple]:
    """Rows of pooled per-query differences ``label - reference`` on each set: MRRs, the paired bootstrap
    interval over queries, the one over tools (MCP: servers), and in how many builds ``label`` was ahead."""
    rows = []
    for label in labels:
        for name in [n for n in SETS if (label, n) in pooled]:
            a = np.concatenate(pooled[(label, name)])
            b = np.concatenate(pooled[(reference, name)])
            test = compare(a, b, n_resamples=10_000, seed=0)
            units = np.concatenate(clusters[name])
            low, high = clustered_ci(a - b, units)
            rows.append(
                (
                    label,
                    name,
                    len(a),
                    f"{float(b.mean()):.3f}",
                    f"{float(a.mean()):.3f}",
                    f"{test.mean_diff:+.3f} [{test.ci_low:+.3f}, {test.ci_high:+.3f}]",
                    f"[{low:+.3f}, {high:+.3f}] ({len(np.unique(units))})",
                    sum(
                        1
                        for x, y in zip(pooled[(label, name)], pooled[(reference, name)], strict=True)
                        if x.mean() > y.mean()
                    ),
                )
            )
    return rows


if __name__ == "__main__":
    main()
