"""`ecoagent build` stops at once on SIGTERM, with Prefect's temporary server, instead of finishing the stage."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from conftest import prefect_env


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_stops_the_build_and_its_prefect_server(tmp_path: Path, sig: signal.Signals) -> None:
    out = tmp_path / "out"
    env = prefect_env(tmp_path / "prefect", None)
    cmd = [
        sys.executable,
        "-m",
        "ecoagent.cli",
        "build",
        "--out",
        str(out),
        "--stages",
        "crawl",
        "--stage-target",
        "crawl=flows_fake_stages:crawl_hangs",
    ]
    log = tmp_path / "build.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT)
    children: list[psutil.Process] = []
    try:
        deadline = time.monotonic() + 240  # the temporary Prefect server starts first (slow on 2 cores)
        while not (out / ".crawl.started").exists():
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the stage never started:\n" + log.read_text()[-3000:]
            time.sleep(0.2)
        children = psutil.Process(proc.pid).children(recursive=True)
        assert children, "expected Prefect's temporary server as a child process"
        os.kill(proc.pid, sig)
        # the stage would sleep another ten minutes: only an immediate stop ends within this wait
        code = proc.wait(timeout=60)
        left = [c for c in children if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    finally:  # on failure, leave no process behind either
        if proc.poll() is None:
            children = psutil.Process(proc.pid).children(recursive=True)
            proc.kill()
            proc.wait()
        for child in children:
            if child.is_running():
                child.kill()
    assert code == 128 + sig, log.read_text()[-3000:]
    assert f"stopped by {sig.name}" in log.read_text()
    assert not left, f"still running after the build stopped: {left}"
