"""A real HTTP server on 127.0.0.1 that serves the snapshot at its upstream URLs and injects faults.

It answers the URL shapes of ``crawlers.live``: ``/raw/{owner}/{repo}/{ref}/{path}`` (files),
``/api/repos/{owner}/{repo}/contents/{path}?ref=`` (GitHub-style listings), ``/npm/{pkg}@{ver}/{path}``
and ``/facts/{path}`` (the sidecars), plus ``/robots.txt``. Bodies come from the mirror folder through the
route table read backwards; every response carries an ETag and honours ``If-None-Match``. Faults are
queued per path (``429``, ``500``, ``slow``, ``truncate``) and consumed one per request.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from crawlers.http import HttpConfig
from crawlers.live import ROUTES, LiveConfig
from crawlers.source import MirrorSource, SourceFileMissing


@dataclass
class ServerState:
    mirror: MirrorSource
    robots: str = "User-agent: *\nAllow: /\n"
    faults: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    times: list[tuple[float, str]] = field(default_factory=list)
    conditional: int = 0
    slow_s: float = 1.5
    lock: threading.Lock = field(default_factory=threading.Lock)

    def mirror_path(self, path: str) -> tuple[str, bool]:
        """(mirror-relative path, is a listing) for a request path; KeyError when nothing maps."""
        parts = path.strip("/").split("/")
        if parts[0] == "facts":
            return "/".join(parts[1:]), False
        if parts[0] == "raw":
            origin, ref, upstream = "/".join(parts[1:3]), parts[3], "/".join(parts[4:])
            kind = "github"
        elif parts[0] == "api" and parts[1] == "repos" and parts[4] == "contents":
            origin, upstream, ref, kind = "/".join(parts[2:4]), "/".join(parts[5:]), None, "listing"
        elif parts[0] == "npm":
            scoped = parts[1].startswith("@")
            spec = "/".join(parts[1:3]) if scoped else parts[1]
            origin, ref = spec.rsplit("@", 1)
            upstream, kind = "/".join(parts[3 if scoped else 2 :]), "npm"
        else:
            raise KeyError(path)
        best = None
        for r in ROUTES:
            if r.origin != origin or (ref is not None and r.ref != ref):
                continue
            if kind == "npm" and r.kind != "npm":
                continue
            matches = upstream == r.upstream_prefix or upstream.startswith(r.upstream_prefix + "/")
            if matches and (best is None or len(r.upstream_prefix) > len(best.upstream_prefix)):
                best = r
        if best is None:
            raise KeyError(path)
        rest = upstream[len(best.upstream_prefix) :].lstrip("/")
        return (f"{best.mirror_prefix}/{rest}" if rest else best.mirror_prefix), kind == "listing"


def _handler(state: ServerState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self.do_GET()

        def do_GET(self) -> None:
            path = unquote(urlsplit(self.path).path)
            with state.lock:
                state.hits[path] += 1
                state.times.append((time.monotonic(), path))
                fault = state.faults[path].pop(0) if state.faults.get(path) else None
            if fault == "429":
                return self._send(429, b"slow down", {"Retry-After": "0"})
            if fault == "500":
                return self._send(500, b"oops")
            if fault == "slow":
                time.sleep(state.slow_s)
            if path == "/robots.txt":
                return self._send(200, state.robots.encode(), {"Content-Type": "text/plain"})
            if path.startswith("/redirect/"):
                return self._send(302, b"", {"Location": "/" + path.split("/", 2)[2]})
            if path == "/ok":
                return self._send(200, b"fine")
            if path == "/no-head":
                return self._send(405 if self.command == "HEAD" else 200, b"GET only")
            if path == "/loop":
                return self._send(302, b"", {"Location": "/loop"})
            if path.startswith("/redirect-abs/"):
                return self._send(302, b"", {"Location": "http://" + path.split("/", 2)[2]})
            try:
                rel, listing = state.mirror_path(path)
                if listing:
                    names = state.mirror.list(rel)
                    body = json.dumps(
                        [{"name": n.rstrip("/"), "type": "dir" if n.endswith("/") else "file"} for n in names]
                    ).encode()
                else:
                    body = state.mirror.read(rel)
            except (KeyError, SourceFileMissing):
                return self._send(404, b"not found")
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                with state.lock:
                    state.conditional += 1
                return self._send(304, b"", {"ETag": etag})
            if fault == "truncate":
                # promise the whole body, send half, close: a broken transfer
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.end_headers()
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            return self._send(200, body, {"ETag": etag, "Content-Type": "application/octet-stream"})

    return Handler


@dataclass
class SnapshotServer:
    url: str
    state: ServerState

    def live_config(self, **http: object) -> LiveConfig:
        settings: dict[str, object] = dict(min_interval_s=0.0, backoff_s=0.01, retries=3, read_timeout_s=5.0)
        settings.update(http)
        return LiveConfig(
            raw=f"{self.url}/raw",
            api=f"{self.url}/api",
            npm=f"{self.url}/npm",
            facts=f"{self.url}/facts",
            http=HttpConfig(**settings),  # type: ignore[arg-type]
        )


def _serve(root: Path) -> Iterator[SnapshotServer]:
    state = ServerState(mirror=MirrorSource(root))
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield SnapshotServer(url=f"http://127.0.0.1:{server.server_address[1]}", state=state)
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def snapshot_server(mirror: Path) -> Iterator[SnapshotServer]:
    """The real snapshot served over HTTP on 127.0.0.1 (fresh fault queues per test)."""
    yield from _serve(mirror)


@pytest.fixture
def tmp_mirror(tmp_path: Path, mirror: Path) -> Path:
    """A writable copy of the CrewAI, LangChain and LlamaIndex parts of the snapshot (n8n is large)."""
    root = tmp_path / "mirror"
    for platform in ("crewai", "langchain", "llamaindex"):
        shutil.copytree(mirror / platform, root / platform)
    return root


class FakeClock:
    """A limiter's ``clock`` (``now``) and ``sleep``: time moves only when something sleeps on it."""

    def __init__(self) -> None:
        self.t = 0.0
        self.slept = 0.0

    def now(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.t += seconds


@pytest.fixture
def fake_clock() -> FakeClock:
    """Exact time for rate-limit tests, which timed against a real server fail on a busy machine."""
    return FakeClock()
