"""In-memory and on-disk caches for derived spectral quantities.

The disk format is plain JSON (never pickle; nothing in the cache is ever executed): one file per
key, named by the sha256 of the key, holding the key text (which includes the spectralkit version,
so an upgrade never reads old results), a format version, the data encoded by
:mod:`._codec` and a **keyed** checksum (HMAC-SHA256) of all of it.

Trust model. The HMAC key is a per-user random secret kept *outside* the cache folder (see
:func:`key_path`), in a file only its owner may read or write; whoever can write the cache folder
but cannot read that file cannot forge an entry (an edited entry with a recomputed plain sha256 is
refused). A cache folder that is not owned by the current user or that its group or other users may
write is refused as a whole. On reading, an entry is used only if the file is a regular file owned by
the current user, smaller than 16 MiB, valid JSON of the expected shape, its keyed checksum matches,
its key matches, it decodes into the expected type and the caller's semantic check accepts it (for
measures: masses finite and non-negative, k(0) = m+ - m- within the stated errors, the masses equal
to the sum of their lobes, shells and tail, and the heaviest lobe of each sign recounted from a fresh
evaluation of the density). Anything else — and every failure of the cache itself (a read-only
folder, a path that is a file, an entry that is a folder, another user's files, an unusable key
file, a full disk) — falls back to computing without the cache, with one RuntimeWarning per call that
names the problem. A bad entry is replaced by the recomputed one when the folder is writable.
"""

import hashlib
import hmac
import json
import os
import secrets
import stat
import tempfile
import threading
import warnings

from .._version import __version__
from ._codec import CodecError, decode, encode

__all__ = ["memory_get_or_compute", "get_or_compute", "clear_memory", "resolve_dir", "path_for", "key_path"]

FORMAT_VERSION = 2
#: Bumped whenever a derivation gives a different result for the same kernel (a fixed bug), so that
#: entries written by the older code of the same release are recomputed, not trusted.
DERIVATION_REVISION = 5
_MAX_BYTES = 16 << 20
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


def _key_text(key):
    return f"spectralkit {__version__} r{DERIVATION_REVISION} | {key!r}"


def path_for(key, cache_dir):
    """The file of ``key`` in ``cache_dir``."""
    digest = hashlib.sha256(_key_text(key).encode()).hexdigest()[:32]
    return os.path.join(cache_dir, f"measure-{digest}.json")


class _Problem(Exception):
    """Why the disk cache was not used (the message goes into the one warning)."""


