"""live.md: the live run's table, what it rests on (tools, servers, real failures) and what it does not show.

``section`` is the same text without the title, for ``eval/report.md`` and the dataset card to include
when a live run's ``live.json`` is there (``include_if_present``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any


def _pct(x: float | None) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{100 * x:.1f}"


def _ci(ci: Any) -> str:
    if not ci or any(v is None or math.isnan(v) for v in ci):
        return ""
    return f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _as(v: int | None) -> str:
    return "Failed" if v is None else str(v)


def _ms(d: dict[str, Any]) -> str:
    if not d.get("n"):
        return "—"
    return f"{d['mean']:.1f} [{d['ci_low']:.1f}, {d['ci_high']:.1f}] (median {d['median']:.1f}, p95 {d['p95']:.1f}, n={d['n']})"


def section(r: dict[str, Any], level: int = 2) -> str:
    """The report body; ``level`` is the heading depth of its subsections."""
    h = "#" * level
    cfg, calls = r["config"], r["calls"]
    steps, onset = cfg["steps"], r["onset"]
    restart = r["recovery_steps"].get("restart")
    pf = r.get("post_fail_steps", {})
    failed_calls = sum(v for k, v in calls["by_outcome"].items() if k != "ok")
    lines = [
        f"**Rests on**: {r['n_tools']} live tools from {r['n_servers']} MCP servers started on this machine "
        f"over stdio, {steps} steps (one stream, seed {cfg['seed']}), {calls['n']} real tools/call requests, "
        f"{failed_calls} of them failed ({', '.join(f'{k}: {v}' for k, v in calls['by_outcome'].items())}); "
        f"{len(r['schedule'])} scheduled fault events on {len({e['server'] for e in r['schedule']})} servers, "
        f"{len(r['faulted_tools'])} tools faulted, {len(r['never_ok_tools'])} never answered ok "
        f"({', '.join(r['never_ok_tools']) or 'none'}). The true tool's call failed on {calls['steps_true_tool_failed']} "
        f"of {steps} steps. Wall time {r['timings']['total_s']:.0f} s.",
        "",
        *_http_lines(r),
        f"{h} Results (steps {onset}-{steps - 1} after the onset at step {onset}; 95 % CIs from a moving-block "
        f"bootstrap, blocks of {cfg['block']} steps)",
        "",
        "| Method | Pre-fail SR | Post-Fail SR (%) | PF SR, substitute steps | PF SR, no substitute | FSR (%) | AS | "
        + ("SR after restart (%) | " if restart is not None else "")
        + "calls/step | decision µs |",
        "|---|---|---|---|---|---|---|" + ("---|" if restart is not None else "") + "---|---|",
    ]
    for name, m in r["methods"].items():
        d = m["decision_us"]
        row = (
            f"| {name} | {_pct(m['pre_fail_sr'])} | {_pct(m['post_fail_sr'])}{_ci(m['post_fail_sr_ci'])} | "
            f"{_pct(m.get('post_fail_sr_substitute'))} | {_pct(m.get('post_fail_sr_no_substitute'))} | "
            f"{_pct(m['fsr'])}{_ci(m['fsr_ci'])} | {_as(m['adaptation_steps'])} | "
        )
        if restart is not None:
            row += f"{_pct(m.get('sr_after_recovery'))} | "
        row += f"{m['calls_per_step']:.2f} | {d.get('mean', float('nan')):.0f} |"
        lines.append(row)
    oracle = r["oracle_sr"]
    lines += [
        f"| Oracle (calls every true tool) | {_pct(oracle['pre_fail'])} | {_pct(oracle['post_fail'])} | | | | | "
        + ("| " if restart is not None else "")
        + "| |",
        "",
        f"SR: the step's call (or one of Retry's) went to the query's true tool and returned without a protocol "
        f"error or `isError` within {cfg['call_timeout']} s. FSR: failed calls / calls. AS: steps after the onset "
        f"until the {cfg['moving_window']}-step moving SR is back to {cfg['theta']} x its pre-failure peak "
        "(Failed: never). Every policy learns only whether its call worked (execution feedback). "
        f"Of the {steps - onset} post-onset steps, {pf.get('substitute', 0)} have a faulted true tool with a "
        f"working substitute (a replica's copy: PF SR, substitute steps), {pf.get('no_substitute', 0)} have only "
        f"faulted true tools (no policy can succeed there while the fault lasts) and {pf.get('unfaulted', 0)} "
        "none.",
        "",
        f"{h} Per-call latency (ms, mean [95 % CI])",
        "",
        f"- every call: {_ms(calls['latency_ms'])}",
    ]
    lines += [f"- {k}: {_ms(v)}" for k, v in calls["latency_ms_by_outcome"].items()]
    lines += [
        "",
        f"{h} Fault schedule (done to the real processes)",
        "",
        "| step | action | server | tools | what |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {e['step']} | {e['action']} | {e['server']} | {', '.join(e['tools'])} | {e['what']} |"
        for e in r["schedule"]
    ]
    lines += [
        "",
        f"{h} Servers",
        "",
        "| server | package | tools listed | in the stream | processes | of them without credential | note |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {s['name']} | {s['package']} | {s['tools_listed']} | {s['tools_in_stream']} | {s['processes_started']} | "
        f"{s.get('started_without_credential', 0)} | {s['note']} |"
        for s in r["servers"]
    ]
    lines += [
        "",
        f"Client: mcp {r['versions'].get('mcp')} (the official Python SDK). Left out of the stream: "
        + "; ".join(f"`{k}` ({v})" for k, v in r["excluded_tools"].items())
        + ".",
        "",
        f"{h} What this does not show",
        "",
        "- One stream, one seed, one fault schedule on one machine: the CIs resample blocks of this run's steps, "
        "so they cover the query draw, not other fault timings, other servers or other machines.",
        "- The failures are induced on a schedule (SIGKILL, SIGSTOP, schema-invalid arguments, 429 / 503 from "
        "a loopback HTTP stub, a restart without the proxy credential); they are real process, protocol and "
        "HTTP failures, not failures observed in the wild, and their rate is the schedule's, not a measured one.",
        "- The HTTP upstream is the harness's own stub on 127.0.0.1, not a web server: fetch's calls are real "
        "HTTP requests, but no latency, size or content of the internet is in them; fetch does not honour "
        "Retry-After, so a 429 is one failed call, not a backoff. The credential is the only one an installed "
        "server takes (a proxy's, in HTTP_PROXY); no server here needs an API key.",
        "- Arguments come from checked-in templates, not from an agent: a call that works says the tool "
        "executed, not that its answer served the query. SR counts the template's true tool only.",
        f"- The catalog is {r['n_tools']} tools, three orders of magnitude smaller than the benchmark's; "
        "retrieval here is easy where tools have distinct names and hard only among near-twins "
        "(read_file / read_text_file, the git diffs).",
        "- RATED's towers are the pretrained all-MiniLM-L6-v2 (no fine-tuned model is loaded), with "
        "RATEDConfig's defaults; the learners start from the same labelled warm-up pairs.",
        "- Substitutes exist only as replicas (a second process of the same package, same sandbox); the "
        "catalog has no different tools that do the same job across servers.",
        "- Latencies are wall-clock on a shared 2-core machine, including the client's JSON-RPC over pipes; "
        "a timed-out call costs the full timeout.",
    ]
    return "\n".join(lines) + "\n"


def _http_lines(r: dict[str, Any]) -> list[str]:
    """What the loopback HTTP stub answered (live.json from before the stub has no ``http_stub``)."""
    stub = r.get("http_stub")
    if not stub:
        return []
    answered = ", ".join(f"{k}: {v}" for k, v in stub["responses"].items()) or "nothing"
    return [
        f"**HTTP upstream**: fetch and fetch-b read from a loopback HTTP stub in the harness ({stub['address']}; "
        f"fetch-b through its authenticating proxy); it answered {answered} (role and status; two requests per "
        f"fetch call, robots.txt and the page); closed at the end: {'yes' if stub['closed'] else 'NO'}.",
        "",
    ]


def write_report(result: dict[str, Any], path: Path) -> None:
    path.write_text("# Live runtime: RATED over real MCP servers\n\n" + section(result))


LIVE_HEADING = "Live runtime (real MCP servers, `ecoagent live`)"


def include_if_present(out: Path, level: int = 2) -> str:
    """The live section for ``eval/report.md`` or the dataset card, or "" when no live run wrote live.json."""
    path = Path(out) / "eval" / "live.json"
    if not path.exists():
        return ""
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError):
        return ""
    h = "#" * level
    return f"{h} {LIVE_HEADING}\n\n" + section(result, level + 1)


def with_live_section(report_md: str, out: Path) -> str:
    """``eval/report.md``'s text with its live section replaced by the current one (``include_if_present``):
    the evaluation appends it, and a later ``ecoagent live`` refreshes it without rerunning the
    evaluation. The section is always the report's last."""
    head = report_md.split(f"\n## {LIVE_HEADING}\n", 1)[0]
    text = include_if_present(out)
    return head + ("\n" + text if text else "")


def refresh_report(out: Path) -> bool:
    """Rewrite ``OUT/eval/report.md``'s live section in place; False when there is no report yet."""
    path = Path(out) / "eval" / "report.md"
    if not path.exists():
        return False
    path.write_text(with_live_section(path.read_text(), out))
    return True
