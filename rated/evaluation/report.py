"""The evaluation report: Markdown tables laid out like the paper's, and the PNG plots, from report.json's data.

Everything here formats numbers that the pipeline measured; nothing is computed that is not in the JSON,
so the Markdown can always be regenerated from ``report.json``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ecoagent.summary import format_table

OFFLINE_METRICS = ("MRR", "Recall@1", "Recall@5", "nDCG@10")


def fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def mean_std(cell: dict[str, Any] | None, digits: int = 3) -> str:
    """``0.812 ± 0.010`` from an aggregate cell; ``-`` when the metric does not apply."""
    if not cell or cell.get("mean") is None:
        return "-"
    return f"{cell['mean']:.{digits}f} ± {cell['std']:.{digits}f}"


def adaptation_cell(cell: dict[str, Any] | None) -> str:
    """AS as ``mean ± std`` over the seeds that reached the threshold, ``(k/n)`` when some did not,
    ``Failed`` when none did."""
    if not cell:
        return "-"
    if not cell["reached"]:
        return "Failed"
    text = f"{cell['mean']:.0f} ± {cell['std']:.0f}"
    return text if cell["reached"] == cell["runs"] else f"{text} ({cell['reached']}/{cell['runs']})"


def offline_table(rows: Sequence[dict[str, Any]]) -> str:
    """Table 1: methods down, (split x metric) across."""
    splits = sorted({r["split"] for r in rows})
    methods = list(dict.fromkeys(r["method"] for r in rows))
    by = {(r["method"], r["split"]): r for r in rows}
    headers = ["Method"] + [f"{s} {m}" for s in splits for m in OFFLINE_METRICS]
    body = []
    for method in methods:
        body.append([method] + [fmt(by.get((method, s), {}).get(m)) for s in splits for m in OFFLINE_METRICS])
    return format_table(headers, body)


def significance_lines(sig: dict[str, dict[str, Any]]) -> str:
    lines = []
    for split, t in sig.items():
        lines.append(
            f"- {split}: {t['a']} vs {t['b']} (best baseline by MRR): mean ΔRR = {t['mean_diff']:+.4f} "
            f"(95% bootstrap CI {t['ci_low']:+.4f} .. {t['ci_high']:+.4f}), paired randomization p = "
            f"{t['p_randomization']:.4g}, bootstrap p = {t['p_bootstrap']:.4g} "
            f"({t['n_queries']} queries, {t['n_resamples']} resamples, seed {t['seed']})"
        )
    return "\n".join(lines)


def simulation_table(scenarios: dict[str, dict[str, Any]], names: Sequence[str]) -> str:
    """Table 2: methods down; for each scenario Post-Fail SR, FSR and AS across."""
    names = [n for n in names if n in scenarios]
    methods = _order(scenarios, names)
    headers = ["Method"] + [f"{n} {m}" for n in names for m in ("Post-Fail SR", "FSR", "AS")]
    body = []
    for method in methods:
        row = [method]
        for n in names:
            agg = scenarios[n]["aggregate"].get(method, {})
            row += [
                mean_std(agg.get("post_fail_sr")),
                mean_std(agg.get("fsr")),
                adaptation_cell(agg.get("adaptation_steps")),
            ]
        body.append(row)
    if methods:  # the ceiling: an oracle that always picks an available true tool when one exists
        row = ["Oracle (ceiling)"]
        for n in names:
            row += [mean_std(scenarios[n]["aggregate"][methods[0]].get("oracle_post_fail_sr")), "0", "-"]
        body.append(row)
    return format_table(headers, body)


def _order(scenarios: dict[str, dict[str, Any]], names: Sequence[str]) -> list[str]:
    """Methods in the run's order (kept in ``methods``; the JSON file itself sorts keys)."""
    if not names:
        return []
    first = scenarios[names[0]]
    return list(first.get("methods") or first["aggregate"])


def extended_table(scenarios: dict[str, dict[str, Any]], names: Sequence[str]) -> str:
    """Past the paper: per scenario the Post-Fail SR, the scenario's own metric and the regret."""
    names = [n for n in names if n in scenarios]
    methods = _order(scenarios, names)
    headers = ["Method"]
    for n in names:
        headers += [f"{n} Post-Fail SR", f"{n} {_extra_label(scenarios[n])}", f"{n} regret 2,001-5,000"]
    body = []
    for method in methods:
        row = [method]
        for n in names:
            agg = scenarios[n]["aggregate"].get(method, {})
            extra = agg.get("recovered_sr") or agg.get("new_tool_sr") or agg.get("fsr")
            row += [mean_std(agg.get("post_fail_sr")), mean_std(extra), mean_std(agg.get("regret_window"), 0)]
        body.append(row)
    return format_table(headers, body)


def _extra_label(scenario: dict[str, Any]) -> str:
    kind = scenario["scenario"]["kind"]
    return {"recovering": "SR after recovery", "cold_start": "SR on new-tool queries"}.get(kind, "FSR")


def latency_table(rows: Sequence[dict[str, Any]]) -> str:
    headers = ["Configuration", "mean ms/query", "median ms/query", "p95 ms/query", "queries"]
    body = [
        [r["config"], fmt(r["mean_ms"], 2), fmt(r.get("median_ms"), 2), fmt(r["p95_ms"], 2), r["n"]]
        for r in rows
    ]
    return format_table(headers, body)


