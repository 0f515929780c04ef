"""n8n crawler on the real snapshot: one tool per resource x operation, credentials and base URLs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlers import n8n
from crawlers.record import ToolRecord
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource


@pytest.fixture(scope="module")
def n8n_tools(mirror: Path) -> dict[str, ToolRecord]:
    return {r.tool_id: r for r in n8n.crawl(MirrorSource(mirror), CrawlErrors())}


@pytest.fixture(scope="module")
def credentials(mirror: Path) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads((mirror / "n8n/nodes-base/types.credentials.json").read_text())}


def test_slack_operations_with_their_credentials(n8n_tools: dict[str, ToolRecord]) -> None:
    post = n8n_tools["n8n:slack:message_post"]
    assert post.name == "Slack: Send a message"
    assert post.description == "Send a message"
    assert post.auth_names == ["slackApi", "slackOAuth2Api"]
    assert post.auth_kind == "api_key"  # the default authentication option is the access token
    assert post.endpoints[0] == "https://slack.com"  # slackApi's test.request.baseURL
    assert "https://slack.com/api${resource}" in post.endpoints  # from GenericFunctions code
    assert not any("/help/" in u for u in post.endpoints)
    assert post.doc_url == "https://docs.n8n.io/integrations/builtin/app-nodes/n8n-nodes-base.slack/"
    assert "Communication" in post.tags
    assert {"channelId", "text"} <= {a.name for a in post.arguments}
    archive = n8n_tools["n8n:slack:channel_archive"]
    assert (archive.name, archive.description) == ("Slack: Archive a channel", "Archives a conversation")
    # both version entries of the Slack node were read and merged
    assert len(post.sources) == 2


def test_github_operations_with_credentials_and_base_url(n8n_tools: dict[str, ToolRecord]) -> None:
    issue = n8n_tools["n8n:github:issue_create"]
    assert issue.name == "GitHub: Create an issue"
    assert issue.description == "Create a new issue"
    assert issue.auth_names == ["githubApi", "githubOAuth2Api", "githubAppApi"]
    assert issue.required_auth == issue.auth_names
    assert issue.endpoints == ["https://api.github.com"]  # githubApi's `server` default
    assert sum(t.startswith("n8n:github:") for t in n8n_tools) >= 40


def test_every_node_comes_out_and_the_catalog_reaches_thousands(
    mirror: Path, n8n_tools: dict[str, ToolRecord]
) -> None:
    source = MirrorSource(mirror)
    for folder, prefix in n8n.ID_PREFIX.items():
        names = {e["name"] for e in json.loads(source.read(f"n8n/{folder}/types.nodes.json"))}
        for name in names:
            base = f"n8n:{prefix}{n8n.slugify(name)}"
            assert base in n8n_tools or any(t.startswith(base + ":") for t in n8n_tools), name
    assert len(n8n_tools) > 3500
    assert "n8n:code" in n8n_tools and "n8n:langchain_code" in n8n_tools  # same name in both packages


def test_credential_kinds_of_real_credential_types(credentials: dict[str, dict]) -> None:
    assert n8n.credential_kind(credentials["slackOAuth2Api"]) == "oauth2"
    assert n8n.credential_kind(credentials["httpBasicAuth"]) == "basic"
    assert n8n.credential_kind(credentials["slackApi"]) == "api_key"
    assert n8n.credential_endpoints(credentials["slackApi"]) == ["https://slack.com"]


def test_declarative_node_base_url_from_request_defaults(n8n_tools: dict[str, ToolRecord]) -> None:
    perplexity = [r for t, r in n8n_tools.items() if t.startswith("n8n:perplexity")]
    assert perplexity and all(r.endpoints[0].startswith("https://api.perplexity.ai") for r in perplexity)


def test_a_node_without_a_name_is_an_error_line(tmp_path: Path, mirror: Path) -> None:
    import shutil

    root = tmp_path / "mirror"
    shutil.copytree(mirror / "n8n", root / "n8n")
    part = root / "n8n/nodes-langchain/types.nodes.part-01-of-01.json"
    entries = json.loads(part.read_text())
    del entries[0]["name"]
    part.write_text(json.dumps(entries))
    errors = CrawlErrors()
    tools = n8n.crawl(MirrorSource(root), errors)
    assert errors.lines["n8n"] == ["n8n/nodes-langchain/types.nodes.json [0]: node entry has no 'name'"]
    assert len(tools) > 3500
