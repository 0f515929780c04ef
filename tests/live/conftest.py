"""Live-runtime fixtures: the real MCP servers, or a clean skip when set-up has not installed them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

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
        for s in live_servers(sandbox.root, sandbox.repo, sandbox.memory)
        if s.name in ("filesystem", "time", "git")
    ]
    p = ServerPool(specs, tmp_path / "logs", call_timeout=0.5)
    try:
        p.start()
        yield p
    finally:
        p.close()
