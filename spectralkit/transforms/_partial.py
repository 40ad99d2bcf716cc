"""Partial fractions of a rational function with numeric coefficients, at a chosen working precision.

One implementation for the closed forms that split rational kernels into poles: the completely
monotone route (real negative poles in r, :mod:`._monotone`) and rational functions of r^2
(complex poles allowed, :mod:`._rational`).
"""

from __future__ import annotations

import mpmath
import sympy

__all__ = ["partial_fractions"]


def partial_fractions(rational: sympy.Expr, var: sympy.Symbol, dps: int):
    """``(poly_part, fracs)`` with rational = sum_i poly_part[i] var^i + sum_(c, n, z) c (var - z)^-n.

    Exact division into the polynomial part and the proper remainder; the poles z (roots of the
    denominator, found at ``dps`` digits per square-free factor) are ``mpf`` when real (an imaginary
    part below 10^(15 - dps) of the pole's size is rounding) and ``mpc`` otherwise; the coefficient of
    (var - z)^-n at a pole of multiplicity m is the Taylor coefficient of order m - n of
    (var - z)^m N/D at z. Returns None when ``rational`` is not a ratio of polynomials in ``var``
    with numeric coefficients. Numbers are mpmath's at ``dps`` digits.
    """
    num, den = sympy.fraction(sympy.cancel(sympy.together(rational)))
    if not (num.is_polynomial(var) and den.is_polynomial(var)):
        return None
    N, D = sympy.Poly(num, var), sympy.Poly(den, var)
    if not all(c.is_number for c in N.all_coeffs() + D.all_coeffs()):
        return None
    with mpmath.workdps(dps):

        def mp(x):
            return mpmath.mpmathify(sympy.N(x, dps + 10))

        quo, rem = sympy.div(N, D)
        poly_part = [mp(c) for c in quo.all_coeffs()[::-1]]
        if rem.is_zero:
            return poly_part, []
        roots = []
        for factor, mult in sympy.sqf_list(D)[1]:
            if factor.degree() == 0:
                continue
            for z in factor.nroots(n=dps, maxsteps=500):
                re_, im_ = (mpmath.mpf(sympy.N(v, dps)) for v in z.as_real_imag())
                real = abs(im_) <= mpmath.mpf(10) ** (-dps + 15) * max(1, abs(re_))
                roots.append((re_ if real else mpmath.mpc(re_, im_), mult))
        lead = mp(D.LC())
        rem_coeffs = [mp(c) for c in rem.all_coeffs()]
        fracs = []
        for k, (zk, mk) in enumerate(roots):
            # Taylor series (in u = var - zk) of rem(zk + u) / (lead prod_{i != k} (zk - zi + u)^mi)
            series = [mpmath.polyval(rem_coeffs, zk)]
            derivs = rem_coeffs
            for j in range(1, mk):
                derivs = [c * (len(derivs) - 1 - i) for i, c in enumerate(derivs[:-1])]
                series.append(mpmath.polyval(derivs, zk) / mpmath.factorial(j) if derivs else mpmath.mpf(0))
            series = [c / lead for c in series]
            for i, (zi, mi) in enumerate(roots):
                if i == k:
                    continue
                delta = zk - zi
                inv = [mpmath.binomial(-mi, n) * delta ** (-mi - n) for n in range(mk)]
                series = [sum(series[a] * inv[n - a] for a in range(n + 1)) for n in range(mk)]
            for n in range(1, mk + 1):
                fracs.append((series[mk - n], n, zk))
    return poly_part, fracs
