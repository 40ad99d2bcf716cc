"""Compact kernels with a fractional edge: k(r) = c (1 - r/b)^beta g(r/b) on [0, b], zero beyond.

Two classes reach this route: the Askey / generalised Wendland kernels, sums of
q (1 - r/b)^nu_i r^m with non-integer exponents nu_i that differ by integers (g a polynomial; beta
the smallest nu_i plus the order of the zero of g at the edge), and the circular covariance
c (2/pi) (acos(r/b) - (r/b) sqrt(1 - r^2/b^2)) = c (4/pi) int_(r/b)^1 sqrt(1 - s^2) ds
(beta = 3/2, g analytic on |1 - t| < 2). With nu = d/2 - 1, x = b rho and
K = c (2 pi)^(-d/2) b^d,

    mu(rho) = K T(x),   T(x) = int_0^1 (1 - t)^beta g(t) t^(d-1) Lambda_nu(x t) dt.

(For a polynomial g, T is a finite sum of 2F3 functions of -x^2/4; it is not summed as such, the
series cancels catastrophically beyond x ~ 10.) Two evaluations, by the size of x:

1. Gauss-Jacobi quadrature (x <= x_T). The weight (1 - t)^beta t^(d-1) carries the edge
   singularity and the factor t^(d-1); the rest, g(t) Lambda_nu(x t), is analytic on a
   neighbourhood of [0, 1] (entire for a polynomial g), so the rule converges geometrically once
   its order exceeds ~x/4 (N = 0.45 x_T + 16). Rules of orders N and N - 8 are both evaluated
   while building; their difference, twice, plus eps (16 + 2x) sum_i w_i |g(t_i)| env(x t_i) (env
   the amplitude of Lambda_nu, which bounds the absolute error of scipy's jv near its zeros; 2x
   for the rounding of the nodes, which moves Lambda_nu(x t) by ~x eps) is the stated error. The
   values are tabulated by piecewise Chebyshev interpolation (``_numerics.chebyshev.fit_adaptive``,
   relative to each panel's largest value), the interpolation error measured against the
   quadrature on a grid of 241 points and added; S_(d-1) |K| b^-d int x^(d-1) err(x) dx of it is
   the transform's ``mass_error`` (relative to mu the error grows towards x_T).
2. Endpoint expansions (x >= x_T): T = A(x) + Re(exp(i x) C(x)).
   * Origin: with k~(t) = (1 - t)^beta g(t) = sum_p c_p t^p, a term t^p is the generalised
     transform 2^(p+d/2) Gamma((p+d)/2) / Gamma(-p/2) x^(-p-d) (zero for even p), so
     A(x) = sum_(p odd) c_p 2^(p+d/2) Gamma((p+d)/2) / Gamma(-p/2) x^(-p-d).
   * Edge: J_nu = Re H1_nu on the real axis, H1_nu(z) = sqrt(2/(pi z)) exp(i(z - phi))
     sum_k i^k a_k(nu) z^-k (phi = nu pi/2 + pi/4, Hankel's coefficients a_k), and
     int_0^inf u^(beta+j) exp(-i x u) du = Gamma(beta+j+1) (i x)^-(beta+j+1) give, with
     g(1 - u) (1 - u)^(d/2-1/2-k) = sum_j f_(k,j) u^j,

         C(x) = sqrt(2/pi) exp(-i(phi + pi (beta+1)/2)) x^-((d+1)/2+beta)
                sum_N x^-N sum_(k+j=N) i^k (-i)^j a_k f_(k,j) Gamma(beta+j+1).

   Both series are asymptotic; they are cut at their smallest term at x_T, and the next five
   terms, twice the largest, are the truncation error (they shrink as x grows). Far out each band
   x_T/x in (2^-(j+1), 2^-j] sums only the terms it needs (the rest, below 1e-18 of the largest,
   is added to the error); the rounding bound counts the logarithms behind each term. x_T is the first
   point of a grid (40, 50, 60, 80, ...) where that error is below 1e-16 of |A| + |C|; at
   [x_T, 1.5 x_T] the expansions are checked against the quadrature (they must agree within the
   sum of the stated errors, else the route declines and the kernel goes to the next one).

Errors. rel_error is the tail's relative error (relative to the local amplitude |A| + |C|, as in
the other compact routes); abs_error = 2 max(error of the quadrature and table) / max|T| over the
verification grid, so |mu - exact| <= rel_error |mu| + abs_error max|mu|. The route is built up to
d = 32 (the Hankel coefficients a_k grow like nu^(2k) and push x_T up); beyond, a kernel whose edge
makes the mass infinite (d >= 1 + 2 beta) gets a transform that states only that, others go to the
numeric route. The exponents: |mu| ~ rho^-((d+1)/2+beta) from the edge, rho^-(d+p) from the first
odd p with c_p != 0 at the origin.
"""

