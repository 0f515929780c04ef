"""The train stage: fine-tune RATED's dual encoder on EcoAgent-Syn train and save it to ``DIR/model/``.

In-batch InfoNCE (MultipleNegativesRankingLoss, scale 20 = 1 / tau with tau = 0.05) over (query, tool,
mined hard negative) triples, through the sentence-transformers trainer with a Router mapping the query
column to the query tower and the tool columns to the tool tower. The paper's recipe trains on the Syn
queries that are ``train`` in BOTH split columns (``split``, the paper's query split, and ``split_tool``,
the tool-disjoint one), so neither test set is seen. The CPU recipe (``TrainConfig.syn_rows =
"tool_train"``, ``mcp_server_share``) trains on every query of the tool-disjoint train tools but the query
split's test ones, plus the MCP authors' prompts of a seeded half of the servers with no record among (or
equivalent to) a tool-disjoint val/test tool; no held-out tool is a positive or a negative and no
held-out query's text trains (``training_selection``). Syn val is evaluated before, during and after training, and the
fine-tuned encoder is compared with its untrained backbone on held-out data (``held_out_comparison``),
so the gain of fine-tuning is on record next to the model. The embedded profile trains the query tower
only (``TrainConfig.freeze_tool_tower``): the catalog's vectors stay the backbone's, which carried better to
real requests than moving both towers (docs/decisions.md, D3); its vectors are read once, not run in
every step (``rated.frozen_tower``).
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json
from ecoagent.config import Profile
from ecoagent.embeddings import BATCH_SIZE
from ecoagent.models import encoder_provenance, file_sha256
from ecoagent.progress import Progress
from ecoagent.schemas import tool_documents
from rated.config import TrainConfig

if TYPE_CHECKING:
    from datasets import Dataset
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

log = logging.getLogger(__name__)

STAGE = "train"
VAL_NAME = "syn-val"


SPLIT_COLUMNS = ("split", "split_tool")  # the query split (the paper's) and the tool-disjoint split


def _split_columns(frame: pl.DataFrame) -> list[str]:
    return [c for c in SPLIT_COLUMNS if c in frame.columns]


def train_rows(frame: pl.DataFrame, syn_rows: str = "both_train") -> pl.Expr:
    """Syn rows that may train the encoder (``TrainConfig.syn_rows``).

    ``both_train``: ``train`` in every split column the table has, so no test set (query or tool) saw them.
    ``tool_train``: every query of a tool in the tool-disjoint train split (``split_tool == train``) except
    the query split's test queries, which Table 1's query-split rows are measured on; its val queries
    train too, so validation is then the tool-disjoint val tools' queries (``val_rows``).
    """
    cols = _split_columns(frame)
    if not cols:
        raise ValueError("the Syn table has no split column (expected 'split' and 'split_tool')")
    if syn_rows == "tool_train" and "split_tool" in cols:
        keep = pl.col("split_tool") == "train"
        return keep & (pl.col("split") != "test") if "split" in cols else keep
    return pl.all_horizontal([pl.col(c) == "train" for c in cols])


def val_rows(frame: pl.DataFrame, syn_rows: str = "both_train") -> pl.Expr:
    """Rows that are ``val`` in some split column and ``test`` in none: validation that no test set holds;
    with ``tool_train`` only the tool-disjoint val tools' rows (the others train)."""
    cols = _split_columns(frame)
    if not cols:
        raise ValueError("the Syn table has no split column (expected 'split' and 'split_tool')")
    no_test = ~pl.any_horizontal([pl.col(c) == "test" for c in cols])
    if syn_rows == "tool_train" and "split_tool" in cols:
        return (pl.col("split_tool") == "val") & no_test
    return pl.any_horizontal([pl.col(c) == "val" for c in cols]) & no_test


def held_out_tools(positives: pl.DataFrame, equivalents: dict[str, set[str]] | None = None) -> set[str]:
    """Tools of the tool-disjoint val and test splits, with their cross-platform equivalents (which
    Table 1 counts as true tools of those queries): no training text may be theirs."""
    if "split_tool" not in positives.columns:
        return set()
    out = set(positives.filter(pl.col("split_tool") != "train")["tool_id"].to_list())
    for t in list(out):
        out |= set((equivalents or {}).get(t, ()))
    return out


def _share_bucket(key: str, seed: int) -> float:
    """A stable number in [0, 1) from ``key`` and ``seed`` (the same key and seed, the same number)."""
    import hashlib

    digest = hashlib.sha256(f"{seed}:mcp-train:{key}".encode()).digest()[:8]
    return int.from_bytes(digest, "big") / 2**64


def mcp_training_servers(
    mcp_server: pl.DataFrame | None, held_out: set[str], share: float, seed: int
) -> set[str]:
    """MCP servers whose authors' prompts train: a seeded ``share`` of the servers none of whose records is
    in ``held_out`` (the tool-disjoint val/test tools and their equivalents)."""
    if mcp_server is None or not mcp_server.height or share <= 0:
        return set()
    blocked = mcp_server.filter(
        mcp_server["tool_ids"].list.eval(pl.element().is_in(sorted(held_out))).list.any()
    )
    eligible = set(mcp_server["server"].to_list()) - set(blocked["server"].to_list())
    return {s for s in eligible if _share_bucket(s, seed) < share}


