"""ToolBench's real user queries: every verbatim file kind of the snapshot, parsed into one record type.

EcoAgent-Real starts from these queries. The snapshot holds five file kinds (see
``../shared/catalogs/toolbench/README.md``); each is recognised by its shape. ``load_toolbench`` is
tolerant like the crawl's readers (``crawlers.files``): a file that is not valid JSON or matches no kind,
or a record without a query, becomes one ``file: problem`` line in ``ParsedToolBench.errors`` (and the
stage's ``stats.json``) and the rest is read; ``parse_file`` alone stays strict.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from crawlers.files import decode_utf8

log = logging.getLogger(__name__)

FileKind = Literal["solvable", "example", "tooleval", "demo", "open_domain", "query_ids"]

# ToolEval descriptions wrap the API's own description in a fixed sentence.
_TOOLEVAL_DESC = re.compile(
    r'^This is the subfunction for tool "(?P<tool>[^"]*)", you can use this tool\.'
    r'(?:\s*The description of this function is: "(?P<desc>.*)")?\s*$',
    re.DOTALL,
)


@dataclass(frozen=True)
class ToolBenchAPI:
    """One API that a ToolBench file lists with a query.

    Args:
        tool_name: RapidAPI tool name (standardized snake_case in ToolEval files).
        api_name: the API (endpoint) name within the tool.
        category: RapidAPI category, when the file gives it.
        description: the API's description, when the file gives it.
        relevant: ToolBench's ground truth (``relevant APIs``); ``None`` where the file has no labels.
        parameters: ``(name, description, required)`` of each parameter the file lists (the validator
            shows them, since an API's arguments say what it can be asked).
    """

    tool_name: str
    api_name: str
    category: str | None = None
    description: str | None = None
    relevant: bool | None = None
    parameters: tuple[tuple[str, str, bool], ...] = ()


@dataclass(frozen=True)
class ToolBenchQuery:
    """One user query as a ToolBench file states it.

    Args:
        query_id: our stable id, a hash of the normalized text (ToolBench ids repeat across groups).
        query: the query text, verbatim.
        group: G1_category, G1_instruction, ... for the test sets; G1/G2/G3 for examples; ``demo``.
        source_id: the id the file gives the query.
        source_file: the file, relative to the ToolBench folder.
        kind: the file kind.
        apis: the APIs the file lists with the query (candidates, relevant flagged).
    """

    query_id: str
    query: str
    group: str
    source_id: str
    source_file: str
    kind: FileKind
    apis: tuple[ToolBenchAPI, ...] = field(default_factory=tuple)


@dataclass
class ParsedToolBench:
    """All queries of a snapshot after dedup, plus what parsing saw per file."""

    queries: list[ToolBenchQuery]
    per_file: dict[str, dict[str, Any]]
    duplicates_removed: int
    unlisted_ids: list[str]  # solvable queries missing from their test_query_ids file
    errors: list[str] = field(default_factory=list)  # ``file: problem`` lines of what was skipped


def normalize(text: str) -> str:
    """The dedup key of a query: whitespace collapsed, case folded."""
    return " ".join(text.split()).casefold()


def query_hash(text: str) -> str:
    """A stable query id from the normalized text, so reruns and file order give the same id."""
    return "tb-" + hashlib.sha1(normalize(text).encode()).hexdigest()[:12]


def detect_kind(path: Path, data: Any) -> FileKind:
    """Tell the file kind from its shape (and, for the two kinds that share a shape, its folder)."""
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        first = data[0]
        if "relevant APIs" in first and "api_list" in first:
            return "solvable" if "solvable_queries" in path.parts else "example"
        if "api_list" in first:
            return "demo"
        if set(first) >= {"query", "query_id"}:
            return "open_domain"
    if isinstance(data, dict) and data:
        first = next(iter(data.values()))
        if isinstance(first, dict) and "available_tools" in first:
            return "tooleval"
        if all(isinstance(v, int) for v in data.values()):
            return "query_ids"
    raise ValueError(f"{path}: unknown ToolBench file format (not one of the kinds in the snapshot README)")


def group_of(path: Path, kind: FileKind) -> str:
    """The ToolBench group of a file: its stem for test sets, G1/G2/G3 for examples, ``demo`` else."""
    if kind in ("demo", "open_domain"):
        return "demo"
    if kind == "example":
        return path.stem.removesuffix("_query")
    return path.stem


def _text(record: Any, key: str, where: str) -> str:
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected an object, got {type(record).__name__}")
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where}: empty or missing {key!r}")
    return value


def _api_list(record: dict[str, Any], where: str) -> tuple[ToolBenchAPI, ...]:
    relevant_raw = record.get("relevant APIs")
    relevant = None
    if relevant_raw is not None:
        try:
            relevant = {(str(t), str(a)) for t, a in relevant_raw}
        except (TypeError, ValueError):
            raise ValueError(f"{where}: 'relevant APIs' is not a list of [tool, api] pairs") from None
    apis = []
    for j, api in enumerate(record.get("api_list") or []):
        tool = _text(api, "tool_name", f"{where} api_list[{j}]")
        name = _text(api, "api_name", f"{where} api_list[{j}]")
        apis.append(
            ToolBenchAPI(
                tool_name=tool,
                api_name=name,
                category=api.get("category_name"),
                description=api.get("api_description"),
                relevant=None if relevant is None else (tool, name) in relevant,
                parameters=_parameters(api, f"{where} api_list[{j}]"),
            )
        )
    return tuple(apis)


def _parameters(api: dict[str, Any], where: str) -> tuple[tuple[str, str, bool], ...]:
    """``(name, description, required)`` of an API's required and optional parameters."""
    out = []
    for key, required in (("required_parameters", True), ("optional_parameters", False)):
        params = api.get(key) or []
        if not isinstance(params, list):
            raise ValueError(f"{where}: {key!r} is not a list")
        for param in params:
            if isinstance(param, dict) and str(param.get("name") or "").strip():
                out.append((str(param["name"]), str(param.get("description") or ""), required))
    return tuple(out)


def _tooleval_apis(tools: Any, where: str) -> tuple[ToolBenchAPI, ...]:
    if not isinstance(tools, list):
        raise ValueError(f"{where}: 'available_tools' is not a list")
    apis = []
    for j, tool in enumerate(tools):
        name = _text(tool, "name", f"{where} available_tools[{j}]")
        if name == "Finish":  # ToolEval's own control function, not an API
            continue
        match = _TOOLEVAL_DESC.match(tool.get("description") or "")
        tool_name = match["tool"] if match else ""
        description = match["desc"] if match and match["desc"] is not None else None
        api_name = name.removesuffix(f"_for_{tool_name}") if tool_name else name
        apis.append(ToolBenchAPI(tool_name=tool_name or name, api_name=api_name, description=description))
    return tuple(apis)


def parse_file(
    path: Path, root: Path, errors: list[str] | None = None
) -> tuple[FileKind, list[ToolBenchQuery] | set[str]]:
    """Parse one file: its queries, or for a ``test_query_ids`` file the set of ids it lists.

    With ``errors`` a bad record or undecodable bytes are appended there (the record skipped) instead of
    raising; a file that is not JSON of a known kind always raises ``ValueError`` naming it.
    """
    rel = path.relative_to(root).as_posix()
    text, problem = decode_utf8(path.read_bytes())
    if problem:
        if errors is None:
            raise ValueError(f"{rel}: {problem}")
        errors.append(f"{rel}: {problem}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{rel}: not valid JSON ({exc})") from None
    kind = detect_kind(path, data)
    if kind == "query_ids":
        return kind, {str(k) for k in data}
    group = group_of(path, kind)
    items: Iterator[tuple[str, dict[str, Any]]]
    if kind == "tooleval":
        items = ((str(k), v) for k, v in data.items())
    else:
        items = ((str(r.get("query_id", i)), r) for i, r in enumerate(data))
    out = []
    for source_id, record in items:
        where = f"{rel} query {source_id}"
        try:
            query = _text(record, "query", where)
            if kind == "tooleval":
                apis = _tooleval_apis(record.get("available_tools"), where)
            elif kind == "open_domain":
                apis = ()
            else:
                apis = _api_list(record, where)
        except ValueError as exc:
            if errors is None:
                raise
            errors.append(f"{exc}; query skipped")
            continue
        out.append(
            ToolBenchQuery(
                query_id=query_hash(query),
                query=query,
                group=group,
                source_id=source_id,
                source_file=rel,
                kind=kind,
                apis=apis,
            )
        )
    return kind, out


def load_toolbench(root: Path) -> ParsedToolBench:
    """Parse every JSON file under ``root`` (the snapshot's ``toolbench/`` folder) and dedupe the queries.

    Files are read in sorted path order, so the first occurrence of a duplicated query (which keeps its
    group and source id) is the same on every machine.

    A file of unknown format or bad JSON, or a record with an empty query, is an error line
    (``errors``, also logged) and is skipped; the rest is read.

    Raises:
        FileNotFoundError: ``root`` holds no JSON file.
    """
    root = Path(root)
    files = sorted(p for p in root.rglob("*.json") if p.is_file())
    if not files:
        raise FileNotFoundError(f"no ToolBench JSON files under {root}")
    per_file: dict[str, dict[str, Any]] = {}
    id_lists: dict[str, set[str]] = {}
    parsed: list[ToolBenchQuery] = []
    errors: list[str] = []
    for path in files:
        rel = path.relative_to(root).as_posix()
        seen_errors = len(errors)
        try:
            kind, result = parse_file(path, root, errors)
        except ValueError as exc:
            errors.append(f"{exc}; file skipped")
            per_file[rel] = {"kind": None, "error": str(exc)}
            log.warning("%s", errors[-1])
            continue
        for line in errors[seen_errors:]:
            log.warning("%s", line)
        if isinstance(result, set):
            id_lists[path.stem] = result
            per_file[rel] = {"kind": kind, "ids": len(result)}
        else:
            parsed.extend(result)
            per_file[rel] = {"kind": kind, "queries": len(result), "group": group_of(path, kind)}
    seen: dict[str, ToolBenchQuery] = {}
    for q in parsed:
        seen.setdefault(q.query_id, q)
    unlisted = [
        f"{q.source_file}:{q.source_id}"
        for q in parsed
        if q.kind == "solvable" and q.group in id_lists and q.source_id not in id_lists[q.group]
    ]
    return ParsedToolBench(
        queries=list(seen.values()),
        per_file=per_file,
        duplicates_removed=len(parsed) - len(seen),
        unlisted_ids=unlisted,
        errors=errors,
    )


def toolbench_root(mirror: Path) -> Path:
    """The ToolBench folder of a catalog snapshot."""
    root = Path(mirror) / "toolbench"
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is missing: the snapshot has no ToolBench queries")
    return root


def merge(
    parts: dict[str, ParsedToolBench], renames: dict[str, dict[str, str]] | None = None
) -> ParsedToolBench:
    """Several parsed roots as one: queries deduped across roots (the first root, in the given order, keeps
    a repeated query), file keys prefixed with the root's label, and ``renames[label]`` mapping a root's
    group names (DRAFT's ``G2.json`` is ToolBench's original G2_category) so groups of two sources never
    collide."""
    renames = renames or {}
    out = ParsedToolBench(queries=[], per_file={}, duplicates_removed=0, unlisted_ids=[], errors=[])
    seen: set[str] = set()
    for label, parsed in parts.items():
        rename = renames.get(label, {})
        out.per_file |= {f"{label}/{k}": v for k, v in parsed.per_file.items()}
        out.errors += [f"{label}/{e}" for e in parsed.errors]
        out.unlisted_ids += [f"{label}/{u}" for u in parsed.unlisted_ids]
        out.duplicates_removed += parsed.duplicates_removed
        for q in parsed.queries:
            if q.query_id in seen:
                out.duplicates_removed += 1
                continue
            seen.add(q.query_id)
            group = rename.get(q.group, q.group)
            out.queries.append(dataclasses.replace(q, group=group) if group != q.group else q)
    return out
