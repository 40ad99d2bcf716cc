"""Solvers on pairs for the Gaussian and Wishart hyper-kernels: exact, Nystrom, divide-and-conquer.

Pairs (x_i, x_j) and (x_j, x_i) have the same hyper-kernel rows and the same target, so every
solver works on the n(n+1)/2 distinct pairs i <= j with weights w = 2 (i < j) and 1 (i = j):
this is the paper's problem over all n^2 ordered pairs, exactly.

Hyper-KRR (paper eq. 5-6) over distinct pairs with W = diag(w):
    exact:    (W^(1/2) K W^(1/2) + lambda n^2 I) z = W^(1/2) y,   c = W^(1/2) z;
    Nystrom:  landmark pairs q, K_qq = U S U^T (eigenvalues below 1e-10 max dropped: the
              pseudo-inverse of the paper), features Phi = K_pq U S^(-1/2) built block by
              block from point factors, (Phi^T W Phi + lambda n^2 I) theta = Phi^T W y,
              c = U S^(-1/2) theta (the paper's eq. 9 on the range of K_qq).
The learned kernel is k*(x, x') = sum_q c_q hk(q, (x, x')). Hyper-SVR (paper eq. 7-8): the exact
solver runs libsvm (``sklearn.svm.SVR``, precomputed kernel, C scaled by w per pair); the Nystrom
solver runs dual coordinate descent (liblinear's algorithm for the L1-loss SVR) on Phi, with an
intercept regularised as in liblinear (a constant feature 1). C multiplies the *mean*
epsilon-insensitive loss over the n^2 ordered pairs (the form of the paper's eq. 11; its eq. 7
has C / n^2), so its scale does not depend on n.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg
from numba import njit
from numpy.typing import ArrayLike, NDArray

from .._runtime import blas_single_thread
from .hyperkernels import GaussianBlocks, WishartBlocks

#: Largest number of distinct pairs n(n+1)/2 the exact solver accepts (n = 70 points).
MAX_EXACT_PAIRS = 2500
#: Eigenvalues of the landmark-pair Gram below this fraction of the largest are dropped (pseudo-inverse).
NYSTROEM_RCOND = 1e-10
#: Largest Nystrom feature matrix (distinct pairs x features, float64) the SVR solver stores.
MAX_SVR_FEATURE_BYTES = 1 << 30
#: Epoch cap of the Nystrom SVR's dual coordinate descent. At C = 1e5 on the paper benchmarks' cv
#: folds (wine, Gaussian hyper-kernel) it needed up to 10,794 epochs to reach tol = 1e-3: the
#: former cap of 3,000 stopped every such fit early (held-out errors off by up to 0.9 %).
SVR_MAX_EPOCHS = 30_000
_BLOCK = 1 << 13  # pairs per block of hyper-kernel rows (a few block x landmark-pair matrices of ~30 MB)


def n_pairs(n):
    """Number of distinct pairs i <= j of n points."""
    return n * (n + 1) // 2


def pair_blocks(rows, cols=None, block=_BLOCK):
    """Yield (I, J, w) over distinct pairs: i <= j within ``rows`` (cols None), or all of rows x cols.

    ``rows`` and ``cols`` are integer index arrays; for rows x cols the index sets must be disjoint
    and every pair gets weight 2 (both orders); within ``rows``, w = 1 on the diagonal, else 2.
    """
    rows = np.asarray(rows, dtype=np.int64)
    if cols is not None:
        cols = np.asarray(cols, dtype=np.int64)
        step = max(1, block // max(1, cols.size))
        for s in range(0, rows.size, step):
            r = rows[s : s + step]
            yield np.repeat(r, cols.size), np.tile(cols, r.size), np.full(r.size * cols.size, 2.0)
        return
    n = rows.size
    i0 = 0
    while i0 < n:
        counts_left = n - np.arange(i0, n)
        k = int(np.searchsorted(np.cumsum(counts_left), block, side="right"))
        i1 = i0 + max(1, k)
        loc = np.arange(i0, i1)
        counts = n - loc
        start = np.cumsum(counts) - counts
        jj = np.arange(int(counts.sum())) - np.repeat(start, counts) + np.repeat(loc, counts)
        ii = np.repeat(loc, counts)
        yield rows[ii], rows[jj], np.where(ii == jj, 1.0, 2.0)
        i0 = i1


def _off_class_value(n_classes):
    """The ideal kernel's value between different classes: -1 / (C - 1) (-1 for two classes)."""
    return -1.0 / (n_classes - 1) if n_classes > 2 else -1.0


