"""Tool records: ids, merging of several sightings, hashing."""

from __future__ import annotations

import pytest

from crawlers.record import Argument, RecordSet, ToolRecord, slugify


def test_slugify_splits_camel_case_and_symbols() -> None:
    assert slugify("SerperDevTool") == "serper_dev_tool"
    assert slugify("EXASearchTool") == "exa_search_tool"
    assert slugify("getAll") == "get_all"
    assert slugify("E2BExecTool") == "e2b_exec_tool" and slugify("S3ReaderTool") == "s3_reader_tool"
    assert slugify("MySQLSearchTool") == "my_sql_search_tool" and slugify("oAuth2Api") == "o_auth2_api"
    assert slugify("llama-index-tools-brave-search") == "llama_index_tools_brave_search"


def test_merge_keeps_the_first_source_and_fills_gaps() -> None:
    tools = RecordSet()
    tools.add(
        ToolRecord(
            "crewai:x",
            "X",
            "from the spec",
            "crewai",
            auth_names=["X_KEY"],
            auth_kind="api_key",
            sources=["spec"],
        )
    )
    merged = tools.add(
        ToolRecord(
            "crewai:x",
            "X tool",
            "from the page",
            "crewai",
            doc_url="https://d",
            tags=["search"],
            arguments=[Argument("q")],
            sources=["page"],
        )
    )
    assert (merged.name, merged.description, merged.doc_url) == ("X", "from the spec", "https://d")
    assert merged.tags == ["search"] and merged.sources == ["spec", "page"] and len(tools) == 1
    assert merged.to_row()["source_file"] == "spec"


def test_content_hash_ignores_where_a_record_came_from() -> None:
    a = ToolRecord("n8n:x", "X", "d", "n8n", sources=["a"])
    b = ToolRecord("n8n:x", "X", "d", "n8n", sources=["b"])
    assert a.content_hash() == b.content_hash() != ToolRecord("n8n:x", "X", "e", "n8n").content_hash()


def test_bad_auth_kind_names_the_record() -> None:
    with pytest.raises(ValueError, match="tool 'n8n:x': auth kind 'token'"):
        ToolRecord("n8n:x", "X", "d", "n8n", auth_kind="token")
