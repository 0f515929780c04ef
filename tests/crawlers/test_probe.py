"""The link probe against a real server on 127.0.0.1: HEAD/GET, redirects, timeouts, the guard."""

from __future__ import annotations

from pathlib import Path

from crawlers.probe import LinkProbe, ProbeConfig, probe_target
from crawlers.record import ToolRecord

LOCAL = ProbeConfig(
    allow_networks=("127.0.0.1/32",), timeout_s=0.5, budget_s=3.0, min_interval_s=0.0, max_redirects=3
)


def test_statuses_of_real_responses(snapshot_server, tmp_path: Path) -> None:
    probe = LinkProbe(LOCAL, cache_dir=tmp_path)
    base = snapshot_server.url
    assert probe.check(f"{base}/ok") == "ok"
    assert probe.check(f"{base}/missing") == "broken" and probe.reasons[f"{base}/missing"] == "HTTP 404"
    assert probe.check(f"{base}/no-head") == "ok"  # HEAD refused with 405, GET answers
    assert probe.check(f"{base}/redirect/ok") == "ok"
    assert probe.check(f"{base}/loop") == "broken" and "redirects" in probe.reasons[f"{base}/loop"]
    snapshot_server.state.faults["/ok"] = ["slow"]
    snapshot_server.state.slow_s = 1.5
    assert probe.check(f"{base}/ok") == "timeout"


def test_a_redirect_to_a_private_address_is_never_followed(snapshot_server, tmp_path: Path) -> None:
    # the network guard of tests/conftest.py would raise if anything tried to connect to 10.0.0.1
    probe = LinkProbe(LOCAL, cache_dir=tmp_path)
    url = f"{snapshot_server.url}/redirect-abs/10.0.0.1/latest/meta-data"
    assert probe.check(url) == "broken"
    assert "non-public address 10.0.0.1" in probe.reasons[url]
    metadata = "http://169.254.169.254/latest/meta-data/"
    assert probe.check(metadata) == "unchecked"  # refused before any request


def test_without_an_allowance_loopback_is_not_probed(snapshot_server, tmp_path: Path) -> None:
    probe = LinkProbe(ProbeConfig(timeout_s=0.5), cache_dir=tmp_path)
    assert probe.check(f"{snapshot_server.url}/ok") == "unchecked"
    assert snapshot_server.state.hits["/ok"] == 0


def test_records_get_statuses_and_the_cache_saves_a_rerun(snapshot_server, tmp_path: Path) -> None:
    base = snapshot_server.url
    records = [
        ToolRecord("crewai:a", "A", "a", "crewai", doc_url=f"{base}/ok"),
        ToolRecord("crewai:b", "B", "b", "crewai", endpoints=["https://x.example/{q}", f"{base}/missing"]),
        ToolRecord("crewai:c", "C", "c", "crewai"),
    ]
    assert probe_target(records[1]) == f"{base}/missing"  # templated URLs are skipped
    statuses = LinkProbe(LOCAL, cache_dir=tmp_path).check_records(records)
    assert statuses == {"crewai:a": "ok", "crewai:b": "broken", "crewai:c": "unchecked"}
    hits = sum(snapshot_server.state.hits.values())
    assert LinkProbe(LOCAL, cache_dir=tmp_path).check_records(records) == statuses
    assert sum(snapshot_server.state.hits.values()) == hits
