"""Tests of spectralkit.sampling: tabulated inverse-CDF sampler and exact family samplers.

Statistical tests use fixed seeds. Two kinds of checks:

* KS tests at level alpha = 1e-3 (one-sample against a closed-form CDF, or two-sample against an
  exact sampler). With fixed seeds they are deterministic; a biased sampler (wrong Jacobian, a
  table across a zero, per-coordinate Student-t draws) gives p-values below 1e-10 at these sizes.
* Kernel reconstruction: mean of cos(w . z) over N draws vs k(|z|), tolerance 4 standard errors
  (SE = sample std / sqrt(N), estimated from the same draws).

The sampler is tested in isolation against small stand-in measures with closed-form CDFs
(Contract 2); the end-to-end checks against the real SpectralMeasure are at the bottom.
"""

import math
import time

import numpy as np
import pytest
import scipy.integrate
import scipy.special as sp
import scipy.stats as st

from spectralkit import _compiled, kernels
from spectralkit._numerics.random import positive_stable as _positive_stable
from spectralkit.exceptions import DivergentMassError, TransformError
from spectralkit.kernels import RadialKernel
from spectralkit.measures import Estimate, Lobe, SpectralMeasure, TailModel
from spectralkit.sampling import ExactSampler, RadialSampler, exact_sampler, radial_sampler, sobol_uniforms
from spectralkit.sampling._radial import _hermite_eval, _SurrogateCumulative

ALPHA = 1e-3  # level of every KS test


def _log_sphere(d):
    return math.log(2.0) + 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d)


# ---------------------------------------------------------------------------------------------
# stand-in measures implementing Contract 2 (closed forms)
# ---------------------------------------------------------------------------------------------
class GaussianMix:
    """sum_i c_i exp(-r^2 / (2 l_i^2)): f = sum_i c_i chi_d-density(rho l_i) l_i; closed-form CDFs."""

    def __init__(self, coefs, scales, dim, rho_c=None):
        self.c, self.l, self.dim = np.asarray(coefs, float), np.asarray(scales, float), dim
        self.is_finite = True
        rc = rho_c or 40.0 / self.l.min()
        grid = np.linspace(0.0, rc, 40001)
        v = self.radial_density(grid)
        from scipy.optimize import brentq

        zeros = [
            brentq(self.radial_density, grid[i], grid[i + 1], xtol=1e-15)
            for i in range(1, len(grid) - 1)
            if v[i] * v[i + 1] < 0
        ]
        edges = [0.0] + zeros + [rc]
        lobes = []
        for a, b in zip(edges[:-1], edges[1:]):
            m = self.cdf(b) - self.cdf(a)
            lobes.append(Lobe(a, b, int(np.sign(m)), abs(m), 1e-15))
        self.lobes, self.tail = tuple(lobes), None
        self.mass_plus = Estimate(sum(lb.mass for lb in lobes if lb.sign > 0), 1e-14)
        self.mass_minus = Estimate(sum(lb.mass for lb in lobes if lb.sign < 0), 1e-14)

    def _chi_pdf(self, x):
        d = self.dim
        with np.errstate(divide="ignore"):
            return np.exp(
                sp.xlogy(d - 1, x) - 0.5 * x * x - (0.5 * d - 1) * math.log(2) - math.lgamma(0.5 * d)
            )

    def radial_density(self, rho):
        rho = np.asarray(rho, float)
        return sum(c * l * self._chi_pdf(rho * l) for c, l in zip(self.c, self.l))

    def cdf(self, rho):
        return sum(
            c * sp.gammainc(0.5 * self.dim, 0.5 * (np.asarray(rho) * l) ** 2) for c, l in zip(self.c, self.l)
        )

    def lobe_cdf(self, sign):
        """Exact CDF of p_sign (mixture over the lobes of that sign)."""
        lobes = [lb for lb in self.lobes if lb.sign == sign]
        total = sum(lb.mass for lb in lobes)

        def F(rho):
            rho = np.asarray(rho, float)
            acc = np.zeros_like(rho)
            for lb in lobes:
                acc += np.abs(self.cdf(np.clip(rho, lb.a, lb.b)) - self.cdf(lb.a))
            return acc / total

        return F


