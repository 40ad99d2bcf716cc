"""Streaming readers: formats, compression, chunk boundaries, and the error messages."""

import bz2
import gzip
import lzma
import os
import re
import subprocess
import sys
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from spectralkit import io

DATA = Path(
    os.environ.get("SPECTRALKIT_DATA") or Path(__file__).resolve().parents[1].parent / "shared" / "data"
)


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
@given(
    n=st.integers(1, 60),
    d=st.integers(1, 5),
    chunk=st.integers(1, 70),
    fmt=st.sampled_from(["npy", "csv", "libsvm"]),
)
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
        ("1 1:2\n1 2:x\n", {}, r":2: feature value must be a number, got 'x' in '2:x'"),
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
    with pytest.raises(ValueError, match=r"bin.dat:1: not UTF-8 text \(byte 0xff at column 1\); the readers"):
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


# -- CSV header: one documented rule, never a silently dropped row ------------------------------
@pytest.mark.parametrize(
    "content, header, rows, has_header",
    [
        (b"a,b\n1,2\n3,4\n", None, [[1, 2], [3, 4]], True),
        (b"1,2\n3,4\n", None, [[1, 2], [3, 4]], False),
        (b"\xef\xbb\xbf1,2\n3,4\n", None, [[1, 2], [3, 4]], False),  # BOM: stripped, row kept
        (b"\xef\xbb\xbfa,b\r\n1,2\r\n", None, [[1, 2]], True),  # BOM + CRLF
        (b"1,2\r\n3,4\r\n", None, [[1, 2], [3, 4]], False),  # CRLF
        (b"1,2\r3,4\r", None, [[1, 2], [3, 4]], False),  # CR only
        (b"a b\n1 2\n", None, [[1, 2]], True),  # whitespace-delimited
        (b"x\ty\n1\t2\n", None, [[1, 2]], True),  # tabs
        (b"1,2\n3,4\n", True, [[3, 4]], True),  # header=True: always skipped
        (b"# comment\na,b\n1,2\n", None, [[1, 2]], True),  # comments are not lines
    ],
)
def test_csv_header_rule(tmp_path, content, header, rows, has_header):
    path = tmp_path / "h.csv"
    path.write_bytes(content)
    info = io.scan(path, header=header)
    assert info.header is has_header and info.n_rows == len(rows)
    X, _ = io.load(path, header=header)
    np.testing.assert_array_equal(X, rows)


@pytest.mark.parametrize(
    "content, header, match",
    [
        # a first line with an empty or missing field is data under the rule, so it fails loudly
        (b",2\n3,4\n", None, r"h.csv:1: feature field 0 is empty"),
        (b"NA,2\n3,4\n", None, r"h.csv:1: feature field 0 is a missing value 'NA' \(missing values are not"),
        (b"a,NA\n1,2\n", None, r"h.csv:1: feature field 0 is not a number: 'a'"),
        (b"a,\n1,2\n", None, r"h.csv:1: feature field 0 is not a number: 'a'"),
        (b"a,b\n1,2\n", False, r"h.csv:1: feature field 0 is not a number: 'a'"),
        (b"nan,2\n3,4\n", None, r"h.csv:1: features must be finite, got 'nan' in field 0"),
        (b"a,b,c\n1,2\n", None, r"h.csv:1: the header has 3 fields but the first data row \(line 2\) has 2"),
        (b"a,b\n", None, "contains a header but no data rows"),
        (b"1,2\n", True, "contains a header but no data rows"),
        # data rows: empty, NA, text, wrong counts, non-finite, overflow, all with their line
        (b"1,2\n3,\n", None, r"h.csv:2: feature field 1 is empty"),
        (b"1,2\n3,N/A\n", None, r"h.csv:2: feature field 1 is a missing value 'N/A'"),
        (b"1,2\n3,?\n", None, r"h.csv:2: feature field 1 is a missing value '\?'"),
        (b"1\t2\n3\t\t4\n", None, r"h.csv:2: expected 2 fields like the first data row, got 3"),
        (b"1,2\n3,4,5\n", None, r"h.csv:2: expected 2 fields like the first data row, got 3"),
        (b"1,2\n\n# c\n3,inf\n", None, r"h.csv:4: features must be finite, got 'inf' in field 1"),
        (b"1,2\n3,1e400\n", None, r"h.csv:2: features must be finite, got '1e400' in field 1"),
        (b"1,2\n3,\xff\n", None, r"h.csv:2: not UTF-8 text \(byte 0xff at column 3\)"),
        (b"\xff\xfe1\x00,\x002\x00\n\x00", None, r"h.csv:1: not UTF-8 text \(byte 0xff at column 1\)"),
    ],
)
def test_csv_rejects_with_line_numbers(tmp_path, content, header, match):
    path = tmp_path / "h.csv"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=match):
        io.load(path, header=header)


