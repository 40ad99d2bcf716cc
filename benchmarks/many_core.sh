#!/usr/bin/env bash
# The many-core and GPU featurization measurements of docs/performance.md, in one run:
#   bash benchmarks/many_core.sh OUTDIR [N]
# on a machine with many cores (and, for the GPU rows, torch with CUDA). Writes into OUTDIR:
# featurize-gpu-device.{json,md} (the Array API path on the GPU beside hand-written torch) and
# gpu-tests.txt (the GPU tests), featurize-threads.{json,md} (the transform at 2, 4, 8 and all
# cores beside GEMM + store, plain and streaming), compiled-tests.txt (the compiled
# kernels' tests on this CPU) and, with PANELS=1, panels.txt (GEMM panel sizes of the compiled
# kernel beside GEMM + store, all cores). N: rows (default 200000, as in the issue).
# PEERS=1 also times RBFSampler at all cores (about 2 more minutes at N = 200000); the whole run
# takes about 7 minutes on 16 cores at N = 200000 without it. GPU_BENCH=0 skips the GPU timings
# (the GPU tests still run). ALLOC=1 also writes allocation.txt: plain transform(X), float64 d = 256,
# with the output pool's give-back advice (MADV_FREE, MADV_DONTNEED, none) beside out= and fresh
# memory, at 8 and all cores.
set -uo pipefail
out=${1:?usage: many_core.sh OUTDIR [N]}
n=${2:-200000}
mkdir -p "$out"
cores=$(nproc)
threads="2 4 8 $cores"
[ "$cores" -le 8 ] && threads=$(seq -s ' ' 1 "$cores")
export PYTHONUNBUFFERED=1
py=${PYTHON:-python3}
"$py" - <<'PY'
import numba, numpy, scipy, sklearn, threadpoolctl
print("numpy", numpy.__version__, "numba", numba.__version__, "scipy", scipy.__version__, "sklearn", sklearn.__version__)
print(threadpoolctl.threadpool_info())
PY
lscpu | grep -E "Model name|^CPU\(s\)|Thread|Socket|NUMA node\(s\)|L1d|L2|L3" || true
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.max.sm --format=csv 2>/dev/null
if "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
    [ "${GPU_BENCH:-1}" = 1 ] && "$py" benchmarks/bench_featurize.py --device torch:cuda --n "$n" --dims 16 54 256 --repeats 10 \
        --min-time 0 --out "$out/featurize-gpu"
    "$py" -m pytest -q -n 0 -p no:cacheprovider -rs -k "gpu or torch" tests/test_array_api.py 2>&1 \
        | tee "$out/gpu-tests.txt"
fi
peers=0
[ "${PEERS:-0}" = 1 ] && peers=$cores
"$py" benchmarks/bench_featurize.py --n "$n" --dims 16 54 256 --threads $threads --peer-threads $peers \
    --repeats 2 --min-time 0 --out "$out/featurize-threads"
if [ "${ALLOC:-0}" = 1 ]; then
    "$py" benchmarks/bench_featurize.py --allocation --n "$n" --dims 256 --dtypes float64 --threads 8 "$cores" --repeats 4 \
        2>&1 | tee "$out/allocation.txt"
fi
"$py" -m pytest -q -n 4 -p no:cacheprovider tests/test_compiled.py 2>&1 | tee "$out/compiled-tests.txt"
if [ "${PANELS:-0}" = 1 ]; then
    panels="131072 262144 1048576 1099511627776"
    {
        "$py" benchmarks/bench_featurize.py --n "$n" --dims 256 --threads 4 "$cores" --repeats 4 --panels $panels
        "$py" benchmarks/bench_featurize.py --n "$n" --dims 16 54 --threads "$cores" --repeats 4 --panels $panels
    } 2>&1 | tee "$out/panels.txt"
fi
