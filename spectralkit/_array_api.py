"""Random features of arrays from any Array API namespace (torch, CuPy, JAX, array_api_strict, ...).

A fitted feature map holds its frequencies as numpy float64 arrays. :func:`namespace` tells whether
an input is a non-numpy Array API array; :class:`DeviceWeights` moves the frequencies, phases and
scales to that array's device and dtype once per (namespace, device, dtype) and :func:`features`
computes ``[scale± cos/sin(X W±ᵀ (+ b±))]`` there, in the namespace's own operations, with the
column layout of the compiled numpy path (``_compiled.fused_features``):

* ``"sincos"``: ``[s+ cos A | s+ sin A | s- cos B | s- sin B]``, ``A = X W+ᵀ``, ``B = X W-ᵀ``;
* ``"cos"``: ``[s+ cos(A + b+) | s- cos(B + b-)]``.

Nothing leaves the device: the data are never copied to host memory. numpy arrays keep the
compiled path. Namespaces are found through the array's ``__array_namespace__`` (array_api_strict,
CuPy, JAX) or, for arrays without it (torch), through the optional ``array-api-compat`` package
(extra ``array``), imported only then.
"""

from __future__ import annotations

import numpy as np

__all__ = ["DeviceWeights", "check_input", "dtype_name", "features", "namespace"]

_NUMPY_DTYPES = {"float32": np.float32, "float64": np.float64}


def namespace(X):
    """The Array API namespace of ``X``, or None for numpy arrays and plain array-likes."""
    if isinstance(X, (np.ndarray, np.generic, list, tuple)) or np.isscalar(X):
        return None
    get = getattr(X, "__array_namespace__", None)
    if get is not None:
        return get()
    if type(X).__module__.split(".")[0] in ("torch", "cupy", "jax", "jaxlib", "mlx", "ndonnx"):
        try:
            import array_api_compat
        except ImportError:
            raise ImportError(
                f"transforming a {type(X).__module__}.{type(X).__name__} needs array-api-compat: "
                "pip install 'spectralkit[array]' (or pass a numpy array)"
            ) from None
        return array_api_compat.array_namespace(X)
    return None


def dtype_name(xp, dtype):
    """``"float32"`` or ``"float64"`` for those dtypes of ``xp``, else None."""
    for name in ("float32", "float64"):
        if dtype == getattr(xp, name):
            return name
    return None


def check_input(xp, X, name, dim):
    """``X`` as a real floating 2-D array of ``xp`` (float32 stays, other reals become float64),
    validated like the numpy path; errors name the argument and the value."""
    kind = dtype_name(xp, X.dtype)
    if kind is None:
        if xp.isdtype(X.dtype, "complex floating"):
            raise ValueError(
                f"{name} must be real, got complex dtype {X.dtype}: refusing to drop the imaginary part"
            )
        if not (xp.isdtype(X.dtype, "numeric") or xp.isdtype(X.dtype, "bool")):
            raise ValueError(f"{name} must be a numeric array, got dtype {X.dtype}")
        X = xp.astype(X, xp.float64)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got shape {tuple(X.shape)}")
    if dim is not None and X.shape[1] != dim:
        raise ValueError(
            f"{name} has {X.shape[1]} features (columns), but the features were fitted for dim={dim}"
        )
    if X.shape[0] and not bool(xp.all(xp.isfinite(X))):
        raise ValueError(f"{name} contains NaN or infinite values")
    return X


class DeviceWeights:
    """Frequencies, phases and scales of a fitted map on one device and dtype (built once)."""

    def __init__(
        self, xp, device, dtype, W_plus, W_minus, offsets_plus, offsets_minus, scale_plus, scale_minus
    ):
        np_dtype = _NUMPY_DTYPES[dtype_name(xp, dtype)]

        def move(a):
            return None if a is None else xp.asarray(np.ascontiguousarray(a, dtype=np_dtype), device=device)

        self.xp = xp
        self.W_plus_T = move(np.asarray(W_plus).T)
        self.W_minus_T = move(np.asarray(W_minus).T)
        self.offsets_plus, self.offsets_minus = move(offsets_plus), move(offsets_minus)
        # rounded to the dtype once, as the compiled path does
        self.scale_plus = float(np_dtype(scale_plus))
        self.scale_minus = float(np_dtype(scale_minus))
        self.n_plus, self.n_minus = int(np.shape(W_plus)[0]), int(np.shape(W_minus)[0])


def features(X, weights, feature_map):
    """``[Phi_plus | Phi_minus]`` of ``X`` in its own namespace and on its own device."""
    xp = weights.xp
    blocks = []
    for W_T, offsets, scale, count in (
        (weights.W_plus_T, weights.offsets_plus, weights.scale_plus, weights.n_plus),
        (weights.W_minus_T, weights.offsets_minus, weights.scale_minus, weights.n_minus),
    ):
        if count == 0:
            continue
        phases = xp.matmul(X, W_T)
        # scaled in place (one array fewer per block than scale * cos(...); the same values)
        if feature_map == "sincos":
            for block in (xp.cos(phases), xp.sin(phases)):
                block *= scale
                blocks.append(block)
        else:
            phases += offsets
            block = xp.cos(phases)
            block *= scale
            blocks.append(block)
    return xp.concat(blocks, axis=1)
