"""The parts of the live run that need no server: templates, arguments, the fault schedule, statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest

from live.faults import FaultEvent, FaultSchedule
from live.run import block_bootstrap, step_groups
from live.stream import load_templates, pools, render, with_replicas
from rated.evaluation.simulator import QueryPool, Stream


def test_templates_cover_at_least_30_tools_on_5_servers() -> None:
    templates, excluded = load_templates()
    assert len(templates) >= 30
    assert len({t.server for t in templates}) >= 5
    assert len({t.tool_id for t in templates}) == len(templates)
    assert all(len(t.queries) >= 3 for t in templates)
    assert all(":" in k and v for k, v in excluded.items())


def test_render_fills_placeholders_recursively() -> None:
    value = {"a": ["{root}/x", {"b": "call {n}"}], "c": 3}
    assert render(value, {"root": "/r", "n": "7"}) == {"a": ["/r/x", {"b": "call 7"}], "c": 3}


def test_replicas_share_queries_and_are_all_true_tools() -> None:
    templates, _ = load_templates()
    both = with_replicas([t for t in templates if t.server == "time"], {"time-b": "time"})
    index = {t.tool_id: i for i, t in enumerate(both)}
    warm, stream = pools(both, index)
    assert len(warm) == 2  # one warm-up query per tool family, not per copy
    assert {len(r) for r in stream.relevant} == {2}
    assert index["live:time-b:convert_time"] in stream.relevant[-1]


def test_default_schedule_scales_with_steps_and_recovers() -> None:
    s = FaultSchedule.default(1000)
    assert s.onset == 300
    actions = {(e.action, e.server) for e in s.events}
    assert {("kill", "memory"), ("restart", "memory"), ("pause", "time"), ("resume", "time")} <= actions
    assert FaultSchedule.default(100).onset == 30


def test_schedule_from_json(tmp_path) -> None:
    path = tmp_path / "f.json"
    path.write_text(
        json.dumps(
            [
                {"step": 5, "action": "bad_args", "server": "git", "tools": ["git_log"]},
                {"step": 2, "action": "kill", "server": "memory"},
            ]
        )
    )
    s = FaultSchedule.from_json(path)
    assert s.onset == 2 and s.events[1].tools == ("git_log",)
    with pytest.raises(ValueError, match="unknown fault action"):
        FaultEvent(1, "explode", "git")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="names no tools"):
        FaultEvent(1, "bad_args", "git")


def test_step_groups_split_by_substitute() -> None:
    pool = QueryPool(["a", "b", "c"], [frozenset({0, 1}), frozenset({2}), frozenset({3})], ["a", "b", "c"])
    stream = Stream(pool, np.array([0, 1, 2]), 0)
    g = step_groups(stream, broken={0, 2})
    assert g["substitute"].tolist() == [True, False, False]
    assert g["no_substitute"].tolist() == [False, True, False]
    assert g["unfaulted"].tolist() == [False, False, True]


def test_block_bootstrap_brackets_the_mean() -> None:
    x = np.r_[np.ones(50), np.zeros(50)]
    lo, hi = block_bootstrap(x, np.mean, 500, 10, 0)
    assert lo < 0.5 < hi
