"""Unbiased random features for radial kernels with signed spectral measures (Contract 5).

The estimator (docs/theory.md §2): draw s_plus frequencies w_i ~ mu_plus / m_plus and s_minus
frequencies v_j ~ mu_minus / m_minus and map

    phi(x) = [ a cos(W_plus x) | a sin(W_plus x) | b cos(W_minus x) | b sin(W_minus x) ],
    a = sqrt(m_plus / s_plus),  b = sqrt(m_minus / s_minus),

with the signature J = diag(+1 (2 s_plus times), -1 (2 s_minus times)). Then

    phi(x)^T J phi(y) = (m_plus / s_plus) sum_i cos(w_i . z) - (m_minus / s_minus) sum_j cos(v_j . z)

is an unbiased estimate of k(z), z = x - y, for every construction of the directions in
:mod:`spectralkit.sampling.directions` (each row is marginally uniform on the sphere, independent of its
norm). ``feature_map="cos"`` uses sqrt(2 m / s) cos(w . x + b) with b ~ U[0, 2 pi) instead (one
column per frequency; unbiased, larger variance).

Allocation of the frequencies: with S = n_components / 2 ("sincos") or S = n_components ("cos")
frequencies in all, s_plus = round(S m_plus / (m_plus + m_minus)), clipped to [1, S - 1] when
both masses are > 0 (each part non-empty), s_plus = S for PD kernels (m_minus = 0) and
s_minus = S when m_plus = 0. Proportional allocation minimises the variance bound
m_plus^2 / s_plus + m_minus^2 / s_minus for a fixed S.

Norm samplers: a PD library kernel with an exact frequency law uses
:func:`spectralkit.sampling.exact_sampler`; everything else uses the tabulated
:class:`spectralkit.sampling.RadialSampler` of its Jordan parts (or of the terms' measures for
``split="terms"``).
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import pickle
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
import scipy.sparse
from numpy.typing import ArrayLike, NDArray

from . import _array_api, _compiled, _runtime
from ._numerics.quadrature import gauss_legendre
from ._numerics.special import omega as _omega
from ._validation import (
    changed_params,
    check_choice,
    check_dim,
    check_int,
    check_positive,
    check_random_state,
    not_fitted_error,
    params_fingerprint,
)
from .exceptions import DivergentMassError
from .kernels import DensityKernel, RadialKernel, from_spec
from .kernels._gram import validate_shape_matrix
from .measures import SpectralMeasure
from .sampling import exact_sampler, radial_sampler
from .sampling.directions import METHODS, draw_frequencies

__all__ = [
    "FEATURE_MAPS",
    "FEATURE_PARAMS",
    "FeatureParam",
    "InsufficientMemoryError",
    "PHASE_LIMIT",
    "TRUNCATION_TOLERANCE",
    "FeatureMapName",
    "MethodName",
    "SplitName",
    "RandomFeatures",
    "SPLITS",
    "feature_param_constraints",
    "resolve_lengthscale",
    "scale_lengthscale",
    "validate_feature_params",
]

#: Accepted values of ``split``.
SPLITS = ("jordan", "terms")
#: Accepted values of ``feature_map``.
FEATURE_MAPS = ("sincos", "cos")

#: The literal types of the string parameters, tied to the tuples above (and to
#: :data:`spectralkit.sampling.directions.METHODS`) by ``tests/test_features_params.py``.
MethodName = Literal["rff", "orf", "gorf", "gorf_paper"]
SplitName = Literal["jordan", "terms"]
FeatureMapName = Literal["sincos", "cos"]

#: Default of ``truncation_tolerance``: the largest accepted |bias at r = 0| of a truncated
#: measure, relative to |k(0)| (absolute when k(0) = 0).
TRUNCATION_TOLERANCE = 1e-2


# ----------------------------------------------------------------------------------------------
# The parameter table (shared by RandomFeatures, the scikit-learn and dask wrappers and the CLI)
# ----------------------------------------------------------------------------------------------


def _choice(name, allowed):
    def check(value, dim):
        return check_choice(name, value, allowed)

    return check


def _check_kernel(value, dim):
    if not isinstance(value, (str, RadialKernel, DensityKernel, SpectralMeasure)):
        raise TypeError(
            "kernel must be a RadialKernel, a DensityKernel, a SpectralMeasure or a spec string, "
            f"got {type(value).__name__}"
        )
    return value


def _check_n_components(value, dim):
    return check_int("n_components", value, 1)


def _check_random_state(value, dim):
    return check_random_state(value)


def _check_truncation(value, dim):
    if value is None:
        return None
    try:
        return check_positive("truncation", value)
    except ValueError:
        raise ValueError(f"truncation must be None or a finite number > 0 (rho_max), got {value!r}") from None


def _check_truncation_tolerance(value, dim):
    if isinstance(value, numbers.Real) and not isinstance(value, bool) and value == math.inf:
        return math.inf
    try:
        return check_positive("truncation_tolerance", value)
    except ValueError:
        raise ValueError(
            "truncation_tolerance must be a number > 0 (the largest accepted |bias at r = 0| of a "
            f"truncated measure relative to |k(0)|; inf accepts any bias), got {value!r}"
        ) from None


def _check_lengthscale(value, dim):
    if isinstance(value, str) and value == "scale":
        return value
    return check_positive(
        "lengthscale",
        value,
        " or 'scale' (the features approximate k(r / lengthscale))",
    )


def _check_gamma(value, dim):
    if value is None:
        return None
    try:
        return check_positive("gamma", value)
    except ValueError:
        raise ValueError(
            f"gamma must be None or a finite number > 0 (lengthscale = 1 / sqrt(2 gamma)), got {value!r}"
        ) from None


@dataclasses.dataclass(frozen=True)
class FeatureParam:
    """One parameter of the feature map: ``check(value, dim)`` validates and normalises it.

    ``check`` raises ``ValueError`` / ``TypeError`` whose message names the parameter, the value
    and what is allowed; ``dim`` (the input dimension, or None while unknown) is used only by
    ``shape_matrix``. ``constraint`` is the same rule in scikit-learn's vocabulary (what its
    ``_parameter_constraints`` can express; the full check stays ``check``), without importing
    scikit-learn: a list of types, ``None``, the strings scikit-learn knows ("random_state",
    "array-like") and the tuples ``("interval", type, left, right, closed)`` and
    ``("options", values)`` (see :func:`feature_param_constraints`).
    """

    name: str
    default: Any
    check: Callable[[Any, Any], Any] = dataclasses.field(repr=False)
    doc: str = ""
    constraint: tuple = dataclasses.field(default=(), repr=False)


#: The parameters shared by :class:`RandomFeatures`, ``spectralkit.sklearn.SpectralFeatures``,
#: ``spectralkit.dask.DaskSpectralFeatures`` and the CLI: one validator, one default and one
#: scikit-learn constraint per concept.
FEATURE_PARAMS = (
    FeatureParam(
        "kernel",
        "gaussian",
        _check_kernel,
        "RadialKernel, DensityKernel, SpectralMeasure or spec string",
        (str, RadialKernel, DensityKernel, SpectralMeasure),
    ),
    FeatureParam(
        "n_components",
        256,
        _check_n_components,
        "output width (odd with feature_map='sincos': one cos(w . x + b) column)",
        (("interval", numbers.Integral, 1, None, "left"),),
    ),
    FeatureParam(
        "method",
        "orf",
        _choice("method", METHODS),
        "directions: " + ", ".join(METHODS),
        (("options", METHODS),),
    ),
    FeatureParam(
        "split",
        "jordan",
        _choice("split", SPLITS),
        "mu = mu+ - mu-: " + ", ".join(SPLITS),
        (("options", SPLITS),),
    ),
    FeatureParam(
        "feature_map",
        "sincos",
        _choice("feature_map", FEATURE_MAPS),
        "columns: " + ", ".join(FEATURE_MAPS),
        (("options", FEATURE_MAPS),),
    ),
    FeatureParam(
        "random_state",
        None,
        _check_random_state,
        "None, int >= 0 or numpy Generator",
        ("random_state", np.random.Generator),
    ),
    FeatureParam(
        "truncation",
        None,
        _check_truncation,
        "rho_max > 0 for measures of infinite mass (biased), else None",
        (("interval", numbers.Real, 0, None, "neither"), None),
    ),
    FeatureParam(
        "truncation_tolerance",
        TRUNCATION_TOLERANCE,
        _check_truncation_tolerance,
        "largest accepted |bias at r = 0| of a truncated measure, relative to |k(0)|; inf accepts any",
        (("interval", numbers.Real, 0, None, "right"),),
    ),
    FeatureParam(
        "lengthscale",
        "scale",
        _check_lengthscale,
        "l > 0 or 'scale': the features approximate k(||x - y|| / l); 'scale' is "
        "sqrt(n_features Var(X) / 2) from the data given to fit (1 when fit sees no data)",
        (("interval", numbers.Real, 0, None, "neither"), ("options", ("scale",))),
    ),
    FeatureParam(
        "gamma",
        None,
        _check_gamma,
        "instead of lengthscale: l = 1 / sqrt(2 gamma), i.e. exp(-gamma r^2) for the Gaussian",
        (("interval", numbers.Real, 0, None, "neither"), None),
    ),
    FeatureParam(
        "shape_matrix",
        None,
        validate_shape_matrix,
        "None or SPD d x d M: the features approximate k(||x - y||_M / l), ||z||_M = sqrt(z^T M z)",
        ("array-like", None),
    ),
)
_PARAMS = {p.name: p for p in FEATURE_PARAMS}


def validate_feature_params(params: Mapping[str, Any], dim: int | None = None) -> dict[str, Any]:
    """Validate feature-map parameters against :data:`FEATURE_PARAMS`; return them normalised.

    Parameters
    ----------
    params : mapping
        Any subset of the names of :data:`FEATURE_PARAMS` (other names are refused).
    dim : int, optional
        The input dimension, when known (``shape_matrix`` must then be dim x dim).

    Returns
    -------
    dict
        The same keys; numbers as int / float, ``shape_matrix`` as a float64 array.

    Raises
    ------
    ValueError, TypeError
        Naming the parameter, its value and what is allowed. Cross-parameter rule: ``gamma`` and
        a numeric ``lengthscale`` are exclusive (``lengthscale = 1 / sqrt(2 gamma)``).
    """
    unknown = [k for k in params if k not in _PARAMS]
    if unknown:
        raise ValueError(f"invalid parameter {unknown[0]!r}; valid feature parameters: {', '.join(_PARAMS)}")
    out = {name: _PARAMS[name].check(value, dim) for name, value in params.items()}
    if out.get("gamma") is not None and out.get("lengthscale", "scale") != "scale":
        g, ell = out["gamma"], out["lengthscale"]
        raise ValueError(
            f"gamma and lengthscale are exclusive, got gamma={g!r} and lengthscale={ell!r}: pass one of "
            f"them (gamma = 1 / (2 lengthscale^2); gamma={g!r} is lengthscale={_gamma_lengthscale(g):.6g}, "
            f"lengthscale={ell!r} is gamma={0.5 / ell / ell:.6g})"
        )
    return out


def _gamma_lengthscale(gamma):
    """l = 1 / sqrt(2 gamma), without overflow for gamma near the float maximum (2 gamma = inf gave
    l = 0)."""
    return math.sqrt(0.5) / math.sqrt(gamma)


def feature_param_constraints(names: Iterable[str] | None = None) -> dict[str, list[Any]]:
    """scikit-learn ``_parameter_constraints`` entries of the table's parameters (needs scikit-learn).

    Built from each :class:`FeatureParam`'s ``constraint``. The constraints state the types and
    ranges scikit-learn can express; the full checks (e.g. ``shape_matrix`` symmetric positive
    definite) stay in :func:`validate_feature_params`, which the estimators call in ``fit``.
    """
    from sklearn.utils._param_validation import Interval, StrOptions

    def convert(c):
        if isinstance(c, tuple) and c[0] == "interval":
            return Interval(c[1], c[2], c[3], closed=c[4])
        if isinstance(c, tuple) and c[0] == "options":
            return StrOptions(set(c[1]))
        return c

    names = tuple(_PARAMS) if names is None else tuple(names)
    missing = [n for n in names if n not in _PARAMS]
    if missing:
        raise ValueError(f"no constraint for {missing[0]!r}; known: {', '.join(_PARAMS)}")
    return {n: [convert(c) for c in _PARAMS[n].constraint] for n in names}


def _family_lengthscale(kernel):
    """The kernel's own length-scale parameter (library family or formula parameter), or None."""
    kernel = getattr(kernel, "kernel", kernel)  # a SpectralMeasure: its kernel
    family = getattr(kernel, "family", None)
    if family is not None and "lengthscale" in family[1]:
        return float(family[1]["lengthscale"])
    params = getattr(kernel, "params", None) or {}
    value = params.get("lengthscale")
    return None if value is None else float(value)


