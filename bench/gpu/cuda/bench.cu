// CUDA C baselines of the GPU benchmark (issue 5): the same loops as bench/gpu/acc/*.acc and
// bench/gpu/cupy_bench.py, written as a CUDA programmer would write them (coalesced, 16-byte
// accesses where the layout allows, warp-shuffle reductions, atomic-free deterministic sums).
//
//   nvcc -O3 -arch=sm_90 -o bench bench/gpu/cuda/bench.cu
//   ./bench d2d [bytes]            device-to-device cudaMemcpy bandwidth (read + written)
//   ./bench saxpy [n] [reps]       y = a*x + y, f32
//   ./bench dot [n] [reps]         x.y, f64, two-pass block reduction
//   ./bench jacobi [n] [iters] [reps]   the guide's Jacobi, n x n, data on the device
//   ./bench jacobi_multi [n] [iters] [reps]   the same over every visible GPU (rows in blocks,
//                                  halo rows by cudaMemcpyPeerAsync; impl=cuda-<k>gpu, host clock)
//   ./bench spmv [nx] [reps]       CSR 27-point stencil on nx^3, three schedules
//   ./bench launch [launches] [rounds]  tiny kernel + cudaStreamSynchronize, per launch
//   ./bench first [n]              a small saxpy from process start (cold time to first result)
//
// Each result is one line: name=<bench> impl=nvcc time_ms=<best> gbps=<GB/s or -> check=<value>
// (plus extra key=value fields). Times are cudaEvent times of the best of `reps` runs after a
// warm-up; the launch benchmark uses the host clock, since it measures host-side latency.
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                     \
                    cudaGetErrorString(e_));                                                  \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

static int g_sms = 132;

// --- timing and reporting -----------------------------------------------------------------------

struct EventTimer {
    cudaEvent_t a, b;
    EventTimer() {
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
    }
    ~EventTimer() {
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
    void start() { CK(cudaEventRecord(a)); }
    float stop() {
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        return ms;
    }
};

// bytes <= 0: no bandwidth for this result ("-").
static void report(const char* name, double ms, double bytes, const char* check,
                   const char* extra = "") {
    char gbps[32] = "-";
    if (bytes > 0 && ms > 0) snprintf(gbps, sizeof gbps, "%.1f", bytes / (ms * 1e6));
    printf("name=%s impl=nvcc time_ms=%.4f gbps=%s check=%s%s%s\n", name, ms, gbps, check,
           extra[0] ? " " : "", extra);
    fflush(stdout);
}

static int64_t arg_i64(int argc, char** argv, int i, int64_t dflt) {
    return argc > i ? strtoll(argv[i], nullptr, 0) : dflt;
}

static int grid_for(int64_t work, int block, int per_sm_blocks) {
    int64_t want = (work + block - 1) / block;
    int64_t cap = (int64_t)g_sms * per_sm_blocks;
    if (want > cap) want = cap;
    return want < 1 ? 1 : (int)want;
}

// --- reductions -----------------------------------------------------------------------------------

__device__ __forceinline__ double warp_sum(double v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ double warp_max(double v) {
    for (int o = 16; o > 0; o >>= 1) v = fmax(v, __shfl_down_sync(0xffffffffu, v, o));
    return v;
}

// Sum over a block of up to 1024 threads (any shape); the result is valid in thread 0.
// The order of combination is fixed, so the result is the same on every run.
__device__ double block_sum(double v) {
    __shared__ double warp_parts[32];
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int nthreads = blockDim.x * blockDim.y * blockDim.z;
    int lane = t & 31, warp = t >> 5, nwarps = (nthreads + 31) >> 5;
    v = warp_sum(v);
    if (lane == 0) warp_parts[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? warp_parts[lane] : 0.0;
        v = warp_sum(v);
    }
    return v;
}

__device__ double block_max(double v) {
    __shared__ double warp_parts[32];
    int t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    int nthreads = blockDim.x * blockDim.y * blockDim.z;
    int lane = t & 31, warp = t >> 5, nwarps = (nthreads + 31) >> 5;
    v = warp_max(v);
    if (lane == 0) warp_parts[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < nwarps ? warp_parts[lane] : 0.0;
        v = warp_max(v);
    }
    return v;
}

// Second pass of a two-pass sum: one block adds the first pass's partials in a fixed order.
__global__ void sum_partials(int n, const double* __restrict__ partials, double* __restrict__ out) {
    double s = 0.0;
    for (int i = threadIdx.x; i < n; i += blockDim.x) s += partials[i];
    s = block_sum(s);
    if (threadIdx.x == 0) *out = s;
}

// Sum of an f32 array in f64 (the checksum of saxpy), first pass.
__global__ void sum_f32_partials(int64_t n, const float* __restrict__ x, double* __restrict__ partials) {
    double s = 0.0;
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        s += x[i];
    s = block_sum(s);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

static double device_sum_f32(int64_t n, const float* x) {
    const int block = 256, grid = grid_for(n, block, 8);
    double *partials, *out, result;
    CK(cudaMalloc(&partials, grid * sizeof(double)));
    CK(cudaMalloc(&out, sizeof(double)));
    sum_f32_partials<<<grid, block>>>(n, x, partials);
    sum_partials<<<1, 1024>>>(grid, partials, out);
    CK(cudaMemcpy(&result, out, sizeof(double), cudaMemcpyDeviceToHost));
    CK(cudaFree(partials));
    CK(cudaFree(out));
    return result;
}

// --- device-to-device copy ----------------------------------------------------------------------

static void bench_d2d(int64_t bytes, int reps) {
    void *a, *b;
    CK(cudaMalloc(&a, bytes));
    CK(cudaMalloc(&b, bytes));
    CK(cudaMemset(a, 1, bytes));
    CK(cudaMemset(b, 0, bytes));
    EventTimer t;
    float best = 1e30f;
    for (int r = -2; r < reps; r++) {
        t.start();
        CK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice));
        float ms = t.stop();
        if (r >= 0 && ms < best) best = ms;
    }
    char extra[64];
    snprintf(extra, sizeof extra, "bytes=%lld", (long long)bytes);
    report("d2d", best, 2.0 * bytes, "-", extra);
    CK(cudaFree(a));
    CK(cudaFree(b));
}

// --- saxpy ----------------------------------------------------------------------------------------

__global__ void fill_f32(int64_t n, float v, float* __restrict__ x) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x)
        x[i] = v;
}

