"""Tests of the paper benchmark suite (benchmarks/papers): loaders, baselines, protocol, runner.

Statistical tests use fixed seeds and a 4-standard-error CLT tolerance: the sample mean of R
independent estimates is within 4 SE of its expectation with probability > 0.9999.
"""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.papers import baselines as B  # noqa: E402
from benchmarks.papers import datasets as D  # noqa: E402
from benchmarks.papers import protocol as P  # noqa: E402
from spectralkit import kernels  # noqa: E402

try:
    D.resolve_data_dir()
    HAVE_DATA = True
except D.DataNotFoundError:
    HAVE_DATA = False
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="benchmark data folder ../shared/data not present")


# -- datasets ----------------------------------------------------------------------------------


def test_missing_data_folder_names_the_path(tmp_path):
    missing = tmp_path / "no-such-folder"
    with pytest.raises(D.DataNotFoundError, match="no-such-folder"):
        D.load("letter", data_dir=missing)


def test_missing_file_names_the_path(tmp_path):
    with pytest.raises(D.DataNotFoundError, match="letter-recognition.data"):
        D.load("letter", data_dir=tmp_path)


def test_env_var_selects_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(D.ENV_VAR, str(tmp_path / "from-env"))
    with pytest.raises(D.DataNotFoundError, match="from-env"):
        D.resolve_data_dir()


def test_load_rejects_bad_arguments():
    with pytest.raises(ValueError, match="name must be one of"):
        D.load("mnist")
    with pytest.raises(ValueError, match="seed must be"):
        D.load("letter", seed=-1)


@needs_data
def test_splits_and_scaling_follow_the_papers():
    letter = D.load("letter", seed=3)
    assert letter.X_train.shape == (12000, 16) and letter.X_test.shape == (6000, 16)
    assert letter.X_train.min() == 0.0 and letter.X_train.max() == 1.0
    assert len(np.unique(letter.y_train)) == 26
    housing = D.load("housing", seed=1)
    assert housing.X_train.shape == (405, 13) and housing.X_test.shape == (101, 13)
    assert not np.array_equal(housing.y_test, D.load("housing", seed=2).y_test)  # seeded splits differ


def test_minmax_and_l2():
    Xtr = np.array([[0.0, 5.0, 1.0], [2.0, 5.0, 3.0]])
    Xte = np.array([[1.0, 7.0, 5.0]])
    a, b = D.minmax_scale(Xtr, Xte)
    np.testing.assert_allclose(a, [[0, 0, 0], [1, 0, 1]])
    np.testing.assert_allclose(b, [[0.5, 0, 2]])  # the test set gets the training map
    np.testing.assert_allclose(np.linalg.norm(D.l2_normalize(Xte), axis=1), 1.0)
    with pytest.raises(ValueError, match="all-zero rows"):
        D.l2_normalize(np.zeros((2, 3)))


# -- closed-form densities and the papers' estimator -------------------------------------------


def _k_from_mu(mu, d, z, rho_max=60.0):
    """k(z) = ∫ f(rho) Γ(d/2) (rho z / 2)^(1 - d/2) J_(d/2-1)(rho z) drho (docs/theory.md §1)."""
    import scipy.integrate as si
    import scipy.special as sps

    S = 2 * math.pi ** (d / 2) / math.gamma(d / 2)
    nu = d / 2 - 1

    def f(rho):
        t = rho * z
        ang = math.gamma(d / 2) * (2 / t) ** nu * sps.jv(nu, t) if t > 0 else 1.0
        return S * rho ** (d - 1) * float(mu(np.array([rho]))[0]) * ang

    return si.quad(f, 0, rho_max, limit=2000)[0]


@pytest.mark.parametrize(
    "kernel,d,tol",
    [
        (kernels.delta_gaussian(1, 10), 3, 1e-9),
        (kernels.spherical_polynomial(2, 2), 3, 5e-4),  # finite mass in d = 3; quad truncated at 60
        (kernels.spherical_polynomial(2, 1), 2, 2e-3),  # finite in d < 3
    ],
)
def test_radial_mu_inverts_to_the_kernel(kernel, d, tol):
    mu = B.radial_mu(kernel, d)
    for z in (0.3, 1.0, 1.7):
        assert abs(_k_from_mu(mu, d, z) - kernel(z)) < tol


