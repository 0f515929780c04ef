"""n8n: node types (one tool per resource x operation), credential types, codex files and code URLs.

``types.nodes`` holds one entry per node version set; a node with ``resource`` / ``operation`` option
lists becomes one tool per (resource, operation) option, named by its ``action`` and described by its
option ``description`` (that is how n8n reaches thousands of tools); other nodes are one tool each. The
entries of one node are read newest version first and merged, so older versions only add operations.
Credential types give the auth kind (OAuth2 by ``extends``, basic by a user + password pair, API key by a
secret field) and, with ``requestDefaults`` and per-option ``routing``, the endpoint URLs.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from crawlers.files import read_json, read_jsonl
from crawlers.record import Argument, RecordSet, ToolRecord, identifier_words, slugify
from crawlers.report import CrawlErrors
from crawlers.source import Source

PLATFORM = "n8n"
PACKAGES: dict[str, str] = {"nodes-base": "n8n-nodes-base", "nodes-langchain": "@n8n/n8n-nodes-langchain"}
# ids of the AI package get a prefix: both packages have nodes called `code` and `openAi`
ID_PREFIX: dict[str, str] = {"nodes-base": "", "nodes-langchain": "langchain_"}


@dataclass(frozen=True)
class N8nUrls:
    """Public URLs written into records."""

    credential_docs: str = "https://docs.n8n.io/integrations/builtin/credentials"


_DOC_HOSTS = ("docs.", "help.", "support.", "developer.", "developers.", "www.")
_DOC_PATHS = ("/docs", "/help/", "/articles/", "/reference/", "/guide")


def looks_like_api(url: str) -> bool:
    """Code URL literals include docs and help links in error messages; keep only API-looking ones."""
    rest = url.split("://", 1)[-1]
    host, _, path = rest.partition("/")
    return not host.startswith(_DOC_HOSTS) and not any(p in "/" + path for p in _DOC_PATHS)


def _is_url(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(("http://", "https://"))


def _max_version(entry: dict[str, Any]) -> float:
    v = entry.get("version")
    values = v if isinstance(v, list) else [v]
    return max((float(x) for x in values if isinstance(x, int | float)), default=0.0)


def credential_kind(cred: dict[str, Any]) -> str:
    """The auth kind of an n8n credential type."""
    extends = [str(e) for e in cred.get("extends") or []]
    name = str(cred.get("name", ""))
    if any("oauth2" in e.lower() for e in extends) or name.lower().endswith("oauth2api"):
        return "oauth2"
    if any("oauth1" in e.lower() for e in extends):
        return "other"
    props = [p for p in cred.get("properties") or [] if isinstance(p, dict)]
    secret = [p for p in props if (p.get("typeOptions") or {}).get("password")]
    login = [p for p in props if str(p.get("name", "")).lower() in ("user", "username", "email", "login")]
    if secret and login and any(str(p.get("name", "")).lower() == "password" for p in secret):
        return "basic"
    if secret or cred.get("authenticate"):
        return "api_key"
    return "other"


def credential_endpoints(cred: dict[str, Any]) -> list[str]:
    """API URLs a credential type states: its test request's base URL and visible URL defaults."""
    out = []
    base = ((cred.get("test") or {}).get("request") or {}).get("baseURL")
    if _is_url(base):
        out.append(base.rstrip("/"))
    for p in cred.get("properties") or []:
        if isinstance(p, dict) and p.get("type") != "hidden" and _is_url(p.get("default")):
            out.append(p["default"].rstrip("/"))
    return list(dict.fromkeys(out))


def _show(prop: dict[str, Any], key: str) -> list[Any] | None:
    show = (prop.get("displayOptions") or {}).get("show") or {}
    value = show.get(key)
    return value if isinstance(value, list) else None


def _node_auth(entry: dict[str, Any], creds: dict[str, dict[str, Any]]) -> tuple[str, list[str], list[str]]:
    """(kind, credential names, required names): the kind of the credential the default auth option uses."""
    listed = [c for c in entry.get("credentials") or [] if isinstance(c, dict) and c.get("name")]
    if not listed:
        return "none", [], []
    names = [str(c["name"]) for c in listed]
    required = [str(c["name"]) for c in listed if c.get("required")]
    default_auth = next(
        (
            p.get("default")
            for p in entry.get("properties") or []
            if isinstance(p, dict) and p.get("name") == "authentication"
        ),
        None,
    )
    chosen = next((c for c in listed if default_auth in (_show(c, "authentication") or [])), listed[0])
    cred = creds.get(str(chosen["name"]))
    return (credential_kind(cred) if cred else "other"), names, required


