"""Command-line interface: ``spectralkit check | plot | featurize | demo``.

Run ``spectralkit --help`` or ``spectralkit COMMAND --help``. Every command accepts a kernel as a
library spec (``matern:nu=1.5``, ``spherical_polynomial:a=2,p=2``) or a formula in ``r``
(``"exp(-r**2/2) - 0.5*exp(-r**2/8)"``) with ``--param name=value`` for its parameters.

Errors made by the user (bad formula, unknown kernel, missing file, bad dimension, a kernel whose
spectral mass is infinite where features are requested) print one line
``spectralkit: error: ...`` on stderr and exit with status 2 (usage: the arguments are wrong) or
1 (the computation failed: divergent mass, unreadable data, not enough memory, accuracy not
reachable). Python and numpy warnings raised while a command runs are not printed as such: after
a success they become ``spectralkit: warning: ...`` lines, after an error only the error line is
printed. SIGTERM and Ctrl-C end a command cleanly (status 143 and 130), and so do SIGHUP, SIGQUIT,
SIGUSR1 and SIGUSR2 when their action is the default one (status 128 + the signal number):
temporary files are removed and existing outputs are left as they were. Set the environment variable
``SPECTRALKIT_TRACEBACK=1`` to get the Python traceback instead.

The functions are importable: :func:`main` takes an argument list and returns the exit status,
which is how the tests drive the CLI in-process.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import json
import math
import os
import secrets
import signal
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numba.core import event as numba_event

from . import io
from ._version import __version__
from .exceptions import DivergentMassError, KernelDefinitionError, TransformError
from .features import FEATURE_PARAMS, RandomFeatures, resolve_lengthscale, validate_feature_params
from .kernels import from_spec
from .measures import MAX_DIM, SpectralMeasure, check_rkks
from .plotting import plot_measure, save_figure

__all__ = ["build_parser", "main"]

_PROG = "spectralkit"
_DEFAULT_DEMO_KERNEL = "delta_gaussian:sigma1=1,sigma2=10"


class UsageError(Exception):
    """Wrong arguments: reported as one line, exit status 2."""


class ComputationError(Exception):
    """The requested computation cannot be done: one line, exit status 1."""


class _Terminated(BaseException):
    """Raised by the CLI's SIGTERM handler so that cleanups run (a BaseException, like
    KeyboardInterrupt, so that no ``except Exception`` swallows it)."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``spectralkit: error: ...``) that raise instead of exiting."""

    def error(self, message):
        raise UsageError(f"{message} (see '{self.prog} --help')")


# ---------------------------------------------------------------------------------------------
# argument helpers
# ---------------------------------------------------------------------------------------------
def _int_at_least(name, low):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{name} must be an integer >= {low}, got {value}")
        return value

    return parse


def _positive_int(name):
    return _int_at_least(name, 1)


def _nonnegative_int(name):
    return _int_at_least(name, 0)


