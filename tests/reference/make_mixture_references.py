"""30-digit references of the Gaussian-mixture densities of tests/test_mixture.py (mpmath only).

exp(-r^2)/(1 + r^2) = int_0^inf e^-u exp(-(1 + u) r^2) du, so in the convention of docs/conventions.md

    mu_d(rho) = int_0^inf e^-u (4 pi (1 + u))^(-d/2) exp(-rho^2 / (4 (1 + u))) du,

computed by mpmath.quad with breakpoints every half width of the integrand's peak, every half of
1/(d/2 + 1) from u = 0 (the decay of a peak at u = 0), geometric ones near u = 0 and a final
[last, inf) piece; each value is recomputed with breakpoints one and a half times as dense and must
agree to 1e-12 (the tested errors are above 1e-10). Run ``python tests/reference/make_mixture_references.py``.
"""

import json
import math
import os

import mpmath as mp

mp.mp.dps = 30
DIMS = (1, 2, 3, 16, 64, 256)


def rhos(d):
    return [0.3, *(math.sqrt(2 * d * t) for t in (1.0, 2.0, 4.0))]


def _peak(rho, d):
    # the maximum of -u - (d/2) log(1 + u) - rho^2 / (4 (1 + u)) and the curvature there
    f = lambda u: -1 - (d / 2) / (1 + u) + rho**2 / (4 * (1 + u) ** 2)
    u = 0.0 if f(0.0) <= 0 else float(mp.findroot(f, (0.0, 1e4), solver="bisect"))
    curv = (d / 2) / (1 + u) ** 2 + rho**2 / (2 * (1 + u) ** 3)
    return u, 1 / math.sqrt(curv)


def mixture(rho, d, step=2):
    u0, width = _peak(rho, d)
    pts = sorted(
        {0.0, *(1e-4 * 1.5**j for j in range(25)), *(j / (d / 2 + 1) / step for j in range(60 * step))}
        | {max(u0 + width * j / step, 0.0) for j in range(-20 * step, 20 * step + 1)}
    )
    x = mp.mpf(rho)
    f = lambda u: mp.exp(-u) * (4 * mp.pi * (1 + u)) ** (-mp.mpf(d) / 2) * mp.exp(-(x**2) / (4 * (1 + u)))
    return mp.quad(f, pts) + mp.quad(f, [pts[-1], mp.inf])


def main():
    out = []
    for d in DIMS:
        for rho in rhos(d):
            a, b = mixture(rho, d), mixture(rho, d, step=3)
            if abs(a / b - 1) > 1e-12:
                raise RuntimeError(f"reference not converged at d = {d}, rho = {rho}: {a} vs {b}")
            out.append({"d": d, "rho": rho, "mu": mp.nstr(a, 30)})
    path = os.path.join(os.path.dirname(__file__), "mixture_mpmath.json")
    with open(path, "w") as fh:
        json.dump({"kernel": "exp(-r**2)/(1 + r**2)", "digits": 30, "values": out}, fh, indent=1)


if __name__ == "__main__":
    main()