import math

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._numerics.chebyshev import fit_adaptive
from .._numerics.exact import two_product
from .._numerics.special import lambda_nu, log_sphere_area
from ..kernels._parse import R
from ._forms import log_form, not_a_measure, vectorised
from ._registry import MATCH_FAILURES, builder, exact_rationals, matcher
from ._types import RadialTransform

__all__ = []  # private module

_EPS = float(np.finfo(np.float64).eps)
_MAX_DIM = 32
_TERMS = 160  # terms of the endpoint series (Gamma(beta + j + 1) stays finite in float64)
_TAIL_TOL = 1e-16
_X_GRID = (40.0, 50.0, 60.0, 80.0, 100.0, 130.0, 170.0, 220.0, 300.0, 400.0)
_BANDS = 48
_REL_FLOOR = 1e-14  # rel_error is never stated below this (the tail sums ~30 terms in float64)


def _binomial_series(a, n):
    """Coefficients of (1 - u)^a = sum_i binom(a, i) (-u)^i, i < n."""
    out = np.empty(n)
    out[0] = 1.0
    for i in range(1, n):
        out[i] = out[i - 1] * (i - 1 - a) / i
    return out


def _lambda_and_env(nu, z):
    """Lambda_nu(z) = z^-nu J_nu(z) for z >= 0 and a bound on its local amplitude.

    |Lambda_nu| <= Lambda_nu(0) (nu >= -1/2); beyond z0 = max(1, nu) the amplitude |H1_nu(z)| z^-nu
    is bounded by Nicholson's monotonicity of z |H1_nu(z)|^2 (decreasing to 2/pi for nu >= 1/2,
    increasing to it below): |H1_nu(z)| <= sqrt(z0/z) |H1_nu(z0)|, resp. sqrt(2/(pi z))."""
    lam = lambda_nu(nu, z)
    top = 2.0 ** (-nu) / math.gamma(nu + 1.0)
    z0 = max(1.0, nu)
    h0 = math.sqrt(z0) * abs(complex(sc.hankel1(nu, z0))) if nu >= 0.5 else math.sqrt(2.0 / math.pi)
    env = np.full(z.shape, top)
    big = z > z0
    zb = z[big]
    env[big] = np.minimum(top, h0 / np.sqrt(zb) * zb ** (-nu))
    return lam, env


