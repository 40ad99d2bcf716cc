"""One behaviour through every entry point (issue 19 items 1, 4, 5, 6 and the code-health list).

* The same arguments give the same model through RandomFeatures.fit(X), SpectralFeatures, the Krein
  estimators, DaskSpectralFeatures / transform_dask / fit_dask, a CSR matrix and the CLI: the same
  ``lengthscale_`` (the "scale" rule by default) and bit-identical features.
* An odd ``n_components`` (one cos(w . x + b) column) keeps the estimator unbiased: the check
  |mean(k^) - k| <= 5 SE with SE from the draws' own spread, fixed seeds, and a negative control
  (the odd column without its factor sqrt(2): bias -k+(z)/4) that fails the same check.
* sample_weight / class_weight are scikit-learn's: an integer weight equals repeating the row,
  weight 0 equals dropping it, "balanced" equals its explicit weights.
"""

import inspect
import pathlib
import pickle
import typing

import numpy as np
import pytest
import scipy.sparse

from spectralkit import _validation, kernels
from spectralkit.features import (
    FEATURE_MAPS,
    SPLITS,
    FeatureMapName,
    MethodName,
    RandomFeatures,
    SplitName,
    resolve_lengthscale,
    scale_lengthscale,
)
from spectralkit.sampling.directions import METHODS

ARGS = dict(kernel="delta_gaussian:sigma1=1,sigma2=5", n_components=33, random_state=3)


def _X(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) * np.array([1.0, 3.0, 0.5, 2.0])[:d]


@pytest.mark.parametrize("extra", [{}, {"gamma": 0.3}, {"shape_matrix": np.diag([2.0, 1.0, 0.5, 1.5])}])
def test_same_arguments_same_model_through_every_entry_point(extra, tmp_path):
    sk_mod = pytest.importorskip("spectralkit.sklearn")
    X = _X()
    ref = RandomFeatures(**ARGS, **extra).fit(X)
    expected = ref.transform(X)
    if not extra:
        assert ref.lengthscale_ == scale_lengthscale(X) != 1.0  # the default is the data rule
    models = {
        "SpectralFeatures": sk_mod.SpectralFeatures(**ARGS, **extra).fit(X),
        "KreinRidgeRegressor": sk_mod.KreinRidgeRegressor(**ARGS, **extra).fit(X, X[:, 0]).features_,
        "KreinRidgeClassifier": sk_mod.KreinRidgeClassifier(**ARGS, **extra).fit(X, X[:, 0] > 0).features_,
        "SpectralFeatures(CSR)": sk_mod.SpectralFeatures(**ARGS, **extra).fit(scipy.sparse.csr_matrix(X)),
    }
    for name, model in models.items():
        assert model.lengthscale_ == ref.lengthscale_, name
        np.testing.assert_array_equal(model.transform(X), expected, err_msg=name)
    da = pytest.importorskip("dask.array")
    from spectralkit.dask import DaskSpectralFeatures, fit_dask, transform_dask

    dX = da.from_array(X, chunks=(37, 4))  # dask's tree of chunk sums: l agrees to 10 digits
    lazy = {
        "DaskSpectralFeatures": DaskSpectralFeatures(**ARGS, **extra).fit_transform(dX),
        "transform_dask": transform_dask(RandomFeatures(**ARGS, **extra), dX),
        "fit_dask(SpectralFeatures)": transform_dask(
            fit_dask(sk_mod.SpectralFeatures(**ARGS, **extra), dX), dX
        ),
    }
    for name, Phi in lazy.items():
        np.testing.assert_array_equal(Phi.compute(scheduler="synchronous"), expected, err_msg=name)
    if "shape_matrix" in extra:
        return
    from spectralkit.cli import main

    np.save(tmp_path / "X.npy", X)
    flags = ["--gamma", str(extra["gamma"])] if extra else []
    argv = ["featurize", ARGS["kernel"], "-n", "33", "--seed", "3", "--chunk-rows", "50", *flags]
    assert main([*argv, str(tmp_path / "X.npy"), str(tmp_path / "F.npy")]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "F.npy"), expected, err_msg="CLI featurize")


