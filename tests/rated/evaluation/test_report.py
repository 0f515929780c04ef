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


def test_the_cards_table_2_gives_each_methods_means_under_each_rhos_sample() -> None:
    from rated.evaluation.report import simulation_summary

    def scenario(kind: str, sr: float, failed: int) -> dict:
        agg = aggregate(_runs())
        agg["A"]["post_fail_sr"]["mean"] = sr
        return {"scenario": {"kind": kind}, "methods": ["A"], "aggregate": agg, "failed_tools": [failed]}

    block = {
        "pool_size": 150,
        "n_true_tools": 40,
        "scenarios": {
            "rho=20%": scenario("permanent", 0.25, 12),
            "rho=30%": scenario("permanent", 0.125, 21),
            "flaky": scenario("flaky", 0.9, 5),  # past the paper: left to eval/report.md
        },
    }
    text = simulation_summary(
        {"config": {"seeds": [0, 1, 2], "simulation": {"steps": 500}}, "simulation": {"syn": block}}
    )
    assert text.startswith("## Reliability under simulated failures (Table 2)")
    assert "500 steps, means over 3 seeds" in text and "### syn test stream" in text
    # 12 failed tools is under the floor of 20: that rho's sample line says smoke test, 21 does not
    lines = [line for line in text.splitlines() if line.startswith("- rho=")]
    assert lines[0].startswith("- rho=20%: **SMOKE TEST**") and "150 distinct test queries" in lines[0]
    assert (
        lines[1]
        == "- rho=30%: **Sample: 150 distinct test queries, 40 distinct true tools, 21 failed tools.**"
    )
    row = next(line for line in text.splitlines() if line.startswith("| A "))
    assert [c.strip() for c in row.strip("|").split("|")] == ["A", "0.250", "0.100", "0.125", "0.100"]
    assert "flaky" not in text
    assert simulation_summary({"simulation": {}}) == ""
