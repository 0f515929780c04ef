"""Live-runtime fixtures: the real MCP servers, or a clean skip when set-up has not installed them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from live.servers import MARKER, ServerPool, live_servers, missing_installs
from live.stream import Sandbox

MISSING = missing_installs()
needs_servers = pytest.mark.skipif(
    bool(MISSING),
    reason=f"live MCP servers not installed ({', '.join(MISSING)}): run scripts/setup.sh --live",
)


def server_children() -> list[psutil.Process]:
    """Child processes of this test process that a ServerPool started (they carry its env marker)."""
    out = []
    for child in psutil.Process().children(recursive=True):
        try:
            if MARKER in child.environ() and child.status() != psutil.STATUS_ZOMBIE:
                out.append(child)
        except psutil.Error:
            continue
    return out


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
