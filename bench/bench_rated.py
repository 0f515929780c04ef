"""RATED's cost per decision (the paper's Table 3), decision throughput, and memory at a million tools.

Measures, in one run and on this machine:

1. the baseline: encoding one query with a BERT-base-sized tower at d = 768 (all-mpnet-base-v2, packaged;
   the paper's DRAGON+ query encoder has the same shape), batch size 1;
2. RATED's added work per decision at K = 10, d = 768: bandit scores of the K candidates, fusion, argmax
   and the chosen tool's update (the rerank + update overhead), with warm bandit state;
3. the exact top-K search itself over the catalog;

Each per-decision row reports wall-clock percentiles and, beside them, the CPU time the process spent
(``time.process_time_ns``): on a shared machine the wall clock also counts time the scheduler gave to
other programs, the CPU time does not.
4. select + feedback in a tight loop on pre-encoded queries (decisions/s);
5. memory of the index and bandit state for 1,000,000 tools (``--million``).

Usage:
    .venv/bin/python bench/bench_rated.py                 # about a minute
    .venv/bin/python bench/bench_rated.py --million       # adds the 1M-tool index (needs ~2 GB RAM at d=384)
"""

from __future__ import annotations

import argparse
import os

# one decision is one query: a single BLAS thread is the realistic setting, and avoids two threads
# fighting over a shared 2-core machine (set before numpy is imported)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ecoagent.summary import print_table  # noqa: E402
from rated.bandit import DiscountedLinUCB  # noqa: E402
from rated.config import RATEDConfig  # noqa: E402
from rated.fusion import fuse_unchecked  # noqa: E402
from rated.index import ToolIndex  # noqa: E402
from rated.retriever import RATED  # noqa: E402


def unit_rows(n: int, d: int, rng: np.random.Generator, chunk: int = 100_000) -> np.ndarray:
    """``n`` random unit vectors (float32), built in chunks so a million rows fit in memory."""
    out = np.empty((n, d), dtype=np.float32)
    for start in range(0, n, chunk):
        block = rng.standard_normal((min(chunk, n - start), d), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start : start + len(block)] = block
    return out


def percentiles(samples_ns: list[int]) -> dict[str, float]:
    ms = np.asarray(samples_ns, dtype=np.float64) / 1e6
    return {
        "mean": float(ms.mean()),
        "p50": float(np.percentile(ms, 50)),
        "p95": float(np.percentile(ms, 95)),
    }


def bench_encode(iters: int) -> dict:
    """One query through a BERT-base tower at d = 768, batch size 1."""
    from ecoagent.config import MPNET
    from ecoagent.models import load_encoder

    model = load_encoder(MPNET)
    queries = [f"find a tool that converts invoice number {k} from pdf to text" for k in range(iters)]
    for q in queries[:5]:
        model.encode([q], show_progress_bar=False)
    wall, cpu = [], []
    for q in queries:
        t, c = time.perf_counter_ns(), time.process_time_ns()
        model.encode(
            [q], batch_size=1, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
        )
        cpu.append(time.process_time_ns() - c)
        wall.append(time.perf_counter_ns() - t)
    return {"wall": percentiles(wall), "cpu": percentiles(cpu), "dim": model.get_embedding_dimension()}


def numpy_call_floor(iters: int = 5000) -> dict:
    """The cost of one tiny numpy call here and now: on a loaded machine everything scales with it."""
    a, b, out = np.ones(10), np.ones(10), np.empty(10)
    wall, cpu = [], []
    for _ in range(iters):
        t, c = time.perf_counter_ns(), time.process_time_ns()
        np.add(a, b, out=out)
        cpu.append(time.process_time_ns() - c)
        wall.append(time.perf_counter_ns() - t)
    return {"wall": percentiles(wall), "cpu": percentiles(cpu)}