def ideal_kernel(y: ArrayLike) -> NDArray[np.float64]:
    """The ideal kernel of labels y: Y_ij = +1 if y_i == y_j, else -1 / (C - 1) for C classes (an (n, n) array).

    Two classes: the paper's Y = y y^T with y = +-1. C > 2 classes: the Gram matrix of the
    labels coded as the C vertices of a regular simplex centred at 0 (unit vectors with mutual
    inner products -1/(C - 1)), the multi-class ideal kernel of kernel-target alignment. Coding
    every other class as -1 instead would make 1 - 1/C of the targets -1: a kernel fitted to
    that is dominated by the constant -1 (on scikit-learn's digits, 10 classes, the default
    Gaussian hyper-KRR then had a negative diagonal and an SVM on it predicted no test digit
    right; with the simplex code 0.89).
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels, got shape {y.shape}")
    neg = _off_class_value(np.unique(y).size)
    return np.where(y[:, None] == y[None, :], 1.0, neg)


class LabelTarget:
    """The ideal kernel of class labels: Y_ij = +1 if y_i == y_j else ``neg`` (see :func:`ideal_kernel`)."""

    def __init__(self, codes, neg=None):
        self.codes = np.asarray(codes, dtype=np.int64)
        self.neg = _off_class_value(np.unique(self.codes).size) if neg is None else float(neg)

    def values(self, I, J):
        return np.where(self.codes[I] == self.codes[J], 1.0, self.neg)

    def subset(self, idx):
        return LabelTarget(self.codes[idx], self.neg)  # the classes of the whole training set

    def matrix(self):
        """The (n, n) target matrix Y."""
        return np.where(self.codes[:, None] == self.codes[None, :], 1.0, self.neg)


class MatrixTarget:
    """A given similarity matrix T (symmetrised: Y_ij = (T_ij + T_ji) / 2)."""

    def __init__(self, T):
        self.T = T

    def values(self, I, J):
        return 0.5 * (self.T[I, J] + self.T[J, I])

    def subset(self, idx):
        return MatrixTarget(self.T[np.ix_(idx, idx)])

    def matrix(self):
        """The (n, n) target matrix Y."""
        return self.T


def make_blocks(kind, X, Z, params, qa, qb):
    if kind == "gaussian":
        return GaussianBlocks(X, Z, params["sigma2"], params["sigma2_h"], qa, qb)
    return WishartBlocks(X, Z, params["scale"], params["dof"], qa, qb)


class PairProblem:
    """Hyper-kernel regression on the distinct pairs of the points ``train`` of X.

    ``landmarks`` (indices into X) gives the Nystrom solver; None gives the exact solver (the
    landmark pairs are then all training pairs, without truncation).
    """

    def __init__(self, kind, X, target, params, train, landmarks=None):
        self.kind, self.X, self.target, self.params = kind, X, target, params
        self.train = np.asarray(train, dtype=np.int64)
        self.exact = landmarks is None
        L = self.train if self.exact else np.asarray(landmarks, dtype=np.int64)
        qa, qb = np.triu_indices(L.size)
        self.Z = X[L]
        self.qa, self.qb = qa.astype(np.int64), qb.astype(np.int64)
        self.blocks = make_blocks(kind, X, self.Z, params, self.qa, self.qb)
        self.landmark_idx = L
        self.n = self.train.size
        self.wsum = float(self.n) ** 2  # sum of the pair weights = n^2 ordered pairs

    def _kqq(self):
        L = self.landmark_idx
        return self.blocks.rows(L[self.qa], L[self.qb])

    def _nystroem_map(self):
        Kqq = self._kqq()
        with blas_single_thread():
            s, U = np.linalg.eigh(0.5 * (Kqq + Kqq.T))
        keep = s > NYSTROEM_RCOND * s.max()
        return U[:, keep] / np.sqrt(s[keep])  # T = U S^(-1/2)

    # -- ridge ------------------------------------------------------------------------------
    def ridge(self, alphas):
        """Coefficient vectors (one per alpha) of hyper-KRR."""
        alphas = np.atleast_1d(np.asarray(alphas, dtype=np.float64))
        if self.exact:
            L = self.landmark_idx
            w = np.where(self.qa == self.qb, 1.0, 2.0)
            y = self.target.values(L[self.qa], L[self.qb])
            sw = np.sqrt(w)
            S = weighted_pair_matrix(self._kqq(), w)  # the one pair matrix, solved in place
            return [sw * z for z in ridge_solutions(S, sw * y, alphas * self.wsum, overwrite=True)]
        T = self._nystroem_map()
        r = T.shape[1]
        A = np.zeros((r, r))
        g = np.zeros(r)
        for I, J, w in pair_blocks(self.train):
            sw = np.sqrt(w)
            Ps = (self.blocks.rows(I, J) @ T) * sw[:, None]
            A += Ps.T @ Ps  # a symmetric rank-k update (BLAS syrk): half the flops of a general product
            g += Ps.T @ (sw * self.target.values(I, J))
        return [T @ z for z in ridge_solutions(0.5 * (A + A.T), g, alphas * self.wsum)]

    # -- SVR --------------------------------------------------------------------------------
    def svr(self, Cs, epsilon, tol=1e-3, max_epochs=SVR_MAX_EPOCHS, seed=0):
        """(coef, intercept) per C of hyper-SVR: 1/2 ||k||^2 + C * mean over ordered pairs of |y - k - b|_eps."""
        out = []
        if self.exact:
            from sklearn.svm import SVR

            K = self._kqq()
            L = self.landmark_idx
            w = np.where(self.qa == self.qb, 1.0, 2.0)
            y = self.target.values(L[self.qa], L[self.qb])
            for C in np.atleast_1d(Cs):
                svr = SVR(kernel="precomputed", C=float(C), epsilon=float(epsilon), tol=1e-6, cache_size=500)
                svr.fit(K, y, sample_weight=w / self.wsum)
                coef = np.zeros(K.shape[0])
                coef[svr.support_] = svr.dual_coef_[0]
                out.append((coef, float(svr.intercept_[0])))
            return out
        T = self._nystroem_map()
        r = T.shape[1]
        npairs = n_pairs(self.n)
        need = npairs * (r + 1) * 8
        if need > MAX_SVR_FEATURE_BYTES:
            raise MemoryError(
                f"the Nystrom SVR stores the features of {npairs} pairs x {r + 1} columns ({need / 2**30:.2f} GiB "
                f"> {MAX_SVR_FEATURE_BYTES / 2**30:.0f} GiB): increase n_partitions (fewer points per subset) or "
                "decrease n_landmarks, or use HyperKernelRidge"
            )
        Phi = np.empty((npairs, r + 1))
        y = np.empty(npairs)
        w = np.empty(npairs)
        pos = 0
        for I, J, ww in pair_blocks(self.train):
            k = I.size
            Phi[pos : pos + k, :r] = self.blocks.rows(I, J) @ T
            y[pos : pos + k] = self.target.values(I, J)
            w[pos : pos + k] = ww
            pos += k
        Phi[:, r] = 1.0  # the intercept's feature
        Cs = np.atleast_1d(np.asarray(Cs, dtype=np.float64))
        theta = np.zeros(r + 1)
        beta = np.zeros(npairs)
        sols = {}
        # increasing C widens the box: the previous dual solution is feasible, a warm start
        for k in np.argsort(Cs, kind="stable"):
            epochs = svr_dcd(
                Phi,
                y,
                Cs[k] * w / self.wsum,
                float(epsilon),
                int(max_epochs),
                float(tol),
                int(seed),
                theta,
                beta,
            )
            if epochs >= max_epochs:
                from sklearn.exceptions import ConvergenceWarning

                warnings.warn(
                    f"hyper-SVR dual coordinate descent stopped after {max_epochs} epochs (C={Cs[k]:g}) "
                    f"before reaching tol={tol:g}",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            sols[k] = (T @ theta[:r], float(theta[r]))
        return [sols[k] for k in range(Cs.size)]

    def values(self, coef, I, J):
        """k*(x_I, x_J) of the coefficient vector ``coef`` (without intercept)."""
        return self.blocks.rows(I, J) @ coef


def weighted_pair_matrix(K, w):
    """W^(1/2) K W^(1/2), symmetrised, in place in ``K`` (the exact solvers' one pair matrix).

    The symmetrisation averages K and K^T by row blocks (a block of rows, not a second matrix).
    """
    sw = np.sqrt(w)
    K *= sw[:, None]
    K *= sw[None, :]
    n = K.shape[0]
    step = max(1, (1 << 20) // max(1, n))
    for s0 in range(0, n, step):
        s1 = min(n, s0 + step)
        avg = 0.5 * (K[s0:s1, s0:] + K[s0:, s0:s1].T)
        K[s0:s1, s0:] = avg
        K[s0:, s0:s1] = avg.T
    return K


def ridge_solutions(S, b, shifts, overwrite=False):
    """(S + shift I)^(-1) b for each shift, S symmetric PSD: one Cholesky solve, or one eigh for several.

    LAPACK runs on one thread (:func:`spectralkit._runtime.blas_single_thread`): at these sizes
    (n <= a few thousand) threads gain little, and on a loaded machine they are pathologically
    slow (eigh of 465 x 465: 0.07 s on one thread, 1.5 s on two threads under load 7 on 2 cores).
    ``overwrite=True`` lets the factorisation use S's memory (S is then destroyed): the solve
    holds S and, for several shifts, its eigenvectors -- no other copy.
    """
    A = S if overwrite else S.copy()
    # A is symmetric: its transpose is the same matrix in Fortran order, which LAPACK takes in place
    with blas_single_thread():
        if len(shifts) == 1:
            A[np.diag_indices_from(A)] += shifts[0]
            factor = scipy.linalg.cho_factor(A.T, lower=False, overwrite_a=True, check_finite=False)
            return [scipy.linalg.cho_solve(factor, b, check_finite=False)]
        e, V = scipy.linalg.eigh(A.T, overwrite_a=True, check_finite=False)
    c = V.T @ b
    return [V @ (c / (e + s)) for s in shifts]


@njit(cache=True, inline="always")
def _row_dot(Phi, i, theta):
    """Phi[i] . theta with four independent partial sums.

    A single running sum is a serial dependency chain the compiler may not reorder (strict IEEE);
    four lanes in a fixed order vectorise and stay deterministic (the same sum on every machine).
    """
    p = Phi.shape[1]
    s0 = s1 = s2 = s3 = 0.0
    k = 0
    while k + 4 <= p:
        s0 += Phi[i, k] * theta[k]
        s1 += Phi[i, k + 1] * theta[k + 1]
        s2 += Phi[i, k + 2] * theta[k + 2]
        s3 += Phi[i, k + 3] * theta[k + 3]
        k += 4
    while k < p:
        s0 += Phi[i, k] * theta[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


@njit(cache=True)
def svr_dcd(Phi, y, U, eps, max_epochs, tol, seed, theta, beta):
    """Dual coordinate descent for the L1-loss epsilon-SVR (Ho & Lin 2012; liblinear's solver).

    Minimises 1/2 b^T Q b - y^T b + eps |b|_1 over -U <= b <= U with Q = Phi Phi^T, keeping
    theta = Phi^T b (``theta`` and ``beta`` are updated in place: a warm start). Shrinking as in
    liblinear: a coordinate at a bound whose gradient points outwards by more than the previous
    epoch's largest violation leaves the active set; the stop is the sum of violations below
    ``tol`` times that of the first epoch, confirmed on all coordinates. Returns the epochs run.
    """
    n, p = Phi.shape
    qd = np.empty(n)
    for i in range(n):
        s = 0.0
        for k in range(p):
            s += Phi[i, k] * Phi[i, k]
        qd[i] = s
    index = np.arange(n)
    active = n
    gmax_old = np.inf
    gnorm1_init = -1.0
    np.random.seed(seed)  # noqa: NPY002 (numba's own generator inside njit: no Generator there)
    epoch = 0
    while epoch < max_epochs:
        gmax_new = 0.0
        gnorm1_new = 0.0
        for t in range(active):  # shuffle the active set
            j = t + np.random.randint(active - t)  # noqa: NPY002
            index[t], index[j] = index[j], index[t]
        t = 0
        while t < active:
            i = index[t]
            g = _row_dot(Phi, i, theta) - y[i]
            gp = g + eps
            gn = g - eps
            b = beta[i]
            v = 0.0
            shrink = False
            if b == 0.0:
                if gp < 0.0:
                    v = -gp
                elif gn > 0.0:
                    v = gn
                elif gp > gmax_old and gn < -gmax_old:
                    shrink = True
            elif b >= U[i]:
                if gp > 0.0:
                    v = gp
                elif gp < -gmax_old:
                    shrink = True
            elif b <= -U[i]:
                if gn < 0.0:
                    v = -gn
                elif gn > gmax_old:
                    shrink = True
            elif b > 0.0:
                v = abs(gp)
            else:
                v = abs(gn)
            if shrink:
                active -= 1
                index[t], index[active] = index[active], index[t]
                continue
            gmax_new = max(gmax_new, v)
            gnorm1_new += v
            t += 1
            if qd[i] <= 0.0:
                continue
            if gp < qd[i] * b:
                d = -gp / qd[i]
            elif gn > qd[i] * b:
                d = -gn / qd[i]
            else:
                d = -b
            if abs(d) < 1e-12:
                continue
            nb = min(max(b + d, -U[i]), U[i])
            d = nb - b
            if d != 0.0:
                beta[i] = nb
                for k in range(p):
                    theta[k] += d * Phi[i, k]
        if gnorm1_init < 0.0:
            gnorm1_init = gnorm1_new
        epoch += 1
        if gnorm1_new <= tol * gnorm1_init:
            if active == n:
                return epoch
            active = n  # confirm on every coordinate
            gmax_old = np.inf
            continue
        gmax_old = gmax_new
    return epoch


def split_parts(n, n_partitions, rng):
    """Random partition of range(n) into ``n_partitions`` near-equal disjoint subsets."""
    perm = rng.permutation(n)
    return [np.sort(p) for p in np.array_split(perm, n_partitions)]


def fit_part(kind, X, target, params, loss, hyper, n_landmarks, seed, exact):
    """Solve one (sub)problem on all points of X; returns the part (Z, qa, qb, coef) and diagnostics.

    Module-level and built from plain arrays, so divide-and-conquer can run it on dask workers.
    """
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    train = np.arange(n)
    landmarks = None if exact else np.sort(rng.choice(n, size=min(n_landmarks, n), replace=False))
    prob = PairProblem(kind, X, target, params, train, landmarks)
    if loss == "ridge":
        coef, intercept = prob.ridge([hyper["alpha"]])[0], 0.0
    else:
        coef, intercept = prob.svr([hyper["C"]], hyper["epsilon"], seed=int(rng.integers(2**31 - 1)))[0]
    return {"part": (prob.Z, prob.qa, prob.qb, coef), "intercept": intercept, "n_pairs": n_pairs(n)}


def cv_pair_losses(kind, X, target, params_list, loss, hypers, n_landmarks, exact, folds, seed):
    """Mean held-out squared error per (params, hyper) over point folds.

    For each fold the model is fitted on the pairs of the other points and evaluated on the
    distinct pairs with at least one held-out point (held-out x held-out and held-out x
    training), weighted as ordered pairs. ``hypers``: {"alpha": candidates} (ridge) or
    {"C": candidates, "epsilon": value} (svr). Returns an array (len(params_list), n_candidates).
    """
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    fold_of = rng.permutation(n) % folds
    n_cand = np.atleast_1d(hypers["alpha" if loss == "ridge" else "C"]).size
    err = np.zeros((len(params_list), n_cand))
    wtot = 0.0
    for f in range(folds):
        val = np.nonzero(fold_of == f)[0]
        tr = np.nonzero(fold_of != f)[0]
        lm = None if exact else np.sort(rng.choice(tr, size=min(n_landmarks, tr.size), replace=False))
        vpairs = list(pair_blocks(val)) + list(pair_blocks(val, tr))
        wf = sum(float(w.sum()) for _, _, w in vpairs)
        wtot += wf
        for ip, params in enumerate(params_list):
            prob = PairProblem(kind, X, target, params, tr, lm)
            if loss == "ridge":
                sols = [(c, 0.0) for c in prob.ridge(hypers["alpha"])]
            else:
                sols = prob.svr(hypers["C"], hypers["epsilon"], seed=f)
            for I, J, w in vpairs:
                rows = prob.blocks.rows(I, J)
                y = target.values(I, J)
                for ih, (c, b0) in enumerate(sols):
                    err[ip, ih] += float(np.sum(w * (rows @ c + b0 - y) ** 2))
    return err / max(wtot, 1.0)


def check_exact_size(n, scalable="nystroem"):
    """Raise the error naming the scalable solver when the exact solve would be too large."""
    u = n_pairs(n)
    if u > MAX_EXACT_PAIRS:
        how = (
            "landmark pairs, optionally n_partitions > 1 for divide-and-conquer"
            if scalable == "nystroem"
            else "all pairs through binned distances"
        )
        raise ValueError(
            f"solver='exact' would solve on {u} distinct pairs of {n} points (limit {MAX_EXACT_PAIRS}, i.e. "
            f"{(math.isqrt(8 * MAX_EXACT_PAIRS + 1) - 1) // 2} points): use solver='{scalable}' ({how})"
        )
