"""Lazy featurization of dask arrays (extra ``dask``).

:func:`transform_dask` maps a fitted feature map over the row blocks of a ``dask.array`` with
``map_blocks``: nothing is computed until you call ``.compute()`` / ``.persist()`` / ``to_zarr``,
and every block is featurized independently with the same frequencies, so the result equals the
in-memory ``transform`` of the whole array: bit for bit when every row chunk but the last is a
multiple of 512 rows (the compiled kernel's GEMM blocks, 256 rows in float64 and 512 in float32,
then coincide), otherwise up to the rounding of the phases w . x, which the GEMM sums in another
order: ``|difference| <= s d eps sum_i |w_i x_i|`` per feature of scale s (measured: 1.5e-15 in
float64 and 7e-7 in float32 for features of scale 0.125 in d = 64 with chunks of 7 or 333 rows).
:class:`DaskSpectralFeatures` wraps this in the scikit-learn interface;
:func:`fit_dask` draws the frequencies for ``X.shape[1]``; the data are read only by the default
``lengthscale="scale"`` (Var(X), one reduction), exactly as the in-memory estimators compute it,
so a model moved to dask is the same model.

The columns of X are rechunked into a single block (a feature row needs the whole input row);
rows stay chunked as they are. Output chunks are ``(X.chunks[0], (n_components,))``.

On a multi-machine cluster the same code runs unchanged: connect a
``dask.distributed.Client("tcp://scheduler:8786")`` first. The fitted feature map is shipped to
the workers with the task graph (a few arrays: the frequencies and scales), so workers need
spectralkit installed (same version) but do not recompute the spectral measure. See
docs/guide-dask.md.
"""

from __future__ import annotations

import inspect
import numbers
import re
from typing import TYPE_CHECKING, Any, Literal, overload

import dask.array as da
import numpy as np
from dask.base import tokenize
from numpy.typing import ArrayLike, DTypeLike, NDArray

from . import _krein, _runtime
from ._validation import changed_params, not_fitted_error, params_fingerprint
from .features import (
    FEATURE_PARAMS,
    TRUNCATION_TOLERANCE,
    FeatureMapName,
    MethodName,
    RandomFeatures,
    SplitName,
    validate_feature_params,
)
from .kernels import DensityKernel, RadialKernel, from_spec

if TYPE_CHECKING:  # annotations only: dask.dataframe and scikit-learn are optional
    import dask.dataframe

    from .sklearn import SpectralFeatures

__all__ = ["fit_dask", "transform_dask", "gram_sums_dask", "DaskSpectralFeatures"]


def _is_dask_dataframe(X):
    # duck-typed: dask.dataframe (and pandas) are optional
    return hasattr(X, "to_dask_array") and hasattr(X, "columns") and hasattr(X, "dtypes")


def _dataframe_columns(X):
    """Number of columns of a dask DataFrame, after checking their dtypes (no data is read)."""

    def real_numeric(t):
        try:
            t = np.dtype(t)
        except TypeError:  # pandas extension dtypes (strings, categories)
            return False
        return (np.issubdtype(t, np.number) or t == np.bool_) and not np.issubdtype(t, np.complexfloating)

    bad = [f"{c!r} ({t})" for c, t in zip(X.columns, X.dtypes) if not real_numeric(t)]
    if bad:
        raise ValueError(f"X must have real numeric columns, got {', '.join(bad[:5])}")
    if len(X.columns) < 1:
        raise ValueError("X must have at least one feature column, got none")
    return len(X.columns)


def _check_numba_threads(n):
    if n is not None and (isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1):
        raise ValueError(f"numba_threads must be None or an integer >= 1, got {n!r}")


def _check_dask_array(X):
    if not isinstance(X, da.Array):
        raise TypeError(f"X must be a dask.array.Array, got {type(X).__name__} (use dask.array.from_array)")
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
    if not np.isnan(X.shape[1]) and X.shape[1] < 1:
        raise ValueError(f"X must have at least one feature column, got shape {X.shape}")
    if np.isnan(X.shape[1]):
        raise ValueError("X must have a known number of columns (call X.compute_chunk_sizes())")
    numeric = np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_
    if not numeric or np.issubdtype(X.dtype, np.complexfloating):
        raise ValueError(f"X must be real numeric, got dtype {X.dtype}")
    return X


