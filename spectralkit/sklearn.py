"""scikit-learn estimators: signed random features and Krein ridge regression / classification.

Requires the ``sklearn`` extra (``pip install "spectralkit[sklearn]"``); scikit-learn is imported
here and nowhere else in spectralkit.

:class:`SpectralFeatures` is a transformer wrapping :class:`spectralkit.features.RandomFeatures`:
``transform`` returns ``Phi = [Phi+ | Phi-]`` with the signature ``J = diag(signature_)`` such that
``Phi(x) J Phi(y)^T`` is an unbiased estimate of the (possibly indefinite) kernel k(||x - y||)
(docs/theory.md §2). Used as plain features in a linear model, the columns span H+ ⊕ H- (the
linear model then uses the positive definite kernel k+ + k-).

:class:`KreinRidgeRegressor` and :class:`KreinRidgeClassifier` solve the Krein kernel ridge
problem with the indefinite Gram matrix ``K = Phi J Phi^T``: the kernel ridge solution
``f(x) = k(x)^T (K + lambda I)^(-1) y`` equals, by the push-through identity,

    f(x) = phi(x)^T J (Phi^T Phi J + lambda I)^(-1) Phi^T y = phi(x)^T (Phi^T Phi + lambda J)^(-1) Phi^T y

(using J^2 = I), a symmetric indefinite s x s system for s feature columns. The fit streams the
rows in blocks (``Phi^T Phi`` and ``Phi^T y`` are accumulated; the n x s feature matrix is never
formed; dask arrays are reduced on the workers) and solves the system through the eigenvalues of
K, stably also when -lambda is close to one of them (see the estimators' Notes); the sums and the
solve live in :mod:`spectralkit._krein`. With a positive
definite kernel (J = I) this is ordinary ridge regression on the features.

Examples
--------
>>> import numpy as np
>>> from spectralkit.sklearn import SpectralFeatures, KreinRidgeRegressor
>>> X = np.random.default_rng(0).uniform(size=(50, 3))
>>> sf = SpectralFeatures("delta_gaussian:sigma1=1,sigma2=10", n_components=64, random_state=0).fit(X)
>>> sf.transform(X).shape
(50, 64)
"""

from __future__ import annotations

import math
import numbers
import textwrap
import warnings
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeGuard

import numpy as np
import scipy.linalg
import scipy.sparse
from numpy.typing import ArrayLike, NDArray
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
    _fit_context,
)
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _krein
from .features import (
    FEATURE_PARAMS,
    TRUNCATION_TOLERANCE,
    FeatureMapName,
    MethodName,
    RandomFeatures,
    SplitName,
    feature_param_constraints,
    validate_feature_params,
)
from .kernels import DensityKernel, RadialKernel, from_spec
from .measures import SpectralMeasure
from .measures._progress import Progress

if TYPE_CHECKING:  # annotations only: dask is an optional extra
    import dask.array

__all__ = ["SpectralFeatures", "KreinRidgeRegressor", "KreinRidgeClassifier"]

#: The feature-map parameters the estimators take from :data:`spectralkit.features.FEATURE_PARAMS`
#: (all of them, with the table's defaults), in the table's order.
_FEATURE_NAMES = tuple(p.name for p in FEATURE_PARAMS)


def _feature_constraints():
    """``_parameter_constraints`` of the table's parameters, without a SpectralMeasure as kernel
    (its dimension is fixed, the estimators take the dimension from X), plus ``kernel_params``."""
    table = feature_param_constraints(_FEATURE_NAMES)
    table["kernel"] = [c for c in table["kernel"] if c is not SpectralMeasure]
    table["kernel_params"] = [dict, None]
    return table


