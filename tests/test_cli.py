"""The command line: check / plot / featurize / demo, one-line errors and exit codes."""

import bz2
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from spectralkit.cli import main
from spectralkit.features import RandomFeatures


def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _one_error_line(err):
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("spectralkit: error: "), err
    assert "Traceback" not in err
    return lines[0]


# -- help ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["--help"], ["check", "--help"], ["plot", "--help"],
                                  ["featurize", "--help"], ["demo", "--help"]])
def test_help_everywhere(capsys, argv):
    code, out, _ = _run(capsys, *argv)
    assert code == 0 and out.startswith("usage: spectralkit")


def test_no_command_prints_help_and_fails(capsys):
    code, out, _ = _run(capsys)
    assert code == 2 and "check" in out and "featurize" in out


# -- check --------------------------------------------------------------------------------------
def test_check_text_and_json(capsys):
    code, out, _ = _run(capsys, "check", "delta_gaussian:sigma1=1,sigma2=10", "--dim", "3")
    assert code == 0
    assert "verdict    RKKS" in out and "mass +" in out and "sign changes" in out
    assert "method" in out and "reason" in out and "time" in out
    code, out, _ = _run(capsys, "check", "delta_gaussian", "--dim", "3", "--json")
    data = json.loads(out)
    assert data["verdict"] == "RKKS" and data["dim"] == 3
    mp, mm = data["mass_plus"], data["mass_minus"]
    # Bochner: k(0) = 0 = m+ - m-, within the stated errors; Jordan masses < 1 in d = 3
    assert abs(mp["value"] - mm["value"]) <= mp["error"] + mm["error"] + 1e-12
    assert 0.5 < mp["value"] < 1.0
    assert len(data["sign_changes"]) >= 1 and data["wall_seconds"] > 0


def test_check_formula_with_params_and_definiteness_depends_on_dim(capsys):
    # exp(-r^2/2) - 0.5 exp(-r^2/8): PD in d = 1, indefinite for d >= 2 (REFERENCE §1)
    formula = "exp(-r**2/2) - c*exp(-r**2/8)"
    code, out, _ = _run(capsys, "check", formula, "--param", "c=0.5", "--dim", "1", "--json")
    assert code == 0 and json.loads(out)["verdict"] == "PD"
    code, out, _ = _run(capsys, "check", formula, "-p", "c=0.5", "-d", "2", "--json")
    assert code == 0 and json.loads(out)["verdict"] == "RKKS"


