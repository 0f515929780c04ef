"""The evaluation report: Markdown tables laid out like the paper's, and the PNG plots, from report.json's data.

Everything here formats numbers that the pipeline measured; nothing is computed that is not in the JSON,
so the Markdown can always be regenerated from ``report.json``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ecoagent.summary import format_table
from rated.evaluation.data import DATASET_LABELS, DATASETS

DATASET_ORDER = DATASETS

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


def construction_line(adv: dict[str, Any]) -> str:
    """Issue #11's line under Real's Table 1: MRR on the pairs each method did not propose."""
    if "skipped" in adv:
        return f"**Construction advantage:** not measured ({adv['skipped']})."
    cells = []
    for method, c in adv["methods"].items():
        mrr = fmt(c["mrr_not_proposed"])
        if c["proposer"] is None:
            cells.append(
                f"{method} {mrr} (no part in construction: plain MRR, {c['queries_not_proposed']} q)"
            )
        else:
            own = fmt(c["mrr_proposed"])
            cells.append(
                f"{method} {mrr} on {c['queries_not_proposed']} q not proposed (vs {own} on "
                f"{c['queries_proposed']} q it proposed)"
            )
    return f"**Construction advantage** (Real {adv['split']}; {adv['note']}): " + "; ".join(cells) + "."


def naming_table(by: dict[str, Any]) -> str:
    """Under a Syn Table 1: each method's MRR on the test queries that name their tool and on the rest."""
    body = [[method, fmt(c["mrr_naming"]), fmt(c["mrr_not_naming"])] for method, c in by["methods"].items()]
    return format_table(
        [
            "Method",
            f"MRR, naming their tool ({by['queries_naming']} q)",
            f"MRR, not naming it ({by['queries_not_naming']} q)",
        ],
        body,
    )


def naming_test_line(by: dict[str, Any]) -> str:
    """The fine-tuned encoder against its backbone on each part of a naming split."""
    cells = []
    for part, label in (("not_naming", "not naming their tool"), ("naming", "naming it")):
        t = by.get("fine_tuned_vs_backbone", {}).get(part)
        if t:
            cells.append(
                f"{label} ({t['n_queries']} q): {t['mean_diff']:+.3f} MRR, 95% CI [{t['ci_low']:+.3f}, "
                f"{t['ci_high']:+.3f}], randomization p = {t['p_randomization']:.3g}"
            )
    return ("**Fine-tuned encoder vs its backbone**: " + "; ".join(cells) + ".") if cells else ""


def encoder_gain_table(tests: dict[str, dict[str, Any]], trained_servers: int | None = None) -> str:
    """The fine-tuned encoder against its backbone on every Table 1 pool: MRR of each, the mean paired
    difference of reciprocal ranks with its seeded bootstrap 95 % CI, and the sample it rests on."""
    order = [s for s in DATASET_ORDER if s in tests] + sorted(set(tests) - set(DATASET_ORDER))
    body = []
    for name in order:
        t = tests[name]
        small = " (SMOKE TEST)" if t["queries"] < SMOKE_QUERIES else ""
        body.append(
            [
                name,
                f"{t['queries']} q / {t['true_tools']} tools{small}",
                fmt(t["mrr_backbone"]),
                fmt(t["mrr_fine_tuned"]),
                f"{t['mean_diff']:+.4f}",
                f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}]",
                f"{t['p_randomization']:.3g}",
                "beats" if t["ci_low"] > 0 else "loses" if t["ci_high"] < 0 else "not distinguishable",
            ]
        )
    table = format_table(
        [
            "Pool",
            "sample",
            "backbone MRR",
            "fine-tuned MRR",
            "mean ΔRR",
            "paired 95% CI",
            "randomization p",
            "verdict",
        ],
        body,
    )
    first = next(iter(tests.values()), {})
    servers = (
        f" The MCP pools leave out the prompts of the {trained_servers} servers whose prompts trained the "
        "encoder."
        if trained_servers
        else ""
    )
    return (
        "Per-query reciprocal rank (MRR@100), fine-tuned (`RATED Full (encoder only)`) minus backbone "
        "(`RATED w/o Contrastive (encoder only)`), paired by query; CI: percentile bootstrap over queries "
        f"({first.get('n_resamples', '?')} resamples, seed {first.get('seed', '?')}). `syn_tool` is the "
        f"held-out test of unseen tools; `syn`'s test tools were trained on.{servers}\n\n" + table
    )


