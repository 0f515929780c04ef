"""Parameters of build-ecoagent fail fast, before any stage or Prefect starts, with a clear message."""

from __future__ import annotations

import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from pydantic import ValidationError

from ecoagent.config import get_profile
from flows.params import BuildParams, ParamsError, validate_params
from flows.stages import STAGE_NAMES, order_stages, upstream_closure


def test_defaults(tmp_path: Path) -> None:
    p = validate_params({"out": str(tmp_path / "out")})
    assert p.profile == "embedded"
    assert p.selected == list(STAGE_NAMES)
    assert p.out.is_dir() and p.out.is_absolute()
    assert p.mirror is not None and p.mirror.is_dir()
    assert p.stage_options("syn") == {"max_tools": None}
    assert p.shards("syn") == p.shards("real") == 1  # a plain run maps no shard tasks


def test_shards_follow_workers_and_llm_urls(tmp_path: Path) -> None:
    """Syn's and Real's shards: one per Dask worker by default, LLM URLs dealt out in turn, each stage's
    own count when given; a Real shard gets the stage's options (the snapshot) to find the same pairs."""
    urls = ["http://127.0.0.1:9001/v1", "http://127.0.0.1:9002/v1"]
    p = BuildParams(out=tmp_path / "o", task_runner="dask", max_workers=3, llm_urls=urls, real_shards=4)
    assert p.shards("syn") == 3 and p.shards("real") == 4
    real = p.shard_calls("real")
    assert [c["shard"] for c in real] == [0, 1, 2, 3] and {c["shards"] for c in real} == {4}
    assert [c["llm_url"] for c in real] == [urls[0], urls[1], urls[0], urls[1]]
    assert all(c["mirror"] == p.stage_options("real")["mirror"] for c in real)
    assert [set(c) for c in p.shard_calls("syn")] == [{"shard", "shards", "max_tools", "llm_url"}] * 3
    with pytest.raises(ValidationError):
        BuildParams(out=tmp_path / "o", real_shards=0)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"profile": "nope"}, "unknown profile 'nope'"),
        ({"max_tools": 0}, "max_tools"),
        ({"max_tools": -3}, "max_tools"),
        ({"stages": ["crawl", "sin"]}, "unknown stage(s) ['sin']"),
        ({"stages": []}, "stages is empty"),
        ({"platforms": ["zapier"]}, "unknown platform(s) ['zapier']"),
        ({"task_runner": "ray"}, "task_runner"),
        ({"dask_address": "tcp://127.0.0.1:8786"}, "only used with task_runner='dask'"),
        ({"task_runner": "dask", "dask_address": "127.0.0.1"}, "must look like tcp://host:8786"),
        ({"seed": -1}, "seed"),
        ({"bogus": 1}, "bogus"),
    ],
)
def test_bad_parameters(tmp_path: Path, changes: dict[str, object], message: str) -> None:
    with pytest.raises(ParamsError) as err:
        validate_params({"out": str(tmp_path), **changes})
    assert message in str(err.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_unwritable_out(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ParamsError, match="not writable"):
            validate_params({"out": str(locked / "out")})
    finally:
        locked.chmod(0o700)


def test_out_is_a_file(tmp_path: Path) -> None:
    file = tmp_path / "file"
    file.write_text("x")
    with pytest.raises(ParamsError, match="not writable"):
        validate_params({"out": str(file)})


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_paper_profile_needs_a_reachable_llm_server(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    with pytest.raises(ParamsError, match="not reachable"):
        validate_params({"out": str(tmp_path), "profile": "paper", "llm_base_url": url})
    # stages without the LLM do not need the server
    validate_params({"out": str(tmp_path), "profile": "paper", "llm_base_url": url, "stages": ["crawl"]})


def test_paper_profile_with_a_server(tmp_path: Path) -> None:
    class Models(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(200 if self.path == "/v1/models" else 404)
            self.end_headers()
            self.wfile.write(b'{"data": [{"id": "google/gemma-3-1b-it"}]}')

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Models)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        p = validate_params({"out": str(tmp_path), "profile": "paper", "llm_base_url": url})
        assert p.resolved_profile().models.llm_base_url == url
        assert p.resolved_profile().models.llm == "google/gemma-3-1b-it"
    finally:
        server.shutdown()


def test_partial_run_needs_earlier_outputs(tmp_path: Path) -> None:
    with pytest.raises(ParamsError) as err:
        validate_params({"out": str(tmp_path), "stages": ["evaluate"]})
    text = str(err.value)
    assert "'evaluate' needs the outputs of 'crawl'" in text
    assert all(f"outputs of {dep!r}" in text for dep in ("syn", "real", "train"))


def test_missing_mirror(tmp_path: Path) -> None:
    with pytest.raises(ParamsError, match="is not a folder"):
        validate_params({"out": str(tmp_path), "mirror": str(tmp_path / "nothing")})


def test_graph() -> None:
    assert order_stages(["publish", "crawl", "syn", "crawl"]) == ["crawl", "syn", "publish"]
    assert upstream_closure("evaluate") == {"crawl", "syn", "real", "train"}
    assert upstream_closure("crawl") == set()


def test_seed_overrides_profile(tmp_path: Path) -> None:
    p = BuildParams(out=tmp_path, seed=7, max_tools=5)
    assert p.resolved_profile().seed == 7
    # max_tools is Syn's option, so it does not touch the other stages' cache keys
    assert p.resolved_profile().syn_max_tools == get_profile("embedded").syn_max_tools
    assert p.stage_options("syn") == {"max_tools": 5}


def test_rivals_reach_the_profile_and_are_checked(tmp_path: Path) -> None:
    assert BuildParams(out=tmp_path).resolved_profile().syn_rivals == 0
    assert BuildParams(out=tmp_path, syn_rivals=4).resolved_profile().syn_rivals == 4
    with pytest.raises(ValidationError, match="syn_rivals"):
        BuildParams(out=tmp_path, syn_rivals=-1)


@pytest.mark.parametrize("stage", STAGE_NAMES)
def test_stage_functions_take_the_flow_options(tmp_path: Path, stage: str) -> None:
    """Every real stage function takes the options the flow passes it (checked on its signature)."""
    import importlib.util
    import inspect

    from flows.stages import STAGES, resolve_target

    module = STAGES[stage].target.partition(":")[0]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not implemented yet")
    func = resolve_target(STAGES[stage].target)
    params = inspect.signature(func).parameters
    names = list(params)
    assert names[:2] == ["out", "profile"], f"{module}.run must start with (out, profile)"
    takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    p = BuildParams(
        out=tmp_path, max_tools=3, platforms=["crewai"], eval_seeds=1, repo_id="org/name", mirror=tmp_path
    )
    for option in p.stage_options(stage):
        assert takes_any or option in params, f"{module}.run takes no option {option!r}"
