"""Rewrite the documented outputs of docs pages that went stale: ```text blocks after ```python blocks
and the outputs in console blocks (``$ spectralkit ...`` lines).

    python docs/tools/refresh_outputs.py docs/guide-learn.md [more pages]

Runs each page's blocks as tests/test_docs.py does; where a documented output no longer matches,
it is replaced by what the code prints now, keeping the documented lines with ``...`` wildcards
(timings) that still match their new counterpart. New timings must be turned into ``...`` by
hand. Review the result with ``git diff``.
"""

import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from test_docs import ANY_FENCE, OUTPUT, _line_matches, outputs_match, page_blocks, run_command  # noqa: E402


def _merged(expected, printed):
    exp = expected.strip("\n").splitlines()
    act = printed.strip("\n").splitlines()
    if len(exp) == len(act):
        act = [e if "..." in e and _line_matches(e, a) else a for e, a in zip(exp, act)]
    return "\n".join(act) + "\n"


def refresh(page):
    text = page.read_text()
    namespace = {"__name__": "__docs__"}
    replacements = []  # (line of the block, "python" | "console", new output or block body)
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        try:
            for line, kind, body, skip, expected in page_blocks(text):
                if skip is not None:
                    continue
                if kind == "python":
                    printed = io.StringIO()
                    with contextlib.redirect_stdout(printed):
                        exec(compile(body, f"{page.name}:{line}", "exec"), namespace)
                    if expected is not None and not outputs_match(expected, printed.getvalue()):
                        replacements.append((line, kind, _merged(expected, printed.getvalue())))
                elif kind == "console":
                    session, stale = [], False
                    for command, lines in body:
                        documented = "\n".join(lines)
                        _, printed = run_command(command)
                        if not outputs_match(documented, printed):
                            stale = True
                            printed = _merged(documented, printed)
                        else:
                            printed = documented + "\n" if documented else ""
                        session.append(f"$ {command}\n{printed}")
                    if stale:
                        replacements.append((line, kind, "".join(session)))
                else:
                    for command in body:
                        run_command(command)
        finally:
            os.chdir(cwd)
    for line, kind, new in reversed(replacements):
        start = sum(len(x) + 1 for x in text.splitlines()[: line - 1])
        if kind == "python":
            # the output block right after the code block that starts at `line`
            m = OUTPUT.search(text, text.index("```\n", start + 3) + 4)
            a, b = m.start(1), m.end(1)
        else:
            m = ANY_FENCE.match(text, start)  # the console block itself
            a, b = m.start(2), m.end(2)
        text = text[:a] + new + text[b:]
        print(f"{page.name}: block at line {line} refreshed")
    page.write_text(text)


if __name__ == "__main__":
    import matplotlib

    matplotlib.use("Agg")
    for name in sys.argv[1:]:
        refresh(Path(name).resolve())
