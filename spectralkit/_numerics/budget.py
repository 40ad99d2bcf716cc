"""Run a call in a forked child process under a CPU-time budget.

sympy's ``series``, ``limit`` and ``integrate`` can take minutes or hang on some expressions and
cannot be interrupted from inside Python. :func:`run_with_budget` forks, runs the call in the child
with ``RLIMIT_CPU`` set to the budget (the kernel stops a child that has used its CPU seconds: a
loaded machine does not shorten the budget, a stuck child cannot outlive it), pickles the result
or the exception back through a pipe, and kills the child at a wall-clock safety net
(``3 x budget + 2 s``) in case it sleeps instead of computing. A child that is still using CPU at
the safety net (slowed down by other processes, not stuck) gets another window: where ``/proc``
tells the child's CPU time (Linux), the result does not depend on the machine's load. On Linux
the child also dies with its parent (``PR_SET_PDEATHSIG``): a killed parent never leaves a
computing child behind.

The child leaves with ``os._exit`` and never runs the parent's code after the call, so this is
safe under pytest, in dask workers and in daemonic processes (where ``multiprocessing`` refuses to
start children). Forking with running threads (BLAS, numba) is safe here because the child only
runs pure-Python sympy / mpmath code and exits. Without ``fork`` (Windows) the call runs in-process
without a limit.
"""

import contextlib
import ctypes
import ctypes.util
import math
import os
import pickle
import select
import signal
import time
import traceback
import warnings

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX
    resource = None

__all__ = ["run_with_budget", "cpu_time_limit", "BudgetExceeded"]

_PR_SET_PDEATHSIG = 1
_monotonic = time.monotonic  # the parent's clock for the safety net (a seam for the tests)


class BudgetExceeded(TimeoutError):
    """The call did not finish within its CPU budget (or the wall-clock safety net)."""


def _check_seconds(seconds):
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise ValueError(f"seconds must be a finite number > 0, got {seconds!r}")


class _Expired(BaseException):
    """The interval timer of :func:`cpu_time_limit` fired (a BaseException: library code that
    catches Exception to try another method must not swallow it)."""


@contextlib.contextmanager
def cpu_time_limit(seconds):
    """Raise :class:`BudgetExceeded` from the block once the process has used ``seconds`` more of
    CPU time (a one-shot ``SIGPROF`` interval timer).

    For several budgeted steps in one :func:`run_with_budget` child (one fork instead of one per
    step: a fork of a large process costs tens of milliseconds). The timer interrupts Python code
    between bytecodes, so a step stuck inside one long C call overruns it; the child's own
    ``RLIMIT_CPU`` still stops that. Without interval timers (Windows), or outside the main thread,
    the block runs without a limit.
    """
    _check_seconds(seconds)

    def expired(signum, frame):
        raise _Expired

    try:
        previous = signal.signal(signal.SIGPROF, expired)
    except (AttributeError, ValueError):  # no SIGPROF (Windows) or not the main thread
        yield
        return
    try:
        try:
            signal.setitimer(signal.ITIMER_PROF, float(seconds))
            yield
        finally:
            # a one-shot timer: once it has fired it cannot fire again, wherever _Expired was raised
            signal.setitimer(signal.ITIMER_PROF, 0.0)
            signal.signal(signal.SIGPROF, previous)
    except _Expired:
        raise BudgetExceeded(
            f"the step did not finish within its budget of {seconds:g} s of CPU time"
        ) from None


def _die_with_parent(parent_pid):
    """Ask Linux to SIGKILL this process when its parent dies (best effort elsewhere)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        pass
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def _child_main(write_fd, func, args, seconds, parent_pid):
    try:
        _die_with_parent(parent_pid)
        # the parent's handlers (e.g. the CLI's cleanup on SIGTERM) must not run in the child
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        if resource is not None:
            cpu = max(1, int(math.ceil(seconds)))
            try:
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
            except (ValueError, OSError):  # pragma: no cover - a lower hard limit is already set
                pass
        try:
            payload = ("ok", func(*args))
        except BaseException as exc:  # noqa: BLE001 - every failure is reported to the parent
            payload = ("error", exc, traceback.format_exc())
        try:
            data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as exc:  # noqa: BLE001
            data = pickle.dumps(
                (
                    "error",
                    RuntimeError(
                        f"the result of {getattr(func, '__name__', func)!r} cannot be pickled: {exc!r}"
                    ),
                    "",
                )
            )
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view) :]
        os.close(write_fd)
    finally:
        os._exit(0)


def _cpu_seconds(pid):
    """User + system CPU seconds used so far by process ``pid`` (Linux ``/proc``), else None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()  # the name may contain spaces
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_with_budget(func, args=(), seconds=5.0):
    """Run ``func(*args)`` in a forked child and return its result within ``seconds`` of CPU time.

    Parameters
    ----------
    func : callable
        Runs in the child (it is not pickled: the child is a fork); its return value must pickle.
    args : tuple
    seconds : float
        CPU seconds, > 0 and finite (the kernel's limit has a granularity of one second).

    Returns
    -------
    object
        ``func(*args)`` as computed in the child.

    Raises
    ------
    BudgetExceeded
        When the child used its CPU budget or passed the wall-clock safety net (it is killed).
    Exception
        Whatever ``func`` raised in the child (the remote traceback attached as a note).
    RuntimeError
        When the child died without a result (a signal, out of memory) or the result did not pickle.
    ValueError
        For a bad ``seconds`` or a non-callable ``func``.
    """
    _check_seconds(seconds)
    if not callable(func):
        raise ValueError(f"func must be callable, got {func!r}")
    args = tuple(args)
    name = getattr(func, "__name__", "the call")
    if not hasattr(os, "fork"):  # pragma: no cover - POSIX only in CI
        return func(*args)
    read_fd, write_fd = os.pipe()
    parent = os.getpid()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # py>=3.12 warns on fork with threads
        pid = os.fork()
    if pid == 0:  # child
        os.close(read_fd)
        _child_main(write_fd, func, args, seconds, parent)
    os.close(write_fd)
    chunks = []
    window = 3.0 * seconds + 2.0
    deadline = _monotonic() + window
    cpu_seen = 0.0
    finished = False
    try:
        poller = select.poll()
        poller.register(read_fd, select.POLLIN | select.POLLHUP)
        while True:
            left = deadline - _monotonic()
            if left <= 0:
                cpu = _cpu_seconds(pid)
                if cpu is not None and cpu > cpu_seen + 0.02:
                    # still computing, only starved by other processes: a loaded machine must not
                    # change the result (RLIMIT_CPU still bounds the child's CPU time). More than two
                    # clock ticks: a sleeping child's start-up may be accounted one.
                    cpu_seen = cpu
                    deadline = _monotonic() + window
                    continue
                break
            if not poller.poll(max(1, int(min(left, 0.25) * 1000))):  # wake up to check the child
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:  # EOF: the child closed the pipe (done, or died)
                finished = True
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if not finished:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # pragma: no cover - already gone
                pass
        _, status = os.waitpid(pid, 0)
    cpu_killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL)
    if not finished or (not chunks and cpu_killed):
        raise BudgetExceeded(f"{name} did not finish within its budget of {seconds:g} s of CPU time")
    if not chunks:
        raise RuntimeError(f"{name} died in the child process without a result (wait status {status})")
    payload = pickle.loads(b"".join(chunks))
    if payload[0] == "ok":
        return payload[1]
    exc = payload[1]
    if payload[2] and hasattr(exc, "add_note"):
        exc.add_note("traceback in the budget child process:\n" + payload[2])
    raise exc
