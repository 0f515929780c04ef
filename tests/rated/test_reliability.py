"""Why one failure did not move RATED, on a small world whose answers are known by construction.

Two tools; tool 0 leads every query by a cosine of 0.3 and was right in each of 20 labelled warm-up
calls on queries like them (384-d, as MiniLM's). Then it starts to error. Under the paper-exact learning
and fusion it keeps winning: its diagonal LinUCB predicts far above 1 after the warm-up (each of the 385
coordinates fits the reward on its own), the clip to [0, 1] hides the first errors, each error only
fades its record by gamma, and even at 0 the bandit term cannot outweigh a 0.3 cosine lead. By default
(an error teaches -1, counted 1 / (1 - gamma) times, the score clipped above only) one error is enough.
"""

from __future__ import annotations

import numpy as np
import pytest

from rated.config import RATEDConfig
from rated.index import ToolIndex
from rated.retriever import RATED

DIM = 384


def _world(config: RATEDConfig) -> tuple[RATED, np.ndarray]:
    """RATED over two tools and 21 queries near tool 0 (cosine ~0.9 to it, 0.3 less to tool 1)."""
    rng = np.random.default_rng(7)
    basis = np.linalg.qr(rng.normal(size=(DIM, 3)))[0].T.astype(np.float32)
    tool0, tool1, side = basis
    queries = []
    for _ in range(21):
        noise = rng.normal(size=DIM).astype(np.float32)
        noise -= noise @ basis.T @ basis  # off the tools' plane, so the cosines are exact below
        noise /= np.linalg.norm(noise)
        q = 0.9 * tool0 + 0.6 * tool1 + 0.3 * side + 0.1 * noise
        queries.append(q / np.linalg.norm(q))
    index = ToolIndex(DIM, ["lead", "runner_up"], np.stack([tool0, tool1]))
    model = RATED(None, index, np.array([0.6, 0.6]), config)
    emb = np.stack(queries)
    gap = emb @ tool0 - emb @ tool1
    assert gap.min() > 0.25  # the lead the bandit has to overturn
    model.warm_up([(q, 0) for q in emb[:20]])  # 20 labelled calls, all right
    return model, emb[20]


def test_the_paper_exact_bandit_saturates_so_errors_do_not_register() -> None:
    model, q = _world(RATEDConfig().paper_exact())
    raw = model.bandits.scores(np.array([0]), q)[0]
    assert raw > 3.0  # 20 working calls on similar queries predict ~ 20 x their similarity, not 1
    for _ in range(10):
        model.feedback_embedding(0, q, success=False)
    assert model.bandits.scores(np.array([0]), q)[0] > 1.0  # ten errors later the clipped term is still 1
    assert model.select_embedding(q) == 0


def test_under_the_paper_clip_no_number_of_errors_overturns_a_large_cosine_lead() -> None:
    model, q = _world(RATEDConfig().paper_exact())
    for _ in range(200):
        model.feedback_embedding(0, q, success=False)
    assert model.bandits.scores(np.array([0]), q)[0] < 0.2  # the estimate did fall ...
    assert model.select_embedding(q) == 0  # ... but the term moves the tool by at most w2 = 0.15


def test_by_default_one_error_moves_the_tool_below_its_runner_up() -> None:
    model, q = _world(RATEDConfig())
    assert model.select_embedding(q) == 0
    model.feedback_embedding(0, q, success=False)
    assert model.bandits.scores(np.array([0]), q)[0] < 0.0
    assert model.select_embedding(q) == 1
    # the runner-up works: it learns 1, the failed tool's state is kept until it is called again
    model.feedback_embedding(1, q, success=True)
    assert model.select_embedding(q) == 1


@pytest.mark.parametrize(
    ("change", "selected_after_one_error"),
    [({"error_reward": -1.0}, 0), ({"error_weight": 20.0}, 0), ({"bandit_floor": None}, 0), ({}, 1)],
)
def test_each_change_alone_is_not_enough_here(change: dict, selected_after_one_error: int) -> None:
    model, q = _world(RATEDConfig().paper_exact().replace(**change) if change else RATEDConfig())
    model.feedback_embedding(0, q, success=False)
    assert model.select_embedding(q) == selected_after_one_error


def test_a_wrong_but_working_call_teaches_zero_not_an_error() -> None:
    """Labelled feedback (the warm-up, the task-success row): the call executed, so it is no error."""
    config = RATEDConfig()
    assert config.reward(success=True, error=False) == (1.0, 1.0)
    assert config.reward(success=False, error=False) == (0.0, 1.0)
    assert config.reward(success=False, error=True) == (-1.0, 20.0)
    assert RATEDConfig().paper_exact().reward(success=False, error=True) == (0.0, 1.0)


def test_bad_error_settings_are_refused() -> None:
    for bad in ({"error_reward": 0.5}, {"error_weight": 0.0}, {"bandit_floor": 1.0}):
        with pytest.raises(ValueError):
            RATEDConfig(**bad)