def key_path():
    """The file holding the cache's HMAC key: ``$SPECTRALKIT_CACHE_KEY``, else
    ``$XDG_CONFIG_HOME/spectralkit/cache-key``, else ``~/.config/spectralkit/cache-key``."""
    explicit = os.environ.get("SPECTRALKIT_CACHE_KEY")
    if explicit:
        return os.path.abspath(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.abspath(os.path.join(base, "spectralkit", "cache-key"))


def _private(st, what):
    """_Problem unless ``st`` (a stat result) belongs to the current user and no one else may write it."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise _Problem(f"{what} belongs to another user (uid {st.st_uid}); not trusted")
    if st.st_mode & 0o022:
        raise _Problem(
            f"{what} may be written by other users (mode {stat.S_IMODE(st.st_mode):o}); not trusted "
            "(use a folder only you can write)"
        )


def _load_key(cache_dir):
    """The HMAC key (read, or created on first use); _Problem when it cannot be trusted."""
    path = key_path()
    directory = os.path.realpath(cache_dir)
    if os.path.commonpath([os.path.realpath(path), directory]) == directory:
        raise _Problem(
            f"the cache key {path} lies inside the cache folder; set SPECTRALKIT_CACHE_KEY elsewhere"
        )
    try:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
            # written whole under a private name, then linked into place: two processes that
            # create the key at once agree on one (the loser's link fails, it reads the winner's),
            # and no reader ever sees a partly written key
            tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.tmp"
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(secrets.token_hex(32))
                try:
                    os.link(tmp, path)
                except FileExistsError:
                    pass
            finally:
                os.unlink(tmp)
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "r", encoding="ascii") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise _Problem(f"the cache key {path} is not a regular file")
            _private(st, f"the cache key {path}")
            if st.st_mode & 0o044:
                raise _Problem(f"the cache key {path} may be read by other users; not trusted")
            text = fh.read(200).strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise _Problem(f"cannot use the cache key {path} ({getattr(exc, 'strerror', None) or exc})") from None
    if len(text) < 32:
        raise _Problem(f"the cache key {path} is too short (delete it to make a new one)")
    return text.encode("ascii")


def _checksum(blob, secret):
    body = {k: blob[k] for k in ("version", "key", "data")}
    message = json.dumps(body, sort_keys=True, allow_nan=False).encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _read(path, key, expected, validate, secret):
    """The cached value, None when there is no entry; _Problem for a bad entry or a cache failure."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _Problem(f"cannot access {path} ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise _Problem(f"{path} is not a regular file")
    _private(st, path)
    if st.st_size > _MAX_BYTES:
        raise _Problem(f"{path} is larger than {_MAX_BYTES >> 20} MiB")
    try:
        with open(path, encoding="utf-8") as fh:
            blob = json.load(fh)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _Problem(f"cannot read {path} ({exc})") from None
    if not isinstance(blob, dict) or set(blob) != {"version", "key", "data", "checksum"}:
        raise _Problem(f"{path} is not a spectralkit cache entry")
    if blob["version"] != FORMAT_VERSION or blob["key"] != _key_text(key):
        raise _Problem(f"{path} holds another key or format version")
    try:
        if not isinstance(blob["checksum"], str) or not hmac.compare_digest(
            blob["checksum"], _checksum(blob, secret)
        ):
            raise _Problem(f"{path} fails its checksum (edited or corrupted)")
        value = decode(blob["data"], expected)
    except (CodecError, TypeError, ValueError) as exc:
        raise _Problem(f"{path} does not decode ({exc})") from None
    reason = validate(value)
    if reason:
        raise _Problem(f"{path} fails validation: {reason}")
    return value


def _write(path, key, value, secret):
    directory = os.path.dirname(path)
    blob = {"version": FORMAT_VERSION, "key": _key_text(key), "data": encode(value)}
    blob["checksum"] = _checksum(blob, secret)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".measure-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(blob, fh, allow_nan=False)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _open_folder(directory):
    """Create ``directory`` (private) if missing, check that only its owner may write it; the key."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.stat(directory)
    except OSError as exc:
        raise _Problem(f"cannot use the cache folder {directory} ({exc.strerror or exc})") from None
    if not stat.S_ISDIR(st.st_mode):
        raise _Problem(f"cannot use the cache folder {directory} (not a folder)")
    _private(st, f"the cache folder {directory}")
    return _load_key(directory)


def get_or_compute(key, compute, *, expected, validate, cache_dir=None):
    """Memory, then disk (validated JSON), then ``compute()``; writes back to both.

    Parameters
    ----------
    key : hashable
        Identifies the value (its ``repr`` names the file).
    compute : callable
        ``compute() -> value`` of type ``expected``.
    expected : type
        A dataclass of :data:`._codec.TYPES`.
    validate : callable
        ``validate(value) -> str or None``: the reason a decoded value is not trusted, or None.
    cache_dir : str or path-like, optional
        See :func:`resolve_dir`.
    """
    with _lock:
        if key in _memory:
            return _memory[key]
    directory = resolve_dir(cache_dir)
    value = None
    problem = None
    writable = directory is not None
    secret = None
    if directory is not None:
        path = path_for(key, directory)
        try:
            secret = _open_folder(directory)
            value = _read(path, key, expected, validate, secret)
        except _Problem as exc:
            problem = str(exc)
            writable = secret is not None and os.path.isdir(directory) and not os.path.isdir(path)
    if value is None:
        value = compute()
        if writable:
            try:
                _write(path, key, value, secret)
            except (OSError, TypeError, ValueError) as exc:
                problem = problem or f"cannot write {path} ({getattr(exc, 'strerror', None) or exc})"
    if problem:
        warnings.warn(
            f"spectralkit disk cache not used: {problem}; computed without it", RuntimeWarning, stacklevel=3
        )
    with _lock:
        return _memory.setdefault(key, value)