def _feature_params_doc():
    """The numpydoc entries of the table's parameters (defaults as the estimators use them)."""
    replace = {
        "kernel": 'A library spec (``"matern:nu=1.5"``, ``"delta_gaussian:sigma1=1,sigma2=10"``), a formula '
        'in ``r`` (``"exp(-r**2/2) - 0.5*exp(-r**2/8)"``) or a RadialKernel / DensityKernel.',
    }
    extra = {
        "lengthscale": "Var over all entries of X (of X L with a shape matrix "
        "M = L L^T; l = 1 when it is 0): "
        "the Gaussian kernel then is exp(-||x - y||^2 / (n_features Var(X))), scikit-learn's "
        '``gamma="scale"``. The number used is ``lengthscale_``.',
        "random_state": "A legacy RandomState draws a seed from it.",
    }
    lines = []
    for p in FEATURE_PARAMS:
        lines.append(f"    {p.name} : default {p.default!r}")
        text = replace.get(p.name, f"{p.doc}. {extra.get(p.name, '')}")
        lines += textwrap.wrap(text, 100, initial_indent=" " * 8, subsequent_indent=" " * 8)
    return "\n".join(lines)


def _resolve_kernel(kernel, kernel_params):
    if kernel_params is not None and not isinstance(kernel_params, dict):
        raise ValueError(f"kernel_params must be a dict or None, got {type(kernel_params).__name__}")
    if isinstance(kernel, (RadialKernel, DensityKernel)):
        if kernel_params:
            raise ValueError("kernel_params must be None when kernel is a kernel object")
        return kernel
    if not isinstance(kernel, str):
        raise ValueError(
            f"kernel must be a library spec such as 'matern:nu=1.5', a formula in r, or a "
            f"RadialKernel; got {type(kernel).__name__}"
        )
    return from_spec(kernel, params=kernel_params)


def _seed_for(random_state):
    """Translate a scikit-learn ``random_state`` into what RandomFeatures accepts.

    ints, None and numpy Generators pass through; a legacy ``RandomState`` gives a seed drawn from
    it (so repeated fits with the same instance differ, the scikit-learn convention).
    """
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"random_state must be a non-negative integer, got {random_state!r}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    raise ValueError(
        f"random_state must be None, an int, a numpy Generator or RandomState, got {random_state!r}"
    )


def _validate_data(estimator, *args, **kwargs):
    """scikit-learn's ``validate_data`` without numpy's warnings: its finiteness check sums the
    data, which warns ("invalid value encountered in reduce") for +inf and -inf before it raises
    its own error naming the input."""
    with np.errstate(over="ignore", invalid="ignore"):
        return validate_data(estimator, *args, **kwargs)


class SpectralFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    __doc__ = (
        """Random features of a (possibly indefinite) radial kernel, as a scikit-learn transformer.

    ``transform`` returns ``Phi = [Phi+ | Phi-]`` such that ``Phi(x) diag(signature_) Phi(y)^T``
    is an unbiased estimate of ``k(||x - y||_M / l)`` (``||z||_M = sqrt(z^T M z)``, the
    Euclidean norm without a shape matrix).

    Parameters
    ----------
    The feature-map parameters of :data:`spectralkit.features.FEATURE_PARAMS` (one definition:
    validated by :func:`spectralkit.features.validate_feature_params` in ``fit``):

"""
        + _feature_params_doc()
        + """
    kernel_params : dict, optional
        Parameter values for ``kernel`` (library keyword arguments, or a formula's parameters).

    Attributes
    ----------
    features_ : spectralkit.features.RandomFeatures
        The fitted feature map.
    kernel_ : RadialKernel
        The kernel.
    lengthscale_ : float
        The length scale used (the number chosen by ``lengthscale="scale"``).
    signature_ : ndarray of shape (n_components,)
        +1 / -1 per column: ``Phi(x) diag(signature_) Phi(y)^T`` estimates k.
    mass_plus_, mass_minus_ : float
        Masses m+ and m- of the split; k(0) = m+ - m- for the Jordan split.
    n_plus_, n_minus_ : int
        Frequencies drawn for the + and - parts.
    n_features_in_ : int
        Input dimension d (the measure is computed on R^d).
    feature_names_in_ : ndarray of str
        Input column names (only when X has string column names).

    Notes
    -----
    The kernel's spectral measure depends on the input dimension: the same formula can be PD in
    d = 1 and indefinite in d = 3 (docs/theory.md §1). ``fit`` uses ``X.shape[1]`` and, only for
    ``lengthscale="scale"``, the variance of X. ``fit`` raises
    :class:`~spectralkit.DivergentMassError` when the kernel has no finite spectral mass in that
    dimension (unless ``truncation`` is given).
    """
    )

    _parameter_constraints: ClassVar[dict] = _feature_constraints()

    def __init__(
        self,
        kernel: str | RadialKernel | DensityKernel = "gaussian",
        *,
        n_components: int = 256,
        method: MethodName = "orf",
        split: SplitName = "jordan",
        feature_map: FeatureMapName = "sincos",
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
        truncation: float | None = None,
        truncation_tolerance: float = TRUNCATION_TOLERANCE,
        lengthscale: float | Literal["scale"] = "scale",
        gamma: float | None = None,
        shape_matrix: ArrayLike | None = None,
        kernel_params: dict[str, float] | None = None,
    ) -> None:
        self.kernel = kernel
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
        self.kernel_params = kernel_params

    def _fit_features(self, X, sample_weight=None):
        """Draw the frequencies for ``X.shape[1]``; X (numpy, CSR or dask) is read only by
        ``lengthscale="scale"`` (a dask array: one reduction)."""
        values = {name: getattr(self, name) for name in _FEATURE_NAMES}
        values["random_state"] = _seed_for(self.random_state)
        values = validate_feature_params(values, dim=int(X.shape[1]))
        values["kernel"] = _resolve_kernel(values["kernel"], self.kernel_params)
        rf = RandomFeatures(**values).fit(X, sample_weight=sample_weight)
        self.features_ = rf
        self.kernel_ = values["kernel"]
        self.lengthscale_ = rf.lengthscale_
        self.signature_ = np.asarray(rf.signature_)
        self.mass_plus_ = float(rf.mass_plus_)
        self.mass_minus_ = float(rf.mass_minus_)
        self.n_plus_ = int(rf.n_plus_)
        self.n_minus_ = int(rf.n_minus_)
        self._n_features_out = int(self.signature_.size)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X: ArrayLike, y: object = None) -> SpectralFeatures:
        """Draw the random frequencies for the input dimension ``X.shape[1]``.

        Parameters
        ----------
        X : array-like, CSR sparse matrix or dask array of shape (n_samples, n_features)
            Its number of columns (and, for ``lengthscale="scale"``, its variance) is used. A dask
            array is not loaded (``"scale"`` reduces it once for Var(X)).
        y : ignored

        Returns
        -------
        self
        """
        if _is_dask_array(X):
            self._fit_features(_check_dask_X(X))
            self.n_features_in_ = int(X.shape[1])
            return self
        X = _validate_data(self, X, dtype=[np.float64, np.float32], accept_sparse="csr")
        return self._fit_features(X)

    def transform(self, X: ArrayLike) -> NDArray[np.float32] | NDArray[np.float64]:
        """Feature matrix ``Phi(X)`` of shape (n_samples, n_components), dtype of X (float32/64).

        Integer or other inputs are converted to float64. A CSR sparse X is featurized through
        the sparse product ``X @ W^T`` (the output is dense).
        """
        check_is_fitted(self, "features_")
        Xv: Any = _validate_data(
            self, X, reset=False, dtype=[np.float64, np.float32], order="C", accept_sparse="csr"
        )
        if scipy.sparse.issparse(Xv):
            return self.features_.transform(Xv)
        if not Xv.flags.writeable:
            # read-only inputs (memory maps) would make numba compile a second specialisation
            Xv = Xv.copy()
        return self.features_.transform(Xv)

    def kernel_approx(
        self, X: ArrayLike, Y: ArrayLike | None = None
    ) -> NDArray[np.float32] | NDArray[np.float64]:
        """Signed Gram estimate ``Phi(X) diag(signature_) Phi(Y)^T`` (unbiased for k(||x - y||))."""
        PX = self.transform(X)
        PY = PX if Y is None else self.transform(Y)
        return (PX * self.signature_.astype(PX.dtype)) @ PY.T

    # The fitted RandomFeatures holds its SpectralMeasure and samplers, whose densities may be
    # closures that the pickle module cannot serialise; the transform needs only the frequencies
    # and scales. So pickle the feature map without those (and without unpicklable caches) and
    # rebuild the (lazy, cached) measure on load.
    def __getstate__(self):
        state = dict(super().__getstate__())  # a copy: object.__getstate__ returns __dict__ itself
        rf = state.get("features_")
        if rf is not None:
            state["features_"] = _PickledFeatures(type(rf), rf.fitted_state())
        return state

    def __setstate__(self, state):
        rf = state.get("features_")
        if isinstance(rf, _PickledFeatures):
            state = dict(state, features_=rf.restore(state["kernel_"]))
        super().__setstate__(state)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True
        return tags


