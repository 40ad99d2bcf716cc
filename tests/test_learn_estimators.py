"""HyperKernelRidge / HyperKernelSVR: scikit-learn conventions, solvers against the paper's formulas, dask."""

import numpy as np
import pytest

pytest.importorskip("sklearn")

from sklearn.base import clone
from sklearn.pipeline import make_pipeline
from sklearn.svm import SVC, SVR, LinearSVR
from sklearn.utils.estimator_checks import parametrize_with_checks

import spectralkit.learn._pairs as pairs_mod
from spectralkit.learn import (
    HyperKernelRidge,
    HyperKernelSVR,
    LearnedKernel,
    LearnedRadialKernel,
    gaussian_hyperkernel,
    ideal_kernel,
    wishart_hyperkernel,
)
from spectralkit.learn._estimators import ALIGNMENT_GRID, SCALE_GRIDS
from spectralkit.learn._pairs import svr_dcd


# Every check of scikit-learn's suite applies and passes (check_array_api_input is skipped by
# scikit-learn itself without SCIPY_ARRAY_API). These are transformers with a required y: the
# checks fit on class labels (the ideal kernel) and compare transform outputs.
@parametrize_with_checks(
    [
        HyperKernelRidge(random_state=0),
        HyperKernelSVR(random_state=0),
        HyperKernelRidge("wishart", random_state=0),
        HyperKernelRidge("radial", random_state=0),
        HyperKernelSVR("radial", random_state=0),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _data(n=30, d=3, seed=0, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = rng.integers(0, classes, n)
    return X, y


# ---------------------------------------------------------------------------------------------
# the solvers against the paper's formulas on all m^2 ordered pairs
# ---------------------------------------------------------------------------------------------
def _ordered_pairs_system(kind, X, y, params):
    m = X.shape[0]
    I, J = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
    I, J = I.ravel(), J.ravel()  # vec over ordered pairs (i, j)
    if kind == "gaussian":
        K = gaussian_hyperkernel(
            X[I][:, None],
            X[J][:, None],
            X[I][None],
            X[J][None],
            params["sigma2"],
            params["sigma2_h"],
            normalize=True,
        )
    else:
        K = wishart_hyperkernel(
            X[I][:, None],
            X[J][:, None],
            X[I][None],
            X[J][None],
            params["scale"],
            params["dof"],
            normalize=True,
        )
    return I, J, K, ideal_kernel(y)[I, J]


@pytest.mark.parametrize("kind", ["gaussian", "wishart"])
def test_exact_ridge_equals_the_papers_formula_on_ordered_pairs(kind):
    X, y = _data(n=7)
    est = HyperKernelRidge(kind, alpha=1e-2, solver="exact").fit(X, y)
    params = dict(est.kernel_.params)
    Xc = X - X.mean(0)
    I, J, K, Y = _ordered_pairs_system(kind, Xc, y, params)
    m = X.shape[0]
    beta = np.linalg.solve(K + 1e-2 * m * m * np.eye(m * m), Y)  # vec(beta) = (K + lambda m^2 I)^-1 vec(Y)
    Xt = np.random.default_rng(9).normal(size=(5, 3))
    Xtc = Xt - X.mean(0)
    a, b = np.meshgrid(np.arange(5), np.arange(m), indexing="ij")
    if kind == "gaussian":
        H = gaussian_hyperkernel(
            Xtc[a.ravel()][:, None],
            Xc[b.ravel()][:, None],
            Xc[I][None],
            Xc[J][None],
            params["sigma2"],
            params["sigma2_h"],
            normalize=True,
        )
    else:
        H = wishart_hyperkernel(
            Xtc[a.ravel()][:, None],
            Xc[b.ravel()][:, None],
            Xc[I][None],
            Xc[J][None],
            params["scale"],
            params["dof"],
            normalize=True,
        )
    ref = (H @ beta).reshape(5, m)
    np.testing.assert_allclose(est.transform(Xt), ref, rtol=1e-9, atol=1e-11)


def test_exact_svr_equals_libsvm_on_ordered_pairs():
    X, y = _data(n=6, classes=2)
    est = HyperKernelSVR(C=50.0, epsilon=0.1, solver="exact").fit(X, y)
    Xc = X - X.mean(0)
    _I, _J, K, Y = _ordered_pairs_system("gaussian", Xc, y, dict(est.kernel_.params))
    m = X.shape[0]
    # 1/2 ||k||^2 + C / m^2 sum over ordered pairs: libsvm with C / m^2 per pair
    ref = SVR(kernel="precomputed", C=50.0 / m**2, epsilon=0.1, tol=1e-10).fit(K, Y)
    beta = np.zeros(m * m)
    beta[ref.support_] = ref.dual_coef_[0]
    ours = est.learned_kernel_(X)
    np.testing.assert_allclose(ours.ravel(), K @ beta, rtol=1e-5, atol=1e-6)
    assert est.intercept_ == pytest.approx(ref.intercept_[0], abs=1e-5)


@pytest.mark.parametrize("kind", ["gaussian", "wishart"])
def test_nystroem_with_all_points_as_landmarks_equals_the_exact_solve(kind, monkeypatch):
    X, y = _data(n=30)
    Xt = np.random.default_rng(1).normal(size=(8, 3))
    for alpha in (1e-2, 1e-4):
        exact = HyperKernelRidge(kind, alpha=alpha, solver="exact").fit(X, y)
        # default: the landmark Gram's pseudo-inverse drops eigenvalues below 1e-10 of the largest
        ny = HyperKernelRidge(kind, alpha=alpha, solver="nystroem", n_landmarks=30, random_state=0).fit(X, y)
        G = exact.learned_kernel_(X)
        assert np.max(np.abs(ny.learned_kernel_(X) - G)) <= 1e-5 * np.max(np.abs(G))
        # without the cut the two solves are algebraically identical: rounding only
        monkeypatch.setattr(pairs_mod, "NYSTROEM_RCOND", 0.0)
        ny0 = HyperKernelRidge(kind, alpha=alpha, solver="nystroem", n_landmarks=30, random_state=0).fit(X, y)
        monkeypatch.undo()
        for A, B in (
            (exact.learned_kernel_(X), ny0.learned_kernel_(X)),
            (exact.transform(Xt), ny0.transform(Xt)),
        ):
            assert np.max(np.abs(A - B)) <= 1e-7 * np.max(np.abs(A))
    # negative control: fewer landmarks is an approximation, visibly different
    ny10 = HyperKernelRidge(kind, alpha=1e-4, solver="nystroem", n_landmarks=10, random_state=0).fit(X, y)
    assert np.max(np.abs(ny10.learned_kernel_(X) - exact.learned_kernel_(X))) > 1e-3 * np.max(np.abs(G))


def test_exact_solver_holds_one_or_two_pair_matrices():
    """The exact solve keeps its pair matrix in place: one copy (one alpha; plus the blocks it is built
    from), two (several alphas: the eigenvectors)."""
    import tracemalloc

    X, y = _data(n=45)
    unit = pairs_mod.n_pairs(45) ** 2 * 8  # bytes of one pair matrix
    est = HyperKernelRidge(alpha=1e-3, solver="exact")
    est.fit(X, y)  # warm (numba compilation, caches)
    prob = pairs_mod.PairProblem(
        "gaussian", X - X.mean(0), pairs_mod.LabelTarget(y), dict(est.kernel_.params), np.arange(45)
    )
    prob.ridge([1e-3])
    for run, limit in ((lambda: est.fit(X, y), 2.0), (lambda: prob.ridge([1e-3, 1e-2, 1e-1]), 2.5)):
        tracemalloc.start()
        try:
            run()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak <= limit * unit, f"{peak / unit:.2f} pair matrices"
    # negative control: the former out-of-place symmetrised product holds four
    tracemalloc.start()
    try:
        K = prob._kqq()
        S = np.sqrt(2.0) * K * np.sqrt(2.0)
        S = 0.5 * (S + S.T)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak > 2.5 * unit


def test_dual_coordinate_descent_solves_the_liblinear_svr_problem():
    rng = np.random.default_rng(0)
    Phi = rng.normal(size=(300, 6))
    y = Phi @ rng.normal(size=6) + 0.3 * rng.normal(size=300) + 0.5
    w = rng.integers(1, 3, 300).astype(float)
    P = np.hstack([Phi, np.ones((300, 1))])

    def objective(theta):
        return 0.5 * theta @ theta + 0.7 * np.sum(w * np.maximum(np.abs(y - P @ theta) - 0.1, 0))

    theta, beta = np.zeros(7), np.zeros(300)
    epochs = svr_dcd(P, y, 0.7 * w, 0.1, 100_000, 1e-9, 0, theta, beta)
    assert epochs < 100_000
    ref = LinearSVR(
        C=0.7,
        epsilon=0.1,
        loss="epsilon_insensitive",
        dual=True,
        tol=1e-12,
        max_iter=2_000_000,
        intercept_scaling=1,
    ).fit(Phi, y, sample_weight=w)
    ref_obj = objective(np.r_[ref.coef_, ref.intercept_])
    assert objective(theta) <= ref_obj * (1 + 1e-8)
    np.testing.assert_allclose(P.T @ beta, theta, atol=1e-10)  # theta = Phi^T beta is kept exactly
    assert np.all(np.abs(beta) <= 0.7 * w + 1e-15)


# ---------------------------------------------------------------------------------------------
# using the learned kernel
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["gaussian", "radial"])
def test_learned_kernel_as_precomputed_input_and_as_a_callable(kind):
    X, y = _data(n=60, classes=2, seed=3)
    Xt, _ = _data(n=20, classes=2, seed=4)
    est = HyperKernelRidge(
        kind, solver="auto" if kind == "radial" else "nystroem", n_landmarks=15, random_state=0
    ).fit(X, y)
    pre = SVC(kernel="precomputed", C=1.0).fit(est.learned_kernel_(X), y)
    p1 = pre.predict(est.learned_kernel_(Xt, X))
    call = SVC(kernel=est.learned_kernel_, C=1.0).fit(X, y)
    np.testing.assert_array_equal(call.predict(Xt), p1)
    pipe = make_pipeline(clone(est), SVC(kernel="precomputed", C=1.0)).fit(X, y)
    np.testing.assert_array_equal(pipe.predict(Xt), p1)
    np.testing.assert_allclose(est.transform(Xt), est.learned_kernel_(Xt, X), rtol=0, atol=0)
    assert isinstance(est.kernel_, LearnedRadialKernel if kind == "radial" else LearnedKernel)


def test_ideal_kernel_multiclass_and_string_labels():
    y = np.array(["a", "b", "a", "c"])
    Y = ideal_kernel(y)
    assert Y[0, 2] == 1 and Y[0, 1] == -0.5 and np.all(np.diag(Y) == 1)  # three classes: -1 / (3 - 1)
    assert ideal_kernel([0, 1, 1])[0, 1] == -1.0  # two classes: the paper's +-1
    # the simplex code: the ideal kernel of C classes is PSD of rank C - 1 (centred unit vectors)
    e = np.linalg.eigvalsh(ideal_kernel(np.arange(12) % 4))
    assert e.min() > -1e-12 and np.sum(e > 1e-9) == 3
    X, _ = _data(n=4)
    est = HyperKernelRidge(solver="exact").fit(X, y)
    np.testing.assert_array_equal(est.classes_, ["a", "b", "c"])
    by_codes = HyperKernelRidge(solver="exact").fit(X, [0, 1, 0, 2])
    np.testing.assert_allclose(est.learned_kernel_(X), by_codes.learned_kernel_(X))
    # the ideal kernel given as a matrix is the same problem
    by_matrix = HyperKernelRidge(solver="exact").fit(X, target_kernel=Y)
    np.testing.assert_allclose(by_matrix.learned_kernel_(X), est.learned_kernel_(X), rtol=1e-12, atol=1e-14)
    assert by_matrix.classes_ is None


def test_learning_from_labels_fits_the_ideal_kernel():
    X, _ = _data(n=40, classes=2, seed=5)
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    est = HyperKernelRidge(alpha=1e-6, solver="nystroem", n_landmarks=40, random_state=0).fit(X, y)
    G = est.learned_kernel_(X)
    assert np.mean(np.sign(G) == ideal_kernel(y)) > 0.85
    # labels without structure cannot be fitted by the smooth hyper-kernel (regularisation works)
    y_random = np.random.default_rng(0).integers(0, 2, 40)
    G_random = (
        HyperKernelRidge(alpha=1e-6, solver="nystroem", n_landmarks=40, random_state=0)
        .fit(X, y_random)
        .learned_kernel_(X)
    )
    assert np.mean(np.sign(G_random) == ideal_kernel(y_random)) < 0.6
    assert np.linalg.eigvalsh(G).min() < 0, "the learned kernel is indefinite"


# ---------------------------------------------------------------------------------------------
# divide-and-conquer, dask
# ---------------------------------------------------------------------------------------------
def test_default_partitions_scale_with_the_data():
    X, y = _data(n=1100, seed=3)
    est = HyperKernelRidge(n_landmarks=6, random_state=0).fit(X, y)
    assert est.solver_ == "nystroem" and est.n_partitions_ == 3 and len(est.kernel_.parts) == 3
    one = HyperKernelRidge(n_landmarks=6, n_partitions=1, random_state=0).fit(X[:300], y[:300])
    assert one.n_partitions_ == 1 and len(one.kernel_.parts) == 1
    small = HyperKernelRidge().fit(X[:40], y[:40])  # the exact solver: one part
    assert small.solver_ == "exact" and small.n_partitions_ == 1


def test_divide_and_conquer_averages_the_subset_kernels():
    X, y = _data(n=90, seed=6)
    est = HyperKernelRidge(n_partitions=3, n_landmarks=12, random_state=0).fit(X, y)
    assert est.backend_ == "serial" and len(est.kernel_.parts) == 3
    assert est.n_pairs_ == 3 * (30 * 31 // 2)
    # the average of three separately learned kernels (same subsets and landmarks)
    parts = [
        LearnedKernel("gaussian", est.kernel_.params, [(Z, qa, qb, 3 * c)], est.kernel_.offset)
        for Z, qa, qb, c in est.kernel_.parts
    ]
    G = est.learned_kernel_(X)
    # rounding: the terms' sums cancel to entries far below max |G|
    np.testing.assert_allclose(
        G, sum(p.gram(X) for p in parts) / 3, rtol=1e-12, atol=1e-12 * np.max(np.abs(G))
    )


def test_divide_and_conquer_runs_on_a_dask_cluster():
    distributed = pytest.importorskip("distributed")
    X, y = _data(n=80, seed=7)
    serial = HyperKernelSVR(n_partitions=4, n_landmarks=10, random_state=0).fit(X, y)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cl,
        distributed.Client(cl),
    ):
        on_dask = HyperKernelSVR(n_partitions=4, n_landmarks=10, random_state=0).fit(X, y)
    assert on_dask.backend_ == "dask"
    np.testing.assert_array_equal(on_dask.learned_kernel_(X), serial.learned_kernel_(X))
    assert on_dask.intercept_ == serial.intercept_


# ---------------------------------------------------------------------------------------------
# parameters, cv, reproducibility
# ---------------------------------------------------------------------------------------------
def test_cv_chooses_scale_and_alpha_on_held_out_pairs():
    X, y = _data(n=40, classes=2, seed=8)
    est = HyperKernelRidge(alpha=[1e-4, 1e-1], cv=3, n_landmarks=10, random_state=0).fit(X, y)
    res = est.cv_results_
    assert res["mse"].shape == (10,) and np.all(res["mse"] > 0)
    best = int(np.argmin(res["mse"]))
    assert res["rank"][best] == 1
    assert est.alpha_ == res["alpha"][best]
    assert est.sigma2_h_ == pytest.approx(res["scale_multiplier"][best] * est.sigma2_)


@pytest.mark.parametrize("kind", ["gaussian", "wishart"])
def test_cv_scale_grid_is_per_hyper_kernel(kind):
    # the Gaussian multiplier scales s_h^2 only (no degenerate limit): its grid reaches 1/64;
    # Wishart's scales s^2 itself and keeps the paper's {1/4, ..., 4}
    X, y = _data(n=30, classes=2, seed=8)
    est = HyperKernelRidge(kind, alpha=1e-3, cv=2, n_landmarks=8, random_state=0).fit(X, y)
    want = (1 / 64, 1 / 16, 0.25, 1.0, 4.0) if kind == "gaussian" else (0.25, 0.5, 1.0, 2.0, 4.0)
    assert SCALE_GRIDS[kind] == want
    np.testing.assert_array_equal(est.cv_results_["scale_multiplier"], want)


def _centred_alignment(K, Y):
    m = K.shape[0]
    H = np.eye(m) - 1.0 / m
    Kc, Yc = H @ K @ H, H @ Y @ H
    return np.sum(Kc * Yc) / np.sqrt(np.sum(Kc * Kc) * np.sum(Yc * Yc))


def test_data_driven_scales():
    X, y = _data(n=50, d=4, seed=9)
    tv = float(np.mean(np.sum((X - X.mean(0)) ** 2, axis=1)))
    # gaussian / wishart: tv times the grid multiplier whose section exp(-r^2 / (4 s^2)) is best
    # aligned with the ideal kernel (all 50 points: fewer than ALIGNMENT_POINTS)
    D2 = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    align = [_centred_alignment(np.exp(-D2 / (4 * c * tv)), ideal_kernel(y)) for c in ALIGNMENT_GRID]
    c = ALIGNMENT_GRID[int(np.argmax(align))]
    assert ALIGNMENT_GRID[0] == pytest.approx(1 / 8) and ALIGNMENT_GRID[-1] == 1.0
    g = HyperKernelRidge(solver="nystroem", n_landmarks=5, random_state=0).fit(X, y)
    assert g.sigma2_ == pytest.approx(c * tv) and g.sigma2_h_ == pytest.approx(c * tv)
    w = HyperKernelRidge("wishart", solver="nystroem", n_landmarks=5, random_state=0).fit(X, y)
    assert w.wishart_dof_ == 6.0 and w.wishart_scale_ == pytest.approx(9.0 * c * tv)
    # a target kernel: aligned with it (a narrow Gaussian target gives a narrow scale)
    K = np.exp(-D2 / (4 * 0.15 * tv))
    t = HyperKernelRidge(solver="nystroem", n_landmarks=5, random_state=0).fit(X, target_kernel=K)
    assert t.sigma2_ == pytest.approx(np.sqrt(2) ** -5 * tv)
    # a constant target has no alignment: tv itself
    ones = HyperKernelRidge(solver="nystroem", n_landmarks=5, random_state=0)
    assert ones.fit(X, target_kernel=np.ones((50, 50))).sigma2_ == pytest.approx(tv)
    # radial: tv (its scale is searched by cv)
    r = HyperKernelRidge("radial").fit(X, y)
    assert r.lengthscale_ == pytest.approx(np.sqrt(2 * tv)) and r.bin_width_ == pytest.approx(
        r.lengthscale_ / 64
    )


def test_default_scale_learns_a_useful_kernel_on_digits():
    # scikit-learn's digits (real data, 10 classes): 150 training points, 400 test points. The
    # default s^2 (aligned: 1/4 of the total variance here) gives an SVM on the learned kernel
    # 0.818 test accuracy; the former default, the total variance, 0.440 (measured).
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    perm = np.random.default_rng(0).permutation(len(X))
    tr, te = perm[:150], perm[150:550]

    def accuracy(**kw):
        est = HyperKernelRidge(n_landmarks=15, random_state=0, **kw).fit(X[tr], y[tr])
        svm = SVC(kernel="precomputed").fit(est.transform(X[tr]), y[tr])
        return svm.score(est.transform(X[te]), y[te]), est

    acc, est = accuracy()
    tv = float(np.mean(np.sum((X[tr] - X[tr].mean(0)) ** 2, axis=1)))
    assert est.sigma2_ == pytest.approx(tv / 4)
    assert acc > 0.75
    acc_tv, _ = accuracy(sigma2=tv)  # negative control: the former default
    assert acc_tv < 0.6


def test_random_state_reproducibility():
    X, y = _data(n=60, seed=10)
    a = HyperKernelRidge(solver="nystroem", n_landmarks=8, random_state=1).fit(X, y).learned_kernel_(X)
    b = HyperKernelRidge(solver="nystroem", n_landmarks=8, random_state=1).fit(X, y).learned_kernel_(X)
    c = HyperKernelRidge(solver="nystroem", n_landmarks=8, random_state=2).fit(X, y).learned_kernel_(X)
    np.testing.assert_array_equal(a, b)
    assert np.max(np.abs(a - c)) > 1e-6


def test_inputs_are_not_modified():
    X, y = _data(n=20, seed=11)
    K = ideal_kernel(y) * 0.5
    X0, K0 = X.copy(), K.copy()
    est = HyperKernelSVR(solver="exact").fit(X, target_kernel=K)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(K, K0)
    X[0, 0] = 100.0  # the estimator kept its own copy
    assert est.X_fit_[0, 0] == X0[0, 0]


@pytest.mark.parametrize(
    "kwargs, fit_kwargs, match",
    [
        ({}, {"y": None}, "requires y to be passed, but the target y is None"),
        ({}, {"y": np.linspace(0, 1, 30)}, "y must be class labels .* got 'continuous'"),
        ({}, {"y": np.zeros(29)}, "y has 29 labels but X has 30 samples"),
        (
            {},
            {"target_kernel": np.eye(29)},
            r"target_kernel must be a square matrix matching X, of shape \(30, 30\)",
        ),
        ({}, {"target_kernel": np.ones((30, 31))}, r"shape \(30, 31\)"),
        (
            {},
            {"target_kernel": np.triu(np.ones((30, 30)))},
            r"target_kernel must be symmetric: max \|K - K\^T\| = 1",
        ),
        ({}, {"target_kernel": np.full((30, 30), np.nan)}, "Input target_kernel contains NaN"),
        ({}, {"y": np.zeros(30), "target_kernel": np.eye(30)}, "either y .* or target_kernel, not both"),
        ({"hyper_kernel": "radial", "solver": "nystroem"}, {}, "solver='binned'"),
        ({"solver": "binned"}, {}, "solver='binned' applies to hyper_kernel='radial' only"),
        ({"alpha": [1e-3, 1e-2]}, {}, "alpha has 2 candidates: set cv"),
        ({"n_partitions": 31}, {}, "n_partitions=31 exceeds the number of samples 30"),
        ({"hyper_kernel": "wishart", "wishart_dof": 1.5}, {}, r"wishart_dof must be > d - 1 = 2"),
        (
            {"hyper_kernel": "radial", "n_partitions": 2},
            {},
            "n_partitions applies to the gaussian and wishart",
        ),
        ({"hyper_kernel": "radial", "solver": "exact", "cv": 3}, {}, "cv is supported with solver='binned'"),
        ({"alpha": -1.0}, {}, "The 'alpha' parameter of HyperKernelRidge must be"),
        (
            {"hyper_kernel": "laplace"},
            {},
            "The 'hyper_kernel' parameter of HyperKernelRidge must be a str among",
        ),
    ],
)
def test_bad_input_messages(kwargs, fit_kwargs, match):
    X, y = _data(n=30)
    fit_kwargs = dict(fit_kwargs)
    if "y" not in fit_kwargs and "target_kernel" not in fit_kwargs:
        fit_kwargs["y"] = y
    with pytest.raises(ValueError, match=match):
        HyperKernelRidge(**kwargs).fit(X, **fit_kwargs)


def test_exact_limit_is_per_subset_and_svr_feature_memory_is_checked(monkeypatch):
    X, y = _data(n=120, seed=12)
    with pytest.raises(
        ValueError,
        match=r"solver='exact' would solve on 7260 distinct pairs of 120 points \(limit "
        r"2500, i.e. 70 points\): use solver='nystroem'",
    ):
        HyperKernelRidge(solver="exact").fit(X, y)
    with pytest.raises(
        ValueError, match="solver='exact' would solve on 7260 distinct pairs .* use solver='binned'"
    ):
        HyperKernelRidge("radial", solver="exact").fit(X, y)
    # 120 points in 4 subsets of 30: 465 pairs each, within the exact solver's limit
    est = HyperKernelRidge(solver="exact", n_partitions=4, random_state=0).fit(X, y)
    assert est.solver_ == "exact" and est.n_pairs_ == 4 * 465
    monkeypatch.setattr(pairs_mod, "MAX_SVR_FEATURE_BYTES", 1000)
    with pytest.raises(MemoryError, match="increase n_partitions"):
        HyperKernelSVR(solver="nystroem", n_landmarks=5).fit(X, y)


def test_zero_variance_data_needs_sigma2():
    X = np.ones((5, 2))
    with pytest.raises(ValueError, match="zero total variance"):
        HyperKernelRidge().fit(X, [0, 1, 0, 1, 0])
    est = HyperKernelRidge(sigma2=1.0, solver="exact").fit(X, [0, 1, 0, 1, 0])
    assert np.all(np.isfinite(est.transform(X)))


def test_long_fits_report_their_stages_on_a_terminal(monkeypatch):
    # a fit over two seconds prints its stages when stderr is a terminal, nothing in scripts
    import io

    from spectralkit.measures import _progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    for stream, shown in ((Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(_progress.sys, "stderr", stream)
        monkeypatch.setattr(_progress.Progress.__init__, "__defaults__", (0.0, None))  # after = 0 s
        HyperKernelRidge().fit(X, y)
        text = stream.getvalue()
        assert ("HyperKernelRidge (gaussian, " in text and "done in" in text) == shown, text
