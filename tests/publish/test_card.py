"""The dataset card: Hub-valid YAML (configs, licenses, categories) and a datasheet read from the stats."""

from __future__ import annotations

import json
import re
from pathlib import Path

import yaml
from huggingface_hub import DatasetCard, DatasetCardData

from ecoagent.artifacts import ArtifactDir
from publish.card import _threshold_limitation, size_category


def _card(out: Path) -> tuple[str, dict]:
    text = (out / "dataset" / "README.md").read_text()
    header = text.split("---\n", 2)[1]
    return text, yaml.safe_load(header)


def test_yaml_parses_as_a_hub_dataset_card(published: dict, small_out: Path) -> None:
    text, meta = _card(small_out)
    card = DatasetCard(text)
    data = card.data
    assert isinstance(data, DatasetCardData)
    assert data.task_categories == ["text-retrieval"]
    largest = max(sum(splits.values()) for splits in published["configs"].values())
    assert data.size_categories == [size_category(largest)]
    assert size_category(999) == "n<1K" and size_category(4255) == "1K<n<10K"
    assert set(data.license) == {lic for lics in published["licenses"].values() for lic in lics}
    if "other" in data.license:
        assert data.license_name == "sustainable-use-license" and data.license_link.startswith("https://")
    # configs with data_files that exist, one per published config, split names as published
    configs = {c["config_name"]: c for c in meta["configs"]}
    assert list(configs) == [*published["configs"], "default"]
    assert configs["default"]["data_files"] == configs["qrels"]["data_files"]  # MTEB reads `default`
    for name, splits in published["configs"].items():
        files = configs[name]["data_files"]
        assert [f["split"] for f in files] == list(splits)
        assert all((small_out / "dataset" / f["path"]).is_file() for f in files)
    assert meta["config_licenses"] == {**published["licenses"], "default": published["licenses"]["qrels"]}
    info = {i["config_name"]: i for i in meta["dataset_info"]}
    for name, splits in published["configs"].items():
        assert {s["name"]: s["num_examples"] for s in info[name]["splits"]} == splits
    # round trip through the Hub's card data keeps the configs
    assert DatasetCardData(**data.to_dict()).to_dict()["configs"] == meta["configs"]


def test_datasheet_reports_counts_filters_and_models(published: dict, small_out: Path) -> None:
    text, _ = _card(small_out)
    for section in (
        "## Motivation",
        "## Composition",
        "## Collection",
        "## Filters and what they removed",
        "## Models that produced the data",
        "## Uses",
        "## Limitations",
        "## Maintenance",
        "## Licenses",
    ):
        assert section in text
    n_tools = published["configs"]["tools"]["train"]
    assert f"- Tools: {n_tools} (" in text
    syn_stats = json.loads(ArtifactDir(small_out).syn_stats.read_text())
    # each filter's threshold and removal count, as the stage reported them
    for key in ("threshold", "removed"):
        assert re.search(rf"\| `dedup\.{key}`\s*\| {syn_stats['dedup'][key]}\s*\|", text), key
    assert "`filters[min_words].threshold`" in text and "`validator.threshold`" in text
    assert "`recall.threshold`" in text
    real = json.loads(ArtifactDir(small_out).real_stats.read_text())["pairs"]
    removed = real["recalled"] - real["after_recall"]
    assert re.search(rf"removed by the recall threshold \(cosine >= 0\.35\)\s*\| {removed}\s*\|", text)
    removed = real["after_recall"] - real["after_validation"]
    assert re.search(rf"removed by the validator \(score >= 0\.5\)\s*\| {removed}\s*\|", text)
    # the models named by the rows themselves
    assert "model=HuggingFaceTB/SmolLM2-135M-Instruct" in text
    assert "sentence-transformers/all-mpnet-base-v2" in text


