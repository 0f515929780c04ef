"""Real MCP server processes over stdio, driven from synchronous code.

The official Python SDK (``mcp``) is async and hides the server's process inside ``stdio_client``; the
harness needs both a plain blocking API (the evaluation loop is synchronous, like the simulator) and the
process id (to SIGKILL / SIGSTOP it on a schedule). So a ``ServerPool`` owns one asyncio loop in a
daemon thread; each server lives in one task on it that holds the ``stdio_client`` and ``ClientSession``
contexts (anyio cancel scopes must be entered and left by the same task) until it is told to stop. The
process is found among this process's children by a marker in its environment, which the SDK passes
through, so no SDK internals are touched.

Every wait is bounded: a call has the session's read timeout plus a guard on the loop, a stop kills
what a clean shutdown leaves, and ``close`` reports any child process that survived it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

import psutil

from live.httpstub import HttpStub

MARKER = "ECOAGENT_LIVE_SERVER"
ROOT = Path(__file__).resolve().parent.parent
# the npm prefix scripts/setup.sh --live installs into; $ECOAGENT_LIVE_PREFIX for an install outside a clone
NODE_MODULES = Path(os.environ.get("ECOAGENT_LIVE_PREFIX") or ROOT / ".live") / "node_modules"

T = TypeVar("T")
Outcome = Literal["ok", "tool_error", "protocol_error", "timeout", "closed", "down"]


@dataclass(frozen=True)
class ServerSpec:
    """How to start one server: a command, its arguments and extra environment.

    ``without_credential``: the environment overrides of the same server started without the credential
    it needs (empty: it needs none); a fault restarts it so, a ``restart`` brings the credential back.
    """

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    package: str = ""  # what it was installed as (npm or PyPI, pinned), for the report
    note: str = ""  # what is special about it (fetch-b: reaches the stub through its proxy)
    replica_of: str = ""  # a second process of another server's package: its tools are substitutes
    without_credential: tuple[tuple[str, str], ...] = ()
    calls_http: bool = False  # reads from the harness's loopback HTTP stub (its faults hit this server)


@dataclass
class CallResult:
    """One tools/call: whether it worked, how it failed, and how long it took (seconds)."""

    outcome: Outcome
    latency: float
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"


@dataclass
class _Server:
    spec: ServerSpec
    session: Any = None
    proc: psutil.Process | None = None
    stop: asyncio.Event | None = None
    task: asyncio.Future[Any] | None = None
    generation: int = 0
    paused: bool = False
    starts: int = 0
    credential: bool = True  # the running process was started with its credential
    starts_without_credential: int = 0
    errlog: Any = None
    procs: list[psutil.Process] = field(default_factory=list)


def node_server(
    name: str, package: str, version: str, *args: str, env: dict[str, str] | None = None
) -> ServerSpec:
    """A server from the project-local npm prefix, started with Node directly (no npx, no network)."""
    entry = NODE_MODULES / "@modelcontextprotocol" / package / "dist" / "index.js"
    return ServerSpec(
        name,
        "node",
        (str(entry), *args),
        tuple((env or {}).items()),
        package=f"npm @modelcontextprotocol/{package}@{version}",
    )


def python_server(
    name: str, module: str, version: str, *args: str, note: str = "", env: dict[str, str] | None = None
) -> ServerSpec:
    """A server from this venv, run as ``python -m module`` so it is this interpreter's package."""
    return ServerSpec(
        name,
        sys.executable,
        ("-m", module, *args),
        tuple((env or {}).items()),
        package=f"PyPI {module.replace('_', '-')}=={version}",
        note=note,
    )


