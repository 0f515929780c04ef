"""RATEDConfig / TrainConfig: defaults are the paper's, bad values fail at construction."""

from __future__ import annotations

import json

import pytest

from ecoagent.config import ModelConfig, Profile, Recipe, get_profile
from rated.config import RATEDConfig, TrainConfig, Variant


def test_paper_defaults() -> None:
    cfg = RATEDConfig()
    assert (cfg.top_k, cfg.weights, cfg.alpha, cfg.gamma, cfg.variant) == (
        10,
        (0.75, 0.15, 0.10),
        0.1,
        0.95,
        Variant.FULL,
    )
    train = TrainConfig()
    assert (
        train.epochs,
        train.batch_size,
        train.learning_rate,
        train.warmup_steps,
        train.max_seq_length,
    ) == (
        1.0,
        8,
        1e-5,
        1000,
        256,
    )
    assert train.scale == pytest.approx(1 / 0.05)
    assert train.freeze_tool_tower is False  # the paper fine-tunes both towers


def test_variants_are_strings_for_configs() -> None:
    assert RATEDConfig(variant="global_mab").variant is Variant.GLOBAL_MAB
    assert RATEDConfig(variant=Variant.NO_FEEDBACK).to_dict()["variant"] == "no_feedback"
    assert {v.value for v in Variant} == {"full", "no_feedback", "global_mab", "no_contrastive"}


@pytest.mark.parametrize(
    "changes",
    [
        {"weights": (0.5, 0.5, 0.1)},
        {"top_k": 0},
        {"gamma": 0.0},
        {"lam": 0.0},
        {"alpha": -1.0},
        {"variant": "x"},
    ],
)
def test_rated_config_validates(changes: dict) -> None:
    with pytest.raises(ValueError):
        RATEDConfig(**changes)


@pytest.mark.parametrize(
    "changes",
    [{"batch_size": 1}, {"scale": 0.0}, {"learning_rate": 0.0}, {"pooling": "max"}, {"max_steps": 0}],
)
def test_train_config_validates(changes: dict) -> None:
    with pytest.raises(ValueError):
        TrainConfig(**changes)


def test_warmup_is_scaled_down_for_small_runs() -> None:
    cfg = TrainConfig()
    assert cfg.warmup_for(40) == 4
    assert cfg.warmup_for(100_000) == 1000


def test_profiles() -> None:
    embedded = TrainConfig.for_profile(get_profile("embedded"), max_steps=None, batch_size=4)
    assert embedded.max_steps is not None and embedded.batch_size == 4  # None keeps the profile's cap
    paper = TrainConfig.for_profile(get_profile("paper"))
    assert paper.query_encoder == "facebook/dragon-plus-query-encoder"
    assert paper.tool_encoder == "facebook/dragon-plus-context-encoder"
    assert paper.max_steps is None and paper.max_train_examples is None
    assert RATEDConfig.for_profile(get_profile("paper")).tool_encoder.endswith("context-encoder")


def test_the_tiny_profile_trains_the_cpu_recipe_of_the_main_job() -> None:
    """Stages branch on the profile's typed recipe, not its name: ``tiny`` (a small cut of the embedded
    profile) used to fall through a ``name == "embedded"`` test and train the paper's uncapped recipe."""
    tiny, embedded = get_profile("tiny"), get_profile("embedded")
    assert tiny.recipe is embedded.recipe is Recipe.CPU and get_profile("paper").recipe is Recipe.PAPER
    recipe = {"query_encoder", "tool_encoder", "seed"}  # the profile's models, not the recipe
    as_tiny = {k: v for k, v in TrainConfig.for_profile(tiny).to_dict().items() if k not in recipe}
    as_embedded = {k: v for k, v in TrainConfig.for_profile(embedded).to_dict().items() if k not in recipe}
    assert as_tiny == as_embedded and as_tiny["max_steps"] is not None
    assert as_tiny != {
        k: v for k, v in TrainConfig.for_profile(get_profile("paper")).to_dict().items() if k not in recipe
    }


def test_a_profile_read_back_from_json_keeps_its_recipe() -> None:
    data = json.loads(json.dumps(get_profile("paper").to_dict()))
    assert data["recipe"] == "paper"
    back = Profile(**{**data, "models": ModelConfig(**data["models"])})
    assert back.recipe is Recipe.PAPER and back == get_profile("paper")
