"""Anyone's method on this benchmark: outside retrievers and online policies named as ``module:Factory``.

``ecoagent evaluate --retriever module:Factory`` adds a retriever (``RetrieverPlugin``) to Table 1 and,
as a static top-1 policy, to Table 2; ``--policy module:Factory`` adds an online policy (the
simulator's ``Policy`` protocol) to Table 2. A retriever factory takes no argument; a policy factory
takes a ``PolicyContext`` (what the built-in baselines get) and is called once per seed.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from rated.evaluation.candidates import CandidateLists
from rated.evaluation.simulator import Policy


@runtime_checkable
class RetrieverPlugin(Protocol):
    """Rank queries over the tool corpus: ``fit`` once on the tool documents, then ``scores`` returns a
    ``[n_queries, n_tools]`` array (higher = better), columns in the catalog's row order."""

    name: str

    def fit(self, documents: Sequence[str]) -> Any: ...

    def scores(self, queries: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class PolicyContext:
    """What a policy factory may use: the catalog, the replayed pool and the shared candidate lists.

    Attributes:
        tool_ids, documents, prior: the catalog in row order (tools are addressed by row).
        queries: the pool's query texts (``select(step, query)`` gets an index into them).
        candidates: the top-2K tools per pool query by RATED's fine-tuned encoder (what every built-in
            adaptive baseline re-ranks), ``k`` of them to consider.
        query_emb, tool_emb: those embeddings (L2-normalized).
        warm_up: the seed's labelled warm-up pairs ``(query texts, true tool rows)`` from the train split.
        seed: the run's seed.
    """

    tool_ids: list[str]
    documents: list[str]
    prior: np.ndarray
    queries: list[str]
    candidates: CandidateLists
    k: int
    query_emb: np.ndarray
    tool_emb: np.ndarray
    warm_up: tuple[list[str], list[frozenset[int]]]
    seed: int


def load_factory(spec: str) -> Callable[..., Any]:
    """``module:attribute`` -> the attribute (a class or function); a bad spec fails saying which part."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"plug-in {spec!r}: expected module:Factory")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"plug-in {spec!r}: cannot import {module_name!r} ({exc})") from exc
    try:
        factory = getattr(module, attr)
    except AttributeError as exc:
        raise ValueError(f"plug-in {spec!r}: {module_name} has no {attr!r}") from exc
    if not callable(factory):
        raise ValueError(f"plug-in {spec!r}: {attr!r} is not callable")
    return factory


def load_retriever(spec: str) -> RetrieverPlugin:
    retriever = load_factory(spec)()
    if not isinstance(retriever, RetrieverPlugin):
        raise TypeError(f"plug-in {spec!r} must have name, fit(documents) and scores(queries)")
    return retriever


def check_scores(spec: str, scores: np.ndarray, n_queries: int, n_tools: int) -> np.ndarray:
    arr = np.asarray(scores, dtype=np.float64)
    if arr.shape != (n_queries, n_tools):
        raise ValueError(f"plug-in {spec!r}: scores shape {arr.shape}, expected ({n_queries}, {n_tools})")
    if not np.isfinite(arr).all():
        raise ValueError(f"plug-in {spec!r}: scores contain NaN or infinity")
    return arr


def make_policy(spec: str, context: PolicyContext) -> Policy:
    policy = load_factory(spec)(context)
    if not isinstance(policy, Policy):
        raise TypeError(f"plug-in {spec!r} must return a Policy (name, max_attempts, reset, select, observe)")
    return policy
