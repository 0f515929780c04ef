"""The dynamic simulation experiment (the paper's Table 2 and the scenarios past it): streams x scenarios
x seeds, every method on the same stream and failure schedule, metrics aggregated as mean +- std.

Methods are built per seed (the warm-up sample is the seed's) and given as factories ``() -> Policy``;
expensive state (candidate lists, query embeddings, warm bandits) is built once per seed outside and
reset by each policy's ``reset``. Besides mean +- std over seeds, ``bootstrap_sr`` gives 95%
confidence intervals that resample the test queries and the seeds (stream and failure draws) together.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from rated.evaluation.failures import Scenario
from rated.evaluation.metrics import (
    AdaptationSteps,
    AdaptationStepsPaper,
    CumulativeRegret,
    FailedSelectionRate,
    PostFailSuccessRate,
    WindowSuccessRate,
    moving_success_rate,
)
from rated.evaluation.simulator import Policy, QueryPool, Stream, Trace, oracle_success, simulate

PolicyFactory = Callable[[], Policy]

# the paper's protocol: onset at step 2,001, metrics over steps 2,001-5,000, theta by failure rate
PAPER_SCENARIOS: tuple[Scenario, ...] = (
    Scenario("rho=20%", "permanent", rho=0.2, theta=0.9),
    Scenario("rho=30%", "permanent", rho=0.3, theta=0.8),
)
EXTENDED_SCENARIOS: tuple[Scenario, ...] = (
    Scenario("recovering (rho=20%)", "recovering", rho=0.2, theta=0.9, recover_at=5000),
    Scenario("flaky (rho=20%, p=0.5)", "flaky", rho=0.2, theta=0.9, flaky_p=0.5),
    Scenario("cold start (rho=20%, +10% new tools)", "cold_start", rho=0.2, theta=0.9, arrival=5000),
)


@dataclass(frozen=True)
class SimulationConfig:
    """Steps, window and seeds of one simulation (saved beside its numbers)."""

    steps: int = 10_000
    onset: int = 2000
    window_end: int = 5000
    moving_window: int = 200
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def run_metrics(
    trace: Trace, scenario: Scenario, config: SimulationConfig, new_steps: np.ndarray | None
) -> dict[str, Any]:
    """All metrics of one run; the scenario decides which extra ones apply."""
    end = min(config.window_end, config.steps)
    out: dict[str, Any] = {
        "post_fail_sr": PostFailSuccessRate(config.onset, end)(trace),
        "fsr": FailedSelectionRate(config.onset, end)(trace),
        "adaptation_steps": AdaptationSteps(config.onset, scenario.theta, config.moving_window)(trace),
        "adaptation_steps_paper": AdaptationStepsPaper(config.onset, scenario.theta, config.moving_window)(
            trace
        ),
        "pre_fail_sr": WindowSuccessRate(0, config.onset)(trace),
        "regret_window": CumulativeRegret(end)(trace) - CumulativeRegret(config.onset)(trace),
        "regret_total": CumulativeRegret()(trace),
        "calls_per_step": float(trace.attempts.mean()),
        "oracle_post_fail_sr": float(trace.oracle[config.onset : end].mean()),
        "oracle_pre_fail_sr": float(trace.oracle[: config.onset].mean()),
    }
    if scenario.kind == "recovering" and scenario.recover_at < config.steps:
        out["recovered_sr"] = WindowSuccessRate(scenario.recover_at, config.steps)(trace)
    if scenario.kind == "cold_start" and new_steps is not None and scenario.arrival < config.steps:
        out["new_tool_sr"] = WindowSuccessRate(scenario.arrival, config.steps)(trace, new_steps)
    return out


def run_stream(
    methods: dict[str, PolicyFactory],
    pool: QueryPool,
    n_tools: int,
    scenario: Scenario,
    config: SimulationConfig,
    seed: int,
    keep_curves: bool = False,
) -> dict[str, Any]:
    """Every method on one seeded stream and schedule; returns per-method metrics (and SR curves)."""
    stream = Stream.sample(pool, config.steps, seed)
    relevant = stream.relevant_per_step()
    schedule = scenario.build(relevant, n_tools, seed)
    oracle = oracle_success(stream, schedule)
    new = np.flatnonzero(schedule.arrival > 0)
    new_set = frozenset(new.tolist())
    new_steps = np.array([bool(rel & new_set) for rel in relevant]) if new.size else None
    out: dict[str, Any] = {"seed": seed, "schedule": schedule.to_dict(), "methods": {}, "curves": {}}
    out["n_true_tools"] = int(len({t for rel in relevant for t in rel}))
    end = min(config.window_end, config.steps)
    windows = {"pre": (0, config.onset), "post": (config.onset, end)}
    n_q = len(pool)
    out["per_query"] = {}
    counts = {w: np.bincount(stream.order[a:b], minlength=n_q) for w, (a, b) in windows.items()}
    out["query_counts"] = counts
    for name, factory in methods.items():
        trace = simulate(factory(), stream, schedule, oracle)
        out["methods"][name] = run_metrics(trace, scenario, config, new_steps)
        out["per_query"][name] = {
            w: np.bincount(stream.order[a:b], weights=trace.success[a:b], minlength=n_q)
            for w, (a, b) in windows.items()
        }
        if keep_curves:
            out["curves"][name] = moving_success_rate(trace.success, config.moving_window).tolist()
    out["per_query"]["Oracle"] = {
        w: np.bincount(stream.order[a:b], weights=oracle[a:b], minlength=n_q) for w, (a, b) in windows.items()
    }
    if keep_curves:
        out["curves"]["Oracle"] = moving_success_rate(oracle, config.moving_window).tolist()
    return out


def bootstrap_sr(
    runs: Sequence[dict[str, Any]], window: str, n_resamples: int = 2000, seed: int = 0
) -> dict[str, dict[str, float]]:
    """95% percentile CIs of each method's SR over ``window`` ("pre" or "post"), resampling the pool's
    queries and the seeds with replacement (each resample: a multiset of queries x a multiset of seed
    runs; SR = their successes / their steps). Pops nothing: ``runs`` keep ``per_query``."""
    counts = np.stack([r["query_counts"][window] for r in runs]).astype(np.float64)  # [seeds, queries]
    n_s, n_q = counts.shape
    rng = np.random.default_rng([seed, 0xB007])
    wq = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=n_resamples).astype(np.float64)
    ws = rng.multinomial(n_s, np.full(n_s, 1.0 / n_s), size=n_resamples).astype(np.float64)
    den = np.einsum("bs,sq,bq->b", ws, counts, wq)
    out = {}
    for name in runs[0]["per_query"]:
        succ = np.stack([r["per_query"][name][window] for r in runs])
        num = np.einsum("bs,sq,bq->b", ws, succ, wq)
        sr = num[den > 0] / den[den > 0]
        if sr.size:
            lo, hi = np.quantile(sr, [0.025, 0.975])
            out[name] = {"ci_low": float(lo), "ci_high": float(hi), "n_resamples": n_resamples}
    return out


def aggregate(runs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Mean and std (ddof=1 across seeds) of each metric; AdaptationSteps also counts "Failed" runs."""
    table: dict[str, dict[str, Any]] = {}
    for name in runs[0]["methods"]:
        per = [r["methods"][name] for r in runs]
        row: dict[str, Any] = {}
        for key in per[0]:
            values = [p[key] for p in per]
            if key in ("adaptation_steps", "adaptation_steps_paper"):
                reached = [v for v in values if v is not None]
                row[key] = {
                    "mean": float(np.mean(reached)) if reached else None,
                    "std": float(np.std(reached, ddof=1)) if len(reached) > 1 else 0.0 if reached else None,
                    "reached": len(reached),
                    "runs": len(values),
                    "values": values,
                }
                continue
            arr = np.array(
                [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
            )
            row[key] = {
                "mean": float(arr.mean()) if arr.size else None,
                "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
                "values": values,
            }
        table[name] = row
    return table
