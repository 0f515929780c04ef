"""The short summary table each stage prints when it finishes."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any


def format_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> str:
    """Render a plain-text table (also valid Markdown), numbers formatted compactly."""

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.4g}" if abs(value) < 1e6 else f"{value:.3e}"
        return str(value)

    body = [[cell(v) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]
    lines = []
    if title:
        lines.append(f"## {title}")
    lines.append("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for r in body:
        lines.append("| " + " | ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) + " |")
    return "\n".join(lines)


def print_table(headers: Sequence[str], rows: Iterable[Sequence[Any]], title: str | None = None) -> None:
    print(format_table(headers, rows, title))


def cpu_model() -> str:
    """``lscpu``'s model name with /proc/cpuinfo's family, model and widest vector unit, printed beside
    every benchmark: machines vary, and ``lscpu`` says only "AMD EPYC" for Zen 1, 3 and 5 alike, whose
    LLM costs differ by up to 4x (bench/RESULTS.md)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        out = ""
    cpuinfo = _cpuinfo()
    name = _field(out, "model name") or _field(cpuinfo, "model name") or "unknown CPU"
    family, model = _field(cpuinfo, "cpu family"), _field(cpuinfo, "model")
    flags = cpu_flags(cpuinfo)
    isa = next((f for f in ("amx_bf16", "avx512_bf16", "avx512f", "avx2") if f in flags), None)
    details = ", ".join(
        part for part in (family and f"cpu family {family}", model and f"model {model}", isa) if part
    )
    return f"{name} ({details})" if details else name


def _cpuinfo() -> str:
    path = Path("/proc/cpuinfo")
    try:
        return path.read_text()
    except OSError:  # not Linux
        return ""


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (``avx2``, ``amx_bf16``, ...); empty where it is absent."""
    return set((_field(_cpuinfo() if cpuinfo is None else cpuinfo, "flags") or "").split())


def _field(text: str, key: str) -> str | None:
    """The first ``key: value`` line's value in lscpu or /proc/cpuinfo output."""
    for line in text.splitlines():
        k, _, value = line.partition(":")
        if k.strip().lower() == key:
            return value.strip()
    return None
