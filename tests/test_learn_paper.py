"""The kernel-learning part of the paper suite (benchmarks/papers/learning.py): loaders, protocol, report.

The data-dependent tests skip when ../shared/data (or $SPECTRALKIT_DATA) is absent.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.papers import datasets as D  # noqa: E402 (after the sys.path entry)
from benchmarks.papers import learning as LRN  # noqa: E402
from benchmarks.papers import run as RUN  # noqa: E402

try:
    D.resolve_data_dir()
    HAVE_DATA = all((D.resolve_data_dir() / f).is_file() for f in LRN.KEEL.values())
except D.DataNotFoundError:
    HAVE_DATA = False
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="benchmark data folder ../shared/data not present")


@needs_data
@pytest.mark.parametrize(
    "name, shape, counts",
    [
        ("australian", (690, 14), (383, 307)),
        ("heart", (270, 13), (150, 120)),
        ("sonar", (208, 60), (111, 97)),
        ("wine", (178, 13), (59, 71, 48)),
    ],
)
def test_keel_files_load_with_their_documented_shapes(name, shape, counts):
    X, y, notes = LRN.load_keel(name)
    assert X.shape == shape
    assert tuple(np.unique(y, return_counts=True)[1]) == counts
    assert X.min() == 0.0 and X.max() == 1.0 and np.all(np.isfinite(X))
    assert any("min-max" in n for n in notes)


def test_missing_keel_file_names_the_path(tmp_path):
    with pytest.raises(D.DataNotFoundError, match="keel-sonar.dat"):
        LRN.load_keel("sonar", data_dir=tmp_path)
    with pytest.raises(ValueError, match="name must be one of"):
        LRN.load_keel("fertility")


@needs_data
@pytest.mark.slow
def test_ideal_kernel_protocol_on_heart_one_trial():
    recs = LRN.ideal_kernel_experiment("heart", ("krr_radial",), trials=1, seed=0)
    by = {r["method"]: r for r in recs}
    assert set(by) == {"krr_radial", "svm_cv"}
    r = by["krr_radial"]
    assert r["n_train"] == 108 and r["n_test"] == 162
    assert 0.6 < r["accuracy"][0] <= 1.0  # far above the 55.6 % majority class
    k = r["kernel"][0]
    assert k["neg_eig_fraction"] > 0  # the learned kernel is indefinite
    assert abs(k["mass_plus"]["value"] - k["mass_minus"]["value"] - k["k0"]) < 1e-8 * k["mass_plus"]["value"]


@needs_data
@pytest.mark.slow
def test_known_kernel_protocol_on_wine_one_trial():
    recs = LRN.known_kernel_experiment("wine", "gaussian", ("krr_radial",), trials=1, seed=0)
    by = {r["method"]: r for r in recs}
    assert by["known"]["rmse"] == [0.0]
    # the Gaussian target is itself radial: the radial hyper-kernel reproduces it closely
    assert by["krr_radial"]["rmse"][0] < 0.01
    assert abs(by["krr_radial"]["test"][0] - by["known"]["test"][0]) < 0.1


def test_known_kernels_and_published_tables():
    A = np.array([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_allclose(LRN.known_kernel_matrix("log", A, A), [[0, -np.log(6)], [-np.log(6), 0]])
    np.testing.assert_allclose(LRN.known_kernel_matrix("gaussian", A, A, gamma=0.1)[0, 1], np.exp(-2.5))
    with pytest.raises(ValueError, match="kind must be"):
        LRN.known_kernel_matrix("laplace", A, A)
    assert set(LRN.PUBLISHED_T2["svr_gaussian"]) == {"australian", "wine", "sonar", "heart"}
    assert LRN.PUBLISHED_T2["svr_gaussian"]["sonar"] == (82.32, 3.34)
    assert LRN.PUBLISHED_T1["log"]["svr_gaussian"]["australian"]["rmse"] == 0.474
    assert LRN.PUBLISHED_T3[20]["krr_gaussian"] == (90.94, 752.1)


def _records():
    ideal = [
        {
            "dataset": "heart",
            "method": m,
            "accuracy": [0.8, 0.82],
            "mean": 0.81,
            "std": 0.014,
            "fit_seconds": [1.0, 1.0],
            "chosen": [{"scale_multiplier": 1.0, "alpha": 1e-4}] * 2,
            "kernel": [{"neg_eig_fraction": 0.1}] * 2,
        }
        for m in ("krr_gaussian", "svm_cv")
    ]
    known = [
        {
            "dataset": "heart",
            "kernel": "log",
            "method": m,
            "unlabel_mean": 0.8,
            "unlabel_std": 0.01,
            "test_mean": 0.79,
            "test_std": 0.02,
            "rmse_mean": 0.1,
            "rmse_std": 0.01,
        }
        for m in ("known", "krr_gaussian")
    ]
    large = [
        {
            "method": "krr_gaussian",
            "v": 5,
            "accuracy": 0.91,
            "fit_seconds": 10.0,
            "svm_seconds": 5.0,
            "n_landmarks": 20,
            "alpha": 1e-4,
            "majority": 0.905,
            "n_svm": 5000,
        }
    ]
    return ideal, known, large


def test_report_section_renders_every_table():
    ideal, known, large = _records()
    lines = LRN.report_section({"ideal": ideal, "known": known, "large": large, "config": {"trials": 2}})
    text = "\n".join(lines)
    assert "### Table 2" in text and "### Table 1" in text and "### Table 3" in text
    assert "81.00 ± 1.40 (n=2) | 81.11 ± 3.12" in text  # ours | the paper
    assert "90.5 % one class" in text
    assert LRN.report_section(None) == []


def test_runner_knows_the_learning_experiment():
    args = RUN.build_parser().parse_args(["--experiments", "learning", "--learning-tables", "2"])
    assert args.experiments == ["learning"] and args.learning_tables == [2]
    merged = RUN._merge(
        {
            "approximation": [],
            "classification": [],
            "regression": [],
            "kernels": [],
            "learning": {"ideal": [1]},
            "meta": {},
        },
        {"approximation": [], "classification": [], "regression": [], "kernels": [], "meta": {}},
    )
    assert merged["learning"] == {"ideal": [1]}
    # one run per table: the tables are combined, each run's time and load kept
    ideal, known, _ = _records()
    t2 = {"ideal": ideal, "known": [], "large": [], "config": {"trials": 10, "seconds": 60.0}}
    t1 = {
        "ideal": [],
        "known": known,
        "large": [],
        "config": {
            "trials": 10,
            "seconds": 120.0,
            "load_average_start": [1, 2, 3],
            "load_average_end": [3, 2, 1],
        },
    }
    both = LRN.merge_learning(t2, t1)
    assert both["ideal"] == ideal and both["known"] == known and both["large"] == []
    assert [r["tables"] for r in both["config"]["runs"]] == [[2], [1]]
    text = "\n".join(LRN.report_section(both))
    assert "table 2: 1 min, not recorded; table 1: 2 min, (1.0, 2.0, 3.0) → (3.0, 2.0, 1.0)" in text