class _PickledFeatures:
    """A fitted RandomFeatures without its measure (see ``SpectralFeatures.__getstate__``)."""

    def __init__(self, cls, state):
        self.cls, self.state = cls, state

    def restore(self, kernel):
        measure = SpectralMeasure(kernel, self.state["n_features_in_"])  # lazy: nothing computed
        return self.cls.from_fitted_state(self.state, measure)


def _is_dask_array(X: object) -> TypeGuard[dask.array.Array]:
    return type(X).__module__.split(".")[0] == "dask" and hasattr(X, "chunks")


def _binarize(y, classes):
    """Labels -> +-1 targets as LabelBinarizer(pos_label=1, neg_label=-1) with fixed ``classes``."""
    y = np.asarray(y).ravel()
    idx = np.searchsorted(classes, y)
    idx = np.minimum(idx, len(classes) - 1)
    unknown = classes[idx] != y
    if np.any(unknown):
        raise ValueError(
            f"y contains labels not seen among the classes {list(classes)!r}: {y[unknown][:3].tolist()!r}"
        )
    Y = -np.ones((len(y), len(classes)))
    Y[np.arange(len(y)), idx] = 1.0
    return Y[:, 1:] if len(classes) == 2 else Y


def _decision_block(X, estimator):
    return estimator._decision(np.asarray(X))


def _check_dask_X(X):
    if X.ndim != 2 or np.isnan(X.shape[1]) or X.shape[1] < 1:
        raise ValueError(f"X must be a 2-D dask array with a known number of columns, got shape {X.shape}")
    return X