def test_csv_float32_overflow_and_labels(tmp_path):
    path = _write(tmp_path / "o.csv", "1,2\n3,1e300\n")
    with pytest.raises(
        ValueError,
        match=r"o.csv:2: features must be finite, got '1e300' in field 1 "
        r"\(overflows float32\)",
    ):
        io.load(path, dtype=np.float32)
    path = _write(tmp_path / "l.csv", "1,x\n2,\n")
    with pytest.raises(ValueError, match=r"l.csv:2: the label \(field 1\) is empty"):
        io.scan(path, label_column=-1)
    path = _write(tmp_path / "n.csv", "1,0\n2,inf\n")
    with pytest.raises(ValueError, match=r"n.csv:2: labels must be finite numbers, got 'inf'"):
        io.scan(path, label_column=1)
    # labels are numbers only if all are: the kind does not change from chunk to chunk
    path = _write(tmp_path / "m.csv", "1,0\n2,1\n3,cat\n")
    info = io.scan(path, label_column=1)
    assert info.has_labels and not info.numeric_labels
    ys = [y for _, y in io.iter_chunks(path, chunk_rows=1, info=info)]
    assert all(y.dtype.kind == "U" for y in ys) and [str(y[0]) for y in ys] == ["0", "1", "cat"]
    info = io.scan(_write(tmp_path / "f.csv", "1,0\n2,1\n"), label_column=1)
    assert info.numeric_labels


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(
        st.sampled_from(
            ["1", "-2.5", "1e3", "nan", "", "NA", "n/a", "NULL", "?", "None", "abc", "x1", "label", "\ufeff1"]
        ),
        min_size=1,
        max_size=4,
    ),
    bom=st.booleans(),
    crlf=st.booleans(),
)
def test_csv_first_row_is_never_silently_dropped(tmp_path_factory, first, bom, crlf):
    # any first line: a header only if no field is a number, empty or NA; otherwise it is a data
    # row (read or rejected with line 1), never dropped
    width = len(first)
    nl = "\r\n" if crlf else "\n"
    text = ",".join(first) + nl + ",".join(["7"] * width) + nl
    path = tmp_path_factory.mktemp("first") / "f.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    decoded = text if bom or not text.startswith("\ufeff") else text[1:]  # one leading BOM is removed
    line = decoded.split(nl)[0]
    assume(line.strip())  # a blank line is no line at all
    fields = [f.strip() for f in line.split(",")]
    expect_header = all(
        f and f.lower() not in {"na", "n/a", "nan", "null", "none", "?"} and not _is_float(f) for f in fields
    )
    try:
        X, _ = io.load(path)
    except ValueError as exc:
        assert not expect_header
        assert re.search(r"f\.csv:1: ", str(exc)), str(exc)
    else:
        assert len(X) == (1 if expect_header else 2)
        if not expect_header:
            np.testing.assert_array_equal(X[0], [float(f) for f in fields])