def significance_lines(sig: dict[str, dict[str, Any]]) -> str:
    lines = []
    for split, t in sig.items():
        lines.append(
            f"- {split}: {t['a']} vs {t['b']} (best baseline by MRR): mean ΔRR = {t['mean_diff']:+.4f} "
            f"(95% bootstrap CI {t['ci_low']:+.4f} .. {t['ci_high']:+.4f}), paired randomization p = "
            f"{t['p_randomization']:.4g}, bootstrap p = {t['p_bootstrap']:.4g} "
            + (
                f"({t['n_queries']} queries; randomization p exact over all 2^{t['n_queries']} sign flips; "
                f"bootstrap {t['n_resamples']} resamples, seed {t['seed']})"
                if t.get("exact")
                else f"({t['n_queries']} queries, {t['n_resamples']} resamples, seed {t['seed']})"
            )
        )
    return "\n".join(lines)


SMOKE_QUERIES, SMOKE_FAILED = 100, 20


def ci_cell(cell: dict[str, Any] | None, ci: dict[str, Any] | None, digits: int = 3) -> str:
    """``mean ± std [lo, hi]``: std over seeds, the 95% CI over queries x seeds."""
    text = mean_std(cell, digits)
    if text == "-" or not ci:
        return text
    return f"{text} [{ci['ci_low']:.{digits}f}, {ci['ci_high']:.{digits}f}]"


def simulation_table(scenarios: dict[str, dict[str, Any]], names: Sequence[str]) -> str:
    """Table 2: methods down; per scenario pre-failure SR, Post-Fail SR (95% CI), FSR and both AS."""
    names = [n for n in names if n in scenarios]
    methods = _order(scenarios, names)
    cols = ("Pre-fail SR", "Post-Fail SR [95% CI]", "FSR", "AS (post-onset windows)", "AS (paper)")
    headers = ["Method"] + [f"{n} {m}" if len(names) > 1 else m for n in names for m in cols]
    body = []
    for method in methods + ["Oracle"]:
        row = ["Oracle (ceiling)" if method == "Oracle" else method]
        for n in names:
            sc = scenarios[n]
            ci = sc.get("ci", {})
            if method == "Oracle":
                agg = sc["aggregate"][methods[0]] if methods else {}
                row += [
                    ci_cell(agg.get("oracle_pre_fail_sr"), ci.get("pre", {}).get("Oracle")),
                    ci_cell(agg.get("oracle_post_fail_sr"), ci.get("post", {}).get("Oracle")),
                    "0",
                    "-",
                    "-",
                ]
                continue
            agg = sc["aggregate"].get(method, {})
            row += [
                ci_cell(agg.get("pre_fail_sr"), ci.get("pre", {}).get(method)),
                ci_cell(agg.get("post_fail_sr"), ci.get("post", {}).get(method)),
                mean_std(agg.get("fsr")),
                adaptation_cell(agg.get("adaptation_steps")),
                adaptation_cell(agg.get("adaptation_steps_paper")),
            ]
        body.append(row)
    return format_table(headers, body)


def pool_line(queries: int, true_tools: int, failed: Sequence[int] | None = None) -> str:
    """The sample a table rests on, and the smoke-test mark when it is too small to mean much."""
    text = f"**Sample: {queries} distinct test queries, {true_tools} distinct true tools"
    if failed:
        text += (
            f", {min(failed)}-{max(failed)} failed tools per seed"
            if min(failed) != max(failed)
            else (f", {failed[0]} failed tools")
        )
    text += ".**"
    small = queries < SMOKE_QUERIES or (failed is not None and failed and max(failed) < SMOKE_FAILED)
    if small:
        text = (
            f"**SMOKE TEST** (fewer than {SMOKE_QUERIES} distinct queries"
            f"{f' or {SMOKE_FAILED} failed tools' if failed is not None else ''}): "
            "differences between methods here are not evidence. " + text
        )
    return text


