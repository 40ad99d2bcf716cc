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

(using J^2 = I), a symmetric indefinite s x s system solved in O(n s^2 + s^3) for s feature
columns. With a positive definite kernel (J = I) this is ordinary ridge regression on the features.

Examples
--------
>>> import numpy as np
>>> from spectralkit.sklearn import SpectralFeatures, KreinRidgeRegressor
>>> X = np.random.default_rng(0).uniform(size=(50, 3))
>>> sf = SpectralFeatures("delta_gaussian:sigma1=1,sigma2=10", n_components=64, random_state=0).fit(X)
>>> sf.transform(X).shape
(50, 64)
"""

import numbers
import warnings

import numpy as np
import scipy.linalg
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    ClassNamePrefixFeaturesOutMixin,
    RegressorMixin,
    TransformerMixin,
)
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils.validation import check_is_fitted, validate_data

from .features import RandomFeatures
from .kernels import DensityKernel, RadialKernel, from_spec
from .measures import SpectralMeasure

__all__ = ["SpectralFeatures", "KreinRidgeRegressor", "KreinRidgeClassifier"]

_METHODS = ("rff", "orf", "gorf")
_SPLITS = ("jordan", "terms")
_FEATURE_MAPS = ("sincos", "cos")


def _check_choice(name, value, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


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


class SpectralFeatures(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Random features of a (possibly indefinite) radial kernel, as a scikit-learn transformer.

    Parameters
    ----------
    kernel : str or RadialKernel, default "delta_gaussian"
        A library spec (``"matern:nu=1.5"``, ``"delta_gaussian:sigma1=1,sigma2=10"``), a formula in
        ``r`` (``"exp(-r**2/2) - 0.5*exp(-r**2/8)"``) or a :class:`~spectralkit.RadialKernel`.
    n_components : int, default 256
        Output width (number of feature columns).
    method : {"rff", "orf", "gorf"}, default "orf"
        i.i.d. frequencies, orthogonal blocks per part, or jointly orthogonal + and - blocks.
    split : {"jordan", "terms"}, default "jordan"
        Decomposition mu = mu+ - mu-: the minimal Jordan split, or by the signs of the terms of a
        linear combination (the papers' choice, larger masses).
    feature_map : {"sincos", "cos"}, default "sincos"
        ``[cos(Wx), sin(Wx)]`` pairs or random-phase cosines ``sqrt(2) cos(Wx + b)``.
    random_state : int, numpy Generator, RandomState or None, default None
        Seed for the frequencies.
    kernel_params : dict, optional
        Parameter values for ``kernel`` (library keyword arguments, or a formula's parameters).

    Attributes
    ----------
    features_ : spectralkit.features.RandomFeatures
        The fitted feature map.
    kernel_ : RadialKernel
        The kernel.
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
    d = 1 and indefinite in d = 3 (docs/theory.md §1). ``fit`` uses only ``X.shape[1]``, never the
    values of X. ``fit`` raises :class:`~spectralkit.DivergentMassError` when the kernel has no
    finite spectral mass in that dimension.
    """

    def __init__(self, kernel="delta_gaussian", n_components=256, method="orf", split="jordan",
                 feature_map="sincos", random_state=None, kernel_params=None):
        self.kernel = kernel
        self.n_components = n_components
        self.method = method
        self.split = split
        self.feature_map = feature_map
        self.random_state = random_state
        self.kernel_params = kernel_params

    def _validate_params_(self):
        n = self.n_components
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"n_components must be an integer >= 1, got {n!r}")
        _check_choice("method", self.method, _METHODS)
        _check_choice("split", self.split, _SPLITS)
        _check_choice("feature_map", self.feature_map, _FEATURE_MAPS)
        return _resolve_kernel(self.kernel, self.kernel_params)

    def _fit_dim(self, dim):
        """Draw the frequencies for input dimension ``dim`` (no data needed)."""
        kernel = self._validate_params_()
        rf = RandomFeatures(kernel, dim=int(dim), n_components=int(self.n_components),
                            method=self.method, split=self.split, feature_map=self.feature_map,
                            random_state=_seed_for(self.random_state))
        rf.fit()
        self.features_ = rf
        self.kernel_ = kernel
        self.signature_ = np.asarray(rf.signature_)
        self.mass_plus_ = float(rf.mass_plus_)
        self.mass_minus_ = float(rf.mass_minus_)
        self.n_plus_ = int(rf.n_plus_)
        self.n_minus_ = int(rf.n_minus_)
        self._n_features_out = int(self.signature_.size)
        return self

    def fit(self, X, y=None):
        """Draw the random frequencies for the input dimension ``X.shape[1]``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Only its number of columns is used (and it is validated).
        y : ignored

        Returns
        -------
        self
        """
        X = validate_data(self, X, dtype=[np.float64, np.float32])
        return self._fit_dim(X.shape[1])

    def transform(self, X):
        """Feature matrix ``Phi(X)`` of shape (n_samples, n_components), dtype of X (float32/64).

        Integer or other inputs are converted to float64.
        """
        check_is_fitted(self, "features_")
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32], order="C")
        if not X.flags.writeable:
            # read-only inputs (memory maps) would make numba compile a second specialisation
            X = X.copy()
        return self.features_.transform(X)

    def kernel_approx(self, X, Y=None):
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
            state["features_"] = _PickledFeatures(type(rf), rf._transform_state())
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
        return tags


