"""Streaming readers: formats, compression, chunk boundaries, and the error messages."""

import bz2
import gzip
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spectralkit import io

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _write(path, text, compress=None):
    if compress == "bz2":
        with bz2.open(path, "wt") as fh:
            fh.write(text)
    elif compress == "gzip":
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        Path(path).write_text(text)
    return str(path)


LIBSVM = "# a comment\n1 1:0.5 3:2\n\n-1 2:1.5  # trailing comment\n2 qid:4 3:-1e-3\n"
LIBSVM_X = np.array([[0.5, 0, 2], [0, 1.5, 0], [0, 0, -1e-3]])
LIBSVM_Y = np.array([1.0, -1.0, 2.0])


@pytest.mark.parametrize("compress", [None, "bz2", "gzip"])
def test_libsvm_plain_and_compressed(tmp_path, compress):
    path = _write(tmp_path / "toy.data", LIBSVM, compress)  # name carries no hint
    assert io.detect_format(path) == "libsvm"
    info = io.scan(path)
    assert (info.n_rows, info.n_features, info.has_labels) == (3, 3, True)
    assert info.compression == {None: None, "bz2": "bz2", "gzip": "gzip"}[compress]
    X, y = io.load(path)
    np.testing.assert_array_equal(X, LIBSVM_X)
    np.testing.assert_array_equal(y, LIBSVM_Y)


def test_libsvm_zero_based_and_n_features(tmp_path):
    path = _write(tmp_path / "z.svm", "0 0:1 2:3\n1 1:2\n")
    X, _ = io.load(path, zero_based=True, n_features=5)
    np.testing.assert_array_equal(X, [[1, 0, 3, 0, 0], [0, 2, 0, 0, 0]])
    with pytest.raises(ValueError, match="zero_based=True"):
        io.load(path)  # index 0 in a 1-based file
    with pytest.raises(ValueError, match="n_features=2 is smaller"):
        io.scan(path, zero_based=True, n_features=2)


def test_npy_chunks_and_dtype(tmp_path):
    rng = np.random.default_rng(0)
    A = rng.normal(size=(103, 7))
    path = str(tmp_path / "a.npy")
    np.save(path, A)
    info = io.scan(path)
    assert (info.format, info.n_rows, info.n_features, info.has_labels) == ("npy", 103, 7, False)
    blocks = list(io.iter_chunks(path, chunk_rows=25, dtype=np.float32))
    assert [len(b) for b, _ in blocks] == [25, 25, 25, 25, 3]
    assert all(b.dtype == np.float32 and b.flags.c_contiguous and y is None for b, y in blocks)
    np.testing.assert_array_equal(np.concatenate([b for b, _ in blocks]), A.astype(np.float32))


def test_csv_header_delimiters_and_string_labels(tmp_path):
    p1 = _write(tmp_path / "h.csv", "a,b,label\n1,2,x\n3,4,y\n")
    info = io.scan(p1, label_column=-1)
    assert (info.header, info.delimiter, info.n_features) == (True, ",", 2)
    X, y = io.load(p1, label_column=-1)
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    assert list(y) == ["x", "y"]
    # label first, no header (the letter-recognition layout), whitespace and tabs
    p2 = _write(tmp_path / "l.data", "T,2,8\nI,5,12\n")
    X, y = io.load(p2, label_column=0)
    np.testing.assert_array_equal(X, [[2, 8], [5, 12]])
    assert list(y) == ["T", "I"]
    p3 = _write(tmp_path / "w.txt", " 0.5   1.5  24.0\n 1  2 3\n")
    X, y = io.load(p3, label_column=-1)
    np.testing.assert_array_equal(y, [24.0, 3.0])
    assert y.dtype == np.float64
    p4 = _write(tmp_path / "t.tsv", "1\t2\n3\t4\n", "bz2")
    X, y = io.load(p4)
    assert y is None and X.shape == (2, 2)


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 60), d=st.integers(1, 5), chunk=st.integers(1, 70),
       fmt=st.sampled_from(["npy", "csv", "libsvm"]))
