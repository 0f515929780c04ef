"""Bad bytes and bad syntax in one file of each kind cost that file's content only, never the crawl.

A copy of the real snapshot gets one corrupt file of every kind the crawlers read (JSON, a split JSON
part, JSON Lines, YAML front matter, Markdown, TOML); the crawl still writes every tool the clean
snapshot gives, and names each corrupt file with its problem.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from crawlers.files import decode_utf8, read_json, read_jsonl, read_page, read_toml
from crawlers.pipeline import run
from crawlers.report import CrawlErrors
from crawlers.source import MirrorSource
from ecoagent.config import get_profile

BAD = b"\xff"
CODEX = "n8n/nodes-base/codex/nodes/WooCommerce/WooCommerce.node.json"
NODES_PART = "n8n/nodes-base/types.nodes.part-02-of-03.json"
SPEC = "crewai/tool.specs.json"
FACTS = "crewai/code_facts.jsonl"
LC_FACTS = "langchain/code_facts.jsonl"
PAGE_YAML = "crewai/docs/search-research/serperdevtool.mdx"
PAGE_BAD_YAML = "crewai/docs/ai-ml/dalletool.mdx"
PAGE_MD = "langchain/docs/src/oss/integrations/tools/tavily_search.md"
TOML = "llamaindex/integrations/llama-index-tools-brave-search/pyproject.toml"
TOML_BAD = "llamaindex/integrations/llama-index-tools-arxiv/pyproject.toml"
MCP_JSON = "mcp/pathintegral-institute__mcpm.sh/mcp-registry/servers/brave-search.json"
MCP_YAML = "mcp/docker__mcp-registry/servers/aks/server.yaml"


def _insert_after(path: Path, marker: bytes, extra: bytes = BAD) -> None:
    """Put ``extra`` right after the first ``marker`` (inside a string value)."""
    data = path.read_bytes()
    i = data.index(marker) + len(marker)
    path.write_bytes(data[:i] + extra + data[i:])


@pytest.fixture(scope="module")
def corrupt_crawl(tmp_path_factory: pytest.TempPathFactory, mirror: Path) -> tuple[pl.DataFrame, dict]:
    root = tmp_path_factory.mktemp("corrupt") / "mirror"
    for platform in ("crewai", "langchain", "llamaindex", "n8n", "mcp"):
        shutil.copytree(mirror / platform, root / platform)
    _insert_after(root / CODEX, b'"categories": ["Sal')  # the reproduction: 0xff inside a string
    _insert_after(root / NODES_PART, b'"description": "')
    _insert_after(root / SPEC, b'"description": "')
    lines = (root / FACTS).read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b'"API token', b'"API\xff token', 1)
    (root / FACTS).write_bytes(b"\n".join(lines))
    with (root / LC_FACTS).open("ab") as f:
        f.write(b'{"class_name": "Torn", "kind": "to\n')  # a torn line: skipped, the other lines read
    _insert_after(root / PAGE_YAML, b"description: The ")
    bad_yaml = root / PAGE_BAD_YAML
    bad_yaml.write_bytes(bad_yaml.read_bytes().replace(b"title:", b"title: [unclosed", 1))
    _insert_after(root / PAGE_MD, b"[Tavily's Search API](https://tavily.com) is a ")
    _insert_after(root / TOML, b'description = "llama-index ')
    (root / TOML_BAD).write_bytes((root / TOML_BAD).read_bytes().replace(b"[project]", b"[project", 1))
    _insert_after(root / MCP_JSON, b'"description": "')
    _insert_after(root / MCP_YAML, b"description: Azure ")
    out = tmp_path_factory.mktemp("corrupt_out")
    report = run(out, get_profile("embedded"), mirror=root, environ={}, with_prior=False)
    return pl.read_parquet(out / "tools.parquet"), report


def test_every_tool_of_the_clean_snapshot_still_comes_out(
    corrupt_crawl: tuple[pl.DataFrame, dict], crawled_out: Path
) -> None:
    frame, _ = corrupt_crawl
    clean = set(pl.read_parquet(crawled_out / "tools.parquet")["tool_id"].to_list())
    assert set(frame["tool_id"].to_list()) == clean
    # the stray byte is replaced in place: the tool around it keeps its text
    woo = frame.filter(pl.col("tool_id").str.starts_with("n8n:woo_commerce:")).row(0, named=True)
    assert woo["doc_url"].endswith("n8n-nodes-base.woocommerce/")


def test_each_corrupt_file_is_named_with_its_problem(corrupt_crawl: tuple[pl.DataFrame, dict]) -> None:
    _, report = corrupt_crawl
    lines = [line for per in report["errors"]["lines"].values() for line in per]

    def problem(where: str) -> str:
        found = [line for line in lines if line.startswith(where + ":") or line.startswith(where + " line")]
        assert len(found) == 1, (where, found)
        return found[0]

    for where in (
        CODEX,
        SPEC,
        PAGE_YAML,
        PAGE_MD,
        TOML,
        "n8n/nodes-base/types.nodes.json",
        MCP_JSON,
        MCP_YAML,
    ):
        assert "not valid UTF-8 (byte 0xff at position" in problem(where)
    assert problem(FACTS).startswith(f"{FACTS} line 2: not valid UTF-8")
    assert "bad JSON" in problem(LC_FACTS) and "line skipped" in problem(LC_FACTS)
    assert "front matter is not valid YAML" in problem(PAGE_BAD_YAML)
    assert "not valid TOML" in problem(TOML_BAD)


def test_readers_report_and_return_nothing_for_unreadable_files(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.json").write_bytes(b'{"a": ')
    (tmp_path / "p" / "b.toml").write_bytes(b"x = ")
    (tmp_path / "p" / "c.md").write_bytes(b"---\ntitle: x\n")
    (tmp_path / "p" / "d.jsonl").write_bytes(b'{"a": 1}\n[1]\n{"b": "\xff"}\n')
    source, errors = MirrorSource(tmp_path), CrawlErrors()
    assert read_json(source, "p/a.json", "p", errors) is None
    assert read_toml(source, "p/b.toml", "p", errors) is None
    assert read_page(source, "p/c.md", "p", errors) is None
    assert read_jsonl(source, "p/d.jsonl", "p", errors) == [{"a": 1}, {"b": "\ufffd"}]
    assert read_json(source, "p/missing.json", "p", errors, missing=None) is None
    assert [line.split(":")[0] for line in errors.lines["p"]] == [
        "p/a.json",
        "p/b.toml",
        "p/c.md",
        "p/d.jsonl line 2",
        "p/d.jsonl line 3",
    ]
    with pytest.raises(ValueError, match=r"p: p/a.json is not valid JSON"):
        read_json(source, "p/a.json", "p", errors, required=True)
    with pytest.raises(FileNotFoundError, match="p: p/none.json is not in the mirror"):
        read_json(source, "p/none.json", "p", errors, required=True)


def test_decode_counts_the_replaced_sequences() -> None:
    text, problem = decode_utf8("é".encode() + b"\xff ok \xfe")
    assert text == "é\ufffd ok \ufffd"
    assert (
        problem
        == "not valid UTF-8 (byte 0xff at position 2); 2 undecodable byte sequence(s) replaced with U+FFFD"
    )
    assert decode_utf8(json.dumps({"a": "\ufffd"}, ensure_ascii=False).encode())[1] is None
