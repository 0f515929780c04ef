"""`ecoagent live`: RATED and the baselines over real MCP servers started on this machine."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "live",
        help="RATED over real MCP servers (stdio, induced failures) -> DIR/eval/live.md",
        description=(
            "Start the pinned MCP servers (scripts/setup.sh --live installs them), stream queries whose true "
            "tool is a live tool, kill / stop / break servers and their HTTP upstream on a schedule, and report Post-Fail SR, FSR, "
            "Adaptation Steps and per-call latency. Every server is stopped at the end."
        ),
    )
    parser.add_argument(
        "--out", required=True, help="the artifact folder (writes eval/live.md, eval/live.json, live/)"
    )
    parser.add_argument("--steps", type=int, default=1000, help="queries in the stream (default 1000)")
    parser.add_argument("--seed", type=int, default=0, help="the stream's and the warm-up's seed")
    parser.add_argument(
        "--call-timeout", type=float, default=2.0, help="seconds before a call counts as failed"
    )
    parser.add_argument("--faults", default=None, help="a JSON fault schedule (default: the built-in one)")
    parser.add_argument(
        "--no-fetch",
        action="store_true",
        help="leave mcp-server-fetch (both processes) and its loopback HTTP stub out",
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from live.run import LiveConfig, run_live

    config = LiveConfig(
        steps=args.steps,
        seed=args.seed,
        call_timeout=args.call_timeout,
        faults=args.faults,
        fetch=not args.no_fetch,
    )
    try:
        result = run_live(Path(args.out), config)
    except RuntimeError as exc:
        raise ValueError(str(exc)) from exc  # the CLI prints one line for ValueError
    print((Path(args.out) / "eval" / "live.md").read_text())
    print(
        f"live: {result['n_tools']} tools, {result['n_servers']} servers, {config.steps} steps, "
        f"{result['timings']['total_s']:.0f} s; orphans: {result['orphans'] or 'none'}"
    )
    return 0
