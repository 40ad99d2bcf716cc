"""RadialKernel: whitelist parsing, evaluation, arithmetic, identity and the library."""

import pickle

import numpy as np
import pytest
import sympy

import spectralkit as sk
from spectralkit import kernels as K
from spectralkit.exceptions import KernelDefinitionError


@pytest.mark.parametrize(
    "text, fragment",
    [
        ('__import__("os").system("echo pwned")', "only plain function names may be called"),
        ('__import__("os")', "the function '__import__' is unknown"),
        ("r.real", "Attribute is not allowed"),
        ("(lambda: 1)()", "only plain function names may be called"),
        ("lambda: r", "Lambda is not allowed"),
        ("foo(r)", "the function 'foo' is unknown"),
        ("exp(r, 2)", "exp takes 1 argument(s), got 2"),
        ("exp(x=r)", "keyword arguments in the call of 'exp'"),
        ("x * r", "the name 'x' is unknown"),
        ("[r][0]", "Subscript is not allowed"),
        ("[r]", "List is not allowed"),
        ("r < 1", "Compare is not allowed"),
        ("r if r else 1", "IfExp is not allowed"),
        ("'r'", "is not a real number"),
        ("r @ r", "MatMult is not allowed"),
        ("exp", "must be called"),
        ("exp(-r", "is not valid syntax"),
        ("", "empty"),
        ("1j * r", "is not a real number"),
        ("True * r", "is not a real number"),
    ],
)
def test_parser_rejects_everything_outside_the_whitelist(text, fragment):
    with pytest.raises(KernelDefinitionError) as info:
        K.RadialKernel.from_string(text)
    assert fragment in str(info.value)


def test_parser_never_evaluates(monkeypatch):
    """Parsing user text builds sympy objects node by node: no eval/exec of the text.

    (Evaluating a kernel compiles sympy's printout of the validated tree with ``lambdify``: code built
    from whitelisted node types, identifier parameter names and the radius only, never user text.)"""
    import builtins

    from spectralkit.kernels._parse import parse_formula

    def boom(*args, **kwargs):
        raise AssertionError("eval/exec must not be called")

    parse_formula("exp(-r^2/(2*l**2)) * cos(pi*r/4)", ["l"])  # warm lazy imports
    with monkeypatch.context() as m:
        m.setattr(builtins, "eval", boom)
        m.setattr(builtins, "exec", boom)
        expr, _ = parse_formula("exp(-r^2/(2*l**2)) * cos(pi*r/4)", ["l"])
        with pytest.raises(KernelDefinitionError):
            parse_formula("__import__('os')")
    k = K.RadialKernel(expr, params={"l": 2})
    assert k(0.0) == pytest.approx(1.0)


def test_formula_functions_and_constants_evaluate_like_numpy():
    text = (
        "exp(-r) + log(1 + r) + sqrt(1 + r) + cos(r) * sin(r) + tanh(r) + acos(r/10) + "
        "besselj(0, r) + besselk(1, r + 1) + gamma(r + 1) + abs(r - 1) + min(r, 1) + max(r, 2) + pi + E"
        " + sech(r) + sinc(2*r)"
    )
    k = K.RadialKernel.from_string(text, support=10)  # acos(r/10) is complex beyond r = 10
    from scipy import special

    r = np.array([0.1, 0.5, 2.0, 3.0])
    expected = (
        np.exp(-r)
        + np.log1p(r)
        + np.sqrt(1 + r)
        + np.cos(r) * np.sin(r)
        + np.tanh(r)
        + np.arccos(r / 10)
        + special.j0(r)
        + special.kv(1, r + 1)
        + special.gamma(r + 1)
        + np.abs(r - 1)
        + np.minimum(r, 1)
        + np.maximum(r, 2)
        + np.pi
        + np.e
        + 1 / np.cosh(r)
        + np.sin(2 * r) / (2 * r)  # the unnormalised sinc (numpy's np.sinc is sin(pi x)/(pi x))
    )
    np.testing.assert_allclose(k(r), expected, rtol=1e-13)


