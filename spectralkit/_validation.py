"""The validators shared by every layer (layer 0: imports nothing of spectralkit).

One rule per concept, one message form: ``"<name> must be <what is allowed>, got <value>"``.
A value of the wrong kind (a float for an integer, a bool for a number, anything that is not a
Generator for ``rng``) raises ``TypeError`` (for numbers :class:`ParameterTypeError`, also a
``ValueError``); a value of the right kind outside the allowed range
raises ``ValueError``. Callers that must raise their own exception class catch and re-raise.

Also the fitted-state helpers of the estimator wrappers (the not-fitted error and the parameter
fingerprint that detects a change of parameters after ``fit``).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from typing import Any, Literal, overload

import numpy as np

__all__ = [
    "MAX_DIM",
    "ParameterTypeError",
    "changed_params",
    "check_choice",
    "check_count",
    "check_dim",
    "check_int",
    "check_positive",
    "check_random_state",
    "check_rng",
    "not_fitted_error",
    "params_fingerprint",
]

#: Largest input dimension d: the measures' Bessel / Gegenbauer machinery is verified up to it.
MAX_DIM = 4096


class ParameterTypeError(TypeError, ValueError):
    """A parameter of the wrong kind: a TypeError that is also a ValueError (as scikit-learn's
    ``InvalidParameterError``), so that code catching either sees it."""


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_int(name: str, value: Any, minimum: int = 0, maximum: int | None = None) -> int:
    """``value`` as an int in ``[minimum, maximum]`` (no upper bound when None).

    Raises :class:`ParameterTypeError` for a non-integer (bools included), ``ValueError`` out of
    range.
    """
    if minimum == 0 and maximum is None:
        allowed = "a non-negative integer"
    elif maximum is None:
        allowed = f"an integer >= {minimum}"
    else:
        allowed = f"an integer in [{minimum}, {maximum}]"
    if not _is_int(value):
        raise ParameterTypeError(f"{name} must be {allowed}, got {value!r}")
    if value < minimum or (maximum is not None and value > maximum):
        raise ValueError(f"{name} must be {allowed}, got {value!r}")
    return int(value)


@overload
def check_dim(dim: Any, *, allow_none: Literal[False] = False, name: str = "dim") -> int: ...
@overload
def check_dim(dim: Any, *, allow_none: bool, name: str = "dim") -> int | None: ...
def check_dim(dim: Any, *, allow_none: bool = False, name: str = "dim") -> int | None:
    """The input dimension d: an integer in [1, MAX_DIM] (or None when ``allow_none``)."""
    if dim is None and allow_none:
        return None
    try:
        return check_int(name, dim, 1, MAX_DIM)
    except (TypeError, ValueError) as exc:
        if allow_none:
            raise type(exc)(str(exc).replace(" must be ", " must be None or ", 1)) from None
        raise


def check_count(name: str, n: Any) -> int:
    """A number of draws or rows: an integer >= 0."""
    return check_int(name, n, 0)


def check_rng(rng: Any, name: str = "rng") -> np.random.Generator:
    """A ``numpy.random.Generator`` (``TypeError`` otherwise)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"{name} must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}"
        )
    return rng


def check_random_state(value: Any, name: str = "random_state") -> int | np.random.Generator | None:
    """A seed: None, an integer >= 0 or a numpy Generator (used as is)."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    if _is_int(value) and value >= 0:
        return int(value)
    raise ValueError(f"{name} must be None, a non-negative int or a numpy Generator, got {value!r}")


def check_positive(name: str, value: Any, meaning: str = "") -> float:
    """A finite real number > 0, as a float (``meaning`` is appended to the rule in the message)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        ok = False
    else:
        ok = value > 0
    if not ok:
        raise ValueError(f"{name} must be a finite number > 0{meaning}, got {value!r}")
    return float(value)


def check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """One of the strings ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
    return value


# ----------------------------------------------------------------------------------------------
# Fitted state
# ----------------------------------------------------------------------------------------------

_NOT_FITTED: list[type] = []


def not_fitted_error(message: str) -> Exception:
    """scikit-learn's NotFittedError (also a RuntimeError) if scikit-learn is installed, else a RuntimeError.

    The class is created on first use: spectralkit does not import scikit-learn otherwise.
    """
    if not _NOT_FITTED:
        try:
            from sklearn.exceptions import NotFittedError as base
        except ImportError:
            bases: tuple[type, ...] = (RuntimeError,)
        else:
            bases = (base, RuntimeError)
        _NOT_FITTED.append(type("NotFittedError", bases, {"__module__": "spectralkit"}))
    return _NOT_FITTED[0](message)


def _param_token(value):
    """A value-based token of a parameter (equal tokens: same feature map), picklable."""
    if value is None or isinstance(value, (str, numbers.Number)):
        return value
    if isinstance(value, np.random.Generator):  # consumed by fit: only its kind is recorded
        return ("Generator",)
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), _param_token(v)) for k, v in value.items())))
    key = getattr(value, "key", None)
    if isinstance(key, str):  # a kernel (RadialKernel, DensityKernel)
        return ("kernel", key)
    kernel, dim = getattr(value, "kernel", None), getattr(value, "dim", None)
    if isinstance(getattr(kernel, "key", None), str) and dim is not None:  # a SpectralMeasure
        return ("measure", kernel.key, dim)
    try:
        arr = np.asarray(value)
        if arr.dtype != object:
            digest = hashlib.blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=16).hexdigest()
            return ("array", arr.shape, str(arr.dtype), digest)
    except (TypeError, ValueError):
        pass
    return ("object", type(value).__name__, id(value))


def params_fingerprint(params: dict[str, Any]) -> dict[str, Any]:
    """``{name: token}`` of a parameter dict: equal tokens mean the same fitted model."""
    return {k: _param_token(v) for k, v in params.items()}


def changed_params(fingerprint: dict[str, Any], params: dict[str, Any]) -> list[str]:
    """Names whose value differs from the fingerprint (names absent from either are skipped)."""
    now = params_fingerprint({k: v for k, v in params.items() if k in fingerprint})
    return [k for k, tok in now.items() if tok != fingerprint[k]]
