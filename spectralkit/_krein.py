"""Krein ridge regression on random features: streaming Gram sums and the spectral solve.

Streaming Gram sums
-------------------
``feature_gram_sums(features, X, Y, center)`` streams X through a fitted feature map in row
blocks of about ``BLOCK_BYTES`` (16 MB) of float64 features and accumulates the sums of ridge
regression, ``Phi^T Phi`` (BLAS ``dsyrk``) and ``Phi^T Y``, in a :class:`GramSums`, centred
block by block and merged by the update of Chan, Golub and LeVeque (no cancellation from a
large mean); ``gram_sums_dask`` is the same as a map-reduce over the row blocks of a dask array
(dask imported on call). The Krein ridge estimators of :mod:`spectralkit.sklearn` fit on them.

The solve
---------
``krein_solve(gram, cross, signature, alpha)`` returns the coefficients of Krein ridge,
``(G + alpha J) coef = b``, through the eigenvalues of the indefinite Gram matrix
``K = Phi J Phi^T`` (pivoted Cholesky of G, then the r x r matrix ``T J T^T``), damping only
the directions where -alpha is within ``KREIN_WINDOW`` of an eigenvalue of K (the Notes of
:class:`spectralkit.sklearn.KreinRidgeRegressor` state the method and its bounds).

Layer 5, beside :mod:`spectralkit.features`: it works on a fitted feature map (anything with
``signature_`` and ``transform(X, out=)``), which the caller passes in.
"""

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsyrk

__all__ = [
    "BLOCK_BYTES",
    "KREIN_WINDOW",
    "GramSums",
    "block_rows",
    "feature_gram_sums",
    "gram_sums_dask",
    "krein_solve",
]

# ----------------------------------------------------------------------------------------------
# Streaming Gram sums of features (ridge regression on features without the n x s matrix)
# ----------------------------------------------------------------------------------------------

#: Bytes of float64 features per row block of :func:`feature_gram_sums` (and of blockwise predict).
BLOCK_BYTES = 16 << 20


