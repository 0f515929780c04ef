"""Live mode against a real HTTP server on 127.0.0.1 serving the snapshot, with injected faults."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawlers import langchain
from crawlers.http import RateLimiter
from crawlers.live import CREWAI_REF, LANGCHAIN_DOCS_REF, LiveSource
from crawlers.pipeline import crawl_records, run
from crawlers.report import CrawlErrors, SourceFailed
from crawlers.source import MirrorSource
from ecoagent.config import get_profile

SPEC = f"/raw/crewAIInc/crewAI/{CREWAI_REF}/lib/crewai-tools/tool.specs.json"
SERPER_README = (
    f"/raw/crewAIInc/crewAI/{CREWAI_REF}/lib/crewai-tools/src/crewai_tools/tools/serper_dev_tool/README.md"
)
TAVILY_PAGE = f"/raw/langchain-ai/docs/{LANGCHAIN_DOCS_REF}/src/oss/integrations/tools/tavily_search.md"


def _by_id(records: list) -> dict:
    return {r.tool_id: r for r in records}


def _assert_live_equals_mirror(server, mirror: Path, cache: Path, platforms: tuple[str, ...]) -> dict:
    live = LiveSource(server.live_config(), cache_dir=cache)
    live_errors, mirror_errors = CrawlErrors(), CrawlErrors()
    got, _ = crawl_records(live, platforms, live_errors)
    want, _ = crawl_records(MirrorSource(mirror), platforms, mirror_errors)
    got_by, want_by = _by_id(got), _by_id(want)
    assert set(got_by) == set(want_by)
    for tid, rec in want_by.items():
        other = got_by[tid]
        assert (
            other.name,
            other.description,
            other.auth_names,
            other.endpoints,
            other.doc_url,
            other.tags,
        ) == (
            rec.name,
            rec.description,
            rec.auth_names,
            rec.endpoints,
            rec.doc_url,
            rec.tags,
        ), tid
    assert live_errors.count() == mirror_errors.count()
    return got_by


def test_live_crawl_equals_the_mirror_crawl(snapshot_server, mirror: Path, tmp_path: Path) -> None:
    got = _assert_live_equals_mirror(
        snapshot_server, mirror, tmp_path / "cache", ("langchain", "crewai", "llamaindex")
    )
    # live records name the URL they came from
    assert got["crewai:serper_dev_tool"].sources[0].startswith(f"{snapshot_server.url}{SPEC}")


@pytest.mark.slow
def test_live_crawl_of_n8n_from_the_npm_cdn_equals_the_mirror_crawl(
    snapshot_server, mirror: Path, tmp_path: Path
) -> None:
    got = _assert_live_equals_mirror(snapshot_server, mirror, tmp_path / "cache", ("n8n",))
    assert len(got) > 3500
    assert (
        got["n8n:slack:message_post"]
        .sources[0]
        .startswith(f"{snapshot_server.url}/npm/n8n-nodes-base@2.41.2/")
    )


def test_retries_on_429_500_slow_and_truncated_responses(snapshot_server, tmp_path: Path) -> None:
    state = snapshot_server.state
    state.faults[SPEC] = ["429", "500", "truncate"]
    state.faults[SERPER_README] = ["slow"]
    state.faults[TAVILY_PAGE] = ["500", "truncate"]
    state.slow_s = 1.0
    source = LiveSource(snapshot_server.live_config(read_timeout_s=0.3), cache_dir=tmp_path / "cache")
    errors = CrawlErrors()
    records, _ = crawl_records(source, ("crewai", "langchain"), errors)
    tools = _by_id(records)
    assert state.hits[SPEC] == 4 and state.hits[SERPER_README] == 2 and state.hits[TAVILY_PAGE] == 3
    assert "crewai:serper_dev_tool" in tools and "langchain:tavily_search" in tools
    assert "crewai/readmes/tools/serper_dev_tool/README.md" not in " ".join(
        tools["crewai:serper_dev_tool"].sources
    )
    assert source.client.stats["retries"] == 6
    assert errors.count("crewai") == 4  # only the four tools no source describes, as in the mirror crawl


def test_a_file_that_keeps_failing_is_an_error_line_and_the_crawl_goes_on(
    snapshot_server, tmp_path: Path
) -> None:
    snapshot_server.state.faults[TAVILY_PAGE] = ["500"] * 10
    report = run(
        tmp_path / "out",
        get_profile("embedded"),
        live=True,
        platforms="langchain",
        with_prior=False,
        live_config=snapshot_server.live_config(retries=2),
    )
    lines = report["errors"]["lines"]["langchain"]
    assert any(TAVILY_PAGE in line and "gave up after 3 attempts: HTTP 500" in line for line in lines)
    assert report["per_platform"]["langchain"] > 200
    assert report["http"]["retries"] == 2


def test_a_whole_source_failing_fails_the_crawl_naming_it(snapshot_server, tmp_path: Path) -> None:
    snapshot_server.state.faults[SPEC] = ["500"] * 10
    with pytest.raises(SourceFailed, match=r"crawl of crewai failed: .*tool.specs.json.*HTTP 500"):
        run(
            tmp_path / "out",
            get_profile("embedded"),
            live=True,
            platforms="crewai",
            with_prior=False,
            live_config=snapshot_server.live_config(retries=1),
        )


def test_mcp_has_no_live_routes_yet_and_says_so(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"platform\(s\) \['mcp'\] have no live routes yet"):
        run(tmp_path / "out", get_profile("embedded"), live=True, platforms="crewai,mcp", with_prior=False)
    assert not (tmp_path / "out" / "tools.parquet").exists()


def test_robots_txt_disallow_is_respected(snapshot_server, tmp_path: Path) -> None:
    folder = SERPER_README.rsplit("/", 1)[0]
    snapshot_server.state.robots = f"User-agent: *\nDisallow: {folder}/\n"
    errors = CrawlErrors()
    source = LiveSource(snapshot_server.live_config(), cache_dir=tmp_path / "cache")
    crawl_records(source, ("crewai",), errors)
    assert snapshot_server.state.hits[SERPER_README] == 0
    assert any("disallowed by robots.txt" in line for _, line in source.failures)


def test_cache_makes_a_rerun_free_and_revalidates_with_etags(snapshot_server, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    state = snapshot_server.state
    crawl_records(LiveSource(snapshot_server.live_config(), cache_dir=cache), ("crewai",), CrawlErrors())
    first = sum(state.hits.values())
    # resume: everything fetched before comes from the disk cache, not the server
    again = LiveSource(snapshot_server.live_config(), cache_dir=cache)
    crawl_records(again, ("crewai",), CrawlErrors())
    assert sum(state.hits.values()) == first
    assert again.client.stats["requests"] == 0 and again.client.stats["cache_hits"] > 100
    # stale entries are revalidated: the server answers 304 and sends no body
    stale = LiveSource(snapshot_server.live_config(cache_ttl_s=0.0), cache_dir=cache)
    crawl_records(stale, ("crewai",), CrawlErrors())
    assert state.conditional > 100 and stale.client.stats["revalidated"] == state.conditional


class _RecordingLimiter(RateLimiter):
    """A RateLimiter that remembers when it let each request go."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.let_go: list[float] = []

    def wait(self, host: str) -> float:
        self.let_go.append(super().wait(host))
        return self.let_go[-1]


