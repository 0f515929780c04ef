"""`ecoagent build`: bad options fail before Prefect starts; a run prints each stage's summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecoagent.cli import main


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--profile", "nope"], "unknown profile 'nope'"),
        (["--max-tools", "0"], "max_tools"),
        (["--stages", "crawl,typo"], "unknown stage(s) ['typo']"),
        (["--stages", "evaluate"], "'evaluate' needs the outputs of 'train'"),
        (["--dask-address", "tcp://127.0.0.1:1"], "only used with task_runner='dask'"),
    ],
)
def test_bad_options_fail_fast(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    message: str,
) -> None:
    import flows.build

    def _no_flow(**_: object) -> None:
        raise AssertionError("the flow (and with it Prefect) was started on bad options")

    monkeypatch.setattr(flows.build, "build_ecoagent", _no_flow)
    assert main(["build", "--out", str(tmp_path / "out"), *argv]) == 1
    err = capsys.readouterr().err
    assert err.startswith("ecoagent build: error: invalid build parameters")
    assert message in err
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]  # and nothing was written


def test_build_prints_stage_summaries(
    prefect_api: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = [
        "build", "--out", str(out), "--stages", "crawl,real", "--platforms", "crewai,n8n",
        "--stage-target", "crawl=flows_fake_stages:crawl", "--stage-target", "real=flows_fake_stages:real",
    ]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "## crawl: ran" in printed and "## real: ran" in printed
    assert "per_platform.n8n" in printed
    assert f"## build-ecoagent: {out}" in printed

    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "## crawl: cached" in printed and "## real: cached" in printed

    assert main([*argv, "--force"]) == 0
    assert "## crawl: ran" in capsys.readouterr().out


def test_failed_build_exits_nonzero(
    prefect_api: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = [
        "build", "--out", str(out), "--stages", "crawl,real",
        "--stage-target", "crawl=flows_fake_stages:crawl", "--stage-target", "real=flows_fake_stages:real_fails",
    ]  # fmt: skip
    assert main(argv) == 1
    captured = capsys.readouterr()
    assert "ToolBench queries are missing" in captured.out  # the summary's error column
    assert "ecoagent build: error:" in captured.err
