"""MCP: five server registries (mcpm.sh, docker/mcp-registry, the official seed, ToolHive, the servers README).

Each source lists servers in its own format; every listing becomes a ``Sighting``. Sightings of one
server are merged by repository URL (a monorepo URL shared by several servers of one source does not
count, its ``/tree/<ref>/<dir>`` path does), then by normalized name unless their repositories differ.
A merged server whose sources describe tools gives one record per tool, ``mcp:<server>:<tool>``; one
known only by its description gives one ``granularity="server"`` record, ``mcp:<server>``. Tools that a
source lists by name only (ToolHive) join a described tool of the same name, or stay in the server record.
Docker's ``history.jsonl`` marks removed servers and tools (``catalog_status="removed"``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import yaml

from crawlers.auth import is_credential_name, kind_of_names
from crawlers.files import decode_utf8
from crawlers.jsonl import read_jsonl
from crawlers.record import Argument, ToolRecord, slugify
from crawlers.report import CrawlErrors
from crawlers.schema_args import arguments_from_schema
from crawlers.source import Source, SourceFileMissing

PLATFORM = "mcp"
MCPM = "mcp/pathintegral-institute__mcpm.sh/mcp-registry/servers"
DOCKER = "mcp/docker__mcp-registry/servers"
HISTORY = "mcp/docker__mcp-registry/history.jsonl"
OFFICIAL = "mcp/modelcontextprotocol__registry/data/seed_2025_05_16.json"
TOOLHIVE = "mcp/stacklok__toolhive/pkg/registry/data/registry.json"
SERVERS_README = "mcp/modelcontextprotocol__servers/README.md"

# source name -> (its licence, from ../shared/catalogs/mcp/README.md); the order is the merge priority:
# the first source that states a scalar field (description, name, licence) keeps it
CATALOG_LICENCES: dict[str, str] = {
    "mcpm": "MIT",
    "docker": "MIT",
    "toolhive": "Apache-2.0",
    "official": "MIT",
    "servers": "MIT",
}
SOURCE_OF_FOLDER: dict[str, str] = {
    "pathintegral-institute__mcpm.sh": "mcpm",
    "docker__mcp-registry": "docker",
    "modelcontextprotocol__registry": "official",
    "stacklok__toolhive": "toolhive",
    "modelcontextprotocol__servers": "servers",
}
# name tokens that say "this is an MCP server", not which one
_NOISE = {"mcp", "server", "servers", "mcpserver"}
_DEPLOYMENT = {"remote", "local", "hosted"}
_CODE_HOSTS = ("github.com", "gitlab.com")
_LOCAL_HOSTS = ("localhost", "127.0.0.1", "0.0.0.0")
_README_ITEM = re.compile(
    r"^- (?:<img [^>]*> ?)*\*\*\[(?P<name>[^\]]+)\]\((?P<url>[^)\s]+)\)\*\*\s*[-–—]\s*(?P<desc>.+)$"
)
_STATUS_RANK = {"active": 0, "removed": 1, "deprecated": 2, "archived": 3}


class Malformed(ValueError):
    """A manifest that cannot be decoded (bad JSON or YAML); the message names the problem."""


def load_document(source: Source, path: str, errors: CrawlErrors | None = None) -> Any:
    """The decoded JSON or YAML of a manifest; ``Malformed`` when it does not parse.

    Bad bytes are replaced and reported as one error line (``crawlers.files.decode_utf8``, the readers'
    shared rule), so one stray byte costs a character, not the manifest.
    """
    text, problem = decode_utf8(source.read(path))
    if problem and errors is not None:
        errors.add(PLATFORM, source.describe(path), problem)
    try:
        if path.endswith((".yaml", ".yml")):
            return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise Malformed(f"bad JSON ({exc.msg} at line {exc.lineno})") from None
    except yaml.YAMLError as exc:
        raise Malformed(f"bad YAML ({str(exc).splitlines()[0]})") from None


def normalize_server_name(name: str) -> str:
    """The server key of a registry name: ``mcp-server-tmdb``, ``TMDB MCP Server`` -> ``tmdb``.

    Official-registry names (``io.github.owner/repo``) keep their last part; words that only say "MCP
    server" are dropped (all of them only when nothing else is left). The churn replay matches docker
    ``history.jsonl`` events to records with this function (``server`` column).
    """
    base = name.rsplit("/", 1)[-1].lower()  # lower first: "GitHub" is one word, not git_hub
    slug = slugify(base)
    words = [w for w in slug.split("_") if w and w not in _NOISE]
    return "_".join(words) or slug


def normalize_licence(value: Any) -> str | None:
    """A licence string as stated, with common spellings unified; placeholders (``[NOT GIVEN]``) -> None."""
    if not isinstance(value, str):
        return None
    text = value.strip().strip("[]<>").strip()
    low = text.lower()
    if not text or low in {"not given", "not found", "unknown", "none", "n/a"}:
        return None
    if re.fullmatch(r"apache(?:[- ]license)?(?:[- ]version)?[- ]?2(?:\.0)?(?: license)?", low):
        return "Apache-2.0"
    if low in {"mit", "mit license"}:
        return "MIT"
    return text


def repo_key(url: Any) -> str | None:
    """``host/owner/repo[/dir]`` of a GitHub/GitLab URL (``/tree/<ref>/dir`` kept, ref dropped).

    ``servers-archived`` counts as ``servers``: the archived reference servers moved there unchanged.
    """
    if not isinstance(url, str) or "://" not in url:
        return None
    parts = urlsplit(url.strip())
    host = parts.netloc.lower().removeprefix("www.")
    if host not in _CODE_HOSTS:
        return None
    segs = [s for s in parts.path.split("/") if s]
    if len(segs) < 2:
        return None
    owner, repo = segs[0].lower(), segs[1].lower().removesuffix(".git")
    if (owner, repo) == ("modelcontextprotocol", "servers-archived"):
        repo = "servers"
    rest = segs[4:] if len(segs) > 4 and segs[2] in ("tree", "blob") else []
    return "/".join([host, owner, repo, *[s.lower() for s in rest]]).rstrip("/")


@dataclass
class ToolSighting:
    """One tool as one source lists it."""

    name: str
    description: str
    arguments: list[Argument]
    where: str


@dataclass
class Sighting:
    """One server as one source lists it."""

    source: str  # a key of CATALOG_LICENCES
    where: str
    name: str
    display: str = ""
    description: str = ""
    urls: list[str] = field(default_factory=list)  # repository first, then homepage
    tags: list[str] = field(default_factory=list)
    licence: str | None = None
    auth_names: list[str] = field(default_factory=list)
    required_auth: list[str] = field(default_factory=list)
    oauth: bool = False
    remotes: list[tuple[str, str]] = field(default_factory=list)  # (transport, url) of hosted endpoints
    local: bool = False  # runs locally (stdio: npm, uvx, docker image)
    official: bool = False
    status: str = "active"
    tools: list[ToolSighting] = field(default_factory=list)
    tool_names: list[str] = field(default_factory=list)  # listed by name only


def _str(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _list_of_str(value: Any) -> list[str]:
    return [v.strip() for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def _is_archived_link(url: str) -> bool:
    return "modelcontextprotocol/servers-archived" in url


def _remote(transport: Any, url: Any) -> tuple[str, str] | None:
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    if urlsplit(url).hostname in _LOCAL_HOSTS:
        return None  # a local example URL, not a hosted endpoint
    kind = transport if transport in ("sse", "streamable-http") else "remote"
    return kind, url


def _tool_sighting(entry: Any, where: str, errors: CrawlErrors) -> ToolSighting | None:
    """A tool entry of mcpm / docker: ``{name, description, inputSchema | parameters | arguments}``."""
    if not isinstance(entry, dict) or not _str(entry.get("name")):
        errors.add(PLATFORM, where, "tool has no name; skipped")
        return None
    schema = entry.get("inputSchema") or entry.get("input_schema") or entry.get("parameters")
    arguments = arguments_from_schema(schema if isinstance(schema, dict) else None)
    if not arguments and isinstance(entry.get("arguments"), list):
        arguments = [
            Argument(
                name=str(a["name"]),
                type=a.get("type") if isinstance(a.get("type"), str) else None,
                description=_str(a.get("desc") or a.get("description")) or None,
                required=bool(a.get("required", not a.get("optional", False))),
            )
            for a in entry["arguments"]
            if isinstance(a, dict) and a.get("name")
        ]
    name = _str(entry["name"])
    return ToolSighting(name, _str(entry.get("description")), arguments, f"{where} ({name})")


def _tools(entries: Any, where: str, errors: CrawlErrors) -> list[ToolSighting]:
    if entries is None:
        return []
    if not isinstance(entries, list):
        errors.add(PLATFORM, where, "tools is not a list; skipped")
        return []
    found = (_tool_sighting(e, f"{where} tools[{i}]", errors) for i, e in enumerate(entries))
    return [t for t in found if t is not None]


def read_mcpm(source: Source, errors: CrawlErrors) -> list[Sighting]:
    """mcpm.sh: one JSON file per server, with tools, ``arguments`` (env vars) and install methods."""
    out = []
    for file in source.list(MCPM):
        if not file.endswith(".json"):
            continue
        path = f"{MCPM}/{file}"
        where = source.describe(path)
        try:
            doc = load_document(source, path, errors)
        except Malformed as exc:
            errors.add(PLATFORM, where, str(exc))
            continue
        if not isinstance(doc, dict) or not _str(doc.get("name")):
            errors.add(PLATFORM, where, "server has no name; skipped")
            continue
        args = doc.get("arguments") if isinstance(doc.get("arguments"), dict) else {}
        creds = [n for n in args if is_credential_name(n)]
        installs = doc.get("installations") if isinstance(doc.get("installations"), dict) else {}
        remotes = [
            r
            for i in installs.values()
            if isinstance(i, dict) and i.get("type") == "http"
            for r in [_remote(i.get("transport"), i.get("url"))]
            if r
        ]
        repo = doc.get("repository") if isinstance(doc.get("repository"), dict) else {}
        urls = [u for u in (_str(repo.get("url")), _str(doc.get("homepage"))) if u]
        out.append(
            Sighting(
                source="mcpm",
                where=where,
                name=_str(doc["name"]),
                display=_str(doc.get("display_name")),
                description=_str(doc.get("description")),
                urls=urls,
                tags=_list_of_str(doc.get("categories")) + _list_of_str(doc.get("tags")),
                licence=normalize_licence(doc.get("license")),
                auth_names=creds,
                required_auth=[n for n in creds if isinstance(args[n], dict) and args[n].get("required")],
                remotes=remotes,
                local=any(isinstance(i, dict) and i.get("type") != "http" for i in installs.values()),
                official=doc.get("is_official") is True,
                status="archived"
                if doc.get("is_archived") is True or any(map(_is_archived_link, urls))
                else "active",
                tools=_tools(doc.get("tools"), where, errors),
            )
        )
    return out


def read_docker(source: Source, errors: CrawlErrors) -> list[Sighting]:
    """docker/mcp-registry: ``servers/<name>/server.yaml`` (+ ``tools.json``): secrets, OAuth, remotes."""
    out = []
    for folder in source.list(DOCKER):
        if not folder.endswith("/"):
            continue
        path = f"{DOCKER}/{folder}server.yaml"
        where = source.describe(path)
        try:
            doc = load_document(source, path, errors)
        except SourceFileMissing:
            errors.add(PLATFORM, f"{DOCKER}/{folder}", "no server.yaml; skipped")
            continue
        except Malformed as exc:
            errors.add(PLATFORM, where, str(exc))
            continue
        if not isinstance(doc, dict) or not _str(doc.get("name")):
            errors.add(PLATFORM, where, "server has no name; skipped")
            continue
        about = doc.get("about") if isinstance(doc.get("about"), dict) else {}
        meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
        config = doc.get("config") if isinstance(doc.get("config"), dict) else {}
        src = doc.get("source") if isinstance(doc.get("source"), dict) else {}
        secrets = [s for s in config.get("secrets") or [] if isinstance(s, dict)]
        oauth = [o for o in doc.get("oauth") or [] if isinstance(o, dict)]
        names = list(dict.fromkeys(_str(s.get("env")) or _str(s.get("name")) for s in secrets + oauth))
        names = [n for n in names if n]
        remote = doc.get("remote") if isinstance(doc.get("remote"), dict) else {}
        hosted = _remote(remote.get("transport_type"), remote.get("url"))
        project = _str(src.get("project"))
        directory = _str(src.get("directory")) or _str(src.get("dockerfile")).rpartition("/")[0]
        urls = [f"{project.rstrip('/')}/tree/HEAD/{directory}" if project and directory else project]
        title = _str(about.get("title"))
        tools = _tools(doc.get("tools"), where, errors)
        tools_path = f"{DOCKER}/{folder}tools.json"
        try:
            tools += _tools(load_document(source, tools_path, errors), source.describe(tools_path), errors)
        except SourceFileMissing:
            pass
        except Malformed as exc:
            errors.add(PLATFORM, source.describe(tools_path), str(exc))
        out.append(
            Sighting(
                source="docker",
                where=where,
                name=_str(doc["name"]),
                display=re.sub(r"\s*\(Archived\)\s*$", "", title),
                description=_str(about.get("description")),
                urls=[u for u in urls if u],
                tags=_list_of_str([meta.get("category")]) + _list_of_str(meta.get("tags")),
                auth_names=names,
                required_auth=list(names),  # docker asks for every secret before it starts the server
                oauth=bool(oauth),
                remotes=[hosted] if hosted else [],
                local=doc.get("type") in ("server", "poci"),
                status="archived" if title.endswith("(Archived)") else "active",
                tools=tools,
            )
        )
    return out


def _registry_file(source: Source, path: str, errors: CrawlErrors, label: str) -> Any | None:
    """A whole-registry file, decoded; ``None`` after an error line when it is missing or malformed."""
    try:
        return load_document(source, path, errors)
    except SourceFileMissing:
        errors.add(PLATFORM, source.describe(path), f"missing; {label} skipped")
    except Malformed as exc:
        errors.add(PLATFORM, source.describe(path), str(exc))
    return None


def read_official(source: Source, errors: CrawlErrors) -> list[Sighting]:
    """The official registry seed: servers with packages (env vars) and remotes, no tools."""
    where = source.describe(OFFICIAL)
    doc = _registry_file(source, OFFICIAL, errors, "official registry")
    if doc is None:
        return []
    if not isinstance(doc, list):
        errors.add(PLATFORM, where, "not a JSON list; official registry skipped")
        return []
    out = []
    for i, entry in enumerate(doc):
        at = f"{where} [{i}]"
        if not isinstance(entry, dict) or not _str(entry.get("name")):
            errors.add(PLATFORM, at, "server has no name; skipped")
            continue
        packages = [p for p in entry.get("packages") or [] if isinstance(p, dict)]
        env = [
            _str(v.get("name"))
            for p in packages
            for v in p.get("environment_variables") or []
            if isinstance(v, dict)
        ]
        creds = list(dict.fromkeys(n for n in env if n and is_credential_name(n)))
        remotes = [
            r
            for x in entry.get("remotes") or []
            if isinstance(x, dict)
            for r in [_remote(x.get("transport_type"), x.get("url"))]
            if r
        ]
        repo = entry.get("repository") if isinstance(entry.get("repository"), dict) else {}
        out.append(
            Sighting(
                source="official",
                where=f"{at} ({entry['name']})",
                name=_str(entry["name"]),
                description=_str(entry.get("description")),
                urls=[u for u in [_str(repo.get("url"))] if u],
                auth_names=creds,  # the seed does not say which are required
                remotes=remotes,
                local=any(p.get("registry_name") in ("npm", "pypi", "docker") for p in packages),
                official=True,
            )
        )
    return out


def read_toolhive(source: Source, errors: CrawlErrors) -> list[Sighting]:
    """ToolHive: local and remote servers with tier, status, transport, env vars and tool names."""
    where = source.describe(TOOLHIVE)
    doc = _registry_file(source, TOOLHIVE, errors, "ToolHive")
    if doc is None:
        return []
    if not isinstance(doc, dict):
        errors.add(PLATFORM, where, "not a JSON object; ToolHive skipped")
        return []
    out = []
    for group in ("servers", "remote_servers"):
        entries = doc.get(group) if isinstance(doc.get(group), dict) else {}
        for key, entry in entries.items():
            at = f"{where} {group}.{key}"
            if not isinstance(entry, dict) or not key.strip():
                errors.add(PLATFORM, at, "server entry is not an object; skipped")
                continue
            env = [v for v in entry.get("env_vars") or [] if isinstance(v, dict) and _str(v.get("name"))]
            creds = [_str(v["name"]) for v in env if v.get("secret") or is_credential_name(_str(v["name"]))]
            custom = entry.get("custom_metadata") if isinstance(entry.get("custom_metadata"), dict) else {}
            urls = [_str(entry.get("repository_url")), _str(custom.get("homepage"))]
            hosted = _remote(entry.get("transport"), entry.get("url")) if group == "remote_servers" else None
            headers = [h for h in entry.get("headers") or [] if isinstance(h, dict) and h.get("secret")]
            creds += [_str(h.get("name")) for h in headers if _str(h.get("name"))]
            status = _str(entry.get("status")).lower()
            out.append(
                Sighting(
                    source="toolhive",
                    where=at,
                    name=key,
                    description=_str(entry.get("description")),
                    urls=[u for u in urls if u],
                    tags=_list_of_str(entry.get("tags")),
                    auth_names=creds,
                    required_auth=[
                        _str(v["name"]) for v in env if _str(v["name"]) in creds and v.get("required")
                    ],
                    oauth=bool(entry.get("oauth_config")),
                    remotes=[hosted] if hosted else [],
                    local=group == "servers",
                    official=_str(entry.get("tier")) == "Official",
                    status="deprecated" if status == "deprecated" else "active",
                    tool_names=_list_of_str(entry.get("tools")),
                )
            )
    return out


def read_servers_readme(source: Source, errors: CrawlErrors) -> list[Sighting]:
    """The ``modelcontextprotocol/servers`` README list: ``- **[Name](url)** - description`` per server."""
    where = source.describe(SERVERS_README)
    try:
        text, problem = decode_utf8(source.read(SERVERS_README))
    except SourceFileMissing:
        errors.add(PLATFORM, where, "missing; servers README skipped")
        return []
    if problem:
        errors.add(PLATFORM, where, problem)
    out = []
    section = ""
    for lineno, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            section = line
            if line.startswith("## ") and ("Frameworks" in line or "Resources" in line):
                break  # lists of client frameworks and links follow, not servers
        m = _README_ITEM.match(line.strip())
        if not m:
            continue
        url = m["url"]
        if not url.startswith(("http://", "https://")):
            url = f"https://github.com/modelcontextprotocol/servers/tree/main/{url.lstrip('./')}"
        description = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m["desc"]).strip()
        out.append(
            Sighting(
                source="servers",
                where=f"{where} line {lineno}",
                name=m["name"].strip(),
                display=m["name"].strip(),
                description=description,
                urls=[url],
                tags=[section.lstrip("# ").strip()] if section else [],
                status="archived" if _is_archived_link(url) else "active",
            )
        )
    return out


READERS = (read_docker, read_mcpm, read_toolhive, read_official, read_servers_readme)


class _Components:
    """Union-find over sighting indices."""

    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        self.parent[self.find(b)] = self.find(a)


def _family(name: str) -> str:
    """A server name without its deployment words: ``github-remote`` and ``github`` are one server."""
    words = [w for w in normalize_server_name(name).split("_") if w not in _DEPLOYMENT]
    return "_".join(words)


def merge_sightings(sightings: list[Sighting]) -> list[list[Sighting]]:
    """Group the sightings of one server: same repository key, then same name unless repositories differ.

    A repository key that one source gives to several differently named servers is a monorepo
    (``modelcontextprotocol/servers``) and identifies none of that source's servers (names that differ
    only by ``remote`` / ``local`` are one server deployed two ways).
    """
    keys: list[set[str]] = [{k for k in map(repo_key, s.urls) if k} for s in sightings]
    names_of: dict[tuple[str, str], set[str]] = {}
    for s, ks in zip(sightings, keys, strict=True):
        for k in ks:
            names_of.setdefault((s.source, k), set()).add(_family(s.name))
    shared = {(src, k) for (src, k), names in names_of.items() if len(names) > 1}
    keys = [{k for k in ks if (s.source, k) not in shared} for s, ks in zip(sightings, keys, strict=True)]
    comp = _Components(len(sightings))
    first: dict[str, int] = {}
    for i, ks in enumerate(keys):
        for k in sorted(ks):
            if k in first:
                comp.union(first[k], i)
            else:
                first[k] = i
    repos: dict[int, set[str]] = {}
    for i, ks in enumerate(keys):
        repos.setdefault(comp.find(i), set()).update(ks)
    by_name: dict[str, list[int]] = {}
    for i, s in enumerate(sightings):
        by_name.setdefault(normalize_server_name(s.name), []).append(i)
    for members in by_name.values():
        for i in members[1:]:
            a, b = comp.find(members[0]), comp.find(i)
            if a == b or (repos.get(a) and repos.get(b) and not repos[a] & repos[b]):
                continue  # the same server already, or two servers that share a name
            comp.union(a, b)
            repos[a] = repos.get(a, set()) | repos.pop(b, set())
    groups: dict[int, list[Sighting]] = {}
    for i, s in enumerate(sightings):
        groups.setdefault(comp.find(i), []).append(s)
    return list(groups.values())


def _by_priority(group: list[Sighting]) -> list[Sighting]:
    order = list(CATALOG_LICENCES)
    return sorted(group, key=lambda s: order.index(s.source))


def _first(values: Any) -> Any:
    return next((v for v in values if v), None)


@dataclass
class History:
    """What docker's ``history.jsonl`` says at its last event: removed servers and removed tools."""

    removed_servers: set[str] = field(default_factory=set)  # normalized names
    removed_tools: dict[str, set[str]] = field(default_factory=dict)  # normalized name -> tool slugs
    events: int = 0