class _EdgePower:
    """T(x) of the module docstring for one kernel in one dimension (x = b rho)."""

    def __init__(self, beta, g, edge_coef, origin_coef, dim):
        d = dim
        self.d, self.beta, self.g = d, float(beta), g
        self.nu = 0.5 * d - 1.0
        origin_coef = np.asarray(origin_coef, dtype=np.float64)
        odd = [p for p in range(1, len(origin_coef), 2) if origin_coef[p] != 0]
        self.p = min((d + 1) / 2 + self.beta, d + odd[0]) if odd else (d + 1) / 2 + self.beta
        self._setup_tail(np.asarray(edge_coef, dtype=np.float64), origin_coef)
        self._setup_quadrature()
        self._verify_tail()

    # -- endpoint expansions -----------------------------------------------------------------------
    def _edge_terms(self, edge_coef, x_t):
        """e_N x_t^-N, N < _TERMS (complex), the scaled coefficients of the edge series."""
        n_terms, nu, beta = _TERMS, self.nu, self.beta
        f = np.zeros(n_terms)
        f[: min(len(edge_coef), n_terms)] = edge_coef[:n_terms]
        j = np.arange(n_terms)
        gam = np.exp(sc.gammaln(beta + j + 1.0) - j * math.log(x_t))
        out = np.zeros(n_terms, dtype=np.complex128)
        ak = 1.0
        for k in range(n_terms):
            if k > 0:
                ak *= (4.0 * nu * nu - (2 * k - 1) ** 2) / (8.0 * k * x_t)
            if ak == 0.0:
                break
            fk = np.convolve(f, _binomial_series(0.5 * self.d - 0.5 - k, n_terms))[: n_terms - k]
            out[k:] += (1j) ** k * ak * fk * gam[: n_terms - k] * (-1j) ** j[: n_terms - k]
        return out

    def _origin_terms(self, origin_coef, x_t):
        """(p, log|o_p x_t^-p|, sign) of the odd origin terms, o_p x^-(p+d) the term of A."""
        d = self.d
        ps, logs, signs = [], [], []
        for p in range(1, min(len(origin_coef), _TERMS), 2):
            cp = origin_coef[p]
            if cp == 0:
                continue
            ps.append(p)
            logs.append(
                math.log(abs(cp))
                + (p + 0.5 * d) * math.log(2.0)
                + math.lgamma(0.5 * (p + d))
                - math.lgamma(-0.5 * p)
                - p * math.log(x_t)
            )
            signs.append(math.copysign(1.0, cp) * sc.gammasgn(-0.5 * p))
        return np.array(ps, dtype=np.float64), np.array(logs), np.array(signs)

    def _setup_tail(self, edge_coef, origin_coef):
        d, beta = self.d, self.beta
        for x_t in _X_GRID:
            e = self._edge_terms(edge_coef, x_t)
            ps, logs, signs = self._origin_terms(origin_coef, x_t)
            mag_e = np.abs(e)
            n_e = int(np.argmin(mag_e[1:-6])) + 1
            rem_e = 2 * float(np.max(mag_e[n_e + 1 : n_e + 6]))
            # magnitudes at x_t: the edge part in units of sqrt(2/pi) x^-((d+1)/2+beta)
            log_c = 0.5 * math.log(2 / math.pi) - ((d + 1) / 2 + beta) * math.log(x_t)
            scale_e = math.exp(log_c)
            if len(ps):
                n_o = int(np.argmin(logs[:-5])) + 1 if len(ps) > 6 else len(ps)
                rem_o = (
                    2 * float(np.exp(np.max(logs[n_o : n_o + 5]) - d * math.log(x_t)))
                    if n_o < len(ps)
                    else 0.0
                )
                mag_o = float(np.sum(np.exp(logs[:n_o] - d * math.log(x_t))))
            else:
                n_o, rem_o, mag_o = 0, 0.0, 0.0
            mag = scale_e * abs(e[0]) + mag_o
            rel = (scale_e * rem_e + rem_o) / mag
            if rel <= _TAIL_TOL:
                break
        else:
            raise ArithmeticError(f"the endpoint expansions do not reach {_TAIL_TOL:g} by x = {x_t:g}")
        self.x_t = x_t
        self._e = e[: n_e + 1]
        n = np.arange(n_e + 1)
        self._e_log = (
            np.abs(sc.gammaln(beta + n + 1.0)) + n * math.log(x_t) + 4.0 * n + 8.0 + 0.5 * d
        )  # exp(L) of the Gamma factors and ~4 roundings per convolution step, in units of eps
        self._e_rem = e[n_e + 1 : n_e + 6]
        self._o = (ps[:n_o], logs[:n_o], signs[:n_o])
        self._o_rem = (ps[n_o : n_o + 5], logs[n_o : n_o + 5])
        self.phase = self.nu * math.pi / 2 + math.pi / 4 + math.pi * (beta + 1) / 2
        self.rel_tail = max(rel, _REL_FLOOR)
        self._tabulate_tail()

    def _tabulate_tail(self):
        """Per band y in (2^-(j+1), 2^-j] (y = x_t / x) the number of terms that the sums need there
        (far out a few: the far tail is where the measure layer evaluates most), with the omitted
        terms as an error; and upper bounds of every other error term on a grid of y: each is
        increasing in y (or bounded through both cell ends), so its value at the right end of a
        point's cell bounds it there."""
        ps, logs, signs = self._o
        o = np.zeros(int(ps[-1]) + 1 if len(ps) else 1)
        w_o = np.zeros(o.shape)
        for p, lg, sg in zip(ps, logs, signs):
            o[int(p)] = sg * math.exp(lg)
            w_o[int(p)] = abs(lg) + 8.0
        e = self._e
        self._o_coef = o
        self._bands = []
        for j in range(_BANDS):
            ymax = 2.0**-j
            te, to = np.abs(e) * ymax ** np.arange(len(e)), np.abs(o) * ymax ** np.arange(len(o))
            # keep terms until what is left is below 1e-18 of the largest term
            ke = len(e) - int(np.argmax(np.cumsum(te[::-1]) > 1e-18 * np.max(te))) if np.any(te) else 1
            ko = len(o) - int(np.argmax(np.cumsum(to[::-1]) > 1e-18 * np.max(to))) if np.any(to) else 1
            self._bands.append((ke, ko, float(np.sum(te[ke:])), float(np.sum(to[ko:]))))
        yg = np.linspace(0.0, 1.0, 257)
        ly = np.log(np.maximum(yg, 1e-300))
        n0 = len(e)
        rem_e = np.max([abs(c) * yg ** (n0 + i) for i, c in enumerate(self._e_rem)] + [0 * yg], axis=0)
        po, lgo = self._o_rem
        rem_o = np.max([np.exp(lg) * yg ** int(p) for p, lg in zip(po, lgo)] + [0 * yg], axis=0)
        # p |ln y| y^p on the cell [y_(i-1), y_i]: at most p |ln y_(i-1)| y_i^p, and never above 1/e
        lyl = np.concatenate([[np.inf], -ly[:-1]])
        k = np.arange(len(o))
        with np.errstate(invalid="ignore", over="ignore"):
            plog = np.minimum(np.outer(lyl, k) * yg[:, None] ** k, 1 / math.e)
        plog[:, 0] = 0.0
        self._y_grid = yg
        self._err_e = 2 * rem_e + _EPS * _horner(np.abs(e) * self._e_log, yg)
        self._mag_e = _horner(np.abs(e), yg)
        self._err_o = 2 * rem_o + _EPS * (_horner(np.abs(o) * w_o, yg) + plog @ np.abs(o))
        self._mag_o = _horner(np.abs(o), yg)

    def tail(self, x):
        """(A, C, err) at x >= x_t, each band summed to its own length: T = A + Re(exp(i x) C)."""
        d, beta = self.d, self.beta
        y = self.x_t / x
        lx = np.log(x)
        i = np.minimum(np.searchsorted(self._y_grid, y), len(self._y_grid) - 1)
        band = np.minimum(np.floor(-np.log2(np.maximum(y, 1e-300))), _BANDS - 1).astype(int)
        s_e = np.empty(x.shape, dtype=np.complex128)
        s_o = np.empty(x.shape)
        omitted_e = np.empty(x.shape)
        omitted_o = np.empty(x.shape)
        for j in np.unique(band):
            ke, ko, oe, oo = self._bands[j]
            m = band == j
            s_e[m] = _horner(self._e[:ke], y[m])
            s_o[m] = _horner(self._o_coef[:ko], y[m])
            omitted_e[m], omitted_o[m] = oe, oo
        log_pre = 0.5 * math.log(2 / math.pi) - ((d + 1) / 2 + beta) * lx
        pre = np.exp(log_pre)
        xd = np.exp(-d * lx)
        cpart = pre * np.exp(-1j * self.phase) * s_e
        a = xd * s_o
        err = pre * (self._err_e[i] + omitted_e + _EPS * (np.abs(log_pre) + 8) * self._mag_e[i])
        err += xd * (self._err_o[i] + omitted_o + _EPS * d * np.abs(lx) * self._mag_o[i])
        return a, cpart, err + 4 * _EPS * (np.abs(a) + np.abs(cpart))

    def tail_direct(self, x):
        """(A, C, err) at x >= x_t summed term by term (builds and checks the tables).

        The rounding bound counts the logarithms behind every term: exp(L) carries a relative error
        ~|L| eps, and the terms' logarithms reach ~50 here."""
        d, beta = self.d, self.beta
        y = self.x_t / x
        lx = np.log(x)
        ly = np.log(y)
        s = np.zeros(x.shape, dtype=np.complex128)
        s_abs = np.zeros(x.shape)
        for c, w in zip(self._e[::-1], self._e_log[::-1]):
            s = s * y + c
            s_abs = s_abs * y + abs(c) * w
        log_pre = 0.5 * math.log(2 / math.pi) - ((d + 1) / 2 + beta) * lx
        pre = np.exp(log_pre)
        cpart = pre * np.exp(-1j * self.phase) * s
        n0 = len(self._e)
        rem = np.zeros(x.shape)
        for i, c in enumerate(self._e_rem):
            rem = np.maximum(rem, abs(c) * np.exp((n0 + i) * ly))
        err = pre * (2 * rem + _EPS * (s_abs + (np.abs(log_pre) + 8) * np.abs(s)))
        a = np.zeros(x.shape)
        ps, logs, signs = self._o
        for p, lg, sg in zip(ps, logs, signs):
            arg = lg + p * ly - d * lx
            term = np.exp(arg)
            a += sg * term
            err += _EPS * (abs(lg) + np.abs(p * ly) + np.abs(d * lx) + 8) * term
        rem_o = np.zeros(x.shape)
        for p, lg in zip(*self._o_rem):
            rem_o = np.maximum(rem_o, np.exp(lg + p * ly - d * lx))
        return a, cpart, err + 2 * rem_o

    # -- quadrature and its table --------------------------------------------------------------
    def _rule(self, n):
        y, w = sc.roots_jacobi(n, self.beta, self.d - 1.0)
        t = 0.5 * (1.0 + y)
        return t, w * 2.0 ** (-(self.beta + self.d)) * self.g(t)

    def quad(self, x, with_error=False):
        """T(x) by the rule of order N (and its error bound)."""
        x = np.asarray(x, dtype=np.float64)
        t, wg = self._rules[0]
        z = np.outer(x, t)
        lam, env = _lambda_and_env(self.nu, z)
        val = lam @ wg
        if not with_error:
            return val
        t1, wg1 = self._rules[1]
        lam1, _ = _lambda_and_env(self.nu, np.outer(x, t1))
        # rounding: the terms (16 eps) and the nodes (an error of ~eps in t moves Lambda(x t) by ~x eps)
        err = 2 * np.abs(val - lam1 @ wg1) + _EPS * (16.0 + 2.0 * x) * (env @ np.abs(wg))
        return val, err

    def _setup_quadrature(self):
        n = int(math.ceil(0.3 * 1.5 * self.x_t)) + 16
        self._rules = (self._rule(n), self._rule(n - 8))
        self.table, _ = fit_adaptive(
            self.quad,
            0.0,
            self.x_t,
            n_init=int(math.ceil(self.x_t / 8.0)),
            degree=40,
            tol=4e-14,
            floor=lambda v: float(np.max(np.abs(v))),
            max_depth=3,
        )
        grid = np.linspace(0.0, self.x_t, 241)
        val, err = self.quad(grid, with_error=True)
        tab = self.table(grid)
        self.t_max = float(np.max(np.abs(val)))
        self.abs_err = float(np.max(err + np.abs(tab - val)))
        # between the grid points: the larger neighbour, doubled
        e = err + np.abs(tab - val)
        e = 2 * np.maximum(e, np.maximum(np.roll(e, 1), np.roll(e, -1)))
        w = grid ** (self.d - 1) * e
        self.mass_err_x = float(np.sum(0.5 * (w[1:] + w[:-1]) * np.diff(grid)))

    def _verify_tail(self):
        x = np.linspace(self.x_t, 1.5 * self.x_t, 61)
        val, err = self.quad(x, with_error=True)
        a, c, terr = self.tail(x)
        a2, c2, terr2 = self.tail_direct(x)
        tv = a + (np.exp(1j * x) * c).real
        # the tables against the direct sums (far out too), then both against the quadrature
        far = self.x_t * np.geomspace(1.0, 1e6, 40)
        fa, fc, ferr = self.tail(far)
        fa2, fc2, ferr2 = self.tail_direct(far)
        if np.any(np.abs(fa - fa2) + np.abs(fc - fc2) > ferr + ferr2) or np.any(
            np.abs(tv - a2 - (np.exp(1j * x) * c2).real) > terr + terr2
        ):
            raise ArithmeticError("the tables of the endpoint expansions miss their direct sums")
        bad = np.abs(tv - val) > err + terr
        if np.any(bad):
            i = int(np.argmax(np.abs(tv - val) - err - terr))
            raise ArithmeticError(
                f"the endpoint expansions disagree with the quadrature at x = {x[i]:.6g}: "
                f"{abs(tv[i] - val[i]):.3g} > {err[i] + terr[i]:.3g}"
            )

    def __call__(self, x, x_lo=None):
        """(T, |error| bound) at x >= 0; x_lo the rounding of x = b rho (carried into the phase)."""
        out = np.empty(x.shape)
        err = np.empty(x.shape)
        near = x <= self.x_t
        if np.any(near):
            xn = x[near]
            out[near] = self.table(xn)
            err[near] = self.abs_err
        if not np.all(near):
            xf = x[~near]
            a, c, e = self.tail(xf)
            ph = np.exp(1j * xf) if x_lo is None else np.exp(1j * xf) * np.exp(1j * x_lo[~near])
            out[~near] = a + (ph * c).real
            err[~near] = e
        return out, err


