"""The normalized tool record every platform crawler emits, and how duplicates of one tool are merged.

A crawler reads several files that describe the same tool (a spec entry, a README, a docs page, several
version entries of one n8n node); it builds one ``ToolRecord`` per sighting and ``merge`` folds them, so
the first (most authoritative) source keeps its scalar fields and the others only fill gaps or add to lists.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ecoagent.schemas import AUTH_KINDS, CATALOG_STATUSES, GRANULARITIES

if TYPE_CHECKING:
    from crawlers.report import CrawlErrors


def identifier_words(name: str) -> str:
    """An identifier as words (``brave_web_search``, ``getJiraIssue`` -> ``brave web search``, ...).

    Names with spaces are returned unchanged; an encoder reads words better than joined identifiers.
    """
    return name if " " in name.strip() else slugify(name).replace("_", " ") or name


def slugify(text: str) -> str:
    """A lower-case id part: camelCase split, runs of other characters turned into ``_``."""
    text = re.sub(r"([a-z])([A-Z])", r"\1_\2", text.strip())
    text = re.sub(r"([A-Z0-9]+)([A-Z][a-z])", r"\1_\2", text)
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


@dataclass
class Argument:
    """One call argument of a tool."""

    name: str
    type: str | None = None
    description: str | None = None
    required: bool = False


@dataclass
class ToolRecord:
    """One tool as the sources state it, before health signals and the prior are added.

    Args:
        tool_id: ``platform:slug[:operation]``, stable across crawls (derived from upstream identifiers).
        auth_kind: one of ``ecoagent.schemas.AUTH_KINDS``.
        auth_names: credential types or env-var names the tool needs.
        required_auth: the subset of ``auth_names`` the source marks as required (decides ``requires_auth``).
        sources: every file or URL that contributed (the first one is ``source_file``).
        granularity: ``tool``, or ``server`` for an MCP server known only by its description.
        catalog_status: one of ``ecoagent.schemas.CATALOG_STATUSES`` (what the catalogs say of its health).
        transport: MCP transport (``stdio``, ``sse``, ``streamable-http``, ``remote``); None elsewhere.
        server: the normalized MCP server key (``crawlers.mcp.normalize_server_name``); None elsewhere.
        licence: the tool's own licence where a source states it (None: the pipeline fills the catalog's).
        is_official: listed on an official MCP list (official registry seed, mcpm, ToolHive tier).
        given_name: the name the source itself gives the tool when ``name`` is built from description text
            (n8n's ``"Slack: Archive a channel"`` is node + action); the prior's consistency reads it.
    """

    tool_id: str
    name: str
    description: str
    platform: str
    endpoints: list[str] = field(default_factory=list)
    doc_url: str | None = None
    auth_kind: str = "none"
    auth_names: list[str] = field(default_factory=list)
    required_auth: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    arguments: list[Argument] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    granularity: str = "tool"
    catalog_status: str = "active"
    transport: str | None = None
    server: str | None = None
    licence: str | None = None
    is_official: bool = False
    given_name: str | None = None

    def __post_init__(self) -> None:
        if self.auth_kind not in AUTH_KINDS:
            raise ValueError(f"tool {self.tool_id!r}: auth kind {self.auth_kind!r} not in {AUTH_KINDS}")
        if self.granularity not in GRANULARITIES:
            raise ValueError(
                f"tool {self.tool_id!r}: granularity {self.granularity!r} not in {GRANULARITIES}"
            )
        if self.catalog_status not in CATALOG_STATUSES:
            raise ValueError(
                f"tool {self.tool_id!r}: catalog status {self.catalog_status!r} not in {CATALOG_STATUSES}"
            )

    def content_hash(self) -> str:
        """sha256 of the normalized content (not of where it came from), to spot changes between crawls."""
        body = asdict(self)
        body.pop("sources")
        return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()

    def to_row(self) -> dict[str, Any]:
        """The columns of ``TOOL_SCHEMA`` that the crawl itself fills (health and prior come later)."""
        return {
            "tool_id": self.tool_id,
            "name": self.name,
            "description": self.description,
            "platform": self.platform,
            "endpoints": self.endpoints,
            "doc_url": self.doc_url,
            "auth_kind": self.auth_kind,
            "auth_names": self.auth_names,
            "tags": self.tags,
            "arguments": [asdict(a) for a in self.arguments],
            "source_file": self.sources[0] if self.sources else None,
            "content_hash": self.content_hash(),
            "sources": list(self.sources),
            "granularity": self.granularity,
            "catalog_status": self.catalog_status,
            "transport": self.transport,
            "server": self.server,
            "licence": self.licence,
            "is_official": self.is_official,
        }


def _union(first: list[Any], second: list[Any]) -> list[Any]:
    out = list(first)
    for item in second:
        if item not in out:
            out.append(item)
    return out


def merge(base: ToolRecord, other: ToolRecord) -> ToolRecord:
    """Fold ``other`` (a later sighting of the same tool) into ``base``: fill gaps, union the lists."""
    if base.tool_id != other.tool_id:
        raise ValueError(f"cannot merge {other.tool_id!r} into {base.tool_id!r}")
    base.name = base.name or other.name
    base.description = base.description or other.description
    base.doc_url = base.doc_url or other.doc_url
    base.transport = base.transport or other.transport
    base.server = base.server or other.server
    base.licence = base.licence or other.licence
    base.is_official = base.is_official or other.is_official
    base.given_name = base.given_name or other.given_name
    if base.catalog_status == "active":
        base.catalog_status = other.catalog_status
    if base.auth_kind == "none":
        base.auth_kind = other.auth_kind
    base.endpoints = _union(base.endpoints, other.endpoints)
    base.auth_names = _union(base.auth_names, other.auth_names)
    base.required_auth = _union(base.required_auth, other.required_auth)
    base.tags = _union(base.tags, other.tags)
    known = {a.name for a in base.arguments}
    base.arguments = base.arguments + [a for a in other.arguments if a.name not in known]
    base.sources = _union(base.sources, other.sources)
    return base


class RecordSet:
    """Records keyed by id, merging repeated sightings; keeps first-seen order for stable output."""

    def __init__(self) -> None:
        self._records: dict[str, ToolRecord] = {}

    def add(self, record: ToolRecord) -> ToolRecord:
        found = self._records.get(record.tool_id)
        if found is None:
            self._records[record.tool_id] = record
            return record
        return merge(found, record)

    def get(self, tool_id: str) -> ToolRecord | None:
        return self._records.get(tool_id)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._records

    def __len__(self) -> int:
        return len(self._records)

    def records(self) -> list[ToolRecord]:
        return list(self._records.values())

    def described(self, errors: CrawlErrors, platform: str) -> list[ToolRecord]:
        """The records that have a description; each one without becomes an error line, not a row."""
        out = []
        for rec in self._records.values():
            if rec.description:
                out.append(rec)
            else:
                errors.add(
                    platform, rec.sources[0], f"tool {rec.tool_id} has no description in any source; skipped"
                )
        return out