class StudentT:
    """Matérn-nu law (multivariate t, 2 nu dof, unit lengthscale) with an exact power tail beyond rho_c.

    f(rho) = S_{d-1} c rho^(d-1) (2 nu + rho^2)^(-nu - d/2), CDF(rho) = F_{d, 2 nu}(rho^2 / d).
    """

    def __init__(self, nu, dim, rho_c=20.0):
        self.nu, self.dim, self.is_finite = nu, dim, True
        d = dim
        self.logc = (
            _log_sphere(d)
            + math.lgamma(nu + d / 2)
            - math.lgamma(nu)
            - (d / 2) * math.log(math.pi)
            + nu * math.log(2 * nu)
        )
        head = float(self.cdf(rho_c))
        self.lobes = (Lobe(0.0, rho_c, 1, head, 1e-15),)
        self.tail = TailModel(
            rho_c, 2 * nu + 1, math.exp(self.logc), Estimate(1 - head, 1e-15), Estimate(0.0, 0.0), 0.0
        )
        self.mass_plus, self.mass_minus = Estimate(1.0, 1e-15), Estimate(0.0, 0.0)

    def radial_density(self, rho):
        rho = np.asarray(rho, float)
        with np.errstate(divide="ignore"):
            return np.exp(
                self.logc
                + sp.xlogy(self.dim - 1, rho)
                - (self.nu + self.dim / 2) * np.log(2 * self.nu + rho**2)
            )

    def cdf(self, rho):
        return st.f.cdf(np.asarray(rho, float) ** 2 / self.dim, self.dim, 2 * self.nu)


# ---------------------------------------------------------------------------------------------
# the tables
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dim", [1, 3, 16, 64])
def test_table_inverts_the_exact_cdf(dim):
    """Independent check of u_error: |F_exact(x(u)) - u| <= 2e-10 at 2e5 random u (PD Gaussian)."""
    m = GaussianMix([1.0], [1.0], dim)
    s = RadialSampler(m, +1)
    assert s.u_error <= 1e-10
    assert s.n_knots > 10 and s.build_time > 0
    u = np.random.default_rng(0).random(200_000)
    x = s.sample_from_uniforms(u)
    assert np.max(np.abs(m.cdf(x) - u)) <= 2e-10


@pytest.mark.parametrize("dim", [1, 3, 16])
def test_signed_lobes_reproduce_p_plus_and_p_minus(dim):
    """Delta-Gaussian: p+ and p- (one lobe each, split at the zero of f) vs their exact CDFs."""
    m = GaussianMix([1.0, -1.0], [1.0, 10.0], dim)
    for sign in (+1, -1):
        s = RadialSampler(m, sign)
        assert s.u_error <= 1e-10
        assert s.mass == pytest.approx(getattr(m, "mass_plus" if sign > 0 else "mass_minus").value, rel=1e-12)
        assert s.mass_discrepancy < 1e-12
        x = s.sample(100_000, np.random.default_rng(1 + sign))
        lobe = next(lb for lb in m.lobes if lb.sign == sign)
        assert x.min() >= lobe.a and x.max() <= lobe.b  # never in the wrong-sign lobe
        assert st.kstest(x, m.lobe_cdf(sign)).pvalue > ALPHA
        u = np.random.default_rng(5).random(100_000)
        assert np.max(np.abs(m.lobe_cdf(sign)(s.sample_from_uniforms(u)) - u)) <= 2e-10


def test_several_lobes_of_one_sign_and_mixture_weights():
    """Three Gaussians with alternating signs: several lobes per sign, weights = lobe masses / total."""
    m = GaussianMix([1.0, -3.0, 3.0], [1.0, 2.0, 4.0], 3)
    signs = [lb.sign for lb in m.lobes]
    assert len(m.lobes) >= 3 and signs.count(signs[0]) >= 2
    for sign in (+1, -1):
        s = RadialSampler(m, sign)
        lobes = [lb for lb in m.lobes if lb.sign == sign]
        assert np.allclose(s.weights[:-1], [lb.mass / s.mass for lb in lobes], rtol=1e-14)
        x = s.sample(200_000, np.random.default_rng(3))
        inside = np.zeros(len(x), dtype=bool)
        for lb in lobes:
            inside |= (x >= lb.a) & (x <= lb.b)
        assert inside.all()
        assert st.kstest(x, m.lobe_cdf(sign)).pvalue > ALPHA
        u = np.random.default_rng(4).random(100_000)
        assert np.max(np.abs(m.lobe_cdf(sign)(s.sample_from_uniforms(u)) - u)) <= 2e-10
        # a uniform exactly at a lobe boundary C_j returns that lobe's end, never a point in between
        cut = s._cum[1 : len(lobes)]
        assert np.allclose(s.sample_from_uniforms(cut), [lb.b for lb in lobes[:-1]], rtol=1e-12)


