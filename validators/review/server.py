"""The labelling page of the manual check: a local web server on 127.0.0.1 over the sample and labels file.

Stdlib ``http.server`` only: the page must run on any machine that has the sample. The page shows one
item at a time (query, tool name, description; never the validator's score, so labels stay blind),
takes a label by button or key, and POSTs it; the server appends it to ``review/labels.jsonl`` and
fsyncs before answering, so a closed browser loses nothing and a reload resumes at the first
unlabelled item. All text reaches the page as JSON and is set with ``textContent``, and the CSP
forbids inline script, so HTML in a tool description is shown, never run.
"""

from __future__ import annotations

import errno
import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from ecoagent.artifacts import ArtifactDir
from validators.review.labels import append_label, read_labels

log = logging.getLogger(__name__)

STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/style.css": ("style.css", "text/css; charset=utf-8"),
}
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
MAX_BODY = 4096


MAX_ARGUMENTS = 15
MAX_SIBLINGS = 8


def _group(tool_id: str) -> str | None:
    """The node / server / toolkit a tool belongs to: ``n8n:slack`` of ``n8n:slack:message_post``."""
    parts = tool_id.split(":")
    return ":".join(parts[:2]) if len(parts) > 2 else None


def tool_context(tools: pl.DataFrame | None) -> dict[str, dict[str, Any]]:
    """Per tool id what a labeller needs beyond a short description: arguments, docs link, tags, and the
    other tools of the same n8n node or LlamaIndex spec (94 of 113 n8n items say less than 40 characters)."""
    if tools is None:
        return {}
    rows = tools.select("tool_id", "name", "doc_url", "tags", "arguments").to_dicts()
    groups: dict[str, list[str]] = {}
    for r in rows:
        g = _group(r["tool_id"])
        if g:
            groups.setdefault(g, []).append(r["name"])
    out = {}
    for r in rows:
        g = _group(r["tool_id"])
        siblings = [n for n in groups.get(g or "", []) if n != r["name"]]
        args = [
            {k: a.get(k) for k in ("name", "type", "required", "description")} for a in r["arguments"] or []
        ]
        out[r["tool_id"]] = {
            "doc_url": r["doc_url"] if (r["doc_url"] or "").startswith(("https://", "http://")) else None,
            "tags": list(r["tags"] or []),
            "arguments": args[:MAX_ARGUMENTS],
            "arguments_total": len(args),
            "group": g,
            "siblings": siblings[:MAX_SIBLINGS],
            "siblings_total": len(siblings),
        }
    return out


class ReviewState:
    """The items of the sample (in sample order) and the labels file they are labelled into."""

    def __init__(self, sample: pl.DataFrame, labels_path: Path, tools: pl.DataFrame | None = None) -> None:
        if sample.height == 0:
            raise ValueError("the review sample is empty")
        context = tool_context(tools)
        self.items = [
            {
                "item_id": r["item_id"],
                "query": r["query"],
                "tool_id": r["tool_id"],
                "tool_name": r["tool_name"],
                "tool_description": r["tool_description"],
                "platform": r["platform"],
                "context": context.get(r["tool_id"]),
            }
            for r in sample.iter_rows(named=True)
        ]
        self.ids = {i["item_id"] for i in self.items}
        self.labels_path = labels_path

    def snapshot(self) -> dict[str, Any]:
        labels = {k: v["label"] for k, v in read_labels(self.labels_path).items() if k in self.ids}
        return {"items": self.items, "labels": labels}

    def label(self, item_id: str, label: str) -> dict[str, Any]:
        if item_id not in self.ids:
            raise ValueError(f"unknown item {item_id!r}")
        append_label(self.labels_path, item_id, label)
        labels = {k for k in read_labels(self.labels_path) if k in self.ids}
        return {"ok": True, "labeled": len(labels), "total": len(self.items)}


def make_handler(state: ReviewState) -> type[BaseHTTPRequestHandler]:
    """A request handler class bound to ``state``."""

    class Handler(BaseHTTPRequestHandler):
        server_version = "ecoagent-review"

        def log_message(self, fmt: str, *args: Any) -> None:
            log.debug("review: " + fmt, *args)

        def _send(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in HEADERS.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, data: Any) -> None:
            self._send(status, json.dumps(data).encode(), "application/json")

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            path = self.path.split("?", 1)[0]
            if path == "/api/state":
                self._json(HTTPStatus.OK, state.snapshot())
            elif path in STATIC:
                name, ctype = STATIC[path]
                # the page files sit beside this module so the package data globs (*.html, *.js, *.css) ship them
                body = resources.files("validators.review").joinpath(name).read_bytes()
                self._send(HTTPStatus.OK, body, ctype)
            else:
                self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802
            if self.path != "/api/label":
                self._json(HTTPStatus.NOT_FOUND, {"error": "not found"})
                return
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                self._json(HTTPStatus.BAD_REQUEST, {"error": "bad body size"})
                return
            try:
                body = json.loads(self.rfile.read(length))
                result = state.label(str(body.get("item_id", "")), str(body.get("label", "")))
            except (ValueError, AttributeError) as exc:
                self._json(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            self._json(HTTPStatus.OK, result)

    return Handler


class PortBusy(ValueError):
    """The labelling page's port is taken; the CLI prints this as its one error line."""


class ReviewServer:
    """The labelling server; ``port=0`` picks a free port (see ``url``).

    Example:
        >>> server = ReviewServer(Path("out"))  # doctest: +SKIP
        >>> server.start(); print(server.url); server.stop()  # doctest: +SKIP
    """

    def __init__(self, out: Path, port: int = 0, labels: Path | None = None) -> None:
        art = ArtifactDir(Path(out))
        sample = pl.read_parquet(art.require(art.review_sample, "review sample"))
        tools = pl.read_parquet(art.tools) if art.tools.exists() else None
        self.state = ReviewState(sample, Path(labels) if labels else art.review_labels, tools)
        try:
            self.httpd = ThreadingHTTPServer(("127.0.0.1", port), make_handler(self.state))
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            raise PortBusy(
                f"port {port} on 127.0.0.1 is busy (another `ecoagent review` running?): "
                "stop it, or pass --port with a free port (--port 0 picks one)"
            ) from None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/"

    def start(self) -> None:
        """Serve in a background thread (for tests and notebooks)."""
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def serve_forever(self) -> None:
        self.httpd.serve_forever()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._thread:
            self._thread.join(timeout=5)
