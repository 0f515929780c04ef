"""HttpClient against the local snapshot server: 404s, robots.txt, Retry-After, settings checks."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawlers.http import (
    FetchError,
    HttpClient,
    HttpConfig,
    NotFound,
    RateLimiter,
    RobotsDisallowed,
    _retry_after,
)

FAST = dict(min_interval_s=0.0, backoff_s=0.01, retries=2, read_timeout_s=5.0)


def test_404_is_not_found_and_remembered(snapshot_server, tmp_path: Path) -> None:
    client = HttpClient(HttpConfig(**FAST), cache_dir=tmp_path)
    url = f"{snapshot_server.url}/raw/nobody/nothing/main/README.md"
    for _ in range(2):
        with pytest.raises(NotFound):
            client.get(url)
    assert snapshot_server.state.hits["/raw/nobody/nothing/main/README.md"] == 1


def test_robots_disallow_and_opt_out(snapshot_server) -> None:
    snapshot_server.state.robots = "User-agent: EcoAgentCrawler\nDisallow: /ok\n"
    with pytest.raises(RobotsDisallowed):
        HttpClient(HttpConfig(**FAST)).get(f"{snapshot_server.url}/ok")
    assert snapshot_server.state.hits["/ok"] == 0
    assert HttpClient(HttpConfig(respect_robots=False, **FAST)).get(f"{snapshot_server.url}/ok") == b"fine"


def test_retry_after_is_honoured_and_retries_end(snapshot_server, fake_clock) -> None:
    config = HttpConfig(**{**FAST, "backoff_s": 5.0})
    snapshot_server.state.faults["/ok"] = ["429"]
    client = HttpClient(config, sleep=fake_clock.sleep)
    assert client.get(f"{snapshot_server.url}/ok") == b"fine"
    assert fake_clock.slept == 0.0 and client.stats["retries"] == 1  # Retry-After: 0 beats the 5 s backoff
    snapshot_server.state.faults["/ok"] = ["500"] * 5
    client = HttpClient(config, sleep=fake_clock.sleep)
    with pytest.raises(FetchError, match="gave up after 3 attempts: HTTP 500"):
        client.get(f"{snapshot_server.url}/ok")
    assert fake_clock.slept == 5.0 + 10.0  # no hint: the backoff doubles, and no wait after the last try
    assert _retry_after("7") == 7.0 and _retry_after("soon") is None


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match=">= 0"):
        HttpConfig(retries=-1)
    with pytest.raises(ValueError, match="> 0"):
        HttpConfig(read_timeout_s=0)


def test_rate_limiter_spaces_one_host_and_leaves_others_alone(fake_clock) -> None:
    limiter = RateLimiter(0.5, clock=fake_clock.now, sleep=fake_clock.sleep)
    assert [limiter.wait("a.example") for _ in range(3)] == [0.0, 0.5, 1.0]
    assert limiter.wait("b.example") == 1.0  # another host does not wait behind a.example
    fake_clock.t = 5.0  # after a long pause the next request goes at once
    assert limiter.wait("a.example") == 5.0
    assert fake_clock.slept == 1.0