// Grid-stride over float4s, the last n % 4 elements by the first threads.
__global__ void saxpy_kernel(int64_t n, float a, const float* __restrict__ x, float* __restrict__ y) {
    const int64_t n4 = n / 4;
    const float4* x4 = reinterpret_cast<const float4*>(x);
    float4* y4 = reinterpret_cast<float4*>(y);
    const int64_t start = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = start; i < n4; i += stride) {
        float4 xv = x4[i], yv = y4[i];
        yv.x = a * xv.x + yv.x;
        yv.y = a * xv.y + yv.y;
        yv.z = a * xv.z + yv.z;
        yv.w = a * xv.w + yv.w;
        y4[i] = yv;
    }
    int64_t tail = n4 * 4 + start;
    if (tail < n) y[tail] = a * x[tail] + y[tail];
}

static void run_saxpy(int64_t n, int reps, bool report_it) {
    float *x, *y;
    CK(cudaMalloc(&x, n * sizeof(float)));
    CK(cudaMalloc(&y, n * sizeof(float)));
    fill_f32<<<grid_for(n, 256, 8), 256>>>(n, 1.0f, x);
    fill_f32<<<grid_for(n, 256, 8), 256>>>(n, 2.0f, y);
    const int block = 256, grid = grid_for((n + 3) / 4, block, 32);
    EventTimer t;
    float best = 1e30f;
    for (int r = -1; r < reps; r++) {  // one warm-up, then reps timed runs
        t.start();
        saxpy_kernel<<<grid, block>>>(n, 2.0f, x, y);
        float ms = t.stop();
        CK(cudaGetLastError());
        if (r >= 0 && ms < best) best = ms;
    }
    // Every element is 2 + 2 * (reps + 1): exact in f32 and in the f64 sum.
    double s = device_sum_f32(n, y);
    char check[64];
    snprintf(check, sizeof check, "%.1f", s);
    if (report_it) {
        report("saxpy", best, 3.0 * sizeof(float) * n, check);
    } else {
        float y0;
        CK(cudaMemcpy(&y0, y, sizeof y0, cudaMemcpyDeviceToHost));
        printf("name=first impl=nvcc y0=%.1f check=%s\n", y0, check);
    }
    CK(cudaFree(x));
    CK(cudaFree(y));
}

// --- dot ------------------------------------------------------------------------------------------

__global__ void dot_init(int64_t n, double* __restrict__ x, double* __restrict__ y) {
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
         i += (int64_t)gridDim.x * blockDim.x) {
        x[i] = (double)(i % 10);
        y[i] = 0.5 * (double)(i % 4);
    }
}

