"""Page text helpers: YAML front matter, Markdown to plain text, links, and the opening paragraph.

Docs pages are Markdown/MDX with front matter; descriptions come from their prose, so code cells, JSX
tags and tables are removed before the text is read (Markdown -> HTML with ``markdown``, text with bs4).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import markdown
import yaml
from bs4 import BeautifulSoup

_FRONT = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.S)
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.S | re.M)
_JSX = re.compile(r"</?[A-Z][A-Za-z]*\b[^>]*?/?>")
_URL = re.compile(r"https?://[^\s<>\"'`)\]]+")


class FrontMatterError(ValueError):
    """A page's front matter is not valid YAML mapping."""


@dataclass
class Page:
    """A Markdown/MDX page split into front matter and body."""

    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def parse_page(text: str) -> Page:
    """Split front matter from the body; a broken front matter raises ``FrontMatterError``."""
    m = _FRONT.match(text)
    if not m:
        if text.lstrip().startswith("---"):
            raise FrontMatterError("front matter is not closed by a '---' line")
        return Page(meta={}, body=text)
    try:
        meta = yaml.safe_load(m.group(1))
    except yaml.YAMLError as exc:
        raise FrontMatterError(f"front matter is not valid YAML ({str(exc).splitlines()[0]})") from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise FrontMatterError("front matter is not a mapping")
    return Page(meta=meta, body=text[m.end() :])


def code_blocks(body: str) -> list[str]:
    """The fenced code cells of a page (where env vars and imports are set)."""
    return [m.group(0) for m in _FENCE.finditer(body)]


def _soup(body: str) -> BeautifulSoup:
    prose = _JSX.sub(" ", _FENCE.sub("\n", body))
    html = markdown.markdown(prose, extensions=["tables"])
    return BeautifulSoup(html, "html.parser")


def paragraphs(body: str) -> list[str]:
    """Plain-text paragraphs of the prose (no code, tables, headings or JSX tags)."""
    soup = _soup(body)
    out = []
    for p in soup.find_all("p"):
        text = " ".join(p.get_text(" ").split())
        if text:
            out.append(text)
    return out


def first_heading(body: str) -> str | None:
    """The text of the first H1 (``# Title``), without Markdown code marks."""
    m = re.search(r"^#\s+(.+?)\s*$", _FENCE.sub("\n", body), re.M)
    return m.group(1).strip().strip("`").strip() if m else None


def opening_description(body: str, max_chars: int = 600) -> str:
    """The first prose paragraphs that read as a description (skips badges and one-word lines)."""
    chosen: list[str] = []
    for para in paragraphs(body):
        if len(para) < 25 or para.lower().startswith(("note", "warning", "tip")):
            continue
        chosen.append(para)
        if sum(len(c) for c in chosen) >= 200:
            break
    text = " ".join(chosen)
    if len(text) > max_chars:
        cut = text[:max_chars]
        text = cut[: cut.rfind(". ") + 1] or cut
    return text.strip()


def links(body: str) -> list[str]:
    """Absolute http(s) links of a page, in order, deduplicated."""
    seen: dict[str, None] = {}
    for url in _URL.findall(body):
        seen.setdefault(url.rstrip(".,;:"), None)
    return list(seen)
