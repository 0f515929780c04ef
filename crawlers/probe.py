"""The optional link probe: is a tool's documentation (or endpoint) URL alive? -> ``link_status``.

HEAD first, GET when the server refuses HEAD; redirects are followed by hand (at most
``max_redirects``), each target re-checked by the ``NetGuard`` before it is contacted, and each URL has a
total time budget. Results are cached in ``ArtifactDir.cache/probe.json`` so a rerun does not re-probe.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from crawlers.http import RateLimiter, Request, RequestsTransport, Transport, TransportError
from crawlers.netguard import BlockedURL, NetGuard
from crawlers.record import ToolRecord

log = logging.getLogger(__name__)

HEAD_REFUSED = frozenset({403, 405, 501})


@dataclass(frozen=True)
class ProbeConfig:
    """Link-probe settings.

    Args:
        allow_networks: non-public networks the probe may contact anyway (none by default).
        max_redirects: redirects followed before a link counts as broken.
        timeout_s: per request; ``budget_s`` bounds one URL's whole chain.
        min_interval_s: per-host spacing; ``workers``: URLs probed in parallel.
    """

    allow_networks: tuple[str, ...] = ()
    max_redirects: int = 5
    timeout_s: float = 5.0
    budget_s: float = 15.0
    min_interval_s: float = 0.5
    workers: int = 8
    user_agent: str = "EcoAgentLinkProbe/0.1"

    def __post_init__(self) -> None:
        if self.max_redirects < 0 or self.timeout_s <= 0 or self.budget_s <= 0 or self.workers < 1:
            raise ValueError("max_redirects >= 0, timeout_s > 0, budget_s > 0 and workers >= 1 are required")


def probe_target(record: ToolRecord) -> str | None:
    """The URL that stands for a tool: its docs page, else its first endpoint without placeholders."""
    if record.doc_url and record.doc_url.startswith(("http://", "https://")):
        return record.doc_url
    for url in record.endpoints:
        if url.startswith(("http://", "https://")) and not any(c in url for c in "{}$"):
            return url
    return None


class LinkProbe:
    """Checks URLs and maps tools to ``ok`` / ``broken`` / ``timeout`` / ``unchecked``."""

    def __init__(
        self,
        config: ProbeConfig | None = None,
        cache_dir: Path | None = None,
        transport: Transport | None = None,
        guard: NetGuard | None = None,
    ) -> None:
        self.config = config or ProbeConfig()
        self.transport = transport or RequestsTransport(self.config.user_agent)
        self.guard = guard or NetGuard(self.config.allow_networks)
        self.limiter = RateLimiter(self.config.min_interval_s)
        self.cache_path = Path(cache_dir) / "probe.json" if cache_dir else None
        self.reasons: dict[str, str] = {}

    def check(self, url: str) -> str:
        """The status of one URL; why it is not ``ok`` goes to ``self.reasons[url]``."""
        deadline = time.monotonic() + self.config.budget_s
        current, method = url, "HEAD"
        redirects = 0
        while True:
            try:
                self.guard.check(current)
            except BlockedURL as exc:
                self.reasons[url] = str(exc)
                return "unchecked" if current == url else "broken"
            left = deadline - time.monotonic()
            if left <= 0:
                self.reasons[url] = "time budget spent"
                return "timeout"
            self.limiter.wait(urlsplit(current).netloc)
            timeout = min(self.config.timeout_s, left)
            try:
                response = self.transport.send(
                    Request(method, current), (timeout, timeout), read_limit=1024 if method == "GET" else None
                )
            except TransportError as exc:
                self.reasons[url] = exc.reason
                return "timeout" if exc.timeout else "broken"
            if method == "HEAD" and response.status in HEAD_REFUSED:
                method = "GET"
                continue
            if 300 <= response.status < 400 and response.header("Location"):
                redirects += 1
                if redirects > self.config.max_redirects:
                    self.reasons[url] = f"more than {self.config.max_redirects} redirects"
                    return "broken"
                current = urljoin(current, str(response.header("Location")))
                continue
            if response.status < 400:
                return "ok"
            self.reasons[url] = f"HTTP {response.status}"
            return "broken"

    def check_urls(self, urls: Sequence[str]) -> dict[str, str]:
        """Statuses of distinct URLs, in parallel, reusing and updating the on-disk cache."""
        cached: dict[str, str] = {}
        if self.cache_path and self.cache_path.exists():
            try:
                cached = json.loads(self.cache_path.read_text())
            except ValueError:
                cached = {}
        todo = [u for u in dict.fromkeys(urls) if cached.get(u, "unchecked") == "unchecked"]
        with ThreadPoolExecutor(max_workers=self.config.workers) as pool:
            for url, status in zip(todo, pool.map(self.check, todo), strict=True):
                cached[url] = status
        if self.cache_path:
            self.cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.cache_path.with_name(f".probe.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(cached, sort_keys=True))
            os.replace(tmp, self.cache_path)
        return {u: cached[u] for u in urls}

    def check_records(self, records: Sequence[ToolRecord]) -> dict[str, str]:
        """tool_id -> link status (``unchecked`` for tools with no URL to probe)."""
        targets = {r.tool_id: probe_target(r) for r in records}
        statuses = self.check_urls([u for u in targets.values() if u])
        return {tid: statuses[u] if u else "unchecked" for tid, u in targets.items()}
