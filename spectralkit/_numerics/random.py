"""Random variates not offered by numpy's Generator."""

import numpy as np

__all__ = ["positive_stable"]


def positive_stable(beta, n, rng):
    """Positive beta-stable variables A, 0 < beta <= 1, with E exp(-t A) = exp(-t^beta).

    Kanter's representation: A = (a(U) / E)^((1 - beta) / beta), U ~ Uniform(0, pi), E ~ Exp(1),
    a(u) = (sin(beta u)^beta sin((1 - beta) u)^(1 - beta) / sin u)^(1 / (1 - beta)); computed in logs.
    """
    if beta == 1.0:
        return np.ones(n)
    u = rng.random(n) * np.pi
    e = rng.standard_exponential(n)
    log_a = (
        beta * np.log(np.sin(beta * u)) + (1 - beta) * np.log(np.sin((1 - beta) * u)) - np.log(np.sin(u))
    ) / (1 - beta)
    return np.exp((1 - beta) / beta * (log_a - np.log(e)))
