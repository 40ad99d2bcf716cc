"""The parameter table of the feature map (FEATURE_PARAMS), lengthscale and shape_matrix.

Statistical test: the signed Gram estimate with a shape matrix M and a lengthscale l is compared
with k(||x - y||_M / l) computed directly; the tolerance comes from the estimator's variance
(``method="rff"``: i.i.d. frequencies, each cos term has variance <= 1, so the variance of the
estimate is <= m+^2 / s+ + m-^2 / s-), with a fixed seed, and a negative control (M^-1, or no M)
fails the same check.
"""

import inspect

import numpy as np
import pytest

from spectralkit import kernels
from spectralkit.features import (
    FEATURE_PARAMS,
    RandomFeatures,
    feature_param_constraints,
    validate_feature_params,
)

DG = kernels.delta_gaussian(1.0, 10.0)
NAMES = (
    "kernel",
    "n_components",
    "method",
    "split",
    "feature_map",
    "random_state",
    "truncation",
    "truncation_tolerance",
    "lengthscale",
    "gamma",
    "shape_matrix",
)


def _spd(dim, seed=0, eigenvalues=None):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
    ev = np.geomspace(0.25, 4.0, dim) if eigenvalues is None else np.asarray(eigenvalues)
    M = (Q * ev) @ Q.T
    return 0.5 * (M + M.T)


def test_table_names_defaults_and_random_features_params():
    assert tuple(p.name for p in FEATURE_PARAMS) == NAMES
    assert all(p.doc for p in FEATURE_PARAMS)
    sig = inspect.signature(RandomFeatures)
    for p in FEATURE_PARAMS:
        assert sig.parameters[p.name].default == p.default, p.name
        assert sig.parameters[p.name].kind is inspect.Parameter.KEYWORD_ONLY or p.name == "kernel"
    rf = RandomFeatures(DG, dim=3)
    assert tuple(rf.get_params()) == ("kernel", "dim") + NAMES[1:]
    rf.set_params(lengthscale=2.0, shape_matrix=np.eye(3))
    assert rf.lengthscale == 2.0 and np.array_equal(rf.shape_matrix, np.eye(3))


def test_validate_feature_params_normalises_and_refuses():
    out = validate_feature_params(
        {"n_components": np.int64(8), "lengthscale": 2, "shape_matrix": [[2, 0], [0, 1]]}, dim=2
    )
    assert type(out["n_components"]) is int and type(out["lengthscale"]) is float
    assert out["shape_matrix"].dtype == np.float64 and out["shape_matrix"].shape == (2, 2)
    with pytest.raises(ValueError, match="invalid parameter 'sigma'; valid feature parameters: kernel, "):
        validate_feature_params({"sigma": 1.0})
    assert validate_feature_params({"n_components": 7})["n_components"] == 7  # odd: one cos column
    assert validate_feature_params({"n_components": 7, "feature_map": "cos"})["n_components"] == 7
    assert validate_feature_params({"lengthscale": "scale"})["lengthscale"] == "scale"
    for bad in (0.0, -1.0, float("nan"), float("inf"), True, "1"):
        with pytest.raises(
            ValueError,
            match=r"lengthscale must be a finite number > 0 or 'scale' \(the features approximate "
            r"k\(r / lengthscale\)\), got ",
        ):
            validate_feature_params({"lengthscale": bad})
    with pytest.raises(ValueError, match=r"lengthscale must be a finite number > 0 .*got -2"):
        RandomFeatures(DG, dim=2, lengthscale=-2).fit()


def test_sklearn_constraints_come_from_the_table():
    pytest.importorskip("sklearn")
    from sklearn.utils._param_validation import validate_parameter_constraints

    cons = feature_param_constraints()
    assert tuple(cons) == NAMES
    good = {
        "kernel": "gaussian",
        "n_components": 8,
        "method": "orf",
        "split": "jordan",
        "feature_map": "cos",
        "random_state": np.random.default_rng(0),
        "truncation": None,
        "truncation_tolerance": float("inf"),
        "lengthscale": 0.5,
        "gamma": None,
        "shape_matrix": np.eye(2),
    }
    validate_parameter_constraints(cons, good, caller_name="X")
    with pytest.raises(ValueError, match="lengthscale"):
        validate_parameter_constraints(cons, dict(good, lengthscale=0.0), caller_name="X")
    validate_parameter_constraints(cons, dict(good, lengthscale="scale", gamma=2.0), caller_name="X")
    with pytest.raises(ValueError, match="gamma"):
        validate_parameter_constraints(cons, dict(good, gamma=-1.0), caller_name="X")
    with pytest.raises(ValueError, match="no constraint for 'sigma'"):
        feature_param_constraints(["sigma"])


