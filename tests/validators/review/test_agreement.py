"""Agreement statistics on inputs whose kappa and Wilson interval are computed by hand."""

from __future__ import annotations

import pytest

from validators.review.agreement import Confusion, agreement, cohen_kappa, wilson_interval


def test_wilson_interval_hand_computed() -> None:
    # p = 0.94, n = 100, z = 1.96: centre (0.94 + 0.019208) / 1.038416, half-width 0.050355 / 1.038416
    low, high = wilson_interval(94, 100)
    assert low == pytest.approx(0.87518, abs=1e-4) and high == pytest.approx(0.97221, abs=1e-4)
    # the paper's 94% on 200 items: centre 0.9496036 / 1.0192073 = 0.93171, half-width 0.03364
    low, high = wilson_interval(188, 200)
    assert low == pytest.approx(0.89807, abs=1e-4) and high == pytest.approx(0.96535, abs=1e-4)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(10, 10)
    assert high == pytest.approx(1.0) and low == pytest.approx(0.72247, abs=1e-4)  # stays inside [0, 1]
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_cohen_kappa_hand_computed() -> None:
    # 20 both match, 5 human only, 10 validator only, 15 neither: p_o = 0.7;
    # human yes 0.5, validator yes 0.6 -> p_e = 0.5*0.6 + 0.5*0.4 = 0.5 -> kappa = 0.2 / 0.5 = 0.4
    c = Confusion(both_match=20, human_only=5, validator_only=10, both_no=15)
    assert cohen_kappa(c) == pytest.approx(0.4)
    assert cohen_kappa(Confusion(5, 0, 0, 5)) == pytest.approx(1.0)
    assert cohen_kappa(Confusion(0, 5, 5, 0)) == pytest.approx(-1.0)
    assert cohen_kappa(Confusion(4, 0, 0, 0)) is None  # both raters constant: undefined
    assert cohen_kappa(Confusion(0, 0, 0, 0)) is None


def test_agreement_from_decisions() -> None:
    human = [True] * 25 + [False] * 25
    validator = [True] * 20 + [False] * 5 + [True] * 10 + [False] * 15
    r = agreement(human, validator)
    assert r["n"] == 50 and r["agree"] == 35 and r["percent_agreement"] == pytest.approx(70.0)
    assert r["cohen_kappa"] == pytest.approx(0.4)
    assert r["confusion"] == {"both_match": 20, "human_only": 5, "validator_only": 10, "both_no": 15}
    low, high = wilson_interval(35, 50)
    assert r["wilson95"] == pytest.approx([100 * low, 100 * high], abs=0.05)
    assert agreement([], [])["percent_agreement"] is None
