"""The fetch layer: one HTTP client for the live crawl, behind an injectable transport (httpx-style).

``HttpClient`` adds what a polite, resumable crawler needs on top of a bare transport: robots.txt, a
per-host rate limit, timeouts, retries with exponential backoff on 429/5xx/timeouts/truncated bodies
(honouring ``Retry-After``), and an on-disk cache keyed by URL that revalidates with ETag /
Last-Modified. Cache entries are written atomically, so a crawl killed half-way resumes from what it
already has. Tests swap the default ``RequestsTransport`` for nothing: they point base URLs at a real
server on 127.0.0.1.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import urllib.robotparser
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Protocol
from urllib.parse import urlsplit

import requests

log = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Request:
    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes
    url: str

    def header(self, name: str) -> str | None:
        lower = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lower), None)


class TransportError(OSError):
    """The transport could not get a complete response (connection, timeout, truncated body)."""

    def __init__(self, url: str, reason: str, *, timeout: bool = False) -> None:
        super().__init__(f"{url}: {reason}")
        self.url, self.reason, self.timeout = url, reason, timeout


class Transport(Protocol):
    """Sends one request and returns the full response; raises ``TransportError`` on failure."""

    def send(
        self, request: Request, timeout: tuple[float, float], *, read_limit: int | None = None
    ) -> Response: ...


class RequestsTransport:
    """The default transport: ``requests`` with no automatic redirects (callers decide whom to follow)."""

    def __init__(self, user_agent: str) -> None:
        self.session = requests.Session()
        self.session.headers["User-Agent"] = user_agent
        self.session.trust_env = False  # a proxy from the environment must not reroute the guarded probe

    def send(
        self, request: Request, timeout: tuple[float, float], *, read_limit: int | None = None
    ) -> Response:
        try:
            with self.session.request(
                request.method,
                request.url,
                headers=request.headers,
                timeout=timeout,
                allow_redirects=False,
                stream=True,
            ) as r:
                if read_limit is not None:
                    body = r.raw.read(read_limit, decode_content=True) or b""
                else:
                    body = r.content
                expected = r.headers.get("Content-Length")
                encoded = r.headers.get("Content-Encoding", "identity") != "identity"
                if (
                    read_limit is None
                    and request.method != "HEAD"
                    and expected
                    and not encoded
                    and len(body) < int(expected)
                ):
                    raise TransportError(request.url, f"truncated body ({len(body)} of {expected} bytes)")
                return Response(r.status_code, dict(r.headers), body, request.url)
        except requests.Timeout as exc:
            raise TransportError(request.url, f"timed out ({type(exc).__name__})", timeout=True) from None
        except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError) as exc:
            reason = (
                "truncated body"
                if "IncompleteRead" in str(exc) or "ChunkedEncoding" in type(exc).__name__
                else "connection failed"
            )
            raise TransportError(request.url, f"{reason} ({type(exc).__name__})") from None
        except requests.RequestException as exc:
            raise TransportError(request.url, f"{type(exc).__name__}: {exc}") from None


class FetchError(OSError):
    """A URL could not be fetched after the retries (or robots.txt forbids it)."""

    def __init__(self, url: str, reason: str, status: int | None = None) -> None:
        super().__init__(f"{url}: {reason}")
        self.url, self.reason, self.status = url, reason, status


class NotFound(FetchError):
    """The server answered 404/410."""


class RobotsDisallowed(FetchError):
    """robots.txt of the host forbids our user agent this path."""


@dataclass(frozen=True)
class HttpConfig:
    """Politeness and robustness settings of the live crawl.

    Args:
        user_agent: sent with every request and matched against robots.txt.
        min_interval_s: at least this long between two requests to one host.
        connect_timeout_s, read_timeout_s: per request.
        retries: extra attempts after a 429/5xx/timeout/truncated body; backoff doubles from ``backoff_s``.
        max_retry_after_s: cap on a server's ``Retry-After``.
        cache_ttl_s: a cached response younger than this is used without asking the server (resume).
        respect_robots: obey robots.txt (on by default; off only for one's own servers).
    """

    user_agent: str = "EcoAgentCrawler/0.1 (+https://github.com/ecoagent)"
    min_interval_s: float = 1.0
    connect_timeout_s: float = 5.0
    read_timeout_s: float = 20.0
    retries: int = 4
    backoff_s: float = 1.0
    max_retry_after_s: float = 60.0
    cache_ttl_s: float = 86400.0
    respect_robots: bool = True

    def __post_init__(self) -> None:
        if self.retries < 0 or self.min_interval_s < 0 or self.backoff_s < 0:
            raise ValueError("retries, min_interval_s and backoff_s must be >= 0")
        if self.connect_timeout_s <= 0 or self.read_timeout_s <= 0:
            raise ValueError("timeouts must be > 0")


class RateLimiter:
    """At most one request per ``interval`` seconds per host (thread-safe).

    The limiter spaces the moments it lets requests go, so it reads time from ``clock`` and waits with
    ``sleep``; both are injectable so that tests can check the spacing exactly instead of timing a server.
    """

    def __init__(
        self,
        interval: float,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.interval = interval
        self.clock = clock
        self.sleep = sleep
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def wait(self, host: str) -> float:
        """Block until a request to ``host`` may go; return the moment (by ``clock``) it was let go."""
        with self._lock:
            now = self.clock()
            start = max(now, self._next.get(host, now))
            self._next[host] = start + self.interval
        if start > now:
            self.sleep(start - now)
        return start


class DiskCache:
    """URL -> (meta JSON, body) files under one folder; writes are atomic (temp file + rename)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _paths(self, url: str) -> tuple[Path, Path]:
        key = hashlib.sha256(url.encode()).hexdigest()
        return self.root / f"{key}.json", self.root / f"{key}.body"

    def get(self, url: str) -> tuple[dict[str, object], bytes] | None:
        meta_path, body_path = self._paths(url)
        try:
            meta = json.loads(meta_path.read_text())
            body = body_path.read_bytes()
        except (OSError, ValueError):
            return None
        if meta.get("sha256") != hashlib.sha256(body).hexdigest():
            return None  # a body from an interrupted write: refetch
        return meta, body

    def put(self, url: str, response: Response) -> None:
        meta_path, body_path = self._paths(url)
        for path, data in (
            (body_path, response.body),
            (
                meta_path,
                json.dumps(
                    {
                        "url": url,
                        "status": response.status,
                        "etag": response.header("ETag"),
                        "last_modified": response.header("Last-Modified"),
                        "fetched_at": time.time(),
                        "sha256": hashlib.sha256(response.body).hexdigest(),
                    }
                ).encode(),
            ),
        ):
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_bytes(data)
            os.replace(tmp, path)

    def touch(self, url: str) -> None:
        """Mark a revalidated entry fresh again."""
        found = self.get(url)
        if found is None:
            return
        meta, _ = found
        meta["fetched_at"] = time.time()
        meta_path, _ = self._paths(url)
        tmp = meta_path.with_name(f".{meta_path.name}.tmp")
        tmp.write_text(json.dumps(meta))
        os.replace(tmp, meta_path)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError):
        return None


