"""Oscillating kernels in high d (issue 15), against stored mpmath references.

* Gaussian envelope: the Laguerre series' double-double pass with its rounding majorant, the
  monomial form and the exact-integer fixed point; references log|mu(rho)| and sign from the
  Laguerre series summed in mpmath at 400 digits (300 terms).
* Rational-quadratic envelope, even d: the kink tables weighted by the radial density; references
  from mpmath's quadosc of the Hankel integral.
"""

import numpy as np
import pytest

import spectralkit as sk
from spectralkit.exceptions import TransformError
from spectralkit.kernels import from_spec
from spectralkit.transforms import _oscillating
from spectralkit.transforms._dispatch import transform_atom

RHO = np.array([0.5, 4.0, 8.0, 12.0, 16.0, 24.0])

# (kernel, d, [(log|mu|, sign) at RHO])
CASES = [
    (
        "exp(-r**2)*sin(3*r)/r",
        64,
        [
            (-84.0686861697792, -1),
            (-90.55542170918903, 1),
            (-99.4394118318369, -1),
            (-115.88972405958918, -1),
            (-133.4919554438423, 1),
            (-198.64768573675408, 1),
        ],
    ),
    (
        "exp(-r**2)*sin(3*r)/r",
        256,
        [
            (-327.96396265935175, 1),
            (-331.5111599361775, 1),
            (-344.7945064942933, 1),
            (-363.7847538666321, -1),
            (-390.2740038753591, -1),
            (-462.3371456011632, 1),
        ],
    ),
    (
        "(1 + r**2)*exp(-r**2/2)*besselj(0, 2*r)",
        64,
        [
            (-57.48059600852174, -1),
            (-65.31539945474583, 1),
            (-87.58839598218465, 1),
            (-114.42107693193928, -1),
            (-158.98911767258528, -1),
            (-300.37509134455587, -1),
        ],
    ),
    (
        "(1 + r**2)*exp(-r**2/2)*besselj(0, 2*r)",
        256,
        [
            (-232.79891193339873, 1),
            (-241.60488298003764, 1),
            (-265.873374182955, -1),
            (-306.19598341247786, -1),
            (-356.4068977531932, -1),
            (-487.50017322558926, -1),
        ],
    ),
]


@pytest.mark.parametrize(("spec", "dim", "ref"), CASES)
@pytest.mark.parametrize("many", [False, True])
def test_gaussian_oscillation_high_d_against_mpmath(spec, dim, ref, many):
    """A few points go to the fixed point directly, many to the double-double Laguerre pass first
    (then the monomial form for the points whose bound fails: small rho in d = 256): all within
    rel_error."""
    tr = transform_atom(from_spec(spec), dim)
    rho = np.concatenate([RHO, np.linspace(0.1, 30.0, 120)]) if many else RHO
    la, sg = tr.log_abs_mu(rho)
    ref_l = np.array([v for v, _ in ref])
    ref_s = np.array([s for _, s in ref])
    assert np.all(sg[: RHO.size] == ref_s)
    # |log mu - log ref| is the relative error to first order
    assert np.all(np.abs(la[: RHO.size] - ref_l) <= tr.rel_error)
    assert np.max(np.abs(la[: RHO.size] - ref_l)) < 1e-12  # measured: <= 4e-14


def test_laguerre_series_exact_zero():
    """exp(-r^2/2) cos(r) in d = 3 has mu(0) = 0 exactly: the fixed point returns 0 (-inf in logs)."""
    tr = transform_atom(from_spec("exp(-r**2/2)*cos(r)"), 3)
    la, _ = tr.log_abs_mu(np.array([0.0]))
    assert la[0] == -np.inf


# cos(2 r)/(1 + r^2)^3 in d = 8 (the even-d half step): mu at RHO_RQ from mpmath's quadosc of the
# Hankel integral (30 digits)
RHO_RQ = np.array([0.5, 1.5, 3.0, 10.0, 20.0, 30.0])
REF_RQ = [
    1.566695398805046e-6,
    5.9821117393158359e-7,
    -1.0844196513286774e-6,
    3.2946952520842524e-10,
    7.0904483565799556e-15,
    1.8916476452686258e-19,
]


def test_rq_half_step_d8_against_quadosc():
    """The kink tables weighted by the radial density: values down to 1e-13 of the peak of mu
    (rho = 30, where rho^7 mu still matters) within the stated rel_error."""
    tr = transform_atom(from_spec("cos(2*r)/(1 + r**2)**3"), 8)
    val = tr.mu(RHO_RQ)
    assert np.all(np.abs(val - REF_RQ) <= tr.rel_error * np.abs(REF_RQ))


@pytest.mark.slow
def test_rq_half_step_d16_bochner():
    """cos(2 r)/(1 + r^2)^5 in d = 16 failed the Bochner check by 7e-6 (noise below a floor relative
    to max|mu| grew by rho^15 into the masses); now k(0) = m+ - m- to the stated errors (8 s)."""
    rep = sk.check_rkks(from_spec("cos(2*r)/(1 + r**2)**5"), 16)
    assert rep.verdict == "RKKS"
    resid = abs(1.0 - (rep.mass_plus.value - rep.mass_minus.value))
    assert resid <= rep.mass_plus.error + rep.mass_minus.error
    assert resid < 1e-9


def test_precision_cap_is_a_transform_error(monkeypatch):
    """Past the fixed point's precision cap the Gaussian-oscillation series raises the library's
    TransformError naming the series, never a bare ArithmeticError."""
    monkeypatch.setattr(_oscillating, "_MAX_BITS", 64)
    with pytest.raises(TransformError, match="Gaussian-oscillation series in d = 256"):
        tr = transform_atom(from_spec("exp(-r**2)*sin(3*r)/r"), 256)
        tr.mu(np.linspace(0.0, 40.0, 7))
