"""The transform dispatcher transform_atom: validation, order closed form -> verified sympy ->
numeric, the acceptance test of sympy results, the time budget and the errors."""

import math
import os

import numpy as np
import pytest
import sympy

from spectralkit import kernels as K
from spectralkit.exceptions import TransformError
from spectralkit.kernels._analysis import analysis_budget, analyze
from spectralkit.measures import SpectralMeasure
from spectralkit.transforms import RadialTransform, _dispatch, numeric_transform, transform_atom

MATERN32 = "exp(-r)*(1 + r)"  # Matérn-3/2 with l = sqrt(3), written by hand


@pytest.fixture
def no_closed_forms(monkeypatch):
    """MATERN32 written by hand has an exact closed form (transforms/_exp_poly.py) and is a Gaussian
    mixture (transforms/_mixture.py); the tests that use it exercise the sympy and numeric routes,
    so closed forms and the mixture route are switched off for them."""
    monkeypatch.setattr(_dispatch, "closed_form", lambda atom, dim: None)
    monkeypatch.setattr(_dispatch, "_mixture_route", lambda atom, dim, budget: None)


def student_t(rho, d):
    """mu of (1 + r) e^(-r) on R^d: Gamma((d+3)/2)/(Gamma(3/2) pi^(d/2)) (1 + rho^2)^(-(d+3)/2)."""
    return (
        math.gamma((d + 3) / 2)
        / (math.gamma(1.5) * math.pi ** (d / 2))
        * (1 + np.asarray(rho) ** 2) ** (-(d + 3) / 2)
    )


RHO = np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 400)])


# -- validation -------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [0, -1, 2.5, True, "3", None])
def test_dim_is_validated(dim):
    with pytest.raises(ValueError, match=r"dim must be an integer in \[1, 4096\], got"):
        transform_atom(K.gaussian(), dim)


def test_numpy_integer_dim_is_accepted():
    assert transform_atom(K.gaussian(), np.int64(3)).method.startswith("closed-form")


@pytest.mark.parametrize("budget", [-1.0, math.inf, math.nan, "5", True])
def test_sympy_budget_is_validated(budget):
    with pytest.raises(ValueError, match="sympy_budget"):
        transform_atom(K.gaussian(), 2, sympy_budget=budget)


def test_atom_is_validated():
    with pytest.raises(TypeError, match="RadialKernel"):
        transform_atom("gaussian", 2)
    with pytest.raises(TypeError, match="symbolic must be True or False, got 'yes'"):
        transform_atom(K.gaussian(1.0), 2, symbolic="yes")
    with pytest.raises(TypeError, match="combination"):
        transform_atom(K.delta_gaussian(1.0, 10.0), 2)


# -- dispatch ---------------------------------------------------------------------------------
def test_closed_form_first():
    T = transform_atom(K.gaussian(2.0), 3)
    assert T.method.startswith("closed-form")


def test_sympy_result_accepted_after_verification(no_closed_forms):
    T = transform_atom(K.RadialKernel.from_string(MATERN32), 3, sympy_budget=10.0, symbolic=True)
    assert T.method == "sympy"
    ref = student_t(RHO, 3)
    err = np.abs(T.mu(RHO) - ref)
    assert np.all(err <= np.maximum(T.rel_error * ref, T.abs_error * ref[0]))
    assert np.all(err <= 1e-9 * ref + 1e-15 * ref[0])
    assert T.mu(np.array([0.0]))[0] == pytest.approx(ref[0], rel=1e-12)  # numeric below 1e-3 s


def test_sympy_zero_extension_of_compact_kernel():
    # exp(-r) on [0, 2] (no closed form: not a polynomial): sympy integrates over [0, R] only; verify
    # against the numeric mu
    k = K.RadialKernel.from_string("exp(-r)", support=2.0)
    T = transform_atom(k, 1, sympy_budget=10.0, symbolic=True)
    N = numeric_transform(k, 1)
    assert T.method == "sympy"
    np.testing.assert_allclose(T.mu(RHO), N.mu(RHO), rtol=1e-8, atol=1e-14 * N.mu.max_abs)
    assert T.tail_oscillation == 2.0


def _fake_sympy(factor):
    def fake(atom, dim, budget):
        return (lambda x: factor * student_t(x, dim)), "fake"

    return fake