class _PickledFeatures:
    """A fitted RandomFeatures without its measure (see ``SpectralFeatures.__getstate__``)."""

    def __init__(self, cls, state):
        self.cls, self.state = cls, state

    def restore(self, kernel):
        rf = self.cls.__new__(self.cls)
        vars(rf).update(self.state)
        rf.measure_ = SpectralMeasure(kernel, self.state["n_features_in_"])  # lazy: nothing computed
        rf.samplers_ = None
        return rf


class _KreinRidgeBase(BaseEstimator):
    """Shared parameters and the solver of the Krein ridge estimators."""

    def __init__(self, kernel="delta_gaussian", n_components=256, alpha=1.0, method="orf",
                 split="jordan", feature_map="sincos", random_state=None, kernel_params=None,
                 fit_intercept=True):
        self.kernel = kernel
        self.n_components = n_components
        self.alpha = alpha
        self.method = method
        self.split = split
        self.feature_map = feature_map
        self.random_state = random_state
        self.kernel_params = kernel_params
        self.fit_intercept = fit_intercept

    def _features(self):
        return SpectralFeatures(kernel=self.kernel, n_components=self.n_components, method=self.method,
                                split=self.split, feature_map=self.feature_map,
                                random_state=self.random_state, kernel_params=self.kernel_params)

    def _fit_targets(self, X, Y):
        """Solve (Phi^T Phi + alpha J) coef = Phi^T Y; Y of shape (n, t)."""
        a = self.alpha
        if isinstance(a, bool) or not isinstance(a, numbers.Real) or not np.isfinite(a) or a <= 0:
            raise ValueError(f"alpha must be a finite number > 0, got {a!r}")
        if not isinstance(self.fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False, got {self.fit_intercept!r}")
        features = self._features().fit(X)
        Phi = np.asarray(features.transform(X), dtype=np.float64)
        J = features.signature_.astype(np.float64)
        if self.fit_intercept:
            # unpenalised intercept: centre features and targets (as sklearn's Ridge does)
            phi_mean = Phi.mean(axis=0)
            y_mean = Y.mean(axis=0)
            Phi = Phi - phi_mean
            Yc = Y - y_mean
        else:
            phi_mean = np.zeros(Phi.shape[1])
            y_mean = np.zeros(Y.shape[1])
            Yc = Y
        # symmetric indefinite s x s system G + alpha J (J^2 = I turns the non-symmetric
        # Phi^T Phi J + alpha I of the formula into it). LU with partial pivoting is the fastest
        # stable factorisation here (OpenBLAS's symmetric-indefinite one is several times slower),
        # and LAPACK's condition estimate from the factors is the diagnostic that matters: the
        # Krein ridge problem is not convex and is ill-posed when -alpha is close to an
        # eigenvalue of the indefinite Gram matrix.
        A = Phi.T @ Phi
        A[np.diag_indices_from(A)] += a * J
        b = Phi.T @ Yc
        anorm = np.linalg.norm(A, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)  # judged by rcond below
            lu, piv = scipy.linalg.lu_factor(A, check_finite=False)
        rcond, _ = scipy.linalg.lapack.dgecon(lu, anorm, norm="1")
        if not rcond > A.shape[0] * np.finfo(float).eps:
            raise ValueError(
                f"the Krein ridge system is singular for alpha={a!r}: -alpha is an eigenvalue of the "
                "indefinite Gram matrix (to machine precision); choose another alpha"
            )
        coef = scipy.linalg.lu_solve((lu, piv), b, check_finite=False)
        cond = float(1.0 / rcond)
        if cond > 1e10:
            warnings.warn(
                f"Krein ridge with alpha={a!r} is ill-conditioned (condition number {cond:.3g}): -alpha "
                "is close to an eigenvalue of the indefinite Gram matrix and the solution is unstable; "
                "choose another alpha (e.g. by cross-validation)", RuntimeWarning, stacklevel=3)
        res = np.linalg.norm(A @ coef - b) / max(np.linalg.norm(b), np.finfo(float).tiny)
        self.condition_number_ = cond
        self.features_ = features
        self.signature_ = features.signature_
        self.coef_ = coef  # (s, t)
        self.intercept_ = y_mean - phi_mean @ coef
        self.solve_residual_ = float(res)
        return self

    def _decision(self, X):
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, reset=False, dtype=[np.float64, np.float32])
        Phi = np.asarray(self.features_.transform(X), dtype=np.float64)
        return Phi @ self.coef_ + self.intercept_


