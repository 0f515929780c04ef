"""Syn checkpoints every tool the moment it finishes: a SIGKILL loses only the tools still in flight.

The tools share one batch (``tools_per_batch=4``); ``id-a`` finishes in round one, ``id-b`` needs more
rounds and the client kills the process during round two. The resumed run must not ask about ``id-a``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from syn_fake_llm import ToolEchoLLM

from generators.generate import GenerationConfig, QueryGenerator, read_checkpoint

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
TOOLS = [
    {"tool_id": "t:a", "name": "Forecast", "description": "Weather forecasts by town. id-a", "arguments": []},
    {"tool_id": "t:b", "name": "Quiet", "description": "A mute tool. id-b", "arguments": []},
]
CONFIG = GenerationConfig(queries_per_tool=2, oversample=1.0, max_rounds=3, tools_per_batch=4)


def _run_killed(ckpt: Path) -> subprocess.CompletedProcess[str]:
    script = textwrap.dedent(
        f"""
        import json, sys
        from pathlib import Path
        sys.path.insert(0, {str(HERE)!r})
        from generators.generate import GenerationConfig, QueryGenerator
        from syn_fake_llm import ToolEchoLLM
        config = GenerationConfig(**json.loads({json.dumps(CONFIG.__dict__)!r}))
        tools = json.loads({json.dumps(TOOLS)!r})
        list(QueryGenerator(ToolEchoLLM(kill_after=3), config, seed=1).run(tools, Path({str(ckpt)!r})))
        """
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )


def test_a_kill_after_one_tool_keeps_that_tool(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt.jsonl"
    done = _run_killed(ckpt)
    assert done.returncode == -9, done.stderr
    assert list(read_checkpoint(ckpt)) == ["t:a"]  # fsynced before the kill
    llm = ToolEchoLLM()
    records = list(QueryGenerator(llm, CONFIG, seed=1).run(TOOLS, ckpt))
    assert llm.asked["id-a"] == 0 and llm.asked["id-b"] > 0  # the finished tool is not generated again
    assert [r["tool_id"] for r in records] == ["t:a", "t:b"]
    assert len(records[0]["queries"]) == 2 and records[1]["samples"] > 2
    fresh = list(QueryGenerator(ToolEchoLLM(), CONFIG, seed=1).run(TOOLS, tmp_path / "fresh.jsonl"))
    assert fresh == records  # resuming changes nothing


def test_a_torn_last_line_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt.jsonl"
    list(QueryGenerator(ToolEchoLLM(), CONFIG, seed=1).run(TOOLS[:1], ckpt))
    whole = ckpt.read_bytes()
    ckpt.write_bytes(whole + b'{"tool_id": "t:b", "quer')  # killed mid-write
    list(QueryGenerator(ToolEchoLLM(), CONFIG, seed=1).run(TOOLS, ckpt))
    assert list(read_checkpoint(ckpt)) == ["t:a", "t:b"]
    assert all(json.loads(line) for line in ckpt.read_text().splitlines())
    assert (tmp_path / "ckpt.jsonl.torn").read_bytes() == b'{"tool_id": "t:b", "quer\n'
