"""Rewrite the documented outputs (```text blocks after ```python blocks) of docs pages that went stale.

    python docs/tools/refresh_outputs.py docs/guide-learn.md [more pages]

Runs each page's blocks as tests/test_docs.py does; where a documented output no longer matches,
it is replaced by what the code prints now, keeping the documented lines with ``...`` wildcards
(timings) that still match their new counterpart. Review the result with ``git diff``.
"""

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from test_docs import OUTPUT, _line_matches, blocks_with_output, outputs_match  # noqa: E402


def _merged(expected, printed):
    exp = expected.strip("\n").splitlines()
    act = printed.strip("\n").splitlines()
    if len(exp) == len(act):
        act = [e if "..." in e and _line_matches(e, a) else a for e, a in zip(exp, act)]
    return "\n".join(act) + "\n"


def refresh(page):
    text = page.read_text()
    namespace = {"__name__": "__docs__"}
    replacements = []
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for line, code, skip, expected in blocks_with_output(text):
                if skip is not None:
                    continue
                printed = io.StringIO()
                with contextlib.redirect_stdout(printed):
                    exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
                if expected is not None and not outputs_match(expected, printed.getvalue()):
                    replacements.append((line, expected, _merged(expected, printed.getvalue())))
        finally:
            os.chdir(cwd)
    for line, _old, new in replacements:
        # the output block right after the code block that starts at `line`
        start = sum(len(x) + 1 for x in text.splitlines()[: line - 1])
        m = OUTPUT.search(text, text.index("```\n", start + 3) + 4)
        text = text[: m.start(1)] + new + text[m.end(1) :]
        print(f"{page.name}: block at line {line} refreshed")
    page.write_text(text)


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    for name in sys.argv[1:]:
        refresh(Path(name).resolve())
