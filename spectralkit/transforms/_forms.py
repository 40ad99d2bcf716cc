"""Wrappers that turn a log-form density ``rho -> (log|mu|, sign)`` into validated callables."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..exceptions import TransformError

__all__ = ["envelope_logs", "log_form", "not_a_measure", "vectorised"]

#: ``rho -> (log|mu|, sign)`` on a flat float64 array
LogAbsAndSign = Callable[[NDArray[np.float64]], tuple[ArrayLike, ArrayLike]]


def log_form(
    log_abs_and_sign: LogAbsAndSign,
) -> Callable[[ArrayLike], tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """Wrap ``rho -> (log|mu|, sign)`` on flat arrays into a validated, shape-preserving callable."""

    def log_abs_mu(rho):
        arr = np.asarray(rho, dtype=np.float64)
        if not np.all(np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError("rho must be finite and >= 0")
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            log_abs, sign = log_abs_and_sign(arr.ravel())
        return (
            np.asarray(log_abs, dtype=np.float64).reshape(arr.shape),
            np.broadcast_to(np.asarray(sign, dtype=np.float64), arr.ravel().shape).reshape(arr.shape),
        )

    return log_abs_mu


def vectorised(log_abs_and_sign: LogAbsAndSign) -> Callable[[ArrayLike], NDArray[np.float64] | float]:
    """Wrap ``rho -> (log|mu|, sign)`` into a validated, vectorised float64 ``mu(rho)``."""
    log_abs_mu = log_form(log_abs_and_sign)

    def mu(rho):
        log_abs, sign = log_abs_mu(rho)
        with np.errstate(over="ignore", under="ignore"):
            out = sign * np.exp(log_abs)
        return out if out.ndim else float(out)

    return mu


def not_a_measure(reason: str) -> Callable[[ArrayLike], NDArray[np.float64]]:
    """The ``mu`` of a transform that is not a finite measure: calling it raises TransformError(reason)."""

    def mu(rho):
        raise TransformError(reason)

    return mu


def envelope_logs(
    log_env: Callable[[NDArray[np.float64]], NDArray[np.float64]],
    ratio: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None,
    u: NDArray[np.float64],
    sign: float,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(log|mu|, sign) at u = log rho from fitted log E and q = mu / E (E >= |mu|, smooth where mu
    changes sign); ``ratio`` None: ``log_env`` is log|mu| itself, of the one ``sign``."""
    out = log_env(u)
    if ratio is None:
        return out, np.full(u.shape, sign)
    qv = ratio(u)
    with np.errstate(divide="ignore"):
        return out + np.log(np.abs(qv)), np.sign(qv)
