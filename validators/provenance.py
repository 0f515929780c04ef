"""Which retrievers proposed each Real pair, and how well a method does on the pairs it did not propose.

Real's candidates are the union of several retrievers' top-k, so a method the evaluation compares can
still be favoured on the pairs that it put forward itself: it ranks them highly by construction. The
**construction advantage** check scores each method only on the true tools it did not propose; a
method whose MRR falls sharply there was being measured on its own choices.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl


def _relevant_not_proposed(
    pairs: pl.DataFrame | Iterable[Mapping[str, Any]], method: str
) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Per query: the true tools ``method`` did not propose, and those it did."""
    rows = pairs.iter_rows(named=True) if isinstance(pairs, pl.DataFrame) else pairs
    others: dict[str, set[str]] = {}
    own: dict[str, set[str]] = {}
    for row in rows:
        target = own if method in (row["proposed_by"] or ()) else others
        target.setdefault(row["query_id"], set()).add(row["tool_id"])
    return others, own


def _mrr(ranking: Mapping[str, Sequence[str]], relevant: Mapping[str, set[str]], method: str) -> float | None:
    if not relevant:
        return None
    total = 0.0
    for qid, tools in relevant.items():
        if qid not in ranking:
            raise ValueError(f"method {method!r} has no ranking for query {qid!r}")
        for rank, tool in enumerate(ranking[qid], start=1):
            if tool in tools:
                total += 1.0 / rank
                break
    return total / len(relevant)


def construction_advantage(
    rankings: Mapping[str, Mapping[str, Sequence[str]]],
    pairs: pl.DataFrame | Iterable[Mapping[str, Any]],
) -> dict[str, dict[str, Any]]:
    """Each method's MRR on the true pairs it did not propose, next to its MRR on those it did.

    Args:
        rankings: method name -> query id -> tool ids, best first (cut where the evaluation cuts, e.g.
            at 100). Method names are matched against ``proposed_by`` (``validators.recall.retriever_name``:
            ``BM25``, ``all-MiniLM-L6-v2``, ``all-mpnet-base-v2``); a method that proposed nothing (RATED,
            TF-IDF) is scored on every pair.
        pairs: the kept pairs with ``query_id``, ``tool_id`` and ``proposed_by`` (a list of names), e.g.
            one split of ``real/pairs.parquet``.

    Returns:
        per method: ``mrr_not_proposed`` over the queries that have at least one true tool the method did
        not propose (a query counts its first such tool; tools it did propose are not skipped in the
        ranking, so proposing helps no more than it would anyway), ``queries_not_proposed``,
        ``mrr_proposed`` and ``queries_proposed`` likewise for the tools it did propose (None when none).

    Raises:
        ValueError: a method lacks the ranking of a query that has pairs.
    """
    frame = pairs if isinstance(pairs, pl.DataFrame) else pl.DataFrame(list(pairs))
    out: dict[str, dict[str, Any]] = {}
    for method, ranking in rankings.items():
        others, own = _relevant_not_proposed(frame, method)
        out[method] = {
            "mrr_not_proposed": _mrr(ranking, others, method),
            "queries_not_proposed": len(others),
            "mrr_proposed": _mrr(ranking, own, method),
            "queries_proposed": len(own),
        }
    return out
