"""Thread and memory control of the compiled kernels: parallel regions, BLAS threads, output memory.

Layer 0 (imports no other spectralkit module): :mod:`spectralkit._compiled` runs its kernels
inside these context managers; :mod:`spectralkit.features` and the learners size their work by
:func:`available_memory`, and transforms called without ``out=`` allocate by :func:`output_array`.

Threads
-------
Every parallel kernel runs inside ``parallel_region()``: with numba's "tbb" or "omp" threading
layer (``THREAD_SAFE_LAYERS``) calls from several Python threads run concurrently; with
"workqueue", which aborts the process when two threads launch a parallel region, or before
numba has chosen a layer, they are serialised by a process-wide re-entrant lock.
``blas_single_thread()`` records the caller's BLAS thread counts at the first of overlapping
calls and sets them back at every exit. ``numba_threads(n)`` sets the numba threads of the
calling thread for a block (used by the dask tasks).

Available memory
----------------
``available_memory()`` is Linux ``MemAvailable`` capped by a cgroup v2 limit and by what the
address-space limit ``RLIMIT_AS`` still allows (its soft limit minus the current virtual size);
None when unknown (then callers refuse nothing).

Output memory
-------------
``output_array(shape, dtype)`` allocates the output of a transform that was called without
``out=``. A fresh n x width output is slow to write the first time: every page is faulted in
and zeroed by the kernel before the transform's own store, and in a virtual machine the host
may back it lazily too. Measured on a 2-vCPU KVM guest (2 MiB transparent huge pages): writing
1 GB of fresh memory costs 150-800 ms (seconds at times), rewriting it 50 ms, and two threads
taking the faults take as long as one (the zeroing is bound by memory bandwidth, which one core
saturates here). So outputs of at least ``OUTPUT_POOL_MIN_BYTES`` (4 MiB; smaller ones come
from ``numpy.empty``, whose allocator already recycles them) live in anonymous private
mappings, rounded to 2 MiB and advised ``MADV_HUGEPAGE``, that are recycled: when the returned
array and all its views have been garbage collected, its mapping is advised ``MADV_FREE`` (the
kernel may reclaim the pages whenever it needs memory; until it does, rewriting them costs no
page fault) and kept for the next output of between half its size and its size. At most 4
free mappings and a quarter of the physical memory are kept, the oldest are unmapped first;
``release_output_memory()`` unmaps them all. The first transform of a process, or one after
the kernel reclaimed the pages, still pays for fresh memory: pass ``out=`` to control this.
Elsewhere than Linux/BSD (no ``MADV_FREE``) every output comes from ``numpy.empty``.
"""

import collections
import contextlib
import ctypes
import math
import mmap
import numbers
import os
import threading

try:  # POSIX only: the address-space limit (RLIMIT_AS) caps what a process may allocate
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None

import numba
import numpy as np

__all__ = [
    "OUTPUT_POOL_MIN_BYTES",
    "THREAD_SAFE_LAYERS",
    "available_memory",
    "blas_single_thread",
    "numba_threads",
    "output_array",
    "parallel_region",
    "release_output_memory",
]

#: Outputs of at least this many bytes are allocated by :func:`output_array` from recycled memory.
OUTPUT_POOL_MIN_BYTES = 4 << 20


# ----------------------------------------------------------------------------------------------
# BLAS thread control
# ----------------------------------------------------------------------------------------------

_controller = None
_controller_lock = threading.Lock()


def _blas_controller():
    """Cached ThreadpoolController, created after scipy's OpenBLAS (used by numba) is loaded."""
    global _controller
    if _controller is None:
        with _controller_lock:
            if _controller is None:
                import scipy.linalg.cython_blas  # noqa: F401  (loads the BLAS numba calls)
                from threadpoolctl import ThreadpoolController

                _controller = ThreadpoolController()
    return _controller


_blas_depth = 0
_blas_original = None


@contextlib.contextmanager
def blas_single_thread():
    """Context manager limiting every loaded BLAS to one thread (cached controller, ~15 µs).

    BLAS must run single-threaded inside the numba parallel region: each worker calls its own
    GEMM, and a multi-threaded BLAS there oversubscribes the cores (9-34x slower).

    Concurrent calls from several threads: the first entry records the caller's thread counts,
    and every exit sets those counts back (in its own thread: OpenBLAS may ignore a count set
    from another thread). Plain nested ``threadpoolctl`` limits would each restore what they saw
    on entry, i.e. 1 when they overlapped another call.
    """
    global _blas_depth, _blas_original
    controller = _blas_controller()
    with _controller_lock:
        if _blas_depth == 0:
            blas = controller.select(user_api="blas").lib_controllers
            _blas_original = {lib.prefix: lib.num_threads for lib in blas}
        _blas_depth += 1
        original = _blas_original
    controller.limit(limits=1, user_api="blas")
    try:
        yield
    finally:
        with _controller_lock:
            _blas_depth -= 1
        controller.limit(limits=original)


