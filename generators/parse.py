"""Turn raw LLM answers into candidate queries: numbered lists, bullets, JSON, or a single line.

Small models wrap answers in chatter ("Sure! Here are ...", "A user might ask: \"...\""); parsing strips
that and returns either queries or the reason there were none, so failures can be counted and retried.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_ITEM = re.compile(r"^\s*(?:\d{1,3}\s*[.):\]-]|[-*\u2022+]|\(\d{1,3}\)|#\d+)\s+")
_LEAD_IN = re.compile(
    r"^(?:sure|okay|ok|certainly|of course|here (?:is|are)|a user (?:might|could|would) (?:ask|say|type|write)"
    r"|user(?: request)?|request|query|question|example|answer)\b[^:\"\n]{0,60}:\s*",
    re.IGNORECASE,
)
MIN_LIST_ITEMS = 2  # fewer list items than this and the answer may be JSON or plain lines
_QUOTES = "\"'\u201c\u201d\u2018\u2019`"


@dataclass(frozen=True)
class Parsed:
    """Queries found in one answer, or why none were (``reason`` is empty on success)."""

    queries: list[str] = field(default_factory=list)
    reason: str = ""


def clean(line: str) -> str:
    """One candidate line without list markers, lead-ins, surrounding quotes or markdown emphasis."""
    line = _ITEM.sub("", line.replace("**", "").strip())
    for _ in range(2):
        line = _LEAD_IN.sub("", line).strip()
    if len(line) >= 2 and line[0] in _QUOTES and line[-1] in _QUOTES:
        line = line[1:-1].strip()
    elif line and line[0] in _QUOTES and line.count(line[0]) == 1:
        line = line[1:].strip()
    return re.sub(r"\s+", " ", line)


def _from_json(text: str) -> list[str] | None:
    start = min((i for i in (text.find("["), text.find("{")) if i != -1), default=-1)
    if start == -1:
        return None
    try:
        data, _ = json.JSONDecoder().raw_decode(text[start:])
    except ValueError:
        return None
    if isinstance(data, dict):
        data = next((v for v in data.values() if isinstance(v, list)), None)
    if not isinstance(data, list):
        return None
    items = [
        d if isinstance(d, str) else (d.get("query") or d.get("request")) if isinstance(d, dict) else None
        for d in data
    ]
    return [clean(i) for i in items if isinstance(i, str) and i.strip()]


def list_items(text: str) -> list[str]:
    """The non-empty lines of an answer that start like a list item ("1.", "-", "(2)", "#3")."""
    return [ln for ln in text.splitlines() if ln.strip() and _ITEM.match(ln)]


def is_list(text: str) -> bool:
    """Whether an answer is a list (``MIN_LIST_ITEMS`` or more list items), which ``parse_queries`` reads
    item by item whatever the items hold, so a prefix of it parses to the first of its queries."""
    return len(list_items(text)) >= MIN_LIST_ITEMS


def parse_queries(text: str) -> Parsed:
    """Queries in an LLM answer: a JSON list, list items, or (if neither) each non-empty line.

    Lines that only introduce or close the list ("Here are 10 requests:") are dropped.
    """
    if not text or not text.strip():
        return Parsed(reason="empty answer")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    items = list_items(text)
    # a numbered list whose requests hold bracketed values ("page ids [123, 456]") is a list, not JSON;
    # JSON that gives no string (an array of numbers) is not an answer either
    found = None if len(items) >= MIN_LIST_ITEMS else _from_json(text)
    if not found:
        chosen = items if items else lines
        found = [clean(ln) for ln in chosen]
        found = [q for q in found if q and not q.endswith(":")]
    found = [q for q in found if q]
    if not found:
        return Parsed(reason="no query in answer")
    return Parsed(queries=found)
