"""Spectral density of the exponential power kernel exp(-(r/l)^alpha), alpha > 0, alpha != 1, 2.

No closed form exists; mu is summed from two series (convergent / asymptotic, see
:class:`_ExpPowerSeries`) in float64 or mpmath as needed, and evaluated through a piecewise
Chebyshev interpolant of log mu verified against the series (:mod:`spectralkit._numerics.chebyshev`).
For alpha < 2 the kernel is PD (mu > 0); for alpha > 2 it is not, and mu changes sign.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import scipy.special as sc
import sympy

from .._numerics.bigfloat import horner_pairs, int_pair
from ..kernels._parse import to_sympy_number
from ._forms import log_form, log_interpolant, vectorised
from ._types import RadialTransform

__all__ = ["REL_ERROR", "SERIES_MAX_DIM", "exponential_power"]

#: Verified by tests/test_closed_forms.py against the series and mpmath references.
REL_ERROR = 1e-11
_TINY = 1e-300


# ---------------------------------------------------------------------------------------------
# exponential power exp(-(r/l)^alpha): two series
# ---------------------------------------------------------------------------------------------
_MAX_TERMS = 3000  # longest series we accept
_MAX_DPS = 400  # largest working precision (digits) we accept
_TARGET_DIGITS = 14  # relative accuracy aimed at for each evaluation
_SHORT_TERMS = 24  # at most this many terms in _short_sums
_SHORT_RATIO = 1e-3  # below rho_short the small-rho series' second term is under this of the first
# at most this many exact coefficients times digits (~3 us each, mpmath.gamma): 6.3e5 (1.9 s) for
# alpha = 1.5 in d = 64, 3.6e6 (24 s) for alpha = 0.5 in d = 64 and > 6e6 in d >= 128, where the
# Gaussian-mixture route (_mixture) answers in 1-2 s instead; up to d = 16 twice as much (alpha =
# 1.25 in d = 3 needs 1.5e6, 4 s), where the series' 1e-11 is worth it
#: beyond this d the Gaussian-mixture route (Kanter's stable density, transforms/_mixture.py)
#: answers: 0.6-1.1 s where the series ran out of budget (alpha in (1.65, 2) in d = 256, alpha =
#: 0.3 in d = 64) or took 2 s (d = 128); the two agree to 1e-12 in d = 16-32
SERIES_MAX_DIM = 16
_MAX_WORK = 1_000_000
_MAX_WORK_LOW_D = 2_000_000
_MAX_WORK_INDEFINITE = 4_000_000


class _ExpPowerSeries:
    """mu of exp(-r^alpha) (l = 1) on R^d from two series in mpmath/float.

    small rho (convergent for alpha > 1, asymptotic for alpha < 1):
        mu = (2 pi)^(-d/2) 2^(1-d/2)/alpha sum_m (-1)^m Gamma((d+2m)/alpha)/(m! Gamma(m+d/2)) (rho/2)^(2m)
    (termwise Hankel transform of the Bessel series: int_0^inf e^(-r^alpha) r^(d-1+2m) dr =
    Gamma((d+2m)/alpha)/alpha);
    large rho (convergent for alpha < 1, asymptotic for alpha > 1):
        mu = pi^(-d/2) sum_{k>=1} (-1)^k 2^(alpha k) Gamma((alpha k+d)/2)/(k! Gamma(-alpha k/2))
             rho^(-alpha k-d)
    (termwise transform of e^(-r^alpha) = sum (-r^alpha)^k/k! with the generalised Fourier
    transform of |z|^lam: 2^(lam+d) pi^(d/2) Gamma((lam+d)/2)/Gamma(-lam/2) |w|^(-lam-d)).

    For each rho a plan is made from float log-magnitudes of the terms: an asymptotic series is
    used when its smallest term is below 10^-(target) of the sum; a convergent series is summed
    up to the point where the terms fall below 10^-(precision) of the largest term, in float64
    when no digits are lost to cancellation, else in mpmath with precision target + lost digits.
    """

    def __init__(self, alpha, d):
        self.alpha, self.d = alpha, d
        m = np.arange(_MAX_TERMS)
        # log|a_m|, sign a_m (small-rho series in x = rho^2, prefactor excluded)
        self.la = (
            sc.gammaln((d + 2 * m) / alpha) - sc.gammaln(m + 1) - sc.gammaln(m + 0.5 * d) - m * math.log(4)
        )
        self.sa = np.where(m % 2 == 0, 1.0, -1.0)
        self.log_p0 = -0.5 * d * math.log(2 * math.pi) + (1 - 0.5 * d) * math.log(2) - math.log(alpha)
        k = np.arange(1, _MAX_TERMS + 1)
        # 1/Gamma(-alpha k/2) = -sin(pi alpha k/2) Gamma(1 + alpha k/2)/pi (reflection)
        sin_ = np.sin(np.pi * alpha * k / 2)
        sin_[np.abs(alpha * k / 2 - np.round(alpha * k / 2)) < 1e-13] = 0.0
        with np.errstate(divide="ignore"):
            self.lb = (
                alpha * k * math.log(2)
                + sc.gammaln((alpha * k + d) / 2)
                - sc.gammaln(k + 1)
                + sc.gammaln(1 + alpha * k / 2)
                - math.log(math.pi)
                + np.log(np.abs(sin_))
            )
        self.sb = np.where(k % 2 == 0, 1.0, -1.0) * -np.sign(sin_)
        self.log_q0 = -0.5 * d * math.log(math.pi)
        # below rho_short the first terms of the small-rho series are summed at once (see _short_sums)
        self.rho_short = math.sqrt(_SHORT_RATIO * math.exp(self.la[0] - self.la[1]))
        self._coef_cache = {}
        # alpha > 2 has no other route in high d: 2.5e6 for alpha = 3 in d = 256 (7 s)
        self._max_work = _MAX_WORK_INDEFINITE if alpha > 2 else _MAX_WORK_LOW_D if d <= 16 else _MAX_WORK
        self._lost_hint = {}  # (series, round(8 log rho)) -> digits lost to cancellation there
        self.work = 0  # exact coefficients computed, times their digits (see _MAX_WORK)
        # alpha > 2: the large-rho series misses the saddle-point part of mu, of order
        # exp(-c rho^(alpha/(alpha-1))), which its truncation error does not show: it is used only
        # from where it has been seen to agree with the convergent series (see asymptotic_start)
        self.asym_from = math.inf if alpha > 2 else 0.0

    # -- exact coefficients at a given precision ----------------------------------------------
    def _coeffs(self, which, n, dps):
        """The first n exact coefficients (raw mpf tuples) at ``dps`` digits, cached per bucket."""
        key = (which, dps)
        cached = self._coef_cache.get(key, [])
        if len(cached) < n:
            self.work += (n - len(cached)) * dps
            if self.work > self._max_work:
                raise ArithmeticError("exponential power series needs too many exact coefficients")
            d = self.d
            with mpmath.workdps(dps + 10):
                alpha = self._alpha_mp(dps)
                for i in range(len(cached), n):
                    if which == "small":
                        c = (
                            (-1) ** i
                            * mpmath.gamma((d + 2 * i) / alpha)
                            / (mpmath.factorial(i) * mpmath.gamma(i + mpmath.mpf(d) / 2) * mpmath.mpf(4) ** i)
                        )
                    else:
                        k = i + 1
                        c = (
                            (-1) ** k
                            * mpmath.mpf(2) ** (alpha * k)
                            * mpmath.gamma((alpha * k + d) / 2)
                            * mpmath.rgamma(-alpha * k / 2)
                            / mpmath.factorial(k)
                        )
                    cached.append(int_pair(c._mpf_))
            self._coef_cache[key] = cached
        return cached[:n]

    def _logs(self, which, log_var):
        L = (self.la if which == "small" else self.lb) + np.arange(_MAX_TERMS) * log_var
        S = self.sa if which == "small" else self.sb
        return L, S

    # -- planning --------------------------------------------------------------------------------
    def _plan(self, which, log_var, full=False):
        """Number of terms to sum for one rho, or 0 when this series cannot deliver the target.

        ``full``: for an asymptotic series, sum up to its smallest term (else stop once the terms
        are far below the target).
        """
        L, _ = self._logs(which, log_var)
        finite = np.isfinite(L)
        if (which == "small") == (self.alpha > 1):  # convergent
            # the terms must have fallen 100 digits below the largest one within the table
            lmax = L[finite].max()
            idx = np.nonzero(finite & (L >= lmax - 100 * math.log(10)))[0]
            n = int(idx[-1]) + 1
            return n if n < _MAX_TERMS - 5 else 0
        # asymptotic: truncate before the smallest term of the first descending run; usable only
        # when that term is below 10^-(target+1) of the first and the used terms do not cancel
        idx = np.nonzero(finite)[0]  # zero coefficients (e.g. alpha k/2 integer) are skipped
        Lf = L[idx]
        grow = np.nonzero(Lf[1:] > np.minimum.accumulate(Lf)[:-1] + 1e-12)[0]
        stop = int(grow[0]) + 1 if grow.size else len(Lf)
        jmin = int(np.argmin(Lf[:stop]))
        if not full:
            # truncate at the first term of the descending run that is below 10^-(target+9) of
            # the largest before it (8 digits spare for cancellation), not at the smallest term:
            # at large rho the run is thousands of terms long and all but the first few are
            # negligible. _evaluate retries with full=True when the sum cancels more than that.
            drop = (_TARGET_DIGITS + 9) * math.log(10)
            small = np.nonzero(Lf[1 : jmin + 1] <= np.maximum.accumulate(Lf[:jmin]) - drop)[0]
            if small.size:
                jmin = int(small[0]) + 1
        kmin = int(idx[jmin])  # sum the terms before that one
        # usable when that term is below 10^-(target+1) of the largest used term; _sum
        # re-checks it against the actual sum (cancellation)
        used_max = Lf[:jmin].max() if jmin > 0 else Lf[0]
        ok = jmin > 0 and Lf[jmin] <= used_max - (_TARGET_DIGITS + 1) * math.log(10)
        self._last_error = Lf[jmin]
        return kmin if ok else 0

    def _sum(self, which, n, log_var, r):
        """log|sum| and sign of the first n terms: float64 when no digits are lost, else mpmath."""
        L, S = self._logs(which, log_var)
        convergent = (which == "small") == (self.alpha > 1)
        while True:
            Ln = L[:n]
            lmax = Ln[np.isfinite(Ln)].max()
            terms = np.where(np.isfinite(Ln), S[:n] * np.exp(Ln - lmax), 0.0)
            approx = math.fsum(terms)
            if approx != 0 and math.log(abs(approx)) > -0.5 * math.log(10):  # < 0.5 digit lost
                log_abs, sg = math.log(abs(approx)) + lmax, math.copysign(1.0, approx)
            else:
                # digits lost to cancellation, as far as float64 can tell (>= 16 when it cannot)
                lost = -math.log10(abs(approx)) if approx != 0 else 16.0
                log_abs, sg = self._sum_mp(which, n, r, lmax, max(lost, 16.0) + 2)
            if not convergent:
                if self._last_error > log_abs - (_TARGET_DIGITS + 1) * math.log(10):
                    return None  # cancellation made the truncation error too large
                return log_abs, sg
            # truncation check: the omitted terms must be below 10^-(target+3) of the sum
            rest = L[n:]
            big = np.nonzero(np.isfinite(rest) & (rest > log_abs - (_TARGET_DIGITS + 3) * math.log(10)))[0]
            if big.size == 0:
                return log_abs, sg
            n = n + int(big[-1]) + 1
            if n >= _MAX_TERMS - 5:
                raise ArithmeticError("exponential power series needs too many terms")

    def _alpha_mp(self, dps):
        frac = to_sympy_number(self.alpha)
        with mpmath.workdps(dps + 10):
            if isinstance(frac, sympy.Rational):
                return mpmath.mpf(int(frac.p)) / int(frac.q)
            return mpmath.mpf(self.alpha)

    def _sum_mp(self, which, n, r, lmax, lost):
        # start from the digits lost at a nearby rho (the float estimate saturates at 16): one pass
        # at enough digits instead of three or four that each find too few (alpha > 2, high d)
        key = (which, round(8 * math.log(r)))
        lost = max(lost, self._lost_hint.get(key, 0.0) - 2)
        while True:
            # precision in buckets of 40 digits so that the exact coefficients are computed
            # once per bucket (mpmath.gamma dominates the cost), not once per rho
            dps = 40 * math.ceil((_TARGET_DIGITS + lost + 10) / 40)
            if dps > _MAX_DPS:
                raise ArithmeticError("exponential power series needs too many digits")
            coeffs = self._coeffs(which, n, dps)
            prec = int(dps * 3.33) + 16
            with mpmath.workdps(dps):
                var = mpmath.mpf(r) ** 2 if which == "small" else mpmath.mpf(r) ** (-self._alpha_mp(dps))
                man, exp_ = horner_pairs(coeffs, int_pair(var._mpf_), prec)
                acc = mpmath.mpf(man) * mpmath.mpf(2) ** exp_
                if acc == 0:
                    lost += 30
                    continue
                log_abs = float(mpmath.log(abs(acc)))
            new_lost = (lmax - log_abs) / math.log(10)
            if new_lost <= lost - 1:
                self._lost_hint[key] = max(self._lost_hint.get(key, 0.0), new_lost)
                return log_abs, (1.0 if acc > 0 else -1.0)
            lost = new_lost + 5

    def _short_sums(self, r):
        """log|mu| at small r (array) from the first terms of the small-rho series, or nan where more
        than _SHORT_TERMS terms would be needed.

        k > 0, so truncating cos inside mu = (2 pi)^-d int k(x) cos(rho . x) dx after its u^(2M-2)
        term leaves at most |u|^(2M)/(2M)! there: the error of M terms is at most the magnitude of
        term M, whatever alpha (asymptotic series included). M is the first term below e^-40 (4e-18)
        of the first; below rho_short the second term is under 1e-3 of the first, so nothing cancels.
        (A sampler's tables next to a shifted frequency ask for tens of thousands of such tiny offsets:
        planned one by one over the 3,000-term table they took seconds.)
        """
        m = np.arange(_SHORT_TERMS)
        with np.errstate(divide="ignore", invalid="ignore"):
            lx = 2.0 * np.log(r)  # -inf at r = 0: every term after the first vanishes
            rel = self.la[m] - self.la[0] + np.where(m == 0, 0.0, m * lx[:, None])
        small = rel <= -40.0
        n = np.where(small.any(axis=1), np.argmax(small, axis=1), _SHORT_TERMS)
        used = m < n[:, None]
        # every used term after the first below 1e-3 of it (an asymptotic series can turn upwards)
        ok = (n < _SHORT_TERMS) & np.all(~used[:, 1:] | (rel[:, 1:] <= math.log(_SHORT_RATIO)), axis=1)
        total = np.sum(self.sa[m] * np.exp(np.where(used, rel, -np.inf)), axis=1)
        return np.where(ok, self.log_p0 + self.la[0] + np.log(np.where(ok, total, 1.0)), np.nan)

    def log_abs_and_sign(self, rho):
        """log|mu| and sign for l = 1 (small rho at once, the others one by one)."""
        log_abs = np.full(rho.shape, np.nan)
        sign = np.ones(rho.shape)
        short = rho <= self.rho_short
        if np.any(short):
            log_abs[short] = self._short_sums(rho[short])
        for i in np.nonzero(np.isnan(log_abs))[0]:
            log_abs[i], sign[i] = self._evaluate(float(rho[i]))
        return log_abs, sign

    def _series_value(self, which, r, retry=False):
        """(log|mu|, sign) at ``r`` from one series, or None when it cannot deliver the target;
        ``retry``: an asymptotic series that failed is tried again summed to its smallest term."""
        lr = math.log(r)
        log_var = 2 * lr if which == "small" else -self.alpha * lr
        n = self._plan(which, log_var)
        res = self._sum(which, n, log_var, r) if n else None
        if res is None and retry:
            n_full = self._plan(which, log_var, full=True)
            if n_full > n:
                res = self._sum(which, n_full, log_var, r)
        if res is None:
            return None
        la, sg = res
        # the large series starts at k = 1: one more factor rho^(-alpha) = e^(log_var)
        base = self.log_p0 if which == "small" else self.log_q0 - self.d * lr + log_var
        return la + base, sg

    def _evaluate(self, r):
        asym, conv = ("large", "small") if self.alpha > 1 else ("small", "large")
        for which in (asym, conv):
            if which == "large" and r < self.asym_from:
                continue
            res = self._series_value(which, r, retry=which == asym)
            if res is not None:
                return res
        raise ArithmeticError(f"no exponential-power series reaches the target at rho = {r}")

    def asymptotic_start(self):
        """alpha > 2, not an even integer: set ``asym_from``, where the large-rho series takes over.

        The large series is an expansion in powers of rho^-alpha; mu also holds a saddle-point
        part exp(-c rho^(alpha/(alpha-1))) beyond all its orders (1e-7 of mu at rho = 45 for
        alpha = 3 in d = 64, where the smallest term promised 1e-16). Marching out in steps of 10 %
        from rho = 1, the large series is accepted from the first of three consecutive points
        where it agrees with the convergent series to 1e-14 (the saddle part decays faster than
        any power there: the agreement only improves). ArithmeticError when the convergent series
        gives out first, or beyond rho = 1e4 (the builder's probe range).
        """
        self.asym_from = math.inf  # the march compares against the convergent series alone
        rho, agree = 1.0, 0
        while agree < 3:
            if rho > 1e4:
                raise ArithmeticError("the exponential-power series do not meet below rho = 1e4")
            large, small = self._series_value("large", rho), self._evaluate(rho)
            if large is not None:
                tol = 1e-14 + 8 * np.finfo(float).eps * abs(large[0])  # the logs' own rounding
                agree = agree + 1 if large[1] == small[1] and abs(large[0] - small[0]) <= tol else 0
            else:
                agree = 0
            rho *= 1.1
        self.asym_from = rho / 1.1**3


def exponential_power(c: float, alpha: float, lengthscale: float, dim: int) -> RadialTransform | None:
    """Series for c exp(-(r/l)^alpha), alpha > 0, alpha != 1 and not an even integer.

    mu_l(rho) = c l^d mu_1(l rho) (see :class:`_ExpPowerSeries`). At construction the plan is
    checked on rho l in [1e-4, 1e4] (beyond, the asymptotic series only get better); None when some
    rho needs more than 3000 terms or 400 digits (alpha within ~0.0x of 1, where both series
    converge too slowly), or the plan more than ``_MAX_WORK`` exact coefficients x digits (twice that
    up to d = 16; alpha = 0.5 in d = 64 took 24 s, 1.5 in d = 256 58 s before giving up), and, for
    alpha < 2, for d > ``SERIES_MAX_DIM``: the Gaussian-mixture route answers those.
    On rho l in [1e-6, 1e8] mu is then evaluated through a :func:`._forms.log_interpolant` interpolant of
    log mu verified against the series (relative error <= 2e-12 plus the series' own rounding;
    measured <= 6e-13), outside it by the series directly. Tail: mu ~ rho^(-d-alpha).

    alpha > 2 (not PD: mu changes sign; every d, as no mixture exists; a budget of
    ``_MAX_WORK_INDEFINITE``): the small-rho series converges for every rho, the large-rho one is
    asymptotic and is used only from :meth:`_ExpPowerSeries.asymptotic_start` on. For an even
    integer alpha every term of the large series vanishes: mu decays like
    exp(-c rho^(alpha/(alpha-1))) with ever more zeros, the convergent series alone would have to
    carry it (40-60 s for alpha = 4 in d <= 16), and None is returned (the numeric route answers).
    Not a closed form: method "series:exponential-power".
    """
    even = float(alpha).is_integer() and int(alpha) % 2 == 0
    if not 0 < alpha or alpha == 1.0 or even or (alpha < 2 and dim > SERIES_MAX_DIM):
        return None
    series = _ExpPowerSeries(alpha, dim)
    d, l = dim, lengthscale
    log_scale = math.log(abs(c)) + d * math.log(l)
    sign = 1.0 if c > 0 else -1.0

    try:
        if alpha > 2:
            series.asymptotic_start()
        series.log_abs_and_sign(np.geomspace(1e-4, 1e4, 81))
        # the series cost 30-500 us per rho (most around rho l ~ 1e-2..1e2, where they need many
        # terms or mpmath); a verified interpolant of log|mu| costs ~1 us
        evaluate, mass_error = log_interpolant(
            series.log_abs_and_sign, math.log(1e-6), math.log(1e8), signed=alpha > 2, dim=d
        )
    except ArithmeticError:
        return None

    def log_abs_and_sign(rho):
        la, sg = evaluate(rho * l)
        return la + log_scale, sg * sign

    mu = vectorised(log_abs_and_sign)
    return RadialTransform(
        mu=mu,
        log_abs_mu=log_form(log_abs_and_sign),
        method="series:exponential-power",
        rel_error=REL_ERROR,
        abs_error=min(1.0, _TINY / abs(float(mu(0.0)))),
        scale=1.0 / l,
        tail_exponent=d + alpha,
        tail_oscillation=0.0,
        nonnegative=c > 0 and alpha < 2,
        radial_cdf=None,
        zeros=None if alpha > 2 else np.empty(0),
        mass_error=abs(c) * mass_error,
    )
