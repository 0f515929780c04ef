"""The live run: RATED and the baselines over one query stream whose calls go to real MCP servers.

Every step draws a query whose true tool is a live tool, applies the fault schedule's events for that
step to the real processes, then lets every policy select a tool and learn from the call's outcome,
through the simulation's own ``Policy`` interface (``select`` -> ``observe(success, error)``). The only
difference from ``rated.evaluation.simulator.simulate`` is where ``executed`` comes from: not a
schedule's flag but the real tools/call (no protocol error, no ``isError``, within the timeout).

Within a step the world is one state for all policies, as in the simulation: each distinct tool is
called once per step (the true tool always, for the oracle) and every policy that selects it sees that
call's outcome. The metrics are the simulation's (``rated.evaluation.metrics``); the confidence
intervals resample blocks of steps of this one run.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import signal
import threading
import time
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from live.catalog import tool_id
from live.faults import HTTP_ACTIONS, FaultSchedule
from live.httpstub import HttpStub
from live.servers import CallResult, ServerPool, ServerSpec, live_servers, missing_installs
from live.stream import Sandbox, ToolTemplate, load_templates, pools, render, with_replicas
from rated.evaluation.metrics import (
    AdaptationSteps,
    FailedSelectionRate,
    PostFailSuccessRate,
    WindowSuccessRate,
)
from rated.evaluation.simulator import Policy, Stream, Trace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiveConfig:
    """What decides one live run's numbers (saved in live.json).

    Args:
        steps: queries in the stream.
        seed: the stream's draw and the warm-up sample.
        call_timeout: seconds before a call counts as failed (a SIGSTOPped server waits it out).
        warm_up_pairs: labelled (warm-up query, true tool) pairs, sampled with replacement from each
            tool's first template query (never in the stream).
        retry_k: calls Retry may make in one step.
        batch: the ToolRL-like baseline's batch (the simulation's 500 is half a live run).
        moving_window, theta: Adaptation Steps' window and threshold.
        n_bootstrap, block: resamples and block length (steps) of the CIs.
        fetch: include mcp-server-fetch, reading from the loopback HTTP stub the run starts.
        replicas: add the second filesystem, time and fetch processes (substitute tools).
        faults: a JSON fault schedule (default: ``FaultSchedule.default(steps)``).
    """

    steps: int = 1000
    seed: int = 0
    call_timeout: float = 2.0
    warm_up_pairs: int = 200
    retry_k: int = 3
    batch: int = 100
    moving_window: int = 100
    theta: float = 0.9
    n_bootstrap: int = 2000
    block: int = 25
    fetch: bool = True
    replicas: bool = True
    faults: str | None = None
    encoder: str = field(default="sentence-transformers/all-MiniLM-L6-v2")


# ----------------------------------------------------------------------------- policies


def build_policies(
    tools: Any,
    q_emb: np.ndarray,
    t_emb: np.ndarray,
    warm_emb: np.ndarray,
    warm_rel: list[frozenset[int]],
    config: LiveConfig,
) -> list[Policy]:
    """RATED (Full, w/o Feedback, paper-exact), the static dense retriever and the online baselines.

    Built as ``rated.evaluation.pipeline._methods`` builds them, on the same candidate lists (dense
    MiniLM over the live catalog, 2K deep), with RATEDConfig's defaults and the same warm-up pairs.
    RATED's towers are the pretrained MiniLM (no fine-tuned model is loaded here).
    """
    from rated import RATED, RATEDConfig, Variant
    from rated.evaluation.baselines import (
        BatchUpdate,
        GlobalDUCB,
        HealthCheckBlacklist,
        OnlineEmbeddingUpdate,
        Retry,
        SlidingWindowUCB,
        StaticRetriever,
    )
    from rated.evaluation.candidates import CandidateLists
    from rated.evaluation.rated_policy import RatedPolicy
    from rated.index import ToolIndex

    base = RATEDConfig()
    n = len(tools)
    k = min(base.top_k, n)
    depth = min(2 * k, n)
    shared = CandidateLists.from_scores((q_emb @ t_emb.T).astype(np.float64), depth)
    warm = CandidateLists.from_scores((warm_emb @ t_emb.T).astype(np.float64), depth)
    prior = tools["prior"].to_numpy().astype(np.float64)
    w = base.fusion_coefficients()
    learners: list[Any] = [
        GlobalDUCB(shared, prior, w, gamma=0.95, alpha=0.5, k=k, name="Global D-UCB (per-arm γ=0.95)"),
        SlidingWindowUCB(shared, prior, 100, w, alpha=0.5, k=k, name="SW-UCB (W=100)"),
        OnlineEmbeddingUpdate(shared, q_emb, t_emb, lr=0.1, k=k, name="Online embedding update (η=0.1)"),
    ]
    for p in learners:
        if isinstance(p, OnlineEmbeddingUpdate):
            p.warm_up(warm, warm_rel, warm_emb)
        else:
            p.warm_up(warm, warm_rel)
    out: list[Any] = [
        StaticRetriever(shared, "Dense all-MiniLM-L6-v2 (static)", k),
        HealthCheckBlacklist(shared, k=k),
        Retry(shared, k=config.retry_k, depth=k, name=f"Retry (k={config.retry_k})"),
        BatchUpdate(shared, n, config.batch, 0.5, k=k, name=f"BatchUpdate (ToolRL-like, B={config.batch})"),
        *learners,
    ]
    ids = tools["tool_id"].to_list()
    for name, cfg in (
        ("RATED w/o Feedback", base.replace(variant=Variant.NO_FEEDBACK)),
        ("RATED Full (paper-exact)", base.paper_exact()),
        ("RATED Full", base),
    ):
        model = RATED(None, ToolIndex(t_emb.shape[1], ids, t_emb.copy()), prior.copy(), cfg.replace(top_k=k))
        policy = RatedPolicy(model, q_emb, name)
        policy.warm_up(warm_emb, warm_rel)
        out.append(policy)
    return out


# ----------------------------------------------------------------------------- the loop


@dataclass
class _Record:
    """Per-step arrays of one policy (what ``Trace`` holds) and its own decision time."""

    steps: int
    success: np.ndarray = field(init=False)
    attempts: np.ndarray = field(init=False)
    unavailable: np.ndarray = field(init=False)
    selected: np.ndarray = field(init=False)
    first: np.ndarray = field(init=False)
    decide: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.success = np.zeros(self.steps, dtype=bool)
        self.attempts = np.zeros(self.steps, dtype=np.int64)
        self.unavailable = np.zeros(self.steps, dtype=np.int64)
        self.selected = np.full(self.steps, -1, dtype=np.int64)
        self.first = np.full(self.steps, -1, dtype=np.int64)

    def trace(self, oracle: np.ndarray, query: np.ndarray) -> Trace:
        return Trace(self.success, self.attempts, self.unavailable, self.selected, oracle, query, self.first)


class LiveWorld:
    """The real side of a step: fault events on processes and the HTTP stub, one real call per (step, tool)."""

    def __init__(
        self,
        pool: ServerPool,
        sandbox: Sandbox,
        templates: dict[int, ToolTemplate],
        stub: HttpStub | None = None,
    ) -> None:
        self.pool, self.sandbox, self.templates, self.stub = pool, sandbox, templates, stub
        self.bad: set[str] = set()
        self.calls: list[dict[str, Any]] = []
        self._n = 0
        self._step_outcomes: dict[int, CallResult] = {}
        self._step = -1

    def apply(self, event: Any) -> None:
        if event.action == "kill":
            self.pool.kill(event.server)
        elif event.action == "restart":
            self.pool.restart(event.server)
        elif event.action == "pause":
            self.pool.pause(event.server)
        elif event.action == "resume":
            self.pool.resume(event.server)
        elif event.action == "bad_args":
            self.bad |= {tool_id(event.server, t) for t in event.tools}
        elif event.action == "good_args":
            self.bad -= {tool_id(event.server, t) for t in event.tools}
        elif event.action == "restart_no_credential":
            self.pool.restart(event.server, credential=False)
        elif event.action in (*HTTP_ACTIONS, "http_ok"):
            if self.stub is None:
                raise RuntimeError(f"{event.action} at step {event.step}: this run has no HTTP stub")
            if event.action == "http_ok":
                self.stub.recover()
            else:
                self.stub.fail(HTTP_ACTIONS[event.action])

    def call(self, step: int, tool: int) -> CallResult:
        """The outcome of ``tool`` at ``step``: called for real the first time in the step, then reused."""
        if step != self._step:
            self._step, self._step_outcomes = step, {}
        if tool not in self._step_outcomes:
            t = self.templates[tool]
            self._n += 1
            args = t.bad if t.tool_id in self.bad else t.arguments
            result = self.pool.call(t.server, t.tool, render(args, self.sandbox.fill(self._n)))
            self._step_outcomes[tool] = result
            self.calls.append(
                {
                    "step": step,
                    "tool_id": t.tool_id,
                    "outcome": result.outcome,
                    "latency_s": result.latency,
                    "detail": result.detail,
                }
            )
        return self._step_outcomes[tool]


def run_stream(
    policies: list[Policy], stream: Stream, world: LiveWorld, schedule: FaultSchedule, every: int = 100
) -> tuple[dict[str, Trace], dict[str, list[float]], np.ndarray]:
    """Every policy over every step, the real call outcome as feedback; (traces, decision times, oracle)."""
    steps = len(stream)
    records = {p.name: _Record(steps) for p in policies}
    oracle = np.zeros(steps, dtype=bool)
    n_tools = len(world.templates)
    for p in policies:
        p.reset(np.zeros(n_tools, dtype=np.int64))
    t0 = time.perf_counter()
    for t in range(steps):
        for event in schedule.at(t):
            log.info("step %d: %s %s %s", t, event.action, event.server, ",".join(event.tools))
            world.apply(event)
        q = int(stream.order[t])
        rel = stream.pool.relevant[q]
        oracle[t] = any(world.call(t, tool).ok for tool in sorted(rel))
        for p in policies:
            rec = records[p.name]
            for attempt in range(p.max_attempts):
                d0 = time.perf_counter()
                choice = p.select(t, q)
                d1 = time.perf_counter()
                if choice is None:
                    if attempt == 0:
                        raise ValueError(f"policy {p.name!r} ended step {t} without calling a tool")
                    break
                tool = int(choice)
                executed = world.call(t, tool).ok
                correct = executed and tool in rel
                d2 = time.perf_counter()
                p.observe(t, q, tool, executed, not executed)
                rec.decide.append((d1 - d0) + (time.perf_counter() - d2))
                rec.attempts[t] += 1
                rec.unavailable[t] += not executed
                rec.selected[t] = tool
                if attempt == 0:
                    rec.first[t] = tool
                rec.success[t] |= correct
        if every and (t + 1) % every == 0:
            log.info(
                "live: step %d/%d, %d calls, %.0f s", t + 1, steps, len(world.calls), time.perf_counter() - t0
            )
    traces = {name: r.trace(oracle, stream.order.copy()) for name, r in records.items()}
    return traces, {name: r.decide for name, r in records.items()}, oracle


# ----------------------------------------------------------------------------- statistics


def block_bootstrap(values: np.ndarray, stat: Any, n: int, block: int, seed: int) -> tuple[float, float]:
    """95 % percentile CI of ``stat`` over a moving-block bootstrap of ``values`` (rows = steps).

    Blocks, because a fault makes neighbouring steps alike (a hung server fails for a stretch).
    """
    m = len(values)
    if m == 0:
        return float("nan"), float("nan")
    block = max(1, min(block, m))
    rng = np.random.default_rng([seed, 0xB007])
    n_blocks = -(-m // block)
    starts = rng.integers(0, m - block + 1, size=(n, n_blocks))
    idx = (starts[:, :, None] + np.arange(block)).reshape(n, -1)[:, :m]
    stats = np.array([stat(values[i]) for i in idx])
    stats = stats[np.isfinite(stats)]
    if not stats.size:
        return float("nan"), float("nan")
    lo, hi = np.quantile(stats, [0.025, 0.975])
    return float(lo), float(hi)


def mean_ci(x: np.ndarray, n: int, seed: int) -> dict[str, float]:
    """Mean with a 95 % bootstrap CI (iid resampling), median and p95; in the input's unit."""
    x = np.asarray(x, dtype=np.float64)
    if not x.size:
        return {"n": 0}
    rng = np.random.default_rng([seed, 0x1A7])
    means = x[rng.integers(0, x.size, size=(n, x.size))].mean(axis=1) if x.size > 1 else np.array([x[0]])
    lo, hi = np.quantile(means, [0.025, 0.975])
    return {
        "n": int(x.size),
        "mean": float(x.mean()),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "median": float(np.median(x)),
        "p95": float(np.quantile(x, 0.95)),
    }