def test_numeric_evaluation_equals_the_symbolic_value():
    for k in [
        K.gaussian(0.7),
        K.matern(1.5, 2.0),
        K.matern(0.8),
        K.rational_quadratic(1.5, 0.5),
        K.exponential_power(0.7),
        K.spherical_polynomial(2.5, 3),
        K.ntk_relu_sphere(),
        K.arccos0_sphere(),
        K.arccos1_sphere(),
        K.log_kernel(2.0),
    ]:
        for x in [0.0, 0.3, 1.1, 1.9]:
            exact = k.expr.subs(K.r, sympy.Rational(str(x))) if x else None
            value = float(k(x))
            if exact is not None:
                assert value == pytest.approx(float(sympy.N(exact, 30)), rel=1e-12, abs=1e-14), (k, x)
            else:
                assert value == pytest.approx(k.value_at_zero(), rel=1e-12)


def test_evaluation_is_vectorised_and_respects_the_support():
    k = K.spherical_polynomial(2, 2)
    r = np.linspace(0, 3, 30).reshape(5, 6)
    v = k(r)
    assert v.shape == (5, 6)
    np.testing.assert_allclose(v, np.where(r <= 2, (1 - r**2 / 4) ** 2, 0.0), rtol=1e-14)
    assert isinstance(k(1.0), float)


def test_value_at_zero_is_the_limit():
    assert K.matern(0.8)(0.0) == pytest.approx(1.0)
    assert K.matern(0.8)(1e-12) == pytest.approx(1.0, abs=1e-9)
    assert K.ntk_relu_sphere()(0.0) == pytest.approx(2.0)
    assert K.RadialKernel.from_string("sin(r)/r")(0.0) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0])
def test_evaluation_rejects_bad_radii(bad):
    with pytest.raises(ValueError, match="radius must be"):
        K.gaussian()(np.array([0.0, bad]))


def test_free_symbols_must_be_declared():
    x, y = sympy.symbols("x y")
    with pytest.raises(
        KernelDefinitionError, match="kernel must be radial.*free symbols without a value: x, y"
    ):
        K.RadialKernel(sympy.exp(-(x**2 + y**2)))
    with pytest.raises(KernelDefinitionError, match="do not appear"):
        K.RadialKernel("exp(-r)", params={"l": 1.0})
    with pytest.raises(KernelDefinitionError, match="parameter 'l' must be a finite real number"):
        K.RadialKernel("exp(-r/l)", params={"l": float("nan")})
    with pytest.raises(KernelDefinitionError, match="does not depend on r"):
        K.RadialKernel("2 + 0*r")
    with pytest.raises(KernelDefinitionError, match="support must be > 0"):
        K.RadialKernel("1 - r", support=-1)
    with pytest.raises(KernelDefinitionError, match="reserved"):
        K.RadialKernel.from_string("exp(-r)", params={"exp": 1.0})


def test_sympy_input_with_any_symbol_named_r():
    r = sympy.Symbol("r")  # no assumptions: still the radius
    k = K.RadialKernel(sympy.exp(-(r**2) / 2))
    assert k == K.RadialKernel.from_string("exp(-r**2/2)")
    assert k(1.0) == pytest.approx(np.exp(-0.5))


def test_identity_hash_and_pickle():
    a = K.RadialKernel.from_string("exp(-r**2/(2*l**2))", params={"l": 1.5})
    b = K.RadialKernel.from_string("exp(-r^2/(2*l^2))", params={"l": 1.5})
    c = K.RadialKernel.from_string("exp(-r**2/(2*l**2))", params={"l": 2.5})
    assert a == b and hash(a) == hash(b) and a != c
    assert len({a, b, c}) == 2
    for k in [a, K.delta_gaussian(1, 10), K.ntk_relu_sphere(), 2 * K.matern(2.5) - K.gaussian()]:
        k2 = pickle.loads(pickle.dumps(k))
        assert k2 == k and hash(k2) == hash(k)
        np.testing.assert_allclose(k2(np.linspace(0, 3, 7)), k(np.linspace(0, 3, 7)))
    with pytest.raises(AttributeError, match="immutable"):
        a._support = 3.0


