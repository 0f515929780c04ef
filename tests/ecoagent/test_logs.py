"""``ecoagent.logs.prints_follow_redirects``: a redirected stdout keeps its prints under a print patch."""

from __future__ import annotations

import builtins
import contextlib
import io
import sys
from collections.abc import Iterator
from typing import Any

import dill.detect
import pyarrow as pa
import pytest

from ecoagent.logs import prints_follow_redirects


def _uses_a_global() -> Any:
    return pa.Table


@pytest.fixture
def logged(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """A print patch shaped like Prefect's ``print_as_log``: prints to None or sys.stdout become log lines."""
    lines: list[str] = []
    original = builtins.print

    def as_log(*args: Any, **kwargs: Any) -> None:
        if kwargs.get("file") not in {None, sys.stdout, sys.stderr}:
            return original(*args, **kwargs)
        lines.append(" ".join(map(str, args)))

    monkeypatch.setattr(builtins, "print", as_log)
    yield lines


def test_the_patch_alone_swallows_a_redirected_print_and_dills_globals(logged: list[str]) -> None:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("into the buffer")
    assert buf.getvalue() == "" and logged == ["into the buffer"]
    assert dill.detect.nestedglobals(_uses_a_global) == []  # the failure the wrapper mends


def test_a_redirected_print_reaches_its_buffer_and_other_prints_stay_logged(logged: list[str]) -> None:
    prints_follow_redirects()
    prints_follow_redirects()  # idempotent: one wrapper, not two
    assert getattr(builtins.print, "follows_redirects", False)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("a", 1, sep="-", end="!\n")
        print("b", end=None)
    with contextlib.redirect_stderr(buf):
        print("err", file=sys.stderr, flush=True)
    print("to the log")
    other = io.StringIO()
    print("to a file", file=other)
    assert buf.getvalue() == "a-1!\nb\nerr\n"
    assert logged == ["to the log"]
    assert other.getvalue() == "to a file\n"
    assert dill.detect.nestedglobals(_uses_a_global) == ["pa"]


def test_nothing_to_wrap_without_a_patch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(builtins, "print", builtins.print)  # restored after the test whatever happens
    own = builtins.print
    prints_follow_redirects()
    assert builtins.print is own


def test_the_wrapper_is_found_as_builtins_print(logged: list[str]) -> None:
    # numba, first imported under the patch, registers print by checking getattr(its module, its name)
    # is print; the build's Real stage failed there when bm25s first imported numba
    import pickle

    prints_follow_redirects()
    wrapper = builtins.print
    assert getattr(sys.modules[wrapper.__module__], wrapper.__name__) is wrapper
    assert pickle.loads(pickle.dumps(wrapper)) is wrapper
