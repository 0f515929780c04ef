"""``ecoagent crawl``: the five catalogs (mirror or live) into ``tools.parquet`` + ``crawl_report.json``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    """Add the ``crawl`` subcommand."""
    from ecoagent.cli import add_common

    parser = subparsers.add_parser("crawl", help="crawl the tool catalogs into tools.parquet")
    add_common(parser)
    parser.add_argument(
        "--mirror",
        type=Path,
        default=None,
        help="a folder laid out like ../shared/catalogs (default: the snapshot)",
    )
    parser.add_argument("--live", action="store_true", help="fetch the upstream URLs instead of the mirror")
    parser.add_argument(
        "--probe-links", action="store_true", help="check doc and endpoint URLs (HEAD, GET fallback)"
    )
    parser.add_argument(
        "--platforms", default=None, help="comma-separated subset of langchain,crewai,llamaindex,n8n,mcp"
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from crawlers import pipeline
    from crawlers.report import SourceFailed
    from ecoagent.config import get_profile
    from ecoagent.summary import print_table

    profile = get_profile(args.profile)
    if args.seed is not None:
        profile = profile.replace(seed=args.seed)
    if args.live and args.mirror is not None:
        raise ValueError("--live and --mirror exclude each other")
    try:
        report = pipeline.run(
            Path(args.out),
            profile,
            mirror=args.mirror,
            live=args.live,
            probe_links=args.probe_links,
            platforms=args.platforms,
        )
    except SourceFailed as exc:
        raise ValueError(str(exc)) from None
    print_table(
        ["platform", "tools", "errors"],
        [(p, n, report["errors"]["per_platform"].get(p, 0)) for p, n in report["per_platform"].items()],
        title="crawl",
    )
    print_table(["auth kind", "tools"], list(report["per_auth_kind"].items()))
    print_table(["granularity", "tools"], list(report["per_granularity"].items()))
    print_table(["catalog status", "tools"], list(report["per_catalog_status"].items()))
    if report["mcp"]["records_per_source"]:
        print_table(
            ["MCP source", "records it contributed to"], list(report["mcp"]["records_per_source"].items())
        )
    print_table(["field", "share missing"], list(report["missing_share"].items()))
    print_table(
        ["platform", "tools", "prior >= 0.8", "mean", "p10", "median", "p90"],
        [
            (p, d["tools"], d["ge_0_8_share"], d["mean"], d["p10"], d["p50"], d["p90"])
            for p, d in report["prior_per_platform"].items()
        ],
        title="metadata prior",
    )
    share = report["prior_ge_0_8_share"]
    print_table(
        ["tools", "prior >= 0.8", "share", "errors", "injection-flagged", "seconds"],
        [
            (
                report["tools"],
                report["prior_ge_0_8"],
                share if share is not None else "-",
                report["errors"]["count"],
                report["injection_flagged"]["count"],
                report["timings_s"]["total"],
            )
        ],
    )
    print(f"wrote {Path(args.out) / 'tools.parquet'} and crawl_report.json")
    return 0