def _is_float(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_header_and_other_options_are_checked(tmp_path):
    csv = _write(tmp_path / "a.csv", "1,2\n")
    svm = _write(tmp_path / "a.svm", "1 1:2\n")
    with pytest.raises(ValueError, match="header must be True, False or None .detect., got 'yes'"):
        io.scan(csv, header="yes")
    with pytest.raises(ValueError, match="header=True applies to CSV files only; .* is read as libsvm"):
        io.scan(svm, header=True)
    with pytest.raises(ValueError, match="n_features applies to LIBSVM files only; .* is read as csv"):
        io.scan(csv, n_features=3)
    with pytest.raises(ValueError, match="zero_based applies to LIBSVM files only"):
        io.load(csv, zero_based=True)
    with pytest.raises(ValueError, match="zero_based must be True or False, got 1"):
        io.scan(svm, zero_based=1)
    with pytest.raises(TypeError, match="label_column must be an integer column index or None, got 'x'"):
        io.scan(csv, label_column="x")


# -- LIBSVM: every irregular token is an error naming its line -----------------------------------
@pytest.mark.parametrize(
    "line, match",
    [
        ("1 1:2 1:3", "feature index 1 appears more than once"),
        ("1 2:1 1:3 2:4", "feature index 2 appears more than once"),  # unsorted duplicate
        ("1 0:2", r"feature index 0 is below the first index 1 \(for a 0-based file use zero_based=True"),
        ("1 -1:2", r"negative feature index in '-1:2'"),
        ("1 1.5:2", r"feature index must be an integer, got '1.5' in '1.5:2'"),
        ("1 1.0:2", r"feature index must be an integer, got '1.0'"),
        ("1 1e0:2", r"feature index must be an integer, got '1e0'"),
        ("1 +1:2", r"feature index must be an integer, got '\+1'"),
        ("1 a:b", r"feature index must be an integer, got 'a' in 'a:b'"),
        ("1 ١:2", r"feature index must be an integer, got '١'"),  # a non-ASCII digit
        ("1 3:", r"missing feature value in '3:'"),
        ("1 3: 4", r"missing feature value in '3:'"),  # was read as 3:4
        ("1 :4", r"missing feature index in ':4'"),
        ("1 3 :4", r"expected index:value, got '3'"),  # was read as 3:4
        ("1 3:4:5", r"expected index:value with a single ':', got '3:4:5'"),
        ("1 3", r"expected index:value, got '3'"),
        ("1 1:x", r"feature value must be a number, got 'x' in '1:x'"),
        ("1 1:nan", r"feature value must be finite, got 'nan' in '1:nan'"),
        ("1 1:-inf", r"feature value must be finite, got '-inf'"),
        ("1 1:1e400", r"feature value must be finite, got '1e400'"),
        ("1 1234567890123456:1", r"feature index 1234567890123456 is too large \(at most 999999999999999\)"),
        ("foo 1:2", r"LIBSVM label must be a number, got 'foo'"),
        ("nan 1:2", r"LIBSVM label must be finite, got 'nan'"),
        ("inf", r"LIBSVM label must be finite, got 'inf'"),
        ("1 qid:x 1:2", r"qid must be a non-negative integer, got 'qid:x'"),
        ("1 qid:-1 1:2", r"qid must be a non-negative integer, got 'qid:-1'"),
    ],
)
@pytest.mark.parametrize("fn", ["scan", "load"])
def test_libsvm_rejects_with_line_numbers(tmp_path, line, match, fn):
    path = _write(tmp_path / "bad.svm", f"1 1:1 2:2\n# comment\n{line}\n-1 2:1\n")
    with pytest.raises(ValueError, match=r"bad.svm:3: " + match):
        getattr(io, fn)(path, format="libsvm")


def test_libsvm_accepts_what_it_documents(tmp_path):
    path = _write(tmp_path / "ok.svm", "1 qid:3 3:1 1:2  # unsorted indices, qid, comment\n-1\n+2 2:-1e-3\n")
    X, y = io.load(path)
    np.testing.assert_array_equal(X, [[2, 0, 1], [0, 0, 0], [0, -1e-3, 0]])
    np.testing.assert_array_equal(y, [1, -1, 2])
    path = _write(tmp_path / "z.svm", "1 0:1 2:3\n")
    with pytest.raises(ValueError, match=r"zn.svm:1: negative feature index in '-1:2'"):
        io.load(_write(tmp_path / "zn.svm", "1 -1:2\n"), zero_based=True)
    np.testing.assert_array_equal(io.load(path, zero_based=True)[0], [[1, 0, 3]])


@pytest.mark.parametrize("chunk_rows", [1, 7, 5000])
def test_libsvm_line_numbers_beyond_the_first_block(tmp_path, chunk_rows):
    lines = [f"{k % 2} 1:{k} 3:0.5" for k in range(6000)]
    path = _write(tmp_path / "big.svm", "\n".join(lines) + "\n")
    info = io.scan(path)
    lines[4999] = "1 1:2 1:3"
    _write(path, "\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"big.svm:5000: feature index 1 appears more than once"):
        io.scan(path)
    with pytest.raises(ValueError, match=r"big.svm:5000: feature index 1 appears more than once"):
        for _ in io.iter_chunks(path, chunk_rows=chunk_rows, info=info):
            pass


def test_libsvm_float32_overflow_and_n_features(tmp_path):
    path = _write(tmp_path / "o.svm", "1 1:1\n1 2:1e300\n")
    with pytest.raises(ValueError, match=r"o.svm:2: feature 2 overflows float32"):
        io.load(path, dtype=np.float32)
    info = io.scan(path, n_features=2)
    path2 = _write(tmp_path / "o.svm", "1 1:1\n1 3:1\n")  # the file changed after the scan
    with pytest.raises(ValueError, match=r"o.svm:2: feature index 3 exceeds n_features=2"):
        list(io.iter_chunks(path2, info=info))


# -- compressed files: truncated or corrupt anywhere is a ValueError naming the file --------------
# compressor, length of the fixed stream header, name in the messages
_COMPRESS = {
    "bz2": (bz2.compress, 4, "bzip2"),
    "gzip": (gzip.compress, 10, "gzip"),
    "xz": (lzma.compress, 12, "xz"),
}


def _svm_text(n_lines):
    rng = np.random.default_rng(0)
    rows = [(rng.integers(0, 2), rng.uniform(size=6)) for _ in range(n_lines)]
    return "".join(f"{y} " + " ".join(f"{j}:{v:.4f}" for j, v in enumerate(x, 1)) + "\n" for y, x in rows)


def _damaged(kind, damage, n_lines=40):
    compress, header, _ = _COMPRESS[kind]
    data = compress(_svm_text(n_lines).encode())
    n = len(data)
    if damage.startswith("truncate"):
        return data[
            : {"truncate-start": header + 2, "truncate-middle": n // 2, "truncate-end": n - 1}[damage]
        ]
    pos = {"flip-start": header, "flip-middle": n // 2, "flip-end": n - 5}[damage]
    data = bytearray(data)
    data[pos] ^= 0x10  # one bit
    return bytes(data)


_DAMAGES = ["truncate-start", "truncate-middle", "truncate-end", "flip-start", "flip-middle", "flip-end"]


@pytest.mark.parametrize("damage", _DAMAGES)
@pytest.mark.parametrize("kind", sorted(_COMPRESS))
def test_damaged_compressed_files_are_value_errors(tmp_path, kind, damage):
    name = _COMPRESS[kind][2]
    path = tmp_path / "data.bin"
    path.write_bytes(_damaged(kind, damage))
    what = "truncated" if damage.startswith("truncate") else "(corrupt|truncated)"
    pattern = re.escape(str(path)) + rf": {what} {name} (file|data)"
    # a 40-line file is read whole even by detect_format (which reads at most 64 data lines)
    for call in (io.detect_format, io.scan, io.load, lambda p: list(io.iter_chunks(p, chunk_rows=8))):
        with pytest.raises(ValueError, match=pattern):
            call(path)
    # damage after a scan (a stale info): found while iterating, after some rows maybe
    path.write_bytes(_COMPRESS[kind][0](_svm_text(40).encode()))
    info = io.scan(path)
    path.write_bytes(_damaged(kind, damage))
    with pytest.raises(ValueError, match=re.escape(str(path))):
        list(io.iter_chunks(path, chunk_rows=8, info=info))


@pytest.mark.parametrize("kind", sorted(_COMPRESS))
def test_compressed_text_errors_keep_their_line(tmp_path, kind):
    # an intact compressed file: the text's own errors, not "corrupt"
    compress = _COMPRESS[kind][0]
    good = tmp_path / "good.bin"
    good.write_bytes(compress(b"1,2\n3,\xff\n"))
    with pytest.raises(ValueError, match=r"good.bin:2: not UTF-8 text \(byte 0xff at column 3\)"):
        io.load(good)
    good.write_bytes(compress(b"1,2\n3,x\n"))
    with pytest.raises(ValueError, match=r"good.bin:2: feature field 1 is not a number: 'x'"):
        io.load(good)
    good.write_bytes(compress(b""))
    with pytest.raises(ValueError, match="contains no data lines"):
        io.scan(good)


def test_big_file_undecodable_byte_line_number(tmp_path):
    # the decoder works in blocks: the line number comes from a second, exact pass
    lines = [b"%d,%d" % (k, k + 1) for k in range(5000)]
    lines[3456] = b"1,\xc3("
    path = tmp_path / "big.csv"
    path.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(ValueError, match=r"big.csv:3457: not UTF-8 text \(byte 0xc3 at column 3\)"):
        io.scan(path)


def test_inputs_must_be_regular_files(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)  # would block or be read once; refused without opening it
    with pytest.raises(ValueError, match="is not a regular file .a pipe, socket or device."):
        io.scan(fifo)
    with pytest.raises(ValueError, match="is not a regular file"):
        io.detect_format(fifo)


def test_info_must_match_the_file_and_options(tmp_path):
    path = _write(tmp_path / "a.csv", "1,2,0\n3,4,1\n")
    other = _write(tmp_path / "b.csv", "1,2,0\n")
    info = io.scan(path, label_column=-1)
    X, y = next(io.iter_chunks(path, info=info))
    assert X.shape == (2, 2) and list(y) == [0, 1]
    with pytest.raises(ValueError, match=r"label_column=0 conflicts with info.label_column=-1"):
        io.iter_chunks(path, label_column=0, info=info)
    with pytest.raises(ValueError, match=r"info describes .*a.csv', not .*b.csv'"):
        io.iter_chunks(other, info=info)
    Path(path).write_text("1,2,0\n3,4,1\n5,6,0\n")  # more rows than scanned
    with pytest.raises(ValueError, match="a.csv changed since it was scanned"):
        list(io.iter_chunks(path, info=info))
    Path(path).write_text("1,2,0\n")  # fewer
    with pytest.raises(ValueError, match="a.csv changed since it was scanned"):
        list(io.iter_chunks(path, info=info))
    np.save(tmp_path / "e.npy", np.ones((0, 3)))
    with pytest.raises(ValueError, match=r"e.npy' is empty \(shape \(0, 3\)\)"):
        io.scan(tmp_path / "e.npy")


def test_npy_non_finite_and_overflow(tmp_path):
    A = np.ones((5, 3))
    A[3, 2] = np.inf
    np.save(tmp_path / "i.npy", A)
    with pytest.raises(ValueError, match=r"i.npy: row 3, column 2: features must be finite, got inf"):
        io.load(tmp_path / "i.npy")
    A[3, 2] = 1e300
    np.save(tmp_path / "o.npy", A)
    with pytest.raises(ValueError, match=r"o.npy: row 3, column 2: .* \(overflows float32\)"):
        io.load(tmp_path / "o.npy", dtype=np.float32, chunk_rows=2)


def test_memory_errors_say_how_much(tmp_path):
    path = _write(tmp_path / "wide.svm", "1 999999999999999:1\n")
    info = io.scan(path)
    assert info.n_features == 10**15 - 1
    with pytest.raises(
        MemoryError,
        match=r"not enough memory for loading .*wide.svm "
        r"\(1 x 999999999999999 float64\): need about 8e\+06 GB",
    ):
        io.load(path)
    with pytest.raises(MemoryError, match=r"not enough memory for a chunk of 1 rows x 999999999999999 feat"):
        list(io.iter_chunks(path, info=info))


# -- the pandas fast path reads exactly what the line-by-line reader reads ------------------------
def _exact_only(monkeypatch):
    def refuse(*args, **kwargs):
        raise io._Fallback
        yield  # a generator, like the real one

    monkeypatch.setattr(io, "_pandas_csv", refuse)


@pytest.mark.parametrize(
    "text, kwargs",
    [
        ("0.1,2.5e-3,7\n-1e300,3,2\n", {"label_column": -1}),  # integer labels
        ("a,b,c\n1,2,x\n3,4,y\n", {"label_column": 2}),  # header, text labels
        ("1 2 0.5\n3 4 1.5\n", {"label_column": 0}),  # runs of spaces, float labels
        ("1\t2\n3\t4\n", {}),
        ("0.30000000000000004,1e-320\n2.2250738585072014e-308,1\n", {"dtype": np.float32}),
        ("1,2\n# a comment inside the data\n3,+4\n", {"label_column": 1}),  # read line by line
    ],
)
def test_fast_csv_reader_equals_the_exact_reader(tmp_path, monkeypatch, text, kwargs):
    path = _write(tmp_path / "a.csv", text)
    fast = io.load(path, **kwargs)
    info_fast = io.scan(path, **{k: v for k, v in kwargs.items() if k != "dtype"})
    _exact_only(monkeypatch)
    exact = io.load(path, **kwargs)
    assert io.scan(path, **{k: v for k, v in kwargs.items() if k != "dtype"}) == info_fast
    for a, b in zip(fast, exact):
        if a is None:
            assert b is None
        else:
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)


def test_integer_labels_keep_their_dtype(tmp_path):
    X, y = io.load(_write(tmp_path / "i.csv", "0.5,1\n0.25,-2\n1,+3\n"), label_column=-1)
    assert y.dtype == np.int64 and list(y) == [1, -2, 3]
    X, y = io.load(_write(tmp_path / "f.csv", "0.5,1\n0.25,2.0\n"), label_column=-1)
    assert y.dtype == np.float64


def test_error_deep_in_a_large_csv_names_its_line(tmp_path):
    # the fast reader yields the good blocks, then the line-by-line reader names the bad line
    rows = ["0.5,1.5,1"] * 10_000
    rows[7_321] = "0.5,NA,1"
    path = _write(tmp_path / "big.csv", "\n".join(rows) + "\n")
    assert io.scan(path, label_column=-1).n_rows == 10_000  # the scan counts rows and labels
    with pytest.raises(ValueError, match=r"big.csv:7322: feature field 1 is a missing value 'NA'"):
        io.load(path, label_column=-1, chunk_rows=4096)
    rows[7_321] = "0.5,2.5,1"
    path = _write(tmp_path / "ok.csv", "\n".join(rows) + "\n")
    info = io.scan(path, label_column=-1)
    assert info.n_rows == 10_000 and info.integer_labels
    # a file that changes after the scan: damaged late, after good blocks were given
    blocks = io.iter_chunks(path, info=info, chunk_rows=4096)
    first = next(blocks)
    rows[9_000] = "0.5,oops,1"
    _write(tmp_path / "ok.csv", "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"ok.csv:9001: feature field 1 is not a number: 'oops'"):
        list(blocks)
    assert first[0].shape == (4096, 2)


def test_chunk_memory_errors_name_the_file_and_the_libsvm_index(tmp_path):
    path = _write(tmp_path / "huge-index.svm", "1 1:0.5 1000000000000:1\n0 2:1\n")
    with pytest.raises(
        MemoryError,
        match=r"not enough memory for a chunk of 2 rows x 1000000000000 features: need about .* GB reading "
        r".*huge-index.svm' \(its largest feature index makes 1000000000000 features\)",
    ):
        list(io.iter_chunks(path))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and MADV_DONTNEED: Linux")
def test_streaming_a_large_npy_keeps_the_resident_memory_bounded(tmp_path):
    """The mapped pages of the rows already copied are dropped: a 64 MB .npy streams in a few MiB
    (it used to grow the resident memory by the file's size)."""
    path = tmp_path / "big.npy"
    np.save(path, np.random.default_rng(0).normal(size=(125_000, 64)))  # 64 MB
    code = (
        "import sys\n"
        "from spectralkit import io\n"
        "def rss():\n"
        "    with open('/proc/self/status') as f:\n"
        "        return next(int(x.split()[1]) for x in f if x.startswith('VmRSS:')) / 1024\n"
        "r0, top, n = rss(), 0.0, 0\n"
        "for X, _ in io.iter_chunks(sys.argv[1], chunk_rows=4096):\n"
        "    n += len(X)\n"
        "    top = max(top, rss())\n"
        "print(n, top - r0)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    rows, growth_mib = proc.stdout.split()
    assert int(rows) == 125_000 and float(growth_mib) < 24, proc.stdout


# -- a huge line is refused after reading the line limit, never read whole -------------------------
@pytest.mark.parametrize("compress", [None, "gzip"])
@pytest.mark.parametrize(
    "name, text, line",
    [
        ("one_line.csv", ",".join(["0.125"] * 2000), 1),  # a matrix written without newlines
        ("deep.csv", "1,2,3\n" * 300 + "1." + "0" * 2000 + ",2,3\n" + "4,5,6\n", 301),  # same width
        ("deep.svm", "1 1:0.5\n" * 50 + "1 " + " ".join(f"{j}:1" for j in range(1, 500)) + "\n", 51),
    ],
)
def test_a_line_beyond_the_limit_names_the_file_the_line_and_the_limit(
    tmp_path, monkeypatch, compress, name, text, line
):
    monkeypatch.setattr(io, "MAX_LINE_CHARS", 1000)
    path = _write(tmp_path / name, text, compress)
    message = f"{path}:{line}: line longer than 1000 characters (the readers hold one line in memory)"
    with pytest.raises(ValueError, match=re.escape(message)):
        io.scan(path)
    monkeypatch.setattr(io, "MAX_LINE_CHARS", 2 * len(text))  # the same file within the limit reads
    assert io.scan(path).n_rows == max(1, text.count("\n"))


def test_a_huge_line_is_not_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(io, "MAX_LINE_CHARS", 1000)
    path = _write(tmp_path / "one_line.csv", "0.125," * 500_000 + "1")  # 3 MB, one line
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="line longer than 1000 characters"):
            io.scan(path, format="csv")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak  # the whole line is 3 MB as a str, more as fields


def test_an_npy_of_python_objects_is_named_as_such(tmp_path):
    # np.load said "Array can't be memory-mapped: Python objects in dtype"
    path = str(tmp_path / "objects.npy")
    np.save(path, np.array([[1, None]], dtype=object), allow_pickle=True)
    message = f"the array in {path!r} holds Python objects (dtype object); the readers take real numeric"
    with pytest.raises(ValueError, match=re.escape(message)):
        io.scan(path)
    np.save(path, np.ones((2, 2)))  # the header reader accepts a plain array
    assert io.scan(path).n_features == 2
