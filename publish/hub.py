"""Hub upload of the dataset folder: create the dataset repo and commit the folder, with retries.

The token is read from ``HF_TOKEN`` at call time and handed to ``huggingface_hub`` only; it is never
logged, printed or written, and error messages are redacted before they are re-raised. The endpoint is
``HF_ENDPOINT`` (tests point it at a Hub-compatible server on 127.0.0.1).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from publish.manifest import MANIFEST, dataset_files

__all__ = ["DEFAULT_ENDPOINT", "UploadError", "plan_upload", "upload"]

log = logging.getLogger(__name__)
T = TypeVar("T")
DEFAULT_ENDPOINT = "https://huggingface.co"
RETRY_STATUS = {408, 425, 429, 500, 502, 503, 504}


class UploadError(RuntimeError):
    """The upload failed after its retries (message redacted: it never holds the token)."""


def _endpoint(endpoint: str | None) -> str:
    return (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def plan_upload(folder: Path, repo_id: str, endpoint: str | None = None) -> dict[str, Any]:
    """What an upload would send: the repo URL and every file with its size (no network, no token)."""
    files = [*dataset_files(folder), folder / MANIFEST]
    files = sorted({p for p in files if p.exists()})
    listing = [{"path": p.relative_to(folder).as_posix(), "bytes": p.stat().st_size} for p in files]
    return {
        "repo_id": repo_id,
        "url": f"{_endpoint(endpoint)}/datasets/{repo_id}",
        "files": listing,
        "bytes": sum(f["bytes"] for f in listing),
    }


def _redact(text: str, secret: str | None) -> str:
    return text.replace(secret, "***") if secret else text


def _is_retryable(exc: BaseException) -> bool:
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if status is not None:
        return int(status) in RETRY_STATUS
    # transport errors (connection refused/reset, timeouts) of httpx or requests
    return isinstance(exc, OSError | TimeoutError) or type(exc).__module__.split(".")[0] in {
        "httpx",
        "httpcore",
    }


def _with_retries(what: str, call: Callable[[], T], *, retries: int, backoff: float, token: str | None) -> T:
    for attempt in range(retries + 1):
        try:
            return call()
        except Exception as exc:  # noqa: BLE001 - classified below, re-raised redacted
            message = _redact(f"{type(exc).__name__}: {exc}", token)
            if attempt >= retries or not _is_retryable(exc):
                raise UploadError(f"{what} failed: {message}") from None
            delay = backoff * (2**attempt)
            log.warning("%s failed (%s); retry %d/%d in %.1fs", what, message, attempt + 1, retries, delay)
            time.sleep(delay)
    raise AssertionError("unreachable")


def upload(
    folder: Path,
    repo_id: str,
    *,
    endpoint: str | None = None,
    private: bool = False,
    retries: int = 4,
    backoff: float = 1.0,
    commit_message: str = "Upload EcoAgent dataset",
) -> dict[str, Any]:
    """Create the dataset repo ``repo_id`` (if needed) and upload ``folder`` as one commit.

    Args:
        folder: the dataset folder (``DIR/dataset``).
        repo_id: ``ORG/NAME``.
        endpoint: the Hub URL; default ``$HF_ENDPOINT`` or https://huggingface.co.
        private: create the repo private.
        retries: retries of each call on 429/5xx and connection errors, with exponential backoff.
        backoff: the first retry's delay in seconds (doubles each retry).

    Raises:
        ValueError: ``HF_TOKEN`` is not set, or the Hub client is in offline mode.
        UploadError: a call still failed after its retries.
    """
    from huggingface_hub import HfApi, constants

    token = os.environ.get("HF_TOKEN")
    if not token:
        raise ValueError(
            "HF_TOKEN is not set: export a Hugging Face write token to upload (or use --dry-run)"
        )
    if constants.is_offline_mode():
        raise ValueError("HF_HUB_OFFLINE is set: unset it to upload")
    url = _endpoint(endpoint)
    api = HfApi(endpoint=url, token=token)
    plan = plan_upload(folder, repo_id, url)
    log.info("uploading %d files (%d bytes) to %s", len(plan["files"]), plan["bytes"], plan["url"])
    _with_retries(
        "create_repo",
        lambda: api.create_repo(repo_id, repo_type="dataset", exist_ok=True, private=private),
        retries=retries,
        backoff=backoff,
        token=token,
    )
    info = _with_retries(
        "upload_folder",
        lambda: api.upload_folder(
            folder_path=str(folder),
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=commit_message,
            allow_patterns=[f["path"] for f in plan["files"]],
        ),
        retries=retries,
        backoff=backoff,
        token=token,
    )
    commit = getattr(info, "oid", None)
    log.info("uploaded to %s (commit %s)", plan["url"], commit)
    return {**plan, "commit": commit}
