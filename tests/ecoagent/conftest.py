"""Fixtures of the embedding tests: the packaged MiniLM and real catalog documents."""

from __future__ import annotations

import polars as pl
import pytest

from ecoagent import models
from ecoagent.config import MINILM
from ecoagent.schemas import tool_documents


@pytest.fixture(scope="module")
def minilm():  # noqa: ANN201 - a SentenceTransformer
    return models.load_encoder(MINILM)


@pytest.fixture(scope="module")
def docs(crawled_out) -> list[str]:
    """Forty real catalog documents: the ten longest (past MiniLM's max length) and thirty others."""
    documents = tool_documents(pl.read_parquet(crawled_out / "tools.parquet"))
    return sorted(documents, key=len, reverse=True)[:10] + documents[:30]
