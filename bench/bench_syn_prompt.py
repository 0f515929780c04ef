"""The Syn prompt on a pilot of tools against an earlier build's queries for the same tools.

Run: ``.venv/bin/python bench/bench_syn_prompt.py --tools out/tools.parquet --baseline out/syn/queries.parquet
[--per-platform 6] [--checkpoint /tmp/pilot.jsonl] [--rivals K] [--tool-ids ID,ID,...]``. Draws
``--per-platform`` tools per platform (seed 7) from the baseline's tools (or takes ``--tool-ids``),
generates for them with the current prompt and the embedded profile's LLM (showing ``--rivals`` nearest
tools, ``generators.rivals``), and prints, per platform and overall, the yield (queries whose own tool is in the top 10 of all tools) under
MiniLM and mpnet for the new queries and the baseline's, with the current filters applied to both, the
share of queries that name their tool or its service, and generation seconds per tool. The checkpoint makes a rerun
resume. ``--baseline generate`` generates the baseline in the same run instead: the current prompt without
rivals, checkpointed in ``--baseline-checkpoint``. A pilot of a few tools per platform is a smoke-sized comparison: it says which prompt to try on a
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
from generators.equivalents import EquivalenceRule
from generators.filters import names_service, names_tool, rejection
from generators.generate import QueryGenerator
from generators.pipeline import generation_key, sample_with_rivals, tool_space
from generators.prompts import prompt_version
from generators.retrieval import self_ranks

PLATFORMS = ("crewai", "langchain", "llamaindex", "mcp", "n8n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", default="out/tools.parquet")
    parser.add_argument("--baseline", default="out/syn/queries.parquet")
    parser.add_argument("--per-platform", type=int, default=6)
    parser.add_argument("--checkpoint", default="/tmp/syn-prompt-pilot.jsonl")
    parser.add_argument("--baseline-checkpoint", default="/tmp/syn-prompt-pilot-baseline.jsonl")
    parser.add_argument("--rivals", type=int, default=None, help="rivals shown; default: the profile's")
    parser.add_argument("--tool-ids", default=None, help="comma-separated tool ids instead of a draw")
    args = parser.parse_args()
    tools = pl.read_parquet(args.tools)
    generate_baseline = args.baseline == "generate"
    base = None if generate_baseline else pl.read_parquet(args.baseline)
    rng = random.Random(7)
    ids = sorted(set(tools["tool_id"] if base is None else base["tool_id"]))
    if args.tool_ids:
        pick = [t.strip() for t in args.tool_ids.split(",") if t.strip()]
        unknown = sorted(set(pick) - set(ids))
        if unknown:
            raise SystemExit(f"--tool-ids not in the {'table' if base is None else 'baseline'}: {unknown}")
    else:
        pick = [
            t
            for p in PLATFORMS
            for t in rng.sample([x for x in ids if x.startswith(p + ":")], args.per_platform)
        ]
    profile = get_profile("embedded")
    if args.rivals is not None:
        profile = profile.replace(syn_rivals=args.rivals)
    llm = make_llm(profile.models)
    config, _ = generation_key(llm.info(), profile)
    chosen = tools.filter(pl.col("tool_id").is_in(pick))
    space = tool_space(tools, profile, EquivalenceRule()) if config.rivals else None
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    todo = sample_with_rivals(tools, chosen, config.rivals, space)
    records = list(QueryGenerator(llm, config, seed=profile.seed).run(todo, Path(args.checkpoint)))
    seconds["current"] = time.perf_counter() - started
    picked = set(pick)
    runs = {
        f"current ({prompt_version(config.rivals)})": [
            (r["tool_id"], q["query"]) for r in records for q in r["queries"]
        ]
    }
    if base is None:
        plain, _ = generation_key(llm.info(), profile.replace(syn_rivals=0))
        started = time.perf_counter()
        baseline = list(
            QueryGenerator(llm, plain, seed=profile.seed).run(
                chosen.to_dicts(), Path(args.baseline_checkpoint)
            )
        )
        seconds["baseline"] = time.perf_counter() - started
        runs[f"baseline ({prompt_version(0)}, this run)"] = [
            (r["tool_id"], q["query"]) for r in baseline for q in r["queries"]
        ]
    else:
        runs["baseline"] = [
            (t, q) for t, q in zip(base["tool_id"], base["query"], strict=True) if t in picked
        ]
    llm.close()
    names = dict(zip(tools["tool_id"], tools["name"], strict=True))
    index = {t: i for i, t in enumerate(tools["tool_id"])}
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
    spent = ", ".join(f"{k} {v:.0f} s ({v / len(pick):.1f} s per tool)" for k, v in seconds.items())
    print(f"machine: {cpu_model()}; generation for {len(pick)} tools: {spent} (0 when resumed)")
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