def test_without_data_scale_means_the_kernel_in_its_own_units():
    rf = RandomFeatures("gaussian", dim=3, random_state=0).fit()
    assert rf.lengthscale_ == 1.0
    assert resolve_lengthscale(kernels.gaussian(), "scale", None, None) == 1.0
    # a kernel with its own length scale: 'scale' with data would multiply the two silently
    with pytest.raises(
        ValueError, match=r"kernel gaussian\(l=2\) has its own length scale 2, .*lengthscale=1.0"
    ):
        RandomFeatures("gaussian:lengthscale=2").fit(_X())
    formula = kernels.from_spec("exp(-r**2/(2*lengthscale**2))", params={"lengthscale": 3.0})
    with pytest.raises(ValueError, match="has its own length scale 3"):
        RandomFeatures(formula).fit(_X())
    rf = RandomFeatures("gaussian:lengthscale=2", lengthscale=1.0).fit(_X())  # the kernel as given
    assert rf.lengthscale_ == 1.0


def test_scale_rule_blocks_sparse_weights_and_gamma():
    X = _X(n=50, d=3)
    M = np.array([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]])
    L = np.linalg.cholesky(M)
    exact = np.sqrt(3 * np.var(X @ L) / 2)
    assert scale_lengthscale(X, M) == pytest.approx(exact, rel=1e-9)
    assert scale_lengthscale(iter([X[:7], X[7:30], X[30:]]), M) == scale_lengthscale(X, M)
    assert scale_lengthscale(scipy.sparse.csr_matrix(X), M) == scale_lengthscale(X, M)
    assert scale_lengthscale(np.ones((4, 2))) == 1.0  # constant data
    # weights: an integer weight is the row repeated, a zero weight the row removed
    w = np.array([2.0, 0.0] + [1.0] * 48)
    repeated = np.vstack([X[:1], X[:1], X[2:]])
    assert scale_lengthscale(X, sample_weight=w) == scale_lengthscale(repeated)
    assert scale_lengthscale(scipy.sparse.csr_matrix(X), sample_weight=w) == pytest.approx(
        scale_lengthscale(repeated), rel=1e-9
    )
    with pytest.raises(ValueError, match="X has no entries"):
        scale_lengthscale(np.zeros((0, 3)))
    with pytest.raises(ValueError, match="the variance of X is not finite"):
        scale_lengthscale(np.array([[1e300, -1e300]]))
    # gamma: l = 1 / sqrt(2 gamma), the same model as that lengthscale
    a = RandomFeatures("gaussian", gamma=2.0, random_state=0).fit(X)
    b = RandomFeatures("gaussian", lengthscale=0.5, random_state=0).fit(X)
    assert a.lengthscale_ == 0.5
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    with pytest.raises(
        ValueError, match=r"gamma and lengthscale are exclusive, got gamma=2.0 and lengthscale=0.5"
    ):
        RandomFeatures("gaussian", gamma=2.0, lengthscale=0.5).fit(X)


def _phi(rf, X, odd_factor=1.0):
    """The "sincos" feature map with an odd column, from the fitted attributes (numpy formula)."""
    A, B = X @ rf.W_plus_.T, X @ rf.W_minus_.T
    odd = rf.scale_odd_ * odd_factor * np.cos(X @ rf.W_odd_.T + rf.offset_odd_)
    return np.hstack(
        [rf.scale_plus_ * np.cos(A), rf.scale_plus_ * np.sin(A), rf.scale_minus_ * np.cos(B)]
        + [rf.scale_minus_ * np.sin(B), odd]
    )


def _estimates(rf, xs, ys, reps):
    """k^(x_j, y_j) over ``reps`` refits (seeds 0..reps-1): correct, and the negative control."""
    good, bad = np.empty((reps, len(xs))), np.empty((reps, len(xs)))
    for r in range(reps):
        rf.set_params(random_state=r).fit()
        J = rf.signature_.astype(float)
        good[r] = np.sum(_phi(rf, xs) * J * _phi(rf, ys), axis=1)
        # negative control: the odd column scaled sqrt(m / s) like a sincos pair (no sqrt(2))
        bad[r] = np.sum(_phi(rf, xs, 2**-0.5) * J * _phi(rf, ys, 2**-0.5), axis=1)
    return good, bad


def test_odd_width_is_unbiased_and_the_negative_control_is_caught():
    d = 3
    k = kernels.delta_gaussian(1.0, 5.0)
    rng = np.random.default_rng(7)
    xs, ys = rng.normal(size=(3, d)), rng.normal(size=(3, d)) * np.array([[0.1], [0.25], [0.4]])
    xs = xs * np.array([[0.1], [0.25], [0.4]])
    exact = k(np.linalg.norm(xs - ys, axis=1))
    rf = RandomFeatures(k, dim=d, n_components=5, lengthscale=1.0)  # 3 frequencies: 2 (+, one odd), 1 (-)
    rf.fit()
    assert rf.signature_.tolist() == [1, 1, -1, -1, 1] and rf.n_plus_ == 2 and rf.n_minus_ == 1
    np.testing.assert_allclose(rf.transform(xs), _phi(rf, xs), rtol=0, atol=1e-14)  # transform = formula
    reps = 2000
    good, bad = _estimates(rf, xs, ys, reps)

    def z_scores(est):
        se = est.std(axis=0, ddof=1) / np.sqrt(reps)
        return np.abs(est.mean(axis=0) - exact) / se

    assert np.all(z_scores(good) < 5), z_scores(good)
    # the control's mean is k - k+(z) / 4 (k+ the kernel of mu+): a bias of ~0.2 against SE ~ 0.02
    assert np.all(z_scores(bad) > 5), z_scores(bad)


