"""A tool's rivals: the catalog's tools nearest to it, shown to the generator for contrast.

A request for a general tool ("search the web for ...") fits dozens of the catalog's tools equally, so
its label (one true tool) is mostly wrong and no retriever can find it. Showing the generator the
tool's nearest tools (by the tool-document embeddings the hard negatives are mined from) lets it ask
for what sets this tool apart. Equivalents (the same function on another platform) are not rivals:
they are true tools of the same queries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ecoagent.topk import top_k_dot


def nearest_rivals(
    rows: list[int],
    embeddings: np.ndarray,
    equivalents: Mapping[int, set[int]],
    k: int,
) -> list[list[int]]:
    """For each tool index in ``rows``, the ``k`` most similar other tools (cosine, best first),
    skipping the tool itself and its equivalents.

    Args:
        rows: indices of the tools to find rivals for.
        embeddings: L2-normalized tool-document embeddings of the whole table ``[n, d]``.
        equivalents: tool index -> indices of its equivalents (``generators.equivalents``).
        k: rivals per tool.
    """
    if k <= 0 or not rows:
        return [[] for _ in rows]
    emb = np.asarray(embeddings, dtype=np.float32)
    # the hard-negative selection: enough nearest tools that k remain after dropping self and equivalents
    widest = max(len(equivalents.get(i, ())) for i in rows)
    idx, _ = top_k_dot(emb[rows], emb, k + 1 + widest)
    return [
        [int(j) for j in cand if j != i and j not in equivalents.get(i, ())][:k]
        for i, cand in zip(rows, idx, strict=True)
    ]


def with_rivals(
    sample: list[dict[str, Any]],
    table: list[Mapping[str, Any]],
    index: Mapping[str, int],
    embeddings: np.ndarray,
    equivalents: Mapping[int, set[int]],
    k: int,
) -> list[dict[str, Any]]:
    """The sampled tool dicts with a ``rivals`` list (``name``, ``description``) that the list prompt
    shows (``prompts.list_conversation``); unchanged when ``k`` is 0."""
    if k <= 0:
        return sample
    found = nearest_rivals([index[t["tool_id"]] for t in sample], embeddings, equivalents, k)
    return [
        {
            **t,
            "rivals": [{"name": table[j]["name"], "description": table[j]["description"]} for j in js],
        }
        for t, js in zip(sample, found, strict=True)
    ]
