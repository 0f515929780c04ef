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
    """``lscpu``'s model name, else /proc/cpuinfo's: printed beside every benchmark (machines vary)."""
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
    except OSError:
        out = ""
    if not out and Path("/proc/cpuinfo").exists():
        out = Path("/proc/cpuinfo").read_text()
    for line in out.splitlines():
        key, _, value = line.partition(":")
        if key.strip().lower() == "model name":
            return value.strip()
    return "unknown CPU"
