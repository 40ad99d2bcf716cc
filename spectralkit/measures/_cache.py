"""In-memory and on-disk caches for derived spectral quantities.

The disk format is plain JSON (never pickle): one file per key, named by the sha256 of the key,
holding the key text, a format version and the encoded data. A file that cannot be read, does
not match its key or fails to decode is ignored with a warning and rebuilt.
"""

import hashlib
import json
import os
import tempfile
import threading
import warnings

__all__ = []  # private module

FORMAT_VERSION = 1
_memory = {}
_lock = threading.Lock()


def memory_get_or_compute(key, compute):
    """Return ``compute()`` cached in memory under ``key`` (hashable)."""
    with _lock:
        if key in _memory:
            return _memory[key]
    value = compute()
    with _lock:
        return _memory.setdefault(key, value)


def clear_memory():
    """Forget everything cached in memory (tests, benchmarks of cold derivations)."""
    with _lock:
        _memory.clear()


def resolve_dir(cache_dir):
    """The disk cache directory: ``cache_dir``, else ``$SPECTRALKIT_CACHE_DIR``, else None."""
    if cache_dir is None:
        cache_dir = os.environ.get("SPECTRALKIT_CACHE_DIR") or None
    return None if cache_dir is None else os.fspath(cache_dir)


def path_for(key, cache_dir):
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:32]
    return os.path.join(cache_dir, f"measure-{digest}.json")


def get_or_compute(key, compute, *, cache_dir=None, encode, decode):
    """Memory, then disk (JSON), then ``compute()``; writes back to both.

    ``encode(value) -> JSON-able`` and ``decode(JSON) -> value`` convert for the disk.
    """
    with _lock:
        if key in _memory:
            return _memory[key]
    directory = resolve_dir(cache_dir)
    value = None
    if directory is not None:
        path = path_for(key, directory)
        if os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as fh:
                    blob = json.load(fh)
                if blob.get("version") != FORMAT_VERSION or blob.get("key") != repr(key):
                    raise ValueError("key or format version mismatch")
                value = decode(blob["data"])
            except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
                warnings.warn(f"ignoring corrupt spectralkit cache file {path} ({exc}); rebuilding it",
                              RuntimeWarning, stacklevel=3)
                value = None
    if value is None:
        value = compute()
        if directory is not None:
            _write(path_for(key, directory), {"version": FORMAT_VERSION, "key": repr(key),
                                              "data": encode(value)})
    with _lock:
        return _memory.setdefault(key, value)


def _write(path, blob):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(blob, fh, allow_nan=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