def permanent_scenarios(scenarios: dict[str, dict[str, Any]]) -> list[str]:
    """The names of the paper's scenarios (permanent outages at each ρ), in report order."""
    return [n for n in scenarios if scenarios[n]["scenario"]["kind"] == "permanent"]


def stream_pool_line(block: dict[str, Any], scenario: dict[str, Any]) -> str:
    """``pool_line`` of one simulated stream's scenario: its test queries, true tools and failed tools."""
    return pool_line(
        block["pool_size"],
        block.get("n_true_tools_pool", block["n_true_tools"]),
        scenario.get("failed_tools"),
    )


def simulation_summary(report: dict[str, Any], level: int = 2) -> str:
    """Table 2 in brief, for the dataset card: per test stream, each method's Post-Fail SR and FSR at
    every permanent-outage ρ (means over seeds), under the sample line of each ρ. ``eval/report.md`` has
    the full tables with CIs and Adaptation Steps; "" when the report holds no simulation."""
    h = "#" * level
    parts: list[str] = []
    for dataset, block in report.get("simulation", {}).items():
        scen = block["scenarios"]
        paper = permanent_scenarios(scen)
        if not paper:
            continue
        parts += [f"{h}# {dataset} test stream", ""]
        parts += [f"- {n}: {stream_pool_line(block, scen[n])}" for n in paper]
        methods = scen[paper[0]]["methods"]
        headers = ["Method"] + [f"{col} {n}" for n in paper for col in ("Post-Fail SR", "FSR")]
        body = []
        for method in methods:
            row = [method]
            for n in paper:
                agg = scen[n]["aggregate"].get(method, {})
                row += [
                    fmt((agg.get("post_fail_sr") or {}).get("mean")),
                    fmt((agg.get("fsr") or {}).get("mean")),
                ]
            body.append(row)
        parts += ["", format_table(headers, body), ""]
    if not parts:
        return ""
    steps = report.get("config", {}).get("simulation", {}).get("steps")
    seeds = report.get("config", {}).get("seeds", [])
    intro = (
        f"{h} Reliability under simulated failures (Table 2)\n\n"
        f"Simulated permanent outages of ρ of the stream's true tools"
        f"{f', {steps:,} steps' if steps else ''}, means over {len(seeds)} seeds; every method sees only "
        "whether its call executed, except RATED (task-success feedback). The failures are simulator flags: "
        "the live runtime below (when present) has real ones. CIs, Adaptation Steps and the scenarios past the "
        "paper: `eval/report.md`.\n"
    )
    return intro + "\n" + "\n".join(parts)


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


LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1, 1, 1)))
MARKERS = ("o", "s", "^", "v", "D", "x", "+", "P", "*", "h")


