"""Streaming readers for feature matrices: ``.npy``, CSV and LIBSVM/svmlight text (plain, .bz2, .gz, .xz).

Every reader works in bounded chunks of rows so that files larger than memory can be
featurized (see ``spectralkit featurize``): :func:`scan` makes one streaming pass to learn the
shape, :func:`iter_chunks` yields ``(X, y)`` blocks of at most ``chunk_rows`` rows, and
:func:`load` concatenates them for data that fits in memory.

Formats
-------
``npy``
    A 2-D numeric array saved with :func:`numpy.save`; read through a memory map, so a chunk
    costs only its own rows. No labels.
``csv``
    Delimited text (``,``, tab or runs of spaces, detected from the first data line), an
    optional header line (detected: a first line that is not all numbers), ``#`` comments.
    Labels only when ``label_column`` is given (numeric labels become floats, others strings).
``libsvm``
    ``label index:value index:value ...`` with 1-based indices (``zero_based=True`` for
    0-based files), ``qid:`` fields ignored, ``#`` comments. Missing entries are 0.

Compression is recognised from the file's magic bytes (bzip2, gzip, xz), not its name. The
format is ``npy`` for the ``.npy`` suffix (or numpy's magic bytes); for text it is sniffed from
the first data lines: ``index:value`` tokens mean LIBSVM, anything else CSV.

Examples
--------
>>> import numpy as np, tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "toy.svm")
>>> with open(path, "w") as fh:
...     _ = fh.write("1 1:0.5 3:2\\n-1 2:1.5\\n")
>>> X, y = load(path)
>>> X
array([[0.5, 0. , 2. ],
       [0. , 1.5, 0. ]])
>>> y
array([ 1., -1.])
"""

import bz2
import gzip
import itertools
import lzma
import numbers
import os
from dataclasses import dataclass

import numpy as np

__all__ = ["DatasetInfo", "detect_format", "scan", "iter_chunks", "load", "FORMATS"]

#: The formats understood by the readers.
FORMATS = ("npy", "csv", "libsvm")

_NPY_MAGIC = b"\x93NUMPY"
_COMPRESSION_MAGIC = ((b"BZh", "bz2"), (b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"))


@dataclass(frozen=True)
class DatasetInfo:
    """Shape and layout of a data file, as found by :func:`scan`.

    Attributes
    ----------
    path : str
        The file.
    format : {"npy", "csv", "libsvm"}
        Detected or given format.
    n_rows, n_features : int
        Number of data rows and of feature columns (labels excluded).
    has_labels : bool
        True for LIBSVM files and for CSV files read with a ``label_column``.
    compression : str or None
        ``"bz2"``, ``"gzip"``, ``"xz"`` or None.
    delimiter : str or None
        CSV delimiter (None: runs of whitespace); None for other formats.
    header : bool
        True when the CSV file's first data line is a header (skipped).
    """

    path: str
    format: str
    n_rows: int
    n_features: int
    has_labels: bool
    compression: object = None
    delimiter: object = None
    header: bool = False


# ---------------------------------------------------------------------------------------------
# validation and opening
# ---------------------------------------------------------------------------------------------
def _check_path(path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"input file {path!r} does not exist")
    if os.path.isdir(path):
        raise IsADirectoryError(f"input file {path!r} is a directory, expected a data file")
    return path


def _check_chunk_rows(chunk_rows):
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, numbers.Integral) or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be an integer >= 1, got {chunk_rows!r}")
    return int(chunk_rows)


def _check_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise ValueError(f"dtype must be float32 or float64, got {dt}")
    return dt


def _compression(path):
    with open(path, "rb") as fh:
        head = fh.read(8)
    for magic, name in _COMPRESSION_MAGIC:
        if head.startswith(magic):
            return name
    return None


def _open_text(path, compression):
    if compression == "bz2":
        return bz2.open(path, "rt", encoding="utf-8", errors="strict")
    if compression == "gzip":
        return gzip.open(path, "rt", encoding="utf-8", errors="strict")
    if compression == "xz":
        return lzma.open(path, "rt", encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")


def _data_lines(fh):
    """Yield ``(line_number, stripped_line)`` for non-blank, non-comment lines (1-based)."""
    for number, line in enumerate(fh, start=1):
        text = line.strip()
        if text and not text.startswith("#"):
            yield number, text


def _is_number(token):
    try:
        float(token)
    except ValueError:
        return False
    return True


def _split_csv(text, delimiter):
    return [t.strip() for t in text.split(delimiter)] if delimiter is not None else text.split()


def detect_format(path):
    """Detect the format of ``path``: ``"npy"``, ``"csv"`` or ``"libsvm"``.

    ``.npy`` files are recognised by numpy's magic bytes; text files (optionally compressed)
    by their first 64 data lines: a line whose tokens after the first are all of the form
    ``index:value`` means LIBSVM, otherwise CSV.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is empty (no data line) or not text.
    """
    path = _check_path(path)
    with open(path, "rb") as fh:
        if fh.read(6) == _NPY_MAGIC:
            return "npy"
    compression = _compression(path)
    try:
        with _open_text(path, compression) as fh:
            head = list(itertools.islice(_data_lines(fh), 64))
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise ValueError(f"input file {path!r} is not a .npy file nor readable text ({exc})") from None
    if not head:
        raise ValueError(f"input file {path!r} contains no data lines")
    # LIBSVM rows may be bare labels (all features zero), so look at a few lines
    for _, text in head:
        tokens = text.split("#")[0].split()
        if len(tokens) >= 2 and all(":" in t for t in tokens[1:]):
            return "libsvm"
    return "csv"


def _resolve_format(path, format):
    if format is None:
        return detect_format(path)
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} or None (detect), got {format!r}")
    return format


def _check_label_column(label_column):
    if label_column is None:
        return None
    if isinstance(label_column, bool) or not isinstance(label_column, numbers.Integral):
        raise ValueError(f"label_column must be an integer column index or None, got {label_column!r}")
    return int(label_column)


# ---------------------------------------------------------------------------------------------
# scan
# ---------------------------------------------------------------------------------------------
def _npy_array(path):
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as exc:
        raise ValueError(f"cannot read {path!r} as .npy: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(
            f"the array in {path!r} must be 2-D (rows x features), got shape {arr.shape}"
        )
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) or np.iscomplexobj(arr):
        raise ValueError(f"the array in {path!r} must be real numeric, got dtype {arr.dtype}")
    return arr


