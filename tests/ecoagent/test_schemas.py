"""The tool-table contract: schema validation names the bad record; one document text per tool."""

from __future__ import annotations

import polars as pl
import pytest

from ecoagent.schemas import TOOL_SCHEMA, empty_tools, rows_to_frame, tool_document, validate_tools


def _row(**kw: object) -> dict[str, object]:
    base: dict[str, object] = {
        "tool_id": "crewai:serper_dev_tool",
        "name": "Search the internet with Serper",
        "description": "A tool that can be used to search the internet with a search_query.",
        "platform": "crewai",
        "endpoints": ["https://google.serper.dev/search"],
        "tags": ["search-research"],
        "auth_kind": "api_key",
        "auth_names": ["SERPER_API_KEY"],
    }
    base.update(kw)
    return base


def test_empty_table_has_every_column() -> None:
    assert empty_tools().columns == list(TOOL_SCHEMA)
    validate_tools(empty_tools())


def test_validate_names_the_record_with_an_empty_description() -> None:
    frame = rows_to_frame([_row(), _row(tool_id="n8n:slack:message:post", description="  ")], TOOL_SCHEMA)
    with pytest.raises(ValueError, match=r"n8n:slack:message:post.*description"):
        validate_tools(frame)


def test_validate_rejects_duplicate_ids_and_missing_columns() -> None:
    frame = rows_to_frame([_row(), _row()], TOOL_SCHEMA)
    with pytest.raises(ValueError, match="occurs 2 times"):
        validate_tools(frame)
    with pytest.raises(ValueError, match="lacks columns"):
        validate_tools(pl.DataFrame({"tool_id": ["x"]}))


def test_tool_document_joins_name_description_and_tags() -> None:
    doc = tool_document("Slack", " Post a message ", ["Communication", ""])
    assert doc == "Slack: Post a message (tags: Communication)"
    assert tool_document("Wait", "Waits.", None) == "Wait: Waits."


def test_validate_names_a_record_with_an_unknown_granularity_or_status() -> None:
    frame = rows_to_frame([_row(granularity="tool", catalog_status="active")], TOOL_SCHEMA)
    validate_tools(frame)
    bad = rows_to_frame([_row(tool_id="mcp:x", granularity="endpoint")], TOOL_SCHEMA)
    with pytest.raises(ValueError, match=r"'mcp:x': granularity 'endpoint' not in"):
        validate_tools(bad)
    bad = rows_to_frame([_row(tool_id="mcp:y", catalog_status="gone")], TOOL_SCHEMA)
    with pytest.raises(ValueError, match=r"'mcp:y': catalog_status 'gone' not in"):
        validate_tools(bad)