def test_smooth_lobes_take_their_masses_from_the_density_fit():
    """Without an exact cumulative, every smooth lobe's masses come from the exact antiderivative of a
    piecewise Chebyshev fit of the density (the tests above check the resulting tables against the
    exact CDF to 2e-10); the fit's error is part of the stated mass and inverse-CDF errors."""
    m = GaussianMix([1.0, -3.0, 3.0], [1.0, 2.0, 4.0], 3)
    for sign in (+1, -1):
        s = RadialSampler(m, sign)
        assert all(isinstance(t._cumulative, _SurrogateCumulative) for t in s._tables)
        fit = s._tables[0]._cumulative
        assert 0 < fit.error <= 1e-12 * s.mass
        assert s.mass_error >= fit.error * sum(b - a for a, b in s.lobes)
        assert s.u_error <= 1e-10


def test_tables_of_a_costly_density_build_in_well_under_a_second_of_cpu():
    """exp(-r^2)/(1 + r^2) in d = 10: a mixture of ~1,000 Gaussians per density value. Its tables took
    15-27 s of CPU by quadrature of the density; from the fit 0.2 s (the bound is loose on purpose:
    CPU time, a loaded machine)."""
    m = SpectralMeasure(RadialKernel.from_string("exp(-r**2)/(1 + r**2)"), 10)
    _ = m.mass_plus
    t0 = time.process_time()
    s = RadialSampler(m, +1)
    assert time.process_time() - t0 < 5.0
    assert s.u_error <= 1e-10 and s.mass_discrepancy < 1e-12


def test_a_lobe_ending_at_a_singular_point_keeps_direct_quadrature():
    """cos(r)/(1 + r^2)^2 in d = 3 has a kink at rho = 1 (a singular point of mu): both lobes end there
    and are integrated from the density itself, not from a fit."""
    m = SpectralMeasure(RadialKernel.from_string("cos(r)/(1 + r**2)**2"), 3)
    assert m.singular_points == (1.0,)
    tables = RadialSampler(m, +1)._tables
    assert [1.0 in (t.a, t.b) for t in tables] == [True, True]
    assert all(t._cumulative is None for t in tables)


def test_wrong_jacobian_is_detected():
    """Sanity check of the KS test's power: dropping rho^(d-1) from the density is rejected."""

    class NoJacobian(GaussianMix):
        def radial_density(self, rho):
            rho = np.asarray(rho, float)
            with np.errstate(divide="ignore", invalid="ignore"):
                out = super().radial_density(rho) / np.where(rho > 0, rho, 1.0) ** (self.dim - 1)
            return out

    m = GaussianMix([1.0], [1.0], 5)
    broken = NoJacobian([1.0], [1.0], 5)
    with pytest.warns(RuntimeWarning, match="integrated lobe masses differ"):  # the mass check fires too
        sampler = RadialSampler(broken, +1)
    x = sampler.sample(20_000, np.random.default_rng(0))
    assert st.kstest(x, m.cdf).pvalue < 1e-10


@pytest.mark.parametrize("dim,nu", [(1, 0.5), (3, 0.5), (16, 0.5), (3, 1.5)])
def test_power_tail_is_sampled_exactly(dim, nu):
    """Heavy tail beyond rho_c by Pareto rejection: KS against the exact CDF; tail share within 4 SE."""
    m = StudentT(nu, dim, rho_c=8.0)
    s = RadialSampler(m, +1)
    n = 200_000
    x = s.sample(n, np.random.default_rng(7))
    assert st.kstest(x, m.cdf).pvalue > ALPHA
    p_tail = m.tail.mass_plus.value
    share = np.mean(x > m.tail.rho_c)
    assert abs(share - p_tail) <= 4 * math.sqrt(p_tail * (1 - p_tail) / n)
    assert s.tail_envelope_violations == 0
    assert 0 < s.tail_acceptance <= 1


