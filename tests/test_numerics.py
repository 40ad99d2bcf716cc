"""The shared numerical building blocks: quadrature, Chebyshev interpolation, the CPU budget."""

import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import mpmath
import numpy as np
import pytest

from spectralkit._numerics import budget
from spectralkit._numerics.budget import BudgetExceeded, cpu_time_limit, run_with_budget
from spectralkit._numerics.chebyshev import fit_adaptive
from spectralkit._numerics.quadrature import (
    exp_sinh,
    integrate_adaptive,
    integrate_intervals,
    panel_rule,
    tanh_sinh,
    unit_rule,
)
from spectralkit._numerics.special import (
    log_besselk,
    log_origin_coefficient,
    origin_term_coefficient,
    scaled_bessel,
)


# ---------------------------------------------------------------------------------------------
# quadrature
# ---------------------------------------------------------------------------------------------
def test_rules_integrate_polynomials_exactly():
    t, w = unit_rule(16)
    for k in range(32):
        assert np.dot(w, t**k) == pytest.approx(1.0 / (k + 1), rel=1e-14)
    x, v = panel_rule(np.linspace(0.0, 3.0, 4), 8)
    assert np.dot(v, x**5) == pytest.approx(3.0**6 / 6, rel=1e-14)


def test_integrate_intervals_error_estimate_bounds_the_error():
    lo = np.array([0.0, 1.0, 0.0])
    hi = np.array([1.0, 5.0, 80.0])
    val, err = integrate_intervals(np.cos, lo, hi)
    exact = np.sin(hi) - np.sin(lo)
    assert np.all(np.abs(val - exact) <= err + 1e-15)
    assert err[2] > 1e-3  # 80 radians of cos are not resolved by one panel: the estimate says so


def test_integrate_adaptive_converges_with_honest_errors():
    val, err = integrate_adaptive(lambda x: np.sqrt(x), np.array([0.0]), np.array([2.0]), rel_tol=1e-12)
    exact = 2.0**1.5 / 1.5
    assert abs(val[0] - exact) <= max(err[0], 1e-15 * exact)
    assert err[0] < 1e-10
    # a capped refinement keeps the unconverged estimate instead of claiming convergence
    val, err = integrate_adaptive(lambda x: np.cos(1e4 * x), np.array([0.0]), np.array([10.0]), max_panels=8)
    assert abs(val[0] - math.sin(1e5) / 1e4) <= err[0]


# ---------------------------------------------------------------------------------------------
# Chebyshev
# ---------------------------------------------------------------------------------------------
def test_fit_adaptive_measures_its_error():
    f = np.exp
    interp, err = fit_adaptive(f, -2.0, 3.0, tol=1e-12)
    x = np.linspace(-2.0, 3.0, 1001)
    assert np.max(np.abs(interp(x) / f(x) - 1)) <= 10 * max(err, 1e-14)
    assert err <= 1e-12


def test_fit_adaptive_falls_back_to_direct_panels_at_a_kink():
    def kink(x):
        return np.abs(x - 0.1)

    interp, _ = fit_adaptive(kink, -1.0, 1.0, tol=1e-12, min_width=0.01, fallback=True, floor=lambda v: 1.0)
    assert interp.direct.any() and not interp.direct.all()
    x = np.linspace(-1, 1, 777)
    np.testing.assert_allclose(interp(x), kink(x), atol=1e-12)


def test_fit_adaptive_is_not_limited_by_a_large_offset():
    """log|mu| ~ -2000 in d = 256: the panel's mean is taken out before the transform, so the
    interpolant of a smooth function on top of a large constant is accurate to a few ulps of it,
    not to the 21-point transform's noise (~8 eps |f|, 4e-12 here), and panels are not bisected
    to chase that noise."""

    def f(t):
        return -2000.0 - 259.0 * t + np.sin(t)

    interp, err = fit_adaptive(f, 7.0, 9.0, degree=21, tol=2e-12, relative=False, check_tail=3)
    assert len(interp.edges) == 2  # one panel
    x = np.linspace(7.0, 9.0, 1001)
    assert np.max(np.abs(interp(x) - f(x))) <= 4 * np.spacing(4500.0)


def test_fit_adaptive_stops_bisecting_hopeless_panels():
    def log_abs(t):  # log|cos(3 t)| + i pi [cos < 0]: a zero in every panel of width > 1.05
        v = np.cos(3 * t)
        return np.log(np.abs(v)) + 1j * np.pi * (v < 0)

    def changes_sign(v):
        return bool(np.ptp(v.imag) > 0.5 * np.pi)

    kw = dict(n_init=8, degree=21, tol=1e-12, relative=False, min_width=0.01, fallback=True)
    plain, _ = fit_adaptive(log_abs, 0.0, 8.0, **kw)
    stopped, _ = fit_adaptive(log_abs, 0.0, 8.0, hopeless=changes_sign, hopeless_width=0.5, **kw)
    widths = np.diff(stopped.edges)[stopped.direct]
    assert widths.size and np.all(widths >= 0.25)  # direct once at most 1/2 wide, not at 0.01
    assert np.diff(plain.edges)[plain.direct].min() < 0.02
    x = np.linspace(0.0, 8.0, 999)
    np.testing.assert_array_equal(stopped(x).imag > 1, log_abs(x).imag > 1)


