"""Unbiased random features for radial kernels with signed spectral measures (Contract 5).

The estimator (docs/theory.md §2): draw s_plus frequencies w_i ~ mu_plus / m_plus and s_minus
frequencies v_j ~ mu_minus / m_minus and map

    phi(x) = [ a cos(W_plus x) | a sin(W_plus x) | b cos(W_minus x) | b sin(W_minus x) ],
    a = sqrt(m_plus / s_plus),  b = sqrt(m_minus / s_minus),

with the signature J = diag(+1 (2 s_plus times), -1 (2 s_minus times)). Then

    phi(x)^T J phi(y) = (m_plus / s_plus) sum_i cos(w_i . z) - (m_minus / s_minus) sum_j cos(v_j . z)

is an unbiased estimate of k(z), z = x - y, for every construction of the directions in
:mod:`spectralkit.frequencies` (each row is marginally uniform on the sphere, independent of its
norm). ``feature_map="cos"`` uses sqrt(2 m / s) cos(w . x + b) with b ~ U[0, 2 pi) instead (one
column per frequency; unbiased, larger variance).

Allocation of the frequencies: with S = n_components / 2 ("sincos") or S = n_components ("cos")
frequencies in all, s_plus = round(S m_plus / (m_plus + m_minus)), clipped to [1, S - 1] when
both masses are > 0 (each part non-empty), s_plus = S for PD kernels (m_minus = 0) and
s_minus = S when m_plus = 0. Proportional allocation minimises the variance bound
m_plus^2 / s_plus + m_minus^2 / s_minus for a fixed S.

Norm samplers: a PD library kernel with an exact frequency law uses
:func:`spectralkit.samplers.exact_sampler`; everything else uses the tabulated
:class:`spectralkit.samplers.RadialSampler` of its Jordan parts (or of the terms' measures for
``split="terms"``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import numbers
import pickle
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _compiled
from ._numerics.quadrature import gauss_legendre
from ._numerics.special import omega as _omega
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
    "RandomFeatures",
    "SPLITS",
    "feature_param_constraints",
    "validate_feature_params",
]

#: Accepted values of ``split``.
SPLITS = ("jordan", "terms")
#: Accepted values of ``feature_map``.
FEATURE_MAPS = ("sincos", "cos")


# ----------------------------------------------------------------------------------------------
# The parameter table (shared by RandomFeatures, the scikit-learn and dask wrappers and the CLI)
# ----------------------------------------------------------------------------------------------


def _choice(name, allowed):
    def check(value, dim):
        if not isinstance(value, str) or value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")
        return value

    return check


def _check_kernel(value, dim):
    if not isinstance(value, (str, RadialKernel, DensityKernel, SpectralMeasure)):
        raise TypeError(
            "kernel must be a RadialKernel, a DensityKernel, a SpectralMeasure or a spec string, "
            f"got {type(value).__name__}"
        )
    return value


def _check_n_components(value, dim):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"n_components must be an integer >= 1, got {value!r}")
    return int(value)


def _check_random_state(value, dim):
    if not (
        value is None
        or isinstance(value, np.random.Generator)
        or (isinstance(value, numbers.Integral) and not isinstance(value, bool) and value >= 0)
    ):
        raise ValueError(f"random_state must be None, a non-negative int or a numpy Generator, got {value!r}")
    return value


def _check_truncation(value, dim):
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(f"truncation must be None or a finite number > 0 (rho_max), got {value!r}")
    return float(value)


def _check_lengthscale(value, dim):
    if (
        isinstance(value, bool)
        or not isinstance(value, numbers.Real)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            "lengthscale must be a finite number > 0 (the features approximate k(r / lengthscale)), "
            f"got {value!r}"
        )
    return float(value)


@dataclasses.dataclass(frozen=True)
class FeatureParam:
    """One parameter of the feature map: ``check(value, dim)`` validates and normalises it.

    ``check`` raises ``ValueError`` / ``TypeError`` whose message names the parameter, the value
    and what is allowed; ``dim`` (the input dimension, or None while unknown) is used only by
    ``shape_matrix``.
    """

    name: str
    default: Any
    check: Callable[[Any, Any], Any] = dataclasses.field(repr=False)
    doc: str = ""


#: The parameters shared by :class:`RandomFeatures`, ``spectralkit.sklearn.SpectralFeatures``,
#: ``spectralkit.dask.DaskSpectralFeatures`` and the CLI: one validator per concept.
FEATURE_PARAMS = (
    FeatureParam(
        "kernel",
        "delta_gaussian",
        _check_kernel,
        "RadialKernel, DensityKernel, SpectralMeasure or spec string",
    ),
    FeatureParam("n_components", 256, _check_n_components, "output width; even for feature_map='sincos'"),
    FeatureParam("method", "orf", _choice("method", METHODS), "directions: " + ", ".join(METHODS)),
    FeatureParam("split", "jordan", _choice("split", SPLITS), "mu = mu+ - mu-: " + ", ".join(SPLITS)),
    FeatureParam(
        "feature_map", "sincos", _choice("feature_map", FEATURE_MAPS), "columns: " + ", ".join(FEATURE_MAPS)
    ),
    FeatureParam("random_state", None, _check_random_state, "None, int >= 0 or numpy Generator"),
    FeatureParam(
        "truncation", None, _check_truncation, "rho_max > 0 for measures of infinite mass (biased), else None"
    ),
    FeatureParam("lengthscale", 1.0, _check_lengthscale, "l > 0: the features approximate k(||x - y|| / l)"),
    FeatureParam(
        "shape_matrix",
        None,
        validate_shape_matrix,
        "None or SPD d x d M: the features approximate k(||x - y||_M / l), ||z||_M = sqrt(z^T M z)",
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
        Naming the parameter, its value and what is allowed. Cross-parameter rule: with
        ``feature_map="sincos"`` (the default) ``n_components`` must be even.
    """
    unknown = [k for k in params if k not in _PARAMS]
    if unknown:
        raise ValueError(f"invalid parameter {unknown[0]!r}; valid feature parameters: {', '.join(_PARAMS)}")
    out = {name: _PARAMS[name].check(value, dim) for name, value in params.items()}
    if "n_components" in out and out.get("feature_map", "sincos") == "sincos" and out["n_components"] % 2:
        raise ValueError(
            "n_components must be even for feature_map='sincos' (cos and sin columns per frequency), "
            f"got {out['n_components']!r}"
        )
    return out


