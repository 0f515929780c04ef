"""The Real stage's settings per profile: recall encoder, thresholds, batch sizes.

Both thresholds depend on the model behind them. The paper's 0.7 is a GTE-Large cosine: all-mpnet-base-v2
gives lower cosines between ToolBench's RapidAPI queries and our tools, and at 0.7 only 5 of 5,250 top-5
pairs pass. The paper's 0.85 is a Gemma 3 1B yes-probability: SmolLM2-135M's yes-probabilities sit
between 0.3 and 0.7 on every pair, so at 0.85 nothing is kept. The embedded defaults are read off the
distributions measured on the snapshot (docs/real.md); the paper profile keeps the paper's values.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ecoagent.config import Profile

PAPER_RECALL_THRESHOLD = 0.7
# all-mpnet-base-v2 on the snapshot: ~the 95th percentile of all top-5 cosines (359 pairs, 192 queries).
EMBEDDED_RECALL_THRESHOLD = 0.5
VALIDATOR_THRESHOLD = 0.85  # the paper's
# SmolLM2-135M on the 359 recalled pairs: ~the 80th percentile of its yes-probabilities (73 kept; docs/real.md).
EMBEDDED_VALIDATOR_THRESHOLD = 0.5


@dataclass(frozen=True)
class RealConfig:
    """What one run of the Real stage does.

    Args:
        recall_encoder: the encoder of queries and tools (``profile.models.recall_encoder``).
        llm: the validator model (``profile.models.llm``), recorded with every decision.
        top_k: tools recalled per query (paper: 5).
        recall_threshold: pairs with a lower cosine never reach the validator.
        validator_threshold: pairs with a validator score at least this are kept (paper: 0.85).
        batch_size: pairs per LLM call.
        few_shot: prepend the prompt's two worked examples (see ``validators.prompt``).
        sanity_pairs: ToolBench ground-truth pairs per class for the validator's AUC check (0 = skip).
        seed: seed of the split and of the sanity sample.
    """

    recall_encoder: str
    llm: str
    top_k: int = 5
    recall_threshold: float = EMBEDDED_RECALL_THRESHOLD
    validator_threshold: float = VALIDATOR_THRESHOLD
    batch_size: int = 16
    few_shot: bool = False  # measured: no better AUC on ToolBench labels, twice the tokens (docs/real.md)
    sanity_pairs: int = 32
    seed: int = 0

    def __post_init__(self) -> None:
        if self.top_k <= 0:
            raise ValueError("top_k must be > 0")
        if not -1.0 <= self.recall_threshold <= 1.0:
            raise ValueError(f"recall_threshold {self.recall_threshold} is not a cosine in [-1, 1]")
        if not 0.0 <= self.validator_threshold <= 1.0:
            raise ValueError(f"validator_threshold {self.validator_threshold} is not in [0, 1]")
        if self.batch_size <= 0:
            raise ValueError("batch_size must be > 0")
        if self.sanity_pairs < 0:
            raise ValueError("sanity_pairs must be >= 0")

    @classmethod
    def for_profile(cls, profile: Profile, **overrides: Any) -> RealConfig:
        """The profile's defaults, with any non-None override applied."""
        paper = profile.name == "paper"
        base = cls(
            recall_encoder=profile.models.recall_encoder,
            llm=profile.models.llm,
            recall_threshold=PAPER_RECALL_THRESHOLD if paper else EMBEDDED_RECALL_THRESHOLD,
            validator_threshold=VALIDATOR_THRESHOLD if paper else EMBEDDED_VALIDATOR_THRESHOLD,
            sanity_pairs=200 if paper else 32,
            seed=profile.seed,
        )
        changes = {k: v for k, v in overrides.items() if v is not None}
        return cls(**{**asdict(base), **changes})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
