"""Exact spectral densities of compactly supported piecewise-polynomial radial kernels on R^d.

Convention (angular frequency, ``docs/conventions.md``): for a radial kernel k on R^d, nu = d/2 - 1,

    mu(rho) = (2 pi)^(-d/2) int_0^inf k(r) r^(d-1) Lambda_nu(rho r) dr,
    Lambda_nu(x) = x^(-nu) J_nu(x),   Lambda_nu(0) = 2^(-nu) / Gamma(nu + 1),

so that k(z) = int exp(i w.z) mu(|w|) dw and S_(d-1) int_0^inf rho^(d-1) mu(rho) drho = k(0),
S_(d-1) = 2 pi^(d/2) / Gamma(d/2).

Kernel class
------------
k(r) = P_i(r) on [b_(i-1), b_i], i = 1..m, 0 = b_0 < ... < b_m = R, k = 0 beyond R, each P_i a
polynomial in r (odd powers allowed). Coefficients and breakpoints are exact rationals: ints,
Fractions and sympy rationals as they are, floats at their exact binary value (so float
coefficients of (0.3 - r)^2 leave a jump of ~1e-17 at 0.3, which is then transformed exactly),
other sympy numbers at 60 digits. With Q_i = P_i - P_(i+1) (P_(m+1) = 0), the jump of k at b_i
as a whole polynomial,

    k(r) = sum_i Q_i(r) 1[r <= b_i],

so mu = sum_i mu_i, each mu_i the transform of one truncated polynomial (a "component";
breakpoints where k is one polynomial on both sides have Q_i = 0 and are dropped). All algebra
below is exact (Fractions); floating point enters only in the evaluation. Three evaluations are
used, by the size of x = rho b (b = R for the whole kernel, b_i for a component).

1. Power series (small x)
-------------------------
int_0^b r^(n+d-1) Lambda_nu(rho r) dr = Lambda_nu(0) b^(n+d)/(n+d) 1F2((n+d)/2; d/2, (n+d)/2+1; -x^2/4)
for each monomial; summed, one entire series in x^2 whose coefficients are moments of k:

    mu(rho) = (2 pi)^(-d/2) Lambda_nu(0) b^d sum_k (-1)^k M_k (x/2)^(2k) / (k! (nu+1)_k),
    M_k = b^-(d+2k) int_0^b k(r) r^(d-1+2k) dr = sum_n q_n b^n / (n + d + 2k)   (exact).

Normalised by W_0, W_k = sum_n |q_n b^n| / (n + d + 2k) >= |M_k| (for the whole kernel summed
over the pieces' own polynomials, so no extrapolated jump polynomial enters), it reads
mu = S m(x), m(x) = sum_k alpha_k x^(2k), S = (2 pi)^(-d/2) Lambda_nu(0) b^d W_0.

* float64 Horner. Rounding <= gamma eps E(x), E(x) = sum_k |alpha_k| x^(2k). Used up to x_S, the
  largest x of a grid (step 1/8) below which E(x) <= 16 env(x), env the largest |m| within
  +-pi (the local amplitude): at most 4 bits lost to the alternating series. gamma = 4 x the
  largest |float - exact| / (eps E) seen at 16 points on (0, x_S], at least 4. Truncation: the
  terms are bounded by tau_k = W_k/W_0 (x/2)^(2k)/(k! (nu+1)_k), whose ratio decreases; the sum
  stops where they are below 1e-20 of the largest.
* high precision. Horner in Python integers (mantissa, exponent) at 22 + L + 8 digits,
  L = log10(max tau_k / |m|) the digits lost to cancellation (~x^2/(2(nu+1))/ln 10 for x < nu,
  d = 4096 at x = 2100: ~800 digits), raised until the result keeps 22 digits. Builds and
  verifies the tables below; never used to evaluate.

2. Steepest descent (large x): mu = A - sum_i Re(exp(i b_i rho) B_i)
--------------------------------------------------------------------
With F(z) = Q(z) z^(d/2), J_nu = Re H1_nu on the real axis and Cauchy's theorem,

    int_0^b F(r) J_nu(rho r) dr = Re[int_0^(i inf) F H1_nu(rho z) dz - int_ray(b) F H1_nu(rho z) dz]

for any ray from b into the upper half-plane (H1_nu(rho z) decays there).

* Origin. int_0^inf t^s K_nu(t) dt = 2^(s-1) Gamma((s+1+nu)/2) Gamma((s+1-nu)/2) makes the real
  part of a term q_n z^n vanish for even n; for odd n

      A(rho) = sum_(n odd) q_n C_n rho^(-(n+d)),
      C_n = 2^n pi^(-d/2-1) (-1)^((n+1)/2) Gamma((n+d)/2) Gamma(n/2+1)

  (= 2^(n+d) pi^(d/2) Gamma((n+d)/2)/Gamma(-n/2) (2 pi)^(-d), the transform of |x|^n). Summed
  over the components only the odd coefficients of P_1 remain: A is an exact finite sum.
* Breakpoint b with jump Q(b(1 + w)) = sum_(j>=beta) e_j w^j (Taylor at b, exact, so a zero of
  order beta costs no cancellation), on z = b(1 + eta u), u = 1/x = 1/(rho b):

      B(rho) = i sgn(e_beta) (2 pi)^(-d/2) b^(d/2-beta-1/2) |e_beta| sqrt(2/pi)
               rho^(-((d+1)/2 + beta)) G(u),
      G(u) = (1/i) int sum_j (e_j/e_beta) u^(j-beta) eta^j (1 + eta u)^(d/2) H(nu, 1/u + eta) e^(i eta) d eta,
      H(nu, x + eta) = hankel1e(nu, x + eta) sqrt(pi x / 2),   G(0) = i^beta beta! e^(-i(nu pi/2 + pi/4)).

  The ray eta = i e^(i phi) s is tilted towards the origin by phi = atan(d u / 4), half the phase
  rate of (1 + i t u)^(d/2) on the vertical: near the turning point in high d the vertical
  integrand oscillates like exp(i t (nu+1) u) and Gauss-Laguerre needs >= 112 points for 1e-12
  (d = 4096), the tilted one converges with 24-40 (in low d phi ~ 0). The factor t^beta of
  eta^beta is put into the weight (generalized Gauss-Laguerre, alpha = beta, weights normalised
  by beta!: a jump of order beta ~ 150 peaks at t ~ beta, and beta! overflows at 171), so G / beta!
  is what is computed and tabulated (beta! moves into the log of the edge amplitude). G is computed
  by rules of orders 32, 40, 56, 80, 112 in turn until two agree to 2e-15 or stop
  improving (then the noise of scipy's hankel1e, ~1e-14 at nu ~ 100, 1e-13..1e-12 at
  nu ~ 1000); the last difference is the quadrature error estimate. G / psi(u),
  psi(u) = sum_j |e_j/e_beta| j! u^(j-beta), is tabulated by piecewise Chebyshev interpolation on
  [0, 1/x_T] (24 first-kind points per panel, panels bisected until the interpolant matches the
  quadrature at the 8 test points between the nodes to max(4e-15, 2 x quadrature error), or
  until a bisection no longer halves an error below 1e-12: the evaluation noise, kept in the
  stated error); psi
  keeps the relative accuracy when a low order of the jump is tiny. The table must reproduce
  G(0) (checked). G is smooth and non-oscillating in u (a polynomial for odd d).

  |mu| = O(rho^-p), p = min(min_(n odd, q_n != 0) (d + n), min_i ((d + 1)/2 + beta_i)).

  The split cancels (|A| + |B| >> |mu|) below the turning point x ~ nu + beta + 1, where H1_nu
  ~ i Y_nu is exponentially larger than J_nu. x_T is the lowest point of a descending grid (step
  max(1/4, c/4), c = (nu + beta + 1)^(1/3), from nu + beta + 1 + 4c + 8) down to which the split
  (summed in mpmath from its exact constants) agrees with the high-precision series, relative to
  the local amplitude, to max(1e-14, 8 x its disagreement at the top four points); the
  disagreement includes the quadrature estimate and 4 eps (|A| + |B|), the rounding of the float
  evaluation of the split (high-degree kernels: the origin terms cancel at moderate x). The
  agreement relative to |A| + |B| is eps_split.

3. The band between (high d)
----------------------------
For d >~ 32 the float series stops (x_S ~ 2.5 sqrt(nu)) before the split works (x_T ~ nu): on
[x_S, x_T] m(x) is tabulated by piecewise Chebyshev interpolation in x. Its values come from the
high-precision series below x_split, the lowest point where the split was verified, and from the
split itself above (x_T is raised beyond x_split only because the float sum of the origin terms
cancels there: d = 256, (1 - r)^150 has x_split ~ 600, x_T ~ 1700, where the series needs ~1000
digits): its origin terms at 60 digits by integer Horner in rho^-2, G from its table (built down
to x_split), the split's error eps_tail counted in the band's. Each panel is fitted
as log|m| (m of one sign) or as m exp(-lambda) with lambda affine through the
largest log|m| of each outer third of the nodes, whichever matches the values at the test
points; panels are bisected until one does to max(4e-15, 2 eps max|log m|) (the rounding of
log|m| itself).

Assembly, accuracy and cost
---------------------------
rho <= rho_series = x_S / R: the float series of the whole kernel. rho >= rho_tail =
max_i x_T,i / b_i: A - sum_i Re(exp(i b_i rho) B_i) with the exact A of P_1 (``tail_parts``).
Between: the sum of the components, each by its own method (one component: the band). The phase
b rho is formed in double-double (a plain product loses ~ulp(b rho) radians at b rho ~ 1e8). With
several components their sum is checked at 40 points against the high-precision series of the
whole kernel (where that costs <= 600 terms); a bound exceeded there scales the bounds of that
region.

Every method carries a measured error relative to its own magnitude scale E (series: gamma eps
E(x); band: eps_band |m| or eps_band exp(lambda), eps_band = 4 x the worst test-point error;
split: eps_tail (|A| + |B|), eps_tail = 4 x max(eps_split, table and quadrature errors)).
``error_bound(rho)`` is the sum over the parts used plus 4 eps |mu|; ``error_bound(rho,
relative=True)`` bounds |mu - exact| / |mu| for ``mu`` and for exp(``log_abs_mu``): it adds the
rounding of the logarithms, 2 eps (|log scale| + 2) times the magnitude of the summed parts. Then

    rel_error = the largest of those epsilons (+ 4 eps): the relative error wherever mu is not
                near one of its zeros;
    abs_error = 2 x max over a grid (1500 points on [0, 2 rho_tail + 8/R], 300 log-spaced up to
                1e8/R) of error_bound / max|mu|,

so |mu - exact| <= error_bound(rho) <= rel_error |mu| + abs_error max|mu|. Measured against 40-
to 200-digit references (``tests/test_polynomial_transform.py``): rel_error ~1e-14 for d <= 16,
<= 2e-13 up to d = 256, 5e-12..4e-11 at d = 4096 (scipy's hankel1e), and the errors stay below
error_bound. Build: 20-150 ms for one piece in d <= 64, 0.1-1 s for d <= 256 and up to three
pieces, ~5 s at d = 4096; evaluation: ~0.2-0.6 us per point (numpy, vectorised).
"""

