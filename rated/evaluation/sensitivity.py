"""Sensitivity of RATED Full to its fusion weights (w1, w3) and bandit settings (gamma, alpha), as in the
paper's Figure 4: Post-Fail SR at rho = 20%, one cell per setting, the mean over several seeded runs on
the validation split (where the paper selects its settings).

Each cell builds a fresh retriever that shares the encoder and index (``RATED.fresh``), applies each
run's warm-up, and replays each run's stream and schedule, so cells differ only in the swept parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from rated.evaluation.failures import FailureSchedule
from rated.evaluation.metrics import PostFailSuccessRate
from rated.evaluation.rated_policy import RatedPolicy
from rated.evaluation.simulator import Stream, simulate

WEIGHT_GRID = {"w1": (0.65, 0.75, 0.85), "w3": (0.05, 0.10, 0.15)}  # w2 = 1 - w1 - w3
BANDIT_GRID = {"gamma": (0.90, 0.95, 0.99), "alpha": (0.05, 0.10, 0.20)}


Run = tuple[Stream, FailureSchedule, tuple[np.ndarray, Sequence[frozenset[int]]]]


def _cell(model: Any, query_emb: np.ndarray, runs: Sequence[Run], metric: PostFailSuccessRate) -> float:
    """Mean Post-Fail SR of one setting over the runs (stream, schedule, warm-up pairs)."""
    values = []
    for stream, schedule, warm in runs:
        policy = RatedPolicy(model, query_emb, "RATED Full")
        policy.warm_up(*warm)
        values.append(metric(simulate(policy, stream, schedule)))
    return float(np.mean(values))


def sweep(
    full: Any,
    query_emb: np.ndarray,
    runs: Sequence[Run],
    metric: PostFailSuccessRate,
    weight_grid: dict[str, Sequence[float]] | None = None,
    bandit_grid: dict[str, Sequence[float]] | None = None,
) -> dict[str, Any]:
    """Both grids; a weights cell with w2 < 0 is left out (reported as missing)."""
    weight_grid = weight_grid or WEIGHT_GRID
    bandit_grid = bandit_grid or BANDIT_GRID
    base = full.config
    weights: dict[str, Any] = {
        "x": "w1",
        "y": "w3",
        "x_values": list(weight_grid["w1"]),
        "y_values": list(weight_grid["w3"]),
        "cells": [],
    }
    for w1 in weight_grid["w1"]:
        for w3 in weight_grid["w3"]:
            w2 = round(1.0 - w1 - w3, 10)
            if w2 < 0:
                weights["cells"].append({"x": w1, "y": w3, "w2": w2, "post_fail_sr": None})
                continue
            model = full.fresh(base.replace(weights=(w1, w2, w3)))
            sr = _cell(model, query_emb, runs, metric)
            weights["cells"].append({"x": w1, "y": w3, "w2": w2, "post_fail_sr": sr})
    bandit: dict[str, Any] = {
        "x": "gamma",
        "y": "alpha",
        "x_values": list(bandit_grid["gamma"]),
        "y_values": list(bandit_grid["alpha"]),
        "cells": [],
    }
    for gamma in bandit_grid["gamma"]:
        for alpha in bandit_grid["alpha"]:
            model = full.fresh(base.replace(gamma=gamma, alpha=alpha))
            sr = _cell(model, query_emb, runs, metric)
            bandit["cells"].append({"x": gamma, "y": alpha, "post_fail_sr": sr})
    return {"weights": weights, "bandit": bandit, "base_config": base.to_dict(), "runs": len(runs)}
