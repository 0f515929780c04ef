"""Helpers of the live tests: the skip when set-up has not installed the servers, and the orphan check."""

from __future__ import annotations

import psutil
import pytest

from live.servers import MARKER, missing_installs

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
