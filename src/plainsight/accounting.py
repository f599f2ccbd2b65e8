"""Privacy accounting shared by every mechanism of the workflow: the noise of a Gaussian mechanism for a
target (epsilon, delta), and the epsilon of a sequence of (subsampled) Gaussian mechanisms composed by
Opacus's PRV accountant, which is tighter than adding their epsilons.

A mechanism is recorded as Opacus records its history: (noise multiplier, sample rate, steps), the noise
in units of the mechanism's L2 sensitivity. DP-SGD's adapter records its own (`training.json`); the
Gaussian histograms of Aug-PE's votes and of the control-code patterns have sample rate 1 (every unit in
every round).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

# (noise multiplier, sample rate, steps), as Opacus's accountants keep their history
GaussianSteps = tuple[float, float, int]

ACCOUNTANT = "prv"


def check_budget(epsilon: float, delta: float | None) -> None:
    if not epsilon > 0 or math.isinf(epsilon):
        raise ValueError(f"epsilon must be a positive finite number, not {epsilon}")
    if delta is not None and not 0 < delta < 1:
        raise ValueError(f"delta must lie strictly between 0 and 1, not {delta}")


def gaussian_noise_multiplier(epsilon: float, delta: float, rounds: int = 1) -> float:
    """The noise (per unit of sensitivity) whose `rounds` Gaussian mechanisms, every unit in each (sample
    rate 1), compose to (epsilon, delta), solved by Opacus's PRV accountant."""
    from opacus.accountants.utils import get_noise_multiplier

    check_budget(epsilon, delta)
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, not {rounds}")
    with warnings.catch_warnings():
        # At sample rate 1 Opacus's PRV takes log(1 - q) = log 0 on its way (numpy warns, harmlessly), and
        # the RDP bound it starts from notes that its best order is its largest
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        return float(
            get_noise_multiplier(
                target_epsilon=epsilon,
                target_delta=delta,
                sample_rate=1.0,
                steps=rounds,
                accountant=ACCOUNTANT,
                epsilon_tolerance=epsilon / 1000,
            )
        )


def composed_epsilon(history: Sequence[GaussianSteps], delta: float) -> float:
    """The epsilon at `delta` of every mechanism of `history` applied to the same data (Opacus's PRV
    accountant composes their privacy loss distributions)."""
    from opacus.accountants import PRVAccountant

    check_budget(1.0, delta)
    if not history:
        raise ValueError("no mechanism to compose")
    for noise, rate, steps in history:
        if not (noise > 0 and 0 < rate <= 1 and steps >= 1):
            raise ValueError(f"not a Gaussian mechanism: noise {noise}, sample rate {rate}, steps {steps}")
    accountant = PRVAccountant()
    accountant.history = [(float(noise), float(rate), int(steps)) for noise, rate, steps in history]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # as in `gaussian_noise_multiplier`
        warnings.simplefilter("ignore", UserWarning)
        return float(accountant.get_epsilon(delta))
