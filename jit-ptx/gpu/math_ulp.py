#!/usr/bin/env python3
"""The device math library's accuracy test: runs every math function's kernel (f64 and f32)
on a GPU over about half a million inputs each (edge cases, random bit patterns, random
values in each function's interesting ranges) and compares the results with the host's.
Needs Python 3 with numpy and, to run the kernels, CuPy; mpmath is optional.

Host side (no GPU; writes about 50 MiB):

    cargo run -p acc-jit-ptx --example math_ulp -- OUT [--n N] [--seed S]

GPU side:

    python3 jit-ptx/gpu/math_ulp.py OUT

(`OUT = target/math_ulp` keeps the files out of git, for carrying them to a GPU machine.)

`math_ulp.rs` writes the kernels (`math_ulp.ptx`), the recipes of the random inputs, which
this script regenerates (a checksum catches any difference), and the host's results (Rust's
`f64`/`f32` methods, as `stdlib/src/math.rs` calls them) as 16-bit keys that give the exact
ulp distance of a device result up to 8191 ulp and its special class (NaN, +-inf, -0).

Per function and precision it prints: the number of inputs, the worst ulp distance from the
host's result (with the input), the worst from the correctly rounded result (f32: the host's
f64 function rounded to f32, on every input; f64: mpmath at 200 bits on a sample, when mpmath
is installed), and the number of special values that differ (NaN or not, infinities, the sign
of a zero). The exit status is 1 when any function is further than its bound (2 ulp, sqrt 1)
from the correctly rounded result, further than its bound plus 1 from the host (whose own
libm results may be 1 ulp off; sqrt and fmod are exact there, so their bound holds as it is),
or has a special value that differs.

`--fake numpy` runs numpy's functions instead of the kernels (no GPU: to test the script);
`--only NAME` runs one function; `--mp N` sets the mpmath sample size (default 2000).
"""

import argparse
import json
import math
import sys

import numpy as np

U = np.uint64
GOLDEN = U(0x9E3779B97F4A7C15)
PIO2 = math.pi / 2


def mix(z):
    z = (z ^ (z >> U(30))) * U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U(27))) * U(0x94D049BB133111EB)
    return z ^ (z >> U(31))


def nudge(bits, r, spread):
    delta = (r >> U(1)) % U(spread)
    return np.where((r & U(1)) == U(0), bits + delta, bits - delta)


def unit(r):
    return (r >> U(11)).astype(np.float64) * 2.0 ** -53


def generate(gen, seed, count):
    """Inputs `0..count` of a recipe of math_ulp.rs's `Gen` (and the paired argument of
    `powedge`), the same bits as there."""
    kind, a = gen["kind"], gen["args"]
    d = {"logu": 2, "pio2": 2, "pio2f": 2, "powedge": 3}.get(kind, 1)
    i = np.arange(count, dtype=np.uint64)

    def r(j):
        return mix(U(seed) + (i * U(d) + U(j) + U(1)) * GOLDEN)

    with np.errstate(all="ignore"):
        if kind == "bits":
            return r(0).view(np.float64), None
        if kind == "bits32":
            return (r(0) >> U(32)).astype(np.uint32).view(np.float32).astype(np.float64), None
        if kind == "uniform":
            lo, hi = a
            return lo + (hi - lo) * unit(r(0)), None
        if kind == "logu":
            lo, hi, signed = a
            r1, r2 = r(0), r(1)
            e = lo + ((r1 >> U(1)) % U(hi - lo)).astype(np.int64)
            m = r2 >> U(12)
            normal = ((e + 1023).clip(0, 2047).astype(np.uint64) << U(52)) | m
            shift = (-1022 - e).clip(0, 63).astype(np.uint64)
            sub = ((U(1) << U(52)) | m) >> shift
            bits = np.where(e >= -1022, normal, sub)
            if signed:
                bits = bits | ((r1 & U(1)) << U(63))
            return bits.view(np.float64), None
        if kind == "near":
            c, spread = a
            return nudge(np.array([c]).view(np.uint64)[0], r(0), spread).view(np.float64), None
        if kind == "near32":
            c, spread = a
            cb = U(np.array([c], np.float32).view(np.uint32)[0])
            b = nudge(cb, r(0), spread).astype(np.uint32)
            return b.view(np.float32).astype(np.float64), None
        if kind in ("pio2", "pio2f"):
            kmax, spread = a
            v = (U(1) + r(0) % U(kmax)).astype(np.float64) * PIO2
            if kind == "pio2":
                return nudge(v.view(np.uint64), r(1), spread).view(np.float64), None
            vb = v.astype(np.float32).view(np.uint32).astype(np.uint64)
            b = nudge(vb, r(1), spread).astype(np.uint32)
            return b.view(np.float32).astype(np.float64), None
        if kind == "int":
            lo, hi = a
            return (lo + (r(0) % U(hi - lo + 1)).astype(np.int64)).astype(np.float64), None
        if kind == "powedge":
            emax, lo, hi = a
            e = U(1) + r(0) % U(emax)
            x = (((e + U(1023)) << U(52)) | (r(1) >> U(12))).view(np.float64)
            y = (lo + (hi - lo) * unit(r(2))) / e.astype(np.float64)
            return x, y
    raise ValueError(f"unknown input recipe {kind}")


