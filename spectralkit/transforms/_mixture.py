"""Spectral densities of Gaussian scale mixtures, stable in every dimension.

A radial kernel k(r) = F(r^2) whose F is a Laplace transform (Schoenberg's representation),

    k(r) = int_0^inf psi(t) e^(-t r^2) dt,

has, in the convention of ``docs/conventions.md``, the density

    mu_d(rho) = int_0^inf psi(t) g_d(rho, t) dt,   g_d(rho, t) = (4 pi t)^(-d/2) e^(-rho^2 / (4 t)),

a mixture of Gaussian densities, each of total mass 1 in every d. This is the route for smooth
kernels of infinite support in high d, where the Hankel integral int k r^(d-1) Lambda_nu(rho r) dr
cancels to e^(-rho^2/4) of its terms in the region that holds the mass.

* A Gaussian factor exp(-a r^2) of the formula (a read from its exponentials) is a shift,
  psi(t) = psi_0(t - a) (t > a) with G(s) = F(s) e^(a s) = int_0^inf psi_0(u) e^(-s u) du.
* psi_0(u) is computed on Talbot's contour (:mod:`.._numerics.laplace`) at the nodes of a
  composite Gauss-Legendre rule in x = log u (panels of width min(1/2, 2/sqrt(d)), 1 where
  u < a/(16 d): g_d is a
  bump of width ~sqrt(2/d) in log t); mu_d is then the finite sum sum_i W_i psi_0(u_i) g_d(rho, a
  + u_i), evaluated in logs (no under- or overflow in d = 256).
* Errors. Talbot with 24 and 32 nodes gives |delta psi_i|; each Gaussian has mass 1, so the mass
  error of mu_d is at most int |delta psi| du in *every* d (the total variation of the error). The
  representation is verified: sum_i W_i psi_0(u_i) e^(-(a + u_i) r^2) must reproduce k(r) to 1e-9
  of int |psi| on a grid of r (a missed pole or an atom of psi fails here), and the defect at r = 0
  (the mass outside the rule's range, exact for a one-signed psi there) is added to the mass error.
  With a Gaussian factor, the mass of psi_0 below the rule's smallest u (it may decay like
  1/|log u|) is one Gaussian at t = a: k(0) - sum_i W_i psi_0(u_i).
  The density error is measured at test frequencies against a second rule (24 against 16 points
  per panel) plus sum_i W_i |delta psi_i| g_d, relative to the local amplitude sum_i W_i |psi_i| g_d,
  where the radial density is within 1e-3 of its peak; beyond, the rule difference is integrated
  with the radial weight S_(d-1) rho^(d-1) into the mass error. Values of psi_0 not above 10 times
  their error are noise and dropped (their bound counts in the mass error). Every component is
  reported with a margin of 10.

Applies to analytic formulas without compact support that are smooth at 0 (mu decays faster than
any power). Anything the checks do not confirm returns None: the caller falls back to the
Hankel route (which then answers or refuses).
"""

import math

import mpmath
import numpy as np
import sympy

from .._numerics.laplace import talbot_invert
from .._numerics.quadrature import panel_rule
from .._numerics.special import log_sphere_area
from ..kernels._parse import R
from ._forms import log_form
from ._symbolic import complex_formula
from ._types import RadialTransform

__all__ = ["gaussian_mixture_transform"]

_EPS = np.finfo(np.float64).eps
_SPAN = 1e14  # u from scale / SPAN to scale * SPAN
_RECONSTRUCT = 1e-9  # the mixture must reproduce k to this fraction of int |psi|
_MARGIN = 10.0
_MP_POINTS = 2000  # at most this many non-finite contour values are redone in mpmath
_CLEAN = 10.0  # psi values below this multiple of their error are dropped (noise)


def _gaussian_factor(expr):
    """a >= 0 with expr = exp(-a r^2) * (the rest), read from the factors exp(p(r)) and b^p(r) with p
    a polynomial of degree 2 in r (0 when there is none)."""
    a = sympy.Integer(0)
    for f in sympy.Mul.make_args(expr):
        base, exp_ = f.as_base_exp()
        if not exp_.has(R) or base.has(R) or not base.is_positive:
            continue
        poly = sympy.Poly(exp_, R) if exp_.is_polynomial(R) else None
        if poly is None or poly.degree() != 2:
            continue
        a -= poly.coeff_monomial(R**2) * sympy.log(base)
    a = sympy.nsimplify(a) if a.has(sympy.Float) else a
    return a if a.is_positive else sympy.Integer(0)