def _csv_layout(path, compression):
    """Return (delimiter, header) from the first data line(s)."""
    with _open_text(path, compression) as fh:
        lines = _data_lines(fh)
        first = next(lines, None)
        if first is None:
            raise ValueError(f"input file {path!r} contains no data lines")
        text = first[1]
        delimiter = "," if "," in text else ("\t" if "\t" in text else None)
        tokens = _split_csv(text, delimiter)
        header = not all(_is_number(t) for t in tokens)
        if header:
            second = next(lines, None)
            if second is not None and not any(_is_number(t) for t in _split_csv(second[1], delimiter)):
                header = False  # e.g. a label column of strings: the first line is data too
            elif second is not None:
                # a header has no numeric fields where data rows have them
                first_numeric = [_is_number(t) for t in tokens]
                second_numeric = [_is_number(t) for t in _split_csv(second[1], delimiter)]
                header = first_numeric != second_numeric
    return delimiter, header


def scan(path, *, format=None, label_column=None, n_features=None, zero_based=False):
    """Learn the shape of a data file in one streaming pass (bounded memory).

    Parameters
    ----------
    path : str or os.PathLike
        The data file (``.npy``, CSV or LIBSVM text, optionally bzip2/gzip/xz compressed).
    format : {"npy", "csv", "libsvm"}, optional
        Override format detection (:func:`detect_format`).
    label_column : int, optional
        CSV only: the column holding the labels (negative counts from the end); the other
        columns are features.
    n_features : int, optional
        LIBSVM only: the number of features (files do not state it; the default is the largest
        index present). Must be at least that index.
    zero_based : bool, default False
        LIBSVM only: indices start at 0 instead of 1.

    Returns
    -------
    DatasetInfo
    """
    path = _check_path(path)
    format = _resolve_format(path, format)
    label_column = _check_label_column(label_column)
    if n_features is not None and (isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral)
                                   or n_features < 1):
        raise ValueError(f"n_features must be an integer >= 1 or None, got {n_features!r}")
    if format == "npy":
        if label_column is not None:
            raise ValueError("label_column applies to CSV files only; .npy files hold features only")
        arr = _npy_array(path)
        return DatasetInfo(path, "npy", int(arr.shape[0]), int(arr.shape[1]), False)
    compression = _compression(path)
    if format == "csv":
        delimiter, header = _csv_layout(path, compression)
        n_rows, width = 0, None
        with _open_text(path, compression) as fh:
            lines = _data_lines(fh)
            if header:
                next(lines)
            for number, text in lines:
                w = len(_split_csv(text, delimiter))
                if width is None:
                    width = w
                elif w != width:
                    raise ValueError(
                        f"{path}:{number}: expected {width} fields like the first data row, got {w}"
                    )
                n_rows += 1
        if n_rows == 0:
            raise ValueError(f"input file {path!r} contains a header but no data rows")
        n_feat = width
        if label_column is not None:
            if not -width <= label_column < width:
                raise ValueError(
                    f"label_column must be in [{-width}, {width - 1}] for {width} columns, got {label_column}"
                )
            n_feat -= 1
        if n_feat < 1:
            raise ValueError(f"input file {path!r} has no feature columns")
        return DatasetInfo(path, "csv", n_rows, n_feat, label_column is not None, compression,
                           delimiter, header)
    # libsvm
    if label_column is not None:
        raise ValueError("label_column applies to CSV files only; LIBSVM rows start with their label")
    n_rows, max_index = 0, -1
    with _open_text(path, compression) as fh:
        for number, text in _data_lines(fh):
            _, idx, _ = _parse_libsvm_line(path, number, text, zero_based)
            if idx.size:
                max_index = max(max_index, int(idx.max()))
            n_rows += 1
    if n_rows == 0:
        raise ValueError(f"input file {path!r} contains no data lines")
    width = max_index + 1
    if n_features is not None:
        if n_features < width:
            raise ValueError(
                f"n_features={n_features} is smaller than the largest feature index in {path!r} "
                f"({width} with {'0' if zero_based else '1'}-based indices)"
            )
        width = int(n_features)
    if width < 1:
        raise ValueError(f"input file {path!r} has no features (every row is a bare label)")
    return DatasetInfo(path, "libsvm", n_rows, width, True, compression)


