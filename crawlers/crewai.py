"""CrewAI: ``tool.specs.json`` (one entry per exported tool), tool READMEs, docs pages and code facts.

The spec is the main source; the unlisted tool classes of ``code_facts.jsonl`` (AWS, Bedrock toolkits,
Apify, ...) add tools the spec leaves out, and docs pages / READMEs fill description, docs URL and
category. All sightings of one class merge into ``crewai:<class_name as snake_case>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crawlers.auth import is_credential_name, kind_of_names
from crawlers.files import read_json, read_jsonl, read_page, read_text
from crawlers.record import RecordSet, ToolRecord, slugify
from crawlers.report import CrawlErrors
from crawlers.schema_args import arguments_from_schema
from crawlers.source import Source, SourceFileMissing
from crawlers.text import first_heading, opening_description

PLATFORM = "crewai"
_CLASS_REF = re.compile(r"`([A-Z][A-Za-z0-9]*(?:Tool|Tools|Adapter|ToolSet|Toolkit))`")


def _norm(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


@dataclass(frozen=True)
class CrewAIUrls:
    """Public URLs written into records (the docs site and the repo browser)."""

    docs: str = "https://docs.crewai.com/edge/en/tools"
    repo_blob: str = "https://github.com/crewAIInc/crewAI/blob/main"


def tool_id(class_name: str) -> str:
    return f"{PLATFORM}:{slugify(class_name)}"


def _auth_from_env(env_vars: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    names = [str(e["name"]) for e in env_vars if isinstance(e, dict) and e.get("name")]
    required = [
        str(e["name"]) for e in env_vars if isinstance(e, dict) and e.get("name") and e.get("required")
    ]
    return names, required


def _spec_record(
    entry: dict[str, Any], where: str, file_urls: dict[str, list[str]], module: str | None
) -> ToolRecord:
    names, required = _auth_from_env(entry.get("env_vars") or [])
    init = entry.get("init_params_schema") or {}
    init_props = init.get("properties") or {}
    if not names:
        # some tools take credentials only as constructor fields (api_key=..., password=...)
        names = [p for p in init_props if is_credential_name(p) and p not in ("env_vars",)]
        required = [p for p in names if p in (init.get("required") or [])]
    endpoints = list(file_urls.get(module or "", []))
    for prop in init_props.values():
        default = prop.get("default") if isinstance(prop, dict) else None
        if (
            isinstance(default, str)
            and default.startswith(("http://", "https://"))
            and default not in endpoints
        ):
            endpoints.insert(0, default)
    return ToolRecord(
        tool_id=tool_id(entry["name"]),
        name=str(entry.get("humanized_name") or entry["name"]),
        description=str(entry.get("description") or "").strip(),
        platform=PLATFORM,
        endpoints=endpoints,
        auth_kind=kind_of_names(names),
        auth_names=names,
        required_auth=required,
        arguments=arguments_from_schema(entry.get("run_params_schema")),
        sources=[where],
    )


def _tool_dir(source_path: str) -> str | None:
    """``readmes/...`` folder of a class's README, from the class's repo path."""
    m = re.search(r"crewai_tools/(tools|aws)/(.+)/[^/]+\.py$", source_path)
    if not m:
        return None
    if m.group(1) == "tools":
        return f"readmes/tools/{m.group(2).split('/')[0]}"
    return f"readmes/aws/{m.group(2)}"


def crawl(source: Source, errors: CrawlErrors, urls: CrewAIUrls | None = None) -> list[ToolRecord]:
    """All CrewAI tools of the source, one record per tool class (spec + code facts + docs + READMEs)."""
    urls = urls or CrewAIUrls()
    spec_path = f"{PLATFORM}/tool.specs.json"
    spec = read_json(source, spec_path, PLATFORM, errors, required=True)
    entries = spec.get("tools") if isinstance(spec, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"crewai: {source.describe(spec_path)} has no 'tools' list")

    classes = read_jsonl(source, f"{PLATFORM}/code_facts.jsonl", PLATFORM, errors)
    files = read_jsonl(source, f"{PLATFORM}/code_facts_files.jsonl", PLATFORM, errors)
    file_urls = {f["path"]: list(f.get("url_literals") or []) for f in files if "path" in f}
    file_env = {f["path"]: list(f.get("env_vars_read") or []) for f in files if "path" in f}
    module_of = {c["class_name"]: c.get("source_path") for c in classes if "class_name" in c}

    tools = RecordSet()
    for i, entry in enumerate(entries):
        where = f"{source.describe(spec_path)} tools[{i}]"
        if not isinstance(entry, dict) or not entry.get("name"):
            errors.add(PLATFORM, where, "entry has no 'name'")
            continue
        tools.add(_spec_record(entry, f"{where} ({entry['name']})", file_urls, module_of.get(entry["name"])))

    # classes the spec leaves out; base classes (bases of other tool classes) are not tools themselves
    spec_names = {e.get("name") for e in entries if isinstance(e, dict)}
    bases = {b for c in classes for b in c.get("bases") or []}
    for c in classes:
        name = c.get("class_name")
        if not name or name in spec_names or name in bases:
            continue
        names, required = _auth_from_env(c.get("env_vars") or [])
        module = c.get("source_path") or ""
        tools.add(
            ToolRecord(
                tool_id=tool_id(name),
                name=str(c.get("name") or name),
                description=str(c.get("description") or "").strip(),
                platform=PLATFORM,
                endpoints=list(file_urls.get(module, [])),
                auth_kind=kind_of_names(names),
                auth_names=names,
                required_auth=required,
                sources=[f"{source.describe(f'{PLATFORM}/code_facts.jsonl')} ({name})"],
            )
        )

    # env vars read at run time by a tool's defining file count as its credentials when the spec has none
    for rec in tools.records():
        class_name = next((c for c in module_of if tool_id(c) == rec.tool_id), None)
        read = [v for v in file_env.get(module_of.get(class_name or "") or "", []) if is_credential_name(v)]
        if read and not rec.auth_names:
            rec.auth_names = read
            rec.auth_kind = kind_of_names(read)

    by_lower = {_norm(str(n)): str(n) for n in list(spec_names) + list(module_of) if n}
    _read_docs(source, errors, tools, by_lower, urls)
    _read_readmes(source, errors, tools, module_of, urls)

    return tools.described(errors, PLATFORM)


def _read_docs(
    source: Source, errors: CrawlErrors, tools: RecordSet, by_lower: dict[str, str], urls: CrewAIUrls
) -> None:
    """Docs pages: the H1 (`` `ClassName` ``) or the file name ties a page to a class."""
    root = f"{PLATFORM}/docs"
    try:
        categories = [c.rstrip("/") for c in source.list(root) if c.endswith("/")]
    except SourceFileMissing:
        errors.add(PLATFORM, root, "missing; docs pages skipped")
        return
    for category in categories:
        try:
            names = source.list(f"{root}/{category}")
        except SourceFileMissing as exc:
            errors.add(PLATFORM, f"{root}/{category}", f"folder unreadable ({exc}); its pages skipped")
            continue
        for name in names:
            if not name.endswith(".mdx") or name == "overview.mdx":
                continue
            path = f"{root}/{category}/{name}"
            where = source.describe(path)
            page = read_page(source, path, PLATFORM, errors)  # listed but unreachable: live source reports it
            if page is None:
                continue
            stem = name[: -len(".mdx")]
            heading = first_heading(page.body) or ""
            class_name = by_lower.get(_norm(heading)) or by_lower.get(_norm(stem))
            title = str(page.meta.get("title") or "").strip()
            description = str(page.meta.get("description") or "").strip() or opening_description(page.body)
            # a page without a class heading names its classes in backticks: `E2BExecTool`, `MySQLSearchTool`
            named = list(dict.fromkeys(_CLASS_REF.findall(description)))
            known = [by_lower[_norm(n)] for n in named if _norm(n) in by_lower]
            if class_name is not None:
                targets = [(tool_id(class_name), class_name)]
            elif known:
                targets = [(tool_id(n), n) for n in dict.fromkeys(known)]
            elif len(named) == 1:
                targets = [(tool_id(named[0]), title or named[0])]
            elif title:
                targets = [(f"{PLATFORM}:{slugify(stem)}", title)]
            else:
                errors.add(PLATFORM, where, "page names no tool (no class heading, no title)")
                continue
            for tid, name in targets:
                tools.add(
                    ToolRecord(
                        tool_id=tid,
                        name=name,
                        description=description,
                        platform=PLATFORM,
                        doc_url=f"{urls.docs}/{category}/{stem}",
                        tags=[category],
                        sources=[where],
                    )
                )


def _read_readmes(
    source: Source, errors: CrawlErrors, tools: RecordSet, module_of: dict[str, str | None], urls: CrewAIUrls
) -> None:
    """Tool READMEs fill a description or links where spec and docs say nothing."""
    dirs: dict[str, list[str]] = {}
    for class_name, module in module_of.items():
        folder = _tool_dir(module or "")
        if folder and tool_id(class_name) in tools:
            dirs.setdefault(folder, []).append(class_name)
    for folder, class_names in sorted(dirs.items()):
        text = None
        for readme in ("README.md", "README.MD"):
            path = f"{PLATFORM}/{folder}/{readme}"
            text = read_text(source, path, PLATFORM, errors, missing=None)
            if text is not None:
                break
        if text is None:
            continue
        upstream = folder.replace("readmes/", "lib/crewai-tools/src/crewai_tools/", 1)
        for class_name in class_names:
            rec = tools.get(tool_id(class_name))
            assert rec is not None
            if not rec.description:
                rec.description = opening_description(text)
            rec.doc_url = rec.doc_url or f"{urls.repo_blob}/{upstream}/{readme}"
            if source.describe(path) not in rec.sources:
                rec.sources.append(source.describe(path))