def block_rows(width):
    """Rows per feature block: about ``BLOCK_BYTES`` of float64 features, at least 256 rows."""
    return max(256, BLOCK_BYTES // (8 * max(1, int(width))))


class GramSums:
    """Sufficient statistics of ridge regression on features, accumulated over row blocks.

    ``n`` rows; with ``center``: the means ``mean`` (s,) and ``y_mean`` (t,), the centred Gram
    ``sum (phi - mean)(phi - mean)^T`` and cross products ``cross = sum (phi - mean)(y - y_mean)^T``
    (s, t); without: the raw sums (the means stay 0). Each block is centred on its own means and
    merged by the pairwise update of Chan, Golub and LeVeque,
    ``M = M_a + M_b + (n_a n_b / n) delta delta^T`` (delta: the difference of the means), which
    avoids the cancellation of ``sum phi phi^T - n mean mean^T``. Only the upper triangle of the
    Gram is accumulated (BLAS ``dsyrk``, half the flops of a GEMM); :meth:`gram_matrix`
    symmetrises it. Merging is associative up to rounding: blocks can be reduced in any tree.
    """

    def __init__(self, width, n_targets, center):
        self.center = bool(center)
        self.n = 0
        self.mean = np.zeros(width)
        self.y_mean = np.zeros(n_targets)
        self._gram = np.zeros((width, width), order="F")
        self.cross = np.zeros((width, n_targets))

    def add(self, Phi, Y, weights=None):
        """Add a block: ``Phi`` (m, s) float64 C-contiguous (used as scratch), ``Y`` (m, t) float64.

        ``weights`` (m,) >= 0: row i counts w_i times (weighted means, ``sum w phi phi^T``; ``n``
        is then the sum of the weights).
        """
        m = Phi.shape[0] if weights is None else float(np.sum(weights))
        if m == 0:
            return self
        mu = ym = None
        if self.center:
            if weights is None:
                mu, ym = Phi.mean(axis=0), Y.mean(axis=0)
            else:
                mu, ym = (weights @ Phi) / m, (weights @ Y) / m
            Phi -= mu
            Y = Y - ym
        if weights is not None:
            root = np.sqrt(weights)[:, None]
            Phi *= root
            Y = Y * root
        # Phi.T is an F-contiguous (s, m) view: dsyrk reads it without a copy, updates in place
        self._gram = dsyrk(1.0, Phi.T, beta=1.0, c=self._gram, trans=0, lower=0, overwrite_c=1)
        self.cross += Phi.T @ Y
        self._shift(m, mu, ym)
        return self

    def merge(self, other):
        """Add the statistics of other rows (computed with the same ``center``); returns self."""
        if other.n:
            self._gram += other._gram
            self.cross += other.cross
            self._shift(other.n, other.mean, other.y_mean)
        return self

    def _shift(self, m, mu, ym):
        n_a, n = self.n, self.n + m
        if self.center:
            if n_a == 0:
                self.mean, self.y_mean = mu.copy(), ym.copy()
            else:
                w = n_a * m / n
                delta, delta_y = mu - self.mean, ym - self.y_mean
                self._gram += w * np.outer(delta, delta)
                self.cross += w * np.outer(delta, delta_y)
                self.mean += delta * (m / n)
                self.y_mean += delta_y * (m / n)
        self.n = n

    def gram_matrix(self):
        """The symmetric (s, s) Gram sum."""
        upper = np.triu(self._gram)
        return upper + np.triu(upper, 1).T


def feature_gram_sums(features, X, Y, center, weights=None):
    """Stream the rows of ``X`` through ``features.transform(X, out=)`` into a :class:`GramSums`.

    ``features`` is a fitted RandomFeatures; ``X`` (n, d) float32/float64 (or a scipy CSR
    matrix), ``Y`` (n, t) float64, ``weights`` (n,) float64 >= 0 or None.
    Memory: one block of features (about ``BLOCK_BYTES``) and the s x s sums; the n x s feature
    matrix is never formed. Features are computed in X's dtype (as ``transform`` computes them)
    and accumulated in float64.
    """
    n = X.shape[0]
    width = int(np.asarray(features.signature_).size)
    sums = GramSums(width, Y.shape[1], center)
    rows = min(block_rows(width), max(n, 1))
    buf = np.empty((rows, width), dtype=X.dtype)
    buf64 = buf if X.dtype == np.float64 else np.empty((rows, width))
    for a in range(0, n, rows):
        Xb = X[a : a + rows]
        m = Xb.shape[0]
        if not isinstance(Xb, np.ndarray):  # scipy sparse rows: transform allocates
            buf[:m] = features.transform(Xb)
        else:
            if not Xb.flags.writeable:  # read-only data would compile a second numba specialisation
                Xb = Xb.copy()
            features.transform(Xb, out=buf[:m])
        if buf64 is not buf:
            buf64[:m] = buf[:m]
        sums.add(buf64[:m], Y[a : a + m], None if weights is None else weights[a : a + m])
    return sums


def _block_gram_sums(features, X, Y, center, weights=None):
    X = np.ascontiguousarray(X)
    Y = np.asarray(Y, dtype=np.float64)
    if not np.all(np.isfinite(Y)):
        raise ValueError("y contains NaN or infinite values")
    if weights is not None:
        weights = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(weights)) or np.any(weights < 0):
            raise ValueError("sample_weight must be finite and >= 0")
    return feature_gram_sums(features, X, Y.reshape(len(Y), -1), center, weights)


def _merge_gram_sums(*parts):
    total = parts[0]
    for part in parts[1:]:
        total.merge(part)
    return total


def gram_sums_dask(features, X, Y, center, split_every, weights=None):
    """Map-reduce of :func:`feature_gram_sums` over the row blocks of a dask array ``X``.

    ``features``: a fitted, picklable (slim) RandomFeatures; ``X`` a 2-D dask array whose columns
    form one block; ``Y`` a (n, t) dask or numpy array (rechunked to X's row blocks). One task
    per row block, then a tree of merges of fan-in ``split_every``, computed on the current
    scheduler. Returns the merged :class:`GramSums`.
    """
    import dask
    import dask.array as da

    if isinstance(Y, da.Array):
        Y = Y.rechunk((X.chunks[0], -1))
    else:
        Y = da.from_array(np.asarray(Y, dtype=np.float64), chunks=(X.chunks[0], -1))
    shared = dask.delayed(features, pure=True)
    block = dask.delayed(_block_gram_sums, pure=True)
    if weights is None:
        wbs = [None] * len(X.chunks[0])
    else:
        if not isinstance(weights, da.Array):
            weights = da.from_array(np.asarray(weights, dtype=np.float64), chunks=(X.chunks[0],))
        wbs = list(weights.rechunk((X.chunks[0],)).to_delayed().ravel())
    parts = [
        block(shared, xb, yb, bool(center), wb)
        for xb, yb, wb in zip(X.to_delayed().ravel(), Y.to_delayed().ravel(), wbs)
    ]
    merge = dask.delayed(_merge_gram_sums, pure=True)
    while len(parts) > 1:
        parts = [merge(*parts[i : i + split_every]) for i in range(0, len(parts), split_every)]
    return parts[0].compute()


