"""A sanity check of the validator on ToolBench's own labels, where the ground truth is known.

ToolBench's tools are not in our tool table, so the Real pairs have no labels. But each solvable and
example query lists candidate APIs and marks the relevant ones: scoring (query, relevant API) against
(query, non-relevant candidate API) with the same prompt measures how well the validator's
yes-probabilities separate matches from non-matches (ROC AUC; 0.5 = chance). The non-relevant
candidates usually come from the same RapidAPI tool as the relevant ones, so they are hard negatives.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from validators.toolbench import ToolBenchAPI, ToolBenchQuery
from validators.validator import PairText


@dataclass(frozen=True)
class LabeledPair:
    pair: PairText
    label: int  # 1 = ToolBench says relevant


def api_tool_id(api: ToolBenchAPI) -> str:
    return f"toolbench:{api.tool_name}:{api.api_name}"


def api_pair(query: ToolBenchQuery, api: ToolBenchAPI) -> PairText:
    """A ToolBench API in the shape of one of our tools: name ``api (tool)``, its description."""
    return PairText(
        query_id=query.query_id,
        tool_id=api_tool_id(api),
        query=query.query,
        tool_name=f"{api.api_name} ({api.tool_name})",
        description=api.description or "",
    )


def labeled_pairs(queries: Sequence[ToolBenchQuery], per_class: int, seed: int) -> list[LabeledPair]:
    """One relevant and one non-relevant described API for each of ``per_class`` seeded queries."""
    rng = random.Random(seed)
    eligible = []
    for q in queries:
        pos = [a for a in q.apis if a.relevant and (a.description or "").strip()]
        neg = [a for a in q.apis if a.relevant is False and (a.description or "").strip()]
        if pos and neg:
            eligible.append((q, pos, neg))
    chosen = rng.sample(eligible, min(per_class, len(eligible)))
    out = []
    for q, pos, neg in chosen:
        out.append(LabeledPair(api_pair(q, rng.choice(pos)), 1))
        out.append(LabeledPair(api_pair(q, rng.choice(neg)), 0))
    return out


def roc_auc(labels: Sequence[int], scores: Sequence[float]) -> float:
    """ROC AUC as the Mann-Whitney probability that a positive outranks a negative (ties count 1/2).

    Raises:
        ValueError: only one class present.
    """
    y = np.asarray(labels, dtype=int)
    s = np.asarray(scores, dtype=float)
    pos, neg = s[y == 1], s[y == 0]
    if pos.size == 0 or neg.size == 0:
        raise ValueError("AUC needs at least one positive and one negative")
    greater = (pos[:, None] > neg[None, :]).sum()
    ties = (pos[:, None] == neg[None, :]).sum()
    return float((greater + 0.5 * ties) / (pos.size * neg.size))