class HttpClient:
    """GET with robots.txt, a per-host rate limit, retries with backoff and a revalidating disk cache."""

    def __init__(
        self,
        config: HttpConfig | None = None,
        cache_dir: Path | None = None,
        transport: Transport | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.config = config or HttpConfig()
        self.transport = transport or RequestsTransport(self.config.user_agent)
        self.cache = DiskCache(cache_dir) if cache_dir is not None else None
        self.sleep = sleep  # every wait of the client (retries, rate limit); injectable like the transport
        self.limiter = RateLimiter(self.config.min_interval_s, sleep=sleep)
        self._robots: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        self._robots_lock = threading.Lock()
        self.stats = {"requests": 0, "cache_hits": 0, "revalidated": 0, "retries": 0}

    @property
    def timeout(self) -> tuple[float, float]:
        return (self.config.connect_timeout_s, self.config.read_timeout_s)

    def _send(self, request: Request) -> Response:
        """One request after the rate limit, retried on 429/5xx, timeouts and broken bodies."""
        host = urlsplit(request.url).netloc
        delay = self.config.backoff_s
        last: str = ""
        for attempt in range(self.config.retries + 1):
            self.limiter.wait(host)
            self.stats["requests"] += 1
            wait = delay
            try:
                response = self.transport.send(request, self.timeout)
            except TransportError as exc:
                last = exc.reason
            else:
                if response.status not in RETRY_STATUSES:
                    return response
                last = f"HTTP {response.status}"
                hinted = _retry_after(response.header("Retry-After"))
                if hinted is not None:
                    wait = min(hinted, self.config.max_retry_after_s)
            if attempt < self.config.retries:
                self.stats["retries"] += 1
                log.info("retrying %s after %s (attempt %d, %.2fs)", request.url, last, attempt + 1, wait)
                self.sleep(wait)
                delay *= 2
        raise FetchError(request.url, f"gave up after {self.config.retries + 1} attempts: {last}")

    def allowed(self, url: str) -> bool:
        """What robots.txt of the URL's host says for our user agent (no robots.txt: allowed)."""
        if not self.config.respect_robots:
            return True
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        with self._robots_lock:
            if origin not in self._robots:
                parser: urllib.robotparser.RobotFileParser | None = None
                try:
                    body = self._fetch(f"{origin}/robots.txt")
                    parser = urllib.robotparser.RobotFileParser()
                    parser.parse(body.decode("utf-8", "replace").splitlines())
                except NotFound:
                    pass
                except FetchError as exc:
                    log.warning("robots.txt of %s unreadable (%s); treating as allowed", origin, exc.reason)
                self._robots[origin] = parser
            parser = self._robots[origin]
        return parser is None or parser.can_fetch(self.config.user_agent, url)

    def get(self, url: str) -> bytes:
        """The body of a 200 response (from the cache when fresh); ``FetchError`` otherwise."""
        return self._fetch(url, check_robots=True)

    def _fetch(self, url: str, check_robots: bool = False) -> bytes:
        cached = self.cache.get(url) if self.cache else None
        if (
            cached is not None
            and time.time() - float(cached[0].get("fetched_at", 0)) < self.config.cache_ttl_s
        ):  # type: ignore[arg-type]
            self.stats["cache_hits"] += 1
            if cached[0].get("status") in (404, 410):
                raise NotFound(url, f"HTTP {cached[0]['status']} (cached)", int(cached[0]["status"]))  # type: ignore[call-overload]
            return cached[1]
        if check_robots and not self.allowed(url):
            raise RobotsDisallowed(url, "disallowed by robots.txt")
        headers: dict[str, str] = {}
        if cached is not None and cached[0].get("status") == 200:
            if cached[0].get("etag"):
                headers["If-None-Match"] = str(cached[0]["etag"])
            if cached[0].get("last_modified"):
                headers["If-Modified-Since"] = str(cached[0]["last_modified"])
        response = self._send(Request("GET", url, headers))
        if response.status == 304 and cached is not None:
            self.stats["revalidated"] += 1
            assert self.cache is not None
            self.cache.touch(url)
            return cached[1]
        if response.status in (404, 410):
            if self.cache is not None:
                # a known absence is a result too: a resumed crawl does not ask again
                self.cache.put(url, Response(response.status, {}, b"", url))
            raise NotFound(url, f"HTTP {response.status}", response.status)
        if response.status != 200:
            raise FetchError(url, f"HTTP {response.status}", response.status)
        if self.cache is not None:
            self.cache.put(url, response)
        return response.body