// First pass: grid-stride over double2s (16-byte loads), two accumulators per thread, then a
// warp-shuffle + shared-memory block sum; one partial per block, no atomics.
__global__ void dot_partials(int64_t n, const double* __restrict__ x, const double* __restrict__ y,
                             double* __restrict__ partials) {
    const int64_t n2 = n / 2;
    const double2* x2 = reinterpret_cast<const double2*>(x);
    const double2* y2 = reinterpret_cast<const double2*>(y);
    const int64_t start = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    double s0 = 0.0, s1 = 0.0;
    for (int64_t i = start; i < n2; i += stride) {
        double2 a = x2[i], b = y2[i];
        s0 += a.x * b.x;
        s1 += a.y * b.y;
    }
    if (start == 0 && (n & 1)) s0 += x[n - 1] * y[n - 1];
    double s = block_sum(s0 + s1);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

static void bench_dot(int64_t n, int reps) {
    double *x, *y, *partials, *out, *host_result;
    CK(cudaMalloc(&x, n * sizeof(double)));
    CK(cudaMalloc(&y, n * sizeof(double)));
    dot_init<<<grid_for(n, 256, 8), 256>>>(n, x, y);
    const int block = 256, grid = grid_for((n + 1) / 2, block, 8);
    CK(cudaMalloc(&partials, grid * sizeof(double)));
    CK(cudaMalloc(&out, sizeof(double)));
    CK(cudaMallocHost(&host_result, sizeof(double)));
    EventTimer t;
    float best = 1e30f;
    double result = 0.0;
    for (int r = -1; r < reps; r++) {
        // Timed up to the result in host memory, as the acc and CuPy versions return a scalar.
        t.start();
        dot_partials<<<grid, block>>>(n, x, y, partials);
        sum_partials<<<1, 1024>>>(grid, partials, out);
        CK(cudaMemcpyAsync(host_result, out, sizeof(double), cudaMemcpyDeviceToHost));
        float ms = t.stop();
        CK(cudaGetLastError());
        result = *host_result;
        if (r >= 0 && ms < best) best = ms;
    }
    char check[64];
    snprintf(check, sizeof check, "%.1f", result);
    report("dot", best, 2.0 * sizeof(double) * n, check);
    CK(cudaFree(x));
    CK(cudaFree(y));
    CK(cudaFree(partials));
    CK(cudaFree(out));
    CK(cudaFreeHost(host_result));
}

// --- Jacobi ---------------------------------------------------------------------------------------

// Top row 1.0, everything else 0.0 (both grids, as examples/jacobi.acc sets them up).
__global__ void jacobi_init(int n, int m, double* __restrict__ A, double* __restrict__ Anew) {
    int64_t total = (int64_t)n * m;
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < total;
         k += (int64_t)gridDim.x * blockDim.x) {
        double v = k < m ? 1.0 : 0.0;
        A[k] = v;
        Anew[k] = v;
    }
}

// Anew = mean of A's four neighbours on the interior; the block's largest change goes to *err
// with one atomicMax on the bit pattern (non-negative doubles order like their bits), which is
// exact and order-independent.
__global__ void jacobi_stencil(int n, int m, const double* __restrict__ A, double* __restrict__ Anew,
                               unsigned long long* __restrict__ err) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    double e = 0.0;
    if (i < m - 1 && j < n - 1) {
        size_t k = (size_t)j * m + i;
        double v = 0.25 * (A[k + 1] + A[k - 1] + A[k - m] + A[k + m]);
        Anew[k] = v;
        e = fabs(v - A[k]);
    }
    e = block_max(e);
    if (threadIdx.x == 0 && threadIdx.y == 0 && e > 0.0)
        atomicMax(err, (unsigned long long)__double_as_longlong(e));
}

__global__ void jacobi_copy(int n, int m, const double* __restrict__ Anew, double* __restrict__ A) {
    int i = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int j = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (i < m - 1 && j < n - 1) {
        size_t k = (size_t)j * m + i;
        A[k] = Anew[k];
    }
}

