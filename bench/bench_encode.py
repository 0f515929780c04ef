"""Encoding the catalog on a CPU: batch sizes and precisions for the packaged encoders, one run.

Run: ``.venv/bin/python bench/bench_encode.py [--tools out/tools.parquet] [--docs 800] [--batches 64,32,16,8]
[--dtypes float32,bfloat16] [--backends torch,openvino] [--models sentence-transformers/all-MiniLM-L6-v2,sentence-transformers/all-mpnet-base-v2]``.
Prints a Markdown table (copied into ``bench/results/encode.md``).

- Documents: ``--docs`` tool documents (``ecoagent.schemas.tool_document``) drawn at random (seed 0) from
  the crawled catalog, so the long tail of long descriptions is in the sample as it is in a build.
- Each model encodes the same documents once per (dtype, batch size), in the order given, after one
  untimed warm-up call per dtype; ratios are against the model's first row, ``max abs diff`` is the
  largest coordinate difference from that row's vectors and ``min cos`` the lowest cosine to them.
- ``bfloat16`` is torch's CPU autocast (``ecoagent.embeddings.precision``), what the embedding cache uses
  where the CPU has AMX-BF16 or AVX512-BF16 (``ecoagent.embeddings.encode_dtype``); on a CPU without
  native bf16 it is emulated and slow.
- ``--backends``: ``torch`` (sentence-transformers' own ``encode``) and ``openvino`` (the same model converted
  by ``ecoagent.openvino_encoder``, which the embedding cache uses where OpenVINO is installed:
  ``ecoagent.embeddings.encode_backend``); under OpenVINO ``bfloat16`` is its inference precision hint.
  The conversion and compilation (about a second per precision) are outside the timed rows.
- sentence-transformers sorts a call's texts by length, so only the longest batches are padded; on a CPU
  the padded attention of a big batch of long documents is what a smaller batch saves.
- Threads: torch's default (the cores it sees). Compare rows of one run only: machines differ.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import polars as pl

from ecoagent.config import MINILM, MPNET
from ecoagent.embeddings import precision
from ecoagent.models import load_encoder
from ecoagent.schemas import tool_documents
from ecoagent.summary import cpu_model, print_table


def bench(
    model_name: str, docs: list[str], batches: list[int], dtypes: list[str], backends: list[str]
) -> list[list[str]]:
    model = load_encoder(model_name)
    rows, base, base_wall = [], None, None
    for backend in backends:
        for dtype in dtypes:
            if backend == "openvino":
                from ecoagent.openvino_encoder import OpenVINOEncoder

                encoder, autocast = OpenVINOEncoder(model, dtype), "float32"
            else:
                encoder, autocast = model, dtype
            with precision(autocast):
                encoder.encode(docs[:32], batch_size=16, show_progress_bar=False)  # warm-up: threads, kernels
            for bs in batches:
                t0, c0 = time.perf_counter(), time.process_time()
                with precision(autocast):
                    emb = encoder.encode(
                        docs, batch_size=bs, normalize_embeddings=True, show_progress_bar=False
                    )
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                emb = np.asarray(emb, dtype=np.float32)
                if base is None:
                    base, base_wall = emb, wall
                rows.append(
                    [
                        model_name.split("/")[-1],
                        backend,
                        dtype,
                        str(bs),
                        f"{wall:.1f}",
                        f"{cpu:.1f}",
                        f"{len(docs) / wall:.1f}",
                        f"{base_wall / wall:.2f}x",
                        f"{float(np.abs(emb - base).max()):.1e}",
                        f"{float((emb * base).sum(axis=1).min()):.5f}",
                    ]
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="out/tools.parquet")
    parser.add_argument("--docs", type=int, default=800)
    parser.add_argument("--batches", default="64,32,16,8")
    parser.add_argument("--dtypes", default="float32")
    parser.add_argument("--backends", default="torch")
    parser.add_argument("--models", default=f"{MINILM},{MPNET}")
    args = parser.parse_args()
    documents = tool_documents(pl.read_parquet(args.tools))
    rng = np.random.default_rng(0)
    pick = rng.choice(len(documents), min(args.docs, len(documents)), replace=False)
    docs = [documents[i] for i in pick]
    batches = [int(b) for b in args.batches.split(",")]
    lengths = np.array([len(d.split()) for d in docs])
    print(f"CPU: {cpu_model()}; {len(docs)} of {len(documents)} catalog documents, words per document")
    print(f"median {np.median(lengths):.0f}, p90 {np.percentile(lengths, 90):.0f}, max {lengths.max()}\n")
    dtypes = args.dtypes.split(",")
    header = [
        "model",
        "backend",
        "dtype",
        "batch",
        "wall s",
        "CPU s",
        "docs/s",
        "speed vs first row",
        "max abs diff",
        "min cos",
    ]
    backends = args.backends.split(",")
    rows = [row for name in args.models.split(",") for row in bench(name, docs, batches, dtypes, backends)]
    print_table(header, rows)


if __name__ == "__main__":
    main()