@overload  # first: with untyped scikit-learn bases SpectralFeatures also matches RandomFeatures
def fit_dask(features: SpectralFeatures, X: da.Array) -> SpectralFeatures: ...
@overload
def fit_dask(features: RandomFeatures, X: da.Array) -> RandomFeatures: ...
def fit_dask(features: RandomFeatures | SpectralFeatures, X: da.Array) -> RandomFeatures | SpectralFeatures:
    """Fit ``features`` for the dimension of the dask array ``X``.

    The values of X are read only by ``lengthscale="scale"`` (the default): the length scale
    from Var(X), one reduction over the dask array; pass a number (or ``gamma``) to avoid it.

    Parameters
    ----------
    features : RandomFeatures or SpectralFeatures
        An unfitted (or fitted) feature map; RandomFeatures gets ``fit()`` with ``dim`` set to
        ``X.shape[1]``, SpectralFeatures gets its frequencies drawn for that dimension.
    X : dask.array.Array of shape (n_samples, n_features)

    Returns
    -------
    features
        The same object, fitted.
    """
    X = _check_dask_array(X)
    dim = int(X.shape[1])
    if isinstance(features, RandomFeatures):
        if features.dim is not None and features.dim != dim:
            raise ValueError(f"features were configured for dim={features.dim} but X has {dim} columns")
        features.set_params(dim=dim)
        return features.fit(X)
    if hasattr(features, "fit") and hasattr(features, "_parameter_constraints"):  # SpectralFeatures
        return features.fit(X)  # takes dask arrays without loading them
    raise TypeError(f"features must be a RandomFeatures or SpectralFeatures, got {type(features).__name__}")


def _portable(features):
    """A shallow copy of the fitted RandomFeatures holding only what ``transform`` needs.

    The fitted object references its SpectralMeasure (sympy-derived closures, tables); shipping
    that to every task would make the graph large and slow to serialise. The frequencies, scales
    and signature are a few small arrays.
    """
    rf = getattr(features, "features_", features)  # SpectralFeatures / DaskSpectralFeatures wrap one
    return rf.portable()


_ROW_IN_MESSAGE = re.compile(r"\bat row (\d+)")


def _transform_block(block, features, dtype, numba_threads, block_info=None):
    # each task featurizes one row block; C-contiguous input of the output dtype. Errors name the
    # row of the whole array (the block's first row is block_info's array location).
    start = 0
    if block_info and 0 in block_info:
        start = int(block_info[0]["array-location"][0][0])
    raw = np.asarray(block)
    if raw.dtype.kind == "f" and raw.dtype.itemsize > np.dtype(dtype).itemsize:
        # a wider float (long double): values beyond the output dtype would become inf on casting
        with np.errstate(invalid="ignore"):
            beyond = np.isfinite(raw) & (np.abs(raw) > np.finfo(dtype).max)
        if np.any(beyond):
            row, col = np.argwhere(beyond)[0]
            raise ValueError(
                f"X has values beyond the {np.dtype(dtype).name} range (first at row {start + int(row)}, "
                f"column {int(col)}: {raw[row, col]!r}); rescale X"
            )
    block = np.ascontiguousarray(raw, dtype=dtype)
    if not block.flags.writeable:  # read-only blocks would trigger a second numba specialisation
        block = block.copy()
    try:
        with _runtime.numba_threads(numba_threads):
            return features.transform(block)
    except ValueError as exc:
        if not start or not _ROW_IN_MESSAGE.search(str(exc)):
            raise
        text = _ROW_IN_MESSAGE.sub(lambda m: f"at row {start + int(m.group(1))}", str(exc))
        raise type(exc)(text) from exc


def transform_dask(
    features: RandomFeatures | SpectralFeatures,
    X: da.Array,
    *,
    dtype: DTypeLike | None = None,
    numba_threads: int | None = None,
) -> da.Array:
    """Featurize a dask array lazily: ``map_blocks`` of ``features.transform`` over row blocks.

    Parameters
    ----------
    features : RandomFeatures or SpectralFeatures
        A feature map; fitted here for ``X.shape[1]`` if not fitted yet (no data is read).
    X : dask.array.Array of shape (n_samples, n_features)
        Any row chunking; the columns are rechunked into one block.
    dtype : {numpy.float32, numpy.float64}, optional
        Output dtype (default: float32 for float32 X, else float64), as in ``transform``.
    numba_threads : int, optional
        numba threads of each task (None: numba's default, all cores). With several dask
        workers or worker threads per machine, 1 avoids oversubscribing the cores.

    Returns
    -------
    dask.array.Array of shape (n_samples, n_components)
        Lazy; chunks ``(X.chunks[0], (n_components,))``.
    """
    X = _check_dask_array(X)
    _check_numba_threads(numba_threads)
    if dtype is None:
        dtype = np.float32 if X.dtype == np.float32 else np.float64
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dtype}")
    fitted = hasattr(features, "signature_")
    if not fitted:
        fit_dask(features, X)
    dim = int(X.shape[1])
    fitted_dim = getattr(features, "n_features_in_", dim)
    if fitted_dim != dim:
        raise ValueError(f"X has {dim} columns but the features were fitted for dim={fitted_dim}")
    width = int(np.asarray(features.signature_).size)
    slim = _portable(features)
    X = X.rechunk({1: -1})
    # a deterministic key from the input graph and the frequencies (tokenizing the whole fitted
    # object would hash its measure)
    token = tokenize(
        X.name,
        dtype,
        width,
        slim.W_plus_,
        slim.W_minus_,
        np.asarray(slim.signature_),
        getattr(slim, "scale_plus_", None),
        getattr(slim, "scale_minus_", None),
        getattr(slim, "offsets_plus_", None),
        getattr(slim, "offsets_minus_", None),
    )
    return X.map_blocks(
        _transform_block,
        slim,
        dtype,
        numba_threads,
        dtype=dtype,
        chunks=(X.chunks[0], (width,)),
        meta=np.empty((0, width), dtype=dtype),
        name=f"spectralkit-features-{token}",
    )


