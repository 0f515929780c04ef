"""Parsing messy LLM answers into queries."""

from __future__ import annotations

import pytest

from generators.parse import clean, parse_queries


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        (
            "1. Find flights to Rome\n2) Book a hotel in Paris\n3 - Rent a car",
            ["Find flights to Rome", "Book a hotel in Paris", "Rent a car"],
        ),
        (
            "Sure! Here are some requests:\n- Convert my PDF to text\n* Summarize this paper\n\u2022 Translate it",
            ["Convert my PDF to text", "Summarize this paper", "Translate it"],
        ),
        (
            '["what is the weather in Oslo", "forecast for Bergen"]',
            ["what is the weather in Oslo", "forecast for Bergen"],
        ),
        ('Here you go: {"queries": ["a b c d e", "f g h i j"]}', ["a b c d e", "f g h i j"]),
        ('[{"query": "send an email to Bob"}]', ["send an email to Bob"]),
        (
            'A user might ask: "Can you check the stock price of AAPL today?"',
            ["Can you check the stock price of AAPL today?"],
        ),
        ("**1.** **Search the web for news**", ["Search the web for news"]),
        ('"Find me cheap flights to Lisbon', ["Find me cheap flights to Lisbon"]),
        ("Query: list my open GitHub issues", ["list my open GitHub issues"]),
    ],
)
def test_parses_lists_bullets_json_and_chatter(answer: str, expected: list[str]) -> None:
    assert parse_queries(answer).queries == expected


def test_intro_lines_are_dropped_when_no_list_markers() -> None:
    parsed = parse_queries("Here are two requests:\nFind a recipe for lasagna\nBook a table for two")
    assert parsed.queries == ["Find a recipe for lasagna", "Book a table for two"]


@pytest.mark.parametrize("answer", ["", "   \n  ", "Here are the requests:"])
def test_empty_answers_give_a_reason(answer: str) -> None:
    parsed = parse_queries(answer)
    assert parsed.queries == []
    assert parsed.reason


def test_broken_json_falls_back_to_lines() -> None:
    assert parse_queries('["find the nearest pharmacy", "open now"').queries == [
        '["find the nearest pharmacy", "open now"'
    ]
    assert clean("  3.   'quoted  text' ") == "quoted text"


def test_a_list_with_bracketed_values_is_not_read_as_json() -> None:
    # a real answer (Qwen2.5-Coder-1.5B for Notion's load_data) that an earlier parser read as the JSON
    # array [123, 456, 789], finding no query in it
    answer = (
        "1. Load data from page ids: [123, 456, 789]\n"
        "2. Retrieve information from database ids: [abc, def, ghi]\n"
        "3. Fetch data from a specific page id: [42]"
    )
    assert parse_queries(answer).queries == [
        "Load data from page ids: [123, 456, 789]",
        "Retrieve information from database ids: [abc, def, ghi]",
        "Fetch data from a specific page id: [42]",
    ]
    assert parse_queries("[1, 2, 3]").queries == ["[1, 2, 3]"]  # no string in the JSON: the line itself
