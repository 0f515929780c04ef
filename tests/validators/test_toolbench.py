"""Parsing of every ToolBench file kind in the snapshot, against the counts its README states."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from validators.toolbench import ParsedToolBench, detect_kind, load_toolbench, parse_file, query_hash

SOLVABLE = "StableToolBench/solvable_queries/test_instruction"
IDS = "StableToolBench/solvable_queries/test_query_ids"
TOOLEVAL = "StableToolBench/toolbench/tooleval/results/default_evalset/gpt-3.5-turbo_CoT"
EXAMPLES = "ToolBench/data_example/instruction"


@pytest.mark.parametrize(
    ("rel", "kind", "count"),
    [
        (f"{SOLVABLE}/G1_category.json", "solvable", 153),
        (f"{SOLVABLE}/G1_instruction.json", "solvable", 163),
        (f"{SOLVABLE}/G2_category.json", "solvable", 124),
        (f"{SOLVABLE}/G2_instruction.json", "solvable", 106),
        (f"{TOOLEVAL}/G1_category.json", "tooleval", 100),
        (f"{TOOLEVAL}/G3_instruction.json", "tooleval", 100),
        (f"{EXAMPLES}/G1_query.json", "example", 5),
        (f"{EXAMPLES}/G2_query.json", "example", 3),
        (f"{EXAMPLES}/G3_query.json", "example", 2),
        (f"{EXAMPLES}/inference_query_demo.json", "demo", 1),
        (f"{EXAMPLES}/inference_query_demo_open_domain.json", "open_domain", 1),
    ],
)
def test_each_file_kind_parses_with_readme_counts(
    toolbench_dir: Path, rel: str, kind: str, count: int
) -> None:
    got_kind, queries = parse_file(toolbench_dir / rel, toolbench_dir)
    assert got_kind == kind
    assert isinstance(queries, list) and len(queries) == count
    assert all(q.query.strip() and q.source_file == rel and q.kind == kind for q in queries)


def test_query_id_files_list_the_solvable_ids(toolbench_dir: Path, parsed: ParsedToolBench) -> None:
    kind, ids = parse_file(toolbench_dir / IDS / "G1_category.json", toolbench_dir)
    assert kind == "query_ids" and isinstance(ids, set) and len(ids) == 153
    _, queries = parse_file(toolbench_dir / SOLVABLE / "G1_category.json", toolbench_dir)
    assert {q.source_id for q in queries} == ids
    assert parsed.unlisted_ids == []
    assert sum(f.get("ids", 0) for f in parsed.per_file.values()) == 546


def test_solvable_relevance_flags_follow_relevant_apis(toolbench_dir: Path) -> None:
    raw = json.loads((toolbench_dir / SOLVABLE / "G2_instruction.json").read_text())
    _, queries = parse_file(toolbench_dir / SOLVABLE / "G2_instruction.json", toolbench_dir)
    for record, q in zip(raw, queries, strict=True):
        assert q.group == "G2_instruction" and q.source_id == str(record["query_id"])
        flagged = {(a.tool_name, a.api_name) for a in q.apis if a.relevant}
        listed = {(a["tool_name"], a["api_name"]) for a in record["api_list"]}
        assert flagged == {tuple(p) for p in record["relevant APIs"]} & listed
        assert all(a.category for a in q.apis)


def test_tooleval_unwraps_descriptions_and_drops_finish(toolbench_dir: Path) -> None:
    _, queries = parse_file(toolbench_dir / TOOLEVAL / "G1_category.json", toolbench_dir)
    q = next(q for q in queries if q.source_id == "1187")
    assert q.group == "G1_category" and q.apis[0].relevant is None
    first = q.apis[0]
    assert (first.tool_name, first.api_name, first.description) == (
        "advanced_movie_search",
        "genre_list",
        "Get list of all available genres",
    )
    everything = [a for q in queries for a in q.apis]
    assert all(a.api_name != "Finish" for a in everything)
    # every wrapper sentence is unwrapped: no description keeps ToolBench's boilerplate
    assert not [a for a in everything if a.description and "This is the subfunction" in a.description]


def test_snapshot_dedup(parsed: ParsedToolBench) -> None:
    # 546 solvable + 500 ToolEval + 10 examples + 2 demo = 1058 records, 8 of them repeats
    assert parsed.duplicates_removed == 8
    assert len(parsed.queries) == 1050
    assert len({q.query_id for q in parsed.queries}) == 1050
    # the demo query repeats a test-set query (read first, in path order), so it survives only there
    assert all(q.kind != "open_domain" for q in parsed.queries)


def test_query_hash_ignores_case_and_spacing() -> None:
    assert query_hash("Find  me a\nHotel") == query_hash("find me a hotel")
    assert query_hash("find me a hotel") != query_hash("find me a motel")


def test_unknown_format_is_an_error_line_and_the_rest_is_read(tmp_path: Path, toolbench_dir: Path) -> None:
    root = tmp_path / "toolbench"
    shutil.copytree(toolbench_dir / EXAMPLES, root / EXAMPLES)
    (root / "weird.json").write_text(json.dumps({"queries": "none"}))
    (root / "torn.json").write_bytes(b'[{"query": "find')
    parsed = load_toolbench(root)
    assert len(parsed.errors) == 2
    assert parsed.errors[0].startswith("torn.json: not valid JSON")
    assert "weird.json: unknown ToolBench file format" in parsed.errors[1]
    assert parsed.per_file["weird.json"]["kind"] is None
    assert len(parsed.queries) == 11  # every query of the good files
    with pytest.raises(ValueError, match="unknown"):
        detect_kind(root / "weird.json", [1, 2])


def test_bad_record_and_bad_bytes_are_error_lines(tmp_path: Path, toolbench_dir: Path) -> None:
    root = tmp_path / "toolbench"
    shutil.copytree(toolbench_dir / EXAMPLES, root / EXAMPLES)
    path = root / EXAMPLES / "G2_query.json"
    records = json.loads(path.read_text())
    records[1]["query"] = "   "
    data = json.dumps(records).encode()
    i = data.index(b'"query": "') + len(b'"query": "')
    path.write_bytes(data[:i] + b"\xff" + data[i:])
    parsed = load_toolbench(root)
    assert parsed.errors == [
        f"{EXAMPLES}/G2_query.json: not valid UTF-8 (byte 0xff at position {i}); "
        "1 undecodable byte sequence(s) replaced with U+FFFD",
        f"{EXAMPLES}/G2_query.json query {records[1]['query_id']}: empty or missing 'query'; query skipped",
    ]
    g2 = [q for q in parsed.queries if q.source_file.endswith("G2_query.json")]
    assert len(g2) == 2 and g2[0].query.startswith("\ufffd")
    with pytest.raises(ValueError, match="not valid UTF-8"):  # parse_file alone stays strict
        parse_file(path, root)


def test_no_files_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no ToolBench JSON"):
        load_toolbench(tmp_path)


def test_the_whole_intake_adds_the_repo_s_toolbench_files_without_repeats(mirror) -> None:
    from collections import Counter

    from ecoagent.config import PROFILES
    from validators.config import RealConfig
    from validators.pipeline import load_queries

    cfg = RealConfig.for_profile(PROFILES["embedded"])
    snapshot = load_queries(cfg, mirror)
    whole = load_queries(RealConfig.for_profile(PROFILES["embedded"], whole_intake=True), mirror)
    groups = Counter(q.group for q in whole.queries)
    # DRAFT's G2.json / G3.json are ToolBench's original test sets, renamed so they never read as examples
    assert groups["DRAFT_G2_category"] == 75 and groups["DRAFT_G3_instruction"] == 39
    assert "G1_tool" not in {q.group for q in snapshot.queries} and groups["G1_tool"] > 200
    assert len({q.query_id for q in whole.queries}) == len(whole.queries) == 1482
    assert {q.query_id for q in snapshot.queries} <= {q.query_id for q in whole.queries}
    assert any(k.startswith("quchangle1__DRAFT/") for k in whole.per_file)