def gram_sums_dask(
    features: RandomFeatures | SpectralFeatures,
    X: da.Array,
    Y: da.Array | NDArray[Any],
    *,
    fit_intercept: bool = True,
    split_every: int = 4,
) -> _krein.GramSums:
    """Map-reduce of the ridge sums ``Phi^T Phi`` and ``Phi^T Y`` over the row blocks of X.

    Each task streams one row block of X through the feature map (in sub-blocks of about 16 MB
    of features: a task's memory does not grow with its chunk) and returns its s x s and s x t
    sums; the sums are merged pairwise in a tree of fan-in ``split_every`` (the update of Chan,
    Golub and LeVeque for centred sums: exact in exact arithmetic, associative up to rounding)
    and the result is computed on the current scheduler. Used by the Krein ridge estimators of
    :mod:`spectralkit.sklearn` (requires the ``sklearn`` extra) when ``fit`` is given a dask array.

    Parameters
    ----------
    features : RandomFeatures or SpectralFeatures
        A fitted feature map (``fit_dask`` fits one from ``X.shape`` alone).
    X : dask.array.Array of shape (n_samples, n_features)
    Y : dask.array.Array or ndarray of shape (n_samples, n_targets)
        Numeric targets (rechunked to the row blocks of X).
    fit_intercept : bool, default True
        Centre features and targets (the sums are then about the means).
    split_every : int >= 2, default 4
        Fan-in of the reduction tree.

    Returns
    -------
    sums : spectralkit._krein.GramSums
        ``n`` (rows), ``mean`` (s,), ``y_mean`` (t,), ``cross`` (s, t) and ``gram_matrix()``
        (s, s): the (centred) sums.
    """
    X = _check_dask_array(X).rechunk({1: -1})
    if isinstance(split_every, bool) or not isinstance(split_every, numbers.Integral) or split_every < 2:
        raise ValueError(f"split_every must be an integer >= 2, got {split_every!r}")
    if not hasattr(features, "signature_"):
        raise ValueError("features must be fitted first (see fit_dask)")
    if Y.ndim != 2 or Y.shape[0] != X.shape[0]:
        raise ValueError(
            f"Y must have shape (n_samples, n_targets) with n_samples = {X.shape[0]}, got {Y.shape}"
        )
    return _krein.gram_sums_dask(_portable(features), X, Y, bool(fit_intercept), int(split_every))


_TABLE_NAMES = tuple(p.name for p in FEATURE_PARAMS)


