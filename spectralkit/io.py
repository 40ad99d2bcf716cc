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
    Delimited text (``,``, tab or runs of spaces, detected from the first line), ``#``
    comments, an optional header line. Labels only when ``label_column`` is given: integers
    (int64) when every label is an integer literal, numbers (float64) when every label is a
    number, otherwise strings. Read by pandas' C parser (chunked) where it gives exactly the
    values of the line-by-line reader; a file or block it does not decide on (comments or blank
    lines inside the data, a malformed row) is read line by line, which names the line of any
    error.
``libsvm``
    ``label index:value index:value ...`` with 1-based indices (``zero_based=True`` for
    0-based files), ``qid:`` fields ignored, ``#`` comments. Missing entries are 0.

Text is UTF-8; a byte-order mark at the start of the file is removed. Lines end with ``\\n``,
``\\r\\n`` or ``\\r``; blank lines and lines starting with ``#`` are skipped. A line longer than
``MAX_LINE_CHARS`` (16 Mi) characters raises :class:`ValueError` with ``path:line:`` after that
much of it is read: a line is held whole in memory, and a file of one huge line (a matrix
written without newlines) is not a table.

Header rule (``header=None``, the default): the first line of a CSV file is a header exactly
when none of its fields is a number and none is empty or a missing-value marker (``NA``,
``N/A``, ``NaN``, ``null``, ``None``, ``?``, any case). ``header=True`` always skips the
first line, ``header=False`` never does. A header must have as many fields as the data rows.

Nothing is guessed or repaired in the data: a CSV row with the wrong number of fields, an empty,
missing (``NA`` ...) or non-numeric feature field, a LIBSVM token that is not
``integer:number`` (``3:``, ``:4``, ``a:b``, ``3:4:5``, ``1.5:2``), a repeated, negative or
too small index (0 in a 1-based file), a non-numeric label and any NaN or infinite value raise
:class:`ValueError` with ``path:line:``, what was found and, where it helps, what is allowed.

Compression is recognised from the file's magic bytes (bzip2, gzip, xz), not its name. A
truncated or corrupt compressed file and text that is not UTF-8 raise :class:`ValueError`
naming the file and the problem (never ``EOFError``, ``zlib.error``, ``lzma.LZMAError`` or
``UnicodeDecodeError``). The integrity checks of the compression formats are at the end of a
block or of the stream, so :func:`scan`, which reads everything, finds any such damage;
:func:`detect_format` reads only the first lines. The format is ``npy`` for numpy's magic
bytes; for text it is sniffed from the first 64 data lines: ``index:value`` tokens mean LIBSVM,
anything else CSV. Inputs must be regular files (the readers read them more than once).

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

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io as _stdio
import itertools
import lzma
import math
import mmap
import numbers
import os
import re
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import DTypeLike, NDArray

__all__ = ["FORMATS", "DatasetInfo", "detect_format", "iter_chunks", "load", "scan"]

#: The formats understood by the readers.
FORMATS = ("npy", "csv", "libsvm")

