"""Fixtures of the Syn tests: real ToolBench queries and slices of the crawled tool table."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from generators.perturb import perturb as perturb_words


@pytest.fixture(scope="session")
def toolbench_queries(mirror: Path) -> list[str]:
    """The real ToolBench user queries of the snapshot (StableToolBench solvable + ToolEval sets)."""
    root = mirror / "toolbench" / "StableToolBench"
    texts: list[str] = []
    for path in sorted((root / "solvable_queries" / "test_instruction").glob("*.json")):
        texts.extend(item["query"] for item in json.loads(path.read_text()))
    for path in sorted(root.rglob("gpt-3.5-turbo_CoT/*.json")):
        texts.extend(item["query"] for item in json.loads(path.read_text()).values())
    return list(dict.fromkeys(t.strip() for t in texts if t.strip()))


@pytest.fixture(scope="session")
def perturb() -> Callable[[str, random.Random, int], str]:
    """The word-edit perturbation that makes graded near-duplicates of real texts."""
    return perturb_words


@pytest.fixture(scope="session")
def tools(crawled_out: Path) -> pl.DataFrame:
    """The real crawled tool table."""
    return pl.read_parquet(crawled_out / "tools.parquet")


@pytest.fixture(scope="session")
def llm() -> object:
    """The real embedded SmolLM2 client (loaded once)."""
    from ecoagent.config import SMOLLM2, ModelConfig
    from ecoagent.llm import make_llm

    return make_llm(ModelConfig(llm=SMOLLM2, llm_backend="transformers"))


@pytest.fixture()
def small_out(tmp_path: Path, tools: pl.DataFrame) -> Path:
    """An artifact folder whose tools.parquet is a slice of the real crawl (all CrewAI tools + 20 of
    each other platform), so encoding the table stays cheap."""
    from ecoagent.artifacts import write_parquet

    parts = [tools.filter(pl.col("platform") == "crewai")]
    parts += [
        tools.filter(pl.col("platform") == p).sort("tool_id").head(20)
        for p in ("langchain", "llamaindex", "n8n")
    ]
    write_parquet(pl.concat(parts), tmp_path / "tools.parquet")
    return tmp_path
