"""Benchmark: why one failure did not move RATED, measured on a build's own streams, one change at a time.

It replays the evaluate stage's Table 2 protocol (same test pools, candidate lists, labelled warm-up per
seed, failure draws and metrics; ``rated.evaluation.pipeline``) for RATED Full under the paper-exact
learning and fusion, under each of the three changes alone, and under all of them (the default
``RATEDConfig``), beside the static fine-tuned ranker and the HealthCheck blacklist measured in the same
run. Each row is RATED Full with the fields named in its label; everything else is the artifact
folder's model and the paper's gamma = 0.95, alpha = 0.1, weights 0.75 / 0.15 / 0.10.

    .venv/bin/python bench/bench_bandit_fix.py --out OUT [--streams syn,syn_tool] [--seeds 5] [--steps 5000]

The changes (``rated.config.RATEDConfig``):
- ``error_reward = -1``: an errored call teaches -1 instead of 0;
- ``error_weight = 20``: an error counts as 20 observations (1 / (1 - gamma), the discount's memory);
- ``bandit_floor = None``: the bandit score enters the fusion clipped above at 1 only, not to [0, 1].

It also prints the saturation behind the paper-exact row: for the tools the first seed fails, their
mean UCB score over their own test queries after the warm-up (before the clip) and how many errors in a
row it takes until the clipped bandit term drops below 1.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import numpy as np

from ecoagent.artifacts import ArtifactDir
from ecoagent.config import get_profile
from ecoagent.summary import cpu_model, print_table
from rated.config import PAPER_EXACT
from rated.evaluation import dynamic
from rated.evaluation import pipeline as evaluation
from rated.evaluation.baselines import HealthCheckBlacklist, StaticRetriever
from rated.evaluation.candidates import CandidateLists
from rated.evaluation.data import Catalog
from rated.evaluation.rated_policy import RatedPolicy

ROWS: dict[str, dict[str, Any]] = {
    "paper-exact (error 0 x1, clip [0, 1])": dict(PAPER_EXACT),
    "+ error reward -1": {**PAPER_EXACT, "error_reward": -1.0},
    "+ error weight 20": {**PAPER_EXACT, "error_weight": 20.0},
    "+ no floor": {**PAPER_EXACT, "bandit_floor": None},
    "+ error -1 x20 (floor kept)": {**PAPER_EXACT, "error_reward": -1.0, "error_weight": 20.0},
    "+ error -1, no floor (weight 1)": {**PAPER_EXACT, "error_reward": -1.0, "bandit_floor": None},
    "all three (the default)": {},
}


def saturation(policy: RatedPolicy, pool: Any, failed: list[int], max_errors: int = 60) -> dict[str, float]:
    """Mean raw UCB of each failed tool over its own test queries after the warm-up, and errors in a row
    (on one of those queries) until its clipped bandit term leaves 1; medians over the failed tools."""
    ucb, errors = [], []
    for tool in failed:
        queries = [q for q, rel in enumerate(pool.relevant) if tool in rel]
        if not queries:
            continue
        policy.reset(np.zeros(len(policy.model.index), dtype=np.int64))
        bandits = policy.model.bandits
        emb = policy.query_emb[queries]
        ucb.append(float(np.mean([bandits.scores(np.array([tool]), e)[0] for e in emb])))
        n = 0
        while n < max_errors and bandits.scores(np.array([tool]), emb[0])[0] >= 1.0:
            policy.model.feedback_embedding(tool, emb[0], success=False, error=True)
            n += 1
        errors.append(n)
    return {"median_ucb": float(np.median(ucb)), "median_errors_to_leave_1": float(np.median(errors))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="an artifact folder with syn/ and model/")
    ap.add_argument("--streams", default="syn,syn_tool")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5000, help="5,000 covers the metric window 2,001-5,000")
    args = ap.parse_args()

    art, profile = ArtifactDir(args.out), get_profile("embedded")
    catalog = Catalog.load(art)
    cfg = evaluation.EvaluationConfig()
    inputs, _ = evaluation._load_inputs(art, catalog, cfg, profile)
    models = evaluation._load_rated(art, catalog, profile, cfg.top_k)
    streams = [s for s in args.streams.split(",") if s in inputs]
    inputs = {s: inputs[s] for s in streams}
    evaluation._encode_all(inputs, models)
    sim = dynamic.SimulationConfig(steps=args.steps, seeds=tuple(range(args.seeds)))
    base, k = models["config"], cfg.top_k
    print(f"CPU: {cpu_model()}; {args.out}; seeds {list(sim.seeds)}, {args.steps} steps per run")
    for stream in streams:
        d = inputs[stream]
        tools_emb = models["full"].index.embeddings
        shared = CandidateLists.from_scores((d.emb["full"] @ tools_emb.T).astype(np.float64), 2 * k)
        runs: dict[str, list[dict[str, Any]]] = {s.name: [] for s in dynamic.PAPER_SCENARIOS}
        sat: dict[str, float] = {}
        t0 = time.perf_counter()
        for seed in sim.seeds:
            warm = d.warm(seed, "full")
            methods: dict[str, Any] = {
                "static (fine-tuned encoder)": lambda c=shared: StaticRetriever(c, "static", k),
                "HealthCheckBlacklist": lambda c=shared: HealthCheckBlacklist(c, k=k),
            }
            for label, change in ROWS.items():
                policy = RatedPolicy(models["full"].fresh(base.replace(**change)), d.emb["full"], label)
                policy.warm_up(*warm)
                methods[label] = lambda p=policy: p
            for scenario in dynamic.PAPER_SCENARIOS:
                run = dynamic.run_stream(methods, d.test, len(catalog), scenario, sim, seed)
                runs[scenario.name].append(run)
                if seed == sim.seeds[0] and scenario.name == "rho=20%":
                    exact = RatedPolicy(models["full"].fresh(base.paper_exact()), d.emb["full"], "paper")
                    exact.warm_up(*warm)
                    sat = saturation(exact, d.test, run["schedule"]["failed_tools"])
        n_true = len(set().union(*d.test.relevant))
        for name, scenario_runs in runs.items():
            failed = [len(r["schedule"]["failed_tools"]) for r in scenario_runs]
            rows = []
            for method in scenario_runs[0]["methods"]:
                values = {
                    m: np.array([r["methods"][method][m] for r in scenario_runs])
                    for m in ("fsr", "post_fail_sr", "pre_fail_sr")
                }
                rows.append(
                    [method] + [f"{values[m].mean():.3f} ± {values[m].std(ddof=1):.3f}" for m in values]
                )
            print(
                f"\n{stream}, {name}: {len(d.test)} distinct test queries, {n_true} true tools, "
                f"{np.mean(failed):.1f} failed tools per seed, {len(sim.seeds)} seeds"
            )
            print_table(["method", "FSR", "Post-Fail SR", "Pre-fail SR"], rows)
        print(
            f"paper-exact saturation ({stream}, seed {sim.seeds[0]}, rho=20% failed tools): median raw UCB "
            f"after the warm-up {sat['median_ucb']:.2f}; median errors in a row until the clipped term "
            f"leaves 1: {sat['median_errors_to_leave_1']:.0f}  ({time.perf_counter() - t0:.0f} s)"
        )


if __name__ == "__main__":
    main()
