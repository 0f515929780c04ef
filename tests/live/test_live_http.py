"""The HTTP faults behind fetch, with the real fetch servers and the real loopback stub.

fetch reads the stub directly, fetch-b through the stub's authenticating proxy. A status the stub
answers must come back as a failed call (fetch's ``isError`` result), and reach a policy as
``executed=False``; the recovery (200s again, a restart with the credential) must make calls work.
"""

from __future__ import annotations

import numpy as np
from live_testutil import FetchRig, needs_servers

from live.faults import FaultEvent, FaultSchedule
from live.run import LiveWorld, run_stream
from live.stream import ToolTemplate
from rated.evaluation.baselines import Retry, StaticRetriever
from rated.evaluation.candidates import CandidateLists
from rated.evaluation.simulator import QueryPool, Stream

pytestmark = needs_servers


def test_stub_statuses_fail_fetch_calls_until_recovery(fetch_rig: FetchRig) -> None:
    pool, stub = fetch_rig.pool, fetch_rig.stub
    try:
        for name in ("fetch", "fetch-b"):
            assert pool.call(name, "fetch", fetch_rig.args()).ok
        for status in (429, 503):
            stub.fail(status)
            for name in ("fetch", "fetch-b"):
                result = pool.call(name, "fetch", fetch_rig.args())
                assert result.outcome == "tool_error"
                assert f"status code {status}" in result.detail
        stub.recover()
        for name in ("fetch", "fetch-b"):
            assert pool.call(name, "fetch", fetch_rig.args()).ok
        answered = stub.responses()
        # fetch reached the origin, fetch-b came through the proxy with its credential
        assert answered["origin 429"] >= 1 and answered["origin 503"] >= 1
        assert answered["proxy 429"] >= 1 and answered["proxy 200"] >= 1
    finally:
        fetch_rig.reset()


def test_a_server_started_without_its_credential_fails_until_restarted_with_it(fetch_rig: FetchRig) -> None:
    pool, stub = fetch_rig.pool, fetch_rig.stub
    try:
        before = stub.responses().get("proxy 407", 0)
        pid = pool.pid("fetch-b")
        pool.restart("fetch-b", credential=False)
        assert pool.pid("fetch-b") not in (None, pid)  # a new process, really started without it
        assert pool.servers["fetch-b"].starts_without_credential == 1
        result = pool.call("fetch-b", "fetch", fetch_rig.args())
        assert result.outcome == "tool_error" and "status code 407" in result.detail
        assert stub.responses()["proxy 407"] > before
        assert pool.call("fetch", "fetch", fetch_rig.args()).ok  # the direct one needs no credential
        pool.restart("fetch-b")
        assert pool.call("fetch-b", "fetch", fetch_rig.args()).ok
    finally:
        fetch_rig.reset()


def test_http_and_credential_faults_reach_the_policies_and_recover(fetch_rig: FetchRig) -> None:
    """Twelve steps of one fetch query; each policy's success per step is what the real calls returned."""
    args = {"url": "{http}/docs/page-{n}.txt"}
    templates = {
        0: ToolTemplate("fetch", "fetch", ("q", "fetch a page"), args, {}),
        1: ToolTemplate("fetch-b", "fetch", ("q", "fetch a page"), args, {}, family="live:fetch:fetch"),
    }
    queries = QueryPool(["fetch a page"], [frozenset({0, 1})], ["fetch#1"])
    stream = Stream(queries, np.zeros(12, dtype=np.int64), 0)
    a_first = CandidateLists(np.array([[0, 1]]), np.array([[0.9, 0.8]]))
    b_first = CandidateLists(np.array([[1, 0]]), np.array([[0.9, 0.8]]))
    policies = [
        StaticRetriever(a_first, "static, fetch first", 1),
        StaticRetriever(b_first, "static, fetch-b first", 1),
        Retry(b_first, k=2, name="Retry, fetch-b first", depth=2),
    ]
    schedule = FaultSchedule(
        (
            FaultEvent(2, "restart_no_credential", "fetch-b"),
            FaultEvent(4, "http_429", "fetch"),
            FaultEvent(6, "http_503", "fetch"),
            FaultEvent(8, "http_ok", "fetch"),
            FaultEvent(10, "restart", "fetch-b"),
        )
    )
    world = LiveWorld(fetch_rig.pool, fetch_rig.sandbox, templates, fetch_rig.stub)
    try:
        traces, _, oracle = run_stream(policies, stream, world, schedule, every=0)
    finally:
        fetch_rig.reset()
    t, f = True, False
    assert oracle.tolist() == [t] * 4 + [f] * 4 + [t] * 4
    assert traces["static, fetch first"].success.tolist() == [t] * 4 + [f] * 4 + [t] * 4
    assert traces["static, fetch-b first"].success.tolist() == [t] * 2 + [f] * 8 + [t] * 2
    # Retry falls back to fetch while only fetch-b lacks its credential, not while the upstream fails
    assert traces["Retry, fetch-b first"].success.tolist() == [t] * 4 + [f] * 4 + [t] * 4
    assert traces["Retry, fetch-b first"].attempts.tolist() == [1] * 2 + [2] * 8 + [1] * 2
    status = {(c["step"], c["tool_id"]): c["detail"] for c in world.calls}
    assert "status code 429" in status[(4, "live:fetch:fetch")]
    assert "status code 503" in status[(6, "live:fetch:fetch")]
    assert "status code 407" in status[(3, "live:fetch-b:fetch")]
    assert status[(8, "live:fetch:fetch")] == "" and status[(10, "live:fetch-b:fetch")] == ""
