"""featurize's feature-map options: generated from the parameter table, lengthscale and shape matrix."""

import json

import numpy as np
import pytest

from spectralkit.cli import build_parser, main
from spectralkit.features import FEATURE_PARAMS, RandomFeatures


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _error(err):
    """The single stderr line of a failed command (no traceback, no warnings before it)."""
    assert err.count("\n") == 1 and err.startswith("spectralkit: error: "), err
    assert "Traceback" not in err
    return err.strip()


@pytest.fixture
def data(tmp_path):
    X = np.random.default_rng(0).uniform(size=(30, 3))
    path = tmp_path / "X.npy"
    np.save(path, X)
    return X, path


def _spd(d=3, seed=1):
    A = np.random.default_rng(seed).normal(size=(d, d))
    return A @ A.T + 0.5 * np.eye(d)


def test_every_table_parameter_is_an_option_with_the_table_doc(capsys):
    build_parser().parse_args(["featurize", "gaussian", "in.npy", "out.npy"])  # parses
    with pytest.raises(SystemExit):
        build_parser().parse_args(["featurize", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for p in FEATURE_PARAMS:
        if p.name == "kernel":  # the positional KERNEL
            continue
        assert f"{p.name}: {' '.join(p.doc.split())}" in text, p.name


@pytest.mark.parametrize("suffix", [".npy", ".txt"])
def test_lengthscale_and_shape_matrix_reach_the_features(capsys, tmp_path, data, suffix):
    X, path = data
    M = _spd()
    mfile = tmp_path / f"M{suffix}"
    if suffix == ".npy":
        np.save(mfile, M)
    else:
        np.savetxt(mfile, M, fmt="%.17g")
    out = tmp_path / "F.npy"
    code, _, err = _run(
        capsys,
        "featurize",
        "delta_gaussian:sigma1=1,sigma2=3",
        "-n",
        "16",
        "--lengthscale",
        "2.5",
        "--shape-matrix",
        mfile,
        path,
        out,
    )
    assert code == 0, err
    ref = RandomFeatures(
        "delta_gaussian:sigma1=1,sigma2=3",
        dim=3,
        n_components=16,
        random_state=0,
        lengthscale=2.5,
        shape_matrix=M,
    ).fit()
    np.testing.assert_array_equal(np.load(out), ref.transform(X))
    side = json.loads(out.with_suffix(".json").read_text())
    assert side["lengthscale"] == 2.5
    np.testing.assert_array_equal(np.array(side["shape_matrix"]), M)
    # negative control: without the options the features differ
    code, _, _ = _run(capsys, "featurize", "delta_gaussian:sigma1=1,sigma2=3", "-n", "16", path, out)
    assert code == 0 and not np.allclose(np.load(out), ref.transform(X))
    assert json.loads(out.with_suffix(".json").read_text())["shape_matrix"] is None


def _bad_matrices(tmp_path):
    files = {}

    def text(name, body):
        files[name] = tmp_path / name
        files[name].write_text(body)

    text("nonsym.txt", "1 2 0\n0 1 0\n0 0 1\n")
    text("notpd.txt", "1 0 0\n0 -1 0\n0 0 1\n")
    text("small.txt", "1 0\n0 1\n")
    text("ragged.txt", "1 0 0\n0 1\n0 0 1\n")
    text("words.txt", "a b c\n")
    text("nan.txt", "1 0 0\n0 nan 0\n0 0 1\n")
    text("empty.txt", "")
    np.save(tmp_path / "object.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    np.save(tmp_path / "vector.npy", np.ones(3))
    (tmp_path / "adir").mkdir()
    return files


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--lengthscale", "0"], "argument --lengthscale: lengthscale must be a finite number > 0"),
        (["--lengthscale", "-1"], "argument --lengthscale: lengthscale must be a finite number > 0"),
        (
            ["--lengthscale", "nan"],
            "lengthscale must be a finite number > 0 or 'scale' (the features approximate",
        ),
        (["--lengthscale", "inf"], "got inf"),
        (["--lengthscale", "abc"], "argument --lengthscale: must be a number or 'scale', got 'abc'"),
        (["--components", "0"], "argument --components/-n: n_components must be an integer >= 1, got 0"),
        (["--lengthscale", "auto"], "argument --lengthscale: must be a number or 'scale', got 'auto'"),
        (["--gamma", "0"], "argument --gamma: gamma must be None or a finite number > 0"),
        (
            ["--truncation-tolerance", "0"],
            "argument --truncation-tolerance: truncation_tolerance must be a number > 0",
        ),
        (["--components", "1.5"], "argument --components/-n: must be an integer, got '1.5'"),
        (["--method", "fast"], "argument --method: method must be one of 'rff', 'orf', 'gorf'"),
        (["--feature-map", "tan"], "argument --feature-map: feature_map must be one of 'sincos', 'cos'"),
        (["--seed", "-1"], "argument --seed: random_state must be None, a non-negative int"),
        (["--truncation", "0"], "argument --truncation: truncation must be None or a finite number > 0"),
        (["--shape-matrix", "{missing}"], "missing.txt': file does not exist"),
        (["--shape-matrix", "{adir}"], "adir': is a directory"),
        (["--shape-matrix", "{nonsym}"], "shape_matrix must be symmetric"),
        (["--shape-matrix", "{notpd}"], "shape_matrix must be positive definite"),
        (["--shape-matrix", "{small}"], "shape_matrix must be a 3 x 3 matrix (the input dimension d = 3)"),
        (["--shape-matrix", "{ragged}"], "cannot read a matrix"),
        (["--shape-matrix", "{words}"], "cannot read a matrix"),
        (["--shape-matrix", "{nan}"], "shape_matrix must be finite"),
        (["--shape-matrix", "{empty}"], "shape_matrix must be"),
        (["--shape-matrix", "{object}"], "cannot read a matrix"),
        (
            ["--shape-matrix", "{vector}"],
            "shape_matrix must be None or a square (d, d) matrix, got shape (3,)",
        ),
    ],
)
def test_bad_values_are_one_line_usage_errors(capsys, tmp_path, data, argv, match):
    _, path = data
    files = _bad_matrices(tmp_path)
    names = {
        "missing": tmp_path / "missing.txt",
        "adir": tmp_path / "adir",
        "object": tmp_path / "object.npy",
        "vector": tmp_path / "vector.npy",
        **{k.split(".")[0]: v for k, v in files.items()},
    }
    argv = [a.format(**names) for a in argv]
    out = tmp_path / "F.npy"
    code, stdout, err = _run(capsys, "featurize", "gaussian", *argv, path, out)
    assert code == 2 and stdout == ""
    assert match in _error(err)
    assert not out.exists() and not out.with_suffix(".json").exists()
