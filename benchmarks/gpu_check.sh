#!/usr/bin/env bash
# One-shot check of the GPU scorer on a machine with CuPy and a CUDA device: the GPU tests,
# then benchmarks/bench_gpu.py at 10,000 x 20,000 (about 5 minutes on an H100; fits in 8).
# Extra arguments go to the benchmark (e.g. --small to try the script on a CPU).
# PYTHON names the interpreter (default: python).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
python=${PYTHON:-python}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv || true
"$python" -c "import cupy; print('cupy', cupy.__version__, '-', cupy.cuda.runtime.getDeviceCount(), 'device(s)')"
timeout 150 "$python" -m pytest -q -p no:cacheprovider tests/test_fitness_gpu.py \
    -k "cupy or tie_prone or shards"
timeout 420 "$python" benchmarks/bench_gpu.py "$@"
