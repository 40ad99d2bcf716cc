"""Every ```python block and every command-line block in README.md and docs/*.md runs, in order, per file.

Blocks of one file share a namespace and run in a fresh temporary directory, in page order. A
```text block right after a python block is the output it must print. A *console* block is a
```text (or ```console) block whose first line starts with ``$ ``: each ``$ spectralkit ...``
line runs (in-process, ``spectralkit.cli.main``) and the lines up to the next ``$`` are what it
must print (stdout and stderr). A ```bash block runs too when every line is a ``spectralkit``
command (its output is not compared). Any other block that looks runnable (``pip install``,
``pytest``) needs ``<!-- no-test: <reason> -->`` right before its fence: a block is skipped only
then (the reason is required). Setup that a page needs but should not show (an input file with a
deliberate error) lives in a python block inside an HTML comment. A page that needs real work says
``<!-- docs-test: slow -->`` anywhere and then runs in the slow suite only. A line
``<!-- docs-test: part -->`` splits a long page into parts that run as separate tests, each in a
fresh namespace (so a part starts with its own imports, shown or in a hidden setup block): no test
runs for more than a few seconds however long the page grows.

This file also renders docs/api.md from the docstrings:

    python tests/test_docs.py          # rewrites docs/api.md

and checks that api.md lists every public name of the public modules.
"""

import contextlib
import importlib
import inspect
import io
import os
import re
import shlex
import sys
from pathlib import Path

import pytest

from spectralkit import cli

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)
NO_TEST = re.compile(r"<!--\s*no-test:\s*(\S.*?)\s*-->\s*$")
SLOW_PAGE = "<!-- docs-test: slow -->"
PART = re.compile(r"^<!--\s*docs-test:\s*part\s*-->[ \t]*$", re.M)

#: public modules documented in api.md, in this order
API_MODULES = [
    "spectralkit",
    "spectralkit.kernels",
    "spectralkit.measures",
    "spectralkit.features",
    "spectralkit.io",
    "spectralkit.sklearn",
    "spectralkit.learn",
    "spectralkit.dask",
    "spectralkit.plotting",
    "spectralkit.cli",
    "spectralkit.exceptions",
]


OUTPUT = re.compile(r"\s*(?:Output:\s*)?^```text[ \t]*\n(?!\$ )(.*?)^```[ \t]*$", re.S | re.M)
#: every fenced block: its language and its body
ANY_FENCE = re.compile(r"^```([a-z]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def python_blocks(text):
    """``[(line_number, code, skip_reason_or_None), ...]`` of the ```python blocks of ``text``."""
    return [b[:3] for b in blocks_with_output(text)]


def _skip_reason(text, start, line):
    before = text[:start].rstrip("\n").rsplit("\n", 1)[-1]
    if "no-test" in before and not NO_TEST.search(before):
        raise AssertionError(f"line {line}: a no-test marker needs a reason: <!-- no-test: why -->")
    skip = NO_TEST.search(before)
    return skip.group(1) if skip else None


def blocks_with_output(text):
    """``[(line, code, skip_reason_or_None, expected_output_or_None), ...]``: a ```text block right
    after a python block (optionally after a line ``Output:``) is the output it must print."""
    blocks = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out = OUTPUT.match(text, m.end() + 1)
        blocks.append((line, m.group(1), _skip_reason(text, m.start(), line), out.group(1) if out else None))
    return blocks


def _is_command(line):
    words = line.split()
    return bool(words) and (words[0] == "spectralkit" or words[:3] == ["python", "-m", "spectralkit"])


def page_blocks(text):
    """Every block that runs, in page order: ``(line, kind, body, skip, expected)`` with kind
    "python" (expected: its output or None), "console" (body: [(command, expected_lines), ...]) or
    "shell" (body: [command, ...], output not compared)."""
    outputs = {m.start(1) for m in (OUTPUT.match(text, f.end() + 1) for f in FENCE.finditer(text)) if m}
    blocks = []
    for m in ANY_FENCE.finditer(text):
        lang, body = m.group(1), m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        if lang == "python":
            out = OUTPUT.match(text, m.end() + 1)
            expected = out.group(1) if out else None
            blocks.append((line, "python", body, _skip_reason(text, m.start(), line), expected))
        elif lang in ("text", "console") and body.startswith("$ ") and m.start(2) not in outputs:
            session, current = [], None
            for ln in body.splitlines():
                if ln.startswith("$ "):
                    current = (ln[2:].strip(), [])
                    session.append(current)
                else:
                    current[1].append(ln)
            blocks.append((line, "console", session, _skip_reason(text, m.start(), line), None))
        elif lang in ("bash", "sh", "shell", "console"):
            commands = [
                ln.strip() for ln in body.splitlines() if ln.strip() and not ln.lstrip().startswith("#")
            ]
            skip = _skip_reason(text, m.start(), line)
            if skip is None and not all(_is_command(c) for c in commands):
                raise AssertionError(
                    f"line {line}: a ```{lang} block with commands other than spectralkit ones needs "
                    "<!-- no-test: why --> (or only spectralkit commands, which the docs test runs)"
                )
            blocks.append((line, "shell", commands, skip, None))
    return blocks


def run_command(command):
    """Run one documented ``spectralkit ...`` command in-process: (exit status, stdout + stderr)."""
    argv = shlex.split(command)
    argv = argv[3:] if argv[:3] == ["python", "-m", "spectralkit"] else argv[1:]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), contextlib.redirect_stderr(printed):
        status = cli.main(argv)
    return status, printed.getvalue()