# ----------------------------------------------------------------------------------------------
# Thread safety of the parallel regions
# ----------------------------------------------------------------------------------------------

#: numba threading layers that support parallel regions launched from several threads at once
#: (numba's documentation; "workqueue" aborts the process when two threads launch one).
THREAD_SAFE_LAYERS = ("tbb", "omp")

_parallel_lock = threading.RLock()
_layer_safe = None  # unknown until numba has run a parallel region


def _layer_is_thread_safe():
    global _layer_safe
    if _layer_safe is None:
        try:
            layer = numba.threading_layer()
        except ValueError:  # no parallel region has run yet: the layer is not chosen
            return False
        _layer_safe = layer in THREAD_SAFE_LAYERS
    return _layer_safe


@contextlib.contextmanager
def parallel_region():
    """Serialise the compiled parallel calls unless numba's threading layer is thread-safe.

    With "tbb" or "omp" concurrent calls run concurrently; with "workqueue" (or before the layer
    is known) they take one process-wide re-entrant lock, one call at a time.
    """
    if _layer_is_thread_safe():
        yield
    else:
        with _parallel_lock:
            yield


@contextlib.contextmanager
def numba_threads(n):
    """Run the block with ``n`` numba threads in the calling thread (None: unchanged).

    ``numba.set_num_threads`` is per calling thread, so this does not affect other threads;
    ``n`` is clipped to ``numba.config.NUMBA_NUM_THREADS``.
    """
    if n is None:
        yield
        return
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
        raise ValueError(f"numba_threads must be None or an integer >= 1, got {n!r}")
    previous = numba.get_num_threads()
    numba.set_num_threads(min(int(n), numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        numba.set_num_threads(previous)


def _address_space_left():
    """Bytes the address-space limit ``RLIMIT_AS`` still allows (its soft limit minus the current
    virtual size), or None when there is no limit or it cannot be read."""
    if resource is None:
        return None
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    return max(soft - int(line.split()[1]) * 1024, 0)
    except (OSError, ValueError, IndexError):
        pass
    return soft


def available_memory():
    """Bytes of memory available to this process: Linux ``MemAvailable``, capped by a cgroup v2
    limit and by what the address-space limit ``RLIMIT_AS`` still allows.

    None when unknown (then callers do not refuse anything).
    """
    avail = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            return None
    try:
        with open("/sys/fs/cgroup/memory.max") as f:
            limit = f.read().strip()
        with open("/sys/fs/cgroup/memory.current") as f:
            current = int(f.read().strip())
        if limit != "max":
            avail = min(avail, max(int(limit) - current, 0))
    except (OSError, ValueError):
        pass
    left = _address_space_left()
    return avail if left is None else min(avail, left)


# ----------------------------------------------------------------------------------------------
# Output memory
# ----------------------------------------------------------------------------------------------

_HUGE_PAGE = 2 << 20
_MAP_FLAGS = getattr(mmap, "MAP_PRIVATE", 0) | getattr(mmap, "MAP_ANONYMOUS", 0)
# Linux (and the BSDs) only: elsewhere output_array falls back to numpy.empty.
_POOL_AVAILABLE = hasattr(mmap, "MADV_FREE") and hasattr(mmap, "MAP_ANONYMOUS")
_ADVICE = {
    "free": getattr(mmap, "MADV_FREE", None),
    "dontneed": getattr(mmap, "MADV_DONTNEED", None),
    None: None,
}


class _Block:
    """One anonymous private mapping, 2 MiB-rounded, advised for transparent huge pages."""

    __slots__ = ("address", "capacity", "mm", "view")

    def __init__(self, capacity):
        self.mm = mmap.mmap(-1, capacity, flags=_MAP_FLAGS)
        if hasattr(mmap, "MADV_HUGEPAGE"):
            try:
                self.mm.madvise(mmap.MADV_HUGEPAGE)
            except OSError:  # THP disabled or unsupported: 4 KiB pages then
                pass
        # The ctypes view is a buffer export: it keeps the mapping from being closed or resized
        # while the block exists.
        self.view = ctypes.c_char.from_buffer(self.mm)
        self.address = ctypes.addressof(self.view)
        self.capacity = capacity

    def close(self):
        self.view = None
        self.mm.close()


class _Lease:
    """Owner of an array in a pooled block: when the last array using it dies, the block returns."""

    def __init__(self, pool, block, shape, dtype):
        self._pool = pool
        self._block = block
        self.__array_interface__ = {
            "shape": shape,
            "typestr": dtype.str,
            "data": (block.address, False),
            "version": 3,
        }

    def __del__(self):
        # at interpreter shutdown module globals may already be gone: the process unmaps it then
        with contextlib.suppress(AttributeError, TypeError, ValueError, OSError):
            self._pool.give_back(self._block)


class _OutputPool:
    """Recycles the memory of large transform outputs instead of taking fresh pages each call.

    See the module docstring ("Output memory"). Invariant: a block is in ``_free`` only when no
    array uses it (its lease has been collected), so closing or re-leasing it is safe.
    """

    def __init__(self, min_bytes, max_free_bytes, max_free_blocks, advice="free"):
        if advice not in _ADVICE:
            raise ValueError(f"advice must be one of {sorted(_ADVICE, key=str)}, got {advice!r}")
        self.min_bytes = min_bytes
        self.advice = advice
        self.max_free_bytes = max_free_bytes
        self.max_free_blocks = max_free_blocks
        self._free = collections.deque()  # append / remove are atomic: give_back takes no lock
        self._lock = threading.Lock()

    def empty(self, shape, dtype):
        """An uninitialised C-contiguous array (pooled memory when at least ``min_bytes``)."""
        dtype = np.dtype(dtype)
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes < self.min_bytes or not _POOL_AVAILABLE:
            return np.empty(shape, dtype=dtype)
        block = self._take(nbytes)
        return np.asarray(_Lease(self, block, tuple(int(n) for n in shape), dtype))

    def _take(self, nbytes):
        with self._lock:
            # smallest free block that fits without wasting more than half of it
            best = None
            for block in list(self._free):
                fits = nbytes <= block.capacity <= 2 * nbytes
                if fits and (best is None or block.capacity < best.capacity):
                    best = block
            if best is not None:
                self._free.remove(best)
                return best
        return _Block(-(-nbytes // _HUGE_PAGE) * _HUGE_PAGE)

    def give_back(self, block):
        # MADV_FREE (the default): the kernel may reclaim the pages under memory pressure (a later
        # write then faults in a zeroed page); until then rewriting them costs no page fault.
        # "dontneed" drops the pages at once, None keeps them (both for bench_featurize's study).
        flag = _ADVICE[self.advice]
        if flag is not None:
            try:
                block.mm.madvise(flag)
            except OSError:
                block.close()
                return
        self._free.append(block)
        if self._lock.acquire(blocking=False):  # never wait here: this runs inside __del__
            try:
                self._trim(self.max_free_bytes, self.max_free_blocks)
            finally:
                self._lock.release()

    def _trim(self, max_bytes, max_blocks):
        while self._free and (
            len(self._free) > max_blocks or sum(b.capacity for b in self._free) > max_bytes
        ):
            self._free.popleft().close()  # the oldest first

    def clear(self):
        """Unmap every free block (blocks in use return, and stay, when their arrays die)."""
        with self._lock:
            self._trim(0, 0)

    def free_bytes(self):
        """Bytes held by free blocks."""
        return sum(b.capacity for b in list(self._free))


def _physical_memory():
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


_output_pool = _OutputPool(
    min_bytes=OUTPUT_POOL_MIN_BYTES, max_free_bytes=max(_physical_memory() // 4, 256 << 20), max_free_blocks=4
)


def output_array(shape, dtype):
    """Uninitialised C-contiguous output of ``shape`` and ``dtype`` for a transform to fill.

    Outputs of at least ``OUTPUT_POOL_MIN_BYTES`` come from a pool of recycled memory (module
    docstring, "Output memory"); smaller ones from ``numpy.empty``. The array owns its memory
    as far as the caller can tell: it is returned to the pool only once it and all its views
    have been garbage collected.
    """
    return _output_pool.empty(shape, dtype)


def release_output_memory():
    """Unmap the recycled output memory that no array uses any more; returns the bytes freed."""
    freed = _output_pool.free_bytes()
    _output_pool.clear()
    return freed
