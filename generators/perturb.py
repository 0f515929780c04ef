"""Graded near-duplicates of real texts: the input the dedup benchmark and the dedup tests check against.

Random word edits (drop, swap, replace, insert) give pairs whose Jaccard spreads across the 0.7 threshold,
so exact all-pairs Jaccard has duplicates and non-duplicates to tell apart.
"""

from __future__ import annotations

import random


def perturb(text: str, rng: random.Random, edits: int) -> str:
    """``text`` after ``edits`` random word edits; texts under three words are left alone."""
    words = text.split()
    for _ in range(edits):
        if len(words) < 3:
            break
        i = rng.randrange(len(words) - 1)
        op = rng.choice(("drop", "swap", "replace", "insert"))
        if op == "drop":
            del words[i]
        elif op == "swap":
            words[i], words[i + 1] = words[i + 1], words[i]
        elif op == "replace":
            words[i] = rng.choice(("please", "now", "quickly", "the", "my", "data"))
        else:
            words.insert(i, rng.choice(("also", "kindly", "today", "really")))
    return " ".join(words)
