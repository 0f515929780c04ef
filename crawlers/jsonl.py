"""Moved to ``crawlers.files`` (the shared tolerant readers); kept so older imports keep working."""

from __future__ import annotations

from crawlers.files import read_jsonl

__all__ = ["read_jsonl"]