def _norm(text: str) -> str:
    return " ".join(str(text).lower().split())


def _words(text: str) -> set[str]:
    import re

    return set(re.findall(r"[a-z0-9]+", text.lower()))


def training_selection(
    tools: pl.DataFrame,
    positives: pl.DataFrame,
    negatives: pl.DataFrame | None,
    config: TrainConfig,
    mcp_server: pl.DataFrame | None = None,
    equivalents: dict[str, set[str]] | None = None,
) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The training pairs (``query_id``, ``query``, ``tool_id``, ``negative_id``, ``source``) and a record of
    what they hold.

    Syn: the rows of ``train_rows(positives, config.syn_rows)``; each pair's negative is Syn's hard
    negative, else its random one, else a seeded random tool. MCP (``config.mcp_server_share`` > 0): every
    prompt of the servers ``mcp_training_servers`` picks, its positive being the server record whose
    document shares the most words with the prompt (ties: smallest id), its negative a seeded random tool
    of another server. No tool-disjoint val/test tool (or equivalent of one) is a positive or a negative,
    no record of an MCP server not trained on is a negative, and no training query has the text of a
    held-out Syn query or MCP prompt. Rows are sampled down to ``config.max_train_examples`` with the seed.
    """
    docs = dict(zip(tools["tool_id"].to_list(), tool_documents(tools), strict=True))
    held = held_out_tools(positives, equivalents)
    servers = mcp_training_servers(mcp_server, held, config.mcp_server_share, config.seed)
    held_prompts: set[str] = set()
    # records of the servers whose prompts stay held out: never a negative (a Syn training tool among them
    # stays a positive; the held-out MCP set then leaves that server out, ``held_out_sets``)
    untrained_records: set[str] = set()
    if mcp_server is not None and mcp_server.height:
        untrained = mcp_server.filter(~pl.col("server").is_in(sorted(servers)))
        untrained_records = set(untrained.explode("tool_ids")["tool_ids"].drop_nulls().to_list())
        held_prompts = {_norm(q) for q in untrained["query"].to_list()}
    keep = train_rows(positives, config.syn_rows)
    held_queries = {_norm(q) for q in positives.filter(~keep)["query"].to_list()} | held_prompts
    syn = (
        positives.filter(keep)
        .filter(pl.col("tool_id").is_in(list(docs)) & ~pl.col("tool_id").is_in(sorted(held)))
        .filter(~pl.col("query").map_elements(_norm, return_dtype=pl.String).is_in(sorted(held_queries)))
        .select("query_id", "query", "tool_id")
        .unique(["query_id", "tool_id"])
        .sort("query_id", "tool_id")
        .with_columns(pl.lit("syn").alias("source"))
    )
    if syn.height == 0:
        raise ValueError(
            "EcoAgent-Syn has no training pairs (rows of the training split whose tool is in tools.parquet)"
        )
    frames = [syn]
    if servers:
        rows = []
        prompts = mcp_server.filter(pl.col("server").is_in(sorted(servers))).sort("query_id")  # type: ignore[union-attr]
        for qid, query, ids in prompts.select("query_id", "query", "tool_ids").iter_rows():
            if _norm(query) in held_queries:
                continue
            known = sorted(t for t in (ids or []) if t in docs and t not in held)
            if not known:
                continue
            words = _words(query)
            best = max(known, key=lambda t: (len(words & _words(docs[t])), -known.index(t)))
            rows.append((qid, query, best))
        if rows:
            frames.append(
                pl.DataFrame(rows, schema=["query_id", "query", "tool_id"], orient="row").with_columns(
                    pl.lit("mcp").alias("source")
                )
            )
    train = pl.concat(frames)
    rng = np.random.default_rng([config.seed, 0x7A1])
    if config.max_train_examples is not None and train.height > config.max_train_examples:
        keep_rows = np.sort(rng.choice(train.height, size=config.max_train_examples, replace=False))
        train = train[keep_rows.tolist()]
    picked: dict[tuple[str, str], str] = {}
    if negatives is not None and negatives.height:
        ranked = (
            negatives.filter(
                pl.col("tool_id").is_in(list(docs))
                & ~pl.col("tool_id").is_in(sorted(held | untrained_records))
            )
            .with_columns(pl.when(pl.col("kind") == "hard").then(0).otherwise(1).alias("_order"))
            .sort(
                "query_id",
                "positive_tool_id",
                "_order",
                pl.col("score"),
                descending=[False, False, False, True],
            )
            .unique(["query_id", "positive_tool_id"], keep="first", maintain_order=True)
        )
        picked = {
            (q, p): t for q, p, t in ranked.select("query_id", "positive_tool_id", "tool_id").iter_rows()
        }
    pool = [t for t in tools["tool_id"].to_list() if t not in held and t not in untrained_records]
    server_of: dict[str, set[str]] = {}
    if servers:
        for qid, ids in mcp_server.select("query_id", "tool_ids").iter_rows():  # type: ignore[union-attr]
            server_of[qid] = set(ids or [])
    negs = []
    for q, t, src in train.select("query_id", "tool_id", "source").iter_rows():
        neg = picked.get((q, t)) if src == "syn" else None
        avoid = server_of.get(q, set()) if src == "mcp" else {t}
        while neg is None or neg == t or neg in avoid:
            neg = pool[int(rng.integers(len(pool)))]
        negs.append(neg)
    train = train.with_columns(pl.Series("negative_id", negs, dtype=pl.String))
    record = {
        "syn_rows": config.syn_rows,
        "syn_pairs": int((train["source"] == "syn").sum()),
        "mcp_pairs": int((train["source"] == "mcp").sum()),
        "syn_tools": int(train.filter(pl.col("source") == "syn")["tool_id"].n_unique()),
        "mcp_servers": sorted(servers),
        "held_out_tools": len(held),
    }
    return train, record


def training_triples(
    tools: pl.DataFrame,
    positives: pl.DataFrame,
    negatives: pl.DataFrame | None,
    config: TrainConfig,
    mcp_server: pl.DataFrame | None = None,
    equivalents: dict[str, set[str]] | None = None,
) -> pl.DataFrame:
    """``anchor`` (query), ``positive`` (its tool's document), ``negative`` (a mined negative's document):
    the pairs of ``training_selection`` as texts (no ``negative`` column without ``config.hard_negatives``)."""
    pairs, _ = training_selection(tools, positives, negatives, config, mcp_server, equivalents)
    return triples_from_pairs(tools, pairs, config.hard_negatives)


def triples_from_pairs(tools: pl.DataFrame, pairs: pl.DataFrame, hard_negatives: bool = True) -> pl.DataFrame:
    """``training_selection``'s pairs as the trainer's text columns (tool ids replaced by documents)."""
    docs = dict(zip(tools["tool_id"].to_list(), tool_documents(tools), strict=True))
    frame = pl.DataFrame(
        {
            "anchor": pairs["query"],
            "positive": [docs[t] for t in pairs["tool_id"]],
            "negative": [docs[t] for t in pairs["negative_id"]],
        }
    )
    return frame if hard_negatives else frame.drop("negative")


def validation_evaluator(
    tools: pl.DataFrame,
    positives: pl.DataFrame,
    negatives: pl.DataFrame | None,
    config: TrainConfig,
    corpus_vectors: Callable[[list[str]], np.ndarray] | None = None,
) -> InformationRetrievalEvaluator | None:
    """Retrieval on Syn val (MRR@10, Recall@k, nDCG@10) with the query tower on queries, tool tower on tools.

    The corpus holds every relevant and mined-negative tool of the sampled queries, topped up with
    random tools to ``config.max_val_corpus`` (all tools when ``None``). ``None`` when Syn has no val split.
    With ``corpus_vectors`` (documents -> the frozen tool tower's vectors) the corpus is encoded once
    (``rated.frozen_tower.FrozenCorpusEvaluator``), not in each of the three validation runs.
    """
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    docs = dict(zip(tools["tool_id"].to_list(), tool_documents(tools), strict=True))
    val = positives.filter(val_rows(positives, config.syn_rows) & pl.col("tool_id").is_in(list(docs)))
    if val.height == 0:
        return None
    rng = np.random.default_rng([config.seed, 0x7A2])
    qids = sorted(set(val["query_id"].to_list()))
    if len(qids) > config.max_val_queries:
        qids = sorted(rng.choice(qids, size=config.max_val_queries, replace=False).tolist())
    val = val.filter(pl.col("query_id").is_in(qids))
    queries = dict(zip(val["query_id"], val["query"], strict=True))
    relevant: dict[str, set[str]] = {}
    for q, t in val.select("query_id", "tool_id").iter_rows():
        relevant.setdefault(q, set()).add(t)
    if config.max_val_corpus is None:
        corpus_ids = list(docs)
    else:
        must = set(val["tool_id"].to_list())
        if negatives is not None and negatives.height:
            must |= set(negatives.filter(pl.col("query_id").is_in(qids))["tool_id"].to_list()) & set(docs)
        rest = sorted(set(docs) - must)
        extra = max(0, config.max_val_corpus - len(must))
        fill = rng.choice(len(rest), size=min(extra, len(rest)), replace=False).tolist() if rest else []
        corpus_ids = sorted(must) + [rest[k] for k in sorted(fill)]
    kwargs: dict[str, Any] = dict(
        queries=queries,
        corpus={t: docs[t] for t in corpus_ids},
        relevant_docs=relevant,
        name=VAL_NAME,
        mrr_at_k=[10],
        ndcg_at_k=[10],
        accuracy_at_k=[1, 10],
        precision_recall_at_k=[1, 10],
        map_at_k=[10],
        write_csv=False,
        batch_size=BATCH_SIZE,
    )
    if corpus_vectors is None:
        return InformationRetrievalEvaluator(**kwargs)
    from rated.frozen_tower import FrozenCorpusEvaluator

    return FrozenCorpusEvaluator(corpus_vectors([docs[t] for t in corpus_ids]), **kwargs)


def _val_summary(metrics: dict[str, float]) -> dict[str, float]:
    """MRR@10 / Recall@1 / Recall@10 / nDCG@10 out of the evaluator's long metric names."""
    names = {"mrr@10": "mrr@10", "recall@1": "recall@1", "recall@10": "recall@10", "ndcg@10": "ndcg@10"}
    out = {}
    for short, suffix in names.items():
        hits = [v for k, v in metrics.items() if k.endswith(f"_{suffix}")]
        if hits:
            out[short] = float(hits[0])
    return out


SMOKE_QUERIES = 100  # as the evaluation: a held-out set under this many distinct queries is a smoke test


HELD_OUT_VERSION = "h2"  # h2: the MCP prompts leave out trained servers; a change re-runs the stage
# t2: a frozen tool tower's vectors read once from the backbone's cache (``rated.frozen_tower``)
TRAIN_VERSION = "t2"


def held_out_sets(
    positives: pl.DataFrame,
    train_tools: set[str],
    real_pairs: pl.DataFrame | None,
    naming: set[str] | None = None,
    mcp_server: pl.DataFrame | None = None,
    mcp_trained: set[str] | None = None,
) -> dict[str, tuple[pl.DataFrame, str]]:
    """The held-out (query_id, query, tool_id) pairs the fine-tuned encoder is judged on, with a description.

    ``syn_tool_split_test``: ``split_tool == test`` (its tools never appear in training);
    ``syn_tool_split_test_not_naming_tool``: the same without the queries in ``naming`` (Syn's
    ``names_tool``), which an encoder can find by the tool's name alone, so a gain here rests on the
    request itself;
    ``syn_query_split_test_seen_tools``: ``split == test`` restricted to tools the training pairs hold
    (the paper's setting: new queries for known tools); ``real_test``: Real's test split;
    ``mcp_server_prompts``: MCP server authors' example prompts (``mcp_server``, one row per prompt with a
    ``tool_ids`` list), a hit being any record of the author's server: real requests whose labels no LLM
    and no retriever chose; prompts of servers with a record among ``train_tools`` and of the servers in
    ``mcp_trained`` (whose prompts trained) are left out.
    """
    cols = ["query_id", "query", "tool_id"]
    out: dict[str, tuple[pl.DataFrame, str]] = {}
    if "split_tool" in positives.columns:
        out["syn_tool_split_test"] = (
            positives.filter(pl.col("split_tool") == "test").select(cols),
            "Syn, tool-disjoint split, test (tools unseen in training)",
        )
        if naming is not None:
            out["syn_tool_split_test_not_naming_tool"] = (
                positives.filter(
                    (pl.col("split_tool") == "test") & ~pl.col("query_id").is_in(sorted(naming))
                ).select(cols),
                "Syn, tool-disjoint split, test, without the queries that name their tool",
            )
    out["syn_query_split_test_seen_tools"] = (
        positives.filter((pl.col("split") == "test") & pl.col("tool_id").is_in(sorted(train_tools))).select(
            cols
        ),
        "Syn, query split, test, restricted to tools seen in training (the paper's setting)",
    )
    if real_pairs is not None:
        out["real_test"] = (
            real_pairs.filter(pl.col("split") == "test").select(cols),
            "Real (ToolBench queries), test split",
        )
    if mcp_server is not None and mcp_server.height:
        from rated.evaluation.data import prompt_pairs

        # a prompt of a server whose record the towers trained on is found through that record's own
        # Syn queries: not held out (9 of 870 prompts, 3 servers, in the default build of 2026-12-05)
        trained = mcp_server["tool_ids"].list.eval(pl.element().is_in(sorted(train_tools))).list.any()
        if mcp_trained:
            trained = trained | mcp_server["server"].is_in(sorted(mcp_trained))
        prompts = mcp_server.filter(~trained)
        if prompts.height:
            left = mcp_server.height - prompts.height
            out["mcp_server_prompts"] = (
                prompt_pairs(prompts),
                "MCP server authors' example prompts, any record of the author's server counts; "
                f"servers trained on or with a record in training left out ({left} of {mcp_server.height} "
                "prompts)",
            )
    return out


def retrieval_scores(encoder: Any, catalog: Any, pools: dict[str, Any]) -> dict[str, Any]:
    """Table 1's per-query scores (``RetrievalScores``) of one ``DualEncoder`` on each non-empty pool,
    ranking the whole ``Catalog``; the tool tower encodes the catalog once for all pools."""
    from rated.evaluation.metrics import RetrievalScores
    from rated.evaluation.offline import rankings_from_scores

    tool_emb = encoder.encode_tools(catalog.documents)
    return {
        name: RetrievalScores.compute(
            rankings_from_scores((encoder.encode_queries(pool.queries) @ tool_emb.T).astype(np.float64)),
            pool.relevant,
        )
        for name, pool in pools.items()
        if len(pool)
    }


def held_out_comparison(
    tools: pl.DataFrame,
    sets: dict[str, tuple[pl.DataFrame, str]],
    encoders: dict[str, Any],
    n_resamples: int = 10_000,
) -> dict[str, Any]:
    """MRR@100, nDCG@10, Recall@1/5 of each encoder on each held-out set, ranking the whole catalog.

    The metrics and the ranking cut are Table 1's (``rated.evaluation``), so the numbers agree with the
    evaluation report's "encoder only" rows on the same split. ``encoders``: name -> ``DualEncoder``;
    the first is the fine-tuned one, the second its backbone; ``verdict`` says whether the first wins on MRR
    and whether the paired test on per-query reciprocal ranks (``paired_test``, Table 1's) tells the two apart.
    """
    from rated.evaluation.data import Catalog, pool_from_pairs
    from rated.evaluation.significance import compare

    catalog = Catalog.from_frame(tools)
    pools = {name: pool_from_pairs(frame, catalog)[0] for name, (frame, _) in sets.items()}
    scores = {name: retrieval_scores(enc, catalog, pools) for name, enc in encoders.items()}
    out: dict[str, Any] = {}
    names = list(encoders)
    for set_name, pool in pools.items():
        block: dict[str, Any] = {
            "description": sets[set_name][1],
            "distinct_queries": len(pool),
            "true_tools": len(set().union(*pool.relevant)) if len(pool) else 0,
            "corpus": len(catalog),
        }
        if not len(pool):
            block["skipped"] = "no query of this set has a true tool in tools.parquet"
            out[set_name] = block
            continue
        if len(pool) < SMOKE_QUERIES:
            block["smoke_test"] = f"fewer than {SMOKE_QUERIES} distinct queries: a smoke test, not a result"
        rr = {}
        for name in encoders:
            result = scores[name][set_name]
            block[name] = {k: round(v, 4) for k, v in result.means().items()}
            rr[name] = result.rr
        a, b = block[names[0]]["MRR"], block[names[1]]["MRR"]
        block["mrr_gain"] = round(a - b, 4)
        test = compare(rr[names[0]], rr[names[1]], n_resamples=n_resamples, seed=0)
        kept = ("mean_diff", "ci_low", "ci_high", "p_randomization", "n_resamples")
        block["paired_test"] = {k: v for k, v in test.to_dict().items() if k in kept}
        block["verdict"] = verdict(names[0], names[1], a, b, test.ci_low, test.ci_high)
        out[set_name] = block
    return out


def excludes_zero(ci_low: float, ci_high: float) -> bool:
    """Whether a paired interval of a difference separates it from none: the one rule for "beats"."""
    return ci_low > 0 or ci_high < 0


def verdict(first: str, second: str, a: float, b: float, ci_low: float, ci_high: float) -> str:
    """One line on MRR ``a`` of ``first`` against ``b`` of ``second`` with the paired 95 % interval of
    the difference: "beats" only where the interval excludes 0; a higher mean inside it is "ahead"."""
    sure = excludes_zero(ci_low, ci_high)
    ci = f"paired 95% CI of the difference [{ci_low:+.4f}, {ci_high:+.4f}]" + (
        "" if sure else ": not distinguishable from no difference"
    )
    if a <= b:
        return f"{first} does NOT beat {second} on MRR ({a:.4f} vs {b:.4f}; {ci})"
    return f"{first} {'beats' if sure else 'is ahead of'} {second} on MRR ({a:.4f} vs {b:.4f}; {ci})"


def _why_not(comparison: dict[str, Any], record: dict[str, Any]) -> str | None:
    """A plain reason when the fine-tuned encoder loses to its backbone on a held-out set, else None."""
    lost = [k for k, v in comparison.items() if "mrr_gain" in v and v["mrr_gain"] <= 0]
    if not lost:
        return None
    reasons = []
    towers = "the query tower" if record.get("towers_trained") == ["query"] else "the towers"
    small = [k for k in lost if "smoke_test" in comparison[k]]
    if small:
        reasons.append(
            f"{', '.join(small)} hold(s) under {SMOKE_QUERIES} queries, so the difference is noise"
        )
    if record["train_examples"] < 500:
        reasons.append(
            f"only {record['train_examples']} training pairs: {towers} fit the few Syn tools of training"
        )
    if "syn_tool_split_test_not_naming_tool" in lost and "syn_tool_split_test" not in lost:
        reasons.append(
            "its gain on unseen tools comes from the queries that name their tool: "
            f"{towers} learned tool names more than what requests for a tool look like"
        )
    if "real_test" in lost:
        reasons.append(
            "Real's requests (n8n workflow write-ups, most of its test split, and ToolBench users' queries) "
            "differ in style and length from Syn's short LLM-written ones, and its ToolBench labels were "
            "recalled by the pretrained encoders (see the construction-advantage line of Table 1)"
        )
    if "mcp_server_prompts" in lost:
        reasons.append(
            "MCP server authors' requests are real text about servers the towers never trained on (Syn "
            "covers about 100 tools): what fine-tuning taught did not carry to them"
        )
    if record["val_after"].get("mrr@10", 0.0) <= record["val_before"].get("mrr@10", 0.0):
        reasons.append("Syn val did not improve either: the run is too short or the learning rate too low")
    reasons = reasons or ["the generated queries teach the towers little that the backbone does not know"]
    return f"fine-tuning did not beat the backbone on {', '.join(lost)}: " + "; ".join(reasons) + "."


def _precision() -> dict[str, bool]:
    """bf16 where the GPU has it, else fp16 on CUDA; full precision on CPU."""
    import torch

    if not torch.cuda.is_available():
        return {"bf16": False, "fp16": False}
    bf16 = bool(torch.cuda.is_bf16_supported())
    return {"bf16": bf16, "fp16": not bf16}


def fine_tune(
    train: Dataset,
    evaluator: InformationRetrievalEvaluator | None,
    config: TrainConfig,
    work: Path,
    backbone: Any = None,
) -> tuple[Any, dict[str, Any]]:
    """Fine-tune the towers (the query tower only with ``freeze_tool_tower``); returns the trained
    SentenceTransformer and the run's record.

    With ``freeze_tool_tower`` the documents' vectors are the backbone's, read once through the shared
    embedding cache, and only the queries run through the model in a step (``rated.frozen_tower``): the
    same loss on the same batches as running the frozen tower forward in every step, at about a quarter
    of the cost.

    Args:
        train: ``anchor`` / ``positive`` (/ ``negative``) columns.
        evaluator: Syn val retrieval, run before, every ``eval_steps`` and after (may be ``None``).
        config: hyper-parameters.
        work: scratch folder for the trainer (removed by the caller).
        backbone: the frozen untrained ``DualEncoder`` of ``config``'s backbones (made here when ``None``);
            with ``freeze_tool_tower`` its tool tower gives the documents' vectors.
    """
    import torch
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.base.sampler import BatchSamplers
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from rated.encoder import DualEncoder, route_digest

    torch.manual_seed(config.seed)
    encoder = DualEncoder.from_backbones(
        config.query_encoder, config.tool_encoder, config.pooling, config.max_seq_length
    )
    model = encoder.model
    frozen_digest = None
    if config.freeze_tool_tower:  # the trainer's optimizer takes only parameters that need gradients
        for weight in model[0].sub_modules["document"].parameters():
            weight.requires_grad_(False)
        frozen_digest = route_digest(model, "document")
        from rated.frozen_tower import LABEL, FrozenToolsLoss, document_rows

        if backbone is None:
            backbone = DualEncoder.from_backbones(
                config.query_encoder, config.tool_encoder, config.pooling, config.max_seq_length
            ).freeze()
        if route_digest(backbone.model, "document") != frozen_digest:
            raise RuntimeError("the backbone given for the frozen tool tower's vectors is not that tower")
        columns = [c for c in ("positive", "negative") if c in train.column_names]
        documents, rows = document_rows([train[c] for c in columns])
        loss = FrozenToolsLoss(model, backbone.encode_tools(documents), scale=config.scale)
        train = train.add_column(LABEL, rows)
    else:
        loss = MultipleNegativesRankingLoss(model, scale=config.scale)
    steps_per_epoch = math.ceil(len(train) / config.batch_size)
    total = math.ceil(config.epochs * steps_per_epoch)
    if config.max_steps is not None:
        total = min(total, config.max_steps)
    warmup = config.warmup_for(total)
    eval_steps = config.eval_steps or max(1, total // 2)
    before = evaluator(model) if evaluator is not None else {}
    precision = _precision()
    mapping = {c: ("query" if c == "anchor" else "document") for c in train.column_names if c != "label"}
    args = SentenceTransformerTrainingArguments(
        output_dir=str(work),
        num_train_epochs=config.epochs,
        max_steps=total,
        per_device_train_batch_size=config.batch_size,
        learning_rate=config.learning_rate,
        warmup_steps=warmup,
        batch_sampler=BatchSamplers.NO_DUPLICATES,
        router_mapping=mapping,
        eval_strategy="steps" if evaluator is not None else "no",
        eval_steps=eval_steps,
        logging_steps=max(1, min(10, total // 4)),
        save_strategy="no",
        report_to="none",
        seed=config.seed,
        data_seed=config.seed,
        use_cpu=not torch.cuda.is_available(),
        disable_tqdm=True,
        **precision,
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=args, train_dataset=train, loss=loss, evaluator=evaluator
    )
    bar = Progress(total, "training", "steps", log)
    trainer.add_callback(_StepProgress(bar))
    started = time.perf_counter()
    result = trainer.train()
    bar.close()
    seconds = time.perf_counter() - started
    after = evaluator(model) if evaluator is not None else {}
    if frozen_digest is not None and route_digest(model, "document") != frozen_digest:
        raise RuntimeError("the tool tower changed in training although it was frozen (freeze_tool_tower)")
    record = {
        "steps": int(result.global_step),
        "planned_steps": total,
        "warmup_steps": warmup,
        "eval_steps": eval_steps,
        "train_examples": len(train),
        "towers_trained": ["query"] if config.freeze_tool_tower else ["query", "tool"],
        # where the documents' vectors came from in each step
        "tool_vectors": "frozen backbone, read once"
        if config.freeze_tool_tower
        else "tool tower, every step",
        # the untrained tool tower's cache key, when it left training bit-identical (``record_backbone_tower``)
        "backbone_tools_key": encoder.tools_key if frozen_digest is not None else None,
        "train_loss": float(result.training_loss),
        "train_seconds": round(seconds, 2),
        "precision": "bf16" if precision["bf16"] else "fp16" if precision["fp16"] else "fp32",
        "device": str(model.device),
        "val_before": _val_summary(before),
        "val_after": _val_summary(after),
        "log_history": trainer.state.log_history,
    }
    return model, record


def run(out: Path, profile: Profile, force: bool = False, **options: Any) -> dict[str, Any]:
    """Fine-tune RATED's dual encoder on ``DIR/syn`` and write ``DIR/model/``.

    Args:
        out: the artifact folder (reads ``tools.parquet`` and ``syn/``).
        profile: backbones (``profile.models.query_encoder`` / ``tool_encoder``), seed and size caps.
        force: retrain even when ``DIR/model`` was made with this exact config and data.
        **options: ``TrainConfig`` fields to override (``max_steps``, ``epochs``, ``batch_size``, ...);
            ``None`` keeps the profile's value.

    Returns:
        The stats: steps, train loss, Syn val MRR@10 / Recall@10 before and after, timings, sizes.
    """
    from datasets import Dataset

    from rated.encoder import DualEncoder, record_backbone_tower

    art = ArtifactDir(out)
    config = TrainConfig.for_profile(profile, **options)
    tools_path = art.require(art.tools, "crawl")
    pos_path = art.require(art.syn_positives, "syn")
    inputs = {"tools": file_sha256(tools_path), "positives": file_sha256(pos_path)}
    if art.syn_negatives.exists():
        inputs["negatives"] = file_sha256(art.syn_negatives)
    if art.real_pairs.exists():  # only for the held-out comparison: the encoder never trains on Real
        inputs["real_pairs"] = file_sha256(art.real_pairs)
    if art.real_mcp_server_prompts.exists():  # the same: a held-out set, never trained on
        inputs["mcp_server_prompts"] = file_sha256(art.real_mcp_server_prompts)
    fp = fingerprint(
        {"config": config.to_dict(), "inputs": inputs, "held_out": HELD_OUT_VERSION, "train": TRAIN_VERSION}
    )
    if not force and art.is_done(STAGE, fp) and (art.model / "modules.json").exists():
        log.info("train: %s already holds a model for this config and data; skipping", art.model)
        stats = _stored_stats(art)
        stats["skipped"] = True
        return stats

    started = time.perf_counter()
    tools = pl.read_parquet(tools_path)
    positives = pl.read_parquet(pos_path)
    negatives = pl.read_parquet(art.syn_negatives) if art.syn_negatives.exists() else None
    mcp_server = (
        pl.read_parquet(art.real_mcp_server_prompts) if art.real_mcp_server_prompts.exists() else None
    )
    equivalents = equivalent_tool_ids(tools, profile) if config.mcp_server_share > 0 else None
    pairs, selection = training_selection(tools, positives, negatives, config, mcp_server, equivalents)
    triples = triples_from_pairs(tools, pairs, config.hard_negatives)
    backbone = DualEncoder.from_backbones(
        config.query_encoder, config.tool_encoder, config.pooling, config.max_seq_length
    ).freeze()
    frozen_vectors = backbone.encode_tools if config.freeze_tool_tower else None
    evaluator = validation_evaluator(tools, positives, negatives, config, frozen_vectors)
    work = art.root / ".train_work"
    shutil.rmtree(work, ignore_errors=True)
    try:
        model, record = fine_tune(Dataset.from_polars(triples), evaluator, config, work, backbone)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    # save next to the final folder, check the saved copy reproduces the embeddings, then swap it in
    staging = art.root / ".model.tmp"
    shutil.rmtree(staging, ignore_errors=True)
    model.save(str(staging))
    if record["backbone_tools_key"] is not None:  # the catalog's vectors are the backbone's: no new encode
        record_backbone_tower(staging, record["backbone_tools_key"])
    probe_q, probe_t = triples["anchor"][:4].to_list(), triples["positive"][:4].to_list()
    reloaded = DualEncoder.load(staging).freeze()
    trained = DualEncoder(model).freeze()
    diff = max(
        float(np.abs(reloaded.encode_queries(probe_q) - trained.encode_queries(probe_q)).max()),
        # uncached and in float32 on both sides: the cache may encode in bfloat16 (ecoagent.embeddings)
        float(
            np.abs(
                reloaded._encode_documents(probe_t, BATCH_SIZE)
                - trained._encode_documents(probe_t, BATCH_SIZE)
            ).max()
        ),
    )
    if diff > 1e-4:
        raise RuntimeError(f"the saved model does not reproduce the trained one (max diff {diff:.2e})")
    t0 = time.perf_counter()
    real_pairs = pl.read_parquet(art.real_pairs) if art.real_pairs.exists() else None
    train_tools = set(pairs["tool_id"].to_list())
    from rated.evaluation.data import naming_queries

    comparison = held_out_comparison(
        tools,
        held_out_sets(
            positives, train_tools, real_pairs, naming_queries(art), mcp_server, set(selection["mcp_servers"])
        ),
        # the reloaded copy is what the evaluation loads: its catalog vectors land in the shared cache
        {"fine-tuned": reloaded, "backbone": backbone},
    )
    if real_pairs is None:
        comparison["real_test"] = {"skipped": "real/pairs.parquet did not exist when the encoder was trained"}
    why_not = _why_not(comparison, record)
    compare_seconds = time.perf_counter() - t0
    stats = {
        k: record[k]
        for k in (
            "steps",
            "planned_steps",
            "warmup_steps",
            "train_examples",
            "towers_trained",
            "train_loss",
            "train_seconds",
        )
    }
    stats.update(
        {
            "training_data": {k: v for k, v in selection.items() if k != "mcp_servers"}
            | {"mcp_training_servers": len(selection["mcp_servers"])},
            "precision": record["precision"],
            "device": record["device"],
            "val_queries": len(evaluator.queries) if evaluator is not None else 0,
            "val_corpus": len(evaluator.corpus) if evaluator is not None else 0,
            "val_before": record["val_before"],
            "val_after": record["val_after"],
            "reload_max_abs_diff": diff,
            "held_out": comparison,
            "held_out_note": (
                "fine-tuned encoder vs its untrained backbone (the same towers before training), ranking all "
                f"{tools.height} tools; MRR is MRR@100; training used {_trained_on(selection)}, so no "
                "query, and no tool of the tool-disjoint val/test, was seen; the MCP authors' prompts leave "
                "out the servers trained on and those with a record among the training tools"
            ),
            "fine_tuning_loses": why_not,
            "held_out_seconds": round(compare_seconds, 2),
            "seconds": round(time.perf_counter() - started, 2),
        }
    )
    write_json(
        staging / "training_config.json",
        {
            "config": config.to_dict(),
            "profile": profile.name,
            "inputs": inputs,
            "backbones": {
                "query": encoder_provenance(config.query_encoder),
                "tool": encoder_provenance(config.tool_encoder),
            },
            "loss": {
                "name": "MultipleNegativesRankingLoss",
                "tool_vectors": record["tool_vectors"],
                "scale": config.scale,
                "tau": 1.0 / config.scale,
            },
            "batch_sampler": "no_duplicates",
            # what the evaluation must hold out: the MCP servers whose authors' prompts trained
            "training_data": selection,
            "used": {
                k: stats[k] for k in ("steps", "warmup_steps", "train_examples", "val_queries", "val_corpus")
            },
            "versions": _versions(),
        },
    )
    write_json(staging / "metrics.json", {**stats, "log_history": record["log_history"]})
    shutil.rmtree(art.model, ignore_errors=True)
    staging.rename(art.model)
    art.mark_done(STAGE, fp, stats)
    return stats


def _trained_on(selection: dict[str, Any]) -> str:
    """The training data in words, for the held-out note."""
    syn = (
        "Syn pairs that are train in both split columns"
        if selection["syn_rows"] == "both_train"
        else "every Syn query of the tool-disjoint train tools but the query split's test ones"
    )
    text = f"{selection['syn_pairs']} {syn}"
    if selection["mcp_pairs"]:
        text += (
            f" and {selection['mcp_pairs']} MCP authors' prompts of {len(selection['mcp_servers'])} servers "
            "with no record among the tool-disjoint val/test tools"
        )
    return text


def equivalent_tool_ids(tools: pl.DataFrame, profile: Profile) -> dict[str, set[str]]:
    """Syn's cross-platform equivalents by ``tool_id`` (``rated.evaluation.data.syn_equivalents``, the
    rule Table 1 extends Syn's true tools with)."""
    from rated.evaluation.data import Catalog, syn_equivalents

    ids = tools["tool_id"].to_list()
    found = syn_equivalents(Catalog.from_frame(tools), profile.models.sbert)
    return {ids[i]: {ids[j] for j in others} for i, others in found.items()}


def _stored_stats(art: ArtifactDir) -> dict[str, Any]:
    import json

    try:
        return dict(json.loads((art.markers / f"{STAGE}.json").read_text()).get("stats", {}))
    except (OSError, ValueError):
        return {}


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for dist in ("sentence-transformers", "transformers", "torch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "missing"
    return out


def _StepProgress(bar: Any) -> Any:  # noqa: N802 - builds the callback class lazily (transformers is heavy)
    """A trainer callback that advances ``bar`` once per optimizer step (the trainer's own tqdm is off)."""
    from transformers import TrainerCallback

    class StepProgress(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            bar.update()

    return StepProgress()