def scale_lengthscale(
    X: Any, shape_matrix: ArrayLike | None = None, sample_weight: ArrayLike | None = None
) -> float:
    """The ``lengthscale="scale"`` rule: ``l = sqrt(n_features Var(X L) / 2)`` with M = L L^T.

    Var is taken over all entries of X (of X L with a shape matrix), in float64, as scikit-learn's
    ``gamma="scale"``: the Gaussian exp(-||x - y||^2 / (2 l^2)) then is
    exp(-||x - y||^2 / (n_features Var(X))). Constant data gives l = 1. The result is rounded to
    10 significant digits, so that in-memory, sparse, dask and streamed data give the same l.

    Parameters
    ----------
    X : array_like, scipy sparse matrix, dask array, or an iterable of 2-D numpy blocks
        The data (a dask array is reduced by dask, one pass; blocks are merged by the pairwise
        update of Chan, Golub and LeVeque, so a file can be streamed).
    shape_matrix : array_like of shape (d, d), optional
    sample_weight : array_like of shape (n,), optional
        Row weights >= 0 (X an array): the weighted variance, so that a weight 2 counts as the
        row twice (and a weight 0 as no row).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the variance is not finite (values too large) or X holds no entry.
    """
    L = None if shape_matrix is None else np.linalg.cholesky(np.asarray(shape_matrix, dtype=np.float64))
    single = scipy.sparse.issparse(X) or (hasattr(X, "shape") and hasattr(X, "ndim"))
    if sample_weight is not None:
        if not single:
            raise ValueError("sample_weight needs X as one array, not an iterable of blocks")
        return _weighted_scale(X, L, sample_weight)
    blocks = [X] if single else X
    count, mean, m2, width = 0, 0.0, 0.0, None
    spread = False  # two distinct entries seen (a zero variance then means an underflow)
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported below
        for B in blocks:
            if L is not None:
                B = B @ L  # ||L^T z||^2 = z^T M z: the rows of X L
            width = int(B.shape[1])
            if scipy.sparse.issparse(B):
                B = B.tocsr().astype(np.float64)
                n = B.shape[0] * B.shape[1]
                mu = float(B.sum()) / n if n else 0.0
                var = float(B.multiply(B).sum()) / n - mu * mu if n else 0.0
                spread = spread or (n > 0 and B.max() != B.min())
            elif hasattr(B, "compute") and not isinstance(B, np.ndarray):  # a dask array
                B = B.astype(np.float64)  # rows may be unknown (a DataFrame's): counted by dask
                rows = (B[:, 0] * 0.0 + 1.0).sum() if np.isnan(B.shape[0]) else B.shape[0]  # lazy count
                rows, mu, var = _dask_compute(rows, B.mean(), B.var())
                n, mu, var = (int(rows) if np.isfinite(rows) else 1) * width, float(mu), float(var)
            else:
                B = np.asarray(B)
                n = B.size
                mu = float(np.mean(B, dtype=np.float64)) if n else 0.0
                var = float(np.var(B, dtype=np.float64)) if n else 0.0
                spread = spread or (n > 0 and float(np.max(B)) != float(np.min(B)))
            if n == 0:
                continue
            total = count + n
            delta = mu - mean
            m2 += var * n + delta * delta * count * n / total
            mean += delta * n / total
            count = total
    if count == 0:
        raise ValueError("lengthscale='scale' needs data: X has no entries")
    var = m2 / count
    if var == 0 and spread:
        raise ValueError(
            "lengthscale='scale': the variance of X underflows to 0 although X is not constant (its "
            "values are too small for the rule sqrt(n_features * Var(X) / 2) in float64): rescale X "
            "or pass a number as lengthscale"
        )
    if not np.isfinite(var):
        raise ValueError(
            f"lengthscale='scale': the variance of X is not finite ({var}); the values are "
            "too large for the rule sqrt(n_features * Var(X) / 2): rescale X or pass a "
            "number as lengthscale"
        )
    return _scale_value(width, var)


