"""Shared test configuration: hypothesis profiles, seeds and the stored high-precision references."""

import json
import math
import numbers
import os
from pathlib import Path

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from threadpoolctl import threadpool_limits

# "ci": bounded and deterministic; "dev": the same, the default; "thorough": many more examples.
settings.register_profile(
    "ci",
    max_examples=25,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev", max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("thorough", max_examples=500, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def _threads_per_worker():
    """Cores per pytest-xdist worker (None outside a multi-worker run).

    Each worker is one process per core: a worker that also runs BLAS, OpenMP or numba on every core
    oversubscribes the machine (measured 10-15 % slower on 2 cores), as scikit-learn's own test
    configuration notes. Tests that need several threads ask for them explicitly.
    """
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    if workers <= 1:
        return None
    return max(1, (os.cpu_count() or 1) // workers)


def pytest_configure(config):
    threads = _threads_per_worker()
    if threads is not None:
        config._spectralkit_thread_limits = threadpool_limits(limits=threads)  # kept until exit
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


# ---------------------------------------------------------------------------------------------
# stored references (tests/reference/<name>.json, written by tests/reference/make_references.py)
# ---------------------------------------------------------------------------------------------
REFERENCE_DIR = Path(__file__).resolve().parent / "reference"
#: test modules that declare REFERENCE_SETS = {name: (function, digits, [params, ...])}; digits None:
#: each case's own working precision params["dps"] (read by tests/reference/make_references.py and
#: tests/test_references.py; tests/test_references.py checks that no declaring module is missing)
REFERENCE_MODULES = (
    "test_closed_forms",
    "test_hankel",
    "test_error_bars",
    "test_monotone",
    "test_oscillating",
    "test_exp_poly",
    "test_bandlimited",
    "test_gauss_rational",
    "test_bessel_mixture",
    "test_monotone_oscillation",
    "test_exp_power_indefinite",
    "test_gauss_poles",
    "test_bessel_i",
    "test_rational",
)


def reference_key(params):
    """Canonical text of a parameter dict: sorted names, floats to 12 significant digits.

    Twelve digits make the key independent of the last-ulp differences of grids such as
    ``np.geomspace`` between numpy versions; at the tolerances of the tests (>= 1e-12 relative)
    a rho that differs in the 13th digit changes no comparison.
    """
    plain = {}
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            plain[name] = value
        elif isinstance(value, numbers.Integral):
            plain[name] = int(value)
        else:
            v = float(value)
            plain[name] = float(f"{v:.12g}") if math.isfinite(v) else repr(v)
    return json.dumps(plain, sort_keys=True)


class StoredReference:
    """The values of one stored reference set, looked up by their parameters."""

    def __init__(self, name):
        path = REFERENCE_DIR / f"{name}.json"
        if not path.exists():
            pytest.fail(
                f"stored reference {path.name} is missing: python tests/reference/make_references.py {name}"
            )
        blob = json.loads(path.read_text())
        self.name = name
        self.method = blob["method"]
        self.entries = blob["entries"]
        self._values = {reference_key(e["params"]): e["value"] for e in self.entries}

    def text(self, **params):
        """The stored value of ``params`` as its decimal string (all stored digits)."""
        key = reference_key(params)
        if key not in self._values:
            pytest.fail(
                f"no stored reference {self.name} for {key}: the test asks for a case the file "
                f"does not hold; python tests/reference/make_references.py {self.name}"
            )
        return self._values[key]

    def __call__(self, **params):
        """The stored value of ``params`` rounded to float64."""
        return float(self.text(**params))


_STORED = {}


@pytest.fixture(scope="session")
def stored_reference():
    """``stored_reference(name)`` -> :class:`StoredReference` (each file read once per session)."""

    def get(name):
        if name not in _STORED:
            _STORED[name] = StoredReference(name)
        return _STORED[name]

    return get


@pytest.fixture(scope="session")
def assert_within_stated_error():
    """``check(tr, points, peak_rho)``: a transform's densities at reference points ``(rho, value)``
    lie within its stated error max(rel_error |mu|, abs_error max|mu|), max|mu| taken over ``peak_rho``;
    returns (computed, reference)."""

    def check(tr, points, peak_rho):
        rho = np.array([p for p, _ in points])
        ref = np.array([v for _, v in points])
        got = tr.mu(rho)
        peak = float(np.max(np.abs(tr.mu(np.asarray(peak_rho, dtype=float)))))
        bound = np.maximum(tr.rel_error * np.abs(ref), tr.abs_error * peak)
        assert np.all(np.abs(got - ref) <= bound), (got - ref) / ref
        return got, ref

    return check