from __future__ import annotations

import functools
import itertools
import math
import numbers
import time
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import mpmath
import numpy as np
import scipy.special as sc
import sympy
from numpy.typing import ArrayLike, NDArray
from scipy.ndimage import maximum_filter1d

from .._numerics.bigfloat import horner_pairs, int_pair
from .._numerics.chebyshev import clenshaw, clenshaw_panels
from .._numerics.chebyshev import coefficients as cheb_coefficients
from .._numerics.chebyshev import nodes as cheb_nodes
from .._validation import check_dim

__all__ = ["PolynomialTransform", "compact_polynomial_transform"]

#: (b_lo, b_hi, coeffs): k(r) = sum_n coeffs[n] r^n on [b_lo, b_hi]
_Piece = tuple[Any, Any, Sequence[Any]]
#: (A, [(b_i, B_i), ...]) of ``tail_parts``
_TailParts = tuple[NDArray[np.float64], list[tuple[float, NDArray[np.complex128]]]]

_MAX_DEGREE = 1000  # the parser bounds integer powers by 1000 as well
_MAX_PIECES = 64
_EPS = float(np.finfo(np.float64).eps)
_LN10 = math.log(10.0)
# Gauss-Laguerre rules of increasing order for the edge integral G (tried in turn until two agree)
_LAGUERRE_ORDERS = (32, 40, 56, 80, 112)
_CHEB_N = 24  # Chebyshev points per panel
_SERIES_LOSS = 16.0  # float series used while E(x) <= 16 env(x)
_SERIES_STEP = 0.125  # grid step (in x) for the float-series limit
_SERIES_POINTS = 16  # high-precision checks of the float series
_HP_DIGITS = 22  # correct digits of the high-precision series
_MAX_HP_DIGITS = 4000
_MARGIN = 4.0  # safety factor on every measured error
_VERIFY_TERMS = 600  # largest high-precision series used to verify a sum of components
_TOL_MIN = 4e-15  # best accuracy asked of a table (relative to its scale)
_MAX_QUAD_ERROR = 1e-6  # an edge integral less accurate than this is refused (not tabulated)
_SPLIT_TARGET = 1e-9  # the split must agree with the series this well at the top of its grid
_SPLIT_REACH = 16.0  # ... which is raised up to this many times nu + beta + 9 to get there


