"""RATED: fine-tuned dual encoder + discounted LinUCB per tool + metadata prior.

``from rated import RATED`` is cheap: the retriever (and torch, through the encoder) is imported on
first use, so the ``ecoagent`` command and the evaluation's light modules do not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rated.config import RATEDConfig, TrainConfig, Variant

if TYPE_CHECKING:
    from rated.retriever import RATED

__all__ = ["RATED", "RATEDConfig", "TrainConfig", "Variant"]


def __getattr__(name: str) -> Any:
    if name == "RATED":
        from rated.retriever import RATED

        return RATED
    raise AttributeError(f"module 'rated' has no attribute {name!r}")
