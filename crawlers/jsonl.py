"""Reading the ``code_facts*.jsonl`` sidecars line by line, so one bad line costs one record."""

from __future__ import annotations

import json
from typing import Any

from crawlers.report import CrawlErrors
from crawlers.source import Source, SourceFileMissing


def read_jsonl(source: Source, path: str, platform: str, errors: CrawlErrors) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file; bad lines become error lines, a missing file one error."""
    try:
        text = source.read(path).decode("utf-8")
    except SourceFileMissing:
        errors.add(platform, source.describe(path), "missing; its facts are skipped")
        return []
    rows = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.add(platform, f"{source.describe(path)} line {i}", f"bad JSON ({exc.msg})")
            continue
        if not isinstance(row, dict):
            errors.add(platform, f"{source.describe(path)} line {i}", "not a JSON object")
            continue
        rows.append(row)
    return rows
