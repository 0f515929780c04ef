"""The Real stage's settings per profile: the recall union, its floors, the validator and its threshold.

Thresholds depend on the model behind them, so neither is a constant picked by hand:
- each recall retriever's **floor** is a quantile of its own top-k scores (``floor_quantile``), since a
  BM25 score, a MiniLM cosine and an mpnet cosine live on different scales; the paper's 0.7 is a
  GTE-Large cosine and stays the paper profile's floor for GTE-Large;
- the **validator threshold** is calibrated per model on ToolBench's labelled dev pairs: the lowest
  threshold with precision >= ``min_precision`` (``validators.calibration``). The paper profile keeps
  the paper's 0.85 (a Gemma 3 1B probability) and still reports its own calibration.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ecoagent.config import MINILM, MPNET, Profile, Recipe
from validators.recall import BM25

PAPER_RECALL_THRESHOLD = 0.7  # a GTE-Large cosine (the paper)
PAPER_VALIDATOR_THRESHOLD = 0.85  # a Gemma 3 1B yes-probability (the paper)
# Each retriever passes its best 3% of top-5 proposals, 2 per query at most: 267 judgments on the
# snapshot, what the 40-minute main job can pay for with the 1.5B judge (docs/real.md, section 6).
EMBEDDED_FLOOR_QUANTILE = 0.97
# train (bandit warm-up only) / val (sensitivity) / test, by query: Real is an evaluation set, so most of
# it is test (the encoder never trains on it)
REAL_SPLITS = (0.15, 0.25, 0.6)


@dataclass(frozen=True)
class RealConfig:
    """What one run of the Real stage does.

    Args:
        recall_encoder: the profile's recall encoder; its cosine fills ``decisions.cosine``.
        llm: the validator model (``profile.models.llm``), recorded with every decision.
        retrievers: the recall union: ``bm25`` and encoder names; each proposes its top-k tools.
        top_k: tools each retriever proposes per query (paper: 5).
        floor_quantile: each retriever's floor is this quantile of its own top-k scores.
        floors: fixed floors by retriever name, overriding the quantile (paper: GTE-Large 0.7).
        max_per_query: candidates above the floor that reach the validator per query (None = all).
        max_queries: a seeded sample of this many ToolBench queries (None = every query; the ``tiny``
            profile takes 60, so a first look at every stage takes minutes).
        validator_threshold: keep pairs scoring at least this; ``None`` = calibrated on the dev labels.
        min_precision: the calibration target on the dev labels.
        batch_size: pairs per LLM call.
        few_shot: prepend the prompt's two invented worked examples (``validators.prompt``).
        calibration_per_kind: labelled dev pairs of each kind (positive, random, hard) for calibration.
        measure_per_kind: labelled test pairs of each kind for the reported AUCs (0 = skip the labels).
        split_fractions: train / val / test shares of the kept queries.
        mcp_prompts_max: MCP example prompts labelled per build (a seeded sample; ``None`` = all), so the
            validator's cost stays small: ``mcp_prompt_candidates`` judgments per prompt.
        mcp_prompt_candidates: a prompt's server tools the validator judges: the top ones by the recall
            encoder's cosine.
        templates: read the n8n workflow templates of the intake (``validators.n8n_templates``):
            their write-ups are queries labelled by their service nodes, no judge needed.
        template_measure_per_kind: template pairs of each kind (labelled tool, another operation of a
            labelled service or the recall encoder's best other tool, a random tool) the judge scores, so
            its precision is measured against labels it did not choose (0 = skip).
        whole_intake: also read the ToolBench queries snapshotted into the repo (``data/queries``:
            StableToolBench's G1_tool / G3_instruction, DRAFT's original G2_category / G3_instruction),
            618 more queries for about 4 more minutes of judging (``ecoagent real --whole-intake``).
        judgment_cache: reuse judgments of earlier builds (any ``--out``) with the same model, prompt
            and pair text (``validators.judgment_cache``).
        seed: seed of the split and of the bootstrap.
    """

    recall_encoder: str
    llm: str
    retrievers: tuple[str, ...] = (BM25, MINILM, MPNET)
    top_k: int = 5
    floor_quantile: float = EMBEDDED_FLOOR_QUANTILE
    floors: dict[str, float] = field(default_factory=dict)
    max_per_query: int | None = 2
    max_queries: int | None = None
    validator_threshold: float | None = None
    min_precision: float = 0.9
    batch_size: int = 16
    few_shot: bool = False
    calibration_per_kind: int = 20
    measure_per_kind: int = 25
    split_fractions: tuple[float, float, float] = REAL_SPLITS
    mcp_prompts_max: int | None = 100
    mcp_prompt_candidates: int = 3
    templates: bool = True
    template_measure_per_kind: int = 34
    whole_intake: bool = False
    judgment_cache: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        if self.top_k <= 0:
            raise ValueError("top_k must be > 0")
        if self.max_per_query is not None and self.max_per_query <= 0:
            raise ValueError("max_per_query must be > 0 or None")
        if not self.retrievers:
            raise ValueError("retrievers must name at least one retriever")
        if self.recall_encoder not in self.retrievers:
            raise ValueError(f"recall_encoder {self.recall_encoder!r} must be one of retrievers")
        if not 0.0 <= self.floor_quantile <= 1.0:
            raise ValueError(f"floor_quantile {self.floor_quantile} is not in [0, 1]")
        unknown = set(self.floors) - set(self.retrievers)
        if unknown:
            raise ValueError(f"floors for retrievers not in the union: {sorted(unknown)}")
        if self.validator_threshold is not None and not 0.0 <= self.validator_threshold <= 1.0:
            raise ValueError(f"validator_threshold {self.validator_threshold} is not in [0, 1]")
        if not 0.0 < self.min_precision <= 1.0:
            raise ValueError(f"min_precision {self.min_precision} is not in (0, 1]")
        if self.batch_size <= 0:
            raise ValueError("batch_size must be > 0")
        if self.mcp_prompts_max is not None and self.mcp_prompts_max < 0:
            raise ValueError("mcp_prompts_max must be >= 0 or None")
        if self.mcp_prompt_candidates <= 0:
            raise ValueError("mcp_prompt_candidates must be > 0")
        if self.calibration_per_kind < 0 or self.measure_per_kind < 0 or self.template_measure_per_kind < 0:
            raise ValueError(
                "calibration_per_kind, measure_per_kind and template_measure_per_kind must be >= 0"
            )
        if self.validator_threshold is None and self.calibration_per_kind == 0:
            raise ValueError(
                "a calibrated threshold needs calibration_per_kind > 0 (or a validator_threshold)"
            )

    @classmethod
    def for_profile(cls, profile: Profile, **overrides: Any) -> RealConfig:
        """The profile's defaults, with any non-None override applied."""
        enc = profile.models.recall_encoder
        paper = profile.recipe is Recipe.PAPER
        retrievers = tuple(dict.fromkeys((BM25, MINILM, MPNET, enc)))
        base = cls(
            recall_encoder=enc,
            llm=profile.models.llm,
            retrievers=retrievers,
            floors={enc: PAPER_RECALL_THRESHOLD} if paper else {},
            max_per_query=None if paper else 2,
            validator_threshold=PAPER_VALIDATOR_THRESHOLD if paper else None,
            calibration_per_kind=100 if paper else 20,
            measure_per_kind=200 if paper else 25,
            max_queries=profile.real_max_queries,
            mcp_prompts_max=None if paper else 100,
            template_measure_per_kind=100 if paper else 34,
            seed=profile.seed,
        )
        changes = {k: v for k, v in overrides.items() if v is not None}
        if "retrievers" in changes:
            changes["retrievers"] = tuple(changes["retrievers"])
        return cls(**{**asdict(base), **changes})

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