# ---------------------------------------------------------------------------------------------
# CPU budget
# ---------------------------------------------------------------------------------------------
def _sleep_then(seconds, value):
    time.sleep(seconds)
    return value


def _spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass
    return "done"


def _raise_value_error(msg):
    raise ValueError(msg)


def _die():
    os._exit(3)


def test_budget_returns_result():
    assert run_with_budget(_sleep_then, (0.0, {"x": [1, 2]}), 10.0) == {"x": [1, 2]}
    big = np.arange(2_000_000.0)  # 16 MB through the pipe
    np.testing.assert_array_equal(run_with_budget(_sleep_then, (0.0, big), 20.0), big)


def test_budget_is_cpu_time():
    t0 = time.monotonic()
    with pytest.raises(BudgetExceeded, match="budget of 1 s of CPU time"):
        run_with_budget(_spin, (60.0,), 1.0)
    # the kernel stops the child at 1-2 s of CPU; a loaded machine stretches that in wall time, and
    # the child would spin for 60 s
    assert time.monotonic() - t0 < 30.0


def test_budget_wall_clock_safety_net_for_a_sleeping_child():
    t0 = time.monotonic()
    with pytest.raises(BudgetExceeded):
        run_with_budget(_sleep_then, (60.0, 1), 0.25)
    # the net is at 3 x 0.25 + 2 s; the child would sleep 60 s. Half of that leaves room for a fork
    # and a kill on a loaded machine and still fails if the net never fires
    assert time.monotonic() - t0 < 30.0


def test_budget_safety_net_spares_a_child_that_is_still_computing(monkeypatch):
    # a clock 50x too fast: the wall-clock net (3 x 2 + 2 = 8 s) passes at every 0.25 s wake-up, as
    # it would for a child starved of CPU on a loaded machine; the child is computing: it must finish
    real = time.monotonic
    monkeypatch.setattr(budget, "_monotonic", lambda: 50.0 * real())
    assert run_with_budget(_spin, (0.6,), 2.0) == "done"
    # ... while a sleeping child is still stopped at the next check
    t0 = real()
    with pytest.raises(BudgetExceeded):
        run_with_budget(_sleep_then, (60.0, 1), 2.0)
    assert real() - t0 < 30.0  # not spared: stopped long before its 60 s sleep ends


def test_budget_propagates_exceptions_and_deaths():
    with pytest.raises(ValueError, match="boom"):
        run_with_budget(_raise_value_error, ("boom",), 10.0)
    with pytest.raises(RuntimeError, match="without a result"):
        run_with_budget(_die, (), 10.0)
    with pytest.raises(RuntimeError, match="pickled"):
        run_with_budget(lambda: lambda: 1, (), 10.0)
    with pytest.raises(ValueError, match="seconds"):
        run_with_budget(_die, (), -1.0)


def _steps_under_limits(seconds):
    """In a budget child: a spin that outlasts its limit, through a handler that catches Exception
    (as library code trying another method does), then one that finishes within its own limit."""
    out = []
    for spin in (60.0, 0.05):
        try:
            with cpu_time_limit(seconds):
                try:
                    out.append(_spin(spin))
                except Exception:  # noqa: BLE001 - must not swallow the timer
                    out.append("swallowed")
        except BudgetExceeded as exc:
            out.append(str(exc))
    return out


def test_cpu_time_limit_stops_each_step_of_one_child():
    t0 = time.monotonic()
    first, second = run_with_budget(_steps_under_limits, (0.5,), 10.0)
    assert first == "the step did not finish within its budget of 0.5 s of CPU time"
    assert second == "done"  # the timer of the first step is spent: the next step runs under its own
    assert time.monotonic() - t0 < 30.0  # the spin would take 60 s; the child's limit is 10 s


