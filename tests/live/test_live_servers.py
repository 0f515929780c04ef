"""Real servers, real faults: each failure the harness induces shows up as the call's own outcome.

No protocol mock: the pool starts the installed servers and talks MCP to them over stdio. No timed
assertion: a hang is checked by its outcome (``timeout``), not by how long it took.
"""

from __future__ import annotations

import psutil
from live_testutil import needs_servers, server_children

from live.servers import ServerPool
from live.stream import Sandbox, render

pytestmark = needs_servers


def test_tools_are_listed_through_the_protocol(pool: ServerPool) -> None:
    names = {t.name for t in pool.list_tools("filesystem")}
    assert {"read_text_file", "list_directory", "write_file"} <= names
    assert {t.name for t in pool.list_tools("time")} == {"get_current_time", "convert_time"}
    tool = next(t for t in pool.list_tools("git") if t.name == "git_status")
    assert "repo_path" in tool.input_schema["properties"]


def test_calls_work_and_bad_arguments_fail(pool: ServerPool, sandbox: Sandbox) -> None:
    fill = sandbox.fill(1)
    assert pool.call("filesystem", "read_text_file", render({"path": "{root}/notes.txt"}, fill)).ok
    assert pool.call("git", "git_status", render({"repo_path": "{repo}"}, fill)).ok
    bad = pool.call("time", "get_current_time", {})
    assert bad.outcome == "tool_error"
    outside = pool.call("filesystem", "read_text_file", {"path": "/etc/hostname"})  # outside the sandbox
    assert not outside.ok


def test_sigkill_fails_calls_until_restart(pool: ServerPool, sandbox: Sandbox) -> None:
    args = render({"path": "{root}"}, sandbox.fill(1))
    first = pool.pid("filesystem")
    pool.kill("filesystem")  # returns once the process is dead
    assert not pool.running("filesystem")
    dead = pool.call("filesystem", "list_directory", args)
    assert dead.outcome in ("closed", "down")
    pool.restart("filesystem")
    assert pool.pid("filesystem") not in (None, first)
    assert pool.call("filesystem", "list_directory", args).ok


def test_sigstop_hangs_into_the_timeout_and_sigcont_recovers(pool: ServerPool) -> None:
    args = {"timezone": "UTC"}
    pool.pause("time")  # returns once the kernel shows the process stopped
    assert psutil.Process(pool.pid("time")).status() == psutil.STATUS_STOPPED
    assert pool.call("time", "get_current_time", args).outcome == "timeout"
    pool.resume("time")
    assert pool.call("time", "get_current_time", args).ok


def test_close_leaves_no_server_process_and_no_stub(sandbox: Sandbox, tmp_path) -> None:
    import socket
    import threading

    from live.httpstub import HttpStub
    from live.servers import live_servers

    stub = HttpStub()
    specs = [
        s
        for s in live_servers(sandbox.root, sandbox.repo, sandbox.memory, stub=stub)
        if s.name in ("memory", "time", "fetch-b")
    ]
    pool = ServerPool(specs, tmp_path / "logs", call_timeout=0.5)
    pool.start()
    procs = pool.processes()
    assert len(procs) == 3 and all(p.is_running() for p in procs)
    pool.pause("time")  # a stopped process must not survive the shutdown either
    pool.restart("fetch-b", credential=False)  # and neither the process it replaced
    assert len(pool.processes()) == 4
    assert pool.close() == []
    assert not [p for p in pool.processes() if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert server_children() == []
    assert stub.close() and stub.closed()
    assert not [t for t in threading.enumerate() if t.name == "live-http-stub"]
    with socket.socket() as s:  # nothing listens on the stub's port any more
        assert s.connect_ex(("127.0.0.1", stub.port)) != 0
