"""Record schemas shared by the stages: the tool table and the pair tables that later stages join on.

The tool table (``tools.parquet``) is the contract between the crawl and everything after it; its
columns are documented in the README. ``tool_document`` is the one text every stage embeds for a tool,
so the Syn miner, the Real recall encoder and RATED's index all see tools the same way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import polars as pl

Platform = Literal["langchain", "crewai", "llamaindex", "n8n", "mcp"]
PLATFORMS: tuple[str, ...] = ("langchain", "crewai", "llamaindex", "n8n", "mcp")

AuthKind = Literal["none", "api_key", "oauth2", "basic", "other"]
AUTH_KINDS: tuple[str, ...] = ("none", "api_key", "oauth2", "basic", "other")

LinkStatus = Literal["ok", "broken", "timeout", "unchecked"]
LINK_STATUSES: tuple[str, ...] = ("ok", "broken", "timeout", "unchecked")

Granularity = Literal["tool", "server"]
GRANULARITIES: tuple[str, ...] = ("tool", "server")

CatalogStatus = Literal["active", "archived", "deprecated", "removed"]
CATALOG_STATUSES: tuple[str, ...] = ("active", "archived", "deprecated", "removed")

Transport = Literal["stdio", "sse", "streamable-http", "remote"]
TRANSPORTS: tuple[str, ...] = ("stdio", "sse", "streamable-http", "remote")

ARGUMENT = pl.Struct({"name": pl.String, "type": pl.String, "description": pl.String, "required": pl.Boolean})

TOOL_SCHEMA: dict[str, pl.DataType] = {
    "tool_id": pl.String(),  # platform:slug[:operation], stable across crawls
    "name": pl.String(),
    "description": pl.String(),  # functional description, as the source states it
    "platform": pl.String(),
    "endpoints": pl.List(pl.String()),  # endpoint / base URLs
    "doc_url": pl.String(),
    "auth_kind": pl.String(),  # one of AUTH_KINDS
    "auth_names": pl.List(pl.String()),  # credential types or env-var names
    "tags": pl.List(pl.String()),
    "arguments": pl.List(ARGUMENT),
    "source_file": pl.String(),  # mirror-relative path or URL of the main source
    "content_hash": pl.String(),  # sha256 of the normalized record content
    "sources": pl.List(pl.String()),  # provenance: every file / entry that contributed, main one first
    "granularity": pl.String(),  # one of GRANULARITIES: "server" = an MCP server known only by its text
    "catalog_status": pl.String(),  # one of CATALOG_STATUSES, from what the catalogs say
    "transport": pl.String(),  # MCP: one of TRANSPORTS (null when no source says); null elsewhere
    "server": pl.String(),  # MCP: normalized server key (crawlers.mcp.normalize_server_name); else null
    "licence": pl.String(),  # the tool's own licence where stated, else its catalog's
    "is_official": pl.Boolean(),  # on an official MCP list (registry seed, mcpm is_official, ToolHive tier)
    "requires_auth": pl.Boolean(),
    "auth_configured": pl.Boolean(),
    "link_status": pl.String(),  # one of LINK_STATUSES
    "injection_flag": pl.Boolean(),  # name/description/arguments hold text addressed to a model
    "consistency": pl.Float64(),  # SBERT cosine(name, description)
    "source_weight": pl.Float64(),
    "doc_quality": pl.Float64(),
    "prior": pl.Float64(),  # 0.5 consistency + 0.3 source weight + 0.2 doc quality
}


def empty_tools() -> pl.DataFrame:
    """An empty tool table with the full schema."""
    return pl.DataFrame(schema=TOOL_SCHEMA)


def validate_tools(frame: pl.DataFrame) -> pl.DataFrame:
    """Check a tool table against ``TOOL_SCHEMA`` and fail naming the first bad record.

    Raises:
        ValueError: a column is missing, a row has an empty id, name or description, or a granularity /
            catalog status outside ``GRANULARITIES`` / ``CATALOG_STATUSES`` (null: a table built before them).
    """
    missing = [c for c in TOOL_SCHEMA if c not in frame.columns]
    if missing:
        raise ValueError(f"tool table lacks columns {missing}")
    for column in ("tool_id", "name", "description"):
        bad = frame.filter(pl.col(column).is_null() | (pl.col(column).str.strip_chars() == ""))
        if bad.height:
            row = bad.row(0, named=True)
            raise ValueError(f"tool {row.get('tool_id')!r}: empty {column}")
    for column, allowed in (("granularity", GRANULARITIES), ("catalog_status", CATALOG_STATUSES)):
        bad = frame.filter(pl.col(column).is_not_null() & ~pl.col(column).is_in(allowed))
        if bad.height:
            row = bad.row(0, named=True)
            raise ValueError(f"tool {row.get('tool_id')!r}: {column} {row.get(column)!r} not in {allowed}")
    dupes = frame.group_by("tool_id").len().filter(pl.col("len") > 1)
    if dupes.height:
        raise ValueError(f"tool id {dupes['tool_id'][0]!r} occurs {dupes['len'][0]} times")
    return frame


def tool_document(name: str, description: str, tags: Iterable[str] | None = None) -> str:
    """The text that represents a tool to every encoder: name, description and tags."""
    text = f"{name}: {description.strip()}"
    tags = [t for t in (tags or []) if t]
    if tags:
        text += f" (tags: {', '.join(tags)})"
    return text


def tool_documents(tools: pl.DataFrame) -> list[str]:
    """``tool_document`` for every row of a tool table, in row order."""
    return [
        tool_document(r["name"], r["description"], r["tags"])
        for r in tools.select("name", "description", "tags").iter_rows(named=True)
    ]


def rows_to_frame(rows: Iterable[Mapping[str, Any]], schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """Build a frame with an exact schema from dict rows (missing keys become nulls)."""
    rows = list(rows)
    return pl.DataFrame([{k: r.get(k) for k in schema} for r in rows], schema=dict(schema), orient="row")