class _KreinRidgeBase(BaseEstimator):
    """Shared parameters, the streaming fit and the spectral solve of the Krein ridge estimators."""

    _parameter_constraints: ClassVar[dict] = {
        **_feature_constraints(),
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
    }

    def __init__(
        self,
        kernel: str | RadialKernel | DensityKernel = "gaussian",
        *,
        n_components: int = 256,
        alpha: float = 1.0,
        method: MethodName = "orf",
        split: SplitName = "jordan",
        feature_map: FeatureMapName = "sincos",
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
        truncation: float | None = None,
        truncation_tolerance: float = TRUNCATION_TOLERANCE,
        lengthscale: float | Literal["scale"] = "scale",
        gamma: float | None = None,
        shape_matrix: ArrayLike | None = None,
        kernel_params: dict[str, float] | None = None,
        fit_intercept: bool = True,
    ) -> None:
        self.kernel = kernel
        self.n_components = n_components
        self.alpha = alpha
        self.method = method
        self.split = split
        self.feature_map = feature_map
        self.random_state = random_state
        self.truncation = truncation
        self.truncation_tolerance = truncation_tolerance
        self.lengthscale = lengthscale
        self.gamma = gamma
        self.shape_matrix = shape_matrix
        self.kernel_params = kernel_params
        self.fit_intercept = fit_intercept

    def _features(self):
        return SpectralFeatures(**{name: getattr(self, name) for name in (*_FEATURE_NAMES, "kernel_params")})

    def _fit_targets(self, X, Y, weights=None):
        """Streaming fit on in-memory X (numpy or CSR) and targets Y of shape (n, t)."""
        # stages on stderr once the fit has run two seconds, in an interactive session only
        progress = Progress(f"{type(self).__name__} on {X.shape[0]} x {X.shape[1]}", "auto")
        progress.stage("frequencies")
        features = self._features()._fit_features(X, weights)
        progress.stage("streaming the features into their Gram sums")
        sums = _krein.feature_gram_sums(features.features_, X, Y, bool(self.fit_intercept), weights)
        progress.stage("Krein solve")
        fitted = self._solve(features, sums)
        progress.done()
        return fitted

    def _fit_targets_dask(self, X, Y, weights=None):
        """Map-reduce fit on a dask array X (targets Y and weights: dask or numpy, n rows)."""
        _check_dask_X(X)
        if Y.shape[0] != X.shape[0]:
            raise ValueError(f"X and y have different numbers of rows: {X.shape[0]} and {Y.shape[0]}")
        features = self._features()._fit_features(X, weights)  # X is read only by lengthscale="scale"
        slim = features.features_.portable()  # only what transform needs travels to the workers
        sums = _krein.gram_sums_dask(slim, X.rechunk({1: -1}), Y, bool(self.fit_intercept), 4, weights)
        self.n_features_in_ = int(X.shape[1])
        return self._solve(features, sums)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _sample_weight(self, X, sample_weight):
        """Checked per-row weights (None: all 1), scikit-learn's rules (finite, >= 0, n rows)."""
        if sample_weight is None:
            return None
        if _is_dask_array(X):
            w = sample_weight
            if not _is_dask_array(w):
                w = np.asarray(w, dtype=np.float64)
                if w.ndim == 0:
                    w = np.full(int(X.shape[0]), float(w))
            if w.ndim != 1 or w.shape[0] != X.shape[0]:
                raise ValueError(f"sample_weight must have shape ({X.shape[0]},), got {w.shape}")
            return w
        return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)

    def _solve(self, features, sums):
        a = float(self.alpha)
        J = features.signature_.astype(np.float64)
        G = sums.gram_matrix()
        coef, lam, tau, n_damped = _krein.krein_solve(G, sums.cross, J, a)
        mu = np.abs(np.append(lam + a, a))
        with np.errstate(over="ignore"):  # a tiny alpha: an infinite condition number
            cond = float(mu.max() / mu.min()) if mu.min() > 0 else float("inf")
        if n_damped:
            warnings.warn(
                f"Krein ridge with alpha={self.alpha!r}: -alpha is within {tau:.3g} of "
                f"{n_damped} eigenvalue(s) of the indefinite Gram matrix (condition number {cond:.3g}); "
                "the solution is ill-posed there and those directions were damped (Tikhonov filter). "
                "Choose another alpha (e.g. by cross-validation)",
                RuntimeWarning,
                stacklevel=3,
            )
        b = sums.cross
        with np.errstate(over="ignore", invalid="ignore"):  # an overflowing residual is inf
            r = G @ coef + a * (J[:, None] * coef) - b
            # norms of the scaled vectors: targets near 1e300 overflow the sums of squares
            scale = max(float(np.abs(r).max(initial=0.0)), float(np.abs(b).max(initial=0.0)))
            scale = scale if 0.0 < scale < math.inf else 1.0
            res = np.linalg.norm(r / scale) / max(np.linalg.norm(b / scale), np.finfo(float).tiny)
        self.features_ = features
        self.lengthscale_ = features.lengthscale_
        self.signature_ = features.signature_
        self.coef_ = coef  # (s, t)
        self.intercept_ = sums.y_mean - sums.mean @ coef
        self.krein_eigenvalues_ = lam
        self.condition_number_ = cond
        self.n_damped_ = n_damped
        self.solve_residual_ = float(res)
        return self

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        if _is_dask_array(X):
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                raise ValueError(
                    f"X has shape {X.shape}, but this estimator was fitted for {self.n_features_in_} features"
                )
            from dask.base import tokenize  # the dask extra

            X = X.rechunk({1: -1})
            t = self.coef_.shape[1]
            # name from the graph and the coefficients: tokenizing the estimator would hash its measure
            rf = self.features_.features_
            name = "krein-decision-" + tokenize(X.name, self.coef_, self.intercept_, rf.W_plus_, rf.W_minus_)
            return X.map_blocks(
                _decision_block,
                self,
                dtype=np.float64,
                chunks=(X.chunks[0], (t,)),
                meta=np.empty((0, t)),
                name=name,
            )
        X = _validate_data(
            self, X, reset=False, dtype=[np.float64, np.float32], order="C", accept_sparse="csr"
        )
        if not scipy.sparse.issparse(X) and not X.flags.writeable:
            X = X.copy()
        rf = self.features_.features_
        n, width = X.shape[0], self.coef_.shape[0]
        out = np.empty((n, self.coef_.shape[1]))
        rows = min(_krein.block_rows(width), max(n, 1))
        buf = np.empty((rows, width), dtype=X.dtype)
        for a in range(0, n, rows):  # blockwise: predict never forms the n x s features either
            m = min(rows, n - a)
            if scipy.sparse.issparse(X):
                buf[:m] = rf.transform(X[a : a + m])
            else:
                rf.transform(X[a : a + m], out=buf[:m])
            np.matmul(buf[:m], self.coef_, out=out[a : a + m])
        out += self.intercept_
        return out


