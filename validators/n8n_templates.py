"""n8n workflow templates as real requests: the author's write-up is the query, the workflow's nodes the labels.

A template is a workflow somebody built for a task and then described in a sticky note ("## Add AI labels
to Gmail messages — With this workflow you can ..."). The description is a human-written request, and the
service nodes that carry it out are its true tools, chosen by the author, not by a retriever or an LLM. So
these pairs need no judge; the Real stage measures the judge against them instead.

A node maps to a catalog tool ``n8n:<node>:<resource>_<operation>`` (``crawlers.n8n``'s ids): the resource
and operation the node sets, else the defaults of its type in the snapshot's ``types.nodes`` (the parameter
a template leaves at its default is absent from the export). ``gmailTool`` (a node used as an agent's tool)
is ``gmail``. Labels are service operations only: core nodes (Set, If, Code, HTTP Request: codex category
"Core Nodes"), triggers (an event source, not something a request asks for) and the AI cluster nodes
(models, memories, parsers: how, not what) are left out.

``load_templates`` is tolerant like ``validators.toolbench.load_toolbench``: a file that is not UTF-8 or not
JSON, a workflow without nodes, or a service node whose operation is not in the tool table becomes one
``file: problem`` line in ``ParsedTemplates.errors``; the rest is read. The text is data: it only becomes a
query string, secrets are redacted (``ecoagent.redact``) and instruction-like text drops the template.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crawlers.files import decode_utf8
from crawlers.injection import looks_like_instruction
from crawlers.record import slugify
from crawlers.text import opening_description
from ecoagent.redact import redact
from generators.dedup import MinHashDeduper
from validators.toolbench import normalize

GROUP = "n8n_templates"
STICKY = "n8n-nodes-base.stickyNote"
BASE = "n8n-nodes-base."
MIN_NOTE_CHARS = 100  # shorter notes are labels ("Set up credentials"), not a write-up of the task
MAX_QUERY_CHARS = 600
MIN_QUERY_WORDS = 8  # "Note", "Thank you for your support!" are no request
# headings that name a section of the write-up, not the task
_GENERIC = re.compile(
    r"^(?:instructions?|notes?|overview|setup|set ?up.*|how (?:it|this) works.*|description|about|welcome.*|"
    r"requirements?|prerequisites?|usage|summary|important.*|step \d.*|\W*(?:note|warning|tips?)?\W*)$",
    re.I,
)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.M)


@dataclass(frozen=True)
class TemplateQuery:
    """One template as a Real query.

    Args:
        query_id: a hash of the normalized query text (``n8n-`` prefix), stable across runs and file order.
        query: the title and the opening of the write-up.
        source_file: the template's file, relative to the templates folder.
        tool_ids: the catalog tools of its service nodes, sorted.
        group: the source group (``n8n_templates``).
    """

    query_id: str
    query: str
    source_file: str
    tool_ids: tuple[str, ...]
    group: str = GROUP


@dataclass
class ParsedTemplates:
    """Every usable template after dedup, and what reading saw."""

    queries: list[TemplateQuery]
    files: int = 0
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> templates
    duplicates_merged: int = 0
    near_duplicates_removed: int = 0  # Jaccard > 0.7 to an earlier write-up (Syn's MinHash rule)
    errors: list[str] = field(default_factory=list)  # ``file: problem`` lines


@dataclass(frozen=True)
class NodeCatalog:
    """What mapping a node needs from the crawl: the tool ids, which are core nodes, and type defaults.

    ``defaults[node]`` is ``(resource default, {resource: operation default})`` of the node type's newest
    entry in ``types.nodes``.
    """

    tool_ids: frozenset[str]
    core: frozenset[str]
    defaults: Mapping[str, tuple[str | None, Mapping[str | None, str]]]

    def tool_for(self, node: Mapping[str, Any]) -> tuple[str | None, str | None]:
        """``(tool_id, None)`` for a labelled service node, ``(None, problem)`` for one that should map and
        does not, ``(None, None)`` for a node that is no label (core, trigger, AI cluster, sticky note)."""
        kind = str(node.get("type") or "")
        if not kind.startswith(BASE) or kind == STICKY:
            return None, None
        name = kind.removeprefix(BASE)
        if name.endswith("Trigger"):
            return None, None
        name = name.removesuffix("Tool")
        base = f"n8n:{slugify(name)}"
        if base in self.core:
            return None, None
        if base in self.tool_ids:
            return base, None
        params = node.get("parameters") if isinstance(node.get("parameters"), dict) else {}
        resource_default, operation_defaults = self.defaults.get(name, (None, {}))
        resource = params.get("resource", resource_default)
        operation = params.get("operation", operation_defaults.get(resource))
        if not isinstance(operation, str) or (resource is not None and not isinstance(resource, str)):
            if not any(t.startswith(base + ":") for t in self.tool_ids):
                return None, f"node type {kind} is not in the tool table"
            return None, f"node {kind} has no operation to map (resource {resource!r})"
        op = f"{slugify(resource)}_{slugify(operation)}" if resource else slugify(operation)
        tool_id = f"{base}:{op}"
        if tool_id in self.tool_ids:
            return tool_id, None
        return None, f"{kind} operation {resource}/{operation} is not in the tool table ({tool_id})"


def node_catalog(
    tool_rows: Iterable[Mapping[str, Any]], types_nodes: Iterable[Mapping[str, Any]]
) -> NodeCatalog:
    """The mapping's view of the crawl (rows with ``tool_id`` and ``tags``) and of n8n-nodes-base's
    ``types.nodes`` entries (for parameter defaults)."""
    ids, core = set(), set()
    for row in tool_rows:
        tool_id = str(row["tool_id"])
        if not tool_id.startswith("n8n:"):
            continue
        ids.add(tool_id)
        if "Core Nodes" in (row.get("tags") or []):
            core.add(":".join(tool_id.split(":")[:2]))
    newest: dict[str, tuple[float, Mapping[str, Any]]] = {}
    for entry in types_nodes:
        version = entry.get("version")
        top = max(version) if isinstance(version, list) and version else version
        top = float(top) if isinstance(top, int | float) else 0.0
        name = str(entry.get("name") or "")
        if name and (name not in newest or top > newest[name][0]):
            newest[name] = (top, entry)
    defaults: dict[str, tuple[str | None, dict[str | None, str]]] = {}
    for name, (_, entry) in newest.items():
        resource: str | None = None
        operations: dict[str | None, str] = {}
        for prop in entry.get("properties") or []:
            if not isinstance(prop, dict):
                continue
            if prop.get("name") == "resource" and isinstance(prop.get("default"), str) and resource is None:
                resource = prop["default"]
            elif prop.get("name") == "operation" and isinstance(prop.get("default"), str):
                shown = ((prop.get("displayOptions") or {}).get("show") or {}).get("resource") or [None]
                for r in shown:
                    operations.setdefault(r, prop["default"])
        defaults[name] = (resource, operations)
    return NodeCatalog(frozenset(ids), frozenset(core), defaults)


def template_query(nodes: list[Any]) -> str | None:
    """The request a template's sticky notes state: a note's title heading and opening prose.

    The write-up is the note with a title (a heading that is not a section name such as "Note" or
    "Setup") and the longest opening prose; else the note with the longest prose; else all notes in canvas
    order (left to right), when each alone is too short to be a write-up.
    """
    notes = [
        (n.get("position") or [0, 0], n["parameters"]["content"])
        for n in nodes
        if isinstance(n, dict)
        and n.get("type") == STICKY
        and isinstance(n.get("parameters"), dict)
        and isinstance(n["parameters"].get("content"), str)
        and n["parameters"]["content"].strip()
    ]
    if not notes:
        return None
    read = [_read_note(c) for _, c in notes if len(c.strip()) > MIN_NOTE_CHARS]
    if not read:
        ordered = sorted(notes, key=lambda pc: tuple(pc[0]) if isinstance(pc[0], list) else (0, 0))
        joined = "\n\n".join(c for _, c in ordered)
        read = [_read_note(joined)] if len(joined.strip()) > MIN_NOTE_CHARS else []
    read = [r for r in read if len(r[1].split()) >= MIN_QUERY_WORDS]
    if not read:
        return None
    titled = [r for r in read if r[0]]
    title, opening = max(titled or read, key=lambda r: len(r[1]))
    text = f"{title}: {opening}" if title and not opening.startswith(title) else opening
    return " ".join(text.split())


def _read_note(note: str) -> tuple[str, str]:
    """``(title, opening prose)`` of one note; the title is empty when its first heading names a section."""
    heading = _HEADING.search(note)
    title = _plain(heading.group(1)) if heading else ""
    if _GENERIC.match(title):
        title = ""
    return title, opening_description(note, MAX_QUERY_CHARS)


def _plain(markdown_text: str) -> str:
    return re.sub(r"[*_`]+", "", markdown_text).strip()


def query_id(text: str) -> str:
    """A stable id from the normalized text, so file order and reruns give the same id."""
    return "n8n-" + hashlib.sha1(normalize(text).encode()).hexdigest()[:12]


def parse_template(path: Path, rel: str, catalog: NodeCatalog, errors: list[str]) -> TemplateQuery | str:
    """One template file as a query, or the reason it is skipped; unmappable nodes add error lines."""
    text, problem = decode_utf8(path.read_bytes())
    if problem:
        errors.append(f"{rel}: {problem}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        errors.append(f"{rel}: not valid JSON ({exc.msg} at line {exc.lineno}); file skipped")
        return "bad JSON"
    nodes = data.get("nodes") if isinstance(data, dict) else None
    if not isinstance(nodes, list):
        errors.append(f"{rel}: not an n8n workflow (no 'nodes' list); file skipped")
        return "not a workflow"
    query = template_query(nodes)
    if query is None:
        return "no write-up"
    if looks_like_instruction(query):
        errors.append(f"{rel}: the write-up reads as an instruction to a model; template skipped")
        return "instruction-like text"
    tools = set()
    for i, node in enumerate(nodes):
        tool, why = catalog.tool_for(node) if isinstance(node, dict) else (None, "node is not an object")
        if tool:
            tools.add(tool)
        elif why:
            label = node.get("name") if isinstance(node, dict) else None
            errors.append(f"{rel} [node {i}{f' {label!r}' if label else ''}]: {why}; label dropped")
    if not tools:
        return "no service node in the tool table"
    clean = redact(query) or query
    return TemplateQuery(query_id(clean), clean, rel, tuple(sorted(tools)))


def load_templates(root: Path, catalog: NodeCatalog) -> ParsedTemplates:
    """Every ``*.json`` template under ``root``, in sorted path order; a query written twice (the collection
    holds copies) is one query with the union of its labels; a near-copy (word-shingle Jaccard > 0.7 to an
    earlier one, ``generators.dedup``, the rule Syn uses) is dropped.

    Raises:
        FileNotFoundError: ``root`` holds no JSON file.
    """
    root = Path(root)
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no n8n template JSON files under {root}")
    out = ParsedTemplates(queries=[], files=len(files))
    by_id: dict[str, TemplateQuery] = {}
    for path in files:
        result = parse_template(path, path.relative_to(root).as_posix(), catalog, out.errors)
        if isinstance(result, str):
            out.skipped[result] += 1
            continue
        if result.query_id in by_id:
            first = by_id[result.query_id]
            merged = tuple(sorted(set(first.tool_ids) | set(result.tool_ids)))
            by_id[result.query_id] = TemplateQuery(first.query_id, first.query, first.source_file, merged)
            out.duplicates_merged += 1
        else:
            by_id[result.query_id] = result
    queries = list(by_id.values())
    keep, dropped = MinHashDeduper().keep_mask([q.query for q in queries])
    out.near_duplicates_removed = len(dropped)
    out.queries = [q for q, k in zip(queries, keep, strict=True) if k]
    return out
