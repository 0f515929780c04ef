"""interpolate_weights: the straight line from a backbone to its fine-tuned copy (WiSE-FT)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from rated.encoder import DualEncoder
from rated.interpolation import interpolate_weights

TEXTS = ["convert a pdf file to plain text", "send an email to my team"]


@pytest.fixture()
def moved(dual_encoder: DualEncoder) -> torch.nn.Module:
    """A copy of the backbone with every float weight shifted by seeded noise: a stand-in for fine-tuning."""
    model = copy.deepcopy(dual_encoder.model)
    gen = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for weight in model.state_dict().values():
            if weight.is_floating_point():
                weight.add_(0.01 * torch.randn(weight.shape, generator=gen))
    return model


def test_the_ends_of_the_line_are_the_two_models(dual_encoder: DualEncoder, moved) -> None:
    kept = copy.deepcopy(moved)
    assert interpolate_weights(moved, dual_encoder.model, 1.0) is moved
    for name, weight in moved.state_dict().items():
        assert torch.equal(weight, kept.state_dict()[name])
    back = DualEncoder(interpolate_weights(copy.deepcopy(moved), dual_encoder.model, 0.0)).freeze()
    np.testing.assert_allclose(back.encode_queries(TEXTS), dual_encoder.encode_queries(TEXTS), atol=1e-6)
    np.testing.assert_allclose(back.encode_tools(TEXTS), dual_encoder.encode_tools(TEXTS), atol=1e-6)


def test_half_way_is_the_midpoint_and_integer_buffers_stay(dual_encoder: DualEncoder, moved) -> None:
    before = {k: v.clone() for k, v in moved.state_dict().items()}
    interpolate_weights(moved, dual_encoder.model, 0.5)
    base = dual_encoder.model.state_dict()
    floats = 0
    for name, weight in moved.state_dict().items():
        if weight.is_floating_point():
            floats += 1
            torch.testing.assert_close(weight, (before[name] + base[name]) / 2)
        else:  # position ids and the like are not weights
            assert torch.equal(weight, before[name])
    assert floats > 100  # both towers' layers, not a handful
    # and the embeddings really moved: they differ from both ends
    half = DualEncoder(moved).freeze().encode_queries(TEXTS)
    assert not np.allclose(half, dual_encoder.encode_queries(TEXTS), atol=1e-4)


def test_refuses_a_share_off_the_line_or_another_architecture(dual_encoder: DualEncoder, moved) -> None:
    with pytest.raises(ValueError, match=r"share must be in \[0, 1\]"):
        interpolate_weights(moved, dual_encoder.model, 1.5)
    with pytest.raises(ValueError, match="different architectures"):
        interpolate_weights(torch.nn.Linear(4, 2), torch.nn.Sequential(torch.nn.Linear(4, 2)), 0.5)
    with pytest.raises(ValueError, match="weight: shape"):
        interpolate_weights(torch.nn.Linear(4, 2), torch.nn.Linear(3, 2), 0.5)
