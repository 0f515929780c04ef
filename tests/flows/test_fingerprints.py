"""Stage cache keys follow the code a stage runs (every first-party module it imports) and nothing absolute."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

import flows.fingerprints as fp
from flows.build import stage_cache_key


def test_the_evaluate_stage_is_keyed_on_what_it_imports() -> None:
    closure = fp.first_party_closure("rated.evaluation.pipeline")
    assert {"rated.bandit", "rated.kernels", "ecoagent.schemas", "rated.evaluation.baselines"} <= set(closure)
    assert "crawlers.pipeline" not in closure  # not imported by evaluation: editing it keeps the cache


def test_editing_an_imported_module_changes_the_key_and_an_unrelated_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pkg = tmp_path / "fpdemo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "stage.py").write_text("def run():\n    from fpdemo.helper import f\n    return f()\n")
    (pkg / "helper.py").write_text("from .deep import g\n\ndef f():\n    return g()\n")
    (pkg / "deep.py").write_text("def g():\n    return 1\n")
    (pkg / "other.py").write_text("x = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(fp, "FIRST_PARTY", (*fp.FIRST_PARTY, "fpdemo"))
    key = fp.code_fingerprint("fpdemo.stage:run")
    (pkg / "other.py").write_text("x = 2\n")
    assert fp.code_fingerprint("fpdemo.stage:run") == key
    (pkg / "deep.py").write_text("def g():\n    return 2\n")  # two imports away, through a relative import
    assert fp.code_fingerprint("fpdemo.stage:run") != key
    sys.modules.pop("fpdemo", None)


def test_a_moved_folder_keeps_its_keys(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "moved" / "b"
    a.mkdir()
    (a / "tools.parquet").write_bytes(b"tools")
    shutil.copytree(a, b)

    def call(out: Path) -> dict:
        return {
            "call": {
                "stage": "evaluate",
                "target": "rated.evaluation.pipeline:run",
                "out": str(out),
                "profile": {"name": "embedded", "seed": 0},
                "options": {"mirror": str(out / "mirror")},
            }
        }

    assert stage_cache_key(None, call(a)) == stage_cache_key(None, call(b))
    (b / "tools.parquet").write_bytes(b"other")
    assert stage_cache_key(None, call(a)) != stage_cache_key(None, call(b))
