"""CrewAI crawler on the real snapshot: named tools as the spec, docs and code facts state them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlers import crewai
from crawlers.record import ToolRecord
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource


@pytest.fixture(scope="module")
def crewai_tools(mirror: Path) -> dict[str, ToolRecord]:
    return {r.tool_id: r for r in crewai.crawl(MirrorSource(mirror), CrawlErrors())}


def test_serper_dev_tool_as_the_spec_states_it(crewai_tools: dict[str, ToolRecord]) -> None:
    serper = crewai_tools["crewai:serper_dev_tool"]
    assert serper.name == "Search the internet with Serper"
    assert serper.description.startswith(
        "A tool that can be used to search the internet with a search_query."
    )
    assert serper.auth_kind == "api_key"
    assert serper.auth_names == ["SERPER_API_KEY"] and serper.required_auth == ["SERPER_API_KEY"]
    # the constructor's base_url default is the API endpoint
    assert serper.endpoints[0] == "https://google.serper.dev"
    assert serper.doc_url == "https://docs.crewai.com/edge/en/tools/search-research/serperdevtool"
    assert serper.tags == ["search-research"]
    query = next(a for a in serper.arguments if a.name == "search_query")
    assert query.required and query.type == "string"
    # spec entry, docs page and README merged into one record
    assert any("tool.specs.json" in s for s in serper.sources)
    assert "crewai/docs/search-research/serperdevtool.mdx" in serper.sources
    assert "crewai/readmes/tools/serper_dev_tool/README.md" in serper.sources


def test_every_spec_tool_with_a_description_comes_out(
    mirror: Path, crewai_tools: dict[str, ToolRecord]
) -> None:
    spec = json.loads((mirror / "crewai" / "tool.specs.json").read_text())["tools"]
    missing = [t["name"] for t in spec if crewai.tool_id(t["name"]) not in crewai_tools]
    # PatronusEvalTool builds its description at run time: no source states one
    assert missing == ["PatronusEvalTool"]


def test_unlisted_code_fact_classes_are_tools_but_base_classes_are_not(
    crewai_tools: dict[str, ToolRecord],
) -> None:
    s3 = crewai_tools["crewai:s3_reader_tool"]
    assert s3.name == "S3 Reader Tool"
    assert s3.description.startswith("Reads a file from Amazon S3")
    assert s3.doc_url and s3.doc_url.endswith("/cloud-storage/s3readertool")
    assert "crewai:brave_search_tool_base" not in crewai_tools
    assert "crewai:serp_api_base_tool" not in crewai_tools


def test_optional_env_vars_do_not_make_auth_required(crewai_tools: dict[str, ToolRecord]) -> None:
    exa = crewai_tools["crewai:exa_search_tool"]
    assert "EXA_API_KEY" in exa.auth_names and exa.auth_kind == "api_key"


def test_malformed_entries_become_error_lines_and_the_rest_survives(tmp_mirror: Path) -> None:
    spec_path = tmp_mirror / "crewai" / "tool.specs.json"
    spec = json.loads(spec_path.read_text())
    del spec["tools"][0]["name"]
    spec_path.write_text(json.dumps(spec))
    page = tmp_mirror / "crewai" / "docs" / "search-research" / "serperdevtool.mdx"
    page.write_text("---\ntitle: [unclosed\n---\n# `SerperDevTool`\n")
    facts = tmp_mirror / "crewai" / "code_facts.jsonl"
    facts.write_text(facts.read_text() + "{not json\n")

    errors = CrawlErrors()
    tools = {r.tool_id: r for r in crewai.crawl(MirrorSource(tmp_mirror), errors)}
    lines = errors.lines["crewai"]
    assert any("tools[0]" in line and "no 'name'" in line for line in lines)
    assert any("serperdevtool.mdx" in line and "front matter" in line for line in lines)
    assert any("code_facts.jsonl line" in line and "bad JSON" in line for line in lines)
    assert "crewai:serper_dev_tool" in tools  # still there from the spec, without the broken page
    # without the docs page, the README is the best documentation left
    assert tools["crewai:serper_dev_tool"].doc_url == (
        "https://github.com/crewAIInc/crewAI/blob/main/lib/crewai-tools/src/crewai_tools/tools/serper_dev_tool/README.md"
    )
    assert len(tools) >= 120


def test_an_unreadable_spec_fails_the_whole_source(tmp_mirror: Path) -> None:
    (tmp_mirror / "crewai" / "tool.specs.json").write_text('{"tools": [')
    with pytest.raises(ValueError, match=r"crewai: crewai/tool.specs.json is not valid JSON"):
        crewai.crawl(MirrorSource(tmp_mirror), CrawlErrors())


def test_a_page_naming_classes_in_backticks_documents_them(crewai_tools: dict[str, ToolRecord]) -> None:
    mysql = crewai_tools["crewai:my_sql_search_tool"]  # page mysqltool.mdx, no class heading
    assert mysql.doc_url == "https://docs.crewai.com/edge/en/tools/database-data/mysqltool"
    assert mysql.tags == ["database-data"]
    # e2bsandboxtools.mdx describes `E2BExecTool`, `E2BPythonTool` and `E2BFileTool`: it documents all three
    for tid in ("crewai:e2b_exec_tool", "crewai:e2b_python_tool", "crewai:e2b_file_tool"):
        assert crewai_tools[tid].doc_url == "https://docs.crewai.com/edge/en/tools/ai-ml/e2bsandboxtools"
    assert crewai_tools["crewai:e2b_exec_tool"].name == "E2B Sandbox Exec"  # the spec's name wins
    assert "crewai:e2bsandboxtools" not in crewai_tools