def test_heavy_tail_is_not_truncated():
    """Cauchy law in d = 1: P(rho > 1e4) = 6.4e-5; 10^6 draws must reach far beyond rho_c."""
    m = StudentT(0.5, 1, rho_c=10.0)
    x = RadialSampler(m, +1).sample(1_000_000, np.random.default_rng(11))
    p = 1 - m.cdf(1e4)
    count = np.sum(x > 1e4)
    assert abs(count - 1e6 * p) <= 4 * math.sqrt(1e6 * p)
    assert x.max() > 1e5


def test_non_finite_density_is_rejected():
    """A measure whose density overflows somewhere must not give a silently wrong table."""

    class Overflowing(GaussianMix):
        def radial_density(self, rho):
            out = super().radial_density(rho)
            return np.where(np.asarray(rho) < 1e-3, np.inf, out)

    m = Overflowing([1.0], [1.0], 3)
    with pytest.raises(TransformError, match="radial density f\\(rho\\) is not finite"):
        RadialSampler(m, +1)


def test_compiled_lookup_matches_numpy_reference():
    m = GaussianMix([1.0, -1.0], [1.0, 10.0], 2)
    s = RadialSampler(m, -1)
    u = np.random.default_rng(0).random(10_000)
    out = np.empty_like(u)
    _compiled.inverse_cdf_lookup(u, s._u_knots, s._x_knots, s._slopes, out)
    assert np.allclose(out, _hermite_eval(u, s._u_knots, s._x_knots, s._slopes), rtol=1e-13, atol=0)
    # small batches take the numpy path, large ones the compiled one: same values to rounding
    assert np.allclose(s.sample_from_uniforms(u[:100]), s.sample_from_uniforms(u)[:100], rtol=1e-13, atol=0)


def test_qmc_norms_are_stratified():
    """Scrambled Sobol uniforms: one point per 1/n cell, so the KS distance is <= 1/n + u_error."""
    m = GaussianMix([1.0], [1.0], 4)
    s = RadialSampler(m, +1)
    n = 2**14
    x = s.sample(n, np.random.default_rng(0), qmc=True)
    assert st.kstest(x, m.cdf).statistic <= 1.0 / n + 1e-9
    x_iid = s.sample(n, np.random.default_rng(0))
    assert st.kstest(x_iid, m.cdf).statistic > 10.0 / n  # i.i.d. is ~ 0.9 / sqrt(n) = 7e-3
    u = sobol_uniforms(1000, np.random.default_rng(1))
    assert u.shape == (1000,) and u.min() >= 0 and u.max() < 1


def test_sampling_is_deterministic():
    m = StudentT(0.5, 3, rho_c=5.0)
    s = RadialSampler(m, +1)
    a = s.sample(50_000, np.random.default_rng(42))
    b = s.sample(50_000, np.random.default_rng(42))
    assert np.array_equal(a, b)


def test_sampler_validation():
    m = GaussianMix([1.0], [1.0], 3)
    with pytest.raises(ValueError, match="sign must be"):
        RadialSampler(m, 0)
    with pytest.raises(ValueError, match="tol must be"):
        RadialSampler(m, +1, tol=0.5)
    with pytest.raises(ValueError, match="no negative part"):
        RadialSampler(m, -1)
    s = RadialSampler(m, +1)
    with pytest.raises(TypeError, match="rng must be a numpy.random.Generator"):
        s.sample(10, 3)
    with pytest.raises(ValueError, match=r"u must lie in \[0, 1\)"):
        s.sample_from_uniforms(np.array([0.5, 1.0]))
    with pytest.raises(ValueError, match="u must lie"):
        s.sample_from_uniforms(np.array([np.nan]))
    with pytest.raises(ValueError, match="n must be a non-negative integer"):
        s.sample(-1, np.random.default_rng(0))
    t = RadialSampler(StudentT(0.5, 2), +1)
    with pytest.raises(ValueError, match="rng is required"):
        t.sample_from_uniforms(np.array([0.1, 0.999999999]))