def _codex(entry: dict[str, Any], codex_file: dict[str, Any] | None) -> tuple[str | None, list[str]]:
    """(primary docs URL, categories + subcategories) from the entry's codex and the codex file."""
    doc_url = None
    tags: list[str] = []
    for codex in (entry.get("codex"), codex_file):
        if not isinstance(codex, dict):
            continue
        primary = ((codex.get("resources") or {}).get("primaryDocumentation") or [{}])[0]
        doc_url = doc_url or (primary.get("url") if isinstance(primary, dict) else None)
        tags += [str(c) for c in codex.get("categories") or []]
        subs = codex.get("subcategories") or {}
        for values in subs.values() if isinstance(subs, dict) else [subs]:
            tags += [str(s) for s in values or [] if isinstance(s, str)]
    return doc_url, list(dict.fromkeys(tags))


def _arguments(props: list[dict[str, Any]], resource: str | None, operation: str | None) -> list[Argument]:
    """Parameters n8n shows for this resource/operation (by their ``displayOptions.show``)."""
    out = []
    for p in props:
        if p.get("name") in ("resource", "operation", "authentication") or p.get("type") == "notice":
            continue
        ops, res = _show(p, "operation"), _show(p, "resource")
        if operation is not None and ops is not None and operation not in ops:
            continue
        if resource is not None and res is not None and resource not in res:
            continue
        if operation is None and ops is not None:
            continue
        out.append(
            Argument(
                name=str(p.get("name")),
                type=str(p.get("type")) if p.get("type") else None,
                description=(p.get("description") or p.get("displayName") or None),
                required=bool(p.get("required")),
            )
        )
    return out


def _operations(props: list[dict[str, Any]]) -> list[tuple[str | None, dict[str, Any]]]:
    """(resource, option) for every option of every ``operation`` list, per resource it is shown for."""
    out = []
    for p in props:
        if p.get("name") != "operation" or p.get("type") != "options":
            continue
        resources = _show(p, "resource") or [None]
        for option in p.get("options") or []:
            if isinstance(option, dict) and option.get("value") is not None:
                out.extend((r, option) for r in resources)
    return out


def crawl(source: Source, errors: CrawlErrors, urls: N8nUrls | None = None) -> list[ToolRecord]:
    """All n8n tools of both packages."""
    urls = urls or N8nUrls()
    code_urls: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in read_jsonl(source, f"{PLATFORM}/code_facts.jsonl", PLATFORM, errors):
        parts = str(row.get("path", "")).split("/")
        if len(parts) > 3 and parts[1] == "nodes":
            code_urls[(str(row.get("package")), parts[2])] += [
                u for u in row.get("url_literals") or [] if _is_url(u) and looks_like_api(u)
            ]

    # credential types of both packages: AI nodes use credentials defined in n8n-nodes-base (openAiApi)
    loaded: dict[str, tuple[str, list[Any], dict[str, Any]]] = {}
    creds: dict[str, dict[str, Any]] = {}
    for folder in PACKAGES:
        nodes_path = f"{PLATFORM}/{folder}/types.nodes.json"
        entries = read_json(source, nodes_path, PLATFORM, errors, required=True)
        cred_list = read_json(
            source, f"{PLATFORM}/{folder}/types.credentials.json", PLATFORM, errors, required=True
        )
        if not isinstance(entries, list) or not isinstance(cred_list, list):
            raise ValueError(
                f"n8n: {source.describe(nodes_path)} or its credentials file is not a JSON array"
            )
        known = read_json(
            source,
            f"{PLATFORM}/{folder}/known.nodes.json",
            PLATFORM,
            errors,
            missing="missing; codex files not read",
        )
        loaded[folder] = (nodes_path, entries, known if isinstance(known, dict) else {})
        for i, c in enumerate(cred_list):
            if not isinstance(c, dict) or not c.get("name"):
                errors.add(
                    PLATFORM,
                    f"{source.describe(f'{PLATFORM}/{folder}/types.credentials.json')} [{i}]",
                    "credential type has no 'name'",
                )
                continue
            creds.setdefault(str(c["name"]), c)

    tools = RecordSet()
    for folder, package in PACKAGES.items():
        nodes_path, entries, known = loaded[folder]
        by_node: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for i, entry in enumerate(entries):
            if not isinstance(entry, dict) or not entry.get("name"):
                errors.add(PLATFORM, f"{source.describe(nodes_path)} [{i}]", "node entry has no 'name'")
                continue
            by_node[str(entry["name"])].append((i, entry))
        for node, versions in by_node.items():
            versions.sort(key=lambda ie: -_max_version(ie[1]))
            source_path = str((known.get(node) or {}).get("sourcePath") or "")
            codex_file = _read_codex(source, errors, folder, source_path)
            node_dir = source_path.split("/")[2] if source_path.count("/") >= 3 else None
            for i, entry in versions:
                _add_entry(
                    tools,
                    entry,
                    f"{source.describe(nodes_path)} [{i}] ({node})",
                    folder,
                    creds,
                    codex_file,
                    code_urls.get((package, node_dir or ""), []),
                    urls,
                    errors,
                )
    return tools.records()


