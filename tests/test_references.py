"""The stored high-precision references (tests/reference/*.json) are current.

Each file must hold exactly the cases its test module declares in ``REFERENCE_SETS``, under the
same reference function and method text, and the cheapest stored entry of every set is
recomputed live by that function on every run (it must agree to 1e-13 relative, far below the
tolerances of the tests that read the files: a changed reference function or case list shows here
rather than as a silently stale reference).
"""

import importlib
import json

import mpmath
import pytest
from conftest import REFERENCE_DIR, REFERENCE_MODULES, reference_key

MODULES = tuple(importlib.import_module(name) for name in REFERENCE_MODULES)
SETS = {name: (mod, *spec) for mod in MODULES for name, spec in mod.REFERENCE_SETS.items()}
LIVE_PER_SET = 1  # one entry shows a changed reference function; the second doubled the cost
#: entries that took longer to compute are not recomputed on every run (a set whose entries all did,
#: such as the d = 64 masses of exp(-r^2/2) cos(r), is checked for its cases and format only)
LIVE_MAX_CPU_SECONDS = 3.0


def _blob(name):
    path = REFERENCE_DIR / f"{name}.json"
    assert path.exists(), f"{path.name} is missing: python tests/reference/make_references.py {name}"
    return json.loads(path.read_text())


@pytest.mark.parametrize("name", sorted(SETS))
def test_stored_set_holds_exactly_the_declared_cases(name):
    mod, fn, digits, cases = SETS[name]
    blob = _blob(name)
    hint = f"stale {name}.json: python tests/reference/make_references.py {name}"
    assert blob["name"] == name and blob["function"] == f"{mod.__name__}.{fn.__name__}", hint
    assert blob["method"] == " ".join((fn.__doc__ or "").split()), hint
    assert blob["digits"] == digits, hint
    stored = [reference_key(e["params"]) for e in blob["entries"]]
    declared = [reference_key(p) for p in cases]
    assert len(set(stored)) == len(stored), f"{name}.json holds a case twice"
    assert set(stored) == set(declared), (hint, sorted(set(declared) ^ set(stored))[:5])
    for e in blob["entries"]:
        mpmath.mpf(e["value"])  # a decimal number (printed with up to `digits` significant digits)


@pytest.mark.parametrize("name", sorted(SETS))
def test_cheapest_stored_entries_are_reproduced_live(name):
    _, fn, _, _ = SETS[name]
    entries = sorted(_blob(name)["entries"], key=lambda e: e["cpu_seconds"])[:LIVE_PER_SET]
    entries = [e for e in entries if e["cpu_seconds"] <= LIVE_MAX_CPU_SECONDS]
    for e in entries:
        live = fn(**e["params"])
        stored = mpmath.mpf(e["value"])
        assert abs(live - stored) <= 1e-13 * abs(stored), (name, e["params"], str(live), e["value"])


def test_every_module_that_declares_references_is_listed():
    """A test module with REFERENCE_SETS outside conftest.REFERENCE_MODULES would have its stored
    files neither regenerated nor checked."""
    declaring = {
        p.stem for p in REFERENCE_DIR.parent.glob("test_*.py") if "\nREFERENCE_SETS" in p.read_text()
    }
    assert declaring == set(REFERENCE_MODULES), declaring ^ set(REFERENCE_MODULES)