# ---------------------------------------------------------------------------------------------
# exact samplers
# ---------------------------------------------------------------------------------------------
FAMILIES = [
    kernels.gaussian(0.7),
    kernels.laplacian(1.3),
    kernels.matern(1.5, 0.8),
    kernels.matern(2.5, 1.0),
    kernels.matern(0.8, 1.0),
    kernels.exponential_power(1.5, 1.0),
    kernels.exponential_power(0.7, 2.0),
    kernels.exponential_power(2.0, 1.0),
    kernels.rational_quadratic(1.0, 1.0),
    kernels.rational_quadratic(2.5, 0.5),
]


@pytest.mark.parametrize("kernel", FAMILIES, ids=lambda k: k.name)
@pytest.mark.parametrize("dim", [1, 2, 7])
def test_exact_sampler_rebuilds_the_kernel(kernel, dim):
    """mean cos(w . z) over 2e5 draws matches k(|z|) within 4 SE, for three |z|, and the norms match."""
    sampler = exact_sampler(kernel, dim)
    assert sampler is not None and sampler.mass == 1.0
    rng = np.random.default_rng(dim)
    W, norms = sampler.sample(200_000, rng)
    assert W.shape == (200_000, dim)
    assert np.allclose(np.linalg.norm(W, axis=1), norms)
    for r in (0.3, 1.0, 2.5):
        z = rng.standard_normal(dim)
        z *= r / np.linalg.norm(z)
        c = np.cos(W @ z)
        se = c.std() / math.sqrt(len(c))
        assert abs(c.mean() - kernel(r)) <= 4 * se + 1e-12, (r, c.mean(), kernel(r))
        assert sampler.kernel(r) == pytest.approx(kernel(r), rel=1e-10)
    # sample_norms draws the same law as the norms of sample (two-sample KS)
    assert st.ks_2samp(sampler.sample_norms(100_000, rng), norms[:100_000]).pvalue > ALPHA


def test_matern_per_row_chi2_not_per_coordinate():
    """docs/theory.md §4: Matérn-3/2, d = 2, r = 1 is 0.483; per-coordinate Student-t would give 0.428."""
    k = kernels.matern(1.5, 1.0)
    assert k(1.0) == pytest.approx(0.4834, abs=1e-3)
    z = np.array([1.0, 1.0]) / math.sqrt(2.0)  # |z| = 1, off the axes
    W, _ = exact_sampler(k, 2).sample(1_000_000, np.random.default_rng(0))
    c = np.cos(W @ z)
    assert abs(c.mean() - k(1.0)) < 4 * c.std() / 1e3
    # the wrong construction (independent t_3 coordinates), for contrast
    wrong = np.random.default_rng(0).standard_t(3, size=(1_000_000, 2))
    assert np.cos(wrong @ z).mean() == pytest.approx(0.428, abs=0.003)


def test_laplacian_is_multivariate_cauchy():
    """||w||^2 / d ~ F(d, 1) for the multivariate Cauchy law (d = 5), KS."""
    s = exact_sampler(kernels.laplacian(1.0), 5)
    x = s.sample_norms(100_000, np.random.default_rng(0))
    assert st.kstest(x**2 / 5, st.f(5, 1).cdf).pvalue > ALPHA


@pytest.mark.parametrize("beta", [0.2, 0.5, 0.85])
def test_positive_stable_laplace_transform(beta):
    """E exp(-t A) = exp(-t^beta) (Kanter), within 4 SE at t = 0.3, 1, 3."""
    a = _positive_stable(beta, 400_000, np.random.default_rng(1))
    for t in (0.3, 1.0, 3.0):
        v = np.exp(-t * a)
        assert abs(v.mean() - math.exp(-(t**beta))) <= 4 * v.std() / math.sqrt(len(v))


def test_shape_matrix():
    """k(||z||_M), ||z||_M = sqrt(z^T M z): frequencies M^(1/2) w_iso, within 4 SE."""
    M = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 0.5]])
    k = kernels.matern(1.5, 1.0)
    s = exact_sampler(k, 3, shape=M)
    W, _ = s.sample(400_000, np.random.default_rng(2))
    for z in (np.array([0.5, -0.3, 0.8]), np.array([1.0, 1.0, 0.0])):
        c = np.cos(W @ z)
        assert abs(c.mean() - k(math.sqrt(z @ M @ z))) <= 4 * c.std() / math.sqrt(len(c))


