"""The Syn prompt on a pilot of tools against an earlier build's queries for the same tools.

Run: ``.venv/bin/python bench/bench_syn_prompt.py --tools out/tools.parquet --baseline out/syn/queries.parquet
[--per-platform 6] [--checkpoint /tmp/pilot.jsonl]``. Draws ``--per-platform`` tools per platform (seed 7)
from the baseline's tools, generates for them with the current prompt and the embedded profile's LLM, and
prints, per platform and overall, the yield (queries whose own tool is in the top 10 of all tools) under
MiniLM and mpnet for the new queries and the baseline's, with the current filters applied to both, the
share of queries that name their tool or its service, and generation seconds per tool. The checkpoint makes a rerun
resume. A pilot of a few tools per platform is a smoke-sized comparison: it says which prompt to try on a
build's 100 tools, not what that build will give.
"""

from __future__ import annotations

import argparse
import random
import time
from pathlib import Path

import numpy as np
import polars as pl

from ecoagent.config import MINILM, get_profile
from ecoagent.embeddings import embed
from ecoagent.llm import make_llm
from ecoagent.schemas import tool_documents
from ecoagent.summary import cpu_model, print_table
from generators.filters import names_service, names_tool, rejection
from generators.generate import QueryGenerator
from generators.pipeline import generation_key
from generators.prompts import PROMPT_VERSION
from generators.retrieval import self_ranks

PLATFORMS = ("crewai", "langchain", "llamaindex", "mcp", "n8n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="out/tools.parquet")
    parser.add_argument("--baseline", default="out/syn/queries.parquet")
    parser.add_argument("--per-platform", type=int, default=6)
    parser.add_argument("--checkpoint", default="/tmp/syn-prompt-pilot.jsonl")
    args = parser.parse_args()
    tools = pl.read_parquet(args.tools)
    base = pl.read_parquet(args.baseline)
    rng = random.Random(7)
    ids = sorted(set(base["tool_id"]))
    pick = [
        t for p in PLATFORMS for t in rng.sample([x for x in ids if x.startswith(p + ":")], args.per_platform)
    ]
    profile = get_profile("embedded")
    llm = make_llm(profile.models)
    config, _ = generation_key(llm.info(), profile)
    started = time.perf_counter()
    todo = tools.filter(pl.col("tool_id").is_in(pick)).to_dicts()
    records = list(QueryGenerator(llm, config, seed=profile.seed).run(todo, Path(args.checkpoint)))
    seconds = time.perf_counter() - started
    llm.close()
    picked = set(pick)
    names = dict(zip(tools["tool_id"], tools["name"], strict=True))
    index = {t: i for i, t in enumerate(tools["tool_id"])}
    runs = {
        f"current ({PROMPT_VERSION})": [(r["tool_id"], q["query"]) for r in records for q in r["queries"]],
        "baseline": [(t, q) for t, q in zip(base["tool_id"], base["query"], strict=True) if t in picked],
    }
    rows = []
    for encoder in (MINILM, profile.models.recall_encoder):
        tool_emb = embed(encoder, tool_documents(tools))
        for label, pairs in runs.items():
            pairs = [(t, q) for t, q in pairs if not rejection(q)]  # today's filters on both
            ranks = self_ranks(
                embed(encoder, [q for _, q in pairs]), tool_emb, np.array([index[t] for t, _ in pairs])
            )
            hits = ranks <= 10
            naming = np.array([names_tool(q, names[t]) for t, q in pairs])
            service = np.array([names_service(q, {"tool_id": t}) for t, q in pairs])
            for platform in (*PLATFORMS, ""):
                per = [
                    sum(int(h) for (t, _), h in zip(pairs, hits, strict=True) if t == x)
                    for x in pick
                    if x.startswith(platform)
                ]
                mask = np.array([t.startswith(platform) for t, _ in pairs])
                rows.append(
                    [
                        encoder.split("/")[-1],
                        label,
                        platform or "all",
                        len(per),
                        float(np.median(per)),
                        round(float(np.mean(per)), 2),
                        round(float(hits[mask].mean()), 3),
                        round(float(hits[mask & ~naming].mean()), 3),
                        round(float(naming[mask].mean()), 3),
                        round(float(service[mask].mean()), 3),
                    ]
                )
    print(
        f"machine: {cpu_model()}; generation {seconds:.0f} s for {len(pick)} tools ({seconds / len(pick):.1f} s per tool, 0 when resumed)"
    )
    print_table(
        [
            "encoder",
            "queries",
            "platform",
            "tools",
            "median yield",
            "mean",
            "share in top 10",
            "share, not naming",
            "naming",
            "names service",
        ],
        rows,
        title=f"Syn prompt pilot: {len(pick)} tools, one seed (smoke-sized)",
    )


if __name__ == "__main__":
    main()