def grid_table(grid: dict[str, Any]) -> str:
    """A sensitivity grid: rows = first parameter, columns = second, cells = Post-Fail SR."""
    xs, ys = grid["x_values"], grid["y_values"]
    cells = {(c["x"], c["y"]): c["post_fail_sr"] for c in grid["cells"]}
    headers = [f"{grid['x']} \\ {grid['y']}"] + [str(y) for y in ys]
    return format_table(headers, [[str(x)] + [fmt(cells.get((x, y))) for y in ys] for x in xs])


# ---------------------------------------------------------------------------------------------- plots


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_sr_curves(curves: dict[str, list[float]], onset: int, window: int, title: str, path: Path) -> Path:
    """Moving SR over time, one line per method, the failure onset marked."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.8))
    for name, values in curves.items():
        steps = range(window, window + len(values))  # curve[j] covers steps j+1 .. j+window (1-based)
        style = {"color": "black", "linestyle": ":"} if name == "Oracle" else {}
        ax.plot(list(steps), values, label=name, linewidth=1.2, **style)
    ax.axvline(
        onset + 1, color="red", linestyle="--", linewidth=1, label=f"failure onset (step {onset + 1:,})"
    )
    ax.set_xlabel("step")
    ax.set_ylabel(f"success rate ({window}-step moving average)")
    ax.set_title(title)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, ncol=2, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_grid(grid: dict[str, Any], title: str, path: Path) -> Path:
    """Heatmap of a sensitivity grid (Post-Fail SR), the value written in each cell."""
    import numpy as np

    plt = _pyplot()
    xs, ys = grid["x_values"], grid["y_values"]
    cells = {(c["x"], c["y"]): c["post_fail_sr"] for c in grid["cells"]}
    data = np.array(
        [[cells.get((x, y), np.nan) if cells.get((x, y)) is not None else np.nan for y in ys] for x in xs]
    )
    fig, ax = plt.subplots(figsize=(5, 4))
    im = ax.imshow(data, cmap="viridis", origin="lower", aspect="auto")
    ax.set_xticks(range(len(ys)), [str(y) for y in ys])
    ax.set_yticks(range(len(xs)), [str(x) for x in xs])
    ax.set_xlabel(grid["y"])
    ax.set_ylabel(grid["x"])
    for i in range(len(xs)):
        for j in range(len(ys)):
            if not np.isnan(data[i, j]):
                ax.text(j, i, f"{data[i, j]:.3f}", ha="center", va="center", color="white", fontsize=8)
    fig.colorbar(im, ax=ax, label="Post-Fail SR")
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def render_markdown(report: dict[str, Any]) -> str:
    """The whole report.md from report.json's content."""
    cfg = report["config"]
    parts = [
        "# EcoAgent evaluation report",
        "",
        f"Profile `{cfg['profile']}`, seeds {cfg['seeds']}, {cfg['simulation']['steps']:,} steps per stream; "
        f"every number below is in `report.json`, the run's configuration in `config.json`.",
        "",
    ]
    data = report.get("data", {})
    for name in ("syn", "real"):
        if name in data:
            d = data[name]
            parts.append(
                f"- {name}: {d['test_queries']} queries of the `{d.get('eval_split', 'test')}` split "
                f"({d['dropped_pairs']} pairs dropped: tool not in the catalog); {d['warm_up_pairs']} warm-up "
                f"pairs from `{d['warm_up_split']}`; {data.get('n_tools', '?')} tools."
            )
    parts.append("")
    if "offline" in report:
        off = report["offline"]
        parts += [
            "## Table 1: offline retrieval (test splits)",
            "",
            off["note"],
            "",
            offline_table(off["rows"]),
            "",
        ]
        if off.get("significance"):
            parts += [
                "Paired significance (per-query reciprocal rank):",
                "",
                significance_lines(off["significance"]),
                "",
            ]
    sim = report.get("simulation", {})
    for dataset, block in sim.items():
        scen = block["scenarios"]
        paper = [n for n in scen if scen[n]["scenario"]["kind"] == "permanent"]
        extended = [n for n in scen if scen[n]["scenario"]["kind"] != "permanent"]
        parts += [
            f"## Table 2: dynamic simulation, {dataset} test stream",
            "",
            f"{block['steps']:,} steps sampled with replacement from {block['pool_size']} "
            f"{block.get('eval_split', 'test')} queries; "
            f"N = {block['n_true_tools']} tools are true tools in the stream (seed {cfg['seeds'][0]}); "
            "Post-Fail SR and FSR over steps 2,001-5,000; AS = steps after onset until the 200-step moving "
            f"SR reaches θ x the pre-failure peak. Mean ± std over {len(cfg['seeds'])} seeds.",
            "",
            simulation_table(scen, paper),
            "",
        ]
        if extended:
            parts += [f"### Past the paper ({dataset})", "", extended_table(scen, extended), ""]
        for png in block.get("plots", []):
            parts += [f"![SR over time]({png})", ""]
    if "latency" in report:
        lat = report["latency"]
        parts += ["## Table 3: latency on this machine", "", lat["note"], "", latency_table(lat["rows"]), ""]
    if "sensitivity" in report:
        sens = report["sensitivity"]
        parts += ["## Sensitivity (Post-Fail SR, ρ = 20%, one seed)", "", sens["note"], ""]
        for key in ("weights", "bandit"):
            if key in sens:
                parts += [grid_table(sens[key]), "", f"![{key}]({sens[key]['plot']})", ""]
    if "timings_s" in report:
        parts += [
            "## Run time",
            "",
            format_table(["part", "seconds"], [[k, fmt(v, 1)] for k, v in report["timings_s"].items()]),
            "",
        ]
    return "\n".join(parts)