def test_card_cites_links_and_stays_small(published: dict, small_out: Path) -> None:
    from ecoagent.config import HUB_REPO_ID

    folder = small_out / "dataset"
    text = (folder / "README.md").read_text()
    assert len(text.encode()) < 30_000  # key numbers as small tables; the full reports are linked
    assert "<details>" not in text
    bib = text.split("## Citation", 1)[1].split("```bibtex\n", 1)[1].split("\n```", 1)[0]
    assert bib.startswith("@misc{ecoagent") and bib.rstrip().endswith("}")
    assert bib.count("{") == bib.count("}")
    assert f"\\url{{https://huggingface.co/datasets/{HUB_REPO_ID}}}" in bib
    assert f'load_dataset("{HUB_REPO_ID}", "tools"' in text and "ORG/NAME" not in text
    for stage in ("crawl", "syn", "real"):
        linked = folder / "stats" / f"{stage}.json"
        assert f"(stats/{stage}.json)" in text and linked.is_file()
        entries = json.loads(linked.read_text())
        assert entries and not any(isinstance(v, str) and v.startswith("/") for v in entries.values())
    syn = json.loads((folder / "stats" / "syn.json").read_text())
    assert (
        syn["dedup.removed"] == json.loads(ArtifactDir(small_out).syn_stats.read_text())["dedup"]["removed"]
    )


def test_limitations_say_how_far_reals_size_rests_on_the_threshold() -> None:
    row = lambda t, q: {"threshold": t, "pairs": q + 1, "queries": q, "share": 0.1}  # noqa: E731
    real = {
        "validator": {
            "measurement": {"calibration": {"on": "dev: 60 pairs (20 per kind)"}},
            "threshold_sensitivity": {
                "interval": "90% bootstrap interval",
                "low": row(0.6165, 100),
                "used": row(0.7142, 24),
                "high": row(0.7325, 17),
            },
        }
    }
    line = _threshold_limitation(real)
    assert "threshold 0.714, calibrated on dev: 60 pairs (20 per kind)" in line
    assert "[0.617, 0.733]" in line and "between 17 and 100 queries instead of 24" in line
    # a fixed threshold (no sensitivity recorded) or no Real stage: nothing to say
    assert _threshold_limitation({"validator": {"threshold_sensitivity": None}}) == ""
    assert _threshold_limitation(None) == ""


def test_limitations_say_how_much_of_the_yield_is_tool_names() -> None:
    from publish.card import _naming_limitation

    minilm = "sentence-transformers/all-MiniLM-L6-v2"
    syn = {
        "config": {"sbert": minilm},
        "queries": {"names_tool_share": 0.186},
        "yield": {
            minilm: {
                "per_tool": {"median": 7.0},
                "per_tool_mean": 5.79,
                "not_naming_tool": {"per_tool": {"median": 2.5}, "per_tool_mean": 3.99},
            }
        },
    }
    line = _naming_limitation(syn)
    assert "19% of Syn queries name their tool" in line
    assert "(all-MiniLM-L6-v2) is 7.0 with them and 2.5 without them (means 5.79 and 3.99)" in line
    assert "Sampled tools by" not in line  # a report without the histogram: no line about it

    # the histogram, and the warning only when the two ends hold 40% of the tools or more
    syn["yield"][minilm]["tools_by_hits"] = {
        str(k): n for k, n in enumerate([15, 9, 7, 1, 9, 6, 6, 1, 5, 6, 35])
    }
    line = _naming_limitation(syn)
    assert (
        "(0 to 10): 15, 9, 7, 1, 9, 6, 6, 1, 5, 6, 35." in line and "the median can fall in the gap" in line
    )
    syn["yield"][minilm]["tools_by_hits"] = {"0": 2, "1": 10, "2": 6, "3": 2}
    line = _naming_limitation(syn)
    assert "(0 to 3): 2, 10, 6, 2." in line and "gap" not in line
    # a Syn report from before the split, or none: nothing to say
    del syn["yield"][minilm]["not_naming_tool"]
    assert _naming_limitation(syn) == "" and _naming_limitation(None) == ""
