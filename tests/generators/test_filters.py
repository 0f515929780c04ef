"""Query checks: length bounds, prompt echoes, naming the tool."""

from __future__ import annotations

from generators.filters import names_tool, rejection


def test_length_bounds() -> None:
    assert rejection("too short here") == "too short (3 words)"
    assert rejection(" ".join(["word"] * 121)) == "too long (121 words)"
    assert rejection("find me a cheap flight to Rome") == ""


def test_prompt_echo_is_rejected() -> None:
    assert rejection("<<<TOOL_DOCS name: SerperDevTool description") == "echoes the prompt"
    assert rejection("description: search the internet with serper") == "echoes the prompt"


def test_names_tool() -> None:
    assert names_tool("Use SerperDevTool to search for cats", "SerperDevTool")
    assert names_tool("use the serper dev tool to find recipes", "SerperDevTool")
    assert not names_tool("search the web for vegan recipes please", "SerperDevTool")
    assert not names_tool("convert my pdf file into plain text", "PDF")
    assert names_tool("send a message with slack to the team", "Slack")


def test_degenerate_loops_are_rejected() -> None:
    loop = "Help me find the latest news from the latest news on the latest news on the latest news"
    assert rejection(loop) == "repeats itself"
    assert rejection("Please rename old.txt to new.txt and then rename new.txt to final.txt") == ""