def test_rate_limit_spaces_requests_to_one_host(snapshot_server, fake_clock, tmp_path: Path) -> None:
    """Every request the crawl sends to the host goes through the limiter, one interval apart.

    The limiter runs on a fake clock: timing the server's arrivals instead made this test fail on a busy
    machine, where two requests spaced 50 ms apart on the client can arrive 28 ms apart.
    """
    clock = fake_clock
    source = LiveSource(snapshot_server.live_config(min_interval_s=0.05), cache_dir=tmp_path / "cache")
    limiter = source.client.limiter = _RecordingLimiter(0.05, clock=clock.now, sleep=clock.sleep)
    for slug in ("arxiv", "tavily_search", "google_serper", "brave_search"):
        source.read(f"{langchain.PAGES}/{slug}.md")
    pages = [p for _, p in snapshot_server.state.times if p.endswith(".md")]
    assert len(pages) == 4
    let_go = limiter.let_go
    assert len(let_go) == len(snapshot_server.state.times)  # robots.txt and the pages: all limited
    assert let_go == pytest.approx([0.05 * i for i in range(len(let_go))])
    assert clock.slept == pytest.approx(0.05 * (len(let_go) - 1))


def test_live_urls_follow_the_catalog_readmes() -> None:
    from crawlers.live import LiveConfig

    source = LiveSource(LiveConfig())
    assert source.url("crewai/tool.specs.json") == (
        f"https://raw.githubusercontent.com/crewAIInc/crewAI/{CREWAI_REF}/lib/crewai-tools/tool.specs.json"
    )
    assert source.url("n8n/nodes-base/codex/nodes/Slack/Slack.node.json") == (
        "https://unpkg.com/n8n-nodes-base@2.41.2/dist/nodes/Slack/Slack.node.json"
    )
    assert source.url("llamaindex/integrations/llama-index-tools-arxiv/README.md").endswith(
        "/llama-index-integrations/tools/llama-index-tools-arxiv/README.md"
    )