def read_history(source: Source, errors: CrawlErrors) -> History:
    """Replay the events in order, so a server removed and added back again counts as present."""
    history = History()
    present: dict[str, bool] = {}
    tools: dict[str, dict[str, bool]] = {}
    for row in read_jsonl(source, HISTORY, PLATFORM, errors):
        server = normalize_server_name(_str(row.get("server")))
        kind = row.get("kind")
        if not server or kind not in ("server_added", "server_removed", "tools_changed"):
            errors.add(
                PLATFORM, source.describe(HISTORY), f"event {row!r:.80} has no server or kind; skipped"
            )
            continue
        history.events += 1
        if kind == "tools_changed":
            state = tools.setdefault(server, {})
            state.update({slugify(t): False for t in _list_of_str(row.get("tools_removed"))})
            state.update({slugify(t): True for t in _list_of_str(row.get("tools_added"))})
        else:
            present[server] = kind == "server_added"
    history.removed_servers = {s for s, here in present.items() if not here}
    history.removed_tools = {s: {t for t, here in v.items() if not here} for s, v in tools.items()}
    return history


@dataclass
class Server:
    """One merged server: its key and the facts of all its sightings."""

    key: str
    group: list[Sighting]

    def names(self) -> set[str]:
        return {normalize_server_name(s.name) for s in self.group}