_KREIN_DOC = (
    """
    Parameters
    ----------
    The feature-map parameters of :data:`spectralkit.features.FEATURE_PARAMS`, as in
    :class:`SpectralFeatures`:

"""
    + _feature_params_doc()
    + """
    kernel_params : dict, optional
        As in :class:`SpectralFeatures`.
    alpha : float > 0, default 1.0
        Ridge parameter lambda (scikit-learn's Ridge default). For an indefinite kernel the exact
        problem is singular when -alpha is an eigenvalue of the Gram matrix ``Phi J Phi^T``; near
        such alpha the fit damps the offending directions and warns (see Notes).
    fit_intercept : bool, default True
        Fit an unpenalised intercept (features and targets are centred).

    With n_components = s, fit costs O(n s^2 + s^3) time and O(s^2) memory beyond the data (the
    n x s feature matrix is never formed: see Notes). With a small alpha, keep s well away from
    the number of training rows n: near s = n the random-feature ridge solution interpolates
    through an ill-conditioned Phi (the double-descent peak).

    Attributes
    ----------
    features_ : SpectralFeatures
        The fitted feature map.
    lengthscale_ : float
        The length scale used (the number chosen by ``lengthscale="scale"``).
    signature_ : ndarray of shape (n_components,)
        The diagonal of J.
    coef_ : ndarray of shape (n_components, n_targets)
        ``(Phi^T Phi + alpha J)^(-1) Phi^T y`` (centred features and targets when fit_intercept);
        predictions are ``Phi(x) coef_ + intercept_``.
    intercept_ : ndarray of shape (n_targets,)
    krein_eigenvalues_ : ndarray of shape (rank,)
        The non-zero eigenvalues lam of the (centred) indefinite Gram matrix ``Phi J Phi^T``,
        ascending; the problem is singular where lam = -alpha.
    condition_number_ : float
        Condition number of ``K + alpha I`` on the span of the features:
        ``max |lam + alpha| / min |lam + alpha|`` (alpha included); large values mean -alpha is
        close to an eigenvalue of K.
    n_damped_ : int
        Directions damped by the spectral filter (0 unless -alpha is within 1e-3 alpha of an
        eigenvalue of K; a RuntimeWarning is issued then).
    solve_residual_ : float
        Relative residual ``||(Phi^T Phi + alpha J) coef - Phi^T y|| / ||Phi^T y||`` (its
        accuracy; larger where directions were damped).
    n_features_in_ : int

    Notes
    -----
    Fit streams X through the feature map in row blocks of about 16 MB of features and
    accumulates ``G = Phi^T Phi`` and ``b = Phi^T y`` (BLAS ``dsyrk`` / ``dgemm``; each block is
    centred on its own means and merged by the pairwise update of Chan, Golub and LeVeque), so n
    is limited by time, not memory; ``predict`` works in blocks too. X may also be a dask array
    (y a dask or numpy array): the block sums are computed on the workers and reduced in a tree
    (:func:`spectralkit.dask.gram_sums_dask`), and ``predict`` / ``decision_function`` of a
    dask array return lazy dask arrays.

    The s x s system ``(G + alpha J) coef = b`` is symmetric indefinite and is solved
    spectrally. A pivoted (rank-revealing) Cholesky factorisation ``G = P R^T R P^T`` gives
    ``Phi = Q T`` with ``T = R P^T``; the non-zero eigenvalues lam of the indefinite Gram matrix
    ``K = Phi J Phi^T`` are those of the symmetric ``H = T J T^T = U diag(lam) U^T``, and
    ``coef = J T^T U g(lam + alpha) U^T z`` with ``z = Q^T y``. With ``g(mu) = 1/mu`` this is the
    exact Krein ridge solution, computed by LU of ``H + alpha I`` when the eigenvalues (computed
    first, without eigenvectors) show that no direction needs damping. For lam >= 0,
    mu >= alpha > 0 (as well-posed as ordinary ridge); only a negative lam near -alpha can make
    mu vanish. Within the window ``|mu| < tau = 1e-3 alpha`` around such a singularity, where LU
    on ``G + alpha J`` returns noise, ``g`` is the line ``mu / tau^2`` instead (a spectrum-aware
    regulariser): continuous in alpha through the singularity, zero at it, bounded by ``1 / tau``
    (1000 times the largest gain 1/alpha of ordinary ridge), and exactly ``1/mu`` everywhere
    else.
    Cost O(s^3) (``dpstrf``, the product ``T J T^T``, ``eigvalsh`` and LU; ``eigh`` only near a
    singularity) on top of the O(n s^2) sums.
"""
)


