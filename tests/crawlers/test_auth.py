"""Credential names -> auth kind, and the filter for example-agent keys."""

from __future__ import annotations

from crawlers.auth import is_agent_key, is_credential_name, kind_of_names


def test_kinds() -> None:
    assert kind_of_names([]) == "none"
    assert kind_of_names(["SERPER_API_KEY"]) == "api_key"
    assert kind_of_names(["GMAIL_CLIENT_ID", "GMAIL_CLIENT_SECRET"]) == "oauth2"
    assert kind_of_names(["SNOWFLAKE_USER", "SNOWFLAKE_PASSWORD"]) == "basic"
    assert kind_of_names(["AWS_REGION"]) == "other"
    assert kind_of_names(["app_id"]) == "api_key"  # WolframAlpha's credential
    assert not is_credential_name("TILORES_TOKEN_URL") and not is_credential_name("AZURE_OPENAI_ENDPOINT")


def test_agent_keys_are_not_tool_keys() -> None:
    assert (
        is_agent_key("OPENAI_API_KEY")
        and is_agent_key("LANGSMITH_TRACING")
        and is_agent_key("LANGCHAIN_API_KEY")
    )
    assert not is_agent_key("TAVILY_API_KEY") and not is_agent_key("OPENAI_API_KEY_FOR_DALLE")


def test_credential_names() -> None:
    assert (
        is_credential_name("api_key")
        and is_credential_name("GITHUB_TOKEN")
        and is_credential_name("password")
    )
    assert not is_credential_name("region") and not is_credential_name("timeout")