def plot_sr_curves(
    curves: dict[str, list[float]],
    window: int,
    title: str,
    path: Path,
    events: Sequence[tuple[int, str]] = (),
) -> Path:
    """Moving SR over time, one line per method, each with its own colour *and* line style (and a
    sparse marker); methods whose curves are identical are drawn once and named together; events
    (failure onset, recovery, arrivals) are vertical lines; the legend sits outside the axes."""
    import numpy as np

    plt = _pyplot()
    groups: dict[bytes, list[str]] = {}
    for name, values in curves.items():
        groups.setdefault(np.asarray(values, dtype=np.float64).round(9).tobytes(), []).append(name)
    palette = [*plt.get_cmap("tab10").colors, *plt.get_cmap("Dark2").colors]
    fig, ax = plt.subplots(figsize=(11, 5))
    for k, names in enumerate(groups.values()):
        values = curves[names[0]]
        steps = np.arange(window, window + len(values))  # curve[j] covers steps j+1 .. j+window (1-based)
        label = textwrap.fill(" = ".join(names), 48, subsequent_indent="  ")
        if "Oracle" in names:
            style = {"color": "black", "linestyle": ":", "linewidth": 1.6}
        else:
            style = {
                "color": palette[k % len(palette)],
                "linestyle": LINE_STYLES[k % len(LINE_STYLES)],
                "marker": MARKERS[k % len(MARKERS)],
                "markevery": max(1, len(values) // 12) + k,  # staggered so markers of close curves differ
                "markersize": 4,
                "linewidth": 1.3,
            }
        ax.plot(steps, values, label=f"{label} (identical curves)" if len(names) > 1 else label, **style)
    colors = {"failure onset": "red", "first removal": "red", "recovery": "green", "arrival": "blue"}
    seen: set[str] = set()
    for step, what in events:
        ax.axvline(
            step + 1,
            color=colors.get(what, "grey"),
            linestyle="--",
            linewidth=1,
            label=None if what in seen else f"{what} (step {step + 1:,})",
        )
        seen.add(what)
    ax.set_xlabel("step")
    ax.set_ylabel(f"success rate ({window}-step moving average)")
    ax.set_title(title, fontsize=10)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    fig.savefig(path, dpi=110, bbox_inches="tight")
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


FEEDBACK_NOTE = (
    "Feedback: after each call a policy sees only whether the selected tool *executed* (1) or errored "
    "(0); SR additionally needs the tool to be a true tool of the query. Every row uses this "
    "execution-only feedback except **RATED (task-success feedback)**, which is told whether the call "
    "served the query (the labelled upper bound, never a default). The warm-up on the train split is "
    "labelled for every learning method (the paper's 2,000 warm-up pairs). Retry moves to its next "
    "candidate only after an execution error. **RATED Full** learns -1 from an error, counted 20 times "
    "(1 / (1 - gamma)), and its bandit term is clipped above at 1 only; **RATED Full (paper-exact)** is "
    "the same model with the paper's learning and fusion (an error teaches 0 once, the term clipped to "
    '[0, 1]), under which one error barely moves a tool (docs/evaluation.md, "Why one failure did not '
    'move RATED").'
)


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
    if "seeds_change" in report:
        parts += [f"- **What a seed changes.** {report['seeds_change']}"]
    if "fusion" in report:
        f = report["fusion"]
        eff = ", ".join(f"{x:.3f}" for x in f["effective_weights"])
        parts += [
            f"- **Fusion.** RATED scores w1·{'cos' if f['semantic'] == 'cosine' else '(1+cos)/2'} + "
            f"w2·clip(UCB) + w3·prior with (w1, w2, w3) = {tuple(f['weights'])}; effective weights per unit "
            f"of each raw signal (normalized): {eff} (`semantic = {f['semantic']}`)."
        ]
    data = report.get("data", {})
    for name in DATASETS:
        if name in data:
            d = data[name]
            gained = d.get("equivalents_gained")
            extra = (
                f"; {gained} queries gained cross-platform equivalents as extra true tools" if gained else ""
            )
            parts.append(
                f"- {name}: {d['test_queries']} distinct queries of the `{d.get('eval_split', 'test')}` split, "
                f"{d.get('true_tools', '?')} distinct true tools "
                f"({d['dropped_pairs']} pairs dropped: tool not in the catalog); {d['warm_up_pairs']} warm-up "
                f"pairs drawn per seed from {d.get('train_queries', '?')} `{d['warm_up_split']}` queries; "
                f"{data.get('n_tools', '?')} tools{extra}."
            )
    parts.append("")
    if "offline" in report:
        off = report["offline"]
        parts += ["## Table 1: offline retrieval (test splits)", "", off["note"], ""]
        pools = off.get("pools", {})
        for split in [s for s in DATASET_ORDER if s in pools] + sorted(set(pools) - set(DATASET_ORDER)):
            pool = pools[split]
            rows = [r for r in off["rows"] if r["split"] == split]
            parts += [
                f"### {split}: {DATASET_LABELS.get(split, split)}",
                "",
                pool_line(pool["queries"], pool["true_tools"]),
                "",
                offline_table(rows),
                "",
            ]
            if split == "real" and off.get("construction_advantage"):
                parts += [construction_line(off["construction_advantage"]), ""]
            if split in off.get("by_naming", {}):
                parts += [
                    "Split by whether the query names its tool (found by the name alone; lexical methods "
                    "gain most):",
                    "",
                    naming_table(off["by_naming"][split]),
                    "",
                    naming_test_line(off["by_naming"][split]),
                    "",
                ]
        for split, why in report.get("data", {}).get("skipped", {}).items():
            parts += [f"- {split} ({DATASET_LABELS.get(split, split)}): not evaluated: {why}."]
        parts.append("")
        if off.get("fine_tuned_vs_backbone"):
            parts += [
                "### The fine-tuned encoder vs its backbone (paired, Table 1's pools)",
                "",
                encoder_gain_table(
                    off["fine_tuned_vs_backbone"],
                    report.get("fine_tuning", {}).get("mcp_servers_trained_on"),
                ),
                "",
            ]
        if off.get("significance"):
            parts += [
                "Paired significance (per-query reciprocal rank):",
                "",
                significance_lines(off["significance"]),
                "",
            ]
    ft = report.get("fine_tuning") or {}
    if ft.get("held_out"):
        parts += [
            "## The fine-tuned encoder vs its backbone on held-out data",
            "",
            f"{ft.get('held_out_note', '')} ({ft.get('steps')} steps on {ft.get('train_examples')} pairs; "
            "from `model/metrics.json`).",
            "",
        ]
        rows = []
        for name, block in ft["held_out"].items():
            if "backbone" not in block:
                rows.append([name, "-", "-", "-", "-", block.get("skipped", "")])
                continue
            n = f"{block['distinct_queries']} q" + (" (SMOKE TEST)" if "smoke_test" in block else "")
            for enc in ("backbone", "fine-tuned"):
                rows.append([f"{name} {enc}", *(fmt(block[enc][m]) for m in OFFLINE_METRICS), n])
        parts += [format_table(["Set / encoder", *OFFLINE_METRICS, "sample"], rows), ""]
        verdicts = [f"- {name}: {b['verdict']}" for name, b in ft["held_out"].items() if b.get("verdict")]
        if verdicts:
            parts += [*verdicts, ""]
        if ft.get("fine_tuning_loses"):
            parts += [f"**{ft['fine_tuning_loses']}**", ""]
    sim = report.get("simulation", {})
    for dataset, block in sim.items():
        scen = block["scenarios"]
        paper = permanent_scenarios(scen)
        extended = [n for n in scen if n not in paper]
        parts += [f"## Table 2: dynamic simulation, {dataset} test stream", ""]
        if dataset == "syn" and not block.get("equivalents_gained"):
            parts += [
                "No Syn test query has a cross-platform equivalent in this build, so each has one true tool: "
                "once it fails no method can serve that query (see the oracle). Read Syn's Post-Fail SR as "
                "relevance, not adaptation.",
                "",
            ]
        for n in paper:
            sc = scen[n]
            parts += [
                f"### {n}",
                "",
                stream_pool_line(block, sc),
                "",
                f"{block['steps']:,} steps sampled with replacement from the {block['pool_size']} "
                f"{block.get('eval_split', 'test')} queries; N = {block['n_true_tools']} tools are true tools in "
                f"the stream (seed {cfg['seeds'][0]}). Pre-fail SR over steps 1-{cfg['simulation']['onset']:,}; "
                f"Post-Fail SR and FSR over steps {cfg['simulation']['onset'] + 1:,}-"
                f"{cfg['simulation']['window_end']:,}. Cells: mean ± std over {len(cfg['seeds'])} seeds, "
                "[95% bootstrap CI over queries x seeds]. AS (post-onset windows): steps until a 200-step window "
                "made only of post-onset steps reaches θ x the pre-failure peak (≥ 200 by construction); "
                "AS (paper): first step m ≥ 0 after onset whose window *ending* there reaches it (may be 0).",
                "",
                FEEDBACK_NOTE,
                "",
                simulation_table(scen, [n]),
                "",
            ]
        if extended:
            parts += [f"### Past the paper ({dataset})", ""]
            for n in extended:
                if scen[n].get("note"):
                    parts += [f"- **{n}**: {scen[n]['note']}"]
            parts += ["", extended_table(scen, extended), ""]
        for png in block.get("plots", []):
            parts += [f"![SR over time]({png})", ""]
    if "latency" in report:
        lat = report["latency"]
        parts += ["## Table 3: latency on this machine", "", lat["note"], "", latency_table(lat["rows"]), ""]
    if "sensitivity" in report:
        sens = report["sensitivity"]
        parts += ["## Sensitivity (Post-Fail SR, ρ = 20%, validation split)", "", sens["note"], ""]
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