def test_cpu_time_limit_rejects_a_bad_budget():
    for bad in (0, -1.0, float("nan"), True, "1"):
        with pytest.raises(ValueError, match=r"seconds must be a finite number > 0, got"):
            with cpu_time_limit(bad):
                pass


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_killed_parent_leaves_no_computing_child(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = textwrap.dedent(f"""
        import os, time
        from spectralkit._numerics.budget import run_with_budget

        def work():
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            while True:
                pass

        run_with_budget(work, (), 600.0)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(200):
            if pid_file.exists() and pid_file.read_text():
                break
            time.sleep(0.05)
        child = int(pid_file.read_text())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(timeout=10)
        for _ in range(100):
            try:
                os.kill(child, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            os.kill(child, signal.SIGKILL)
            pytest.fail("the budget child outlived its killed parent")
    finally:
        if parent.poll() is None:
            parent.kill()


def test_double_exponential_rules_integrate_end_point_singularities():
    """tanh-sinh on [0, 1] and exp-sinh on [0, inf) against closed forms (Beta and Gamma integrals);
    the coarser level (every other node) is less accurate, so the level difference bounds the error."""
    x, xc, w, coarse = tanh_sinh(4)
    ref = float(mpmath.beta(0.3, 0.6) - 1)  # int x^-0.7 (1-x)^-0.4 + log x
    fine = (x**-0.7 * xc**-0.4 + np.log(x)) @ w
    rough = (x[coarse] ** -0.7 * xc[coarse] ** -0.4 + np.log(x[coarse])) @ (2 * w[coarse])
    assert abs(fine - ref) <= 1e-13 * abs(ref) < abs(rough - fine) + 1e-13 * abs(ref)
    x, w, coarse = exp_sinh(4)
    ref = float(mpmath.gamma(0.5))  # int x^-0.5 e^-x
    fine = (x**-0.5 * np.exp(-x)) @ w
    assert abs(fine - ref) <= 1e-13 * ref
    assert abs((x[coarse] ** -0.5 * np.exp(-x[coarse])) @ (2 * w[coarse]) - ref) > abs(fine - ref)


def test_fit_adaptive_does_not_chase_the_values_own_errors():
    """Values with stated relative errors 1e-7 (noise): with ``with_errors`` the panels stop
    bisecting at that level instead of splitting to the panel cap; the error it reports is the fit's,
    which the caller adds to the values' own."""
    rng = np.random.default_rng(0)

    def noisy(x):
        v = np.exp(x) * (1 + 1e-7 * rng.uniform(-1, 1, x.shape))
        return v, 1e-7 * np.abs(v)

    plain, _ = fit_adaptive(lambda x: noisy(x)[0], 0.0, 1.0, tol=1e-10, max_panels=64)
    aware, err = fit_adaptive(noisy, 0.0, 1.0, tol=1e-10, max_panels=64, with_errors=True)
    assert len(aware.edges) - 1 <= 2 < len(plain.edges) - 1
    x = np.linspace(0.0, 1.0, 101)
    assert np.max(np.abs(aware(x) / np.exp(x) - 1)) <= 1e-6


@pytest.mark.parametrize("kind", ["i", "k", "h1", "h2"])
def test_scaled_bessel_beyond_the_amos_range(kind):
    """Hankel's expansion where scipy's scaled functions lose eps |z| or return nan (|z| > 1e10),
    against mpmath at 30 digits; the AMOS range is passed through unchanged."""
    ref = {
        "i": lambda m, x: mpmath.besseli(m, x) * mpmath.exp(-x),
        "k": lambda m, x: mpmath.besselk(m, x) * mpmath.exp(x),
        "h1": lambda m, x: mpmath.hankel1(m, x) * mpmath.exp(-1j * x),
        "h2": lambda m, x: mpmath.hankel2(m, x) * mpmath.exp(1j * x),
    }[kind]
    for m in (0.0, 0.5, 7.0, 3.3):
        x = np.array([0.7, 30.0, 2e5 * (1 + m * m), 1e12, 1e15])
        got = scaled_bessel(kind, m, x)
        with mpmath.workdps(30):  # not mp.dps: the precision would leak into later tests
            want = np.array([complex(ref(m, mpmath.mpf(v))) for v in x])
        assert np.all(np.abs(got / want - 1) <= 4e-15), (m, got / want - 1)


def test_log_besselk_where_kve_overflows():
    """Large orders at small z (kve overflows: the small-z series) and huge z (beyond AMOS), against
    mpmath at 30 digits."""
    for m in (0.0, 0.5, 30.5, 127.0, 127.5, 200.0):
        z = np.array([1e-3, 0.1, 0.33, 1.0, 4.0, 50.0, 1e11])
        with mpmath.workdps(30):
            ref = np.array([float(mpmath.log(mpmath.besselk(m, mpmath.mpf(v)))) for v in z])
        assert np.all(np.abs(log_besselk(m, z) - ref) <= 1e-13 * np.maximum(1.0, np.abs(ref))), m


@pytest.mark.parametrize(
    "alpha,dim", [(1, 3), (3, 3), (0.5, 2), (-0.5, 3), (-2.5, 5), (5, 64), (79, 256), (2, 3)]
)
def test_origin_coefficient_in_logs_against_mpmath(alpha, dim):
    """C(alpha) = pi^(-d/2) 2^alpha Gamma((alpha + d)/2)/Gamma(-alpha/2), the transform of |x|^alpha:
    in logs (finite in d = 256, where the float form overflows), zero for even alpha, and the float
    form is the same number."""
    with mpmath.workdps(30):
        a = mpmath.mpf(alpha)
        ref = mpmath.pi ** (-mpmath.mpf(dim) / 2) * 2**a * mpmath.gamma((a + dim) / 2) * mpmath.rgamma(-a / 2)
    log_abs, sign = log_origin_coefficient(alpha, dim)
    if ref == 0:
        assert log_abs == -np.inf
        assert origin_term_coefficient(alpha, 0, dim) == 0
        return
    assert sign == (1 if ref > 0 else -1)
    assert abs(log_abs - float(mpmath.log(abs(ref)))) < 1e-13 * max(1.0, abs(log_abs))
    if dim < 256:
        assert origin_term_coefficient(alpha, 0, dim) == pytest.approx(float(ref), rel=1e-13)
