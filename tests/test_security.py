"""No code execution and no denial of service from user input (kernel formulas and parameters)."""

import builtins
import time

import numpy as np
import pytest
import sympy

from spectralkit import kernels as K
from spectralkit.exceptions import KernelDefinitionError

# A payload that would create this file if any code path evaluated it.
PAYLOAD = "__import__('pathlib').Path('PWNED').write_text('x')"


@pytest.mark.parametrize(
    "container",
    [
        (PAYLOAD,),
        [PAYLOAD],
        {PAYLOAD},
        {PAYLOAD: 1},
        {1: PAYLOAD},
        frozenset([PAYLOAD]),
        (PAYLOAD, "r"),
        [["r", PAYLOAD]],
        b"r",
        bytearray(b"r"),
        1.0,
        None,
        np.array(["r"]),
        sympy.Tuple(sympy.Symbol("r")),
        sympy.Matrix([sympy.Symbol("r")]),
    ],
)
def test_kernel_accepts_only_text_or_a_sympy_expression(container, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    calls = []

    def spy(*args, **kwargs):
        calls.append(args)
        raise AssertionError("eval/exec must not be called")

    monkeypatch.setattr(builtins, "eval", spy)
    monkeypatch.setattr(builtins, "exec", spy)
    with pytest.raises(KernelDefinitionError, match="must be a formula string or a sympy expression, got"):
        K.RadialKernel(container)
    assert not calls
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("container", [(PAYLOAD,), [PAYLOAD], b"r", 3])
def test_from_string_accepts_only_str(container):
    with pytest.raises(KernelDefinitionError, match="kernel formula must be a string, got"):
        K.RadialKernel.from_string(container)


@pytest.mark.parametrize(
    "params, fragment",
    [
        ({"l": PAYLOAD}, "parameter 'l' must be a finite real number, got str"),
        ({"l": (PAYLOAD,)}, "parameter 'l' must be a finite real number, got tuple"),
        ({"l": [1.0]}, "parameter 'l' must be a finite real number, got list"),
        ({"l": True}, "parameter 'l' must be a finite real number, got bool"),
        ({"l": float("nan")}, "parameter 'l' must be a finite real number"),
        ({"l": 1j}, "parameter 'l' must be a finite real number, got complex"),
        ({PAYLOAD: 1.0}, "parameter names must be identifier strings"),
        ({("l",): 1.0}, "parameter names must be identifier strings"),
        ([("l", 1.0)], "params must be a mapping"),
        ("l=1", "params must be a mapping"),
    ],
)
def test_parameter_values_must_be_real_numbers(params, fragment, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(KernelDefinitionError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        K.RadialKernel("exp(-r/l)", params=params)
    assert not (tmp_path / "PWNED").exists()


def test_undefined_sympy_functions_are_refused():
    f = sympy.Function("system")
    with pytest.raises(KernelDefinitionError, match="undefined functions system"):
        K.RadialKernel(f(K.r) * sympy.exp(-K.r))


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("9^9^9*exp(-r)", "has magnitude about 10^"),
        ("10**10**10 * exp(-r)", "has magnitude about 10^"),
        ("2^1e300 * exp(-r)", "has magnitude about 10^"),
        ("2^1e308 * exp(-r)", "outside [10^-300, 10^300]"),
        ("gamma(10**7) * exp(-r)", "gamma of the constant 10000000 overflows"),
        ("exp(-r) * 1e300 * 1e300", "outside [10^-300, 10^300]"),
        ("(1 - r)**100000", "integer exponent 100000 is larger than 1000"),
        ("exp(-r) * " + "9" * 400, "digits is too large"),
        ("exp(-r) / 10**400", "has magnitude about 10^"),
        ("exp(-r) * 1e-320", "outside [10^-300, 10^300]"),
    ],
)
def test_formula_denial_of_service_is_refused_fast(text, fragment):
    t0 = time.process_time()
    with pytest.raises(KernelDefinitionError) as info:
        K.RadialKernel.from_string(text)
    assert fragment in str(info.value)
    assert time.process_time() - t0 < 2.0


def test_bounded_constants_still_work():
    k = K.RadialKernel.from_string("2^10 * exp(-r) / 1024 + 0*gamma(100)")
    assert k(0.0) == pytest.approx(1.0)
    assert K.RadialKernel.from_string("(1 - r)**1000", support=1)(0.5) == pytest.approx(0.5**1000)


@pytest.mark.parametrize(
    "text, where",
    [("sqrt(r - 5)", "r = 0"), ("acos(r)*exp(-r**2)", "r = 1.0"), ("(r - 1)**(1/3)", "r = 0")],
)
def test_complex_valued_formulas_are_refused_at_construction(text, where):
    # evaluated in real arithmetic they give NaN on part of r >= 0 and used to be judged DIVERGENT
    # with a false reason
    with pytest.raises(KernelDefinitionError, match=r"is not real-valued at " + where):
        K.RadialKernel.from_string(text)


def test_a_formula_real_on_its_support_is_accepted():
    k = K.RadialKernel.from_string("acos(r/2)", support=2)  # complex beyond r = 2, zero there
    assert np.isfinite(k(np.array([0.0, 1.0, 2.0]))).all()


@pytest.mark.parametrize(
    "exc",
    [
        ZeroDivisionError("division by zero"),
        OverflowError("math range error"),
        NotImplementedError("no series"),
        "noconvergence",
    ],
)
def test_third_party_failures_of_a_derivation_become_transform_errors(exc, monkeypatch):
    import mpmath

    from spectralkit import TransformError
    from spectralkit.measures import _cache, _measure

    if exc == "noconvergence":
        exc = mpmath.libmp.NoConvergence("hypergeometric series did not converge")

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(_measure, "transform_atom", fail)
    # an earlier test in this process (or a disk cache) may hold this kernel's transform: the
    # derivation must reach transform_atom
    monkeypatch.delenv("SPECTRALKIT_CACHE_DIR", raising=False)
    _cache.clear_memory()
    kernel = K.RadialKernel.from_string("exp(-r**3)")  # not a closed-form family: goes through transform_atom
    with pytest.raises(TransformError, match=f"could not be computed: {type(exc).__name__}") as info:
        _measure.SpectralMeasure(kernel, 3).check_rkks()
    assert info.value.__cause__ is exc
