"""The MCP crawler on the real registry snapshot (``../shared/catalogs/mcp``): named facts of real servers."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import yaml

from crawlers import mcp
from crawlers.record import ToolRecord
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource


@pytest.fixture(scope="module")
def crawled(mirror: Path) -> tuple[dict[str, ToolRecord], CrawlErrors]:
    errors = CrawlErrors()
    records = mcp.crawl(MirrorSource(mirror), errors)
    by_id = {r.tool_id: r for r in records}
    assert len(by_id) == len(records)  # ids are unique
    return by_id, errors


@pytest.fixture(scope="module")
def records(crawled: tuple[dict[str, ToolRecord], CrawlErrors]) -> dict[str, ToolRecord]:
    return crawled[0]


def _sources(rec: ToolRecord) -> set[str]:
    return {s for s in map(mcp.source_of, rec.sources) if s}


def test_brave_search_tools_need_their_api_key(records: dict[str, ToolRecord]) -> None:
    web = records["mcp:brave_search:brave_web_search"]
    assert web.granularity == "tool" and web.server == "brave_search" and web.name == "brave_web_search"
    assert web.description.startswith("Performs a web search using the Brave Search API")
    assert web.auth_kind == "api_key" and web.auth_names == ["BRAVE_API_KEY"]
    assert web.required_auth == ["BRAVE_API_KEY"]
    args = {a.name: a for a in web.arguments}
    assert set(args) == {"query", "count", "offset"} and args["query"].required and not args["count"].required
    assert args["count"].type == "number"
    assert "mcp:brave_search:brave_local_search" in records
    # the reference server moved to servers-archived; mcpm says is_archived and the README lists it there
    assert web.catalog_status == "archived" and _sources(web) == {"mcpm", "servers"}
    # docker's Brave entry is the newer server of brave/brave-search-mcp-server: a server of its own
    brave = records["mcp:brave"]
    assert brave.granularity == "server" and brave.required_auth == ["BRAVE_API_KEY"]
    assert brave.endpoints == ["https://github.com/brave/brave-search-mcp-server"]
    assert brave.catalog_status == "active" and brave.transport == "stdio"


def test_sqlite_is_archived_in_three_sources_and_merged(records: dict[str, ToolRecord]) -> None:
    tools = {t: r for t, r in records.items() if r.server == "sqlite"}
    assert set(tools) == {
        f"mcp:sqlite:{t}"
        for t in (
            "read_query",
            "write_query",
            "create_table",
            "list_tables",
            "describe_table",
            "append_insight",
        )
    }
    for rec in tools.values():
        # mcpm is_archived, docker's "SQLite (Archived)" title, the README's servers-archived link
        assert _sources(rec) == {"mcpm", "docker", "servers"}
        assert rec.catalog_status == "archived"
        assert rec.auth_kind == "none" and rec.required_auth == []  # DB_PATH is a setting, not a credential


def test_clickhouse_merged_from_five_sources_with_tools_docker_dropped(
    records: dict[str, ToolRecord],
) -> None:
    rec = records["mcp:clickhouse:run_select_query"]
    assert _sources(rec) == {"mcpm", "docker", "toolhive", "official", "servers"}
    assert any("registry.json servers.mcp-clickhouse tools (run_select_query)" in s for s in rec.sources)
    assert rec.is_official and rec.transport == "stdio"
    assert rec.required_auth == ["CLICKHOUSE_USER", "CLICKHOUSE_PASSWORD"] and rec.auth_kind == "basic"
    assert rec.licence == "MIT"  # mcpm says "[NOT GIVEN]": the catalog's licence stands in
    # docker/mcp-registry history: tools.json gained the three tools on 2025-09-11 and lost them the next day
    assert rec.catalog_status == "removed"


def test_github_official_and_the_archived_reference_server_stay_apart(records: dict[str, ToolRecord]) -> None:
    official = records["mcp:github_official:create_issue"]
    # mcpm (no transport) and ToolHive (streamable-http) name the hosted endpoint, with and without a "/"
    assert official.transport == "streamable-http" and official.endpoints == [
        "https://api.githubcopilot.com/mcp/"
    ]
    assert official.auth_kind == "oauth2" and official.required_auth == ["GITHUB_PERSONAL_ACCESS_TOKEN"]
    assert {"mcpm", "docker", "toolhive"} <= _sources(official)
    reference = records["mcp:github"]  # docker "GitHub (Archived)": modelcontextprotocol/servers src/github
    assert reference.granularity == "server" and reference.catalog_status == "archived"
    assert reference.server == mcp.normalize_server_name("github")


def test_remote_oauth_docker_tools_json_and_toolhive_status(records: dict[str, ToolRecord]) -> None:
    asana = records["mcp:asana"]
    assert asana.transport == "sse" and asana.endpoints == ["https://mcp.asana.com/sse"]
    assert asana.auth_kind == "oauth2"
    arm = records["mcp:arm:knowledge_base_search"]  # docker tools.json with an `arguments` list
    assert [(a.name, a.type) for a in arm.arguments] == [("query", "string"), ("invocation_reason", "string")]
    assert records["mcp:genai_toolbox"].catalog_status == "deprecated"  # ToolHive status Deprecated


def test_counts_and_statuses_over_the_snapshot(records: dict[str, ToolRecord]) -> None:
    granularity = Counter(r.granularity for r in records.values())
    assert granularity["tool"] == 2997 and granularity["server"] == 1388
    status = Counter(r.catalog_status for r in records.values())
    assert set(status) == {"active", "archived", "deprecated", "removed"}
    assert all(r.platform == "mcp" and r.server for r in records.values())
    assert all(r.tool_id.startswith(f"mcp:{r.server}") for r in records.values())


def test_no_credential_example_value_reaches_a_record(mirror: Path, records: dict[str, ToolRecord]) -> None:
    examples = set()
    root = mirror / mcp.MCPM
    for file in root.glob("*.json"):
        doc = json.loads(file.read_text())
        for name, arg in (doc.get("arguments") or {}).items():
            if isinstance(arg, dict) and mcp.is_credential_name(name) and len(str(arg.get("example"))) >= 8:
                examples.add(str(arg["example"]))
    for file in (mirror / mcp.DOCKER).glob("*/server.yaml"):
        doc = yaml.safe_load(file.read_text())
        for secret in (doc.get("config") or {}).get("secrets") or []:
            if len(str(secret.get("example") or "")) >= 8:
                examples.add(str(secret["example"]))
    # key-shaped values only: plain words ("password") and placeholders also occur in honest prose
    examples = {e for e in examples if " " not in e and not e.isalpha() and "your" not in e.lower()}
    assert len(examples) > 30
    for rec in records.values():
        text = json.dumps(
            [rec.description, rec.endpoints, rec.doc_url, [a.description for a in rec.arguments]]
        )
        leaked = [e for e in examples if e in text]
        assert not leaked, f"{rec.tool_id} carries example credential values {leaked}"


def test_name_normalization_and_repository_keys() -> None:
    assert mcp.normalize_server_name("mcp-server-tmdb") == "tmdb"
    assert mcp.normalize_server_name("io.github.clickhouse/mcp-clickhouse") == "clickhouse"
    assert mcp.normalize_server_name("GitHub") == mcp.normalize_server_name("github") == "github"
    assert mcp.normalize_server_name("mcp-server") == "mcp_server"
    assert mcp.repo_key("https://github.com/modelcontextprotocol/servers-archived/tree/main/src/sqlite") == (
        "github.com/modelcontextprotocol/servers/src/sqlite"
    )
    assert mcp.repo_key("https://www.GitHub.com/Redis/mcp-redis.git/") == "github.com/redis/mcp-redis"
    assert mcp.repo_key("https://www.atlassian.com/platform") is None
    assert mcp.normalize_licence("Apache License Version 2.0") == "Apache-2.0"
    assert mcp.normalize_licence("[NOT GIVEN]") is None


def test_a_monorepo_url_does_not_merge_its_servers() -> None:
    mono = "https://github.com/modelcontextprotocol/servers"
    a = mcp.Sighting(source="mcpm", where="a", name="fetch", urls=[mono])
    b = mcp.Sighting(source="mcpm", where="b", name="time", urls=[mono])
    c = mcp.Sighting(source="docker", where="c", name="fetch", urls=[f"{mono}/tree/HEAD/src/fetch"])
    d = mcp.Sighting(
        source="toolhive", where="d", name="fetch", urls=["https://github.com/someone/fetch-mcp"]
    )
    groups = sorted(sorted(s.where for s in g) for g in mcp.merge_sightings([a, b, c, d]))
    # a and c share a name and no conflicting repository; d has another repository of the same name
    assert groups == [["a", "c"], ["b"], ["d"]]


def test_malformed_manifests_become_error_lines_and_the_crawl_goes_on(mirror: Path, tmp_path: Path) -> None:
    root = tmp_path / "mirror"
    shutil.copytree(mirror / "mcp", root / "mcp")
    servers = root / mcp.MCPM
    (servers / "brave-search.json").write_text('{"name": "brave-search", "tools": [')
    doc = json.loads((servers / "mcp-clickhouse.json").read_text())
    doc["tools"][0].pop("name")
    (servers / "mcp-clickhouse.json").write_text(json.dumps(doc))
    (servers / "airbnb.json").write_text(json.dumps({"description": "no name here"}))
    (root / mcp.DOCKER / "asana" / "server.yaml").write_text("name: asana\nabout: [unclosed\n")
    errors = CrawlErrors()
    records = {r.tool_id: r for r in mcp.crawl(MirrorSource(root), errors)}
    lines = errors.lines["mcp"]
    assert f"{mcp.MCPM}/brave-search.json: bad JSON (Expecting value at line 1)" in lines
    assert f"{mcp.MCPM}/mcp-clickhouse.json tools[0]: tool has no name; skipped" in lines
    assert f"{mcp.MCPM}/airbnb.json: server has no name; skipped" in lines
    assert any(line.startswith(f"{mcp.DOCKER}/asana/server.yaml: bad YAML") for line in lines)
    assert "mcp:brave_search:brave_web_search" not in records and "mcp:clickhouse:list_tables" in records
    assert "mcp:sqlite:read_query" in records and len(records) > 4000
