"""Inclusion probabilities, their floor and cap, the draw, and the learnt uncertainty."""

from __future__ import annotations

import math

import numpy as np
import pytest

from trajudge.calibration import (
    draw,
    fitted_uncertainty,
    judge_uncertainty,
    sampling_probabilities,
)


def test_uncertainty_takes_the_strongest_signal() -> None:
    u = judge_uncertainty(
        pass_share=[1.0, 0.75, 1.0, 1.0, 0.0],
        flipped=[0, 0, 1, 0, 0],
        spread=[0, 0, 0, 0.6, 0],
        margin=[1, 1, 1, 1, 0.9],
    )
    # min(s, 1-s); a flip is a coin; half the spread; (1 - margin) / 2
    assert u.tolist() == pytest.approx([0.0, 0.25, 0.5, 0.3, 0.05])


def test_probabilities_by_hand_with_floor_and_budget() -> None:
    e = np.array([0.0, 0.0, 0.09, 0.36])
    pi = sampling_probabilities(uncertainty=e, budget=1.0, floor_share=0.4)
    root = np.sqrt(e)  # 0, 0, 0.3, 0.6: mean 0.225
    shape = 0.4 + 0.6 * root / 0.225
    assert pi == pytest.approx(shape / shape.sum())
    assert pi.sum() == pytest.approx(1.0)
    assert pi.min() == pytest.approx(0.4 / shape.sum())  # the floor: 0.4 of the uniform 1/4
    assert pi.min() >= 0.4 * 1.0 / 4 - 1e-12


def test_probabilities_cap_at_one_and_keep_the_budget() -> None:
    e = np.r_[np.full(2, 0.5), np.zeros(98)]
    pi = sampling_probabilities(uncertainty=e, budget=20, floor_share=0.2)
    assert pi[:2].tolist() == [1.0, 1.0]
    assert pi.sum() == pytest.approx(20)
    assert np.allclose(pi[2:], 18 / 98)  # the rest share what is left, all equal


def test_equal_uncertainty_is_the_uniform_design() -> None:
    pi = sampling_probabilities(uncertainty=np.full(50, 0.2), budget=10)
    assert np.allclose(pi, 0.2)


def test_draw_is_poisson_sampling() -> None:
    rng = np.random.default_rng(0)
    pi = np.r_[np.full(5000, 0.1), np.full(5000, 0.6)]
    drawn = draw(probabilities=pi, uniforms=rng.random(10_000))
    # binomial counts within 4 standard deviations
    assert abs(drawn[:5000].sum() - 500) < 4 * math.sqrt(5000 * 0.09)
    assert abs(drawn[5000:].sum() - 3000) < 4 * math.sqrt(5000 * 0.24)


def test_fitted_uncertainty_weights_and_shrinks_by_hand() -> None:
    u = np.array([0.0, 0.0, 0.0, 0.4, 0.4, 0.4])
    out = fitted_uncertainty(
        uncertainty=u,
        labelled_uncertainty=[0.0, 0.0, 0.4, 0.4],
        labelled_error=[0, 1, 1, 0],
        labelled_probability=[0.5, 0.25, 0.5, 0.5],
        bins=2,
        prior=2.0,
    )
    # overall IPW error: (0*2 + 1*4 + 1*2 + 0*2) / (2 + 4 + 2 + 2) = 0.6
    # low bin: weighted 4/6, 2 labels -> (2 * 2/3 + 2 * 0.6) / 4; high: 0.5 -> (1 + 1.2) / 4
    assert out.tolist() == pytest.approx([(4 / 3 + 1.2) / 4] * 3 + [2.2 / 4] * 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"uncertainty": [0.1, -1], "budget": 1}, "non-negative"),
        ({"uncertainty": [0.1, 0.2], "budget": 3}, "budget must be in"),
        ({"uncertainty": [0.1, 0.2], "budget": 1, "floor_share": 0}, "floor_share"),
    ],
)
def test_bad_design_input(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        sampling_probabilities(**kwargs)  # type: ignore[arg-type]


def test_fitted_uncertainty_refuses_impossible_labels() -> None:
    with pytest.raises(ValueError, match="labelled_probability"):
        fitted_uncertainty(uncertainty=[0.1], labelled_uncertainty=[0.1], labelled_error=[1],
                           labelled_probability=[0])  # fmt: skip
    with pytest.raises(ValueError, match="labelled_error must be 0/1"):
        fitted_uncertainty(uncertainty=[0.1], labelled_uncertainty=[0.1], labelled_error=[2],
                           labelled_probability=[1])  # fmt: skip