class ServerPool:
    """Start, call, kill, pause and stop MCP servers; a context manager that stops them all on exit.

    Args:
        specs: the servers, by name.
        log_dir: each server's stderr goes to ``log_dir/<name>.stderr`` (a server's log is not ours to print).
        call_timeout: seconds a tools/call may take before it counts as a timeout (a SIGSTOPped server).
        start_timeout: seconds a server gets to start and answer ``initialize``.
    """

    def __init__(
        self,
        specs: list[ServerSpec],
        log_dir: Path,
        call_timeout: float = 2.0,
        start_timeout: float = 60.0,
    ) -> None:
        self.servers = {s.name: _Server(s) for s in specs}
        self.log_dir = Path(log_dir)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.call_timeout = call_timeout
        self.start_timeout = start_timeout
        self._run_id = uuid.uuid4().hex[:8]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mcp-live-loop", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ plumbing
    def _run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def _marker(self, srv: _Server) -> str:
        return f"{self._run_id}:{srv.spec.name}:{srv.generation}"

    def _find(self, marker: str) -> psutil.Process | None:
        """The child of this process whose environment carries ``marker`` (the SDK spawns it directly).

        A ``psutil.Process`` rather than a pid: its signals check that the pid was not reused.
        """
        for child in psutil.Process().children(recursive=False):
            with contextlib.suppress(psutil.Error):
                if child.environ().get(MARKER) == marker:
                    return child
        return None

    async def _serve(self, srv: _Server, ready: asyncio.Future[None]) -> None:
        """Hold one server's transport and session open until ``srv.stop`` is set (or the process dies)."""
        from mcp.client.session import ClientSession
        from mcp.client.stdio import StdioServerParameters, stdio_client

        marker = self._marker(srv)
        env = dict(srv.spec.env) | {MARKER: marker}
        if not srv.credential:
            env |= dict(srv.spec.without_credential)
        params = StdioServerParameters(command=srv.spec.command, args=list(srv.spec.args), env=env)
        try:
            # no session-wide read timeout: a cold Python server takes longer to initialize than a call may
            async with (
                stdio_client(params, errlog=srv.errlog) as (read, write),
                ClientSession(read, write) as session,
            ):
                async with asyncio.timeout(self.start_timeout):
                    await session.initialize()
                srv.proc = self._find(marker)
                if srv.proc is None:  # without it no fault could be induced: refuse to run blind
                    raise RuntimeError("its process is not among this process's children")
                srv.procs.append(srv.proc)
                srv.session = session
                ready.set_result(None)
                assert srv.stop is not None
                await srv.stop.wait()
                if srv.paused and srv.proc is not None:  # a stopped process would sit out SIGTERM
                    _signal(srv.proc, signal.SIGCONT)
                    srv.paused = False
        except BaseException as exc:  # a start that fails must be reported, a dead server is just down
            if not ready.done():
                ready.set_exception(RuntimeError(f"server {srv.spec.name!r} did not start: {exc!r}"))
            if not isinstance(exc, Exception):
                raise
        finally:
            srv.session = None

    async def _start(self, srv: _Server) -> None:
        srv.generation += 1
        srv.starts += 1
        srv.starts_without_credential += not srv.credential
        srv.stop = asyncio.Event()
        ready: asyncio.Future[None] = self._loop.create_future()
        srv.task = asyncio.ensure_future(self._serve(srv, ready))
        await ready

    async def _stop(self, srv: _Server) -> None:
        if srv.task is None:
            return
        assert srv.stop is not None
        srv.stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(srv.task), 15.0)
        except (TimeoutError, asyncio.CancelledError):
            srv.task.cancel()
            with contextlib.suppress(BaseException):
                await srv.task
        srv.task, srv.session = None, None
        if srv.proc is not None:  # the SDK kills the process group; make sure of the process itself
            _kill_quietly(srv.proc)
        srv.proc, srv.paused = None, False

    # ------------------------------------------------------------------ lifecycle
    def start(self, name: str | None = None, credential: bool = True) -> None:
        """Start one server (or every one not running), waiting until it answers ``initialize``.

        ``credential=False`` starts ``name`` with its ``without_credential`` environment instead.
        """
        if not credential and (name is None or not self.servers[name].spec.without_credential):
            raise ValueError(f"server {name!r} has no credential to start without")
        for srv in [self.servers[name]] if name else list(self.servers.values()):
            if srv.task is not None:
                continue
            srv.credential = credential
            if srv.errlog is None:
                srv.errlog = open(self.log_dir / f"{srv.spec.name}.stderr", "a")  # noqa: SIM115
            self._run(self._start(srv), self.start_timeout + 5)

    def stop(self, name: str) -> None:
        """Stop one server cleanly (the SDK closes stdin, then SIGTERM / SIGKILL its process group)."""
        self._run(self._stop(self.servers[name]), 30)

    def restart(self, name: str, credential: bool = True) -> None:
        """Recovery after a kill: drop the dead session, start a fresh process (with its credential,
        unless ``credential=False``: the fault of a redeploy that lost it)."""
        self.stop(name)
        self.start(name, credential)

    def kill(self, name: str) -> None:
        """SIGKILL the server's process, as a crash would; its session stays until ``restart``."""
        srv = self.servers[name]
        if srv.proc is not None:
            _signal(srv.proc, signal.SIGKILL)
            _wait_status(srv.proc, psutil.STATUS_ZOMBIE)  # dead (reaping is the event loop's job)

    def pause(self, name: str) -> None:
        """SIGSTOP: the process stays alive and holds its pipes but never answers (a hang)."""
        srv = self.servers[name]
        if srv.proc is not None and not srv.paused:
            _signal(srv.proc, signal.SIGSTOP)
            srv.paused = True
            _wait_status(srv.proc, psutil.STATUS_STOPPED)

    def resume(self, name: str) -> None:
        """SIGCONT after a pause; the answers to calls that already timed out are dropped by the session."""
        srv = self.servers[name]
        if srv.proc is not None and srv.paused:
            _signal(srv.proc, signal.SIGCONT)
            srv.paused = False

    def running(self, name: str) -> bool:
        proc = self.servers[name].proc
        return proc is not None and _alive(proc)

    def pid(self, name: str) -> int | None:
        proc = self.servers[name].proc
        return None if proc is None else proc.pid

    def processes(self) -> list[psutil.Process]:
        """Every server process this pool has started, current and past."""
        return [p for s in self.servers.values() for p in s.procs]

    # ------------------------------------------------------------------ protocol
    def list_tools(self, name: str) -> list[Any]:
        """Every tool the server lists (``mcp_types.Tool``), following pagination."""

        async def go() -> list[Any]:
            session = self.servers[name].session
            if session is None:
                raise RuntimeError(f"server {name!r} is not running")
            tools, cursor = [], None
            while True:
                from mcp_types import PaginatedRequestParams

                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools

        return self._run(go(), self.start_timeout)

    def call(self, name: str, tool: str, arguments: dict[str, Any]) -> CallResult:
        """One tools/call; never raises for what a server does (a dead, hung or erroring server is data)."""
        srv = self.servers[name]
        t0 = time.perf_counter()
        if srv.session is None:
            return CallResult("down", time.perf_counter() - t0, "no session (server not running)")
        session = srv.session

        async def go() -> CallResult:
            from mcp.shared.exceptions import MCPError

            try:
                async with asyncio.timeout(self.call_timeout + 1.0):
                    result = await session.call_tool(tool, arguments, read_timeout_seconds=self.call_timeout)
            except MCPError as exc:
                kind: Outcome = (
                    "timeout" if "timed out" in str(exc.error.message).lower() else "protocol_error"
                )
                if exc.error.code == -32000 and "closed" in str(exc.error.message).lower():
                    kind = "closed"
                return CallResult(
                    kind, time.perf_counter() - t0, f"{exc.error.code}: {exc.error.message}"[:200]
                )
            except TimeoutError:
                return CallResult("timeout", time.perf_counter() - t0, "no answer (client-side guard)")
            except Exception as exc:  # a closed stream, a broken pipe: the process is gone
                return CallResult("closed", time.perf_counter() - t0, repr(exc)[:200])
            if getattr(result, "is_error", False):
                text = " ".join(getattr(c, "text", "") for c in (result.content or []))
                return CallResult("tool_error", time.perf_counter() - t0, text[:200])
            return CallResult("ok", time.perf_counter() - t0)

        try:
            return self._run(go(), self.call_timeout + 5.0)
        except Exception as exc:
            return CallResult("closed", time.perf_counter() - t0, repr(exc)[:200])

    # ------------------------------------------------------------------ teardown
    def close(self) -> list[int]:
        """Stop every server and the loop; returns the pids of child processes still alive (should be [])."""
        for name in self.servers:
            with contextlib.suppress(Exception):
                self.stop(name)
        for srv in self.servers.values():
            if srv.errlog is not None:
                srv.errlog.close()
                srv.errlog = None
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
        if not self._loop.is_running():
            self._loop.close()
        left = [p for p in self.processes() if _alive(p)]
        for proc in left:
            _kill_quietly(proc)
        return [p.pid for p in left if _alive(p)]

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _signal(proc: psutil.Process, sig: int) -> None:
    """Send ``sig`` unless the process is gone (psutil refuses a pid that was reused)."""
    with contextlib.suppress(psutil.Error):
        proc.send_signal(sig)