# ---------------------------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------------------------
def _to_fraction(value, what):
    """Exact rational value of a real number (a float at its exact binary value)."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{what} must be a real number, got the bool {value!r}")
    if isinstance(value, sympy.Basic):
        if value.is_Rational:
            return Fraction(int(value.p), int(value.q))
        if value.is_number:
            num = sympy.N(value, 60)
            re_, im_ = num.as_real_imag()
            if im_ == 0 and re_.is_finite and (re_.is_Float or re_.is_Rational):
                rat = sympy.Rational(re_)
                return Fraction(int(rat.p), int(rat.q))
            raise ValueError(f"{what} must be a finite real number, got {value}")
        raise TypeError(f"{what} must be a number, got the expression {value}")
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, numbers.Real):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"{what} must be finite, got {v!r}")
        return Fraction(v)
    raise TypeError(
        f"{what} must be a real number (int, float, Fraction or sympy number), "
        f"got {type(value).__name__} {value!r}"
    )


@functools.lru_cache(maxsize=256)
def _gen_laguerre(n, alpha):
    """Nodes t_i and weights w_i / Gamma(alpha + 1) of the n-point Gauss rule for the weight
    t^alpha e^(-t) on (0, inf) (Golub-Welsch; normalised so that the weights sum to 1, no
    overflow for any alpha). With alpha = beta the edge integrand's t^beta is in the weight:
    high-order jumps (beta ~ 150, the integrand peaks at t ~ beta) need no more points."""
    # scipy's rule (nodes refined by Newton, weights from the polynomials) keeps the relative
    # accuracy of the tiny weights far out, where the high-d integrand (1 + i t u)^(d/2) is huge;
    # Golub-Welsch weights are accurate only relative to the largest (d = 512: orders disagreed
    # by 3e-6). Golub-Welsch remains for alpha whose Gamma(alpha + 1) overflows.
    log_norm = float(sc.gammaln(alpha + 1.0))
    if log_norm < 700.0:
        nodes, weights = sc.roots_genlaguerre(n, alpha)
        return nodes, weights / math.exp(log_norm)
    k = np.arange(n, dtype=np.float64)
    diag = 2 * k + alpha + 1
    off = np.sqrt(k[1:] * (k[1:] + alpha))
    nodes, vecs = np.linalg.eigh(np.diag(diag) + np.diag(off, 1) + np.diag(off, -1))
    return nodes, vecs[0, :] ** 2


def _parse_pieces(pieces):
    """[(b_lo, b_hi, [coefficients])] as Fractions, trailing zero pieces removed."""
    if isinstance(pieces, (str, bytes, dict)) or not hasattr(pieces, "__iter__"):
        raise TypeError(f"pieces must be a sequence of (b_lo, b_hi, coeffs) triples, got {pieces!r}")
    pieces = list(pieces)
    if not pieces:
        raise ValueError("pieces must contain at least one (b_lo, b_hi, coeffs) triple, got none")
    if len(pieces) > _MAX_PIECES:
        raise ValueError(f"pieces: at most {_MAX_PIECES} pieces are supported, got {len(pieces)}")
    out = []
    for i, piece in enumerate(pieces):
        if isinstance(piece, (str, bytes)) or not hasattr(piece, "__len__") or len(piece) != 3:
            raise ValueError(f"pieces[{i}] must be a (b_lo, b_hi, coeffs) triple, got {piece!r}")
        lo = _to_fraction(piece[0], f"pieces[{i}] b_lo")
        hi = _to_fraction(piece[1], f"pieces[{i}] b_hi")
        if i == 0 and lo != 0:
            raise ValueError(f"pieces[0] must start at b_lo = 0, got {piece[0]!r}")
        if i > 0 and lo != out[-1][1]:
            raise ValueError(
                f"pieces must be contiguous: pieces[{i}] starts at b_lo = {piece[0]!r} but "
                f"pieces[{i - 1}] ends at b_hi = {float(out[-1][1])!r}"
            )
        if not hi > lo:
            raise ValueError(f"pieces[{i}] needs b_hi > b_lo, got b_lo = {piece[0]!r}, b_hi = {piece[1]!r}")
        raw = piece[2]
        if isinstance(raw, (str, bytes)) or not hasattr(raw, "__len__"):
            raise TypeError(
                f"pieces[{i}] coeffs must be a sequence of numbers (coefficient n of r^n), got {raw!r}"
            )
        coeffs = [_to_fraction(c, f"pieces[{i}] coeffs[{n}]") for n, c in enumerate(list(raw))]
        while coeffs and coeffs[-1] == 0:
            coeffs.pop()
        if len(coeffs) > _MAX_DEGREE + 1:
            raise ValueError(
                f"pieces[{i}] coeffs: degree at most {_MAX_DEGREE} is supported, got degree {len(coeffs) - 1}"
            )
        out.append((lo, hi, coeffs))
    while out and not out[-1][2]:
        out.pop()
    if not out:
        raise ValueError("pieces: the kernel is identically zero (every coefficient is 0)")
    return out


# ---------------------------------------------------------------------------------------------
# exact polynomial algebra (Fractions; coefficient n multiplies r^n)
# ---------------------------------------------------------------------------------------------
def _poly_sub(p, q):
    n = max(len(p), len(q))
    out = [(p[i] if i < len(p) else 0) - (q[i] if i < len(q) else 0) for i in range(n)]
    while out and out[-1] == 0:
        out.pop()
    return out


def _scaled(q, b):
    """Coefficients of Q(b s) in powers of s."""
    return [c * b**n for n, c in enumerate(q)]


def _shift_one(qhat):
    """Coefficients e_j of Q(b (1 + w)) in powers of w, from those of Q(b s)."""
    return [sum(math.comb(n, j) * qhat[n] for n in range(j, len(qhat))) for j in range(len(qhat))]


def _log_abs_fraction(f):
    return math.log(abs(f.numerator)) - math.log(f.denominator)


def _logsumexp(logs, axis=None):
    logs = np.asarray(logs, dtype=np.float64)
    top = np.max(logs, axis=axis, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(logs - top), axis=axis, keepdims=True)) + top
    return out.squeeze() if axis is None else np.squeeze(out, axis=axis)


def _frac_mpf(f):
    """mpf of a Fraction at the working precision."""
    return mpmath.mpf(f.numerator) / f.denominator


def _mpf_log(v):
    """float log|v| of an mpf without overflow (-inf for 0)."""
    if not v:
        return -math.inf
    man, exp_ = mpmath.frexp(abs(v))
    return math.log(float(man)) + int(exp_) * math.log(2.0)


def _polyval(coef, t):
    """sum_k coef[k] t^k by Horner (vectorised over t)."""
    out = np.zeros(np.shape(t))
    for c in coef[::-1]:
        out = out * t + c
    return out


def _pair_log(pair):
    """log|man 2^exp| to rounding eps |result| (man is scaled into [1/2, 1) first: log of the
    integer plus exp ln 2 would cancel, ~1e-14 for results of size 1)."""
    m, e = pair
    if not m:
        return -math.inf
    bl = abs(m).bit_length()
    top = abs(m) >> (bl - 60) if bl > 60 else abs(m) << (60 - bl)
    return math.log(top / 2.0**60) + (e + bl) * math.log(2.0)


def _pair_sign(pair):
    return 1.0 if pair[0] > 0 else -1.0


def _pair_float(pair):
    m, e = pair
    try:
        return math.ldexp(float(m), e) if abs(m).bit_length() < 1000 else float(_pair_mpf(pair))
    except OverflowError:
        return math.copysign(math.inf, m)


def _pair_mpf(pair):
    m, e = pair
    with mpmath.workprec(max(abs(m).bit_length(), 53) + 8):
        return mpmath.ldexp(mpmath.mpf(m), e)


# ---------------------------------------------------------------------------------------------
# piecewise Chebyshev interpolation
# ---------------------------------------------------------------------------------------------
_NODES = cheb_nodes(_CHEB_N)
_TESTS = np.cos(np.pi * np.arange(1, _CHEB_N, 3) / _CHEB_N)  # between nodes


def _locate(edges, x):
    idx = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, len(edges) - 2)
    a, b = edges[idx], edges[idx + 1]
    return idx, (2 * x - a - b) / (b - a)


def _panel_points(a, b):
    """Nodes then test points of the panel [a, b]."""
    return 0.5 * (a + b) + 0.5 * (b - a) * np.concatenate([_NODES, _TESTS])


# ---------------------------------------------------------------------------------------------
# the power series of one truncated transform
# ---------------------------------------------------------------------------------------------
class _Series:
    """m(x) = sum_k alpha_k x^(2k), mu = S m (module docstring, section 1).

    ``moment(k, dps)`` returns M_k (mpf, at least ``dps`` correct digits), ``log_majorant(k)``
    log W_k for an integer array k (W_k >= |M_k|, decreasing).
    """

    def __init__(self, dim, length, moment, log_majorant, w0):
        self.d = dim
        self.nu = dim / 2 - 1
        self._moment = moment
        self._w0 = w0  # W_0 as an exact Fraction or mpf
        self.log_w0 = float(log_majorant(np.array([0]))[0])
        with mpmath.workdps(30):
            w0m = w0 if isinstance(w0, mpmath.mpf) else _frac_mpf(w0)
            nu = mpmath.mpf(dim) / 2 - 1
            scale = (
                (2 * mpmath.pi) ** (-mpmath.mpf(dim) / 2)
                * 2 ** (-nu)
                / mpmath.gamma(nu + 1)
                * _frac_mpf(length) ** dim
                * w0m
            )
            self.log_scale = float(mpmath.log(scale))
            self.scale_f = _float_or_nan(scale)
            self.scale_mp = scale
        self._log_majorant = log_majorant
        self._log_tau = None
        self._dps, self._pairs, self._c, self._trunc = 0, [], None, {}
        self.gamma = None
        self.x_limit = None

    # -- exact coefficients ------------------------------------------------------------------
    def _master(self, dps, count):
        """alpha_0..alpha_(count-1) to ``dps`` digits as (mantissa, exponent) integer pairs; all of
        them are recomputed (at >= 1.5x the digits) when more digits are asked for."""
        if dps > self._dps:
            self._dps = max(dps, int(1.5 * self._dps), 40)
            self._pairs, self._c, self._trunc = [], None, {}
        if len(self._pairs) < count:
            with mpmath.workdps(self._dps + 10):
                w0 = self._w0 if isinstance(self._w0, mpmath.mpf) else _frac_mpf(self._w0)
                c = mpmath.mpf(1) if self._c is None else self._c
                for k in range(len(self._pairs), count):
                    if k > 0:
                        c = c / (2 * k * (self.d - 2 + 2 * k))  # 1/(4^k k! (nu+1)_k)
                    a = self._moment(k, self._dps + 10) * c / w0
                    sign, man, exp_, _ = a._mpf_
                    self._pairs.append((-man if (sign ^ (k % 2)) else man, exp_))
                self._c = c
        return self._pairs

    def __getstate__(self):
        # the high-precision coefficients are only needed while building: not pickled
        state = self.__dict__.copy()
        state.update(_dps=0, _pairs=[], _c=None, _trunc={}, _log_tau=None)
        return state

    def log_tau(self):
        """log of the majorant coefficients W_k / W_0 / (4^k k! (nu+1)_k), k < 20001."""
        if self._log_tau is None:
            k = np.arange(20001)
            lfac = (
                k * math.log(4.0)
                + sc.gammaln(k + 1.0)
                + sc.gammaln(self.nu + 1.0 + k)
                - sc.gammaln(self.nu + 1.0)
            )
            self._log_tau = self._log_majorant(k) - self.log_w0 - lfac
        return self._log_tau

    def coefficient_pairs(self, dps, count):
        """The coefficients rounded to ``dps`` digits (buckets of 20), as integer pairs."""
        bucket = 20 * math.ceil(dps / 20)
        master = self._master(bucket, count)
        cached = self._trunc.get(bucket, [])
        if len(cached) < count:
            bits = int(bucket * 3.33) + 16
            for m, e in master[len(cached) : count]:
                extra = abs(m).bit_length() - bits
                cached.append((m >> extra, e + extra) if extra > 0 else (m, e))
            self._trunc[bucket] = cached
        return cached[:count]

    def terms_needed(self, x, digits_below):
        """Number of terms after which the majorant terms stay below max * 10^-digits_below."""
        log_tau = self.log_tau()
        lt = log_tau + 2 * np.arange(log_tau.size) * math.log(max(x, 1e-300))
        top = int(np.argmax(lt))
        small = np.nonzero(lt[top:] < lt[top] - digits_below * _LN10)[0]
        if small.size == 0:
            raise ArithmeticError(f"the power series needs more than {lt.size} terms at x = {x:.6g}")
        return top + int(small[0]) + 1, float(lt[top])

    # -- high precision ------------------------------------------------------------------------
    def hp(self, x, log_hint=None):
        """m(x) with ``_HP_DIGITS`` correct digits as an integer pair (value = man 2^exp): Horner in
        big integers at a precision covering the cancellation, raised until the result keeps the
        digits. ``log_hint`` (a guess of log|m(x)|) saves the first, too short, attempt."""
        if x == 0:
            return self.coefficient_pairs(30, 1)[0]
        lost = 0.0
        if log_hint is not None and np.isfinite(log_hint):
            _, lmax = self.terms_needed(x, 30)
            lost = max(0.0, (lmax - log_hint) / _LN10)
        frac, ex = math.frexp(float(x))
        xm = int(frac * 2**53)
        var = (xm * xm, 2 * (ex - 53))
        while True:
            dps = int(_HP_DIGITS + lost + 8)
            if dps > _MAX_HP_DIGITS:
                raise ArithmeticError(
                    f"the power series needs more than {_MAX_HP_DIGITS} digits at x = {x:.6g}"
                )
            n, lmax = self.terms_needed(x, dps + 3)
            pair = horner_pairs(self.coefficient_pairs(dps, n), var, int(dps * 3.33) + 16)
            got = _pair_log(pair)
            new_lost = (lmax - got) / _LN10 if pair[0] else lost + 40.0
            if new_lost <= lost + 1.0:
                return pair
            lost = new_lost + 2.0

    # -- float64 -------------------------------------------------------------------------------
    def setup_float(self, x_max):
        """Float coefficients for x <= x_max, the limit x_S of the float series and its
        measured rounding constant gamma (error <= gamma eps E(x))."""
        n, _ = self.terms_needed(x_max, 40)
        self.alpha = np.array([_pair_float(p) for p in self.coefficient_pairs(40, n)])
        self.abs_alpha = np.abs(self.alpha)
        grid = np.arange(0.0, x_max + _SERIES_STEP / 2, _SERIES_STEP)
        m = self.float_eval(grid)
        e = self.abs_sum(grid)
        env = maximum_filter1d(np.abs(m), size=2 * math.ceil(math.pi / _SERIES_STEP) + 1)
        bad = np.nonzero(~(e <= _SERIES_LOSS * env))[0]
        j = (int(bad[0]) - 1) if bad.size else grid.size - 1
        self.x_limit = float(grid[max(j, 0)])
        # truncate to the terms that matter up to x_limit (majorant tail < 1e-3 eps E)
        keep, _ = self.terms_needed(max(self.x_limit, 1e-3), 20)
        self.alpha = self.alpha[:keep]
        self.abs_alpha = self.abs_alpha[:keep]
        # measured rounding against the high-precision series
        pts = np.linspace(self.x_limit / _SERIES_POINTS, self.x_limit, _SERIES_POINTS)
        ratios = [0.0]
        for x in pts:
            ref = _pair_mpf(self.hp(float(x)))
            diff = abs(float(ref - mpmath.mpf(float(self.float_eval(np.array([x]))[0]))))
            ratios.append(diff / (_EPS * float(self.abs_sum(np.array([x]))[0])))
        self.gamma = _MARGIN * max(1.0, max(ratios))
        return self.x_limit

    def float_eval(self, x):
        """m(x) by float64 Horner in x^2."""
        return _polyval(self.alpha, x * x)

    def abs_sum(self, x):
        """E(x) = sum_k |alpha_k| x^(2k), the rounding scale of ``float_eval``."""
        return _polyval(self.abs_alpha, x * x)


# ---------------------------------------------------------------------------------------------
# one component: the transform of Q(r) 1[r <= b]
# ---------------------------------------------------------------------------------------------
def _phase(rho, b_hi, b_lo):
    """exp(i rho b) with rho b formed in double-double (b = b_hi + b_lo): the phase is exact to
    rounding even for rho b ~ 1e8 (a plain product would lose ~ulp(rho b) radians)."""
    split = 134217729.0  # 2^27 + 1 (Veltkamp)
    with np.errstate(over="ignore", invalid="ignore"):
        p = rho * b_hi
        ra = rho * split
        rh = ra - (ra - rho)
        rl = rho - rh
        ba = b_hi * split
        bh = ba - (ba - b_hi)
        bl = b_hi - bh
        err = ((rh * bh - p) + rh * bl + rl * bh) + rl * bl
    err = np.where(np.isfinite(err), err, 0.0) + rho * b_lo
    c, s = np.cos(p), np.sin(p)
    return (c - s * err) + 1j * (s + c * err)


class _Part:
    """One additive part of mu on an array of rho: value = mant exp(logmag); ``fval`` the same
    value formed without logarithms (nan where not representable); ``errm`` the error bound in the
    same scale (error <= errm exp(logmag))."""

    __slots__ = ("errm", "fval", "logmag", "mant")

    def __init__(self, logmag, mant, fval, errm):
        self.logmag, self.mant, self.fval, self.errm = logmag, mant, fval, errm


def _zero_value(n):
    """(L, v, F, err, mag) of mu = 0 on n points."""
    return np.full(n, -np.inf), np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)


def _combine(parts, n):
    """Sum of parts -> (L, v, F, err, mag): value = v e^L (log path) or F (float path), error
    <= err e^L, mag e^L = sum of the parts' magnitudes (sets the rounding of the log path)."""
    if not parts:
        return _zero_value(n)
    logs = np.array([np.broadcast_to(p.logmag, (n,)) for p in parts])
    top = np.max(np.where(np.isfinite(logs), logs, -np.inf), axis=0)
    top = np.where(np.isfinite(top), top, 0.0)
    v = np.zeros(n)
    err = np.zeros(n)
    mag = np.zeros(n)
    fval = np.zeros(n)
    with np.errstate(under="ignore", over="ignore", invalid="ignore"):
        for p, lg in zip(parts, logs):
            w = np.exp(lg - top)
            v += p.mant * w
            err += p.errm * w
            mag += np.abs(p.mant) * w
            fval = fval + p.fval
    return top, v, fval, err, mag