class NumpyLinUCB:
    """The same bandit as plain numpy calls (the implementation before ``rated.kernels``), as a baseline.

    Each decision gathers the K candidates' ``[theta | A^-1]`` rows, gets means and variances from one
    small GEMM against ``(x~, x~^2)``, fuses, and updates the chosen row: about 25 array operations.
    Every tool holds a row here (no cold-start branch), which only flatters this baseline.
    """

    def __init__(self, prior: np.ndarray, d: int, alpha: float, gamma: float, lam: float) -> None:
        self.prior, self.d, self.alpha, self.gamma, self.lam = prior, d, alpha, gamma, lam
        self.A = np.full((prior.size, d + 1), lam, dtype=np.float32)
        self.b = np.zeros((prior.size, d + 1), dtype=np.float32)
        self.b[:, d] = lam * prior * np.sqrt(2.0)
        self.cache = np.concatenate([self.b / self.A, 1.0 / self.A], axis=1)
        self.cm = np.empty((2, d + 1), dtype=np.float32)

    def _context(self, x: np.ndarray) -> None:
        np.multiply(x, np.float32(1 / np.sqrt(2.0)), out=self.cm[0, : self.d])
        self.cm[0, self.d] = 1 / np.sqrt(2.0)
        np.multiply(self.cm[0], self.cm[0], out=self.cm[1])

    def select(self, idx: np.ndarray, sem: np.ndarray, x: np.ndarray, w: tuple[float, float, float]) -> int:
        self._context(x)
        prod = self.cache[idx].reshape(-1, self.d + 1) @ self.cm.T
        ucb = np.sqrt(prod[1::2, 1]) * self.alpha + prod[0::2, 0]
        final = fuse_unchecked(sem, ucb, self.prior[idx], w)
        return int(np.argmax(final))

    def update(self, i: int, x: np.ndarray, reward: float) -> None:
        self._context(x)
        A, b = self.A[i], self.b[i]
        A *= self.gamma
        A += (1.0 - self.gamma) * self.lam
        A += self.cm[1]
        b *= self.gamma
        b += reward * self.cm[0]
        theta, ainv = self.cache[i, : self.d + 1], self.cache[i, self.d + 1 :]
        np.divide(1.0, A, out=ainv)
        np.multiply(b, ainv, out=theta)


def bench_overhead(n_tools: int, d: int, k: int, iters: int, warm: int, rng: np.random.Generator) -> dict:
    """Rerank + update of K candidates (search excluded), with ``warm`` tools already holding state."""
    cfg = RATEDConfig(top_k=k)
    index = ToolIndex(d, [f"t{i}" for i in range(n_tools)], unit_rows(n_tools, d, rng))
    prior = rng.random(n_tools)
    bandits = DiscountedLinUCB(d, prior, cfg.alpha, cfg.gamma, cfg.lam)
    baseline = NumpyLinUCB(prior, d, cfg.alpha, cfg.gamma, cfg.lam)
    queries = unit_rows(iters, d, rng)
    for i in rng.integers(0, n_tools, warm).tolist():  # warm-up: many tools hold state
        x, r = queries[int(rng.integers(iters))], float(rng.random() < 0.7)
        bandits.update(i, x, r)
        baseline.update(i, x, r)
    cands = [index.search(q, k) for q in queries]
    rewards = rng.random(iters) < 0.7
    w = cfg.weights
    bandits.fused(*cands[0], queries[0], w)  # compile the kernels (numba, on first use) before timing
    rerank, rerank_cpu, base, base_cpu, search, search_cpu = [], [], [], [], [], []
    agree = 0
    for step, q in enumerate(queries):  # the two implementations interleaved, so load drift hits both
        idx, sem = cands[step]
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        _, best = bandits.fused(idx, sem, q, w)  # what RATED.select_embedding runs after the search
        bandits.update(int(idx[best]), q, float(rewards[step]))
        rerank_cpu.append(time.process_time_ns() - c0)
        rerank.append(time.perf_counter_ns() - t0)
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        best_np = baseline.select(idx, sem, q, w)
        baseline.update(int(idx[best_np]), q, float(rewards[step]))
        base_cpu.append(time.process_time_ns() - c0)
        base.append(time.perf_counter_ns() - t0)
        agree += best == best_np
    for q in queries[: min(iters, 500)]:
        t0, c0 = time.perf_counter_ns(), time.process_time_ns()
        index.search(q, k)
        search_cpu.append(time.process_time_ns() - c0)
        search.append(time.perf_counter_ns() - t0)
    return {
        "rerank_update": percentiles(rerank),
        "rerank_update_cpu": percentiles(rerank_cpu),
        "numpy": percentiles(base),
        "numpy_cpu": percentiles(base_cpu),
        "agreement": agree / iters,
        "search": percentiles(search),
        "search_cpu": percentiles(search_cpu),
        "touched": len(bandits.touched),
    }


