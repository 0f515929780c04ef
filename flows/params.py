"""The parameters of build-ecoagent, validated before any stage starts.

The same model backs the CLI (`ecoagent build`), the flow's signature and the deployment's parameters, so
an unknown profile, an unwritable out dir, a paper run without an LLM server or a bad ``max_tools`` fail in
a second with one clear message instead of an hour into the run.
"""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ecoagent.config import PROFILES, Profile, default_mirror, get_profile
from ecoagent.schemas import PLATFORMS
from flows.stages import STAGE_NAMES, STAGES, order_stages, outputs_present, upstream_closure

__all__ = ["BuildParams", "ParamsError", "validate_params"]

TaskRunnerName = Literal["local", "dask"]


class ParamsError(ValueError):
    """Invalid build parameters; the message lists every problem found."""


class BuildParams(BaseModel):
    """Everything one build of the benchmark is configured by.

    Args:
        out: the artifact folder shared by all stages (created if missing; must be writable).
        profile: ``embedded`` (packaged models, 2 CPU cores) or ``paper`` (vLLM server + GPU).
        seed: overrides the profile's seed.
        stages: the stages to run, any subset of the graph; a stage whose inputs are not part of the run
            must find them in ``out`` already. ``None`` = all stages.
        max_tools: Syn generates for at most this many tools (stratified sample); ``None`` = the profile's.
        syn_rivals: nearest tools Syn's list prompt shows for contrast (``generators.rivals``); ``None`` =
            the profile's (0).
        llm_base_url: the OpenAI-compatible LLM server (vLLM) for a server-backed profile.
        llm_urls: several such servers; Syn's shards are dealt out among them in turn.
        syn_shards: Syn generation cut into this many shards (tasks with their own checkpoints);
            ``None`` = one per dask worker or LLM URL, else 1.
        real_shards: Real's validator judgments cut the same way (``validators.pipeline.judge_shard``);
            ``None`` = one per dask worker or LLM URL, else 1.
        mirror: the catalog snapshot folder; ``None`` = ``$ECOAGENT_MIRROR`` or ``../shared/catalogs``.
        live: crawl the live sites instead of the snapshot.
        probe_links: probe each tool's documentation link during the crawl.
        platforms: crawl only these platforms (``None`` = all five).
        review_n: size of the manual-check sample.
        eval_seeds: seeds of the evaluation's simulation runs.
        repo_id: push the dataset to this Hub repo (``None`` = only write ``out/dataset``).
        task_runner: ``local`` (threads in this process) or ``dask`` (prefect-dask; a cluster or a local one).
        dask_address: scheduler address (``tcp://host:8786``) for ``dask``; ``None`` starts a local cluster.
        max_workers: threads of the local runner (stages that may run side by side: syn and real).
        force: ignore cached results and rerun every selected stage.
        stage_targets: replace a stage's ``module:function`` (tests, experiments).
    """

    model_config = ConfigDict(extra="forbid")

    out: Path
    profile: str = "embedded"
    seed: int | None = Field(default=None, ge=0)
    stages: list[str] | None = None
    max_tools: int | None = Field(default=None, ge=1)
    syn_rivals: int | None = Field(default=None, ge=0, le=20)
    llm_base_url: str | None = None
    llm_urls: list[str] = Field(default_factory=list)
    syn_shards: int | None = Field(default=None, ge=1, le=4096)
    real_shards: int | None = Field(default=None, ge=1, le=4096)
    mirror: Path | None = None
    live: bool = False
    probe_links: bool = False
    platforms: list[str] | None = None
    review_n: int = Field(default=200, ge=1)
    eval_seeds: int | None = Field(default=None, ge=1)
    repo_id: str | None = None
    task_runner: TaskRunnerName = "local"
    dask_address: str | None = None
    max_workers: int = Field(default=1, ge=1, le=64)
    force: bool = False
    stage_targets: dict[str, str] = Field(default_factory=dict)

    @field_validator("profile")
    @classmethod
    def _known_profile(cls, value: str) -> str:
        get_profile(value)  # raises with the list of valid names
        return value

    @field_validator("stages")
    @classmethod
    def _known_stages(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        if not value:
            raise ValueError(f"stages is empty; choose from {list(STAGE_NAMES)}")
        return order_stages(value)

    @field_validator("platforms")
    @classmethod
    def _known_platforms(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        unknown = sorted(set(value) - set(PLATFORMS))
        if unknown or not value:
            raise ValueError(f"unknown platform(s) {unknown}; choose from {list(PLATFORMS)}")
        return [p for p in PLATFORMS if p in value]

    @field_validator("stage_targets")
    @classmethod
    def _known_targets(cls, value: dict[str, str]) -> dict[str, str]:
        for stage, target in value.items():
            if stage not in STAGES:
                raise ValueError(f"stage_targets names unknown stage {stage!r}")
            if ":" not in target:
                raise ValueError(f"stage target {target!r} must look like 'package.module:function'")
        return value

    @field_validator("dask_address")
    @classmethod
    def _address_shape(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parsed = urlparse(value)
        if parsed.scheme not in ("tcp", "tls", "ws", "wss", "inproc", "ucx") or not parsed.hostname:
            raise ValueError(f"dask_address {value!r} must look like tcp://host:8786")
        return value

    @model_validator(mode="after")
    def _runner_options(self) -> BuildParams:
        if self.dask_address and self.task_runner != "dask":
            raise ValueError("dask_address is only used with task_runner='dask'")
        return self

    # derived values -------------------------------------------------------------------------------------
    @property
    def selected(self) -> list[str]:
        """The stages this build runs, in graph order."""
        return list(self.stages) if self.stages else list(STAGE_NAMES)

    def resolved_profile(self) -> Profile:
        """The profile with this build's overrides applied.

        ``max_tools`` is passed to Syn as its option, not folded into the profile, so changing it
        invalidates only Syn's cache (and what reads Syn's outputs).
        """
        profile = get_profile(self.profile)
        changes: dict[str, Any] = {}
        if self.seed is not None:
            changes["seed"] = self.seed
        if self.syn_rivals is not None:
            changes["syn_rivals"] = self.syn_rivals
        if self.llm_base_url is not None or self.llm_urls:
            changes["llm_base_url"] = self.llm_base_url or self.llm_urls[0]
        return profile.replace(**changes) if changes else profile

    def shards(self, stage: str = "syn") -> int:
        """How many shards this build maps over the task runner for ``stage`` (``syn`` or ``real``)."""
        chosen = self.syn_shards if stage == "syn" else self.real_shards
        if chosen is not None:
            return chosen
        return max(len(self.llm_urls), self.max_workers if self.task_runner == "dask" else 1, 1)

    def shard_calls(self, stage: str = "syn") -> list[dict[str, Any]]:
        """The keyword options of each shard: ``generators.pipeline.generate_shard`` (``syn``) or
        ``validators.pipeline.judge_shard`` (``real``), LLM URLs dealt out in turn."""
        urls = self.llm_urls or [None]
        n = self.shards(stage)
        scope = {"max_tools": self.max_tools} if stage == "syn" else self.stage_options("real")
        return [{"shard": i, "shards": n, **scope, "llm_url": urls[i % len(urls)]} for i in range(n)]

    def target(self, stage: str) -> str:
        return self.stage_targets.get(stage, STAGES[stage].target)

    def stage_options(self, stage: str) -> dict[str, Any]:
        """The keyword options of one stage's ``run`` (see docs/CONTRACTS.md)."""
        mirror = str(self.mirror) if self.mirror else None
        if stage == "crawl":
            return {
                "mirror": mirror,
                "live": self.live,
                "probe_links": self.probe_links,
                "platforms": self.platforms,
            }
        if stage == "syn":
            return {"max_tools": self.max_tools}
        if stage == "real":
            return {"mirror": mirror}
        if stage == "review-sample":
            return {"n": self.review_n}
        if stage == "evaluate":
            return {"seeds": self.eval_seeds}
        if stage == "publish":
            return {"repo_id": self.repo_id}
        return {}


def _check_writable(out: Path) -> str | None:
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-check-"):
            pass
    except OSError as exc:
        return f"out dir {str(out)!r} is not writable: {exc.strerror or exc}"
    return None


def _check_llm_server(url: str | None, timeout: float = 5.0) -> str | None:
    """None when an OpenAI-compatible server answers at ``url`` (GET {url}/models), else why not."""
    if not url:
        return "the profile uses an LLM server but no URL is set: pass --llm-url http://HOST:PORT/v1"
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return f"LLM server URL {url!r} must look like http://HOST:PORT/v1"
    import requests

    try:
        response = requests.get(url.rstrip("/") + "/models", timeout=timeout)
    except requests.RequestException as exc:
        return f"LLM server at {url} is not reachable ({type(exc).__name__}); start vLLM or pass --llm-url"
    if response.status_code >= 500 or response.status_code == 404:
        return f"LLM server at {url} answered HTTP {response.status_code} to GET /models"
    return None


def _check_dask(address: str, timeout: float = 5.0) -> str | None:
    parsed = urlparse(address)
    if parsed.scheme not in ("tcp", "tls"):
        return None
    try:
        with socket.create_connection((parsed.hostname, parsed.port or 8786), timeout=timeout):
            return None
    except OSError as exc:
        return f"dask scheduler at {address} is not reachable: {exc}"


def validate_params(params: dict[str, Any] | BuildParams, *, check_services: bool = True) -> BuildParams:
    """Validate build parameters and the environment they need, before any work starts.

    Checks shapes and ranges (pydantic), then the out dir (writable), the catalog snapshot (for the crawl
    and Real), the inputs of a partial run (an earlier stage not in ``stages`` must have left its outputs),
    and, unless ``check_services`` is false, the LLM server of a server-backed profile and the dask scheduler.

    Raises:
        ParamsError: with every problem found, one per line.
    """
    if isinstance(params, BuildParams):
        p = params
    else:
        try:
            p = BuildParams.model_validate(params)
        except ValidationError as exc:
            lines = []
            for err in exc.errors():
                where = ".".join(str(x) for x in err["loc"]) or "parameters"
                msg = str(err["msg"]).removeprefix("Value error, ")
                lines.append(f"{where}: {msg}")
            raise ParamsError("invalid build parameters:\n  " + "\n  ".join(lines)) from None

    problems: list[str] = []
    out = Path(os.path.expanduser(str(p.out))).resolve()
    if (why := _check_writable(out)) is not None:
        problems.append(why)
    p = p.model_copy(update={"out": out})

    selected = p.selected
    needs_mirror = not p.live and "crawl" in selected or "real" in selected
    if needs_mirror:
        if p.mirror is not None:
            if not Path(p.mirror).is_dir():
                problems.append(f"mirror {str(p.mirror)!r} is not a folder")
        else:
            try:
                p = p.model_copy(update={"mirror": default_mirror().resolve()})
            except FileNotFoundError as exc:
                problems.append(str(exc))

    # a partial run reads what earlier runs left behind
    for stage in selected:
        for dep in sorted(upstream_closure(stage) - set(selected)):
            if not outputs_present(out, STAGES[dep]):
                problems.append(
                    f"stage {stage!r} needs the outputs of {dep!r}, which are not in {out}: "
                    f"add {dep!r} to stages or run it first"
                )

    profile = p.resolved_profile()
    if check_services:
        uses_server = profile.models.llm_backend == "openai" and any(STAGES[s].uses_llm for s in selected)
        for url in dict.fromkeys([profile.models.llm_base_url, *p.llm_urls]) if uses_server else []:
            if (why := _check_llm_server(url)) is not None:
                problems.append(why)
        if p.task_runner == "dask" and p.dask_address and (why := _check_dask(p.dask_address)) is not None:
            problems.append(why)
        if p.task_runner == "dask":
            try:
                import prefect_dask  # noqa: F401
            except ImportError:
                problems.append("task_runner='dask' needs prefect-dask: pip install 'ecoagent[dask]'")

    if problems:
        raise ParamsError("invalid build parameters:\n  " + "\n  ".join(dict.fromkeys(problems)))
    return p


def profile_names() -> list[str]:
    return sorted(PROFILES)
