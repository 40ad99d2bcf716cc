"""Kernel learning in a hyper-RKHS: learn a (PD or indefinite) kernel from labels or a similarity matrix.

Regularised regression over a reproducing kernel Hilbert space *of kernels* (the hyper-RKHS of a
hyper-kernel, :mod:`spectralkit.learn.hyperkernels`) returns a kernel

    k*(x, x') = sum_ij beta_ij hk((x_i, x_j), (x, x')),

PD or indefinite (beta may have any sign), fitted to a target Y on the training pairs: the
*ideal kernel* of labels (Y_ij = +1 for the same class, -1 otherwise; -1/(C - 1) for C > 2
classes) for kernel learning, or a given similarity matrix for its out-of-sample extension. :class:`HyperKernelRidge` (squared
loss) and :class:`HyperKernelSVR` (epsilon-insensitive loss) follow the scikit-learn
conventions (extra ``sklearn``); their ``transform`` feeds ``SVC(kernel="precomputed")``.

With the radial hyper-kernel the learned kernel is a :class:`LearnedRadialKernel`: radial, with
an explicit signed spectral measure of finite total mass (it lives in an RKKS).

A note on the source paper's eq. (1): the reproducing property gives ||k||_inf <= G ||k||_H
with G = sup sqrt(hk(x, x)) (the paper prints G ||k||_H^2). Every normalised hyper-kernel here has
G = 1, so sup |k*| <= ||k*||_H.

Examples
--------
>>> import numpy as np
>>> from spectralkit.learn import HyperKernelRidge
>>> rng = np.random.default_rng(0)
>>> X = rng.normal(size=(40, 2)); y = (X[:, 0] * X[:, 1] > 0).astype(int)
>>> est = HyperKernelRidge(random_state=0).fit(X, y)
>>> est.transform(X[:5]).shape
(5, 40)
"""

from ._learned import LearnedKernel, LearnedRadialKernel
from ._pairs import ideal_kernel
from .hyperkernels import gaussian_hyperkernel, radial_hyperkernel, wishart_hyperkernel

__all__ = [
    "HyperKernelRidge",
    "HyperKernelSVR",
    "LearnedKernel",
    "LearnedRadialKernel",
    "SCALE_GRIDS",
    "gaussian_hyperkernel",
    "ideal_kernel",
    "radial_hyperkernel",
    "wishart_hyperkernel",
]


def __getattr__(name):
    # the estimators need scikit-learn (extra "sklearn"): import them on first use only
    if name in ("HyperKernelRidge", "HyperKernelSVR", "SCALE_GRIDS"):
        from . import _estimators

        return getattr(_estimators, name)
    raise AttributeError(f"module 'spectralkit.learn' has no attribute {name!r}")
