"""scikit-learn estimators for kernel learning in a hyper-RKHS (extra ``sklearn``)."""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import ClassVar, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .. import _runtime
from ..features import _MEMORY_CHECK_BYTES, InsufficientMemoryError
from ..measures._progress import Progress
from ._learned import LearnedKernel, LearnedRadialKernel
from ._pairs import (
    MAX_EXACT_PAIRS,
    LabelTarget,
    MatrixTarget,
    check_exact_size,
    cv_pair_losses,
    fit_part,
    n_pairs,
    split_parts,
)
from ._radial import (
    _fold_tables,
    _tables,
    exact_solve,
    get_num_threads,
    radius_bound,
    ridge_loss,
    ridge_predict_nodes,
    ridge_solve,
    ridge_stats,
    svr_loss,
    svr_solve,
    svr_stats,
)

__all__ = ["ALIGNMENT_GRID", "SCALE_GRIDS", "HyperKernelRidge", "HyperKernelSVR"]

#: Multipliers of the default scale searched by ``cv``, per hyper-kernel. Wishart and radial: the
#: paper's grid; their multiplier scales s^2 itself, and a small one makes every pair of distinct
#: points unrelated. Gaussian: the multiplier scales s_h^2 only, and the pair's midpoint Gaussian
#: keeps the variance s^2 + s_h^2 >= s^2 as it goes to 0 (no degenerate limit); on sonar the
#: held-out error kept falling below the paper's lower end 1/4, hence a grid reaching 1/64.
SCALE_GRIDS = {
    "gaussian": (1 / 64, 1 / 16, 0.25, 1.0, 4.0),
    "wishart": (0.25, 0.5, 1.0, 2.0, 4.0),
    "radial": (0.25, 0.5, 1.0, 2.0, 4.0),
}
#: Gaussian / Wishart, sigma2=None: s^2 is the total variance tv times the multiplier of this grid
#: whose section kernel exp(-r^2 / (4 s^2)) is best aligned (centred) with the target.
ALIGNMENT_GRID = tuple(2.0 ** (k / 2) for k in range(-6, 1))
#: The alignment is measured on at most this many evenly spaced training points (O(n^2 d)).
ALIGNMENT_POINTS = 500
_BINS_PER_LENGTHSCALE = {"ridge": 64, "svr": 128}
#: Inputs, scales and targets must lie within [1 / _SCALE_LIMIT, _SCALE_LIMIT] in magnitude: squared
#: distances, their ratios to s^2 and the hyper-kernels' powers of them then stay finite and normal.
_SCALE_LIMIT = 1e100
#: sigma2 below this fraction of the data's total variance makes every pair of distinct points
#: numerically unrelated (the Wishart solves become singular, the radial bins count in the millions).
_MIN_SCALE_RATIO = 1e-8
#: Gaussian / Wishart Nystrom, n_partitions=None: subsets of about this many points (the cost
#: O(n^2 M^4 / 8) of a subset of n points stays ~1 s; the fit grows linearly in m).
AUTO_SUBSET_POINTS = 500
#: Radial solver, n_pair_samples=None: all pairs up to this many distinct pairs (m = 16,384 points,
#: ~5 s), sampled pairs beyond.
AUTO_ALL_PAIRS = 1 << 27
#: Radial solver, n_pair_samples=None beyond AUTO_ALL_PAIRS: the number of sampled ordered pairs.
AUTO_PAIR_SAMPLES = 1 << 24

_COMMON_CONSTRAINTS = {
    "hyper_kernel": [StrOptions({"gaussian", "wishart", "radial"})],
    "sigma2": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "sigma2_h": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "wishart_dof": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "solver": [StrOptions({"auto", "exact", "nystroem", "binned"})],
    "n_landmarks": [Interval(numbers.Integral, 1, None, closed="left")],
    "n_partitions": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "bin_width": [Interval(numbers.Real, 0, None, closed="neither"), None],
    "n_pair_samples": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "cv": [Interval(numbers.Integral, 2, None, closed="left"), None],
    "random_state": ["random_state"],
}


def _dask_client():
    """The active dask.distributed client, or None (dask is an optional extra)."""
    try:
        from distributed import get_client
    except ImportError:
        return None
    try:
        return get_client()
    except ValueError:
        return None


def _mean_stats(parts):
    """The average of radial statistics computed on independent pair samples (or the one of all pairs)."""
    if len(parts) == 1:
        return parts[0]
    out = dict(parts[0])
    for key in ("nd", "no", "s", "q", "wt", "counts"):
        if key in out:
            out[key] = sum(p[key] for p in parts) / len(parts)
    return out


def _candidates(name, value):
    vals = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if vals.ndim != 1 or vals.size == 0 or not np.all(np.isfinite(vals)) or np.any(vals <= 0):
        raise ValueError(f"{name} must be a number > 0 or a 1-D array of such candidates, got {value!r}")
    return vals


