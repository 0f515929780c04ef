"""What bfloat16 vectors and OpenVINO change in a build's numbers: Syn's yield and ranks under each.

Run: ``ECOAGENT_CACHE=<the build's cache> .venv/bin/python bench/bench_encode_dtype.py --out OUT
[--models sentence-transformers/all-MiniLM-L6-v2,sentence-transformers/all-mpnet-base-v2]
[--dtypes float32,bfloat16] [--backends torch,openvino]``. Prints a
Markdown table (copied into ``bench/results/encode.md``).

- Reads ``OUT/tools.parquet`` and ``OUT/syn/positives.parquet`` (every kept Syn query and its tool).
- For each encoder, dtype and backend (torch, or OpenVINO's CPU runtime: ``ecoagent.openvino_encoder``), the catalog's tool documents and the queries go through the shared embedding
  cache (``ecoagent.embeddings.EmbeddingCache`` with that dtype), so the build's own vectors are read back
  and the others' are computed once (``encode s``: the whole catalog and the queries); then each query's own tool is ranked among all tools
  (``generators.retrieval.self_ranks``, the yield's ranking).
- Per row: the yield's per-tool median (sampled tools without a kept query count 0, as in
  ``syn/stats.json``), the share of queries whose tool is in the top 10, MRR, and against the first row:
  queries whose top-10 verdict flips and the largest per-tool change.
- Compare rows of one run only. The row of the build's own dtype and backend reproduces its
  ``syn/stats.json``.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl

from ecoagent.config import MINILM, MPNET
from ecoagent.embeddings import CACHE_FILE, EmbeddingCache, static_encoder_key
from ecoagent.models import cache_dir, load_encoder
from ecoagent.schemas import tool_documents
from ecoagent.summary import cpu_model, print_table
from generators.pipeline import TOP_K
from generators.retrieval import self_ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--models", default=f"{MINILM},{MPNET}")
    parser.add_argument("--dtypes", default="float32,bfloat16")
    parser.add_argument("--backends", default="torch")
    args = parser.parse_args()
    tools = pl.read_parquet(args.out / "tools.parquet")
    positives = pl.read_parquet(args.out / "syn" / "positives.parquet").unique("query_id", keep="first")
    stats = json.loads((args.out / "syn" / "stats.json").read_text())
    sampled = int(stats["tools"]["sampled"])
    index = {t: i for i, t in enumerate(tools["tool_id"].to_list())}
    positive = np.array([index[t] for t in positives["tool_id"]])
    queries, docs = positives["query"].to_list(), tool_documents(tools)
    print(f"CPU: {cpu_model()}; build {args.out}: {tools.height} tools, {len(queries)} distinct Syn queries")
    print(
        f"of {positives['tool_id'].n_unique()} tools ({sampled} sampled); build's dtype: "
        f"{stats['config'].get('encode_dtype', 'float32 (before the dtype was recorded)')}, backend: "
        f"{stats['config'].get('encode_backend', 'torch (before the backend was recorded)')}\n"
    )
    rows = []
    for name in args.models.split(","):
        base_hit, base_tool = None, None
        key = static_encoder_key(name) or name
        variants = [(d, b) for b in args.backends.split(",") for d in args.dtypes.split(",")]
        for dtype, backend in variants:
            store = EmbeddingCache(cache_dir() / CACHE_FILE, key, dtype, backend)
            t0 = time.perf_counter()
            t = store.encode(docs, lambda name=name: load_encoder(name))
            q = store.encode(queries, lambda name=name: load_encoder(name))
            seconds = time.perf_counter() - t0
            ranks = self_ranks(q, t, positive)
            hit = ranks <= TOP_K
            per = Counter(tid for tid, h in zip(positives["tool_id"], hit, strict=True) if h)
            per_tool = np.array([per.get(tid, 0) for tid in sorted(set(positives["tool_id"]))], float)
            per_tool = np.concatenate([per_tool, np.zeros(sampled - per_tool.size)])
            if base_hit is None:
                base_hit, base_tool = hit, per_tool
            rows.append(
                [
                    name.split("/")[-1],
                    dtype,
                    backend,
                    f"{np.median(per_tool):g}",
                    f"{per_tool.mean():.3f}",
                    f"{hit.mean():.4f}",
                    f"{(1.0 / ranks).mean():.4f}",
                    str(int((hit != base_hit).sum())),
                    f"{np.abs(per_tool - base_tool).max():g}",
                    f"{seconds:.1f}",
                ]
            )
    header = [
        "encoder",
        "dtype",
        "backend",
        "median yield",
        "mean yield",
        "share top 10",
        "MRR",
        "queries flipped",
        "max tool change",
        "encode s",
    ]
    print_table(header, rows)


if __name__ == "__main__":
    main()