@pytest.mark.parametrize("lengthscale", [2.5, 0.3])
def test_lengthscale_equals_the_kernel_with_that_lengthscale(lengthscale):
    """gaussian with lengthscale=l in RandomFeatures == gaussian(l) built directly (same draws)."""
    X = np.random.default_rng(0).standard_normal((20, 3))
    a = RandomFeatures("gaussian", dim=3, n_components=64, lengthscale=lengthscale, random_state=1).fit()
    b = RandomFeatures(kernels.gaussian(lengthscale), dim=3, n_components=64, random_state=1).fit()
    np.testing.assert_allclose(a.W_plus_, b.W_plus_, rtol=1e-14, atol=0)
    np.testing.assert_allclose(a.transform(X), b.transform(X), rtol=0, atol=1e-14)
    # the unscaled draws are kept; transform uses the scaled ones
    np.testing.assert_allclose(a.W_plus_raw_ / lengthscale, a.W_plus_, rtol=1e-15)
    unit = RandomFeatures("gaussian", dim=3, n_components=64, random_state=1).fit()
    assert unit.W_plus_ is unit.W_plus_raw_ and unit.shape_cholesky_ is None


def test_shape_matrix_folds_exactly_into_the_frequencies():
    M, l = _spd(3), 1.7
    X = np.random.default_rng(1).standard_normal((10, 3))
    rf = RandomFeatures(DG, dim=3, n_components=32, random_state=0, shape_matrix=M, lengthscale=l).fit()
    L = rf.shape_cholesky_
    np.testing.assert_allclose(L @ L.T, M, rtol=1e-14, atol=1e-14)
    # phases w . (L^T x) / l for the drawn w: the features of the mapped inputs with unscaled frequencies
    plain = RandomFeatures(DG, dim=3, n_components=32, random_state=0).fit()
    np.testing.assert_allclose(rf.transform(X), plain.transform(X @ L / l), rtol=0, atol=1e-13)


def test_signed_gram_with_shape_matrix_and_lengthscale_is_unbiased():
    """Indefinite kernel (delta_gaussian in d = 3): E[Phi J Phi^T] = k(||x - y||_M / l)."""
    dim, l = 3, 1.5
    M = _spd(dim, seed=3)
    X = np.random.default_rng(2).standard_normal((12, dim))
    rf = RandomFeatures(
        DG, dim=dim, n_components=200_000, method="rff", random_state=12345, shape_matrix=M, lengthscale=l
    ).fit()
    assert rf.mass_minus_ > 0  # indefinite: both parts sampled
    est = rf.kernel_approx(X)
    sigma = np.sqrt(rf.mass_plus_**2 / rf.n_plus_ + rf.mass_minus_**2 / rf.n_minus_)
    tol = 5.0 * sigma  # per entry; 78 distinct entries, P(any beyond 5 sigma) < 1e-4
    exact = DG.gram(X, shape_matrix=M / l**2)
    assert np.max(np.abs(est - exact)) < tol
    # negative controls: the inverse shape matrix, or none at all, are far outside the tolerance
    for wrong in (np.linalg.inv(M) / l**2, np.eye(dim) / l**2, M):
        assert np.max(np.abs(est - DG.gram(X, shape_matrix=wrong))) > 4 * tol


@pytest.mark.parametrize(
    "M, match",
    [
        (np.ones((2, 3)), r"shape_matrix must be None or a square \(d, d\) matrix, got shape \(2, 3\)"),
        (np.ones(3), r"shape_matrix must be None or a square \(d, d\) matrix, got shape \(3,\)"),
        (np.eye(2), r"shape_matrix must be a 3 x 3 matrix \(the input dimension d = 3\), got shape \(2, 2\)"),
        (
            np.array([[2.0, 1.0, 0], [0.9, 2.0, 0], [0, 0, 1]]),
            r"shape_matrix must be symmetric \(to 1e-12 relative\), "
            r"got max \|M - M\^T\| = 0.1 for max \|M\| = 2",
        ),
        (
            np.diag([1.0, -1.0, 1.0]),
            r"shape_matrix must be positive definite \(its Cholesky factorisation failed\), "
            r"got smallest eigenvalue -1",
        ),
        (np.diag([1.0, 0.0, 1.0]), "shape_matrix must be positive definite"),
        (np.diag([1.0, np.nan, 1.0]), "shape_matrix must be finite, got nan at row 1, column 1"),
        (np.diag([1.0, np.inf, 1.0]), "shape_matrix must be finite, got inf at row 1, column 1"),
        (np.eye(3) * 1j, "shape_matrix must be None or a real square matrix, got dtype complex128"),
        (np.array([["a"] * 3] * 3), "shape_matrix must be None or a real square matrix, got dtype <U1"),
    ],
)
def test_bad_shape_matrix_messages(M, match):
    with pytest.raises(ValueError, match=match):
        RandomFeatures(DG, dim=3, shape_matrix=M).fit()
    with pytest.raises(ValueError, match=match):
        validate_feature_params({"shape_matrix": M}, dim=3)


def test_shape_matrix_size_is_checked_against_the_fitted_dimension():
    with pytest.raises(ValueError, match="shape_matrix must be a 4 x 4 matrix"):
        RandomFeatures(DG, shape_matrix=np.eye(3)).fit(np.zeros((2, 4)))
    validate_feature_params({"shape_matrix": np.eye(3)}, dim=None)  # size unknown yet: only square