# ---------------------------------------------------------------------------------------------
# recognition
# ---------------------------------------------------------------------------------------------
_X = sympy.Symbol("x", positive=True)


def _support(support):
    return sympy.Rational(support) if not isinstance(support, sympy.Basic) else support


@matcher(priority=0)
def _match_edge_power(expr, support):
    """sum_i q_i (a_i - a_i r/b)^nu_i r^m_i on [0, b], the nu_i non-integer and equal modulo 1."""
    if support is None:
        return None
    try:
        return _read_edge_power(expr, support)
    except MATCH_FAILURES:  # a formula sympy cannot take apart is not of this kind
        return None


def _edge_factor(factor):
    """(nu, a0^nu) when ``factor`` is (a0 - a0 x)^nu, nu a non-integer number, a0 > 0; else None."""
    if not isinstance(factor, sympy.Pow) or not factor.exp.is_number or factor.exp.is_integer:
        return None
    if not factor.exp.is_real or not factor.base.is_polynomial(_X):
        return None
    poly = sympy.Poly(factor.base, _X)
    if poly.degree() != 1:
        return None
    a1, a0 = poly.all_coeffs()
    if not (a0.is_number and (a0 > 0) == sympy.true and sympy.simplify(a0 + a1) == 0):
        return None
    return factor.exp, a0**factor.exp