static void bench_jacobi(int n, int iter_max, int reps) {
    const int m = n;
    const double tol = 1e-6;
    double *A, *Anew;
    unsigned long long *d_err, *h_err;
    CK(cudaMalloc(&A, (size_t)n * m * sizeof(double)));
    CK(cudaMalloc(&Anew, (size_t)n * m * sizeof(double)));
    CK(cudaMalloc(&d_err, sizeof *d_err));
    CK(cudaMallocHost(&h_err, sizeof *h_err));
    const dim3 block(64, 4);
    const dim3 grid((m - 2 + block.x - 1) / block.x, (n - 2 + block.y - 1) / block.y);
    EventTimer t;
    float best = 1e30f;
    int iter = 0;
    double err = 0.0;
    for (int r = -1; r < reps; r++) {
        jacobi_init<<<grid_for((int64_t)n * m, 256, 8), 256>>>(n, m, A, Anew);
        CK(cudaDeviceSynchronize());
        err = 1.0;
        iter = 0;
        const int limit = r < 0 ? (iter_max < 10 ? iter_max : 10) : iter_max;  // short warm-up
        t.start();
        // As in the guide: the error crosses to the host every iteration for the loop test.
        while (err > tol && iter < limit) {
            CK(cudaMemsetAsync(d_err, 0, sizeof *d_err));
            jacobi_stencil<<<grid, block>>>(n, m, A, Anew, d_err);
            jacobi_copy<<<grid, block>>>(n, m, Anew, A);
            CK(cudaMemcpyAsync(h_err, d_err, sizeof *h_err, cudaMemcpyDeviceToHost));
            CK(cudaStreamSynchronize(0));
            unsigned long long bits = *h_err;
            memcpy(&err, &bits, sizeof err);
            iter++;
        }
        float ms = t.stop();
        CK(cudaGetLastError());
        if (r >= 0 && ms < best) best = ms;
    }
    // Checksum: sum(A) in index order on the host, as acc's sum(A) takes it.
    std::vector<double> h((size_t)n * m);
    CK(cudaMemcpy(h.data(), A, h.size() * sizeof(double), cudaMemcpyDeviceToHost));
    double s = 0.0;
    for (double v : h) s += v;
    char check[128];
    snprintf(check, sizeof check, "%d,%.6e,%.6f", iter, err, s);
    // Per iteration: the stencil reads A and writes Anew, the copy reads Anew and writes A.
    double bytes = 4.0 * sizeof(double) * (double)(n - 2) * (m - 2) * iter;
    report("jacobi", best, bytes, check);
    CK(cudaFree(A));
    CK(cudaFree(Anew));
    CK(cudaFree(d_err));
    CK(cudaFreeHost(h_err));
}

// --- Jacobi over every visible GPU ----------------------------------------------------------------

// bench/gpu/acc/jacobi_multi.acc by hand, in one host thread: the interior rows 1..n-1 cut into
// contiguous blocks as acc cuts a split loop (acc_abi::split::blocks: the first (n-2) % k blocks
// one row longer), each GPU holding its rows of A and Anew plus one halo row above and one below
// (the grid's boundary row at the first and last GPU). Local row r of GPU d is global row
// first[d] - 1 + r, so jacobi_stencil and jacobi_copy run unchanged on a (rows[d] + 2) x m grid.

// Top row (global row 0) 1.0, everything else 0.0, on a block whose local row 0 is global row
// `row0`.
__global__ void jacobi_init_rows(int nloc, int m, int row0, double* __restrict__ A,
                                 double* __restrict__ Anew) {
    int64_t total = (int64_t)nloc * m;
    for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < total;
         k += (int64_t)gridDim.x * blockDim.x) {
        double v = (row0 + k / m == 0) ? 1.0 : 0.0;
        A[k] = v;
        Anew[k] = v;
    }
}

struct JacobiGpu {
    int first = 0, rows = 0;  // global rows first .. first + rows - 1
    double *A = nullptr, *Anew = nullptr;
    unsigned long long* d_err = nullptr;
    cudaStream_t s = nullptr, cs = nullptr;  // cs: the halo pushes when they overlap (JACOBI_OVERLAP)
    cudaEvent_t copied = nullptr;
    // err_ready: the stencil has read this GPU's halo rows and its error is in host memory.
    // sent: this GPU's boundary rows (after the copy kernel) are in its neighbours' halos.
    cudaEvent_t err_ready = nullptr, sent = nullptr;
};

// Local rows a..b of one GPU's block (1 <= a <= b <= rows): the kernels run on the (b - a + 3)-row
// window whose first row is local row a - 1.
static void stencil_rows(const JacobiGpu& q, int m, dim3 block, int a, int b) {
    const dim3 grid((m - 2 + block.x - 1) / block.x, (b - a + 1 + block.y - 1) / block.y);
    const size_t at = (size_t)(a - 1) * m;
    jacobi_stencil<<<grid, block, 0, q.s>>>(b - a + 3, m, q.A + at, q.Anew + at, q.d_err);
}
static void copy_rows(const JacobiGpu& q, int m, dim3 block, int a, int b) {
    const dim3 grid((m - 2 + block.x - 1) / block.x, (b - a + 1 + block.y - 1) / block.y);
    const size_t at = (size_t)(a - 1) * m;
    jacobi_copy<<<grid, block, 0, q.s>>>(b - a + 3, m, q.Anew + at, q.A + at);
}