def _positive_float(name):
    def parse(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a number > 0, got {text!r}") from None
        if not (math.isfinite(value) and value > 0):
            raise argparse.ArgumentTypeError(f"{name} must be a finite number > 0, got {text!r}")
        return value

    return parse


def _param(text):
    name, eq, value = text.partition("=")
    name = name.strip()
    if not eq or not name.isidentifier():
        raise argparse.ArgumentTypeError(f"--param must look like name=value, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--param {name} must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"--param {name} must be finite, got {value!r}")
    return name, (int(number) if number == int(number) and value.strip().lstrip("+-").isdigit() else number)


def _number_or_scale(text):
    """--lengthscale: a number, or the word 'scale' (the data-driven rule)."""
    return "scale" if text.strip() == "scale" else float(text)


#: featurize's options for the feature-map parameters of :data:`spectralkit.features.FEATURE_PARAMS`:
#: (flags, table name, parser of the text, metavar, CLI default when it differs from the table's).
#: Types, ranges and messages come from the table's validators (one definition).
_FEATURE_OPTIONS = (
    (("--components", "-n"), "n_components", int, "N", None),
    (("--method",), "method", str, "METHOD", None),
    (("--split",), "split", str, "SPLIT", None),
    (("--feature-map",), "feature_map", str, "MAP", None),
    (("--seed",), "random_state", int, "SEED", 0),  # reproducible by default
    (("--truncation",), "truncation", float, "RHO_MAX", None),
    (("--truncation-tolerance",), "truncation_tolerance", float, "TOL", None),
    (("--lengthscale",), "lengthscale", _number_or_scale, "L|scale", None),
    (("--gamma",), "gamma", float, "GAMMA", None),
    (("--shape-matrix",), "shape_matrix", str, "FILE", None),  # a file name, loaded by _load_shape_matrix
)
_TABLE = {p.name: p for p in FEATURE_PARAMS}
_FLAG = {name: flags[0] for flags, name, *_ in _FEATURE_OPTIONS}


def _table_type(name, parse):
    """argparse type: ``parse`` the text, then validate it with the table's check for ``name``."""
    check = _TABLE[name].check

    def convert(text):
        try:
            value = parse(text)
        except ValueError:
            kind = {int: "an integer", _number_or_scale: "a number or 'scale'"}.get(parse, "a number")
            raise argparse.ArgumentTypeError(f"must be {kind}, got {text!r}") from None
        try:
            return check(value, None)
        except (ValueError, TypeError) as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return convert


def _add_feature_args(p):
    for flags, name, parse, metavar, cli_default in _FEATURE_OPTIONS:
        param = _TABLE[name]
        default = param.default if cli_default is None else cli_default
        help_text = f"{name}: {param.doc} (default {default})".replace("%", "%%")
        if name == "shape_matrix":
            help_text = (
                f"{name}: {param.doc}; FILE is a .npy file or a text file (whitespace-separated "
                "rows) holding M (default: none)"
            )
        kind = None if name == "shape_matrix" else _table_type(name, parse)
        p.add_argument(*flags, dest=name, type=kind, default=default, metavar=metavar, help=help_text)


def _load_shape_matrix(path, dim):
    """The matrix M of ``--shape-matrix FILE`` (.npy without pickles, or text), validated by the table."""
    flag = f"--shape-matrix {path!r}"
    if not os.path.exists(path):
        raise UsageError(f"{flag}: file does not exist")
    if os.path.isdir(path):
        raise UsageError(f"{flag}: is a directory, expected a .npy or text file")
    try:
        if path.lower().endswith(".npy"):
            M = np.load(path, allow_pickle=False)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "empty input file": the shape check below says it
                M = np.loadtxt(path, dtype=np.float64, ndmin=2)
    except (ValueError, OSError, EOFError) as exc:
        raise UsageError(f"{flag}: cannot read a matrix ({' '.join(str(exc).split())})") from None
    try:
        return _TABLE["shape_matrix"].check(M, dim)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{flag}: {exc}") from None


def _feature_values(args, dim=None):
    """The feature-map parameters of the command line, validated together (cross rules included);
    with ``dim`` None before the input is scanned, again with the input's dimension after."""
    values = {name: getattr(args, name) for _, name, *_ in _FEATURE_OPTIONS}
    if isinstance(values["shape_matrix"], str):
        values["shape_matrix"] = _load_shape_matrix(values["shape_matrix"], dim)
    try:
        return validate_feature_params(values, dim=dim)
    except (ValueError, TypeError) as exc:
        flag = next((f for name, f in _FLAG.items() if str(exc).startswith(name)), None)
        raise UsageError(f"{flag}: {exc}" if flag else str(exc)) from None


def _add_kernel_args(p, dim_required=True):
    p.add_argument(
        "kernel",
        metavar="KERNEL",
        help="library spec such as 'matern:nu=1.5' or a formula in r such as "
        "'exp(-r**2/2) - 0.5*exp(-r**2/8)'",
    )
    p.add_argument(
        "--dim",
        "-d",
        type=_positive_int("--dim"),
        required=dim_required,
        help="input dimension d (definiteness depends on it)",
    )
    p.add_argument(
        "--param",
        "-p",
        type=_param,
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a parameter of the formula or library kernel (repeatable)",
    )
    p.add_argument(
        "--support",
        type=_positive_float("--support"),
        default=None,
        metavar="R",
        help="support radius R of a formula: k = 0 for r > R (zero extension)",
    )


def _kernel_from_args(args):
    params = dict(args.param) or None
    try:
        return from_spec(args.kernel, params=params, support=args.support)
    except KernelDefinitionError as exc:
        raise UsageError(f"kernel {args.kernel!r}: {exc}") from None


# ---------------------------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    """The argparse parser of the ``spectralkit`` command (errors raise :class:`UsageError`)."""
    parser = _Parser(
        prog=_PROG,
        description="Signed spectral measures of radial kernels, the PD / RKKS / DIVERGENT verdict, "
        "and unbiased random features for indefinite kernels.",
        epilog="Run 'spectralkit COMMAND --help' for a command's options. Exit status: 0 success, "
        "1 computation error, 2 usage error.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser(
        "check",
        help="verdict, Jordan masses, sign changes and tail of a kernel on R^d",
        description="Derive the signed spectral measure of KERNEL on R^d and decide "
        "PD / RKKS / DIVERGENT (finite total mass or not).",
    )
    _add_kernel_args(p)
    p.add_argument("--json", action="store_true", help="print a machine-readable JSON object")
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="print the stages of a derivation that takes more than a second on stderr "
        "(auto: when stderr is a terminal)",
    )
    p.set_defaults(func=_cmd_check)

    p = sub.add_parser(
        "plot",
        help="picture of k(r), mu(rho), the radial laws and M(R)",
        description="Draw k(r), the signed density mu(rho) with the + and - parts "
        "shaded, the radial laws p+-(rho) and their CDFs, and the "
        "partial-mass curve M(R) into an image file.",
    )
    _add_kernel_args(p)
    p.add_argument("-o", "--output", required=True, metavar="FILE", help="output image (.png, .pdf or .svg)")
    p.add_argument("--dpi", type=_positive_int("--dpi"), default=110, help="resolution (default 110)")
    p.set_defaults(func=_cmd_plot)

    p = sub.add_parser(
        "featurize",
        help="random features of a data file, streamed to .npy",
        description="Read INPUT (.npy, CSV or LIBSVM text, optionally .bz2/.gz/.xz) in "
        "chunks, write the feature matrix to OUTPUT (.npy) and a JSON "
        "sidecar OUTPUT-stem.json with the kernel, seed, signature and masses.",
    )
    _add_kernel_args(p, dim_required=False)
    p.add_argument("input", metavar="INPUT", help="data file")
    p.add_argument("output", metavar="OUTPUT", help="output feature matrix (.npy)")
    _add_feature_args(p)
    p.add_argument(
        "--dtype", choices=("float32", "float64"), default="float64", help="output dtype (default float64)"
    )
    p.add_argument(
        "--chunk-rows",
        type=_positive_int("--chunk-rows"),
        default=4096,
        help="rows per chunk held in memory (default 4096)",
    )
    p.add_argument(
        "--format", choices=("npy", "csv", "libsvm"), default=None, help="input format (default: detected)"
    )
    p.add_argument(
        "--label-column",
        type=int,
        default=None,
        metavar="J",
        help="CSV: column J holds labels, not features (negative counts from the end)",
    )
    p.add_argument(
        "--header",
        choices=("auto", "yes", "no"),
        default="auto",
        help="CSV: is the first line a header? auto (default): yes exactly when none of its "
        "fields is a number, empty or NA",
    )
    p.add_argument(
        "--n-features",
        type=_positive_int("--n-features"),
        default=None,
        help="LIBSVM: number of features (default: largest index in the file)",
    )
    p.add_argument(
        "--zero-based", action="store_true", help="LIBSVM: feature indices start at 0 (default: at 1)"
    )
    p.add_argument(
        "--labels",
        default=None,
        metavar="FILE",
        help="also write the numeric labels of the input to FILE (.npy)",
    )
    p.add_argument(
        "--progress",
        choices=("auto", "always", "never"),
        default="auto",
        help="progress bar on stderr (auto: for inputs of >= 100000 rows)",
    )
    p.set_defaults(func=_cmd_featurize)

    p = sub.add_parser(
        "demo",
        help="the main job on real data: verdict, masses, GORF error and time",
        description="Derive an indefinite kernel's measure in a realistic dimension, "
        "build GORF features on real data and report the relative "
        "Frobenius error against the exact kernel and the time taken.",
    )
    p.add_argument(
        "--kernel",
        default=_DEFAULT_DEMO_KERNEL,
        help=f"kernel spec or formula (default {_DEFAULT_DEMO_KERNEL})",
    )
    p.add_argument(
        "--dataset",
        choices=("auto", "digits", "letter", "synthetic"),
        default="auto",
        help="auto and digits: scikit-learn's digits (real data, d = 64, shipped with scikit-learn); "
        "letter: the shared UCI letter data (d = 16); synthetic: Gaussian clusters",
    )
    p.add_argument(
        "--components",
        "-n",
        type=_positive_int("--components"),
        default=None,
        help="output width (default 8 d: 4 d frequencies, sin and cos)",
    )
    p.add_argument(
        "--subsample",
        type=_int_at_least("--subsample", 2),
        default=1000,
        help="points for the exact Gram matrix, at least 2 (default 1000, as in the papers)",
    )
    p.add_argument(
        "--repeats",
        type=_positive_int("--repeats"),
        default=5,
        help="independent feature draws for mean +- std (default 5)",
    )
    p.add_argument("--seed", type=_nonnegative_int("--seed"), default=0, help="random seed (default 0)")
    p.set_defaults(func=_cmd_demo)
    return parser


# ---------------------------------------------------------------------------------------------
# commands
# ---------------------------------------------------------------------------------------------
def _out(text=""):
    print(text, flush=True)


def _measure(kernel, dim, progress=False):
    """The (lazy, cheap to build) measure; argument errors become usage errors."""
    try:
        return SpectralMeasure(kernel, dim, progress=progress)
    except ValueError as exc:
        raise UsageError(f"--dim: {exc}") from None


def _cmd_check(args):
    kernel = _kernel_from_args(args)
    show = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    measure = _measure(kernel, args.dim, progress=show)
    t0 = time.perf_counter()
    report = measure.check_rkks()
    wall = time.perf_counter() - t0
    if args.json:
        data = report.to_dict()
        data["wall_seconds"] = wall
        _out(json.dumps(data, indent=2, default=str))
    else:
        _out(str(report))
    return 0


def _check_output_file(path, suffixes, what):
    p = Path(path)
    if p.suffix.lower() not in suffixes:
        raise UsageError(f"{what} {str(path)!r} must end with {', '.join(suffixes)}")
    if p.is_dir():
        raise UsageError(f"{what} {str(path)!r} is a directory")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise UsageError(f"{what} {str(path)!r}: directory {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {str(path)!r}: directory {str(parent)!r} is not writable")
    return p


def _cmd_plot(args):
    out = _check_output_file(args.output, (".png", ".pdf", ".svg"), "--output")
    kernel = _kernel_from_args(args)
    measure = _measure(kernel, args.dim)
    fig = plot_measure(measure)
    save_figure(fig, out, dpi=args.dpi)
    _out(f"wrote {out} ({out.stat().st_size} bytes)")
    return 0


class _Progress:
    """tqdm when installed, else a plain counter on stderr (updated at most every 0.5 s)."""

    def __init__(self, total, enabled):
        self.total, self.enabled, self.done, self._bar, self._last = total, enabled, 0, None, 0.0
        if not enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self._bar = None
        else:
            self._bar = tqdm(total=total, unit="rows", desc=_PROG, file=sys.stderr)

    def update(self, n):
        self.done += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
            return
        now = time.monotonic()
        if now - self._last >= 0.5 or self.done >= self.total:
            self._last = now
            print(
                f"\r{_PROG}: {self.done}/{self.total} rows ({100.0 * self.done / self.total:.0f}%)",
                end="",
                file=sys.stderr,
                flush=True,
            )

    def close(self):
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            print(file=sys.stderr, flush=True)


def _sidecar_path(output):
    return output.with_suffix(".json")


def _check_input_file(path):
    if not os.path.exists(path):
        raise UsageError(f"INPUT: input file {path!r} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"INPUT: input file {path!r} is a directory, expected a data file")


def _same_file(a, b):
    """True when the paths name one file: any spelling, symlinks, hard links (existing files);
    equal normalised real paths otherwise (files still to be created)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.normcase(os.path.realpath(a)) == os.path.normcase(os.path.realpath(b))


def _refuse_same_files(files):
    """``files``: ``[(description, path or None), ...]``, the input first; any two the same file
    is a usage error (before anything is read or written)."""
    files = [(what, str(path)) for what, path in files if path is not None]
    for i, (what_a, a) in enumerate(files):
        for what_b, b in files[i + 1 :]:
            if _same_file(a, b):
                why = "refusing to overwrite the input" if i == 0 else "two outputs cannot be one file"
                raise UsageError(f"{what_b} {b!r} is the same file as {what_a} {a!r}: {why}")


def _gb(n_bytes):
    return f"{n_bytes / 1e9:.3g} GB"


# SIGTERM / Ctrl-C: the handlers raise (so that cleanups run) except inside _signals_deferred(),
# where the signal waits until the block is left: creating, renaming and removing output files
# is never interrupted half-way. While numba compiles (its compiler and LLVM locks, see
# _NumbaLocks) the handler only remembers the signal: an exception raised inside numba's
# compiler leaves it half-built ("no compiled object yet", errors at exit). A remembered signal
# is raised by _raise_if_signalled(), at every chunk, before the renames and in main() after the
# command. The raise can also land where Python discards it (a __del__ run by the garbage
# collector, a ctypes callback): remembered all the same, and _quiet_discarded_signal keeps
# Python's "Exception ignored ..." report of it off stderr.
#: Other signals whose default action ends the process (without cleanup): handled like SIGTERM
#: when their action is the default one.
_FATAL_SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2") if hasattr(signal, name)
)
_signal_state = {"depth": 0, "pending": None, "terminating": False, "received": None, "compiling": 0}


def _raise_for_signal(signum):
    _signal_state["terminating"] = True
    _signal_state["received"] = signum
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated(signum)


def _raise_if_signalled():
    """Raise a signal that arrived while numba compiled, or whose first raise was discarded
    (normal code only runs on after it in those two cases)."""
    if _signal_state["received"] is not None:
        _raise_for_signal(_signal_state["received"])


def _on_signal(signum, frame):
    if _signal_state["terminating"]:
        return  # already on the way out: a repeated signal must not interrupt the cleanup
    if _signal_state["depth"]:
        _signal_state["pending"] = signum
        return
    if _signal_state["compiling"]:
        _signal_state["received"] = signum  # raised at the next _raise_if_signalled()
        return
    _raise_for_signal(signum)


class _NumbaLocks(numba_event.Listener):
    """Counts the main thread's time inside numba's compiler and LLVM locks (the start and end
    events of "numba:compiler_lock" / "numba:llvm_lock"); the signal handler defers to it."""

    kinds = ("numba:compiler_lock", "numba:llvm_lock")

    def on_start(self, event):
        if threading.current_thread() is threading.main_thread():
            _signal_state["compiling"] += 1

    def on_end(self, event):
        if threading.current_thread() is threading.main_thread():
            _signal_state["compiling"] -= 1


@contextlib.contextmanager
def _signals_deferred():
    _signal_state["depth"] += 1
    try:
        yield
    finally:
        _signal_state["depth"] -= 1
        pending = _signal_state["pending"]
        if not _signal_state["depth"] and pending is not None:
            _signal_state["pending"] = None
            _raise_for_signal(pending)


def _quiet_discarded_signal(previous_hook):
    """A ``sys.unraisablehook`` that drops the exceptions of this module's signal handler (they
    are raised again, see _raise_if_signalled) and passes every other one to ``previous_hook``."""

    def hook(unraisable):
        exc = unraisable.exc_value
        ours = isinstance(exc, _Terminated) or (
            isinstance(exc, KeyboardInterrupt) and _signal_state["received"] == signal.SIGINT
        )
        if not ours:
            previous_hook(unraisable)

    return hook


@contextlib.contextmanager
def _signal_handlers():
    """Install the SIGTERM handler (and the SIGINT one, unless the caller set its own) for the
    duration of a command; restore the previous handlers afterwards. Only the main thread can
    install handlers; elsewhere the command runs with the process's handlers."""
    _signal_state.update(depth=0, pending=None, terminating=False, received=None, compiling=0)
    installed = {}
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT, *_FATAL_SIGNALS):
            previous = signal.getsignal(signum)
            if previous is None or (signum == signal.SIGINT and previous is not signal.default_int_handler):
                continue  # a handler set outside Python, or the caller's own Ctrl-C handling
            if signum in _FATAL_SIGNALS and previous is not signal.SIG_DFL:
                continue  # ignored (nohup) or handled by the caller: left as it is
            signal.signal(signum, _on_signal)
            installed[signum] = previous
    previous_hook = sys.unraisablehook
    try:
        with contextlib.ExitStack() as stack:
            if installed:
                sys.unraisablehook = _quiet_discarded_signal(previous_hook)
                locks = _NumbaLocks()
                for kind in locks.kinds:
                    stack.enter_context(numba_event.install_listener(kind, locks))
            yield
    finally:
        sys.unraisablehook = previous_hook
        for signum, previous in installed.items():
            signal.signal(signum, previous)


