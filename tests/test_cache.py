"""The disk cache is never trusted blindly and never breaks a computation.

Every entry is validated (schema and types, a checksum, the key with the spectralkit version, and the
semantics: masses finite and non-negative, k(0) = m+ - m- within the errors); a bad entry, and every
failure of the cache itself, means: compute without it, with exactly one RuntimeWarning.
"""

import json
import os
import warnings

import pytest

from spectralkit import check_rkks
from spectralkit import kernels as K
from spectralkit.measures import _cache
from spectralkit.transforms import _closed_forms
from spectralkit.transforms._registry import BUILDERS, Builder

KERNEL = K.delta_gaussian(1.0, 7.0)
DIM = 4


@pytest.fixture(autouse=True)
def _private_key(tmp_path_factory, monkeypatch):
    """Each test gets its own cache key, outside its cache folder."""
    monkeypatch.setenv("SPECTRALKIT_CACHE_KEY", str(tmp_path_factory.mktemp("key") / "cache-key"))


def _secret():
    return _cache._load_key("/nonexistent-cache-folder")


@pytest.fixture
def reference():
    _cache.clear_memory()
    ref = check_rkks(KERNEL, DIM)
    _cache.clear_memory()
    return ref


def _entry(tmp_path):
    _cache.clear_memory()
    check_rkks(KERNEL, DIM, cache_dir=tmp_path)
    _cache.clear_memory()
    (path,) = tmp_path.glob("measure-*.json")
    return path


def _one_warning(match, func):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = func()
    cache_warnings = [w for w in caught if "disk cache" in str(w.message)]
    assert len(cache_warnings) == 1, [str(w.message) for w in caught]
    assert issubclass(cache_warnings[0].category, RuntimeWarning)
    assert match in str(cache_warnings[0].message), str(cache_warnings[0].message)
    return out


def _same(a, b):
    assert a.verdict == b.verdict and a.mass_plus == b.mass_plus and a.mass_minus == b.mass_minus


def test_round_trip_is_plain_json_and_needs_no_recomputation(tmp_path, reference, monkeypatch):
    path = _entry(tmp_path)
    blob = json.loads(path.read_text())
    assert set(blob) == {"version", "key", "data", "checksum"}
    assert "spectralkit" in blob["key"]  # keyed by version
    from spectralkit.measures import _measure

    def boom(self):
        raise AssertionError("recomputed despite a valid cache entry")

    monkeypatch.setattr(_measure.SpectralMeasure, "_derive", boom)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(check_rkks(KERNEL, DIM, cache_dir=tmp_path), reference)


def _edit(path, change, fix_checksum):
    blob = json.loads(path.read_text())
    change(blob["data"])
    if fix_checksum:
        blob["checksum"] = _cache._checksum(blob, _secret())
    path.write_text(json.dumps(blob))