_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def _numbers_agree(a, b):
    """Printed numbers agree to 1e-6 relative; two numbers below 1e-6 in size (error bars, residuals:
    rounding noise that depends on the machine) agree."""
    x, y = float(a), float(b)
    if x == y or (abs(x) < 1e-6 and abs(y) < 1e-6):
        return True
    return abs(x - y) <= 1e-6 * max(abs(x), abs(y))


def _line_matches(expected, actual):
    """``...`` matches any text; numbers are compared with :func:`_numbers_agree`; the rest exactly."""
    pattern, numbers = "", []
    pos = 0
    for m in re.finditer(r"\.\.\.|" + _NUMBER.pattern, expected):
        pattern += re.escape(expected[pos : m.start()])
        if m.group(0) == "...":
            pattern += ".*?"
        else:
            pattern += "(" + _NUMBER.pattern + ")"
            numbers.append(m.group(0))
        pos = m.end()
    pattern += re.escape(expected[pos:])
    found = re.fullmatch(pattern, actual)
    return bool(found) and all(_numbers_agree(e, a) for e, a in zip(numbers, found.groups()))


def outputs_match(expected, actual):
    """Compare a documented output with the printed one, line by line (a line ``...`` alone matches any
    number of lines, including none)."""
    exp = [ln.rstrip() for ln in expected.strip("\n").splitlines()]
    act = [ln.rstrip() for ln in actual.strip("\n").splitlines()]

    def match(i, j):
        if i == len(exp):
            return j == len(act)
        if exp[i].strip() == "...":
            return any(match(i + 1, k) for k in range(j, len(act) + 1))
        return j < len(act) and _line_matches(exp[i], act[j]) and match(i + 1, j + 1)

    return match(0, 0)


#: pages whose ```python blocks are not user examples (never executed, with the reason)
INTERNAL_PAGES = {"architecture.md": "internal contract sketches (signatures and dataclass layouts)"}


def page_parts(text):
    """The parts of a page split at ``<!-- docs-test: part -->`` lines, each the page's text with the
    other parts blanked out (line numbers stay those of the page)."""
    cuts = [0] + [m.start() for m in PART.finditer(text)] + [len(text)]
    parts = []
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        parts.append("\n" * text.count("\n", 0, lo) + text[lo:hi])
    return parts


def _params():
    out = []
    for page in PAGES:
        if not page.exists() or page.name in INTERNAL_PAGES:
            continue
        text = page.read_text()
        marks = [pytest.mark.slow] if SLOW_PAGE in text else []
        parts = page_parts(text)
        for i, part in enumerate(parts):
            if all(skip is not None for _, _, _, skip, _ in page_blocks(part)):
                continue  # nothing to run (no blocks, or only ones marked no-test)
            name = page.name if len(parts) == 1 else f"{page.name}-part{i + 1}"
            out.append(pytest.param(page, i, id=name, marks=marks))
    return out


