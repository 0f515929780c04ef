"""The Examples in RATED's docstrings run and hold (they are part of the documentation)."""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize(
    "module", ["rated.bandit", "rated.global_mab", "rated.fusion", "rated.index", "rated.config"]
)
def test_docstring_examples(module: str) -> None:
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
