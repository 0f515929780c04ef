"""One progress display per long loop: a tqdm bar on a terminal, a few log lines with an ETA elsewhere.

Under the deployment (Prefect logs, files, CI) a redrawn bar is either invisible or hundreds of ``\\r``
fragments, so there the same counts go to the stage's logger: at most one line per ``every_s`` seconds
(and one at the end), each with done/total, rate, elapsed time and the ETA from the loop's own rate
(items resumed from a checkpoint are not counted into the rate).
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

from tqdm.auto import tqdm


def _clock(seconds: float) -> str:
    return tqdm.format_interval(max(0.0, seconds))


class Progress:
    """``with Progress(total, "validator", "pairs", log) as bar: ... bar.update(n)``."""

    def __init__(
        self,
        total: int,
        desc: str,
        unit: str,
        logger: logging.Logger,
        every_s: float = 30.0,
        terminal: bool | None = None,
    ) -> None:
        self.total, self.desc, self.unit, self.logger, self.every_s = total, desc, unit, logger, every_s
        self.done = 0
        self.started = self._last = time.monotonic()
        self.terminal = sys.stderr.isatty() if terminal is None else terminal
        self.bar: Any = tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True) if self.terminal else None

    def line(self) -> str:
        """``validator: 48/120 pairs (40%), 2.1 pairs/s, 0:23 elapsed, ETA 0:34``."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        share = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        eta = _clock((self.total - self.done) / rate) if rate > 0 and self.done < self.total else "-"
        return (
            f"{self.desc}: {self.done}/{self.total} {self.unit}{share}, {rate:.2g} {self.unit}/s, "
            f"{_clock(elapsed)} elapsed, ETA {eta}"
        )

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
            return
        now = time.monotonic()
        if now - self._last >= self.every_s or self.done >= self.total:
            self._last = now
            self.logger.info("%s", self.line())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