class _Component:
    """mu_i(rho) = (2 pi)^(-d/2) int_0^b Q(r) r^(d-1) Lambda_nu(rho r) dr (module docstring)."""

    def __init__(self, b, q, dim):
        self.b = b
        self.bf = float(b)
        self.b_lo = float(b - Fraction(self.bf))
        self.d = dim
        self.nu = dim / 2 - 1
        qhat = _scaled(q, b)
        self.e = _shift_one(qhat)
        self.beta = next(j for j, c in enumerate(self.e) if c != 0)
        self.nu_eff = self.nu + self.beta + 1
        d = dim
        self._qhat = qhat
        self._log_q = np.array([_log_abs_fraction(c) if c != 0 else -np.inf for c in qhat])
        self._moments = []
        w0 = sum(abs(c) / (n + d) for n, c in enumerate(qhat))
        self.series = _Series(dim, b, self._moment, self._log_majorant, w0)
        # steepest-descent constants
        self.origin = _origin_terms(q, dim)
        self._q = q
        self._origin_pairs = None  # (p0, 60-digit constants as integer pairs), built by _split_log
        eb = self.e[self.beta]
        self.sigma = 1.0 if eb > 0 else -1.0
        self.p_b = (d + 1) / 2 + self.beta
        with mpmath.workdps(30):
            bc = (
                (2 * mpmath.pi) ** (-mpmath.mpf(d) / 2)
                * _frac_mpf(b) ** (mpmath.mpf(d) / 2 - self.beta - 0.5)
                * abs(_frac_mpf(eb))
                * mpmath.sqrt(2 / mpmath.pi)
            )
            bc = bc * mpmath.factorial(self.beta)  # G is tabulated divided by beta!
            self.log_bc = float(mpmath.log(bc))
            self.bc_f = _float_or_nan(bc)
            self.bc_mp = bc
        self.ratios = np.array([float(c / eb) for c in self.e[self.beta :]])
        if not np.all(np.isfinite(self.ratios)):
            raise ArithmeticError(
                f"the jump of the kernel at r = {self.bf} spans more than 300 orders of "
                "magnitude between its Taylor coefficients"
            )
        # psi(u) = sum_j |e_j / e_beta| j! u^(j-beta) > 0: the size of G when the orders do not
        # cancel. G is tabulated as G / psi, so that a tiny low-order jump (e.g. float coefficients
        # of (0.3 - r)^2 leave e_0 ~ 1e-17) keeps its relative accuracy at every u.
        # (scaled by 1/beta!, as G: j!/beta! without overflow for any degree)
        self.psi_coef = np.abs(self.ratios) * np.exp(
            np.array([math.lgamma(j + 1) - math.lgamma(self.beta + 1) for j in range(self.beta, len(self.e))])
        )
        self.x_tail = None
        self.eps_tail = None
        self.band = None

    def moment_fraction(self, k):
        """M_k = sum_n q_n b^n / (n + d + 2k), exactly: with q_n b^n = a_n / D (one common
        denominator) and L the lcm of the n + d + 2k, M_k = sum_n a_n (L / (n + d + 2k)) / (D L),
        integer arithmetic and one reduction (summing Fractions reduces after every term)."""
        if not self._moments:
            den = math.lcm(*(c.denominator for c in self._qhat if c != 0))
            self._num = [
                (n, c.numerator * (den // c.denominator)) for n, c in enumerate(self._qhat) if c != 0
            ]
            self._den = den
        while len(self._moments) <= k:
            shift = self.d + 2 * len(self._moments)
            lcm = math.lcm(*(n + shift for n, _ in self._num))
            total = sum(a * (lcm // (n + shift)) for n, a in self._num)
            self._moments.append(Fraction(total, self._den * lcm))
        return self._moments[k]

    def _moment(self, k, dps):
        with mpmath.workdps(dps):
            return _frac_mpf(self.moment_fraction(k))

    def _log_majorant(self, k):
        """log W_k, W_k = sum_n |q_n b^n| / (n + d + 2k) (k: integer array)."""
        n_idx = np.arange(self._log_q.size)
        return _logsumexp(self._log_q[None, :] - np.log(n_idx[None, :] + self.d + 2.0 * k[:, None]), axis=1)

    # -- the vertical path ----------------------------------------------------------------------
    def g_direct(self, u, order=_LAGUERRE_ORDERS[0], magnitude=False):
        """G(u) by Gauss-Laguerre on the ray z = b (1 + eta u), eta = i e^(i phi) s, u > 0 (array).

        The ray is tilted towards the origin by phi = atan(d u / 4), half the phase rate d u / 2 of
        (1 + i t u)^(d/2) on the vertical: in high d near the turning point the vertical-path
        integrand oscillates like exp(i t (nu+1) u) and Gauss-Laguerre then needs >= 112 points
        for 1e-12 (d = 4096), the tilted one converges with 24-40. Any ray into the upper
        half-plane gives the same G (Cauchy; H1(rho z) decays there). With ``magnitude``, also the
        sum of the magnitudes of the rule's terms: the scale of its rounding and of its errors."""
        t, w = _gen_laguerre(order, float(self.beta))
        uu = np.asarray(u, dtype=np.float64)[:, None]
        phi = np.arctan(0.25 * self.d * uu)
        direction = 1j * np.exp(1j * phi)
        s = t[None, :] / np.cos(phi)
        eta = direction * s
        poly = np.zeros(eta.shape, dtype=np.complex128)
        for j in range(len(self.ratios) - 1, -1, -1):  # Horner in u eta; eta^beta: see below
            poly = poly * (uu * eta) + self.ratios[j]
        fac = np.exp((self.d / 2) * np.log1p(eta * uu))
        h = sc.hankel1e(self.nu, 1.0 / uu + eta) * np.sqrt(np.pi / (2 * uu))
        osc = np.exp(-1j * s * np.sin(phi))  # e^(i eta) = e^(-t) osc with t = s cos(phi)
        vals = w[None, :] * poly * fac * h * osc
        # eta^beta = (direction / cos(phi))^beta t^beta, t^beta e^(-t) / beta! is the rule's weight
        # formed as i^beta exp(beta (i phi - log cos phi)): a complex power would lose ~beta eps
        ph = phi[:, 0]
        tilt_beta = (1j ** (self.beta % 4)) * np.exp(self.beta * (1j * ph - np.log(np.cos(ph))))
        factor = tilt_beta * (np.exp(1j * ph) / np.cos(ph))
        if magnitude:
            return vals.sum(axis=1) * factor, np.abs(vals).sum(axis=1) * np.abs(factor)
        return vals.sum(axis=1) * factor

    def psi(self, u):
        return _polyval(self.psi_coef, np.asarray(u, dtype=np.float64))

    def g_scale(self, u, g):
        """The scale errors of G are measured against: |G|, at least psi(u)/100."""
        return np.maximum(np.abs(g), 0.01 * self.psi(u))

    def g_adaptive(self, u, tol=2e-15):
        """G(u) and an error estimate (relative to ``g_scale``, per point): successive
        Gauss-Laguerre orders until two agree to ``tol`` or stop improving (the noise of hankel1e
        in high d); the error estimate is the last difference."""
        prev = self.g_direct(u, _LAGUERRE_ORDERS[0])
        last = math.inf
        for order in _LAGUERRE_ORDERS[1:]:
            g, mag = self.g_direct(u, order, magnitude=True)
            # relative to |G|, at least 1/100 of the magnitude of the rule's terms (psi, the size
            # of G when its Taylor orders do not cancel, overstates |G| by up to 1e12 for a jump
            # of order ~ 80 with 80 terms: errors measured against it would read as noise)
            scale = np.maximum(np.abs(g), 0.01 * mag)
            err = np.abs(g - prev) / scale
            worst = float(np.max(err))
            if worst <= tol or worst > 0.5 * last:  # converged, or down to the noise of hankel1e
                break
            prev, last = g, worst
        self._last_scale = scale
        return g, err

    def g0(self):
        """G(0) / beta! = i^beta exp(-i (nu pi/2 + pi/4)) (G is tabulated divided by beta!)."""
        return (1j ** (self.beta % 4)) * np.exp(-1j * (self.nu * math.pi / 2 + math.pi / 4))

    def tail_parts(self, rho, g, with_origin=True):
        """Parts of A_i and -Re(e^(i rho b) B_i) given G at u = 1/(rho b)."""
        lr = np.log(rho)
        parts = []
        if with_origin:
            parts += _origin_parts(self.origin, rho, lr, self.eps_tail_or0())
        mant = self.sigma * np.imag(_phase(rho, self.bf, self.b_lo) * g)
        logmag = self.log_bc - self.p_b * lr
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            fval = self.bc_f * rho ** (-self.p_b) * mant
        parts.append(_Part(logmag, mant, fval, self.eps_tail_or0() * self.g_scale(1.0 / (rho * self.bf), g)))
        return parts

    def eps_tail_or0(self):
        return 0.0 if self.eps_tail is None else self.eps_tail

    # -- crossover -------------------------------------------------------------------------------
    def _split_vs_series(self, x, log_hint):
        """(log|H|, sign H, |split - H| / |H| incl. the quadrature estimate, (|A| + |B|) / |H|) at
        x, H the high-precision series. The split is summed in mpmath from its exact constants
        (only G and the phase are float), so the comparison adds no rounding of its own."""
        pair = self.series.hp(float(x), log_hint)
        ref = _pair_mpf(pair)
        g, qerr = self.g_adaptive(np.array([1.0 / x]))
        rho = x / self.bf
        with mpmath.workdps(30):
            r = mpmath.mpf(rho)
            a_parts = [a * r ** (-p) for p, _, _, _, a in self.origin]
            mant = self.sigma * float(np.imag(_phase(np.array([rho]), self.bf, self.b_lo)[0] * g[0]))
            b_amp = self.bc_mp * r ** (-self.p_b)
            value = (mpmath.fsum(a_parts) + b_amp * mant) / self.series.scale_mp
            g_size = float(self.g_scale(np.array([1.0 / x]), g)[0])
            size = (mpmath.fsum(abs(a) for a in a_parts) + b_amp * g_size) / self.series.scale_mp
            # quadrature estimate, plus the rounding the float evaluation of the same sum will
            # make (the origin terms cancel at moderate x for high-degree kernels)
            err = abs(value - ref) + b_amp * float(qerr[0]) * g_size / self.series.scale_mp + 4 * _EPS * size
            return _pair_log(pair), _pair_sign(pair), float(err / abs(ref)), float(size / abs(ref))

    def find_tail_start(self, x_series):
        """Smallest x of a descending grid from which the split agrees with the high-precision
        series (relative to the local amplitude: the largest |m| within +-pi); the tolerance is
        8 times the disagreement at the top of the grid, at least 1e-14. Sets x_tail (= x_series
        when the split is already accurate there) and eps_split (the agreement relative to the
        split's own scale |A| + |B|)."""
        c = max(self.nu_eff, 1.0) ** (1.0 / 3.0)
        h = max(0.25, c / 4)
        top = max(self.nu_eff + 4 * c + 8, x_series + 4 * h)
        bottom = max(x_series, self.nu_eff - 6 * c - 4)
        rec = {}
        probe = False
        while True:
            if probe:  # the top four points of a raised grid first
                grid = top - h * np.arange(4)
            else:
                grid = np.arange(top, bottom - 1e-9, -h)
                if grid[-1] > bottom + 1e-9:
                    grid = np.append(grid, bottom)
            hint = None
            for x in grid:
                x = float(x)
                if x not in rec:
                    rec[x] = self._split_vs_series(x, hint)
                hint = rec[x][0]
            xs = np.array(sorted(rec, reverse=True))
            lh = np.array([rec[x][0] for x in xs])
            err = np.array([rec[x][2] for x in xs])
            reach = max(math.pi, 1.01 * h)
            rel = np.array(
                [err[j] * math.exp(lh[j] - np.max(lh[np.abs(xs - xs[j]) <= reach])) for j in range(xs.size)]
            )
            top_err = float(np.max(rel[:4]))
            if not top_err <= _SPLIT_TARGET and top < _SPLIT_REACH * (self.nu_eff + 8):
                # the split is not yet accurate at the top of the grid (a jump whose Taylor
                # polynomial spans many orders, e.g. (1 - r^2)^80 = (-w)^80 (2 + w)^80: its edge
                # integrand turns in phase along the ray until x >> nu + beta): start higher
                top, bottom, probe = 1.5 * top, top, True
                continue
            if probe:
                # accurate at the raised top: descend from it in steps of 1/48 of it (far above the
                # turning point the crossover needs no finer placing)
                probe, h = False, max(h, top / 48)
                continue
            tol = max(1e-14, 8 * top_err)
            last = 0
            while last + 1 < xs.size and rel[last + 1] <= tol:
                last += 1
            if rel[0] > tol or not np.isfinite(rel[0]):
                raise ArithmeticError(
                    f"the steepest-descent split does not reach the high-precision series at "
                    f"x = {xs[0]:.6g} (d = {self.d}, b = {self.bf})"
                )
            if last == xs.size - 1 and bottom > x_series:
                bottom = max(x_series, bottom - 8 * c - 8)
                continue
            break
        self.x_split = float(xs[last])
        self.x_tail = max(self.x_split, self._origin_settled(self.x_split))
        self.eps_split = float(max(rec[x][2] / rec[x][3] for x in xs[: last + 1]))
        return self.x_tail

    def _origin_settled(self, x0):
        """Smallest x >= x0 of a geometric grid (ratio 1.1, up to 1e7) beyond which the origin terms
        of A no longer cancel: sum |a_n rho^-(n+d)| <= 10 |A(rho)| at every grid point above it.

        The split is verified against the series only near the turning point; for a high-degree
        kernel (many odd powers with binomial coefficients) the alternating origin terms cancel
        far beyond it (d = 256, (1 - r)^150: by e^30 at x = 400) and their float sum would lose
        every digit there. Exact constants (60 digits) summed at 66: only whether the ratio is
        below 10 matters."""
        if len(self.origin) < 2:
            return x0
        xs = x0 * 1.1 ** np.arange(0, int(math.log(1e7 / x0) / math.log(1.1)) + 2)
        settled = x0
        # A = rho^-p0 H(rho^-2): the ratio needs H and its majorant only, by integer Horner
        p0, coef = self._origin_coefficient_pairs()
        coef_abs = [(abs(m), e) for m, e in coef]
        with mpmath.workdps(60):
            b = _frac_mpf(self.b)
            for x in xs[::-1]:
                v = int_pair(((b / mpmath.mpf(float(x))) ** 2)._mpf_)
                total = abs(mpmath.mpf(horner_pairs(coef, v, 220)))
                size = mpmath.mpf(horner_pairs(coef_abs, v, 220))
                if size > 10 * total:
                    break
                settled = float(x)
        return settled

    def _origin_coefficient_pairs(self):
        """(p0, [c_j]): A = rho^-p0 sum_j c_j rho^-2j, the constants at 60 digits as integer pairs
        (they cancel by up to ~1e15 where the band uses them)."""
        if self._origin_pairs is None:
            origin = _origin_terms(self._q, self.d, dps=60)
            p0 = min(p for p, _, _, _, _ in origin) if origin else 0
            coef = [(0, 0)] * (1 + (max(p for p, _, _, _, _ in origin) - p0) // 2 if origin else 0)
            for p, _, _, _, a in origin:
                coef[(p - p0) // 2] = int_pair(a._mpf_)
            self._origin_pairs = (p0, coef)
        return self._origin_pairs

    # -- tables ------------------------------------------------------------------------------------
    def build_tail_table(self):
        """Piecewise Chebyshev table of G on [0, 1/x_tail]; sets eps_tail (interpolation error at
        the test points, quadrature error estimate, split-vs-series agreement; margin 4)."""
        u_max = 1.0 / self.x_split  # down to where the split holds: the band uses it from there
        todo = [(0.0, u_max / 2, 0, math.inf), (u_max / 2, u_max, 0, math.inf)]
        done, worst = [], 0.0
        while todo:
            a, b, depth, parent = todo.pop()
            us = _panel_points(a, b)
            g, qerr = self.g_adaptive(us)
            if not float(np.max(qerr)) <= _MAX_QUAD_ERROR:
                raise ArithmeticError(
                    f"the edge integral G does not converge (Gauss-Laguerre orders disagree by "
                    f"{float(np.max(qerr)):.2g} at u = {float(us[np.argmax(qerr)]):.6g}; d = {self.d}, "
                    f"b = {self.bf}, jump of order {self.beta} with {len(self.ratios)} Taylor terms)"
                )
            psi = self.psi(us)
            scale = self._last_scale
            coef = cheb_coefficients(g[:_CHEB_N] / psi[:_CHEB_N])
            approx = clenshaw(np.broadcast_to(coef, (_TESTS.size, _CHEB_N)), _TESTS) * psi[_CHEB_N:]
            err_i = float(np.max(np.abs(approx - g[_CHEB_N:]) / scale[_CHEB_N:]))
            err_q = float(np.max(qerr))
            # a bisection that no longer halves an error already below 1e-12 has reached the noise
            # of the evaluation (hankel1e, ~1e-14 for high-order jumps): accepted, at that error
            noise = err_i < 1e-12 and err_i > 0.5 * parent
            if err_i > max(_TOL_MIN, 2 * err_q) and not noise and depth < 40 and len(done) + len(todo) < 4000:
                m = 0.5 * (a + b)
                todo += [(a, m, depth + 1, err_i), (m, b, depth + 1, err_i)]
            else:
                done.append((a, b, coef))
                worst = max(worst, err_i, err_q)
        done.sort(key=lambda p: p[0])
        self.g_edges = np.array([p[0] for p in done] + [done[-1][1]])
        self.g_coef = np.array([p[2] for p in done])
        # G(0) is known exactly and G(u) - G(0) = O(nu^2 u + psi(u) - psi(0)): the table must
        # approach it
        u_c = min(u_max, 1e-10 / max(1.0, self.nu_eff) ** 2)
        while self.psi(u_c) > self.psi_coef[0] * (1 + 1e-10) and u_c > 1e-300:
            u_c /= 16
        g_small = self.g_table(np.array([u_c]))[0]
        err0 = abs(g_small - self.g0()) / abs(self.g0())
        if err0 > 1e-8:
            raise ArithmeticError(
                f"the edge table misses G(0) (relative {err0:.2g}, d = {self.d}, b = {self.bf})"
            )
        self.eps_tail = _MARGIN * max(worst, self.eps_split, _EPS)

    def g_table(self, u):
        idx, t = _locate(self.g_edges, u)
        return clenshaw_panels(self.g_coef, idx, t) * self.psi(u)

    def build_band(self):
        """Table of m on [x_series, x_tail] from the high-precision series: per panel log|m|
        (m of one sign) or m exp(-lambda) with lambda affine through the panel ends, whichever
        matches the series at the test points; panels are bisected until one does."""
        xa, xb = self.series.x_limit, self.x_tail
        if xb <= xa:
            self.band = None
            self.eps_band = 0.0
            return
        c = max(self.nu_eff, 1.0) ** (1.0 / 3.0)
        n0 = max(1, math.ceil((xb - xa) / (4 * c)))
        edges0 = np.linspace(xa, xb, n0 + 1)
        todo = [(e0, e1, 0) for e0, e1 in itertools.pairwise(edges0)][::-1]
        done, worst = [], 0.0
        hint = None
        tt = np.concatenate([_NODES, _TESTS])
        while todo:
            a, b, depth = todo.pop()
            xs = _panel_points(a, b)
            logs, signs = np.empty(xs.size), np.empty(xs.size)
            split = a >= self.x_split
            if split:
                logs, signs = self._split_log(xs)
            else:
                for i in np.argsort(xs):
                    v = self.series.hp(float(xs[i]), hint)
                    logs[i] = _pair_log(v)
                    signs[i] = _pair_sign(v)
                    hint = logs[i]
            noise = 2 * _EPS * float(np.max(np.abs(logs)))  # rounding of log|m| itself
            if split:
                noise = max(noise, self.eps_tail)
            tol = max(_TOL_MIN, noise)
            fits = []
            if np.all(signs == signs[0]):
                coef = cheb_coefficients(logs[:_CHEB_N])
                approx = clenshaw(np.broadcast_to(coef, (_TESTS.size, _CHEB_N)), _TESTS)
                fits.append(
                    (float(np.max(np.abs(approx - logs[_CHEB_N:]))), coef, 0, float(signs[0]), (0.0, 0.0))
                )
            # affine envelope through the largest log|m| of each outer third of the nodes (nodes
            # run from t = 1 down to t = -1), raised so that |f| <= 1
            third = _CHEB_N // 3
            la, lb = float(np.max(logs[_CHEB_N - third : _CHEB_N])), float(np.max(logs[:third]))
            lam = [0.5 * (la + lb), 0.5 * (lb - la)]  # lambda(t) = lam0 + lam1 t, t in [-1, 1]
            lam[0] += max(0.0, float(np.max(logs - (lam[0] + lam[1] * tt))))
            f = signs * np.exp(logs - (lam[0] + lam[1] * tt))
            coef = cheb_coefficients(f[:_CHEB_N])
            approx = clenshaw(np.broadcast_to(coef, (_TESTS.size, _CHEB_N)), _TESTS)
            fits.append((float(np.max(np.abs(approx - f[_CHEB_N:]))), coef, 1, 1.0, lam))
            err, coef, mode, sign, lam = min(fits, key=lambda q: q[0])
            if err > tol and depth < 12:
                m = 0.5 * (a + b)
                todo += [(m, b, depth + 1), (a, m, depth + 1)]
            else:
                done.append((a, b, coef, mode, sign, lam))
                worst = max(worst, err, noise)
        done.sort(key=lambda p: p[0])
        self.band = {
            "edges": np.array([p[0] for p in done] + [done[-1][1]]),
            "coef": np.array([p[2] for p in done]),
            "mode": np.array([p[3] for p in done]),
            "sign": np.array([p[4] for p in done]),
            "lam": np.array([p[5] for p in done]),
        }
        self.eps_band = _MARGIN * worst

    def _split_log(self, xs):
        """(log|m|, sign m) at x >= x_split from the split, its origin terms summed at 60 digits
        from their exact constants (in float they cancel up to the settled point, which is why the
        band reaches that far), G from its table: far cheaper than the high-precision series at
        x ~ 10 nu (d = 256, (1 - r)^150: x_split ~ 300, settled ~ 1700, series of ~1000 digits).
        A = rho^-p0 H(rho^-2), H a polynomial summed by integer Horner (``horner_pairs``)."""
        p0, coef = self._origin_coefficient_pairs()
        g = self.g_table(1.0 / xs)
        rho = xs / self.bf
        mant = self.sigma * np.imag(_phase(rho, self.bf, self.b_lo) * g)
        logs, signs = np.empty(xs.size), np.empty(xs.size)
        with mpmath.workdps(60):
            for i, (r_, m_) in enumerate(zip(rho, mant)):
                r = mpmath.mpf(float(r_))
                inv2 = (1 / r) ** 2
                a_val = 0
                if coef:
                    man, ex = horner_pairs(coef, int_pair(inv2._mpf_), 220)
                    a_val = mpmath.mpf((man, ex)) * r ** (-p0)
                value = (a_val + self.bc_mp * r ** (-self.p_b) * float(m_)) / self.series.scale_mp
                logs[i] = float(mpmath.log(abs(value))) if value else -math.inf
                signs[i] = 1.0 if value >= 0 else -1.0
        return logs, signs

    def band_eval(self, x):
        """(log|m| or lambda, mantissa) on the band: m = mant exp(first)."""
        bd = self.band
        idx, t = _locate(bd["edges"], x)
        val = clenshaw_panels(bd["coef"], idx, t)
        mode = bd["mode"][idx]
        lam = bd["lam"][idx]
        log_part = np.where(mode == 0, val, lam[:, 0] + lam[:, 1] * t)
        mant = np.where(mode == 0, bd["sign"][idx], val)
        return log_part, mant

    # -- evaluation ------------------------------------------------------------------------------
    def parts(self, rho):
        """Parts of mu_i at rho (array, rho > 0), by the method of each x = rho b."""
        x = rho * self.bf
        s = self.series
        out = []
        m1 = x <= s.x_limit
        m3 = x >= self.x_tail
        m2 = ~(m1 | m3)
        n = rho.size
        logmag = np.full(n, s.log_scale)
        mant = np.zeros(n)
        errm = np.zeros(n)
        if np.any(m1):
            mant[m1] = s.float_eval(x[m1])
            errm[m1] = s.gamma * _EPS * s.abs_sum(x[m1])
        if np.any(m2):
            lp, mt = self.band_eval(x[m2])
            logmag[m2] += lp
            mant[m2] = mt
            errm[m2] = self.eps_band
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            fval = np.where(m3, 0.0, s.scale_f * np.exp(logmag - s.log_scale) * mant)
        head = _Part(np.where(m3, -np.inf, logmag), np.where(m3, 0.0, mant), fval, np.where(m3, 0.0, errm))
        out.append(head)
        if np.any(m3):
            g = np.zeros(n, dtype=np.complex128)
            g[m3] = self.g_table(1.0 / x[m3])
            safe = np.where(m3, rho, 1.0)
            for p in self.tail_parts(safe, g):
                out.append(
                    _Part(
                        np.where(m3, p.logmag, -np.inf),
                        np.where(m3, p.mant, 0.0),
                        np.where(m3, p.fval, 0.0),
                        np.where(m3, p.errm, 0.0),
                    )
                )
        return out


def _float_or_nan(v):
    try:
        f = float(v)
    except (OverflowError, ValueError):
        return math.nan
    return f if (math.isfinite(f) and (f == 0 or abs(f) >= 1e-300)) else math.nan


def _origin_terms(q, dim, dps=30):
    """[(n + d, log|a_n|, sign a_n, float a_n or nan, a_n)] for the odd n: a_n = q_n C_n (docstring),
    the last at ``dps`` digits."""
    out = []
    d = dim
    with mpmath.workdps(dps):
        for n, c in enumerate(q):
            if n % 2 == 0 or c == 0:
                continue
            a = (
                _frac_mpf(c)
                * mpmath.mpf(2) ** n
                * mpmath.pi ** (-mpmath.mpf(d) / 2 - 1)
                * (-1) ** ((n + 1) // 2)
                * mpmath.gamma(mpmath.mpf(n + d) / 2)
                * mpmath.gamma(mpmath.mpf(n) / 2 + 1)
            )
            out.append((n + d, float(mpmath.log(abs(a))), 1.0 if a > 0 else -1.0, _float_or_nan(a), a))
    return out


def _origin_horner(coef, y):
    """(sum_j c_j y^j, sum_j |c_j| y^j) for 0 <= y <= 1 and |c_j| <= 1. Points with y <= 2^-k
    (k >= 2) stop after n terms where the rest, at most sum_(j>=n) 2^(-kj) <= 2^(1-kn), is below
    eps^2 of what was summed (checked per point; the others take every term): far out, where the
    measure layer evaluates most, a few terms instead of ~75 (degree 150)."""
    mant = np.zeros(y.shape)
    size = np.zeros(y.shape)
    k = np.floor(-np.log2(np.maximum(y, 1e-300))).astype(int)
    full = k < 2
    for kk in np.unique(k[~full]):
        n = min(coef.size, int(math.ceil(120.0 / kk)) + 1)
        sel = np.nonzero(k == kk)[0]
        ys = y[sel]
        m_, s_ = np.zeros(ys.shape), np.zeros(ys.shape)
        for c in coef[:n][::-1]:
            m_ = m_ * ys + c
            s_ = s_ * ys + abs(c)
        rest = 2.0 ** (1 - kk * n) if n < coef.size else 0.0
        ok = rest <= _EPS * _EPS * s_
        mant[sel[ok]], size[sel[ok]] = m_[ok], s_[ok]
        full[sel[~ok]] = True
    if np.any(full):
        ys = y[full]
        m_, s_ = np.zeros(ys.shape), np.zeros(ys.shape)
        for c in coef[::-1]:
            m_ = m_ * ys + c
            s_ = s_ * ys + abs(c)
        mant[full], size[full] = m_, s_
    return mant, size


def _origin_parts(origin, rho, lr, eps, rho_ref=None):
    """Parts a_n rho^-(n+d) of A (error eps relative to each term). Many terms (high degree) are
    summed in one part, as a matrix: the error then also holds the rounding of that sum and of
    its logarithm relative to the sum of the terms' magnitudes."""
    if len(origin) > 4:
        # Horner in y = (rho_ref / rho)^2 <= 1 (rho_ref the smallest rho asked for), the terms
        # scaled by their largest value at rho_ref: one product per term instead of an exp
        p = np.array([o[0] for o in origin], dtype=np.float64)
        la = np.array([o[1] for o in origin])
        sg = np.array([o[2] for o in origin])
        fin = np.isfinite(lr)
        lr_ref = float(np.min(lr[fin])) if np.any(fin) else 0.0
        if rho_ref is not None:  # a fixed reference below every rho: far points need few terms
            lr_ref = min(lr_ref, math.log(rho_ref))
        arg = la - p * lr_ref
        big = float(np.max(arg))
        p0 = int(np.min(p))
        coef = np.zeros((int(np.max(p)) - p0) // 2 + 1)
        coef[((p - p0) // 2).astype(int)] = sg * np.exp(arg - big)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            y = np.exp(2 * (lr_ref - lr))
            mant, size = _origin_horner(coef, y)
            top = big - p0 * (lr - lr_ref)
            fval = np.exp(top) * mant
        # the rounding of the scaled coefficients (exp of arguments up to |arg - big|), of the
        # Horner sum and of the logarithm, relative to the sum of the terms' magnitudes
        lead = float(np.max(np.abs(arg - big)))
        errm = (eps + 4 * _EPS * (np.abs(top) + 2 + len(origin) + lead)) * size
        return [_Part(top, mant, fval, errm)]
    parts = []
    for p, la, sg, af, _ in origin:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            fval = af * rho ** (-float(p))
        parts.append(_Part(la - p * lr, np.full(rho.shape, sg), fval, np.full(rho.shape, eps)))
    return parts


class _WholeMoments:
    """Moments of the whole kernel in units of R, for its power series in x = rho R:
    M_k = sum_i (b_i/R)^(d+2k) M_k^(i) over the components (mpf; the precision is raised until the
    sum keeps the digits asked for), majorant W_k from the pieces themselves (no extrapolated jump
    polynomial enters)."""

    def __init__(self, pieces, comps, dim):
        self.d = dim
        R = pieces[-1][1]
        self.ratios = [c.b / R for c in comps]
        self.comps = comps
        logs, lows, highs, powers = [], [], [], []
        for lo, hi, coeffs in pieces:
            for n, c in enumerate(coeffs):
                if c != 0:
                    logs.append(_log_abs_fraction(c * R**n))
                    lows.append(float(lo / R))
                    highs.append(float(hi / R))
                    powers.append(n)
        self._log_c = np.array(logs)
        self._lo = np.array(lows)
        self._hi = np.array(highs)
        self._n = np.array(powers, dtype=np.float64)
        with mpmath.workdps(40):
            w0 = mpmath.mpf(0)
            for lo, hi, coeffs in pieces:
                for n, c in enumerate(coeffs):
                    if c != 0:
                        span = _frac_mpf(hi / R) ** (n + dim) - _frac_mpf(lo / R) ** (n + dim)
                        w0 += abs(_frac_mpf(c * R**n)) * span / (n + dim)
        self.w0 = w0

    def moment(self, k, dps):
        guard = 10
        while True:
            with mpmath.workdps(dps + guard):
                terms = [
                    _frac_mpf(r) ** (self.d + 2 * k) * _frac_mpf(c.moment_fraction(k))
                    for r, c in zip(self.ratios, self.comps)
                ]
                total = mpmath.fsum(terms)
                size = mpmath.fsum(abs(t) for t in terms)
            if not size or (total and _mpf_log(size) - _mpf_log(total) < (guard - 5) * _LN10):
                return total
            if guard >= 4 * _MAX_HP_DIGITS:
                return total
            guard = min(guard * 2 + 10, 4 * _MAX_HP_DIGITS) if total else guard + 200

    def log_majorant(self, k):
        """log W_k, W_k = sum over the pieces and monomials of |p_n R^n| (s_i^N - s_(i-1)^N) / N,
        N = n + d + 2k, s = b / R."""
        big_n = self._n[None, :] + self.d + 2.0 * k[:, None]
        with np.errstate(divide="ignore", under="ignore"):
            log_hi = big_n * np.log(self._hi)[None, :]
            low = np.where(
                self._lo[None, :] > 0,
                np.exp(big_n * (np.log(np.maximum(self._lo, 1e-300)) - np.log(self._hi))[None, :]),
                0.0,
            )
        return _logsumexp(self._log_c[None, :] + log_hi + np.log1p(-low) - np.log(big_n), axis=1)


def _whole_series(pieces, comps, dim):
    """The power series of the whole kernel in x = rho R (see ``_WholeMoments``)."""
    moments = _WholeMoments(pieces, comps, dim)
    return _Series(dim, pieces[-1][1], moments.moment, moments.log_majorant, moments.w0)


# ---------------------------------------------------------------------------------------------
# public API
# ---------------------------------------------------------------------------------------------
class PolynomialTransform:
    """mu(rho) of a compactly supported piecewise-polynomial radial kernel on R^dim.

    Build with :func:`compact_polynomial_transform` (the constructor takes the validated, exact
    pieces). Every method is vectorised over rho >= 0 (float64, any shape, preserved; rho = inf
    gives mu = 0) and raises ValueError for NaN or negative rho. The module docstring states the
    formulas and how each error is measured.

    Attributes
    ----------
    dim : int
        Dimension d.
    support : float
        R, the end of the support (trailing zero pieces removed).
    scale : float
        1 / R, the frequency scale.
    rho_series : float
        mu is the float power series of the whole kernel for rho <= rho_series.
    rho_tail : float
        mu = A - sum_i Re(exp(i b_i rho) B_i) (``tail_parts``) for rho >= rho_tail.
    rel_error : float
        Relative error of mu wherever mu is not near one of its zeros (the largest measured error
        of the methods, relative to their magnitude scales); ``error_bound`` is pointwise.
    abs_error : float
        2 max_rho error_bound(rho) / max|mu|, so that
        |mu - exact| <= rel_error |mu| + abs_error max|mu| for every rho.
    max_abs, log_max_abs : float
        max|mu| over the verification grid (the float value underflows to 0 in high d) and its log.
    tail_exponent : float
        |mu| = O(rho^-tail_exponent): the minimum over the odd powers n of P_1 (d + n) and over the
        breakpoints ((d + 1)/2 + beta_i).
    oscillations : tuple
        ((b_i, beta_i), ...): the breakpoints with an oscillating part exp(i b_i rho) and the
        order beta_i of the jump of k there (its first non-zero Taylor coefficient).
    origin_terms : tuple
        ((a_n, n), ...): A(rho) = sum_n a_n rho^-(n+d) over the odd n, a_n = q_n C_n exactly
        rounded (inf or 0 where not representable, as in very high d: see ``origin_terms_log``).
    origin_terms_log : tuple
        ((log|a_n|, sign a_n, n), ...).
    zeros_hint : None
        Not provided.
    method : str
        ``"exact:piecewise-polynomial"``.
    build_seconds : float
        Wall time of the construction.
    """

    def __init__(self, pieces: Sequence[_Piece], dim: int) -> None:
        t0 = time.perf_counter()
        d = dim
        self.dim = d
        self.nu = d / 2 - 1
        R = pieces[-1][1]
        self.support = float(R)
        self.scale = 1.0 / self.support
        comps = []
        for i, (_, hi, coeffs) in enumerate(pieces):
            nxt = pieces[i + 1][2] if i + 1 < len(pieces) else []
            q = _poly_sub(coeffs, nxt)
            if q:
                comps.append(_Component(hi, q, d))
        self._comps = comps
        if len(comps) == 1 and comps[0].b == R:
            whole = comps[0].series
        else:
            whole = _whole_series(pieces, comps, d)
        self._whole = whole
        x_float = 6 * math.sqrt(self.nu + 1) + 16
        whole.setup_float(x_float)
        for c in comps:
            if c.series is not whole:
                c.series.setup_float(x_float)
            c.find_tail_start(c.series.x_limit)
            c.build_tail_table()
            c.build_band()
        self.rho_series = whole.x_limit / self.support
        self.rho_tail = max(c.x_tail / c.bf for c in comps)
        self._origin = _origin_terms(pieces[0][2], d)
        self._eps_tail = max(c.eps_tail for c in comps)
        self._mix = 1.0
        if len(comps) > 1:
            self._verify_mixed()
        self._set_errors()
        self.tail_exponent = float(min([p for p, _, _, _, _ in self._origin] + [c.p_b for c in comps]))
        self.oscillations = tuple((c.bf, c.beta) for c in comps)
        self.origin_terms = tuple(
            (af if math.isfinite(af) else (math.copysign(math.inf, sg) if la > 0 else 0.0), p - d)
            for p, la, sg, af, _ in self._origin
        )
        self.origin_terms_log = tuple((la, sg, p - d) for p, la, sg, af, _ in self._origin)
        self.zeros_hint = None
        self.method = "exact:piecewise-polynomial"
        self.build_seconds = time.perf_counter() - t0

    # -- evaluation ------------------------------------------------------------------------------
    def _parts_tail(self, rho):
        lr = np.log(rho)
        parts = _origin_parts(self._origin, rho, lr, self._eps_tail, rho_ref=self.rho_tail)
        for c in self._comps:
            g = c.g_table(1.0 / (rho * c.bf))
            parts += c.tail_parts(rho, g, with_origin=False)
        return parts

    def _evaluate(self, rho):
        """(L, v, F, err, mag) on a flat array of finite rho >= 0: mu = v e^L (= F when F is finite
        and normal), |error| <= err e^L, mag e^L the magnitude of the summed parts."""
        L, v, F, err, mag = _zero_value(rho.size)
        m1 = rho <= self.rho_series
        m3 = (rho >= self.rho_tail) & ~m1
        m2 = ~(m1 | m3)
        s = self._whole
        if np.any(m1):
            x = rho[m1] * self.support
            L[m1] = s.log_scale
            v[m1] = s.float_eval(x)
            F[m1] = s.scale_f * v[m1]
            err[m1] = s.gamma * _EPS * s.abs_sum(x)
            mag[m1] = np.abs(v[m1])
        for mask, parts_of, mix in ((m3, self._parts_tail, 1.0), (m2, self._parts_mixed, self._mix)):
            if np.any(mask):
                r = rho[mask]
                Lp, vp, Fp, ep, gp = _combine(parts_of(r), r.size)
                L[mask], v[mask], F[mask], err[mask], mag[mask] = Lp, vp, Fp, ep * mix, gp
        return L, v, F, err, mag

    def _parts_mixed(self, rho):
        parts = []
        for c in self._comps:
            parts += c.parts(rho)
        return parts

    def _prepare(self, rho):
        arr = np.asarray(rho, dtype=np.float64)
        bad = ~(arr >= 0)
        if np.any(bad):
            raise ValueError(f"rho must be >= 0 and not NaN, got {float(arr[bad].ravel()[0])!r}")
        return arr, arr.ravel()

    def _run(self, flat):
        fin = np.isfinite(flat)
        L, v, F, err, mag = _zero_value(flat.size)  # mu(inf) = 0
        if np.any(fin):
            with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
                L[fin], v[fin], F[fin], err[fin], mag[fin] = self._evaluate(flat[fin])
        return L, v, F, err, mag

    def log_abs_mu(self, rho: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(log|mu(rho)|, sign mu(rho)): the log form, free of overflow and underflow in any d
        (log|mu| = -inf where mu = 0, e.g. rho = inf). Its rounding is eps |log|mu|| on top of
        ``error_bound``."""
        arr, flat = self._prepare(rho)
        L, v, _, _, _ = self._run(flat)
        with np.errstate(divide="ignore"):
            la = L + np.log(np.abs(v))
        la = np.where(v == 0, -np.inf, la)
        return la.reshape(arr.shape), np.sign(v).reshape(arr.shape)

    def mu(self, rho: ArrayLike) -> NDArray[np.float64]:
        """The signed density mu(rho) (float64, same shape as rho; 0 where it underflows)."""
        arr, flat = self._prepare(rho)
        L, v, F, _, _ = self._run(flat)
        ok = np.isfinite(F) & ((np.abs(F) >= 1e-290) | (v == 0))
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            fallback = np.sign(v) * np.exp(L + np.log(np.abs(v)))
        out = np.where(ok, F, np.where(v == 0, 0.0, fallback)) + 0.0  # no -0.0 from underflow
        return out.reshape(arr.shape)

    def __call__(self, rho: ArrayLike) -> NDArray[np.float64]:
        return self.mu(rho)

    def error_bound(self, rho: ArrayLike, relative: bool = False) -> NDArray[np.float64]:
        """Pointwise bound on |mu - exact| for ``mu`` (float path), or, with ``relative=True``, on
        |mu - exact| / |mu| for both ``mu`` and exp(``log_abs_mu``): the latter adds the rounding
        of the logarithms, 2 eps (|log scale| + 2) times the magnitude of the summed parts, and
        does not underflow in high d."""
        arr, flat = self._prepare(rho)
        L, v, _, err, mag = self._run(flat)
        with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
            if relative:
                out = (err + 2 * _EPS * (np.abs(L) + 2) * mag) / np.abs(v) + 4 * _EPS
            else:
                out = err * np.exp(L) + 4 * _EPS * np.abs(v) * np.exp(L)
        return out.reshape(arr.shape)

    def tail_parts(self, rho: ArrayLike) -> _TailParts:
        """(A, [(b_i, B_i), ...]) with mu = A - sum_i Re(exp(i b_i rho) B_i), for rho >= rho_tail.

        A is real, the B_i complex and non-oscillating (float64; they underflow in high d where
        ``tail_parts_log`` does not)."""
        log_scale, a, bs = self.tail_parts_log(rho)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            k = np.exp(log_scale)
            return a * k, [(b, bb * k) for b, bb in bs]

    def tail_parts_log(
        self, rho: ArrayLike
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], list[tuple[float, NDArray[np.complex128]]]]:
        """(log_scale, A_s, [(b_i, B_i_s), ...]): the parts of ``tail_parts`` times exp(-log_scale)."""
        arr, flat = self._prepare(rho)
        if np.any(flat < self.rho_tail):
            raise ValueError(
                f"tail_parts needs rho >= rho_tail = {self.rho_tail!r}, got {float(flat.min())!r}"
            )
        fin = np.isfinite(flat)
        r = np.where(fin, flat, 1.0)
        lr = np.log(r)
        logs = [la - p * lr for p, la, _, _, _ in self._origin]
        logs += [c.log_bc - c.p_b * lr for c in self._comps]
        top = np.max(np.array(logs), axis=0) if logs else np.zeros(r.shape)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            a = np.zeros(r.shape)
            for (_, _, sg, _, _), lg in zip(self._origin, logs):
                a += sg * np.exp(lg - top)
            bs = []
            for c, lg in zip(self._comps, logs[len(self._origin) :]):
                g = c.g_table(1.0 / (r * c.bf))
                bb = 1j * c.sigma * np.exp(lg - top) * g
                bs.append((c.bf, np.where(fin, bb, 0).reshape(arr.shape)))
        top = np.where(fin, top, -np.inf)
        return top.reshape(arr.shape), np.where(fin, a, 0.0).reshape(arr.shape), bs

    # -- accuracy --------------------------------------------------------------------------------
    def _verify_mixed(self):
        """Check the sum of the components (rho_series < rho < rho_tail and a little beyond) against
        the high-precision series of the whole kernel; scale their error bounds if it is exceeded."""
        lo, hi = self.rho_series, 1.5 * self.rho_tail
        if not hi > lo:
            return
        rho = np.linspace(lo, hi, 41)[1:]
        # only where the whole kernel's series is affordable (a breakpoint at b << R puts
        # rho_tail R far out): the components are verified on their own anyway
        rho = rho[[self._whole.terms_needed(float(r * self.support), 30)[0] <= _VERIFY_TERMS for r in rho]]
        L, v, _, err, mag = self._evaluate(rho)
        worst = 0.0
        hint = None
        for r, l_, v_, e_, g_ in zip(rho, L, v, err, mag):
            pair = self._whole.hp(float(r * self.support), hint)
            hint = _pair_log(pair)
            with mpmath.workdps(30):
                k = mpmath.exp(mpmath.mpf(l_) - mpmath.mpf(self._whole.log_scale))
                diff = abs(mpmath.mpf(v_) * k - _pair_mpf(pair))
                # the bound of the log form (the comparison goes through the logarithms)
                bound = (e_ + 2 * _EPS * (abs(l_) + 2) * g_) * k
            worst = max(worst, float(diff / bound) if bound > 0 else (0.0 if diff == 0 else math.inf))
        if worst > 1:
            self._mix = 2 * worst

    def _set_errors(self):
        R = self.support
        grid = np.concatenate(
            [
                np.linspace(0.0, 2 * self.rho_tail + 8 / R, 1500),
                np.geomspace(2 * self.rho_tail + 8 / R, 1e8 / R, 300),
            ]
        )
        L, v, _, err, _ = self._evaluate(grid)
        with np.errstate(divide="ignore"):
            la = L + np.log(np.abs(v))
        self.log_max_abs = float(np.max(la))
        self.max_abs = float(np.exp(self.log_max_abs)) if self.log_max_abs > -745 else 0.0
        with np.errstate(under="ignore"):
            self.abs_error = float(2 * np.max(err * np.exp(L - self.log_max_abs)))
        eps = [self._whole.gamma * _EPS, self._eps_tail * self._mix]
        for c in self._comps:
            eps += [c.series.gamma * _EPS * self._mix, c.eps_band * self._mix]
        self.rel_error = float(max(eps) + 4 * _EPS)


def compact_polynomial_transform(pieces: Sequence[_Piece], dim: int) -> PolynomialTransform:
    """Exact spectral density of a compactly supported piecewise-polynomial radial kernel.

    Parameters
    ----------
    pieces : sequence of (b_lo, b_hi, coeffs)
        k(r) = sum_n coeffs[n] r^n on [b_lo, b_hi]; contiguous from b_lo = 0 to the support R
        (k = 0 beyond R). Numbers may be int, float (taken at their exact binary value),
        Fraction or sympy numbers (rationals exactly, others at 60 digits).
    dim : int
        Dimension d, 1 <= d <= 4096.

    Returns
    -------
    PolynomialTransform

    Raises
    ------
    TypeError, ValueError
        For bad input (the message names the argument, the value and what is allowed).
    ArithmeticError
        If a verification of the construction fails (not expected; reported, never silent).
    """
    d = check_dim(dim)
    parsed = _parse_pieces(pieces)
    return PolynomialTransform(parsed, d)
