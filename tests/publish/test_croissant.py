"""Croissant: mlcroissant validates the JSON-LD and reads records from it."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import mlcroissant as mlc


def test_mlcroissant_loads_and_reads_records(published: dict, small_out: Path) -> None:
    path = small_out / "dataset" / "croissant.json"
    ds = mlc.Dataset(str(path))
    names = {rs.name for rs in ds.metadata.record_sets}
    assert {"tools", "corpus", "queries", "qrels_test", "syn_train"} <= names
    tools = list(itertools.islice(ds.records(record_set="tools"), 5))
    assert len(tools) == 5 and tools[0]["tools/tool_id"]
    n_test = published["configs"]["qrels"]["test"]
    qrels = list(ds.records(record_set="qrels_test"))
    assert len(qrels) == n_test and {r["qrels_test/score"] for r in qrels} == {1}


def test_croissant_hashes_match_the_manifest(published: dict, small_out: Path) -> None:
    folder = small_out / "dataset"
    ld = json.loads((folder / "croissant.json").read_text())
    manifest = json.loads((folder / "manifest.json").read_text())["files"]
    for obj in ld["distribution"]:
        assert manifest[obj["contentUrl"]]["sha256"] == obj["sha256"]


def test_croissant_cites_as_bibtex_with_a_real_url_and_date(published: dict, small_out: Path) -> None:
    import datetime as dt

    from ecoagent.config import HUB_REPO_ID

    ld = json.loads((small_out / "dataset" / "croissant.json").read_text())
    assert ld["url"] == f"https://huggingface.co/datasets/{HUB_REPO_ID}"
    assert ld["citeAs"].startswith("@misc{ecoagent") and ld["url"] in ld["citeAs"]
    assert dt.date.fromisoformat(ld["datePublished"]) <= dt.datetime.now(dt.UTC).date()
    ds = mlc.Dataset(str(small_out / "dataset" / "croissant.json"))
    assert ds.metadata.date_published is not None
    assert not [w for w in ds.metadata.ctx.issues.warnings if "datePublished" in str(w)]