def _parse_libsvm_line(path, number, text, zero_based):
    # fast path: "label i:v i:v ..." -> one float conversion of all numbers
    if "#" not in text and "q" not in text:
        parts = text.replace(":", " ").split()
        if len(parts) % 2 == 1 and text.count(":") == len(parts) // 2:
            try:
                nums = np.array(parts, dtype=np.float64)
            except ValueError:
                pass  # fall through to the checked path for a precise message
            else:
                idx = nums[1::2]
                if np.all(idx == np.floor(idx)):
                    idx = idx.astype(np.int64) - (0 if zero_based else 1)
                    if idx.size == 0 or idx.min() >= 0:
                        return float(nums[0]), idx, nums[2::2]
    tokens = text.split("#", 1)[0].split()
    try:
        label = float(tokens[0])
    except ValueError:
        raise ValueError(f"{path}:{number}: LIBSVM label must be a number, got {tokens[0]!r}") from None
    idx, val = [], []
    for tok in tokens[1:]:
        key, sep, value = tok.partition(":")
        if not sep:
            raise ValueError(f"{path}:{number}: expected index:value, got {tok!r}")
        if key == "qid":
            continue
        try:
            i = int(key) - (0 if zero_based else 1)
            v = float(value)
        except ValueError:
            raise ValueError(f"{path}:{number}: expected index:value with an integer index, got {tok!r}") from None
        if i < 0:
            raise ValueError(
                f"{path}:{number}: feature index {key} is below the first index "
                f"{'0' if zero_based else '1'} (use zero_based=True for 0-based files)"
            )
        idx.append(i)
        val.append(v)
    return label, np.asarray(idx, dtype=np.int64), np.asarray(val, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# chunks
# ---------------------------------------------------------------------------------------------
def _labels_array(labels):
    try:
        return np.asarray([float(v) for v in labels])
    except ValueError:
        return np.asarray(labels, dtype=str)


def _csv_block(path, block, delimiter, label_column, width, dtype):
    rows, labels = [], []
    for number, text in block:
        fields = _split_csv(text, delimiter)
        if len(fields) != width:
            raise ValueError(f"{path}:{number}: expected {width} fields like the first data row, got {len(fields)}")
        if label_column is not None:
            labels.append(fields.pop(label_column))
        rows.append(fields)
    try:
        X = np.asarray(rows, dtype=str).astype(np.float64).astype(dtype, copy=False)
    except ValueError:
        for (number, _), fields in zip(block, rows):
            for col, f in enumerate(fields):
                if not _is_number(f):
                    raise ValueError(f"{path}:{number}: feature field {col} is not a number: {f!r}") from None
        raise
    return X, (_labels_array(labels) if label_column is not None else None)


def iter_chunks(path, *, chunk_rows=4096, format=None, label_column=None, n_features=None,
                zero_based=False, dtype=np.float64, info=None):
    """Yield ``(X, y)`` blocks of at most ``chunk_rows`` rows, streaming (bounded memory).

    Parameters
    ----------
    path : str or os.PathLike
        The data file.
    chunk_rows : int, default 4096
        Maximum rows per block; only one block (plus a read buffer) is in memory at a time.
    format, label_column, n_features, zero_based
        As in :func:`scan`.
    dtype : {numpy.float64, numpy.float32}, default float64
        dtype of the feature blocks.
    info : DatasetInfo, optional
        The result of an earlier :func:`scan` of the same file (saves the scanning pass).

    Yields
    ------
    X : ndarray of shape (rows, n_features)
        C-contiguous, ``dtype``. Every value is finite or a :class:`ValueError` names its line.
    y : ndarray of shape (rows,) or None
        Labels (float, or str for non-numeric CSV labels), None when the file has none.
    """
    chunk_rows = _check_chunk_rows(chunk_rows)
    dtype = _check_dtype(dtype)
    if info is None:
        info = scan(path, format=format, label_column=label_column, n_features=n_features,
                    zero_based=zero_based)
    label_column = _check_label_column(label_column)
    path = info.path
    if info.format == "npy":
        arr = _npy_array(path)
        for start in range(0, info.n_rows, chunk_rows):
            X = np.array(arr[start:start + chunk_rows], dtype=dtype, order="C")
            _check_finite(X, path, start)
            yield X, None
        return
    with _open_text(path, info.compression) as fh:
        lines = _data_lines(fh)
        if info.format == "csv":
            if info.header:
                next(lines)
            width = info.n_features + (1 if info.has_labels else 0)
            row = 0
            while True:
                block = list(itertools.islice(lines, chunk_rows))
                if not block:
                    return
                X, y = _csv_block(path, block, info.delimiter, label_column, width, dtype)
                _check_finite(X, path, row, block)
                row += len(block)
                yield X, y
        else:
            row = 0
            while True:
                block = list(itertools.islice(lines, chunk_rows))
                if not block:
                    return
                X = np.zeros((len(block), info.n_features), dtype=dtype)
                y = np.empty(len(block))
                for k, (number, text) in enumerate(block):
                    label, idx, val = _parse_libsvm_line(path, number, text, zero_based)
                    if idx.size and idx.max() >= info.n_features:
                        raise ValueError(
                            f"{path}:{number}: feature index {int(idx.max()) + (0 if zero_based else 1)} "
                            f"exceeds n_features={info.n_features}"
                        )
                    X[k, idx] = val
                    y[k] = label
                _check_finite(X, path, row, block)
                row += len(block)
                yield X, y


def _check_finite(X, path, first_row, block=None):
    if not np.all(np.isfinite(X)):
        bad = int(np.argwhere(~np.isfinite(X))[0][0])
        where = f"{path}:{block[bad][0]}" if block is not None else f"{path} row {first_row + bad}"
        raise ValueError(f"{where}: features must be finite, got NaN or inf "
                         f"(or a value that overflows the dtype)")


def load(path, *, format=None, label_column=None, n_features=None, zero_based=False,
         dtype=np.float64, chunk_rows=65536):
    """Read a whole data file into memory: ``(X, y)``.

    Parameters are those of :func:`iter_chunks`. ``y`` is None for files without labels.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features)
    y : ndarray of shape (n_rows,) or None
    """
    info = scan(path, format=format, label_column=label_column, n_features=n_features,
                zero_based=zero_based)
    dtype = _check_dtype(dtype)
    X = np.empty((info.n_rows, info.n_features), dtype=dtype)
    ys, row = [], 0
    for Xc, yc in iter_chunks(path, chunk_rows=chunk_rows, label_column=label_column,
                              zero_based=zero_based, dtype=dtype, info=info):
        X[row:row + len(Xc)] = Xc
        row += len(Xc)
        if yc is not None:
            ys.append(yc)
    y = np.concatenate(ys) if ys else None
    return X, y