class _Mixture:
    """mu_d(rho) = sum_i w_i g_d(rho, t_i) in logs, with the local amplitude and error sums."""

    def __init__(self, t, w, err, dim):
        self.dim = dim
        self.log_t = np.log(t)
        self.inv4t = 0.25 / t
        base = -(dim / 2.0) * np.log(4.0 * math.pi * t)
        with np.errstate(divide="ignore"):
            self.lw = base + np.log(np.abs(w))
            self.le = base + np.log(err)
        self.sign = np.sign(w)

    def values(self, rho, block=512):
        """(log|mu|, sign) at rho (flat float64 array)."""
        la, sg = np.empty(rho.size), np.empty(rho.size)
        for s in range(0, rho.size, block):
            lt = self.lw[None, :] - rho[s : s + block, None] ** 2 * self.inv4t[None, :]
            top = np.max(lt, axis=1)
            sm = np.exp(lt - top[:, None]) @ self.sign
            with np.errstate(divide="ignore"):
                la[s : s + block] = top + np.log(np.abs(sm))
            sg[s : s + block] = np.sign(sm)
        return la, sg

    def evaluate(self, rho, block=512):
        """(log|mu|, sign, log amplitude, log error) at rho (flat float64 array)."""
        out = [np.empty(rho.size) for _ in range(4)]
        for s in range(0, rho.size, block):
            r2 = rho[s : s + block, None] ** 2
            lt = self.lw[None, :] - r2 * self.inv4t[None, :]
            top = np.max(lt, axis=1)
            e = np.exp(lt - top[:, None])
            sm = e @ self.sign
            amp = e.sum(axis=1)
            le = self.le[None, :] - r2 * self.inv4t[None, :]
            etop = np.max(le, axis=1)
            with np.errstate(divide="ignore"):
                out[0][s : s + block] = top + np.log(np.abs(sm))
                out[3][s : s + block] = etop + np.log(np.exp(le - etop[:, None]).sum(axis=1))
            out[1][s : s + block] = np.sign(sm)
            out[2][s : s + block] = top + np.log(amp)
        return out


def _rule(lo, hi, width, n, flat=-math.inf):
    """Gauss-Legendre panels in x = log u on [lo, hi]: nodes u, weights du. Panels have width <=
    ``width``, or <= 1 below x = ``flat`` (there u << a, g_d(rho, a + u) hardly depends on u and
    psi_0 is smooth in log u)."""
    mid = min(max(flat, lo), hi)
    breaks = np.concatenate(
        [
            np.linspace(lo, mid, int(math.ceil((mid - lo) / 1.0)) + 1),
            np.linspace(mid, hi, int(math.ceil((hi - mid) / width)) + 1)[1:],
        ]
    )
    x, w = panel_rule(breaks, n)
    u = np.exp(x)
    return u, w * u


def _mp_complex(fn, z, tiny=False):
    """complex(fn(z)) in mpmath: NaN where it fails or overflows float64; with ``tiny``, 0 for
    values below 1e-300 in modulus and NaN for every other value (an underflow test)."""
    try:
        v = fn(mpmath.mpc(z.real, z.imag))
        if tiny:
            return 0.0 if abs(v) < 1e-300 else complex(math.nan, math.nan)
        v = complex(v)
    except (ArithmeticError, ValueError, TypeError):
        return complex(math.nan, math.nan)
    return v if math.isfinite(v.real) and math.isfinite(v.imag) else complex(math.nan, math.nan)


