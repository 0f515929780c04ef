"""The one append-only JSONL checkpoint every long stage resumes from (Syn generations, validator scores).

A record is written when its unit of work finishes, flushed and fsynced, so a kill (SIGKILL, power loss)
loses at most the unit in flight. A kill can still cut the last line short; before the first append the
writer looks at the file's tail: a fragment after the last newline is moved to ``<name>.torn`` (kept for
inspection) and cut off, so the next record starts on a line of its own instead of being glued onto the
fragment and lost at the following resume. A tail that is a whole JSON object missing only its newline
is kept and completed.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


class JsonlCheckpoint:
    """Append-only JSON Lines resume state at ``path`` (created with its folder on first append)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._repaired = False

    @property
    def torn_path(self) -> Path:
        """Where torn tails are set aside."""
        return self.path.with_name(self.path.name + ".torn")

    def records(self) -> list[dict[str, Any]]:
        """Every complete record, in file order; a line that is not a JSON object is logged and skipped."""
        if not self.path.exists():
            return []
        out = []
        with self.path.open("rb") as fh:
            for line_no, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    record = json.loads(raw)
                except ValueError:
                    record = None
                if not isinstance(record, dict):
                    log.warning("%s:%d: skipping a torn or unreadable checkpoint line", self.path, line_no)
                    continue
                out.append(record)
        return out

    def repair(self) -> bool:
        """Cut a torn last line off (kept in ``torn_path``); True when something was set aside."""
        self._repaired = True
        if not self.path.exists():
            return False
        with self.path.open("rb+") as fh:
            size = fh.seek(0, os.SEEK_END)
            if size == 0:
                return False
            fh.seek(max(0, size - 1))
            if fh.read(1) == b"\n":
                return False
            # find the start of the last line
            pos, chunk = size, 1 << 16
            start = 0
            while pos > 0:
                step = min(chunk, pos)
                fh.seek(pos - step)
                block = fh.read(step)
                i = block.rfind(b"\n")
                if i >= 0:
                    start = pos - step + i + 1
                    break
                pos -= step
            fh.seek(start)
            tail = fh.read()
            try:
                whole = isinstance(json.loads(tail), dict)
            except ValueError:
                whole = False
            if whole:
                fh.seek(size)
                fh.write(b"\n")
            else:
                with self.torn_path.open("ab") as torn:
                    torn.write(tail + b"\n")
                    torn.flush()
                    os.fsync(torn.fileno())
                fh.truncate(start)
            fh.flush()
            os.fsync(fh.fileno())
        if whole:
            return False
        log.warning(
            "%s: a torn last line (%d bytes, a run killed mid-write) was moved to %s",
            self.path,
            len(tail),
            self.torn_path,
        )
        return True

    def append(self, records: Iterable[dict[str, Any]], **dumps: Any) -> None:
        """Write records as lines and fsync them before returning (the durable point of the unit)."""
        if not self._repaired:
            self.repair()
        data = "".join(json.dumps(r, **dumps) + "\n" for r in records).encode("utf-8")
        if not data:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
