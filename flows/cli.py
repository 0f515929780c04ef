"""`ecoagent build`: run the Prefect flow build-ecoagent directly (ephemeral Prefect), or serve it."""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ecoagent.cli import add_common

T = TypeVar("T")

STAGE_LIST = "crawl,syn,real,review-sample,train,evaluate,publish"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build",
        help="build the whole benchmark (the Prefect flow build-ecoagent)",
        description="Run every stage (or --stages) as the Prefect flow build-ecoagent; cached stages are reused.",
    )
    add_common(parser)
    parser.add_argument(
        "--stages",
        default=None,
        help=f"comma-separated subset of {STAGE_LIST} (default: all); missing inputs must already be in --out",
    )
    parser.add_argument("--max-tools", type=int, default=None, help="Syn: generate for at most N tools")
    parser.add_argument(
        "--rivals",
        type=int,
        default=None,
        help="Syn: nearest tools the list prompt shows for contrast (default: the profile's, 0)",
    )
    parser.add_argument(
        "--llm-url",
        dest="llm_urls",
        action="append",
        default=None,
        help="OpenAI-compatible LLM server (paper profile); repeat it to share Syn's and Real's shards among several "
        "(e.g. one vLLM server per GPU)",
    )
    parser.add_argument(
        "--syn-shards",
        type=int,
        default=None,
        help="cut Syn generation into N shards, each a task with its own checkpoint (default: 1, or one per "
        "dask worker / LLM URL)",
    )
    parser.add_argument(
        "--real-shards",
        type=int,
        default=None,
        help="cut Real's validator judgments into N shards, each a task with its own checkpoints (default: 1, "
        "or one per dask worker / LLM URL)",
    )
    parser.add_argument(
        "--mirror", default=None, help="catalog snapshot folder (default: ../shared/catalogs)"
    )
    parser.add_argument("--live", action="store_true", help="crawl the live sites instead of the snapshot")
    parser.add_argument(
        "--probe-links", action="store_true", help="probe documentation links during the crawl"
    )
    parser.add_argument("--platforms", default=None, help="crawl only these platforms (comma-separated)")
    parser.add_argument("--review-n", type=int, default=200, help="size of the manual-check sample")
    parser.add_argument("--eval-seeds", type=int, default=None, help="seeds of the evaluation's simulation")
    parser.add_argument("--repo-id", default=None, help="also push the dataset to this Hub repo")
    parser.add_argument(
        "--task-runner",
        choices=["local", "dask"],
        default="local",
        help="local threads (default) or prefect-dask's DaskTaskRunner",
    )
    parser.add_argument("--dask-address", default=None, help="scheduler address, e.g. tcp://10.0.0.5:8786")
    parser.add_argument(
        "--max-workers",
        type=int,
        default=1,
        help="parallel stages (local threads / dask workers); 1 on a 2-core machine, where two torch stages in one process fight over the cores",
    )
    parser.add_argument(
        "--force",
        "--no-cache",
        dest="force",
        action="store_true",
        help="ignore cached results and rerun every selected stage",
    )
    parser.add_argument(
        "--stage-target",
        action="append",
        default=[],
        metavar="STAGE=MODULE:FUNC",
        help=argparse.SUPPRESS,  # replace a stage's function (experiments, tests)
    )
    parser.add_argument(
        "--serve",
        action="store_true",
        help="serve the deployment build-ecoagent/build-ecoagent (with --out/--profile as its defaults) instead",
    )
    parser.set_defaults(func=_run)


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def params_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The flow's parameters from the command line (the flow's own names)."""
    return {
        "out": args.out,
        "profile": args.profile,
        "seed": args.seed,
        "stages": _split(args.stages),
        "max_tools": args.max_tools,
        "syn_rivals": args.rivals,
        "llm_base_url": args.llm_urls[0] if args.llm_urls else None,
        "llm_urls": args.llm_urls or [],
        "syn_shards": args.syn_shards,
        "real_shards": args.real_shards,
        "mirror": args.mirror,
        "live": args.live,
        "probe_links": args.probe_links,
        "platforms": _split(args.platforms),
        "review_n": args.review_n,
        "eval_seeds": args.eval_seeds,
        "repo_id": args.repo_id,
        "task_runner": args.task_runner,
        "dask_address": args.dask_address,
        "max_workers": args.max_workers,
        "force": args.force,
        "stage_targets": dict(_pair(item) for item in args.stage_target),
    }


def _pair(item: str) -> tuple[str, str]:
    stage, sep, target = item.partition("=")
    if not sep:
        raise ValueError(f"--stage-target {item!r} must look like STAGE=module:function")
    return stage, target


def print_summary(summary: dict[str, Any]) -> None:
    """Each stage's stats table, then one line per stage (status and wall time)."""
    from ecoagent.summary import print_table
    from flows.build import _stats_table
    from flows.stages import STAGE_NAMES

    # graph order (the summary file's keys are sorted)
    stages = {name: summary["stages"][name] for name in STAGE_NAMES if name in summary["stages"]}
    for stage, info in stages.items():
        if "stats" in info:
            rows = [[r["stat"], _short(r["value"])] for r in _stats_table(info["stats"])]
            if len(rows) > 30:
                rows = rows[:30] + [["...", f"{len(rows) - 30} more in the Prefect artifact {stage}-stats"]]
            print_table(["stat", "value"], rows, title=f"{stage}: {info['status']} ({info['wall_s']:.1f} s)")
            print()
    rows = [
        [
            stage,
            info["status"],
            f"{info['wall_s']:.1f}" if "wall_s" in info else "",
            info.get("error", "")[:80],
        ]
        for stage, info in stages.items()
    ]
    print_table(["stage", "status", "wall_s", "error"], rows, title=f"build-ecoagent: {summary['out']}")