def assign_keys(groups: list[list[Sighting]]) -> list[Server]:
    """A unique key per server: the normalized name of its highest-priority sighting.

    Docker sightings come first, so a docker server keeps its own name (the churn events use it); a second
    server of the same name gets its repository owner appended, then a number.
    """
    servers: list[Server] = []
    taken: set[str] = set()
    for group in sorted(groups, key=lambda g: not any(s.source == "docker" for s in g)):
        ranked = sorted(group, key=lambda s: s.source != "docker")
        base = normalize_server_name(ranked[0].name)
        key = base
        if key in taken:
            owner = _first(k.split("/")[1] for s in ranked for k in map(repo_key, s.urls) if k)
            key = f"{base}_{slugify(owner)}" if owner else base
            n = 2
            while key in taken:
                key, n = f"{base}_{n}", n + 1
        taken.add(key)
        servers.append(Server(key, _by_priority(group)))
    return servers


def _records(server: Server, history: History, errors: CrawlErrors) -> list[ToolRecord]:
    """A server's tool records (or its one server-level record), with the facts merged over its sightings."""
    group = server.group
    names = list(dict.fromkeys(n for s in group for n in s.auth_names))
    required = list(dict.fromkeys(n for s in group for n in s.required_auth if n in names))
    oauth = any(s.oauth for s in group)
    by_url: dict[str, tuple[str, str]] = {}
    for t, u in (r for s in group for r in s.remotes):
        known = by_url.get(u.rstrip("/"))
        if known is None or known[0] == "remote":  # a stated transport beats the bare "remote"
            by_url[u.rstrip("/")] = (t, known[1] if known else u)
    remotes = sorted(by_url.values(), key=lambda r: r[0] == "remote")
    urls = list(dict.fromkeys(u for s in group for u in s.urls))
    if remotes:
        transport: str | None = remotes[0][0]
    elif any(s.local for s in group):
        transport = "stdio"
    else:
        transport = None
    status = max((s.status for s in group), key=_STATUS_RANK.__getitem__)
    listed = [s for s in group if s.source == "docker"]  # what docker lists today outweighs its history
    if status == "active" and not listed and server.names() & history.removed_servers:
        status = "removed"
    own_licence = _first(s.licence for s in group)
    common = dict(
        platform=PLATFORM,
        endpoints=[u for _, u in remotes] or urls[:1],
        doc_url=_first(u for s in group for u in reversed(s.urls)),  # homepage before repository
        auth_kind="oauth2" if oauth else kind_of_names(names),
        auth_names=names,
        required_auth=required,
        tags=list(dict.fromkeys(t for s in group for t in s.tags)),
        transport=transport,
        server=server.key,
        licence=own_licence or CATALOG_LICENCES[group[0].source],
        is_official=any(s.official for s in group),
    )
    server_sources = [s.where for s in group]
    tools: dict[str, ToolRecord] = {}
    for s in group:
        for t in s.tools:
            slug = slugify(t.name) or "tool"
            rec = tools.get(slug)
            if rec is None:
                tools[slug] = rec = ToolRecord(
                    tool_id=f"{PLATFORM}:{server.key}:{slug}",
                    name=t.name,
                    description=t.description,
                    arguments=list(t.arguments),
                    sources=[t.where],
                    catalog_status=status,
                    **common,  # type: ignore[arg-type]
                )
            else:
                rec.description = rec.description or t.description
                known = {a.name for a in rec.arguments}
                rec.arguments += [a for a in t.arguments if a.name not in known]
                rec.sources.append(t.where)
    for s in group:
        for name in s.tool_names:
            rec = tools.get(slugify(name))
            if rec is not None:
                rec.sources.append(f"{s.where} tools ({name})")
    out = []
    gone = set().union(*(history.removed_tools.get(n, set()) for n in server.names()))
    gone -= {slugify(t.name) for s in listed for t in s.tools}
    for slug, rec in tools.items():
        if not rec.description:
            errors.add(
                PLATFORM, rec.sources[0], f"tool {rec.tool_id} has no description in any source; skipped"
            )
            continue
        if rec.catalog_status == "active" and slug in gone:
            rec.catalog_status = "removed"
        rec.sources += server_sources
        out.append(rec)
    if out or tools:
        return out
    display = _first(s.display for s in group) or group[0].name
    description = _first(s.description for s in group)
    if not description:
        errors.add(PLATFORM, group[0].where, f"server {server.key} has no description in any source; skipped")
        return []
    return [
        ToolRecord(
            tool_id=f"{PLATFORM}:{server.key}",
            name=display,
            description=description,
            sources=server_sources,
            granularity="server",
            catalog_status=status,
            **common,  # type: ignore[arg-type]
        )
    ]


def source_of(where: str) -> str | None:
    """The MCP source name (``mcpm``, ``docker``, ...) of a provenance entry, None for other platforms."""
    m = re.match(r"mcp/([^/]+)/", where)
    return SOURCE_OF_FOLDER.get(m.group(1)) if m else None


def crawl_servers(source: Source, errors: CrawlErrors) -> tuple[list[Server], History]:
    """The merged servers of the five registries and the docker history (for the crawl and its report)."""
    sightings: list[Sighting] = []
    for reader in READERS:
        try:
            sightings += reader(source, errors)
        except SourceFileMissing as exc:
            errors.add(PLATFORM, reader.__name__.removeprefix("read_"), f"source missing ({exc}); skipped")
    if not sightings:
        raise FileNotFoundError("mcp: none of the five MCP registries could be read")
    return assign_keys(merge_sightings(sightings)), read_history(source, errors)


def crawl(source: Source, errors: CrawlErrors) -> list[ToolRecord]:
    """Every MCP tool (or server known only by its description) of the five registries, merged."""
    servers, history = crawl_servers(source, errors)
    return [r for server in servers for r in _records(server, history, errors)]
