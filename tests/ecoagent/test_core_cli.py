"""The console command: every stage is a subcommand with the shared options."""

from __future__ import annotations

import subprocess
import sys

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
