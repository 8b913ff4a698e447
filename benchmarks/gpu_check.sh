#!/usr/bin/env bash
# One-shot check of the GPU scorer, built to return figures whatever fails: a 10 s preflight
# of CuPy (a float64 cupy.matmul through cuBLAS and an elementwise kernel compiled by NVRTC),
# then benchmarks/bench_gpu.py (every figure printed and, when OUT names a folder, appended to
# $OUT/bench_gpu.jsonl as it is measured), then VLPSO rounds at 10,000 x 20,000 on the GPU
# (benchmarks/bench_vlpso.py --gpu: 48 particles, 12 rounds, each round of each path streamed
# likewise to $OUT/bench_vlpso.jsonl as it ends): with the particles' distance states at the
# default cache budget (sized by the device's memory), beside every subset in full on the
# GPU (cache_memory = 0), the same genes, fitness and history checked, and one core's
# estimate per round; then the GPU tests (non-fatal; skipped with a message without pytest).
# Timeouts: 10 + 10 + 200 + 240 + 100 s, at most 560 s in all.
# PYTHON names the interpreter (default python3); extra arguments go to the benchmark.
# --small: a small size; on a machine without CuPy the numpy stand-in tests/numpy_cupy
# is put first on PYTHONPATH, so that `import cupy` runs the same script end to end on a CPU.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1
python=${PYTHON:-python3}
bench_args=(--array-module cupy "$@")
vlpso_args=(--gpu --array-module cupy)
for arg in "$@"; do
    if [ "$arg" = --small ]; then
        vlpso_args+=(--small)
        if ! "$python" -c "import cupy" 2>/dev/null; then
            echo "gpu_check: no CuPy here: the numpy stand-in tests/numpy_cupy plays cupy"
            export PYTHONPATH="$PWD/tests/numpy_cupy:$PYTHONPATH"
        fi
    fi
done
echo "gpu_check: $(date -u +%Y-%m-%dT%H:%M:%SZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
status=0
timeout 10 nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv \
    || echo "gpu_check: nvidia-smi failed or is absent"
timeout 10 "$python" - <<'PY' || { echo "gpu_check: preflight failed"; status=1; }
import time
start = time.perf_counter()
import cupy
import numpy
print("cupy", cupy.__version__, "-", cupy.cuda.runtime.getDeviceCount(), "device(s)")
a = numpy.arange(64.0).reshape(8, 8)
product = cupy.asnumpy(cupy.matmul(cupy.asarray(a), cupy.asarray(a.T)))  # cuBLAS DGEMM
assert numpy.array_equal(product, a @ a.T), "float64 matmul differs from numpy"
x = cupy.arange(1000, dtype=cupy.float64)
y = cupy.asnumpy(cupy.sqrt(x * x + 1.0) - x)  # elementwise kernels, compiled by NVRTC
assert numpy.allclose(y, numpy.sqrt(numpy.arange(1000.0) ** 2 + 1) - numpy.arange(1000.0))
print(f"preflight: cuBLAS matmul and NVRTC elementwise kernels fine in "
      f"{time.perf_counter() - start:.1f} s")
PY
# the benchmark runs even after a failed preflight (a cold start may pass 10 s): its own
# first figure or error then says what works
timeout 200 "$python" benchmarks/bench_gpu.py "${bench_args[@]}" \
    || { echo "gpu_check: the benchmark stopped early (status $?)"; status=1; }
timeout 240 "$python" benchmarks/bench_vlpso.py "${vlpso_args[@]}" \
    || { echo "gpu_check: the VLPSO benchmark stopped early or its paths differ (status $?)"
         status=1; }
if "$python" -c "import pytest" 2>/dev/null; then
    timeout 100 "$python" -m pytest -q -p no:cacheprovider tests/test_fitness_gpu.py \
        -k "cupy or adversary" \
        || echo "gpu_check: GPU tests failed or timed out (status $?), figures above stand"
else
    echo "gpu_check: pytest is not installed: the GPU tests are skipped"
fi
exit "$status"
