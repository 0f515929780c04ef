"""Error lines of a crawl: a malformed file or entry is recorded and skipped, so one bad file loses one tool."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


class SourceFailed(RuntimeError):
    """A whole platform source could not be read; the crawl command fails and names it."""


@dataclass
class CrawlErrors:
    """The per-file problems one crawl met, as ``file: problem`` lines grouped by platform."""

    lines: dict[str, list[str]] = field(default_factory=dict)

    def add(self, platform: str, where: str, problem: str) -> None:
        line = f"{where}: {problem}"
        log.warning("%s: %s", platform, line)
        self.lines.setdefault(platform, []).append(line)

    def count(self, platform: str | None = None) -> int:
        if platform is not None:
            return len(self.lines.get(platform, []))
        return sum(len(v) for v in self.lines.values())