@pytest.mark.parametrize(
    "change, fix_checksum, match",
    [
        (lambda d: d.update(verdict="PD"), False, "fails its checksum"),
        (lambda d: d.update(verdict="PD"), True, "fails validation: verdict PD with m- ="),
        (
            lambda d: d["mass_plus"].update(value=d["mass_plus"]["value"] * 2),
            True,
            "k(0) differs from m+ - m-",
        ),
        (
            lambda d: d["mass_plus"].update(value={"float": "inf"}),
            True,
            "is not a finite non-negative estimate",
        ),
        (lambda d: d["mass_minus"].update(value=-1.0), True, "is not a finite non-negative estimate"),
        (lambda d: d["mass_plus"].update(value="1.0"), True, "expected a number, got str"),
        (lambda d: d.update(lobes="nonsense"), True, "expected a list"),
        (lambda d: d.update(type="RKKSReport"), True, "expected an object of type Derivation"),
        (lambda d: d.update(extra=1), True, "unexpected ['extra']"),
        (lambda d: d["lobes"][0].update(sign=3), True, "invalid lobe"),
    ],
)
def test_edited_entries_are_discarded_and_recomputed(tmp_path, reference, change, fix_checksum, match):
    path = _entry(tmp_path)
    _edit(path, change, fix_checksum)
    _same(_one_warning(match, lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference)
    # the bad entry was replaced: the next process reads it silently
    _cache.clear_memory()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(check_rkks(KERNEL, DIM, cache_dir=tmp_path), reference)


@pytest.mark.parametrize(
    "content, match",
    [
        ("{not json", "cannot read"),
        ("[1, 2]", "is not a spectralkit cache entry"),
        ('"text"', "is not a spectralkit cache entry"),
        ("", "cannot read"),
        ("\x00\xff", "cannot read"),
    ],
)
def test_garbage_entries(tmp_path, reference, content, match):
    path = _entry(tmp_path)
    path.write_bytes(content.encode("latin-1"))
    _same(_one_warning(match, lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference)


def test_entry_of_another_key_or_version(tmp_path, reference):
    path = _entry(tmp_path)
    blob = json.loads(path.read_text())
    blob["key"] = blob["key"].replace("spectralkit ", "spectralkit 0.0.0-other ")
    blob["checksum"] = _cache._checksum(blob, _secret())
    path.write_text(json.dumps(blob))
    _same(
        _one_warning("another key or format version", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)),
        reference,
    )


def test_entry_that_is_a_folder(tmp_path, reference):
    path = _entry(tmp_path)
    path.unlink()
    path.mkdir()
    _same(
        _one_warning("is not a regular file", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference
    )
    assert path.is_dir()  # left alone


def test_cache_path_is_a_file(tmp_path, reference):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("x")
    _same(_one_warning("cannot", lambda: check_rkks(KERNEL, DIM, cache_dir=not_a_dir)), reference)
    assert not_a_dir.read_text() == "x"


def test_unwritable_folder(tmp_path, reference, monkeypatch):
    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_cache.tempfile, "mkstemp", refuse)
    _same(_one_warning("cannot write", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference)
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root ignores permissions")
def test_read_only_folder(tmp_path, reference):
    tmp_path.chmod(0o500)
    try:
        _same(_one_warning("cannot write", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference)
    finally:
        tmp_path.chmod(0o700)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing owners needs root")
def test_another_users_entry_is_not_trusted(tmp_path, reference):
    path = _entry(tmp_path)
    os.chown(path, 12345, 12345)
    _same(
        _one_warning("belongs to another user", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)),
        reference,
    )


def test_kernel_with_infinite_value_at_zero_works_with_the_cache(tmp_path):
    k = K.RadialKernel.from_string("exp(-r) / sqrt(r)")
    _cache.clear_memory()
    first = check_rkks(k, 2, cache_dir=tmp_path)
    _cache.clear_memory()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        second = check_rkks(k, 2, cache_dir=tmp_path)
    assert first.verdict == second.verdict == "DIVERGENT" and second.k0 == float("inf")


def test_cache_never_stores_anything_executable(tmp_path):
    path = _entry(tmp_path)
    text = path.read_text()
    assert "py/object" not in text and "__reduce__" not in text
    json.loads(text)  # JSON, not pickle


def _scale_masses(data, factor):
    """Multiply every mass (lobes, shells, tail, m+ and m-) and its error by ``factor`` and shift k(0)
    so that every consistency check (Bochner identity, sums of parts) still holds."""
    for lb in data["lobes"]:
        lb["mass"] *= factor
        lb["error"] *= factor
    for name in ("mass_plus", "mass_minus"):
        data[name]["value"] *= factor
        data[name]["error"] *= factor
    if data["tail"] is not None:
        for name in ("mass_plus", "mass_minus"):
            data["tail"][name]["value"] *= factor
            data["tail"][name]["error"] *= factor
    data["k0"] = data["mass_plus"]["value"] - data["mass_minus"]["value"]


def test_forged_entry_with_a_plain_sha256_is_refused(tmp_path, reference):
    """The issue's attack: masses edited, the unkeyed sha256 recomputed (the secret is unknown)."""
    import hashlib

    path = _entry(tmp_path)
    blob = json.loads(path.read_text())
    _scale_masses(blob["data"], 100.0)
    body = {k: blob[k] for k in ("version", "key", "data")}
    blob["checksum"] = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
    path.write_text(json.dumps(blob))
    _same(_one_warning("fails its checksum", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference)


def test_consistently_edited_masses_are_caught_by_a_fresh_recount(tmp_path, reference):
    """Even with the key, masses that no longer match the kernel's density are refused."""
    path = _entry(tmp_path)
    _edit(path, lambda d: _scale_masses(d, 100.0), True)
    _same(
        _one_warning(
            "a fresh evaluation of the density", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)
        ),
        reference,
    )


def test_masses_must_be_the_sum_of_their_lobes(tmp_path, reference):
    path = _entry(tmp_path)

    def change(d):
        d["mass_plus"]["value"] += 1.0
        d["mass_minus"]["value"] += 1.0

    _edit(path, change, True)
    _same(_one_warning("m+ is not the sum", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)), reference)


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o777])
def test_folder_others_can_write_is_refused(tmp_path, reference, mode):
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(mode)
    _same(
        _one_warning("may be written by other users", lambda: check_rkks(KERNEL, DIM, cache_dir=folder)),
        reference,
    )
    assert not list(folder.iterdir())  # nothing written there


def test_key_inside_the_cache_folder_or_readable_by_others_is_refused(tmp_path, reference, monkeypatch):
    monkeypatch.setenv("SPECTRALKIT_CACHE_KEY", str(tmp_path / "cache-key"))
    _same(
        _one_warning("lies inside the cache folder", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path)),
        reference,
    )
    key = tmp_path / "elsewhere" / "cache-key"
    monkeypatch.setenv("SPECTRALKIT_CACHE_KEY", str(key))
    _cache._load_key(str(tmp_path / "cache"))
    assert (key.stat().st_mode & 0o777) == 0o600
    key.chmod(0o644)
    _cache.clear_memory()
    _same(
        _one_warning(
            "may be read by other users", lambda: check_rkks(KERNEL, DIM, cache_dir=tmp_path / "cache")
        ),
        reference,
    )


def test_a_hit_does_not_rebuild_a_costly_series(tmp_path, monkeypatch):
    """The recount of a cached entry re-evaluates cheap closed forms only: the exponential-power
    series (13 s for exp(-r^3) in d = 256) is not rebuilt on a hit, so the hit costs milliseconds."""
    kernel = K.RadialKernel.from_string("exp(-r**2.5)")
    _cache.clear_memory()
    first = check_rkks(kernel, 3, cache_dir=tmp_path)
    _cache.clear_memory()
    _closed_forms._closed_form_cached.cache_clear()

    def refuse(**params):
        raise AssertionError("the series was rebuilt on a cache hit")

    monkeypatch.setitem(BUILDERS, "exponential_power", Builder("exponential_power", refuse, 1.0, costly=True))
    _same(check_rkks(kernel, 3, cache_dir=tmp_path), first)