def bench_throughput(n_tools: int, d: int, seconds: float, rng: np.random.Generator) -> dict[str, float]:
    """select + feedback on pre-encoded queries through the RATED object (locks and all)."""
    index = ToolIndex(d, [f"t{i}" for i in range(n_tools)], unit_rows(n_tools, d, rng))
    r = RATED(None, index, rng.random(n_tools))
    queries = unit_rows(1000, d, rng)
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        q = queries[n % 1000]
        i = r.select_embedding(q)
        r.feedback_embedding(i, q, (n % 3) != 0)
        n += 1
    elapsed = time.perf_counter() - start
    return {"decisions_per_s": n / elapsed, "touched": len(r.bandits.touched)}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def bench_million(d: int, rng: np.random.Generator) -> dict[str, float]:
    """Index and bandit memory for 1,000,000 tools, and one search over them."""
    n = 1_000_000
    before = rss_mb()
    index = ToolIndex(d)
    emb = unit_rows(n, d, rng)
    index.add([f"tool:{i}" for i in range(n)], emb)
    del emb
    bandits = DiscountedLinUCB(d, rng.random(n))
    q = unit_rows(1, d, rng)[0]
    for i in rng.integers(0, n, 2000).tolist():
        bandits.update(i, q, 1.0)
    t0 = time.perf_counter_ns()
    for _ in range(5):
        index.search(q, 10)
    search_ms = (time.perf_counter_ns() - t0) / 5e6
    return {
        "dim": d,
        "index_matrix_mb": index.nbytes / 2**20,
        "bandit_state_mb": bandits.nbytes() / 2**20,
        "touched": len(bandits.touched),
        "peak_rss_growth_mb": rss_mb() - before,
        "search_ms": search_ms,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=5000, help="catalog size of the overhead runs")
    parser.add_argument("--dim", type=int, default=768)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--iters", type=int, default=5000)
    parser.add_argument("--encode-iters", type=int, default=100)
    parser.add_argument("--warm", type=int, default=2000, help="warm-up updates before timing")
    parser.add_argument("--seconds", type=float, default=3.0, help="length of the throughput loop")
    parser.add_argument("--million", action="store_true", help="also measure 1,000,000 tools")
    parser.add_argument("--million-dim", type=int, default=384)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"# RATED speed: {os.cpu_count()} CPUs (1-min load average {os.getloadavg()[0]:.1f} at start), "
        f"numpy {np.__version__}, python {sys.version.split()[0]}"
    )

    enc = bench_encode(args.encode_iters)
    over = bench_overhead(args.tools, args.dim, args.k, args.iters, args.warm, rng)
    base = enc["wall"]["p50"]

    def row(name: str, wall: dict[str, float], cpu: dict[str, float]) -> list[str]:
        return [
            name,
            f"{wall['p50']:.4f}",
            f"{wall['p95']:.4f}",
            f"{cpu['p50']:.4f}",
            f"{cpu['p95']:.4f}",
            f"{wall['p50'] / base:.4f}",
        ]

    floor = numpy_call_floor()
    rows = [
        row("one small numpy call (machine floor)", floor["wall"], floor["cpu"]),
        row("encode query (baseline)", enc["wall"], enc["cpu"]),
        row(f"rerank + update, numpy calls (K={args.k}, d={args.dim})", over["numpy"], over["numpy_cpu"]),
        row(f"rerank + update (K={args.k}, d={args.dim})", over["rerank_update"], over["rerank_update_cpu"]),
        row(f"top-{args.k} search over {args.tools} tools", over["search"], over["search_cpu"]),
    ]
    headers = [
        "per decision (batch 1)",
        "wall p50 ms",
        "wall p95 ms",
        "cpu p50 ms",
        "cpu p95 ms",
        "x encode p50",
    ]
    print_table(headers, rows, title="Overhead")
    print(
        f"\n{over['touched']} tools held bandit state during the timing; encode dim {enc['dim']}. "
        f"rerank + update is {over['numpy']['p50'] / over['rerank_update']['p50']:.1f}x faster than the numpy "
        f"calls at p50, {over['numpy']['p95'] / over['rerank_update']['p95']:.1f}x at p95; the two chose the "
        f"same tool in {over['agreement']:.1%} of the decisions.\n"
    )

    tp = bench_throughput(args.tools, args.dim, args.seconds, rng)
    print_table(
        ["loop", "decisions/s", "tools touched"],
        [
            [
                f"select + feedback, {args.tools} tools, d={args.dim}",
                f"{tp['decisions_per_s']:.0f}",
                tp["touched"],
            ]
        ],
        title="Throughput (pre-encoded queries)",
    )
    if args.million:
        m = bench_million(args.million_dim, rng)
        print()
        print_table(
            ["1,000,000 tools", "value"],
            [
                ["embedding dim", m["dim"]],
                ["index matrix (MB)", f"{m['index_matrix_mb']:.0f}"],
                [f"bandit state, {m['touched']} touched tools (MB)", f"{m['bandit_state_mb']:.1f}"],
                ["peak RSS growth (MB)", f"{m['peak_rss_growth_mb']:.0f}"],
                ["top-10 search (ms)", f"{m['search_ms']:.1f}"],
            ],
            title="Memory at a million tools",
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