def test_radial_mu_small_rho_branch_is_continuous_in_high_d():
    mu = B.radial_mu(kernels.spherical_polynomial(3, 1), 256, normalised=False)
    lo, hi = mu(np.array([1.0])), mu(np.array([1.0 + 1e-9]))
    assert np.isfinite(lo).all() and abs(lo[0] - hi[0]) < 1e-6 * abs(lo[0])


def _paper_expectation(est, d, z, n=200000):
    """E[K^(z)] of the papers' estimator by quadrature of its tabulated norm laws."""
    import scipy.special as sps

    out = 0.0
    u = (np.arange(n) + 0.5) / n
    for sign, c in ((1, est.c_plus), (-1, est.c_minus)):
        if sign in est._tables:
            cdf, x = est._tables[sign]
            t = np.maximum(np.interp(u, cdf, x, left=0.0) * z, 1e-12)
            nu = d / 2 - 1
            with np.errstate(over="ignore", invalid="ignore"):
                val = math.gamma(d / 2) * (2 / t) ** nu * sps.jv(nu, t)
            out += sign * c * np.nan_to_num(val, nan=1.0, posinf=1.0).mean()
    return out


def test_paper_estimator_reproduces_the_documented_bias():
    # docs/theory.md §7: d = 16, z = 2, spherical polynomial (3, 1): 0.698 instead of k(2) = 0.556
    est = B.PaperEstimator(kernels.spherical_polynomial(3, 1), 16)
    assert abs(_paper_expectation(est, 16, 2.0) - 0.698) < 2e-3
    assert abs(est.c_plus + est.c_minus - 1) < 1e-12  # normalised masses


def _mean_and_se(estimates):
    e = np.asarray(estimates)
    return e.mean(), e.std(ddof=1) / math.sqrt(len(e))


def _pair(d, z, rng):
    x = rng.standard_normal(d)
    x /= np.linalg.norm(x)
    v = rng.standard_normal(d)
    v -= (v @ x) * x
    v /= np.linalg.norm(v)
    # y on the unit sphere at chord distance z from x
    y = (1 - z * z / 2) * x + z * math.sqrt(1 - z * z / 4) * v
    return x[None, :], y[None, :]


def test_unbiased_signed_features_pass_and_papers_estimator_fails_a_4se_test():
    """The exact-law signed estimator (docs/theory.md §2) is within 4 SE of k(z); the papers' is not."""
    d, s, R = 16, 8, 3000
    rng = np.random.default_rng(7)
    x, y = _pair(d, 1.2, rng)
    k = kernels.delta_gaussian(1, 10)
    truth = float(k(1.2))
    good = []
    for _ in range(R):  # coefficient split: w ~ N(0, I), v ~ N(0, I/100), masses 1 and 1
        f = B.signed_sincos_features(rng.standard_normal((s, d)), rng.standard_normal((s, d)) / 10, 1.0, 1.0)
        good.append(f.kernel_approx(x, y)[0, 0])
    m, se = _mean_and_se(good)
    assert abs(m - truth) < 4 * se
    sp = kernels.spherical_polynomial(3, 1)
    est = B.PaperEstimator(sp, d)
    bad = [est.features(s, rng, "paper-gorf").kernel_approx(x, y)[0, 0] for _ in range(R)]
    m, se = _mean_and_se(bad)
    assert abs(m - float(sp(1.2))) > 4 * se  # the documented bias is detected


def test_rbf_sampler_coefficient_split_is_unbiased():
    d, R = 8, 600
    rng = np.random.default_rng(11)
    x, y = _pair(d, 0.9, rng)
    k = kernels.delta_gaussian(1, 10)
    est = [B.rbf_sampler_features(k, 128, rng).kernel_approx(x, y)[0, 0] for _ in range(R)]
    m, se = _mean_and_se(est)
    assert abs(m - float(k(0.9))) < 4 * se
    with pytest.raises(ValueError, match="Gaussian"):
        B.rbf_sampler_features(kernels.matern(1.5), 16, rng)