def _psi(G, u):
    """psi_0 at the nodes u (Talbot, 24 nodes), its error (against 32 nodes, plus rounding) and what
    was set to zero: values not above 10 times their error are noise (psi_0 far below the rounding
    of the contour sum); they are dropped and their bound |psi| + err goes to the mass error."""
    psi, size = talbot_invert(G, u, 24)
    psi2, size2 = talbot_invert(G, u, 32)
    if not (np.all(np.isfinite(psi)) and np.all(np.isfinite(psi2))):
        return None, None, None
    err = np.abs(psi - psi2) + 8.0 * _EPS * (size + size2)
    keep = np.abs(psi) > _CLEAN * err
    dropped = np.where(keep, 0.0, np.abs(psi) + err)
    return np.where(keep, psi, 0.0), np.where(keep, err, 0.0), dropped


def gaussian_mixture_transform(atom, dim, *, length, smooth_at_origin):
    """mu_d of ``atom`` from its Gaussian scale-mixture representation (module docstring), or None.

    Parameters
    ----------
    atom : RadialKernel
        An atomic kernel without compact support.
    dim : int
        Dimension d >= 1.
    length : float
        A characteristic length of k (sets the range of t around 1 / length^2).
    smooth_at_origin : bool
        The analysis' verdict that k is analytic in r^2 at 0 (the only case handled).

    Returns
    -------
    RadialTransform or None
        ``method = "numeric:gaussian-mixture+talbot"``; None when the representation does not apply
        or is not confirmed to the stated accuracy.
    """
    if atom.support is not None or not smooth_at_origin:
        return None
    a = _gaussian_factor(atom.expr)
    # b^p(r) as exp(p log b), so that the factor cancels symbolically (no e^(-a s) e^(a s) in floats)
    base_exp = [p for p in atom.expr.atoms(sympy.Pow) if p.exp.has(R) and not p.base.has(R)]
    expr = atom.expr.xreplace({p: sympy.exp(p.exp * sympy.log(p.base)) for p in base_exp})
    g_expr = sympy.powsimp(expr * sympy.exp(a * R**2))
    gz = complex_formula(g_expr)
    if gz is None:
        return None
    a = float(a)

    gm = sympy.lambdify(R, g_expr, modules="mpmath")

    def G(s):
        z = np.sqrt(s)
        with np.errstate(all="ignore"):
            out = np.asarray(gz(z), dtype=np.complex128) * np.ones(z.shape)
        # float64 over- or underflow of intermediate values (cosh(z) in 1/cosh(z) at large |z|):
        # those points again in mpmath, whose exponent range is unbounded
        bad = np.flatnonzero(~np.isfinite(out))
        if bad.size > _MP_POINTS:
            # many: a spread sample decides whether they are all float64 underflow (then 0); any
            # other value leaves them NaN and the route declines. The reconstruction of k and the
            # 24/32-node agreement check the outcome.
            sample = [_mp_complex(gm, zz, tiny=True) for zz in z.ravel()[bad[:: bad.size // 256 + 1]]]
            out.ravel()[bad] = 0.0 if all(v == 0 for v in sample) else math.nan
        elif bad.size:
            out.ravel()[bad] = [_mp_complex(gm, zz) for zz in z.ravel()[bad]]
        return out

    t_s = 1.0 / length**2
    lo, hi = math.log(t_s / _SPAN), math.log(t_s * _SPAN)
    width = min(0.5, 2.0 / math.sqrt(dim))
    # u < a / (16 d): g_d(rho, a + u) / g_d(rho, a) - 1 = O(d u / a) over the bulk of rho
    flat = math.log(a / (16.0 * dim)) if a > 0 else -math.inf
    u, w = _rule(lo, hi, width, 24, flat)
    uc, wc = _rule(lo, hi, width, 16, flat)
    with np.errstate(all="ignore"):
        psi, err, dropped = _psi(G, u)
        psic, _, _ = _psi(G, uc)
    if psi is None or psic is None:
        return None
    wpsi, werr = w * psi, w * err
    total = float(np.sum(np.abs(wpsi)))
    if not total > 0:
        return None
    # nodes that carry less than 1e-18 of int |psi| (tiny u, far tails): dropped, counted as dropped
    tiny = w * (np.abs(psi) + err) < 1e-18 * total
    dropped_tv = float(np.sum(w * dropped) + np.sum((w * (np.abs(psi) + err))[tiny]))
    u, w, psi, err = u[~tiny], w[~tiny], psi[~tiny], err[~tiny]
    wpsi, werr = w * psi, w * err
    small = wc * np.abs(psic) < 1e-18 * total
    uc, wc, psic = uc[~small], wc[~small], psic[~small]
    k0 = float(np.asarray(atom(np.zeros(1)), dtype=np.float64)[0])
    lump_err = 0.0
    if a > 0:
        # psi_0 may keep mass arbitrarily close to u = 0 (G ~ 1/log s: int_0^u psi_0 ~ 1/|log u|):
        # the mass below the rule, k(0) - sum W psi, is one Gaussian at t = a (each t in
        # [a, a + u_min] gives the same Gaussian to TV distance sqrt(d/8) u_min / a)
        lump = k0 - float(np.sum(wpsi))
        u_min = float(math.exp(lo))
        lump_err = abs(lump) * math.sqrt(dim / 8.0) * u_min / a
        u, w, psi, err = np.r_[0.0, u], np.r_[1.0, w], np.r_[lump, psi], np.r_[0.0, err]
        wpsi, werr = w * psi, w * err
    # the representation reproduces k (a missed pole or an atom of psi does not)
    r = length * np.concatenate([[0.0], np.geomspace(1e-3, 1e3, 121)])
    with np.errstate(all="ignore"):
        kr = np.asarray(atom(r), dtype=np.float64)
        rec = np.exp(-np.outer(r**2, a + u)) @ wpsi
    defect = np.abs(rec - kr)
    if not np.all(np.isfinite(defect)) or float(np.max(defect)) > _RECONSTRUCT * total:
        return None
    t, tc = a + u, a + uc
    mix = _Mixture(t, wpsi, werr, dim)
    if a > 0:
        uc, wc, psic = np.r_[0.0, uc], np.r_[1.0, wc], np.r_[k0 - float(np.sum(wc * psic)), psic]
        tc = a + uc
    coarse = _Mixture(tc, wc * psic, np.ones(tc.size), dim)
    # test frequencies: where the Gaussians of the mixture put their radial mass, sqrt(2 d t) for the
    # t that carry psi, and beyond
    heavy = t[np.abs(wpsi) > 1e-16 * total]
    rho = np.geomspace(
        1e-2 * math.sqrt(2.0 * dim * heavy.min()), 8.0 * math.sqrt(2.0 * dim * heavy.max()), 400
    )
    lm, sg, la, le = mix.evaluate(rho)
    lc, sc_, _, _ = coarse.evaluate(rho)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        quad = np.abs(sg * np.exp(lm - la) - sc_ * np.exp(lc - la))  # relative to the amplitude
        rel = quad + np.exp(le - la)
    rel = np.where(np.isfinite(rel), rel, np.inf)
    # the relative error is stated where the radial density is within 1e-3 of its peak; beyond,
    # the quadrature's error is integrated with the radial weight into the mass error (the errors
    # of psi count everywhere there, as their total variation)
    lrad = la + (dim - 1) * np.log(rho)
    core = lrad >= float(np.max(lrad)) + math.log(1e-3)
    rel_error = _MARGIN * max(float(np.max(rel[core])), 1e-14)
    if not rel_error <= 1e-6:
        return None
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        dens = np.where(core, 0.0, np.exp(log_sphere_area(dim) + lrad) * quad)
    outside = float(np.sum(0.5 * (dens[1:] + dens[:-1]) * np.diff(rho)))
    if not math.isfinite(outside):
        return None
    mass_error = _MARGIN * (float(np.sum(werr)) + dropped_tv + float(defect[0]) + outside + lump_err)
    max_log = float(np.max(lm))

    def log_abs_and_sign(x):
        return mix.values(x)

    log_abs_mu = log_form(log_abs_and_sign)

    def mu(x):
        la_, sg_ = log_abs_mu(x)
        with np.errstate(over="ignore", under="ignore"):
            return sg_ * np.exp(la_)

    return RadialTransform(
        mu=mu,
        method="numeric:gaussian-mixture+talbot",
        rel_error=rel_error,
        abs_error=float(_MARGIN * max(_EPS, float(np.max(np.exp(le - max_log))))),
        scale=1.0 / length,
        tail_exponent=math.inf,
        log_abs_mu=log_abs_mu,
        mass_error=mass_error,
    )
