"""Benchmark of the crawl stage on the full snapshot: wall time, CPU time and peak memory per configuration.

Each configuration runs in a fresh Python process (so imports and model loading are counted, and peak
RSS is that process's own). The baseline, measured in the same run, is the mirror parse alone. CPU
seconds (user + system of that process) are reported beside wall time because on a shared machine wall
time mostly measures the other processes.

    .venv/bin/python bench/bench_crawl.py [--mirror DIR] [--repeat N] [--markdown bench/results/crawl.md]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
t0 = time.perf_counter()
mode, out, mirror, cache = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4]
if mode == "parse":
    from crawlers.pipeline import crawl_records, PLATFORMS
    from crawlers.report import CrawlErrors
    from crawlers.source import MirrorSource
    records, _ = crawl_records(MirrorSource(mirror), PLATFORMS, CrawlErrors())
    n = len(records)
else:
    from crawlers.pipeline import run
    from ecoagent.config import get_profile
    report = run(out, get_profile("embedded"), mirror=mirror, environ={}, with_prior=(mode != "no_prior"),
                 embedding_cache=Path(cache) if mode != "no_prior" else False)
    n = report["tools"]
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"tools": n, "seconds": time.perf_counter() - t0, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mb": usage.ru_maxrss / 1024}))
"""

CONFIGS = (
    ("parse", "mirror parse only (baseline)"),
    ("no_prior", "crawl -> tools.parquet, no prior"),
    ("prior_cold", "crawl + prior, model load, cold embedding cache"),
    ("prior_warm", "crawl + prior, model load, warm embedding cache"),
)


def run_child(mode: str, mirror: Path, cache: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
        start = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, mode, out, str(mirror), str(cache)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{mode} failed:\n{done.stderr[-2000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    return result


def main() -> None:
    from ecoagent.config import default_mirror
    from ecoagent.summary import cpu_model, format_table

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table to this file")
    args = parser.parse_args()
    mirror = args.mirror or default_mirror()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "embeddings.sqlite"
        baseline = baseline_cpu = None
        for mode, label in CONFIGS:
            best = min((run_child(mode, mirror, cache) for _ in range(args.repeat)), key=lambda r: r["wall"])
            baseline = baseline or best["wall"]
            baseline_cpu = baseline_cpu or best["cpu"]
            rows.append(
                (
                    label,
                    best["tools"],
                    round(best["wall"], 1),
                    round(best["cpu"], 1),
                    round(best["peak_mb"]),
                    round(best["wall"] / baseline, 2),
                    round(best["cpu"] / baseline_cpu, 2),
                )
            )
    load = os.getloadavg()
    cpu = cpu_model()
    table = format_table(
        ["configuration", "tools", "wall s", "CPU s", "peak RSS MB", "wall x baseline", "CPU x baseline"],
        rows,
        title="crawl benchmark",
    )
    note = f"machine: {os.cpu_count()} CPUs ({cpu}), load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) at the end"
    print(table)
    print(note)
    if args.markdown:
        args.markdown.parent.mkdir(parents=True, exist_ok=True)
        command = "    .venv/bin/python bench/bench_crawl.py --markdown bench/results/crawl.md"
        args.markdown.write_text(f"# Crawl benchmark\n\nCommand:\n\n{command}\n\n{table}\n\n{note}\n")


if __name__ == "__main__":
    main()
