"""Bessel oscillations under a rational-quadratic envelope as cosine mixtures, in every d.

k(r) = c J_nu(b r) / r^nu g(r), g(r) = (1 + r^2/s)^(-alpha), nu >= 0 (docs/theory.md, "Bessel
oscillations as cosine mixtures"). The Poisson integral

    J_nu(b r) / r^nu = w_nu int_(-b)^b cos(sigma r) (b^2 - sigma^2)^(nu - 1/2) d sigma,
    w_nu = b^-nu / (2^nu Gamma(nu + 1/2) sqrt(pi)),

writes k as a mixture of the cosines of :mod:`._oscillating`, and the dimension walk of a single
shifted transform F_1(|rho - sigma|) of g stays closed in the variables u = 1/rho and
tau = (rho - sigma)/rho: with D = -(1/(2 pi rho)) d/drho and F_n' (t) = -2 pi t F_(n+2)(t),

    D[u^i tau^k F_n] = (u^(i+2)/(2 pi)) ((i + k) tau^k - k tau^(k-1)) F_n + u^i tau^(k+1) F_(n+2),

so for odd n = 2m + 1

    mu_n(rho) = c w_nu int_(-b)^b Q_n(rho, sigma) (b^2 - sigma^2)^(nu - 1/2) d sigma,
    Q_n = sum_(j,i,k) q_(jik) u^i tau^k F_(2j+1)(|rho - sigma|)

with rational multiples q of powers of 1/(2 pi), independent of sigma. Near sigma = rho every term is
O(|rho - sigma|^gamma_c), gamma_c = 2 alpha - n/2 - 1/2 (no cancellation at the kink); the integral
exists iff gamma_c > -1. The sigma-integral is split at the kink (rho < b) and graded towards
sigma = b geometrically when rho is near b; every panel is integrated by tanh-sinh, its error
estimated by the coarser level and its truncation at the end nodes corrected by the known end
exponent. For rho^2 < 0.4 b^2 the terms cancel (u, tau ~ 1/rho): there mu_n, analytic in x = rho^2
on |x| < b^2, is summed from its Taylor series, whose coefficients are the discrete Cauchy
integrals of mu_n on the circle |x| = 0.7 b^2 (the same sigma-integral along the path
-b -> sqrt(x) -> b, with the principal branches of F_n and the weight). The sigma-integral cancels
increasingly with d (mu_n is small against Q_n): where the values' measured relative error exceeds
``_MAX_NOISE``, or where the mixture does not exist (gamma_c <= -1), and in every even d, the
Hankel integral on the imaginary axis (:class:`._oscillating._RQContour` with J_nu) answers, with
the projection of the odd (d+1)-dimensional mixture beside it where its table falls short
(:func:`._oscillating._even_or_sin_table`).
"""

import math

import mpmath
import numpy as np
import sympy

from .._numerics.quadrature import tanh_sinh
from .._numerics.special import log_origin_coefficient
from ..exceptions import TransformError
from ..kernels._parse import R
from ._forms import log_form, vectorised
from ._oscillating import (
    _ACCEPT_TABLE,
    _even_or_sin_table,
    _KinkTable,
    _number,
    _osc_factors,
    _ShiftedWalk,
    kink_table_transform,
    power_law_threshold,
)
from ._registry import BUILDERS, builder, coefficient_of_r, matcher
from ._types import RadialTransform

__all__ = []  # private module

_EPS = np.finfo(float).eps
_TS_LEVEL = 4
#: relative accuracy of scipy's kve (AMOS) and of the float sums' rounding, per term
_TERM_REL = 4e-14


#: the Cauchy circle |x| = _CIRCLE b^2 (x = rho^2, the singularity at x = b^2 0.3 b^2 away); the
#: Taylor series is used for x < _SMALL_X b^2 (the sigma-integral's terms cancel like (b/rho)^(2m-1)
#: at small rho), where its terms fall like (_SMALL_X/_CIRCLE)^k = (4/7)^k
_CIRCLE = 0.7
_SMALL_X = 0.4
_N_CIRCLE = 128
#: the largest relative error (above 1e-13 of the peak) of the mixture's values that is tabulated
_MAX_NOISE = 1e-7
#: grading ratio of the panels towards sigma = b when rho is near b
_GRADE = 8.0


