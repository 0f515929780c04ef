"""Table cells and the aggregation across seeds, on hand-made run results."""

from __future__ import annotations

from rated.evaluation.dynamic import aggregate
from rated.evaluation.report import adaptation_cell, mean_std, simulation_table


def _runs() -> list[dict]:
    def run(sr: float, as_: int | None) -> dict:
        return {
            "methods": {
                "A": {"post_fail_sr": sr, "fsr": 0.1, "adaptation_steps": as_, "oracle_post_fail_sr": 0.9}
            }
        }

    return [run(0.5, 300), run(0.7, None), run(0.6, 500)]


def test_aggregate_mean_std_and_failed_runs() -> None:
    agg = aggregate(_runs())["A"]
    assert agg["post_fail_sr"]["mean"] == 0.6
    assert round(agg["post_fail_sr"]["std"], 6) == 0.1  # ddof = 1
    assert agg["adaptation_steps"]["reached"] == 2 and agg["adaptation_steps"]["mean"] == 400
    assert adaptation_cell(agg["adaptation_steps"]) == "400 ± 141 (2/3)"
    assert adaptation_cell({"reached": 0, "runs": 3}) == "Failed"
    assert mean_std(agg["fsr"]) == "0.100 ± 0.000"


def test_simulation_table_has_each_method_and_the_oracle() -> None:
    scenarios = {"rho=20%": {"aggregate": aggregate(_runs()), "methods": ["A"]}}
    table = simulation_table(scenarios, ["rho=20%"])
    assert "| A " in table and "Oracle (ceiling)" in table and "0.900 ± 0.000" in table