def _scale_value(width, var):
    """sqrt(width var / 2) to 10 significant digits (1 when var = 0).

    Rounded so that every entry point gives the same number: numpy's pairwise sums, dask's tree
    of chunk sums and a streamed file differ in the last bits of Var(X), and one ulp of l would
    change every feature in its last bits.
    """
    return float(f"{math.sqrt(width * var / 2.0):.10g}") if var > 0 else 1.0


def resolve_lengthscale(
    kernel: RadialKernel | DensityKernel,
    lengthscale: float | Literal["scale"] = "scale",
    gamma: float | None = None,
    X: Any = None,
    shape_matrix: ArrayLike | None = None,
    sample_weight: ArrayLike | None = None,
) -> float:
    """The number l that :meth:`RandomFeatures.fit` uses (one rule for every entry point).

    ``gamma`` (validated, exclusive with a numeric lengthscale) gives l = 1 / sqrt(2 gamma); a
    number is l itself; ``"scale"`` is :func:`scale_lengthscale` of ``X`` (which may be an
    iterable of blocks: it is consumed only here), or l = 1 when X is None (no data seen: the
    kernel in its own units).

    Raises
    ------
    ValueError
        ``"scale"`` with data for a kernel that has its own length-scale parameter other than 1
        (a library family's ``lengthscale`` or a formula parameter of that name): the two would
        multiply silently. Pass ``lengthscale=1.0`` to use the kernel as given.
    """
    if gamma is not None:
        return _gamma_lengthscale(gamma)
    if lengthscale != "scale":
        return float(lengthscale)
    if X is None:  # no data seen: nothing to scale by, the kernel in its own units
        return 1.0
    own = _family_lengthscale(kernel)
    if own is not None and own != 1.0:
        raise ValueError(
            f"kernel {kernel.name} has its own length scale {own:g}, and lengthscale='scale' (the "
            f"default) would multiply it by the data's scale sqrt(n_features Var(X) / 2): pass "
            "lengthscale=1.0 to use the kernel as given, or drop its lengthscale to let 'scale' choose"
        )
    return scale_lengthscale(X, shape_matrix, sample_weight)


