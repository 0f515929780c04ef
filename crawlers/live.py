"""Live mode: the same mirror-relative paths the crawlers read, fetched from their upstream URLs.

Each ``Route`` maps a folder of the snapshot to where upstream keeps it (a GitHub repo at a commit, an
npm package version). Files come from ``raw`` (raw.githubusercontent.com) or ``npm`` (unpkg.com), folder
listings from the GitHub contents API (``api``). The ``code_facts*.jsonl`` sidecars have no upstream
(they are facts read from source code), so they come from ``facts`` when set, else from the local
mirror. Every base URL is configurable, which is how tests point the crawl at 127.0.0.1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from crawlers.http import FetchError, HttpClient, HttpConfig, NotFound, Transport
from crawlers.source import MirrorSource, SourceFileMissing


@dataclass(frozen=True)
class Route:
    """``mirror_prefix`` (a snapshot path or folder) is ``upstream_prefix`` inside ``origin``.

    Args:
        kind: ``github`` (``origin`` is ``owner/repo``, pinned at ``ref``) or ``npm`` (``origin`` is
            the package, ``ref`` its version).
    """

    mirror_prefix: str
    kind: Literal["github", "npm"]
    origin: str
    ref: str
    upstream_prefix: str


CREWAI_REF = "f4731f5025f861c78e3af0487cc80bf5e7c64782"
LANGCHAIN_DOCS_REF = "7df7f3077ed710a8e250bba72af849134c3254b5"
LLAMAINDEX_REF = "3d0b8a9e53538767fe34a5717f07f9ce3dd33169"
CREWAI_TOOLS = "lib/crewai-tools/src/crewai_tools"

ROUTES: tuple[Route, ...] = (
    Route(
        "crewai/tool.specs.json", "github", "crewAIInc/crewAI", CREWAI_REF, "lib/crewai-tools/tool.specs.json"
    ),
    Route(
        "crewai/readmes/lib-crewai-tools-README.md",
        "github",
        "crewAIInc/crewAI",
        CREWAI_REF,
        "lib/crewai-tools/README.md",
    ),
    Route("crewai/readmes/tools", "github", "crewAIInc/crewAI", CREWAI_REF, f"{CREWAI_TOOLS}/tools"),
    Route("crewai/readmes/aws", "github", "crewAIInc/crewAI", CREWAI_REF, f"{CREWAI_TOOLS}/aws"),
    Route("crewai/docs", "github", "crewAIInc/crewAI", CREWAI_REF, "docs/edge/en/tools"),
    Route(
        "langchain/docs/src/oss/integrations/tools",
        "github",
        "langchain-ai/docs",
        LANGCHAIN_DOCS_REF,
        "src/oss/integrations/tools",
    ),
    Route(
        "llamaindex/integrations",
        "github",
        "run-llama/llama_index",
        LLAMAINDEX_REF,
        "llama-index-integrations/tools",
    ),
    Route("n8n/nodes-base/types.nodes.json", "npm", "n8n-nodes-base", "2.41.2", "dist/types/nodes.json"),
    Route(
        "n8n/nodes-base/types.credentials.json",
        "npm",
        "n8n-nodes-base",
        "2.41.2",
        "dist/types/credentials.json",
    ),
    Route("n8n/nodes-base/known.nodes.json", "npm", "n8n-nodes-base", "2.41.2", "dist/known/nodes.json"),
    Route(
        "n8n/nodes-base/known.credentials.json",
        "npm",
        "n8n-nodes-base",
        "2.41.2",
        "dist/known/credentials.json",
    ),
    Route("n8n/nodes-base/codex", "npm", "n8n-nodes-base", "2.41.2", "dist"),
    Route(
        "n8n/nodes-langchain/types.nodes.json",
        "npm",
        "@n8n/n8n-nodes-langchain",
        "2.41.1",
        "dist/types/nodes.json",
    ),
    Route(
        "n8n/nodes-langchain/types.credentials.json",
        "npm",
        "@n8n/n8n-nodes-langchain",
        "2.41.1",
        "dist/types/credentials.json",
    ),
    Route(
        "n8n/nodes-langchain/known.nodes.json",
        "npm",
        "@n8n/n8n-nodes-langchain",
        "2.41.1",
        "dist/known/nodes.json",
    ),
    Route(
        "n8n/nodes-langchain/known.credentials.json",
        "npm",
        "@n8n/n8n-nodes-langchain",
        "2.41.1",
        "dist/known/credentials.json",
    ),
    Route("n8n/nodes-langchain/codex", "npm", "@n8n/n8n-nodes-langchain", "2.41.1", "dist"),
)


@dataclass(frozen=True)
class LiveConfig:
    """Where the live crawl fetches from, and how politely.

    Args:
        raw: base of GitHub file URLs (``{raw}/{owner}/{repo}/{ref}/{path}``).
        api: base of the GitHub REST API (``{api}/repos/{owner}/{repo}/contents/{path}?ref={ref}``).
        npm: base of an npm file CDN (``{npm}/{package}@{version}/{path}``).
        facts: base URL of the ``code_facts*.jsonl`` sidecars; ``None`` reads them from ``facts_mirror``.
        facts_mirror: local folder holding the sidecars (default: the snapshot, when present).
        routes: the path mapping (default ``ROUTES``, pinned to the snapshot's commits and versions).
    """

    raw: str = "https://raw.githubusercontent.com"
    api: str = "https://api.github.com"
    npm: str = "https://unpkg.com"
    facts: str | None = None
    facts_mirror: Path | None = None
    routes: tuple[Route, ...] = ROUTES
    http: HttpConfig = field(default_factory=HttpConfig)


class LiveSource:
    """A ``Source`` over HTTP: mirror paths -> upstream URLs, through one ``HttpClient``."""

    def __init__(
        self, config: LiveConfig, cache_dir: Path | None = None, transport: Transport | None = None
    ) -> None:
        self.config = config
        self.client = HttpClient(
            config.http, cache_dir=Path(cache_dir) / "http" if cache_dir else None, transport=transport
        )
        self._facts_mirror: MirrorSource | None = None
        self.failures: list[tuple[str, str]] = []  # (platform, 'url: reason') of unreachable files

    def _route(self, path: str) -> tuple[Route, str]:
        best = None
        for route in self.config.routes:
            prefix = route.mirror_prefix
            if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and (
                best is None or len(prefix) > len(best.mirror_prefix)
            ):
                best = route
        if best is None:
            raise SourceFileMissing(f"{path} has no live route")
        rest = path[len(best.mirror_prefix) :].lstrip("/")
        return best, f"{best.upstream_prefix}/{rest}".rstrip("/") if rest else best.upstream_prefix

    def url(self, path: str) -> str:
        """The upstream URL of a mirror-relative file path."""
        if self._is_fact(path):
            if self.config.facts is None:
                return path
            return f"{self.config.facts.rstrip('/')}/{path}"
        route, upstream = self._route(path)
        if route.kind == "github":
            return f"{self.config.raw.rstrip('/')}/{route.origin}/{route.ref}/{upstream}"
        return f"{self.config.npm.rstrip('/')}/{route.origin}@{route.ref}/{upstream}"

    @staticmethod
    def _is_fact(path: str) -> bool:
        return path.rsplit("/", 1)[-1].startswith("code_facts") and path.endswith(".jsonl")

    def _facts(self) -> MirrorSource:
        if self._facts_mirror is None:
            from ecoagent.config import default_mirror

            self._facts_mirror = MirrorSource(self.config.facts_mirror or default_mirror())
        return self._facts_mirror

    def read(self, path: str) -> bytes:
        if self._is_fact(path) and self.config.facts is None:
            return self._facts().read(path)
        url = self.url(path)
        try:
            return self.client.get(url)
        except NotFound:
            raise SourceFileMissing(f"{url} not found") from None
        except FetchError as exc:
            # not a missing file but an unreachable one: the crawler sees it as missing, the report names it
            self.failures.append((path.split("/", 1)[0], f"{url}: {exc.reason}"))
            raise SourceFileMissing(f"{url}: {exc.reason}") from None

    def list(self, path: str) -> list[str]:
        route, upstream = self._route(path)
        if route.kind != "github":
            raise SourceFileMissing(f"{path}: folders of npm packages cannot be listed")
        url = f"{self.config.api.rstrip('/')}/repos/{route.origin}/contents/{upstream}?ref={route.ref}"
        try:
            entries = json.loads(self.client.get(url))
        except NotFound:
            raise SourceFileMissing(f"{url} not found") from None
        except FetchError as exc:
            self.failures.append((path.split("/", 1)[0], f"{url}: {exc.reason}"))
            raise SourceFileMissing(f"{url}: {exc.reason}") from None
        except json.JSONDecodeError as exc:
            raise SourceFileMissing(f"{url}: listing is not JSON ({exc.msg})") from None
        if not isinstance(entries, list):
            raise SourceFileMissing(f"{url}: listing is not a JSON array")
        names = [
            str(e["name"]) + ("/" if e.get("type") == "dir" else "")
            for e in entries
            if isinstance(e, dict) and e.get("name")
        ]
        return sorted(names)

    def describe(self, path: str) -> str:
        return self.url(path) if not (self._is_fact(path) and self.config.facts is None) else path
