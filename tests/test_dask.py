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
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster, timeout="20s") as c,
    ):
        yield c


def _X(n=1000, d=5, seed=0, dtype=np.float64):
    return np.random.default_rng(seed).uniform(size=(n, d)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lazy_transform_equals_in_memory(client, dtype):
    X = _X(dtype=dtype)
    dX = da.from_array(X, chunks=(137, 2))  # ragged rows, split columns: rechunked to one block
    rf = RandomFeatures("delta_gaussian", n_components=48, random_state=0)
    Phi = transform_dask(rf, dX)  # fits for dX.shape[1], lengthscale="scale" from one reduction
    assert rf.n_features_in_ == 5
    assert Phi.shape == (1000, 48) and Phi.dtype == dtype
    assert Phi.chunks == (dX.chunks[0], (48,))
    out = client.compute(Phi).result()
    np.testing.assert_array_equal(out, rf.transform(X))


def test_fit_reads_the_data_only_for_the_scale_rule():
    # a dask array whose blocks raise when computed: with a numeric lengthscale (or gamma) fit
    # must not touch them; the default lengthscale="scale" reads them (Var(X), one reduction)
    def boom(block):
        raise AssertionError("data was read")

    dX = da.zeros((100, 3), chunks=50).map_blocks(boom, dtype=float)
    with pytest.raises(AssertionError, match="data was read"):
        DaskSpectralFeatures("gaussian", n_components=16).fit(dX)
    with pytest.raises(AssertionError, match="data was read"):
        transform_dask(RandomFeatures("gaussian", n_components=16), dX)
    assert DaskSpectralFeatures(gamma=0.5, n_components=16).fit(dX).lengthscale_ == 1.0
    dsf = DaskSpectralFeatures("gaussian:lengthscale=2", n_components=16, random_state=1, lengthscale=1.0)
    dsf.fit(dX)
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
    ref = RandomFeatures("delta_gaussian:sigma1=1,sigma2=10", n_components=32, random_state=7).fit(X)
    assert dsf.lengthscale_ == ref.lengthscale_ != 1.0  # the same "scale" rule
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
    # the default lengthscale="scale" is computed from the dask array (one reduction), as in memory
    lazy = sklearn_mod.SpectralFeatures(n_components=16, random_state=3)
    transform_dask(lazy, da.from_array(X, chunks=20))
    eager = sklearn_mod.SpectralFeatures(n_components=16, random_state=3).fit(X)
    assert lazy.lengthscale_ == pytest.approx(eager.lengthscale_, rel=1e-12)


# ------------------------------------------------------------------------------------------
# Krein ridge on dask arrays: map-reduce of the s x s sums
# ------------------------------------------------------------------------------------------


def test_gram_sums_dask_equal_the_in_memory_streaming_sums(client):
    from spectralkit import _krein
    from spectralkit.dask import gram_sums_dask

    X = _X(n=1100, d=4, seed=6) + 3.0
    Y = np.random.default_rng(6).standard_normal((1100, 2))
    rf = RandomFeatures("delta_gaussian", dim=4, n_components=40, random_state=2).fit()
    ref = _krein.feature_gram_sums(rf, X, Y, center=True)
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


# ------------------------------------------------------------------------------------------
# DaskSpectralFeatures as an estimator: parameters, clone, repr, errors, DataFrames, pickling
# ------------------------------------------------------------------------------------------


def test_params_clone_repr_and_refit_after_set_params():
    M = np.array([[2.0, 0.5], [0.5, 1.0]])
    dsf = DaskSpectralFeatures("gaussian", n_components=16, lengthscale=2.0, shape_matrix=M, random_state=0)
    params = dsf.get_params()
    assert tuple(params) == (
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
        "kernel_params",
        "numba_threads",
    )
    assert params["numba_threads"] == 1  # one numba thread per task by default
    assert repr(dsf) == (
        "DaskSpectralFeatures(n_components=16, random_state=0, lengthscale=2.0, shape_matrix=array(...))"
    )
    assert repr(DaskSpectralFeatures()) == "DaskSpectralFeatures()"
    with pytest.raises(ValueError, match="invalid parameter 'sigma' for DaskSpectralFeatures; valid: "):
        dsf.set_params(sigma=1.0)
    base = pytest.importorskip("sklearn.base")
    twin = base.clone(dsf)
    assert twin is not dsf and repr(twin) == repr(dsf) and not hasattr(twin, "features_")
    assert np.array_equal(twin.shape_matrix, M)
    dX = da.from_array(_X(n=40, d=2), chunks=20)
    dsf.fit(dX)
    ref = dsf.transform(dX).compute(scheduler="synchronous")
    dsf.set_params(lengthscale=3.0)
    changed = r"DaskSpectralFeatures: parameters changed since fit \(lengthscale\); call fit again"
    with pytest.raises(RuntimeError, match=changed):
        dsf.transform(dX)
    dsf.set_params(lengthscale=2.0)
    np.testing.assert_array_equal(dsf.transform(dX).compute(scheduler="synchronous"), ref)


def test_not_fitted_error_is_sklearns():
    exceptions = pytest.importorskip("sklearn.exceptions")
    with pytest.raises(exceptions.NotFittedError, match="DaskSpectralFeatures instance is not fitted yet"):
        DaskSpectralFeatures().transform(da.zeros((4, 3)))


def test_shared_parameter_table_lengthscale_and_shape_matrix():
    M = np.array([[1.5, 0.2, 0.0], [0.2, 0.7, 0.1], [0.0, 0.1, 1.0]])
    X = _X(n=60, d=3, seed=9)
    kw = dict(n_components=32, random_state=5, lengthscale=0.8, shape_matrix=M)
    dsf = DaskSpectralFeatures("delta_gaussian", **kw).fit(da.from_array(X, chunks=25))
    ref = RandomFeatures("delta_gaussian", dim=3, **kw).fit()
    np.testing.assert_array_equal(
        dsf.transform(da.from_array(X, chunks=25)).compute(scheduler="synchronous"), ref.transform(X)
    )
    # the same validators (and messages) as RandomFeatures
    for bad, match in (
        (dict(shape_matrix=np.eye(2)), "shape_matrix must be a 3 x 3 matrix"),
        (dict(lengthscale=0.0), "lengthscale must be a finite number > 0"),
        (dict(n_components=1, kernel="delta_gaussian"), "n_components is too small for an indefinite"),
        (dict(gamma=1.0, lengthscale=1.0), "gamma and lengthscale are exclusive"),
        (dict(method="sorf"), "method must be one of 'rff', 'orf'"),
        (dict(numba_threads=0), "numba_threads must be None or an integer >= 1, got 0"),
    ):
        with pytest.raises(ValueError, match=match):
            DaskSpectralFeatures(**bad).fit(da.zeros((4, 3)))


def test_each_task_runs_with_the_configured_numba_threads(client, monkeypatch):
    import numba

    seen = []
    original = RandomFeatures.transform

    def recording(self, X, out=None):
        seen.append(numba.get_num_threads())
        return original(self, X, out)

    monkeypatch.setattr(RandomFeatures, "transform", recording)
    X = da.from_array(_X(n=200, d=3), chunks=50)
    DaskSpectralFeatures("gaussian", n_components=8, random_state=0).fit_transform(X).compute()
    assert seen == [1] * 4
    seen.clear()
    DaskSpectralFeatures("gaussian", n_components=8, numba_threads=None).fit_transform(X).compute()
    # numba's thread count is per thread: the tasks' threads keep their default, whatever an earlier
    # test set in this (main) thread
    assert len(seen) == 4 and set(seen) == {numba.config.NUMBA_NUM_THREADS}


def test_dask_dataframes_are_accepted_and_fit_reads_no_data():
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X = _X(n=90, d=3, seed=11)
    frames = [
        pd.DataFrame(X[i : i + 30], columns=["a", "b", "c"], index=range(i, i + 30)) for i in (0, 30, 60)
    ]
    ddf = dd.from_pandas(pd.concat(frames), npartitions=3)
    dsf = DaskSpectralFeatures("delta_gaussian", n_components=16, random_state=2).fit(ddf)
    Phi = dsf.transform(ddf)
    assert Phi.shape == (90, 16) and Phi.chunks[0] == (30, 30, 30)
    ref = RandomFeatures("delta_gaussian", n_components=16, random_state=2).fit(X)
    np.testing.assert_array_equal(Phi.compute(scheduler="synchronous"), ref.transform(X))

    def boom(i):
        raise RuntimeError("data was read")

    meta = pd.DataFrame({"a": np.zeros(0), "b": np.zeros(0)})
    untouchable = dd.from_map(boom, [0, 1], meta=meta)
    assert (
        DaskSpectralFeatures("gaussian", n_components=8, lengthscale=1.0).fit(untouchable).n_features_in_ == 2
    )
    with pytest.raises(RuntimeError, match="data was read"):  # the default "scale" reads it
        DaskSpectralFeatures("gaussian", n_components=8).fit(untouchable)
    text = pd.DataFrame({"a": [1.0], "s": ["x"]})
    with pytest.raises(ValueError, match=r"X must have real numeric columns, got 's' \((object|str)"):
        DaskSpectralFeatures("gaussian", n_components=8).fit(dd.from_pandas(text, npartitions=1))


def test_worker_processes_receive_the_pickled_feature_map():
    # the pickling path of a real cluster: tasks shipped to a separate worker process
    X = _X(n=200, d=3, seed=13)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster, timeout="60s") as c,
    ):
        dsf = DaskSpectralFeatures("delta_gaussian", n_components=16, random_state=4).fit(
            da.from_array(X, chunks=100)
        )
        out = c.compute(dsf.transform(da.from_array(X, chunks=100))).result()
    ref = RandomFeatures("delta_gaussian", n_components=16, random_state=4).fit(X)
    np.testing.assert_array_equal(out, ref.transform(X))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_row_chunks_equal_in_memory_bit_for_bit_when_aligned_and_within_the_stated_bound_otherwise(dtype):
    """Bit for bit when every row chunk but the last is a multiple of 512 rows (the GEMM blocks of the
    in-memory path); otherwise within the rounding bound of the phases: |delta| <= s d eps |W| |x|."""
    d = 64
    X = _X(n=1100, d=d, dtype=dtype)
    rf = RandomFeatures("delta_gaussian", dim=d, n_components=256, random_state=0).fit()
    ref = rf.transform(X)
    for rows in (512, 1024):
        out = transform_dask(rf, da.from_array(X, chunks=(rows, d))).compute(scheduler="synchronous")
        np.testing.assert_array_equal(out, ref)
    eps = float(np.finfo(dtype).eps)
    A = [np.abs(X.astype(np.float64)) @ np.abs(W).T for W in (rf.W_plus_, rf.W_minus_)]
    s = (rf.scale_plus_, rf.scale_minus_)
    bound = np.concatenate(
        [s[0] * A[0], s[0] * A[0], s[1] * A[1], s[1] * A[1]], axis=1
    ) * d * eps + eps * max(s)
    worst = 0.0
    for rows in (7, 333):
        out = transform_dask(rf, da.from_array(X, chunks=(rows, d))).compute(scheduler="synchronous")
        diff = np.abs(out.astype(np.float64) - ref.astype(np.float64))
        assert np.all(diff <= bound), float(np.max(diff / bound))
        worst = max(worst, float(diff.max()))
    assert worst > 0  # misaligned chunks do differ in the last bits: the bound is what holds


def test_block_errors_name_the_row_of_the_whole_array_and_long_doubles_beyond_float64():
    rf = RandomFeatures("gaussian", dim=3, n_components=8, random_state=0).fit()
    X = _X(n=8000, d=3)
    X[5000, 1] = np.nan
    with pytest.raises(
        ValueError, match=r"X contains NaN or infinite values \(first at row 5000, column 1\)"
    ):
        transform_dask(rf, da.from_array(X, chunks=(1000, 3))).compute(scheduler="synchronous")
    L = np.ones((40, 3), dtype=np.longdouble)
    if np.finfo(np.longdouble).max <= np.finfo(np.float64).max:
        pytest.skip("long double is float64 on this platform")
    L[33, 2] = np.longdouble("1e400")
    with pytest.raises(
        ValueError, match=r"X has values beyond the float64 range \(first at row 33, column 2"
    ):
        transform_dask(rf, da.from_array(L, chunks=(16, 3))).compute(scheduler="synchronous")