def _weighted_scale(X, L, w):
    """``scale_lengthscale`` with row weights: entries of row i count w_i times."""
    if L is not None:
        X = X @ L
    d = int(X.shape[1])
    is_dask = hasattr(X, "compute") and not isinstance(X, np.ndarray) and not scipy.sparse.issparse(X)
    if not is_dask:
        w = np.asarray(w, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if scipy.sparse.issparse(X):
            X = X.tocsr().astype(np.float64)
            total = float(w.sum()) * d
            mu = float(w @ np.asarray(X.sum(axis=1)).ravel()) / total if total else 0.0
            ex2 = float(w @ np.asarray(X.multiply(X).sum(axis=1)).ravel()) / total if total else 0.0
            var = max(ex2 - mu * mu, 0.0)
        else:
            X = X.astype(np.float64)
            total = w.sum() * d
            mu = (w @ X.sum(axis=1)) / total
            var = (w @ ((X - mu) ** 2).sum(axis=1)) / total
            if is_dask:
                total, mu, var = _dask_compute(total, mu, var)
            total, var = float(total), float(var)
    if total == 0:
        raise ValueError("lengthscale='scale' needs data: the sample weights sum to 0")
    if not np.isfinite(var):
        raise ValueError(
            f"lengthscale='scale': the variance of X is not finite ({var}); the values are "
            "too large for the rule sqrt(n_features * Var(X) / 2): rescale X or pass a "
            "number as lengthscale"
        )
    return _scale_value(d, var)


def _dask_compute(*values):
    """``dask.compute`` of lazy values (reached only with dask arrays: dask is an optional extra)."""
    import dask

    return dask.compute(*values)


class _Mixture:
    """Norm sampler of a positive mixture sum_c p_c law_c: i.i.d. labels, then each component."""

    def __init__(self, probs, samplers):
        self.probs = np.asarray(probs, dtype=np.float64)
        self.probs = self.probs / self.probs.sum()
        self.samplers = list(samplers)

    def __call__(self, n, rng):
        if len(self.samplers) == 1:
            return self.samplers[0](n, rng)
        labels = rng.choice(len(self.samplers), size=n, p=self.probs)
        out = np.empty(n)
        for c, fn in enumerate(self.samplers):
            idx = np.nonzero(labels == c)[0]
            if len(idx):
                out[idx] = fn(len(idx), rng)
        return out


def _norm_sampler(measure, sign, use_exact):
    """A callable (n, rng) -> norms for the Jordan part ``sign`` of ``measure``, and its description."""
    if use_exact and sign > 0:
        ex = exact_sampler(measure.kernel, measure.dim)
        if ex is not None:
            return ex.sample_norms, ex
    rs = radial_sampler(measure, sign)
    return rs.sample, rs


def _picklable(value):
    try:
        pickle.dumps(value)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


#: Largest |w . x| a transform accepts, per dtype: beyond it consecutive representable phases are
#: >= 1 rad apart (2^52 in float64, 2^23 in float32), so no digit of cos / sin is correct.
PHASE_LIMIT = {np.dtype(np.float64): 2.0**52, np.dtype(np.float32): 2.0**23}

#: Allocations below this size are not checked against the available memory.
_MEMORY_CHECK_BYTES = 64 << 20


class InsufficientMemoryError(ValueError, MemoryError):
    """A fit or transform that would need more memory than is available (raised before allocating)."""


def _check_memory(nbytes, what):
    if nbytes < _MEMORY_CHECK_BYTES:
        return
    avail = _runtime.available_memory()
    if avail is not None and nbytes > avail:
        raise InsufficientMemoryError(
            f"{what} needs {nbytes} bytes ({nbytes / 2**30:.3g} GiB), more than the {avail} bytes "
            f"({avail / 2**30:.3g} GiB) of available memory"
        )


def _fit_peak_bytes(n_freq, dim, scaled):
    """An upper estimate of the peak memory of ``fit``'s frequency draw (measured: 3.0-3.5 times
    the frequency matrix for n_freq >> dim, from the Gaussian draws, the norms and the orthogonal
    blocks), plus the dim x dim blocks of the orthogonal methods and a scaled copy."""
    matrix = n_freq * dim * 8
    return int(matrix * (4 + (1 if scaled else 0)) + 4 * min(n_freq, dim) * dim * 8 + 32 * n_freq)


def _fold_scale(W_plus, W_minus, lengthscale, shape_matrix):
    """Frequencies of k(||z||_M / l): rows w -> L w / l with M = L L^T, i.e. W -> W L^T / l.

    Returns ``(W_plus_eff, W_minus_eff, L)`` (the inputs themselves and L = None when l = 1 and
    M is None).
    """
    if shape_matrix is None:
        if lengthscale == 1.0:
            return W_plus, W_minus, None
        L = None
        with np.errstate(over="ignore"):  # a tiny lengthscale: refused below, without a warning
            folded = (W_plus / lengthscale, W_minus / lengthscale)
    else:
        L = np.linalg.cholesky(shape_matrix)
        with np.errstate(over="ignore", invalid="ignore"):
            folded = tuple(np.ascontiguousarray((W @ L.T) / lengthscale) for W in (W_plus, W_minus))
    if not all(np.isfinite(W).all() for W in folded):
        with_m = " with this shape_matrix" if shape_matrix is not None else ""
        raise ValueError(
            f"lengthscale={lengthscale!r}{with_m} is too small: the frequencies w / lengthscale overflow "
            "float64 (beyond 1.8e308); use a larger lengthscale (phases w . x beyond 2^52 have no correct "
            "digit anyway)"
        )
    return folded[0], folded[1], L


class RandomFeatures:
    """Unbiased random features ``[Phi_plus | Phi_minus]`` of a radial (possibly indefinite) kernel.

    scikit-learn style: ``__init__`` only stores the parameters; :meth:`fit` validates them, builds
    the spectral measure and draws the frequencies; :meth:`transform` maps data.

    Parameters
    ----------
    kernel : RadialKernel, DensityKernel, SpectralMeasure or str, default "gaussian"
        The kernel (a spec string goes through :func:`spectralkit.kernels.from_spec`), or its
        measure (then ``dim`` must match ``measure.dim`` or be None).
    dim : int, optional
        Input dimension d; taken from ``X`` in :meth:`fit` when None. All parameters after
        ``kernel`` are keyword-only.
    n_components : int, default 256
        Output width. ``"cos"``: s_plus + s_minus columns. ``"sincos"``: a cos and a sin column per
        frequency, and for an odd width one more frequency w_o whose single column is
        ``sqrt(2 m / s) cos(w_o . x + b)`` with b ~ U[0, 2 pi) (unbiased:
        E_b[2 cos(w.x + b) cos(w.y + b)] = cos(w . (x - y))); it belongs to the part of the larger
        mass, whose s counts it.
    method : {"orf", "gorf", "rff", "gorf_paper"}, default "orf"
        Directions (see :mod:`spectralkit.sampling.directions`). For PD kernels "gorf" equals "orf". The
        default is "orf": for signed kernels, sharing d x d blocks between the + and - parts (GORF)
        halves the orthogonality within each part, and ORF measured lower errors (docs/benchmarks.md).
    split : {"jordan", "terms"}, default "jordan"
        ``"jordan"``: mu_plus = max(mu, 0), mu_minus = max(-mu, 0) (smallest total mass, smallest
        variance). ``"terms"``: for a linear combination sum a_i k_i of kernels that are PD in this
        dimension, mu_plus = sum_{a_i > 0} a_i mu_i and mu_minus = sum_{a_i < 0} |a_i| mu_i
        (the papers' split; unbiased, larger masses).
    feature_map : {"sincos", "cos"}, default "sincos"
    random_state : None, int or numpy.random.Generator
        Seed or Generator for all randomness (a Generator is used as is, and advanced).
    truncation : float, optional
        Only for kernels whose spectral measure has infinite mass (otherwise ignored): sample the
        measure restricted to rho <= truncation. The estimator is then **biased**; the bias at
        r = 0 is ``truncation_bias_`` = k(0) - (m+ - m-) and a grid estimate of max_r |bias(r)| is
        ``truncation_bias_max_`` (a :class:`RuntimeWarning` is issued). Without it, such kernels
        raise :class:`~spectralkit.DivergentMassError`.
    truncation_tolerance : float, default 0.01
        The largest accepted |bias at r = 0| of a truncated measure, relative to |k(0)| (absolute
        when k(0) = 0): a truncation beyond it raises :class:`~spectralkit.DivergentMassError`
        before anything is drawn. ``float("inf")`` accepts any bias (the explicit request).
    lengthscale : float or "scale", default "scale"
        l > 0: the features approximate k(||x - y|| / l). ``"scale"``: chosen by :meth:`fit` from
        the data, ``l = sqrt(n_features Var(X) / 2)`` (Var over all entries of X, of X L with a
        shape matrix M = L L^T; 1 for constant data; see :func:`scale_lengthscale`), so that the
        Gaussian is exp(-||x - y||^2 / (n_features Var(X))), scikit-learn's ``gamma="scale"``.
        When fit sees no data (``fit()`` with ``dim`` only) there is nothing to scale by and
        ``"scale"`` means l = 1: the kernel in its own units. A kernel with its own length-scale
        parameter other than 1 (``"gaussian:lengthscale=2"``) refuses ``"scale"`` with data:
        pass ``lengthscale=1.0`` to use it as given. The number used is ``lengthscale_``.
    gamma : float, optional
        Alternative to ``lengthscale`` (exclusive with a numeric one): l = 1 / sqrt(2 gamma), the
        Gaussian convention exp(-gamma r^2) = exp(-r^2 / (2 l^2)); for other kernels it is that l.
    shape_matrix : array_like of shape (dim, dim), optional
        Symmetric positive definite M: the features approximate k(||x - y||_M / l) with
        ||z||_M = sqrt(z^T M z). Both are folded into the frequencies at fit: with the Cholesky
        factor M = L L^T, w . (L^T z) / l = ((L w) / l) . z, so ``W_plus_ = W_plus_raw_ L^T / l``
        (exact, and free at transform time).

    The parameters are those of :data:`FEATURE_PARAMS` plus ``dim``.

    Attributes
    ----------
    lengthscale_ : float
        The length scale l used (from ``lengthscale``, ``gamma`` or the ``"scale"`` rule).
    measure_ : SpectralMeasure
        The measure that was sampled (the truncated one when ``truncation`` applied).
    mass_plus_, mass_minus_ : float
        Masses of the two parts (the scale factors are sqrt(mass / s)).
    mass_plus_error_, mass_minus_error_ : float
        Their estimated absolute errors (from the measure).
    W_plus_, W_minus_ : ndarray, shape (., dim), float64
        The frequencies of the + and - blocks used by :meth:`transform` (lengthscale and shape
        matrix folded in); without the odd column's frequency.
    W_plus_raw_, W_minus_raw_ : ndarray, float64
        The same frequencies as drawn from the measure of k.
    offsets_plus_, offsets_minus_ : ndarray or None
        Phases of the ``"cos"`` map.
    W_odd_, offset_odd_ : ndarray of shape (n_odd, dim) and (n_odd,)
        The frequency and phase of the odd width's cos column (n_odd = 0 or 1; scaled like W_plus_).
    scale_odd_ : float
        Its multiplier sqrt(2 m / s) (0 without it).
    signature_ : ndarray of int8, shape (n_components,)
        +1 for the columns of Phi_plus, -1 for those of Phi_minus.
    n_plus_, n_minus_ : int
        Numbers of + and - frequencies.
    n_features_in_ : int
        The input dimension d.
    random_state_ : numpy.random.Generator
        The Generator that drew the frequencies.
    samplers_ : tuple
        The norm samplers (RadialSampler / ExactSampler / list of them for ``split="terms"``);
        their ``u_error`` and ``build_time`` document the tables.
    truncation_bias_, truncation_bias_max_ : float or None
        See ``truncation``; None when the measure was not truncated.
    """

    def __init__(
        self,
        kernel: RadialKernel | DensityKernel | SpectralMeasure | str = "gaussian",
        *,
        dim: int | None = None,
        n_components: int = 256,
        method: MethodName = "orf",
        split: SplitName = "jordan",
        feature_map: FeatureMapName = "sincos",
        random_state: int | np.random.Generator | None = None,
        truncation: float | None = None,
        truncation_tolerance: float = TRUNCATION_TOLERANCE,
        lengthscale: float | Literal["scale"] = "scale",
        gamma: float | None = None,
        shape_matrix: ArrayLike | None = None,
    ) -> None:
        self.kernel = kernel
        self.dim = dim
        self.n_components = n_components
        self.method = method
        self.split = split
        self.feature_map = feature_map
        self.random_state = random_state
        self.truncation = truncation
        self.truncation_tolerance = truncation_tolerance
        self.lengthscale = lengthscale
        self.gamma = gamma
        self.shape_matrix = shape_matrix

    # -- parameters ---------------------------------------------------------------------------
    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters (scikit-learn protocol)."""
        return {k: getattr(self, k) for k in ("kernel", "dim", *_PARAMS)}

    def set_params(self, **params: Any) -> RandomFeatures:
        """Set constructor parameters (scikit-learn protocol); refit afterwards."""
        valid = self.get_params()
        for k, v in params.items():
            if k not in valid:
                raise ValueError(f"invalid parameter {k!r} for RandomFeatures; valid: {', '.join(valid)}")
            setattr(self, k, v)
        return self

    def _validate_params(self, X_dim):
        """The input dimension, the measure passed as ``kernel`` (or None) and the table's values."""
        dim = check_dim(self.dim, allow_none=True)
        measure = self.kernel if isinstance(self.kernel, SpectralMeasure) else None
        if measure is not None:
            if dim is not None and dim != measure.dim:
                raise ValueError(f"dim={dim!r} differs from the measure's dim={measure.dim}")
            dim = measure.dim
        if X_dim is not None:
            if dim is not None and X_dim != dim:
                raise ValueError(f"X has {X_dim} features but dim={dim}")
            dim = X_dim
        values = validate_feature_params({k: getattr(self, k) for k in _PARAMS if k != "kernel"}, dim)
        if dim is None:
            raise ValueError("dim is None and no X was given to fit(): pass dim=... or fit(X)")
        _check_kernel(self.kernel, dim)
        return int(dim), measure, values

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, X: Any = None, y: object = None, sample_weight: ArrayLike | None = None) -> RandomFeatures:
        """Validate the parameters, build the spectral measure and draw the frequencies.

        Parameters
        ----------
        X : array_like, scipy sparse matrix or dask array of shape (n, d), optional
            Its number of columns is the dimension (checked against ``dim``); its values are
            read only by ``lengthscale="scale"`` (a dask array: one reduction for Var(X)).
            Without X, ``dim`` must be given and ``"scale"`` means l = 1.
        y : ignored
        sample_weight : array_like of shape (n,), optional
            Row weights, read only by ``"scale"`` (the weighted variance: a weight 2 counts as the
            row twice).

        Returns
        -------
        self

        Raises
        ------
        DivergentMassError
            If the measure has infinite mass and ``truncation`` is None, or the truncation's
            bias at r = 0 exceeds ``truncation_tolerance``.
        """
        X_dim, data = None, None
        if X is not None:
            data = self._check_fit_X(X)
            X_dim = int(data.shape[1])
        dim, measure, values = self._validate_params(X_dim)
        width = values["n_components"]
        n_odd = width % 2 if values["feature_map"] == "sincos" else 0
        n_freq = (width + 1) // 2 if values["feature_map"] == "sincos" else width
        if measure is None:
            kernel = from_spec(self.kernel) if isinstance(self.kernel, str) else self.kernel
        else:
            kernel = measure.kernel
        lengthscale = resolve_lengthscale(
            kernel, values["lengthscale"], values["gamma"], data, values["shape_matrix"], sample_weight
        )
        scaled = lengthscale != 1.0 or values["shape_matrix"] is not None
        _check_memory(
            _fit_peak_bytes(n_freq, dim, scaled),
            f"n_components={self.n_components!r} in dim={dim}: drawing the frequencies (the {n_freq} x "
            f"{dim} float64 frequency matrix{', drawn and scaled,' if scaled else ''} and the temporaries "
            "of its construction)",
        )
        if measure is None:
            measure = SpectralMeasure(kernel, dim)
        rng = (
            self.random_state
            if isinstance(self.random_state, np.random.Generator)
            else np.random.default_rng(self.random_state)
        )
        # Refitting with only a new random_state / method / n_components / feature_map reuses the
        # measure and the norm samplers (their tables are the expensive part).
        key = (measure.kernel.key, dim, self.split, self.truncation, id(self.kernel))
        cached = getattr(self, "_parts_cache", None)
        if cached is not None and cached[0] == key:
            measure, parts, masses, truncated = cached[1]
        else:
            measure, parts, masses, truncated = self._build_parts(measure, dim)
            self._parts_cache = (key, (measure, parts, masses, truncated))
        mass_plus, mass_minus, err_plus, err_minus = masses
        if truncated:
            self._check_truncation_bias(measure, mass_plus - mass_minus, values["truncation_tolerance"])
        self.truncation_bias_ = None
        self.truncation_bias_max_ = None

        n_plus, n_minus = self._allocate(n_freq, mass_plus, mass_minus)
        try:
            with _runtime.blas_single_thread():  # QR results must not depend on the BLAS thread count
                W_plus, W_minus = draw_frequencies(
                    self.method, n_plus, n_minus, dim, rng, parts[0][0], parts[1][0]
                )
        except MemoryError as exc:  # beyond the estimate (other allocations of the process)
            raise InsufficientMemoryError(
                f"n_components={self.n_components!r} in dim={dim}: drawing the {n_freq} x {dim} "
                f"frequencies ran out of memory ({exc or 'no detail'}); lower n_components"
            ) from exc
        if self.feature_map == "cos":
            self.offsets_plus_ = rng.uniform(0.0, 2.0 * np.pi, n_plus)
            self.offsets_minus_ = rng.uniform(0.0, 2.0 * np.pi, n_minus)
            factor = 2.0
        else:
            self.offsets_plus_ = self.offsets_minus_ = None
            factor = 1.0
        scale_plus = math.sqrt(factor * mass_plus / n_plus) if n_plus else 0.0
        scale_minus = math.sqrt(factor * mass_minus / n_minus) if n_minus else 0.0
        # An odd "sincos" width: the last frequency of the part of the larger mass gets one
        # cos(w . x + b) column, scaled sqrt(2 m / s) (the part's s counts it: unbiased).
        odd_sign = 0
        W_odd = np.empty((0, dim))
        if n_odd:
            odd_sign = 1 if (n_plus and mass_plus >= mass_minus) or not n_minus else -1
            if odd_sign > 0:
                W_plus, W_odd = W_plus[:-1], W_plus[-1:]
            else:
                W_minus, W_odd = W_minus[:-1], W_minus[-1:]
        self.offset_odd_ = rng.uniform(0.0, 2.0 * np.pi, n_odd) if n_odd else np.empty(0)
        self.scale_odd_ = math.sqrt(2.0) * (scale_plus if odd_sign > 0 else scale_minus) if n_odd else 0.0
        self.measure_ = measure
        self.lengthscale_ = float(lengthscale)
        self.mass_plus_, self.mass_minus_ = mass_plus, mass_minus
        self.mass_plus_error_, self.mass_minus_error_ = err_plus, err_minus
        self.n_plus_, self.n_minus_ = n_plus, n_minus
        self.scale_plus_, self.scale_minus_ = scale_plus, scale_minus
        self.W_plus_raw_ = np.ascontiguousarray(W_plus)
        self.W_minus_raw_ = np.ascontiguousarray(W_minus)
        self.W_plus_, self.W_minus_, self.shape_cholesky_ = _fold_scale(
            self.W_plus_raw_, self.W_minus_raw_, lengthscale, values["shape_matrix"]
        )
        self.W_odd_ = _fold_scale(W_odd, W_odd, lengthscale, values["shape_matrix"])[0]
        self.W_odd_ = np.ascontiguousarray(self.W_odd_)
        per = 2 if self.feature_map == "sincos" else 1
        self.signature_ = np.concatenate(
            [
                np.ones(per * self.W_plus_.shape[0], dtype=np.int8),
                -np.ones(per * self.W_minus_.shape[0], dtype=np.int8),
                np.full(n_odd, odd_sign, dtype=np.int8),
            ]
        )
        self.n_features_in_ = dim
        self.random_state_ = rng
        self.samplers_ = (parts[0][1], parts[1][1])
        self._cast = {}
        self._fit_fingerprint = params_fingerprint(self.get_params())
        if truncated:
            self._truncation_report(measure)
        return self

    def _check_fit_X(self, X):
        """X as fit reads it: a checked numpy array, a CSR matrix, or a dask array (not computed)."""
        if scipy.sparse.issparse(X):
            X = X.tocsr()
            if X.ndim != 2:
                raise ValueError(f"X must be a 2-D array (n_samples, n_features), got shape {X.shape}")
            self._check_X(X.data.reshape(1, -1), "X", None)  # dtype and finiteness of the stored values
            return X
        if hasattr(X, "compute") and hasattr(X, "chunks") and not isinstance(X, np.ndarray):  # dask
            if X.ndim != 2 or np.isnan(X.shape[1]) or X.shape[1] < 1:
                raise ValueError(f"X must be 2-D with a known number of columns, got shape {X.shape}")
            return X
        return self._check_X(X, "X", dim=None)

    def _check_truncation_bias(self, measure, mass_diff, tolerance):
        """Refuse a truncation whose bias at r = 0, k(0) - (m+ - m-), exceeds the tolerance."""
        kernel = measure.kernel
        k0 = float(kernel.value_at_zero())
        bias = k0 - mass_diff
        limit = tolerance * (abs(k0) if k0 != 0.0 else 1.0)
        if tolerance == math.inf or (math.isfinite(bias) and abs(bias) <= limit):
            return
        raise DivergentMassError(
            f"truncation={self.truncation:g} is refused for {kernel.name} in d = {measure.dim}: the truncated "
            f"estimator's bias at r = 0 is k(0) - (m+ - m-) = {k0:.6g} - {mass_diff:.6g} = {bias:.3g}, beyond "
            f"truncation_tolerance = {tolerance:g} x |k(0)|{' (k(0) = 0: absolute)' if k0 == 0.0 else ''}. "
            "Pass truncation_tolerance=inf (CLI: --truncation-tolerance inf) to accept this bias explicitly",
            reason=f"bias at r = 0 of the truncation at rho_max = {self.truncation:g}: {bias:.3g}",
        )

    def _build_parts(self, measure, dim):
        """Masses and norm samplers of the + and - parts: ``(measure, parts, masses, truncated)``."""
        truncated = False
        if not measure.is_finite:
            if self.truncation is None:
                reason = measure.finiteness.reason
                raise DivergentMassError(
                    f"kernel {measure.kernel.name} has a spectral measure of infinite mass in d = {dim}: "
                    f"no unbiased random features exist. {reason} Pass truncation=rho_max for a "
                    "biased estimator of the measure restricted to [0, rho_max].",
                    reason=reason,
                )
            if self.split == "terms":
                raise ValueError(
                    "split='terms' is not available with a truncated measure; use split='jordan'"
                )
            measure = measure.truncated(float(self.truncation))
            truncated = True
        if self.split == "jordan":
            mp, mm = measure.mass_plus, measure.mass_minus
            mass_plus, mass_minus = float(mp.value), float(mm.value)
            err_plus, err_minus = float(mp.error), float(mm.error)
            # exact laws only for a PD library kernel itself (not a truncated or combined measure)
            use_exact = not truncated and mass_minus == 0.0 and not measure.kernel.is_combination
            parts = [
                _norm_sampler(measure, sign, use_exact) if mass > 0 else (None, None)
                for sign, mass in ((+1, mass_plus), (-1, mass_minus))
            ]
        else:
            ts = measure.terms_split()  # ValueError unless every term is PD in this dimension
            mass_plus, mass_minus = float(ts.mass_plus.value), float(ts.mass_minus.value)
            err_plus, err_minus = float(ts.mass_plus.error), float(ts.mass_minus.error)
            parts = []
            for comps in (ts.plus, ts.minus):
                if not comps:
                    parts.append((None, None))
                    continue
                fns, descr, probs = [], [], []
                for w, sub in comps:
                    fn, d_ = _norm_sampler(sub, +1, use_exact=True)
                    fns.append(fn)
                    descr.append(d_)
                    probs.append(w * sub.mass_plus.value)
                parts.append((_Mixture(probs, fns), descr))
        return measure, parts, (mass_plus, mass_minus, err_plus, err_minus), truncated

    @staticmethod
    def _allocate(n_freq, mass_plus, mass_minus):
        if mass_minus == 0.0:
            return n_freq, 0
        if mass_plus == 0.0:
            return 0, n_freq
        if n_freq < 2:
            raise ValueError(
                f"n_components is too small for an indefinite kernel: both the + and the - "
                f"part need at least one frequency (n_components >= 3 with 'sincos', >= 2 "
                f"with 'cos'); masses m+ = {mass_plus:.6g}, m- = {mass_minus:.6g}"
            )
        n_plus = int(round(n_freq * mass_plus / (mass_plus + mass_minus)))
        n_plus = min(max(n_plus, 1), n_freq - 1)
        return n_plus, n_freq - n_plus

    def _truncation_report(self, measure):
        """Bias of the truncated estimator: at r = 0 exactly, and its max over an r-grid by quadrature."""
        kernel = measure.kernel
        k0 = kernel.value_at_zero()
        self.truncation_bias_ = float(k0 - (self.mass_plus_ - self.mass_minus_))
        # k_trunc(r) = int_0^rho_max f(rho) Omega_d(rho r) drho, 16-node Gauss-Legendre on pieces
        # of width <= pi / (4 r_max) (Omega oscillates with period 2 pi / r in rho).
        support = kernel.support
        r_max = 1.5 * support if support else 10.0
        radii = np.linspace(0.0, r_max, 151)
        edges = sorted(
            {0.0, float(self.truncation)} | {lb.a for lb in measure.lobes} | {lb.b for lb in measure.lobes}
        )
        edges = [e for e in edges if e <= self.truncation]
        pieces = []
        for a, b in zip(edges[:-1], edges[1:]):
            m = max(1, int(math.ceil((b - a) / (np.pi / (4 * r_max)))))
            pieces.append(np.linspace(a, b, m + 1))
        grid = np.unique(np.concatenate(pieces))
        t, w = gauss_legendre(16)
        lo, hi = grid[:-1, None], grid[1:, None]
        nodes = (lo + (hi - lo) * 0.5 * (t + 1)).ravel()
        weights = ((hi - lo) * 0.5 * w).ravel() * measure.radial_density(nodes)
        approx = np.array([np.dot(weights, _omega(nodes * r, measure.dim)) for r in radii])
        self.truncation_bias_max_ = float(np.max(np.abs(kernel(radii) - approx)))
        warnings.warn(
            f"RandomFeatures: the spectral measure of {kernel.name} has infinite mass in d = {measure.dim}; "
            f"sampling it truncated at rho_max = {self.truncation:g} gives a BIASED estimator: "
            f"bias at r = 0 {self.truncation_bias_:.3g}, max |bias| over r in [0, {r_max:g}] "
            f"≈ {self.truncation_bias_max_:.3g} (quadrature estimate)",
            RuntimeWarning,
            stacklevel=3,
        )

    # -- transforming -------------------------------------------------------------------------
    def _check_fitted(self):
        """Fitted, and for the current parameters (a change after fit invalidates the fit)."""
        if "W_plus_" not in self.__dict__:
            raise not_fitted_error("this RandomFeatures instance is not fitted yet; call fit() first")
        fingerprint = self.__dict__.get("_fit_fingerprint")
        if fingerprint is not None:
            changed = changed_params(fingerprint, {k: v for k, v in vars(self).items() if k in fingerprint})
            if changed:
                raise not_fitted_error(
                    f"RandomFeatures: parameters changed since fit ({', '.join(changed)}); call fit again"
                )

    @staticmethod
    def _check_X(X: Any, name: str, dim: int | None) -> NDArray[Any]:
        """``X`` as a C-contiguous float32/float64 2-D array, finite, with ``dim`` columns."""
        return RandomFeatures._check_X_scan(X, name, dim)[0]

    @staticmethod
    def _check_X_scan(X: Any, name: str, dim: int | None) -> tuple[NDArray[Any], float]:
        """:meth:`_check_X` and the largest |x| of the result (one compiled parallel pass finds
        both)."""
        try:
            arr = np.asarray(X)
        except ValueError as exc:  # numpy's "inhomogeneous shape" of ragged rows
            raise ValueError(f"{name} must be a 2-D array of rows of equal length ({exc})") from None
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError(
                f"{name} must be real, got complex dtype {arr.dtype}: refusing to drop the imaginary part "
                f"(pass {name}.real, or stack real and imaginary parts as columns)"
            )
        if arr.dtype not in (np.float32, np.float64):
            if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
                raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
            src = arr
            with np.errstate(over="ignore"):  # a long double beyond float64: named below
                arr = arr.astype(np.float64)
            beyond = np.isfinite(src) & ~np.isfinite(arr) if src.ndim == 2 else None
            if beyond is not None and beyond.any():
                r, c = np.argwhere(beyond)[0]
                value = np.format_float_scientific(src[r, c], trim="-")  # an f-string would say inf
                raise ValueError(
                    f"{name} has a value beyond the float64 range at row {r}, column {c} ({value}); rescale X"
                )
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {arr.shape}")
        if dim is not None and arr.shape[1] != dim:
            raise ValueError(
                f"{name} has {arr.shape[1]} features (columns), but the features were fitted for dim={dim}"
            )
        arr = np.ascontiguousarray(arr)
        n_bad, max_abs = _compiled.finite_max_abs(arr)
        if n_bad:
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(
                f"{name} contains NaN or infinite values (first at row {bad[0]}, column {bad[1]})"
            )
        return arr, max_abs

    def __getstate__(self):
        # The measure and the samplers hold closures (sympy-derived densities) that pickle cannot
        # serialise: they are rebuilt from the kernel on first access (``__getattr__``). The
        # samplers cache and the per-dtype casts are rebuilt on demand.
        state = {
            k: v
            for k, v in self.__dict__.items()
            if k not in ("_parts_cache", "_cast", "measure_", "samplers_")
        }
        if "measure_" in self.__dict__ or self.__dict__.get("_rebuild_measure"):
            state["_rebuild_measure"] = True
        return state

    def __getattr__(self, name):
        # only called for missing attributes: the measure and samplers of an unpickled instance
        if name in ("measure_", "samplers_") and self.__dict__.get("_rebuild_measure"):
            self._check_fitted()
            kernel, dim = self.kernel, self.n_features_in_
            if isinstance(kernel, SpectralMeasure):
                measure = kernel
            else:
                measure = SpectralMeasure(from_spec(kernel) if isinstance(kernel, str) else kernel, dim)
            measure, parts, _, _ = self._build_parts(measure, dim)
            self.measure_, self.samplers_ = measure, (parts[0][1], parts[1][1])
            del self._rebuild_measure
            return self.__dict__[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def fitted_state(self) -> dict[str, Any]:
        """The fitted state without the measure and samplers: all :meth:`transform` needs, picklable.

        The measure and samplers may hold closures (sympy-derived densities) that pickle cannot
        serialise, and are large; the scikit-learn and Dask wrappers ship this slim state (a few
        small arrays: the frequencies, phases, scales and signature). Rebuild a feature map from
        it with :meth:`from_fitted_state`.
        """
        self._check_fitted()
        return {
            k: v
            for k, v in self.__getstate__().items()
            if k not in ("_rebuild_measure", "W_plus_raw_", "W_minus_raw_") and _picklable(v)
        }

    @classmethod
    def from_fitted_state(
        cls, state: Mapping[str, Any], measure: SpectralMeasure | None = None
    ) -> RandomFeatures:
        """A fitted feature map from :meth:`fitted_state` (``transform`` works; ``measure_`` is
        ``measure``, or absent, and ``samplers_`` None)."""
        missing = [k for k in ("W_plus_", "W_minus_", "signature_", "n_features_in_") if k not in state]
        if missing:
            raise ValueError(f"state is not a fitted_state() of RandomFeatures: {', '.join(missing)} missing")
        rf = cls.__new__(cls)
        rf.__dict__.update(state)
        if measure is not None:
            rf.measure_ = measure
            rf.samplers_ = None
        return rf

    def portable(self) -> RandomFeatures:
        """A copy that holds only what :meth:`transform` needs (cheap to pickle and ship to workers)."""
        return type(self).from_fitted_state(self.fitted_state())

    def _weights(self, dtype):
        if "_cast" not in self.__dict__:
            self._cast = {}
        if dtype not in self._cast:
            with np.errstate(over="ignore"):  # frequencies beyond float32: refused below
                cast = (
                    np.ascontiguousarray(self.W_plus_, dtype=dtype),
                    np.ascontiguousarray(self.W_minus_, dtype=dtype),
                    None if self.offsets_plus_ is None else self.offsets_plus_.astype(dtype),
                    None if self.offsets_minus_ is None else self.offsets_minus_.astype(dtype),
                    np.ascontiguousarray(self._odd()[0].T, dtype=dtype),  # (dim, n_odd)
                    self._odd()[1].astype(dtype),
                )
            if not all(np.isfinite(a).all() for a in cast if a is not None):
                largest = max(float(np.abs(W).max(initial=0.0)) for W in (self.W_plus_, self.W_minus_))
                raise ValueError(
                    f"the frequencies (largest |w| = {largest:.3g}, lengthscale={self.__dict__.get('lengthscale_')!r}) "
                    f"overflow {dtype}: transform float64 X, or use a larger lengthscale"
                )
            self._cast[dtype] = cast
        return self._cast[dtype]

    def _check_phases(self, X, xp=np, max_abs=None):
        """Refuse X whose phases w . x have no correct digit in X's dtype (see PHASE_LIMIT).

        Cheap bound first, max|x| max_i ||w_i||_1; only when it exceeds the limit the per-row
        bound sum_j |x_j| max_i |w_ij| (O(n d)) is computed. Both bound max |w . x|. ``xp``: the
        namespace of a non-numpy X (the bounds are computed on its device); ``max_abs``: max |X|
        if already known.
        """
        if "_cast" not in self.__dict__:
            self._cast = {}
        if "bounds" not in self._cast:
            W = np.concatenate([self.W_plus_, self.W_minus_, self._odd()[0]])
            with np.errstate(over="ignore"):  # an infinite bound is refused below
                self._cast["bounds"] = (float(np.abs(W).sum(axis=1).max()), np.abs(W).max(axis=0))
        l1, col_max = self._cast["bounds"]
        limit = PHASE_LIMIT[np.dtype(X.dtype if xp is np else _array_api.dtype_name(xp, X.dtype))]
        if X.shape[0] == 0 or X.shape[1] == 0:
            return
        if max_abs is None:
            max_abs = float(xp.max(xp.abs(X)))
        if max_abs * l1 <= limit:
            return
        if xp is np:
            with np.errstate(over="ignore"):
                bound = float((np.abs(X).astype(np.float64) @ col_max).max())
        else:
            cols = xp.asarray(col_max.astype(np.float64), device=X.device)
            bound = float(xp.max(xp.matmul(xp.astype(xp.abs(X), xp.float64), cols)))
        if bound > limit:
            raise ValueError(
                f"X is too large for the frequencies: the phases w . x reach up to {bound:.3g} (bound "
                f"sum_j |x_j| max |w_j|; max |X| = {max_abs:.3g}), beyond {limit:.3g} = "
                f"2^{int(math.log2(limit))}, where {X.dtype} phases are >= 1 rad apart: the features would "
                "have no correct digit (float64 allows phases up to 2^52, float32 up to 2^23). Rescale X "
                "(or increase lengthscale)"
            )

    def transform(
        self, X: ArrayLike, out: NDArray[np.float32] | NDArray[np.float64] | None = None
    ) -> NDArray[np.float32] | NDArray[np.float64]:
        """Features ``[Phi_plus | Phi_minus]`` of the rows of ``X``.

        Parameters
        ----------
        X : array_like, shape (n, dim)
            float32 stays float32 (frequencies drawn in float64 and rounded once), everything else
            is computed in float64. NaN / inf are rejected. An array of another Array API namespace
            (torch, CuPy, JAX, array_api_strict, ...) is transformed in that namespace and on its
            device, never through host memory: the frequencies are moved there once per (device,
            dtype) and cached; the values are those of the numpy path (to rounding: the namespace's
            own cos/sin and matmul).
        out : ndarray, optional
            C-contiguous buffer of shape (n, n_components) and X's dtype, written in place (reuse it
            across batches: first touch of fresh memory is costly). numpy input only.

        Returns
        -------
        ndarray, shape (n, n_components)
            Or an array of X's namespace, on X's device.
        """
        self._check_fitted()
        if scipy.sparse.issparse(X):
            return self._transform_sparse(X, out)
        xp = _array_api.namespace(X)
        if xp is not None:
            if out is not None:
                raise TypeError(
                    "out= is for numpy input; arrays of other namespaces are transformed on their device"
                )
            return self._transform_xp(X, xp)
        X_in = X
        X, max_abs = self._check_X_scan(X, "X", self.n_features_in_)
        dtype = X.dtype
        shape = (X.shape[0], int(self.signature_.size))
        Wp, Wm, op, om, W_odd, b_odd = self._weights(dtype)
        self._check_phases(X, max_abs=max_abs)
        if out is None:
            _check_memory(
                shape[0] * shape[1] * dtype.itemsize,
                f"the output of transform ({shape[0]} rows x n_components={shape[1]}, {dtype})",
            )
            out = _runtime.output_array(shape, dtype)
        else:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"out must be a numpy array, got {type(out).__name__}")
            if out.shape != shape or out.dtype != dtype:
                raise ValueError(
                    f"out must have shape {shape} and dtype {dtype} (those of X), got shape "
                    f"{out.shape} and dtype {out.dtype}"
                )
            if not out.flags.c_contiguous or not out.flags.writeable:
                raise ValueError("out must be C-contiguous and writeable")
            for arr in (X_in, X):
                if isinstance(arr, np.ndarray) and np.may_share_memory(out, arr):
                    raise ValueError(
                        "out must not share memory with X (the features would overwrite the input "
                        "while it is read); pass a separate buffer"
                    )
        n_odd = b_odd.size
        _compiled.fused_features(
            X, Wp, Wm, self.scale_plus_, self.scale_minus_, op, om, out, self.feature_map, extra_columns=n_odd
        )
        if n_odd:  # the odd width's cos column, after the compiled blocks
            phase = X @ W_odd  # a matrix-vector product: each row's sum in a fixed order
            phase += b_odd
            np.cos(phase, out=phase)
            phase *= dtype.type(self.scale_odd_)
            out[:, -n_odd:] = phase
        return out

    def _odd(self):
        """(W_odd_, offset_odd_): empty for even widths and for states fitted before odd widths."""
        W = self.__dict__.get("W_odd_")
        if W is None:
            return np.empty((0, self.n_features_in_)), np.empty(0)
        return W, self.offset_odd_

    def _transform_sparse(self, X, out):
        """Features of a scipy sparse X: the phases by sparse @ dense, then cos / sin in numpy."""
        X = X.tocsr()
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has shape {X.shape}, but the features were fitted for dim={self.n_features_in_}"
            )
        dtype = np.dtype(np.float32) if X.dtype == np.float32 else np.dtype(np.float64)
        _, max_abs = self._check_X_scan(X.data.reshape(1, -1), "X", None)
        X = X.astype(dtype)
        if out is not None:
            raise ValueError("out is not supported for a sparse X; call transform(X) without it")
        Wp, Wm, op, om, W_odd, b_odd = self._weights(dtype)
        self._check_phases(X, max_abs=max_abs)
        n = X.shape[0]
        width = int(self.signature_.size)
        _check_memory(
            n * width * dtype.itemsize, f"the output of transform ({n} rows x n_components={width})"
        )
        out = np.empty((n, width), dtype=dtype)
        col = 0
        blocks = ((Wp, op, self.scale_plus_), (Wm, om, self.scale_minus_))
        for W, off, scale in blocks:
            s = W.shape[0]
            if s == 0:
                continue
            A = np.asarray(X @ W.T, dtype=dtype)
            if self.feature_map == "sincos":
                out[:, col : col + s] = np.cos(A)
                out[:, col + s : col + 2 * s] = np.sin(A)
                out[:, col : col + 2 * s] *= dtype.type(scale)
                col += 2 * s
            else:
                out[:, col : col + s] = np.cos(A + off)
                out[:, col : col + s] *= dtype.type(scale)
                col += s
        if b_odd.size:
            phase = np.asarray(X @ W_odd, dtype=dtype) + b_odd
            out[:, col:] = dtype.type(self.scale_odd_) * np.cos(phase)
        return out

    def _transform_xp(self, X, xp):
        """The Array API path of :meth:`transform` (see :mod:`spectralkit._array_api`)."""
        X = _array_api.check_input(xp, X, "X", self.n_features_in_)
        self._check_phases(X, xp)
        key = (xp.__name__, str(X.device), str(X.dtype))
        if "_cast" not in self.__dict__:
            self._cast = {}
        weights = self._cast.get(key)
        if weights is None:
            weights = self._cast[key] = _array_api.DeviceWeights(
                xp,
                X.device,
                X.dtype,
                self.W_plus_,
                self.W_minus_,
                self.offsets_plus_,
                self.offsets_minus_,
                self.scale_plus_,
                self.scale_minus_,
            )
        Phi = _array_api.features(X, weights, self.feature_map)
        W_odd, b_odd = self._odd()
        if not b_odd.size:
            return Phi
        odd = self._cast.get(key + ("odd",))
        if odd is None:  # the odd width's cos column: its frequency and phase moved once
            np_dtype = np.dtype(_array_api.dtype_name(xp, X.dtype))
            odd = self._cast[key + ("odd",)] = (
                xp.asarray(np.ascontiguousarray(W_odd.T, dtype=np_dtype), device=X.device),
                xp.asarray(b_odd.astype(np_dtype), device=X.device),
                float(np_dtype.type(self.scale_odd_)),
            )
        column = odd[2] * xp.cos(xp.matmul(X, odd[0]) + odd[1])
        return xp.concat([Phi, column], axis=1)

    def fit_transform(self, X: ArrayLike, y: object = None) -> NDArray[np.float32] | NDArray[np.float64]:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)

    def kernel_approx(
        self, X: ArrayLike, Y: ArrayLike | None = None
    ) -> NDArray[np.float32] | NDArray[np.float64]:
        """Signed Gram estimate ``Phi_X diag(signature_) Phi_Y^T`` (unbiased for k(x_i - y_j)).

        Parameters
        ----------
        X : array_like, shape (n, dim)
        Y : array_like, shape (m, dim), optional (default: X)
        """
        xp = _array_api.namespace(X)
        if xp is not None:
            px = self.transform(X)
            py = px if Y is None else self.transform(xp.astype(Y, px.dtype))
            signature = xp.asarray(self.signature_.astype(np.float64), device=px.device)
            return xp.matmul(px * xp.astype(signature, px.dtype), xp.matrix_transpose(py))
        px = self.transform(X)
        if Y is not None and not scipy.sparse.issparse(Y):
            Y = np.asarray(Y, dtype=px.dtype)
        py = px if Y is None else self.transform(Y)
        return (px * self.signature_.astype(px.dtype)) @ py.T

    def __repr__(self):
        name = getattr(self.kernel, "name", self.kernel)
        return (
            f"RandomFeatures({name!r}, dim={self.dim}, n_components={self.n_components}, "
            f"method={self.method!r}, split={self.split!r}, feature_map={self.feature_map!r})"
        )
