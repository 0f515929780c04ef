"""Fixtures of the Real tests: real ToolBench files, a slice of the real crawl, the real small models.

One session-scoped Real run (BM25 + MiniLM recall, SmolLM2 validator, the ToolBench example files against a
stratified slice of the crawled tool table) feeds the pipeline, sample, report and page tests.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from ecoagent.artifacts import write_parquet
from ecoagent.config import MINILM, PROFILES, Profile
from validators.toolbench import ParsedToolBench, load_toolbench

TOOLS_PER_PLATFORM = 40
EXAMPLE_FILES = "ToolBench/data_example/instruction"


@pytest.fixture(scope="session")
def toolbench_dir(mirror: Path) -> Path:
    return mirror / "toolbench"


@pytest.fixture(scope="session")
def parsed(toolbench_dir: Path) -> ParsedToolBench:
    return load_toolbench(toolbench_dir)


@pytest.fixture(scope="session")
def tools_slice(crawled_out: Path) -> pl.DataFrame:
    """The first tools (by id) of every platform of the real crawl: small enough for CPU tests."""
    tools = pl.read_parquet(crawled_out / "tools.parquet").sort("tool_id")
    return pl.concat([g.head(TOOLS_PER_PLATFORM) for _, g in tools.group_by("platform", maintain_order=True)])


@pytest.fixture(scope="session")
def small_mirror(tmp_path_factory: pytest.TempPathFactory, toolbench_dir: Path) -> Path:
    """A snapshot holding only ToolBench's example and demo files (verbatim copies): 11 unique queries."""
    root = tmp_path_factory.mktemp("mirror")
    target = root / "toolbench" / EXAMPLE_FILES
    shutil.copytree(toolbench_dir / EXAMPLE_FILES, target)
    return root


@pytest.fixture(scope="session")
def test_profile() -> Profile:
    """The tiny profile (SmolLM2 on llama.cpp) with MiniLM as recall encoder (mpnet is slow on CPU)."""
    return PROFILES["tiny"].replace(recall_encoder=MINILM)


# BM25 + MiniLM, each proposing its top 2; floor at the minimum (every candidate is judged); 2 labelled
# pairs of each kind for calibration and for the test AUCs
REAL_OPTIONS: dict[str, Any] = {
    "retrievers": ("bm25", MINILM),
    "floor_quantile": 0.0,
    "max_per_query": 8,
    "top_k": 2,
    "calibration_per_kind": 2,
    "measure_per_kind": 2,
    "batch_size": 8,
    "templates": False,  # the n8n templates have their own run (``templates_out``)
    "judgment_cache": False,  # counts of scored pairs must not depend on earlier test runs
}


@pytest.fixture(scope="session")
def real_options() -> dict[str, Any]:
    """The options of the session's Real run (a rerun with these is a no-op)."""
    return dict(REAL_OPTIONS)


@pytest.fixture(scope="session")
def real_out(
    tmp_path_factory: pytest.TempPathFactory,
    tools_slice: pl.DataFrame,
    small_mirror: Path,
    test_profile: Profile,
) -> tuple[Path, dict[str, Any]]:
    """One Real run on the slice: every recalled pair reaches the validator (recall threshold 0)."""
    from validators.pipeline import run

    out = tmp_path_factory.mktemp("real_out")
    write_parquet(tools_slice, out / "tools.parquet")
    stats = run(out, test_profile, mirror=small_mirror, **REAL_OPTIONS)
    return out, stats


# real templates of the intake whose service nodes are Gmail, Slack, Telegram and Google Sheets
TEMPLATE_FILES = (
    "Aggregate/0472_Aggregate_Gmail_Create_Triggered.json",
    "Aggregate/0480_Aggregate_Telegram_Automate_Triggered.json",
    "Aggregate/0800_Aggregate_Telegram_Automate_Triggered.json",
    "Aggregate/1430_Aggregate_Schedule_Send_Scheduled.json",
    "Code/0309_Code_Filter_Automate_Triggered.json",
    "Code/0415_Code_GoogleCalendar_Create_Webhook.json",
)
TEMPLATE_SERVICES = ("n8n:gmail", "n8n:slack", "n8n:telegram", "n8n:google_sheets", "n8n:google_calendar")


@pytest.fixture(scope="session")
def small_intake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An intake folder holding six real n8n templates (verbatim copies)."""
    from ecoagent.config import default_intake
    from validators.pipeline import TEMPLATES

    root = tmp_path_factory.mktemp("intake")
    for rel in TEMPLATE_FILES:
        target = root / TEMPLATES / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(default_intake() / TEMPLATES / rel, target)
    return root


@pytest.fixture(scope="session")
def templates_out(
    tmp_path_factory: pytest.TempPathFactory,
    crawled_out: Path,
    tools_slice: pl.DataFrame,
    small_mirror: Path,
    mirror: Path,
    small_intake: Path,
    test_profile: Profile,
) -> tuple[Path, dict[str, Any]]:
    """A Real run with the templates: the slice plus every tool of the templates' services; the node
    defaults come from the real snapshot's ``types.nodes`` (copied into the small mirror)."""
    from validators.pipeline import run

    tools = pl.read_parquet(crawled_out / "tools.parquet")
    wanted = pl.col("tool_id").str.extract(r"^([^:]+:[^:]+)").is_in(list(TEMPLATE_SERVICES))
    table = pl.concat([tools_slice, tools.filter(wanted)]).unique("tool_id", keep="first").sort("tool_id")
    root = tmp_path_factory.mktemp("templates_mirror")
    shutil.copytree(small_mirror, root, dirs_exist_ok=True)
    shutil.copytree(mirror / "n8n" / "nodes-base", root / "n8n" / "nodes-base", dirs_exist_ok=True)
    out = tmp_path_factory.mktemp("templates_out")
    write_parquet(table, out / "tools.parquet")
    options = {
        **REAL_OPTIONS,
        "templates": True,
        "top_k": 1,
        "max_per_query": 1,
        "calibration_per_kind": 0,
        "measure_per_kind": 0,
        "template_measure_per_kind": 2,
    }
    stats = run(out, test_profile, mirror=root, intake=small_intake, validator_threshold=0.5, **options)
    return out, stats
