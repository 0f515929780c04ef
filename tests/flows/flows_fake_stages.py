"""Small stand-ins for the real stages: they write each stage's outputs from its inputs and log every call.

The flow tests point ``stage_targets`` here to exercise the graph, the cache and the artifacts in seconds;
the real stages are run by the tests that import them once they exist.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Any

from ecoagent.artifacts import ArtifactDir, fingerprint, write_json


def _log(out: Path, stage: str, **extra: Any) -> None:
    with (Path(out) / "calls.log").open("a") as fh:
        fh.write(json.dumps({"stage": stage, "t": time.time(), **extra}) + "\n")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _rendezvous(out: Path, me: str, other: str) -> bool:
    """With FAKE_RENDEZVOUS set, announce ``me`` and wait (up to 60 s) for ``other`` to start too.

    Returns whether ``other`` was seen running: true only when the two stages run side by side.
    """
    if not os.environ.get("FAKE_RENDEZVOUS"):
        return False
    (Path(out) / f".{me}.started").touch()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (Path(out) / f".{other}.started").exists():
            return True
        time.sleep(0.05)
    return False


def crawl(
    out: Path,
    profile: Any,
    mirror: str | None = None,
    live: bool = False,
    probe_links: bool = False,
    platforms: list[str] | None = None,
) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "crawl", platforms=platforms)
    # a stage's own logger, as the real stages use: it must reach the Prefect run's log
    logging.getLogger("crawlers.fake").info("fake crawl: %d platforms", len(platforms or [1, 2, 3, 4]))
    _write(a.tools, json.dumps({"platforms": platforms, "seed": profile.seed}))
    write_json(a.crawl_report, {"tools": len(platforms or [1, 2, 3, 4])})
    a.mark_done("crawl", fingerprint({"platforms": platforms}))
    return {"tools": len(platforms or [1, 2, 3, 4]), "per_platform": {p: 1 for p in platforms or []}}


def syn(out: Path, profile: Any, max_tools: int | None = None) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "syn", max_tools=max_tools, met=_rendezvous(out, "syn", "real"))
    tools = a.tools.read_text()
    for path in (a.syn_queries, a.syn_positives, a.syn_negatives):
        _write(path, f"{tools}|{max_tools}")
    write_json(a.syn_stats, {"queries": max_tools or 0})
    return {"queries": max_tools or 0}


def real(out: Path, profile: Any, mirror: str | None = None) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "real", met=_rendezvous(out, "real", "syn"))
    tools = a.tools.read_text()
    for path in (a.real_decisions, a.real_pairs, a.real_mcp_prompts, a.real_mcp_server_prompts):
        _write(path, tools)
    write_json(a.real_stats, {"pairs": 3})
    return {"pairs": 3}


def real_fails(out: Path, profile: Any, mirror: str | None = None) -> dict[str, Any]:
    _log(out, "real_fails")
    raise ValueError("ToolBench queries are missing")


_FLAKY_CALLS: dict[str, int] = {}


def real_flaky(out: Path, profile: Any, mirror: str | None = None) -> dict[str, Any]:
    """Fails with a dropped connection on the first call, as an LLM server restart would."""
    _log(out, "real_flaky")
    n = _FLAKY_CALLS[str(out)] = _FLAKY_CALLS.get(str(out), 0) + 1
    if n == 1:
        raise ConnectionError("LLM server closed the connection")
    return real(out, profile, mirror)


def review_sample(out: Path, profile: Any, n: int = 200) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "review-sample", n=n)
    _write(a.review_sample, a.real_decisions.read_text() + str(n))
    return {"items": n}


def train(out: Path, profile: Any) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "train")
    _write(a.model / "model.safetensors", a.tools.read_text() + a.syn_queries.read_text())
    return {"epochs": 1, "loss": 0.5}


def evaluate(out: Path, profile: Any, seeds: int = 5) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "evaluate", seeds=seeds)
    a.require(a.real_pairs, "real")
    a.require(a.model, "train")
    write_json(a.eval / "report.json", {"recall@5": 0.9})
    return {"recall@5": 0.9, "seeds": seeds}


def publish(out: Path, profile: Any, repo_id: str | None = None, dry_run: bool = False) -> dict[str, Any]:
    a = ArtifactDir(out)
    _log(out, "publish")
    write_json(a.dataset / "manifest.json", {"files": 3})
    return {"files": 3, "dataset": str(a.dataset)}


def crawl_hangs(out: Path, profile: Any, **options: Any) -> dict[str, Any]:
    """A stage that says it started and then works for ten minutes (for the interruption test)."""
    _log(out, "crawl", hangs=True)
    (Path(out) / ".crawl.started").touch()
    time.sleep(600)
    return {}


def _dumps() -> Any:
    return json.dumps


def crawl_prints(out: Path, profile: Any, **options: Any) -> dict[str, Any]:
    """crawl, after printing: once plainly (log_prints logs it), once into a buffer, and dill's globals of a function."""
    import contextlib
    import io

    import dill.detect

    print("fake crawl printed")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("into the buffer")
    _write(
        Path(out) / "prints.json",
        json.dumps({"buffer": buf.getvalue(), "globals": dill.detect.nestedglobals(_dumps)}),
    )
    return crawl(out, profile, **options)


TARGETS = {
    "crawl": f"{__name__}:crawl",
    "syn": f"{__name__}:syn",
    "real": f"{__name__}:real",
    "review-sample": f"{__name__}:review_sample",
    "train": f"{__name__}:train",
    "evaluate": f"{__name__}:evaluate",
    "publish": f"{__name__}:publish",
}


def calls(out: Path) -> list[dict[str, Any]]:
    path = Path(out) / "calls.log"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]
