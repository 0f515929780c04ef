"""Yes/no answer spellings on the real SmolLM2 tokenizer."""

from __future__ import annotations

import math

from ecoagent.llm.embedded import EmbeddedLLM
from ecoagent.llm.yes_no import answer_token_ids, yes_share


def test_every_single_token_spelling_counts(embedded_llm: EmbeddedLLM) -> None:
    tok = embedded_llm.tokenizer
    yes, no = answer_token_ids(tok)
    for form in ("yes", " yes", "Yes", " Yes"):
        assert tok.encode(form, add_special_tokens=False)[0] in yes
    for form in ("no", " no", "No", " No"):
        assert tok.encode(form, add_special_tokens=False)[0] in no
    assert not set(yes) & set(no)


def test_yes_share_renormalizes_and_ignores_other_tokens() -> None:
    top = {"Yes": math.log(0.3), " yes": math.log(0.1), "No": math.log(0.1), "Maybe": math.log(0.5)}
    assert yes_share(top) == 0.4 / 0.5
    assert yes_share({"Maybe": 0.0}) is None
