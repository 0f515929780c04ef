"""Which vocabulary entries count as a "yes" or a "no" answer, for yes/no scoring.

Tokenizers spell the answer several ways ("yes", " yes", "Yes", " YES" ...); a judge's probability mass
is spread over them, so scoring sums every single-token spelling of each word before renormalizing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

YES_WORDS = ("yes",)
NO_WORDS = ("no",)


def spellings(word: str) -> list[str]:
    """Case and leading-space variants of ``word``."""
    forms = {word.lower(), word.capitalize(), word.upper()}
    return sorted(forms | {" " + f for f in forms})


def is_answer(token_text: str, words: tuple[str, ...]) -> bool:
    """True when a decoded token is one of ``words`` up to case and surrounding whitespace."""
    return token_text.strip().lower() in words


def answer_token_ids(tokenizer: Any) -> tuple[list[int], list[int]]:
    """Token ids that spell "yes" / "no" in one token, in any case, with or without a leading space.

    Raises:
        ValueError: the tokenizer has no single-token spelling of "yes" or of "no".
    """
    result: list[list[int]] = []
    for words in (YES_WORDS, NO_WORDS):
        ids: set[int] = set()
        for word in words:
            for form in spellings(word):
                encoded = tokenizer.encode(form, add_special_tokens=False)
                if len(encoded) == 1:
                    ids.add(encoded[0])
        if not ids:
            raise ValueError(f"tokenizer has no single-token spelling of {words[0]!r}")
        result.append(sorted(ids))
    return result[0], result[1]


def yes_share(top_logprobs: Mapping[str, float] | Iterable[tuple[str, float]]) -> float | None:
    """Renormalized P(yes) from a ``token -> logprob`` map (an OpenAI ``top_logprobs`` entry), or from
    ``(token, logprob)`` pairs (llama.cpp's list, where two ids may decode to the same text).

    Returns ``None`` when neither answer is among the candidates, so callers can tell "no signal"
    apart from a confident "no".
    """
    import math

    pairs = list(top_logprobs.items() if isinstance(top_logprobs, Mapping) else top_logprobs)
    p_yes = sum(math.exp(lp) for tok, lp in pairs if is_answer(tok, YES_WORDS))
    p_no = sum(math.exp(lp) for tok, lp in pairs if is_answer(tok, NO_WORDS))
    if p_yes + p_no == 0:
        return None
    return p_yes / (p_yes + p_no)