def _short(text: str, width: int = 100) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _stop_now(signum: int, frame: object) -> None:
    """End the process at once: stop its children (Prefect's temporary server), then ``os._exit``."""
    import psutil

    name = signal.Signals(signum).name
    print(
        f"ecoagent build: stopped by {name}; finished stages and checkpoints are kept, "
        "the same command resumes",
        file=sys.stderr,
        flush=True,
    )
    children = psutil.Process().children(recursive=True)
    for child in children:
        child.terminate()
    _, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        child.kill()
    os._exit(128 + signum)


def run_stoppable(call: Callable[[], T]) -> T:
    """``call()`` in a worker thread, while the main thread answers SIGTERM / SIGINT by stopping at once.

    Left to Prefect, SIGTERM fails the flow run and then waits for the running stage's thread to finish,
    which can take many minutes (an encoder pass, a batch of LLM calls). Every stage keeps its work in
    checkpoints (appends with fsync, atomic renames), so exiting at once loses at most the batch in
    flight, and rerunning the same command resumes. Called off the main thread (no signals there),
    it simply runs ``call()``.
    """
    if threading.current_thread() is not threading.main_thread():
        return call()
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = call()
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    previous = {sig: signal.signal(sig, _stop_now) for sig in STOP_SIGNALS}
    try:
        worker = threading.Thread(target=target, name="build-ecoagent", daemon=True)
        worker.start()
        while worker.is_alive():
            worker.join(0.5)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if "error" in box:
        raise box["error"]
    return box["value"]


def _run(args: argparse.Namespace) -> int:
    # the ephemeral Prefect server needs longer than its default to start on 2 busy cores
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
    if not args.verbose:
        # the Prefect client logs every API request at INFO; stage logs are what a user wants to see
        for name in ("httpx", "httpcore"):
            logging.getLogger(name).setLevel(logging.WARNING)
    from flows.params import validate_params

    params = params_from_args(args)
    checked = validate_params(params)  # fails here, before Prefect starts, with every problem listed
    if args.serve:
        from flows.serve import serve

        serve(parameters={"out": str(checked.out), "profile": checked.profile})
        return 0

    from flows.build import SUMMARY_FILE, build_ecoagent

    params["out"] = str(checked.out)
    state = run_stoppable(lambda: build_ecoagent(**params, return_state=True))
    summary_path = Path(checked.out) / SUMMARY_FILE
    if summary_path.exists():
        print_summary(json.loads(summary_path.read_text()))
    if not state.is_completed():
        print(f"ecoagent build: error: {state.message}", file=sys.stderr)
        return 1
    return 0