def _wait_status(proc: psutil.Process, status: str, limit: float = 5.0) -> None:
    """Until the kernel shows ``status`` (a signal is delivered asynchronously), so the next call sees it."""
    deadline = time.monotonic() + limit
    with contextlib.suppress(psutil.Error):  # NoSuchProcess: already reaped, which is past any status
        while proc.status() != status and time.monotonic() < deadline:
            time.sleep(0.005)


def _kill_quietly(proc: psutil.Process) -> None:
    _signal(proc, signal.SIGCONT)
    _signal(proc, signal.SIGKILL)


# Pinned versions (scripts/setup.sh installs exactly these; pyproject's `live` extra pins the PyPI ones)
NPM_VERSION = "2026.8.31"
PYPI_VERSIONS = {
    "mcp": "2.3.0",
    "mcp-server-time": "2026.10.19",
    "mcp-server-git": "2026.10.19",
    "mcp-server-fetch": "2026.10.24",
}
NPM_PACKAGES = ("server-filesystem", "server-memory", "server-everything", "server-sequential-thinking")


def live_servers(
    root: Path,
    repo: Path,
    memory: Path,
    fetch: bool = True,
    replicas: bool = True,
    stub: HttpStub | None = None,
) -> list[ServerSpec]:
    """The servers of the live run, every one over stdio.

    ``fetch`` reads from ``stub``, the harness's loopback HTTP server (no network here): the direct
    one with ``NO_PROXY`` for loopback, so no proxy setting can route its requests elsewhere, and
    ``--allow-private-ips`` (fetch refuses loopback by default). ``replicas`` adds a second process of
    filesystem, of time and of fetch: their tools do what the first one's do, so a query has a working
    substitute when one process is down, which is the case a reliability-aware retriever can win (with
    no substitute, no policy can succeed while the true tool is down). fetch-b reaches the stub through
    its authenticating proxy, with the credential in ``HTTP_PROXY`` (the only credential any installed
    server takes); its ``without_credential`` environment is the same proxy URL without it.
    The SDK gives a server only a few variables of ours (PATH, HOME, ...) plus what a spec sets, so
    no proxy or key of the harness's environment leaks into any of them.
    """
    specs = [
        node_server("filesystem", "server-filesystem", NPM_VERSION, str(root)),
        node_server("memory", "server-memory", NPM_VERSION, env={"MEMORY_FILE_PATH": str(memory)}),
        node_server("everything", "server-everything", NPM_VERSION),
        node_server(
            "sequential-thinking",
            "server-sequential-thinking",
            NPM_VERSION,
            env={"DISABLE_THOUGHT_LOGGING": "true"},
        ),
        python_server("time", "mcp_server_time", PYPI_VERSIONS["mcp-server-time"], "--local-timezone", "UTC"),
        python_server("git", "mcp_server_git", PYPI_VERSIONS["mcp-server-git"], "--repository", str(repo)),
    ]
    if replicas:
        fs = node_server("filesystem-b", "server-filesystem", NPM_VERSION, str(root))
        tm = python_server(
            "time-b", "mcp_server_time", PYPI_VERSIONS["mcp-server-time"], "--local-timezone", "UTC"
        )
        specs += [
            dataclasses.replace(fs, replica_of="filesystem", note="a second process of filesystem"),
            dataclasses.replace(tm, replica_of="time", note="a second process of time"),
        ]
    if fetch:
        if stub is None:
            raise ValueError("fetch reads from the loopback HTTP stub: pass stub=HttpStub()")
        loopback = "127.0.0.1,localhost"
        direct = python_server(
            "fetch",
            "mcp_server_fetch",
            PYPI_VERSIONS["mcp-server-fetch"],
            "--allow-private-ips",
            note=f"reads text documents from the harness's loopback HTTP stub ({stub.base_url})",
            env={"NO_PROXY": loopback, "no_proxy": loopback},
        )
        specs.append(dataclasses.replace(direct, calls_http=True))
        if replicas:

            def proxy(credential: bool) -> dict[str, str]:
                url = stub.proxy_url(credential)
                return {"HTTP_PROXY": url, "http_proxy": url}

            via = python_server(
                "fetch-b",
                "mcp_server_fetch",
                PYPI_VERSIONS["mcp-server-fetch"],
                "--allow-private-ips",
                note="a second process of fetch, through the stub's proxy; its credential is in HTTP_PROXY",
                env=proxy(True),
            )
            specs.append(
                dataclasses.replace(
                    via,
                    replica_of="fetch",
                    calls_http=True,
                    without_credential=tuple(proxy(False).items()),
                )
            )
    return specs


def missing_installs() -> list[str]:
    """What ``scripts/setup.sh --live`` has not installed yet (empty when the live run can start)."""
    import importlib.util
    import shutil

    out = [
        f"npm @modelcontextprotocol/{p}"
        for p in NPM_PACKAGES
        if not (NODE_MODULES / "@modelcontextprotocol" / p / "dist" / "index.js").exists()
    ]
    if shutil.which("node") is None:
        out.append("node (Debian package nodejs)")
    for module in ("mcp", "mcp_server_time", "mcp_server_git", "mcp_server_fetch"):
        if importlib.util.find_spec(module) is None:
            out.append(f"PyPI {module.replace('_', '-')}")
    return out