def test_sparse_input_equals_dense():
    sk_mod = pytest.importorskip("spectralkit.sklearn")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 5)) * (rng.uniform(size=(60, 5)) < 0.3)
    Xs = scipy.sparse.csr_matrix(X)
    for fmap in ("sincos", "cos"):
        rf = RandomFeatures("delta_gaussian", n_components=21, feature_map=fmap, random_state=0).fit(Xs)
        np.testing.assert_allclose(rf.transform(Xs), rf.transform(X), rtol=0, atol=1e-12)
        assert rf.transform(Xs.astype(np.float32)).dtype == np.float32
    y = X[:, 0] + X[:, 1] ** 2
    dense = sk_mod.KreinRidgeRegressor("delta_gaussian", n_components=31, random_state=0).fit(X, y)
    sparse = sk_mod.KreinRidgeRegressor("delta_gaussian", n_components=31, random_state=0).fit(Xs, y)
    np.testing.assert_allclose(sparse.predict(Xs), dense.predict(X), rtol=1e-9, atol=1e-12)
    with pytest.raises(ValueError, match="out is not supported for a sparse X"):
        rf.transform(Xs, out=np.empty((60, 21)))
    coo = scipy.sparse.coo_matrix(X)  # other sparse formats are converted to CSR
    np.testing.assert_allclose(sparse.predict(coo), dense.predict(X), rtol=1e-9, atol=1e-12)


def test_sample_weight_and_class_weight_are_scikit_learns():
    sk_mod = pytest.importorskip("spectralkit.sklearn")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0.4).astype(int)  # unbalanced classes
    w = rng.integers(0, 3, 40).astype(float)
    rep = np.repeat(np.arange(40), w.astype(int))
    kw = dict(n_components=24, random_state=0, alpha=0.5)
    for cls, target in ((sk_mod.KreinRidgeRegressor, X[:, 1]), (sk_mod.KreinRidgeClassifier, y)):
        weighted = cls(**kw).fit(X, target, sample_weight=w)
        repeated = cls(**kw).fit(X[rep], target[rep])
        assert weighted.lengthscale_ == pytest.approx(repeated.lengthscale_, rel=1e-9)
        np.testing.assert_allclose(weighted.coef_, repeated.coef_, rtol=1e-6, atol=1e-9)
        unweighted = cls(**kw).fit(X, target)
        assert not np.allclose(weighted.coef_, unweighted.coef_)  # the weights do something
    from sklearn.utils.class_weight import compute_sample_weight

    balanced = sk_mod.KreinRidgeClassifier(class_weight="balanced", **kw).fit(X, y)
    explicit = sk_mod.KreinRidgeClassifier(**kw).fit(X, y, sample_weight=compute_sample_weight("balanced", y))
    np.testing.assert_allclose(balanced.coef_, explicit.coef_, rtol=1e-10)
    both = sk_mod.KreinRidgeClassifier(class_weight={0: 1.0, 1: 3.0}, **kw).fit(X, y, sample_weight=w)
    manual = sk_mod.KreinRidgeClassifier(**kw).fit(X, y, sample_weight=w * np.where(y == 1, 3.0, 1.0))
    np.testing.assert_allclose(both.coef_, manual.coef_, rtol=1e-10)
    with pytest.raises(ValueError, match="Negative values in data passed to `sample_weight`"):
        sk_mod.KreinRidgeRegressor().fit(X, X[:, 0], sample_weight=-np.ones(40))
    with pytest.raises(ValueError, match=r"sample_weight.shape == \(3,\), expected \(40,\)"):
        sk_mod.KreinRidgeRegressor().fit(X, X[:, 0], sample_weight=np.ones(3))


