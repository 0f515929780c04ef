"""`ecoagent evaluate`: the evaluation stage's command (heavy imports happen inside the handler)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "evaluate",
        help="offline retrieval, failure simulation, latency and sensitivity -> DIR/eval/",
        description="Reproduce the paper's Tables 1-3 and Figure 4 on this benchmark (DIR/eval/report.md).",
    )
    from ecoagent.cli import add_common

    add_common(parser)
    parser.add_argument("--seeds", type=int, default=5, help="simulation seeds (default 5)")
    parser.add_argument("--steps", type=int, default=None, help="selections per stream (default 10,000)")
    parser.add_argument(
        "--streams", default=None, help="comma-separated datasets to simulate (default real,syn)"
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes for the simulation's runs (default: every core; the numbers do not depend on it)",
    )
    parser.add_argument("--no-latency", action="store_true", help="skip Table 3")
    parser.add_argument(
        "--no-sensitivity", action="store_true", help="skip the (w1, w3) and (gamma, alpha) sweeps"
    )
    parser.add_argument(
        "--no-mpnet", action="store_true", help="leave all-mpnet-base-v2 out of the baselines"
    )
    parser.add_argument(
        "--retriever",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help="an outside retriever (name, fit(documents), scores(queries)) for Tables 1 and 2; repeatable",
    )
    parser.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help="an outside online policy, FACTORY(PolicyContext) -> Policy, for Table 2; repeatable",
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import json

    from ecoagent.config import get_profile
    from ecoagent.summary import print_table
    from rated.evaluation import pipeline, report

    profile = get_profile(args.profile)
    if args.seed is not None:
        profile = profile.replace(seed=args.seed)
    options: dict[str, Any] = {"latency": not args.no_latency, "sensitivity": not args.no_sensitivity}
    if args.streams:
        options["streams"] = tuple(s.strip() for s in args.streams.split(",") if s.strip())
    if args.retriever:
        options["retrievers"] = tuple(args.retriever)
    if args.policy:
        options["policies"] = tuple(args.policy)
    if args.no_mpnet:
        options["dense_models"] = (pipeline.MINILM,)
    stats = pipeline.run(
        Path(args.out), profile, seeds=args.seeds, steps=args.steps, workers=args.workers, **options
    )
    result = json.loads((Path(args.out) / "eval" / "report.json").read_text())
    if "skipped" in result:
        print(f"ecoagent evaluate: {result['skipped']}")
        return 0
    print(report.offline_table(result["offline"]["rows"]))
    print()
    for dataset, block in result["simulation"].items():
        paper = [n for n, s in block["scenarios"].items() if s["scenario"]["kind"] == "permanent"]
        print(f"Dynamic simulation, {dataset} stream (mean ± std over {args.seeds} seeds)")
        print(report.simulation_table(block["scenarios"], paper))
        print()
    print_table(["headline", "value"], list(stats.items()))
    print(f"report: {Path(args.out) / 'eval' / 'report.md'}")
    return 0
