"""``ecoagent syn``: generate the EcoAgent-Syn benchmark from the crawled tool table."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    from ecoagent.cli import add_common

    parser = subparsers.add_parser("syn", help="generate synthetic queries, negatives and splits (syn/)")
    add_common(parser)
    parser.add_argument(
        "--max-tools",
        type=int,
        default=None,
        help="tools to generate for (seeded, platform-stratified); default: the profile's",
    )
    parser.add_argument(
        "--split-by",
        choices=("query", "tool"),
        default="query",
        help="query: the paper's split; tool: unseen tools at test time",
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from ecoagent.config import get_profile
    from ecoagent.summary import print_table
    from generators.pipeline import run

    profile = get_profile(args.profile)
    if args.seed is not None:
        profile = profile.replace(seed=args.seed)
    stats = run(Path(args.out), profile, max_tools=args.max_tools, split_by=args.split_by)
    gen, q, y = stats["generation"], stats["queries"], stats["yield"]
    print_table(
        ["measure", "value"],
        [
            ("tools sampled / in table", f"{stats['tools']['sampled']} / {stats['tools']['table']}"),
            ("samples drawn", gen["samples"]),
            ("queries accepted", gen["accepted"]),
            ("generation failures", gen["failures"]),
            ("near-duplicates removed", stats["dedup"]["removed"]),
            ("queries kept", q["total"]),
            ("splits", ", ".join(f"{k}={v}" for k, v in sorted(q["splits"].items()))),
            ("queries naming their tool", f"{q['names_tool_share']:.1%}"),
            (f"yield (queries/tool in top {10})", y["per_tool_mean"]),
            ("queries retrieving their tool @10", f"{y['query_share_top10']:.1%}"),
            ("negatives (hard + random)", stats["negatives"]["total"]),
            ("generation tokens/s", gen["tokens_per_s"]),
            ("total seconds", stats["timings_s"]["total_s"]),
        ],
        title=f"ecoagent syn -> {Path(args.out) / 'syn'}",
    )
    return 0