@pytest.mark.parametrize(("page", "part"), _params())
def test_code_blocks_run(page, part, tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")  # figures in examples must not need a display
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    ran = 0
    stale = []
    for line, kind, body, skip, expected in page_blocks(page_parts(page.read_text())[part]):
        if skip is not None:
            continue
        if kind == "python":
            printed = io.StringIO()
            try:
                with contextlib.redirect_stdout(printed):
                    exec(compile(body, f"{page.name}:{line}", "exec"), namespace)
            except Exception as exc:
                raise AssertionError(
                    f"{page.name}, block at line {line} failed: {type(exc).__name__}: {exc}"
                ) from exc
            if expected is not None and not outputs_match(expected, printed.getvalue()):
                stale.append(
                    f"--- block at line {line}: documented\n{expected}--- printed\n{printed.getvalue()}"
                )
        elif kind == "console":
            for command, lines in body:
                _, printed = run_command(command)
                documented = "\n".join(lines)
                if not outputs_match(documented, printed):
                    stale.append(
                        f"--- $ {command} (line {line}): documented\n{documented}\n--- printed\n{printed}"
                    )
        else:
            for command in body:
                status, printed = run_command(command)
                if status != 0:
                    stale.append(f"--- $ {command} (line {line}) exited with {status}:\n{printed}")
        ran += 1
    assert ran > 0
    assert not stale, f"{page.name}: documented output differs from what the code prints:\n" + "\n".join(
        stale
    )


def test_console_and_shell_blocks_are_found():
    text = (
        "```python\nprint(1)\n```\n```text\n1\n```\n"
        "```text\n$ spectralkit check gaussian --dim 2\nverdict PD\n$ spectralkit --version\n0.1\n```\n"
        "```bash\nspectralkit demo\n```\n"
        "<!-- no-test: installs the package -->\n```bash\npip install .\n```\n"
    )
    kinds = [(b[1], b[3]) for b in page_blocks(text)]
    assert kinds == [("python", None), ("console", None), ("shell", None), ("shell", "installs the package")]
    console = page_blocks(text)[1][2]
    assert console == [
        ("spectralkit check gaussian --dim 2", ["verdict PD"]),
        ("spectralkit --version", ["0.1"]),
    ]
    with pytest.raises(AssertionError, match="needs <!-- no-test: why -->"):
        page_blocks("```bash\npip install .\n```\n")


def test_page_parts_split_at_markers_and_keep_line_numbers():
    text = "```python\nx = 1\n```\n<!-- docs-test: part -->\n```python\ny = x\n```\n"
    parts = page_parts(text)
    assert len(parts) == 2
    assert [(b[0], b[2]) for b in page_blocks(parts[0])] == [(1, "x = 1\n")]
    assert [(b[0], b[2]) for b in page_blocks(parts[1])] == [(5, "y = x\n")]
    assert page_parts("no marker") == ["no marker"]


def test_output_comparison_rules():
    assert outputs_match("mass +  1.00169484988 ± 2.9e-13", "mass +  1.0016948498801 ± 3.1e-13")
    assert not outputs_match("mass +  1.0017", "mass +  1.0021")
    assert outputs_match("time ... s\nverdict RKKS", "time 0.2 s\nverdict RKKS")
    assert outputs_match("a\n...\nz", "a\nb\nc\nz") and outputs_match("a\n...\nz", "a\nz")
    assert not outputs_match("628 in all", "630 in all")
    assert not outputs_match("verdict PD", "verdict RKKS")


def test_no_test_marker_requires_a_reason():
    text = "<!-- no-test -->\n```python\nx = 1\n```\n"
    with pytest.raises(AssertionError, match="needs a reason"):
        python_blocks(text)
    ok = "<!-- no-test: needs a GPU -->\n```python\nx = 1\n```\n```python\ny = 2\n```\n"
    assert [b[2] for b in python_blocks(ok)] == ["needs a GPU", None]


MY_PAGES = [
    "index.md",
    "install.md",
    "quickstart.md",
    "guide-check.md",
    "guide-featurize.md",
    "guide-learn.md",
    "guide-learn-kernel.md",
    "guide-dask.md",
    "api.md",
    "cli.md",
]


@pytest.mark.parametrize("name", MY_PAGES)
def test_relative_links_resolve(name):
    page = ROOT / "docs" / name
    assert page.exists(), name
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if "://" in target:
            continue
        assert (page.parent / target).exists(), f"{name}: broken link {target}"


# ---------------------------------------------------------------------------------------------
# api.md
# ---------------------------------------------------------------------------------------------
def _summary(obj):
    doc = inspect.getdoc(obj) or ""
    para = doc.strip().split("\n\n", 1)[0]
    return " ".join(para.split())


class _Bare(str):
    """A postponed annotation (text) that renders without quotes."""

    def __repr__(self):
        return str(self)


def _signature(obj):
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return ""

    def bare(annotation):
        return _Bare(annotation) if isinstance(annotation, str) else annotation

    params = [p.replace(annotation=bare(p.annotation)) for p in sig.parameters.values()]
    # a class is called to build an instance: its __init__'s "-> None" is not what the call returns
    returns = sig.empty if inspect.isclass(obj) else bare(sig.return_annotation)
    return str(sig.replace(parameters=params, return_annotation=returns))


def public_names(modname):
    mod = importlib.import_module(modname)
    names = getattr(mod, "__all__", None)
    if names is None:
        raise AssertionError(f"{modname} defines no __all__")
    return mod, [n for n in names if not n.startswith("__")]


def render_api():
    """Markdown API reference generated from the docstrings (signature + first paragraph)."""
    lines = [
        "# API reference",
        "",
        "Generated from the docstrings by `python tests/test_docs.py` (do not edit by hand). Every",
        "public name (`__all__`) of the public modules, with its signature and the first paragraph of",
        "its docstring; see the docstrings (`help(...)`) for parameters, formulas and conventions.",
        "",
    ]
    for modname in API_MODULES:
        mod, names = public_names(modname)
        lines += [f"## `{modname}`", "", _summary(mod), ""]
        for name in names:
            obj = getattr(mod, name)
            if inspect.ismodule(obj):
                lines += [f"- **`{name}`** (module `{obj.__name__}`): {_summary(obj)}", ""]
                continue
            home = getattr(obj, "__module__", None)
            if home != modname and home in API_MODULES:
                # a re-export: document it once, where it is defined
                lines += [f"- **`{name}`**: re-exported from `{home}` (see `{home}.{name}`).", ""]
                continue
            if inspect.isclass(obj) or callable(obj):
                kind = "class" if inspect.isclass(obj) else "function"
                lines += [f"### `{modname}.{name}{_signature(obj)}`", "", f"*{kind}.* {_summary(obj)}", ""]
                if inspect.isclass(obj):
                    members = []
                    for mname, member in sorted(vars(obj).items()):
                        if mname.startswith("_"):
                            continue
                        if isinstance(member, property):
                            members.append(f"- `.{mname}` (property): {_summary(member)}")
                        elif inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod)):
                            fn = (
                                member.__func__ if isinstance(member, (classmethod, staticmethod)) else member
                            )
                            members.append(f"- `.{mname}{_signature(fn)}`: {_summary(fn)}")
                    if members:
                        lines += members + [""]
            else:
                shown = f"dict with keys {', '.join(map(str, obj))}" if isinstance(obj, dict) else repr(obj)
                lines += [f"### `{modname}.{name}`", "", f"*constant* `{shown}`"[:200], ""]
    return "\n".join(lines).rstrip() + "\n"


def test_api_md_lists_every_public_name():
    text = (ROOT / "docs" / "api.md").read_text()
    missing = []
    for modname in API_MODULES:
        _, names = public_names(modname)
        if f"## `{modname}`" not in text:
            missing.append(modname)
        missing += [
            f"{modname}.{n}" for n in names if f"`{modname}.{n}" not in text and f"**`{n}`**" not in text
        ]
    assert not missing, f"docs/api.md is stale (python tests/test_docs.py): missing {missing}"


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    os.chdir(ROOT)
    (ROOT / "docs" / "api.md").write_text(render_api())
    print("wrote docs/api.md")


@pytest.mark.parametrize(
    "modname", ["spectralkit.io", "spectralkit.sklearn", "spectralkit.learn", "spectralkit.dask"]
)
def test_docstring_examples_run(modname):
    import doctest

    result = doctest.testmod(importlib.import_module(modname), optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0
