"""Page parsing on real snapshot pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from crawlers.text import FrontMatterError, first_heading, links, opening_description, parse_page


def test_a_real_crewai_docs_page(mirror: Path) -> None:
    page = parse_page((mirror / "crewai/docs/search-research/serperdevtool.mdx").read_text())
    assert page.meta["title"] == "Google Serper Search"
    assert first_heading(page.body) == "SerperDevTool"
    assert opening_description(page.body).startswith("This tool is designed to perform a semantic search")
    assert "https://serper.dev" in links(page.body)


def test_broken_front_matter() -> None:
    with pytest.raises(FrontMatterError, match="not closed"):
        parse_page("---\ntitle: x\n")
    with pytest.raises(FrontMatterError, match="not valid YAML"):
        parse_page("---\ntitle: [x\n---\nbody")
    with pytest.raises(FrontMatterError, match="not a mapping"):
        parse_page("---\n- a\n---\nbody")
    assert parse_page("# no front matter").meta == {}
