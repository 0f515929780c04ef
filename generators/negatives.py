"""Negative pairs: SBERT hard negatives plus random negatives, never the positive or its equivalents.

Hard negatives are the tools most similar to the query (cosine of MiniLM embeddings) that are neither
the positive tool nor one of its equivalents (``generators.equivalents``). This is the top-k selection of
sentence-transformers' ``mine_hard_negatives`` (``sampling_strategy="top"``; a test checks they agree),
done on precomputed embeddings so that one encoding of the tool table serves mining, the equivalence
rule and the yield check, and so that exclusion works on tool ids (two tools may share a document).
Random negatives are drawn uniformly from the remaining tools with the run's seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ecoagent.topk import top_k_dot


@dataclass(frozen=True)
class NegativeConfig:
    """How many negatives of each kind a positive pair gets (the paper: 2 negatives per positive).

    Args:
        hard: hard negatives per positive.
        random: random negatives per positive.
        candidates: nearest tools inspected for hard negatives (must exceed ``hard`` plus the largest
            set of equivalents a tool has).
    """

    hard: int = 1
    random: int = 1
    candidates: int = 32

    def __post_init__(self) -> None:
        if self.hard < 0 or self.random < 0 or self.hard + self.random == 0:
            raise ValueError("need hard >= 0, random >= 0 and at least one negative")
        if self.candidates <= self.hard:
            raise ValueError("candidates must exceed hard")


@dataclass(frozen=True)
class Negatives:
    """Mined negatives as parallel arrays: ``query`` row, negative ``tool`` index, ``score``, ``kind``."""

    query: np.ndarray
    tool: np.ndarray
    score: np.ndarray
    kind: np.ndarray


def mine_negatives(
    query_emb: np.ndarray,
    tool_emb: np.ndarray,
    positive: np.ndarray,
    equivalents: dict[int, set[int]],
    config: NegativeConfig | None = None,
    seed: int = 0,
) -> Negatives:
    """Hard and random negatives for each query row.

    Args:
        query_emb: L2-normalized query embeddings ``[n, d]``.
        tool_emb: L2-normalized tool embeddings ``[m, d]``.
        positive: the positive tool index of each query ``[n]``.
        equivalents: tool index -> equivalent tool indices (excluded like the positive).

    Raises:
        ValueError: a query has too few eligible tools to draw from.
    """
    config = config or NegativeConfig()
    positive = np.asarray(positive)
    n_tools = tool_emb.shape[0]
    rng = np.random.default_rng(seed)
    idx, cos = top_k_dot(query_emb, tool_emb, config.candidates)
    rows_q, rows_t, rows_s, rows_k = [], [], [], []
    for qi in range(len(positive)):
        excluded = {int(positive[qi])} | equivalents.get(int(positive[qi]), set())
        hard = [(int(t), float(s)) for t, s in zip(idx[qi], cos[qi], strict=True) if int(t) not in excluded]
        if len(hard) < config.hard:
            raise ValueError(
                f"query row {qi}: only {len(hard)} hard candidates left after excluding "
                f"{len(excluded)} positive/equivalent tools; raise NegativeConfig.candidates"
            )
        chosen = hard[: config.hard]
        taken = excluded | {t for t, _ in chosen}
        if n_tools - len(taken) < config.random:
            raise ValueError(f"query row {qi}: only {n_tools - len(taken)} tools left for random negatives")
        randoms: list[int] = []
        while len(randoms) < config.random:
            t = int(rng.integers(n_tools))
            if t not in taken:
                taken.add(t)
                randoms.append(t)
        for t, s in chosen:
            rows_q.append(qi)
            rows_t.append(t)
            rows_s.append(s)
            rows_k.append("hard")
        for t in randoms:
            rows_q.append(qi)
            rows_t.append(t)
            rows_s.append(float(query_emb[qi] @ tool_emb[t]))
            rows_k.append("random")
    return Negatives(
        np.array(rows_q, dtype=np.int64),
        np.array(rows_t, dtype=np.int64),
        np.array(rows_s, dtype=np.float32),
        np.array(rows_k),
    )
