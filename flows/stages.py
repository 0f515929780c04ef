"""The stage graph of build-ecoagent: which function runs each stage, what it reads and what it needs first.

The flow never imports a stage at module level: each stage is named by an import path (``module:function``),
resolved inside the task that runs it, so the flow loads without torch and tests can point a stage at a
small stand-in function.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecoagent.artifacts import ArtifactDir

__all__ = [
    "STAGES",
    "STAGE_NAMES",
    "StageSpec",
    "call_stage",
    "order_stages",
    "resolve_target",
    "upstream_closure",
]


@dataclass(frozen=True)
class StageSpec:
    """One node of the stage graph.

    Args:
        name: the stage's name (as in ``--stages``; also the Prefect task's name).
        target: ``module:function`` of the stage's ``run(out, profile, **options)``.
        needs: stages whose outputs this stage reads; they run first when they are part of the same build.
        reads: artifact paths (relative to ``--out``) this stage reads; their content is part of its cache key.
        writes: artifact paths this stage writes; a missing one makes the flow rerun the stage.
        reads_mirror: the catalog snapshot is an input too (the crawl; Real reads ToolBench from it).
        uses_llm: talks to the LLM, so a server-backed profile must have a reachable server.
        network: may fail for transient reasons (live HTTP, LLM server, Hub upload); its task retries.
    """

    name: str
    target: str
    needs: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    writes: tuple[str, ...] = ()
    reads_mirror: bool = False
    uses_llm: bool = False
    network: bool = False


# in topological order; syn and real are independent branches after crawl
STAGES: dict[str, StageSpec] = {
    spec.name: spec
    for spec in (
        StageSpec(
            "crawl",
            "crawlers.pipeline:run",
            writes=("tools.parquet", "crawl_report.json"),
            reads_mirror=True,
            network=True,
        ),
        StageSpec(
            "syn",
            "generators.pipeline:run",
            needs=("crawl",),
            reads=("tools.parquet",),
            writes=(
                "syn/queries.parquet",
                "syn/positives.parquet",
                "syn/negatives.parquet",
                "syn/stats.json",
            ),
            uses_llm=True,
            network=True,
        ),
        StageSpec(
            "real",
            "validators.pipeline:run",
            needs=("crawl",),
            reads=("tools.parquet",),
            writes=(
                "real/decisions.parquet",
                "real/pairs.parquet",
                "real/stats.json",
                "real/mcp_prompts.parquet",
                "real/mcp_server_prompts.parquet",
            ),
            reads_mirror=True,
            uses_llm=True,
            network=True,
        ),
        StageSpec(
            "review-sample",
            "validators.review.sample:run",
            needs=("crawl", "real"),
            reads=("tools.parquet", "real/decisions.parquet"),
            writes=("review/sample.parquet",),
        ),
        StageSpec(
            "train",
            "rated.train:run",
            # the encoder trains on Syn only; Real's test split is read to report the fine-tuned encoder
            # against its backbone on data it never saw (model/metrics.json)
            needs=("crawl", "syn", "real"),
            reads=("tools.parquet", "syn", "real/pairs.parquet", "real/mcp_server_prompts.parquet"),
            writes=("model",),
        ),
        StageSpec(
            "evaluate",
            "rated.evaluation.pipeline:run",
            needs=("crawl", "syn", "real", "train"),
            reads=(
                "tools.parquet",
                "syn",
                "real/pairs.parquet",
                "real/mcp_prompts.parquet",
                "real/mcp_server_prompts.parquet",
                "model",
            ),
            writes=("eval/report.json",),
        ),
        StageSpec(
            "publish",
            "publish.pipeline:run",
            needs=("crawl", "syn", "real", "review-sample", "train", "evaluate"),
            reads=("tools.parquet", "crawl_report.json", "syn", "real", "review", "eval"),
            writes=("dataset",),
            network=True,
        ),
    )
}
STAGE_NAMES: tuple[str, ...] = tuple(STAGES)


def order_stages(names: Iterable[str]) -> list[str]:
    """The given stage names, deduplicated, in graph order; unknown names fail with the valid list."""
    wanted = set(names)
    unknown = sorted(wanted - set(STAGES))
    if unknown:
        raise ValueError(f"unknown stage(s) {unknown}; choose from {list(STAGE_NAMES)}")
    return [name for name in STAGE_NAMES if name in wanted]


def upstream_closure(name: str) -> set[str]:
    """Every stage ``name`` depends on, directly or not."""
    seen: set[str] = set()
    todo = list(STAGES[name].needs)
    while todo:
        dep = todo.pop()
        if dep not in seen:
            seen.add(dep)
            todo.extend(STAGES[dep].needs)
    return seen


def resolve_target(target: str) -> Callable[..., dict[str, Any]]:
    """Import ``module:function``; a missing stage module fails with a message naming the stage's owner path."""
    module_name, _, func_name = target.partition(":")
    if not func_name:
        raise ValueError(f"stage target {target!r} must look like 'package.module:function'")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise ValueError(f"stage module {module_name!r} is not installed/implemented yet") from exc
        raise
    try:
        return getattr(module, func_name)
    except AttributeError:
        raise ValueError(f"{module_name!r} has no function {func_name!r}") from None


def call_stage(
    func: Callable[..., dict[str, Any]],
    out: Path,
    profile: Any,
    options: Mapping[str, Any],
    *,
    force: bool = False,
) -> Any:
    """Call a stage with the options its signature takes.

    An option left at ``None`` is not passed (the stage's own default applies); a set option the stage
    cannot take is an error, never silently ignored. ``force`` reaches stages that skip finished work on
    their own (``force`` parameter), so a forced build really redoes them.
    """
    params = inspect.signature(func).parameters
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    kwargs: dict[str, Any] = {}
    for key, value in options.items():
        if value is None:
            continue
        if takes_any or key in params:
            kwargs[key] = value
        elif value is not False:
            raise ValueError(f"stage function {func.__module__}.{func.__name__} takes no option {key!r}")
    if force and "force" in params:
        kwargs["force"] = True
    return func(out, profile, **kwargs)


def outputs_present(out: Path, spec: StageSpec) -> bool:
    """True when every path the stage writes exists under ``out``."""
    root = ArtifactDir(out).root
    return all((root / rel).exists() for rel in spec.writes)