def metrics(
    trace: Trace,
    onset: int,
    end: int,
    recover: int | None,
    config: LiveConfig,
    groups: dict[str, np.ndarray] | None = None,
) -> dict[str, Any]:
    """The simulation's metrics of one trace, with block-bootstrap CIs for Post-Fail SR and FSR.

    ``groups``: step masks; Post-Fail SR is also given on the steps of each (``post_fail_sr_<group>``).
    """
    s = trace.success[onset:end].astype(np.float64)
    pair = np.stack([trace.unavailable[onset:end], trace.attempts[onset:end]], axis=1).astype(np.float64)
    out: dict[str, Any] = {
        "pre_fail_sr": WindowSuccessRate(0, onset)(trace),
        "post_fail_sr": PostFailSuccessRate(onset, end)(trace),
        "post_fail_sr_ci": block_bootstrap(s, np.mean, config.n_bootstrap, config.block, config.seed),
        "fsr": FailedSelectionRate(onset, end)(trace),
        "fsr_ci": block_bootstrap(
            pair, lambda v: v[:, 0].sum() / v[:, 1].sum(), config.n_bootstrap, config.block, config.seed
        ),
        "adaptation_steps": AdaptationSteps(onset, config.theta, config.moving_window)(trace),
        "calls_per_step": float(trace.attempts.mean()),
        "oracle_post_fail_sr": float(trace.oracle[onset:end].mean()),
    }
    if recover is not None and recover < end:
        out["sr_after_recovery"] = WindowSuccessRate(recover, end)(trace)
    for name, mask in (groups or {}).items():
        out[f"post_fail_sr_{name}"] = WindowSuccessRate(onset, end)(trace, mask)
    return out


