"""Where crawlers read catalog files from: a local mirror folder, or the live upstream (``crawlers.live``).

Crawlers only speak mirror-relative paths (``crewai/tool.specs.json``), so the same parsing code runs on
the snapshot and on the network; a ``Source`` turns a path into bytes and lists a folder's entries.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

_PART = re.compile(r"^(?P<stem>.+)\.part-(?P<i>\d+)-of-(?P<n>\d+)\.json$")


class SourceFileMissing(FileNotFoundError):
    """A path the crawler asked for does not exist in the source."""


def join_json_arrays(parts: list[tuple[str, bytes]]) -> bytes:
    """One JSON array from the bytes of several (the snapshot splits big arrays into ``.part-i-of-n``).

    Joined as bytes, without decoding, so a bad byte or bad syntax inside a part reaches the tolerant
    reader (``crawlers.files``) that reports it; only a part that is not an array at all raises.
    """
    inner = []
    for name, data in parts:
        body = data.strip()
        if not (body.startswith(b"[") and body.endswith(b"]")):
            raise ValueError(f"{name} is not a JSON array (a part of a split file)")
        body = body[1:-1].strip()
        if body:
            inner.append(body)
    return b"[" + b", ".join(inner) + b"]"


class Source(Protocol):
    """Read access to a catalog tree laid out like ``../shared/catalogs``."""

    def read(self, path: str) -> bytes:
        """The bytes of a mirror-relative file; ``SourceFileMissing`` when it is not there."""
        ...

    def list(self, path: str) -> list[str]:
        """Names in a mirror-relative folder (folders end with ``/``), sorted."""
        ...

    def describe(self, path: str) -> str:
        """How a record names where it came from: the mirror path, or the URL in live mode."""
        ...


class MirrorSource:
    """A local folder laid out like the snapshot (``ecoagent crawl --mirror DIR``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        if not self.root.is_dir():
            raise FileNotFoundError(f"mirror folder {self.root} does not exist")

    def read(self, path: str) -> bytes:
        file = self.root / path
        if file.is_file():
            return file.read_bytes()
        parts = self._parts(path)
        if parts:
            return join_json_arrays([(p.name, p.read_bytes()) for p in parts])
        raise SourceFileMissing(f"{path} is not in the mirror {self.root}")

    def _parts(self, path: str) -> list[Path]:
        file = self.root / path
        if not file.name.endswith(".json") or not file.parent.is_dir():
            return []
        stem = file.name[: -len(".json")]
        found = []
        for candidate in file.parent.iterdir():
            m = _PART.match(candidate.name)
            if m and m["stem"] == stem:
                found.append((int(m["i"]), candidate))
        return [p for _, p in sorted(found)]

    def list(self, path: str) -> list[str]:
        folder = self.root / path
        if not folder.is_dir():
            raise SourceFileMissing(f"{path} is not a folder of the mirror {self.root}")
        return sorted(p.name + "/" if p.is_dir() else p.name for p in folder.iterdir())

    def describe(self, path: str) -> str:
        return path
