"""Tolerant readers for catalog files: bad bytes or bad syntax become one ``file: problem`` line, not a crash.

Every crawler reads its JSON, JSON Lines, YAML-fronted Markdown and TOML files through these helpers, so
one corrupt file costs what it holds and nothing more:

- bytes that are not UTF-8 are replaced with U+FFFD and reported once per file (the text around them is
  kept, so a stray byte in one description costs no tool);
- a file that does not parse is reported and read as absent (``None``; ``read_jsonl`` skips only the bad
  line);
- a missing file is reported with the caller's ``missing`` text, or silently when ``missing`` is None.

``required=True`` is for a platform's main source (``tool.specs.json``, n8n's ``types.nodes``): there a
missing or unparseable file raises (``FileNotFoundError`` / ``ValueError`` naming the file), which fails
that platform's crawl as ``crawl of <platform> failed: ...``; undecodable bytes are still only reported.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

from crawlers.report import CrawlErrors
from crawlers.source import Source, SourceFileMissing
from crawlers.text import FrontMatterError, Page, parse_page


def decode_utf8(data: bytes) -> tuple[str, str | None]:
    """``(text, problem)``: the text with undecodable bytes replaced, and what was wrong (None if nothing)."""
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", "replace")
        bad = text.count("\ufffd") - data.count("\ufffd".encode())
        problem = (
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at position {exc.start}); "
            f"{bad} undecodable byte sequence(s) replaced with U+FFFD"
        )
        return text, problem


def read_text(
    source: Source,
    path: str,
    platform: str,
    errors: CrawlErrors,
    *,
    missing: str | None = "missing",
    required: bool = False,
) -> str | None:
    """The file's text (bad bytes replaced and reported); None when it is missing."""
    try:
        data = source.read(path)
    except SourceFileMissing as exc:
        if required:
            raise FileNotFoundError(f"{platform}: {exc}") from None
        if missing is not None:
            errors.add(platform, source.describe(path), missing)
        return None
    text, problem = decode_utf8(data)
    if problem:
        errors.add(platform, source.describe(path), problem)
    return text


def read_json(
    source: Source,
    path: str,
    platform: str,
    errors: CrawlErrors,
    *,
    missing: str | None = "missing",
    required: bool = False,
) -> Any | None:
    """The parsed JSON value; None (after an error line) when the file is missing or not valid JSON."""
    text = read_text(source, path, platform, errors, missing=missing, required=required)
    if text is None:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        if required:
            raise ValueError(f"{platform}: {source.describe(path)} is {problem}") from None
        errors.add(platform, source.describe(path), problem + "; file skipped")
        return None


def read_jsonl(
    source: Source,
    path: str,
    platform: str,
    errors: CrawlErrors,
    *,
    missing: str | None = "missing; its facts are skipped",
) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file; a bad line is one error line and is skipped."""
    try:
        data = source.read(path)
    except SourceFileMissing:
        if missing is not None:
            errors.add(platform, source.describe(path), missing)
        return []
    rows = []
    for i, raw in enumerate(data.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{source.describe(path)} line {i}"
        line, problem = decode_utf8(raw)
        if problem:
            errors.add(platform, where, problem)
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.add(platform, where, f"bad JSON ({exc.msg}); line skipped")
            continue
        if not isinstance(row, dict):
            errors.add(platform, where, "not a JSON object; line skipped")
            continue
        rows.append(row)
    return rows


def read_toml(
    source: Source, path: str, platform: str, errors: CrawlErrors, *, missing: str | None = "missing"
) -> dict[str, Any] | None:
    """The parsed TOML table; None (after an error line) when missing or not valid TOML."""
    text = read_text(source, path, platform, errors, missing=missing)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        errors.add(platform, source.describe(path), f"not valid TOML ({exc}); file skipped")
        return None


def read_page(
    source: Source, path: str, platform: str, errors: CrawlErrors, *, missing: str | None = None
) -> Page | None:
    """A Markdown/MDX page split at its YAML front matter; None (after an error line) when it is broken.

    ``missing`` defaults to silent: a listed page that cannot be fetched is reported by the live source.
    """
    text = read_text(source, path, platform, errors, missing=missing)
    if text is None:
        return None
    try:
        return parse_page(text)
    except FrontMatterError as exc:
        errors.add(platform, source.describe(path), str(exc))
        return None
