"""Kernels given by their spectral measure (DensityKernel) go through the whole pipeline."""

import math
import pickle

import numpy as np
import pytest
import scipy.special as sc

import spectralkit as sk
from spectralkit._numerics.special import omega
from spectralkit.exceptions import KernelDefinitionError, TransformError
from spectralkit.kernels import DensityKernel

D = 3
NODES = np.array([0.5, 1.3, 2.0])
COEF = np.array([1.0, -0.8, 0.3])


def chi_density(rho, d=D):
    """The law of chi_d (the norm of a standard Gaussian in R^d)."""
    t = np.asarray(rho, dtype=float)
    with np.errstate(divide="ignore"):
        return np.exp((d - 1) * np.log(t) - t * t / 2 - (d / 2 - 1) * math.log(2) - sc.gammaln(d / 2))


class Learned:
    """f(rho) = a(rho) p_chi(rho), a = sum_j c_j Omega_d(rho r_j): the radial hyper-kernel's measure; its
    kernel is sum_j c_j exp(-(r^2 + r_j^2)/2) 0F1(; 3/2; (r r_j)^2/4), 0F1(; 3/2; x^2/4) = sinh(x)/x."""

    def density(self, rho):
        rho = np.asarray(rho, dtype=float)
        return sum(c * omega(rho * r, D) for c, r in zip(COEF, NODES)) * chi_density(rho)

    def envelope(self, rho):
        return np.abs(COEF).sum() * chi_density(rho)

    def kernel(self, r):
        r = np.asarray(r, dtype=float)
        out = 0.0
        for c, rj in zip(COEF, NODES):
            x = r * rj
            ratio = np.where(x > 0, np.sinh(x) / np.where(x > 0, x, 1.0), 1.0)
            out = out + c * np.exp(-(r**2 + rj**2) / 2) * ratio
        return out


def make(**kw):
    lk = Learned()
    return DensityKernel(
        lk.density,
        D,
        scale=1.0,
        key="test-learned",
        envelope=lk.envelope,
        kernel=lk.kernel,
        name="learned",
        **kw,
    )


def test_measure_masses_and_bochner_identity():
    rep = sk.check_rkks(make(), D)
    assert rep.verdict == "RKKS" and rep.method == "given:radial-density"
    k0 = Learned().kernel(0.0)
    assert abs(rep.k0 - k0) < 1e-15
    assert abs(k0 - (rep.mass_plus.value - rep.mass_minus.value)) <= rep.k0_tolerance
    # the masses against an independent quadrature of max(+-f, 0)
    rho = np.linspace(0, 20, 400001)
    f = Learned().density(rho)
    mp = np.trapezoid(np.maximum(f, 0), rho)
    mm = np.trapezoid(np.maximum(-f, 0), rho)
    assert rep.mass_plus.value == pytest.approx(mp, rel=1e-8)
    assert rep.mass_minus.value == pytest.approx(mm, rel=1e-3, abs=1e-12)
    # a density known to within int |f - f_exact| <= mass_error: both mass errors carry it
    loose = sk.check_rkks(make(mass_error=1e-11), D)
    assert loose.mass_plus.value == rep.mass_plus.value
    assert loose.mass_plus.error == pytest.approx(rep.mass_plus.error + 1e-11, rel=1e-6)
    assert loose.mass_minus.error == pytest.approx(rep.mass_minus.error + 1e-11, rel=1e-6)
    assert make(mass_error=1e-11) != make()


def test_kernel_by_quadrature_matches_the_closed_form():
    no_kernel = DensityKernel(
        Learned().density, D, scale=1.0, key="test-learned-q", envelope=Learned().envelope
    )
    r = np.array([0.0, 0.3, 0.7, 2.0, 4.0])
    np.testing.assert_allclose(no_kernel(r), Learned().kernel(r), rtol=1e-10, atol=1e-13)
    assert no_kernel.value_at_zero() == pytest.approx(Learned().kernel(0.0), rel=1e-12)


def test_random_features_are_unbiased():
    k = make()
    reps, n_comp = 300, 64
    r = 0.9
    X = np.zeros((1, D))
    Y = X.copy()
    Y[0, 0] = r
    est = []
    rf = sk.RandomFeatures(k, dim=D, n_components=n_comp)
    for seed in range(reps):  # refits reuse the norm samplers: only the draws change
        rf.set_params(random_state=seed).fit()
        est.append(float((rf.transform(X) * rf.signature_ * rf.transform(Y)).sum()))
    est = np.array(est)
    se = est.std(ddof=1) / math.sqrt(reps)
    assert abs(est.mean() - Learned().kernel(r)) <= 4 * se
    # negative control: a 10 % error in the + mass is detected
    assert abs(1.1 * est.mean() - Learned().kernel(r)) > 4 * se


def test_dimension_is_fixed_and_arguments_are_checked():
    with pytest.raises(
        TransformError, match="given by its spectral measure on R\\^3; it has no measure on R\\^2"
    ):
        sk.check_rkks(make(), 2)
    with pytest.raises(KernelDefinitionError, match="density must be a callable"):
        DensityKernel(3.0, D, scale=1.0, key="x")
    with pytest.raises(KernelDefinitionError, match="key must be a non-empty string"):
        DensityKernel(Learned().density, D, scale=1.0, key="")
    with pytest.raises(KernelDefinitionError, match="scale must be a finite number > 0"):
        DensityKernel(Learned().density, D, scale=-1.0, key="x")
    with pytest.raises(KernelDefinitionError, match="mass_error must be a finite number >= 0, got -1.0"):
        DensityKernel(Learned().density, D, scale=1.0, key="x", mass_error=-1.0)
    with pytest.raises(KernelDefinitionError, match="finite float values"):
        DensityKernel(lambda rho: np.full(np.shape(rho), np.nan), D, scale=1.0, key="x")


def test_pickles_and_identity():
    k = make()
    again = pickle.loads(pickle.dumps(k))
    assert again == k and hash(again) == hash(k)
    np.testing.assert_array_equal(again(np.array([0.5, 1.0])), k(np.array([0.5, 1.0])))