static void bench_jacobi_multi(int n, int iter_max, int reps) {
    const int m = n;
    const double tol = 1e-6;
    if (n < 3) {
        fprintf(stderr, "jacobi_multi: n must be at least 3\n");
        exit(2);
    }
    int k = 0;
    CK(cudaGetDeviceCount(&k));
    // acc_abi::split::blocks(n - 2, k); blocks past the (n - 2)-th are empty, and the GPUs that
    // would hold them take no part (they are always the last ones).
    std::vector<JacobiGpu> g(k);
    {
        const int trip = n - 2, base = trip / k, extra = trip % k;
        int lo = 0;
        for (int d = 0; d < k; d++) {
            const int hi = lo + base + (d < extra ? 1 : 0);
            g[d].first = 1 + lo;
            g[d].rows = hi - lo;
            lo = hi;
        }
    }
    int used = 0;
    while (used < k && g[used].rows > 0) used++;
    const size_t row_bytes = (size_t)m * sizeof(double);
    unsigned long long* h_err;  // one per GPU, pinned
    CK(cudaHostAlloc(&h_err, used * sizeof *h_err, cudaHostAllocPortable));
    int peer = 1;  // 1: every neighbour pair has direct peer access
    for (int d = 0; d < used; d++) {
        JacobiGpu& q = g[d];
        CK(cudaSetDevice(d));
        const size_t bytes = (size_t)(q.rows + 2) * row_bytes;
        CK(cudaMalloc(&q.A, bytes));
        CK(cudaMalloc(&q.Anew, bytes));
        CK(cudaMalloc(&q.d_err, sizeof *q.d_err));
        CK(cudaStreamCreateWithFlags(&q.s, cudaStreamNonBlocking));
        CK(cudaStreamCreateWithFlags(&q.cs, cudaStreamNonBlocking));
        CK(cudaEventCreateWithFlags(&q.copied, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&q.err_ready, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&q.sent, cudaEventDisableTiming));
        for (int p = d - 1; p <= d + 1; p += 2) {
            if (p < 0 || p >= used) continue;
            int can = 0;
            CK(cudaDeviceCanAccessPeer(&can, d, p));
            if (!can) {
                peer = 0;
                continue;
            }
            cudaError_t e = cudaDeviceEnablePeerAccess(p, 0);
            if (e == cudaErrorPeerAccessAlreadyEnabled)
                (void)cudaGetLastError();  // clear it
            else
                CK(e);
        }
    }
    const dim3 block(64, 4);
    const char* mode = getenv("JACOBI_OVERLAP");
    mode = mode ? mode : "none";
    const bool edges_first = !strcmp(mode, "edges") || !strcmp(mode, "both");
    const bool interior_first = !strcmp(mode, "interior") || !strcmp(mode, "both");
    const bool overlap = edges_first || interior_first;
    double best = 1e30;
    int iter = 0;
    double err = 0.0;
    for (int r = -1; r < reps; r++) {
        for (int d = 0; d < used; d++) {
            CK(cudaSetDevice(d));
            const int nloc = g[d].rows + 2;
            jacobi_init_rows<<<grid_for((int64_t)nloc * m, 256, 8), 256, 0, g[d].s>>>(
                nloc, m, g[d].first - 1, g[d].A, g[d].Anew);
        }
        for (int d = 0; d < used; d++) {
            CK(cudaSetDevice(d));
            CK(cudaStreamSynchronize(g[d].s));
        }
        err = 1.0;
        iter = 0;
        const int limit = r < 0 ? (iter_max < 10 ? iter_max : 10) : iter_max;  // short warm-up
        auto t0 = std::chrono::steady_clock::now();
        while (err > tol && iter < limit) {
            // JACOBI_OVERLAP (experiment): "edges" copies each GPU's boundary rows first and pushes
            // them on a second stream while the interior rows are copied; "interior" runs the
            // stencil's interior rows before waiting for the halo rows, then the edge rows;
            // "both" does both. Unset: everything in order on one stream.
            for (int d = 0; d < used; d++) {
                JacobiGpu& q = g[d];
                CK(cudaSetDevice(d));
                CK(cudaMemsetAsync(q.d_err, 0, sizeof *q.d_err, q.s));
                if (interior_first && q.rows > 2) {
                    stencil_rows(q, m, block, 2, q.rows - 1);
                    if (d > 0) CK(cudaStreamWaitEvent(q.s, g[d - 1].sent, 0));
                    if (d + 1 < used) CK(cudaStreamWaitEvent(q.s, g[d + 1].sent, 0));
                    stencil_rows(q, m, block, 1, 1);
                    stencil_rows(q, m, block, q.rows, q.rows);
                } else {
                    if (d > 0) CK(cudaStreamWaitEvent(q.s, g[d - 1].sent, 0));
                    if (d + 1 < used) CK(cudaStreamWaitEvent(q.s, g[d + 1].sent, 0));
                    stencil_rows(q, m, block, 1, q.rows);
                }
                CK(cudaMemcpyAsync(&h_err[d], q.d_err, sizeof *h_err, cudaMemcpyDeviceToHost, q.s));
                CK(cudaEventRecord(q.err_ready, q.s));
            }
            for (int d = 0; d < used; d++) {
                JacobiGpu& q = g[d];
                CK(cudaSetDevice(d));
                const bool split = edges_first && q.rows > 2;
                const int lo = split && d > 0 ? 2 : 1, hi = split && d + 1 < used ? q.rows - 1 : q.rows;
                // The last iteration's pushes have read the rows this copy writes.
                if (overlap) CK(cudaStreamWaitEvent(q.s, q.sent, 0));
                if (split) {
                    if (d > 0) copy_rows(q, m, block, 1, 1);
                    if (d + 1 < used) copy_rows(q, m, block, q.rows, q.rows);
                } else {
                    copy_rows(q, m, block, 1, q.rows);
                }
                cudaStream_t ps = q.s;
                if (overlap) {
                    CK(cudaEventRecord(q.copied, q.s));
                    CK(cudaStreamWaitEvent(q.cs, q.copied, 0));
                    ps = q.cs;
                }
                if (d > 0) {  // local row 1 -> the halo below the block of GPU d-1
                    JacobiGpu& up = g[d - 1];
                    CK(cudaStreamWaitEvent(ps, up.err_ready, 0));
                    CK(cudaMemcpyPeerAsync(up.A + (size_t)(up.rows + 1) * m, d - 1, q.A + (size_t)m, d,
                                           row_bytes, ps));
                }
                if (d + 1 < used) {  // local row rows -> the halo above the block of GPU d+1
                    JacobiGpu& down = g[d + 1];
                    CK(cudaStreamWaitEvent(ps, down.err_ready, 0));
                    CK(cudaMemcpyPeerAsync(down.A, d + 1, q.A + (size_t)q.rows * m, d, row_bytes, ps));
                }
                CK(cudaEventRecord(q.sent, ps));
                if (split) copy_rows(q, m, block, lo, hi);
            }
            // The loop test needs the error: wait for the stencils only.
            double e = 0.0;
            for (int d = 0; d < used; d++) {
                CK(cudaEventSynchronize(g[d].err_ready));
                double v;
                unsigned long long bits = h_err[d];
                memcpy(&v, &bits, sizeof v);
                if (v > e) e = v;
            }
            err = e;
            iter++;
        }
        for (int d = 0; d < used; d++) {  // the last copies and halo exchanges
            CK(cudaSetDevice(d));
            CK(cudaStreamSynchronize(g[d].s));
        }
        auto t1 = std::chrono::steady_clock::now();
        CK(cudaGetLastError());
        double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        if (r >= 0 && ms < best) best = ms;
    }
    // Checksum: the whole grid assembled on the host (each GPU's own rows, the boundary rows from
    // the first and last GPU's halos), summed in index order as acc's sum(A) takes it.
    std::vector<double> h((size_t)n * m);
    for (int d = 0; d < used; d++) {
        const JacobiGpu& q = g[d];
        CK(cudaSetDevice(d));
        const int from = d == 0 ? 0 : 1, to = d == used - 1 ? q.rows + 1 : q.rows;  // local rows
        CK(cudaMemcpy(h.data() + (size_t)(q.first - 1 + from) * m, q.A + (size_t)from * m,
                      (size_t)(to - from + 1) * row_bytes, cudaMemcpyDeviceToHost));
    }
    double s = 0.0;
    for (double v : h) s += v;
    // Per iteration: the stencil reads A and writes Anew, the copy reads Anew and writes A (the
    // halo rows between GPUs are not counted), as jacobi_multi.acc counts it.
    const double bytes = 32.0 * (double)(n - 2) * (m - 2) * iter;
    printf("name=jacobi_multi impl=cuda-%dgpu%s%s time_ms=%.4f gbps=%.1f check=%d,%.6e,%.6f size=%d gpus=%d peer=%d\n",
           k, overlap ? "-" : "", overlap ? mode : "", best, bytes / (best * 1e6), iter, err, s, n, k, peer);
    fflush(stdout);
    for (int d = 0; d < used; d++) {
        JacobiGpu& q = g[d];
        CK(cudaSetDevice(d));
        CK(cudaFree(q.A));
        CK(cudaFree(q.Anew));
        CK(cudaFree(q.d_err));
        CK(cudaStreamDestroy(q.s));
        CK(cudaStreamDestroy(q.cs));
        CK(cudaEventDestroy(q.copied));
        CK(cudaEventDestroy(q.err_ready));
        CK(cudaEventDestroy(q.sent));
    }
    CK(cudaFreeHost(h_err));
}

