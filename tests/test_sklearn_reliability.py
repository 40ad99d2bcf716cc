"""The scikit-learn estimators on extreme inputs: library errors, never numpy warnings first."""

import warnings

import numpy as np
import pytest

from spectralkit.sklearn import KreinRidgeClassifier, KreinRidgeRegressor, SpectralFeatures

RNG = np.random.default_rng(0)
X = RNG.normal(size=(30, 3))
Y = X[:, 0] + 0.1 * RNG.normal(size=30)
X_INF = X.copy()
X_INF[0, 0], X_INF[1, 1] = np.inf, -np.inf


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any numpy RuntimeWarning fails the test
        yield


@pytest.mark.parametrize(
    "fit, match",
    [
        # scikit-learn's finiteness check sums the data: +inf and -inf warned "invalid value
        # encountered in reduce" before its error
        (lambda: KreinRidgeRegressor(n_components=16).fit(X, Y * np.inf), "Input y contains infinity"),
        (lambda: KreinRidgeRegressor(n_components=16).fit(X_INF, Y), "Input X contains infinity"),
        (lambda: KreinRidgeClassifier(n_components=16).fit(X_INF, Y > 0), "Input X contains infinity"),
        (lambda: SpectralFeatures(n_components=16).fit(X_INF), "Input X contains infinity"),
    ],
)
def test_infinite_inputs_raise_without_a_numpy_warning(no_warnings, fit, match):
    with pytest.raises(ValueError, match=match):
        fit()


def test_tiny_alpha_and_huge_targets_fit_without_a_numpy_warning(no_warnings):
    # mu.max() / mu.min() overflowed for alpha = 1e-320 (condition number inf, with a warning)
    assert KreinRidgeRegressor(n_components=16, alpha=1e-320).fit(X, Y).condition_number_ == np.inf
    # targets near 1e300 overflowed the residual's sum of squares: solve_residual_ was NaN
    model = KreinRidgeRegressor(n_components=16, random_state=0).fit(X, Y * 1e300)
    assert model.solve_residual_ < 1e-12
    reference = KreinRidgeRegressor(n_components=16, random_state=0).fit(X, Y)
    np.testing.assert_allclose(model.predict(X) / 1e300, reference.predict(X), rtol=1e-9, atol=1e-12)
