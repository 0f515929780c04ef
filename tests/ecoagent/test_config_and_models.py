"""Profiles resolve to model names; the packaged models load offline and embed."""

from __future__ import annotations

import numpy as np
import pytest

from ecoagent.config import MINILM, PROFILES, get_profile
from ecoagent.models import canonical, encoder_provenance, load_encoder, resolve_encoder


def test_profiles_and_overrides() -> None:
    assert get_profile("paper").models.recall_encoder == "thenlper/gte-large"
    prof = get_profile("embedded").replace(llm="google/gemma-3-1b-it", seed=7)
    assert prof.models.llm == "google/gemma-3-1b-it" and prof.seed == 7
    assert PROFILES["embedded"].models.llm != prof.models.llm  # the registry is not mutated
    with pytest.raises(ValueError, match="unknown profile 'gpu'"):
        get_profile("gpu")


def test_packaged_minilm_resolves_to_a_local_folder_and_embeds() -> None:
    assert canonical("all-MiniLM-L6-v2") == MINILM
    path = resolve_encoder("all-MiniLM-L6-v2")
    assert path != MINILM and path.endswith("model")
    assert encoder_provenance(MINILM)["weights"] == "packaged"
    model = load_encoder(MINILM)
    emb = model.encode(["send a slack message", "post a note to a slack channel", "weather in Paris"])
    emb = emb / np.linalg.norm(emb, axis=1, keepdims=True)
    assert emb.shape == (3, 384)
    # a real model puts the two Slack requests closer to each other than to the weather one
    assert emb[0] @ emb[1] > emb[0] @ emb[2] + 0.2


def test_unknown_names_pass_through_for_the_hub() -> None:
    assert resolve_encoder("thenlper/gte-large") == "thenlper/gte-large"
    assert encoder_provenance("thenlper/gte-large")["weights"] == "hub"
