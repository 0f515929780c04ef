"""Two sets of Syn draws of the same tools, compared tool by tool: is a generation change worth its cost?

Run: ``.venv/bin/python bench/bench_syn_draws.py --tools out/tools.parquet --before A/syn B/syn ...
--after C/syn D/syn ...`` (``syn`` folders of builds or ``ecoagent syn`` runs over the same sampled
tools, e.g. the default 100 with one seed: the draws differ because llama.cpp's sampled text depends on
what its slots had cached). For each draw it prints the cost (``stats.json``: LLM wall seconds, tokens
decoded, list calls, list items rejected) and the text (queries kept, within-tool similarity, share
naming their tool) and, under MiniLM and mpnet, the per-tool yield (queries whose own tool ranks in the
top 10 of the whole table): its median and mean. Then, per encoder, the change of each tool's yield
averaged over its draws (after minus before), with a 90 % bootstrap interval over tools resampled within
platforms, overall, without the queries that name their tool, and per platform.

A median of per-tool yield jumps between draws (the counts are bimodal); the paired mean over several
draws of the same tools is the steadier comparison. It says nothing about queries a build did not keep,
and the interval covers the tool sample, not the spread between draws of one tool.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import polars as pl

from ecoagent.bootstrap import stratified_interval
from ecoagent.config import MINILM, get_profile
from ecoagent.embeddings import embed
from ecoagent.schemas import tool_documents
from ecoagent.summary import cpu_model, print_table
from generators.retrieval import self_ranks

TOP_K = 10


def per_tool_yield(
    queries: pl.DataFrame, tools: list[str], index: dict[str, int], tool_emb: np.ndarray, encoder: str
) -> tuple[np.ndarray, np.ndarray]:
    """(hits per tool of ``tools``, hits per tool among queries that do not name their tool)."""
    emb = embed(encoder, queries["query"].to_list())
    positive = np.array([index[t] for t in queries["tool_id"]])
    hit = self_ranks(emb, tool_emb, positive) <= TOP_K
    own = {t: i for i, t in enumerate(tools)}
    total, plain = np.zeros(len(tools)), np.zeros(len(tools))
    for tool_id, found, names in zip(queries["tool_id"], hit, queries["names_tool"], strict=True):
        total[own[tool_id]] += found
        plain[own[tool_id]] += found and not names
    return total, plain


def draw_row(label: str, folder: Path) -> list[object]:
    path = folder / "stats.json"
    stats = json.loads(path.read_text())
    try:
        gen, q = stats["generation"], stats["queries"]
        text = [q["total"], q["within_tool_similarity"]["mean"], q["names_tool_share"]]
    except (KeyError, TypeError) as err:
        raise SystemExit(f"{path}: not a Syn stats.json of this version (no {err})") from err
    cost = [gen.get(k) for k in ("llm_wall_s", "generated_tokens", "samples", "failures")]
    return [label, str(folder.parent), *cost, *text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", required=True, help="the tool table the draws sampled from")
    parser.add_argument("--before", nargs="+", type=Path, required=True, help="syn folders, before")
    parser.add_argument("--after", nargs="+", type=Path, required=True, help="syn folders, after")
    parser.add_argument("--boot", type=int, default=5000)
    args = parser.parse_args()
    table = pl.read_parquet(args.tools)
    draws = {"before": args.before, "after": args.after}
    queries = {k: [pl.read_parquet(f / "queries.parquet") for f in v] for k, v in draws.items()}
    sampled = [set(q["tool_id"]) for qs in queries.values() for q in qs]
    tools = sorted(set().union(*sampled))  # a tool none of whose queries survived counts 0 in that draw
    for folder, ids in zip([f for v in draws.values() for f in v], sampled, strict=True):
        if len(ids) < 0.9 * len(tools):
            raise SystemExit(f"{folder}: {len(ids)} of the draws' {len(tools)} tools; not the same sample")
    index = {t: i for i, t in enumerate(table["tool_id"].to_list())}
    platforms = [t.split(":")[0] for t in tools]
    print(
        f"CPU: {cpu_model()}; {len(tools)} tools; draws: {len(args.before)} before, {len(args.after)} after\n"
    )
    print_table(
        [
            "",
            "draw",
            "LLM wall s",
            "tokens",
            "list calls",
            "items rejected",
            "queries",
            "within-tool sim.",
            "naming tool",
        ],
        [draw_row(k, f) for k, v in draws.items() for f in v],
    )
    profile = get_profile("embedded")
    docs = tool_documents(table)
    for encoder in (MINILM, profile.models.recall_encoder):
        tool_emb = embed(encoder, docs)
        yields = {
            k: [per_tool_yield(q, tools, index, tool_emb, encoder) for q in qs] for k, qs in queries.items()
        }
        print(f"\n{encoder}")
        print_table(
            ["", "draw", "median yield", "mean yield", "mean, not naming their tool"],
            [
                [
                    k,
                    f.parent.name,
                    float(np.median(y[0])),
                    round(float(y[0].mean()), 2),
                    round(float(y[1].mean()), 2),
                ]
                for k in draws
                for f, y in zip(draws[k], yields[k], strict=True)
            ],
        )
        rows = []
        for which, name in ((0, "all queries"), (1, "not naming their tool")):
            diff = np.mean([y[which] for y in yields["after"]], 0) - np.mean(
                [y[which] for y in yields["before"]], 0
            )
            low, high, _ = stratified_interval(
                platforms, lambda i, d=diff: float(d[i].mean()), n_boot=args.boot
            )
            rows.append([name, "all", round(float(diff.mean()), 2), f"[{low:+.2f}, {high:+.2f}]"])
            if which == 0:
                for p in sorted(set(platforms)):
                    mask = np.array([x == p for x in platforms])
                    rows.append([name, p, round(float(diff[mask].mean()), 2), ""])
        print_table(
            ["queries", "platform", "change of mean per-tool yield (after - before)", "90 % interval"], rows
        )


if __name__ == "__main__":
    main()
