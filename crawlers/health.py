"""Health signals from the environment: does a tool need credentials, and are they set here?

Env-var names (``SERPER_API_KEY``) are looked up directly. n8n credential types (``slackApi``) are set
through n8n's ``CREDENTIALS_OVERWRITE_DATA`` (a JSON object keyed by credential type), so that is where
they are looked up. Constructor-only credentials (LlamaIndex ``api_key=``) cannot be seen from outside,
so a tool that requires them counts as not configured.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

from crawlers.record import ToolRecord

ENV_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
N8N_OVERWRITE_VAR = "CREDENTIALS_OVERWRITE_DATA"


def requires_auth(record: ToolRecord) -> bool:
    """True when the source marks at least one credential as required."""
    return bool(record.required_auth)


def _n8n_configured(environ: Mapping[str, str]) -> set[str]:
    raw = environ.get(N8N_OVERWRITE_VAR)
    if not raw:
        return set()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError:
        return set()
    return set(data) if isinstance(data, dict) else set()


def auth_configured(record: ToolRecord, environ: Mapping[str, str]) -> bool:
    """True when nothing is required, or every required env var is set (n8n: any listed credential).

    n8n lists one credential per authentication option (API token *or* OAuth2), so one is enough there;
    other platforms list env vars that are all needed.
    """
    if not requires_auth(record):
        return True
    if record.platform == "n8n":
        return bool(_n8n_configured(environ) & set(record.auth_names))
    needed = record.required_auth
    if not all(ENV_NAME.match(n) for n in needed):
        return False
    return all(environ.get(n) for n in needed)
