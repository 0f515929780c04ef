"""Checks on single generated queries: length, prompt echoes, copied examples, truncation, meta-talk,
language, and whether a query names its tool. Each rejection has a stable reason, counted in stats."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from crawlers.injection import looks_like_instruction
from generators.dedup import MinHashConfig, jaccard, shingles
from generators.equivalents import name_words
from generators.prompts import FENCE_CLOSE, FENCE_OPEN, service

FILTER_VERSION = "f10"  # part of the generation checkpoint key: changing a rule regenerates
MIN_WORDS = 5
MAX_WORDS = 120
_WORD = re.compile(r"\S+")
_ECHO = re.compile(r"TOOL_DOCS|<<<|>>>|^(?:name|description|arguments|style)\s*:", re.IGNORECASE)


# the dedup threshold, read from dedup's own config so the two rules cannot drift apart: a query this
# close to a prompt example is a copy of it, to an earlier query of its tool a repeat
COPY_JACCARD = MinHashConfig().threshold
# chatter around the answer, refusals and talk about the task instead of a request
_META = re.compile(
    r"^(?:sure\b|certainly\b|of course\b|here(?:'s| is| are)\b|as an ai\b|i'?m sorry|i am sorry|"
    r"i can(?:no|')t\b|i am unable|i'm unable|note\s*:|expected output|output\s*:|example\s*\d*\s*:|"
    r"request\s*\d*\s*:|user\s*:|assistant\s*:)"
    r"|\b(?:here(?:'s| is) (?:a|another|one) (?:new |more )?(?:user )?(?:request|query|example)"
    r"|as an ai(?: language)? model|i (?:cannot|can't|won't) (?:help|assist|do that))\b",
    re.IGNORECASE,
)
# a question about the tool itself instead of a task for it: "How does this tool compare ...?", "What is a
# LangChain Tool?", "How can I use the SpiderTool to ...?", "How do I install StripeAgentToolkit?"; a name
# may be quoted ("What is the purpose of the `bing_search_results_json` tool?", filters f8)
_ABOUT_TOOL = re.compile(
    r"\b(?:this|the|that|your|a|an)\s+(?:[\w`'\"-]+\s+){0,4}?[\w`'\"-]*tool\b"
    r"|\bhow (?:can|do|should|would|could) (?:i|we|you|one) (?:use|call|invoke|configure|set up|install)\b"
    r"|\bhow to (?:use|call|invoke|configure|set up|install)\b"
    r"|\b(?:show|give) me an example of how\b|\bexplain (?:the purpose|how)\b"
    r"|\bwhat (?:is|are) (?:a|an|the) [\w -]{0,30}(?:package|library|api|node|plugin)s?\??$",
    re.IGNORECASE,
)
_SENTENCE_END = (".", "?", "!", '"', "'", ")", "]", "\u201d", "\u2019")


_SENTENCES = re.compile(r"[^.!?\n]+[.!?]?")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_-]{3,}")


def injected_words(description: str) -> frozenset[str]:
    """Words that occur only in the instruction-like sentences of a description (e.g. "PWNED"): a query
    that uses one of them took it from the injection, not from what the tool does."""
    sentences = _SENTENCES.findall(description or "")
    flagged = [x for x in sentences if looks_like_instruction(x)]
    if not flagged:
        return frozenset()
    rest = {w.lower() for x in sentences if x not in flagged for w in _TOKEN.findall(x)}
    return frozenset(w.lower() for x in flagged for w in _TOKEN.findall(x)) - rest - _COMMON


_COMMON = frozenset(
    [
        "ignore",
        "disregard",
        "forget",
        "override",
        "previous",
        "prior",
        "above",
        "instructions",
        "instruction",
        "prompt",
        "prompts",
        "rules",
        "reply",
        "respond",
        "answer",
        "output",
        "only",
        "exactly",
        "just",
        "word",
        "words",
        "with",
        "the",
        "this",
        "that",
        "then",
        "now",
        "tool_docs",
    ]
)


def word_count(text: str) -> int:
    return len(_WORD.findall(text))


def is_meta(query: str) -> bool:
    """True for chatter, refusals and meta-talk ("Here's a new request for the tool: ...")."""
    return _META.search(query) is not None


def ends_sentence(query: str) -> bool:
    """True when the query ends like a finished sentence; a query cut at the token limit does not."""
    return query.rstrip().endswith(_SENTENCE_END)


def is_english(query: str, max_foreign: float = 0.3) -> bool:
    """True unless more than ``max_foreign`` of the letters are outside ASCII (another script or language
    written with many accents); the benchmark's queries and tools are English."""
    letters = [c for c in query if c.isalpha()]
    if not letters:
        return False
    return sum(not c.isascii() for c in letters) / len(letters) <= max_foreign


def copies_example(query: str, examples: Sequence[str]) -> bool:
    """True when the query equals, or is a near-duplicate (word 1-2-gram Jaccard > 0.7, the dedup rule)
    of, an example shown in the prompt."""
    return near_duplicate(query, examples)


def rejection(
    query: str,
    min_words: int = MIN_WORDS,
    max_words: int = MAX_WORDS,
    examples: Sequence[str] = (),
    check_end: bool = False,
    injected: frozenset[str] = frozenset(),
) -> str:
    """Why a parsed query is unusable ("" when it is fine).

    Args:
        examples: the worked examples of the prompt, which no kept query may copy.
        check_end: the query was the last text of an answer, so it may have been cut at the token limit:
            it must end like a sentence.
        injected: ``injected_words`` of the tool's description, which no kept query may use.
    """
    if _ECHO.search(query) or FENCE_OPEN in query or FENCE_CLOSE in query:
        return "echoes the prompt"
    if looks_like_instruction(query) or (
        injected and any(w.lower() in injected for w in _TOKEN.findall(query))
    ):
        return "echoes an instruction"
    if examples and copies_example(query, examples):
        return "copies a prompt example"
    if is_meta(query):
        return "meta-talk or refusal"
    if _ABOUT_TOOL.search(query):
        return "talks about the tool"
    if check_end and not ends_sentence(query):
        return "truncated (no sentence end)"
    if not is_english(query):
        return "not English"
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
    if not ordered or (len(ordered) == 1 and len(ordered[0]) < 4):
        return False
    return _says(q, ordered)


def _says(text: str, words: Sequence[str]) -> bool:
    """True when ``words`` occur in ``text`` in a row, as whole words, joined by spaces, ``_`` or ``-``."""
    return re.search(r"\b" + r"[\s_-]*".join(map(re.escape, words)) + r"\b", text) is not None


def names_service(query: str, tool: Mapping[str, Any]) -> bool:
    """True when the query names the service or toolkit the tool belongs to (``prompts.service``: "in
    our Jira", "on Box"); always False for a tool with a two-part id, which has none. Reported beside
    ``names_tool`` because a named service makes a query easier for lexical retrievers."""
    words = re.findall(r"[a-z0-9]+", service(tool).lower())
    return bool(words) and _says(query.lower(), words)


def near_duplicate(query: str, earlier: Sequence[str]) -> bool:
    """True when the query is a near-duplicate (word 1-2-gram Jaccard > 0.7, the dedup rule) of one of
    ``earlier``. The generator applies it within a tool, so a tool whose list repeats itself asks again
    instead of losing the repeats at dedup."""
    grams = shingles(query)
    return any(jaccard(grams, shingles(e)) > COPY_JACCARD for e in earlier)