def test_chunks_reassemble_the_file(tmp_path_factory, n, d, chunk, fmt):
    rng = np.random.default_rng(n * 1000 + d)
    A = np.round(rng.normal(size=(n, d)), 6)
    A[rng.random(A.shape) < 0.3] = 0.0
    y = rng.integers(0, 3, size=n).astype(float)
    tmp = tmp_path_factory.mktemp("chunks")
    if fmt == "npy":
        path = str(tmp / "a.npy")
        np.save(path, A)
    elif fmt == "csv":
        path = _write(tmp / "a.csv", "".join(",".join(repr(float(v)) for v in row) + "\n" for row in A))
    else:
        lines = []
        for label, row in zip(y, A):
            nz = [f"{j + 1}:{float(v)!r}" for j, v in enumerate(row) if v != 0]
            lines.append(" ".join([repr(float(label))] + nz) + "\n")
        path = _write(tmp / "a.svm", "".join(lines))
    kw = {"n_features": d, "format": "libsvm"} if fmt == "libsvm" else {}
    blocks = list(io.iter_chunks(path, chunk_rows=chunk, **kw))
    assert all(len(b) <= chunk for b, _ in blocks)
    assert sum(len(b) for b, _ in blocks) == n
    np.testing.assert_array_equal(np.concatenate([b for b, _ in blocks]), A)
    if fmt == "libsvm":
        np.testing.assert_array_equal(np.concatenate([c for _, c in blocks]), y)


@pytest.mark.parametrize(
    "text, kwargs, match",
    [
        ("1,2\n3\n", {}, r":2: expected 2 fields"),
        ("1,2\n3,abc\n", {}, r":2: feature field 1 is not a number: 'abc'"),
        ("1,2\nnan,1\n", {}, r":2: features must be finite"),
        ("1 1:2\n1 2:x\n", {}, r":2: expected index:value"),
        ("1 1:2\nfoo 2:1\n", {}, r":2: LIBSVM label must be a number"),
        ("1 1:2\n", {"label_column": 0, "format": "libsvm"}, "label_column applies to CSV"),
        ("1,2\n", {"label_column": 5}, r"label_column must be in \[-2, 1\]"),
        ("1,2\n", {"format": "parquet"}, "format must be one of npy, csv, libsvm"),
        ("# only a comment\n", {}, "contains no data lines"),
    ],
)
def test_errors_name_the_place(tmp_path, text, kwargs, match):
    path = _write(tmp_path / "bad.txt", text)
    with pytest.raises(ValueError, match=match):
        io.load(path, **kwargs)


def test_errors_for_files_and_arguments(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        io.scan(tmp_path / "missing.npy")
    with pytest.raises(IsADirectoryError):
        io.scan(tmp_path)
    np.save(tmp_path / "v.npy", np.arange(3.0))
    with pytest.raises(ValueError, match=r"must be 2-D .* shape \(3,\)"):
        io.scan(tmp_path / "v.npy")
    np.save(tmp_path / "c.npy", np.ones((2, 2), complex))
    with pytest.raises(ValueError, match="real numeric"):
        io.scan(tmp_path / "c.npy")
    np.save(tmp_path / "ok.npy", np.ones((2, 2)))
    with pytest.raises(ValueError, match="chunk_rows must be an integer >= 1, got 0"):
        next(io.iter_chunks(tmp_path / "ok.npy", chunk_rows=0))
    with pytest.raises(ValueError, match="dtype must be float32 or float64, got int64"):
        io.load(tmp_path / "ok.npy", dtype=np.int64)
    (tmp_path / "bin.dat").write_bytes(b"\xff\xfe\x00\x81" * 10)
    with pytest.raises(ValueError, match="not a .npy file nor readable text"):
        io.detect_format(tmp_path / "bin.dat")


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "usps.bz2").exists(), reason="shared datasets not present")
def test_shared_usps_matches_its_readme():
    # README: usps train 7291 x 256, labels 1..10, values in [-1, 1]
    info = io.scan(DATA / "usps.bz2")
    assert (info.format, info.compression, info.n_rows, info.n_features) == ("libsvm", "bz2", 7291, 256)
    X, y = next(io.iter_chunks(DATA / "usps.bz2", chunk_rows=500, info=info))
    assert X.shape == (500, 256) and X.min() >= -1 and X.max() <= 1
    assert set(np.unique(y)) <= set(range(1, 11))
