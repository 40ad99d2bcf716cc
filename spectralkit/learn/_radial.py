"""Hyper-kernel regression with the radial hyper-kernel on all pairs, through binned distances.

Every function of the radial hyper-RKHS is k(r) = int Omega_d(rho r) a(rho) F(d rho) with
||k||^2 = int a^2 dF, and the representer k* = sum_p beta_p H(r_p, .) depends on the pairs only
through their distances. So hyper-KRR is ridge regression on the signed density a, and its
sufficient statistics are binned pair distances, accumulated in one chunked pass over the
n(n+1)/2 distinct pairs (GEMM distances, then a compiled binning loop; nothing of size n^2 is
stored).

Ridge (linear binning, second order): each pair distance r = (k + theta) h is represented by
the weights (1 - theta, theta) on the nodes k h and (k + 1) h, both for its evaluation k(r) and
for its representer H(r, .). With P the pairs x nodes weight matrix, N = P^T W P (tridiagonal),
s = P^T W y, the solution is k* = sum_b gamma_b H(r_b, .) with

    (N H_B + lambda n^2 I) gamma = s,

solved in the symmetric form (N^(1/2) H_B N^(1/2) + lambda n^2 I) z = N^(-1/2) s on the range of
N. The error of replacing each r by its interpolation is O(h^2); it is estimated by solving on
the grid 2h from the same pass: |k*_h - k*_2h| / 3 (Richardson, second order), reported as
``binning_error``.

SVR (nearest node, first order): the epsilon-insensitive loss of a bin depends on the targets of
its pairs, so the statistics are counts per (node, target value): exact for label targets (two
values); a given similarity matrix has its targets rounded to a grid of spacing delta (each pair's
loss moves by at most delta / 2). The grouped problem is an SVR on the groups with C scaled by
the group's weight (libsvm, precomputed H between the nodes). Error estimate: |k*_h - k*_2h|.

Cross-validation folds are supported in the same single pass: statistics are kept per pair of
point folds, so the training and held-out statistics of every fold are sums of tables.
"""

import math

import numpy as np
import scipy.linalg
from numba import get_num_threads, njit, prange

from .._runtime import blas_single_thread
from ._pairs import LabelTarget, pair_blocks, ridge_solutions, weighted_pair_matrix
from .hyperkernels import _radial_h

_BLOCK_ENTRIES = 1 << 22  # distance block size (rows x columns)


@njit(cache=True, inline="always")
def _pair(D2, i0, a, b, codes, T, use_matrix):
    """(i, j, weight, distance, target) of the block entry (a, b >= a): w = 1 on the diagonal, else 2."""
    i = i0 + a
    j = i0 + b
    if i == j:
        w, r = 1.0, 0.0
    else:
        w, r = 2.0, math.sqrt(max(D2[a, b], 0.0))
    if use_matrix:
        y = 0.5 * (T[i, j] + T[j, i])
    else:
        y = 1.0 if codes[i] == codes[j] else T[0, 0]  # labels: T holds the off-class value
    return i, j, w, r, y


@njit(cache=True, inline="always")
def _bin_ridge(c, tb, w, r, y, hs, nd, no, s, q, wt):
    """Add the pair (distance r, target y, weight w) to chunk c's linear-binning statistics of
    fold table tb, on every grid of node spacings hs."""
    n_nodes = nd.shape[3]
    q[c, tb] += w * y * y
    wt[c, tb] += w
    for g in range(hs.shape[0]):
        t = r / hs[g]
        k = min(int(t), n_nodes - 2)
        th = t - k
        u = 1.0 - th
        nd[c, g, tb, k] += w * u * u
        nd[c, g, tb, k + 1] += w * th * th
        no[c, g, tb, k] += w * u * th
        s[c, g, tb, k] += w * u * y
        s[c, g, tb, k + 1] += w * th * y


@njit(cache=True, inline="always")
def _bin_svr(c, tb, w, r, y, use_matrix, y0, delta, hs, counts):
    """Add the pair's weight w to chunk c's counts at its nearest node and target level."""
    n_nodes, n_levels = counts.shape[3], counts.shape[4]
    if use_matrix:
        lev = min(max(math.floor((y - y0) / delta + 0.5), 0), n_levels - 1)
    else:
        lev = 1 if y > 0 else 0
    for g in range(hs.shape[0]):
        k = min(int(r / hs[g] + 0.5), n_nodes - 1)
        counts[c, g, tb, k, lev] += w