def _read_codex(source: Source, errors: CrawlErrors, folder: str, source_path: str) -> dict[str, Any] | None:
    if not source_path.endswith(".node.js"):
        return None
    path = f"{PLATFORM}/{folder}/codex/{source_path.removeprefix('dist/')[: -len('.js')]}.json"
    data = read_json(source, path, PLATFORM, errors, missing=None)  # AI nodes keep their codex in types.nodes
    return data if isinstance(data, dict) else None


def _add_entry(
    tools: RecordSet,
    entry: dict[str, Any],
    where: str,
    folder: str,
    creds: dict[str, dict[str, Any]],
    codex_file: dict[str, Any] | None,
    code_urls: list[str],
    urls: N8nUrls,
    errors: CrawlErrors,
) -> None:
    node = str(entry["name"])
    display = str(entry.get("displayName") or node)
    description = str(entry.get("description") or "").strip()
    kind, names, required = _node_auth(entry, creds)
    base_url = (entry.get("requestDefaults") or {}).get("baseURL")
    endpoints = [base_url.rstrip("/")] if _is_url(base_url) else []
    for name in names:
        endpoints += credential_endpoints(creds.get(name) or {})
    endpoints = list(dict.fromkeys(endpoints + code_urls))
    doc_url, tags = _codex(entry, codex_file)
    if doc_url is None and names:
        slug = (creds.get(names[0]) or {}).get("documentationUrl")
        if isinstance(slug, str) and slug:
            doc_url = slug if _is_url(slug) else f"{urls.credential_docs}/{slug}/"
    base_id = f"{PLATFORM}:{ID_PREFIX[folder]}{slugify(node)}"
    props = [p for p in entry.get("properties") or [] if isinstance(p, dict)]
    common = dict(
        platform=PLATFORM,
        doc_url=doc_url,
        auth_kind=kind,
        auth_names=names,
        required_auth=required,
        tags=tags,
        sources=[where],
    )
    operations = _operations(props)
    if not operations:
        if not description:
            errors.add(PLATFORM, where, "node has no description; skipped")
            return
        tools.add(
            ToolRecord(
                tool_id=base_id,
                name=display,
                description=description,
                endpoints=endpoints,
                arguments=_arguments(props, None, None),
                **common,
            )
        )  # type: ignore[arg-type]
        return
    for resource, option in operations:
        op = str(option["value"])
        op_id = f"{slugify(resource)}_{slugify(op)}" if resource else slugify(op)
        action = str(option.get("action") or option.get("name") or op).strip()
        op_description = str(option.get("description") or "").strip() or action
        op_endpoints = list(endpoints)
        route = ((option.get("routing") or {}).get("request") or {}).get("url")
        if isinstance(route, str) and not route.startswith("=") and _is_url(base_url):
            op_endpoints.insert(0, base_url.rstrip("/") + "/" + route.lstrip("/"))
        tools.add(
            ToolRecord(
                tool_id=f"{base_id}:{op_id}",
                name=f"{display}: {action}",
                # n8n's own name for the tool: node, resource and the option's name ("Slack channel Archive")
                given_name=" ".join(
                    w for w in (display, identifier_words(resource or ""), str(option.get("name") or op)) if w
                ),
                description=op_description,
                endpoints=op_endpoints,
                arguments=_arguments(props, resource, op),
                **common,
            )
        )  # type: ignore[arg-type]
