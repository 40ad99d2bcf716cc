"""Gram matrices of radial kernels: K[i, j] = k(||x_i - y_j||_M), for scikit-learn and friends.

``RadialKernel.gram`` and ``DensityKernel.gram`` call :func:`gram`. Distances are computed in
row blocks (bounded memory) from ``||x||^2 + ||y||^2 - 2 x.y`` clipped at 0, with the shape matrix
M applied as x -> M^(1/2) x (so ||x - y||_M^2 = (x - y)^T M (x - y)). Called with two 1-D vectors,
the result is the scalar k(||x - y||_M): that is the calling convention of
``sklearn.metrics.pairwise_kernels(..., metric=k.gram)``; ``SVC(kernel=k.gram)`` passes 2-D arrays.
"""

import numpy as np

__all__ = ["gram", "check_shape_matrix", "apply_shape"]

_BLOCK_BYTES = 64 << 20


def check_shape_matrix(shape_matrix, dim, name="shape_matrix"):
    """Validate M (finite, symmetric, positive definite, dim x dim) and return M^(1/2) (float64)."""
    M = np.asarray(shape_matrix)
    if (
        M.dtype == object
        or not (np.issubdtype(M.dtype, np.number) or M.dtype == bool)
        or np.issubdtype(M.dtype, np.complexfloating)
    ):
        raise ValueError(f"{name} must be a real {dim} x {dim} matrix, got dtype {M.dtype}")
    M = M.astype(np.float64)
    if M.shape != (dim, dim):
        raise ValueError(f"{name} must be a {dim} x {dim} matrix (the input dimension), got shape {M.shape}")
    if not np.all(np.isfinite(M)):
        raise ValueError(f"{name} must be finite")
    scale = float(np.max(np.abs(M))) or 1.0
    if not np.allclose(M, M.T, rtol=0.0, atol=1e-12 * scale):
        raise ValueError(f"{name} must be symmetric")
    ev, V = np.linalg.eigh(0.5 * (M + M.T))
    if not ev.min() > 1e-14 * ev.max():
        raise ValueError(f"{name} must be positive definite; its smallest eigenvalue is {ev.min():.3g}")
    return (V * np.sqrt(ev)) @ V.T


def apply_shape(X, sqrt_shape):
    """Rows of X mapped by M^(1/2) (a copy; X itself is never modified)."""
    return X if sqrt_shape is None else X @ sqrt_shape


def _as_rows(name, A, dim=None):
    A = np.asarray(A)
    if (
        A.dtype == object
        or np.issubdtype(A.dtype, np.complexfloating)
        or not (np.issubdtype(A.dtype, np.number) or A.dtype == bool)
    ):
        raise ValueError(f"{name} must be a real numeric array, got dtype {A.dtype}")
    A = A.astype(np.float64, copy=False)
    if A.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {A.shape}")
    if dim is not None and A.shape[1] != dim:
        raise ValueError(f"{name} has {A.shape[1]} features but the first argument has {dim}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return A


def gram(kernel, X, Y=None, shape_matrix=None):
    """K[i, j] = k(||x_i - y_j||_M) for rows x_i of X and y_j of Y (default: Y = X).

    Parameters
    ----------
    kernel : callable
        k(r), vectorised over radii.
    X : array_like, shape (n, d), or (d,) for a single vector
    Y : array_like, shape (m, d), or (d,), optional
    shape_matrix : array_like, shape (d, d), optional
        Symmetric positive definite M (anisotropic distance); default the identity.

    Returns
    -------
    ndarray of shape (n, m) float64, or a float when X and Y are both 1-D.
    """
    vectors = np.ndim(X) == 1 and (Y is None or np.ndim(Y) == 1)
    if vectors:
        X = np.atleast_2d(X)
        Y = None if Y is None else np.atleast_2d(Y)
    Xa = _as_rows("X", X)
    Ya = Xa if Y is None else _as_rows("Y", Y, Xa.shape[1])
    root = None if shape_matrix is None else check_shape_matrix(shape_matrix, Xa.shape[1])
    Xa, Ya = apply_shape(Xa, root), (apply_shape(Ya, root) if Y is not None else None)
    Ya = Xa if Ya is None else Ya
    out = np.empty((Xa.shape[0], Ya.shape[0]))
    sx, sy = np.einsum("ij,ij->i", Xa, Xa), np.einsum("ij,ij->i", Ya, Ya)
    rows = max(1, _BLOCK_BYTES // (8 * max(1, Ya.shape[0])))
    for s in range(0, Xa.shape[0], rows):
        d2 = sx[s : s + rows, None] + sy[None, :] - 2.0 * (Xa[s : s + rows] @ Ya.T)
        out[s : s + rows] = np.asarray(kernel(np.sqrt(np.maximum(d2, 0.0))), dtype=np.float64)
    if Y is None:  # exact symmetry (and k(0) on the diagonal) despite the rounding of d2
        out = 0.5 * (out + out.T)
        np.fill_diagonal(out, float(kernel(0.0)))
    return float(out[0, 0]) if vectors else out