def test_paper_gorf_directions_are_unit_but_not_orthogonal():
    rng = np.random.default_rng(0)
    Dp, Dm = B.paper_gorf_directions(16, 16, rng)
    assert Dp.shape == Dm.shape == (16, 16)
    np.testing.assert_allclose(np.linalg.norm(np.vstack([Dp, Dm]), axis=1), 1.0)
    G = np.vstack([Dp, Dm]) @ np.vstack([Dp, Dm]).T
    off = np.abs(G - np.diag(np.diag(G)))
    assert off.max() > 0.1  # docs/theory.md §3: 2m > d, so the kept columns are not orthogonal


def test_nystroem_returns_abs_of_an_indefinite_gram():
    """With every point a landmark, sklearn's Nystroem gives K |K|^-1 K = |K| (docs/theory.md §8)."""
    rng = np.random.default_rng(3)
    X = D.l2_normalize(rng.uniform(size=(60, 5)))
    k = kernels.delta_gaussian(1, 10)
    K = P.exact_gram(k, X)
    f = B.nystroem_features(lambda A, C: P.exact_gram(k, A, C), X, 60, rng)
    lam, V = np.linalg.eigh(K)
    absK = (V * np.abs(lam)) @ V.T
    np.testing.assert_allclose(f.kernel_approx(X), absK, atol=1e-8)
    assert P.relative_frobenius_error(K, f.kernel_approx(X)) > 1.0


def test_krein_and_plain_ridge_match_their_kernel_forms():
    rng = np.random.default_rng(5)
    Phi, Pt = rng.standard_normal((40, 10)), rng.standard_normal((7, 10))
    J = np.where(np.arange(10) < 6, 1.0, -1.0)
    y = rng.standard_normal(40)
    lam = 0.3
    yc = y - y.mean()
    K = (Phi * J) @ Phi.T
    alpha = np.linalg.solve(K + lam * np.eye(40), yc)
    np.testing.assert_allclose(
        B.krein_ridge(Phi, J, y, lam)(Pt), (Pt * J) @ Phi.T @ alpha + y.mean(), rtol=1e-9
    )
    beta = np.linalg.solve(Phi @ Phi.T + lam * np.eye(40), yc)
    np.testing.assert_allclose(B.plain_ridge(Phi, y, lam)(Pt), Pt @ Phi.T @ beta + y.mean(), rtol=1e-9)
    with pytest.raises(ValueError, match="lam must be"):
        B.krein_ridge(Phi, J, y, 0.0)


def _brute_force_cv(K, y, perm, lam, folds):
    sse = 0.0
    for te in np.array_split(perm, folds):
        tr = np.setdiff1d(perm, te)
        ybar = y[tr].mean()
        a = np.linalg.solve(K[np.ix_(tr, tr)] + lam * np.eye(len(tr)), y[tr] - ybar)
        sse += np.sum((K[np.ix_(te, tr)] @ a + ybar - y[te]) ** 2)
    return math.sqrt(sse / len(y))


def test_kernel_ridge_cv_equals_direct_solves_on_an_indefinite_gram():
    rng = np.random.default_rng(11)
    X = D.l2_normalize(rng.uniform(size=(50, 4)))
    K = P.exact_gram(kernels.delta_gaussian(1, 10), X)
    assert np.linalg.eigvalsh(K).min() < -1e-6  # really indefinite
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    grid = (1e-4, 1e-2, 1.0)
    lam, cv_rmse = P.kernel_ridge_cv(K, y, np.random.default_rng(3), grid, folds=5)
    perm = np.random.default_rng(3).permutation(50)
    direct = [_brute_force_cv(K, y, perm, g, 5) for g in grid]
    np.testing.assert_allclose(cv_rmse, direct, rtol=1e-8)
    assert lam == grid[int(np.argmin(direct))]


def test_kernel_ridge_cv_never_picks_a_singular_lambda():
    # K = diag(-1, 2, 3): lam = 1 makes K + lam I singular, lam = 1e-3 does not
    K, y = np.diag([-1.0, 2.0, 3.0, 4.0]), np.array([1.0, -1.0, 2.0, 0.5])
    lam, cv_rmse = P.kernel_ridge_cv(K, y, np.random.default_rng(0), (1.0, 1e-3), folds=2)
    assert lam == 1e-3