def test_arithmetic_tracks_terms():
    g1, g2 = K.gaussian(1.0), K.gaussian(10.0)
    dg = g1 - g2
    assert [c for c, _ in dg.terms] == [1.0, -1.0]
    assert dg == K.delta_gaussian(1.0, 10.0)
    combo = 3 * g1 - 0.5 * (g2 + g1) + K.laplacian()
    coefs = {a.name: c for c, a in combo.terms}
    assert coefs == {"gaussian(l=1)": 2.5, "gaussian(l=10)": -0.5, "laplacian(l=1)": 1.0}
    r = np.linspace(0, 4, 9)
    np.testing.assert_allclose(combo(r), 2.5 * g1(r) - 0.5 * g2(r) + np.exp(-r), rtol=1e-14)
    assert combo.value_at_zero() == pytest.approx(3.0)
    assert (g1 + g2 - g2) == g1
    with pytest.raises(KernelDefinitionError, match="identically zero"):
        g1 - g1
    assert (g1 / 2).terms[0][0] == 0.5
    with pytest.raises(TypeError):
        g1 + 1.0


def test_combination_support_and_piecewise():
    k = K.spherical_polynomial(2, 2) + K.gaussian()
    assert k.support is None
    r = np.array([1.0, 2.5])
    np.testing.assert_allclose(k(r), [(1 - 0.25) ** 2 + np.exp(-0.5), np.exp(-(2.5**2) / 2)])
    pw = k.piecewise_expr()
    assert float(pw.subs(K.r, 2.5)) == pytest.approx(np.exp(-(2.5**2) / 2))


def test_library_values():
    r = np.array([0.0, 0.5, 1.0, 1.7])
    np.testing.assert_allclose(K.gaussian(2.0)(r), np.exp(-(r**2) / 8))
    np.testing.assert_allclose(K.laplacian(0.5)(r), np.exp(-2 * r))
    np.testing.assert_allclose(K.matern(1.5, 1.0)(r), (1 + np.sqrt(3) * r) * np.exp(-np.sqrt(3) * r))
    np.testing.assert_allclose(
        K.matern(2.5, 1.0)(r), (1 + np.sqrt(5) * r + 5 * r**2 / 3) * np.exp(-np.sqrt(5) * r)
    )
    from scipy.special import gamma, kv

    x = np.sqrt(2 * 0.8) * r[1:]
    np.testing.assert_allclose(K.matern(0.8)(r[1:]), 2**0.2 / gamma(0.8) * x**0.8 * kv(0.8, x), rtol=1e-12)
    np.testing.assert_allclose(K.exponential_power(0.5, 2.0)(r), np.exp(-np.sqrt(r / 2)))
    np.testing.assert_allclose(K.rational_quadratic(2.0, 1.0)(r), (1 + r**2 / 4) ** -2)
    np.testing.assert_allclose(K.spherical_polynomial(3, 1)(r), 1 - r**2 / 9)
    u = 1 - r**2 / 2
    np.testing.assert_allclose(K.arccos0_sphere()(r), 1 - np.arccos(u) / np.pi)
    np.testing.assert_allclose(
        K.arccos1_sphere()(r), (u * (np.pi - np.arccos(u)) + np.sqrt(1 - u**2)) / np.pi
    )
    np.testing.assert_allclose(
        K.ntk_relu_sphere()(r),
        u * (1 - np.arccos(u) / np.pi) + (u * (np.pi - np.arccos(u)) + np.sqrt(1 - u**2)) / np.pi,
        atol=1e-15,
    )
    np.testing.assert_allclose(K.log_kernel(2.0)(r), -np.log1p(r / 2))


