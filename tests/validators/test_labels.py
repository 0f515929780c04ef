"""Labelled pairs from ToolBench's own labels: true to the files, split by query, deterministic."""

from __future__ import annotations

from collections import Counter

from validators.labels import api_tool_id, build_labels, label_part, sample_labels


def test_labels_follow_toolbench(parsed) -> None:
    labels = build_labels(parsed.queries)
    by_id = {q.query_id: q for q in parsed.queries}
    counts = Counter(lp.kind for lp in labels)
    # every described relevant API is a positive and gets one random negative; every described
    # non-relevant candidate is a hard negative
    assert counts["positive"] == counts["random"] > 1000 and counts["hard"] > 1000
    for lp in labels:
        q = by_id[lp.pair.query_id]
        own = {api_tool_id(a): a for a in q.apis}
        assert lp.pair.description.strip()
        if lp.kind == "random":
            assert lp.label == 0 and lp.pair.tool_id not in own
            assert lp.pair.context.split(";")[0] not in {f"RapidAPI category {a.category}" for a in q.apis}
        else:
            assert own[lp.pair.tool_id].relevant is (lp.kind == "positive")
            assert lp.label == (lp.kind == "positive")
        assert lp.part == label_part(q.query_id)
    # arguments come from the file: required parameters are marked
    assert any(any("(required)" in a for a in lp.pair.arguments) for lp in labels)


def test_parts_split_queries_and_are_stable(parsed) -> None:
    labels = build_labels(parsed.queries)
    parts = {}
    for lp in labels:
        assert parts.setdefault(lp.pair.query_id, lp.part) == lp.part  # a query never spans parts
    share = Counter(parts.values())["dev"] / len(parts)
    assert 0.33 < share < 0.47  # DEV_SHARE = 0.4 of ~520 labelled queries
    assert build_labels(list(reversed(parsed.queries))) == labels  # order-free


def test_samples_one_per_query_and_kind_nested(parsed) -> None:
    labels = build_labels(parsed.queries)
    small, big = sample_labels(labels, "dev", 10), sample_labels(labels, "dev", 25)
    assert Counter(lp.kind for lp in small) == {"positive": 10, "random": 10, "hard": 10}
    assert set(small) <= set(big) and all(lp.part == "dev" for lp in big)
    for kind in ("positive", "random", "hard"):
        qids = [lp.pair.query_id for lp in big if lp.kind == kind]
        assert len(qids) == len(set(qids)) == 25
    test = sample_labels(labels, "test", 25)
    assert not {lp.pair.query_id for lp in test} & {lp.pair.query_id for lp in big}
