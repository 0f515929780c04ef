"""llama.cpp's Syn generation alone in a process, and after an SBERT encoder has run in it (as in a build).

Run: ``.venv/bin/python bench/bench_llm_openmp.py [--tools out/tools.parquet] [--n-tools 12]
[--build other=/path/to/a/site-packages-dir ...]``. Prints a Markdown table (copied into
``bench/RESULTS.md``).

Why: ``ecoagent build`` runs the crawl's MiniLM before Syn's llama.cpp in one process, and llama.cpp ran
about 1.5x slower there than in ``ecoagent syn``. An OpenMP build of llama.cpp (PyPI's wheel) links
``libgomp.so.1`` by its soname, so it shares the libgomp torch has already loaded; torch's idle OpenMP
threads stay counted, libgomp then manages more threads than there are cores and cuts barrier spinning
to 100 rounds, so llama.cpp's threads sleep on a futex at every barrier. A build on ggml's own thread
pool (``-DGGML_OPENMP=OFF``, what ``scripts/setup.sh`` compiles) shares nothing with torch.

Each cell is a fresh child process: the installed ``xllamacpp`` or one put first on ``PYTHONPATH`` by
``--build name=dir`` (e.g. ``pip install --target dir --no-binary xllamacpp`` with other CMAKE_ARGS), with
or without MiniLM encoding 256 texts first. The child generates Syn queries for the first ``--n-tools``
tools of the default stratified sample into a temporary artifact folder (no checkpoint to resume),
with the profile's model, prompt, threads and slots. The baseline row is the installed build without an
encoder, measured in the same run. One run per cell: the rows are as noisy as one sample of
``--n-tools`` tools is, and sampled answers may differ between cells by a query or two.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ecoagent.summary import cpu_model, print_table


def child(tools: Path, n_tools: int, encoder_first: bool) -> dict[str, Any]:
    """Generate for ``n_tools`` tools in this process, after MiniLM has encoded when ``encoder_first``."""
    from ecoagent.config import get_profile
    from ecoagent.llm.llamacpp import uses_openmp
    from generators.pipeline import generate_shard

    profile = get_profile("embedded")
    if encoder_first:
        from ecoagent import models

        models.load_encoder(profile.models.sbert).encode(["find the weather in Paris tomorrow"] * 256)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(tools, Path(tmp) / "tools.parquet")
        cpu = time.process_time()
        result = generate_shard(Path(tmp), profile, 0, 1, max_tools=n_tools)
        cpu = time.process_time() - cpu
    return {**result, "cpu_seconds": round(cpu, 1), "openmp": uses_openmp()}


def run_cell(tools: Path, n_tools: int, build: str | None, encoder_first: bool) -> dict[str, Any]:
    env = dict(os.environ)
    if build:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [build, env.get("PYTHONPATH")]))
    args = [sys.executable, __file__, "--child", "--tools", str(tools), "--n-tools", str(n_tools)]
    out = subprocess.run(
        args + (["--encoder-first"] if encoder_first else []), env=env, capture_output=True, text=True
    )
    if out.returncode:
        raise RuntimeError(
            f"child failed ({build or 'installed'}, encoder first: {encoder_first}):\n{out.stderr}"
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=Path, default=Path("out/tools.parquet"))
    parser.add_argument("--n-tools", type=int, default=12)
    parser.add_argument("--build", action="append", default=[], help="name=dir put first on PYTHONPATH")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--encoder-first", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.tools, args.n_tools, args.encoder_first)))
        return
    if not args.tools.exists():
        raise SystemExit(f"{args.tools} not found: run `ecoagent crawl` first")
    builds: list[tuple[str, str | None]] = [("installed", None)]
    for spec in args.build:
        name, sep, path = spec.partition("=")
        if not sep or not Path(path, "xllamacpp").is_dir():
            raise SystemExit(f"--build {spec!r}: expected name=dir with an xllamacpp package in dir")
        builds.append((name, path))
    print(f"CPU: {cpu_model()}; {args.n_tools} tools of the default stratified sample, one run per cell\n")
    rows, base = [], None
    for name, path in builds:
        for encoder_first in (False, True):
            r = run_cell(args.tools, args.n_tools, path, encoder_first)
            print(f"{name}, encoder first: {encoder_first}: {r}", file=sys.stderr, flush=True)
            base = base or r["seconds"]
            rows.append(
                [
                    name,
                    "yes" if r["openmp"] else "no",
                    "MiniLM first" if encoder_first else "alone",
                    r["queries"],
                    r["seconds"],
                    round(r["seconds"] / r["tools"], 1),
                    r["cpu_seconds"],
                    f"{r['seconds'] / base:.2f}x",
                ]
            )
    print_table(
        [
            "build",
            "OpenMP",
            "process",
            "queries kept",
            "wall s",
            "s / tool",
            "CPU-s",
            "wall vs installed alone",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
