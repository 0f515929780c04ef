"""A loopback HTTP server in the harness process: what mcp-server-fetch reads, and where its faults come from.

This machine has no network, so without a server to read from, fetch fails every call and no fault of
an HTTP upstream can be shown. The stub listens on 127.0.0.1 (a port the kernel picks) and plays two
roles on that one socket:

- the **origin**: ``/docs/<name>`` is a small text document, ``/robots.txt`` allows every agent. A
  fault makes every document answer one status instead (429 with ``Retry-After``, 503), until
  ``recover``; robots.txt is never faulted, so a failed call has one cause, the document's status.
- an **authenticating forward proxy**: a request in absolute form (``GET http://host:port/...``) must
  carry ``Proxy-Authorization: Basic`` with the stub's credential, else 407; with it, the stub serves
  the request itself as the origin. It forwards nowhere else (502): nothing leaves the machine.

The proxy is how a server can honestly lack a credential: mcp-server-fetch takes its proxy, with the
user and password in the URL, from ``HTTP_PROXY`` (httpx reads it), and sends them as
``Proxy-Authorization``. Started with the proxy URL minus its credential, every call gets the 407.

Every response is counted by (role, status), so a run reports what the stub really answered.
"""

from __future__ import annotations

import base64
import secrets
import socket
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

ROBOTS = b"User-agent: *\nAllow: /\n"
USER = "live"


class _Server(ThreadingHTTPServer):
    """Handler threads are joined on close (``block_on_close``), so a closed stub leaves no thread."""

    daemon_threads = False
    block_on_close = True
    stub: HttpStub


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = 5  # a client that stops mid-request cannot hold a handler thread (and so close) for long

    def do_GET(self) -> None:
        self._answer(body=True)

    def do_HEAD(self) -> None:
        self._answer(body=False)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Silent: the counts are the record (a line per request would flood the run's output)."""

    def _answer(self, body: bool) -> None:
        stub = self.server.stub
        role, path = "origin", self.path
        if self.path.startswith(("http://", "https://")):
            role = "proxy"
            if self.headers.get("Proxy-Authorization") != stub.proxy_authorization:
                self._send(
                    role,
                    407,
                    b"proxy authentication required\n",
                    body,
                    {"Proxy-Authenticate": 'Basic realm="live"'},
                )
                return
            target = urlsplit(self.path)
            if (
                target.scheme != "http"
                or target.port != stub.port
                or target.hostname not in ("127.0.0.1", "localhost")
            ):
                self._send(role, 502, b"this proxy forwards to its own origin only\n", body)
                return
            path = target.path or "/"
        if path == "/robots.txt":
            self._send(role, 200, ROBOTS, body)
        elif path.startswith("/docs/") and len(path) > len("/docs/"):
            status, retry_after = stub.fault
            if status:
                headers = {"Retry-After": str(retry_after)} if retry_after else {}
                self._send(role, status, f"status {status} from the live stub\n".encode(), body, headers)
            else:
                self._send(role, 200, stub.document(path[len("/docs/") :]), body)
        else:
            self._send(role, 404, b"not found\n", body)

    def _send(
        self, role: str, status: int, payload: bytes, body: bool, headers: dict[str, str] | None = None
    ) -> None:
        self.server.stub.count(role, status)  # before the client can read it: its next look sees the count
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(payload)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if body:
            self.wfile.write(payload)


class HttpStub:
    """The loopback origin and proxy; a context manager that closes its socket and threads on exit.

    Args:
        retry_after: seconds in a 429's ``Retry-After`` (fetch does not wait for it; the header is what a
            real rate limiter sends, and the call still fails).
    """

    def __init__(self, retry_after: int = 1) -> None:
        self.retry_after = retry_after
        self._token = secrets.token_hex(8)  # per run: nothing outside this run can hold it
        self.proxy_authorization = "Basic " + base64.b64encode(f"{USER}:{self._token}".encode()).decode()
        self.fault: tuple[int, int] = (0, 0)  # (status, Retry-After); (0, 0) = documents answer 200
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="live-http-stub", daemon=True)
        self._thread.start()
        self._closed = False

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def proxy_url(self, credential: bool = True) -> str:
        """The proxy setting a server is started with: with the credential in the URL, or without it."""
        return f"http://{USER}:{self._token}@127.0.0.1:{self.port}" if credential else self.base_url

    def document(self, name: str) -> bytes:
        return f"Live document {name}\n\nA small text page served by the harness's loopback stub.\n".encode()

    def fail(self, status: int) -> None:
        """Every document request answers ``status`` from now on (429 carries ``Retry-After``)."""
        if not 400 <= status < 600:
            raise ValueError(f"a fault status is 4xx or 5xx, got {status}")
        self.fault = (status, self.retry_after if status in (429, 503) else 0)

    def recover(self) -> None:
        self.fault = (0, 0)

    def count(self, role: str, status: int) -> None:
        with self._lock:
            self._counts[f"{role} {status}"] += 1

    def responses(self) -> dict[str, int]:
        """Responses sent so far, by ``"<origin|proxy> <status>"``."""
        with self._lock:
            return dict(sorted(self._counts.items()))

    def close(self) -> bool:
        """Stop serving, close the socket, join the threads; True when nothing of the stub is left."""
        if not self._closed:
            self._server.shutdown()
            self._server.server_close()  # joins the handler threads (block_on_close)
            self._thread.join(10)
            self._closed = True
        return self.closed()

    def closed(self) -> bool:
        """True when the serving thread is gone and nothing accepts on the port any more."""
        if self._thread.is_alive():
            return False
        with socket.socket() as s:
            s.settimeout(1)
            return s.connect_ex(("127.0.0.1", self.port)) != 0

    def __enter__(self) -> HttpStub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
