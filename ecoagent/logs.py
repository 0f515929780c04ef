"""The one logging set-up of every entry point: the ``ecoagent`` CLI, the Prefect flow and its deployment.

- Stage loggers (``crawlers``, ``generators``, ``validators``, ``rated``, ``ecoagent``, ``flows``) log at
  INFO; chatty libraries are held at WARNING (``datasets``/``dill`` pickling traces, the
  sentence-transformers evaluator's per-call tables, HTTP request lines), unless ``--verbose``.
- Every handler redacts credential values (``ecoagent.redact.RedactingFilter``).
- Inside a Prefect run, ``route_to_prefect`` also sends the stage loggers to the run's log (the UI and
  ``prefect flow-run logs``): Prefect only forwards its own loggers, so without it a served deployment
  shows nothing between a stage's first and last line.
- ``prints_follow_redirects`` keeps a redirected ``sys.stdout`` working under Prefect's ``log_prints``.
"""

from __future__ import annotations

import builtins
import logging
import sys
import types
from typing import Any, TextIO

STAGE_LOGGERS = ("crawlers", "generators", "validators", "rated", "ecoagent", "flows")
NOISY = (
    "datasets",
    "dill",
    "sentence_transformers",
    "transformers",
    "httpx",
    "httpcore",
    "urllib3",
    "filelock",
    "fsspec",
    "huggingface_hub",
)
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _redact_handlers(handlers: list[logging.Handler]) -> None:
    from ecoagent.redact import RedactingFilter

    for handler in handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def setup_logging(verbose: bool = False) -> None:
    """Console logging for a command: stage loggers at INFO (DEBUG with ``verbose``), libraries quiet."""
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format=FORMAT)
    for name in STAGE_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)
    if not verbose:
        for name in NOISY:
            logging.getLogger(name).setLevel(logging.WARNING)
    _redact_handlers(logging.getLogger().handlers)


class _RunLogHandler(logging.Handler):
    """Hands stage records to Prefect's API log handler when the emitting thread is inside a run."""

    def __init__(self, api: logging.Handler) -> None:
        super().__init__()
        self.api = api

    def emit(self, record: logging.LogRecord) -> None:
        from prefect.context import FlowRunContext, TaskRunContext

        if FlowRunContext.get() is None and TaskRunContext.get() is None:
            return  # a helper thread outside any run: the console still has the line
        self.api.handle(record)


def route_to_prefect() -> None:
    """Send the stage loggers to the current Prefect run's log, once per process (idempotent)."""
    from prefect.logging.handlers import APILogHandler

    root = logging.getLogger()
    _redact_handlers(root.handlers)
    for name in STAGE_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)  # Prefect's root is at WARNING: INFO would be dropped
        if not any(isinstance(h, _RunLogHandler) for h in logger.handlers):
            handler = _RunLogHandler(APILogHandler())
            _redact_handlers([handler])
            logger.addHandler(handler)
    for name in NOISY:
        if logging.getLogger(name).level == logging.NOTSET:
            logging.getLogger(name).setLevel(logging.WARNING)


def _write(target: TextIO, args: tuple[Any, ...], sep: str | None, end: str | None, flush: bool) -> None:
    target.write((" " if sep is None else sep).join(map(str, args)) + ("\n" if end is None else end))
    if flush:
        target.flush()


def prints_follow_redirects() -> None:
    """Let a print reach a redirected ``sys.stdout``/``sys.stderr`` inside a run that logs prints (idempotent).

    Prefect's ``log_prints`` patch logs every print whose file is None or ``sys.stdout``, even while
    ``sys.stdout`` is swapped for a buffer (``contextlib.redirect_stdout``). dill reads a function's
    disassembly back from such a buffer to find its globals (``datasets``' fingerprints of the trainer's
    data), so the disassembly went to the build log and the globals came back empty. The wrapper writes a
    print to the stream itself when that stream is no longer the one it found; every other print goes to
    the patch as before. A no-op when ``print`` is the interpreter's own; the run's end restores that.
    """
    patched = builtins.print
    if isinstance(patched, types.BuiltinFunctionType) or getattr(patched, "follows_redirects", False):
        return
    stdout, stderr = sys.stdout, sys.stderr

    def follow(
        *args: Any,
        sep: str | None = " ",
        end: str | None = "\n",
        file: TextIO | None = None,
        flush: bool = False,
    ) -> None:
        target = sys.stdout if file is None else file
        if (target is sys.stdout and target is not stdout) or (target is sys.stderr and target is not stderr):
            _write(target, args, sep, end, flush)
        else:
            patched(*args, sep=sep, end=end, file=file, flush=flush)

    follow.follows_redirects = True  # type: ignore[attr-defined]
    # it stands in for print, so code that finds a function by its module and name (numba registers
    # print when first imported, pickle by reference) must find it as builtins.print, which it now is
    follow.__module__, follow.__name__, follow.__qualname__ = "builtins", "print", "print"
    builtins.print = follow
