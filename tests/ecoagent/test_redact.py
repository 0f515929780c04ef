"""``ecoagent.redact``: credential values go, placeholders that hold no secret stay."""

from __future__ import annotations

from ecoagent.redact import redact


def test_key_shapes_and_query_values_are_redacted_but_placeholders_stay() -> None:
    fake = "sk-" + "a1B2" * 8
    assert redact(f"export OPENAI_API_KEY={fake} then run") == "export OPENAI_API_KEY=[REDACTED] then run"
    assert (
        redact("https://api.x.com/v1?apikey=abcdef123456&q=1") == "https://api.x.com/v1?apikey=[REDACTED]&q=1"
    )
    templated = "http://api.wolframalpha.com/v1/result?appid={app_id}&i={query}"
    assert redact(templated) == templated
    assert redact("https://x.dev/api?key=${apiKey}") == "https://x.dev/api?key=${apiKey}"


def test_planted_values_are_redacted_and_placeholders_stay(planted: tuple[dict[str, str], str]) -> None:
    secrets, text = planted
    clean = redact(text)
    assert clean is not None
    for value in secrets.values():
        assert value not in clean
    assert "export MY_SERVICE_API_KEY=[REDACTED]" in clean and "postgres://admin:[REDACTED]@db" in clean
    for kept in (
        'api_key="YOUR_API_KEY_HERE"',
        "OPENAI_API_KEY=<your-key>",
        "token: ${GITHUB_TOKEN}",
        "api_key=os.environ['SERPER_API_KEY']",
        "password: the user's password",
        "Authorization: Bearer {token}",
        "SERPER_API_KEY=xxxxxxxxxxxx",
    ):
        assert redact(kept) == kept, kept