def _aligned_multiplier(Xc, spread, target):
    """The multiplier of ``ALIGNMENT_GRID`` (of the total variance) whose section kernel is best aligned.

    The Gaussian hyper-kernel's learned kernel is k*(x, x') = exp(-|x - x'|^2 / (4 s^2)) times a
    function of the pair's midpoint (and the Wishart one behaves alike for a small scatter), so
    its useful width is that of its section. For each candidate s^2 = mult tv the centred
    alignment <K_c, Y_c>_F / (|K_c|_F |Y_c|_F) of K = exp(-|x_i - x_j|^2 / (4 s^2)) with the target
    Y (the ideal kernel of the labels, or the given target kernel) is measured on at most
    ``ALIGNMENT_POINTS`` evenly spaced training points (distances in units of the spread, so no
    overflow or underflow); the best multiplier wins, ties and an undefined alignment (a constant
    target) going to the largest.
    """
    m = Xc.shape[0]
    idx = np.unique(np.linspace(0, m - 1, min(m, ALIGNMENT_POINTS)).round().astype(np.int64))
    Z = Xc[idx] / spread
    sq = np.sum(Z * Z, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * (Z @ Z.T), 0.0)
    Y = target.subset(idx).matrix()
    Yc = Y - Y.mean(axis=0) - Y.mean(axis=1)[:, None] + Y.mean()
    ny = float(np.sqrt(np.sum(Yc * Yc)))
    if not ny > 1e-12 * max(1.0, float(np.max(np.abs(Y)))):
        return ALIGNMENT_GRID[-1]
    best, best_a = ALIGNMENT_GRID[-1], -np.inf
    for mult in reversed(ALIGNMENT_GRID):
        K = np.exp(-D2 / (4.0 * mult))
        Kc = K - K.mean(axis=0) - K.mean(axis=1)[:, None] + K.mean()
        nk = float(np.sqrt(np.sum(Kc * Kc)))
        a = float(np.sum(Kc * Yc)) / (nk * ny) if nk > 0 else -np.inf
        if a > best_a * (1.0 + 1e-12) + 1e-15:
            best, best_a = mult, a
    return best


