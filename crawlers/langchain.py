"""LangChain: the community tool classes (code facts) and the integration docs pages.

A tool class of ``code_facts.jsonl`` gives the LLM-facing name, description and arguments; its file and
the utilities modules it imports give env vars and endpoint URLs. A docs page that names a class (or its
API wrapper, or a toolkit holding it) documents that class; a page that names none is a tool of its own
(partner packages such as ``langchain-tavily`` have no community class). Env vars of the example agent
(``OPENAI_API_KEY``, ``LANGSMITH_*``) are dropped: they are not the tool's auth.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from crawlers.auth import is_agent_key, is_credential_name, kind_of_names
from crawlers.files import read_jsonl, read_page, read_text
from crawlers.record import Argument, RecordSet, ToolRecord, slugify
from crawlers.report import CrawlErrors
from crawlers.source import Source, SourceFileMissing
from crawlers.text import code_blocks, opening_description

PLATFORM = "langchain"
PAGES = f"{PLATFORM}/docs/src/oss/integrations/tools"
_ENV = re.compile(r"""os\.(?:environ(?:\.get)?\s*[\[(]|getenv\s*\()\s*["']([A-Za-z_][A-Za-z0-9_]*)["']""")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_INDEX_ROW = re.compile(r"^\|\s*\[[^\]]+\]\(/oss/integrations/tools/([\w-]+)\)", re.M)


@dataclass(frozen=True)
class LangChainUrls:
    """Public URLs written into records."""

    docs: str = "https://docs.langchain.com/oss/python/integrations/tools"


def page_env_vars(body: str) -> list[str]:
    """Env vars a page's code cells set or read, minus the example agent's LLM / tracing keys."""
    found: dict[str, None] = {}
    for cell in code_blocks(body):
        for name in _ENV.findall(cell):
            if not is_agent_key(name):
                found.setdefault(name, None)
    return list(found)


def _module_path(dotted: str) -> list[str]:
    """Repo paths a ``langchain_community.utilities.x.Name`` import can live in."""
    module = dotted.rsplit(".", 1)[0].replace(".", "/")
    return [f"libs/community/{module}.py", f"libs/community/{module}/__init__.py"]


def _index_categories(source: Source, errors: CrawlErrors) -> dict[str, list[str]]:
    """Page slug -> categories of ``index.md``'s tables (``## Search`` ...)."""
    path = f"{PAGES}/index.md"
    text = read_text(source, path, PLATFORM, errors, missing="missing; no categories")
    if text is None:
        return {}
    out: dict[str, list[str]] = {}
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        title = section.splitlines()[0].strip()
        if title.lower() == "all tools":
            continue
        for slug in _INDEX_ROW.findall(section):
            out.setdefault(slug, []).append(title)
    return out


def _is_abstract(c: dict[str, Any], bases: set[str]) -> bool:
    """A base class of other tools with no own name or description is a building block, not a tool."""
    return c["class_name"] in bases and not (c.get("name") and c.get("description"))


def tool_id(class_name: str) -> str:
    return f"{PLATFORM}:{slugify(class_name)}"


def crawl(source: Source, errors: CrawlErrors, urls: LangChainUrls | None = None) -> list[ToolRecord]:
    """All LangChain tools: one per community tool class, plus one per page that documents no class."""
    urls = urls or LangChainUrls()
    try:
        names = source.list(PAGES)
    except SourceFileMissing as exc:
        raise FileNotFoundError(f"langchain: {exc}") from None
    facts = read_jsonl(source, f"{PLATFORM}/code_facts.jsonl", PLATFORM, errors)
    files = {
        f["path"]: f
        for f in read_jsonl(source, f"{PLATFORM}/code_facts_files.jsonl", PLATFORM, errors)
        if "path" in f
    }
    classes = [c for c in facts if c.get("kind") == "tool" and c.get("class_name")]
    toolkits = [c for c in facts if c.get("kind") == "toolkit" and c.get("class_name")]
    bases = {b for c in classes for b in c.get("bases") or []}

    tools = RecordSet()
    # identifier -> tool ids it points at: the class itself, its API wrapper, the toolkits holding it
    pointers: dict[str, set[str]] = {}
    for c in classes:
        if _is_abstract(c, bases):
            continue
        tid = tool_id(c["class_name"])
        description = str(c.get("description") or c.get("class_docstring") or "").strip()
        module_files = [c.get("source_path") or ""] + [
            p for u in c.get("imports_utilities") or [] for p in _module_path(u)
        ]
        env = [v for f in module_files for v in (files.get(f) or {}).get("env_vars_read") or []]
        env = [v for v in dict.fromkeys(env) if is_credential_name(v) and not is_agent_key(v)]
        endpoints = list(
            dict.fromkeys(u for f in module_files for u in (files.get(f) or {}).get("url_literals") or [])
        )
        args = [
            Argument(name=str(k), description=v if isinstance(v, str) else None)
            for k, v in (c.get("args") or {}).items()
        ]
        tools.add(
            ToolRecord(
                tool_id=tid,
                name=str(c.get("name") or c["class_name"]),
                description=description,
                platform=PLATFORM,
                endpoints=endpoints,
                auth_kind=kind_of_names(env),
                auth_names=env,
                # the wrappers read keys with get_from_dict_or_env / secret_from_env, which fail without them
                required_auth=list(env),
                arguments=args,
                sources=[f"{source.describe(f'{PLATFORM}/code_facts.jsonl')} ({c['class_name']})"],
            )
        )
        pointers.setdefault(c["class_name"], set()).add(tid)
        for u in c.get("imports_utilities") or []:
            pointers.setdefault(u.rsplit(".", 1)[-1], set()).add(tid)
    for kit in toolkits:
        members = {tool_id(t.rsplit(".", 1)[-1]) for t in kit.get("imports_tools") or []} & {
            r.tool_id for r in tools.records()
        }
        if members:
            pointers.setdefault(kit["class_name"], set()).update(members)

    categories = _index_categories(source, errors)
    for name in names:
        if not name.endswith((".md", ".mdx")) or name.startswith("index."):
            continue
        _read_page(source, errors, tools, pointers, categories, name, urls)

    return tools.described(errors, PLATFORM)


def _read_page(
    source: Source,
    errors: CrawlErrors,
    tools: RecordSet,
    pointers: dict[str, set[str]],
    categories: dict[str, list[str]],
    name: str,
    urls: LangChainUrls,
) -> None:
    path = f"{PAGES}/{name}"
    where = source.describe(path)
    page = read_page(source, path, PLATFORM, errors)  # listed but unreachable: the live source reports it
    if page is None:
        return
    slug = name.rsplit(".", 1)[0]
    title = str(page.meta.get("title") or "").strip()
    env = [v for v in page_env_vars(page.body) if is_credential_name(v)]
    idents = {m for cell in code_blocks(page.body) for m in _IDENT.findall(cell)}
    documented = sorted({tid for ident in idents & pointers.keys() for tid in pointers[ident]})
    doc_url = f"{urls.docs}/{slug}"
    tags = categories.get(slug, [])
    if documented:
        for tid in documented:
            rec = tools.get(tid)
            assert rec is not None
            rec.doc_url = rec.doc_url or doc_url
            rec.tags = list(dict.fromkeys(rec.tags + tags))
            if not rec.auth_names and env:
                rec.auth_names, rec.auth_kind, rec.required_auth = env, kind_of_names(env), list(env)
            if where not in rec.sources:
                rec.sources.append(where)
        return
    if not title:
        errors.add(PLATFORM, where, "page has no title and documents no known class; skipped")
        return
    tools.add(
        ToolRecord(
            tool_id=f"{PLATFORM}:{slugify(slug)}",
            name=title,
            description=opening_description(page.body),
            platform=PLATFORM,
            doc_url=doc_url,
            auth_kind=kind_of_names(env),
            auth_names=env,
            required_auth=list(env),
            tags=tags,
            sources=[where],
        )
    )
