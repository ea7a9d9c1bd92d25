"""CuPy versions of the GPU benchmark (issue 5): the loops of bench/gpu/cuda/bench.cu written as a
CuPy user would write them, printing the same lines with impl=cupy.

    python3 bench/gpu/cupy_bench.py d2d|saxpy|dot|jacobi|spmv|launch|first [sizes...]

The arguments and checksums are those of bench.cu: saxpy [n] [reps], dot [n] [reps],
jacobi [n] [iters] [reps], spmv [nx] [reps], launch [launches] [rounds], d2d [bytes] [reps].
Times are CUDA event times, best of `reps` after a warm-up (launch: the host clock).
"""

import sys
import time

import cupy as cp
import cupyx.scipy.sparse as sparse
import numpy as np


def report(name, ms, nbytes, check, extra=""):
    gbps = f"{nbytes / (ms * 1e6):.1f}" if nbytes and ms > 0 else "-"
    line = f"name={name} impl=cupy time_ms={ms:.4f} gbps={gbps} check={check}"
    print(line + (" " + extra if extra else ""), flush=True)


def timed(fn, reps, warmup=1):
    """Best time in ms of `reps` calls of fn (after `warmup` calls), by CUDA events."""
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    best = float("inf")
    for r in range(-warmup, reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        if r >= 0:
            best = min(best, cp.cuda.get_elapsed_time(start, stop))
    return best


def bench_d2d(nbytes=1 << 30, reps=10):
    a = cp.full(nbytes, 1, dtype=cp.uint8)
    b = cp.zeros(nbytes, dtype=cp.uint8)
    ms = timed(lambda: b.data.copy_from_device_async(a.data, nbytes), reps, warmup=2)
    report("d2d", ms, 2 * nbytes, "-", f"bytes={nbytes}")


# y = a*x + y in place, one fused elementwise kernel (no temporary).
saxpy_kernel = cp.ElementwiseKernel("float32 a, float32 x", "float32 y", "y = a * x + y", "saxpy")


def run_saxpy(n=1 << 28, reps=10, first=False):
    x = cp.full(n, 1.0, dtype=cp.float32)
    y = cp.full(n, 2.0, dtype=cp.float32)
    a = np.float32(2.0)
    ms = timed(lambda: saxpy_kernel(a, x, y), reps)
    s = float(y.sum(dtype=cp.float64))  # every element is 2 + 2 * (reps + 1): exact
    if first:
        print(f"name=first impl=cupy y0={float(y[0]):.1f} check={s:.1f}", flush=True)
    else:
        report("saxpy", ms, 3 * 4 * n, f"{s:.1f}")


def bench_dot(n=1 << 27, reps=10):
    i = cp.arange(n, dtype=cp.int64)
    x = (i % 10).astype(cp.float64)
    y = 0.5 * (i % 4).astype(cp.float64)
    del i
    result = [0.0]

    def step():  # the scalar comes back to the host, as in the acc and CUDA versions
        result[0] = float(cp.dot(x, y))

    ms = timed(step, reps)
    report("dot", ms, 2 * 8 * n, f"{result[0]:.1f}")


def bench_jacobi(n=4096, iter_max=1000, reps=3):
    m = n
    tol = 1e-6
    state = {}

    def solve(limit):
        A = cp.zeros((n, m))
        A[0, :] = 1.0
        Anew = A.copy()
        err, it = 1.0, 0
        while err > tol and it < limit:
            Anew[1:-1, 1:-1] = 0.25 * (A[1:-1, 2:] + A[1:-1, :-2] + A[:-2, 1:-1] + A[2:, 1:-1])
            err = float(cp.abs(Anew[1:-1, 1:-1] - A[1:-1, 1:-1]).max())
            A[1:-1, 1:-1] = Anew[1:-1, 1:-1]
            it += 1
        state.update(A=A, err=err, it=it)

    # A warm-up solve of 10 iterations, then full solves from the initial grid. The set-up (two
    # allocations and a row) is inside the timed call; it is tiny next to 1000 iterations.
    solve(min(iter_max, 10))
    ms = timed(lambda: solve(iter_max), reps, warmup=0)
    # sum(A) in index order (a running sum), as acc's sum(A) and the C version take it.
    total = float(np.cumsum(cp.asnumpy(state["A"]).ravel())[-1])
    it = state["it"]
    check = f"{it},{state['err']:.6e},{total:.6f}"
    report("jacobi", ms, 4 * 8 * (n - 2) * (m - 2) * it, check)


def stencil_matrix(nx):
    """The 27-point stencil matrix of examples/spmv.acc on an nx^3 grid, in CSR."""
    ny = nz = nx
    rows = nx * ny * nz
    r = cp.arange(rows, dtype=cp.int64)
    ix, iy, iz = r % nx, r // nx % ny, r // (nx * ny)
    row_parts, col_parts, val_parts = [], [], []
    for dz in (-1, 0, 1):
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                jx, jy, jz = ix + dx, iy + dy, iz + dz
                ok = (jx >= 0) & (jx < nx) & (jy >= 0) & (jy < ny) & (jz >= 0) & (jz < nz)
                row_parts.append(r[ok])
                col_parts.append(((jz * ny + jy) * nx + jx)[ok])
                v = 26.0 if dx == 0 and dy == 0 and dz == 0 else -1.0
                val_parts.append(cp.full(int(ok.sum()), v))
    rows_all = cp.concatenate(row_parts).astype(cp.int32)
    cols_all = cp.concatenate(col_parts).astype(cp.int32)
    vals_all = cp.concatenate(val_parts)
    del row_parts, col_parts, val_parts
    A = sparse.coo_matrix((vals_all, (rows_all, cols_all)), shape=(rows, rows)).tocsr()
    A.sort_indices()
    return A


def bench_spmv(nx=100, reps=10):
    A = stencil_matrix(nx)
    rows, nnz = A.shape[0], A.nnz
    x = 1.0 + (cp.arange(rows) % 7).astype(cp.float64)
    out = {}

    def product():
        out["y"] = A @ x

    ms = timed(product, reps)
    s = float(np.cumsum(cp.asnumpy(out["y"]))[-1])
    # The same nominal traffic as the other versions (CuPy's row offsets are i32, theirs i64).
    nbytes = nnz * (8 + 4) + (rows + 1) * 8 + 2 * rows * 8
    report("spmv_cusparse", ms, nbytes, f"{s:.1f}", f"rows={rows} nnz={nnz}")


# The shape of `acc parallel loop present(a)` over one element: one block of 128 threads.
inc_kernel = cp.RawKernel(
    r"""
extern "C" __global__ void inc(double* a, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0;
}
""",
    "inc",
)


def bench_launch(launches=10000, rounds=3):
    a = cp.zeros(1)
    one = np.int64(1)
    stream = cp.cuda.get_current_stream()
    for _ in range(100):
        inc_kernel((1,), (128,), (a, one))
        stream.synchronize()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(launches):
            inc_kernel((1,), (128,), (a, one))
            stream.synchronize()
        best = min(best, (time.perf_counter() - t0) * 1e3)
    extra = f"launches={launches} us_per_launch={best * 1e3 / launches:.3f}"
    report("launch", best, 0, f"{float(a[0]):.1f}", extra)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    which, args = argv[1], [int(a, 0) for a in argv[2:]]
    benches = {
        "d2d": bench_d2d,
        "saxpy": run_saxpy,
        "dot": bench_dot,
        "jacobi": bench_jacobi,
        "spmv": bench_spmv,
        "launch": bench_launch,
        "first": lambda n=1 << 20: run_saxpy(n, 0, first=True),
    }
    if which not in benches:
        print(f"unknown benchmark {which}", file=sys.stderr)
        return 2
    benches[which](*args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
