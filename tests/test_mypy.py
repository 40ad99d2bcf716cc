"""mypy checks the package's type hints; the error count may only go down.

The baseline is the count when the check was introduced (most errors are in modules written before
type hints were checked: sympy and numba objects, optional extras). Lower ``BASELINE`` when you fix
some; a change that adds errors fails here with mypy's list of them.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: mypy errors in spectralkit/ when this test was added (``mypy`` with the [tool.mypy] settings)
BASELINE = 199


def test_mypy_error_count_does_not_grow(tmp_path):
    exe = shutil.which("mypy", path=str(Path(sys.executable).parent)) or shutil.which("mypy")
    if exe is None:
        pytest.skip("mypy is not installed (it comes with the test extra)")
    proc = subprocess.run(
        [exe, "--cache-dir", str(tmp_path / "cache"), "spectralkit"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    found = re.search(r"Found (\d+) errors? in", proc.stdout)
    count = int(found.group(1)) if found else 0
    assert "Success" in proc.stdout or found, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert count <= BASELINE, (
        f"mypy reports {count} errors, the baseline is {BASELINE}:\n" + proc.stdout[-6000:]
    )
