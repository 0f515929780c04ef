"""Checks on single generated queries: length bounds, prompt echoes, and whether a query names its tool."""

from __future__ import annotations

import re

from generators.equivalents import name_words
from generators.prompts import FENCE_CLOSE, FENCE_OPEN

FILTER_VERSION = "f2"  # part of the generation checkpoint key: changing a rule regenerates
MIN_WORDS = 5
MAX_WORDS = 120
_WORD = re.compile(r"\S+")
_ECHO = re.compile(r"TOOL_DOCS|<<<|>>>|^(?:name|description|arguments|style)\s*:", re.IGNORECASE)


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def rejection(query: str, min_words: int = MIN_WORDS, max_words: int = MAX_WORDS) -> str:
    """Why a parsed query is unusable ("" when it is fine)."""
    if _ECHO.search(query) or FENCE_OPEN in query or FENCE_CLOSE in query:
        return "echoes the prompt"
    n = word_count(query)
    if n < min_words:
        return f"too short ({n} words)"
    if n > max_words:
        return f"too long ({n} words)"
    if repeats_itself(query):
        return "repeats itself"
    return ""


def repeats_itself(query: str, n: int = 3, times: int = 3) -> bool:
    """True when some word ``n``-gram occurs ``times`` or more: the degenerate loops of a small model
    ("the latest news on the latest news on the latest news ...")."""
    words = [w.strip(".,!?;:\"'").lower() for w in query.split()]
    counts: dict[tuple[str, ...], int] = {}
    for i in range(len(words) - n + 1):
        gram = tuple(words[i : i + n])
        counts[gram] = counts.get(gram, 0) + 1
        if counts[gram] >= times:
            return True
    return False


def names_tool(query: str, tool_name: str) -> bool:
    """True when the query states the tool's name outright (as written, or as its words in a row).

    "use SerperDevTool to search" and "use serper dev to search" both name ``SerperDevTool``; a query
    that only shares a common word with the name ("search the web") does not.
    """
    q = query.lower()
    bare = tool_name.strip()
    if not bare or (len(bare) < 4 and " " not in bare):
        return False  # a short single word ("PDF", "SQL") is a topic, not a name
    if tool_name.strip().lower() in q:
        return True
    words = sorted(name_words(tool_name), key=tool_name.lower().find)
    if not words:
        return False
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", tool_name).lower()
    ordered = [w for w in re.split(r"[^a-z0-9]+", spaced) if w in words]
    phrase = r"\b" + r"[\s_-]*".join(re.escape(w) for w in ordered) + r"\b"
    if not ordered or (len(ordered) == 1 and len(ordered[0]) < 4):
        return False
    return re.search(phrase, q) is not None