def feature_param_constraints(names: Iterable[str] | None = None) -> dict[str, list[Any]]:
    """scikit-learn ``_parameter_constraints`` entries for the table's parameters (needs scikit-learn).

    The constraints state the types and ranges scikit-learn can express; the full checks (e.g.
    ``shape_matrix`` symmetric positive definite, even ``n_components``) stay in
    :func:`validate_feature_params`, which the estimators call in ``fit``.
    """
    from sklearn.utils._param_validation import Interval, StrOptions

    table = {
        "kernel": [str, RadialKernel, DensityKernel, SpectralMeasure],
        "n_components": [Interval(numbers.Integral, 1, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "split": [StrOptions(set(SPLITS))],
        "feature_map": [StrOptions(set(FEATURE_MAPS))],
        "random_state": ["random_state", np.random.Generator],
        "truncation": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "lengthscale": [Interval(numbers.Real, 0, None, closed="neither")],
        "shape_matrix": ["array-like", None],
    }
    names = tuple(_PARAMS) if names is None else tuple(names)
    missing = [n for n in names if n not in table]
    if missing:
        raise ValueError(f"no constraint for {missing[0]!r}; known: {', '.join(table)}")
    return {n: list(table[n]) for n in names}


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
    avail = _compiled.available_memory()
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


_NOT_FITTED = []


def _not_fitted_error(message):
    """scikit-learn's NotFittedError (also a RuntimeError) if scikit-learn is installed, else a RuntimeError.

    The class is created on first use: spectralkit does not import scikit-learn otherwise.
    """
    if not _NOT_FITTED:
        try:
            from sklearn.exceptions import NotFittedError as base
        except ImportError:
            bases = (RuntimeError,)
        else:
            bases = (base, RuntimeError)
        _NOT_FITTED.append(type("NotFittedError", bases, {"__module__": __name__}))
    return _NOT_FITTED[0](message)


def _param_token(value):
    """A value-based token of a parameter (equal tokens: same feature map), picklable."""
    if value is None or isinstance(value, (str, numbers.Number)):
        return value
    if isinstance(value, np.random.Generator):  # consumed by fit: only its kind is recorded
        return ("Generator",)
    if isinstance(value, (RadialKernel, DensityKernel)):
        return ("kernel", value.key)
    if isinstance(value, SpectralMeasure):
        return ("measure", value.kernel.key, value.dim)
    try:
        arr = np.asarray(value)
        if arr.dtype != object:
            digest = hashlib.blake2b(np.ascontiguousarray(arr).tobytes(), digest_size=16).hexdigest()
            return ("array", arr.shape, str(arr.dtype), digest)
    except (TypeError, ValueError):
        pass
    return ("object", type(value).__name__, id(value))


def _params_fingerprint(params):
    """``{name: token}`` of a parameter dict (see :func:`_param_token`)."""
    return {k: _param_token(v) for k, v in params.items()}


def _changed_params(fingerprint, params):
    """Names whose value differs from the fingerprint (names absent from either are skipped)."""
    now = _params_fingerprint({k: v for k, v in params.items() if k in fingerprint})
    return [k for k, tok in now.items() if tok != fingerprint[k]]


def _fold_scale(W_plus, W_minus, lengthscale, shape_matrix):
    """Frequencies of k(||z||_M / l): rows w -> L w / l with M = L L^T, i.e. W -> W L^T / l.

    Returns ``(W_plus_eff, W_minus_eff, L)`` (the inputs themselves and L = None when l = 1 and
    M is None).
    """
    if shape_matrix is None:
        if lengthscale == 1.0:
            return W_plus, W_minus, None
        return W_plus / lengthscale, W_minus / lengthscale, None
    L = np.linalg.cholesky(shape_matrix)
    return (
        np.ascontiguousarray((W_plus @ L.T) / lengthscale),
        np.ascontiguousarray((W_minus @ L.T) / lengthscale),
        L,
    )


class RandomFeatures:
    """Unbiased random features ``[Phi_plus | Phi_minus]`` of a radial (possibly indefinite) kernel.

    scikit-learn style: ``__init__`` only stores the parameters; :meth:`fit` validates them, builds
    the spectral measure and draws the frequencies; :meth:`transform` maps data.

    Parameters
    ----------
    kernel : RadialKernel, DensityKernel, SpectralMeasure or str
        The kernel (a spec string goes through :func:`spectralkit.kernels.from_spec`), or its
        measure (then ``dim`` must match ``measure.dim`` or be None).
    dim : int, optional
        Input dimension d; taken from ``X`` in :meth:`fit` when None.
    n_components : int, default 256
        Output width. ``"sincos"``: 2 (s_plus + s_minus), must be even; ``"cos"``: s_plus + s_minus.
    method : {"orf", "gorf", "rff", "gorf_paper"}, default "orf"
        Directions (see :mod:`spectralkit.frequencies`). For PD kernels "gorf" equals "orf". The
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
        r = 0 is ``truncation_bias_`` and a grid estimate of max_r |bias(r)| is
        ``truncation_bias_max_`` (a :class:`RuntimeWarning` is issued). Without it, such kernels
        raise :class:`~spectralkit.DivergentMassError`.
    lengthscale : float, default 1.0
        l > 0: the features approximate k(||x - y|| / l).
    shape_matrix : array_like of shape (dim, dim), optional
        Symmetric positive definite M: the features approximate k(||x - y||_M / l) with
        ||z||_M = sqrt(z^T M z). Both are folded into the frequencies at fit: with the Cholesky
        factor M = L L^T, w . (L^T z) / l = ((L w) / l) . z, so ``W_plus_ = W_plus_raw_ L^T / l``
        (exact, and free at transform time).

    The parameters are those of :data:`FEATURE_PARAMS` plus ``dim``.

    Attributes
    ----------
    measure_ : SpectralMeasure
        The measure that was sampled (the truncated one when ``truncation`` applied).
    mass_plus_, mass_minus_ : float
        Masses of the two parts (the scale factors are sqrt(mass / s)).
    mass_plus_error_, mass_minus_error_ : float
        Their estimated absolute errors (from the measure).
    W_plus_, W_minus_ : ndarray, shape (n_plus_, dim) and (n_minus_, dim), float64
        The frequencies used by :meth:`transform` (lengthscale and shape matrix folded in).
    W_plus_raw_, W_minus_raw_ : ndarray, shape (n_plus_, dim) and (n_minus_, dim), float64
        The frequencies as drawn from the measure of k (the same arrays when ``lengthscale == 1``
        and ``shape_matrix`` is None).
    offsets_plus_, offsets_minus_ : ndarray or None
        Phases of the ``"cos"`` map.
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
        kernel: RadialKernel | DensityKernel | SpectralMeasure | str,
        dim: int | None = None,
        n_components: int = 256,
        method: Literal["orf", "gorf", "rff", "gorf_paper"] = "orf",
        split: Literal["jordan", "terms"] = "jordan",
        feature_map: Literal["sincos", "cos"] = "sincos",
        random_state: int | np.random.Generator | None = None,
        truncation: float | None = None,
        lengthscale: float = 1.0,
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
        self.lengthscale = lengthscale
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
        dim = self.dim
        measure = self.kernel if isinstance(self.kernel, SpectralMeasure) else None
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1):
            raise ValueError(f"dim must be None or an integer >= 1, got {dim!r}")
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
    def fit(self, X: ArrayLike | None = None, y: object = None) -> RandomFeatures:
        """Validate the parameters, build the spectral measure and draw the frequencies.

        Parameters
        ----------
        X : array_like of shape (n, d), optional
            Only its number of columns is used (and checked against ``dim``).
        y : ignored

        Returns
        -------
        self

        Raises
        ------
        DivergentMassError
            If the measure has infinite mass and ``truncation`` is None.
        """
        X_dim = None
        if X is not None:
            X_dim = self._check_X(X, "X", dim=None).shape[1]
        dim, measure, values = self._validate_params(X_dim)
        n_freq = values["n_components"] // 2 if values["feature_map"] == "sincos" else values["n_components"]
        scaled = values["lengthscale"] != 1.0 or values["shape_matrix"] is not None
        _check_memory(
            _fit_peak_bytes(n_freq, dim, scaled),
            f"n_components={self.n_components!r} in dim={dim}: drawing the frequencies (the {n_freq} x "
            f"{dim} float64 frequency matrix{', drawn and scaled,' if scaled else ''} and the temporaries "
            "of its construction)",
        )
        if measure is None:
            kernel = from_spec(self.kernel) if isinstance(self.kernel, str) else self.kernel
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
        self.truncation_bias_ = None
        self.truncation_bias_max_ = None

        n_plus, n_minus = self._allocate(n_freq, mass_plus, mass_minus)
        try:
            with _compiled.blas_single_thread():  # QR results must not depend on the BLAS thread count
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
        self.measure_ = measure
        self.mass_plus_, self.mass_minus_ = mass_plus, mass_minus
        self.mass_plus_error_, self.mass_minus_error_ = err_plus, err_minus
        self.n_plus_, self.n_minus_ = n_plus, n_minus
        self.scale_plus_ = math.sqrt(factor * mass_plus / n_plus) if n_plus else 0.0
        self.scale_minus_ = math.sqrt(factor * mass_minus / n_minus) if n_minus else 0.0
        self.W_plus_raw_ = np.ascontiguousarray(W_plus)
        self.W_minus_raw_ = np.ascontiguousarray(W_minus)
        self.W_plus_, self.W_minus_, self.shape_cholesky_ = _fold_scale(
            self.W_plus_raw_, self.W_minus_raw_, values["lengthscale"], values["shape_matrix"]
        )
        per = 2 if self.feature_map == "sincos" else 1
        self.signature_ = np.concatenate(
            [np.ones(per * n_plus, dtype=np.int8), -np.ones(per * n_minus, dtype=np.int8)]
        )
        self.n_features_in_ = dim
        self.random_state_ = rng
        self.samplers_ = (parts[0][1], parts[1][1])
        self._cast = {}
        self._fit_fingerprint = _params_fingerprint(self.get_params())
        if truncated:
            self._truncation_report(measure)
        return self

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
                f"part need at least one frequency (n_components >= 4 with 'sincos', >= 2 "
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
            raise _not_fitted_error("this RandomFeatures instance is not fitted yet; call fit() first")
        fingerprint = self.__dict__.get("_fit_fingerprint")
        if fingerprint is not None:
            changed = _changed_params(fingerprint, {k: v for k, v in vars(self).items() if k in fingerprint})
            if changed:
                raise _not_fitted_error(
                    f"RandomFeatures: parameters changed since fit ({', '.join(changed)}); call fit again"
                )

    @staticmethod
    def _check_X(X, name, dim):
        arr = np.asarray(X)
        if np.issubdtype(arr.dtype, np.complexfloating):
            raise ValueError(
                f"{name} must be real, got complex dtype {arr.dtype}: refusing to drop the imaginary part "
                f"(pass {name}.real, or stack real and imaginary parts as columns)"
            )
        if arr.dtype not in (np.float32, np.float64):
            if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
                raise ValueError(f"{name} must be a numeric array, got dtype {arr.dtype}")
            arr = arr.astype(np.float64)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {arr.shape}")
        if dim is not None and arr.shape[1] != dim:
            raise ValueError(
                f"{name} has {arr.shape[1]} features (columns), but the features were fitted for dim={dim}"
            )
        if not np.all(np.isfinite(arr)):
            bad = np.argwhere(~np.isfinite(arr))[0]
            raise ValueError(
                f"{name} contains NaN or infinite values (first at row {bad[0]}, column {bad[1]})"
            )
        return np.ascontiguousarray(arr)

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

    def _transform_state(self):
        """The fitted state without the measure and samplers: all ``transform`` needs, picklable.

        The measure and samplers may hold closures (sympy-derived densities) that pickle cannot
        serialise, and are large; the scikit-learn and Dask wrappers ship this slim state.
        """
        return {
            k: v
            for k, v in self.__getstate__().items()
            if k not in ("_rebuild_measure", "W_plus_raw_", "W_minus_raw_") and _picklable(v)
        }

    def _weights(self, dtype):
        if "_cast" not in self.__dict__:
            self._cast = {}
        if dtype not in self._cast:
            cast = (
                np.ascontiguousarray(self.W_plus_, dtype=dtype),
                np.ascontiguousarray(self.W_minus_, dtype=dtype),
                None if self.offsets_plus_ is None else self.offsets_plus_.astype(dtype),
                None if self.offsets_minus_ is None else self.offsets_minus_.astype(dtype),
            )
            self._cast[dtype] = cast
        return self._cast[dtype]

    def _check_phases(self, X):
        """Refuse X whose phases w . x have no correct digit in X's dtype (see PHASE_LIMIT).

        Cheap bound first, max|x| max_i ||w_i||_1; only when it exceeds the limit the per-row
        bound sum_j |x_j| max_i |w_ij| (O(n d)) is computed. Both bound max |w . x|.
        """
        if "bounds" not in self._cast:
            W = np.concatenate([self.W_plus_, self.W_minus_])
            self._cast["bounds"] = (float(np.abs(W).sum(axis=1).max()), np.abs(W).max(axis=0))
        l1, col_max = self._cast["bounds"]
        limit = PHASE_LIMIT[X.dtype]
        if X.size == 0 or float(np.abs(X).max()) * l1 <= limit:
            return
        with np.errstate(over="ignore"):
            bound = float((np.abs(X).astype(np.float64) @ col_max).max())
        if bound > limit:
            raise ValueError(
                f"X is too large for the frequencies: the phases w . x reach up to {bound:.3g} (bound "
                f"sum_j |x_j| max |w_j|; max |X| = {float(np.abs(X).max()):.3g}), beyond {limit:.3g} = "
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
            is computed in float64. NaN / inf are rejected.
        out : ndarray, optional
            C-contiguous buffer of shape (n, n_components) and X's dtype, written in place (reuse it
            across batches: first touch of fresh memory is costly).

        Returns
        -------
        ndarray, shape (n, n_components)
        """
        self._check_fitted()
        X_in = X
        X = self._check_X(X, "X", self.n_features_in_)
        dtype = X.dtype
        shape = (X.shape[0], int(self.signature_.size))
        Wp, Wm, op, om = self._weights(dtype)
        self._check_phases(X)
        if out is None:
            _check_memory(
                shape[0] * shape[1] * dtype.itemsize,
                f"the output of transform ({shape[0]} rows x n_components={shape[1]}, {dtype})",
            )
            out = _compiled.output_array(shape, dtype)
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
        return _compiled.fused_features(
            X, Wp, Wm, self.scale_plus_, self.scale_minus_, op, om, out, self.feature_map
        )

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
        px = self.transform(X)
        py = px if Y is None else self.transform(np.asarray(Y, dtype=px.dtype))
        return (px * self.signature_.astype(px.dtype)) @ py.T

    def __repr__(self):
        name = getattr(self.kernel, "name", self.kernel)
        return (
            f"RandomFeatures({name!r}, dim={self.dim}, n_components={self.n_components}, "
            f"method={self.method!r}, split={self.split!r}, feature_map={self.feature_map!r})"
        )