class _BesselMixture:
    """mu_n (n odd) of J_nu(b r)/r^nu (1 + r^2/s)^-alpha (c = 1): ``direct(rho) -> (mu, error bound)``."""

    def __init__(self, nu, b, alpha, s, n):
        self.nu, self.b, self.alpha, self.s, self.n = nu, b, alpha, s, n
        self.walk = _ShiftedWalk(alpha, s, n)
        self.gamma_c = 2 * alpha - 0.5 * n - 0.5
        if not self.gamma_c > -1:
            raise ValueError("internal: the cosine mixture needs 2 alpha > (n - 1)/2")
        self.log_w = -nu * math.log(b) - nu * math.log(2.0) - math.lgamma(nu + 0.5) - 0.5 * math.log(math.pi)
        self._coef = None

    # -- the sigma-integral over a batch of pieces -------------------------------------------------
    def _pieces(self, z, row, A, L, kz_a, kz_b, ba, bb, pa, pb, sgn, e0, e1, n_rows):
        """sum over pieces of int_piece Q(z, sigma) (b - sigma)^(nu-1/2) (b + sigma)^(nu-1/2) d sigma,
        sigma = A + L x, per row. Offsets at the ends: kz = z - sigma, b - sigma, b + sigma (exact,
        from the caller); sgn: w = sgn (z - sigma); e0, e1: the end exponents (nan: smooth end).
        Returns (value, error bound) per row (weight w_nu not included)."""
        x, xc, wts, coarse = tanh_sinh(_TS_LEVEL)
        near0 = (x < 0.5)[None, :]
        Lx, Lxc = L[:, None] * x[None, :], L[:, None] * xc[None, :]
        kz = np.where(near0, kz_a[:, None] - Lx, kz_b[:, None] + Lxc)
        bm = np.where(near0, ba[:, None] - Lx, bb[:, None] + Lxc)
        bp = np.where(near0, pa[:, None] + Lx, pb[:, None] - Lxc)
        zz = z[row][:, None]
        q, absum = self.walk(zz, sgn[:, None] * kz, kz / zz)
        e = self.nu - 0.5
        with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
            weight = np.power(bm, e) * np.power(bp, e) if e else np.ones(bm.shape)
            f = q * weight * L[:, None]
            fa = absum * np.abs(weight * L[:, None])
        # nodes within ~1e-60 of the kink: F_n overflows where tau^k underflows (their share of the
        # integral, ~ t^(1 + gamma_c), is nil)
        ok = np.isfinite(f) & np.isfinite(fa)
        f, fa = np.where(ok, f, 0.0), np.where(ok, fa, 0.0)
        fine = f @ wts
        crude = f @ np.where(coarse, 2 * wts, 0.0)
        err = np.abs(fine - crude) + _TERM_REL * (fa @ wts)
        # the ends beyond the outermost nodes: int_0^x0 A x^e = f(x0) x0 / (1 + e)
        tail = np.zeros(fine.shape, dtype=fine.dtype)
        for idx, dist, ex in ((0, x[0], e0), (-1, xc[-1], e1)):
            has = np.isfinite(ex)
            tail = tail + np.where(has, f[:, idx] * dist / (1 + np.where(has, ex, 0.0)), 0.0)
        fine = fine + tail
        err = err + 1e-3 * np.abs(tail)
        val = np.zeros(n_rows, dtype=fine.dtype)
        out_e = np.zeros(n_rows)
        np.add.at(val, row, fine)
        np.add.at(out_e, row, err)
        return val, out_e

    def _real(self, rho, off):
        """(mu_n, error) for real rho >= b/2 at b + off (off = rho - b, exact), off != 0 (w_nu included)."""
        b = self.b
        gc, ea = self.gamma_c, self.nu - 0.5
        nan = math.nan
        cols = {k: [] for k in ("row", "A", "L", "kza", "kzb", "ba", "bb", "pa", "pb", "sgn", "e0", "e1")}

        def piece(i, A, L, kza, kzb, ba, bb, pa, pb, sgn, e0, e1):
            for key, v in zip(cols, (i, A, L, kza, kzb, ba, bb, pa, pb, sgn, e0, e1)):
                cols[key].append(v)

        for i, (r, sd) in enumerate(zip(rho.tolist(), off.tolist())):
            below = sd < 0
            delta = abs(sd)
            if below:  # [rho, b]: kink and arcsine end
                piece(i, r, delta, 0.0, sd, delta, 0.0, b + r, 2 * b, -1.0, gc, ea)
            # sigma <= min(rho, b): panels graded towards b, [b - g_(j+1), b - g_j], g_0 = delta (rho < b:
            # the first ends at the kink) or 0 (rho > b: it ends at the arcsine end b)
            g = [delta if below else 0.0]
            nxt = delta * _GRADE if below else delta
            while nxt < 0.5 * b:
                g.append(nxt)
                nxt *= _GRADE
            g.append(2 * b)
            for j in range(len(g) - 1):
                g0, g1 = g[j], g[j + 1]
                e1 = (gc if below else ea) if j == 0 else nan
                e0 = ea if j == len(g) - 2 else nan
                piece(i, b - g1, g1 - g0, sd + g1, sd + g0, g1, g0, 2 * b - g1, 2 * b - g0, 1.0, e0, e1)
        arr = {k: np.array(v, dtype=np.float64) for k, v in cols.items()}
        arr["row"] = arr["row"].astype(np.int64)
        val, err = self._pieces(
            rho,
            arr["row"],
            arr["A"],
            arr["L"],
            arr["kza"],
            arr["kzb"],
            arr["ba"],
            arr["bb"],
            arr["pa"],
            arr["pb"],
            arr["sgn"],
            arr["e0"],
            arr["e1"],
            rho.size,
        )
        scale = math.exp(self.log_w)
        return val * scale, err * scale

    def _complex(self, z):
        """mu_n at complex z (|z| < b, Re z > 0, Im z >= 0) along -b -> z -> b (w_nu included)."""
        b = self.b
        k = z.size
        row = np.concatenate([np.arange(k), np.arange(k)])
        zero = np.zeros(k, dtype=complex)
        gc, ea = self.gamma_c, self.nu - 0.5
        val, err = self._pieces(
            z,
            row,
            np.concatenate([zero - b, z]),
            np.concatenate([z + b, b - z]),
            np.concatenate([z + b, zero]),  # z - A
            np.concatenate([zero, z - b]),  # z - B
            np.concatenate([zero + 2 * b, b - z]),
            np.concatenate([b - z, zero]),
            np.concatenate([zero, b + z]),
            np.concatenate([z + b, zero + 2 * b]),
            np.concatenate([np.ones(k), -np.ones(k)]),
            np.concatenate([np.full(k, ea), np.full(k, gc)]),
            np.concatenate([np.full(k, gc), np.full(k, ea)]),
            k,
        )
        scale = math.exp(self.log_w)
        return val * scale, err * scale

    def _series(self):
        """Taylor coefficients of mu_n in x = rho^2 (N and N/2 circle points) and the circle's error."""
        if self._coef is None:
            n = _N_CIRCLE
            radius = _CIRCLE * self.b**2
            phi = 2 * np.pi * np.arange(n // 2 + 1) / n
            z = np.sqrt(radius) * np.exp(0.5j * phi)
            val, err = self._complex(z)
            full = np.concatenate([val, np.conj(val[-2:0:-1])])  # mu(conj x) = conj mu(x)
            c = (np.fft.fft(full) / n).real / radius ** np.arange(n)
            half = (np.fft.fft(full[::2]) / (n // 2)).real / radius ** np.arange(n // 2)
            # |error of c_k| R^k <= the circle's mean absolute error (both halves of the circle)
            mean_err = float((err[0] + err[-1] + 2 * np.sum(err[1:-1])) / n)
            self._coef = (c, half, mean_err)
        return self._coef

    def _small(self, rho):
        c, half, circle_err = self._series()
        x = rho * rho
        fine = np.polynomial.polynomial.polyval(x, c)
        crude = np.polynomial.polynomial.polyval(x, half)
        # x < (4/7) radius: the circle's errors reach the sum at most tripled (sum (4/7)^k = 7/3)
        return fine, np.abs(fine - crude) + 3 * circle_err

    #: the kink tables pass rho - b exactly (:class:`._oscillating._KinkTable`)
    takes_offset = True

    def __call__(self, rho, off=None):
        """(mu_n, error bound) at rho, or at exactly b + off where the offset is given."""
        rho = np.asarray(rho, dtype=np.float64)
        off = rho - self.b if off is None else np.asarray(off, dtype=np.float64)
        val = np.empty(rho.shape)
        err = np.empty(rho.shape)
        small = rho * rho < _SMALL_X * self.b**2
        if np.any(small):
            val[small], err[small] = self._small(rho[small])
        if np.any(~small):
            val[~small], err[~small] = self._real(rho[~small], off[~small])
        return val, err


# ---------------------------------------------------------------------------------------------
# recognition and the builder
# ---------------------------------------------------------------------------------------------
def _bessel_times(expr, support, other):
    """expr = coef r^power besselj(nu, b r) f with one factor f of sympy type ``other`` and numbers
    nu, b (no support): (coef, power, nu, b, f), else None."""
    if support is not None:
        return None
    coef, power, bessel, rest = sympy.Integer(1), sympy.Integer(0), None, []
    for f in sympy.Mul.make_args(expr):
        if f.is_number:
            coef *= f
        elif f == R:
            power += 1
        elif isinstance(f, sympy.Pow) and f.base == R and f.exp.is_number:
            power += f.exp
        elif isinstance(f, sympy.besselj) and bessel is None:
            bessel = f
        else:
            rest.append(f)
    if bessel is None or len(rest) != 1 or not isinstance(rest[0], other):
        return None
    nu, arg = bessel.args
    b = coefficient_of_r(arg)
    if b is None or not nu.is_number:
        return None
    return coef, power, nu, b, rest[0]


@matcher(priority=25)
def _match_bessel_rq(expr, support):
    """c besselj(nu, b r) r^-nu (A + B r^2)^(-alpha), nu >= 0, A, B, b, alpha > 0."""
    parts = _bessel_times(expr, support, sympy.Pow)
    if parts is None:
        return None
    coef, power, nu, b, envelope = parts
    base, expo = envelope.args
    if not expo.is_number or not base.is_polynomial(R):
        return None
    poly = sympy.Poly(sympy.expand(base), R)
    if poly.degree() != 2:
        return None
    B, zero, A = poly.all_coeffs()
    try:
        A, B, alpha, c, b, nu, power = (_number(v) for v in (A, B, -expo, coef, b, nu, power))
    except TypeError:
        return None
    if zero != 0 or abs(power + nu) > 1e-12 * max(1.0, nu):
        return None
    if not (A > 0 and B > 0 and alpha > 0 and b > 0 and nu >= 0 and c != 0):
        return None
    # c A^-alpha (1 + r^2/s)^-alpha with s = A/B
    return "bessel_rq_mixture", {"c": c * A ** (-alpha), "nu": nu, "b": b, "alpha": alpha, "s": A / B}


@builder("bessel_rq_mixture", rel_error=1e-7)
def _bessel_rq_mixture(c, nu, b, alpha, s, dim):
    """mu of c J_nu(b r)/r^nu (1 + r^2/s)^-alpha in every d where it is a finite, absolutely continuous
    measure (module docstring); the verdict from the exponents."""
    d = dim
    p = 2 * alpha + nu + 0.5  # the kernel decays like an oscillating r^-p
    gamma = p - 0.5 * (d + 1)  # mu ~ |rho - b|^gamma at rho = b
    arg = "r" if b == 1 else f"{b:g} r"
    name = f"J0({arg})" if nu == 0 else f"J_{nu:g}({arg})/r^{nu:g}"
    env = "1 + r^2" if s == 1 else f"1 + r^2/{s:g}"
    head = f"k = {name} ({env})^-{alpha:g}"
    divergent = power_law_threshold(head, p, alpha, b, d, "closed-form:bessel-rq-mixture")
    if divergent is not None:
        return divergent
    n = d if d % 2 else d + 1  # the odd dimension of the mixture
    sq = math.sqrt(s)
    rho_max = b + (60.0 + d + 2 * abs(gamma)) / sq
    mixture, noise = _usable_mixture(nu, b, alpha, s, n)
    table = None
    if d % 2 and mixture is not None:
        try:
            table = _KinkTable(mixture, b, rho_max, tol=1e-9, noise=noise, dim=d)
        except ArithmeticError:
            table = None
        if table is not None and not table.error <= _ACCEPT_TABLE:
            table = None
    if table is None:
        # even d (the mixture's projection and the contour), or odd d where the mixture does not
        # exist, cancels or its table falls short (the contour alone)
        table = _even_or_sin_table(
            f"{head} in d = {d}", "bessel", b, alpha, s, d, rho_max, nu=nu, mixture=mixture, noise=noise
        )
    return kink_table_transform(table, c, b, d, rho_max, min(b, 1.0 / sq), "closed-form:bessel-rq-mixture")


def _usable_mixture(nu, b, alpha, s, n):
    """The n-dimensional cosine mixture (n odd) and the relative error of its values, measured on a
    probe grid before any table is fitted (its terms cancel increasingly with n: the tables are not
    asked for more than the values carry); (None, 0) where it does not exist (gamma_c <= -1) or
    cancels beyond ``_MAX_NOISE``."""
    if not 2 * alpha - 0.5 * (n + 1) > -1 + 1e-12:
        return None, 0.0
    mixture = _BesselMixture(nu, b, alpha, s, n)
    probe = b * np.concatenate([np.linspace(0.0, 3.0, 49), [1 - 1e-6, 1 + 1e-6]])
    probe = probe[probe != b]
    val, err = mixture(probe)
    rel = err / np.maximum(np.abs(val), 1e-13 * float(np.max(np.abs(val))))
    rel = np.where(np.isfinite(rel), rel, np.inf)
    worst = float(np.max(rel))
    if not worst <= _MAX_NOISE:
        return None, 0.0
    return mixture, max(1e-12, 2 * worst)


# ---------------------------------------------------------------------------------------------
# J_nu(b r)/r^nu under an exponential envelope: the mixture on a path in the upper half plane
# ---------------------------------------------------------------------------------------------
#: the path sigma(phi) = -b cos(phi) + i _PATH_HEIGHT b sin(phi)^2 (cancellation <~ 20 in d <= 256)
_PATH_HEIGHT = 4.0
#: tanh-sinh levels tried for the path integral (the error: the difference to the level below)
_EXP_LEVELS = (5, 6, 7, 8)
_EXP_TOL = 1e-10
_EXP_FLOOR = 1e-7  # the largest measured error accepted (stated 10 times)


def _derivative_terms(poly, m):
    """sum_j p_j (-d/dA)^j [A u^-m], u = A^2 + rho^2, as terms (c, a, k): c A^a u^-(m + k).

    d/dA [A^a u^-s] = a A^(a-1) u^-s - 2 s A^(a+1) u^-(s+1), term by term from j = 0; terms of equal
    (a, k) are merged and zero ones dropped."""
    current = {(1, 0): 1.0}
    out = {}
    for j, p in enumerate(poly):
        if j:
            nxt = {}
            for (a, k), c in current.items():
                if a:
                    nxt[(a - 1, k)] = nxt.get((a - 1, k), 0.0) - a * c
                nxt[(a + 1, k + 1)] = nxt.get((a + 1, k + 1), 0.0) + 2 * (m + k) * c
            current = nxt
        if p:
            for key, c in current.items():
                out[key] = out.get(key, 0.0) + p * c
    return [(c, a, k) for (a, k), c in out.items() if c != 0]


class _OriginSeriesTail:
    """mu_d at large rho from k's odd Taylor coefficients at 0, for k = P(r) T(beta r) J_nu(b r)/r^nu
    exp(-a r) (T = cos, sin or 1; an entire function of exponential type a + beta + b):

        mu_d(rho) = sum_(j odd) k_j pi^(-d/2) 2^j Gamma((j + d)/2) / Gamma(-j/2) rho^(-j-d),

    the generalised transforms of |x|^j (the even powers of r are smooth and have none). The series
    converges for rho above the exponential type; its ratio of consecutive terms is about
    type^2 (j + d)/((j + 1) rho^2), so it is used from ``start`` = 2 type max(1, sqrt(d)/2) on, where
    that ratio is at most (1 + d)/8 for d <= 4 and 1/2 + 1/(2d) beyond, falling with j. The
    coefficients come from products of the factors' series in mpmath at 40 digits: a coefficient
    that is zero (k_1 of (1 + 2 r) exp(-2 r) J0(r)) is exactly zero, and the density's tail is then
    rho^-(d+3). Error: 1e-15 (10 + 81) of the sum of the terms' moduli plus twice the last term kept
    (the omitted ones decay geometrically after it)."""

    _ORDER = 81  # odd powers up to r^79; the last one's size is part of the stated error

    def __init__(self, poly, a, b, nu, beta, kind, d, q=0):
        n = self._ORDER
        with mpmath.workdps(40):
            a_, b_, beta_, nu_ = (mpmath.mpf(x) for x in (a, b, beta, nu))
            series = [mpmath.mpf(p) for p in poly] + [mpmath.mpf(0)] * n
            factors = [[(-a_) ** i / mpmath.factorial(i) for i in range(n)]]
            bessel = [mpmath.mpf(0)] * n
            for i in range(0, n, 2):
                m = i // 2
                bessel[i] = (
                    (-1) ** m * (b_ / 2) ** (2 * m + nu_) / (mpmath.factorial(m) * mpmath.gamma(m + nu_ + 1))
                )
            factors.append(bessel)
            if beta:
                trig = [mpmath.mpf(0)] * n
                for i in range(0 if kind == "cos" else 1, n, 2):
                    trig[i] = (-1) ** (i // 2) * beta_**i / mpmath.factorial(i)
                factors.append(trig[q:] + [mpmath.mpf(0)] * q)  # q = 1: sin(beta r)/r
            coeffs = series[:n]
            for f in factors:
                coeffs = [mpmath.fsum(coeffs[i] * f[k - i] for i in range(k + 1)) for k in range(n)]
            self.j = np.arange(1, n, 2)
            odd = [coeffs[j] for j in self.j]
            self.log_k = np.array([float(mpmath.log(abs(x))) if x else -np.inf for x in odd])
            self.sign_k = np.array([float(mpmath.sign(x)) for x in odd])
        # the transforms of |x|^j in logs (d = 256 overflows their float form)
        self.log_f, self.sign_f = log_origin_coefficient(self.j, d)
        self.d = d
        self.start = 2.0 * (a + beta + b) * max(1.0, math.sqrt(d) / 2)
        nonzero = np.nonzero(np.isfinite(self.log_k))[0]
        self.first = int(self.j[nonzero[0]]) if nonzero.size else None

    def __call__(self, rho):
        """(log|mu|, sign, relative error) for rho >= ``start`` (flat array)."""
        lr = np.log(rho)[:, None]
        logs = (self.log_k + self.log_f)[None, :] - (self.j[None, :] + self.d) * lr
        signs = (self.sign_k * self.sign_f)[None, :]
        top = np.max(logs, axis=1)
        with np.errstate(invalid="ignore"):
            terms = np.where(np.isfinite(logs), signs * np.exp(logs - top[:, None]), 0.0)
        total = terms.sum(axis=1)
        moduli = np.abs(terms).sum(axis=1)
        err = 1e-15 * (10 + self._ORDER) * moduli + 2 * np.abs(terms[:, -1])
        with np.errstate(divide="ignore"):
            return np.log(np.abs(total)) + top, np.sign(total), err / np.abs(total)


class _ExpBesselMixture:
    """mu_d of P(r) T(beta r)/r^q J_nu(b r)/r^nu exp(-a r) (c = 1) in every d, in logs.

    P = 1 unless ``poly`` = (p_0, p_1, ...) is given: then each node's F becomes
    sum_j p_j (-d/dA)^j F_0 (with q = 1, p_0 F_1 + sum_(j >= 1) p_j (-d/dA)^(j-1) F_0), the short sum
    of :func:`_derivative_terms` times F_0's power (A^2 + rho^2)^-m.

    T = cos (q = 0; beta = 0: no oscillating factor) or sin (q = 0 or 1). Poisson's integral turns
    the Bessel factor into cosines cos(sigma r), and T(beta r) cos(sigma r) is, after sigma -> -sigma
    (the weight is even), T((beta + sigma) r): the real or imaginary part of exp(i (beta + sigma) r).
    With the closed forms of exp(-A r) and exp(-A r)/r, Re A > 0 (m = (d+1)/2),

        mu_d(rho) = P w_nu int_(-b)^b F(sigma) (b^2 - sigma^2)^(nu - 1/2) d sigma,  A = a - i (beta + sigma),
        F = Gamma(m) pi^-m A (A^2 + rho^2)^(-m)               (q = 0),
        F = Gamma(m - 1) pi^-m (A^2 + rho^2)^(-(m - 1)) / 2     (q = 1, d >= 2),

    P = Re for cos, Im for sin (the Hankel transform is real-linear),

    F analytic except at A = 0 and A = +-i rho (Im sigma = -a < 0): the segment is moved onto
    sigma(phi) = -b cos(phi) + i h sin(phi)^2, phi in [0, pi] (h = ``_PATH_HEIGHT`` b), where
    Re A = a + h sin(phi)^2 grows and the terms no longer cancel (on the real segment they cancel
    by 1e5 in d = 16, 1e22 in d = 64 at rho = 0). sin(phi)^2 keeps the ends' behaviour
    (b^2 - sigma^2)^(nu - 1/2) d sigma ~ phi^(2 nu) d phi; tanh-sinh in phi, b -+ sigma formed
    from sin^2(phi/2) and cos^2(phi/2) without cancellation, every factor in complex logarithms
    (A^2 + rho^2 = (A - i rho)(A + i rho) with both factors in Re > 0: its principal logarithm is
    the sum of theirs, continuous along the path), each row shifted by its largest modulus. Error:
    the difference to the coarser level plus 1e-15 (10 + m) of the sum of moduli (rounding of the
    logarithms' real parts)."""

    def __init__(self, nu, a, b, d, level, beta=0.0, kind="cos", q=0, poly=None):
        self.level, self.imag = level, kind == "sin"
        m = 0.5 * (d + 1)
        # a polynomial factor sum_j p_j r^j: r^j exp(-A r) has the transform (-d/dA)^j F_0; with
        # q = 1, p_0 exp(-A r)/r has F_1 = F_0 u/(2 (m - 1) A) (u = A^2 + rho^2), the term
        # p_0/(2 (m - 1)) u of the sum below, and r^j/r = r^(j-1) for j >= 1
        self.terms = None
        if poly is not None:
            self.terms = _derivative_terms(poly if q == 0 else poly[1:], m)
            if q == 1 and poly[0]:
                self.terms.append((poly[0] / (2 * (m - 1)), 0, -1))
            q = 0
        # the power of (A^2 + rho^2) in F, and log of F's constant with Poisson's w_nu
        self.m = m - q
        self.log_const = (
            (math.lgamma(m) if q == 0 else math.lgamma(m - 1) - math.log(2.0)) - m * math.log(math.pi)
            - nu * math.log(b) - nu * math.log(2.0) - math.lgamma(nu + 0.5) - 0.5 * math.log(math.pi)
        )  # fmt: skip
        x, xc, w, _ = tanh_sinh(level)
        h = _PATH_HEIGHT * b
        s_half, c_half = np.sin(0.5 * np.pi * x), np.sin(0.5 * np.pi * xc)  # sin(phi/2), cos(phi/2)
        sin_phi = 2 * s_half * c_half
        cos_phi = c_half**2 - s_half**2
        lift = 1j * h * sin_phi**2
        sigma = -b * cos_phi + lift
        plus, minus = 2 * b * s_half**2 + lift, 2 * b * c_half**2 - lift  # b + sigma, b - sigma
        self.A = a - 1j * (beta + sigma)
        dsig = np.pi * (b * sin_phi + 2j * h * sin_phi * cos_phi)  # d sigma / dx, phi = pi x
        self.log_node = (nu - 0.5) * (np.log(plus) + np.log(minus)) + np.log(dsig) + np.log(w)
        if q == 0 and self.terms is None:
            self.log_node = self.log_node + np.log(self.A)
        self.k = np.arange(x.size) - x.size // 2  # the node index: level j keeps k % 2^(level-j) == 0
        self.far = 2.0 * float(np.max(np.abs(self.A))) if q == 1 else np.inf

    def _log_power(self, A, r):
        """log (A^2 + rho^2)^-m for node values A (a row) and rho (a column); with q = 1, for
        rho >= ``far``, log of (A^2 + rho^2)^-m - rho^(-2 m) instead. The subtracted term integrates
        to a real number along the path (the weight is real on the real segment), so the imaginary
        part is unchanged, but without it the terms' imaginary parts (~ rho^(-2 m - 2)) cancel out
        of real parts (~ rho^(-2 m)): a relative noise of 1e-16 rho^2 that the error estimate
        (relative to the terms' moduli) would not see."""
        m = self.m
        plain = -m * np.log(A * A + r * r)
        far = r[:, 0] >= self.far
        if not np.any(far):
            return plain
        z = (A * A) / (r[far] * r[far])  # |z| <= 1/4
        # log1p(z) and expm1(w) for complex arguments without cancellation
        x, y = z.real, z.imag
        w = -m * (0.5 * np.log1p(2 * x + x * x + y * y) + 1j * np.arctan2(y, 1 + x))
        u, t = w.real, w.imag
        em1 = (np.expm1(u) * np.cos(t) - 2 * np.sin(0.5 * t) ** 2) + 1j * np.exp(u) * np.sin(t)
        plain[far] = -2 * m * np.log(r[far]) + np.log(em1)
        return plain

    def _poly(self, A, r):
        """sum_j p_j (-d/dA)^j [A u^-m] / u^-m = sum c A^a u^-k (u = A^2 + rho^2) and the sum of
        its terms' moduli (the rounding scale) for node values A (a row) and rho (a column)."""
        w = 1.0 / (A * A + r * r)
        total = np.zeros(np.broadcast(A, r).shape, dtype=np.complex128)
        moduli = np.zeros(total.shape)
        for c, a, k in self.terms:
            term = c * A**a * w**k
            total += term
            moduli += np.abs(term)
        return total, moduli

    def __call__(self, rho, accept=0.0):
        """(log|mu|, sign, relative error estimate) for a flat array rho >= 0; the error is relative
        to max(|mu|, 1e-3 of the sum of the terms' moduli). Levels from 5 (or ``level``) up, each
        adding only its new nodes to the running sums (kept scaled by e^-shift, shift the largest
        log-modulus so far): a row is final at the first level whose error is within ``accept``,
        at ``level`` in any case."""
        rho = np.asarray(rho, dtype=np.float64)
        n, top, m = rho.size, self.level, self.m
        log_abs, sign, rel_out = np.empty(n), np.empty(n), np.empty(n)
        total = np.zeros(n, dtype=np.complex128)  # sum of the terms at the current level's nodes
        moduli = np.zeros(n)
        shift = np.full(n, -np.inf)
        previous = np.zeros(n, dtype=np.complex128)  # the last level's value (same scaling)
        todo = np.arange(n)
        first = min(5, top)
        for j in range(first, top + 1):
            step = 2 ** (top - j)
            new = self.k % step == 0
            if j > first:
                new &= self.k % (2 * step) != 0
            r = rho[todo][:, None]
            A = self.A[new][None, :]
            lg = self.log_node[new][None, :] + self._log_power(A, r)
            if self.terms is not None:  # gain: log of (the terms' moduli summed) / |their sum|
                poly_sum, poly_mod = self._poly(A, r)
                with np.errstate(divide="ignore"):
                    log_sum = np.log(poly_sum)
                    gain = np.log(poly_mod) - log_sum.real
                lg = lg + log_sum
            sh = np.maximum(shift[todo], np.max(lg.real, axis=1))
            with np.errstate(invalid="ignore"):
                rescale = np.exp(shift[todo] - sh)  # 0 on the first level
            v = np.exp(lg - sh[:, None])
            t = total[todo] * rescale + np.sum(v, axis=1)
            if self.terms is None:
                node_mod = np.abs(v)
            else:  # the polynomial terms' moduli, not their (possibly cancelling) sum's
                with np.errstate(invalid="ignore"):
                    node_mod = np.where(v != 0, np.exp(lg.real - sh[:, None] + gain), 0.0)
            mod = moduli[todo] * rescale + np.sum(node_mod, axis=1)
            if j == first:  # the level below from the same nodes
                below = 2 * step * np.sum(np.where(self.k[new] % (2 * step) == 0, v, 0.0), axis=1)
            else:
                below = previous[todo] * rescale
            fine, below = ((step * t).imag, below.imag) if self.imag else ((step * t).real, below.real)
            err = np.abs(fine - below) + 1e-15 * (10 + m) * step * mod
            # relative to the local amplitude near the zeros of mu (where |mu| < 1e-3 of the moduli)
            rel = err / np.maximum(np.abs(fine), 1e-3 * step * mod)
            total[todo], moduli[todo], shift[todo], previous[todo] = t, mod, sh, step * t
            done = (rel <= accept) | (j == top)
            rows = todo[done]
            with np.errstate(divide="ignore"):
                log_abs[rows] = np.log(np.abs(fine[done])) + sh[done] + self.log_const
            sign[rows], rel_out[rows] = np.sign(fine[done]), rel[done]
            todo = todo[~done]
            if todo.size == 0:
                break
        return log_abs, sign, rel_out


@matcher(priority=25)
def _match_bessel_exp(expr, support):
    """c P(r) T(beta r)/r^q besselj(nu, b r)/r^nu exp(-a r), nu >= 0, a, b > 0, T = cos (q = 0) or sin
    (q = 0, 1), or no T (q = 0), P a polynomial (then q = 0 after r^q divides it); a factor sin(b r)/r
    may stand for the Bessel factor (nu = 1/2: sin(b r)/r = sqrt(pi b/2) J_(1/2)(b r)/r^(1/2)), so
    sin(r)^2/r^2 exp(-r) is one, and (1 + 2 r) exp(-2 r) J0(r) has P = 1 + 2 r."""
    split = _osc_factors(expr) if support is None else None
    if split is None:
        return None
    coef, power, oscs, rest = split
    exps = [f for f in rest if isinstance(f, sympy.exp)]
    if len(exps) != 1:
        return None
    a = coefficient_of_r(-exps[0].args[0])
    if a is None:
        return None
    others = [f for f in rest if f is not exps[0]]
    try:
        c, a, power = _number(coef), _number(a), float(power)
        # Bessel kinds carry their order: "j0", "j<nu>" (_osc_kind)
        bessels = [(0.0 if k == "j0" else float(k[1:]), _number(b)) for k, b in oscs if k.startswith("j")]
        trigs = [(k, _number(beta)) for k, beta in oscs if not k.startswith("j")]
    except TypeError:
        return None
    # the sign of a frequency: J_nu(-x)/(-x)^nu = J_nu(x)/x^nu, sin odd, cos even
    for kind, beta in trigs:
        if kind == "sin" and beta < 0:
            c = -c
    trigs = [(kind, abs(beta)) for kind, beta in trigs]
    if not bessels:
        sines = [t for t in trigs if t[0] == "sin" and t[1] > 0]
        if not sines:
            return None
        trigs.remove(sines[0])
        b = sines[0][1]
        c *= math.sqrt(0.5 * math.pi * b)
        bessels, power = [(0.5, b)], power + 0.5  # sin(b r)/r = sqrt(pi b/2) J_(1/2)(b r) r^(-1/2)
    if len(bessels) != 1 or len(trigs) > 1:
        return None
    (nu, b), (kind, beta) = bessels[0], (trigs[0] if trigs else ("cos", 0.0))
    if not (a > 0 and b > 0 and nu >= 0 and c != 0) or (kind == "sin" and beta == 0):
        return None
    q = round(-(power + nu))
    if abs(power + nu + q) > 1e-12 * max(1.0, nu):
        return None
    if not others and (q == 0 or (q == 1 and kind == "sin")):
        return "bessel_exp_mixture", {"c": c, "nu": nu, "a": a, "b": b, "beta": beta, "kind": kind, "q": q}
    # a polynomial factor, or a positive power r^n beside J_nu/r^nu (q = -n); beside sin(beta r)/r
    # (q = 1) the polynomial itself
    factor = sympy.Mul(*others) * R ** (-q)
    poly, q_poly = _poly_coeffs(factor), 0
    if poly is None and kind == "sin":  # P(r)/r beside sin(beta r): (1 + 1/r) exp(-r) sin(r) J0(r)
        poly, q_poly = _poly_coeffs(factor * R), 1
    if poly is None or len(poly) > _MAX_POLY_TERMS:
        return None
    return "bessel_exp_mixture", {
        "c": c, "nu": nu, "a": a, "b": b, "beta": beta, "kind": kind, "q": q_poly, "poly": poly,
    }  # fmt: skip


#: polynomial factors up to degree 11 under exp(-a r) (Matérn p + 1/2 with p <= 11 and the like)
_MAX_POLY_TERMS = 12


def _poly_coeffs(factor):
    """The coefficients (p_0, p_1, ...) of ``factor`` as a polynomial in r with numeric coefficients
    (nonnegative integer powers, not all zero), or None."""
    try:
        expanded = sympy.expand(sympy.cancel(factor))
        poly = sympy.Poly(expanded, R)
        coeffs = [_number(x) for x in reversed(poly.all_coeffs())]
    except (sympy.PolynomialError, TypeError, ValueError):
        return None
    if not coeffs or not any(coeffs):
        return None
    return tuple(coeffs)


@builder("bessel_exp_mixture", rel_error=10 * _EXP_TOL)
def _bessel_exp_mixture(c, nu, a, b, dim, beta=0.0, kind="cos", q=0, poly=None):
    """mu of c P(r) T(beta r)/r^q J_nu(b r)/r^nu exp(-a r) in every d (:class:`_ExpBesselMixture`; None
    for q = 1 in d = 1, where exp(-A r)/r has no transform of its own): a finite measure (k is
    integrable and has a kink at 0, or is odd in r: mu ~ rho^-(d+1)); the largest tanh-sinh level is the first
    whose measured error on a probe grid is within ``_EXP_TOL``, every point stops at the first
    level within it (the stated error: 10 times that). When no level reaches ``_EXP_TOL`` (high d,
    where rounding alone exceeds it) the most accurate level is used with its measured error in
    place of ``_EXP_TOL``, up to ``_EXP_FLOOR``."""
    d = dim
    if q == 1 and d == 1:
        return None
    scale = math.hypot(a, b + beta)
    probe = scale * np.concatenate([[0.0], np.geomspace(1e-3, 1e4, 71)])
    # a polynomial factor can cancel k's r term (Matérn-like: (1 + a r) exp(-a r)): the mixture's
    # leading rho^-(d+1) parts then cancel in floats far out, where k's odd Taylor series answers
    tail = _OriginSeriesTail(poly, a, b, nu, beta, kind, d, q) if poly is not None else None
    if tail is not None:
        if tail.first is None:
            return None
        probe = np.concatenate([probe[probe < tail.start], [tail.start]])
    best = None
    for level in _EXP_LEVELS:
        mix = _ExpBesselMixture(nu, a, b, d, level, beta, kind, q, poly)
        _, _, rel = mix(probe)  # (every point at the top level)
        worst = float(np.max(np.where(np.isfinite(rel), rel, np.inf)))
        if best is None or worst < best[1]:
            best = (mix, worst)
        if worst <= _EXP_TOL:
            break
    # in high d the rounding of the m-fold powers alone (1e-15 (10 + m) of the moduli, against 1e-3
    # of them near the zeros of mu) passes _EXP_TOL: the best level is used, at its measured accuracy
    mix, worst = best
    if not worst <= _EXP_FLOOR:
        osc = f"{kind}({beta:g} r){'/r' if q else ''} " if beta else ""
        raise TransformError(
            f"k = {osc}J_{nu:g}({b:g} r)/r^{nu:g} exp(-{a:g} r) in d = {d}: the mixture on the lifted path "
            f"reached a relative accuracy of only {worst:.1e}"
        )
    tol = max(_EXP_TOL, worst)
    tail_exponent = float(d + 1)
    if tail is not None:
        _, _, tail_rel = tail(tail.start * np.geomspace(1.0, 1e6, 25))
        tol = max(tol, float(np.max(tail_rel)))
        tail_exponent = float(d + tail.first)
    sign_c, log_c = math.copysign(1.0, c), math.log(abs(c))

    def log_abs_and_sign(rho):
        # a point is final at the first level whose estimate (the difference to the level below,
        # which overstates a double-exponential rule's error) is within _EXP_TOL: stated 10 times
        # that, the builder's rel_error
        if tail is None:
            la, sg, _ = mix(rho, tol)
        else:
            la, sg = np.empty(rho.shape), np.empty(rho.shape)
            far = rho >= tail.start
            la[~far], sg[~far], _ = mix(rho[~far], tol)
            la[far], sg[far], _ = tail(rho[far])
        return la + log_c, sg * sign_c

    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        method="closed-form:bessel-exp-mixture",
        rel_error=max(BUILDERS["bessel_exp_mixture"].rel_error, 10 * tol),
        abs_error=0.0,
        scale=scale,
        tail_exponent=tail_exponent,
    )