def _unique_name(target, suffix):
    return target.parent / f".{target.name}.{secrets.token_hex(4)}{suffix}"


class _Outputs:
    """Output files written under temporary names and renamed into place together.

    ``add(target)`` creates an empty ``.NAME.XXXXXXXX.part`` in the target's directory (same file
    system, so the rename is atomic). ``commit()`` renames the temporary files onto their targets
    in the order they were added (the sidecar last). If a rename fails, the renames already done
    are undone: a target that existed before gets its previous content back (kept by a hard link
    taken just before its rename), a new one is removed. Leaving the ``with`` block without a
    commit (an error, Ctrl-C, SIGTERM) removes the temporary files and touches no target.
    Signals wait while files are created, renamed or removed. Not covered: a power loss or
    SIGKILL in the middle of the renames (a few system calls), and the data is not fsync'ed.
    """

    def __init__(self):
        self._pairs = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with _signals_deferred():
            for tmp, _ in self._pairs:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(tmp)
            self._pairs = []
        return False

    def add(self, target):
        with _signals_deferred():
            while True:
                tmp = _unique_name(target, ".part")
                try:  # created like any new file (permissions from the umask)
                    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                except FileExistsError:
                    continue
                self._pairs.append((tmp, target))
                return tmp

    def commit(self):
        _raise_if_signalled()
        with _signals_deferred():
            backups, done = {}, []
            try:
                for tmp, target in self._pairs:
                    if os.path.lexists(target):
                        backups[target] = _hard_link(target)
                    os.replace(tmp, target)
                    done.append(target)
            except OSError as exc:
                raise ComputationError(
                    f"cannot rename the outputs into place ({exc}){self._undo(done, backups)}"
                ) from None
            finally:
                for backup in backups.values():
                    if backup is not None:
                        with contextlib.suppress(OSError):
                            os.remove(backup)
            self._pairs = []

    @staticmethod
    def _undo(done, backups):
        lost = []
        for target in reversed(done):
            try:
                if target not in backups:
                    os.remove(target)  # new: remove it
                elif backups[target] is not None:
                    os.replace(backups[target], target)  # existed: the previous content again
                else:
                    lost.append(str(target))
            except OSError:
                lost.append(str(target))
        if lost:
            return f"; could not restore the previous {', '.join(lost)}"
        return "; no output was changed"


