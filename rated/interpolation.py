"""Weight-space interpolation between an untrained backbone and its fine-tuned copy (WiSE-FT).

Fine-tuning on the few dozen Syn tools of a build gains on Syn's unseen tools but not reliably on real
requests (the MCP server authors' prompts: two losses in seven draws at the default recipe). Wortsman et
al. (2022, "Robust fine-tuning of zero-shot models") found that the straight line between the zero-shot and
the fine-tuned weights keeps most of the in-distribution gain while recovering the zero-shot model's
robustness under distribution shift; this is that line, one number per run.
"""

from __future__ import annotations

from typing import Any


def interpolate_weights(tuned: Any, base: Any, share: float) -> Any:
    """Move ``tuned``'s floating-point weights to ``base + share * (tuned - base)``, in place.

    Args:
        tuned: the fine-tuned ``torch.nn.Module`` (e.g. a dual encoder's SentenceTransformer).
        base: the same architecture before fine-tuning (``DualEncoder.from_backbones`` of the same
            backbones); its weights are only read.
        share: how much of the fine-tuning to keep: 1 leaves ``tuned`` as it is, 0 gives the backbone.

    Returns:
        ``tuned``, for chaining. Integer buffers (position ids) are left alone.

    Raises:
        ValueError: ``share`` outside [0, 1], or the two modules do not hold the same tensors.
    """
    import torch

    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be in [0, 1], got {share}")
    mine, theirs = tuned.state_dict(), base.state_dict()
    if mine.keys() != theirs.keys():
        only_tuned = sorted(mine.keys() - theirs.keys())[:3]
        only_base = sorted(theirs.keys() - mine.keys())[:3]
        raise ValueError(
            f"cannot interpolate different architectures: only in tuned {only_tuned}, only in base {only_base}"
        )
    if share == 1.0:
        return tuned
    with torch.no_grad():
        for name, weight in mine.items():
            if not weight.is_floating_point():
                continue
            if theirs[name].shape != weight.shape:
                raise ValueError(
                    f"{name}: shape {tuple(weight.shape)} in tuned, {tuple(theirs[name].shape)} in base"
                )
            other = theirs[name].to(weight.dtype)
            weight.copy_(other + share * (weight - other))
    return tuned