// --- SpMV -----------------------------------------------------------------------------------------

// One row per thread (`acc parallel loop` on the rows: gang, vector(128)).
__global__ void spmv_row(int64_t rows, const int64_t* __restrict__ rp, const int* __restrict__ cols,
                         const double* __restrict__ vals, const double* __restrict__ x,
                         double* __restrict__ y) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= rows) return;
    double s = 0.0;
    for (int64_t j = rp[i]; j < rp[i + 1]; j++) s += vals[j] * x[cols[j]];
    y[i] = s;
}

// One row per warp: lanes stride over the row's nonzeros, a warp-shuffle sum ends it.
// blockDim = (32, rows per block): (32, 1) is `gang vector_length(32)`, (32, 4) is
// `gang worker num_workers(4) vector_length(32)`.
__global__ void spmv_warp(int64_t rows, const int64_t* __restrict__ rp, const int* __restrict__ cols,
                          const double* __restrict__ vals, const double* __restrict__ x,
                          double* __restrict__ y) {
    int64_t i = blockIdx.x * (int64_t)blockDim.y + threadIdx.y;
    if (i >= rows) return;  // the whole warp leaves together
    double s = 0.0;
    for (int64_t j = rp[i] + threadIdx.x; j < rp[i + 1]; j += 32) s += vals[j] * x[cols[j]];
    s = warp_sum(s);
    if (threadIdx.x == 0) y[i] = s;
}

