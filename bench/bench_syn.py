"""Benchmarks of the Syn stage: embedded generation, MinHash dedup, hard-negative mining, SBERT encoding.

Run: ``.venv/bin/python bench/bench_syn.py [--tools out/tools.parquet] [--gen-samples 16]``; prints
Markdown tables (copied into ``bench/results/syn.md``). Each table has a baseline measured in the same
run: one-at-a-time generation, datasketch's per-object ``MinHash`` + ``MinHashLSH``, and exact all-pairs
Jaccard for dedup quality.

The 70,000 dedup texts are synthesized from real ones: the snapshot's ToolBench user queries plus the
first 5-12 words of every crawled tool description, each copied with 0-6 random word edits (drop, swap,
replace, insert), so the set holds exact copies, graded near-duplicates and distinct texts of 5-120 words.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import time
from pathlib import Path

import numpy as np
import polars as pl

from ecoagent.config import MINILM, ModelConfig, default_mirror
from ecoagent.summary import print_table
from generators.dedup import MinHashDeduper, exact_duplicate_pairs, shingles
from generators.generate import GenerationConfig
from generators.negatives import NegativeConfig, mine_negatives
from generators.perturb import perturb


def real_texts(tools: pl.DataFrame) -> list[str]:
    root = default_mirror() / "toolbench" / "StableToolBench"
    texts = [
        q["query"] for p in sorted(root.rglob("test_instruction/*.json")) for q in json.loads(p.read_text())
    ]
    texts += [
        q["query"]
        for p in sorted(root.rglob("gpt-3.5-turbo_CoT/*.json"))
        for q in json.loads(p.read_text()).values()
    ]
    rng = random.Random(0)
    for d in tools["description"].to_list():
        words = d.split()
        if len(words) >= 5:
            texts.append(" ".join(words[: rng.randint(5, 12)]))
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


def synth(base: list[str], n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    return [perturb(rng.choice(base), rng, rng.randint(0, 6)) for _ in range(n)]


def bench_generation(tools: pl.DataFrame, samples: int) -> None:
    from ecoagent.llm import make_llm
    from generators.prompts import single_conversation

    llm = make_llm(ModelConfig(), batch_size=16)
    per_tool = math.ceil(GenerationConfig().queries_per_tool * GenerationConfig().oversample)  # as Syn asks
    rows = tools.sample(max(1, math.ceil(samples / per_tool)), seed=0).to_dicts()
    convs = [single_conversation(r, i) for r in rows for i in range(per_tool)][:samples]
    params = GenerationConfig().sampling(0)
    results = []
    modes = (
        ("one at a time", 1, False),
        ("batched 16", 16, False),
        ("batched 16, shared prefix once", 16, True),
    )
    for label, batch, share in modes:
        llm.batch_size = batch  # type: ignore[attr-defined]
        llm.share_prefix = share  # type: ignore[attr-defined]
        start, cpu0 = time.perf_counter(), time.process_time()
        out = llm.generate(convs, params)
        dt, cpu = time.perf_counter() - start, time.process_time() - cpu0
        tokens = llm.count_tokens(out)  # type: ignore[attr-defined]
        results.append((label, len(convs), tokens, dt, cpu, tokens / dt, tokens / cpu))
    base = results[0][5]
    print_table(
        [
            "mode",
            "samples",
            "generated tokens",
            "wall s",
            "CPU s",
            "tokens/s (wall)",
            "tokens per CPU-s",
            "x baseline",
        ],
        [(*r, r[5] / base) for r in results],
        title="Embedded generation (SmolLM2-135M, one query per sample, ~350-token few-shot prompt)",
    )


def bench_dedup(base: list[str], n: int) -> None:
    texts = synth(base, n)
    deduper = MinHashDeduper()
    start, cpu0 = time.perf_counter(), time.process_time()
    keep, pairs = deduper.keep_mask(texts)
    dt, cpu = time.perf_counter() - start, time.process_time() - cpu0

    from datasketch import MinHash, MinHashLSH

    sub = texts[:5000]
    start, cpu0 = time.perf_counter(), time.process_time()
    lsh = MinHashLSH(num_perm=128, params=(32, 4))
    sigs = []
    for i, t in enumerate(sub):
        m = MinHash(num_perm=128)
        m.update_batch([g.encode() for g in shingles(t)])
        lsh.insert(i, m)
        sigs.append(m)
    for m in sigs:
        lsh.query(m)
    dt_ds, cpu_ds = time.perf_counter() - start, time.process_time() - cpu0

    sample = texts[:3000]
    exact = set(exact_duplicate_pairs(sample))
    found = set(deduper.duplicate_pairs(sample))
    print_table(
        ["method", "texts", "wall s", "CPU s", "texts/s (wall)", "texts per CPU-s", "x baseline (CPU)"],
        [
            (
                "datasketch MinHash + MinHashLSH, per object (baseline)",
                len(sub),
                dt_ds,
                cpu_ds,
                len(sub) / dt_ds,
                len(sub) / cpu_ds,
                1.0,
            ),
            (
                "MinHashDeduper (vectorized signatures + banding + exact check)",
                n,
                dt,
                cpu,
                n / dt,
                n / cpu,
                (n / cpu) / (len(sub) / cpu_ds),
            ),
        ],
        title=f"Dedup throughput ({n:,} synthesized texts; {int((~keep).sum()):,} removed, {len(pairs):,} pairs)",
    )
    print()
    print_table(
        ["sample", "exact pairs (J>0.7)", "LSH pairs", "recall", "precision"],
        [
            (
                len(sample),
                len(exact),
                len(found),
                len(found & exact) / max(1, len(exact)),
                len(found & exact) / max(1, len(found)),
            )
        ],
        title="Dedup quality against exact all-pairs Jaccard",
    )


def bench_negatives(n_queries: int, n_tools: int, encode_sentences: list[str]) -> None:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((n_queries, 384)).astype(np.float32)
    t = rng.standard_normal((n_tools, 384)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    t /= np.linalg.norm(t, axis=1, keepdims=True)
    positive = rng.integers(n_tools, size=n_queries)
    start, cpu0 = time.perf_counter(), time.process_time()
    negs = mine_negatives(q, t, positive, {}, NegativeConfig(hard=1, random=1))
    dt, cpu = time.perf_counter() - start, time.process_time() - cpu0
    start, cpu0 = time.perf_counter(), time.process_time()
    for s in range(0, n_queries, 8192):
        np.argsort(-(q[s : s + 8192] @ t.T), axis=1)[:, :32]
    dt_base, cpu_base = time.perf_counter() - start, time.process_time() - cpu0

    from ecoagent.models import load_encoder

    encoder = load_encoder(MINILM)
    encoder.encode(encode_sentences[:32])
    start, cpu0 = time.perf_counter(), time.process_time()
    encoder.encode(encode_sentences, batch_size=64)
    dt_enc, cpu_enc = time.perf_counter() - start, time.process_time() - cpu0
    print_table(
        ["step", "size", "wall s", "CPU s", "rate (wall)", "x baseline (wall)"],
        [
            (
                "numpy matmul + full argsort (baseline)",
                f"{n_queries:,} x {n_tools:,}",
                dt_base,
                cpu_base,
                f"{n_queries / dt_base:,.0f} queries/s",
                1.0,
            ),
            (
                "mine_negatives (torch top-k, 1 hard + 1 random)",
                f"{n_queries:,} x {n_tools:,}",
                dt,
                cpu,
                f"{n_queries / dt:,.0f} queries/s",
                dt_base / dt,
            ),
            (
                "MiniLM encoding of real queries",
                f"{len(encode_sentences):,} sentences",
                dt_enc,
                cpu_enc,
                f"{len(encode_sentences) / dt_enc:,.1f} sentences/s",
                "",
            ),
        ],
        title=f"Hard-negative mining given embeddings ({len(negs.tool):,} negatives)",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, default=Path("out/tools.parquet"))
    parser.add_argument("--gen-samples", type=int, default=16, help="0 skips the generation benchmark")
    parser.add_argument("--dedup", type=int, default=70_000)
    parser.add_argument("--queries", type=int, default=70_000)
    parser.add_argument("--n-tools", type=int, default=5_000)
    parser.add_argument("--encode", type=int, default=500)
    args = parser.parse_args()
    tools = pl.read_parquet(args.tools)
    base = real_texts(tools)
    bench_dedup(base, args.dedup)
    print()
    bench_negatives(args.queries, args.n_tools, base[: args.encode])
    if args.gen_samples:
        print()
        bench_generation(tools, args.gen_samples)


if __name__ == "__main__":
    main()
