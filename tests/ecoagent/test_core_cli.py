"""The console command: every stage is a subcommand with the shared options."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ecoagent.cli import COMMANDS, build_parser, main


def test_every_stage_is_registered_with_out() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    registered = set(sub.choices)  # type: ignore[attr-defined]
    assert registered == set(COMMANDS)
    for name in ("crawl", "syn", "real", "train", "evaluate", "publish", "build"):
        with pytest.raises(SystemExit):
            parser.parse_args([name])  # --out is required


def test_help_runs_as_a_console_command() -> None:
    proc = subprocess.run([sys.executable, "-m", "ecoagent.cli", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "crawl" in proc.stdout


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "COMMAND" in capsys.readouterr().out


STAGES = ["crawl", "syn", "real", "review", "train", "evaluate", "publish", "build"]


@pytest.mark.parametrize("stage", STAGES)
def test_out_that_is_a_file_fails_first_in_one_line(
    stage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a_file = tmp_path / "out.txt"
    a_file.write_text("not a folder")
    assert main([stage, "--out", str(a_file)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"ecoagent {stage}: error: --out {a_file} is a file, not a folder: give a folder path"]
    assert a_file.read_text() == "not a folder"
    assert main([stage, "--out", str(a_file / "sub")]) == 1
    assert f"is inside {a_file}, which is a file" in capsys.readouterr().err


@pytest.mark.parametrize("stage", ["crawl", "evaluate"])
def test_unwritable_out_fails_first_in_one_line(
    stage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if os.geteuid() == 0:  # root writes through permission bits: use a tree nobody can write
        locked = Path("/proc/ecoagent-test-out")
    else:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
    started = time.perf_counter()
    assert main([stage, "--out", str(locked / "out")]) == 1
    assert time.perf_counter() - started < 5  # no crawl or evaluation ran first
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"ecoagent {stage}: error: --out {locked / 'out'} is not writable"
    )