class DaskSpectralFeatures:
    """scikit-learn style transformer for dask arrays and DataFrames.

    ``fit`` reads the shape, and the data only for ``lengthscale="scale"`` (the default: one
    reduction for Var(X)): the same arguments give the same model as ``SpectralFeatures`` and
    ``RandomFeatures.fit(X)`` on the computed array.

    Parameters
    ----------
    kernel, n_components, method, split, feature_map, random_state, truncation, truncation_tolerance, \
lengthscale, gamma, shape_matrix
        The feature-map parameters of :data:`spectralkit.features.FEATURE_PARAMS` (the same
        table, defaults and validation as :class:`~spectralkit.features.RandomFeatures`).
    kernel_params : dict, optional
        Parameter values for a spec-string ``kernel`` (as in ``SpectralFeatures``).
    numba_threads : int or None, default 1
        numba threads per transform task. Dask runs one task per worker thread, so 1 (the
        default) uses each core once when the workers have as many threads as cores; None
        leaves numba's default (all cores per task: faster for a single worker with one thread).

    scikit-learn is not required; with it installed, ``sklearn.base.clone`` works and the
    not-fitted error is scikit-learn's ``NotFittedError`` (it is also a ``RuntimeError``).

    Attributes
    ----------
    features_ : RandomFeatures
        The fitted feature map (frequencies, scales, ``signature_``, masses).
    kernel_ : RadialKernel or DensityKernel
    lengthscale_, signature_, mass_plus_, mass_minus_, n_features_in_
        As in SpectralFeatures.

    Examples
    --------
    >>> import dask.array as da
    >>> X = da.random.random((10_000, 8), chunks=(2_500, 8))
    >>> dsf = DaskSpectralFeatures("delta_gaussian", n_components=64, random_state=0).fit(X)
    >>> round(dsf.lengthscale_, 4) == round(float((8 * X.var() / 2).compute() ** 0.5), 4)
    True
    >>> Phi = dsf.transform(X)          # lazy
    >>> Phi.shape, Phi.chunks[0]
    ((10000, 64), (2500, 2500, 2500, 2500))
    """

    def __init__(
        self,
        kernel: str | RadialKernel | DensityKernel = "gaussian",
        *,
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
        kernel_params: dict[str, float] | None = None,
        numba_threads: int | None = 1,
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
        self.numba_threads = numba_threads

    _PARAM_NAMES = (*_TABLE_NAMES, "kernel_params", "numba_threads")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """Constructor parameters (scikit-learn protocol)."""
        return {k: getattr(self, k) for k in self._PARAM_NAMES}

    def set_params(self, **params: Any) -> DaskSpectralFeatures:
        """Set constructor parameters (scikit-learn protocol); a fitted instance must be refitted."""
        for k in params:
            if k not in self._PARAM_NAMES:
                raise ValueError(
                    f"invalid parameter {k!r} for DaskSpectralFeatures; valid: {', '.join(self._PARAM_NAMES)}"
                )
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def __repr__(self):
        # scikit-learn style: the parameters that differ from their defaults
        defaults = {k: p.default for k, p in inspect.signature(DaskSpectralFeatures).parameters.items()}
        shown = []
        for k, v in self.get_params().items():
            d = defaults[k]
            same = v is d or (type(v) is type(d) and not isinstance(v, np.ndarray) and v == d)
            if not same:
                shown.append(f"{k}={'array(...)' if isinstance(v, np.ndarray) else repr(v)}")
        return f"DaskSpectralFeatures({', '.join(shown)})"

    def _resolve_kernel(self):
        if self.kernel_params is not None and not isinstance(self.kernel_params, dict):
            raise ValueError(f"kernel_params must be a dict or None, got {type(self.kernel_params).__name__}")
        if isinstance(self.kernel, (RadialKernel, DensityKernel)):
            if self.kernel_params:
                raise ValueError("kernel_params must be None when kernel is a kernel object")
            return self.kernel
        return from_spec(self.kernel, params=self.kernel_params)

    def fit(self, X: da.Array | dask.dataframe.DataFrame, y: object = None) -> DaskSpectralFeatures:
        """Draw the frequencies for the number of columns of X.

        Parameters
        ----------
        X : dask.array.Array or dask DataFrame of shape (n_samples, n_features)
            The number of columns (and the dtypes of a DataFrame) are used; the values only by
            ``lengthscale="scale"`` (one reduction for Var(X)).
        y : ignored
        """
        if _is_dask_dataframe(X):
            dim = _dataframe_columns(X)
            X = X.to_dask_array()  # row chunks unknown: only reductions read it
        else:
            dim = int(_check_dask_array(X).shape[1])
        table = validate_feature_params({k: getattr(self, k) for k in _TABLE_NAMES}, dim)
        _check_numba_threads(self.numba_threads)
        kernel = self._resolve_kernel()
        table["kernel"] = kernel
        rf = RandomFeatures(**table).fit(X)
        self.features_ = rf
        self.kernel_ = kernel
        self.lengthscale_ = rf.lengthscale_
        self.signature_ = np.asarray(rf.signature_)
        self.mass_plus_ = float(rf.mass_plus_)
        self.mass_minus_ = float(rf.mass_minus_)
        self.n_features_in_ = dim
        self._fit_fingerprint = params_fingerprint(self.get_params())
        return self

    def transform(self, X: da.Array | dask.dataframe.DataFrame) -> da.Array:
        """Lazy feature matrix of X (see :func:`transform_dask`).

        A dask DataFrame is converted with ``to_dask_array(lengths=True)``, which computes the
        partition lengths (one pass over the data) so that the output has known row chunks.
        """
        if "features_" not in self.__dict__:
            raise not_fitted_error("this DaskSpectralFeatures instance is not fitted yet; call fit(X) first")
        changed = changed_params(self._fit_fingerprint, self.get_params())
        if changed:
            raise not_fitted_error(
                f"DaskSpectralFeatures: parameters changed since fit ({', '.join(changed)}); call fit again"
            )
        if _is_dask_dataframe(X):
            _dataframe_columns(X)
            X = X.to_dask_array(lengths=True)
        return transform_dask(self.features_, X, numba_threads=self.numba_threads)

    def fit_transform(self, X: da.Array | dask.dataframe.DataFrame, y: object = None) -> da.Array:
        """``fit(X).transform(X)``."""
        return self.fit(X).transform(X)
