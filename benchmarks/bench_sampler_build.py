"""CPU time of the tabulated norm sampler's tables for measures without an exact CDF.

For each kernel: derive its measure, then build the inverse-CDF tables of both Jordan parts
(``RadialSampler``) and print the CPU seconds of the build and the number of knots, as a markdown
row. Run ``python benchmarks/bench_sampler_build.py`` (docs/performance.md, "Tabulated norm
sampling"). Not a timed test.
"""

import time
import warnings

import spectralkit as sk
from spectralkit.sampling import RadialSampler

#: (formula, d, what)
CASES = [
    ("exp(-r**2)/(1 + r**2)", 10, "Gaussian mixture"),
    ("exp(-r**2/2)*cos(r)", 16, "Laguerre series"),
    ("max(1 - r**2/4, 0)**3.5", 5, "Sonine, 126 lobes"),
    ("Piecewise((1 - r**2/2, r <= 1), ((2 - r)**2/2, r <= 2), (0, True))", 2, "two polynomial pieces"),
    ("cos(r)/(1 + r**2)**2", 3, "kink at rho = 1: direct quadrature"),
]


def main():
    print("| kernel | d | table build (s CPU) | knots (both parts) |\n|---|---|---|---|")
    for formula, dim, what in CASES:
        measure = sk.SpectralMeasure(sk.RadialKernel.from_string(formula), dim=dim)
        _ = measure.mass_plus  # the derivation is not part of the build
        t0, knots = time.process_time(), 0
        for sign in (1, -1):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    knots += RadialSampler(measure, sign).n_knots
                except ValueError:  # no part of this sign
                    pass
        print(f"| `{formula}` ({what}) | {dim} | {time.process_time() - t0:.2f} | {knots} |", flush=True)


if __name__ == "__main__":
    main()
