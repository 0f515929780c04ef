"""Per-row seeded sampling for batched generation, so a sample does not depend on its batch-mates.

transformers samples a whole batch from the global RNG, which ties each output to the batch it ran in.
``SeededSampler`` instead picks every row's next token itself (temperature, top-p, then the Gumbel-max
trick with that row's own ``torch.Generator``) and hands ``generate`` a one-hot score, so greedy decoding
keeps exactly that token. Resumed runs and a server that batches unrelated requests reproduce the
same text for the same seed.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers import LogitsProcessor


class SeededSampler(LogitsProcessor):
    """Sample the next token of row ``i`` with a generator seeded by ``seeds[i]``.

    Args:
        seeds: one seed per batch row.
        temperature: > 0; scores are divided by it.
        top_p: nucleus mass in (0, 1].
    """

    def __init__(self, seeds: list[int], temperature: float, top_p: float) -> None:
        if temperature <= 0:
            raise ValueError("temperature must be > 0 for sampling (use greedy decoding for 0)")
        if not 0 < top_p <= 1:
            raise ValueError("top_p must be in (0, 1]")
        self.temperature = temperature
        self.top_p = top_p
        self.generators = [torch.Generator().manual_seed(int(s)) for s in seeds]

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> Any:
        logits = scores.float() / self.temperature
        if self.top_p < 1.0:
            sorted_logits, order = torch.sort(logits, descending=True, dim=-1)
            cum = torch.softmax(sorted_logits, dim=-1).cumsum(dim=-1)
            drop = cum - torch.softmax(sorted_logits, dim=-1) > self.top_p  # keep the token that crosses p
            sorted_logits = sorted_logits.masked_fill(drop, float("-inf"))
            logits = torch.full_like(logits, float("-inf")).scatter(-1, order, sorted_logits)
        log_probs = torch.log_softmax(logits, dim=-1)
        choice = torch.empty(logits.shape[0], dtype=torch.long)
        for row, gen in enumerate(self.generators):
            # Gumbel-max: argmax(log p + G) is a sample from p
            u = torch.rand(logits.shape[1], generator=gen).clamp_(1e-10, 1.0)
            choice[row] = torch.argmax(log_probs[row] - torch.log(-torch.log(u)))
        out = torch.full_like(scores, float("-inf"))
        out[torch.arange(scores.shape[0]), choice] = 0.0
        return out
