"""The live catalog: what each running server lists through ``tools/list``, as rows of the tool table.

Rows go through the crawl's own ``ToolRecord`` (so ``tool_id``, ``arguments`` and ``content_hash`` mean
what they mean for crawled tools) and get the crawl's metadata prior (0.5 name/description consistency +
0.3 source weight + 0.2 doc quality, ``crawlers.prior``), with MiniLM read through the embedding cache.
``platform`` is ``live``: these rows describe processes that ran on this machine, not a crawled registry.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from crawlers.record import ToolRecord, identifier_words
from crawlers.schema_args import arguments_from_schema
from ecoagent.schemas import TOOL_SCHEMA, rows_to_frame, validate_tools

PLATFORM = "live"


def tool_id(server: str, tool: str) -> str:
    """``live:<server>:<tool>``: stable as long as the server keeps the tool's name."""
    return f"{PLATFORM}:{server}:{tool}"


def record(server: str, package: str, tool: Any) -> ToolRecord:
    """One listed ``mcp_types.Tool`` as a crawl record (name in words, the schema's arguments)."""
    description = " ".join((tool.description or "").split()) or identifier_words(tool.name)
    return ToolRecord(
        tool_id=tool_id(server, tool.name),
        name=identifier_words(tool.name),
        description=description,
        platform=PLATFORM,
        tags=[server, "mcp"],
        arguments=arguments_from_schema(tool.input_schema),
        sources=[f"{package} tools/list"],
        transport="stdio",
        server=server,
        is_official=True,  # every server here is from modelcontextprotocol's own repositories
        given_name=tool.name,
    )


def tool_table(
    listed: Mapping[str, Sequence[Any]],
    packages: Mapping[str, str],
    keep: set[str] | None = None,
    encoder: str | None = None,
    needs_auth: set[str] | None = None,
) -> pl.DataFrame:
    """The tool table of every listed tool (only ``keep`` ids when given), prior included.

    Args:
        listed: server name -> its ``tools/list`` result.
        packages: server name -> the pinned package it runs (provenance).
        keep: tool ids to keep (the ones with query templates); None keeps all.
        encoder: the sentence encoder of the prior's consistency (default: the packaged MiniLM).
        needs_auth: servers that need a credential (``requires_auth``; configured when the run starts).
    """
    from crawlers.prior import PriorWeights, doc_quality, metadata_prior
    from ecoagent.config import MINILM
    from ecoagent.embeddings import embed

    records = [
        record(server, packages.get(server, server), t)
        for server, tools in listed.items()
        for t in tools
        if keep is None or tool_id(server, t.name) in keep
    ]
    if not records:
        raise ValueError("no live tool to put in the table")
    weights = PriorWeights()
    names = [r.given_name or r.name for r in records]
    descriptions = [r.description for r in records]
    emb = embed(encoder or MINILM, list(dict.fromkeys([*names, *descriptions])))
    row = {t: i for i, t in enumerate(dict.fromkeys([*names, *descriptions]))}
    a, b = emb[[row[n] for n in names]], emb[[row[d] for d in descriptions]]
    consistency = np.clip(np.sum(a * b, axis=1).astype(float), 0.0, 1.0)
    quality = doc_quality(descriptions, [", ".join(r.tags) for r in records], weights)
    source, prior = metadata_prior(consistency, ["official"] * len(records), quality, weights)
    rows = []
    for r, c, s, q, p in zip(records, consistency, source, quality, prior, strict=True):
        rows.append(
            r.to_row()
            | {
                "requires_auth": r.server in (needs_auth or set()),
                "auth_configured": True,
                "link_status": "unchecked",
                "injection_flag": False,
                "consistency": float(c),
                "source_weight": float(s),
                "doc_quality": float(q),
                "prior": float(p),
            }
        )
    return validate_tools(rows_to_frame(rows, TOOL_SCHEMA))
