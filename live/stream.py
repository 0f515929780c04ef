"""The live query stream: checked-in query and argument templates, and the sandbox the arguments point at.

Each live tool has several natural-language queries whose true tool it is, and one argument object that
its input schema accepts (``live/templates.yaml``). The first query of a tool warms the learners up; the
rest make the stream's pool, which ``rated.evaluation.simulator.Stream.sample`` replays exactly as the
simulation does. Arguments point into a ``Sandbox`` (a temp folder that is the filesystem server's only
allowed directory, a git repository, the memory server's file), so repeated calls stay harmless and
every call of a healthy server can succeed.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from live.catalog import tool_id
from rated.evaluation.simulator import QueryPool

TEMPLATES = Path(__file__).with_name("templates.yaml")
# a 1x1 transparent PNG, so read_media_file has a real image to read
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


@dataclass(frozen=True)
class ToolTemplate:
    """One live tool's queries and arguments (``bad``: what a bad-arguments fault sends instead)."""

    server: str
    tool: str
    queries: tuple[str, ...]
    arguments: dict[str, Any]
    bad: dict[str, Any]
    family: str = ""  # the tool id of the template it copies (a replica's tool); "" = itself

    @property
    def tool_id(self) -> str:
        return tool_id(self.server, self.tool)

    @property
    def group(self) -> str:
        return self.family or self.tool_id


def with_replicas(templates: list[ToolTemplate], replicas: Mapping[str, str]) -> list[ToolTemplate]:
    """``templates`` plus a copy of each for every replica server (replica name -> the server it copies)."""
    out = list(templates)
    for replica, primary in replicas.items():
        out += [
            dataclasses.replace(t, server=replica, family=t.tool_id) for t in templates if t.server == primary
        ]
    return out


def load_templates(path: Path = TEMPLATES) -> tuple[list[ToolTemplate], dict[str, str]]:
    """Every tool template in file order, and the excluded tools with their reasons."""
    data = yaml.safe_load(path.read_text())
    excluded = {str(k): str(v) for k, v in (data.pop("excluded", None) or {}).items()}
    out = []
    for server, tools in data.items():
        for tool, spec in tools.items():
            queries = tuple(spec["queries"])
            if len(queries) < 2:
                raise ValueError(f"{server}:{tool}: needs a warm-up query and at least one stream query")
            out.append(
                ToolTemplate(server, tool, queries, dict(spec["arguments"]), dict(spec.get("bad") or {}))
            )
    return out, excluded


def render(value: Any, fill: Mapping[str, str]) -> Any:
    """``value`` with every ``{root}`` / ``{repo}`` / ``{http}`` / ``{n}`` in its strings replaced (recursively)."""
    if isinstance(value, str):
        for key, sub in fill.items():
            value = value.replace("{" + key + "}", sub)
        return value
    if isinstance(value, list):
        return [render(v, fill) for v in value]
    if isinstance(value, dict):
        return {k: render(v, fill) for k, v in value.items()}
    return value


class Sandbox:
    """A temp folder with the files, git repository and memory file the templates' arguments use."""

    def __init__(self, parent: Path | None = None) -> None:
        self.base = Path(tempfile.mkdtemp(prefix="ecoagent-live-", dir=parent))
        self.root = self.base / "files"
        self.repo = self.base / "repo"
        self.memory = self.base / "memory.jsonl"
        self.http = ""  # the loopback HTTP stub's base URL, once a run has started one
        self._make()

    def _make(self) -> None:
        (self.root / "docs" / "guide").mkdir(parents=True)
        (self.root / "notes.txt").write_text("".join(f"line {i}\n" for i in range(1, 9)) + "status: draft\n")
        (self.root / "todo.txt").write_text("- write the live harness\n- run it\n")
        (self.root / "docs" / "index.md").write_text("# Docs\n")
        (self.root / "docs" / "guide" / "start.md").write_text("# Start\n")
        (self.root / "logo.png").write_bytes(PNG)
        self.repo.mkdir()
        git = ["git", "-C", str(self.repo), "-c", "user.name=live", "-c", "user.email=live@localhost"]
        subprocess.run(["git", "init", "-q", "-b", "main", str(self.repo)], check=True)
        subprocess.run([*git[:3], "config", "user.name", "live"], check=True)
        subprocess.run([*git[:3], "config", "user.email", "live@localhost"], check=True)
        (self.repo / "notes.md").write_text("# Notes\n")
        subprocess.run([*git, "add", "notes.md"], check=True)
        subprocess.run([*git, "commit", "-q", "-m", "initial"], check=True)
        (self.repo / "notes.md").write_text("# Notes\n\nan unstaged change\n")
        graph = [
            {
                "type": "entity",
                "name": "Ada Lovelace",
                "entityType": "person",
                "observations": ["mathematician"],
            },
            {"type": "entity", "name": "Analytical Engine", "entityType": "machine", "observations": []},
            {
                "type": "relation",
                "from": "Ada Lovelace",
                "to": "Analytical Engine",
                "relationType": "studied",
            },
        ]
        self.memory.write_text("".join(json.dumps(x) + "\n" for x in graph))

    def fill(self, n: int) -> dict[str, str]:
        return {"root": str(self.root), "repo": str(self.repo), "http": self.http, "n": str(n)}

    def cleanup(self) -> None:
        shutil.rmtree(self.base, ignore_errors=True)


def pools(templates: list[ToolTemplate], index: Mapping[str, int]) -> tuple[QueryPool, QueryPool]:
    """(warm-up pool, stream pool): each tool's first query, and the rest, once per tool family.

    A query's true tools are every indexed tool of its family (a tool and its replicas' copies).
    """
    groups: dict[str, list[ToolTemplate]] = {}
    for t in templates:
        if t.tool_id in index:
            groups.setdefault(t.group, []).append(t)
    warm_q, warm_rel, warm_ids, q, rel, ids = [], [], [], [], [], []
    for group, members in groups.items():
        rows = frozenset(index[t.tool_id] for t in members)
        first = members[0]
        warm_q.append(first.queries[0])
        warm_rel.append(rows)
        warm_ids.append(f"{group}#0")
        for i, text in enumerate(first.queries[1:], start=1):
            q.append(text)
            rel.append(rows)
            ids.append(f"{group}#{i}")
    return QueryPool(warm_q, warm_rel, warm_ids), QueryPool(q, rel, ids)