# ----------------------------------------------------------------------------------------------
# The spectral solve
# ----------------------------------------------------------------------------------------------


#: Relative half-width of the window around a singularity lam = -alpha where the Krein solve damps.
KREIN_WINDOW = 1e-3


def krein_solve(gram, cross, signature, alpha):
    """Coefficients of Krein ridge from the sums: ``(G + alpha J) coef = b`` solved spectrally.

    ``G = Phi^T Phi`` (s, s) positive semi-definite, ``b = Phi^T y`` (s, t), ``J = diag(signature)``.
    Returns ``(coef, eigenvalues, tau, n_damped)``. Method (the Notes of the
    Krein estimators of :mod:`spectralkit.sklearn`):

    1. Pivoted Cholesky (LAPACK ``dpstrf``, rank-revealing) ``G = P R^T R P^T`` of rank r; with
       ``T = R P^T`` (r, s), Phi = Q T for some Q with orthonormal columns.
    2. The indefinite Gram matrix ``K = Phi J Phi^T = Q (T J T^T) Q^T``: its non-zero
       eigenvalues lam are those of the symmetric r x r matrix ``H = T J T^T`` (``eigvalsh``).
    3. ``Phi^T (K + alpha I)^(-1) y = T^T (H + alpha I)^(-1) z`` with ``z = Q^T y`` from
       ``R11^T z = (P^T b)[:r]``, hence ``coef = J T^T (H + alpha I)^(-1) z``: solved by LU
       when no eigenvalue lies in the damping window (below), else through
       ``H = U diag(lam) U^T`` (``eigh``) as ``coef = J T^T U g(lam + alpha) U^T z``.

    With ``g(mu) = 1/mu`` this is the exact solution (it satisfies ``(G + alpha J) coef = b``).
    Eigenvalues lam >= 0 give mu >= alpha > 0: as well-posed as ordinary ridge. Only a negative
    lam can make mu vanish (-alpha an eigenvalue of K); within the window |mu| < tau,
    ``tau = KREIN_WINDOW * alpha``, g is the line ``mu / tau^2`` instead: continuous, bounded
    by 1/tau (at most 1/KREIN_WINDOW times the largest ridge gain 1/alpha), zero at the
    singularity, and exactly 1/mu outside the window. ``n_damped`` counts the directions in it.
    """
    s, t = cross.shape
    if not np.any(gram):
        return np.zeros((s, t)), np.zeros(0), 0.0, 0
    R, piv, rank, info = scipy.linalg.lapack.dpstrf(gram, tol=-1.0, lower=0)
    if info < 0:  # pragma: no cover - argument error inside LAPACK
        raise RuntimeError(f"dpstrf failed (info={info})")
    piv = piv - 1  # LAPACK is 1-based
    r = int(rank)
    T = np.empty((r, s))
    T[:, piv] = np.triu(R[:r])  # dpstrf leaves the strict lower triangle untouched
    H = (T * signature) @ T.T
    H = 0.5 * (H + H.T)
    z = scipy.linalg.solve_triangular(R[:r, :r], cross[piv[:r]], trans="T", lower=False, check_finite=False)
    # the eigenvalues decide; the eigenvectors (3x the cost) only where the filter acts
    lam = scipy.linalg.eigvalsh(H, check_finite=False)
    mu = lam + alpha
    tau = KREIN_WINDOW * alpha
    n_damped = int(np.count_nonzero((lam < 0) & (np.abs(mu) < tau)))
    if n_damped == 0:
        H[np.diag_indices_from(H)] += alpha
        w = scipy.linalg.lu_solve(scipy.linalg.lu_factor(H, check_finite=False), z, check_finite=False)
    else:
        lam, U = scipy.linalg.eigh(H, check_finite=False)
        mu = lam + alpha
        damped = (lam < 0) & (np.abs(mu) < tau)
        n_damped = int(np.count_nonzero(damped))
        g = np.empty_like(mu)
        g[~damped] = 1.0 / mu[~damped]
        g[damped] = mu[damped] / tau**2
        w = U @ (g[:, None] * (U.T @ z))
    coef = signature[:, None] * (T.T @ w)
    return coef, lam, tau, n_damped
