"""Authentication facts: classify credential names into an auth kind, and drop keys that are not the tool's.

Docs pages and example agents set keys for the LLM or tracing (``OPENAI_API_KEY``, ``LANGSMITH_*``) next
to the tool's own key; those say nothing about the tool, so ``is_agent_key`` filters them out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# Keys of the example agent's model or tracing, not of the tool (matched against the whole name).
AGENT_KEY_PATTERNS: tuple[str, ...] = (
    r"OPENAI_API_(KEY|BASE|VERSION|TYPE)",
    r"OPENAI_ORGANIZATION",
    r"AZURE_OPENAI_\w+",
    r"ANTHROPIC_API_KEY",
    r"LANGSMITH_\w+",
    r"LANGCHAIN_(API_KEY|TRACING_V2|ENDPOINT|PROJECT|TRACING)",
    r"GROQ_API_KEY",
    r"MISTRAL_API_KEY",
    r"FIREWORKS_API_KEY",
    r"TOGETHER_API_KEY",
    r"COHERE_API_KEY",
    r"GOOGLE_API_KEY_FOR_LLM",
)
_AGENT_KEY = re.compile("|".join(f"(?:{p})" for p in AGENT_KEY_PATTERNS))

_SECRET_WORDS = re.compile(
    r"(API_?KEY|APIKEY|APP_?ID$|TOKEN|SECRET|ACCESS_?KEY|PRIVATE_?KEY|SUBSCRIPTION_?KEY|_KEY$|^KEY$)", re.I
)
_OAUTH_WORDS = re.compile(r"(OAUTH|CLIENT_?ID|CLIENT_?SECRET|REFRESH_?TOKEN)", re.I)
_BASIC_WORDS = re.compile(r"(PASSWORD|PASSWD|USERNAME|_USER$|^USER$|LOGIN)", re.I)


def is_agent_key(name: str) -> bool:
    """True for env vars of an example agent's LLM or tracing, which are not the tool's auth."""
    return bool(_AGENT_KEY.fullmatch(name))


# where a credential is used, not the credential itself (TILORES_TOKEN_URL, AZURE_OPENAI_ENDPOINT)
_LOCATION = re.compile(r"(_URL|_URI|_ENDPOINT|_HOST|_BASE|_REGION|_PATH|_FILE)$", re.I)


def is_credential_name(name: str) -> bool:
    """True when a name (env var or constructor argument) carries a secret or a login."""
    if _LOCATION.search(name):
        return False
    return bool(_SECRET_WORDS.search(name) or _OAUTH_WORDS.search(name) or _BASIC_WORDS.search(name))


def kind_of_names(names: Iterable[str]) -> str:
    """The auth kind that a set of credential names implies (``none`` for no names).

    OAuth client ids/secrets win over logins, logins over keys; names that are none of these (a region,
    a URL) give ``other``.
    """
    names = [n for n in names if n]
    if not names:
        return "none"
    if any(_OAUTH_WORDS.search(n) for n in names):
        return "oauth2"
    if any(_BASIC_WORDS.search(n) for n in names) and not any(_SECRET_WORDS.search(n) for n in names):
        return "basic"
    if any(_SECRET_WORDS.search(n) for n in names):
        return "api_key"
    return "other"
