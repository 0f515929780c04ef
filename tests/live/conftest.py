"""Live-runtime fixtures: the real MCP servers, or a clean skip when set-up has not installed them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from live_testutil import FetchRig

from live.httpstub import HttpStub
from live.servers import ServerPool, live_servers
from live.stream import Sandbox


@pytest.fixture
def sandbox() -> Iterator[Sandbox]:
    box = Sandbox()
    yield box
    box.cleanup()


@pytest.fixture
def pool(sandbox: Sandbox, tmp_path: Path) -> Iterator[ServerPool]:
    """filesystem, time and git: one Node and two Python servers, short call timeout for the hang test."""
    specs = [
        s
        for s in live_servers(sandbox.root, sandbox.repo, sandbox.memory, fetch=False)
        if s.name in ("filesystem", "time", "git")
    ]
    p = ServerPool(specs, tmp_path / "logs", call_timeout=0.5)
    try:
        p.start()
        yield p
    finally:
        p.close()


@pytest.fixture(scope="module")
def fetch_rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FetchRig]:
    """Started once per module: two Python servers take a few seconds to start, and tests reset them."""
    box = Sandbox()
    stub = HttpStub()
    box.http = stub.base_url
    specs = [s for s in live_servers(box.root, box.repo, box.memory, stub=stub) if s.name.startswith("fetch")]
    p = ServerPool(specs, tmp_path_factory.mktemp("fetch-logs"), call_timeout=2.0)
    try:
        p.start()
        yield FetchRig(p, stub, box)
    finally:
        p.close()
        stub.close()
        box.cleanup()
