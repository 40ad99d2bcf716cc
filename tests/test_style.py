"""The repository is ruff clean (lint and format), so CI keeps it so.

ruff is pinned in the test extra: formatter output changes between releases.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff():
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if exe is None:
        pytest.skip("ruff is not installed (it comes with the test extra)")
    return exe


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_clean(command):
    proc = subprocess.run([_ruff(), *command, "--no-cache", "."], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]


def test_pre_commit_pins_the_same_ruff_as_the_test_extra():
    pinned = re.search(r'"ruff==([^"\s]+)"', (ROOT / "pyproject.toml").read_text())
    rev = re.search(
        r"astral-sh/ruff-pre-commit\s+rev: v(\S+)", (ROOT / ".pre-commit-config.yaml").read_text()
    )
    assert pinned and rev and rev.group(1) == pinned.group(1), (pinned, rev)
