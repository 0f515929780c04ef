"""Benchmark: one simulation seed (T = 10,000 steps) of every method, on a synthetic world of real size.

The world: n_tools tools with random unit embeddings (d = 384, as all-MiniLM-L6-v2), a pool of queries
that are noisy copies of their true tool's embedding (some with a second true tool), and the paper's
failure schedule (rho = 20%). No model is loaded, so the numbers are the simulator's and the policies'
own cost. The baseline row is the static top-1 retriever measured in the same run; every other row
is reported as a ratio to it.

It measures cost only. A query's second true tool is a random one, far from the query's embedding and
outside its candidate list, so once a query's tool fails no method can find another that works: Post-Fail
SR comes out the same for every method here. It is printed as a check that the runs agree, not as a
comparison of methods (the evaluate stage's Table 2 is that).

    .venv/bin/python bench/bench_simulation.py [--tools 2000] [--queries 500] [--steps 10000]

``--runs 4 --workers 1,2`` adds how the evaluate stage spreads its runs (``ecoagent.parallel.fork_imap``):
``--runs`` seeded runs of every method, once per worker count, with the wall time of each against one
worker in the same run, and whether every method's trace (the tools called, step by step) is the same
whatever the workers.
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np
from threadpoolctl import threadpool_limits

from ecoagent.parallel import available_cores, fork_imap
from ecoagent.summary import cpu_model, print_table
from rated.config import RATEDConfig, Variant
from rated.evaluation.baselines import (
    BatchUpdate,
    FullLinUCB,
    GlobalDUCB,
    HealthCheckBlacklist,
    OnlineEmbeddingUpdate,
    Retry,
    SlidingWindowUCB,
    StaticRetriever,
)
from rated.evaluation.candidates import CandidateLists
from rated.evaluation.failures import FailureSchedule, Scenario
from rated.evaluation.metrics import PostFailSuccessRate
from rated.evaluation.rated_policy import RatedPolicy
from rated.evaluation.simulator import QueryPool, Stream, oracle_success, simulate
from rated.index import ToolIndex
from rated.retriever import RATED


def world(
    n_tools: int, n_queries: int, dim: int, seed: int
) -> tuple[np.ndarray, np.ndarray, QueryPool, np.ndarray]:
    rng = np.random.default_rng(seed)
    tools = rng.normal(size=(n_tools, dim)).astype(np.float32)
    tools /= np.linalg.norm(tools, axis=1, keepdims=True)
    true = rng.integers(0, n_tools, size=n_queries)
    second = rng.integers(0, n_tools, size=n_queries)
    q = tools[true] + 0.9 * rng.normal(size=(n_queries, dim)).astype(np.float32) / np.sqrt(dim)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    relevant = [
        frozenset({int(t), int(s)}) if i % 4 == 0 else frozenset({int(t)})
        for i, (t, s) in enumerate(zip(true, second, strict=True))
    ]
    pool = QueryPool([f"q{i}" for i in range(n_queries)], relevant, [str(i) for i in range(n_queries)])
    return tools, q.astype(np.float32), pool, rng.random(n_tools)


def failures(stream: Stream, n_tools: int, seed: int) -> tuple[FailureSchedule, np.ndarray]:
    """The paper's failure schedule (rho = 20%) for one stream, and the oracle's success per step."""
    schedule = Scenario("rho=20%").build(stream.relevant_per_step(), n_tools, seed)
    return schedule, oracle_success(stream, schedule)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--runs", type=int, default=0, help="seeded runs for the workers table (0: skip it)")
    parser.add_argument(
        "--workers", default="1,2", help="worker counts to compare, the first is the baseline"
    )
    args = parser.parse_args()
    print(f"CPU: {cpu_model()}, {available_cores()} cores available")

    tools, q_emb, pool, prior = world(args.tools, args.queries, 384, args.seed)
    ids = [f"t{i}" for i in range(args.tools)]
    config = RATEDConfig()
    candidates = CandidateLists.from_scores((q_emb @ tools.T).astype(np.float64), 2 * config.top_k)
    k = config.top_k
    warm_idx = np.random.default_rng(1).integers(0, len(pool), size=2000)
    warm = (q_emb[warm_idx], [pool.relevant[i] for i in warm_idx])

    def rated(variant: Variant) -> RATED:
        return RATED(None, ToolIndex(384, ids, tools), prior, config.replace(variant=variant))

    t0 = time.perf_counter()
    policies = [
        StaticRetriever(candidates, "Static top-1 (baseline)", k),
        HealthCheckBlacklist(candidates, k=k),
        Retry(candidates, k=3, depth=k),
        BatchUpdate(candidates, args.tools, k=k),
        GlobalDUCB(candidates, prior, k=k),
        SlidingWindowUCB(candidates, prior, window=100, k=k),
        OnlineEmbeddingUpdate(candidates, q_emb, tools, lr=0.1, k=k),
        FullLinUCB(candidates, q_emb, prior, dim=32, k=k),
        RatedPolicy(rated(Variant.NO_FEEDBACK), q_emb, "RATED w/o Feedback"),
        RatedPolicy(rated(Variant.GLOBAL_MAB), q_emb, "RATED w/ Global MAB"),
        RatedPolicy(rated(Variant.FULL), q_emb, "RATED Full"),
        RatedPolicy(rated(Variant.FULL), q_emb, "RATED (task-success feedback)", feedback="task"),
    ]
    warm_cands = CandidateLists.from_scores((warm[0] @ tools.T).astype(np.float64), 2 * config.top_k)
    for p in policies:
        if isinstance(p, RatedPolicy):
            p.warm_up(*warm)
        elif isinstance(p, OnlineEmbeddingUpdate | FullLinUCB):
            p.warm_up(warm_cands, warm[1], warm[0])
        elif isinstance(p, GlobalDUCB | SlidingWindowUCB):
            p.warm_up(warm_cands, warm[1])
    setup = time.perf_counter() - t0

    stream = Stream.sample(pool, args.steps, args.seed)
    t0 = time.perf_counter()
    schedule, oracle = failures(stream, args.tools, args.seed)
    schedule_s = time.perf_counter() - t0

    rows, base = [], None
    total = 0.0
    for p in policies:
        t0 = time.perf_counter()
        trace = simulate(p, stream, schedule, oracle)
        seconds = time.perf_counter() - t0
        total += seconds
        base = base or seconds
        rows.append(
            [p.name, seconds, seconds / args.steps * 1e6, seconds / base, PostFailSuccessRate()(trace)]
        )
    rows.append(["all methods (one seed)", total, total / args.steps * 1e6, total / base, float("nan")])
    print_table(
        ["method", "seconds", "µs/step", "× baseline", "Post-Fail SR (a check)"],
        rows,
        title=f"{args.steps:,} steps, {args.tools:,} tools, {args.queries} queries, seed {args.seed}",
    )
    print(
        f"\nsetup (policies built, RATED warm-ups of 2,000 pairs): {setup:.2f}s; schedule + oracle: {schedule_s:.2f}s"
    )
    if args.runs:
        compare_workers(policies, pool, args)


def compare_workers(policies: list, pool: QueryPool, args: argparse.Namespace) -> None:
    """The evaluate stage's layout: each seeded run replays every method on its own stream and failure
    schedule; the runs go to forked workers. Policies are reset at the start of every ``simulate``."""

    def one_run(seed: int) -> list[str]:
        """Per method, a fingerprint of the run's trace: every tool it called, step by step."""
        stream = Stream.sample(pool, args.steps, seed)
        schedule, oracle = failures(stream, args.tools, seed)
        traces = [simulate(p, stream, schedule, oracle) for p in policies]
        return [
            hashlib.sha256(t.selected.tobytes() + t.attempts.tobytes() + t.success.tobytes()).hexdigest()
            for t in traces
        ]

    seeds = [args.seed + 1 + i for i in range(args.runs)]
    rows, base, reference = [], None, None
    for workers in [int(w) for w in args.workers.split(",")]:
        t0 = time.perf_counter()
        results = list(fork_imap(one_run, seeds, workers))
        seconds = time.perf_counter() - t0
        base = base or seconds
        reference = reference or results
        rows.append(
            [
                workers,
                seconds,
                seconds / args.runs,
                base / seconds,
                results == reference,
            ]
        )
    print_table(
        ["workers", "seconds", "s per run", "speed-up", "same traces as 1 worker"],
        rows,
        title=f"{args.runs} runs (seeds {seeds[0]}-{seeds[-1]}) of all {len(policies)} methods, {args.steps:,} steps each",
    )


if __name__ == "__main__":
    with threadpool_limits(limits=1, user_api="blas"):  # as the pipeline runs the simulation
        main()
