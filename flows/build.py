"""The Prefect flow build-ecoagent: every stage as a cached, retrying task, wired in the stage graph's order.

Tasks pass paths and ids, never data: each one calls its stage's ``run(out, profile, **options)``, which
reads its inputs from the artifact folder and writes its outputs there, and returns the stage's stats.
A task's cache key is the stage name, its profile and options, its code and the content of every artifact
it reads, and its result is persisted under ``OUT/.prefect/results``; a rerun after a crash or a config
change therefore redoes only the stages whose inputs changed. ``syn`` and ``real`` run side by side.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)
from prefect.cache_policies import CacheKeyFnPolicy
from prefect.context import TaskRunContext
from prefect.futures import PrefectFuture
from prefect.states import State

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json
from ecoagent.config import ModelConfig, Profile
from ecoagent.logs import prints_follow_redirects, route_to_prefect
from ecoagent.summary import format_table
from flows.fingerprints import code_fingerprint, path_fingerprint, paths_fingerprint
from flows.params import BuildParams, validate_params
from flows.stages import STAGES, call_stage, outputs_present, resolve_target

__all__ = ["SUMMARY_FILE", "STAGE_TASKS", "build_ecoagent", "build_stages", "stage_cache_key", "summary_rows"]

log = logging.getLogger(__name__)

# the last build's summary (per stage: status, wall time, stats), beside the cached task results
SUMMARY_FILE = ".prefect/build-summary.json"

# exception class names (anywhere in the MRO) worth a retry: network, LLM server, Hub
_TRANSIENT = {
    "ConnectionError",
    "TimeoutError",
    "Timeout",
    "ConnectTimeout",
    "ReadTimeout",
    "ChunkedEncodingError",
    "APIConnectionError",
    "APITimeoutError",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "HfHubHTTPError",
}


def is_transient(exc: BaseException) -> bool:
    """True for errors a retry can fix (a dropped connection, a busy LLM server), not for bad input."""
    return any(cls.__name__ in _TRANSIENT for cls in type(exc).__mro__)


def _retry_on_transient(task: Any, task_run: Any, state: State) -> bool:
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the state's own exception, re-raised to inspect it
        return is_transient(exc)
    return False


def stage_cache_key(context: TaskRunContext | None, inputs: dict[str, Any]) -> str:
    """The cache key of one stage call: stage + profile/options + code + content of what it reads."""
    call = inputs["call"]
    spec = STAGES[call["stage"]]
    root = Path(call["out"])
    mirror = call["options"].get("mirror")
    # nothing absolute: inputs are keyed by their path relative to `out` and their content (the mirror
    # by content), so a moved folder keeps its cache; a folder that lacks a stage's `writes` reruns it
    parts = {
        "stage": call["stage"],
        "target": call["target"],
        "code": code_fingerprint(call["target"]),
        "profile": call["profile"],
        "options": {k: v for k, v in call["options"].items() if k != "mirror"},
        "reads": paths_fingerprint(root, spec.reads),
        "mirror": path_fingerprint(Path(mirror))[:16] if spec.reads_mirror and mirror else None,
    }
    return f"{call['stage']}-{fingerprint(parts)}"


def _profile_from_dict(data: dict[str, Any]) -> Profile:
    return Profile(**{**data, "models": ModelConfig(**data["models"])})


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _enter_task() -> logging.Logger | logging.LoggerAdapter[Any]:
    """The run logger of a stage or shard task, with the stage loggers and prints set up for its run."""
    route_to_prefect()  # the stage's own loggers reach this run's log (also on Dask workers)
    prints_follow_redirects()  # log_prints must not swallow what a library prints into its own buffer
    return get_run_logger()


def run_stage(call: dict[str, Any]) -> dict[str, Any]:
    """Run one stage (a task body): import its function, call it, return its stats and wall time."""
    logger = _enter_task()
    func = resolve_target(call["target"])
    profile = _profile_from_dict(call["profile"])
    logger.info("stage %s: %s(out=%s)", call["stage"], call["target"], call["out"])
    if call.get("force") and "force" not in inspect.signature(func).parameters:
        # the stage skips work its completion marker vouches for; a forced build must redo it
        (ArtifactDir(Path(call["out"])).markers / f"{call['stage']}.json").unlink(missing_ok=True)
    start = time.perf_counter()
    stats = call_stage(func, Path(call["out"]), profile, call["options"], force=call.get("force", False))
    wall = time.perf_counter() - start
    logger.info("stage %s finished in %.1f s%s", call["stage"], wall, headline(stats))
    return {
        "stage": call["stage"],
        "stats": _jsonable(stats if isinstance(stats, dict) else {"result": stats}),
        "wall_s": round(wall, 3),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def headline(stats: Any, limit: int = 6) -> str:
    """``: tools 4253, errors 4, ...``: the first top-level numbers of a stage's stats, for its end line."""
    if not isinstance(stats, dict):
        return ""
    numbers = [
        f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
        for k, v in stats.items()
        if isinstance(v, int | float) and not isinstance(v, bool)
    ]
    for k, v in stats.items():  # nested counts such as {"errors": {"count": 4}}
        if isinstance(v, dict) and isinstance(v.get("count"), int):
            numbers.append(f"{k} {v['count']}")
    return (": " + ", ".join(numbers[:limit])) if numbers else ""