def test_set_output_pandas_in_pipelines():
    pd = pytest.importorskip("pandas")
    sk_mod = pytest.importorskip("spectralkit.sklearn")
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from spectralkit.learn import HyperKernelRidge

    X = _X(n=40, d=3)
    y = (X[:, 0] > 0).astype(int)
    pipe = make_pipeline(StandardScaler(), sk_mod.SpectralFeatures(n_components=9, random_state=0))
    out = pipe.set_output(transform="pandas").fit_transform(X)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == [f"spectralfeatures{i}" for i in range(9)]
    learner = make_pipeline(StandardScaler(), HyperKernelRidge()).set_output(transform="pandas").fit(X, y)
    out = learner.transform(X[:5])
    assert isinstance(out, pd.DataFrame) and out.shape == (5, 40) and out.columns[0] == "hyperkernelridge0"


def test_fitted_state_interface():
    X = _X(n=30, d=3)
    rf = RandomFeatures("delta_gaussian", n_components=11, random_state=0).fit(X)
    slim = rf.portable()
    assert "measure_" not in vars(slim) and "W_plus_raw_" not in vars(slim)
    np.testing.assert_array_equal(slim.transform(X), rf.transform(X))
    again = pickle.loads(pickle.dumps(slim))
    np.testing.assert_array_equal(again.transform(X), rf.transform(X))
    rebuilt = RandomFeatures.from_fitted_state(rf.fitted_state())
    np.testing.assert_array_equal(rebuilt.transform(X), rf.transform(X))
    with pytest.raises(ValueError, match="state is not a fitted_state\\(\\) of RandomFeatures: W_plus_"):
        RandomFeatures.from_fitted_state({})
    with pytest.raises(RuntimeError, match="not fitted yet"):
        RandomFeatures().fitted_state()
    import spectralkit.dask as dask_mod

    source = inspect.getsource(dask_mod)
    assert "__new__" not in source and "vars(slim)" not in source
    assert "from .features import" in source and "_changed_params" not in source


def test_literal_aliases_and_constructors_agree():
    assert typing.get_args(MethodName) == METHODS
    assert typing.get_args(SplitName) == SPLITS
    assert typing.get_args(FeatureMapName) == FEATURE_MAPS
    sk_mod = pytest.importorskip("spectralkit.sklearn")
    from spectralkit.dask import DaskSpectralFeatures

    shared = None
    for cls in (RandomFeatures, sk_mod.SpectralFeatures, sk_mod.KreinRidgeRegressor, DaskSpectralFeatures):
        params = inspect.signature(cls).parameters
        assert all(p.kind is p.KEYWORD_ONLY for n, p in params.items() if n != "kernel"), cls
        defaults = {n: p.default for n, p in params.items() if n in ("kernel", "n_components", "lengthscale")}
        assert shared is None or defaults == shared, cls
        shared = defaults
    assert shared == {"kernel": "gaussian", "n_components": 256, "lengthscale": "scale"}


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (lambda: _validation.check_dim(0), ValueError, r"dim must be an integer in \[1, 4096\], got 0"),
        (lambda: _validation.check_dim(5000), ValueError, r"dim must be an integer in \[1, 4096\], got 5000"),
        (lambda: _validation.check_dim(2.0), TypeError, r"dim must be an integer in \[1, 4096\], got 2.0"),
        (lambda: _validation.check_dim(True), ValueError, r"dim must be an integer in \[1, 4096\], got True"),
        (lambda: _validation.check_dim("a", allow_none=True), TypeError, "dim must be None or an integer in"),
        (lambda: _validation.check_count("n", -1), ValueError, "n must be a non-negative integer, got -1"),
        (lambda: _validation.check_rng(3), TypeError, "rng must be a numpy.random.Generator"),
        (
            lambda: _validation.check_random_state(-1),
            ValueError,
            "random_state must be None, a non-negative int",
        ),
        (lambda: _validation.check_positive("x", float("nan")), ValueError, "x must be a finite number > 0"),
        (lambda: _validation.check_choice("m", "z", ("a",)), ValueError, "m must be one of 'a', got 'z'"),
    ],
)
def test_validators_name_the_argument_the_value_and_the_rule(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_one_validator_per_concept():
    # the copies the review counted are gone: dim, counts and rng are checked in _validation only
    root = pathlib.Path(_validation.__file__).parent
    for path in root.rglob("*.py"):
        if path.name == "_validation.py":
            continue
        text = path.read_text()
        for name in ("def _check_rng", "def _check_count", "def _check_dim"):
            assert name not in text, (path, name)
    assert not (root / "samplers.py").exists() and not (root / "frequencies.py").exists()
    assert _validation.check_dim(np.int64(3)) == 3 and _validation.check_dim(None, allow_none=True) is None
