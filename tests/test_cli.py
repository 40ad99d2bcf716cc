"""The command line: check / plot / featurize / demo, one-line errors and exit codes."""

import bz2
import errno
import gzip
import json
import lzma
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core import event as numba_event

from spectralkit import cli
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
@pytest.mark.parametrize(
    "argv", [["--help"], ["check", "--help"], ["plot", "--help"], ["featurize", "--help"], ["demo", "--help"]]
)
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
    args = {"dim": X.shape[1], "n_components": 32, "method": "gorf", "random_state": 5}
    args.update(kw)
    return RandomFeatures("delta_gaussian", **args).fit(X)


def test_featurize_npy_streams_and_writes_sidecar(capsys, data, tmp_path, monkeypatch):
    X, path = data
    seen = []
    real = RandomFeatures.transform

    def spy(self, Xc, out=None):
        seen.append(len(Xc))
        return real(self, Xc, out=out)

    monkeypatch.setattr(RandomFeatures, "transform", spy)
    out = tmp_path / "F.npy"
    code, stdout, _ = _run(
        capsys,
        "featurize",
        "delta_gaussian",
        "--dim",
        "4",
        "--components",
        "32",
        "--method",
        "gorf",
        "--seed",
        "5",
        "--chunk-rows",
        "50",
        str(path),
        str(out),
    )
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
    code, _, err = _run(
        capsys,
        "featurize",
        "matern:nu=1.5",
        "-n",
        "16",
        "--seed",
        "2",
        "--dtype",
        "float32",
        "--labels",
        str(lab),
        "--progress",
        "always",
        "--chunk-rows",
        "16",
        str(path),
        str(out),
    )
    assert code == 0
    assert "40/40 rows (100%)" in err
    F = np.load(out)
    assert F.dtype == np.float32 and F.shape == (40, 16)
    rf = RandomFeatures("matern:nu=1.5", dim=3, n_components=16, random_state=2).fit(X)
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
    ref = RandomFeatures("gaussian", dim=2, n_components=8, random_state=0).fit(X)
    np.testing.assert_array_equal(np.load(out), ref.transform(X))


