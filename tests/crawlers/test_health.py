"""requires_auth / auth_configured on real records and a given environment."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crawlers import crewai
from crawlers.health import N8N_OVERWRITE_VAR, auth_configured, requires_auth
from crawlers.record import ToolRecord
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource


@pytest.fixture(scope="module")
def serper(mirror: Path) -> ToolRecord:
    return next(
        r for r in crewai.crawl(MirrorSource(mirror), CrawlErrors()) if r.tool_id == "crewai:serper_dev_tool"
    )


def test_env_vars(serper: ToolRecord) -> None:
    assert requires_auth(serper)
    assert not auth_configured(serper, {})
    assert not auth_configured(serper, {"SERPER_API_KEY": ""})
    assert auth_configured(serper, {"SERPER_API_KEY": "k"})


def test_n8n_credentials_come_from_credentials_overwrite_data() -> None:
    slack = ToolRecord(
        "n8n:slack:message_post",
        "Slack: Send a message",
        "Send a message",
        "n8n",
        auth_kind="api_key",
        auth_names=["slackApi", "slackOAuth2Api"],
        required_auth=["slackApi", "slackOAuth2Api"],
    )
    assert not auth_configured(slack, {})
    assert auth_configured(slack, {N8N_OVERWRITE_VAR: json.dumps({"slackOAuth2Api": {"clientId": "x"}})})
    assert not auth_configured(slack, {N8N_OVERWRITE_VAR: "not json"})


def test_constructor_only_credentials_cannot_be_seen() -> None:
    brave = ToolRecord(
        "llamaindex:brave_search_tool_spec:brave_search",
        "brave_search",
        "d",
        "llamaindex",
        auth_kind="api_key",
        auth_names=["api_key"],
        required_auth=["api_key"],
    )
    assert not auth_configured(brave, {"api_key": "x"})
    free = ToolRecord("n8n:if", "If", "Route items", "n8n")
    assert not requires_auth(free) and auth_configured(free, {})