def test_wrong_sympy_result_is_rejected(monkeypatch, no_closed_forms):
    # a formula 1e-6 off is rejected (tolerance 1e-8 relative at 41 check points)
    monkeypatch.setattr(_dispatch, "sympy_transform", _fake_sympy(1 + 1e-6))
    T = transform_atom(K.RadialKernel.from_string(MATERN32), 2, symbolic=True)
    assert T.method.startswith("numeric:")
    monkeypatch.setattr(_dispatch, "sympy_transform", _fake_sympy(1.0))
    assert transform_atom(K.RadialKernel.from_string(MATERN32), 2, symbolic=True).method == "sympy"
    assert transform_atom(K.RadialKernel.from_string(MATERN32), 2).method.startswith("numeric:")  # default


def test_non_finite_sympy_values_fall_back_to_numeric(monkeypatch, no_closed_forms):
    def fake(atom, dim, budget):
        def mu(x):
            x = np.asarray(x, dtype=float)
            out = student_t(x, dim)
            return np.where(x > 1e5, np.nan, out)  # "overflow" far out, beyond the check points

        return mu, "fake"

    monkeypatch.setattr(_dispatch, "sympy_transform", fake)
    T = transform_atom(K.RadialKernel.from_string(MATERN32), 2, symbolic=True)
    assert T.method == "sympy"
    x = np.array([1e6, 1e8])
    np.testing.assert_allclose(T.mu(x), student_t(x, 2), rtol=1e-7)


def test_budget_zero_skips_sympy(no_closed_forms):
    T = transform_atom(K.RadialKernel.from_string(MATERN32), 3, sympy_budget=0, symbolic=True)
    assert T.method == "numeric:gauss-legendre+steepest-descent"
    np.testing.assert_allclose(T.mu(RHO), student_t(RHO, 3), rtol=1e-7)


def _cpu_seconds():
    """CPU time of this process and of its finished children (sympy runs in a child under the budget)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def test_sympy_time_budget_is_respected():
    # sympy cannot transform exp(-r^2/2) cos(r) J0(r)/(1 + r^2) (it works for minutes); the budget
    # cuts it off. (exp(-r^2/2) cos(r) J0(r) has a closed form now, the Laguerre series of the
    # product: transforms/_oscillating.py.) The budget is CPU time: measured in CPU time, so that a
    # loaded machine cannot fail the test.
    k = K.RadialKernel.from_string("exp(-r**2/2)*cos(r)*besselj(0, r)/(1 + r**2)")
    analyze(k, budget=analysis_budget(0.5))  # warm the analysis cache (the entry transform_atom reads)
    t0 = _cpu_seconds()
    T = transform_atom(k, 2, sympy_budget=0.5)
    # the rest is the numeric transform itself (~2.5 s of CPU on a loaded 2-core machine)
    assert _cpu_seconds() - t0 < 6.0
    assert T.method.startswith("numeric:")


# -- fields and errors ------------------------------------------------------------------------
def test_numeric_fields_are_honest():
    T = numeric_transform(K.ntk_relu_sphere(), 2)
    assert isinstance(T, RadialTransform)
    assert T.nonnegative is False and T.radial_cdf is None and T.zeros is None
    assert 0 < T.rel_error < 1e-7 and 0 < T.abs_error < 1e-12
    assert T.tail_oscillation == 2.0 and T.tail_exponent == pytest.approx(2.0)
    assert T.scale == pytest.approx(0.5)


def test_non_decaying_kernel_raises():
    with pytest.raises(TransformError, match="does not decay"):
        transform_atom(K.log_kernel(), 1)


def test_unbounded_kernel_raises():
    with pytest.raises(TransformError, match="unbounded"):
        transform_atom(K.RadialKernel.from_string("exp(-r)/sqrt(r)"), 3)


def test_abs_formula_is_normalised_to_analytic_pieces():
    # exp(-|r - 1|) is normalised (kernels/_piecewise.py) to the analytic terms
    # (e^(r-1) - e^(1-r)) 1[r <= 1] + e^(1-r); in d = 1 its density is exactly
    # mu(rho) = (2 cos(rho) - e^-1) / (pi (1 + rho^2))
    k = K.RadialKernel.from_string("exp(-abs(r - 1))")
    assert k.is_combination and not any(a.expr.has(sympy.Abs) for _, a in k.terms)
    m = SpectralMeasure(k, dim=1)
    rho = np.array([0.3, 2.0, 7.5])
    want = (2 * np.cos(rho) - np.exp(-1.0)) / (np.pi * (1 + rho**2))
    np.testing.assert_allclose(m.radial_density(rho) / 2.0, want, rtol=1e-7)
    assert abs(m.mass_plus.value - m.mass_minus.value - np.exp(-1.0)) <= 1e-7