@pytest.mark.parametrize(
    "kernel, extra, code, match",
    [
        ("delta_gaussian", ["--dim", "5"], 2, "--dim 5 does not match the 4 features"),
        ("spherical_polynomial:a=3,p=2", [], 1, "infinite mass"),
        ("delta_gaussian", ["--components", "1"], 1, "n_components is too small for an indefinite kernel"),
        ("spherical_polynomial:a=3,p=1", ["--truncation", "20"], 1, "truncation=20 is refused"),
        ("gaussian:lengthscale=2", [], 2, "--lengthscale: kernel gaussian(l=2) has its own length scale 2"),
        ("gaussian", ["--gamma", "1", "--lengthscale", "2"], 2, "gamma and lengthscale are exclusive"),
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
    code, _, _ = _run(capsys, "plot", "delta_gaussian", "--dim", "3", "-o", str(out), "--dpi", "50")
    assert code == 0 and out.exists() and out.stat().st_size > 10_000
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_demo_reports_error_and_time(capsys):
    code, out, _ = _run(capsys, "demo", "--subsample", "300", "--repeats", "2", "--components", "256")
    assert code == 0
    assert "real 8x8 handwritten digits" in out and "verdict    RKKS" in out
    assert "meaning    indefinite, finite total mass" in out
    assert "(m+ + m-)^2 = 4" in out  # delta-Gaussian in d = 64: Jordan masses 1 and 1
    lines = [ln for ln in out.splitlines() if "relative Frobenius error" in ln]
    assert len(lines) == 2  # rff and gorf
    errs = [float(ln.split("=")[1].split()[0]) for ln in lines]
    assert all(0 < e < 1 for e in errs)
    (base,) = [ln for ln in out.splitlines() if ln.startswith("baseline   scikit-learn RBFSampler")]
    (reading,) = [ln for ln in out.splitlines() if ln.startswith("reading    gorf's error is ")]
    base_err = float(base.split("points: ")[1].split()[0])
    ratio = float(reading.split("is ")[1].split("x")[0])
    assert ratio == pytest.approx(errs[1] / base_err, rel=0.01)


def test_demo_uses_real_data_on_a_core_install(capsys, monkeypatch):
    # scikit-learn is a core dependency: the default data are always the real digits, and
    # synthetic data come only when asked for, saying so
    code, out, _ = _run(capsys, "demo", "--subsample", "50", "--repeats", "1", "--components", "64")
    assert code == 0 and "scikit-learn's digits" in out and "SYNTHETIC" not in out
    assert "n/a (one draw)" in out  # no standard deviation from a single draw
    code, out, _ = _run(
        capsys, "demo", "--dataset", "synthetic", "--subsample", "50", "--repeats", "2", "-n", "32"
    )
    assert code == 0 and "SYNTHETIC data (asked for)" in out


def test_demo_refuses_a_gram_of_one_point(capsys):
    code, _, err = _run(capsys, "demo", "--subsample", "1")
    assert code == 2
    assert "--subsample must be an integer >= 2, got 1" in err


def test_demo_letter_without_the_data_says_where_it_looks(capsys, monkeypatch):
    monkeypatch.setattr(cli, "_shared_data_dir", lambda: None)
    code, _, err = _run(capsys, "demo", "--dataset", "letter")
    assert code == 2
    assert "--dataset letter needs ../shared/data/letter-recognition.data" in err


# -- a real process -------------------------------------------------------------------------------
def test_subprocess_entry_point():
    # one real process: python -m spectralkit, exit status and stdout as a shell sees them
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    ok = subprocess.run(
        [sys.executable, "-m", "spectralkit", "check", "gaussian", "--dim", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "PD"


@pytest.mark.slow
def test_featurize_truncated_divergent_kernel_reports_bias(capsys, tmp_path):
    # a > 2: infinite mass in every d; --truncation gives a biased estimator, said on stderr and
    # recorded in the sidecar
    path = tmp_path / "small.csv"
    path.write_text("0.1,0.2\n0.5,0.9\n0.3,0.3\n")
    out = tmp_path / "F.npy"
    code, _, err = _run(
        capsys,
        "featurize",
        "spherical_polynomial:a=3,p=2",
        "--truncation",
        "20",
        "-n",
        "16",
        str(path),
        str(out),
    )
    assert code == 0
    assert "spectralkit: warning:" in err and "BIASED" in err
    side = json.loads((tmp_path / "F.json").read_text())
    assert side["truncation"] == 20.0 and side["truncation_bias_max"] > 0
    assert "truncation bias" in side["usage"]


def test_python_dash_m_runs_the_demo_by_default(monkeypatch):
    import runpy

    calls = []
    monkeypatch.setattr(cli, "main", lambda argv: calls.append(argv) or 0)
    for argv, expected in (
        (["spectralkit"], ["demo"]),
        (["spectralkit", "check", "gaussian"], ["check", "gaussian"]),
    ):
        monkeypatch.setattr(sys, "argv", argv)
        with pytest.raises(SystemExit) as exc:
            runpy.run_module("spectralkit", run_name="__main__")
        assert exc.value.code == 0 and calls[-1] == expected


def test_missing_extra_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    code, _, err = _run(capsys, "plot", "gaussian", "--dim", "2", "-o", str(tmp_path / "a.png"))
    assert code == 1 and "pip install 'spectralkit[plot]'" in _one_error_line(err)


# -- featurize never touches its input and writes all outputs or none ------------------------------
def _snapshot(directory):
    """{name: bytes} of the regular files of a directory (symlinks as their target path)."""
    snap = {}
    for name in sorted(os.listdir(directory)):
        path = os.path.join(directory, name)
        if os.path.islink(path):
            snap[name] = "-> " + os.readlink(path)
        elif os.path.isfile(path):
            snap[name] = Path(path).read_bytes()
    return snap


@pytest.mark.parametrize(
    "output, labels, match",
    [
        ("X.npy", None, "OUTPUT 'X.npy' is the same file as INPUT 'X.npy': refusing to overwrite the input"),
        ("./X.npy", None, "OUTPUT './X.npy' is the same file as INPUT 'X.npy'"),
        ("sub/../X.npy", None, "OUTPUT 'sub/../X.npy' is the same file as INPUT"),
        ("{abs}/X.npy", None, "is the same file as INPUT 'X.npy'"),
        ("link.npy", None, "OUTPUT 'link.npy' is the same file as INPUT"),  # symlink to the input
        ("hard.npy", None, "OUTPUT 'hard.npy' is the same file as INPUT"),  # hard link
        ("sublink/X.npy", None, "OUTPUT 'sublink/X.npy' is the same file as INPUT"),  # symlinked directory
        ("F.npy", "X.npy", "--labels 'X.npy' is the same file as INPUT 'X.npy'"),
        ("F.npy", "./sub/../hard.npy", "--labels './sub/../hard.npy' is the same file as INPUT"),
        ("F.npy", "F.npy", "--labels 'F.npy' is the same file as OUTPUT 'F.npy': two outputs cannot be one"),
        ("F.npy", "sub/../F.npy", "--labels 'sub/../F.npy' is the same file as OUTPUT 'F.npy'"),
        ("F.npy", "tojson.npy", "the sidecar of OUTPUT 'F.json' is the same file as --labels 'tojson.npy'"),
        ("in.npy", None, "the sidecar of OUTPUT 'in.json' is the same file as INPUT 'in.json'"),
        ("dir.npy", None, "OUTPUT 'dir.npy' is a directory"),
        ("G.npy", None, "the sidecar 'G.json' is a directory"),
        ("nodir/F.npy", None, "OUTPUT 'nodir/F.npy': directory 'nodir' does not exist"),
    ],
)
def test_featurize_refuses_before_touching_anything(capsys, tmp_path, monkeypatch, output, labels, match):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(0)
    np.save("X.npy", rng.uniform(size=(20, 3)))
    os.mkdir("sub")
    os.mkdir("dir.npy")
    os.mkdir("G.json")
    os.symlink("X.npy", "link.npy")
    os.link("X.npy", "hard.npy")
    os.symlink("sub/..", "sublink")
    os.symlink("F.json", "tojson.npy")  # a dangling link onto the sidecar-to-be
    Path("in.json").write_text("1,2\n3,4\n")
    # the input named in.json: OUTPUT in.npy would put its sidecar on it
    inp = "in.json" if output == "in.npy" else "X.npy"
    before = _snapshot(tmp_path)
    argv = ["featurize", "gaussian", "-n", "8", inp, output.format(abs=tmp_path)]
    if labels is not None:
        argv += ["--labels", labels]
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert match in _one_error_line(err)
    assert _snapshot(tmp_path) == before  # nothing read-then-written, nothing created


def _labelled_svm(path, n=300, d=3, seed=1):
    rng = np.random.default_rng(seed)
    X = np.round(rng.uniform(size=(n, d)), 4)
    y = rng.integers(0, 2, n) * 2 - 1
    Path(path).write_text(
        "".join(
            f"{label} " + " ".join(f"{j + 1}:{v}" for j, v in enumerate(row)) + "\n"
            for label, row in zip(y, X)
        )
    )
    return X, y


@pytest.mark.parametrize("existed", [True, False])
@pytest.mark.parametrize("failing_rename", [2, 3])  # the labels or the sidecar rename fails
def test_featurize_rename_failure_restores_every_output(
    capsys, tmp_path, monkeypatch, existed, failing_rename
):
    monkeypatch.chdir(tmp_path)
    _labelled_svm("in.svm")
    before = _old_outputs(tmp_path) if existed else _snapshot(tmp_path)
    real, calls = os.replace, []

    def replace(src, dst):
        # only the outputs' renames count: a cold cache of derived measures renames its own files first
        if Path(dst).name in ("F.npy", "y.npy", "F.json"):
            calls.append(str(dst))
            if len(calls) == failing_rename:
                raise OSError(errno.EIO, "simulated rename failure")
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", "--labels", "y.npy", "in.svm", "F.npy")
    monkeypatch.setattr(os, "replace", real)
    assert code == 1
    line = _one_error_line(err)
    assert "cannot rename the outputs into place" in line and "simulated rename failure" in line
    assert line.endswith("; no output was changed")
    assert calls[:failing_rename] == ["F.npy", "y.npy", "F.json"][:failing_rename]  # the sidecar last
    assert _snapshot(tmp_path) == before  # old contents back, new files removed, no temporaries


def test_featurize_replaces_existing_outputs_atomically(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, y = _labelled_svm("in.svm")
    for name in ("F.npy", "y.npy", "F.json"):
        Path(name).write_bytes(b"old")
    real, renamed = os.replace, []
    monkeypatch.setattr(os, "replace", lambda src, dst: renamed.append(str(dst)) or real(src, dst))
    code, _, _ = _run(capsys, "featurize", "gaussian", "-n", "8", "--labels", "y.npy", "in.svm", "F.npy")
    monkeypatch.setattr(os, "replace", real)
    assert code == 0 and renamed == ["F.npy", "y.npy", "F.json"]  # the sidecar last
    assert np.load("F.npy").shape == (300, 8) and np.array_equal(np.load("y.npy"), y)
    assert json.loads(Path("F.json").read_text())["output"]["shape"] == [300, 8]
    assert sorted(os.listdir(tmp_path)) == ["F.json", "F.npy", "in.svm", "y.npy"]  # no .part / .old


# featurize in chunks of 50 rows, with labels: the signal tests' command
_CHUNKED_FEATURIZE = (
    "featurize",
    "gaussian",
    "-n",
    "8",
    "--chunk-rows",
    "50",
    "--labels",
    "y.npy",
    "in.svm",
    "F.npy",
)


def _old_outputs(folder):
    """Give the three outputs old contents; the folder's snapshot to compare with afterwards."""
    for name in ("F.npy", "y.npy", "F.json"):
        (Path(folder) / name).write_bytes(b"old " + name.encode())
    return _snapshot(folder)


def test_featurize_sigterm_in_process_cleans_up(capsys, tmp_path, monkeypatch):
    # SIGTERM while features are being written: temporaries removed, old outputs untouched, 143
    monkeypatch.chdir(tmp_path)
    _labelled_svm("in.svm")
    before = _old_outputs(tmp_path)
    real, seen = RandomFeatures.transform, []

    def transform(self, X, out=None):
        seen.append(signal.getsignal(signal.SIGTERM))
        if len(seen) == 2:
            assert any(p.endswith(".part") for p in os.listdir("."))
            os.kill(os.getpid(), signal.SIGTERM)
        return real(self, X, out=out)

    monkeypatch.setattr(RandomFeatures, "transform", transform)
    previous = signal.getsignal(signal.SIGTERM)
    code, out, err = _run(capsys, *_CHUNKED_FEATURIZE)
    assert code == 143 and out == ""
    assert _one_error_line(err) == "spectralkit: error: terminated by SIGTERM"
    assert len(seen) == 2 and seen[0] is not previous  # the CLI's handler was installed ...
    assert signal.getsignal(signal.SIGTERM) is previous  # ... and the previous one restored
    assert _snapshot(tmp_path) == before


class _SwallowsInDel:
    """Sends SIGTERM from its __del__, where Python reports and discards the handler's exception
    (what happened when the signal arrived inside llvmlite's __del__ while numba compiled)."""

    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)


class _RaisesInDel:
    def __del__(self):
        raise ValueError("not ours")


@pytest.fixture
def discarded(monkeypatch):
    """The types of the exceptions Python discards (in a __del__) and reports during the test."""
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type.__name__))
    return seen


def test_a_discarded_signal_raise_is_not_reported_other_discards_are(discarded):
    # Python reports a discarded exception as "Exception ignored ..." with a traceback on stderr;
    # the CLI's own signal exception is raised again later, so its report would be noise.
    hook = sys.unraisablehook
    with cli._signal_handlers():
        _SwallowsInDel()
        assert cli._signal_state["received"] == signal.SIGTERM  # remembered, not lost
        _RaisesInDel()
    assert discarded == ["ValueError"]
    assert sys.unraisablehook is hook  # restored


class _KillOnCompile(numba_event.Listener):
    def on_start(self, event):
        os.kill(os.getpid(), signal.SIGTERM)

    def on_end(self, event):
        pass


def test_a_signal_while_numba_compiles_waits_for_the_compile():
    # an exception raised inside numba's compiler leaves it half-built (CI saw "no compiled
    # object yet" and errors at exit): the signal is remembered and raised after the compile
    with cli._signal_handlers():
        with numba_event.install_listener("numba:compile", _KillOnCompile()):
            assert numba.njit(lambda x: x + 1)(1) == 2  # a real compile, signalled half-way
        assert cli._signal_state["received"] == signal.SIGTERM
        with pytest.raises(cli._Terminated):
            cli._raise_if_signalled()


def test_featurize_sigterm_while_numba_compiles_stops_after_the_compile(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _labelled_svm("in.svm")
    before = _old_outputs(tmp_path)
    real, calls = RandomFeatures.transform, []

    def transform(self, X, out=None):
        with numba_event.trigger_event("numba:compiler_lock"):  # what numba's compiler does
            os.kill(os.getpid(), signal.SIGTERM)
            calls.append("compiled")  # not interrupted
        return real(self, X, out=out)

    monkeypatch.setattr(RandomFeatures, "transform", transform)
    code, out, err = _run(capsys, *_CHUNKED_FEATURIZE)
    assert calls == ["compiled"]  # the first chunk finished; the second one did not start
    assert code == 143 and out == "" and _one_error_line(err) == "spectralkit: error: terminated by SIGTERM"
    assert _snapshot(tmp_path) == before


def test_featurize_sigterm_whose_raise_is_discarded_still_stops(capsys, tmp_path, monkeypatch, discarded):
    monkeypatch.chdir(tmp_path)
    _labelled_svm("in.svm")
    before = _old_outputs(tmp_path)
    real, calls = RandomFeatures.transform, []

    def transform(self, X, out=None):
        calls.append(1)
        if len(calls) == 1:
            _SwallowsInDel()  # collected at once: the signal's exception is discarded
        return real(self, X, out=out)

    monkeypatch.setattr(RandomFeatures, "transform", transform)
    code, out, err = _run(capsys, *_CHUNKED_FEATURIZE)
    assert discarded == []  # the raise was discarded without a report ...
    assert code == 143 and out == ""  # ... and the next chunk raised it again
    assert _one_error_line(err) == "spectralkit: error: terminated by SIGTERM"
    assert len(calls) == 1
    assert _snapshot(tmp_path) == before


def test_a_discarded_sigterm_after_the_last_chunk_still_exits_143(capsys, tmp_path, monkeypatch, discarded):
    # the raise discarded during the last chunk: the outputs are not renamed into place
    monkeypatch.chdir(tmp_path)
    _labelled_svm("in.svm")
    before = _snapshot(tmp_path)
    real = RandomFeatures.transform

    def transform(self, X, out=None):
        _SwallowsInDel()
        return real(self, X, out=out)

    monkeypatch.setattr(RandomFeatures, "transform", transform)
    code, out, err = _run(capsys, "featurize", "gaussian", "-n", "8", "in.svm", "F.npy")
    assert discarded == []
    assert code == 143 and _one_error_line(err) == "spectralkit: error: terminated by SIGTERM"
    assert _snapshot(tmp_path) == before


def test_featurize_sigterm_during_the_renames_waits_for_them(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _, y = _labelled_svm("in.svm")
    real = os.replace

    def replace(src, dst):
        if str(dst) == "F.npy":
            os.kill(os.getpid(), signal.SIGTERM)  # arrives between the renames: must not split them
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", "--labels", "y.npy", "in.svm", "F.npy")
    monkeypatch.setattr(os, "replace", real)
    assert code == 143 and _one_error_line(err) == "spectralkit: error: terminated by SIGTERM"
    # all three outputs complete and consistent, nothing temporary left
    assert np.load("F.npy").shape == (300, 8) and np.array_equal(np.load("y.npy"), y)
    assert json.loads(Path("F.json").read_text())["output"]["shape"] == [300, 8]
    assert sorted(os.listdir(tmp_path)) == ["F.json", "F.npy", "in.svm", "y.npy"]


# the real command in a real process, with a reader that stops after the first chunk until its
# stdin has data (the test never writes any): the run is as long as needed, without timing luck
_GATED_CLI = """
import os, signal, sys
import spectralkit.io as io
from spectralkit.cli import main

# the default actions, as a command started from a terminal has them: a background job of a
# non-interactive shell (how CI may start the suite) inherits SIGQUIT and SIGINT ignored, and the
# CLI leaves ignored signals ignored
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
    signal.signal(s, signal.SIG_DFL)

real_iter_chunks = io.iter_chunks

def gated(*args, **kwargs):
    chunks = real_iter_chunks(*args, **kwargs)
    def gen():
        for k, chunk in enumerate(chunks):
            if k == 1:
                os.read(0, 1)  # blocks until SIGTERM
            yield chunk
    return gen()

io.iter_chunks = gated
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1])
def test_featurize_sigterm_real_process(tmp_path, signum):
    """SIGTERM, and the other signals that end a process by default, leave no partial file."""
    _labelled_svm(tmp_path / "in.svm", n=2000)
    before = _old_outputs(tmp_path)
    env = dict(os.environ, PYTHONWARNINGS="error")  # a stray warning would be an error line
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _GATED_CLI,
            "featurize",
            "gaussian",
            "-n",
            "8",
            "--lengthscale",  # a number: no Var(X) pass, the gate stops the featurizing pass
            "1",
            "--chunk-rows",
            "100",
            "--labels",
            "y.npy",
            "in.svm",
            "F.npy",
        ],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 240
        while len([p for p in os.listdir(tmp_path) if p.endswith(".part")]) < 3:
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the temporary files never appeared"
            time.sleep(0.02)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + signum, err
    assert out == "" and err == f"spectralkit: error: terminated by {signal.Signals(signum).name}\n"
    assert _snapshot(tmp_path) == before  # temporaries gone, the old outputs and the input as they were


# -- featurize: input handling through the CLI ------------------------------------------------------
def test_featurize_header_option_and_bom(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("bom.csv").write_bytes(b"\xef\xbb\xbf0.5,1\r\n0.25,2\r\n")
    code, out, _ = _run(capsys, "featurize", "gaussian", "-n", "8", "bom.csv", "F.npy")
    assert code == 0 and "(2 x 8 float64)" in out  # the BOM row is data, not a header
    code, out, _ = _run(capsys, "featurize", "gaussian", "-n", "8", "--header", "yes", "bom.csv", "F.npy")
    assert code == 0 and "(1 x 8 float64)" in out
    Path("na.csv").write_text("NA,1\n3,4\n")
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", "na.csv", "F.npy")
    assert code == 1 and "na.csv:1: feature field 0 is a missing value 'NA'" in _one_error_line(err)
    Path("z.svm").write_text("1 0:0.5 1:2\n")
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", "z.svm", "F.npy")
    assert code == 1 and "--zero-based" in _one_error_line(err)
    code, out, _ = _run(capsys, "featurize", "gaussian", "-n", "8", "--zero-based", "z.svm", "F.npy")
    assert code == 0 and "(1 x 8 float64)" in out
    code, _, err = _run(capsys, "featurize", "gaussian", "--header", "maybe", "z.svm", "F.npy")
    assert code == 2 and "argument --header: invalid choice: 'maybe'" in _one_error_line(err)


@pytest.mark.parametrize("kind", ["bz2", "gzip", "xz"])
def test_featurize_damaged_compressed_input_is_one_line(capsys, tmp_path, kind):
    compress = {"bz2": bz2.compress, "gzip": gzip.compress, "xz": lzma.compress}[kind]
    data = compress("".join(f"{k} 1:{k / 7:.4f} 2:0.5\n" for k in range(200)).encode())
    path = tmp_path / "in.dat"
    path.write_bytes(data[: len(data) // 2])
    name = {"bz2": "bzip2", "gzip": "gzip", "xz": "xz"}[kind]
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", str(path), str(tmp_path / "F.npy"))
    assert code == 1
    assert f"cannot read INPUT: {path}: truncated {name} file" in _one_error_line(err)
    assert sorted(os.listdir(tmp_path)) == ["in.dat"]


def test_featurize_text_labels_and_fifo_are_refused_early(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("0.5,cat\n0.25,dog\n")
    code, _, err = _run(
        capsys,
        "featurize",
        "gaussian",
        "-n",
        "8",
        "--label-column",
        "1",
        "--labels",
        str(tmp_path / "y.npy"),
        str(path),
        str(tmp_path / "F.npy"),
    )
    assert code == 1 and "--labels needs numeric labels" in _one_error_line(err)
    os.mkfifo(tmp_path / "fifo")
    code, _, err = _run(capsys, "featurize", "gaussian", str(tmp_path / "fifo"), str(tmp_path / "F.npy"))
    assert code == 1 and "is not a regular file (a pipe, socket or device)" in _one_error_line(err)
    assert sorted(os.listdir(tmp_path)) == ["fifo", "t.csv"]


# -- one line for every failure: memory, disk, warnings, third-party arithmetic --------------------
def test_memory_errors_are_one_clear_line(capsys, data, tmp_path, monkeypatch):
    _, path = data

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(RandomFeatures, "transform", no_memory)
    code, _, err = _run(
        capsys,
        "featurize",
        "gaussian",
        "-n",
        "64",
        "--chunk-rows",
        "1000",
        str(path),
        str(tmp_path / "F.npy"),
    )
    assert code == 1
    assert _one_error_line(err) == (
        "spectralkit: error: not enough memory for chunks of --chunk-rows 1000 "
        "rows: need about 0.00109 GB per chunk (4 input and 64 output columns); "
        "lower --chunk-rows"
    )
    monkeypatch.setattr(RandomFeatures, "fit", no_memory)
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "1000000", str(path), str(tmp_path / "F.npy"))
    assert code == 1
    assert _one_error_line(err) == (
        "spectralkit: error: not enough memory for --components 1000000 in "
        "dimension 4: the frequencies alone need about 0.032 GB"
    )
    assert sorted(os.listdir(tmp_path)) == ["X.npy"]


def test_disk_full_is_one_line(capsys, data, tmp_path, monkeypatch):
    _, path = data

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "posix_fallocate", full)
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", str(path), str(tmp_path / "F.npy"))
    assert code == 1
    assert "not enough disk space for OUTPUT" in _one_error_line(err)
    assert sorted(os.listdir(tmp_path)) == ["X.npy"]


def test_warnings_become_one_line_and_never_precede_an_error(capsys, data, tmp_path, monkeypatch):
    import warnings

    from spectralkit import io

    _, path = data
    real_scan = io.scan

    def noisy_scan(*args, **kwargs):
        warnings.warn("overflow encountered in cast\n  (second line)", RuntimeWarning, stacklevel=1)
        warnings.warn("a deprecation for developers", DeprecationWarning, stacklevel=1)
        return real_scan(*args, **kwargs)

    monkeypatch.setattr(io, "scan", noisy_scan)
    code, _, err = _run(capsys, "featurize", "gaussian", "-n", "8", str(path), str(tmp_path / "F.npy"))
    assert code == 0
    assert err == "spectralkit: warning: overflow encountered in cast (second line)\n"
    # an error found after the (warning) scan: the shape matrix does not fit the 4 input columns
    M = tmp_path / "M.txt"
    M.write_text("1 0\n0 1\n")
    code, _, err = _run(
        capsys, "featurize", "gaussian", "--shape-matrix", str(M), str(path), str(tmp_path / "F.npy")
    )
    assert code == 2
    assert err.count("\n") == 1 and "shape_matrix must be a 4 x 4 matrix" in _one_error_line(err)


def test_non_finite_features_are_refused(capsys, data, tmp_path, monkeypatch):
    _, path = data
    real = RandomFeatures.transform

    def nan_transform(self, X, out=None):
        real(self, X, out=out)
        out[0, 0] = np.nan
        return out

    monkeypatch.setattr(RandomFeatures, "transform", nan_transform)
    code, _, err = _run(
        capsys, "featurize", "gaussian", "-n", "8", "--chunk-rows", "100", str(path), str(tmp_path / "F.npy")
    )
    assert code == 1
    assert "the features of input rows 0 to 99 are not finite" in _one_error_line(err)
    assert sorted(os.listdir(tmp_path)) == ["X.npy"]


@pytest.mark.parametrize(
    "exc",
    [
        OverflowError("int too large to convert to float"),
        ZeroDivisionError("division by zero"),
        RecursionError("too deep"),
    ],
)
def test_failed_computations_are_not_internal_errors(capsys, data, tmp_path, monkeypatch, exc):
    _, path = data

    def fail(*args, **kwargs):
        raise exc

    monkeypatch.setattr(RandomFeatures, "fit", fail)
    code, _, err = _run(capsys, "featurize", "gaussian", str(path), str(tmp_path / "F.npy"))
    assert code == 1
    assert _one_error_line(err) == f"spectralkit: error: the computation failed ({type(exc).__name__}: {exc})"


# -- fuzz: random inputs and argument vectors, in-process, seeded ---------------------------------
_NUMBERS = [
    "0",
    "1",
    "-2.5",
    "3.25e-3",
    "1e308",
    "-1e308",
    "1e400",
    "nan",
    "-inf",
    "inf",
    "1_0",
    "0x10",
    "+7",
    ".5",
    "5.",
    "1" * 400,
]
_JUNK = ["", " ", "NA", "n/a", "?", "abc", "\x00", "é", "\ufeff1", '"1"', "--", "None"]


def _fuzz_csv(rng, clean):
    n_rows, n_cols = int(rng.integers(0 if not clean else 1, 9)), int(rng.integers(1, 6))
    sep = "," if clean else str(rng.choice([",", "\t", " ", ";"]))
    lines = [sep.join(f"c{j}" for j in range(n_cols))] if rng.random() < 0.3 else []
    for _ in range(n_rows):
        if not clean and rng.random() < 0.1:
            lines.append(str(rng.choice(["# comment", "", "   "])))
        width = n_cols + (int(rng.integers(-1, 2)) if not clean and rng.random() < 0.1 else 0)
        if clean or rng.random() < 0.6:
            values = rng.normal(size=max(width, 0)) * 10.0 ** rng.integers(-3, 4)
            lines.append(sep.join(f"{v:.6g}" for v in values))
        else:
            pool = _NUMBERS if rng.random() < 0.7 else _JUNK
            lines.append(sep.join(str(rng.choice(pool)) for _ in range(max(width, 0))))
    if not clean and rng.random() < 0.05:
        lines.append(",".join(["1.5"] * 20000))  # a very long line
    nl = "\r\n" if rng.random() < 0.2 else "\n"
    text = nl.join(lines) + (nl if rng.random() < 0.8 else "")
    return ("\ufeff" if rng.random() < 0.15 else "") + text


def _fuzz_libsvm(rng, clean):
    lines = []
    for _ in range(int(rng.integers(1 if clean else 0, 9))):
        label = str(rng.choice(["1", "-1", "0", "2.5", "+1"]))
        if not clean and rng.random() < 0.1:
            label = str(rng.choice(["nan", "x", "1e400", "1:2"]))
        idx = np.sort(rng.choice(np.arange(1, 8), size=int(rng.integers(0, 5)), replace=False))
        tokens = [label] + [f"{i}:{rng.normal():.5g}" for i in idx]
        if not clean and rng.random() < 0.25:
            bad = str(
                rng.choice(
                    [
                        "3:",
                        ":4",
                        "3:4:5",
                        "a:b",
                        "0:1",
                        "-1:2",
                        "1.5:2",
                        "2:nan",
                        "2:1e400",
                        "qid:3",
                        "qid:x",
                        "7",
                        "1:1",
                        "99999999999999999999:1",
                        "5:0x1",
                        "#c",
                    ]
                )
            )
            tokens.insert(int(rng.integers(1, len(tokens) + 1)), bad)
        lines.append(" ".join(tokens))
    nl = "\r\n" if rng.random() < 0.2 else "\n"
    return nl.join(lines) + nl


def _fuzz_npy(rng, path):
    shape = (int(rng.integers(0, 30)), int(rng.integers(0, 5)))
    kind = int(rng.integers(0, 8))
    arrays = [
        lambda: rng.normal(size=shape[0]),
        lambda: rng.normal(size=(2, 2, 2)),
        lambda: rng.normal(size=shape) + 1j,
        lambda: rng.integers(-5, 5, size=shape),
        lambda: np.array([["a", "b"]]),
        lambda: np.array([[1, None]], dtype=object),
    ]
    if kind < len(arrays):
        a = arrays[kind]()
    else:
        a = rng.normal(size=shape).astype(rng.choice([np.float16, np.float32, np.float64]))
        if a.size and rng.random() < 0.5:
            with np.errstate(over="ignore"):  # 1e300 is inf in float16 and float32
                a.flat[int(rng.integers(0, a.size))] = rng.choice([np.inf, np.nan, 1e300])
    np.save(path, a, allow_pickle=True)
    data = path.read_bytes()
    path.unlink()
    return data[: int(rng.integers(1, len(data)))] if rng.random() < 0.15 else data


def _fuzz_input(rng, directory):
    path = directory / str(rng.choice(["in.csv", "in.svm", "in.data", "in.npy", "in.gz"]))
    r = rng.random()
    if r < 0.06:
        data = b""
    elif r < 0.12:
        data = rng.bytes(int(rng.integers(1, 3000)))
    elif r < 0.45:
        data = _fuzz_csv(rng, clean=rng.random() < 0.5).encode()
    elif r < 0.8:
        data = _fuzz_libsvm(rng, clean=rng.random() < 0.5).encode()
    else:
        data = _fuzz_npy(rng, directory / "tmp.npy")
    if 0.06 <= r < 0.8 and rng.random() < 0.2:
        data = [bz2.compress, gzip.compress, lzma.compress][int(rng.integers(0, 3))](data)
        if rng.random() < 0.4:
            cut = bytearray(data[: int(rng.integers(1, len(data)))])
            if rng.random() < 0.5:  # a flipped bit instead of a truncation
                cut = bytearray(data)
                cut[int(rng.integers(0, len(cut)))] ^= 1 << int(rng.integers(0, 8))
            data = bytes(cut)
    path.write_bytes(data)
    return path


_FUZZ_KERNELS = (
    ["gaussian", "laplacian", "delta_gaussian", "matern:nu=1.5", "exp(-r**2)", "gaussian:lengthscale=2"],
    [
        "nosuch",
        "exp(-r",
        "gaussian:lengthscale=-1",
        "",
        "r",
        "spherical_polynomial:a=3,p=2",
        "exp(-r**2).real",
        "__import__('os')",
        "1e999*exp(-r)",
    ],
)
_FUZZ_OPTIONS = {  # option: (valid values, invalid values)
    "--dim": (["1", "2", "3", "4"], ["0", "-1", "x", "99999", "1e3"]),
    "--components": (["8", "16", "64", "2"], ["3", "0", "-2", "abc", "1e3"]),
    "--method": (["rff", "orf", "gorf"], ["bad"]),
    "--split": (["jordan", "terms"], ["x"]),
    "--feature-map": (["sincos", "cos"], ["x"]),
    "--seed": (["0", "5", str(2**40), str(2**70)], ["-1", "x"]),
    "--truncation": (["5"], ["0", "-1", "nan", "inf", "x"]),
    "--dtype": (["float32", "float64"], ["int8"]),
    "--chunk-rows": (["1", "3", "1000", str(10**12)], ["0", "x"]),
    "--format": (["npy", "csv", "libsvm"], ["parquet"]),
    "--label-column": (["0", "-1", "1"], ["5", "x"]),
    "--n-features": (["3", "7", "100"], ["0", "x"]),
    "--progress": (["never", "auto"], ["sometimes"]),
    "--header": (["auto", "yes", "no"], ["maybe"]),
    "--param": (["lengthscale=2"], ["c=1", "x", "l=nan"]),
    "--support": ([], ["-1", "x"]),  # valid supports mean slow derivations
}


def _pick(rng, values, p_invalid):
    valid, invalid = values
    return str(rng.choice(invalid if rng.random() < p_invalid or not valid else valid))


def _fuzz_argv(rng, directory, input_path):
    r = rng.random()
    if r < 0.06:
        argv = [
            "check",
            str(rng.choice(["gaussian", "laplacian", "nosuch", "exp(-r", ""])),
            "--dim",
            str(rng.choice(["1", "3", "0", "x", "5000"])),
        ]
        return argv + (["--json"] if rng.random() < 0.5 else [])
    if r < 0.08:
        return [
            "plot",
            "gaussian",
            "--dim",
            "2",
            "-o",
            str(rng.choice(["a.jpgx", "/no/dir/a.png", directory])),
        ]
    if r < 0.10:
        return str(rng.choice(["frobnicate", "demo --subsample 0", "--versio", "featurize"])).split()
    argv = ["featurize", _pick(rng, _FUZZ_KERNELS, 0.15)]
    for name in rng.choice(list(_FUZZ_OPTIONS), size=int(rng.integers(0, 5)), replace=False):
        argv += [str(name), _pick(rng, _FUZZ_OPTIONS[name], 0.1)]
    if rng.random() < 0.1:
        argv.append(str(rng.choice(["--zero-based", "--zero-based", "--frobnicate", "-q"])))
    if rng.random() < 0.25:
        labels = str(
            rng.choice(["y.npy", "y.npy", "y.npy", "y.txt", input_path.name, "F.npy", "nodir/y.npy"])
        )
        argv += ["--labels", str(directory / labels)]
    out = (
        "F.npy"
        if rng.random() < 0.8
        else str(rng.choice(["F.txt", input_path.name, "./" + input_path.name, "nodir/F.npy", "sub", "F"]))
    )
    positional = [str(input_path), str(directory / out)]
    if rng.random() < 0.03:
        positional = positional[: int(rng.integers(0, 2))]
    elif rng.random() < 0.03:
        positional.append("extra")
    argv += positional
    if rng.random() < 0.1:
        head, tail = argv[:2], argv[2:]
        rng.shuffle(tail)
        argv = head + tail
    return argv


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_fuzz_cli_inputs_and_arguments(capsys, tmp_path, seed):
    # every case: status 0/1/2, stderr empty or warning lines then at most one error line (exactly
    # one on failure, except argparse's help on a bare command), no internal error or traceback,
    # the input byte for byte unchanged, no temporary file left, a complete output on success
    rng = np.random.default_rng(seed)
    statuses = []
    for case in range(100):
        directory = tmp_path / f"case{case}"
        (directory / "sub").mkdir(parents=True)
        input_path = _fuzz_input(rng, directory)
        argv = _fuzz_argv(rng, directory, input_path)
        before = input_path.read_bytes()
        code = main(argv)
        _, err = capsys.readouterr()
        statuses.append(code)
        what = f"case {case}: {argv!r} -> {code}, stderr {err!r}"
        lines = [ln for ln in err.splitlines() if ln.strip()]
        errors = [ln for ln in lines if ln.startswith("spectralkit: error: ")]
        assert code in (0, 1, 2), what
        assert "Traceback" not in err and "internal error" not in err, what
        assert all(ln.startswith(("spectralkit: error: ", "spectralkit: warning: ")) for ln in lines), what
        if code == 0:
            assert not errors, what
        elif lines or code == 1:
            assert len(errors) == 1 and lines[-1] == errors[0], what
        assert input_path.read_bytes() == before, what
        assert not [p for p in os.listdir(directory) if p.endswith((".part", ".old"))], what
        if code == 0 and argv[0] == "featurize":
            info = json.loads((directory / "F.json").read_text())
            F = np.load(directory / "F.npy")
            assert list(F.shape) == info["output"]["shape"] and np.isfinite(F).all(), what
    # the grammar reaches every outcome
    assert {0, 1, 2} <= set(statuses)


def test_check_progress_option(capsys):
    assert main(["check", "gaussian", "-d", "2", "--progress", "always"]) == 0
    assert "verdict    PD" in capsys.readouterr().out
    assert main(["check", "gaussian", "-d", "2", "--progress", "sometimes"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_featurize_errors_of_the_features_are_not_reading_errors(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save("X.npy", np.random.default_rng(0).normal(size=(50, 3)))
    code, out, err = _run(
        capsys, "featurize", "gaussian", "-n", "8", "--lengthscale", "1e-300", "X.npy", "F.npy"
    )
    line = _one_error_line(err)
    assert code == 1 and out == "" and "cannot read INPUT" not in line
    assert line.startswith(
        "spectralkit: error: cannot featurize input rows 0 to 49 of 'X.npy': X is too large"
    )
    assert not list(tmp_path.glob("*.part")) and not Path("F.npy").exists()


def test_featurize_input_wider_than_the_largest_dimension_names_the_file(capsys, tmp_path):
    # a 5,000-column CSV (say, a one-line file of a wide matrix) is refused naming the file and the
    # limit, not with a bare "dim must be ..." or a memory estimate of the wrong thing
    path = tmp_path / "wide.csv"
    np.savetxt(path, np.random.default_rng(0).random((2, 5000)), delimiter=",", fmt="%.3g")
    code, out, err = _run(capsys, "featurize", "gaussian", str(path), str(tmp_path / "F.npy"))
    assert code == 1 and out == ""
    assert f"INPUT '{path}' has 5000 feature columns; the input dimension d is at most 4096" in err
    assert not (tmp_path / "F.npy").exists()


@pytest.mark.parametrize(
    "name, extra, match",
    [
        ("X.npy", ["--lengthscale", "1e-320"], "lengthscale=1e-320 is too small"),
        ("X.csv", ["--lengthscale", "1e-320", "--dtype", "float32"], "lengthscale=1e-320 is too small"),
        (
            "X.svm",
            ["--lengthscale", "1e-300", "--shape-matrix", "M.npy"],
            "with this shape_matrix is too small",
        ),
        ("X.csv", ["--lengthscale", "1e-300", "--dtype", "float32"], ") overflow float32"),
    ],
)
def test_featurize_tiny_lengthscale_prints_no_numpy_warning(
    capsys, tmp_path, monkeypatch, name, extra, match
):
    # "spectralkit: warning: overflow encountered in divide" used to precede the error
    monkeypatch.chdir(tmp_path)
    X = np.random.default_rng(0).normal(size=(20, 3))
    np.save("X.npy", X)
    np.savetxt("X.csv", X, delimiter=",")
    Path("X.svm").write_text("".join(f"1 1:{a} 2:{b} 3:{c}\n" for a, b, c in X))
    np.save("M.npy", 1e300 * np.eye(3))
    code, out, err = _run(capsys, "featurize", "gaussian", "-n", "8", *extra, name, "F.npy")
    line = _one_error_line(err)  # exactly one line: no warning line before it
    assert code == 1 and out == "" and match in line and "warning" not in err
    assert not Path("F.npy").exists()


def test_featurize_one_huge_line_is_refused_naming_the_file_the_line_and_the_limit(
    capsys, tmp_path, monkeypatch
):
    # a 300 MB one-line CSV used to be read whole (10 GB resident, minutes); now the scan stops
    # after MAX_LINE_CHARS characters (scaled down here)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(cli.io, "MAX_LINE_CHARS", 1000)
    Path("one.csv").write_text("0.125," * 5000 + "1")
    code, out, err = _run(capsys, "featurize", "gaussian", "one.csv", "F.npy")
    line = _one_error_line(err)
    assert code == 1 and out == "" and not Path("F.npy").exists()
    assert line == (
        "spectralkit: error: cannot read INPUT: one.csv:1: line longer than 1000 characters (the readers "
        "hold one line in memory): not a table of rows, one per line; check the line endings and the format"
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        # int(inf) raised OverflowError ("the computation failed"), int(nan) a bare ValueError
        ("matern:nu=inf", "nu must be a finite real number, got float inf"),
        ("matern:nu=nan", "nu must be a finite real number, got float nan"),
        # nu = 1e300 ran for more than 15 minutes and took 15 GB
        ("matern:nu=1e300", "nu must be <= 100 (smoothness nu in (0, 100]; for larger nu use gaussian)"),
        # "rho must be finite and >= 0" and "math domain error"
        ("gaussian:lengthscale=1e-320", "lengthscale must be >= 1e-100, got 1e-320"),
        ("gaussian:lengthscale=1e308", "lengthscale must be <= 1e+100 (length scale l in [1e-100, 1e100])"),
        ("delta_gaussian:sigma1=1e-200", "sigma1 must be >= 1e-100, got 1e-200"),
    ],
)
def test_check_extreme_family_parameters_are_usage_errors_naming_them(capsys, spec, message):
    code, out, err = _run(capsys, "check", spec, "--dim", "2")
    line = _one_error_line(err)
    assert code == 2 and out == "" and line.startswith(f"spectralkit: error: kernel '{spec}': {message}"), (
        line
    )


def test_check_a_support_below_1e_100_is_a_usage_error(capsys):
    # support 1e-320 failed inside numpy: "Geometric sequence cannot include zero"
    code, out, err = _run(capsys, "check", "exp(-r^2)", "--support", "1e-320", "--dim", "2")
    line = _one_error_line(err)
    assert code == 2 and out == "" and line.endswith("support must be >= 1e-100, got 1e-320"), line
