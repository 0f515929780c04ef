"""Benchmark: is Real's judge reproducible? The same pairs scored twice per slot count, to the bit.

llama.cpp batches the tokens of every request in flight into one forward pass, so with several slots a
pair's P(yes) depends on which neighbours its tokens met, in whatever order the slots' threads arrived.
Two builds of the same code then calibrate different thresholds and keep different Real queries
(bench/RESULTS.md, "Is the judge deterministic?"). This scores a build's first candidate pairs with a judge
loaded per pass, as a build loads it (empty prompt cache, the Real stage's batch size and prompt), twice per
slot count, and prints per pass the wall and CPU seconds per judgment, then per slot count how many scores
the second pass repeated to the bit and the largest difference.

    .venv/bin/python bench/bench_judge_determinism.py --out OUT [--pairs 64] [--slots 4,1] [--passes 2]

``OUT`` is a build's output folder (its ``tools.parquet`` and ``real/decisions.parquet``); the judge is the
embedded profile's (``ecoagent.config``), on every core this process may use unless ``--threads``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from ecoagent.config import ModelConfig, get_profile
from ecoagent.llm import make_llm
from ecoagent.parallel import available_cores
from ecoagent.summary import cpu_model, print_table
from validators.pipeline import validator_pairs
from validators.validator import PairText, Validator


def score_pass(
    models: ModelConfig, pairs: Sequence[PairText], slots: int, threads: int
) -> tuple[np.ndarray, float, float]:
    """One pass: a freshly loaded judge scores every pair (no checkpoint carried over)."""
    llm = make_llm(models, workload="judge", slots=slots, threads=threads)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            validator = Validator(llm, Path(scratch) / "scores.jsonl")
            t0, c0 = time.perf_counter(), time.process_time()
            scores = validator.score(pairs)
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        llm.close()
    return np.array([scores[p.key] for p in pairs]), wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="a build's output folder")
    parser.add_argument("--pairs", type=int, default=64)
    parser.add_argument("--slots", default="4,1", help="judge slot counts to compare")
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--threads", type=int, default=available_cores())
    args = parser.parse_args()
    if args.passes < 2:
        parser.error("--passes must be at least 2: a pass is compared with the first")

    out = Path(args.out)
    decisions = pl.read_parquet(out / "real" / "decisions.parquet")
    pairs = validator_pairs(decisions, pl.read_parquet(out / "tools.parquet"))[: args.pairs]
    models = get_profile("embedded").models
    print(f"CPU: {cpu_model()}; {len(pairs)} candidate pairs of {out}, {args.threads} threads, {models.llm}")

    passes: list[list] = []
    agreement: list[list] = []
    first: dict[int, np.ndarray] = {}
    for slots in (int(s) for s in args.slots.split(",")):
        runs = []
        for n in range(args.passes):
            scores, wall, cpu = score_pass(models, pairs, slots, args.threads)
            runs.append(scores)
            passes.append([slots, n + 1, wall / len(pairs), cpu / len(pairs)])
        first[slots] = runs[0]
        for n, scores in enumerate(runs[1:], start=2):
            diff = np.abs(scores - runs[0])
            agreement.append([f"{slots} slots, pass {n} vs 1", int((diff == 0).sum()), float(diff.max())])
    slot_counts = list(first)
    for other in slot_counts[1:]:
        diff = np.abs(first[other] - first[slot_counts[0]])
        agreement.append(
            [f"{other} vs {slot_counts[0]} slots, pass 1", int((diff == 0).sum()), float(diff.max())]
        )
    print_table(["slots", "pass", "wall s / judgment", "CPU-s / judgment"], passes, title="cost per pass")
    print_table(
        ["comparison", f"equal to the bit (of {len(pairs)})", "largest difference"],
        agreement,
        title="agreement",
    )


if __name__ == "__main__":
    main()
