"""Prefect flows: one flow per stage and the parent flow build-ecoagent; they only wire stages."""

import os

# Prefect's ephemeral API server (used when PREFECT_API_URL is unset) needs longer than its default 20 s
# to start on a busy 2-core machine. Prefect reads its settings on import, so this runs before it.
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "120")
