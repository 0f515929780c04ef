"""LangChain crawler on the real snapshot: code-fact tool classes, docs pages, agent keys filtered."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawlers import langchain
from crawlers.record import ToolRecord
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource


@pytest.fixture(scope="module")
def lc_tools(mirror: Path) -> dict[str, ToolRecord]:
    return {r.tool_id: r for r in langchain.crawl(MirrorSource(mirror), CrawlErrors())}


def test_google_serper_run_from_code_facts_and_its_page(lc_tools: dict[str, ToolRecord]) -> None:
    serper = lc_tools["langchain:google_serper_run"]
    assert serper.name == "google_serper"
    assert serper.description.startswith("A low-cost Google Search API.")
    # the env var and URL live in the API wrapper module the tool imports
    assert serper.auth_names == ["SERPER_API_KEY"] and serper.auth_kind == "api_key"
    assert serper.endpoints == ["https://google.serper.dev/{search_type}"]
    assert serper.doc_url == "https://docs.langchain.com/oss/python/integrations/tools/google_serper"
    assert serper.tags == ["Search"]
    assert "langchain/docs/src/oss/integrations/tools/google_serper.md" in serper.sources


def test_a_page_without_a_community_class_is_its_own_tool_and_llm_keys_are_dropped(
    lc_tools: dict[str, ToolRecord],
) -> None:
    tavily = lc_tools["langchain:tavily_search"]  # langchain-tavily partner package
    assert tavily.name == "Tavily Search"
    assert tavily.description.startswith(
        "Tavily's Search API is a search engine built specifically for AI agents"
    )
    assert tavily.auth_names == ["TAVILY_API_KEY"]  # the page also sets OPENAI_API_KEY for its agent
    assert tavily.required_auth == ["TAVILY_API_KEY"]


def test_no_tool_inherits_an_example_agents_keys(lc_tools: dict[str, ToolRecord]) -> None:
    leaked = {
        t: r.auth_names
        for t, r in lc_tools.items()
        if any(n.startswith(("OPENAI_", "LANGSMITH_")) for n in r.auth_names)
    }
    # the DALL-E tool's own key is OpenAI's; nothing else may carry it
    assert set(leaked) <= {"langchain:dall_e_image_generator"}


def test_page_env_vars_on_a_real_page(mirror: Path) -> None:
    body = (mirror / langchain.PAGES / "exa_search.md").read_text()
    assert langchain.page_env_vars(body) == ["EXA_API_KEY"]


def test_abstract_base_classes_are_not_tools(lc_tools: dict[str, ToolRecord]) -> None:
    assert "langchain:ain_base_tool" not in lc_tools
    assert "langchain:gmail_base_tool" not in lc_tools
    assert "langchain:gmail_send_message" in lc_tools
    assert lc_tools["langchain:gmail_send_message"].doc_url.endswith("/gmail")  # type: ignore[union-attr]


def test_a_broken_page_is_an_error_line(tmp_mirror: Path) -> None:
    page = tmp_mirror / langchain.PAGES / "tavily_search.md"
    page.write_text("---\ntitle: Tavily Search\n")  # front matter never closed
    errors = CrawlErrors()
    tools = {r.tool_id for r in langchain.crawl(MirrorSource(tmp_mirror), errors)}
    assert errors.lines["langchain"] == [
        f"{langchain.PAGES}/tavily_search.md: front matter is not closed by a '---' line"
    ]
    assert "langchain:tavily_search" not in tools and "langchain:google_serper_run" in tools


def test_code_read_keys_are_required_and_urls_are_not_keys(lc_tools: dict[str, ToolRecord]) -> None:
    assert lc_tools["langchain:google_serper_run"].required_auth == ["SERPER_API_KEY"]
    tilores = lc_tools["langchain:tilores"]
    assert "TILORES_CLIENT_ID" in tilores.auth_names and "TILORES_TOKEN_URL" not in tilores.auth_names
    assert tilores.auth_kind == "oauth2"