def inputs(out, entry):
    """The inputs of one function and precision: edge cases, then the random segments."""
    tag = f"{entry['fn']}_{entry['ty']}"
    edges = np.fromfile(f"{out}/{tag}.edges", dtype=np.float64)
    ne = entry["edges"]
    xs, ys = [edges[:ne]], [edges[ne:] if entry["arity"] == 2 else np.zeros(ne)]
    for s in entry["segments"]:
        x, paired = generate(s["x"], s["seed_x"], s["count"])
        y = paired if paired is not None else generate(s["y"], s["seed_y"], s["count"])[0]
        xs.append(x)
        ys.append(y)
    x, y = np.concatenate(xs), np.concatenate(ys)
    if entry["ty"] == "f32":
        with np.errstate(all="ignore"):
            x = x.astype(np.float32).astype(np.float64)
            y = y.astype(np.float32).astype(np.float64)
    for v, want in ((x, entry["sum_x"]), (y, entry["sum_y"])):
        got = int(np.sum(v.view(np.uint64), dtype=np.uint64))
        if got != want:
            raise SystemExit(f"{tag}: the regenerated inputs differ from math_ulp.rs's "
                             f"(checksum {got} != {want})")
    if entry["ty"] == "f32":
        return x.astype(np.float32), y.astype(np.float32)
    return x, y


def ordered(v):
    """Ordered integers of the bit patterns: adjacent floats differ by 1, +-0 are 0."""
    if v.dtype == np.float32:
        b = v.view(np.uint32).astype(np.int64)
        mag, neg = b & 0x7FFFFFFF, (b >> 31) == 1
    else:
        b = v.view(np.uint64)
        mag, neg = (b & U(0x7FFFFFFFFFFFFFFF)).astype(np.int64), (b >> U(63)) == U(1)
    return np.where(neg, -mag, mag)


def from_ordered(o, dtype):
    if dtype == np.float32:
        b = np.where(o < 0, (-o) | (1 << 31), o).astype(np.uint32)
        return b.view(np.float32)
    b = np.where(o < 0, (-o).astype(np.uint64) | (U(1) << U(63)), o.astype(np.uint64))
    return b.view(np.float64)


def keys(v):
    """math_ulp.rs's 16-bit keys of results `v`."""
    k = (ordered(v) & 0x3FFF).astype(np.uint16)
    k = np.where((v == 0) & np.signbit(v), np.uint16(0x4000), k)
    k = np.where(np.isinf(v), (0x8000 | (v < 0)).astype(np.uint16), k)
    return np.where(np.isnan(v), np.uint16(0xC000), k).astype(np.uint16)


def compare(got, want_keys):
    """Ulp distances (-1 where a special class differs) of results `got` from the results
    whose keys are `want_keys`."""
    g = keys(got)
    cg, cw = g >> 14, want_keys >> 14
    d = (g.astype(np.int64) - want_keys.astype(np.int64)) % 16384
    d = np.where(d >= 8192, d - 16384, d)
    ulp = np.where((cg == 0) & (cw == 0), np.abs(d), 0)
    special = (cg != cw) | ((cg == 2) & (g != want_keys))
    return np.where(special, -1, ulp), d