@njit(parallel=True, cache=True)
def _ridge_pass(D2, i0, codes, T, use_matrix, fold, tab, hs, nd, no, s, q, wt):
    """Accumulate linear-binning statistics of the pairs (i, j >= i) of one row block.

    nd/no/s have shape (n_chunks, n_grids, n_tables, n_nodes); q/wt (n_chunks, n_tables).
    """
    n_rows, n_cols = D2.shape
    n_chunks = nd.shape[0]
    for c in prange(n_chunks):
        for a in range(c, n_rows, n_chunks):
            for b in range(a, n_cols):
                i, j, w, r, y = _pair(D2, i0, a, b, codes, T, use_matrix)
                _bin_ridge(c, tab[fold[i], fold[j]], w, r, y, hs, nd, no, s, q, wt)


@njit(parallel=True, cache=True)
def _svr_pass(D2, i0, codes, T, use_matrix, y0, delta, fold, tab, hs, counts):
    """Accumulate pair weights per (grid, table, nearest node, target level) of one row block.

    Label targets: level 0 for the off-class value, 1 for +1; a matrix target: round((y - y0) / delta).
    """
    n_rows, n_cols = D2.shape
    n_chunks = counts.shape[0]
    for c in prange(n_chunks):
        for a in range(c, n_rows, n_chunks):
            for b in range(a, n_cols):
                i, j, w, r, y = _pair(D2, i0, a, b, codes, T, use_matrix)
                _bin_svr(c, tab[fold[i], fold[j]], w, r, y, use_matrix, y0, delta, hs, counts)


@njit(cache=True, inline="always")
def _sampled_pair(Xc, I, J, p, codes, T, use_matrix):
    """(i, j, distance, target) of the sampled ordered pair p."""
    i = I[p]
    j = J[p]
    r2 = 0.0
    for k in range(Xc.shape[1]):
        diff = Xc[i, k] - Xc[j, k]
        r2 += diff * diff
    if use_matrix:
        y = 0.5 * (T[i, j] + T[j, i])
    else:
        y = 1.0 if codes[i] == codes[j] else T[0, 0]  # labels: T holds the off-class value
    return i, j, math.sqrt(r2), y


@njit(parallel=True, cache=True)
def _ridge_pass_sampled(Xc, I, J, w, codes, T, use_matrix, fold, tab, hs, nd, no, s, q, wt):
    """:func:`_ridge_pass` over sampled ordered pairs (I[p], J[p]), each of weight ``w``."""
    n_chunks = nd.shape[0]
    n = I.size
    for c in prange(n_chunks):
        for p in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            i, j, r, y = _sampled_pair(Xc, I, J, p, codes, T, use_matrix)
            _bin_ridge(c, tab[fold[i], fold[j]], w, r, y, hs, nd, no, s, q, wt)


@njit(parallel=True, cache=True)
def _svr_pass_sampled(Xc, I, J, w, codes, T, use_matrix, y0, delta, fold, tab, hs, counts):
    """:func:`_svr_pass` over sampled ordered pairs (I[p], J[p]), each of weight ``w``."""
    n_chunks = counts.shape[0]
    n = I.size
    for c in prange(n_chunks):
        for p in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            i, j, r, y = _sampled_pair(Xc, I, J, p, codes, T, use_matrix)
            _bin_svr(c, tab[fold[i], fold[j]], w, r, y, use_matrix, y0, delta, hs, counts)


_SAMPLE_CHUNK = 1 << 21  # sampled pairs drawn and binned at a time