def test_kernel_ridge_cv_rejects_bad_arguments():
    K, y = np.eye(6), np.arange(6.0)
    with pytest.raises(ValueError, match="K must have shape"):
        P.kernel_ridge_cv(np.eye(5), y, np.random.default_rng(0))
    with pytest.raises(ValueError, match="folds must be in"):
        P.kernel_ridge_cv(K, y, np.random.default_rng(0), folds=1)
    with pytest.raises(ValueError, match="grid must be"):
        P.kernel_ridge_cv(K, y, np.random.default_rng(0), grid=(0.1, -1.0))


def test_lambda_grid_is_wide_and_increasing():
    g = np.asarray(P.LAMBDA_GRID)
    assert g[0] <= 1e-6 and g[-1] >= 10 and np.all(np.diff(g) > 0)


def test_regression_reference_is_kernel_ridge_with_the_exact_gram():
    rng = np.random.default_rng(2)
    Xtr, Xte = rng.uniform(size=(60, 3)), rng.uniform(size=(20, 3))
    f = lambda X: 5 * np.sin(2 * D.l2_normalize(X)[:, 0]) + D.l2_normalize(X)[:, 1] ** 2
    ds = D.Dataset("housing", Xtr, f(Xtr) + 0.1 * rng.standard_normal(60), Xte, f(Xte), "regression", [])
    setup = P.KernelSetup("delta_gaussian", "dg", kernels.delta_gaussian(1, 10), True)
    recs = {
        r["model"]: r
        for r in P.regression_reference(
            lambda rep: ds, setup, 2, 0, grid=(1e-3, 1e-1), svr_grid={"C": (10.0,), "epsilon": (0.1,)}
        )
    }
    assert set(recs) == set(P.REFERENCE_MODELS)
    X = np.vstack([D.l2_normalize(Xtr), D.l2_normalize(Xte)])
    K = P.exact_gram(setup.base, X)
    K_pd = P.exact_gram(kernels.gaussian(1), X) + P.exact_gram(kernels.gaussian(10), X)
    for model, G in (("krein", K), ("pd", K_pd)):
        r = recs[model]
        lam = r["params"][0]["lambda"]
        a = np.linalg.solve(G[:60, :60] + lam * np.eye(60), ds.y_train - ds.y_train.mean())
        rmse = math.sqrt(np.mean((G[60:, :60] @ a + ds.y_train.mean() - ds.y_test) ** 2))
        assert r["rmse"][0] == pytest.approx(rmse, rel=1e-9)
        assert r["splits"] == [0, 1] and len(r["rmse"]) == 2 and "mean" in r
    # the term split and the Jordan split differ by the overlap of the two Gaussian measures: a
    # few per cent in d = 3 (4.3e-7 in housing's d = 13), never negative
    assert 0 < recs["pd"]["pd_gap_bound"] < 0.1
    assert recs["svr"]["svr_gram"].startswith("K+ + K-") and recs["svr"]["params"][0] == {
        "C": 10.0,
        "epsilon": 0.1,
    }
    # the fit is real: far below the spread of the targets
    assert recs["krein"]["mean"] < 0.5 * np.std(ds.y_test)


# -- protocol ----------------------------------------------------------------------------------


def test_s_values_follow_matlab_round():
    assert [P.s_value(r, 22) for r in P.RATIOS] == [6, 11, 22, 44, 88, 176]
    assert P.s_value(0.5, 13) == 7 and P.s_value(0.25, 2) == 1


def test_task_rng_is_order_independent():
    a = P.task_rng(0, "approx", "letter", 3).standard_normal(3)
    P.task_rng(0, "other").standard_normal(10)
    np.testing.assert_array_equal(a, P.task_rng(0, "approx", "letter", 3).standard_normal(3))
    assert not np.array_equal(a, P.task_rng(0, "approx", "letter", 4).standard_normal(3))


