"""The deployment build-ecoagent/build-ecoagent, served by `python -m flows.serve` and run with the README's
command (`prefect deployment run 'build-ecoagent/build-ecoagent' -p out=...`) against a real local server."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import requests
from conftest import PREFECT, prefect_env


def _wait_for_deployment(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"flows.serve exited: {log.read_text()[-3000:]}")
        try:
            response = requests.get(f"{url}/deployments/name/build-ecoagent/build-ecoagent", timeout=15)
        except requests.RequestException:  # a busy server on 2 cores; ask again
            continue
        if response.status_code == 200:
            return
        time.sleep(1)
    raise AssertionError(f"deployment not registered in {timeout} s: {log.read_text()[-3000:]}")


def _run_deployment(env: dict[str, str], out: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    extra = {
        "stages": ["crawl"],
        "stage_targets": {"crawl": "flows_fake_stages:crawl"},
        "platforms": ["crewai"],
    }
    return subprocess.run(
        [
            str(PREFECT),
            "deployment",
            "run",
            "build-ecoagent/build-ecoagent",
            "-p",
            f"out={out}",
            "--params",
            json.dumps(extra),
            "--watch",
            "--watch-interval",
            "2",
            "--watch-timeout",
            "240",
        ],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_served_deployment_runs(prefect_server: dict[str, str], tmp_path: Path) -> None:
    url = prefect_server["url"]
    env = prefect_env(Path(prefect_server["home"]), url)
    log = tmp_path / "serve.log"
    out = tmp_path / "out"
    with log.open("w") as fh:
        # started outside the checkout: the deployment loads the flow by module path
        serve = subprocess.Popen(
            [sys.executable, "-m", "flows.serve"], env=env, cwd=tmp_path, stdout=fh, stderr=subprocess.STDOUT
        )
    try:
        _wait_for_deployment(url, serve, log)
        first = _run_deployment(env, out, tmp_path)
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:] + log.read_text()[-3000:]
        assert "Completed" in first.stdout
        assert json.loads((out / "tools.parquet").read_text())["platforms"] == ["crewai"]
        summary = json.loads((out / ".prefect" / "build-summary.json").read_text())
        assert summary["stages"]["crawl"]["status"] == "ran"

        # the run left the stage's stats table and the build summary on the server
        response = requests.post(
            f"{url}/artifacts/filter",
            json={"artifacts": {"key": {"any_": ["crawl-stats", "build-ecoagent-summary"]}}},
            timeout=30,
        )
        arts = response.json()
        crawl = [a for a in arts if a["key"] == "crawl-stats" and str(out) in (a["description"] or "")]
        assert crawl and crawl[0]["type"] == "table"
        assert "per_platform.crewai" in json.dumps(crawl[0]["data"])
        assert any(a["key"] == "build-ecoagent-summary" for a in arts)

    finally:
        serve.terminate()
        try:
            serve.wait(timeout=30)
        except subprocess.TimeoutExpired:
            serve.kill()
