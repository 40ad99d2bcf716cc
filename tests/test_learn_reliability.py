"""Kernel learners on extreme scales and sizes: validated up front, never a non-finite output."""

import time

import numpy as np
import pytest

pytest.importorskip("sklearn")

from spectralkit.learn import HyperKernelRidge, HyperKernelSVR

rng = np.random.default_rng(0)
X = rng.normal(size=(30, 2))
y = (X[:, 0] > 0).astype(int)
K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=-1))

ESTIMATORS = [
    (est, kind) for est in (HyperKernelRidge, HyperKernelSVR) for kind in ("gaussian", "wishart", "radial")
]


@pytest.mark.parametrize("est, kind", ESTIMATORS)
@pytest.mark.parametrize(
    "params, fit_args, match",
    [
        ({}, (X * 1e160, y), "X has an entry of magnitude 2.33e\\+160, beyond 1e\\+100: squared distances"),
        ({}, (X * 1e-160, y), "the total variance of X, 1.24e-160\\^2 \\(the default sigma2\\), is outside"),
        ({"sigma2": 1e-300}, (X, y), "sigma2=1e-300 is outside \\[1e-100, 1e\\+100\\]"),
        ({"sigma2": 1e300}, (X, y), "sigma2=1e\\+300 is outside"),
        ({"sigma2_h": 1e-300}, (X, y), "sigma2_h=1e-300 is outside"),
        ({"sigma2": 1e-12}, (X, y), "sigma2=1e-12 is less than 1e-08 times the total variance of X"),
        ({}, (X, None, K * 1e200), "target_kernel has an entry of magnitude 1e\\+200, beyond 1e\\+100"),
    ],
)
def test_extreme_scales_are_refused_before_fitting(est, kind, params, fit_args, match):
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=match):
        est(kind, **params).fit(*fit_args)
    assert time.perf_counter() - t0 < 10  # generous: refused before any solve


@pytest.mark.parametrize("est, kind", ESTIMATORS)
def test_scales_within_the_limits_give_finite_kernels(est, kind):
    for scale in (1e45, 1e-45):
        out = est(kind, random_state=0).fit(X * scale, y).transform(X[:3] * scale)
        assert out.shape == (3, 30) and np.all(np.isfinite(out))


def test_transform_refuses_huge_inputs_and_never_returns_non_finite_values(monkeypatch):
    est = HyperKernelRidge(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has an entry of magnitude 1e\\+200"):
        est.transform(np.full((2, 2), 1e200))
    with pytest.raises(ValueError, match="Y has an entry of magnitude 1e\\+200"):
        est.learned_kernel_(X[:2], np.full((2, 2), 1e200))
    monkeypatch.setattr(type(est.kernel_), "gram", lambda self, A, B=None: np.full((len(A), 30), np.nan))
    for call in (lambda: est.transform(X[:2]), lambda: est.learned_kernel_(X[:2]), lambda: est.score(X, y)):
        with pytest.raises(FloatingPointError, match="the learned kernel is not finite on these inputs"):
            call()


def _needed(exc_info):
    return float(str(exc_info.value).split("needs about ")[1].split(" bytes")[0])


@pytest.mark.parametrize("est", [HyperKernelRidge, HyperKernelSVR])
def test_radial_bin_width_memory_is_estimated_before_allocating(est, monkeypatch):
    from spectralkit import _runtime
    from spectralkit.features import InsufficientMemoryError

    X40, y40 = X[:20].repeat(2, axis=0) + 0.01 * np.arange(40)[:, None], np.tile(y[:20], 2)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="bin_width=1000000000.0 exceeds .*, a bound on every pair distance"):
        est("radial", bin_width=1e9).fit(X40, y40)
    monkeypatch.setattr(_runtime, "available_memory", lambda: 1 << 30)  # the same on every machine
    needs = []
    for bw in (1e-9, 1e-7, 1e-300):
        with pytest.raises(
            InsufficientMemoryError, match=f"the radial solver with bin_width={bw:.3g} "
        ) as info:
            est("radial", bin_width=bw).fit(X40, y40)
        needs.append(_needed(info))
    assert needs[0] > needs[1] and needs[2] > needs[0]  # a wider bin needs less
    assert time.perf_counter() - t0 < 10
    # the estimate is compared with the available memory (here: too little for the default bins)
    monkeypatch.setattr(_runtime, "available_memory", lambda: 64 << 20)
    with pytest.raises(InsufficientMemoryError, match="more than the 67108864 bytes"):
        est("radial", bin_width=1e-5).fit(X40, y40)
    est("radial", bin_width=0.05).fit(X40, y40)  # small enough: fitted


def test_distinct_rows_at_a_tiny_scale_are_not_called_zero_variance():
    with pytest.raises(
        ValueError, match=r"the total variance of X, 1.24e-200\^2 \(the default sigma2\), is outside"
    ):
        HyperKernelRidge().fit(X * 1e-200, y)
    with pytest.raises(ValueError, match="zero total variance"):
        HyperKernelRidge().fit(np.ones((30, 2)), y)
