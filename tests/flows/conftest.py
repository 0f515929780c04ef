"""Fixtures of the flow tests: one real local Prefect server per session (free port, fresh PREFECT_HOME,
sqlite), Prefect settings pointing at it, and the small stand-in stages of ``flows_fake_stages``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

# Prefect binds its console log handler to sys.stderr when it is imported: import it now, while that is
# pytest's session-wide capture, not one test's capsys (closed after that test).
import prefect  # noqa: F401, E402
import pytest
import requests

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]

# pytest puts tests/ (and tests/<package>/) on sys.path but not the checkout, so `validators.review` or
# `rated.evaluation` would resolve to the same-named test folders; a stage the flow imports by path must
# find the real package. A regular package anywhere on sys.path wins over such namespace folders.
if str(REPO) not in sys.path:
    sys.path.append(str(REPO))
PREFECT = Path(sys.executable).with_name("prefect")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prefect_env(home: Path, api_url: str | None) -> dict[str, str]:
    """Environment of a Prefect process isolated in ``home`` (and talking to ``api_url`` if given)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(
        PREFECT_HOME=str(home),
        PREFECT_PROFILES_PATH=str(home / "profiles.toml"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="120",
        PREFECT_LOGGING_LEVEL="INFO",
        PREFECT_RUNNER_POLL_FREQUENCY="1",
        PYTHONPATH=os.pathsep.join([str(HERE), str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    )
    if api_url:
        env["PREFECT_API_URL"] = api_url
    return env


def _drain_prefect_workers() -> None:
    """Send this process's queued logs and events while the server still listens (no errors at exit)."""
    if "prefect" not in sys.modules:
        return
    from prefect.events.worker import EventsWorker
    from prefect.logging.handlers import APILogWorker

    APILogWorker.drain_all(timeout=15)
    EventsWorker.drain_all(timeout=15)


@pytest.fixture(scope="session", autouse=True)
def _stop_temporary_prefect_servers() -> Iterator[None]:
    """Stop Prefect's temporary (ephemeral) servers at the end of the session, while pytest's streams are
    still open: left to Prefect's exit hook, their last log line goes to a closed stream ("Logging error")."""
    yield
    if "prefect.server.api.server" in sys.modules:
        from prefect.server.api.server import SubprocessASGIServer

        _drain_prefect_workers()
        for server in list(SubprocessASGIServer._instances.values()):  # Prefect keeps one per port
            server.stop()


@pytest.fixture(scope="session")
def prefect_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """A real Prefect server on 127.0.0.1:<free port> with its own home and sqlite database."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = prefect_env(home, None)
    env["PREFECT_API_DATABASE_CONNECTION_URL"] = f"sqlite+aiosqlite:///{home / 'prefect.db'}"
    log = (home / "server.log").open("w")
    proc = subprocess.Popen(
        [
            str(PREFECT),
            "server",
            "start",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--no-ui",
            "--analytics-off",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=home,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"prefect server exited: {(home / 'server.log').read_text()[-2000:]}")
            try:
                if requests.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("prefect server did not start in 300 s")
            time.sleep(1)
        yield {"url": url, "home": str(home)}
    finally:
        _drain_prefect_workers()
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture()
def prefect_api(prefect_server: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Point this process's Prefect client at the session's server (and its fresh home)."""
    from prefect.settings import (
        PREFECT_API_URL,
        PREFECT_HOME,
        PREFECT_SERVER_ANALYTICS_ENABLED,
        temporary_settings,
    )

    monkeypatch.syspath_prepend(str(HERE))
    with temporary_settings(
        updates={
            PREFECT_API_URL: prefect_server["url"],
            PREFECT_HOME: prefect_server["home"],
            PREFECT_SERVER_ANALYTICS_ENABLED: False,
        }
    ):
        yield prefect_server["url"]


@pytest.fixture()
def fake_targets() -> dict[str, str]:
    import flows_fake_stages

    return dict(flows_fake_stages.TARGETS)
