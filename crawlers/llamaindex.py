"""LlamaIndex: ToolSpec classes of the tool integration packages, one tool per spec function.

LlamaIndex turns each entry of a ToolSpec's ``spec_functions`` into a ``FunctionTool`` named after the
function and described by its docstring, so that is one tool here (``llamaindex:<spec class>:<function>``).
Specs whose functions appear only at run time (MCP, Zapier) are one tool each. The package README and
``pyproject.toml`` add the docs page, keywords and a fallback description; constructor arguments such as
``api_key`` are the auth requirement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crawlers.auth import is_credential_name, kind_of_names
from crawlers.files import read_jsonl, read_text, read_toml
from crawlers.record import Argument, ToolRecord, slugify
from crawlers.report import CrawlErrors
from crawlers.source import Source, SourceFileMissing
from crawlers.text import opening_description

PLATFORM = "llamaindex"
PACKAGES = f"{PLATFORM}/integrations"
_PACKAGE = re.compile(r"llama-index-integrations/tools/([^/]+)/")
_ARG_LINE = re.compile(r"^\s{2,}(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.+)$")


@dataclass(frozen=True)
class LlamaIndexUrls:
    """Public URLs written into records."""

    llamahub: str = "https://llamahub.ai/l/tools"


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The functional part of a Google-style docstring, and its ``Args:`` descriptions by name."""
    lines = (doc or "").strip().splitlines()
    summary: list[str] = []
    args: dict[str, str] = {}
    section = None
    for line in lines:
        head = line.strip().rstrip(":").lower()
        if line.strip().endswith(":") and head in (
            "args",
            "arguments",
            "parameters",
            "returns",
            "raises",
            "example",
            "examples",
            "yields",
        ):
            section = head
            continue
        if section is None:
            summary.append(line.strip())
        elif section in ("args", "arguments", "parameters"):
            m = _ARG_LINE.match(line)
            if m:
                args[m.group(1).strip("*")] = m.group(2).strip()
    return " ".join(s for s in summary if s).strip(), args


def _package_meta(source: Source, package: str, errors: CrawlErrors) -> tuple[dict[str, Any], str]:
    """``[project]`` of the package's pyproject.toml and its README text (empty when unreadable)."""
    table = read_toml(source, f"{PACKAGES}/{package}/pyproject.toml", PLATFORM, errors) or {}
    project = table.get("project")
    readme = read_text(source, f"{PACKAGES}/{package}/README.md", PLATFORM, errors) or ""
    return project if isinstance(project, dict) else {}, readme


def crawl(source: Source, errors: CrawlErrors, urls: LlamaIndexUrls | None = None) -> list[ToolRecord]:
    """All LlamaIndex tools: one per ToolSpec function (or per spec with run-time functions)."""
    urls = urls or LlamaIndexUrls()
    try:
        packages = [p.rstrip("/") for p in source.list(PACKAGES) if p.endswith("/")]
    except SourceFileMissing as exc:
        raise FileNotFoundError(f"llamaindex: {exc}") from None
    facts_path = f"{PLATFORM}/code_facts.jsonl"
    classes = read_jsonl(source, facts_path, PLATFORM, errors)
    files = read_jsonl(source, f"{PLATFORM}/code_facts_files.jsonl", PLATFORM, errors)
    meta = {p: _package_meta(source, p, errors) for p in packages}

    out: list[ToolRecord] = []
    seen: set[str] = set()
    for c in classes:
        name, path = c.get("class_name"), c.get("source_path") or ""
        m = _PACKAGE.search(path)
        if not name or not m:
            errors.add(
                PLATFORM,
                f"{source.describe(facts_path)} ({name})",
                "record lacks class_name or a package path",
            )
            continue
        package = m.group(1)
        project, readme = meta.get(package, ({}, ""))
        pkg_files = [
            f
            for f in files
            if str(f.get("path", "")).startswith(f"llama-index-integrations/tools/{package}/")
        ]
        endpoints = list(dict.fromkeys(u for f in pkg_files for u in f.get("url_literals") or []))
        init = c.get("init_args") or []
        creds = [a["name"] for a in init if is_credential_name(str(a.get("name", "")))]
        creds += [v for f in pkg_files for v in f.get("env_vars_read") or [] if is_credential_name(v)]
        creds = list(dict.fromkeys(creds))
        required = [a["name"] for a in init if a.get("name") in creds and a.get("required")]
        keywords = [
            str(k)
            for k in project.get("keywords") or []
            if str(k).lower() not in ("llama-index", "llamaindex", "tools", "tool")
        ]
        common = dict(
            platform=PLATFORM,
            endpoints=endpoints,
            doc_url=f"{urls.llamahub}/{package}",
            auth_kind=kind_of_names(creds),
            auth_names=creds,
            required_auth=required,
            tags=keywords,
        )
        fallback = str(c.get("class_docstring") or "").strip() or opening_description(readme)
        sources = [f"{PACKAGES}/{package}/README.md", f"{PACKAGES}/{package}/pyproject.toml"]
        functions = c.get("spec_functions")
        if not functions:
            # tools appear only at run time (MCP server, Zapier actions): the spec itself is the tool
            entries: list[tuple[str, str, str, list[Argument]]] = [
                (f"{PLATFORM}:{slugify(name)}", name, fallback, [])
            ]
        else:
            entries = []
            for fn in functions:
                fname = str(fn.get("function") or "")
                if not fname:
                    errors.add(
                        PLATFORM, f"{source.describe(facts_path)} ({name})", "spec function without a name"
                    )
                    continue
                summary, arg_docs = split_docstring(str(fn.get("docstring") or ""))
                args = [
                    Argument(
                        name=str(a.get("name")),
                        type=a.get("annotation"),
                        description=arg_docs.get(str(a.get("name"))),
                        required=bool(a.get("required")),
                    )
                    for a in fn.get("args") or []
                    if a.get("name") not in ("self", "cls")
                ]
                entries.append(
                    (f"{PLATFORM}:{slugify(name)}:{slugify(fname)}", fname, summary or fallback, args)
                )
        for tid, tname, description, args in entries:
            if tid in seen:
                errors.add(
                    PLATFORM, f"{source.describe(facts_path)} ({name})", f"duplicate tool {tid}; first kept"
                )
                continue
            if not description:
                errors.add(
                    PLATFORM,
                    f"{source.describe(facts_path)} ({name})",
                    f"tool {tid} has no description; skipped",
                )
                continue
            seen.add(tid)
            out.append(
                ToolRecord(
                    tool_id=tid,
                    name=tname,
                    description=description,
                    arguments=args,
                    sources=[f"{source.describe(facts_path)} ({name}.{tname})"]
                    + [source.describe(s) for s in sources],
                    **common,  # type: ignore[arg-type]
                )
            )
    return out