# The functions, by the names of math_ulp.rs.
NUMPY = {"sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
         "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos,
         "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
         "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "cbrt": np.cbrt,
         "hypot": np.hypot, "fmod": np.fmod, "atan2": np.arctan2, "pow": np.power}


class Device:
    """The kernels of math_ulp.ptx, launched by the kernel ABI of acc-jit-ptx (its crate
    documentation): one 64-byte header per array, then the results, partials and error
    record, and the output buffer of print records."""

    def __init__(self, out):
        import cupy as cp
        self.cp = cp
        self.module = cp.RawModule(path=f"{out}/math_ulp.ptx")

    def run(self, entry, x, y):
        cp = self.cp
        n = len(x)
        arrays = {"x": x, "z": y, "y": np.zeros_like(x)}
        keep, params = {}, []
        for name in entry["params"]:
            v = arrays[name[0]]
            data = cp.asarray(v)
            hdr = cp.asarray(np.array([data.data.ptr, n, n, 1, 1, 1, 1, 1], dtype=np.int64))
            keep[name[0]] = (data, hdr)
            params.append(np.uint64(hdr.data.ptr))
        results = cp.zeros(len(params) + 1, dtype=np.uint64)
        partials = cp.zeros(1, dtype=np.uint64)
        error = cp.zeros(10, dtype=np.uint64)
        f = self.module.get_function(entry["kernel"])
        block = 256
        grid = max(1, min(65535, (n + block - 1) // block))
        # The last parameter is the output buffer of print records: none print here.
        # After `out`: each array's data pointer and extent again (the kernel ABI's `arrays`).
        extents = tuple(w for name in entry["params"]
                        for w in (np.uint64(keep[name[0]][0].data.ptr), np.uint64(n)))
        f((grid, 1, 1), (block, 1, 1), tuple(params) + (
            np.uint64(results.data.ptr), np.uint64(partials.data.ptr),
            np.uint64(error.data.ptr), np.uint64(0)) + extents,
            shared_mem=8 * (block + 1))  # the ABI's dynamic shared memory, 8 B per thread and row
        cp.cuda.runtime.deviceSynchronize()
        status = int(error.get()[0]) & 0xFFFFFFFF
        if status != 0:
            raise RuntimeError(f"{entry['kernel']}: the kernel reported an error {error.get()}")
        return keep["y"][0].get()


def fake(entry, x, y):
    f = NUMPY[entry["fn"]]
    with np.errstate(all="ignore"):
        return f(x, y) if entry["arity"] == 2 else f(x)


def mp_reference(name, a, b):
    """The correctly rounded f64 result by mpmath (finite inputs; None where not compared)."""
    import mpmath
    mp, A = mpmath, mpmath.mpf(a)
    if name == "fmod":
        return math.fmod(a, b)
    if name in ("sin", "cos", "tan") and abs(a) > 1e5:
        with mp.workprec(2300):
            return float(getattr(mp, name)(A))
    if name == "exp2":
        return float(mp.power(2, A))
    if name == "log2":
        return float(mp.log(A, 2))
    if name == "cbrt":
        return math.copysign(float(mp.cbrt(abs(A))), a)
    if name in ("asin", "acos", "atan", "sqrt", "exp", "expm1", "log", "log10", "log1p",
                "sinh", "cosh", "tanh"):
        return float(getattr(mp, name)(A))
    B = mp.mpf(b)
    if name == "hypot":
        return float(mp.hypot(A, B))
    if name == "atan2":
        return float(mp.atan2(A, B))
    if name == "pow":
        if a < 0 and b != math.floor(b):
            return None
        v = float(mp.power(abs(A), B))
        return -v if a < 0 and abs(b) < 2 ** 53 and int(b) % 2 == 1 else v
    return None


def mp_worst(entry, x, y, got, host_ok, sample):
    """Worst ulp of the device (and of the host) from mpmath on a sample of f64 inputs whose
    host result is finite and nonzero."""
    import mpmath
    mpmath.mp.prec = 200
    idx = np.flatnonzero(host_ok & np.isfinite(x) & np.isfinite(y) & np.isfinite(got))
    if len(idx) > sample:
        idx = np.random.default_rng(5).choice(idx, sample, replace=False)
    worst, at = 0, None
    for i in idx:
        try:
            ref = mp_reference(entry["fn"], float(x[i]), float(y[i]))
        except (ValueError, OverflowError, ZeroDivisionError):
            continue
        if ref is None or not math.isfinite(ref) or ref == 0:
            continue
        u = abs(int(ordered(np.array([got[i]]))[0]) - int(ordered(np.array([ref]))[0]))
        if u > worst:
            worst, at = u, i
    return worst, at, len(idx)


def describe(entry, x, y, i):
    return f"{entry['fn']}({x[i]!s}, {y[i]!s})" if entry["arity"] == 2 else \
        f"{entry['fn']}({x[i]!s})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--fake", choices=["numpy"])
    p.add_argument("--only")
    p.add_argument("--mp", type=int, default=2000)
    args = p.parse_args()
    with open(f"{args.out}/manifest.json") as f:
        manifest = json.load(f)
    try:
        import mpmath  # noqa: F401
        have_mp = args.mp > 0
    except ImportError:
        have_mp = False
        print("mpmath not installed: f64 is compared with the host only")
    device = None
    if not args.fake:
        try:
            device = Device(args.out)
        except ImportError:
            for entry in manifest["functions"]:
                inputs(args.out, entry)
            print("CuPy is not installed: the inputs were regenerated and match math_ulp.rs's; "
                  "run this on the GPU machine (or with --fake numpy to test the script)")
            sys.exit(2)
    failures = []
    print(f"{'function':<12}{'inputs':>9}  {'vs host':>8}  {'vs exact':>9}  {'special':>7}"
          f"  worst input (device result)")
    for entry in manifest["functions"]:
        name, ty, bound = entry["fn"], entry["ty"], entry["bound"]
        if args.only and name != args.only:
            continue
        tag = f"{name}_{ty}"
        x, y = inputs(args.out, entry)
        got = fake(entry, x, y) if args.fake else device.run(entry, x, y)
        host = np.fromfile(f"{args.out}/{tag}.host", dtype=np.uint16)
        ulp, d = compare(got, host)
        special = np.flatnonzero(ulp < 0)
        worst_i = int(np.argmax(ulp))
        worst = int(ulp[worst_i])
        # The host's result at the worst input, from the device's and the distance.
        hv = from_ordered(ordered(got[worst_i:worst_i + 1]) - d[worst_i], got.dtype)[0]
        exact, exact_note = None, ""
        if ty == "f32":
            raw = np.fromfile(f"{args.out}/{tag}.cr", dtype=np.uint8)
            k = entry["cr_diffs"]
            at = raw[: 4 * k].view(np.uint32)
            cr = host.copy()
            cr[at] = raw[4 * k:].view(np.uint16)
            cu, _ = compare(got, cr)
            exact = int(cu.max())
        elif have_mp:
            host_ok = (host >> 14) == 0
            exact, at, m = mp_worst(entry, x, y, got.astype(np.float64), host_ok, args.mp)
            exact_note = f"; vs mpmath on {m} inputs" + (
                f", worst {describe(entry, x, y, at)} = {got[at]!s}" if at is not None else "")
        host_tol = bound if name in ("sqrt", "fmod") else bound + 1
        bad = worst > host_tol or len(special) > 0 or (exact is not None and exact > bound)
        exact_s = "-" if exact is None else str(exact)
        line = (f"{tag:<12}{len(x):>9}  {worst:>8}  {exact_s:>9}  {len(special):>7}  "
                f"{describe(entry, x, y, worst_i)} = {got[worst_i]!s} (host {hv!s}){exact_note}")
        print(("FAIL " if bad else "") + line, flush=True)
        for i in special[:3]:
            print(f"    special: {describe(entry, x, y, i)} = {got[i]!s}, host key "
                  f"0x{int(host[i]):04x}")
        if bad:
            failures.append(tag)
    if failures:
        print(f"{len(failures)} failed: {' '.join(failures)}")
        sys.exit(1)
    print("all within bounds")


if __name__ == "__main__":
    main()
