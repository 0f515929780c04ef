"""Real settings per profile: the paper's 0.7 / 0.85, the embedded union and calibrated threshold."""

from __future__ import annotations

import pytest

from ecoagent.config import MINILM, MPNET, PROFILES
from validators.config import EMBEDDED_FLOOR_QUANTILE, REAL_SPLITS, RealConfig


def test_profile_defaults_and_overrides() -> None:
    paper = RealConfig.for_profile(PROFILES["paper"])
    assert (paper.floors, paper.validator_threshold, paper.top_k) == ({"thenlper/gte-large": 0.7}, 0.85, 5)
    assert paper.retrievers == ("bm25", MINILM, MPNET, "thenlper/gte-large") and paper.max_per_query is None
    embedded = RealConfig.for_profile(PROFILES["embedded"], top_k=3)
    assert embedded.retrievers == ("bm25", MINILM, MPNET) and embedded.recall_encoder == MPNET
    assert embedded.floor_quantile == EMBEDDED_FLOOR_QUANTILE and embedded.top_k == 3
    assert embedded.validator_threshold is None  # calibrated on the dev labels, per model
    assert embedded.split_fractions == REAL_SPLITS


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("floor_quantile", 1.5),
        ("validator_threshold", -0.1),
        ("top_k", 0),
        ("batch_size", 0),
        ("max_per_query", 0),
        ("min_precision", 0.0),
    ],
)
def test_bad_values_are_rejected(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        RealConfig.for_profile(PROFILES["embedded"], **{field: value})
    with pytest.raises(ValueError, match="not in the union"):
        RealConfig.for_profile(PROFILES["embedded"], floors={"nope": 0.5})
