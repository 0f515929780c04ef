"""Agreement statistics between human labels and the validator's decisions.

Binary decisions (match / no match): percent agreement with a Wilson score interval, Cohen's kappa,
and the 2x2 confusion matrix. Items a reviewer marked "unsure" are counted but left out of the
statistics, since they carry no decision to agree with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


def wilson_interval(successes: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a proportion; (0, 1) when there are no trials.

    Preferred over the normal (Wald) interval because it stays inside [0, 1] and keeps its coverage
    near 0 or 1, which is where agreement rates on 200 items sit.
    """
    if n < 0 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n, got {successes}/{n}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Confusion:
    """Counts of (human, validator) decisions; "positive" = match / kept."""

    both_match: int  # human match, validator kept
    human_only: int  # human match, validator dropped
    validator_only: int  # human no match, validator kept
    both_no: int  # human no match, validator dropped

    @property
    def n(self) -> int:
        return self.both_match + self.human_only + self.validator_only + self.both_no

    @classmethod
    def from_pairs(cls, human: Sequence[bool], validator: Sequence[bool]) -> Confusion:
        if len(human) != len(validator):
            raise ValueError("human and validator decisions differ in length")
        pairs = list(zip(human, validator, strict=True))
        return cls(
            both_match=sum(h and v for h, v in pairs),
            human_only=sum(h and not v for h, v in pairs),
            validator_only=sum(v and not h for h, v in pairs),
            both_no=sum(not h and not v for h, v in pairs),
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def cohen_kappa(c: Confusion) -> float | None:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e); ``None`` when undefined (no items, or p_e = 1)."""
    n = c.n
    if n == 0:
        return None
    p_o = (c.both_match + c.both_no) / n
    human_yes = (c.both_match + c.human_only) / n
    validator_yes = (c.both_match + c.validator_only) / n
    p_e = human_yes * validator_yes + (1 - human_yes) * (1 - validator_yes)
    if p_e == 1:
        return None  # both raters constant and equal: agreement is perfect but kappa is 0/0
    return (p_o - p_e) / (1 - p_e)


def rounded(value: float | None, digits: int = 3) -> float | None:
    """``value`` to ``digits`` places, with float noise such as ``-8.3e-17`` shown as ``0.0``."""
    return None if value is None else round(value, digits) + 0.0


CONFUSION_WORDS = {
    "both_match": "both say match",
    "human_only": "person says match, validator dropped it",
    "validator_only": "validator kept it, person says no match",
    "both_no": "both say no match",
}


def agreement(human: Sequence[bool], validator: Sequence[bool]) -> dict[str, Any]:
    """Percent agreement, its Wilson 95% interval, Cohen's kappa and the confusion matrix (rounded)."""
    c = Confusion.from_pairs(human, validator)
    agree = c.both_match + c.both_no
    low, high = wilson_interval(agree, c.n)
    return {
        "n": c.n,
        "agree": agree,
        "percent_agreement": rounded(100.0 * agree / c.n, 1) if c.n else None,
        "wilson95": [rounded(100.0 * low, 1), rounded(100.0 * high, 1)],
        "cohen_kappa": rounded(cohen_kappa(c)),
        "confusion": c.to_dict(),
    }
