"""Regenerate docs/guide-derive.md: runs each example and pastes its real output under it.

python docs/tools/make_guide_derive.py
"""

import contextlib
import io
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "guide-derive.md")

INTRO = """<!-- docs-test: slow -->
# Derive the spectral measure of a new indefinite kernel

This guide takes a kernel that is not in the library, writes it as a formula, and asks the three
questions spectralkit answers: what is its spectral measure mu on R^d, does mu change sign, and is
its total mass finite (so that the kernel lives in a reproducing kernel Krein space and has an
unbiased random-feature estimator)? Every output below was produced by the code above it
(`python docs/tools/make_guide_derive.py` regenerates this page; the docs test runs the code).
The conventions are those of [conventions.md](conventions.md).
"""

#: a step list entry that starts a new part of the page: the docs test runs each part as its own
#: test in a fresh namespace, which the hidden block sets up
PART = """<!-- docs-test: part -->
<!--
```python
import numpy as np
import spectralkit as sk
```
-->
"""
SETUP = "import numpy as np\nimport spectralkit as sk\n"

STEPS = [
    (
        """## 1. Write the kernel

Formulas are parsed through a whitelist (numbers, `r`, declared parameters, `+ - * / **`, and a
fixed set of functions); nothing is evaluated. Here: a Wendland-type compactly supported kernel
(1 - r)^4 (1 + 4 r) on [0, 1], zero beyond (`support=1`).""",
        """import numpy as np
import spectralkit as sk

k = sk.RadialKernel.from_string("(1 - r)**4 * (1 + 4*r)", support=1, name="wendland")
print(k, k(np.array([0.0, 0.5, 1.0, 1.5])))""",
    ),
    (
        """## 2. Ask for the verdict in several dimensions

Definiteness depends on the dimension. Two places decide the tail of mu: at r = 0 the expansion
1 - 10 r^2 + 20 r^3 - ... has an odd power, giving rho^(-d-3) (always integrable); at the support edge
the kernel vanishes like 5 (1 - r)^4, giving an oscillating rho^(-(d+9)/2), so the mass is finite iff
d < 1 + 2*4 = 9. (Wendland's theorem says more: this kernel is positive definite in d <= 3.)""",
        """for d in (1, 3, 5, 9):
    report = sk.check_rkks(k, dim=d)
    masses = f"m+ = {report.mass_plus}, m- = {report.mass_minus}" if report.mass_plus else "no finite masses"
    print(f"d = {d}: {report.verdict:9s} {masses}")""",
    ),
    (
        """## 3. Read the evidence

The report says why: the exponents from the kernel's expansions, the partial masses that confirm
convergence or divergence numerically, and the Bochner identity k(0) = m+ - m- within the errors.
A piecewise polynomial on a support has an exact transform in every d (the method line), so the
masses carry only rounding errors; the time varies from run to run and is shown as `...`.""",
        """print(sk.check_rkks(k, dim=5))""",
    ),
    (
        """## 4. Use the measure

`SpectralMeasure` gives the signed density mu(rho), the radial density f(rho) = S_{d-1} rho^(d-1)
mu(rho) whose positive and negative parts are the laws of the frequency norms, its sign changes,
and the lobes and tail model the samplers use.""",
        """m = sk.SpectralMeasure(k, dim=5)
print("method:", m.method)
print("first sign changes:", np.round(m.sign_changes[:4], 4))
rho = np.array([0.5, 5.0, 50.0])
print("mu(rho):", m.mu(rho))
print("k(0) =", k(0.0), " m+ - m- =", m.mass_plus.value - m.mass_minus.value)""",
    ),
    (
        """## 5. Featurize

A finite-mass kernel gets unbiased random features: the signed inner product of the features
estimates k. Here GORF features on random points in the unit ball of R^5.""",
        """rng = np.random.default_rng(0)
X = rng.normal(size=(200, 5))
X *= 0.5 / np.linalg.norm(X, axis=1, keepdims=True) * rng.random((200, 1)) ** 0.2
rf = sk.RandomFeatures(k, dim=5, n_components=4096, method="gorf", random_state=0).fit()
K_hat = rf.kernel_approx(X)
dist = np.linalg.norm(X[:, None, :] - X[None, :, :], axis=-1)
K = k(dist)
print("relative Frobenius error:", np.linalg.norm(K_hat - K) / np.linalg.norm(K))""",
    ),
    (
        """## 6. When the mass is infinite

In d = 9 the mass diverges; asking for masses or features raises `DivergentMassError` with the
reason. (An explicit truncation radius gives a biased estimator whose bias at r = 0 is reported.)""",
        """try:
    sk.SpectralMeasure(k, dim=9).mass_plus
except sk.DivergentMassError as err:
    print(err.reason)""",
    ),
    (
        """## 7. Damped oscillations and written-out families in high dimension

Exponential polynomials, cos/sin/cosh/sinh under an exponential envelope included, have exact
measures in every d (analytic continuation of the e^(-a r) transform to complex a, terms combined
exactly): e^(-r) cos(2 r) in d = 64 is indefinite with a huge total mass, a Matérn 5/2 typed out as
polynomial times exponential is recognised as the Student t, and e^(-sqrt(1 + r^2)) is positive
definite with mass e^(-1) in every d.""",
        """for text in ["exp(-r)*cos(2*r)", "(1 + sqrt(5)*r + 5*r**2/3)*exp(-sqrt(5)*r)", "exp(-sqrt(1 + r**2))"]:
    report = sk.check_rkks(sk.RadialKernel.from_string(text), dim=64)
    print(f"{text:45s} {report.verdict:4s} m+ = {report.mass_plus}, m- = {report.mass_minus}")""",
    ),
    (
        """## 8. Piecewise formulas

`max`, `min`, `abs`, `Heaviside`, `sign` and `Piecewise` are normalised when the kernel is built:
the formula is split where it changes branch, trailing zero pieces become the support, and
polynomial pieces are transformed exactly. `max(1 - r, 0)**3` is the same kernel as `(1 - r)**3`
with `support=1`; a B-spline-like kernel with two pieces is one exact piecewise polynomial.""",
        """k1 = sk.RadialKernel.from_string("max(1 - r, 0)**3")
print(k1.support, k1 == sk.RadialKernel.from_string("(1 - r)**3", support=1))
k2 = sk.RadialKernel.from_string("Piecewise((1 - r**2/2, r <= 1), ((2 - r)**2/2, r <= 2), (0, True))")
report = sk.check_rkks(k2, dim=2)
print(report.verdict, report.mass_plus, report.mass_minus)""",
    ),
    (
        """## 9. Error bars of a numeric transform

A kernel without a closed form goes through the numeric Hankel transform. Its masses carry every
error of the density, including what its absolute noise and the frequencies where it reaches the
rounding floor weigh under rho^(d-1) in high d: here m+ is exactly 1 (the kernel is PD) and the
stated error covers the distance. erfc(r) = e^(-r^2) erfcx(r) has a Gaussian factor its formula does
not show: it is read from the decay, and the kernel's Gaussian mixture answers in every d (PD, m+ = 1).""",
        """rep = sk.check_rkks("exp(-r**2)/(1 + r**2)", dim=10)
print(rep.verdict, rep.mass_plus, abs(rep.mass_plus.value - 1.0) <= rep.mass_plus.error)
for d in (3, 256):
    rep = sk.check_rkks("erfc(r)", dim=d)
    print(f"erfc(r), d = {d}: {rep.verdict} m+ = {rep.mass_plus} ({rep.method})")""",
    ),
    (
        """## 10. Completely monotone kernels

A kernel that is a mixture of exponentials, k(r) = int exp(-t r) nu(dt), has the mixture of their
transforms as its measure in every dimension. (1 + r)^-1.5 (nu a Gamma density) decays slower than
r^-d: mu is infinite at rho = 0 (an integrable singularity) and the masses are still exact;
a difference of such kernels has a signed nu and may be indefinite. A modified Bessel factor,
exp(-r) I1(r)/r, is such a mixture too (Poisson's integral: nu is supported on [0, 2]).""",
        """for formula in ("(1 + r)**-1.5", "(1 + r)**-2 - 0.5*(1 + 2*r)**-1", "exp(-r)*besseli(1, r)/r"):
    for d in (3, 256):
        report = sk.check_rkks(sk.RadialKernel.from_string(formula), dim=d)
        print(
            f"{formula:32s} d = {d:3d}: {report.verdict:4s} m+ = {report.mass_plus}, m- = {report.mass_minus}"
        )""",
    ),
    (
        """## 11. Oscillation under a Gaussian or a power-law envelope

A Gaussian times cos(r) in d = 64 is summed exactly (a Laguerre series in double-double
arithmetic with a running rounding bound, its monomial form, or exact-integer fixed point where
those cannot certify the sum); so is e^(-r^2) sin(3r)/r in d = 256 (about 2 s).
cos(r)/(1 + r^2)^2 in d = 3 has a kink at rho = 1, computed by the shift formula and the dimension
walk; in even d (cos(2r)/(1 + r^2)^3 in d = 8) the density is the Hankel integral turned onto the
imaginary axis, tabulated relative to the radial density; below the exponent threshold
(2 alpha <= (d - 1)/2) there is no finite measure. J0(r)/(1 + r^2)^2 is a mixture of such cosines
over the frequencies |t| <= 1 (Poisson's integral), exact in d = 5 (indefinite); in d = 9 its
measure is finite but the cosines' are not, and the imaginary-axis contour computes it alone.""",
        """print(sk.check_rkks(sk.RadialKernel.from_string("exp(-r**2/2)*cos(r)"), 64).verdict)
rep = sk.check_rkks(sk.RadialKernel.from_string("exp(-r**2)*sin(3*r)/r"), 256)
print(rep.mass_plus, rep.mass_minus)
print(sk.check_rkks(sk.RadialKernel.from_string("cos(r)/(1 + r**2)**2"), 3).mass_plus)
print(sk.check_rkks(sk.RadialKernel.from_string("cos(2*r)/(1 + r**2)**3"), 8).mass_minus)
print(sk.check_rkks(sk.RadialKernel.from_string("cos(r)/(1 + r**2)"), 7).reason)
rep = sk.check_rkks("besselj(0, r)/(1 + r**2)**2", 5)
print(rep.verdict, rep.method, rep.mass_plus, rep.mass_minus)
rep = sk.check_rkks("besselj(0, r)/(1 + r**2)**2", 9)
print(rep.verdict, rep.mass_plus, rep.mass_minus)""",
    ),
    PART,
    (
        """## 12. Truncated powers and fractional edges

A truncated power in r^2 of any real order, c (1 - r^2/b^2)^nu, has an exact Bessel transform
(Sonine's integral) in every d; its edge exponent nu decides finiteness (finite iff d < 1 + 2 nu).
Compact kernels with a fractional edge, c (1 - r/b)^beta g(r/b), have an exact route too: the Askey
kernels (1 - r)^nu and the generalised Wendland kernels (1 - r)^nu P(r) of non-integer order (and
their sums), and the circular covariance. (1 - r)^2.5 is positive definite up to d = 4 (Askey's
bound nu >= (d + 1)/2), RKKS in d = 5, and its edge makes the mass infinite from d = 6 on (above
d = 32 answered from the edge exponent alone, without a transform). In d = 2 the circular
covariance is the normalised self-convolution of the disk of diameter 1: its density is the
squared Bessel ratio J_1(rho/2)^2 / (pi rho^2).""",
        """import scipy.special

k = sk.RadialKernel.from_string("max(1 - r**2, 0)**2.5")
for d in (3, 6):
    report = sk.check_rkks(k, dim=d)
    print(d, report.verdict, report.method, report.mass_minus)
askey = sk.RadialKernel.from_string("(1 - r)**2.5", support=1)
for d in (4, 5, 256):
    report = sk.check_rkks(askey, dim=d)
    print(d, report.verdict, report.method, report.mass_minus)
circular = sk.RadialKernel.from_string("2/pi*(acos(r) - r*sqrt(1 - r**2))", support=1)
rho = np.array([0.5, 5.0, 50.0])
print(sk.SpectralMeasure(circular, dim=2).mu(rho))
print(scipy.special.j1(rho / 2) ** 2 / (np.pi * rho**2))  # the disk's |FT|^2 / area""",
    ),
    (
        """## 13. Band-limited kernels

Fejér's kernel sin(r)^2/r^2 is band-limited: its measure lives in the ball rho <= 2. In d = 1 it is
the triangle (2 - rho)/4; the dimension walk gives 1/(8 pi rho) in d = 3 and, in d = 5, the density
1/(16 pi^2 rho^3) plus a shell of mass 2/3 on the sphere rho = 2. One dimension higher the shell
would be differentiated again, which is not a measure: the verdict says so. Products of sines over
rational functions are split by partial fractions into a band-limited part and rational-quadratic
terms, each exact. In even d the measure is the exact projection of the (d + 1)-dimensional one:
(sin(r)/r)^4 is indefinite in d = 8, its masses stated to 1e-13.""",
        """fejer = sk.RadialKernel.from_string("sin(r)**2/r**2")
for d in (1, 3, 5, 6):
    report = sk.check_rkks(fejer, dim=d)
    print(d, report.verdict, report.shells or "", report.mass_plus if d < 6 else report.reason)
print(sk.check_rkks("sin(r)**2/(r**2*(1 + r**2))", 3).mass_plus)
report = sk.check_rkks("(sin(r)/r)**4", 8)
print(report.verdict, report.mass_plus, report.mass_minus)""",
    ),
    (
        """## 14. Rational functions of r^2

1/(1 + r^4) has its poles at r^2 = -i and i. Partial fractions in t = r^2 write it as two conjugate
rational quadratics c/(r^2 + a) with complex a, and the rational quadratic's Bessel-K closed form
continues to complex scales: the density oscillates like exp(-rho/sqrt(2)) cos(rho/sqrt(2) + phase),
so the kernel is indefinite in every d. Real poles give sums of rational quadratics of several
scales; 1/((1 + r^2)(4 + r^2)) is a Gaussian scale mixture with positive weights, PD with mass
k(0) = 1/4 in every d.""",
        """report = sk.check_rkks("1/(1 + r**4)", 3)
print(report.verdict, report.method, report.mass_plus, report.mass_minus)
print(sk.check_rkks("1/((1 + r**2)*(4 + r**2))", 64).mass_plus)""",
    ),
    (
        """## 15. Oscillation under a rational envelope

cos(r)/(1 + r^4) decays like an oscillating r^-4: its measure is finite for d <= 8, with a kink (or,
in d = 8, an integrable singularity) at rho = 1. The envelope's one-dimensional transform is an
exponential polynomial (partial fractions, complex poles included), the shift formula moves it to
rho = +-1, and the dimension walk differentiates it exactly; even d project the odd neighbour. In
d = 9 the decay is exactly at the threshold (the measure is not absolutely continuous): refused
with that reason; in d = 10 there is no measure. Fejér's factor over a rational function,
sin(r)^2/(r^2 (1 + r^2)), is one closed form in odd d (its split into Fejér's kernel and rational
quadratics has parts without a measure in d = 5 and 7): PD with mass k(0) = 1.""",
        """kernel = sk.RadialKernel.from_string("cos(r)/(1 + r**4)")
for d in (2, 3, 8):
    report = sk.check_rkks(kernel, dim=d)
    print(d, report.verdict, report.method, report.mass_plus, report.mass_minus)
print(sk.check_rkks(kernel, dim=10).verdict)
print(sk.check_rkks("sin(2*r)/(r*(1 + r**2 + r**4))", 3).mass_plus)
report = sk.check_rkks("sin(r)**2/(r**2*(1 + r**2))", 7)
print(report.verdict, report.mass_plus)""",
    ),
    (
        """## 16. Oscillation under a K-Bessel envelope; powers with complex branch points

exp(-sqrt(1 + r^2)) cos(r): the envelope's transform in every dimension is a K-Bessel function of
sqrt(1 + rho^2), smooth and even in rho; the shift formula moves it to rho = +-1 and the dimension
walk differentiates it exactly (odd d, with multiple precision where its terms cancel), even d project
the odd neighbour. The measure is finite in every d (k(0) = 1/e = m+ - m-). 1/sqrt(1 + r^4) has branch
points at r = e^(i pi/4) and its mirror images: the numeric Hankel route's contours evaluate the power
through the logarithms of its linear factors, the analytic continuation off the real axis.""",
        """kernel = sk.RadialKernel.from_string("exp(-sqrt(1 + r**2))*cos(r)")
for d in (3, 16, 17):
    report = sk.check_rkks(kernel, dim=d)
    print(d, report.verdict, report.method, report.mass_plus, report.mass_minus)
report = sk.check_rkks("1/sqrt(1 + r**4)", 3)
print(report.verdict, report.method, report.mass_plus, report.mass_minus)""",
    ),
    PART,
    (
        """## 17. Exponentials times rational functions

exp(-r) cos(2 r)/(1 + r^2) is Re exp(-(1 - 2i) r)/(1 + r^2): its one-dimensional transform is the
Laplace transform of the rational factor at 1 -+ 2i -+ i rho, an exponential integral e^w E_1(w) per
pole, and in low d the dimension walk differentiates it exactly (the Laplace transforms of r^j R(r) by
the recurrence of its denominator, in multiple precision where the terms cancel; near rho = 0 the walk
of its Taylor series, far out the expansion from k's odd Taylor coefficients at 0, the tail
rho^-(d + n) with n the first odd power of r in k). Above d = 17 each partial fraction is written as a
Laplace mixture of exponentials along a path in the complex plane, exp(-s r)/(r - p) = int e^(t p)
exp(-(s + t) r) dt, whose transform in d dimensions is known for every complex exponent: one integral
per pole and rho, along a path chosen so that its integrand does not cancel (a ray, or the hyperbola on
which (a^2 + rho^2)^-n keeps its phase), tabulated in logs. Quadrature and steepest descent disagreed
in d = 16 (refused before), the walk stopped at d = 80; exp(-r) (1 + r)/(2 + r^2), whose r^1 term
vanishes, was refused in d = 64.""",
        """kernel = sk.RadialKernel.from_string("exp(-r)*cos(2*r)/(1 + r**2)")
for d in (3, 16, 256):
    report = sk.check_rkks(kernel, dim=d)
    print(d, report.verdict, report.method, report.mass_plus, report.mass_minus)
report = sk.check_rkks("exp(-r)*(1 + r)/(2 + r**2)", 64)
print(report.verdict, report.mass_plus, report.mass_minus, report.tail_exponent)""",
    ),
    (
        """## 18. Exponential powers in any dimension

exp(-r^a), 0 < a < 2, is a mixture of Gaussians exp(-t r^2) whose weight psi(t) is the positive
stable density of index a/2. Up to d = 16 a series in rho answers; beyond, each Gaussian's transform
is known in every d and psi comes from Kanter's integral, a one-dimensional integral of positive
terms (nothing cancels, whatever the exponent), so the densities are sums of Gaussians in logs
(docs/theory.md §15). exp(-r^1.8) was refused in d = 256 before, exp(-r^0.3) ended in an error in
d = 64. Every exp(-r^a) is PD with mass k(0) = 1.""",
        """for formula, d in (("exp(-r**1.8)", 16), ("exp(-r**1.8)", 256), ("exp(-r**0.3)", 64)):
    report = sk.check_rkks(formula, dim=d)
    print(formula, d, report.verdict, report.method, report.mass_plus, report.mass_minus)""",
    ),
    (
        """## 19. A Gaussian times products of oscillations, or poles on the imaginary axis

Under a Gaussian, any product of cosines, sines and Bessel functions that makes an even entire
function has the exact Laguerre series of step 11: its power series in r^2 is the product of the
factors' series (exp(-r^2/2) J0(r) cos(r) was refused in d = 256). A Gaussian times a rational
function of r^2 whose poles lie on the imaginary axis, exp(-r^2)/(1 + r^4), is a signed mixture of
Gaussians with a weight sin(t) that never decays; turned onto rays in the complex plane, one per pole
and band of frequencies, each piece decays like e^(-t) and the density is a sum without cancellation
(docs/theory.md §22). It was refused from d = 128.""",
        """for formula, d in (("exp(-r**2/2)*besselj(0, r)*cos(r)", 256), ("exp(-r**2)/(1 + r**4)", 256)):
    report = sk.check_rkks(formula, dim=d)
    print(formula, d, report.verdict, report.method, report.mass_plus, report.mass_minus)""",
    ),
    PART,
    (
        """## 20. Products of oscillations under an exponential envelope

Under e^(-a r), a Bessel factor J_nu(b r)/r^nu is Poisson's mixture of cosines, and a second factor
cos(beta r), sin(beta r) or sin(beta r)/r only shifts the mixture's frequencies: every term is
the exact transform of e^(-A r) or e^(-A r)/r at a complex A, summed on a path lifted into the
complex plane where nothing cancels (docs/theory.md §13). sin(r)^2/r^2 is sin(r)/r times
J_(1/2): the same route. The first kernel below was refused from d = 16 on, the second in
d = 64 and 256.""",
        """for formula, d in (("exp(-r)*cos(r)*besselj(0, r)", 64), ("sin(r)**2/r**2*exp(-r)", 256)):
    report = sk.check_rkks(formula, dim=d)
    print(formula, d, report.verdict, report.method, report.mass_plus, report.mass_minus)""",
    ),
    (
        """## 21. Oscillation under a completely monotone envelope

An envelope such as (1 + r)^-3 is a mixture of exponentials e^(-t r) (Bernstein), and each
e^(-t r) cos(r) has the exact transform of step 7 at a complex rate, so the density is one integral
over t (docs/theory.md §23). Whether the measure is finite is read from the exponents: the envelope
r^-3 must decay faster than r^-(d-1)/2, so (1 + r)^-3 cos(r) is a finite signed measure up to d = 6
(in d = 5 its density has a logarithmic singularity at rho = 1) and DIVERGENT from d = 8 on; exactly at
the threshold, d = 7, the measure at rho = 1 is a sphere shell or a |rho - 1|^-1 density depending on
the phase, and the derivation is refused with that reason. A stretched exponential exp(-c r^a),
0.2 <= a < 1, is completely monotone too (its Bernstein density is the positive a-stable one).
These kernels were refused in every d >= 2 before.""",
        """for formula, d in (
    ("(1 + r)**-3*cos(r)", 3),
    ("(1 + r)**-3*cos(r)", 5),
    ("(1 + r)**-3*cos(r)", 8),
    ("exp(-sqrt(r))*cos(r)", 3),
):
    report = sk.check_rkks(formula, dim=d)
    print(formula, d, report.verdict, report.method, report.mass_plus, report.mass_minus)""",
    ),
    (
        """## 22. Exponential powers beyond a = 2; a polynomial beside a Bessel factor

exp(-r^a) with a > 2 is positive definite in no dimension (its density changes sign: it is no
mixture of Gaussians), but its mass is finite in every d. The power series of mu in rho converges for
every rho; far out it cancels, and an asymptotic series in rho^(-a) takes over from the first point
where the two agree to rounding, because the asymptotic series alone misses a part that decays like
exp(-c rho^(a/(a-1))) (docs/theory.md §24). Even a (exp(-r^4)) is left to the numeric route. Under
e^(-a r), a polynomial beside a Bessel factor, (1 + 2 r) e^(-2 r) J0(r), is a sum of derivatives in
the rate of step 20's mixture (docs/theory.md §13). Both were refused in d = 64 before.""",
        """for formula, d in (
    ("exp(-r**3)", 3),
    ("exp(-r**3)", 64),
    ("exp(-2*r**2.5)", 16),
    ("(1 + 2*r)*exp(-2*r)*besselj(0, r)", 64),
):
    report = sk.check_rkks(formula, dim=d)
    print(formula, d, report.verdict, report.method, report.mass_plus, report.mass_minus)""",
    ),
    (
        """## 23. A Gaussian oscillation over poles of r^2

exp(-r^2/2) cos(3 r)/(1 + r^2) has no closed form, and its density decays only like e^(-rho) (the
poles at r = +-i): in high d its mass lies far out, where a quadrature of the Hankel integral cannot
follow it. Subtracting from cos(3 r) its value at the pole, cosh(3), leaves an entire function:
exp(-r^2/2) (cos(3 r) - cosh(3))/(1 + r^2) takes the Laguerre series of step 11, and
cosh(3) exp(-r^2/2)/(1 + r^2), a Gaussian times a rational function, the Gaussian scale mixture
(docs/theory.md §13 and §15). Double poles, complex pairs of poles and products of oscillations work
alike. These kernels were refused from d = 64 (or 256) on.""",
        """for formula, d in (
    ("exp(-r**2/2)*cos(3*r)/(1 + r**2)", 64),
    ("exp(-r**2/2)*cos(3*r)/(1 + r**2)", 256),
    ("exp(-r**2)*cos(2*r)/(2 + r**2)**2", 256),
):
    report = sk.check_rkks(formula, dim=d)
    print(formula, d, report.verdict, report.mass_plus, report.mass_minus)
    print("  ", report.method)""",
    ),
]


def main():
    namespace = {}
    parts = [INTRO]
    for step in STEPS:
        if step is PART:
            parts.append(PART)
            namespace = {}
            exec(SETUP, namespace)  # what the hidden block does for the docs test
            continue
        text, code = step
        buf = io.StringIO()
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "<guide>", "exec"), namespace)  # our own example code
        printed = re.sub(r"(?m)^time( +)\S+ s$", r"time\1...", buf.getvalue().rstrip())
        parts.append(text + "\n\n```python\n" + code + "\n```\n\nOutput:\n\n```text\n" + printed + "\n```\n")
        print(f"step done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    with open(OUT, "w") as fh:
        fh.write("\n".join(parts))


if __name__ == "__main__":
    main()
