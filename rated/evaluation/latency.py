"""Per-query latency on this machine (the paper's Table 3), one query at a time as an agent would call it.

Rows are cumulative like the paper's: encoding the query alone, then encoding plus each way of ranking
and learning. Times are wall-clock per query (``time.perf_counter``), after a few untimed calls that
warm the caches, the rows interleaved query by query (so a change in a shared machine's load hits
every row alike), with one torch thread (a single short query gains nothing from intra-op threads, and
on a shared machine they stall it by an order of magnitude); the mean and the 95th percentile are
reported, with the query count, thread count and the machine's load average saved beside them.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from rated.evaluation.baselines import BatchUpdate, FullLinUCB
from rated.evaluation.candidates import CandidateLists
from rated.fusion import fuse_unchecked

WARMUP_CALLS = 5


def time_interleaved(
    fns: Sequence[Callable[[int, str], Any]], queries: Sequence[str]
) -> list[dict[str, float]]:
    """Time every function on every query, interleaved (query by query, rotating which runs first), so
    that a change in the machine's load hits all rows alike; mean, median and p95 in milliseconds."""
    for i, q in enumerate(queries[:WARMUP_CALLS]):
        for fn in fns:
            fn(i, q)
    times = np.empty((len(fns), len(queries)))
    for i, q in enumerate(queries):
        for j in range(len(fns)):
            k = (i + j) % len(fns)
            t0 = time.perf_counter()
            fns[k](i, q)
            times[k, i] = time.perf_counter() - t0
    return [
        {
            "mean_ms": float(row.mean() * 1e3),
            "median_ms": float(np.median(row) * 1e3),
            "p95_ms": float(np.quantile(row, 0.95) * 1e3),
            "n": len(queries),
        }
        for row in times
    ]


def measure(
    full: Any,
    no_feedback: Any,
    global_mab: Any,
    queries: Sequence[str],
    batch: int = 500,
    dlinucb_dim: int = 32,
) -> list[dict[str, Any]]:
    """Table 3's rows for RATED models built from the same encoder and index.

    Args:
        full, no_feedback, global_mab: ``rated.RATED`` of each variant (fresh; feedback is applied, with
            success drawn as "the chosen tool is the query's top semantic hit", which only decides what
            the bandit learns, not the cost).
        queries: query texts, timed one by one.
        batch: B of the ToolRL-like batch update row.
        dlinucb_dim: projected dimension of the full-matrix D-LinUCB row (what the diagonal saves).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(
        1
    )  # one query per call: intra-op threads only add hand-off cost (and stall on a busy machine)

    def encode(q: str) -> np.ndarray:
        return full.encode(q)

    def with_model(model: Any, learn: bool) -> Callable[[int, str], Any]:
        def step(i: int, q: str) -> None:
            emb = encode(q)
            idx, _ = model.rank_embedding(emb)
            if learn:
                model.feedback_embedding(int(idx[0]), emb, i % 2 == 0)

        return step

    n_tools = len(full.index)
    k = int(full.config.top_k)
    dummy = CandidateLists(np.zeros((1, k), dtype=np.int64), np.zeros((1, k)))
    batch_policy = BatchUpdate(dummy, n_tools=n_tools, batch=batch)
    batch_policy.reset(np.zeros(n_tools, dtype=np.int64))

    def batch_step(i: int, q: str) -> None:
        emb = encode(q)
        idx, sem = full.index.search(emb, k)
        order = idx[np.argsort(-(sem + batch_policy.weights[idx]), kind="stable")]
        batch_policy.observe(i, 0, int(order[0]), i % 2 == 0, False)  # every B-th call applies the update

    lin = FullLinUCB(dummy, np.zeros((1, full.index.dim)), full.prior, dim=dlinucb_dim)
    lin.reset(np.zeros(n_tools, dtype=np.int64))

    def dlinucb_step(i: int, q: str) -> None:
        emb = encode(q)
        idx, sem = full.index.search(emb, k)
        x = lin.context(emb[None])[0]
        scores = fuse_unchecked(sem, lin.ucb(idx, x), lin.prior[idx], lin.weights)
        lin.update(int(idx[int(np.argmax(scores))]), x, float(i % 2 == 0))

    rows = [
        ("Encode only", lambda i, q: encode(q)),
        ("+ w/o Feedback (top-K search + fusion with prior)", with_model(no_feedback, learn=False)),
        ("+ Global MAB (rank + context-free update)", with_model(global_mab, learn=True)),
        ("+ Full (rank + discounted LinUCB update)", with_model(full, learn=True)),
        (f"+ Batch update (ToolRL-like, B = {batch})", batch_step),
        (f"+ D-LinUCB, full matrix on d = {dlinucb_dim} (rank + update)", dlinucb_step),
    ]
    out = []
    try:
        load = os.getloadavg()[0]
        times = time_interleaved([fn for _, fn in rows], queries)
        for (name, _), t in zip(rows, times, strict=True):
            out.append({"config": name, **t, "torch_threads": 1, "load_avg_1min": load})
    finally:
        torch.set_num_threads(threads)
    return out
