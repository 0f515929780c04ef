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
        type=max_tools_arg,
        default=None,
        help="tools to generate for (seeded, platform-stratified), or 'all' for the whole catalog; "
        "default: the profile's",
    )
    parser.add_argument(
        "--rivals",
        type=int,
        default=None,
        help="nearest tools the list prompt shows for contrast (0 = none); default: the profile's",
    )
    parser.set_defaults(func=_run)


ALL = 0  # ``--max-tools all``: no limit


def max_tools_arg(value: str) -> int:
    """``all`` or a positive number of tools."""
    if value.strip().lower() == "all":
        return ALL
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--max-tools takes a number or 'all', not {value!r}") from None
    if number <= 0:
        raise argparse.ArgumentTypeError("--max-tools must be > 0 (or 'all')")
    return number


def _run(args: argparse.Namespace) -> int:
    from ecoagent.config import get_profile
    from ecoagent.summary import print_table
    from generators.pipeline import run

    profile = get_profile(args.profile)
    if args.seed is not None:
        profile = profile.replace(seed=args.seed)
    if args.max_tools == ALL:
        profile = profile.replace(syn_max_tools=None)
    if args.rivals is not None:
        if args.rivals < 0:
            raise SystemExit("--rivals must be >= 0")
        profile = profile.replace(syn_rivals=args.rivals)
    stats = run(Path(args.out), profile, max_tools=args.max_tools or None)
    gen, q = stats["generation"], stats["queries"]
    y = stats["yield"][profile.models.sbert]
    print_table(
        ["measure", "value"],
        [
            ("tools sampled / in table", f"{stats['tools']['sampled']} / {stats['tools']['table']}"),
            ("samples drawn", gen["samples"]),
            ("queries accepted", gen["accepted"]),
            ("generation failures", gen["failures"]),
            ("near-duplicates removed", stats["dedup"]["removed"]),
            ("queries kept", q["total"]),
            ("query split", ", ".join(f"{k}={v}" for k, v in sorted(q["splits"].items()))),
            ("tool-disjoint split", ", ".join(f"{k}={v}" for k, v in sorted(q["splits_tool"].items()))),
            ("queries naming their tool", f"{q['names_tool_share']:.1%}"),
            ("queries naming their service", f"{q.get('names_service_share', 0.0):.1%}"),
            ("within-tool similarity, mean Jaccard", q.get("within_tool_similarity", {}).get("mean")),
            ("yield, median queries/tool in top 10", y["per_tool"].get("median")),
            ("the median's 90% interval over tools", y.get("per_tool_median_ci90")),
            (
                "the whole table's median, estimated (90% interval)",
                f"{y.get('per_tool_median_catalog')} {y.get('per_tool_median_catalog_ci90')}",
            ),
            ("the same, equivalents counted", y["with_equivalents"]["per_tool"].get("median")),
            ("queries retrieving their tool @10", f"{y['query_share_top10']:.1%}"),
            ("negatives (hard + random)", stats["negatives"]["total"]),
            ("generation tokens/s", gen["tokens_per_s"]),
            ("total seconds", stats["timings_s"]["total_s"]),
        ],
        title=f"ecoagent syn -> {Path(args.out) / 'syn'}",
    )
    return 0
