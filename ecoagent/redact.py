"""Keep secrets out of the tool table, the dataset and the logs: crawled pages paste real keys into prose.

Three kinds of credential value are replaced with ``[REDACTED]``:

- the shapes of common provider keys and tokens (``sk-...``, ``ghp_...``, ``AKIA...``, Slack, Google,
  Stripe, GitLab, SendGrid, Hugging Face, JWTs, PEM private keys, ...);
- the value of a key-like assignment or field (``OPENAI_API_KEY=...``, ``api_key: "..."``,
  ``Authorization: Bearer ...``, ``?apikey=...``, ``https://user:password@host``);
- nothing else: placeholders that hold no secret (``{api_key}``, ``${TOKEN}``, ``YOUR_API_KEY_HERE``,
  ``<your-key>``, ``xxxx``, ``os.environ[...]``) stay, so a description still says a key is needed.

``RedactingFilter`` applies the same rules to every log record (``ecoagent.logs.setup_logging``).
"""

from __future__ import annotations

import logging
import re

REDACTED = "[REDACTED]"

_KEY_SHAPES = re.compile(
    r"(?<![A-Za-z0-9])(?:"
    r"sk-(?:proj-|ant-(?:api\d+-)?|live-)?[A-Za-z0-9_-]{20,}"
    r"|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{35}|ya29\.[0-9A-Za-z_-]{20,}"
    r"|tvly-[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{30,}|r8_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{30,}"
    r"|pplx-[A-Za-z0-9]{30,}|npm_[A-Za-z0-9]{30,}|dop_v1_[a-f0-9]{40,}|shpat_[a-fA-F0-9]{32}"
    r"|SG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"
    r"|eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"
    r")"
)
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", re.S)
_QUERY_SECRET = re.compile(
    r"([?&](?:api_?key|apikey|key|token|access_token|secret|password|client_secret|sig)=)([^&#\s{}$]{8,})",
    re.I,
)
# NAME = value / "name": "value" / name: value, where NAME says it holds a credential
_ASSIGN = re.compile(
    r"""(?P<lead>\b[A-Za-z0-9_.-]*(?:api[_-]?key|apikey|secret|token|password|passwd|pwd|private[_-]?key"""
    r"""|access[_-]?key|client[_-]?secret|auth[_-]?key)[A-Za-z0-9_]*["']?\s*(?:=|:)\s*["']?)"""
    r"""(?P<value>[^\s"'`,;)}\]<>]{8,})""",
    re.I,
)
_BEARER = re.compile(r"(\b(?:Bearer|Basic|Token)\s+)([A-Za-z0-9._~+/=-]{16,})")
_URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s/:@]+:)([^\s/@]{3,})(@)", re.I)
_PLACEHOLDER = re.compile(
    r"your|here|xxx|\*\*\*|\.\.\.|example|placeholder|changeme|redacted|dummy|sample|<|>|\{|\}|\$|%|"
    r"os\.environ|getenv|env\[|process\.env|none|null|true|false|str\b|secretstr|optional|required",
    re.I,
)


def _is_placeholder(value: str) -> bool:
    """A value that shows where a key goes without being one (``YOUR_API_KEY_HERE``, ``{token}``)."""
    if _PLACEHOLDER.search(value) or len(set(value.lower())) <= 2:
        return True
    # a bare identifier or an upper-case name refers to a variable, not a literal secret
    return value.isidentifier() and (value.isupper() or "_" not in value and value.isalpha())


def redact(text: str | None) -> str | None:
    """``text`` with credential values replaced by ``[REDACTED]`` (placeholders kept)."""
    if not text:
        return text
    text = _PEM.sub(REDACTED, text)
    text = _KEY_SHAPES.sub(REDACTED, text)
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)
    text = _URL_PASSWORD.sub(
        lambda m: m.group(0) if _is_placeholder(m.group(2)) else m.group(1) + REDACTED + m.group(3), text
    )
    text = _BEARER.sub(lambda m: m.group(0) if _is_placeholder(m.group(2)) else m.group(1) + REDACTED, text)
    return _ASSIGN.sub(
        lambda m: (
            m.group(0)
            if m.group("value") == REDACTED
            or m.group("value").startswith(REDACTED)
            or _is_placeholder(m.group("value"))
            else m.group("lead") + REDACTED
        ),
        text,
    )


class RedactingFilter(logging.Filter):
    """Redact every record's message (and its traceback text) before any handler writes it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        clean = redact(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        return True