def test_ntk_on_the_sphere_matches_the_dot_product_form():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(50, 5))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    u = np.clip(x @ x.T, -1, 1)
    dist = np.sqrt(np.clip(2 - 2 * u, 0, None))
    kappa = u * (1 - np.arccos(u) / np.pi) + (u * (np.pi - np.arccos(u)) + np.sqrt(1 - u**2)) / np.pi
    np.testing.assert_allclose(K.ntk_relu_sphere()(dist), kappa, atol=1e-7)


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda: K.gaussian(0), "lengthscale must be > 0, got 0"),
        (lambda: K.gaussian(-1.0), "lengthscale must be > 0"),
        (lambda: K.matern(nu=float("inf")), "nu must be a finite real number"),
        (lambda: K.exponential_power(2.5), "alpha must be <= 2 (exponent in (0, 2] (not PD for alpha > 2))"),
        (lambda: K.spherical_polynomial(1.5, 2), "a must be >= 2"),
        (lambda: K.spherical_polynomial(2, 1.5), "p must be an integer >= 1, got 1.5"),
        (lambda: K.delta_gaussian(2, 2), "sigma1 and sigma2 must differ"),
    ],
)
def test_library_parameter_validation(call, fragment):
    with pytest.raises(KernelDefinitionError) as info:
        call()
    assert fragment in str(info.value)


def test_from_spec():
    assert K.from_spec("matern:nu=1.5") == K.matern(1.5)
    assert K.from_spec("spherical_polynomial:a=2,p=2") == K.spherical_polynomial(2, 2)
    assert K.from_spec("delta_gaussian") == K.delta_gaussian()
    assert K.from_spec("exp(-r/l)", params={"l": 2}) == K.RadialKernel("exp(-r/l)", {"l": 2})
    k = K.from_spec("1 - r", support=1.0)
    assert k.support == 1.0
    with pytest.raises(KernelDefinitionError, match="unknown kernel 'materrn'"):
        K.from_spec("materrn")
    with pytest.raises(KernelDefinitionError, match="unknown parameters"):
        K.from_spec("matern:mu=1")
    with pytest.raises(KernelDefinitionError, match="must look like name=value"):
        K.from_spec("matern:1.5")
    with pytest.raises(KernelDefinitionError, match="parameter 'nu' must be a number"):
        K.from_spec("matern:nu=abc")


def test_public_api():
    assert sk.RadialKernel is K.RadialKernel
    for name in K.__all__:
        assert hasattr(K, name)


def test_parser_piecewise_heaviside_and_sign():
    # Piecewise((value, condition), ..., (value, True)) with chained comparisons, Heaviside and sign
    # are parsed (conditions only inside Piecewise) and normalised to pieces and a support
    k = K.RadialKernel.from_string(
        "Piecewise((1 - r**2/2, r <= 1), ((2 - r)**2/2, 1 < r <= 2), (0, True))"
        " * Heaviside(3 - r) * (1 + sign(5 - r))/2"
    )
    assert k.support == 2.0
    grid = np.array([0.0, 0.5, 1.5, 2.5])
    want = np.where(grid <= 1, 1 - grid**2 / 2, np.where(grid <= 2, (2 - grid) ** 2 / 2, 0.0))
    np.testing.assert_allclose(k(grid), want, rtol=1e-15, atol=1e-15)
    with pytest.raises(KernelDefinitionError, match="must be a"):
        K.RadialKernel.from_string("Piecewise((1 - r, r < 1), 0)")


def test_parser_takes_sympys_spellings_of_abs_min_max():
    # str() of a sympy expression prints Abs, Min, Max: a formula copied from sympy parses as the
    # lower-case one does
    for upper, lower in (
        ("Max(1 - r, 0)**4*(1 + 4*r)", "max(1 - r, 0)**4*(1 + 4*r)"),
        ("exp(-Abs(r - 1))*Min(1, 2 - r)", "exp(-abs(r - 1))*min(1, 2 - r)"),
    ):
        assert K.RadialKernel.from_string(upper).expr == K.RadialKernel.from_string(lower).expr