@pytest.mark.parametrize("a,p,d,tol", [(3, 1, 16, 1e-9), (2, 2, 22, 1e-5), (3, 1, 13, 1e-9)])
def test_extension_equals_the_kernel_on_the_sphere_and_is_smooth(a, p, d, tol):
    # tol: rounding of the degree-(2m+1) Hermite solve grows with m (m = 7, 10, 6 here)
    k, info = P.spherical_polynomial_extension(a, p, d, L=2.0)
    base = kernels.spherical_polynomial(a, p)
    r = np.linspace(0, 2, 101)
    np.testing.assert_allclose(k(r), base(r), atol=tol)
    assert info["sphere_max_deviation"] < tol
    assert 2 * info["m"] + 3 > d
    # C^m at r = 2 and at the edge 2 + L: finite differences of order <= 2 agree across the joins
    h = 1e-4
    for r0 in (2.0, 4.0):
        left, right = k(np.array([r0 - 2 * h, r0 - h, r0])), k(np.array([r0, r0 + h, r0 + 2 * h]))
        assert abs(left[2] - right[0]) < tol
        assert abs((left[2] - left[1]) - (right[1] - right[0])) < 1e-6 + tol
    assert k(4.0 + 1e-3) == 0.0


def test_extension_order_is_the_smallest_with_finite_mass():
    for d in range(1, 40):
        m = P.extension_order(d)
        assert d < 2 * m + 3 and (m == 0 or d >= 2 * m + 1)


def test_extension_refuses_orders_it_cannot_compute():
    with pytest.raises(P.NotApplicable, match="m=127"):
        P.spherical_polynomial_extension(3, 1, 256)


def test_make_features_rejects_unknown_method():
    setup = P.KernelSetup("dg", "dg", kernels.delta_gaussian(1, 10), True)
    with pytest.raises(ValueError, match="method must be one of"):
        P.make_features("nope", setup, 4, 2, np.random.default_rng(0))


# -- runner (smoke) ----------------------------------------------------------------------------


def test_runner_reports_a_missing_data_folder(tmp_path, capsys):
    from benchmarks.papers import run

    code = run.main(["--quick", "--out", str(tmp_path), "--data-dir", str(tmp_path / "absent")])
    assert code == 2
    assert "absent" in capsys.readouterr().err


def test_recorded_command_leaves_out_the_machines_data_folder():
    from benchmarks.papers import run

    for argv in (
        ["--quick", "--data-dir", "/some/where", "--jobs", "2"],
        ["--quick", "--data-dir=/x", "--jobs", "2"],
    ):
        assert run._command(argv) == "python -m benchmarks.papers.run --quick --jobs 2"


@needs_data
def test_quick_run_writes_json_markdown_and_plots(tmp_path, monkeypatch):
    from benchmarks.papers import run

    # without --out a quick run writes to benchmarks/results/quick/, never the committed page
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "benchmarks.md").write_text("committed page")
    monkeypatch.setattr(run, "_ROOT", root)
    # three methods (one of ours, the papers' code, the scikit-learn peer): the run, not every method
    methods = ["--methods", "gorf", "paper_gorf", "nystroem"]
    assert run.main(["--quick", "--data-dir", str(run.D.resolve_data_dir(None)), *methods]) == 0
    assert (root / "docs" / "benchmarks.md").read_text() == "committed page"
    tmp_path = root / "benchmarks" / "results" / "quick"
    res = json.loads((tmp_path / "papers_quick.json").read_text())
    assert res["meta"]["quick"] and res["meta"]["reps"] == 2
    approx = res["approximation"]
    assert {r["dataset"] for r in approx} == {"letter"}
    assert {r["ratio"] for r in approx} == {0.25, 0.5}
    done = [r for r in approx if "mean" in r]
    assert done, "no method produced an approximation error"
    for r in done:
        assert len(r["errors"]) == 2 and np.isfinite(r["mean"]) and r["n_components"] == 4 * r["s"]
    # every method is either measured or says why it was not run
    assert all(("mean" in r) or r.get("skipped") for r in approx)
    md = (tmp_path / "benchmarks.md").read_text()
    assert "## Kernel approximation" in md and "python -m benchmarks.papers.run" in md
    assert list(tmp_path.glob("papers_quick_letter_*.png"))
    assert res["classification"] and any("mean" in c for c in res["classification"])