class KreinRidgeRegressor(RegressorMixin, _KreinRidgeBase):
    __doc__ = (
        """Kernel ridge regression with an indefinite kernel, on signed random features.

    Minimises the Krein-space ridge objective whose stationary point is
    ``f(x) = phi(x)^T J (Phi^T Phi J + alpha I)^(-1) Phi^T y`` (docs/theory.md §2), i.e. kernel ridge
    with the estimated Gram matrix ``K = Phi J Phi^T``. With a positive definite kernel it equals
    :class:`sklearn.linear_model.Ridge` on the features.
"""
        + _KREIN_DOC
    )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X: ArrayLike | dask.array.Array,
        y: ArrayLike | dask.array.Array,
        sample_weight: ArrayLike | dask.array.Array | None = None,
    ) -> KreinRidgeRegressor:
        """Fit on X (n_samples, n_features) and y (n_samples,) or (n_samples, n_targets).

        X may be a CSR sparse matrix, or a dask array (y and sample_weight then dask or numpy
        arrays): see Notes. ``sample_weight`` (n_samples,) >= 0 weighs the squared errors:
        ``G = Phi^T W Phi`` and ``b = Phi^T W y`` (weighted means with fit_intercept), as
        scikit-learn's Ridge.
        """
        if _is_dask_array(X):
            if not _is_dask_array(y):
                y = np.asarray(y, dtype=np.float64)
            if y.ndim not in (1, 2):
                raise ValueError(f"y must be 1-D or 2-D, got shape {y.shape}")
            self._single_output = y.ndim == 1
            return self._fit_targets_dask(
                X, y.reshape((y.shape[0], -1)), self._sample_weight(X, sample_weight)
            )
        X, y = _validate_data(
            self, X, y, dtype=[np.float64, np.float32], multi_output=True, y_numeric=True, accept_sparse="csr"
        )
        Y = np.asarray(y, dtype=np.float64)
        self._single_output = Y.ndim == 1
        self._fit_targets(X, Y.reshape(len(Y), -1), self._sample_weight(X, sample_weight))
        return self

    def predict(self, X: ArrayLike | dask.array.Array) -> NDArray[np.float64] | dask.array.Array:
        """Predictions, shape (n_samples,) or (n_samples, n_targets)."""
        out = self._decision(X)
        return out[:, 0] if self._single_output else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