def _read_edge_power(expr, support):
    b = _support(support)
    if not (b > 0) == sympy.true:
        return None
    e = exact_rationals(expr).subs(R, b * _X)
    parts = sympy.Add.make_args(
        sympy.expand(e, mul=True, multinomial=False, power_base=False, power_exp=False, log=False)
    )
    terms = []
    for part in parts:
        nu, coef, poly = sympy.Integer(0), sympy.Integer(1), sympy.Integer(1)
        for f in sympy.Mul.make_args(part):
            edge = _edge_factor(f)
            if edge is not None:
                nu, coef = nu + edge[0], coef * edge[1]
            elif f.is_number:
                coef = coef * f
            elif f.is_polynomial(_X):
                poly = poly * f
            else:
                return None
        terms.append((nu, coef, poly))
    nus = [t[0] for t in terms]
    nu_min = min(nus, key=lambda v: float(v))
    if not (nu_min > 0) == sympy.true or nu_min.is_integer:
        return None
    if any(not (v - nu_min).is_integer for v in nus):
        return None
    g = sympy.Poly(sum(c * (1 - _X) ** int(v - nu_min) * p for v, c, p in terms), _X)
    if g.is_zero or not all(c.is_number for c in g.all_coeffs()):
        return None
    j = 0
    while sympy.simplify(g.eval(1)) == 0:
        g = sympy.Poly(sympy.cancel(g.as_expr() / (1 - _X)), _X)
        j += 1
    beta = nu_min + j
    gc = tuple(float(sympy.N(c, 30)) for c in g.all_coeffs()[::-1])
    u = sympy.Symbol("u")
    ec = sympy.Poly(sympy.expand(g.as_expr().subs(_X, 1 - u)), u).all_coeffs()[::-1]
    edge = tuple(float(sympy.N(c, 30)) for c in ec)
    return "edge_power", {"b": float(sympy.N(b, 30)), "beta": float(sympy.N(beta, 30)), "g": gc, "edge": edge}


