"""LlamaIndex crawler on the real snapshot: one tool per ToolSpec function."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlers import llamaindex
from crawlers.record import ToolRecord, slugify
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource


@pytest.fixture(scope="module")
def li_tools(mirror: Path) -> dict[str, ToolRecord]:
    return {r.tool_id: r for r in llamaindex.crawl(MirrorSource(mirror), CrawlErrors())}


def test_brave_search_tool_spec_function(li_tools: dict[str, ToolRecord]) -> None:
    brave = li_tools["llamaindex:brave_search_tool_spec:brave_search"]
    assert brave.name == "brave_search"
    assert brave.description == "Make a query to the Brave Search engine to receive a list of results."
    # the constructor takes the key: BraveSearchToolSpec(api_key=...)
    assert (
        brave.auth_kind == "api_key"
        and brave.auth_names == ["api_key"]
        and brave.required_auth == ["api_key"]
    )
    assert brave.endpoints == ["https://api.search.brave.com/res/v1/web/search?{params}"]
    assert brave.doc_url == "https://llamahub.ai/l/tools/llama-index-tools-brave-search"
    query = brave.arguments[0]
    assert (query.name, query.type, query.required) == ("query", "str", True)
    assert query.description == "The query to be passed to Brave Search."


def test_every_spec_function_is_a_tool(mirror: Path, li_tools: dict[str, ToolRecord]) -> None:
    expected = set()
    for line in (mirror / "llamaindex" / "code_facts.jsonl").read_text().splitlines():
        c = json.loads(line)
        for fn in c["spec_functions"] or []:
            expected.add(f"llamaindex:{slugify(c['class_name'])}:{slugify(fn['function'])}")
    assert len(expected) == 149
    assert expected <= set(li_tools)
    # specs whose tools exist only at run time are one tool each
    assert li_tools["llamaindex:mcp_tool_spec"].name == "McpToolSpec"
    assert "llamaindex:zapier_tool_spec" in li_tools


def test_split_docstring_keeps_the_functional_part() -> None:
    summary, args = llamaindex.split_docstring(
        "Search the web.\n\nArgs:\n    query (str): what to look for\n    limit: how many\n\nReturns:\n    A list."
    )
    assert summary == "Search the web."
    assert args == {"query": "what to look for", "limit": "how many"}


def test_a_broken_pyproject_is_an_error_line(tmp_mirror: Path) -> None:
    (
        tmp_mirror / "llamaindex" / "integrations" / "llama-index-tools-brave-search" / "pyproject.toml"
    ).write_text("[project\n")
    errors = CrawlErrors()
    tools = {r.tool_id for r in llamaindex.crawl(MirrorSource(tmp_mirror), errors)}
    assert len(errors.lines["llamaindex"]) == 1
    assert "llama-index-tools-brave-search/pyproject.toml: not valid TOML" in errors.lines["llamaindex"][0]
    assert "llamaindex:brave_search_tool_spec:brave_search" in tools