_KREIN_DOC = """
    Parameters
    ----------
    kernel : str or RadialKernel, default "delta_gaussian"
        As in :class:`SpectralFeatures`.
    n_components : int, default 256
        Number of feature columns s; fit costs O(n s^2 + s^3). Keep s well away from the number
        of training rows n when alpha is small: near s = n the random-feature ridge solution
        interpolates through an ill-conditioned Phi (the double-descent peak) and its training
        error can be large even though the exact kernel fits well.
    alpha : float > 0, default 1.0
        Ridge parameter lambda. For an indefinite kernel the system is singular when -alpha is an
        eigenvalue of the Gram matrix ``Phi J Phi^T``; fit then raises ValueError.
    method, split, feature_map, random_state, kernel_params
        As in :class:`SpectralFeatures`.
    fit_intercept : bool, default True
        Fit an unpenalised intercept (features and targets are centred).

    Attributes
    ----------
    features_ : SpectralFeatures
        The fitted feature map.
    signature_ : ndarray of shape (n_components,)
        The diagonal of J.
    coef_ : ndarray of shape (n_components, n_targets)
        ``(Phi^T Phi + alpha J)^(-1) Phi^T y``; predictions are ``Phi(x) coef_ + intercept_``.
    intercept_ : ndarray of shape (n_targets,)
    solve_residual_ : float
        Relative residual ``||A coef - b|| / ||b||`` of the linear solve (its accuracy).
    condition_number_ : float
        LAPACK's estimate of the 1-norm condition number of ``A = Phi^T Phi + alpha J`` (centred
        features): large values (a RuntimeWarning above 1e10) mean -alpha is close to an
        eigenvalue of the indefinite Gram matrix and the fit is unstable; choose alpha by
        cross-validation.
    n_features_in_ : int
"""


class KreinRidgeRegressor(RegressorMixin, _KreinRidgeBase):
    __doc__ = ("""Kernel ridge regression with an indefinite kernel, on signed random features.

    Minimises the Krein-space ridge objective whose stationary point is
    ``f(x) = phi(x)^T J (Phi^T Phi J + alpha I)^(-1) Phi^T y`` (docs/theory.md §2), i.e. kernel ridge
    with the estimated Gram matrix ``K = Phi J Phi^T``. With a positive definite kernel it equals
    :class:`sklearn.linear_model.Ridge` on the features.
""" + _KREIN_DOC)

    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and y (n_samples,) or (n_samples, n_targets)."""
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32], multi_output=True,
                             y_numeric=True)
        Y = np.asarray(y, dtype=np.float64)
        self._single_output = Y.ndim == 1
        self._fit_targets(X, Y.reshape(len(Y), -1))
        return self

    def predict(self, X):
        """Predictions, shape (n_samples,) or (n_samples, n_targets)."""
        out = self._decision(X)
        return out[:, 0] if self._single_output else out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        tags.target_tags.single_output = True
        return tags


class KreinRidgeClassifier(ClassifierMixin, _KreinRidgeBase):
    __doc__ = ("""Krein ridge classification: ridge regression on labels binarised to +-1.

    Each class gets a one-vs-rest Krein ridge regressor on targets in {-1, +1} (binary problems: a
    single one); ``predict`` takes the sign (binary) or the arg-max of the decision values.
""" + _KREIN_DOC + """    classes_ : ndarray
        The class labels.
""")

    def fit(self, X, y):
        """Fit on X (n_samples, n_features) and class labels y (n_samples,)."""
        X, y = validate_data(self, X, y, dtype=[np.float64, np.float32])
        lb = LabelBinarizer(pos_label=1, neg_label=-1)
        Y = lb.fit_transform(y).astype(np.float64)
        self.classes_ = lb.classes_
        if len(self.classes_) < 2:
            raise ValueError(f"y must contain samples of at least 2 classes; got 1 class ({self.classes_[0]!r})")
        self._fit_targets(X, Y)
        return self

    def decision_function(self, X):
        """Decision values: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = self._decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted class labels."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
