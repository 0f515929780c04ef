"""A Hub-compatible HTTP server on 127.0.0.1, just enough of the Hugging Face Hub API for the publisher's tests.

Covers what huggingface_hub's ``create_repo`` + ``upload_folder`` use without Xet (validate-yaml, preupload,
the git-LFS batch API with basic PUT transfer and verify, NDJSON commits with inline base64 files and LFS
pointers) and what ``hf_hub_download`` / ``HfFileSystem`` / ``datasets.load_dataset`` read back (repo info
with siblings, tree listing, paths-info, ``resolve`` with X-Repo-Commit / ETag / X-Linked-* headers and
ranges). Files are stored on disk under the folder the server is given. Every request line and every
Authorization header it received are recorded, so tests can assert on what the client sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".parquet",)


def git_blob_sha1(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    repo_id: str
    repo_type: str
    commits: list[str] = field(default_factory=list)
    # path -> (sha256 of content, is_lfs)
    files: dict[str, tuple[str, bool]] = field(default_factory=dict)

    @property
    def head(self) -> str:
        return self.commits[-1] if self.commits else "0" * 40


class HubState:
    """Repos and blobs of the fake Hub (blobs on disk, content-addressed by sha256)."""

    def __init__(self, root: Path, token: str | None) -> None:
        self.root = Path(root)
        self.blobs = self.root / "blobs"
        self.blobs.mkdir(parents=True, exist_ok=True)
        self.token = token
        self.repos: dict[tuple[str, str], Repo] = {}
        self.requests: list[str] = []
        self.auth_headers: list[str] = []
        # route name -> status codes to answer its next requests with (retry tests), e.g. {"create": [503]}
        self.fail: dict[str, list[int]] = {}
        self.lock = threading.Lock()

    def put_blob(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        path = self.blobs / sha
        if not path.exists():
            path.write_bytes(data)
        return sha

    def blob(self, sha: str) -> bytes:
        return (self.blobs / sha).read_bytes()


class HubServer:
    """Run ``HubState`` behind a threaded HTTP server; use as a context manager.

    Args:
        root: where uploaded files are stored.
        token: the token write calls must carry (``Authorization: Bearer <token>``); None accepts any.
    """

    def __init__(self, root: Path, token: str | None = None) -> None:
        self.state = HubState(root, token)
        handler = type("Handler", (_Handler,), {"state": self.state})
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        handler.base_url = self.url
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> HubServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    state: HubState
    base_url: str

    # --- plumbing ---------------------------------------------------------------------------------------
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # request lines are recorded in state.requests; nothing goes to stderr

    def _send(
        self,
        status: int,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(data).encode(), headers)

    def _error(self, status: int, code: str, message: str) -> None:
        self._json(status, {"error": message}, {"X-Error-Code": code, "X-Error-Message": message})

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            return self.rfile.read(length)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _authorized(self) -> bool:
        auth = self.headers.get("Authorization")
        if auth:
            self.state.auth_headers.append(auth)
        return self.state.token is None or auth == f"Bearer {self.state.token}"

    def _handle(self) -> None:
        url = urlsplit(self.path)
        path, query = url.path, parse_qs(url.query)
        with self.state.lock:
            self.state.requests.append(f"{self.command} {url.path}")
        for pattern, method in ROUTES:
            if method != self.command and not (method == "GET" and self.command == "HEAD"):
                continue
            match = re.fullmatch(pattern, path)
            if match:
                groups = {k: unquote(v) if v is not None else None for k, v in match.groupdict().items()}
                route = ROUTES[(pattern, method)]
                with self.state.lock:
                    queue = self.state.fail.get(route) or []
                    fail = queue.pop(0) if queue else None
                if fail is not None:
                    self._body()
                    self._error(fail, "Injected", f"injected failure {fail}")
                    return
                getattr(self, "route_" + ROUTES[(pattern, method)])(query=query, **groups)
                return
        self._body()
        self._error(404, "NotFound", f"no route for {self.command} {unquote(path)}")

    do_GET = do_POST = do_PUT = do_HEAD = _handle

    def _repo(self, kind: str, repo_id: str) -> Repo | None:
        return self.state.repos.get((kind.rstrip("s"), repo_id))

    def _missing_repo(self) -> None:
        self._error(404, "RepoNotFound", "Repository not found")

    # --- write side -------------------------------------------------------------------------------------
    def route_create(self, query: dict[str, list[str]]) -> None:
        data = json.loads(self._body() or b"{}")
        if not self._authorized():
            self._error(401, "Unauthorized", "Invalid credentials")
            return
        kind = data.get("type") or "model"
        repo_id = f"{data['organization']}/{data['name']}" if data.get("organization") else data["name"]
        prefix = "" if kind == "model" else f"{kind}s/"
        repo_url = f"{self.base_url}/{prefix}{repo_id}"
        with self.state.lock:
            if (kind, repo_id) in self.state.repos:
                self._json(409, {"error": "You already created this repo", "url": repo_url})
                return
            self.state.repos[(kind, repo_id)] = Repo(repo_id, kind)
        self._json(200, {"url": repo_url, "name": repo_id, "id": repo_id})

    def route_validate_yaml(self, query: dict[str, list[str]]) -> None:
        self._body()
        self._json(200, {"errors": [], "warnings": []})

    def route_preupload(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str) -> None:
        data = json.loads(self._body())
        if not self._authorized():
            self._error(401, "Unauthorized", "Invalid credentials")
            return
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        files = []
        for f in data["files"]:
            lfs = f["path"].endswith(LFS_SUFFIXES) or f["size"] > 1_000_000
            files.append(
                {"path": f["path"], "uploadMode": "lfs" if lfs else "regular", "shouldIgnore": False}
            )
        self._json(200, {"files": files, "commitOid": repo.head})

    def route_lfs_batch(self, query: dict[str, list[str]], kind: str, repo_id: str) -> None:
        data = json.loads(self._body())
        if not self._authorized():
            self._error(401, "Unauthorized", "Invalid credentials")
            return
        objects = []
        for obj in data["objects"]:
            entry: dict[str, Any] = {"oid": obj["oid"], "size": obj["size"]}
            if not (self.state.blobs / obj["oid"]).exists():
                entry["actions"] = {
                    "upload": {"href": f"{self.base_url}/lfs-upload/{obj['oid']}", "header": {}},
                    "verify": {"href": f"{self.base_url}/lfs-verify", "header": {}},
                }
            objects.append(entry)
        self._json(200, {"transfer": "basic", "objects": objects})

    def route_lfs_upload(self, query: dict[str, list[str]], oid: str) -> None:
        data = self._body()
        if hashlib.sha256(data).hexdigest() != oid:
            self._error(400, "BadRequest", "sha256 mismatch")
            return
        self.state.put_blob(data)
        self._send(200, b"")

    def route_lfs_verify(self, query: dict[str, list[str]]) -> None:
        data = json.loads(self._body())
        ok = (self.state.blobs / data["oid"]).exists()
        self._json(200 if ok else 404, {"ok": ok})

    def route_commit(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str) -> None:
        lines = [json.loads(line) for line in self._body().splitlines() if line.strip()]
        if not self._authorized():
            self._error(401, "Unauthorized", "Invalid credentials")
            return
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        with self.state.lock:
            message = ""
            for item in lines:
                key, value = item["key"], item["value"]
                if key == "header":
                    message = value.get("summary", "")
                elif key == "file":
                    content = base64.b64decode(value["content"])
                    repo.files[value["path"]] = (self.state.put_blob(content), False)
                elif key == "lfsFile":
                    if not (self.state.blobs / value["oid"]).exists():
                        self._error(400, "BadRequest", f"LFS object {value['oid']} was not uploaded")
                        return
                    repo.files[value["path"]] = (value["oid"], True)
                elif key in ("deletedFile", "deletedFolder"):
                    for p in [
                        p for p in repo.files if p == value["path"] or p.startswith(value["path"] + "/")
                    ]:
                        del repo.files[p]
            state = json.dumps(sorted(repo.files.items())) + repo.head + message
            repo.commits.append(hashlib.sha1(state.encode()).hexdigest())
        prefix = "" if repo.repo_type == "model" else f"{repo.repo_type}s/"
        self._json(
            200,
            {
                "success": True,
                "commitOid": repo.head,
                "commitUrl": f"{self.base_url}/{prefix}{repo_id}/commit/{repo.head}",
            },
        )

    # --- read side --------------------------------------------------------------------------------------
    def _entry(self, repo: Repo, path: str) -> dict[str, Any]:
        sha, lfs = repo.files[path]
        data = self.state.blob(sha)
        entry: dict[str, Any] = {"type": "file", "path": path, "size": len(data), "oid": git_blob_sha1(data)}
        if lfs:
            entry["lfs"] = {"oid": sha, "size": len(data), "pointerSize": 134}
        return entry

    def _dirs(self, repo: Repo) -> set[str]:
        return {"/".join(p.split("/")[:i]) for p in repo.files for i in range(1, p.count("/") + 1)}

    def _resolve_rev(self, repo: Repo, rev: str) -> bool:
        return rev in ("main", repo.head) or rev in repo.commits

    def route_info(
        self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str | None = None
    ) -> None:
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        if rev is not None and not self._resolve_rev(repo, rev):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return
        org = repo_id.split("/")[0]
        self._json(
            200,
            {
                "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                "id": repo_id,
                "author": org,
                "sha": repo.head,
                "private": False,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "lastModified": "2026-01-01T00:00:00.000Z",
                "createdAt": "2026-01-01T00:00:00.000Z",
                "siblings": [{"rfilename": p} for p in sorted(repo.files)],
                "cardData": {},
                "usedStorage": sum(self._entry(repo, p)["size"] for p in repo.files),
            },
        )

    def route_tree(
        self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str, path: str = ""
    ) -> None:
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        if not self._resolve_rev(repo, rev):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return
        path = path.strip("/")
        recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
        dirs = self._dirs(repo)
        if path and path not in dirs:
            self._error(404, "EntryNotFound", f"{path} does not exist on {rev}")
            return
        prefix = f"{path}/" if path else ""
        entries = []
        for d in sorted(dirs):
            if d.startswith(prefix) and (recursive or "/" not in d[len(prefix) :]):
                entries.append(
                    {"type": "directory", "path": d, "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0}
                )
        for p in sorted(repo.files):
            if p.startswith(prefix) and (recursive or "/" not in p[len(prefix) :]):
                entries.append(self._entry(repo, p))
        if query.get("expand", ["false"])[0].lower() in ("1", "true"):
            for e in entries:
                e["lastCommit"] = {"id": repo.head, "title": "upload", "date": "2026-01-01T00:00:00.000Z"}
        self._json(200, entries)

    def route_paths_info(self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str) -> None:
        body = self._body()
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(body).get("paths", [])
        else:
            paths = parse_qs(body.decode()).get("paths", [])
        dirs = self._dirs(repo)
        out = []
        for p in paths:
            p = p.strip("/")
            if p in repo.files:
                out.append(self._entry(repo, p))
            elif p in dirs or p == "":
                out.append(
                    {"type": "directory", "path": p, "oid": hashlib.sha1(p.encode()).hexdigest(), "size": 0}
                )
        self._json(200, out)

    def route_resolve(
        self, query: dict[str, list[str]], kind: str, repo_id: str, rev: str, path: str
    ) -> None:
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        if not self._resolve_rev(repo, rev):
            self._error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            return
        if path not in repo.files:
            self._json(
                404,
                {"error": "Entry not found"},
                {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": repo.head},
            )
            return
        entry = self._entry(repo, path)
        data = self.state.blob(repo.files[path][0])
        headers = {"X-Repo-Commit": repo.head, "ETag": f'"{entry["oid"]}"', "Accept-Ranges": "bytes"}
        if "lfs" in entry:
            headers["X-Linked-Etag"] = f'"{entry["lfs"]["oid"]}"'
            headers["X-Linked-Size"] = str(len(data))
        rng = self.headers.get("Range")
        match = re.fullmatch(r"bytes=(\d*)-(\d*)", rng or "")
        if match and data:
            start_s, end_s = match.groups()
            if start_s:
                start, end = int(start_s), int(end_s) if end_s else len(data) - 1
            else:
                start, end = max(0, len(data) - int(end_s)), len(data) - 1
            end = min(end, len(data) - 1)
            if start > end:
                self._send(416, b"", {"Content-Range": f"bytes */{len(data)}", **headers})
                return
            headers["Content-Range"] = f"bytes {start}-{end}/{len(data)}"
            self._send(206, data[start : end + 1], headers, content_type="application/octet-stream")
            return
        self._send(200, data, headers, content_type="application/octet-stream")

    def route_refs(self, query: dict[str, list[str]], kind: str, repo_id: str) -> None:
        repo = self._repo(kind, repo_id)
        if repo is None:
            self._missing_repo()
            return
        self._json(
            200,
            {
                "branches": [{"name": "main", "ref": "refs/heads/main", "targetCommit": repo.head}],
                "converts": [],
                "tags": [],
            },
        )


_REPO = r"(?P<repo_id>[\w.-]+/[\w.-]+)"
_KIND = r"(?P<kind>datasets|models|spaces)"
_REV = r"(?P<rev>[^/]+)"
ROUTES: dict[tuple[str, str], str] = {
    (r"/api/repos/create", "POST"): "create",
    (r"/api/validate-yaml", "POST"): "validate_yaml",
    (rf"/api/{_KIND}/{_REPO}/preupload/{_REV}", "POST"): "preupload",
    (rf"/api/{_KIND}/{_REPO}/commit/{_REV}", "POST"): "commit",
    (rf"/api/{_KIND}/{_REPO}/paths-info/{_REV}", "POST"): "paths_info",
    (rf"/api/{_KIND}/{_REPO}/tree/{_REV}(?:/(?P<path>.*))?", "GET"): "tree",
    (rf"/api/{_KIND}/{_REPO}/refs", "GET"): "refs",
    (rf"/api/{_KIND}/{_REPO}/revision/{_REV}", "GET"): "info",
    (rf"/api/{_KIND}/{_REPO}", "GET"): "info",
    (rf"/{_KIND}/{_REPO}\.git/info/lfs/objects/batch", "POST"): "lfs_batch",
    (r"/lfs-upload/(?P<oid>[0-9a-f]{64})", "PUT"): "lfs_upload",
    (r"/lfs-verify", "POST"): "lfs_verify",
    (rf"/{_KIND}/{_REPO}/resolve/{_REV}/(?P<path>.+)", "GET"): "resolve",
}
