"""Helpers of the live tests: the skip when set-up has not installed the servers, the orphan check, the fetch rig."""

from __future__ import annotations

from dataclasses import dataclass

import psutil
import pytest

from live.httpstub import HttpStub
from live.servers import MARKER, ServerPool, missing_installs
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


@dataclass
class FetchRig:
    """The two fetch servers and the loopback stub they read from (fetch direct, fetch-b via its proxy)."""

    pool: ServerPool
    stub: HttpStub
    sandbox: Sandbox

    def args(self, n: int = 1) -> dict[str, str]:
        return {"url": f"{self.stub.base_url}/docs/page-{n}.txt"}

    def reset(self) -> None:
        """Back to healthy: 200s, fetch-b with its credential (a test that faults them leaves them so)."""
        self.stub.recover()
        if not self.pool.servers["fetch-b"].credential:
            self.pool.restart("fetch-b")
