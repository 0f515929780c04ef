"""Keep secrets out of the tool table: crawled pages may paste real keys into prose or URLs.

Recognizes the shapes of common provider keys and literal values of key-like URL query parameters, and
replaces them with ``[REDACTED]``; placeholders such as ``{api_key}`` or ``${token}`` are left alone.
"""

from __future__ import annotations

import re

_KEY_SHAPES = re.compile(
    r"\b(?:sk-(?:proj-)?[A-Za-z0-9_-]{20,}|ghp_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|AKIA[0-9A-Z]{16}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|tvly-[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{30,})"
)
_QUERY_SECRET = re.compile(
    r"([?&](?:api_?key|apikey|key|token|access_token|secret|password|client_secret|sig)=)([^&#\s{}$]{8,})",
    re.I,
)
REDACTED = "[REDACTED]"


def redact(text: str | None) -> str | None:
    """``text`` with key-shaped strings and secret query values replaced."""
    if not text:
        return text
    text = _KEY_SHAPES.sub(REDACTED, text)
    return _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)
