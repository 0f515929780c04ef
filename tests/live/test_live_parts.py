"""The parts of the live run that need no server: templates, arguments, the fault schedule, statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest

from live.faults import WHAT, FaultEvent, FaultSchedule
from live.httpstub import HttpStub
from live.run import block_bootstrap, faulted_tools, step_groups
from live.stream import ToolTemplate, load_templates, pools, render, with_replicas
from rated.evaluation.simulator import QueryPool, Stream


def test_templates_cover_at_least_30_tools_on_5_servers() -> None:
    templates, excluded = load_templates()
    assert len(templates) >= 30
    assert len({t.server for t in templates}) >= 5
    assert len({t.tool_id for t in templates}) == len(templates)
    assert all(len(t.queries) >= 3 for t in templates)
    assert all(":" in k and v for k, v in excluded.items())


def test_render_fills_placeholders_recursively() -> None:
    value = {"a": ["{root}/x", {"b": "call {n}"}], "c": 3}
    assert render(value, {"root": "/r", "n": "7"}) == {"a": ["/r/x", {"b": "call 7"}], "c": 3}


def test_replicas_share_queries_and_are_all_true_tools() -> None:
    templates, _ = load_templates()
    both = with_replicas([t for t in templates if t.server == "time"], {"time-b": "time"})
    index = {t.tool_id: i for i, t in enumerate(both)}
    warm, stream = pools(both, index)
    assert len(warm) == 2  # one warm-up query per tool family, not per copy
    assert {len(r) for r in stream.relevant} == {2}
    assert index["live:time-b:convert_time"] in stream.relevant[-1]


def test_default_schedule_scales_with_steps_and_recovers() -> None:
    s = FaultSchedule.default(1000)
    assert s.onset == 300
    actions = {(e.action, e.server) for e in s.events}
    assert {("kill", "memory"), ("restart", "memory"), ("pause", "time"), ("resume", "time")} <= actions
    assert FaultSchedule.default(100).onset == 30


def test_schedule_from_json(tmp_path) -> None:
    path = tmp_path / "f.json"
    path.write_text(
        json.dumps(
            [
                {"step": 5, "action": "bad_args", "server": "git", "tools": ["git_log"]},
                {"step": 2, "action": "kill", "server": "memory"},
            ]
        )
    )
    s = FaultSchedule.from_json(path)
    assert s.onset == 2 and s.events[1].tools == ("git_log",)
    with pytest.raises(ValueError, match="unknown fault action"):
        FaultEvent(1, "explode", "git")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="names no tools"):
        FaultEvent(1, "bad_args", "git")


def test_step_groups_split_by_substitute() -> None:
    pool = QueryPool(["a", "b", "c"], [frozenset({0, 1}), frozenset({2}), frozenset({3})], ["a", "b", "c"])
    stream = Stream(pool, np.array([0, 1, 2]), 0)
    g = step_groups(stream, broken={0, 2})
    assert g["substitute"].tolist() == [True, False, False]
    assert g["no_substitute"].tolist() == [False, True, False]
    assert g["unfaulted"].tolist() == [False, False, True]


def test_block_bootstrap_brackets_the_mean() -> None:
    x = np.r_[np.ones(50), np.zeros(50)]
    lo, hi = block_bootstrap(x, np.mean, 500, 10, 0)
    assert lo < 0.5 < hi


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A GET that ignores proxy settings of the test's environment (the stub is on loopback)."""
    import urllib.error
    import urllib.request

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(urllib.request.Request(url, headers=headers or {}), timeout=5) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def _proxy_get(stub: HttpStub, target: str, auth: str | None) -> int:
    """A forward-proxy request (absolute-form target) to the stub, as httpx sends one through a proxy."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", stub.port, timeout=5)
    try:
        conn.request("GET", target, headers={"Proxy-Authorization": auth} if auth else {})
        return conn.getresponse().status
    finally:
        conn.close()


def test_http_stub_serves_fails_recovers_and_closes() -> None:
    import socket
    import threading

    stub = HttpStub(retry_after=3)
    try:
        status, _, body = _get(stub.base_url + "/docs/page-1.txt")
        assert status == 200 and b"page-1.txt" in body
        assert _get(stub.base_url + "/robots.txt")[2] == b"User-agent: *\nAllow: /\n"
        stub.fail(429)
        status, headers, _ = _get(stub.base_url + "/docs/page-2.txt")
        assert status == 429 and headers["Retry-After"] == "3"
        assert _get(stub.base_url + "/robots.txt")[0] == 200  # never faulted: one cause per failed call
        stub.fail(503)
        assert _get(stub.base_url + "/docs/page-3.txt")[0] == 503
        stub.recover()
        assert _get(stub.base_url + "/docs/page-4.txt")[0] == 200
        page = stub.base_url + "/docs/page-5.txt"
        assert _proxy_get(stub, page, None) == 407
        assert _proxy_get(stub, page, "Basic bGl2ZTp3cm9uZw==") == 407  # live:wrong
        assert _proxy_get(stub, page, stub.proxy_authorization) == 200
        assert _proxy_get(stub, "http://example.com/", stub.proxy_authorization) == 502  # forwards nowhere
        assert stub.responses() == {
            "origin 200": 4,
            "origin 429": 1,
            "origin 503": 1,
            "proxy 200": 1,
            "proxy 407": 2,
            "proxy 502": 1,
        }
        with pytest.raises(ValueError, match="4xx or 5xx"):
            stub.fail(200)
    finally:
        assert stub.close()
    assert not [t for t in threading.enumerate() if t.name == "live-http-stub"]
    with socket.socket() as s, pytest.raises(ConnectionRefusedError):
        s.connect(("127.0.0.1", stub.port))


def test_default_schedule_has_http_and_credential_faults_with_recovery() -> None:
    s = FaultSchedule.default(1000)
    by = {(e.action, e.server): e.step for e in s.events}
    assert by[("http_429", "fetch")] == 300 and by[("http_503", "fetch")] == 400
    assert by[("http_ok", "fetch")] == 500
    assert by[("restart_no_credential", "fetch-b")] == 300 and by[("restart", "fetch-b")] == 700
    assert all(e.action in WHAT for e in s.events)
    without_fetch = FaultSchedule.default(
        1000, ["filesystem", "memory", "time", "sequential-thinking", "git"]
    )
    assert not {e.server for e in without_fetch.events} & {"fetch", "fetch-b"}
    assert without_fetch.onset == 300


def test_http_faults_hit_every_tool_that_reads_the_stub() -> None:
    from live.servers import ServerSpec

    specs = [
        ServerSpec("fetch", "x", calls_http=True),
        ServerSpec("fetch-b", "x", calls_http=True),
        ServerSpec("git", "x"),
    ]
    usable = [
        ToolTemplate("fetch", "fetch", ("a", "b"), {}, {}),
        ToolTemplate("fetch-b", "fetch", ("a", "b"), {}, {}),
        ToolTemplate("git", "git_log", ("a", "b"), {}, {}),
    ]
    http = FaultSchedule((FaultEvent(3, "http_429", "fetch"),))
    assert faulted_tools(http, specs, usable) == {"live:fetch:fetch", "live:fetch-b:fetch"}
    cred = FaultSchedule((FaultEvent(3, "restart_no_credential", "fetch-b"),))
    assert faulted_tools(cred, specs, usable) == {"live:fetch-b:fetch"}
