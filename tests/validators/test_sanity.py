"""The ToolBench ground-truth check: balanced labelled pairs and a hand-checked AUC."""

from __future__ import annotations

import pytest

from validators.sanity import labeled_pairs, roc_auc


def test_roc_auc_known_values() -> None:
    # positives 0.9, 0.4 vs negatives 0.5, 0.1: 3 of 4 orderings right
    assert roc_auc([1, 1, 0, 0], [0.9, 0.4, 0.5, 0.1]) == 0.75
    assert roc_auc([1, 0], [0.5, 0.5]) == 0.5  # a tie counts one half
    assert roc_auc([0, 1, 1], [0.2, 0.3, 0.9]) == 1.0
    with pytest.raises(ValueError, match="positive and one negative"):
        roc_auc([1, 1], [0.2, 0.3])


def test_labeled_pairs_are_balanced_and_true_to_toolbench(parsed) -> None:
    pairs = labeled_pairs(parsed.queries, 20, seed=0)
    assert len(pairs) == 40 and sum(p.label for p in pairs) == 20
    by_id = {q.query_id: q for q in parsed.queries}
    for lp in pairs:
        q = by_id[lp.pair.query_id]
        api = next(a for a in q.apis if f"toolbench:{a.tool_name}:{a.api_name}" == lp.pair.tool_id)
        assert api.relevant is bool(lp.label) and lp.pair.description == api.description
    assert labeled_pairs(parsed.queries, 20, seed=0) == pairs
