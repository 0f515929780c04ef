"""Real settings per profile: the paper's 0.7 / 0.85, the embedded recall threshold, validation."""

from __future__ import annotations

import pytest

from ecoagent.config import PROFILES
from validators.config import EMBEDDED_RECALL_THRESHOLD, EMBEDDED_VALIDATOR_THRESHOLD, RealConfig


def test_profile_defaults_and_overrides() -> None:
    paper = RealConfig.for_profile(PROFILES["paper"])
    assert (paper.recall_threshold, paper.validator_threshold, paper.top_k) == (0.7, 0.85, 5)
    assert paper.recall_encoder == "thenlper/gte-large"
    embedded = RealConfig.for_profile(PROFILES["embedded"], validator_threshold=None, top_k=3)
    assert embedded.recall_threshold == EMBEDDED_RECALL_THRESHOLD and embedded.top_k == 3
    assert embedded.validator_threshold == EMBEDDED_VALIDATOR_THRESHOLD
    assert embedded.recall_encoder == "sentence-transformers/all-mpnet-base-v2"


@pytest.mark.parametrize(
    ("field", "value"),
    [("recall_threshold", 1.5), ("validator_threshold", -0.1), ("top_k", 0), ("batch_size", 0)],
)
def test_bad_values_are_rejected(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        RealConfig.for_profile(PROFILES["embedded"], **{field: value})