static void bench_spmv(int nx, int reps) {
    const int64_t ny = nx, nz = nx, rows = (int64_t)nx * ny * nz;
    // The 27-point stencil matrix in CSR, in the order of examples/spmv.acc (columns ascend).
    std::vector<int64_t> rp(rows + 1, 0);
    auto in_range = [](int64_t i, int64_t n) { return 1 + (i > 0) + (i < n - 1); };
    for (int64_t r = 0; r < rows; r++) {
        int64_t ix = r % nx, iy = r / nx % ny, iz = r / (nx * ny);
        rp[r + 1] = rp[r] + in_range(ix, nx) * in_range(iy, ny) * in_range(iz, nz);
    }
    const int64_t nnz = rp[rows];
    std::vector<int> cols(nnz);
    std::vector<double> vals(nnz), x(rows);
    for (int64_t r = 0; r < rows; r++) {
        int64_t ix = r % nx, iy = r / nx % ny, iz = r / (nx * ny), k = rp[r];
        for (int dz = -1; dz <= 1; dz++)
            for (int dy = -1; dy <= 1; dy++)
                for (int dx = -1; dx <= 1; dx++) {
                    int64_t jx = ix + dx, jy = iy + dy, jz = iz + dz;
                    if (jx >= 0 && jx < nx && jy >= 0 && jy < ny && jz >= 0 && jz < nz) {
                        cols[k] = (int)((jz * ny + jy) * nx + jx);
                        vals[k] = (dx == 0 && dy == 0 && dz == 0) ? 26.0 : -1.0;
                        k++;
                    }
                }
        x[r] = 1.0 + (double)(r % 7);
    }
    int64_t *d_rp;
    int* d_cols;
    double *d_vals, *d_x, *d_y;
    CK(cudaMalloc(&d_rp, (rows + 1) * sizeof(int64_t)));
    CK(cudaMalloc(&d_cols, nnz * sizeof(int)));
    CK(cudaMalloc(&d_vals, nnz * sizeof(double)));
    CK(cudaMalloc(&d_x, rows * sizeof(double)));
    CK(cudaMalloc(&d_y, rows * sizeof(double)));
    CK(cudaMemcpy(d_rp, rp.data(), (rows + 1) * sizeof(int64_t), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_cols, cols.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_vals, vals.data(), nnz * sizeof(double), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d_x, x.data(), rows * sizeof(double), cudaMemcpyHostToDevice));
    // Nonzeros (value + column), row offsets, x read once and y written once.
    const double bytes = nnz * (8.0 + 4.0) + (rows + 1) * 8.0 + 2.0 * rows * 8.0;
    std::vector<double> hy(rows);
    for (int schedule = 0; schedule < 3; schedule++) {
        static const char* names[3] = {"spmv_row", "spmv_vector32", "spmv_worker4"};
        CK(cudaMemset(d_y, 0, rows * sizeof(double)));
        EventTimer t;
        float best = 1e30f;
        for (int r = -1; r < reps; r++) {
            t.start();
            if (schedule == 0)
                spmv_row<<<(unsigned)((rows + 127) / 128), 128>>>(rows, d_rp, d_cols, d_vals, d_x, d_y);
            else if (schedule == 1)
                spmv_warp<<<(unsigned)rows, dim3(32, 1)>>>(rows, d_rp, d_cols, d_vals, d_x, d_y);
            else
                spmv_warp<<<(unsigned)((rows + 3) / 4), dim3(32, 4)>>>(rows, d_rp, d_cols, d_vals, d_x, d_y);
            float ms = t.stop();
            CK(cudaGetLastError());
            if (r >= 0 && ms < best) best = ms;
        }
        CK(cudaMemcpy(hy.data(), d_y, rows * sizeof(double), cudaMemcpyDeviceToHost));
        double s = 0.0;
        for (double v : hy) s += v;
        char check[64], extra[64];
        snprintf(check, sizeof check, "%.1f", s);
        snprintf(extra, sizeof extra, "rows=%lld nnz=%lld", (long long)rows, (long long)nnz);
        report(names[schedule], best, bytes, check, extra);
    }
    CK(cudaFree(d_rp));
    CK(cudaFree(d_cols));
    CK(cudaFree(d_vals));
    CK(cudaFree(d_x));
    CK(cudaFree(d_y));
}

