"""Kernels are usable where scikit-learn expects one: Gram matrices, SVC(kernel=...), pairwise_kernels."""

import numpy as np
import pytest

import spectralkit as sk
from spectralkit.kernels import RadialKernel


def _dist(X, Y, M=None):
    D = X[:, None, :] - Y[None, :, :]
    M = np.eye(X.shape[1]) if M is None else M
    return np.sqrt(np.einsum("ijk,kl,ijl->ij", D, M, D))


@pytest.mark.parametrize(
    "kernel",
    [
        sk.kernels.gaussian(0.7),
        sk.kernels.delta_gaussian(1, 10),
        RadialKernel.from_string("(1 - r)**2", support=1.0),
        sk.kernels.sinc(),
    ],
)
def test_gram_equals_the_kernel_of_the_distances(kernel):
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(7, 3)) * 0.4, rng.normal(size=(5, 3)) * 0.4
    np.testing.assert_allclose(kernel.gram(X, Y), kernel(_dist(X, Y)), rtol=1e-12, atol=1e-12)
    K = kernel.gram(X)
    assert np.array_equal(K, K.T) and np.all(np.diag(K) == kernel.value_at_zero())
    M = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]])
    np.testing.assert_allclose(
        kernel.gram(X, Y, shape_matrix=M), kernel(_dist(X, Y, M)), rtol=1e-10, atol=1e-12
    )
    assert kernel.gram(X[0], Y[1]) == pytest.approx(float(kernel(_dist(X[:1], Y[1:2])[0, 0])))


def test_scikit_learn_accepts_it():
    from sklearn.datasets import load_iris
    from sklearn.metrics.pairwise import pairwise_kernels
    from sklearn.svm import SVC

    X, y = load_iris(return_X_y=True)
    k = sk.kernels.gaussian(1.0)
    assert SVC(kernel=k.gram).fit(X, y).score(X, y) > 0.95
    np.testing.assert_allclose(
        pairwise_kernels(X[:6], X[:4], metric=k.gram), k.gram(X[:6], X[:4]), rtol=1e-12
    )


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.eye(2), "must be a 3 x 3 matrix"),
        (np.array([[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]), "must be symmetric"),
        (np.diag([1.0, -1.0, 1.0]), "must be positive definite"),
        (np.diag([1.0, np.nan, 1.0]), "must be finite"),
        (np.eye(3) * 1j, "shape_matrix must be None or a real square matrix, got dtype complex128"),
    ],
)
def test_shape_matrix_is_validated(bad, match):
    with pytest.raises(ValueError, match=match):
        sk.kernels.gaussian().gram(np.zeros((2, 3)), shape_matrix=bad)


@pytest.mark.parametrize(
    "X, Y, match",
    [
        (np.zeros((2, 3)), np.zeros((2, 4)), "Y has 4 features but the first argument has 3"),
        (np.array([[np.nan, 0.0]]), None, "X contains NaN"),
        (np.zeros((2, 2)) + 1j, None, "X must be a real numeric array"),
        (np.zeros((2, 2, 2)), None, "X must be 2-D"),
    ],
)
def test_bad_inputs(X, Y, match):
    with pytest.raises(ValueError, match=match):
        sk.kernels.gaussian().gram(X, Y)


def test_inputs_are_never_modified():
    X = np.random.default_rng(1).normal(size=(4, 2))
    copy = X.copy()
    sk.kernels.gaussian().gram(X, shape_matrix=np.diag([1.0, 3.0]))
    assert np.array_equal(X, copy)
