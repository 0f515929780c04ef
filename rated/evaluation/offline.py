"""Offline retrieval (the paper's Table 1): every method ranks the test queries once, judged against the
ground-truth pairs (all true tools of a query), with a paired significance test of RATED vs the best
baseline.

What a RATED variant's offline score means: offline there is no live feedback, so the bandit is whatever
state it starts from. Cold (no feedback), Full, w/o Feedback and w/ Global MAB all rank by
semantic score + metadata prior and tie; we therefore score the variants after the same warm-up the
simulation uses (feedback on warm-up pairs from the train split, every tool healthy), which is what
separates them. w/o Feedback ignores the warm-up by construction; w/o Contrastive is Full with the
pretrained towers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from ecoagent.topk import top_k
from rated.evaluation.metrics import RetrievalScores
from rated.evaluation.rated_policy import RatedPolicy
from rated.evaluation.significance import compare
from rated.evaluation.simulator import QueryPool

DEPTH = 100  # rankings are cut at 100: MRR is MRR@100 (a first hit below rank 100 scores 0)


@dataclass(frozen=True)
class OfflineRow:
    """One method on one split: per-query scores (kept for significance tests) and how it was run."""

    method: str
    split: str
    scores: RetrievalScores
    kind: str  # "baseline" or "rated"

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "split": self.split,
            "kind": self.kind,
            "n_queries": int(self.scores.rr.size),
            **self.scores.means(),
        }


def rankings_from_scores(scores: np.ndarray, depth: int = DEPTH) -> list[np.ndarray]:
    """Top-``depth`` tools per query from a [n_queries, n_tools] matrix, ties to the lower index."""
    return list(top_k(scores, depth)[0])


def rated_rankings(policy: RatedPolicy, query_emb: np.ndarray, depth: int = DEPTH) -> list[np.ndarray]:
    """RATED's reranked top-K, then the index's next tools by dot product down to ``depth``."""
    out = []
    for emb in np.asarray(query_emb, dtype=np.float32):
        head = policy.ranking(emb)
        tail, _ = policy.model.index.search(emb, k=depth)
        seen = set(head.tolist())
        rest = [int(t) for t in np.asarray(tail) if int(t) not in seen]
        out.append(np.concatenate([head, np.asarray(rest, dtype=np.int64)])[:depth])
    return out


def score_rankings(
    method: str, split: str, rankings: Sequence[np.ndarray], pool: QueryPool, kind: str
) -> OfflineRow:
    return OfflineRow(method, split, RetrievalScores.compute(rankings, pool.relevant), kind)


def significance(
    rows: Sequence[OfflineRow], target: str, n_resamples: int, seed: int
) -> dict[str, dict[str, Any]]:
    """Per split: ``target`` (RATED Full) vs the baseline with the best MRR, on per-query reciprocal ranks."""
    out: dict[str, dict[str, Any]] = {}
    for split in sorted({r.split for r in rows}):
        mine = [r for r in rows if r.split == split]
        rated = next((r for r in mine if r.method == target), None)
        baselines = [r for r in mine if r.kind == "baseline"]
        if rated is None or not baselines:
            continue
        best = max(baselines, key=lambda r: r.scores.means()["MRR"])
        test = compare(rated.scores.rr, best.scores.rr, n_resamples=n_resamples, seed=seed)
        out[split] = {"a": target, "b": best.method, "metric": "reciprocal rank", **test.to_dict()}
    return out


def construction_advantage(
    rankings: dict[str, Sequence[np.ndarray]],
    pool: QueryPool,
    pairs: pl.DataFrame,
    tool_ids: Sequence[str],
    proposer_of: dict[str, str],
) -> dict[str, dict[str, Any]]:
    """Table 1's construction-advantage line on Real: each method's MRR on the true pairs it did not propose.

    Real's candidates are the union of recall retrievers' top-k (``proposed_by``), so a Table 1 method that
    is one of them is partly scored on its own choices. ``proposer_of`` maps a Table 1 method to the
    ``proposed_by`` name it goes by (``BM25``, ``all-MiniLM-L6-v2``, the w/o Contrastive towers when they are
    a recall encoder); a method that took no part gets its plain MRR over the same pairs, marked so.
    ``rankings``: method -> the pool's rankings (row indices of ``tool_ids``), in pool order.
    """
    from validators.provenance import construction_advantage as advantage

    pairs = pairs.filter(pl.col("query_id").is_in(pool.query_ids) & pl.col("tool_id").is_in(list(tool_ids)))
    out: dict[str, dict[str, Any]] = {}
    for method, ranks in rankings.items():
        ranking = {qid: [tool_ids[int(t)] for t in r] for qid, r in zip(pool.query_ids, ranks, strict=True)}
        name = proposer_of.get(method)
        cell = advantage({name or method: ranking}, pairs)[name or method]
        cell["proposer"] = name
        if name is None:
            cell["note"] = "took no part in constructing Real: plain MRR over all its test pairs"
        out[method] = cell
    return out