def _hard_link(target):
    """A hard link to ``target`` (a symlink itself, not what it points to) under a new hidden
    name, or None where the file system cannot make one."""
    while True:
        backup = _unique_name(target, ".old")
        try:
            os.link(target, backup, follow_symlinks=False)
        except FileExistsError:
            continue
        except (OSError, NotImplementedError):
            return None
        return backup


def _create_npy(path, dtype, shape, what):
    """Create a .npy file of ``shape`` (header and size) without keeping it mapped: the stream
    maps a window of rows at a time, since a mapping held for the whole run would keep every
    written page in this process's resident set. Its blocks are allocated now, so that a full
    disk is a clean error here rather than a SIGBUS when a page of the map is written later."""
    handle = np.lib.format.open_memmap(path, mode="w+", dtype=dtype, shape=shape)
    del handle  # unmapped
    if not hasattr(os, "posix_fallocate"):
        return
    size = os.path.getsize(path)
    fd = os.open(path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise ComputationError(
                f"not enough disk space for {what}: need about {_gb(size)} ({os.strerror(exc.errno)})"
            ) from None
        # EINVAL, EOPNOTSUPP: this file system cannot reserve space; the writes will tell
    finally:
        os.close(fd)


def _cmd_featurize(args):
    output = _check_output_file(args.output, (".npy",), "OUTPUT")
    labels_path = None if args.labels is None else _check_output_file(args.labels, (".npy",), "--labels")
    sidecar_path = _check_output_file(_sidecar_path(output), (".json",), "the sidecar")
    _check_input_file(args.input)
    _refuse_same_files(
        [
            ("INPUT", args.input),
            ("OUTPUT", args.output),
            ("--labels", args.labels),
            ("the sidecar of OUTPUT", sidecar_path),
        ]
    )
    kernel = _kernel_from_args(args)
    values = _feature_values(args)  # before the input is read
    try:
        info = io.scan(
            args.input,
            format=args.format,
            label_column=args.label_column,
            n_features=args.n_features,
            zero_based=args.zero_based,
            header={"auto": None, "yes": True, "no": False}[args.header],
        )
    except ValueError as exc:
        raise ComputationError(f"cannot read INPUT: {exc}") from None
    if args.dim is not None and args.dim != info.n_features:
        raise UsageError(f"--dim {args.dim} does not match the {info.n_features} features of {args.input!r}")
    if info.n_features > MAX_DIM:
        raise ComputationError(
            f"INPUT {args.input!r} has {info.n_features} feature columns; the input dimension d is at "
            f"most {MAX_DIM} (reduce the dimension first, e.g. PCA, or check --label-column / --format)"
        )
    if labels_path is not None and not info.has_labels:
        raise UsageError(f"--labels: {args.input!r} has no labels (give --label-column for CSV files)")
    if labels_path is not None and not info.numeric_labels:
        raise ComputationError(f"--labels needs numeric labels; {args.input!r} has text labels")
    dtype = np.dtype(args.dtype)
    t0 = time.perf_counter()
    if values["shape_matrix"] is not None:
        args.shape_matrix = values["shape_matrix"]
        values = _feature_values(args, info.n_features)  # M must be d x d
    # lengthscale="scale" (the default) is Var(X) of the input: one more streamed pass over it,
    # the same rule (and number) as RandomFeatures.fit(X) on the whole array
    try:
        ell = resolve_lengthscale(
            kernel,
            values["lengthscale"],
            values["gamma"],
            _input_blocks(args, info) if info.n_rows else None,
            values["shape_matrix"],
        )
    except ValueError as exc:
        raise UsageError(f"--lengthscale: {exc}") from None
    rf = RandomFeatures(kernel, dim=info.n_features, **dict(values, lengthscale=ell, gamma=None))
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RuntimeWarning)
            rf.fit()
    except MemoryError:
        raise MemoryError(
            f"not enough memory for --components {values['n_components']} in dimension "
            f"{info.n_features}: the frequencies alone need about "
            f"{_gb(8 * values['n_components'] * info.n_features)}"
        ) from None
    for w in caught:  # the truncation bias report: one line, not a warnings traceback
        print(f"{_PROG}: warning: {' '.join(str(w.message).split())}", file=sys.stderr)
    _raise_if_signalled()  # one that came while fit() compiled: before any output file exists
    t_fit = time.perf_counter() - t0
    width = int(np.asarray(rf.signature_).size)
    show = args.progress == "always" or (args.progress == "auto" and info.n_rows >= 100_000)
    # every output goes to a temporary file next to its target; all are renamed at the end
    with _Outputs() as outputs:
        tmp_out = outputs.add(output)
        tmp_lab = None if labels_path is None else outputs.add(labels_path)
        tmp_side = outputs.add(sidecar_path)
        _create_npy(tmp_out, dtype, (info.n_rows, width), f"OUTPUT {str(output)!r}")
        if tmp_lab is not None:
            _create_npy(tmp_lab, np.float64, (info.n_rows,), f"--labels {str(labels_path)!r}")
        t1 = time.perf_counter()
        _stream(rf, info, args, tmp_out, tmp_lab, dtype, width, _Progress(info.n_rows, show))
        t_transform = time.perf_counter() - t1
        sidecar = _sidecar(
            args, values, kernel, rf, info, output, labels_path, dtype, width, t_fit, t_transform
        )
        with open(tmp_side, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(sidecar, indent=2) + "\n")
        outputs.commit()
    _out(
        f"wrote {output} ({info.n_rows} x {width} {dtype.name}) and {sidecar_path} in "
        f"{t_fit + t_transform:.2f} s (fit {t_fit:.2f} s, transform {t_transform:.2f} s)"
    )
    return 0