def faulted_tools(schedule: FaultSchedule, specs: list[ServerSpec], usable: list[ToolTemplate]) -> set[str]:
    """The tool ids a schedule's faults hit: a server's every tool, the named ones (bad arguments), and
    for an HTTP fault every tool of every server that reads from the stub."""
    http = {s.name for s in specs if s.calls_http}
    out: set[str] = set()
    for e in schedule.events:
        if e.action in ("kill", "pause", "restart_no_credential"):
            out |= {t.tool_id for t in usable if t.server == e.server}
        elif e.action == "bad_args":
            out |= {tool_id(e.server, x) for x in e.tools}
        elif e.action in HTTP_ACTIONS:
            out |= {t.tool_id for t in usable if t.server in http}
    return out


def step_groups(stream: Stream, broken: set[int]) -> dict[str, np.ndarray]:
    """Steps by what a failure leaves their query: a working substitute, nothing, or no failure at all."""
    rel = stream.relevant_per_step()
    hit = np.array([bool(r & broken) for r in rel])
    spare = np.array([bool(r - broken) for r in rel])
    return {"substitute": hit & spare, "no_substitute": hit & ~spare, "unfaulted": ~hit}


# ----------------------------------------------------------------------------- the run


def versions() -> dict[str, str]:
    out = {}
    for dist in ("mcp", "mcp-server-time", "mcp-server-git", "mcp-server-fetch"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def run_live(out: Path, config: LiveConfig | None = None) -> dict[str, Any]:
    """Start the servers, run the stream, stop every server, write ``out/eval/live.{md,json}``.

    A plain function so a Prefect task (or a test) can call it; returns what live.json holds.

    Raises:
        RuntimeError: something ``scripts/setup.sh --live`` installs is missing, or a server process
            outlived the run.
    """
    from ecoagent.embeddings import embed
    from ecoagent.schemas import tool_documents
    from live.catalog import tool_table
    from rated.evaluation.live_report import refresh_report, write_report

    config = config or LiveConfig()
    missing = missing_installs()
    if missing:
        raise RuntimeError(
            f"the live servers are not installed ({', '.join(missing)}): run scripts/setup.sh --live"
        )
    out = Path(out)
    (out / "eval").mkdir(parents=True, exist_ok=True)
    (out / "live").mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    sandbox = Sandbox()
    stub = HttpStub() if config.fetch else None
    if stub is not None:
        sandbox.http = stub.base_url
    specs = live_servers(
        sandbox.root, sandbox.repo, sandbox.memory, fetch=config.fetch, replicas=config.replicas, stub=stub
    )
    names_run = [s.name for s in specs]
    if config.faults:
        schedule = FaultSchedule.from_json(Path(config.faults))
        unknown = sorted(schedule.servers() - set(names_run))
    else:
        schedule, unknown = FaultSchedule.default(config.steps, names_run), []
    if unknown:
        sandbox.cleanup()
        if stub is not None:
            stub.close()
        raise ValueError(f"the fault schedule names servers this run does not start: {unknown}")
    pool = ServerPool(specs, out / "live" / "logs", call_timeout=config.call_timeout)
    timings: dict[str, float] = {}
    restore = _stop_on_sigterm()
    try:
        t0 = time.perf_counter()
        pool.start()
        timings["start_servers_s"] = time.perf_counter() - t0
        listed = {name: pool.list_tools(name) for name in pool.servers}
        templates, excluded = load_templates()
        templates = with_replicas(templates, {s.name: s.replica_of for s in specs if s.replica_of})
        names = {(s, t.name) for s, tools in listed.items() for t in tools}
        usable = [t for t in templates if (t.server, t.tool) in names]
        table = tool_table(
            listed,
            {s.name: s.package for s in specs},
            {t.tool_id for t in usable},
            config.encoder,
            needs_auth={s.name for s in specs if s.without_credential},
        )
        table.write_parquet(out / "live" / "tools.parquet")
        row = {tid: i for i, tid in enumerate(table["tool_id"].to_list())}
        by_row = {row[t.tool_id]: t for t in usable}
        warm_pool, pool_q = pools(usable, row)
        stream = Stream.sample(pool_q, config.steps, config.seed)
        t0 = time.perf_counter()
        t_emb = embed(config.encoder, tool_documents(table))
        q_emb = embed(config.encoder, pool_q.queries)
        w_all = embed(config.encoder, warm_pool.queries)
        timings["encode_s"] = time.perf_counter() - t0
        pick = np.random.default_rng([config.seed, 0x3A4]).integers(0, len(warm_pool), config.warm_up_pairs)
        policies = build_policies(
            table, q_emb, t_emb, w_all[pick], [warm_pool.relevant[i] for i in pick], config
        )
        world = LiveWorld(pool, sandbox, by_row, stub)
        t0 = time.perf_counter()
        traces, decide, oracle = run_stream(policies, stream, world, schedule)
        timings["stream_s"] = time.perf_counter() - t0
    finally:
        t0 = time.perf_counter()
        survivors = pool.close()
        stub_closed = stub.close() if stub is not None else True
        timings["stop_servers_s"] = time.perf_counter() - t0
        sandbox.cleanup()
        restore()
    if survivors:
        raise RuntimeError(f"server processes {survivors} outlived the live run")
    if not stub_closed:
        raise RuntimeError("the loopback HTTP stub's thread or port outlived the live run")
    timings["total_s"] = time.perf_counter() - t_start
    with open(out / "live" / "calls.jsonl", "w") as f:
        for c in world.calls:
            f.write(json.dumps(c) + "\n")
    end = config.steps
    recover = next((e.step for e in schedule.events if e.action in ("restart", "resume", "http_ok")), None)
    restart = next((e.step for e in schedule.events if e.action == "restart"), None)
    faulted = faulted_tools(schedule, specs, usable)
    ok_tools = {c["tool_id"] for c in world.calls if c["outcome"] == "ok"}
    never_ok = sorted({c["tool_id"] for c in world.calls} - ok_tools)
    groups = step_groups(stream, {row[t] for t in faulted | set(never_ok)})
    rows = {
        name: metrics(tr, schedule.onset, end, restart, config, groups)
        | {"decision_us": mean_ci(np.asarray(decide[name]) * 1e6, config.n_bootstrap, config.seed)}
        for name, tr in traces.items()
    }
    lat = np.array([c["latency_s"] for c in world.calls]) * 1e3
    kinds = np.array([c["outcome"] for c in world.calls])
    result: dict[str, Any] = {
        "config": asdict(config),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_avg": list(os.getloadavg()),
        },
        "servers": [
            {
                "name": s.name,
                "package": s.package,
                "tools_listed": len(listed[s.name]),
                "tools_in_stream": sum(t.server == s.name for t in usable),
                "note": s.note,
                "processes_started": pool.servers[s.name].starts,
                "started_without_credential": pool.servers[s.name].starts_without_credential,
                "calls_http": s.calls_http,
            }
            for s in specs
        ],
        "versions": versions() | {"npm": f"@modelcontextprotocol/* {specs[0].package.rsplit('@', 1)[-1]}"},
        "n_tools": len(table),
        "n_servers": len(specs),
        "n_queries": len(pool_q),
        "excluded_tools": excluded,
        "schedule": schedule.to_list(),
        "onset": schedule.onset,
        "recovery_steps": {"first": recover, "restart": restart},
        "faulted_tools": sorted(faulted),
        "never_ok_tools": never_ok,
        "post_fail_steps": {k: int(v[schedule.onset :].sum()) for k, v in groups.items()},
        "oracle_sr": {
            "pre_fail": float(oracle[: schedule.onset].mean()),
            "post_fail": float(oracle[schedule.onset :].mean()),
        },
        "calls": {
            "n": len(world.calls),
            "by_outcome": {k: int((kinds == k).sum()) for k in sorted(set(kinds.tolist()))},
            "failed_post_onset": int(
                sum(1 for c in world.calls if c["outcome"] != "ok" and c["step"] >= schedule.onset)
            ),
            "steps_true_tool_failed": int((~oracle).sum()),
            "latency_ms": mean_ci(lat, config.n_bootstrap, config.seed),
            "latency_ms_by_outcome": {
                k: mean_ci(lat[kinds == k], config.n_bootstrap, config.seed)
                for k in sorted(set(kinds.tolist()))
            },
        },
        "methods": rows,
        "timings": timings,
        "orphans": survivors,
        "http_stub": None
        if stub is None
        else {
            "address": stub.base_url,
            "responses": stub.responses(),
            "closed": stub_closed,
            "retry_after_s": stub.retry_after,
        },
    }
    (out / "eval" / "live.json").write_text(json.dumps(result, indent=2, default=_json))
    write_report(result, out / "eval" / "live.md")
    refresh_report(out)  # a build's eval/report.md shows this run beside the simulated tables at once
    return result


def _stop_on_sigterm() -> Any:
    """SIGTERM raises SystemExit while the servers run, so ``finally`` stops them (a SIGSTOPped server
    would otherwise outlive the harness: it cannot read the end of its stdin). Returns the undo."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, stop)
    return lambda: signal.signal(signal.SIGTERM, previous)


def _json(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, tuple):
        return list(value)
    raise TypeError(f"not JSON: {type(value)}")