def _make_task(name: str) -> Any:
    spec = STAGES[name]
    return task(
        run_stage,
        name=name,
        task_run_name=f"{name}",
        cache_policy=CacheKeyFnPolicy(cache_key_fn=stage_cache_key),
        persist_result=True,
        result_serializer="json",
        retries=2 if spec.network else 0,
        retry_delay_seconds=[10, 60] if spec.network else 0,
        retry_condition_fn=_retry_on_transient if spec.network else None,
    )


STAGE_TASKS: dict[str, Any] = {name: _make_task(name) for name in STAGES}


@task(name="syn-shard", task_run_name="syn-shard-{call[options][shard]}")
def syn_shard(call: dict[str, Any]) -> dict[str, Any]:
    """One shard of Syn generation (its own checkpoint); the syn stage then reads them all."""
    from generators.pipeline import generate_shard

    logger = _enter_task()
    stats = generate_shard(Path(call["out"]), _profile_from_dict(call["profile"]), **call["options"])
    logger.info(
        "syn shard %d/%d: %d tools, %d queries",
        stats["shard"] + 1,
        stats["shards"],
        stats["tools"],
        stats["queries"],
    )
    return stats


@task(name="real-shard", task_run_name="real-shard-{call[options][shard]}")
def real_shard(call: dict[str, Any]) -> dict[str, Any]:
    """One shard of Real's validator judgments (its own checkpoints); the real stage then reads them all."""
    from validators.pipeline import judge_shard

    logger = _enter_task()
    options = dict(call["options"])
    mirror = options.pop("mirror", None)
    stats = judge_shard(
        Path(call["out"]),
        _profile_from_dict(call["profile"]),
        mirror=Path(mirror) if mirror else None,
        **options,
    )
    logger.info("real shard %d/%d: %s pairs", stats["shard"] + 1, stats["shards"], stats["pairs"])
    return stats


SHARD_TASKS: dict[str, Any] = {"syn": syn_shard, "real": real_shard}