def _input_blocks(args, info):
    """The input's feature blocks in float64 (read errors: ComputationError, not ValueError)."""
    try:
        for X, _ in io.iter_chunks(args.input, chunk_rows=args.chunk_rows, dtype=np.float64, info=info):
            _raise_if_signalled()
            yield X
    except ValueError as exc:
        raise ComputationError(f"cannot read INPUT: {exc}") from None


def _stream(rf, info, args, tmp_out, tmp_lab, dtype, width, progress):
    """Featurize the input chunk by chunk into the temporary .npy files."""
    window_rows = max(args.chunk_rows, (64 << 20) // max(1, width * dtype.itemsize))  # ~64 MiB
    out = lab = None
    window_start = row = 0
    try:
        for X, y in io.iter_chunks(args.input, chunk_rows=args.chunk_rows, dtype=dtype, info=info):
            _raise_if_signalled()
            if out is None or row + len(X) > window_start + window_rows:
                out = lab = None  # unmap the previous window
                window_start = row
                out = np.load(tmp_out, mmap_mode="r+")[window_start : window_start + window_rows]
                if tmp_lab is not None:
                    lab = np.load(tmp_lab, mmap_mode="r+")[window_start : window_start + window_rows]
            a, b = row - window_start, row - window_start + len(X)
            try:
                rf.transform(X, out=out[a:b])
            except ValueError as exc:  # the data read fine: the features cannot be computed
                raise ComputationError(
                    f"cannot featurize input rows {row} to {row + len(X) - 1} of {args.input!r}: {exc}"
                ) from None
            if not np.isfinite(out[a:b]).all():  # never write NaN features silently
                raise ComputationError(
                    f"the features of input rows {row} to {row + len(X) - 1} are not finite: the input "
                    f"values (largest |x| = {float(np.abs(X).max()):g}) are too large for this kernel; "
                    "rescale the data"
                )
            if lab is not None:
                lab[a:b] = y
            row += len(X)
            progress.update(len(X))
    except ValueError as exc:
        raise ComputationError(f"cannot read INPUT: {exc}") from None
    except MemoryError:
        per_row = info.n_features * (8 + dtype.itemsize) + 2 * width * dtype.itemsize
        raise MemoryError(
            f"not enough memory for chunks of --chunk-rows {args.chunk_rows} rows: need "
            f"about {_gb(args.chunk_rows * per_row)} per chunk ({info.n_features} input and "
            f"{width} output columns); lower --chunk-rows"
        ) from None
    finally:
        progress.close()
        out = lab = None  # unmap the last window (also when a traceback keeps this frame)


def _sidecar(args, values, kernel, rf, info, output, labels_path, dtype, width, t_fit, t_transform):
    measure = getattr(rf, "measure_", None)
    return {
        "spectralkit_version": __version__,
        "kernel": kernel.name,
        "kernel_spec": args.kernel,
        "kernel_params": dict(args.param),
        "kernel_key": kernel.key,
        "dim": info.n_features,
        "seed": values["random_state"],
        "method": values["method"],
        "split": values["split"],
        "feature_map": values["feature_map"],
        "lengthscale": rf.lengthscale_,
        "lengthscale_rule": "scale: sqrt(n_features Var(X) / 2)"
        if values["lengthscale"] == "scale" and values["gamma"] is None
        else ("gamma: 1 / sqrt(2 gamma)" if values["gamma"] is not None else "given"),
        "gamma": values["gamma"],
        "shape_matrix": None if values["shape_matrix"] is None else values["shape_matrix"].tolist(),
        "n_components": width,
        "n_plus": int(rf.n_plus_),
        "n_minus": int(rf.n_minus_),
        "mass_plus": float(rf.mass_plus_),
        "mass_minus": float(rf.mass_minus_),
        "mass_errors": _mass_errors(measure, values["split"]),
        "signature": [int(s) for s in np.asarray(rf.signature_)],
        "input": {
            "path": os.path.abspath(args.input),
            "format": info.format,
            "rows": info.n_rows,
            "features": info.n_features,
            "compression": info.compression,
            "labels": info.has_labels,
        },
        "output": {
            "path": str(output.resolve()),
            "shape": [info.n_rows, width],
            "dtype": dtype.name,
            "labels": None if labels_path is None else str(labels_path.resolve()),
        },
        "truncation": values["truncation"],
        "truncation_tolerance": values["truncation_tolerance"],
        "truncation_bias_at_0": getattr(rf, "truncation_bias_", None),
        "truncation_bias_max": getattr(rf, "truncation_bias_max_", None),
        "usage": (
            "K_hat = Phi @ diag(signature) @ Phi.T estimates k(||x - y||_M / lengthscale)"
            + (" without bias" if values["truncation"] is None else " with the truncation bias above")
        ),
        "seconds": {"fit": t_fit, "transform": t_transform},
    }


def _mass_errors(measure, split):
    """Absolute errors of the Jordan masses (None when not available, e.g. split='terms')."""
    if measure is None or split != "jordan":
        return None
    try:
        return {"plus": float(measure.mass_plus.error), "minus": float(measure.mass_minus.error)}
    except (AttributeError, DivergentMassError):
        return None


# ---------------------------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------------------------
def _shared_data_dir():
    """The shared benchmark data, if present: ``$SPECTRALKIT_DATA``, else ``../shared/data``
    relative to the working directory (a project checkout) or to the source tree."""
    candidates = [
        os.environ.get("SPECTRALKIT_DATA"),
        Path.cwd().parent / "shared" / "data",
        Path(__file__).resolve().parents[1].parent / "shared" / "data",
    ]
    for path in candidates:
        if path and Path(path).is_dir():
            return Path(path)
    return None


def _demo_data(choice, seed):
    """Return (X scaled to [0, 1], description)."""
    if choice in ("auto", "digits"):
        # scikit-learn is a core dependency; imported here because it adds ~1 s to every command
        from sklearn.datasets import load_digits

        X = load_digits().data / 16.0
        return X, "scikit-learn's digits: 1797 real 8x8 handwritten digits (64 pixels scaled to [0, 1])"
    if choice == "letter":
        shared = _shared_data_dir()
        if shared is None or not (shared / "letter-recognition.data").exists():
            raise UsageError(
                "--dataset letter needs ../shared/data/letter-recognition.data next to the project "
                "(or the folder named by SPECTRALKIT_DATA)"
            )
        X, _ = io.load(shared / "letter-recognition.data", label_column=0)
        return X / 15.0, "UCI letter recognition (20000 x 16, scaled to [0, 1])"
    rng = np.random.default_rng(seed)
    centers = rng.uniform(size=(10, 16))
    X = np.clip(centers[rng.integers(0, 10, 2000)] + 0.1 * rng.normal(size=(2000, 16)), 0, 1)
    return X, "SYNTHETIC data (asked for): 10 Gaussian clusters in [0, 1]^16, 2000 points"


_VERDICT_MEANING = {
    "PD": "positive definite: an ordinary RKHS kernel (m- = 0), plain random Fourier features",
    "RKKS": "indefinite, finite total mass: k = k+ - k- with k+ and k- positive definite, so "
    "unbiased signed random features exist",
}


def _relative_errors(K, normK, Phi, signature):
    """||K - Phi J Phi^T||_F / ||K||_F for one draw."""
    K_hat = (Phi * np.asarray(signature)) @ Phi.T
    return float(np.linalg.norm(K - K_hat) / normK)


def _summary(errs):
    """'mean ± std' of the draws' errors (the std needs two draws)."""
    errs = np.asarray(errs)
    spread = f"{errs.std(ddof=1):.4f}" if len(errs) > 1 else "n/a (one draw)"
    return float(errs.mean()), spread


def _cmd_demo(args):
    try:
        kernel = from_spec(args.kernel)
    except KernelDefinitionError as exc:
        raise UsageError(f"--kernel {args.kernel!r}: {exc}") from None
    X, description = _demo_data(args.dataset, args.seed)
    n, d = X.shape
    _out(f"spectralkit {__version__} demo")
    _out(f"data       {description}")
    _out(f"kernel     {kernel.name} on R^{d}")
    t0 = time.perf_counter()
    report = check_rkks(kernel, d)
    t_check = time.perf_counter() - t0
    _out(f"verdict    {report.verdict}   ({t_check:.2f} s)")
    if report.verdict == "DIVERGENT":
        raise ComputationError(f"{kernel.name} has infinite spectral mass in d = {d}: {report.reason}")
    _out(f"meaning    {_VERDICT_MEANING[report.verdict]}")
    _out(f"masses     m+ = {report.mass_plus}   m- = {report.mass_minus}   (k(0) = m+ - m- = {report.k0:g})")
    total = report.mass_plus.value + report.mass_minus.value
    _out(
        f"           the estimator's variance grows with (m+ + m-)^2 = {total**2:.4g} "
        f"(a PD kernel with k(0) = 1: 1)"
    )
    components = args.components or 8 * d
    rng = np.random.default_rng(args.seed)
    m = min(args.subsample, n)
    idx = rng.choice(n, size=m, replace=False)
    Xs = np.ascontiguousarray(X[idx])
    sq = np.sum(Xs**2, axis=1)
    D = np.sqrt(np.maximum(sq[:, None] + sq[None, :] - 2 * Xs @ Xs.T, 0.0))
    K = kernel(D)
    normK = np.linalg.norm(K)
    if not (np.isfinite(normK) and normK > 0):
        raise ComputationError(
            f"the exact Gram matrix of {kernel.name} on the {m} subsampled point{'s' if m != 1 else ''} has "
            f"norm {normK:g}: the relative error is undefined; use a larger --subsample (at least 2)"
        )
    _out(
        f"features   n_components = {components}, {args.repeats} independent draws; exact Gram on "
        f"{m} random points"
    )
    # compile the numba kernels once (cached on disk afterwards) so that the timings below are
    # steady-state ones
    t1 = time.perf_counter()
    RandomFeatures(kernel, dim=d, n_components=components, random_state=0).fit().transform(X[:8])
    _out(f"jit        warm-up (numba compile or cache load) {time.perf_counter() - t1:.2f} s")
    errors = {}
    for method in ("rff", "gorf"):
        errs, t_fit, t_tr = [], 0.0, 0.0
        for rep in range(args.repeats):
            t1 = time.perf_counter()
            rf = RandomFeatures(
                kernel, dim=d, n_components=components, method=method, random_state=args.seed + rep
            ).fit()
            t2 = time.perf_counter()
            Phi = rf.transform(X)  # the whole data set, as in real use
            t3 = time.perf_counter()
            t_fit += t2 - t1
            t_tr += t3 - t2
            errs.append(_relative_errors(K, normK, Phi[idx], rf.signature_))
        errors[method], spread = _summary(errs)
        _out(
            f"{method:<10} relative Frobenius error ||K - K^||_F / ||K||_F = {errors[method]:.4f} ± {spread} "
            f"(mean ± std); fit {t_fit / args.repeats * 1e3:.0f} ms, transform of {n} x {d} "
            f"{t_tr / args.repeats * 1e3:.1f} ms per draw"
        )
    # the everyday reference: the PD Gaussian kernel scikit-learn's SVC uses on these data
    # (gamma="scale" = 1 / (d Var X)), approximated by its RBFSampler at the same width, same points
    from sklearn.kernel_approximation import RBFSampler

    gamma = 1.0 / (d * float(X.var()))
    K_rbf = np.exp(-gamma * D**2)
    norm_rbf = np.linalg.norm(K_rbf)
    errs, t_tr = [], 0.0
    for rep in range(args.repeats):
        sampler = RBFSampler(gamma=gamma, n_components=components, random_state=args.seed + rep).fit(X)
        t1 = time.perf_counter()
        Phi = sampler.transform(X)
        t_tr += time.perf_counter() - t1
        errs.append(_relative_errors(K_rbf, norm_rbf, Phi[idx], np.ones(components)))
    base, base_spread = _summary(errs)
    _out(
        f"baseline   scikit-learn RBFSampler, PD Gaussian exp(-gamma r^2), gamma = 1/(d Var X) = {gamma:.3g}, "
        f"same width and points: "
        f"{base:.4f} ± {base_spread}; transform {t_tr / args.repeats * 1e3:.1f} ms per draw"
    )
    ratio = errors["gorf"] / base if base > 0 else math.inf
    quality = (
        "more accurate than"
        if ratio < 0.8
        else "as accurate as"
        if ratio <= 1.25
        else "close to"
        if ratio <= 2
        else "less accurate than"
    )
    _out(
        f"reading    gorf's error is {ratio:.2f}x the baseline's: {quality} the PD features users accept "
        f"every day; more components reduce both like 1/sqrt(n_components)"
    )
    _out(f"total      {time.perf_counter() - t0:.2f} s")
    return 0


# ---------------------------------------------------------------------------------------------
# entry point
# ---------------------------------------------------------------------------------------------
def _error(message):
    message = " ".join(str(message).split())  # one line
    print(f"{_PROG}: error: {message}", file=sys.stderr, flush=True)


def _warn_once(caught):
    """Warnings recorded during a successful command, as one line each (duplicates and warnings
    meant for developers, such as deprecations, left out)."""
    seen = set()
    for w in caught:
        if not issubclass(w.category, (RuntimeWarning, UserWarning)):
            continue
        text = " ".join(str(w.message).split())
        if text not in seen:
            seen.add(text)
            print(f"{_PROG}: warning: {text}", file=sys.stderr, flush=True)


def _memory_message(exc):
    text = " ".join(str(exc).split())
    if text.startswith("not enough memory"):
        return text
    return f"not enough memory ({text})" if text else "not enough memory"


def _release(exc):
    """Close what the interrupted command left open, now rather than at some later garbage
    collection: clearing the frames of the traceback releases the generators suspended there (a
    chunked reader inside its ``with`` block), which close their files; whatever still sits in a
    reference cycle is collected with its ResourceWarnings silenced (the interruption is the one
    thing to report)."""
    traceback.clear_frames(exc.__traceback__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        gc.collect()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``); return the exit status.

    0 on success, 1 for computation errors, 2 for usage errors, 130 after Ctrl-C, 143 after
    SIGTERM; errors are printed as one line ``spectralkit: error: ...`` on stderr. While the
    command runs, SIGTERM (and Ctrl-C, unless the caller installed its own handler) raise inside
    it so that temporary files are removed; the previous handlers are restored afterwards.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    debug = os.environ.get("SPECTRALKIT_TRACEBACK", "") not in ("", "0")
    with _signal_handlers():
        try:
            with warnings.catch_warnings(record=not debug) as caught:
                if not debug:
                    warnings.simplefilter("always")
                status = _run(parser, argv, debug)
            _raise_if_signalled()
            if status == 0 and caught:
                _warn_once(caught)
            return status
        except _Terminated as exc:
            signum = exc.args[0] if exc.args else signal.SIGTERM
            _release(exc)
            _error(f"terminated by {signal.Signals(signum).name}")
            return 128 + signum
        except KeyboardInterrupt as exc:
            _release(exc)
            _error("interrupted")
            return 130


def _run(parser, argv, debug):
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as exc:  # --help / --version
            return int(exc.code or 0)
        if args.command is None:
            parser.print_help()
            return 2
        return int(args.func(args) or 0)
    except (UsageError, KernelDefinitionError, FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        if debug:
            raise
        _error(exc)
        return 2
    except MemoryError as exc:
        if debug:
            raise
        _error(_memory_message(exc))
        return 1
    except (ComputationError, DivergentMassError, TransformError, ValueError, OSError) as exc:
        if debug:
            raise
        _error(exc)
        return 1
    except ImportError as exc:  # an optional extra is missing (the message says which)
        if debug:
            raise
        _error(exc)
        return 1
    except (ArithmeticError, RecursionError) as exc:  # a computation that failed on this input
        if debug:
            raise
        _error(f"the computation failed ({type(exc).__name__}: {exc})")
        return 1
    except Exception as exc:  # a bug: still one line, but say how to get the traceback
        if debug:
            raise
        _error(
            f"internal error ({type(exc).__name__}: {exc}); rerun with SPECTRALKIT_TRACEBACK=1 and report it"
        )
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