def _sampled_chunks(m, n_samples, seed):
    """Chunks (I, J) of ``n_samples`` ordered pairs drawn uniformly (with replacement) from m x m."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < n_samples:
        k = min(_SAMPLE_CHUNK, n_samples - done)
        yield rng.integers(0, m, size=k), rng.integers(0, m, size=k)
        done += k


def _fold_tables(n_folds):
    tab = np.zeros((n_folds, n_folds), dtype=np.int64)
    t = 0
    for a in range(n_folds):
        for b in range(a, n_folds):
            tab[a, b] = tab[b, a] = t
            t += 1
    return tab, t


def _blocks(Xc):
    sq = np.sum(Xc * Xc, axis=1)
    m = Xc.shape[0]
    i0 = 0
    while i0 < m:
        rows = max(1, min(m - i0, _BLOCK_ENTRIES // max(1, m - i0)))
        D2 = sq[i0 : i0 + rows, None] + sq[None, i0:] - 2.0 * (Xc[i0 : i0 + rows] @ Xc[i0:].T)
        yield i0, D2
        i0 += rows


def _target_args(target):
    """(codes, T, use_matrix) for the compiled passes."""
    if isinstance(target, LabelTarget):
        return target.codes, np.full((1, 1), target.neg), False
    T = np.ascontiguousarray(target.T, dtype=np.float64)
    return np.zeros(1, dtype=np.int64), T, True


def radius_bound(Xc):
    """An upper bound on every pair distance of the centred points Xc: 2 max_i |x_i|."""
    return 2.0 * float(np.sqrt(np.max(np.sum(Xc * Xc, axis=1)))) if Xc.size else 0.0


def ridge_stats(X, target, h, fold=None, n_folds=1, grids=(1, 2), samples=None):
    """Linear-binning statistics at widths h * g for g in ``grids``, per table of fold pairs.

    ``samples`` = (n_samples, seed): instead of all distinct pairs, n_samples ordered pairs drawn
    uniformly from the m^2, each of weight m^2 / n_samples (unbiased for every statistic).
    Returns dict(nd, no, s (n_grids, n_tables, n_nodes), q, wt (n_tables), tab, h).
    """
    Xc = np.ascontiguousarray(X - X.mean(axis=0))
    m = Xc.shape[0]
    fold = np.zeros(m, dtype=np.int64) if fold is None else np.asarray(fold, dtype=np.int64)
    tab, n_tab = _fold_tables(n_folds)
    hs = np.array([h * g for g in grids], dtype=np.float64)
    n_nodes = math.ceil(radius_bound(Xc) / h) + 3
    n_chunks = max(1, get_num_threads())
    shape = (n_chunks, len(hs), n_tab, n_nodes)
    nd, no, s = np.zeros(shape), np.zeros(shape), np.zeros(shape)
    q, wt = np.zeros((n_chunks, n_tab)), np.zeros((n_chunks, n_tab))
    codes, T, use_matrix = _target_args(target)
    if samples is None:
        for i0, D2 in _blocks(Xc):
            _ridge_pass(D2, i0, codes, T, use_matrix, fold, tab, hs, nd, no, s, q, wt)
    else:
        w = float(m) ** 2 / samples[0]
        for I, J in _sampled_chunks(m, *samples):
            _ridge_pass_sampled(Xc, I, J, w, codes, T, use_matrix, fold, tab, hs, nd, no, s, q, wt)
    return {
        "nd": nd.sum(0),
        "no": no.sum(0),
        "s": s.sum(0),
        "q": q.sum(0),
        "wt": wt.sum(0),
        "tab": tab,
        "hs": hs,
    }


def svr_stats(X, target, h, delta=None, fold=None, n_folds=1, grids=(1, 2), samples=None):
    """Nearest-node counts per (grid, table, node, target level); returns dict with ``levels``.

    ``samples``: as for :func:`ridge_stats`.
    """
    Xc = np.ascontiguousarray(X - X.mean(axis=0))
    m = Xc.shape[0]
    fold = np.zeros(m, dtype=np.int64) if fold is None else np.asarray(fold, dtype=np.int64)
    tab, n_tab = _fold_tables(n_folds)
    hs = np.array([h * g for g in grids], dtype=np.float64)
    n_nodes = math.ceil(radius_bound(Xc) / h) + 3
    codes, T, use_matrix = _target_args(target)
    if use_matrix:
        lo, hi = float(np.min(T)), float(np.max(T))
        n_levels = math.floor((hi - lo) / delta + 0.5) + 1
        levels = lo + delta * np.arange(n_levels)
    else:
        lo, delta, n_levels = target.neg, 1.0 - target.neg, 2
        levels = np.array([target.neg, 1.0])
    n_chunks = max(1, get_num_threads())
    counts = np.zeros((n_chunks, len(hs), n_tab, n_nodes, n_levels))
    if samples is None:
        for i0, D2 in _blocks(Xc):
            _svr_pass(D2, i0, codes, T, use_matrix, lo, float(delta), fold, tab, hs, counts)
    else:
        w = float(m) ** 2 / samples[0]
        for I, J in _sampled_chunks(m, *samples):
            _svr_pass_sampled(Xc, I, J, w, codes, T, use_matrix, lo, float(delta), fold, tab, hs, counts)
    return {"counts": counts.sum(0), "levels": levels, "tab": tab, "hs": hs}


def _tables(stats, n_folds, held_out=None, training=True):
    """Indices of the fold-pair tables of the training (no held-out fold) or validation pairs."""
    tab = stats["tab"]
    out = []
    for a in range(n_folds):
        for b in range(a, n_folds):
            involves = held_out is not None and (a == held_out or b == held_out)
            if training != involves:
                out.append(tab[a, b])
    return out


def ridge_solve(nd, no, s, wsum, h, dim, ell, alphas):
    """Solve (N H_B + lambda wsum I) gamma = s for each alpha; returns (nodes, [gamma per alpha]).

    nd, no: diagonal and upper diagonal of the tridiagonal N; s: right-hand side (per node).
    """
    keep = np.nonzero(nd > 0)[0]
    nodes = keep * h
    d = nd[keep]
    off = np.where(np.diff(keep) == 1, no[keep[:-1]], 0.0)
    # eigenvectors of the tridiagonal N (PSD); its range carries the solution
    with blas_single_thread():
        lam, V = scipy.linalg.eigh_tridiagonal(d, off)
    pos = lam > 1e-13 * lam.max()
    lam, V = lam[pos], V[:, pos]
    sq = np.sqrt(lam)
    H = _radial_h(*np.broadcast_arrays(nodes[:, None], nodes[None, :]), dim, ell)
    VHV = V.T @ H @ V
    S = sq[:, None] * VHV * sq[None, :]
    with blas_single_thread():
        e, U = np.linalg.eigh(0.5 * (S + S.T))
    rhs = U.T @ ((V.T @ s[keep]) / sq)
    out = []
    for a in np.atleast_1d(alphas):
        z = U @ (rhs / (e + a * wsum))
        out.append(V @ (sq * z))
    return nodes, out


def ridge_predict_nodes(nodes, gamma, grid_nodes, dim, ell):
    """k*(r) at the given node distances."""
    H = _radial_h(*np.broadcast_arrays(grid_nodes[:, None], nodes[None, :]), dim, ell)
    return H @ gamma


def ridge_loss(nd, no, s, q, wsum, kvals):
    """Mean over pairs of (k(r_p) - y_p)^2 with linear-binned k: (k^T N k - 2 k^T s + q) / wsum."""
    quad = float(np.sum(nd * kvals**2) + 2.0 * np.sum(no[:-1] * kvals[:-1] * kvals[1:]))
    return (quad - 2.0 * float(np.sum(kvals * s)) + q) / max(wsum, 1e-300)


def svr_solve(counts, levels, wsum, h, dim, ell, Cs, epsilon, max_groups=6000):
    """Grouped hyper-SVR: one sample per nonempty (node, level), C scaled by its weight / wsum."""
    from sklearn.svm import SVR

    kk, ll = np.nonzero(counts > 0)
    if kk.size > max_groups:
        raise ValueError(
            f"the radial SVR has {kk.size} distinct (distance node, target value) groups (limit {max_groups}): "
            "the target similarity has too many distinct values per distance; use a larger epsilon (targets are "
            "rounded to a grid of epsilon / 2), a larger bin_width, or HyperKernelRidge"
        )
    r = kk * h
    y = levels[ll]
    w = counts[kk, ll] / wsum
    K = _radial_h(*np.broadcast_arrays(r[:, None], r[None, :]), dim, ell)
    nodes = np.unique(kk)
    pos = np.searchsorted(nodes, kk)
    out = []
    for C in np.atleast_1d(Cs):
        svr = SVR(kernel="precomputed", C=float(C), epsilon=float(epsilon), tol=1e-6, cache_size=500)
        svr.fit(K, y, sample_weight=w)
        beta = np.zeros(kk.size)
        beta[svr.support_] = svr.dual_coef_[0]
        gamma = np.zeros(nodes.size)
        np.add.at(gamma, pos, beta)
        out.append((gamma, float(svr.intercept_[0])))
    return nodes * h, out


def svr_loss(counts, levels, wsum, kvals, intercept):
    """Mean over pairs of (k(r_p) + b - y_p)^2 with nearest-node k (for model selection)."""
    resid = (kvals[:, None] + intercept) - levels[None, :]
    return float(np.sum(counts * resid**2)) / max(wsum, 1e-300)


def exact_solve(X, target, dim, ell, loss, hypers):
    """Unbinned hyper-KRR / SVR on the distinct pairs (the reference the binned solvers approximate).

    Returns a list of (nodes, coef, intercept), one per alpha (ridge) or C (svr).
    """
    n = X.shape[0]
    I, J, w = next(pair_blocks(np.arange(n), block=1 << 62))
    r = np.sqrt(np.maximum(np.sum((X[I] - X[J]) ** 2, axis=1), 0.0))
    y = target.values(I, J)
    K = _radial_h(*np.broadcast_arrays(r[:, None], r[None, :]), dim, ell)
    wsum = float(n) ** 2
    out = []
    if loss == "ridge":
        sw = np.sqrt(w)
        shifts = np.atleast_1d(hypers["alpha"]) * wsum
        S = weighted_pair_matrix(K, w)
        return [(r, sw * z, 0.0) for z in ridge_solutions(S, sw * y, shifts, overwrite=True)]
    from sklearn.svm import SVR

    for C in np.atleast_1d(hypers["C"]):
        svr = SVR(
            kernel="precomputed", C=float(C), epsilon=float(hypers["epsilon"]), tol=1e-6, cache_size=500
        )
        svr.fit(K, y, sample_weight=w / wsum)
        coef = np.zeros(r.size)
        coef[svr.support_] = svr.dual_coef_[0]
        out.append((r, coef, float(svr.intercept_[0])))
    return out