_NPY_MAGIC = b"\x93NUMPY"
_COMPRESSION_MAGIC = ((b"BZh", "bz2"), (b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"))
_COMPRESSION_NAME = {"bz2": "bzip2", "gzip": "gzip", "xz": "xz"}
# what the decompressors raise on damaged input (gzip.BadGzipFile and bz2's errors are OSErrors)
_DECOMPRESSION_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)
# a parse error in a compressed file is checked against this much more of the stream: damage
# usually shows up as garbage text before the block or stream checksum that detects it
_INTEGRITY_LOOKAHEAD = 16 << 20
#: CSV fields that mean "missing" (compared case-insensitively)
_NA_MARKERS = frozenset({"na", "n/a", "nan", "null", "none", "?"})
#: the longest line the text readers accept, in characters: a line is held whole in memory, so a
#: file of one huge line (a matrix written without newlines) is refused after reading this much
MAX_LINE_CHARS = 1 << 24
#: the largest LIBSVM feature index (15 digits: exact in float64)
_MAX_INDEX = 10**15 - 1
# lines "label index:value ..." and nothing else (no qid, comment, sign or non-digit in an index)
_LIBSVM_PLAIN_LINE = r"[^\s:#]+(?:[^\S\n]+[0-9]{1,15}:[^\s:#]+)*"
_LIBSVM_PLAIN_BLOCK = re.compile(rf"{_LIBSVM_PLAIN_LINE}(?:\n{_LIBSVM_PLAIN_LINE})*")


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
        True when the CSV file's first line is a header (skipped).
    label_column : int or None
        CSV: the label column as given to :func:`scan`.
    zero_based : bool
        LIBSVM: indices start at 0.
    numeric_labels : bool
        True when the labels are numbers (always for LIBSVM); False for text labels and for
        files without labels.
    integer_labels : bool
        CSV: True when every label is an integer literal (``3``, ``-1``, ``+2``): the labels are
        then read as int64, not float64.
    """

    path: str
    format: str
    n_rows: int
    n_features: int
    has_labels: bool
    compression: object = None
    delimiter: object = None
    header: bool = False
    label_column: object = None
    zero_based: bool = False
    numeric_labels: bool = False
    integer_labels: bool = False


# ---------------------------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------------------------
def _check_path(path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"input file {path!r} does not exist")
    mode = os.stat(path).st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(f"input file {path!r} is a directory, expected a data file")
    if not stat.S_ISREG(mode):
        raise ValueError(
            f"input file {path!r} is not a regular file (a pipe, socket or device); "
            "the readers read their input more than once: save it to a file first"
        )
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


def _check_label_column(label_column):
    if label_column is None:
        return None
    if isinstance(label_column, bool) or not isinstance(label_column, numbers.Integral):
        raise TypeError(f"label_column must be an integer column index or None, got {label_column!r}")
    return int(label_column)


def _check_n_features(n_features):
    if n_features is None:
        return None
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) or n_features < 1:
        raise ValueError(f"n_features must be an integer >= 1 or None, got {n_features!r}")
    return int(n_features)


def _check_flag(name, value, allow_none=False):
    if (value is None and allow_none) or isinstance(value, (bool, np.bool_)):
        return None if value is None else bool(value)
    allowed = "True, False or None (detect)" if allow_none else "True or False"
    raise ValueError(f"{name} must be {allowed}, got {value!r}")


def _resolve_format(path, format):
    if format is None:
        return detect_format(path)
    if format not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)} or None (detect), got {format!r}")
    return format


def _gb(n_bytes):
    return f"{n_bytes / 1e9:.3g} GB"


def _allocate(shape, dtype, what):
    """``np.zeros(shape, dtype)``; failure is a MemoryError saying what and how much."""
    try:
        return np.zeros(shape, dtype=dtype)
    except (MemoryError, ValueError):  # ValueError: "array is too big" for absurd shapes
        need = math.prod(shape) * np.dtype(dtype).itemsize
        raise MemoryError(f"not enough memory for {what}: need about {_gb(need)}") from None


# ---------------------------------------------------------------------------------------------
# reading text (plain or compressed) with every failure a ValueError naming the file
# ---------------------------------------------------------------------------------------------
class _ReadError(ValueError):
    """The file cannot be read as text (damaged compressed data, not UTF-8); complete message."""


def _compression(path):
    with open(path, "rb") as fh:
        head = fh.read(6)
    for magic, name in _COMPRESSION_MAGIC:
        n = min(len(magic), len(head))  # a file shorter than the magic: a truncated stream
        if n >= 2 and head[:n] == magic[:n]:
            return name
    return None


def _open_binary(path, compression):
    opener = {"bz2": bz2.open, "gzip": gzip.open, "xz": lzma.open}.get(compression, open)
    return opener(path, "rb")


def _open_text(path, compression):
    return _stdio.TextIOWrapper(_open_binary(path, compression), encoding="utf-8-sig", errors="strict")


def _decompression_error(path, compression, exc):
    kind = _COMPRESSION_NAME[compression]
    if isinstance(exc, EOFError):
        return _ReadError(f"{path}: truncated {kind} file: the compressed data ends early ({exc})")
    return _ReadError(f"{path}: corrupt {kind} data ({exc})")


def _first_undecodable(path, compression):
    """``(line, column, byte)`` of the first byte that is not UTF-8, or None if not found.

    Lines are split exactly as in the UTF-8 reading (``\\n``, ``\\r\\n``, ``\\r``): those bytes
    never occur inside a UTF-8 sequence, so a latin-1 reading splits at the same places.
    """
    try:
        with _stdio.TextIOWrapper(_open_binary(path, compression), encoding="latin-1") as fh:
            limit = 4 * MAX_LINE_CHARS  # bytes of a line of MAX_LINE_CHARS characters at most
            for number, line in enumerate(iter(lambda: fh.readline(limit + 1), ""), start=1):
                if len(line) > limit and not line.endswith("\n"):
                    return None  # a line too long to hold: no position given
                raw = line.encode("latin-1")
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                try:
                    raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    return number, len(raw[: exc.start].decode("utf-8")) + 1, raw[exc.start]
    except _DECOMPRESSION_ERRORS:
        pass
    return None


class _TextFile:
    """A text file, maybe compressed, read line by line.

    Decompression and decoding failures become :class:`_ReadError`. A format error (any other
    ValueError) raised inside the ``with`` block of a compressed file is first checked against
    the rest of the stream: damaged compressed data often decodes to garbage text before the
    checksum that detects it, and the damage is then the error to report.
    """

    def __init__(self, path, compression):
        self.path, self.compression = path, compression
        self.fh = _open_text(path, compression)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if (
                self.compression is not None
                and isinstance(exc, ValueError)
                and not isinstance(exc, _ReadError)
            ):
                self._raise_if_damaged()
        finally:
            self.fh.close()
        return False

    def _raise_if_damaged(self):
        try:
            for _ in range(_INTEGRITY_LOOKAHEAD >> 20):
                if not self.fh.buffer.read(1 << 20):
                    return
        except _DECOMPRESSION_ERRORS as exc:
            raise _decompression_error(self.path, self.compression, exc) from None

    def lines(self):
        """Yield ``(line_number, stripped_line)`` for non-blank, non-comment lines (1-based).

        A line longer than :data:`MAX_LINE_CHARS` is a ValueError raised after reading that much
        of it (never the whole line).
        """
        limit = MAX_LINE_CHARS
        try:
            for number, line in enumerate(iter(lambda: self.fh.readline(limit + 1), ""), start=1):
                if len(line) > limit and not line.endswith("\n"):  # limit + 1 characters, no end
                    raise ValueError(_line_too_long(self.path, number, limit))
                text = line.strip()
                if text and not text.startswith("#"):
                    yield number, text
        except UnicodeDecodeError as exc:
            if self.compression is not None:
                self._raise_if_damaged()
            where = _first_undecodable(self.path, self.compression)
            if where is None:
                raise _ReadError(f"{self.path}: not UTF-8 text ({exc.reason})") from None
            line, column, byte = where
            raise _ReadError(
                f"{self.path}:{line}: not UTF-8 text (byte 0x{byte:02x} at column {column}); "
                "the readers take .npy files and UTF-8 CSV or LIBSVM text"
            ) from None
        except _DECOMPRESSION_ERRORS as exc:
            if self.compression is None:
                raise
            raise _decompression_error(self.path, self.compression, exc) from exc


def _line_too_long(path, number, limit):
    return (
        f"{path}:{number}: line longer than {limit} characters (the readers hold one line in memory): "
        "not a table of rows, one per line; check the line endings and the format"
    )


class _LineBounded(_stdio.RawIOBase):
    """A binary stream that raises ValueError once a line exceeds ``limit`` bytes (``\\n`` or
    ``\\r`` end lines), so that pandas' parser never buffers a huge line whole. A byte count at
    least the character count of UTF-8 text: the exact reader, which counts characters, decides."""

    def __init__(self, raw, path, limit):
        super().__init__()
        self.raw, self.path, self.limit, self.run = raw, path, limit, 0

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.raw.read(min(len(buffer), self.limit))  # a gap inside data is < limit
        n = len(data)
        buffer[:n] = data
        ends = [i for i in (data.find(b"\n"), data.find(b"\r")) if i >= 0]
        if not ends:
            self.run += n
        else:
            self.run += min(ends)
            if self.run <= self.limit:
                self.run = n - 1 - max(data.rfind(b"\n"), data.rfind(b"\r"))
        if self.run > self.limit:
            raise ValueError(f"{self.path}: a line longer than {self.limit} bytes")
        return n

    def close(self):
        try:
            self.raw.close()
        finally:
            super().close()


def _is_number(token):
    try:
        float(token)
    except ValueError:
        return False
    return True


def _split_csv(text, delimiter):
    return [t.strip() for t in text.split(delimiter)] if delimiter is not None else text.split()


def _is_header(fields):
    return all(f and f.lower() not in _NA_MARKERS and not _is_number(f) for f in fields)


# ---------------------------------------------------------------------------------------------
# format detection and scan
# ---------------------------------------------------------------------------------------------
def detect_format(path: str | os.PathLike[str]) -> Literal["npy", "csv", "libsvm"]:
    """Detect the format of ``path``: ``"npy"``, ``"csv"`` or ``"libsvm"``.

    ``.npy`` files are recognised by numpy's magic bytes; text files (optionally compressed)
    by their first 64 data lines: a line whose tokens after the first are all of the form
    ``index:value`` means LIBSVM, otherwise CSV. Only the first lines are read, so damage
    further into a compressed file is found by :func:`scan`, not here.

    Raises
    ------
    FileNotFoundError
        If the file does not exist.
    ValueError
        If the file is not a regular file, is empty (no data line), is not UTF-8 text, or is a
        truncated or corrupt compressed file (as far as read).
    """
    path = _check_path(path)
    with open(path, "rb") as fh:
        if fh.read(6) == _NPY_MAGIC:
            return "npy"
    with _TextFile(path, _compression(path)) as tf:
        head = list(itertools.islice(tf.lines(), 64))
    if not head:
        raise ValueError(f"input file {path!r} contains no data lines")
    # LIBSVM rows may be bare labels (all features zero), so look at a few lines
    for _, text in head:
        tokens = text.split("#")[0].split()
        if len(tokens) >= 2 and all(":" in t for t in tokens[1:]):
            return "libsvm"
    return "csv"


def _npy_header_dtype(path):
    """The dtype in a .npy header, or None if the header cannot be read (np.load then says why)."""
    try:
        with open(path, "rb") as fh:
            major, _ = np.lib.format.read_magic(fh)
            read = np.lib.format.read_array_header_1_0 if major == 1 else np.lib.format.read_array_header_2_0
            return read(fh)[2]
    except (ValueError, OSError, EOFError):
        return None


def _npy_array(path):
    dtype = _npy_header_dtype(path)
    if dtype is not None and dtype.hasobject:  # np.load: "Array can't be memory-mapped: Python objects"
        raise ValueError(
            f"the array in {path!r} holds Python objects (dtype {dtype}); the readers take real numeric "
            ".npy arrays and never unpickle"
        )
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except PermissionError:
        raise
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"cannot read {path!r} as .npy: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"the array in {path!r} must be 2-D (rows x features), got shape {arr.shape}")
    if not (np.issubdtype(arr.dtype, np.number) or arr.dtype == np.bool_) or np.iscomplexobj(arr):
        raise ValueError(f"the array in {path!r} must be real numeric, got dtype {arr.dtype}")
    if 0 in arr.shape:
        raise ValueError(f"the array in {path!r} is empty (shape {arr.shape})")
    return arr


class _Fallback(Exception):
    """The fast CSV reader met something it does not decide itself: the exact reader takes over."""


_INTEGER_LABEL = r"[+-]?[0-9]+"
# pandas >= 3 parses floats correctly rounded by default (and deprecates the option); before,
# only float_precision="round_trip" gives exactly Python's float()
_EXACT_FLOATS = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
_INTEGER_LABEL_RE = re.compile(_INTEGER_LABEL)


def _first_csv_line(path, compression):
    """``(line_number, text)`` of the first data line, or None."""
    with _TextFile(path, compression) as tf:
        return next(tf.lines(), None)


def _pandas_csv(path, compression, delimiter, header, width, label_column, chunk_rows):
    """Yield ``(X float64, labels as str or None)`` blocks read by pandas' C parser.

    Used only where it gives exactly what the line-by-line reader gives: no quoting, no
    missing-value conversion, round-trip float parsing. Anything it would read differently (a
    comment or blank line inside the data, a row of another width, an empty, missing, non-numeric
    or non-finite field, a damaged or non-UTF-8 file) raises :class:`_Fallback`, and the exact
    reader then reads the file and reports the problem with its line number.
    """
    lc = None if label_column is None else label_column % width
    dtypes = {j: (str if j == lc else np.float64) for j in range(width)}
    stream = None
    try:
        stream = _stdio.BufferedReader(_LineBounded(_open_binary(path, compression), path, MAX_LINE_CHARS))
        reader = pd.read_csv(
            stream,
            sep=delimiter if delimiter is not None else r"\s+",
            header=None,
            skiprows=1 if header else 0,
            names=range(width),
            dtype=dtypes,
            na_filter=False,
            quoting=csv.QUOTE_NONE,
            engine="c",
            **_EXACT_FLOATS,
            encoding="utf-8-sig",
            skip_blank_lines=False,
            chunksize=chunk_rows,
        )
        with reader:
            for frame in reader:
                if frame.shape[1] != width:
                    raise _Fallback
                features = frame.drop(columns=lc) if lc is not None else frame
                X = features.to_numpy(dtype=np.float64)
                if not np.isfinite(X).all():
                    raise _Fallback
                labels = None
                if lc is not None:
                    labels = frame[lc].to_numpy(dtype=str)
                    if not np.char.str_len(np.char.strip(labels)).all():
                        raise _Fallback
                yield np.ascontiguousarray(X), labels
    except _Fallback:
        raise
    except Exception as exc:  # any parser trouble: the exact reader decides
        raise _Fallback from exc
    finally:
        if stream is not None:
            stream.close()


def _label_kind(labels):
    """(numeric, integer, first non-finite label or None) of a block of label strings."""
    stripped = np.char.strip(labels)
    if pd.Series(stripped).str.fullmatch(_INTEGER_LABEL).all():
        return True, True, None
    try:
        values = stripped.astype(np.float64)
    except ValueError:
        if not all(_is_number(t) for t in stripped):
            return False, False, None
        values = np.array([float(t) for t in stripped])
    bad = np.flatnonzero(~np.isfinite(values))
    return True, False, (int(bad[0]) if bad.size else None)


def _scan_csv_fast(path, compression, label_column, header):
    """The result of :func:`_scan_csv` from pandas' parser; raises :class:`_Fallback`."""
    first = _first_csv_line(path, compression)
    if first is None:
        raise _Fallback
    number, text = first
    if number != 1:
        raise _Fallback  # comments or blank lines before the data: the exact reader counts lines
    delimiter = "," if "," in text else ("\t" if "\t" in text else None)
    if header is None:
        header = _is_header(_split_csv(text, delimiter))
    if header:
        with _TextFile(path, compression) as tf:
            lines = tf.lines()
            next(lines)
            data_line = next(lines, None)
        if data_line is None:
            raise _Fallback
        width = len(_split_csv(data_line[1], delimiter))
        _check_csv_width(path, first, delimiter, width, data_line[0], label_column)
    else:
        width = len(_split_csv(text, delimiter))
        _check_csv_width(path, None, delimiter, width, number, label_column)
    n_rows, numeric, integer = 0, True, True
    for X, labels in _pandas_csv(path, compression, delimiter, header, width, label_column, 1 << 16):
        n_rows += len(X)
        if labels is not None and numeric:
            numeric, integer_block, bad = _label_kind(labels)
            integer = integer and integer_block
            if bad is not None:
                raise _Fallback  # the exact reader names the line of the non-finite label
    if n_rows == 0:
        raise _Fallback
    numeric = label_column is not None and numeric
    return n_rows, width - (label_column is not None), delimiter, header, numeric, numeric and integer


def _scan_csv(path, compression, label_column, header):
    """(n_rows, n_features, delimiter, header, numeric_labels) in one pass."""
    with _TextFile(path, compression) as tf:
        lines = tf.lines()
        first = next(lines, None)
        if first is None:
            raise ValueError(f"input file {path!r} contains no data lines")
        number, text = first
        delimiter = "," if "," in text else ("\t" if "\t" in text else None)
        if header is None:
            header = _is_header(_split_csv(text, delimiter))
        header_line = first if header else None
        rows = lines if header else itertools.chain([first], lines)
        n_rows, width = 0, None
        numeric, integer, non_finite = True, True, None  # labels: numbers? integers? first non-finite
        for number, text in rows:
            if label_column is None:
                w = text.count(delimiter) + 1 if delimiter is not None else len(text.split())
            else:
                fields = _split_csv(text, delimiter)
                w = len(fields)
            if width is None:
                width = w
                _check_csv_width(path, header_line, delimiter, width, number, label_column)
            elif w != width:
                raise ValueError(f"{path}:{number}: expected {width} fields like the first data row, got {w}")
            if label_column is not None:
                label = fields[label_column]
                if not label:
                    raise ValueError(f"{path}:{number}: the label (field {label_column % width}) is empty")
                integer = integer and _INTEGER_LABEL_RE.fullmatch(label) is not None
                if numeric:
                    try:
                        value = float(label)
                    except ValueError:
                        numeric = False
                    else:
                        if non_finite is None and not math.isfinite(value):
                            non_finite = (number, label)
            n_rows += 1
    if n_rows == 0:
        raise ValueError(f"input file {path!r} contains a header but no data rows")
    if label_column is not None and numeric and non_finite is not None:
        raise ValueError(f"{path}:{non_finite[0]}: labels must be finite numbers, got {non_finite[1]!r}")
    numeric = label_column is not None and numeric
    return n_rows, width - (label_column is not None), delimiter, header, numeric, numeric and integer


def _check_csv_width(path, header_line, delimiter, width, number, label_column):
    if header_line is not None:
        hw = len(_split_csv(header_line[1], delimiter))
        if hw != width:
            raise ValueError(
                f"{path}:{header_line[0]}: the header has {hw} fields but the first data row "
                f"(line {number}) has {width}"
            )
    if label_column is not None:
        if not -width <= label_column < width:
            raise ValueError(
                f"label_column must be in [{-width}, {width - 1}] for {width} columns, got {label_column}"
            )
        if width < 2:
            raise ValueError(f"input file {path!r} has no feature columns (only the label column)")


def _scan_libsvm(path, compression, zero_based, n_features):
    n_rows, max_index = 0, -1
    with _TextFile(path, compression) as tf:
        lines = tf.lines()
        while block := list(itertools.islice(lines, 4096)):
            _, _, idx, _ = _parse_libsvm_block(path, block, zero_based)
            if idx.size:
                max_index = max(max_index, int(idx.max()))
            n_rows += len(block)
    if n_rows == 0:
        raise ValueError(f"input file {path!r} contains no data lines")
    width = max_index + 1
    if n_features is not None:
        if n_features < width:
            raise ValueError(
                f"n_features={n_features} is smaller than the largest feature index in {path!r} "
                f"({width} with {'0' if zero_based else '1'}-based indices)"
            )
        width = n_features
    if width < 1:
        raise ValueError(f"input file {path!r} has no features (every row is a bare label)")
    return n_rows, width


def scan(
    path: str | os.PathLike[str],
    *,
    format: Literal["npy", "csv", "libsvm"] | None = None,
    label_column: int | None = None,
    n_features: int | None = None,
    zero_based: bool = False,
    header: bool | None = None,
) -> DatasetInfo:
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
    header : bool or None, default None
        CSV only: True skips the first line, False reads it as data, None applies the header
        rule of the module docstring (no field a number, none empty or ``NA``).

    Returns
    -------
    DatasetInfo

    Raises
    ------
    ValueError
        For options that do not apply to the file's format, malformed rows (``path:line:``),
        damaged compressed data and text that is not UTF-8.
    """
    path = _check_path(path)
    label_column = _check_label_column(label_column)
    n_features = _check_n_features(n_features)
    zero_based = _check_flag("zero_based", zero_based)
    header = _check_flag("header", header, allow_none=True)
    format = _resolve_format(path, format)
    if format != "libsvm" and (n_features is not None or zero_based):
        option = "n_features" if n_features is not None else "zero_based"
        raise ValueError(f"{option} applies to LIBSVM files only; {path!r} is read as {format}")
    if format != "csv" and header:
        raise ValueError(f"header=True applies to CSV files only; {path!r} is read as {format}")
    if format == "npy":
        if label_column is not None:
            raise ValueError("label_column applies to CSV files only; .npy files hold features only")
        arr = _npy_array(path)
        return DatasetInfo(path, "npy", int(arr.shape[0]), int(arr.shape[1]), False)
    compression = _compression(path)
    if format == "csv":
        try:
            n_rows, n_feat, delimiter, header, numeric, integer = _scan_csv_fast(
                path, compression, label_column, header
            )
        except _Fallback:
            n_rows, n_feat, delimiter, header, numeric, integer = _scan_csv(
                path, compression, label_column, header
            )
        return DatasetInfo(
            path,
            "csv",
            n_rows,
            n_feat,
            label_column is not None,
            compression,
            delimiter,
            header,
            label_column,
            False,
            numeric,
            integer,
        )
    if label_column is not None:
        raise ValueError("label_column applies to CSV files only; LIBSVM rows start with their label")
    n_rows, width = _scan_libsvm(path, compression, zero_based, n_features)
    return DatasetInfo(path, "libsvm", n_rows, width, True, compression, None, False, None, zero_based, True)


# ---------------------------------------------------------------------------------------------
# LIBSVM lines
# ---------------------------------------------------------------------------------------------
def _parse_libsvm_block(path, block, zero_based):
    """``(labels, rows, indices, values)`` of a block of ``(line_number, text)`` LIBSVM lines.

    ``rows[j]`` is the block row of the entry ``(indices[j], values[j])``; indices are 0-based.
    Anything irregular is a ValueError naming its line.
    """
    texts = [text for _, text in block]
    joined = "\n".join(texts)
    # fast path for the plain layout (no qid, comment, sign or non-digit in an index): one regex
    # and one float conversion for the whole block, then array checks; whatever it does not
    # accept is parsed line by line, which names the problem
    if _LIBSVM_PLAIN_BLOCK.fullmatch(joined):
        try:
            nums = np.array(joined.replace(":", " ").split(), dtype=np.float64)
        except ValueError:
            nums = None
        if nums is not None and np.isfinite(nums).all():
            counts = np.fromiter((t.count(":") for t in texts), dtype=np.int64, count=len(texts))
            starts = np.zeros(len(texts), dtype=np.int64)
            np.cumsum(1 + 2 * counts[:-1], out=starts[1:])
            is_feature = np.ones(nums.size, dtype=bool)
            is_feature[starts] = False
            pairs = nums[is_feature]
            idx = pairs[0::2].astype(np.int64) - (0 if zero_based else 1)
            rows = np.repeat(np.arange(len(texts)), counts)
            # indices must be >= 0 and strictly increasing within a row (hence distinct)
            if idx.size == 0 or (idx.min() >= 0 and np.all((idx[1:] > idx[:-1]) | (rows[1:] != rows[:-1]))):
                return nums[starts], rows, idx, pairs[1::2]
    labels, idxs, vals = np.empty(len(block)), [], []
    for k, (number, text) in enumerate(block):
        labels[k], idx, val = _parse_libsvm_checked(f"{path}:{number}", text, zero_based)
        idxs.append(idx)
        vals.append(val)
    rows = np.repeat(np.arange(len(block)), [len(i) for i in idxs])
    return labels, rows, np.concatenate(idxs), np.concatenate(vals)


def _parse_libsvm_checked(where, text, zero_based):
    tokens = text.split("#", 1)[0].split()
    try:
        label = float(tokens[0])
    except ValueError:
        raise ValueError(f"{where}: LIBSVM label must be a number, got {tokens[0]!r}") from None
    if not math.isfinite(label):
        raise ValueError(f"{where}: LIBSVM label must be finite, got {tokens[0]!r}")
    first = 0 if zero_based else 1
    idx, val, seen = [], [], set()
    for tok in tokens[1:]:
        key, sep, value = tok.partition(":")
        if not sep:
            raise ValueError(f"{where}: expected index:value, got {tok!r}")
        if ":" in value:
            raise ValueError(f"{where}: expected index:value with a single ':', got {tok!r}")
        if key == "qid":
            if not (value.isascii() and value.isdigit()):
                raise ValueError(f"{where}: qid must be a non-negative integer, got {tok!r}")
            continue
        if not key:
            raise ValueError(f"{where}: missing feature index in {tok!r}")
        if not value:
            raise ValueError(f"{where}: missing feature value in {tok!r}")
        if not (key.isascii() and key.isdigit()):
            if key[0] == "-" and key[1:].isascii() and key[1:].isdigit():
                raise ValueError(f"{where}: negative feature index in {tok!r}")
            raise ValueError(f"{where}: feature index must be an integer, got {key!r} in {tok!r}")
        i = int(key)
        if i > _MAX_INDEX:
            raise ValueError(f"{where}: feature index {key} is too large (at most {_MAX_INDEX})")
        if i < first:
            raise ValueError(
                f"{where}: feature index {key} is below the first index {first} "
                "(for a 0-based file use zero_based=True, on the command line --zero-based)"
            )
        if i in seen:
            raise ValueError(f"{where}: feature index {i} appears more than once")
        try:
            v = float(value)
        except ValueError:
            raise ValueError(f"{where}: feature value must be a number, got {value!r} in {tok!r}") from None
        if not math.isfinite(v):
            raise ValueError(f"{where}: feature value must be finite, got {value!r} in {tok!r}")
        seen.add(i)
        idx.append(i - first)
        val.append(v)
    return label, np.asarray(idx, dtype=np.int64), np.asarray(val, dtype=np.float64)


# ---------------------------------------------------------------------------------------------
# chunks
# ---------------------------------------------------------------------------------------------
def _first_non_finite(X):
    """``(row, column)`` of the first non-finite entry of X, or None."""
    if np.isfinite(X).all():
        return None
    r, c = np.argwhere(~np.isfinite(X))[0]
    return int(r), int(c)


def _csv_block(info, block, dtype):
    path, delimiter, lc = info.path, info.delimiter, info.label_column
    width = info.n_features + info.has_labels
    rows, labels = [], []
    for number, text in block:
        fields = _split_csv(text, delimiter)
        if len(fields) != width:
            raise ValueError(
                f"{path}:{number}: expected {width} fields like the first data row, got {len(fields)}"
            )
        if lc is not None:
            labels.append(fields.pop(lc))
        rows.append(fields)
    columns = [j for j in range(width) if lc is None or j != lc % width]  # feature -> field
    try:
        X64 = np.asarray(rows, dtype=str).astype(np.float64)
    except ValueError:
        _raise_bad_field(path, block, rows, columns)
        raise
    with np.errstate(over="ignore"):
        X = X64.astype(dtype, copy=False)
    bad = _first_non_finite(X)
    if bad is not None:
        r, c = bad
        note = f" (overflows {dtype})" if np.isfinite(X64[r, c]) else ""
        raise ValueError(
            f"{path}:{block[r][0]}: features must be finite, got {rows[r][c]!r} in field {columns[c]}{note}"
        )
    y = None
    if lc is not None:
        if not info.numeric_labels:
            y = np.asarray(labels, dtype=str)
        else:
            try:
                y = np.asarray(labels, dtype=np.int64 if info.integer_labels else np.float64)
            except (ValueError, OverflowError):
                raise _changed(info) from None
            if not np.isfinite(y).all():
                raise _changed(info)
    return X, y


def _raise_bad_field(path, block, rows, columns):
    for (number, _), fields in zip(block, rows):
        for c, f in enumerate(fields):
            if _is_number(f):
                continue
            if not f:
                raise ValueError(f"{path}:{number}: feature field {columns[c]} is empty")
            if f.lower() in _NA_MARKERS:
                raise ValueError(
                    f"{path}:{number}: feature field {columns[c]} is a missing value {f!r} "
                    "(missing values are not supported)"
                )
            raise ValueError(f"{path}:{number}: feature field {columns[c]} is not a number: {f!r}")


def _libsvm_block(info, block, dtype):
    path, n_features = info.path, info.n_features
    first = 0 if info.zero_based else 1
    labels, rows, idx, val = _parse_libsvm_block(path, block, info.zero_based)
    if idx.size and idx.max() >= n_features:
        j = int(np.argmax(idx >= n_features))
        raise ValueError(
            f"{path}:{block[rows[j]][0]}: feature index {int(idx[j]) + first} exceeds n_features={n_features}"
        )
    X = _allocate((len(block), n_features), dtype, f"a chunk of {len(block)} rows x {n_features} features")
    with np.errstate(over="ignore"):
        X[rows, idx] = val
    bad = _first_non_finite(X)
    if bad is not None:
        r, c = bad
        raise ValueError(f"{path}:{block[r][0]}: feature {c + first} overflows {dtype}")
    return X, labels


def _changed(info):
    return ValueError(f"{info.path} changed since it was scanned: read it again with scan()")


def _check_info(info, path, options):
    if not isinstance(info, DatasetInfo):
        raise TypeError(f"info must be a DatasetInfo from scan(), got {type(info).__name__}")
    defaults = {"format": None, "label_column": None, "n_features": None, "zero_based": False, "header": None}
    for name, value in options.items():
        if value != defaults[name] and value != getattr(info, name):
            raise ValueError(
                f"{name}={value!r} conflicts with info.{name}={getattr(info, name)!r} "
                "(the options of scan() apply; leave them out or pass the same)"
            )
    if path is not None:
        given = os.fspath(path)
        try:
            same = os.path.samefile(given, info.path)
        except OSError:
            same = False
        if not same:
            raise ValueError(f"info describes {info.path!r}, not {given!r}")


def iter_chunks(
    path: str | os.PathLike[str],
    *,
    chunk_rows: int = 4096,
    format: Literal["npy", "csv", "libsvm"] | None = None,
    label_column: int | None = None,
    n_features: int | None = None,
    zero_based: bool = False,
    header: bool | None = None,
    dtype: DTypeLike = np.float64,
    info: DatasetInfo | None = None,
) -> Iterator[tuple[NDArray[np.floating], NDArray[np.float64] | NDArray[np.str_] | None]]:
    """Yield ``(X, y)`` blocks of at most ``chunk_rows`` rows, streaming (bounded memory).

    Parameters
    ----------
    path : str or os.PathLike
        The data file.
    chunk_rows : int, default 4096
        Maximum rows per block; only one block (plus a read buffer) is in memory at a time.
    format, label_column, n_features, zero_based, header
        As in :func:`scan`.
    dtype : {numpy.float64, numpy.float32}, default float64
        dtype of the feature blocks.
    info : DatasetInfo, optional
        The result of an earlier :func:`scan` of the same file (saves the scanning pass). Its
        options apply; options given here must be left out or agree with it.

    Yields
    ------
    X : ndarray of shape (rows, n_features)
        C-contiguous, ``dtype``. Every value is finite or a :class:`ValueError` names its line.
    y : ndarray of shape (rows,) or None
        Labels (float, or str for non-numeric CSV labels), None when the file has none.

    Raises
    ------
    ValueError
        At the call for bad arguments and files that cannot be scanned; while iterating for a
        malformed row (``path:line:``) or a file that changed since ``info`` was made.
    MemoryError
        When a block does not fit in memory (the message says how much it needs).
    """
    chunk_rows = _check_chunk_rows(chunk_rows)
    dtype = _check_dtype(dtype)
    options = {
        "format": format,
        "label_column": label_column,
        "n_features": n_features,
        "zero_based": zero_based,
        "header": header,
    }
    if info is None:
        info = scan(path, **options)
    else:
        _check_info(info, path, options)
    return _chunks(info, chunk_rows, dtype)


def _chunks(info, chunk_rows, dtype):
    try:
        if info.format == "npy":
            yield from _npy_chunks(info, chunk_rows, dtype)
        elif info.format == "csv":
            yield from _csv_chunks(info, chunk_rows, dtype)
        else:
            yield from _text_chunks(info, chunk_rows, dtype)
    except MemoryError as exc:
        # name the file, and for LIBSVM where the width comes from: its largest feature index
        where = f"{info.path!r}" + (
            f" (its largest feature index makes {info.n_features} features)"
            if info.format == "libsvm"
            else ""
        )
        if str(exc).startswith("not enough memory"):
            raise MemoryError(f"{exc} reading {where}") from None
        need = chunk_rows * info.n_features * (8 + dtype.itemsize)
        raise MemoryError(
            f"not enough memory for chunks of {chunk_rows} rows x {info.n_features} features of {where}: "
            f"need about {_gb(need)} (use a smaller chunk_rows)"
        ) from None


def _npy_chunks(info, chunk_rows, dtype):
    arr = _npy_array(info.path)
    if arr.shape != (info.n_rows, info.n_features):
        raise _changed(info)
    for start in range(0, info.n_rows, chunk_rows):
        src = arr[start : start + chunk_rows]
        with np.errstate(over="ignore", invalid="ignore"):
            X = np.array(src, dtype=dtype, order="C")
        bad = _first_non_finite(X)
        if bad is not None:
            r, c = bad
            value = float(src[r, c])
            note = f" (overflows {dtype})" if math.isfinite(value) else ""
            raise ValueError(
                f"{info.path}: row {start + r}, column {c}: features must be finite, got {value!r}{note}"
            )
        _release_rows(arr, start, start + len(X))
        yield X, None


def _csv_chunks(info, chunk_rows, dtype):
    """CSV blocks from pandas' parser; from the first block it does not decide on, the exact
    reader's (which reads from the start again, skipping the rows already given)."""
    done = 0
    width = info.n_features + info.has_labels
    try:
        for X64, labels in _pandas_csv(
            info.path, info.compression, info.delimiter, info.header, width, info.label_column, chunk_rows
        ):
            if done + len(X64) > info.n_rows:
                raise _Fallback
            with np.errstate(over="ignore"):
                X = X64.astype(dtype, copy=False)
            if not np.isfinite(X).all():
                raise _Fallback  # overflows float32: the exact reader names the field
            y = None
            if labels is not None:
                if not info.numeric_labels:
                    y = labels
                else:
                    kind = np.int64 if info.integer_labels else np.float64
                    try:
                        y = np.char.strip(labels).astype(kind)
                    except (ValueError, OverflowError):
                        raise _Fallback from None
            done += len(X)
            yield X, y
        if done != info.n_rows:
            raise _Fallback
    except _Fallback:
        skipped = 0
        for X, y in _text_chunks(info, chunk_rows, dtype):
            if skipped + len(X) <= done:
                skipped += len(X)
                continue
            start = max(done - skipped, 0)
            skipped += len(X)
            yield X[start:], (None if y is None else y[start:])


def _release_rows(arr, start, stop):
    """Drop the pages of rows [start, stop) of a memory-mapped C-order array from this process's
    resident memory (they were copied; the file is unchanged), so that streaming a large .npy
    keeps the memory bounded (a read-only mapping's pages would otherwise stay resident)."""
    mm = getattr(arr, "_mmap", None)
    if mm is None or not arr.flags.c_contiguous or not hasattr(mmap, "MADV_DONTNEED"):
        return
    row_bytes = arr.strides[0]
    first = arr.offset % mmap.ALLOCATIONGRANULARITY + start * row_bytes  # offset in the mapping
    last = arr.offset % mmap.ALLOCATIONGRANULARITY + stop * row_bytes
    first -= first % mmap.PAGESIZE
    try:
        mm.madvise(mmap.MADV_DONTNEED, first, max(0, min(last, len(mm)) - first))
    except (OSError, ValueError):  # best effort: the copy is already made
        pass


def _text_chunks(info, chunk_rows, dtype):
    block_of = _csv_block if info.format == "csv" else _libsvm_block
    with _TextFile(info.path, info.compression) as tf:
        lines = tf.lines()
        if info.header:
            next(lines, None)
        row = 0
        while True:
            block = list(itertools.islice(lines, chunk_rows))
            if not block:
                break
            row += len(block)
            if row > info.n_rows:
                raise _changed(info)
            yield block_of(info, block, dtype)
        if row != info.n_rows:
            raise _changed(info)


def load(
    path: str | os.PathLike[str],
    *,
    format: Literal["npy", "csv", "libsvm"] | None = None,
    label_column: int | None = None,
    n_features: int | None = None,
    zero_based: bool = False,
    header: bool | None = None,
    dtype: DTypeLike = np.float64,
    chunk_rows: int = 65536,
) -> tuple[NDArray[np.floating], NDArray[np.float64] | NDArray[np.str_] | None]:
    """Read a whole data file into memory: ``(X, y)``.

    Parameters are those of :func:`iter_chunks`. ``y`` is None for files without labels.

    Returns
    -------
    X : ndarray of shape (n_rows, n_features)
    y : ndarray of shape (n_rows,) or None
    """
    chunk_rows = _check_chunk_rows(chunk_rows)
    dtype = _check_dtype(dtype)
    info = scan(
        path,
        format=format,
        label_column=label_column,
        n_features=n_features,
        zero_based=zero_based,
        header=header,
    )
    X = _allocate(
        (info.n_rows, info.n_features),
        dtype,
        f"loading {info.path} ({info.n_rows} x {info.n_features} {dtype})",
    )
    ys, row = [], 0
    for Xc, yc in _chunks(info, chunk_rows, dtype):
        X[row : row + len(Xc)] = Xc
        row += len(Xc)
        if yc is not None:
            ys.append(yc)
    y = np.concatenate(ys) if ys else None
    return X, y