@matcher(priority=0)
def _match_circular(expr, support):
    """c (2/pi) (acos(r/b) - (r/b) sqrt(1 - r^2/b^2)) on [0, b] in any written form (acos or asin)."""
    if support is None:
        return None
    try:
        return _read_circular(expr, support)
    except MATCH_FAILURES:
        return None


def _circular_expr(x):
    return 2 / sympy.pi * (sympy.acos(x) - x * sympy.sqrt(1 - x**2))


def _read_circular(expr, support):
    args = {a.args[0] for a in expr.atoms(sympy.acos, sympy.asin)}
    if len(args) != 1:
        return None
    arg = args.pop()
    scale = sympy.simplify(arg / R)
    if not scale.is_number or not (scale > 0) == sympy.true:
        return None
    b = 1 / scale
    sup = _support(support)
    if not abs(sympy.N(sup / b - 1, 30)) <= 4 * _EPS:
        return None
    c = sympy.N(expr.subs(R, 0), 30)
    if not c.is_number or c == 0:
        return None
    ref = c * _circular_expr(R / b)
    # the same function: equal at 30 digits at points spread over the support (written forms differ)
    for t in ("0.05", "0.2", "0.43", "0.61", "0.87", "0.999"):
        r = sympy.Float(t, 40) * b
        v, w = sympy.N(expr.subs(R, r), 30), sympy.N(ref.subs(R, r), 30)
        if not (v.is_real and abs(v - w) <= sympy.Float("1e-25") * abs(c)):
            return None
    return "circular", {"c": float(c), "b": float(sympy.N(b, 30))}