// --- launch overhead ------------------------------------------------------------------------------

// The shape of `acc parallel loop present(a)` over one element: one block of 128 threads, one of
// them doing the work.
__global__ void tiny(int64_t n, double* a) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) a[i] += 1.0;
}

static void bench_launch(int launches, int rounds) {
    double* a;
    CK(cudaMalloc(&a, sizeof(double)));
    CK(cudaMemset(a, 0, sizeof(double)));
    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (int k = 0; k < 100; k++) {  // warm-up: module load, first-launch costs
        tiny<<<1, 128, 0, s>>>(1, a);
        CK(cudaStreamSynchronize(s));
    }
    double best = 1e30;
    for (int r = 0; r < rounds; r++) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < launches; k++) {
            tiny<<<1, 128, 0, s>>>(1, a);
            CK(cudaStreamSynchronize(s));
        }
        auto t1 = std::chrono::steady_clock::now();
        double ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
        if (ms < best) best = ms;
    }
    CK(cudaGetLastError());
    double h;
    CK(cudaMemcpy(&h, a, sizeof h, cudaMemcpyDeviceToHost));
    char check[64], extra[96];
    snprintf(check, sizeof check, "%.1f", h);  // 100 + rounds * launches
    snprintf(extra, sizeof extra, "launches=%d us_per_launch=%.3f", launches, best * 1000.0 / launches);
    report("launch", best, 0, check, extra);
    CK(cudaStreamDestroy(s));
    CK(cudaFree(a));
}

// --- main -----------------------------------------------------------------------------------------

int main(int argc, char** argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s d2d|saxpy|dot|jacobi|jacobi_multi|spmv|launch|first [sizes...]\n", argv[0]);
        return 2;
    }
    const char* which = argv[1];
    if (strcmp(which, "first") == 0) {  // no device query first: this one measures start-up
        run_saxpy(arg_i64(argc, argv, 2, 1 << 20), 0, false);
        return 0;
    }
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
    if (strcmp(which, "d2d") == 0)
        bench_d2d(arg_i64(argc, argv, 2, 1ll << 30), (int)arg_i64(argc, argv, 3, 10));
    else if (strcmp(which, "saxpy") == 0)
        run_saxpy(arg_i64(argc, argv, 2, 1ll << 28), (int)arg_i64(argc, argv, 3, 10), true);
    else if (strcmp(which, "dot") == 0)
        bench_dot(arg_i64(argc, argv, 2, 1ll << 27), (int)arg_i64(argc, argv, 3, 10));
    else if (strcmp(which, "jacobi") == 0)
        bench_jacobi((int)arg_i64(argc, argv, 2, 4096), (int)arg_i64(argc, argv, 3, 1000),
                     (int)arg_i64(argc, argv, 4, 3));
    else if (strcmp(which, "jacobi_multi") == 0)
        bench_jacobi_multi((int)arg_i64(argc, argv, 2, 8192), (int)arg_i64(argc, argv, 3, 1500),
                           (int)arg_i64(argc, argv, 4, 2));
    else if (strcmp(which, "spmv") == 0)
        bench_spmv((int)arg_i64(argc, argv, 2, 100), (int)arg_i64(argc, argv, 3, 10));
    else if (strcmp(which, "launch") == 0)
        bench_launch((int)arg_i64(argc, argv, 2, 10000), (int)arg_i64(argc, argv, 3, 3));
    else {
        fprintf(stderr, "unknown benchmark %s\n", which);
        return 2;
    }
    return 0;
}