def _chunks(r, width, entries=1 << 22):
    """``r`` in pieces whose dense ``len(piece) x width`` matrices hold at most ``entries`` values."""
    step = max(1, entries // max(1, width))
    return [r[i : i + step] for i in range(0, r.size, step)]


def _predict(nodes, coef, grid, d, ell):
    """k*(grid) of a radial solution, in pieces (never a dense grid x nodes matrix of more than 4M)."""
    if grid.size == 0:
        return np.zeros(0)
    return np.concatenate([ridge_predict_nodes(nodes, coef, g, d, ell) for g in _chunks(grid, nodes.size)])


class _HyperKernelBase(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared fitting logic; see :class:`HyperKernelRidge` for the documentation."""

    _loss = None

    @property
    def _n_features_out(self):
        # transform's columns are the training points (k*(X, X_fit_)): get_feature_names_out
        # names them "<class>0", ..., which makes set_output(transform="pandas") work
        return self.X_fit_.shape[0]

    def __init__(
        self,
        hyper_kernel: Literal["gaussian", "wishart", "radial"] = "gaussian",
        *,
        sigma2: float | None = None,
        sigma2_h: float | None = None,
        wishart_dof: float | None = None,
        solver: Literal["auto", "exact", "nystroem", "binned"] = "auto",
        n_landmarks: int = 30,
        n_partitions: int | None = None,
        bin_width: float | None = None,
        n_pair_samples: int | None = None,
        cv: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        # the parameters shared by both estimators (scikit-learn: stored as given, checked in fit)
        self.hyper_kernel = hyper_kernel
        self.sigma2 = sigma2
        self.sigma2_h = sigma2_h
        self.wishart_dof = wishart_dof
        self.solver = solver
        self.n_landmarks = n_landmarks
        self.n_partitions = n_partitions
        self.bin_width = bin_width
        self.n_pair_samples = n_pair_samples
        self.cv = cv
        self.random_state = random_state

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self, X: ArrayLike, y: ArrayLike | None = None, target_kernel: ArrayLike | None = None
    ) -> _HyperKernelBase:
        """Learn the kernel from labels y (ideal kernel) or from ``target_kernel`` (n_samples, n_samples).

        Returns
        -------
        self
        """
        return self._fit(X, y, target_kernel)

    # -- targets ---------------------------------------------------------------------------
    def _target(self, X, y, target_kernel):
        m = X.shape[0]
        if target_kernel is not None:
            if y is not None:
                raise ValueError("pass either y (class labels: the ideal kernel) or target_kernel, not both")
            K = check_array(target_kernel, dtype=np.float64, input_name="target_kernel")
            big = float(np.max(np.abs(K))) if K.size else 0.0
            if big > _SCALE_LIMIT:
                raise ValueError(
                    f"target_kernel has an entry of magnitude {big:.3g}, beyond {_SCALE_LIMIT:g}: "
                    "rescale it (a learned kernel is fitted to the target's scale)"
                )
            if K.shape != (m, m):
                raise ValueError(
                    f"target_kernel must be a square matrix matching X, of shape ({m}, {m}); "
                    f"got shape {K.shape}"
                )
            scale = max(1.0, float(np.max(np.abs(K))))
            asym = float(np.max(np.abs(K - K.T)))
            tol = 1e-8 * scale
            if asym > tol:
                raise ValueError(
                    f"target_kernel must be symmetric: max |K - K^T| = {asym:.3g} exceeds the "
                    f"tolerance {tol:.3g} (pass (K + K.T) / 2 if a symmetrised target is intended)"
                )
            return MatrixTarget(0.5 * (K + K.T)), None
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None: pass class "
                "labels y (learning from the ideal kernel) or target_kernel=K"
            )
        y = column_or_1d(y, warn=True)
        if y.shape[0] != m:
            raise ValueError(f"y has {y.shape[0]} labels but X has {m} samples")
        kind = type_of_target(y, input_name="y", raise_unknown=True)
        if kind not in ("binary", "multiclass"):
            raise ValueError(
                f"y must be class labels (binary or multiclass: Y_ij = +1 for the same class, -1 "
                f"otherwise); got {kind!r} targets. For a real-valued similarity use target_kernel="
            )
        classes, codes = np.unique(y, return_inverse=True)
        return LabelTarget(codes), classes

    # -- scales ------------------------------------------------------------------------------
    def _scale_params(self, d, s2, mult):
        """Hyper-kernel parameters for the multiplier ``mult`` of the scale searched by cv."""
        kind = self.hyper_kernel
        if kind == "gaussian":
            h0 = s2 if self.sigma2_h is None else float(self.sigma2_h)
            return {"sigma2": s2, "sigma2_h": mult * h0}
        if kind == "wishart":
            dof = d + 2.0 if self.wishart_dof is None else float(self.wishart_dof)
            if dof <= d - 1:
                raise ValueError(
                    f"wishart_dof must be > d - 1 = {d - 1} (the inverse-Wishart law on {d} x {d} "
                    f"matrices needs it), got {self.wishart_dof!r}"
                )
            return {"scale": (dof + 3.0) * mult * s2, "dof": dof}
        return {"lengthscale": math.sqrt(2.0 * mult * s2)}

    def _radial_samples(self, m):
        """Number of sampled ordered pairs of the radial solver for m points (0: all pairs)."""
        if self.n_pair_samples is None:
            return 0 if n_pairs(m) <= AUTO_ALL_PAIRS else AUTO_PAIR_SAMPLES
        return int(self.n_pair_samples) if self.n_pair_samples < n_pairs(m) else 0

    def _solver(self, m):
        kind, solver = self.hyper_kernel, self.solver
        if kind == "radial":
            if solver == "nystroem":
                raise ValueError(
                    "solver='nystroem' applies to the gaussian and wishart hyper-kernels; the radial "
                    "hyper-kernel is solved on all pairs with solver='binned' (or 'exact' for small data)"
                )
            if (self.n_partitions or 1) > 1 and not self._radial_samples(m):
                raise ValueError(
                    "n_partitions applies to the gaussian and wishart hyper-kernels; the radial "
                    "hyper-kernel is solved on all pairs at once (solver='binned')"
                )
            if solver == "exact":
                if self.cv is not None:
                    raise ValueError(
                        "cv is supported with solver='binned' for the radial hyper-kernel (the exact "
                        "solver is the small-data reference)"
                    )
                check_exact_size(m, "binned")
                return "exact"
            return "binned"
        if solver == "binned":
            raise ValueError(
                "solver='binned' applies to hyper_kernel='radial' only; use 'exact' or 'nystroem'"
            )
        if solver == "auto":
            n_sub = -(-m // (self.n_partitions or 1))
            return "exact" if n_pairs(n_sub) <= MAX_EXACT_PAIRS else "nystroem"
        if solver == "exact":
            check_exact_size(-(-m // (self.n_partitions or 1)))
        return solver

    def _n_parts(self, m, solver):
        """The number of subsets v: ``n_partitions``, or by default subsets of ~500 points for Nystrom."""
        if self.n_partitions is not None:
            return int(self.n_partitions)
        return max(1, -(-m // AUTO_SUBSET_POINTS)) if solver == "nystroem" else 1

    # -- scales ------------------------------------------------------------------------------
    @staticmethod
    def _check_input_scale(X, name="X"):
        """Refuse inputs whose squared distances would overflow (before any computation)."""
        big = float(np.max(np.abs(X))) if X.size else 0.0
        if big > _SCALE_LIMIT:
            raise ValueError(
                f"{name} has an entry of magnitude {big:.3g}, beyond {_SCALE_LIMIT:g}: squared "
                "distances would overflow; rescale the inputs (e.g. StandardScaler)"
            )

    def _check_scales(self, m, s2_data, spread):
        """s^2 (and s_h^2): given or the data's total variance, within the representable range."""
        for name in ("sigma2", "sigma2_h"):
            value = getattr(self, name)
            if value is not None and not 1.0 / _SCALE_LIMIT <= float(value) <= _SCALE_LIMIT:
                raise ValueError(
                    f"{name}={value!r} is outside [{1 / _SCALE_LIMIT:g}, {_SCALE_LIMIT:g}]: the "
                    "hyper-kernel's ratios of squared distances to it would overflow or underflow; "
                    "rescale the inputs instead"
                )
        if self.sigma2 is not None:
            if s2_data > 0 and float(self.sigma2) < _MIN_SCALE_RATIO * s2_data:
                raise ValueError(
                    f"sigma2={self.sigma2!r} is less than {_MIN_SCALE_RATIO:g} times the total variance "
                    f"of X ({s2_data:.3g}): every pair of distinct points would be numerically "
                    "unrelated (singular systems, non-finite kernels); rescale the inputs or raise sigma2"
                )
            return
        if not spread > 0:
            raise ValueError(
                f"X has {m} sample{'s' if m != 1 else ''} with zero total variance: the default "
                "sigma2 (the data's total variance) needs at least 2 distinct samples (1 sample is "
                "not enough); pass sigma2"
            )
        if not 1.0 / _SCALE_LIMIT <= s2_data <= _SCALE_LIMIT:
            raise ValueError(
                f"the total variance of X, {spread:.3g}^2 (the default sigma2), is outside "
                f"[{1 / _SCALE_LIMIT:g}, {_SCALE_LIMIT:g}]: rescale the inputs (e.g. StandardScaler) "
                "or pass sigma2"
            )

    # -- fit ---------------------------------------------------------------------------------
    def _fit(self, X, y, target_kernel):
        X = validate_data(self, X, dtype=np.float64)
        m, d = X.shape
        self._check_input_scale(X)
        target, classes = self._target(X, y, target_kernel)
        center = X.mean(axis=0)
        Xc = X - center
        # the total variance with a scale factor: exact for tiny inputs (squares would underflow)
        peak = float(np.max(np.abs(Xc))) if Xc.size else 0.0
        # spread: the root of the total variance, representable even when its square underflows
        spread = math.sqrt(float(np.mean(np.sum((Xc / peak) ** 2, axis=1)))) * peak if peak > 0 else 0.0
        s2_data = spread * spread
        self._check_scales(m, s2_data, spread)
        if self.sigma2 is not None:
            s2 = float(self.sigma2)
        elif self.hyper_kernel == "radial":
            s2 = s2_data
        else:
            s2 = _aligned_multiplier(Xc, spread, target) * s2_data
        solver = self._solver(m)
        if self.n_partitions is not None and self.n_partitions > m:
            raise ValueError(f"n_partitions={self.n_partitions} exceeds the number of samples {m}")
        hyper_name = "alpha" if self._loss == "ridge" else "C"
        hypers = _candidates(hyper_name, getattr(self, hyper_name))
        if hypers.size > 1 and self.cv is None:
            raise ValueError(
                f"{hyper_name} has {hypers.size} candidates: set cv (number of folds) to choose among them"
            )
        rng = check_random_state(self.random_state)
        mults = SCALE_GRIDS[self.hyper_kernel] if self.cv is not None else (1.0,)
        params_list = [self._scale_params(d, s2, mu) for mu in mults]
        self.classes_ = classes
        self.sigma2_ = s2
        # stages on stderr once the fit has run two seconds, in an interactive session only
        progress = Progress(f"{type(self).__name__} ({self.hyper_kernel}, {solver}) on {m} points", "auto")
        progress.stage(f"solving for {len(params_list)} scale(s) x {hypers.size} {hyper_name} value(s)")
        if self.hyper_kernel == "radial":
            best = self._fit_radial(X, target, d, params_list, hypers, solver, rng)
        else:
            best = self._fit_pairs(Xc, center, target, params_list, hypers, solver, rng)
        progress.done()
        ip, ih = best
        if self.cv is not None:
            self.cv_results_["rank"] = (
                np.argsort(np.argsort(self.cv_results_["mse"], kind="stable"), kind="stable") + 1
            )
        setattr(self, hyper_name + "_", float(hypers[ih]))
        params = params_list[ip]
        if self.hyper_kernel == "gaussian":
            self.sigma2_h_ = params["sigma2_h"]
        elif self.hyper_kernel == "wishart":
            self.wishart_dof_, self.wishart_scale_ = params["dof"], params["scale"]
            self.sigma2_ = params["scale"] / (params["dof"] + 3.0)
        else:
            self.lengthscale_ = params["lengthscale"]
            self.sigma2_ = 0.5 * params["lengthscale"] ** 2
        self.solver_ = solver
        self.X_fit_ = np.array(X, dtype=np.float64, copy=True)
        return self

    def _hyper_kwargs(self, hypers):
        if self._loss == "ridge":
            return {"alpha": hypers}
        return {"C": hypers, "epsilon": float(self.epsilon)}

    def _record_cv(self, losses, mults, hypers):
        name = "alpha" if self._loss == "ridge" else "C"
        mm, hh = np.meshgrid(np.asarray(mults), hypers, indexing="ij")
        self.cv_results_ = {"scale_multiplier": mm.ravel(), name: hh.ravel(), "mse": losses.ravel()}
        return np.unravel_index(int(np.argmin(losses)), losses.shape)

    def _fit_pairs(self, Xc, center, target, params_list, hypers, solver, rng):
        kind, m = self.hyper_kernel, Xc.shape[0]
        exact = solver == "exact"
        best = (0, 0)
        if self.cv is not None:
            folds = min(self.cv, m)
            losses = cv_pair_losses(
                kind,
                Xc,
                target,
                params_list,
                self._loss,
                self._hyper_kwargs(hypers),
                self.n_landmarks,
                exact,
                folds,
                int(rng.randint(2**31 - 1)),
            )
            best = self._record_cv(losses, SCALE_GRIDS[kind], hypers)
        params = params_list[best[0]]
        hyper = {k: (v[best[1]] if k in ("alpha", "C") else v) for k, v in self._hyper_kwargs(hypers).items()}
        v = self._n_parts(m, solver)
        self.n_partitions_ = v
        subsets = split_parts(m, v, rng) if v > 1 else [np.arange(m)]
        seeds = rng.randint(2**31 - 1, size=len(subsets))
        jobs = [
            (
                kind,
                Xc[idx],
                target.subset(idx) if v > 1 else target,
                params,
                self._loss,
                hyper,
                self.n_landmarks,
                int(seed),
                exact,
            )
            for idx, seed in zip(subsets, seeds)
        ]
        client = _dask_client() if len(jobs) > 1 else None
        if client is not None:
            futures = [client.submit(fit_part, *job, pure=False) for job in jobs]
            results = client.gather(futures)
            self.backend_ = "dask"
        else:
            results = [fit_part(*job) for job in jobs]
            self.backend_ = "serial"
        parts = [(Z, qa, qb, coef / len(results)) for Z, qa, qb, coef in (r["part"] for r in results)]
        self.intercept_ = float(np.mean([r["intercept"] for r in results]))
        self.n_pairs_ = int(sum(r["n_pairs"] for r in results))
        self.kernel_ = LearnedKernel(kind, params, parts, center)
        return best

    def _fit_radial(self, X, target, d, params_list, hypers, solver, rng):
        ells = [p["lengthscale"] for p in params_list]
        m = X.shape[0]
        self.backend_ = "serial"
        self.n_pairs_ = n_pairs(m)
        kw = self._hyper_kwargs(hypers)
        if solver == "exact":
            best = (0, 0)
            self.n_partitions_ = 1
            nodes, coef, b0 = exact_solve(X, target, d, ells[0], self._loss, kw)[0]
            self.intercept_ = b0
            self.binning_error_ = 0.0
            self.kernel_ = LearnedRadialKernel(d, ells[0], nodes, coef)
            return best
        h = (
            float(self.bin_width)
            if self.bin_width is not None
            else min(ells) / _BINS_PER_LENGTHSCALE[self._loss]
        )
        n_folds = 1 if self.cv is None else min(self.cv, m)
        fold = rng.permutation(m) % n_folds
        delta = None
        if self._loss != "ridge":
            delta = float(self.epsilon) / 2 if self.epsilon > 0 else None
            if isinstance(target, MatrixTarget) and delta is None:
                delta = max(float(np.ptp(target.T)), 1e-12) / 512
        radius = radius_bound(X - X.mean(axis=0))
        if self.bin_width is not None and radius > 0 and h > radius:
            raise ValueError(
                f"bin_width={self.bin_width!r} exceeds {radius:.6g}, a bound on every pair distance of X: "
                "all distances would share one or two bins; use a smaller bin_width (default: the "
                "length scale / 64 for ridge, / 128 for the SVR)"
            )
        self._check_radial_memory(m, radius, h, n_folds, target, delta, min(ells))
        n_samples = self._radial_samples(m)
        # sampled pairs: v >= 2 independent samples (on dask workers when a client is active),
        # averaged; their spread estimates the sampling error
        v = max(2, self.n_partitions or 2) if n_samples else 1
        self.n_partitions_ = v
        samples = (
            [None]
            if not n_samples
            else [(max(1, n_samples // v), int(sd)) for sd in rng.randint(2**31 - 1, size=v)]
        )
        if self._loss == "ridge":
            jobs = [(ridge_stats, X, target, h, fold, n_folds, (1, 2), smp) for smp in samples]
        else:
            jobs = [(svr_stats, X, target, h, delta, fold, n_folds, (1, 2), smp) for smp in samples]
            self.target_rounding_ = 0.0 if isinstance(target, LabelTarget) else delta / 2
        client = _dask_client() if len(jobs) > 1 else None
        if client is not None:
            shared = client.scatter(X, broadcast=True)
            futures = [client.submit(job[0], shared, *job[2:], pure=False) for job in jobs]
            parts = client.gather(futures)
            self.backend_ = "dask"
        else:
            parts = [job[0](*job[1:]) for job in jobs]
        st = _mean_stats(parts)
        self.n_pairs_ = n_samples if n_samples else n_pairs(m)
        best = (0, 0)
        if self.cv is not None:
            losses = np.zeros((len(ells), hypers.size))
            wtot = 0.0
            for f in range(n_folds):
                tr = _tables(st, n_folds, f, training=True)
                va = _tables(st, n_folds, f, training=False)
                wsum_tr = float(np.count_nonzero(fold != f)) ** 2
                for ie, ell in enumerate(ells):
                    losses[ie] += self._radial_fold_loss(st, tr, va, wsum_tr, d, ell, kw)
                wtot += 1.0
            best = self._record_cv(losses / wtot, SCALE_GRIDS["radial"], hypers)
        ell = ells[best[0]]
        one = dict(kw, **{("alpha" if self._loss == "ridge" else "C"): [hypers[best[1]]]})
        all_tables = list(range(st["tab"].max() + 1))
        sols = []
        for g in range(2):
            sols.append(self._radial_solve(st, g, all_tables, float(m) ** 2, d, ell, one)[0])
        (nodes, coef, b0), (nodes2, coef2, _) = sols
        # the pair distances lie in [0, radius]: a node beyond it (a bin wider than the data) says
        # nothing about the fit there
        top = min(max(nodes.max(), nodes2.max()), radius) + 3 * ell
        r = np.linspace(0.0, top, int(16 * top / ell) + 2)
        diff = max(
            float(np.max(np.abs(_predict(nodes, coef, rc, d, ell) - _predict(nodes2, coef2, rc, d, ell))))
            for rc in _chunks(r, max(nodes.size, nodes2.size))
        )
        self.binning_error_ = float(diff / 3.0 if self._loss == "ridge" else diff)
        self.sampling_error_ = 0.0
        if len(parts) > 1:
            # the v part solutions scatter around the full one with sd sqrt(v) times its error
            vals = [
                ridge_predict_nodes(
                    *self._radial_solve(pt, 0, all_tables, float(m) ** 2, d, ell, one)[0][:2], r, d, ell
                )
                for pt in parts
            ]
            self.sampling_error_ = float(np.max(np.std(vals, axis=0, ddof=1)) / math.sqrt(len(parts)))
        self.bin_width_ = h
        self.intercept_ = b0
        nz = coef != 0
        self.kernel_ = LearnedRadialKernel(d, ell, nodes[nz], coef[nz])
        return best

    def _check_radial_memory(self, m, radius, h, n_folds, target, delta, ell):
        """Refuse, before allocating, a binned radial fit whose tables and solves exceed the memory.

        The distance tables hold (threads + 1) x 2 grids x fold-pair tables x nodes x (3 for ridge,
        target levels for the SVR) float64, with nodes = radius / h + 3; the solves use dense
        matrices over the nonempty nodes (at most two per pair and grid); the binning-error grid
        16 (radius + 3 l) / l points.
        """
        n_tab = _fold_tables(n_folds)[1]
        n_nodes = radius / h + 4.0
        if self._loss == "ridge" or isinstance(target, LabelTarget):
            per_node = 3.0 if self._loss == "ridge" else 2.0
        else:
            per_node = math.floor(float(np.ptp(target.T)) / delta + 0.5) + 1.0
        tables = (max(1, get_num_threads()) + 1) * 2 * n_tab * n_nodes * per_node * 8
        nonempty = min(n_nodes * (per_node if self._loss != "ridge" else 1.0), 2.0 * n_pairs(m) + 2)
        solve = 6 * nonempty**2 * 8 + 3 * n_nodes * 8 + 16 * (radius + 3 * ell) / ell * 8
        need = tables + solve
        what = (
            f"the radial solver with bin_width={h:.3g} (data radius {radius:.3g}, {n_nodes:.3g} distance "
            f"nodes, {n_tab} fold table{'s' if n_tab > 1 else ''})"
        )
        avail = _runtime.available_memory()
        if need >= _MEMORY_CHECK_BYTES and avail is not None and need > avail:
            raise InsufficientMemoryError(
                f"{what} needs about {need:.3g} bytes ({need / 2**30:.3g} GiB), more than the {avail} "
                f"bytes ({avail / 2**30:.3g} GiB) of available memory; use a larger bin_width or sigma2"
            )

    def _radial_solve(self, st, g, tables, wsum, d, ell, kw):
        """[(nodes, coef, intercept) per hyper candidate] on the summed ``tables`` of grid g."""
        h = float(st["hs"][g])
        if self._loss == "ridge":
            nd, no, s = (st[k][g][tables].sum(0) for k in ("nd", "no", "s"))
            nodes, gams = ridge_solve(nd, no, s, wsum, h, d, ell, kw["alpha"])
            return [(nodes, gm, 0.0) for gm in gams]
        counts = st["counts"][g][tables].sum(0)
        nodes, sols = svr_solve(counts, st["levels"], wsum, h, d, ell, kw["C"], kw["epsilon"])
        return [(nodes, gm, b0) for gm, b0 in sols]

    def _radial_fold_loss(self, st, tr, va, wsum_tr, d, ell, kw):
        sols = self._radial_solve(st, 0, tr, wsum_tr, d, ell, kw)
        h = float(st["hs"][0])
        out = []
        if self._loss == "ridge":
            nd, no, s = (st[k][0][va].sum(0) for k in ("nd", "no", "s"))
            q, wv = float(np.sum(st["q"][va])), float(np.sum(st["wt"][va]))
            grid = np.arange(nd.size) * h
            for nodes, gm, _ in sols:
                out.append(ridge_loss(nd, no, s, q, wv, _predict(nodes, gm, grid, d, ell)))
        else:
            counts = st["counts"][0][va].sum(0)
            grid = np.arange(counts.shape[0]) * h
            for nodes, gm, b0 in sols:
                out.append(
                    svr_loss(
                        counts,
                        st["levels"],
                        float(counts.sum()),
                        _predict(nodes, gm, grid, d, ell),
                        b0,
                    )
                )
        return np.asarray(out)

    # -- use -----------------------------------------------------------------------------------
    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """The learned kernel against the training points: k*(X, X_fit_), shape (n_samples, n_train).

        This is the input of ``sklearn.svm.SVC(kernel="precomputed")``: ``fit_transform(X, y)``
        for training, ``transform(X_test)`` for prediction (so the estimator can precede SVC in a
        Pipeline).
        """
        check_is_fitted(self, "kernel_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        self._check_input_scale(X)
        return self._finite(self.kernel_.gram(X, self.X_fit_))

    def _finite(self, G):
        """``G`` if finite; otherwise an error (never a non-finite kernel value)."""
        if not np.all(np.isfinite(G)):
            raise FloatingPointError(
                f"the learned kernel is not finite on these inputs (sigma2_={self.sigma2_:.3g}); "
                "rescale the inputs (e.g. StandardScaler) or choose sigma2 of the data's scale"
            )
        return G

    def learned_kernel_(self, X: ArrayLike, Y: ArrayLike | None = None) -> NDArray[np.float64]:
        """Gram matrix k*(X, Y) of the learned kernel (Y = X when None).

        Usable as ``SVC(kernel="precomputed")`` input and, passed itself, as a scikit-learn
        kernel callable: ``SVC(kernel=est.learned_kernel_)``. The SVR intercept ``intercept_`` is
        not part of the kernel (a constant offset does not change an SVM).
        """
        check_is_fitted(self, "kernel_")
        for name, Z in (("X", X), ("Y", Y)):
            if Z is not None:
                self._check_input_scale(check_array(Z, dtype=np.float64, input_name=name), name)
        return self._finite(self.kernel_.gram(X, Y))

    def score(
        self, X: ArrayLike, y: ArrayLike | None = None, target_kernel: ArrayLike | None = None
    ) -> float:
        """Negative mean squared error of k*(x_i, x_j) + intercept_ against the target on all pairs of X."""
        check_is_fitted(self, "kernel_")
        X = validate_data(self, X, reset=False, dtype=np.float64)
        self._check_input_scale(X)
        target, _ = self._target(X, y, target_kernel)
        G = self._finite(self.kernel_.gram(X)) + self.intercept_
        return -float(np.mean((G - target.matrix()) ** 2))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        tags.transformer_tags.preserves_dtype = ["float64"]
        return tags


_ALIGNMENT_GRID_DOC = "{" + ", ".join(f"{c:.3g}" for c in ALIGNMENT_GRID) + "}"


def _grid_doc(kind):
    return "{" + ", ".join(str(Fraction(c).limit_denominator(1024)) for c in SCALE_GRIDS[kind]) + "}"


def _params_doc(loss_params, hyper_name):
    """The parameter section shared by both estimators, with their loss's parameters."""
    subs = {
        "{loss_params}": loss_params,
        "{hyper_name}": hyper_name,
        "{SCALE_GRID}": _grid_doc("wishart"),
        "{GAUSSIAN_GRID}": _grid_doc("gaussian"),
        "{ALIGNMENT_GRID}": _ALIGNMENT_GRID_DOC,
    }
    out = _PARAMS_DOC
    for key, value in subs.items():
        out = out.replace(key, value)
    return out


_PARAMS_DOC = """
    Parameters
    ----------
    hyper_kernel : {"gaussian", "wishart", "radial"}, default "gaussian"
        The hyper-kernel (:mod:`spectralkit.learn.hyperkernels`); all are normalised to 1 at four
        coincident points (the papers' constants only rescale the regularisation).
    {loss_params}
    sigma2 : float > 0, optional
        s^2: variance of the per-point Gaussians of the Gaussian construction; for "wishart" the
        scale matrix is (b + 3) s^2 I, so that for a small scatter S of the four points the
        hyper-kernel is exp(-tr S / (2 s^2)) like the Gaussian one with s_h = 0 (b sets the
        polynomial tails); for "radial" l^2 = 2 s^2 (the section at a diagonal pair is then
        exp(-r^2 / (4 s^2)), as for the Gaussian hyper-kernel).
        Default, "gaussian" and "wishart": chosen from the data and the target, s^2 = c tv with tv
        the total variance of the training inputs, (1/m) sum_i ||x_i - mean||^2 (half the mean
        squared pairwise distance), and c in {ALIGNMENT_GRID} (1/8 ... 1 in steps of sqrt 2) the
        multiplier whose section kernel exp(-|x - x'|^2 / (4 s^2)) has the largest centred
        alignment with the target (ideal kernel or ``target_kernel``) on at most 500 evenly
        spaced training points (cost O(500^2 d), milliseconds). Default, "radial": tv (its
        scale is searched by ``cv``). tv is the paper's "variance of data" read as the total
        variance: the per-coordinate variance would make the sections decay like e^(-d/2) at
        typical distances in dimension d.
    sigma2_h : float > 0, optional
        s_h^2 of the Gaussian hyper-kernel (coupling of the pair midpoints). Default: s^2.
    wishart_dof : float > d - 1, optional
        Degrees of freedom b of the inverse-Wishart law ("wishart"); default d + 2. Larger b:
        lighter tails (b -> inf gives the Gaussian hyper-kernel with s_h = 0).
    solver : {"auto", "exact", "nystroem", "binned"}, default "auto"
        "exact": all n(n+1)/2 distinct pairs (at most 2,500, i.e. 70 points per subset);
        "nystroem": landmark pairs (``n_landmarks`` points, their pairs) with ``n_partitions``
        subsets (divide-and-conquer, Algorithm 1 of the paper); "binned": the radial hyper-kernel
        on all pairs through binned distances. "auto": exact when it fits, else nystroem
        (gaussian, wishart); binned (radial).
    n_landmarks : int, default 30
        Landmark points M per subset of the Nystrom solver (M(M+1)/2 landmark pairs; not used by
        the exact and binned solvers). The cost
        per subset of n points is O(n^2 M^4 / 8) time and O(M^4) memory (the SVR also stores
        n^2 M^2 / 4 features).
    n_partitions : int, optional
        Number of disjoint random subsets v; each is solved separately and the learned kernels
        are averaged (gaussian and wishart). Default: ceil(m / 500) for the Nystrom solver
        (subsets of about 500 points: the fit grows linearly in m, ~1 s per subset with 30
        landmarks), 1 for the exact solver. Radial on sampled pairs: the number of independent
        pair samples whose statistics are averaged (see ``n_pair_samples``). The parts run in
        parallel on dask when a ``dask.distributed`` client is active, serially otherwise.
    bin_width : float > 0, optional
        Distance bin width h of the radial solver; default l / 64 (ridge) or l / 128 (SVR) of the
        smallest lengthscale searched. The estimated effect is ``binning_error_``.
    n_pair_samples : int >= 1, optional
        Radial solver: learn from this many ordered pairs drawn uniformly (with replacement) from
        the m^2 instead of all distinct pairs, each of weight m^2 / n_pair_samples (unbiased
        statistics; cost linear in n_pair_samples, independent of m). The sample is drawn in
        v = max(2, ``n_partitions``) independent parts (on dask workers when a client is active)
        whose spread gives ``sampling_error_``. Default: all pairs up to 2^27 distinct pairs
        (16,384 points), 2^24 sampled pairs beyond. A number at least m(m+1)/2 means all pairs.
    cv : int >= 2, optional
        Choose the scale by cross-validation over point folds, among ``SCALE_GRIDS[hyper_kernel]``
        times its default (or given) value -- s_h^2 times {GAUSSIAN_GRID} for "gaussian",
        s^2 times {SCALE_GRID} for "wishart" and "radial" -- and jointly {hyper_name} among its
        candidates. The criterion is the mean squared error on the pairs with at least one
        held-out point. Each fold is solved with one partition.
    random_state : int, RandomState instance or None, default None
        Landmarks, partitions and folds.

    Attributes
    ----------
    kernel_ : LearnedKernel or LearnedRadialKernel
        The learned kernel k* (a :class:`~spectralkit.learn.LearnedRadialKernel`, with its signed
        spectral measure, for "radial").
    X_fit_ : ndarray of shape (n_train, n_features)
        The training inputs (a copy), the columns of :meth:`transform`.
    intercept_ : float
        The SVR intercept b (0 for ridge); not part of the kernel.
    sigma2_ : float
        The s^2 used. ``sigma2_h_`` (gaussian), ``wishart_dof_`` and ``wishart_scale_`` (wishart),
        ``lengthscale_`` (radial) are set accordingly.
    {hyper_name}_ : float
        The regularisation used (the chosen candidate when cv is set).
    cv_results_ : dict
        With cv: arrays "scale_multiplier", "{hyper_name}", "mse" (mean held-out squared error)
        and "rank".
    solver_ : str
        The solver used ("exact", "nystroem", "binned").
    backend_ : {"serial", "dask"}
        Where the subsets ran.
    n_partitions_ : int
        The number of subsets (or radial pair samples) used.
    n_pairs_ : int
        Distinct training pairs n(n+1)/2 over the subsets (radial on sampled pairs: the number of
        sampled pairs).
    binning_error_ : float
        Radial solver: estimated max over r of |k*(r) - k*_exact(r)| from the binning (Richardson
        from the solves at bin widths h and 2h); 0 for solver="exact".
    sampling_error_ : float
        Radial solver on sampled pairs: estimated max over r of the standard error of k*(r) from
        the sampling (the spread of the v independent part solutions divided by sqrt(v)); 0 on
        all pairs.
    bin_width_ : float
        Radial binned solver: the bin width h.
    classes_ : ndarray or None
        The labels of y (None when fitted on target_kernel).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has string column names.
"""


class HyperKernelRidge(_HyperKernelBase):
    __doc__ = """Kernel learning by hyper-kernel ridge regression (hyper-KRR).

    Learns a kernel k* (PD or indefinite) from the ideal kernel of labels (``fit(X, y)``:
    Y_ij = +1 for the same class, -1 otherwise, -1/(C - 1) for C > 2 classes: see
    :func:`~spectralkit.learn.ideal_kernel`) or from a given similarity matrix
    (``fit(X, target_kernel=K)``, the out-of-sample extension of K), by

        min_k (1/m^2) sum_ij (k(x_i, x_j) - Y_ij)^2 + alpha ||k||^2

    over the hyper-RKHS of the hyper-kernel: k*(x, x') = sum_ij beta_ij hk((x_i, x_j), (x, x'))
    with vec(beta) = (K + alpha m^2 I)^(-1) vec(Y) (paper eq. 4-6), solved without forming the
    m^2 x m^2 hyper-kernel matrix (see the solvers). Use the result as a kernel:
    ``transform(X)`` = k*(X, X_fit_) for ``SVC(kernel="precomputed")``, ``learned_kernel_(X, Y)``
    for any Gram matrix or as ``SVC(kernel=est.learned_kernel_)``.
""" + _params_doc(
        """alpha : float > 0 or array-like of candidates, default 1e-3
        The ridge parameter lambda of the objective above (candidates need ``cv``).""",
        "alpha",
    )

    _parameter_constraints: ClassVar[dict] = {
        **_COMMON_CONSTRAINTS,
        "alpha": [Interval(numbers.Real, 0, None, closed="neither"), "array-like"],
    }
    _loss = "ridge"

    def __init__(
        self,
        hyper_kernel: Literal["gaussian", "wishart", "radial"] = "gaussian",
        *,
        alpha: float | ArrayLike = 1e-3,
        sigma2: float | None = None,
        sigma2_h: float | None = None,
        wishart_dof: float | None = None,
        solver: Literal["auto", "exact", "nystroem", "binned"] = "auto",
        n_landmarks: int = 30,
        n_partitions: int | None = None,
        bin_width: float | None = None,
        n_pair_samples: int | None = None,
        cv: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        super().__init__(
            hyper_kernel,
            sigma2=sigma2,
            sigma2_h=sigma2_h,
            wishart_dof=wishart_dof,
            solver=solver,
            n_landmarks=n_landmarks,
            n_partitions=n_partitions,
            bin_width=bin_width,
            n_pair_samples=n_pair_samples,
            cv=cv,
            random_state=random_state,
        )
        self.alpha = alpha


class HyperKernelSVR(_HyperKernelBase):
    __doc__ = """Kernel learning by hyper-kernel support vector regression (hyper-SVR).

    As :class:`HyperKernelRidge` with the epsilon-insensitive loss and an intercept b:

        min_{k, b} 1/2 ||k||^2 + C (1/m^2) sum_ij |Y_ij - k(x_i, x_j) - b|_epsilon

    (paper eq. 7-8 with C scaled by 1/m^2, so that C does not depend on the number of pairs).
    Exact solver: libsvm on the distinct pairs; Nystrom: dual coordinate descent (liblinear's
    algorithm) on the landmark features, whose intercept is regularised as in liblinear;
    radial: a grouped SVR on (distance node, target value) counts.
""" + _params_doc(
        """C : float > 0 or array-like of candidates, default 100.0
        Weight of the mean epsilon-insensitive loss (candidates need ``cv``).
    epsilon : float >= 0, default 0.1
        Width of the insensitive zone. With a real-valued ``target_kernel`` the radial solver
        rounds the targets to a grid of epsilon / 2 (``target_rounding_`` is the largest change).""",
        "C",
    )

    _parameter_constraints: ClassVar[dict] = {
        **_COMMON_CONSTRAINTS,
        "C": [Interval(numbers.Real, 0, None, closed="neither"), "array-like"],
        "epsilon": [Interval(numbers.Real, 0, None, closed="left")],
    }
    _loss = "svr"

    def __init__(
        self,
        hyper_kernel: Literal["gaussian", "wishart", "radial"] = "gaussian",
        *,
        C: float | ArrayLike = 100.0,
        epsilon: float = 0.1,
        sigma2: float | None = None,
        sigma2_h: float | None = None,
        wishart_dof: float | None = None,
        solver: Literal["auto", "exact", "nystroem", "binned"] = "auto",
        n_landmarks: int = 30,
        n_partitions: int | None = None,
        bin_width: float | None = None,
        n_pair_samples: int | None = None,
        cv: int | None = None,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        super().__init__(
            hyper_kernel,
            sigma2=sigma2,
            sigma2_h=sigma2_h,
            wishart_dof=wishart_dof,
            solver=solver,
            n_landmarks=n_landmarks,
            n_partitions=n_partitions,
            bin_width=bin_width,
            n_pair_samples=n_pair_samples,
            cv=cv,
            random_state=random_state,
        )
        self.C = C
        self.epsilon = epsilon
