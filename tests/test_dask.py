"""Dask integration: lazy map_blocks featurization equals the in-memory transform."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("dask.distributed")

from spectralkit.dask import DaskSpectralFeatures, fit_dask, transform_dask  # noqa: E402
from spectralkit.features import RandomFeatures  # noqa: E402


@pytest.fixture(scope="module")
def client():
    # in-process cluster (threads): fast to start, exercises the distributed scheduler
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster, timeout="20s") as c:
        yield c


def _X(n=1000, d=5, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(size=(n, d)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lazy_transform_equals_in_memory(client, dtype):
    X = _X(dtype=dtype)
    dX = da.from_array(X, chunks=(137, 2))  # ragged rows, split columns: rechunked to one block
    rf = RandomFeatures("delta_gaussian", n_components=48, random_state=0)
    Phi = transform_dask(rf, dX)  # fits from dX.shape alone
    assert rf.n_features_in_ == 5
    assert Phi.shape == (1000, 48) and Phi.dtype == dtype
    assert Phi.chunks == (dX.chunks[0], (48,))
    out = client.compute(Phi).result()
    np.testing.assert_array_equal(out, rf.transform(X))


def test_fit_does_not_read_the_data():
    # a dask array whose blocks raise when computed: fit must not touch them
    def boom(block):
        raise AssertionError("data was read")

    dX = da.zeros((100, 3), chunks=50).map_blocks(boom, dtype=float)
    dsf = DaskSpectralFeatures("gaussian:lengthscale=2", n_components=16, random_state=1).fit(dX)
    assert dsf.n_features_in_ == 3 and dsf.signature_.shape == (16,)
    Phi = dsf.transform(dX)  # still lazy
    assert Phi.shape == (100, 16)
    with pytest.raises(AssertionError, match="data was read"):
        Phi.compute(scheduler="synchronous")


def test_dask_spectral_features_matches_random_features(client):
    X = _X(n=300, d=4, seed=2)
    dX = da.from_array(X, chunks=100)
    dsf = DaskSpectralFeatures("delta_gaussian:sigma1=1,sigma2=10", n_components=32, random_state=7)
    Phi = dsf.fit_transform(dX).compute()
    ref = RandomFeatures("delta_gaussian:sigma1=1,sigma2=10", dim=4, n_components=32, random_state=7).fit()
    np.testing.assert_array_equal(Phi, ref.transform(X))
    assert dsf.mass_plus_ == pytest.approx(ref.mass_plus_)


def test_errors():
    rf = RandomFeatures("gaussian", dim=3, n_components=8, random_state=0).fit()
    with pytest.raises(TypeError, match="X must be a dask.array.Array, got ndarray"):
        transform_dask(rf, np.zeros((4, 3)))
    with pytest.raises(ValueError, match="X has 4 columns but the features were fitted for dim=3"):
        transform_dask(rf, da.zeros((4, 4)))
    with pytest.raises(ValueError, match=r"X must be 2-D .* shape \(4,\)"):
        transform_dask(rf, da.zeros(4))
    with pytest.raises(ValueError, match="dtype must be float32 or float64"):
        transform_dask(rf, da.zeros((4, 3)), dtype=np.int32)
    with pytest.raises(ValueError, match="configured for dim=3 but X has 2 columns"):
        fit_dask(RandomFeatures("gaussian", dim=3), da.zeros((4, 2)))
    with pytest.raises(RuntimeError, match="not fitted"):
        DaskSpectralFeatures().transform(da.zeros((4, 3)))


def test_task_payload_pickles_and_sklearn_wrapper_fits_from_shape():
    # what a remote worker receives: the slim feature map, through plain pickle
    import pickle

    from spectralkit.dask import _portable

    X = _X(n=50, d=3, seed=4)
    rf = RandomFeatures("delta_gaussian", dim=3, n_components=16, random_state=3).fit()
    shipped = pickle.loads(pickle.dumps(_portable(rf)))
    assert not hasattr(shipped, "measure_")
    np.testing.assert_array_equal(shipped.transform(X), rf.transform(X))
    sklearn_mod = pytest.importorskip("spectralkit.sklearn")
    # a numeric lengthscale: the "scale" rule would need the values, fit_dask reads only the shape
    sf = sklearn_mod.SpectralFeatures("delta_gaussian", n_components=16, lengthscale=1.0, random_state=3)
    Phi = transform_dask(sf, da.from_array(X, chunks=20)).compute(scheduler="synchronous")
    assert sf.n_features_in_ == 3
    np.testing.assert_array_equal(Phi, sf.transform(X))


# ------------------------------------------------------------------------------------------
# Krein ridge on dask arrays: map-reduce of the s x s sums
# ------------------------------------------------------------------------------------------

def test_gram_sums_dask_equal_the_in_memory_streaming_sums(client):
    from spectralkit import _compiled
    from spectralkit.dask import gram_sums_dask

    X = _X(n=1100, d=4, seed=6) + 3.0
    Y = np.random.default_rng(6).standard_normal((1100, 2))
    rf = RandomFeatures("delta_gaussian", dim=4, n_components=40, random_state=2).fit()
    ref = _compiled.feature_gram_sums(rf, X, Y, center=True)
    # ragged row blocks, a tree of fan-in 2 (three levels), numpy targets
    sums = gram_sums_dask(rf, da.from_array(X, chunks=(150, 2)), Y, split_every=2)
    assert sums.n == 1100
    np.testing.assert_allclose(sums.gram_matrix(), ref.gram_matrix(), rtol=1e-11, atol=1e-9)
    np.testing.assert_allclose(sums.cross, ref.cross, rtol=1e-11, atol=1e-9)
    np.testing.assert_allclose(sums.mean, ref.mean, rtol=1e-13)
    with pytest.raises(ValueError, match="split_every must be an integer >= 2, got 1"):
        gram_sums_dask(rf, da.from_array(X), Y, split_every=1)
    with pytest.raises(ValueError, match="features must be fitted first"):
        gram_sums_dask(RandomFeatures("gaussian"), da.from_array(X), Y)
    with pytest.raises(ValueError, match=r"Y must have shape \(n_samples, n_targets\) with n_samples = 1100"):
        gram_sums_dask(rf, da.from_array(X), Y[:5])


def test_krein_ridge_fits_and_predicts_dask_arrays(client):
    sk = pytest.importorskip("spectralkit.sklearn")
    rng = np.random.default_rng(8)
    X = rng.uniform(size=(900, 3))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2
    kw = dict(kernel="delta_gaussian:sigma1=0.5,sigma2=2", n_components=64, alpha=0.1, random_state=3)
    ref = sk.KreinRidgeRegressor(**kw).fit(X, y)
    dX = da.from_array(X, chunks=(200, 3))
    reg = sk.KreinRidgeRegressor(**kw).fit(dX, da.from_array(y, chunks=300))  # y chunked differently
    assert reg.n_features_in_ == 3
    np.testing.assert_allclose(reg.coef_, ref.coef_, rtol=1e-8 * ref.condition_number_, atol=0)
    pred = reg.predict(dX)
    assert isinstance(pred, da.Array) and pred.shape == (900,)
    np.testing.assert_allclose(pred.compute(), ref.predict(X), rtol=0, atol=1e-9)
    # classifier: labels from a dask array (3 classes, strings)
    labels = np.array(["a", "b", "c"])[(X[:, 0] * 3).astype(int)]
    cref = sk.KreinRidgeClassifier(**kw).fit(X, labels)
    clf = sk.KreinRidgeClassifier(**kw).fit(dX, da.from_array(labels, chunks=250))
    assert list(clf.classes_) == ["a", "b", "c"]
    np.testing.assert_allclose(clf.coef_, cref.coef_, rtol=1e-8 * cref.condition_number_, atol=0)
    np.testing.assert_array_equal(clf.predict(dX).compute(), cref.predict(X))
    with pytest.raises(ValueError, match="X and y have different numbers of rows: 900 and 10"):
        sk.KreinRidgeRegressor(**kw).fit(dX, y[:10])