class KreinRidgeClassifier(ClassifierMixin, _KreinRidgeBase):
    __doc__ = (
        """Krein ridge classification: ridge regression on labels binarised to +-1.

    Each class gets a one-vs-rest Krein ridge regressor on targets in {-1, +1} (binary problems: a
    single one); ``predict`` takes the sign (binary) or the arg-max of the decision values.
"""
        + _KREIN_DOC
        + """    classes_ : ndarray
        The class labels.
"""
    )

    _parameter_constraints: ClassVar[dict] = {
        **_KreinRidgeBase._parameter_constraints,
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        kernel: str | RadialKernel | DensityKernel = "gaussian",
        *,
        n_components: int = 256,
        alpha: float = 1.0,
        method: MethodName = "orf",
        split: SplitName = "jordan",
        feature_map: FeatureMapName = "sincos",
        random_state: int | np.random.Generator | np.random.RandomState | None = None,
        truncation: float | None = None,
        truncation_tolerance: float = TRUNCATION_TOLERANCE,
        lengthscale: float | Literal["scale"] = "scale",
        gamma: float | None = None,
        shape_matrix: ArrayLike | None = None,
        kernel_params: dict[str, float] | None = None,
        fit_intercept: bool = True,
        class_weight: dict[Any, float] | Literal["balanced"] | None = None,
    ) -> None:
        super().__init__(
            kernel,
            n_components=n_components,
            alpha=alpha,
            method=method,
            split=split,
            feature_map=feature_map,
            random_state=random_state,
            truncation=truncation,
            truncation_tolerance=truncation_tolerance,
            lengthscale=lengthscale,
            gamma=gamma,
            shape_matrix=shape_matrix,
            kernel_params=kernel_params,
            fit_intercept=fit_intercept,
        )
        self.class_weight = class_weight

    def _row_weights(self, X, y, sample_weight):
        """sample_weight times the class weights of the labels (None when both are None)."""
        w = self._sample_weight(X, sample_weight)
        if self.class_weight is None:
            return w
        cw = compute_sample_weight(self.class_weight, np.asarray(y).ravel())
        if w is None:
            return cw
        return w * cw

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X: ArrayLike | dask.array.Array,
        y: ArrayLike | dask.array.Array,
        sample_weight: ArrayLike | dask.array.Array | None = None,
    ) -> KreinRidgeClassifier:
        """Fit on X (n_samples, n_features) and class labels y (n_samples,).

        X may be a CSR sparse matrix, or a dask array (y and sample_weight then dask or numpy
        arrays): see Notes. ``sample_weight`` weighs each row's squared error, ``class_weight``
        multiplies it by the weight of the row's class (``"balanced"``: n / (n_classes n_c)),
        as in scikit-learn's RidgeClassifier.
        """
        if _is_dask_array(X):
            labels = np.asarray(y.compute() if _is_dask_array(y) else y).ravel()
            classes = np.unique(labels)
            self._check_classes(classes)
            self.classes_ = classes
            if _is_dask_array(y):
                width = 1 if len(classes) == 2 else len(classes)
                Y = y.ravel().map_blocks(
                    _binarize, classes, dtype=np.float64, new_axis=1, chunks=(y.ravel().chunks[0], (width,))
                )
            else:
                Y = _binarize(y, classes)
            weights = self._sample_weight(X, sample_weight)
            if self.class_weight is not None:
                cw = compute_sample_weight(self.class_weight, labels)
                weights = cw if weights is None else weights * cw
            return self._fit_targets_dask(X, Y, weights)
        X, y = _validate_data(self, X, y, dtype=[np.float64, np.float32], accept_sparse="csr")
        lb = LabelBinarizer(pos_label=1, neg_label=-1)
        Y = lb.fit_transform(y).astype(np.float64)
        self._check_classes(lb.classes_)
        self.classes_ = lb.classes_
        self._fit_targets(X, Y, self._row_weights(X, y, sample_weight))
        return self

    @staticmethod
    def _check_classes(classes):
        if len(classes) < 2:
            raise ValueError(f"y must contain samples of at least 2 classes; got 1 class ({classes[0]!r})")

    def decision_function(self, X: ArrayLike | dask.array.Array) -> NDArray[np.float64] | dask.array.Array:
        """Decision values: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X: ArrayLike | dask.array.Array) -> NDArray[Any] | dask.array.Array:
        """Predicted class labels (a lazy dask array for a dask X)."""
        scores = self.decision_function(X)
        if _is_dask_array(scores):
            return scores.map_blocks(
                self._labels, dtype=self.classes_.dtype, drop_axis=list(range(1, scores.ndim))
            )
        return self._labels(scores)

    def _labels(self, scores):
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
