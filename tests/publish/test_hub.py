"""Hub upload against a Hub-compatible server on 127.0.0.1, then reading it back with huggingface_hub and
`datasets.load_dataset("ORG/NAME", config)`; the token never reaches a file, a log line or the output."""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from huggingface_hub import constants, hf_hub_download

from ecoagent.cli import main
from ecoagent.config import get_profile
from publish import hub
from publish.pipeline import run

from .hub_server import HubServer

TOKEN = "hf_EcoAgentTestToken_3f9c2a7d1b"
REPO = "ecoagent-org/ecoagent-bench"


@pytest.fixture
def hub_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """A fresh fake Hub; huggingface_hub pointed at it (HF_ENDPOINT, no Xet, online), HF_TOKEN set."""
    with HubServer(tmp_path / "hub", token=TOKEN) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        # huggingface_hub reads these once at import: patch the live values too
        monkeypatch.setattr(constants, "ENDPOINT", server.url)
        monkeypatch.setattr(
            constants, "HUGGINGFACE_CO_URL_TEMPLATE", server.url + "/{repo_id}/resolve/{revision}/{filename}"
        )
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
        monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
        yield server


@pytest.fixture
def out_copy(small_out: Path, tmp_path: Path) -> Path:
    """A private copy of the inputs (uploading rebuilds dataset/ with the repo URL in the Croissant)."""
    out = tmp_path / "out"
    shutil.copytree(small_out, out, ignore=shutil.ignore_patterns("dataset", ".done"))
    return out


def _all_text(folder: Path) -> Iterator[tuple[Path, bytes]]:
    for p in folder.rglob("*"):
        if p.is_file():
            yield p, p.read_bytes()


def test_upload_round_trip_and_token_never_leaks(
    hub_server: HubServer,
    out_copy: Path,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    stats = run(out_copy, get_profile("embedded"), repo_id=REPO)
    folder = out_copy / "dataset"
    manifest = json.loads((folder / "manifest.json").read_text())

    # the server got every file, authenticated with the token, parquet through the LFS flow
    state = hub_server.state
    stored = state.repos[("dataset", REPO)].files
    assert set(stored) == set(manifest["files"]) | {"manifest.json"}
    for rel, entry in manifest["files"].items():
        assert stored[rel][0] == entry["sha256"]
        assert stored[rel][1] == rel.endswith(".parquet")
    assert state.auth_headers and set(state.auth_headers) == {f"Bearer {TOKEN}"}
    assert any(r.endswith("/info/lfs/objects/batch") for r in state.requests)
    assert stats["upload"]["commit"] == state.repos[("dataset", REPO)].head

    # hf_hub_download round trip
    got = hf_hub_download(
        REPO,
        "manifest.json",
        repo_type="dataset",
        endpoint=hub_server.url,
        cache_dir=tmp_path / "hfcache",
        token=False,
    )
    assert Path(got).read_bytes() == (folder / "manifest.json").read_bytes()
    got = hf_hub_download(
        REPO,
        "tools/train-00000-of-00001.parquet",
        repo_type="dataset",
        endpoint=hub_server.url,
        cache_dir=tmp_path / "hfcache",
        token=False,
    )
    assert Path(got).read_bytes() == (folder / "tools/train-00000-of-00001.parquet").read_bytes()

    # the token is in no file, no log record and no output
    captured = capsys.readouterr()
    assert TOKEN not in captured.out and TOKEN not in captured.err
    assert TOKEN not in caplog.text
    assert all(TOKEN.encode() not in data for _, data in _all_text(out_copy))
    assert all(TOKEN.encode() not in data for _, data in _all_text(tmp_path / "hub"))


def test_load_dataset_reads_every_config_back_from_the_server(
    hub_server: HubServer, out_copy: Path, tmp_path: Path
) -> None:
    stats = run(out_copy, get_profile("embedded"), repo_id=REPO)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE"))}
    env.update(
        HF_ENDPOINT=hub_server.url,
        HF_HUB_DISABLE_XET="1",
        HF_HOME=str(tmp_path / "hf_home"),
        HF_HUB_OFFLINE="0",
        HF_DATASETS_OFFLINE="0",
        HF_HUB_DISABLE_PROGRESS_BARS="1",
    )
    configs = [*stats["configs"], "default"]
    code = (
        "import json, sys, datasets\n"
        "datasets.disable_progress_bars()\n"
        f"out = {{c: {{s: d.num_rows for s, d in datasets.load_dataset({REPO!r}, c).items()}} for c in {configs!r}}}\n"
        "print(json.dumps(out))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == {**stats["configs"], "default": stats["configs"]["qrels"]}
    assert any("/resolve/" in r and r.endswith(".parquet") for r in hub_server.state.requests)


def test_retries_with_backoff_on_server_errors(
    hub_server: HubServer, published: dict, small_out: Path
) -> None:
    hub_server.state.fail["create"] = [503, 502]
    hub_server.state.fail["preupload"] = [429]
    result = hub.upload(small_out / "dataset", REPO, backoff=0.01)
    assert result["commit"] == hub_server.state.repos[("dataset", REPO)].head
    creates = [r for r in hub_server.state.requests if r == "POST /api/repos/create"]
    assert len(creates) == 3


def test_upload_error_is_redacted_and_not_retried(
    hub_server: HubServer, published: dict, small_out: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub_server.state.token = "hf_the_server_wants_another_one"
    with pytest.raises(hub.UploadError) as info:
        hub.upload(small_out / "dataset", REPO, backoff=0.01)
    assert TOKEN not in str(info.value)
    assert [r for r in hub_server.state.requests if r == "POST /api/repos/create"] == [
        "POST /api/repos/create"
    ]


def test_upload_needs_a_token(published: dict, small_out: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(ValueError, match="HF_TOKEN"):
        hub.upload(small_out / "dataset", REPO)


def test_dry_run_lists_files_and_sends_nothing(
    out_copy: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("HF_TOKEN", raising=False)
    assert main(["publish", "--out", str(out_copy), "--repo-id", REPO, "--dry-run"]) == 0
    printed = capsys.readouterr().out
    manifest = json.loads((out_copy / "dataset" / "manifest.json").read_text())
    assert "dry run: would upload" in printed and f"datasets/{REPO}" in printed
    for rel in [*manifest["files"], "manifest.json"]:
        assert rel in printed


def test_cli_upload_failure_is_one_redacted_line(
    hub_server: HubServer, out_copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hub_server.state.token = "hf_the_server_wants_another_one"
    assert main(["publish", "--out", str(out_copy), "--repo-id", REPO]) == 1
    err = capsys.readouterr().err
    assert "ecoagent publish: error: create_repo failed" in err
    assert TOKEN not in err and "Traceback" not in err