# ---------------------------------------------------------------------------------------------
# builders
# ---------------------------------------------------------------------------------------------
def _horner(coef, t):
    out = np.zeros(np.shape(t))
    for c in coef[::-1]:
        out = out * t + c
    return out


@builder("edge_power", rel_error=_REL_FLOOR)  # measured per transform
def _edge_power(b, beta, g, edge, dim):
    """mu of (1 - r/b)^beta g(r/b) on [0, b], g the polynomial with ascending coefficients ``g``."""
    gc = np.array(g)
    origin = np.convolve(gc, _binomial_series(beta, _TERMS))[:_TERMS]
    return _transform(1.0, b, beta, lambda t: _horner(gc, t), edge, origin, dim, "closed-form:edge-power")


@builder("circular", rel_error=_REL_FLOOR)
def _circular(c, b, dim):
    """mu of c (2/pi)(acos(x) - x sqrt(1 - x^2)), x = r/b: with (4/pi) int_x^1 sqrt(1 - s^2) ds,
    g(1 - u) = (4 sqrt 2/pi) sum_i binom(1/2, i) (-1/2)^i u^i / (i + 3/2) (beta = 3/2, converges
    for u < 2) and k = 1 - (4/pi) sum_i binom(1/2, i) (-1)^i x^(2i+1) / (2i+1) at the origin."""
    i = np.arange(_TERMS)
    half = _binomial_series(0.5, _TERMS) * (-1.0) ** i  # binom(1/2, i)
    edge = 4 * math.sqrt(2) / math.pi * half * (-0.5) ** i / (i + 1.5)
    origin = np.zeros(_TERMS)
    origin[0] = 1.0
    odd = i[: (_TERMS - 1) // 2]
    origin[2 * odd + 1] = -4 / math.pi * half[odd] * (-1.0) ** odd / (2 * odd + 1)
    g_u = edge[:64]
    return _transform(c, b, 1.5, lambda t: _horner(g_u, 1.0 - t), edge, origin, dim, "closed-form:circular")


def _transform(c, b, beta, g, edge, origin, dim, method):
    """The RadialTransform of c (1 - r/b)^beta g(r/b) (module docstring), None where not built."""
    d = dim
    common = dict(
        method=method,
        rel_error=_REL_FLOOR,
        abs_error=0.0,
        scale=1.0 / b,
        tail_oscillation=b,
        edges=((b, beta),),
        nonnegative=False,
        radial_cdf=None,
        zeros=None,
    )
    if d > _MAX_DIM:
        if d < 1 + 2 * beta:
            return None  # a finite mass beyond the dimensions built here: the numeric route
        e = (d + 1) / 2 + beta
        reason = (
            f"boundary singularity (R - r)^{beta:g} at r = R = {b:g} gives |mu| ~ rho^(-(d+{2 * beta + 1:g})/2) "
            f"= rho^-{e:g}; mass integrand rho^(d-1)|mu| ~ rho^{d - 1 - e:g} in d = {d}: divergent "
            f"(finite iff d < 1 + 2*beta = {1 + 2 * beta:g})"
        )
        return RadialTransform(mu=not_a_measure(reason), divergent=reason, tail_exponent=e, **common)
    try:
        core = _EdgePower(beta, g, edge, origin, d)
    except ArithmeticError:
        return None  # not verified: the kernel goes to the next route
    with mpmath.workdps(30):
        log_k = float(
            mpmath.log(abs(mpmath.mpf(c)))
            - mpmath.mpf(d) / 2 * mpmath.log(2 * mpmath.pi)
            + d * mpmath.log(mpmath.mpf(b))
        )
    sgn = 1.0 if c > 0 else -1.0

    def log_abs_and_sign(rho):
        x, x_lo = two_product(b, rho)
        t, _ = core(x, x_lo)
        return log_k + np.log(np.abs(t)), sgn * np.sign(t)

    def tail_parts(rho):
        rho = np.asarray(rho, dtype=np.float64)
        x, x_lo = two_product(b, rho)
        a, cc, _ = core.tail(x)
        k = sgn * math.exp(log_k)
        # exp(i b rho) is formed by the caller from the float product: the rounding goes into B
        return k * a, -k * np.exp(1j * x_lo) * cc

    # the masses carry rel_error per lobe; the absolute error of the quadrature and its table on
    # [0, x_t] (relative to mu it grows towards x_t, where mu is small) goes in as mass_error:
    # S_(d-1) |K| b^-d int_0^x_t x^(d-1) err(x) dx
    mass_error = math.exp(log_sphere_area(d) + log_k - d * math.log(b)) * core.mass_err_x
    common.update(rel_error=core.rel_tail, abs_error=2 * core.abs_err / core.t_max, mass_error=mass_error)
    return RadialTransform(
        mu=vectorised(log_abs_and_sign),
        log_abs_mu=log_form(log_abs_and_sign),
        tail_exponent=core.p,
        tail_parts=tail_parts,
        tail_start=core.x_t / b,
        **common,
    )