def test_check_divergent_is_an_answer_not_an_error(capsys):
    # a > 2 jumps at the support edge r = 2: ||mu|| = inf in every d (REFERENCE §5)
    code, out, _ = _run(capsys, "check", "spherical_polynomial:a=3,p=2", "--dim", "3", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["verdict"] == "DIVERGENT" and data["mass_plus"] is None and data["reason"]


@pytest.mark.parametrize(
    "argv, code, match",
    [
        (["check", "exp(-r**2).real", "--dim", "3"], 2, "kernel 'exp(-r**2).real'"),
        (["check", "nosuchkernel", "--dim", "3"], 2, "unknown kernel 'nosuchkernel'"),
        (["check", "matern:nu=1.5,bogus=2", "--dim", "3"], 2, "unknown parameters"),
        (["check", "exp(-r*s)", "--dim", "3"], 2, "the name 's' is unknown"),
        (["check", "gaussian", "--dim", "0"], 2, "--dim must be an integer >= 1, got 0"),
        (["check", "gaussian", "--dim", "many"], 2, "--dim must be an integer >= 1, got 'many'"),
        (["check", "gaussian", "--dim", "100000"], 2, "dim must be an integer in"),
        (["check", "gaussian"], 2, "required: --dim"),
        (["check", "gaussian", "--dim", "2", "--param", "x"], 2, "--param must look like name=value"),
        (["plot", "gaussian", "--dim", "2", "-o", "out.jpgx"], 2, "must end with .png, .pdf, .svg"),
        (["plot", "gaussian", "--dim", "2", "-o", "/no/such/dir/a.png"], 2, "does not exist"),
        (["frobnicate"], 2, "invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_are_one_line(capsys, argv, code, match):
    got, _, err = _run(capsys, *argv)
    assert got == code
    assert match in _one_error_line(err)


# -- featurize ------------------------------------------------------------------------------------
@pytest.fixture
def data(tmp_path):
    X = np.random.default_rng(0).uniform(size=(203, 4))
    path = tmp_path / "X.npy"
    np.save(path, X)
    return X, path


def _reference(X, **kw):
    args = dict(dim=X.shape[1], n_components=32, method="gorf", random_state=5)
    args.update(kw)
    return RandomFeatures("delta_gaussian", **args).fit()


def test_featurize_npy_streams_and_writes_sidecar(capsys, data, tmp_path, monkeypatch):
    X, path = data
    seen = []
    real = RandomFeatures.transform

    def spy(self, Xc, out=None):
        seen.append(len(Xc))
        return real(self, Xc, out=out)

    monkeypatch.setattr(RandomFeatures, "transform", spy)
    out = tmp_path / "F.npy"
    code, stdout, _ = _run(capsys, "featurize", "delta_gaussian", "--dim", "4", "--components", "32",
                           "--method", "gorf", "--seed", "5", "--chunk-rows", "50", str(path), str(out))
    assert code == 0 and "wrote" in stdout
    assert max(seen) <= 50 and sum(seen) == 203  # never more than a chunk of rows at a time
    monkeypatch.setattr(RandomFeatures, "transform", real)
    F = np.load(out)
    ref = _reference(X)
    np.testing.assert_array_equal(F, ref.transform(X))
    side = json.loads((tmp_path / "F.json").read_text())
    assert side["seed"] == 5 and side["method"] == "gorf" and side["dim"] == 4
    assert side["output"]["shape"] == [203, 32] and side["input"]["format"] == "npy"
    assert side["signature"] == [int(s) for s in ref.signature_]
    assert side["mass_plus"] == pytest.approx(ref.mass_plus_) and side["mass_errors"]["plus"] >= 0
    assert side["n_plus"] + side["n_minus"] == 16
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".part")]  # temp files cleaned up


def test_featurize_libsvm_bz2_float32_labels_and_progress(capsys, tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    X = np.round(rng.uniform(size=(40, 3)), 4)
    y = rng.integers(0, 2, 40) * 2 - 1
    path = tmp_path / "train.bz2"
    with bz2.open(path, "wt") as fh:
        for label, row in zip(y, X):
            fh.write(f"{label} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(row)) + "\n")
    out, lab = tmp_path / "F32.npy", tmp_path / "y.npy"
    monkeypatch.setitem(sys.modules, "tqdm", None)  # no tqdm: the plain stderr counter
    code, _, err = _run(capsys, "featurize", "matern:nu=1.5", "-n", "16", "--seed", "2", "--dtype", "float32",
                        "--labels", str(lab), "--progress", "always", "--chunk-rows", "16", str(path), str(out))
    assert code == 0
    assert "40/40 rows (100%)" in err
    F = np.load(out)
    assert F.dtype == np.float32 and F.shape == (40, 16)
    rf = RandomFeatures("matern:nu=1.5", dim=3, n_components=16, random_state=2).fit()
    np.testing.assert_allclose(F, rf.transform(X.astype(np.float32)), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(np.load(lab), y)


def test_featurize_csv_with_label_column(capsys, tmp_path):
    X = np.random.default_rng(2).uniform(size=(12, 2))
    lines = ["f1,f2,cls"] + [f"{float(a)!r},{float(b)!r},{'ab'[i % 2]}" for i, (a, b) in enumerate(X)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "F.npy"
    code, _, _ = _run(capsys, "featurize", "gaussian", "-n", "8", "--label-column", "-1", str(path), str(out))
    assert code == 0
    ref = RandomFeatures("gaussian", dim=2, n_components=8, random_state=0).fit()
    np.testing.assert_array_equal(np.load(out), ref.transform(X))


@pytest.mark.parametrize(
    "kernel, extra, code, match",
    [
        ("delta_gaussian", ["--dim", "5"], 2, "--dim 5 does not match the 4 features"),
        ("spherical_polynomial:a=3,p=2", [], 1, "infinite mass"),
        ("delta_gaussian", ["--components", "3"], 1, "n_components must be even"),
        ("delta_gaussian", ["--labels", "y.npy"], 2, "has no labels"),
    ],
)
def test_featurize_errors(capsys, data, tmp_path, kernel, extra, code, match):
    _, path = data
    out = tmp_path / "F.npy"
    got, _, err = _run(capsys, "featurize", kernel, *extra, str(path), str(out))
    assert got == code
    assert match in _one_error_line(err)
    assert not out.exists()


def test_featurize_input_errors(capsys, tmp_path):
    out = str(tmp_path / "F.npy")
    got, _, err = _run(capsys, "featurize", "gaussian", str(tmp_path / "missing.csv"), out)
    assert got == 2 and "does not exist" in _one_error_line(err)
    bad = tmp_path / "bad.csv"
    bad.write_text("1,2\n3,oops\n")
    got, _, err = _run(capsys, "featurize", "gaussian", str(bad), out)
    assert got == 1 and "bad.csv:2: feature field 1 is not a number" in _one_error_line(err)
    got, _, err = _run(capsys, "featurize", "gaussian", str(bad), str(tmp_path / "F.txt"))
    assert got == 2 and "must end with .npy" in _one_error_line(err)


# -- plot and demo --------------------------------------------------------------------------------
def test_plot_writes_png(capsys, tmp_path):
    out = tmp_path / "m.png"
    code, stdout, _ = _run(capsys, "plot", "delta_gaussian", "--dim", "3", "-o", str(out), "--dpi", "50")
    assert code == 0 and out.exists() and out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_reports_error_and_time(capsys):
    code, out, _ = _run(capsys, "demo", "--subsample", "300", "--repeats", "2", "--components", "256")
    assert code == 0
    assert "digits" in out and "verdict    RKKS" in out
    lines = [ln for ln in out.splitlines() if "relative Frobenius error" in ln]
    assert len(lines) == 2  # rff and gorf
    errs = [float(ln.split("=")[1].split()[0]) for ln in lines]
    assert all(0 < e < 1 for e in errs)


def test_demo_without_sklearn_says_so(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    code, out, _ = _run(capsys, "demo", "--subsample", "200", "--repeats", "2", "--components", "64")
    assert code == 0
    assert "scikit-learn not installed" in out or "neither scikit-learn nor the shared data" in out


# -- a real process -------------------------------------------------------------------------------
def test_subprocess_entry_point():
    # one real process: python -m spectralkit, exit status and stdout as a shell sees them
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    ok = subprocess.run([sys.executable, "-m", "spectralkit", "check", "gaussian", "--dim", "2", "--json"],
                        capture_output=True, text=True, timeout=300, env=env)
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "PD"


@pytest.mark.slow
def test_featurize_truncated_divergent_kernel_reports_bias(capsys, tmp_path):
    # a > 2: infinite mass in every d; --truncation gives a biased estimator, said on stderr and
    # recorded in the sidecar
    path = tmp_path / "small.csv"
    path.write_text("0.1,0.2\n0.5,0.9\n0.3,0.3\n")
    out = tmp_path / "F.npy"
    code, _, err = _run(capsys, "featurize", "spherical_polynomial:a=3,p=2", "--truncation", "20", "-n", "16",
                        str(path), str(out))
    assert code == 0
    assert "spectralkit: warning:" in err and "BIASED" in err
    side = json.loads((tmp_path / "F.json").read_text())
    assert side["truncation"] == 20.0 and side["truncation_bias_max"] > 0
    assert "truncation bias" in side["usage"]


def test_python_dash_m_runs_the_demo_by_default(monkeypatch):
    import runpy

    import spectralkit.cli as cli

    calls = []
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(argv) or 0)
    for argv, expected in ((["spectralkit"], ["demo"]), (["spectralkit", "check", "gaussian"], ["check", "gaussian"])):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exc:
            runpy.run_module("spectralkit", run_name="__main__")
        assert exc.value.code == 0 and calls[-1] == expected


def test_missing_extra_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    code, _, err = _run(capsys, "plot", "gaussian", "--dim", "2", "-o", str(tmp_path / "a.png"))
    assert code == 1 and "pip install 'spectralkit[plot]'" in _one_error_line(err)