def test_a_killed_live_crawl_resumes_from_its_cache(snapshot_server, tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "crawl.py"
    script.write_text(
        "import sys\n"
        "from pathlib import Path\n"
        "from crawlers.http import HttpConfig\n"
        "from crawlers.live import LiveConfig, LiveSource\n"
        "from crawlers.pipeline import crawl_records\n"
        "from crawlers.report import CrawlErrors\n"
        "base = sys.argv[1]\n"
        "config = LiveConfig(raw=base + '/raw', api=base + '/api', npm=base + '/npm', facts=base + '/facts',\n"
        "                    http=HttpConfig(min_interval_s=0.02))\n"
        "crawl_records(LiveSource(config, cache_dir=Path(sys.argv[2])), ('crewai',), CrawlErrors())\n"
        "print('finished')\n"
    )
    cache = tmp_path / "cache"
    child = subprocess.Popen(
        [sys.executable, str(script), snapshot_server.url, str(cache)], stdout=subprocess.PIPE
    )
    state = snapshot_server.state
    deadline = time.monotonic() + 60
    while sum(state.hits.values()) < 40 and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    before_kill = sum(state.hits.values())
    assert 40 <= before_kill < 150  # killed part-way (a full crewai crawl makes about 180 requests)

    source = LiveSource(snapshot_server.live_config(), cache_dir=cache)
    records, _ = crawl_records(source, ("crewai",), CrawlErrors())
    assert len(records) == 127
    # everything the killed run had fetched came from the disk cache
    assert source.client.stats["cache_hits"] >= before_kill - 5
    assert source.client.stats["requests"] + before_kill <= 200


def test_npm_files_come_byte_for_byte_from_the_package_cdn(
    snapshot_server, mirror: Path, tmp_path: Path
) -> None:
    source = LiveSource(snapshot_server.live_config(), cache_dir=tmp_path / "cache")
    codex = "n8n/nodes-base/codex/nodes/Slack/Slack.node.json"
    assert source.read(codex) == (mirror / codex).read_bytes()
    assert snapshot_server.state.hits["/npm/n8n-nodes-base@2.41.2/dist/nodes/Slack/Slack.node.json"] == 1
    known = source.read("n8n/nodes-langchain/known.nodes.json")
    assert known == (mirror / "n8n/nodes-langchain/known.nodes.json").read_bytes()
