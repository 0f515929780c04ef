"""Labelled (query, API) pairs that measure the validator: ToolBench's own relevance labels.

ToolBench's tools are not in our table, so the Real pairs carry no ground truth; but every solvable and
example query lists candidate APIs (``api_list``) and marks the ones that serve it (``relevant APIs``).
From them:

- **positive**: a query with one of its relevant APIs;
- **random** negative: the query with an API of another query, from a RapidAPI category none of the
  query's own candidates is in (a clear mismatch);
- **hard** negative: the query with a non-relevant API of its own list, usually from the same RapidAPI
  tool as the relevant ones. These are *soft* labels: ToolBench marks the APIs its solution path used,
  so some of them could serve part of the request.

Only APIs with a description take part. Every query falls in one **part** by a hash of its id: ``dev``
(prompt design, worked examples, threshold calibration) or ``test`` (the reported AUCs and
precision/recall), so nothing the prompt or the threshold is tuned on is measured. The whole set
depends only on the snapshot: no seed, no file order.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from validators.toolbench import ToolBenchAPI, ToolBenchQuery
from validators.validator import PairText

Kind = Literal["positive", "random", "hard"]
Part = Literal["dev", "test"]
KINDS: tuple[Kind, ...] = ("positive", "random", "hard")
DEV_SHARE = 0.4  # of the labelled queries; the rest is test
_SALT = "ecoagent-real-labels-v1"


@dataclass(frozen=True)
class LabeledPair:
    """A pair with ToolBench's label: ``label`` 1 for a positive, 0 for either kind of negative."""

    pair: PairText
    label: int
    kind: Kind
    part: Part


def _unit(*keys: str) -> float:
    """A stable number in [0, 1) from strings (the same on every machine and Python)."""
    digest = hashlib.sha256("\0".join((_SALT, *keys)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def label_part(query_id: str, dev_share: float = DEV_SHARE) -> Part:
    """The part a labelled query belongs to, from its id alone."""
    return "dev" if _unit("part", query_id) < dev_share else "test"


def api_tool_id(api: ToolBenchAPI) -> str:
    return f"toolbench:{api.tool_name}:{api.api_name}"


def argument_lines(params: Sequence[tuple[str, str, bool]]) -> tuple[str, ...]:
    """Arguments as the validator reads them: ``name (required): description``."""
    out = []
    for name, description, required in params:
        head = f"{name} (required)" if required else name
        out.append(f"{head}: {description}" if description.strip() else head)
    return tuple(out)


def api_pair(query: ToolBenchQuery, api: ToolBenchAPI) -> PairText:
    """A ToolBench API in the shape of one of our tools: name ``api (tool)``, category, arguments."""
    context = f"RapidAPI category {api.category}; tool {api.tool_name}" if api.category else api.tool_name
    return PairText(
        query_id=query.query_id,
        tool_id=api_tool_id(api),
        query=query.query,
        tool_name=f"{api.api_name} ({api.tool_name})",
        description=api.description or "",
        context=context,
        arguments=argument_lines(api.parameters),
    )


def _described(api: ToolBenchAPI) -> bool:
    return bool((api.description or "").strip())


def build_labels(queries: Sequence[ToolBenchQuery], dev_share: float = DEV_SHARE) -> list[LabeledPair]:
    """Every labelled pair of the snapshot: all positives, all hard negatives, one random negative per
    positive. Queries without labels (ToolEval, demo) or without a described relevant API are skipped."""
    labelled = sorted(
        (q for q in queries if any(a.relevant and _described(a) for a in q.apis)), key=lambda q: q.query_id
    )
    pool = sorted(
        {
            (api_tool_id(a), a.category or ""): (q, a) for q in labelled for a in q.apis if _described(a)
        }.items()
    )
    out: list[LabeledPair] = []
    for q in labelled:
        part = label_part(q.query_id, dev_share)
        own_ids = {api_tool_id(a) for a in q.apis}
        own_categories = {a.category for a in q.apis}
        others = [a for (tid, cat), (_, a) in pool if tid not in own_ids and cat not in own_categories]
        rng = random.Random(int(_unit("random", q.query_id) * 2**32))
        taken: set[str] = set()
        for api in q.apis:
            if not _described(api) or api.relevant is None:
                continue
            if api.relevant:
                out.append(LabeledPair(api_pair(q, api), 1, "positive", part))
                neg = rng.choice([a for a in others if api_tool_id(a) not in taken]) if others else None
                if neg is not None:
                    taken.add(api_tool_id(neg))
                    out.append(LabeledPair(api_pair(q, neg), 0, "random", part))
            else:
                out.append(LabeledPair(api_pair(q, api), 0, "hard", part))
    return out


def sample_labels(labels: Sequence[LabeledPair], part: Part, per_kind: int) -> list[LabeledPair]:
    """Up to ``per_kind`` pairs of each kind from one part, at most one per query and kind.

    Queries are taken in a hash order of their ids, so the sample is fixed by the snapshot and
    ``per_kind``, and a larger sample contains a smaller one.
    """
    by_kind: dict[str, dict[str, list[LabeledPair]]] = {k: {} for k in KINDS}
    for lp in labels:
        if lp.part == part:
            by_kind[lp.kind].setdefault(lp.pair.query_id, []).append(lp)
    out: list[LabeledPair] = []
    for kind in KINDS:
        groups = by_kind[kind]
        for qid in sorted(groups, key=lambda q: _unit("sample", kind, q))[:per_kind]:
            out.append(min(groups[qid], key=lambda lp: _unit("pick", kind, qid, lp.pair.tool_id)))
    return out