def _stats_table(stats: dict[str, Any]) -> list[dict[str, str]]:
    """Flatten a stage's stats into ``stat | value`` rows (nested keys joined with dots)."""
    rows: list[dict[str, str]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key in sorted(value, key=str):
                walk(f"{prefix}.{key}" if prefix else str(key), value[key])
        else:
            text = json.dumps(value, default=str) if not isinstance(value, str) else value
            rows.append(
                {"stat": prefix or "value", "value": text if len(text) <= 200 else text[:197] + "..."}
            )

    walk("", stats)
    return rows


def summary_rows(summary: dict[str, Any]) -> list[list[Any]]:
    """``stage | status | wall_s`` rows of a build's summary."""
    return [[stage, info["status"], info.get("wall_s", "")] for stage, info in summary["stages"].items()]


@flow(name="build-ecoagent-stages", log_prints=True)
def build_stages(params: dict[str, Any]) -> dict[str, Any]:
    """Submit the selected stages to the task runner in graph order and collect their results."""
    logger = get_run_logger()
    p = BuildParams.model_validate(params)
    out = Path(p.out)
    profile = p.resolved_profile().to_dict()
    results_dir = out / ".prefect" / "results"
    selected = p.selected

    futures: dict[str, PrefectFuture[Any]] = {}
    for name in selected:
        spec = STAGES[name]
        # refresh when forced or when the stage's outputs were deleted since it was cached
        refresh = p.force or not outputs_present(out, spec)
        stage_task = STAGE_TASKS[name].with_options(result_storage=results_dir, refresh_cache=refresh)
        call = {
            "stage": name,
            "target": p.target(name),
            "out": str(out),
            "profile": profile,
            "options": p.stage_options(name),
            "force": p.force,
        }
        upstream = [futures[dep] for dep in spec.needs if dep in futures]
        if name in SHARD_TASKS and p.shards(name) > 1 and name not in p.stage_targets:
            # generation (Syn) or judging (Real) spreads over the runner's workers; the stage itself then
            # finds it all done and does the rest once
            shard_calls = [{**call, "options": options} for options in p.shard_calls(name)]
            upstream = upstream + [SHARD_TASKS[name].submit(c, wait_for=upstream) for c in shard_calls]
        futures[name] = stage_task.submit(call, wait_for=upstream)

    progress_id = create_progress_artifact(0.0, key="build-ecoagent-progress", description=str(out))
    summary: dict[str, Any] = {"out": str(out), "profile": p.profile, "stages": {}}
    try:
        from tqdm.auto import tqdm

        # no ETA: stages differ in cost by 100x (crawl seconds, syn and real most of the run), so a
        # per-stage rate would promise minutes for a half-hour build
        bar = tqdm(
            total=len(selected),
            desc="build-ecoagent",
            unit="stage",
            bar_format="{desc}: {n}/{total} stages |{bar}| {elapsed} elapsed{postfix}",
        )
    except ImportError:  # pragma: no cover - tqdm comes with the project's dependencies
        bar = None
    for done, name in enumerate(selected, start=1):
        future = futures[name]
        future.wait()
        state = future.state
        info: dict[str, Any] = {"status": "failed", "state": state.name}
        if state.is_completed():
            result = future.result()
            info.update(
                status="cached" if state.name == "Cached" else "ran",
                wall_s=result["wall_s"],
                stats=result["stats"],
                finished_at=result["finished_at"],
            )
            create_table_artifact(
                _stats_table(result["stats"]),
                key=f"{name}-stats",
                description=f"{name}: {info['status']}, {result['wall_s']:.1f} s, {out}",
            )
            logger.info("%s %s (%.1f s)", name, info["status"], result["wall_s"])
        elif state.is_pending() or state.name == "NotReady":
            info["status"] = "skipped"
        else:
            info["error"] = str(state.message or state.name)
            logger.error("%s failed: %s", name, info["error"])
        summary["stages"][name] = info
        update_progress_artifact(progress_id, 100.0 * done / len(selected))
        if bar is not None:
            bar.set_postfix_str(f"{name}: {info['status']}")
            bar.update(1)
    if bar is not None:
        bar.close()
    return summary


@flow(name="build-ecoagent", log_prints=True)
def build_ecoagent(
    out: str,
    profile: str = "embedded",
    seed: int | None = None,
    stages: list[str] | None = None,
    max_tools: int | None = None,
    syn_rivals: int | None = None,
    llm_base_url: str | None = None,
    llm_urls: list[str] | None = None,
    syn_shards: int | None = None,
    real_shards: int | None = None,
    mirror: str | None = None,
    live: bool = False,
    probe_links: bool = False,
    platforms: list[str] | None = None,
    review_n: int = 200,
    eval_seeds: int | None = None,
    repo_id: str | None = None,
    task_runner: str = "local",
    dask_address: str | None = None,
    max_workers: int = 1,
    force: bool = False,
    stage_targets: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Build the EcoAgent benchmark into ``out``: crawl, syn + real, review sample, train, evaluate, publish.

    Parameters are checked before any stage starts (see ``flows.params.BuildParams``). The stages run on
    the chosen task runner (``local`` threads, or ``dask`` via prefect-dask); cached stages are reused.
    Returns a summary: per stage its status (ran / cached / failed / skipped), wall time and stats.
    """
    raw = {k: v for k, v in locals().items()}
    raw["stage_targets"] = stage_targets or {}
    raw["llm_urls"] = llm_urls or []
    route_to_prefect()
    p = validate_params(raw)
    ArtifactDir(Path(p.out)).check_writable()  # a bad --out fails here, before any stage starts
    summary_path = Path(p.out) / SUMMARY_FILE
    summary_path.unlink(missing_ok=True)
    runner = make_task_runner(p)
    start = time.perf_counter()
    with _share_api_url(p.task_runner == "dask"):
        summary = build_stages.with_options(task_runner=runner)(p.model_dump(mode="json"))
    summary["wall_s"] = round(time.perf_counter() - start, 3)
    write_json(summary_path, summary)
    rows = summary_rows(summary)
    create_markdown_artifact(
        format_table(["stage", "status", "wall_s"], rows, title=f"build-ecoagent: {p.out}"),
        key="build-ecoagent-summary",
        description=f"profile {p.profile}, stages {p.selected}",
    )
    failed = [s for s, info in summary["stages"].items() if info["status"] in ("failed", "skipped")]
    if failed:
        details = "; ".join(f"{s}: {summary['stages'][s].get('error', 'skipped')}" for s in failed)
        raise RuntimeError(f"build-ecoagent: stages did not finish: {details}")
    return summary


@contextlib.contextmanager
def _share_api_url(enabled: bool) -> Iterator[None]:
    """Hand this run's API URL to the Dask workers started from here.

    In ephemeral mode (no ``PREFECT_API_URL``) a worker process would start a temporary server of its
    own and report its task runs there; exporting the URL of the one this flow runs on keeps a build in
    one place. A cluster started elsewhere needs ``PREFECT_API_URL`` in its workers' environment.
    """
    if not enabled or os.environ.get("PREFECT_API_URL"):
        yield
        return
    from prefect.context import FlowRunContext

    ctx = FlowRunContext.get()
    url = getattr(getattr(ctx, "client", None), "api_url", None)
    if url is None:
        yield
        return
    os.environ["PREFECT_API_URL"] = str(url).rstrip("/")
    try:
        yield
    finally:
        os.environ.pop("PREFECT_API_URL", None)


def make_task_runner(p: BuildParams) -> Any:
    """The task runner of the stages: local threads, or a Dask cluster (given, or a temporary local one)."""
    if p.task_runner == "dask":
        from prefect_dask import DaskTaskRunner

        if p.dask_address:
            return DaskTaskRunner(address=p.dask_address)
        # one process per worker, one thread each: stages hold the GIL and load their own models
        return DaskTaskRunner(
            cluster_kwargs={"n_workers": p.max_workers, "threads_per_worker": 1, "processes": True}
        )
    from prefect.task_runners import ThreadPoolTaskRunner

    return ThreadPoolTaskRunner(max_workers=p.max_workers)
