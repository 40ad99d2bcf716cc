"""Gram matrices of radial kernels: K[i, j] = k(||x_i - y_j||_M), for scikit-learn and friends.

``RadialKernel.gram`` and ``DensityKernel.gram`` call :func:`gram`. Distances are computed in
row blocks (bounded memory) from ``||x||^2 + ||y||^2 - 2 x.y`` clipped at 0, with the shape matrix
M applied as x -> M^(1/2) x (so ||x - y||_M^2 = (x - y)^T M (x - y)). Called with two 1-D vectors,
the result is the scalar k(||x - y||_M): that is the calling convention of
``sklearn.metrics.pairwise_kernels(..., metric=k.gram)``; ``SVC(kernel=k.gram)`` passes 2-D arrays.
"""

import numpy as np

__all__ = ["gram", "check_shape_matrix", "validate_shape_matrix", "apply_shape"]

_BLOCK_BYTES = 64 << 20


def _real_numeric(dtype):
    """True for real numbers and booleans (not objects, strings or complex numbers)."""
    return (np.issubdtype(dtype, np.number) or np.issubdtype(dtype, np.bool_)) and not np.issubdtype(
        dtype, np.complexfloating
    )


def validate_shape_matrix(value, dim):
    """None, or a finite symmetric positive definite dim x dim matrix (returned as float64).

    The one validator of ``shape_matrix`` (the kernels' Gram matrices, the feature maps, the
    estimators and the CLI): symmetric to 1e-12 relative, positive definite by Cholesky.
    """
    if value is None:
        return None
    M = np.asarray(value)
    if not _real_numeric(M.dtype):
        raise ValueError(f"shape_matrix must be None or a real square matrix, got dtype {M.dtype}")
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"shape_matrix must be None or a square (d, d) matrix, got shape {M.shape}")
    if dim is not None and M.shape != (dim, dim):
        raise ValueError(
            f"shape_matrix must be a {dim} x {dim} matrix (the input dimension d = {dim}), "
            f"got shape {M.shape}"
        )
    if M.shape[0] == 0:
        raise ValueError("shape_matrix must be None or a non-empty (d, d) matrix, got shape (0, 0)")
    M = M.astype(np.float64)
    if not np.all(np.isfinite(M)):
        bad = np.argwhere(~np.isfinite(M))[0]
        raise ValueError(f"shape_matrix must be finite, got {M[tuple(bad)]} at row {bad[0]}, column {bad[1]}")
    scale = float(np.max(np.abs(M)))
    asym = float(np.max(np.abs(M - M.T)))
    if asym > 1e-12 * scale:
        raise ValueError(
            f"shape_matrix must be symmetric (to 1e-12 relative), got max |M - M^T| = {asym:.3g} "
            f"for max |M| = {scale:.3g}"
        )
    try:
        np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        smallest = float(np.linalg.eigvalsh(M)[0])
        raise ValueError(
            "shape_matrix must be positive definite (its Cholesky factorisation failed), got smallest "
            f"eigenvalue {smallest:.3g}"
        ) from None
    return M


def check_shape_matrix(shape_matrix, dim):
    """Validate M (:func:`validate_shape_matrix`) and return M^(1/2) (symmetric, float64)."""
    M = validate_shape_matrix(shape_matrix, dim)
    ev, V = np.linalg.eigh(0.5 * (M + M.T))
    return (V * np.sqrt(np.maximum(ev, 0.0))) @ V.T


def apply_shape(X, sqrt_shape):
    """Rows of X mapped by M^(1/2) (a copy; X itself is never modified)."""
    return X if sqrt_shape is None else X @ sqrt_shape


def _as_rows(name, A, dim=None):
    A = np.asarray(A)
    if not _real_numeric(A.dtype):
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
