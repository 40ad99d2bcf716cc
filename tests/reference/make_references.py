"""Regenerate the stored high-precision references of the test suite (tests/reference/<name>.json).

Some tests compare the library against independent references that cost minutes of mpmath work
(Hankel integrals of kernels with square-root edges up to rho = 1000, contours rotated into the
complex plane at 60 digits, Gaussian scale mixtures in d = 64). Those values are computed here,
once, and stored with all their digits; the tests read them. The reference code itself is not
copied: it is the functions of the test modules, which also compute small cases live
on every run so that it stays exercised. tests/test_references.py checks on every run that each
file holds exactly the cases its test module declares (``REFERENCE_SETS``) and recomputes the
cheapest stored entry of each set live.

Usage, from the repository root::

    python tests/reference/make_references.py              # every set
    python tests/reference/make_references.py NAME ...     # only these sets
    python tests/reference/make_references.py --list       # the sets and their sizes

Regeneration of every set takes about 12 minutes of CPU on one idle core (3.6 GHz class;
``total_cpu_seconds`` in each file gives the time its set took). The sets are independent: run
them in parallel shells to use more cores.

File format (JSON)::

    {"name": ..., "method": <the reference function's docstring>, "function": "<module>.<name>",
     "digits": <significant digits printed, None: each entry's "dps">, "mpmath": <version>,
     "total_cpu_seconds": ...,
     "entries": [{"params": {...}, "value": "<decimal string>", "cpu_seconds": ...}, ...]}

``value`` carries ``digits`` significant digits of the mpmath result (the working precision of
the reference); the accuracy of each method is stated in its docstring.
"""

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent
sys.path.insert(0, str(TESTS))

import mpmath  # noqa: E402
from conftest import REFERENCE_MODULES, reference_key  # noqa: E402


def reference_sets():
    """{name: (module name, function, digits, [params dicts])} over conftest.REFERENCE_MODULES."""
    out = {}
    for modname in REFERENCE_MODULES:
        mod = importlib.import_module(modname)
        for name, (fn, digits, cases) in mod.REFERENCE_SETS.items():
            if name in out:
                raise SystemExit(f"reference set {name!r} is declared twice")
            out[name] = (modname, fn, digits, cases)
    return out


def compute(name, modname, fn, digits, cases):
    entries, seen = [], set()
    start = time.process_time()
    for i, params in enumerate(cases):
        key = reference_key(params)
        if key in seen:
            raise SystemExit(f"{name}: case {key} is declared twice")
        seen.add(key)
        t0 = time.process_time()
        value = fn(**params)
        cpu = time.process_time() - t0
        if not isinstance(value, mpmath.mpf):
            raise SystemExit(
                f"{name}: {fn.__name__} must return an mpmath.mpf (all digits), got {type(value).__name__}"
            )
        n = digits if digits is not None else params["dps"]
        entries.append(
            {
                "params": params,
                "value": mpmath.nstr(value, n, min_fixed=1, max_fixed=0),
                "cpu_seconds": round(cpu, 3),
            }
        )
        print(f"  {name} [{i + 1}/{len(cases)}] {key}: {entries[-1]['value']} ({cpu:.1f} s)", flush=True)
    return {
        "name": name,
        "method": " ".join((fn.__doc__ or "").split()),
        "function": f"{modname}.{fn.__name__}",
        "digits": digits,
        "mpmath": mpmath.__version__,
        "total_cpu_seconds": round(time.process_time() - start, 1),
        "entries": entries,
    }


def write_atomically(path, blob):
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(blob, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="sets to regenerate (default: all)")
    parser.add_argument("--list", action="store_true", help="list the sets and exit")
    args = parser.parse_args(argv)
    sets = reference_sets()
    if args.list:
        for name, (modname, fn, _, cases) in sets.items():
            print(f"{name}: {len(cases)} values, {modname}.{fn.__name__}")
        return 0
    unknown = [n for n in args.names if n not in sets]
    if unknown:
        raise SystemExit(f"unknown reference set(s) {', '.join(unknown)}; known: {', '.join(sets)}")
    for name in args.names or list(sets):
        modname, fn, digits, cases = sets[name]
        print(f"{name}: {len(cases)} values", flush=True)
        blob = compute(name, modname, fn, digits, cases)
        write_atomically(HERE / f"{name}.json", blob)
        print(f"{name}: wrote {name}.json ({blob['total_cpu_seconds']} s CPU)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