def test_exact_sampler_registry_and_validation():
    assert exact_sampler(kernels.delta_gaussian(1, 10), 3) is None
    assert exact_sampler(kernels.spherical_polynomial(2, 2), 3) is None
    assert exact_sampler(kernels.RadialKernel.from_string("exp(-r**2)"), 3) is None
    assert exact_sampler(kernels.laplacian(), 2).family == "matern"
    with pytest.raises(ValueError, match="family must be one of"):
        ExactSampler("log_kernel", {}, 2)
    with pytest.raises(ValueError, match="dim must be an integer in"):
        ExactSampler("gaussian", {"lengthscale": 1.0}, 0)
    with pytest.raises(ValueError, match="shape must be positive definite"):
        ExactSampler("gaussian", {"lengthscale": 1.0}, 2, shape=[[1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match="shape must be symmetric"):
        ExactSampler("gaussian", {"lengthscale": 1.0}, 2, shape=[[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match=r"shape must be a finite 2 x 2 matrix"):
        ExactSampler("gaussian", {"lengthscale": 1.0}, 2, shape=np.eye(3))


# ---------------------------------------------------------------------------------------------
# end to end: tables built from the real SpectralMeasure vs the exact laws
# ---------------------------------------------------------------------------------------------
END_TO_END = [
    (kernels.gaussian(1.0), 3),
    (kernels.gaussian(0.5), 16),
    (kernels.laplacian(1.0), 3),
    (kernels.laplacian(1.0), 16),
    (kernels.matern(1.5, 1.0), 3),
    (kernels.matern(2.5, 1.0), 16),
    (kernels.rational_quadratic(1.0, 1.0), 3),
    (kernels.exponential_power(1.5, 1.0), 3),
    # heavy tail rho^(-1-alpha) beyond the table; slow because the library builds this table slowly
    # (~25 s of CPU, the measure ~10 s more): the two tests below share one table
    pytest.param(kernels.exponential_power(0.5, 1.0), 16, marks=pytest.mark.slow),
]


def _table(measure):
    """The + table of ``measure``, built once per process (radial_sampler's cache) and shared by the
    two end-to-end tests: building it is the expensive part and the same constructor runs."""
    tab = radial_sampler(measure, +1)
    assert isinstance(tab, RadialSampler)
    return tab


@pytest.mark.parametrize("kernel,dim", END_TO_END, ids=lambda v: getattr(v, "name", str(v)))
def test_tabulated_matches_exact_sampler(kernel, dim):
    """Two-sample KS (alpha = 1e-3) between the tabulated and the exact norm laws; u_error <= 1e-10."""
    measure = SpectralMeasure(kernel, dim)
    tab = _table(measure)
    assert tab.u_error <= 1e-10
    assert tab.mass == pytest.approx(measure.mass_plus.value, abs=1e-12)
    assert tab.mass_discrepancy < 1e-6
    rng = np.random.default_rng(dim)
    x = tab.sample(100_000, rng)
    y = exact_sampler(kernel, dim).sample_norms(100_000, rng)
    assert st.ks_2samp(x, y).pvalue > ALPHA


@pytest.mark.slow
@pytest.mark.parametrize("kernel,dim", END_TO_END, ids=lambda v: getattr(v, "name", str(v)))
def test_tabulated_rebuilds_the_kernel(kernel, dim):
    """Tabulated norms x uniform directions, 10^6 draws: mean cos(w . z) = k(|z|) within 4 SE."""
    measure = SpectralMeasure(kernel, dim)
    tab = _table(measure)
    rng = np.random.default_rng(123)
    n = 1_000_000
    rho = tab.sample(n, rng)
    g = rng.standard_normal((n, dim))
    W = g * (rho / np.linalg.norm(g, axis=1))[:, None]
    for r in (0.2, 1.0, 3.0):
        z = np.zeros(dim)
        z[0] = r
        c = np.cos(W @ z) * tab.mass
        assert abs(c.mean() - kernel(r)) <= 4 * c.std() / math.sqrt(n) + 1e-9


def test_delta_gaussian_lobes_end_to_end():
    """Real measure of the delta-Gaussian in d = 3: both lobe laws against the closed-form CDFs."""
    measure = SpectralMeasure(kernels.delta_gaussian(1.0, 10.0), 3)
    ref = GaussianMix([1.0, -1.0], [1.0, 10.0], 3)
    for sign in (+1, -1):
        s = RadialSampler(measure, sign)
        assert s.u_error <= 1e-10
        x = s.sample(100_000, np.random.default_rng(9))
        assert st.kstest(x, ref.lobe_cdf(sign)).pvalue > ALPHA


def test_divergent_measure_raises():
    measure = SpectralMeasure(kernels.spherical_polynomial(3.0, 1), 3)
    with pytest.raises(DivergentMassError):
        RadialSampler(measure, +1)


def test_a_lobe_whose_mass_the_density_fit_steps_over_is_integrated_directly():
    """exp(-sqrt(r)) cos(r) in d = 64: the last negative lobe [1.0148, 10] holds its mass within 0.01
    of its left end, 1e-9 of the largest lobe. The fitted density surrogate read its mass as 0 (within
    its error, relative to the largest lobe) and the table build failed ("has zero mass"); a lobe
    whose surrogate mass misses the measured one is now tabulated from the density itself."""
    measure = SpectralMeasure(RadialKernel.from_string("exp(-sqrt(r))*cos(r)"), 64)
    last = measure.lobes[-1]
    assert last.sign == -1 and last.b == 10.0 and last.mass < 1e-8 * max(lb.mass for lb in measure.lobes)
    sampler = RadialSampler(measure, -1)
    (table,) = [t for t in sampler._tables if t.a == last.a]
    # the negative part of the lobe lies within 0.012 of its left end (the density is below the
    # transform's floor beyond, and jumps to 0 there): adaptive quadrature
    reference, _ = scipy.integrate.quad(
        lambda x: max(-float(measure.radial_density(np.array([x]))[0]), 0.0),
        last.a,
        last.a + 0.012,
        epsabs=0.0,
        epsrel=1e-10,
        limit=500,
    )
    # the lobe's local tolerance is 1e-4 (its share of the mass is 1e-9); the density itself is
    # noisy at a few 1e-6 of this lobe (the transform's stated mass error is 1e5 times its mass)
    assert abs(table.mass - reference) <= 1e-5 * reference
    assert sampler.mass_discrepancy <= 1e-6


def _sampler_counting_density_points(formula, dim):
    """(measure, the + part's RadialSampler, density points its build evaluated), the measure's
    derivation done before counting."""
    m = SpectralMeasure(RadialKernel.from_string(formula), dim)
    _ = m.lobes
    points = []
    real = m.radial_density
    m.radial_density = lambda rho: (points.append(np.size(rho)), real(rho))[1]
    sampler = RadialSampler(m, +1)
    return m, sampler, sum(points)


def test_a_density_good_to_its_stated_error_only_is_still_fitted():
    """exp(-r) J_0(2 r) in d = 2: the route states 1e-9 and its values carry noise above the fit's
    1e-13, so no panel converged and the tables integrated the route itself (622,856 density points,
    30 s). The fit is retried allowing the values' stated error: fewer than 150,000 points, and the
    table's mass matches the lobe's."""
    m, s, points = _sampler_counting_density_points("exp(-r)*besselj(0, 2*r)", 2)
    assert m.transforms[0][1].rel_error == 1e-9
    assert all(t._cumulative is not None for t in s._tables)
    assert points < 150_000
    assert s.u_error <= 1e-10 and s.mass_discrepancy < 1e-9


def test_tables_of_fitted_lobes_read_the_fit_as_their_density():
    """exp(-r^2) cos(2r) in d = 16: the lobes take their masses from the fitted surrogate; their
    knots and slopes read the same fit instead of the route (each value a multiple-precision
    Laguerre sum where it cancels): 399 density points in all, 1,808 before, and the same tables."""
    _, s, points = _sampler_counting_density_points("exp(-r**2)*cos(2*r)", 16)
    assert all(t._cumulative is not None for t in s._tables)
    assert points < 800
    assert s.u_error <= 1e-10 and s.mass_discrepancy < 1e-12
