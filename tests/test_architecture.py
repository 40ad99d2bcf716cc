"""The package layout is the architecture: layers import one way only, and nothing hides an import.

Layers, bottom to top (a module may import spectralkit modules of its own layer or below):

0. ``exceptions``, ``_version``, ``_validation`` (shared validators), ``_numerics`` (quadrature,
   Chebyshev, special functions, budget), ``_runtime`` (thread and memory control),
   ``_compiled`` (numba kernels)
1. ``kernels``      formulas, parser, family registry, asymptotic analysis
2. ``transforms``   mu of one atomic kernel in one dimension
3. ``measures``     SpectralMeasure: combination, Jordan split, masses, verdict, cache
4. ``sampling``     norm laws and directions
5. ``features``     RandomFeatures; ``_krein`` (streaming Gram sums, Krein ridge solve)
6. integrations     ``sklearn``, ``dask``, ``plotting``, ``io``, ``cli``, ``learn``, ``__main__``

The package ``__init__`` is the facade and may import any layer. Imports inside functions are allowed
only for optional extras (scikit-learn, dask, matplotlib, tqdm) and the listed exceptions.
"""

import ast
import pathlib

import pytest

PKG = pathlib.Path(__file__).resolve().parents[1] / "spectralkit"

LAYERS = [
    ("exceptions", "_version", "_validation", "_numerics", "_runtime", "_compiled", "_array_api"),
    ("kernels",),
    ("transforms",),
    ("measures",),
    ("sampling",),
    ("features", "_krein"),
    ("sklearn", "dask", "plotting", "io", "cli", "learn", "__main__"),
]
OPTIONAL = ("sklearn", "dask", "distributed", "matplotlib", "tqdm", "array_api_compat")
#: (module, imported name): function-level imports that are deliberate, with the reason.
LAZY_EXCEPTIONS = {
    ("spectralkit", "spectralkit.features"): "import spectralkit must not pay numba's import time",
    ("spectralkit._runtime", "scipy.linalg.cython_blas"): "threadpoolctl must see scipy's OpenBLAS loaded",
    ("spectralkit._runtime", "threadpoolctl"): "created after scipy's OpenBLAS is loaded",
    ("spectralkit.learn", "spectralkit.learn._estimators"): "the estimators need the extra 'sklearn'",
}


def _modules():
    out = {}
    for f in PKG.rglob("*.py"):
        parts = f.relative_to(PKG.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


MODULES = _modules()


def _layer(name):
    if name == "spectralkit":
        return None
    top = name.split(".")[1]
    for rank, members in enumerate(LAYERS):
        if top in members:
            return rank
    raise AssertionError(f"module {name} is in no layer: add it to LAYERS in {__file__}")


def _imports(name, path):
    """(imported module, line, inside_function) of every import statement of a module."""
    tree = ast.parse(path.read_text())
    is_pkg = path.name == "__init__.py"
    base = name.split(".") if is_pkg else name.split(".")[:-1]
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, child.lineno, in_function) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    target = ".".join(
                        base[: len(base) - child.level + 1] + ([child.module] if child.module else [])
                    )
                else:
                    target = child.module
                for alias in child.names:
                    sub = f"{target}.{alias.name}"
                    found.append((sub if sub in MODULES else target, child.lineno, in_function))
            visit(child, inner)

    visit(tree, False)
    return found


def test_every_module_is_in_a_layer():
    for name in MODULES:
        _layer(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_imports_go_one_way(name):
    rank = _layer(name)
    for target, line, _ in _imports(name, MODULES[name]):
        if not target.startswith("spectralkit.") or rank is None:
            continue
        assert _layer(target) <= rank, (
            f"{MODULES[name].name}:{line}: layer {rank} module {name} imports {target} "
            f"of the higher layer {_layer(target)}"
        )


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_hidden_imports_inside_functions(name):
    for target, line, in_function in _imports(name, MODULES[name]):
        if not in_function or target.split(".")[0] in OPTIONAL or (name, target) in LAZY_EXCEPTIONS:
            continue
        raise AssertionError(
            f"{MODULES[name]}:{line}: import of {target} inside a function "
            "(only optional extras may be imported lazily)"
        )


def test_no_import_cycles():
    graph = {
        n: {t for t, _, _ in _imports(n, p) if t in MODULES and t != n and t != "spectralkit"}
        for n, p in MODULES.items()
    }
    state = {}

    def dfs(v, path):
        state[v] = 1
        for w in graph[v]:
            if state.get(w) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(w) :] + [w]))
            if w not in state:
                dfs(w, path + [w])
        state[v] = 2

    for v in graph:
        if v not in state:
            dfs(v, [v])


def test_public_modules_declare_all():
    for name, path in MODULES.items():
        if any(part.startswith("_") for part in name.split(".")[1:]) or name.endswith("__main__"):
            continue
        tree = ast.parse(path.read_text())
        names = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        assert "__all__" in names, f"public module {name} has no __all__"
