#!/usr/bin/env python3
"""Runs the kernels of jit-ptx/gpu/cases on a GPU through CuPy, following the kernel ABI of
acc-jit-ptx (its crate documentation), and checks their results against values computed
here. Needs a GPU, CuPy and the files `gpu_cases` writes:

    cargo run -p acc-jit-ptx --example gpu_cases -- jit-ptx/gpu/cases OUT
    python3 jit-ptx/gpu/run.py OUT

Every case runs under several launch shapes (grid, block), including blocks that are not
whole warps, so that each schedule and each reduction path is exercised.
"""

import json
import math
import struct
import sys
from fractions import Fraction

import cupy as cp
import numpy as np

DIR = sys.argv[1] if len(sys.argv) > 1 else "."
DT = {"bool": np.uint8, "i32": np.int32, "i64": np.int64, "f32": np.float32, "f64": np.float64}
SHAPES = [(1, (1, 1)), (1, (32, 1)), (3, (33, 1)), (7, (64, 2)), (100, (128, 1)),
          (2, (32, 4)), (5, (96, 3)), (4, (1, 8)), (2, (7, 5))]
failures = []
passed = 0


def check(what, ok, detail=""):
    global passed
    if ok:
        passed += 1
        if what.startswith("math"):
            print(f"ok {what}", flush=True)
    else:
        failures.append(f"{what}: {detail}")
        print(f"FAIL {what}: {detail}", flush=True)


def slot(value, ty):
    """A scalar's 8-byte argument slot: its bytes in the low bytes."""
    raw = np.array([value], dtype=DT[ty]).tobytes()
    return np.frombuffer(raw + bytes(8 - len(raw)), dtype=np.uint64)[0]


def unslot(bits, ty):
    raw = np.array([bits], dtype=np.uint64).tobytes()
    return np.frombuffer(raw[: np.dtype(DT[ty]).itemsize], dtype=DT[ty])[0]


def combine(op, ty, a, b):
    if ty == "bool":
        a, b = bool(a), bool(b)
    if op == "+":
        return (np.array([a], DT[ty]) + np.array([b], DT[ty]))[0]
    if op == "*":
        return (np.array([a], DT[ty]) * np.array([b], DT[ty]))[0]
    if op == "max":
        return b if (a != a or b > a) else a
    if op == "min":
        return b if (a != a or b < a) else a
    if op == "&":
        return a & b
    if op == "|":
        return a | b
    if op == "^":
        return a ^ b
    if op == "&&":
        return a and b
    if op == "||":
        return a or b
    raise ValueError(op)


class Case:
    def __init__(self, name):
        self.name = name
        with open(f"{DIR}/{name}.json") as f:
            self.meta = json.load(f)
        self.module = cp.RawModule(path=f"{DIR}/{name}.ptx")
        self.sites = {s: what for s, what in self.meta["sites"]}
        self.prints = self.meta.get("prints", [])
        self.out_capacity = 1 << 20
        self.records, self.lost, self.cursor = [], 0, 0

    def kernel(self, region):
        for k in self.meta["kernels"]:
            if k["region"] == region:
                return k
        raise KeyError(f"{self.name}: region {region} has no kernel ({self.meta['unsupported']})")

    def run(self, region, args, grid, block):
        """Launch region `region` with `args` (name -> numpy array or Python scalar). Returns
        (arrays after, scalar results after, error record)."""
        launch, collect = self.prepare(region, args, grid, block)
        launch()
        cp.cuda.runtime.deviceSynchronize()
        return collect()

    def prepare(self, region, args, grid, block):
        """The device buffers of a launch: a function that launches the kernel, and one that
        reads the results back."""
        k = self.kernel(region)
        if k["one_gang"]:
            grid = min(grid, 2)
        # A split kernel: `split` blocks per gang (1 to 3, by the shape), its last parameter.
        split = 1 + grid % 3 if k.get("split") else 0
        if split:
            grid *= split
        values, keep, slots, keep_scratch = [], {}, [], []
        for p in k["params"]:
            v = args[p["name"]]
            if p["pass"] == "private_array":
                # Not read by the kernel: its copies come from the scratch below.
                values.append(np.uint64(0))
                slots.append(np.uint64(0))
            elif p["pass"] in ("array", "firstprivate_array"):
                data = cp.asarray(np.ascontiguousarray(v))
                dims = list(v.shape) + [1] * (6 - v.ndim)
                hdr = cp.asarray(np.array([data.data.ptr, v.size] + dims, dtype=np.int64))
                keep[p["name"]] = (data, hdr)
                values.append(np.uint64(hdr.data.ptr))
                slots.append(np.uint64(0))
            else:
                s = slot(v, p["ty"]["scalar"])
                values.append(s)
                slots.append(s)
        results = cp.asarray(np.array(slots + [0], dtype=np.uint64))
        nred = len(k["reductions"])
        partials = cp.zeros(max(1, nred * grid), dtype=np.uint64)
        error = cp.zeros(10, dtype=np.uint64)
        # The output buffer of print records: header {cursor, lost, capacity, end}, then
        # `capacity` bytes (0, no buffer, for a kernel that does not print).
        out = None
        if k.get("prints"):
            out = cp.zeros(4 + self.out_capacity // 8, dtype=np.uint64)
            out[2] = self.out_capacity
            out[3] = self.out_capacity
        # Global scalars that routines read: their slots after the error record (the
        # harness names them `global:NAME` in `args`).
        gvals = tuple(slot(*args["global:" + g]) for g in k.get("globals", []))
        # Private arrays: per launch, one copy per block, row or thread (by the array's
        # level) of the original's shape, every copy `stride` bytes (its size rounded up to
        # 16), filled with garbage; the kernel takes the copies' base and the extents.
        pvals = []
        for pa in k.get("private", []):
            v = np.asarray(args[k["params"][pa["param"]]["name"]])
            stride = (v.size * pa["elem_bytes"] + 15) // 16 * 16
            per_block = {"gang": 1, "worker": block[1], "vector": block[0] * block[1]}
            copies = grid * per_block[pa["level"]]
            scratch = cp.full(max(1, copies * stride), 0xA5, dtype=np.uint8)
            keep_scratch.append(scratch)
            pvals += [np.uint64(scratch.data.ptr)] + [np.uint64(d) for d in v.shape]
        # Shared arrays: their data pointers and extents again, as parameters of their own.
        avals = []
        for a in k.get("arrays", []):
            data, _ = keep[k["params"][a["param"]]["name"]]
            shape = np.shape(args[k["params"][a["param"]]["name"]])
            avals += [np.uint64(data.data.ptr)] + [np.uint64(d) for d in shape[:a["rank"]]]
        f = self.module.get_function(k["name"])
        params = tuple(values) + (np.uint64(results.data.ptr), np.uint64(partials.data.ptr),
                                  np.uint64(error.data.ptr),
                                  np.uint64(0 if out is None else out.data.ptr)) + gvals + \
            tuple(pvals) + tuple(avals) + ((np.uint64(split),) if split else ())

        # Dynamic shared memory: per thread and per row of the block (the kernel ABI).
        shared = k["shared_per_thread"] * (block[0] * block[1] + block[1])

        def launch():
            f((grid, 1, 1), (block[0], block[1], 1), params, shared_mem=shared)
            launch.scratch = keep_scratch  # alive as long as the launcher

        def collect():
            self.records, self.lost, self.cursor = self.read_records(out)
            return self.collect(k, args, grid, keep, results, partials, error)
        return launch, collect

    def read_records(self, out):
        """The print records of a launch as (print id, [slot values as uint64]), in buffer
        order, the count of records that did not fit, and the final cursor."""
        if out is None:
            return [], 0, 0
        words = out.get()
        cursor, lost, end = int(words[0]), int(words[1]), int(words[3])
        records, at = [], 4
        end = 4 + min(cursor, end) // 8
        while at < end:
            header = int(words[at])
            pid, n = header & 0xFFFFFFFF, header >> 32
            records.append((pid, [np.uint64(w) for w in words[at + 1: at + 1 + n]]))
            at += 1 + n
        return records, lost, cursor

    def collect(self, k, args, grid, keep, results, partials, error):
        out = {name: d.get() for name, (d, _) in keep.items()}
        res = results.get()
        part = partials.get()
        scalars = {}
        for i, p in enumerate(k["params"]):
            if p["pass"] == "inout":
                ty = p["ty"]["scalar"]
                red = [r for r in k["reductions"] if r["param"] == i]
                if red:
                    r = red[0]
                    ri = k["reductions"].index(r)
                    v = args[p["name"]]
                    for b in range(grid):
                        v = combine(r["op"], ty, v, unslot(part[ri * grid + b], ty))
                    scalars[p["name"]] = v
                else:
                    scalars[p["name"]] = unslot(res[i], ty)
        raw = error.get().tobytes()
        status, site, kind, dim = struct.unpack_from("<IIII", raw, 0)
        index = struct.unpack_from("<q", raw, 16)[0]
        shape = list(struct.unpack_from("<6q", raw, 24))
        err = None if status == 0 else {"site": site, "what": self.sites.get(site), "kind": kind,
                                         "dim": dim, "index": index,
                                         "shape": [d for d in shape if d != -1]}
        return out, scalars, err


def each_shape(fn):
    for grid, block in SHAPES:
        fn(grid, block, f"grid {grid} block {block}")


rng = np.random.default_rng(7)


def case_saxpy():
    c = Case("saxpy")
    n = 1000
    x = rng.random(n, dtype=np.float32)
    y = rng.random(n, dtype=np.float32)
    a = np.float32(2.5)

    def go(grid, block, tag):
        out, _, err = c.run(0, {"x": x, "y": y, "a": a, "n": n}, grid, block)
        check(f"saxpy {tag}", err is None and np.array_equal(out["y"], a * x + y), err)
    each_shape(go)


def case_reduce():
    c = Case("reduce")
    n = 100000
    x = rng.random(n) + 0.5
    m = rng.integers(-10**9, 10**9, n, dtype=np.int32)
    f = rng.random(n, dtype=np.float32)
    ones = np.ones(n, dtype=np.uint8)
    k = rng.integers(0, 2**62, n, dtype=np.int64) | np.int64(1 << 5)
    px = 1.0 + (rng.random(n) - 0.5) * 1e-5

    def go(grid, block, tag):
        _, s, e = c.run(0, {"x": x, "s": 0.5, "n": n}, grid, block)
        _, s2, _ = c.run(0, {"x": x, "s": 0.5, "n": n}, grid, block)
        check(f"sum f64 {tag}", e is None and abs(s["s"] - (0.5 + x.sum())) < 1e-6 and
              s["s"] == s2["s"], (s, x.sum()))
        _, s, e = c.run(1, {"m": m, "mx": np.int32(-5), "n": n}, grid, block)
        check(f"max i32 {tag}", s["mx"] == m.max(), (s, m.max()))
        _, s, e = c.run(2, {"f": f, "mn": np.float32(100), "n": n}, grid, block)
        check(f"min f32 {tag}", s["mn"] == f.min(), (s, f.min()))
        b = ones.copy()
        _, s, e = c.run(3, {"b": b, "all": True, "any": False, "n": n}, grid, block)
        check(f"&& || all true {tag}", bool(s["all"]) and bool(s["any"]), s)
        b[n // 3] = 0
        _, s, e = c.run(3, {"b": b, "all": True, "any": False, "n": n}, grid, block)
        check(f"&& one false {tag}", (not s["all"]) and bool(s["any"]), s)
        _, s, e = c.run(3, {"b": np.zeros(n, np.uint8), "all": True, "any": False, "n": n},
                        grid, block)
        check(f"|| all false {tag}", (not s["all"]) and not s["any"], s)
        _, s, e = c.run(4, {"k": k, "band": np.int64(-1), "bor": np.int64(0),
                            "bxor": np.int64(0), "n": n}, grid, block)
        check(f"& | ^ i64 {tag}", s["band"] == np.bitwise_and.reduce(k) and
              s["bor"] == np.bitwise_or.reduce(k) and s["bxor"] == np.bitwise_xor.reduce(k), s)
        _, s, e = c.run(5, {"x": px, "p": 1.0, "n": n}, grid, block)
        check(f"* f64 {tag}", abs(s["p"] / np.prod(px) - 1) < 1e-12, (s, np.prod(px)))
        _, s, e = c.run(6, {"c": np.int64(10)}, grid, block)
        check(f"gang-redundant reduction {tag}", s["c"] == 10 + grid, s)
        _, s, e = c.run(7, {"t": np.int64(0), "n": n}, grid, block)
        check(f"parallel reduction over acc loop {tag}", s["t"] == n * (n - 1) // 2, s)
        _, s, e = c.run(8, {"m": m, "si": np.int32(0), "n": n}, grid, block)
        expect = np.int32(np.int64(m.astype(np.int64).sum()) & 0xffffffff)
        check(f"+ i32 wraps {tag}", s["si"] == np.array([expect]).astype(np.int32)[0], (s, expect))
    each_shape(go)


def case_jacobi():
    c = Case("jacobi")
    n, m = 300, 200
    A = rng.random((n, m))

    def go(grid, block, tag):
        out, s, e = c.run(0, {"A": A, "Anew": np.zeros((n, m)), "err": 0.0, "n": n, "m": m},
                          grid, block)
        want = np.zeros((n, m))
        want[1:-1, 1:-1] = 0.25 * (A[1:-1, 2:] + A[1:-1, :-2] + A[:-2, 1:-1] + A[2:, 1:-1])
        err = np.abs(want[1:-1, 1:-1] - A[1:-1, 1:-1]).max()
        check(f"jacobi {tag}", e is None and np.array_equal(out["Anew"], want) and s["err"] == err,
              (e, s, err))
    each_shape(go)


def case_collapse():
    c = Case("collapse")
    n, m = 37, 19

    def go(grid, block, tag):
        out, _, e = c.run(0, {"a": np.zeros((n, m), np.int64), "n": n, "m": m}, grid, block)
        i, j = np.indices((n, m))
        check(f"collapse(2) {tag}", e is None and np.array_equal(out["a"], i * 1000 + j), e)
        out, _, e = c.run(1, {"t": np.ones((5, 6, 7), np.int32)}, grid, block)
        i, j, k = np.indices((5, 6, 7))
        check(f"collapse(3) {tag}", np.array_equal(out["t"], 1 + i * 100 + j * 10 + k), e)
        out, _, e = c.run(2, {"d": np.zeros(100, np.int64), "lo": np.int32(3),
                              "hi": np.int32(90)}, grid, block)
        want = np.zeros(100, np.int64)
        want[list(range(90, 2, -7))] = 1
        check(f"step -7 inclusive {tag}", np.array_equal(out["d"], want), e)
        _, s, e = c.run(3, {"total": np.int64(0), "n": n, "m": m}, grid, block)
        check(f"collapse reduction {tag}", s["total"] == sum(range(n)) * sum(range(m)), s)
    each_shape(go)


def case_levels():
    c = Case("levels")

    def go(grid, block, tag):
        out, _, e = c.run(0, {"a": np.zeros((8, 16), np.int64)}, grid, block)
        i, j = np.indices((8, 16))
        check(f"gang / vector {tag}", e is None and np.array_equal(out["a"], i + j), e)
        out, _, e = c.run(1, {"b": np.zeros((8, 16), np.int64)}, grid, block)
        check(f"gang / worker / vector {tag}", np.array_equal(out["b"], np.ones((8, 16))), out["b"])
        out, _, e = c.run(2, {"c": np.zeros(64, np.int64)}, grid, block)
        check(f"gang worker vector {tag}", np.array_equal(out["c"], np.arange(64)), e)
        g, w, v = 6, 5, 70
        x = rng.random((g, w, v))
        out, _, e = c.run(3, {"x": x, "out": np.zeros((g, w)), "g": g, "w": w, "v": v}, grid,
                          block)
        check(f"vector reduction in worker loop {tag}",
              e is None and np.allclose(out["out"], x.sum(axis=2), rtol=1e-13), e)
        out, _, e = c.run(4, {"y": np.zeros(40, np.int64), "z": np.zeros(40, np.int64)}, grid,
                          block)
        check(f"worker stores then reads {tag}", np.array_equal(out["y"], np.arange(40)) and
              np.array_equal(out["z"], 2 * np.arange(40)), out)
        out, _, e = c.run(5, {"q": np.zeros(50, np.int64)}, grid, block)
        check(f"vector loop in every gang {tag}", np.array_equal(out["q"], np.full(50, grid)),
              out["q"])
        _, s, e = c.run(6, {"wsum": np.int64(0)}, grid, block)
        check(f"worker reduction {tag}", s["wsum"] == 45 * 21, s)
        out, _, e = c.run(7, {"p": np.zeros((10, 32), np.int64), "rowsum": np.zeros(10, np.int64)},
                          grid, block)
        i, j = np.indices((10, 32))
        check(f"gang body reads its vector loop's stores {tag}",
              np.array_equal(out["rowsum"], (i + j).sum(axis=1)), out["rowsum"])
        mat = rng.random((10, 50))
        _, s, e = c.run(8, {"mv": -1.0, "mat": mat}, grid, block)
        check(f"vector reduction left to the gang loop {tag}", s["mv"] == mat.max(), s)
        _, s, e = c.run(9, {"cnt": np.int64(0), "mat": mat}, grid, block)
        check(f"vector reduction kept by the gang body {tag}",
              s["cnt"] == (mat > 0.5).sum() + 10000, s)
        out, _, e = c.run(10, {"tri": np.zeros((20, 37), np.int64)}, grid, block)
        want = np.zeros((20, 37), np.int64)
        for i in range(20):
            want[i, i:37:3] += i + 1
        check(f"split gang, bounds from the gang {tag}",
              e is None and np.array_equal(out["tri"], want), out["tri"])
    each_shape(go)


def case_semantics():
    c = Case("semantics")
    args = {"r": np.zeros(40, np.int64), "f": np.zeros(40), "g": np.zeros(10, np.float32),
            "big": np.int32(2**31 - 1), "small": np.int32(-2**31), "m1": np.int32(-1),
            "seven": np.int32(-7), "two": np.int32(2), "one": np.int32(1), "s33": np.int32(33),
            "sneg": np.int32(-1), "lbig": np.int64(2**63 - 1), "lsmall": np.int64(-2**63),
            "lm1": np.int64(-1), "s65": np.int64(65), "nan": float("nan"), "huge": 1e300,
            "fx": 2.7, "fy": -2.5, "f32a": np.float32(16777216.0), "f32b": np.float32(1.0),
            "f32c": np.float32(0.1), "t": True}
    MIN32, MIN64 = -2**31, -2**63
    # r[14] is `-huge as i64`: `as` binds tighter than `-`, so -(i64::MAX).
    r_want = [MIN32, MIN32, 0, -3, -1, 2, MIN32, -2**30, MIN64, MIN64, 0, -2, 0, 2**31 - 1,
              -(2**63 - 1), 2, -2, 0, 2, MIN32, -68, 0, 1, 1, 1, 1, 0]
    fma = float(Fraction(2.7) * Fraction(2.7) + Fraction(-2.5))
    f_want = [-3.0, -2.0, -2.0, -3.0, 3.0, math.sqrt(2.0), -3.0, fma, 2.7 * 2.7 + -2.5, 1.0, 2.0,
              2.5, 2147483647.0, float(2**63), 1.0, float("inf"), 16777216.0, 1.0 / 3.0]
    f32 = np.float32
    c01 = f32(0.1)
    g_want = [f32(16777216), c01 * c01 + c01, np.sqrt(c01), c01 / f32(3), f32(2.7), f32(-1),
              f32(2**63)]

    def go(grid, block, tag):
        out, _, e = c.run(0, args, grid, block)
        r, f, g = out["r"], out["f"], out["g"]
        bad = [(i, r[i], w) for i, w in enumerate(r_want) if r[i] != w]
        check(f"integer semantics {tag}", e is None and not bad, (e, bad))
        bad = [(i, f[i], w) for i, w in enumerate(f_want) if not (f[i] == w)]
        check(f"f64 semantics {tag}", not bad, bad)
        bad = [(i, g[i], w) for i, w in enumerate(g_want) if g[i] != w]
        check(f"f32 semantics {tag}", not bad, bad)
    each_shape(go)


def case_errors():
    c = Case("errors")
    n = 100

    def go(grid, block, tag):
        _, _, e = c.run(0, {"a": np.zeros(n, np.int64), "n": n}, grid, block)
        check(f"bounds rank 1 {tag}", e is not None and e["kind"] == 1 and e["what"] == "a" and
              e["dim"] == 0 and e["index"] == n and e["shape"] == [n], e)
        _, _, e = c.run(1, {"b": np.zeros((n, 7)), "n": n, "col": 7}, grid, block)
        check(f"bounds rank 2 {tag}", e is not None and e["kind"] == 1 and e["dim"] == 1 and
              e["index"] == 7 and e["shape"] == [n, 7], e)
        d = np.ones(n, np.int64)
        d[57] = 0
        out, _, e = c.run(2, {"d": d, "q": np.zeros(n, np.int64), "n": n}, grid, block)
        check(f"division by zero {tag}", e is not None and e["kind"] == 2 and e["site"] == 16, e)
        out, _, e = c.run(2, {"d": np.ones(n, np.int64), "q": np.zeros(n, np.int64), "n": n},
                          grid, block)
        check(f"no division by zero {tag}", e is None and (out["q"] == 100).all(), e)
        _, _, e = c.run(3, {"h": np.zeros((4, 5), np.int64), "dim": 2}, grid, block)
        check(f"size(h, 2) {tag}", e is not None and e["kind"] == 4 and e["index"] == 2 and
              e["dim"] == 2, e)
        out, _, e = c.run(3, {"h": np.zeros((4, 5), np.int64), "dim": 1}, grid, block)
        check(f"size(h, 1) {tag}", e is None and out["h"][0, 0] == 5, (e, out["h"]))
        _, _, e = c.run(4, {"a": np.zeros(n, np.int64), "s": np.int64(0), "n": n}, grid, block)
        check(f"bounds error in a reduction loop {tag}", e is not None and e["kind"] == 1 and
              e["index"] == n, e)
        _, _, e = c.run(5, {"o": np.zeros((6, 5), np.int64), "u": np.zeros((6, 5, 40), np.int64)},
                        grid, block)
        check(f"bounds error in a row's vector loop {tag}", e is not None and e["kind"] == 1 and
              e["dim"] == 2 and 40 <= e["index"] <= 44, e)
    each_shape(go)


def case_atomics():
    c = Case("atomics")
    n = 1000

    def go(grid, block, tag):
        out, s, e = c.run(0, {"bins": np.zeros(4, np.int64), "total": 0.0, "mx": np.int64(0),
                              "mn": np.int64(1000), "bits": np.int64(0), "n": n}, grid, block)
        check(f"atomic updates {tag}", e is None and list(out["bins"]) == [250] * 4 and
              s == {"total": 500.0, "mx": 999, "mn": 5, "bits": 1023}, (e, out, s))
        _, s, e = c.run(1, {"c": np.int64(1000000), "p": np.int64(1), "q": np.int64(1 << 40),
                            "x": np.int64(255), "y": np.int64(255), "f": np.float32(0),
                            "k": np.int32(0)}, grid, block)
        check(f"atomic forms {tag}", s == {"c": 999940, "p": 1048576, "q": 1048576, "x": 255,
                                            "y": 240, "f": 5.0, "k": -40}, s)
        out, s, e = c.run(2, {"picked": np.zeros(n, np.int64), "count": np.int64(0), "n": n},
                          grid, block)
        got = sorted(out["picked"][: s["count"]])
        check(f"atomic capture {tag}", s["count"] == 334 and got == list(range(0, n, 3)), s)
        out, s, e = c.run(3, {"w": np.zeros(4), "prod": np.ones(4), "seen": np.zeros(n, np.int64),
                              "bins": np.full(4, 250, np.int64), "n": n}, grid, block)
        p = 1.0
        for _ in range(250):
            p *= 1.0078125
        check(f"float atomics, capture, read {tag}", e is None and list(out["w"]) == [62.5] * 4
              and list(out["prod"]) == [p] * 4 and (out["seen"] == 250).all(), (e, out["w"],
                                                                                out["prod"]))
        out, s, e = c.run(4, {"g": np.zeros(8, np.int64)}, grid, block)
        check(f"gang-redundant atomic {tag}", list(out["g"]) == [grid] + [7] * 7, out["g"])
    each_shape(go)


def case_routines():
    c = Case("routines")
    n = 500
    x = np.arange(n, dtype=np.float64)

    def go(grid, block, tag):
        out, _, e = c.run(0, {"x": x, "y": np.zeros(n), "marks": np.zeros(n, np.int64), "n": n},
                          grid, block)
        check(f"seq routines in a vector loop {tag}", e is None and
              np.array_equal(out["y"], 2 * x) and
              np.array_equal(out["marks"], (np.arange(n) % 2 == 0).astype(np.int64)), e)
        out, _, e = c.run(1, {"pos": np.zeros(4, np.int64), "marks": np.zeros(n, np.int64),
                              "x": x}, grid, block)
        # Each gang adds 1 to marks[0] (not atomically: racing gangs may lose updates).
        check(f"seq routines gang-redundant {tag}", e is None and 1 <= out["marks"][0] <= grid and
              list(out["pos"]) == [101, 201, 401, -1], (e, out["pos"], out["marks"][0]))
        r = 60
        mm = rng.random((r, r))
        out, _, e = c.run(2, {"mm": mm, "sums": np.zeros(r), "r": r}, grid, block)
        check(f"vector routine {tag}", e is None and np.allclose(out["sums"], mm.sum(axis=1),
                                                                 rtol=1e-13), e)
        out, _, e = c.run(3, {"mm": mm, "maxes": np.zeros(r), "r": r}, grid, block)
        check(f"worker routine {tag}", e is None and
              np.array_equal(out["maxes"], mm.max(axis=1)), e)
        out, _, e = c.run(4, {"fm": np.zeros((9, 9), np.int64)}, grid, block)
        check(f"gang routine {tag}", e is None and
              np.array_equal(out["fm"], np.arange(81).reshape(9, 9)), out["fm"])
        out, _, e = c.run(5, {"mm": mm, "vs": np.zeros(r), "r": r}, grid, block)
        check(f"vector routine from a worker loop {tag}", e is None and
              np.allclose(out["vs"], mm.sum(axis=1), rtol=1e-13), e)
        out, _, e = c.run(6, {"gs": np.zeros(100), "offset": 0.5, "scale": np.int64(3),
                              "global:offset": (0.5, "f64"), "global:scale": (3, "i64")},
                          grid, block)
        check(f"globals read by routines {tag}", e is None and
              np.array_equal(out["gs"], np.arange(100) * 3 + 0.5), (e, out["gs"][:5]))
    each_shape(go)


def case_kernels():
    c = Case("kernels")

    def go(grid, block, tag):
        out, _, e = c.run(0, {"a": np.zeros(10, np.int64)}, grid, block)
        check(f"kernels single thread {tag}", list(out["a"][:4]) == [5, 6, 7, 0], out["a"])
        out, s, e = c.run(1, {"b": np.zeros(1000, np.int64), "count": np.int64(0)}, grid, block)
        check(f"kernels two loops {tag}", s["count"] == 499500 and
              np.array_equal(out["b"], np.arange(1000)), s)
        out, s, e = c.run(2, {"c": np.zeros(10, np.int64), "s": np.int64(0)}, grid, block)
        check(f"serial reduction {tag}", s["s"] == 285 and
              np.array_equal(out["c"], np.arange(10) ** 2), (s, out))
    each_shape(go)


def case_printf():
    """Print records: each statement's id, its slots' values and types, one record per gang
    where threads run the code redundantly, and the count of records that did not fit."""
    c = Case("printf")

    def f64(bits):
        return float(np.array([bits], np.uint64).view(np.float64)[0])

    def described(pid, kind, text):
        p = c.prints[pid] if pid < len(c.prints) else {}
        return p.get("kind") == kind and p.get("text") == text

    loop_text = "i={} v={} hex={} ok\n"
    for grid, block in [(2, (32, 1)), (3, (7, 5)), (1, (1, 1))]:
        tag = f"grid {grid} block {block}"
        c.run(0, {"v": np.zeros(4), "n": 4}, grid, block)
        got = sorted((int(s[0]), f64(s[1]), int(s[2])) for _, s in c.records)
        check(f"printf records {tag}", got == [(i, float(i), i * 255) for i in range(4)] and
              all(described(pid, "printf", loop_text) for pid, _ in c.records) and
              c.lost == 0, (c.records, c.lost))
        c.run(1, {}, grid, block)
        check(f"print once per gang {tag}", len(c.records) == 1 and
              described(c.records[0][0], "print", "serial {} {} {}\n") and
              [int(x) for x in c.records[0][1]] == [42, 1, 7], c.records)
    c.run(2, {"f": np.float32(0.1), "zero": 0.0}, 1, (1, 1))
    ok = len(c.records) == 1
    if ok:
        s = c.records[0][1]
        f32 = np.array([int(s[1]) & 0xFFFFFFFF], np.uint32).view(np.float32)[0]
        ok = (f64(s[0]) == 0.1 and f32 == np.float32(0.1) and int(s[1]) >> 32 == 0 and
              int(s[2]) == 0x8000000000000000 and f64(s[3]) == 1e16 and math.isnan(f64(s[4]))
              and f64(s[5]) == float("inf") and int(s[6]) == 0 and
              c.prints[c.records[0][0]]["slots"] == ["f64", "f32", "f64", "f64", "f64", "f64",
                                                      "bool"])
    check("print of floats and bools", ok, c.records)
    # A buffer with room for one record of the loop's (32 bytes): the other 3 are counted lost.
    c.out_capacity = 40
    c.run(0, {"v": np.zeros(4), "n": 4}, 2, (32, 1))
    check("full output buffer", len(c.records) == 1 and len(c.records[0][1]) == 3 and
          c.lost == 3 and c.cursor == 128, (c.records, c.lost, c.cursor))
    c.out_capacity = 1 << 20


def ulp_diff(a, b, dtype):
    """Units in the last place between two floats of `dtype` (0 when both are NaN)."""
    if math.isnan(a) and math.isnan(b):
        return 0
    if math.isnan(a) or math.isnan(b):
        return 1 << 60
    ia = int(np.array([a], dtype).view(np.int64 if dtype == np.float64 else np.int32)[0])
    ib = int(np.array([b], dtype).view(np.int64 if dtype == np.float64 else np.int32)[0])
    mask = (1 << 63) if dtype == np.float64 else (1 << 31)
    ia = -(ia & (mask - 1)) if ia < 0 else ia
    ib = -(ib & (mask - 1)) if ib < 0 else ib
    return abs(ia - ib)


def case_math():
    import mpmath
    mpmath.mp.prec = 200
    c = Case("math")
    n = 4096
    r = np.random.default_rng(11)
    special = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 5e-324, -5e-324, 2.2e-308,
               1e-300, -1e-300, 1e-20, -1e-20, 0.5, -0.5, 1.0, -1.0, 2.0, 709.78, 709.79, -745.1,
               -745.2, 1023.99, 1024.0, -1074.0, -1075.5, 22.0, -22.0, 710.47, -710.48, 40.0,
               -40.5, 1e308, -1e308, 0.6931471805599453, -0.6931471805599453]

    def inputs(lo, hi, log=False, positive=False):
        if log:
            v = np.exp(r.uniform(lo, hi, n))
            if not positive:
                v *= r.choice([-1.0, 1.0], n)
        else:
            v = r.uniform(lo, hi, n)
        v[: len(special)] = special
        return v

    ref1 = {"exp": mpmath.exp, "exp2": lambda t: mpmath.power(2, t), "expm1": mpmath.expm1,
            "log": mpmath.log, "log2": lambda t: mpmath.log(t, 2), "log10": mpmath.log10,
            "log1p": mpmath.log1p, "sinh": mpmath.sinh, "cosh": mpmath.cosh,
            "tanh": mpmath.tanh, "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan}
    ranges = {"exp": (-750, 712), "exp2": (-1080, 1030), "expm1": (-45, 712),
              "log": (-745, 709, True, True), "log2": (-745, 709, True, True),
              "log10": (-745, 709, True, True), "log1p": (-1, 3), "sinh": (-712, 712),
              "cosh": (-712, 712), "tanh": (-25, 25), "sin": (-20, 709, True),
              "cos": (-20, 709, True), "tan": (-20, 709, True)}

    def reference(name, a, b=None):
        if math.isnan(a) or (b is not None and math.isnan(b)):
            if name == "hypot" and (math.isinf(a) or math.isinf(b)):
                return float("inf")
            return float("nan")
        if name == "hypot":
            return math.hypot(a, b)
        if name == "fmod":
            return math.fmod(a, b) if b != 0 and not math.isinf(a) else float("nan")
        try:
            if math.isinf(a):
                if name in ("sin", "cos", "tan"):
                    return float("nan")
                return {"exp": (0.0 if a < 0 else a), "exp2": (0.0 if a < 0 else a),
                        "expm1": (-1.0 if a < 0 else a), "sinh": a, "cosh": abs(a),
                        "tanh": math.copysign(1.0, a)}.get(name, a if a > 0 else float("nan"))
            if name in ("log", "log2", "log10") and a <= 0:
                return float("nan") if a < 0 else -float("inf")
            if name == "log1p" and a <= -1:
                return float("nan") if a < -1 else -float("inf")
            if a == 0 and name in ("expm1", "log1p", "sinh", "tanh"):
                return a
            if name in ("sin", "cos", "tan"):
                if math.isinf(a):
                    return float("nan")
                with mpmath.workprec(2300):
                    return float(ref1[name](mpmath.mpf(a)))
            v = ref1[name](mpmath.mpf(a))
            return float(v)
        except (OverflowError, ValueError):
            return float("inf")

    names = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sinh", "cosh", "tanh"]
    for region, name in enumerate(names):
        x = inputs(*ranges[name])
        out, _, e = c.run(region, {"x": x, "y": np.zeros(n), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["y"][i], reference(name, x[i]), np.float64) for i in range(n))
        check(f"math {name} f64 within 2 ulp (max {worst})", e is None and worst <= 2, e)
        xf = x.astype(np.float32)
        out, _, e = c.run(13 + region, {"xf": xf, "yf": np.zeros(n, np.float32), "n": n}, 64,
                          (128, 1))
        worst = max(ulp_diff(out["yf"][i], np.float32(reference(name, float(xf[i]))), np.float32)
                    for i in range(n))
        check(f"math {name} f32 within 2 ulp (max {worst})", e is None and worst <= 2, e)
    for k, name in enumerate(["sin", "cos", "tan"]):
        x = inputs(*ranges[name])
        x[40:140] = r.uniform(-4, 4, 100)
        x[140:240] = np.array([355.0, 103993.0, 6381956970095103.0 * 2.0**797, 1e22] * 25)
        out, _, e = c.run(25 + k, {"x": x, "y": np.zeros(n), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["y"][i], reference(name, x[i]), np.float64) for i in range(n))
        check(f"math {name} f64 within 2 ulp (max {worst})", e is None and worst <= 2, e)
        xf = x.astype(np.float32)
        out, _, e = c.run(28 + k, {"xf": xf, "yf": np.zeros(n, np.float32), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["yf"][i], np.float32(reference(name, float(xf[i]))), np.float32)
                    for i in range(n))
        check(f"math {name} f32 within 2 ulp (max {worst})", e is None and worst <= 2, e)
    for region, name in [(10, "hypot"), (11, "fmod"), (12, "fmod")]:
        x = inputs(-700, 700, True)
        zz = inputs(-700, 700, True)[::-1].copy()
        if region == 12:
            zz = r.uniform(-10, 10, n)
        out, _, e = c.run(region, {"x": x, "z": zz, "y": np.zeros(n), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["y"][i], reference(name, x[i], zz[i]), np.float64)
                    for i in range(n))
        op = "%" if region == 12 else name
        check(f"math {op} f64 (max {worst} ulp)", e is None and worst <= (1 if name == "hypot"
                                                                           else 0), e)
    for region, name in [(23, "hypot"), (24, "fmod")]:
        xf = inputs(-80, 80, True).astype(np.float32)
        zf = inputs(-80, 80, True)[::-1].astype(np.float32)
        out, _, e = c.run(region, {"xf": xf, "zf": zf, "yf": np.zeros(n, np.float32), "n": n},
                          64, (128, 1))
        worst = max(ulp_diff(out["yf"][i], np.float32(reference(name, float(xf[i]),
                                                                float(zf[i]))), np.float32)
                    for i in range(n))
        check(f"math {name} f32 (max {worst} ulp)", e is None and worst <= 1, e)
    # asin acos atan cbrt (f64: regions 31-34, f32: 37-40), atan2 pow (35-36, 41-42).
    ranges2 = {"asin": (-1.2, 1.2), "acos": (-1.2, 1.2), "atan": (-25, 25, True),
               "cbrt": (-745, 709, True)}
    for k, name in enumerate(["asin", "acos", "atan", "cbrt"]):
        x = inputs(*ranges2[name])
        out, _, e = c.run(31 + k, {"x": x, "y": np.zeros(n), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["y"][i], reference2(name, x[i]), np.float64) for i in range(n))
        check(f"math {name} f64 within 2 ulp (max {worst})", e is None and worst <= 2, e)
        xf = x.astype(np.float32)
        out, _, e = c.run(37 + k, {"xf": xf, "yf": np.zeros(n, np.float32), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["yf"][i], np.float32(reference2(name, float(xf[i]))),
                             np.float32) for i in range(n))
        check(f"math {name} f32 within 2 ulp (max {worst})", e is None and worst <= 2, e)
    for k, name in enumerate(["atan2", "pow"]):
        if name == "atan2":
            x = inputs(-25, 25, True)
            zz = inputs(-25, 25, True)[::-1].copy()
        else:
            x = inputs(-4, 4, True)
            zz = r.uniform(-60, 60, n)
            zz[1::2] = np.round(zz[1::2])
            zz[: len(special)] = special[::-1]
        out, _, e = c.run(35 + k, {"x": x, "z": zz, "y": np.zeros(n), "n": n}, 64, (128, 1))
        worst = max(ulp_diff(out["y"][i], reference2(name, x[i], zz[i]), np.float64)
                    for i in range(n))
        check(f"math {name} f64 within 2 ulp (max {worst})", e is None and worst <= 2, e)
        xf, zf = x.astype(np.float32), zz.astype(np.float32)
        out, _, e = c.run(41 + k, {"xf": xf, "zf": zf, "yf": np.zeros(n, np.float32), "n": n},
                          64, (128, 1))
        worst = max(ulp_diff(out["yf"][i], np.float32(reference2(name, float(xf[i]),
                                                                 float(zf[i]))), np.float32)
                    for i in range(n))
        check(f"math {name} f32 within 2 ulp (max {worst})", e is None and worst <= 2, e)


def reference2(name, a, b=None):
    """The correctly rounded asin acos atan cbrt atan2 pow (mpmath at 200 bits), with C99's
    special values (numpy's and Python's C library functions)."""
    import mpmath
    if name in ("atan2", "pow"):
        fa, fb = np.float64(a), np.float64(b)
        with np.errstate(all="ignore"):
            c99 = float(np.arctan2(fa, fb) if name == "atan2" else np.power(fa, fb))
        if not all(math.isfinite(t) and t != 0 for t in (a, b)) or (name == "pow" and (
                a < 0 and b != math.floor(b))) or not math.isfinite(c99) or c99 == 0:
            return c99
        if name == "atan2":
            return float(mpmath.atan2(mpmath.mpf(a), mpmath.mpf(b)))
        v = mpmath.power(mpmath.mpf(abs(a)), mpmath.mpf(b))
        odd = a < 0 and b == math.floor(b) and int(b) % 2 == 1
        return -float(v) if odd else float(v)
    if math.isnan(a):
        return a
    if name == "cbrt":
        if a == 0 or math.isinf(a):
            return a
        return math.copysign(float(mpmath.cbrt(mpmath.mpf(abs(a)))), a)
    if name == "atan":
        if math.isinf(a):
            return math.copysign(math.pi / 2, a)
        return a if a == 0 else float(mpmath.atan(mpmath.mpf(a)))
    if abs(a) > 1:
        return float("nan")
    if name == "asin":
        return a if a == 0 else float(mpmath.asin(mpmath.mpf(a)))
    return float(mpmath.acos(mpmath.mpf(a)))


def case_private():
    c = Case("private")
    n, m = 100, 16
    w = np.array([1, 2, 3, 4], np.int64)
    flags = np.array([1, 0, 1], np.uint8)

    def go(grid, block, tag):
        out, _, e = c.run(0, {"w": w, "out": np.zeros(n, np.int64), "n": n}, grid, block)
        want = np.array([11 + (11 if i % 4 == 0 else w[i % 4]) for i in range(n)])
        check(f"firstprivate gang copies {tag}", e is None and np.array_equal(out["out"], want)
              and np.array_equal(out["w"], w), (e, out["out"][:8], out["w"]))
        out, _, e = c.run(1, {"t": np.zeros(m, np.int64), "out2": np.zeros((n, m), np.int64),
                              "n": n, "m": m}, grid, block)
        i, j = np.indices((n, m))
        check(f"private gang copy shared by vector loops {tag}",
              e is None and np.array_equal(out["out2"], i * 100 + m - 1 - j), e)
        out, _, e = c.run(2, {"u": np.zeros(m), "out3": np.zeros((n, m)), "n": n, "m": m},
                          grid, block)
        check(f"private gang-loop copy {tag}",
              e is None and np.array_equal(out["out3"], 2.0 * i + 0.5 * (m - 1)), e)
        out, _, e = c.run(3, {"v": np.zeros(m, np.int32), "out4": np.zeros(n, np.int32),
                              "n": n, "m": m}, grid, block)
        check(f"private worker-loop copy {tag}",
              e is None and np.array_equal(out["out4"], 16 * np.arange(n) + 120), e)
        out, _, e = c.run(4, {"r": np.zeros((2, 3), np.int64), "out5": np.zeros(n, np.int64),
                              "n": n}, grid, block)
        check(f"private vector-loop copy, rank 2 {tag}",
              e is None and np.array_equal(out["out5"], 20 * np.arange(n) + 5), e)
        out, _, e = c.run(5, {"p": np.zeros(2, np.int32), "out6": np.zeros((n, 4), np.int32),
                              "n": n}, grid, block)
        i4, j4 = np.indices((n, 4))
        check(f"private seq-loop copy in a vector loop {tag}",
              e is None and np.array_equal(out["out6"], 10 * i4 + j4), e)
        out, _, e = c.run(6, {"flags": flags, "out7": np.zeros(n, np.int32), "n": n}, grid,
                          block)
        check(f"firstprivate bool array {tag}", e is None and
              np.array_equal(out["out7"], np.ones(n, np.int32)) and
              np.array_equal(out["flags"], flags), (e, out["out7"][:6]))
        _, _, e = c.run(7, {"q": np.zeros(3), "out8": np.zeros(n), "n": n}, grid, block)
        check(f"bounds error on a private array {tag}", e is not None and e["kind"] == 1 and
              e["what"] == "q" and e["index"] == 3 and e["shape"] == [3], e)
    each_shape(go)


def timed(c, region, args, grid, block, runs=20):
    """Mean kernel time in ms over `runs` launches (after a warm-up), by CUDA events."""
    launch, collect = c.prepare(region, args, grid, block)
    launch()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(runs):
        launch()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) / runs, collect()


def case_perf():
    """Kernel times with the runtime's default launch shape (16 blocks per SM, 128 threads),
    against the memory traffic each kernel needs at least."""
    sms = cp.cuda.runtime.getDeviceProperties(0)["multiProcessorCount"]
    grid = sms * 16
    n = 1 << 24
    x = np.ones(n, np.float32)
    ms, _ = timed(Case("saxpy"), 0, {"x": x, "y": x.copy(), "a": np.float32(2), "n": n}, grid,
                  (128, 1))
    print(f"perf saxpy 2^24 f32: {ms:.4f} ms, {3 * 4 * n / ms / 1e6:.0f} GB/s", flush=True)
    xd = np.ones(n)
    ms, (_, s, _) = timed(Case("reduce"), 0, {"x": xd, "s": 0.0, "n": n}, grid, (128, 1))
    print(f"perf sum 2^24 f64: {ms:.4f} ms, {8 * n / ms / 1e6:.0f} GB/s (sum {s['s']})",
          flush=True)
    m = 4096
    A = np.ones((m, m))
    ms, (_, s, _) = timed(Case("jacobi"), 0, {"A": A, "Anew": A.copy(), "err": 0.0, "n": m,
                                              "m": m}, grid, (128, 1))
    print(f"perf jacobi sweep 4096^2 f64 with max reduction: {ms:.4f} ms, "
          f"{2 * 8 * m * m / ms / 1e6:.0f} GB/s", flush=True)
    ms, _ = timed(Case("collapse"), 0, {"a": np.zeros((4096, 4096), np.int64), "n": 4096,
                                        "m": 4096}, grid, (128, 1))
    print(f"perf collapse(2) store 4096^2 i64: {ms:.4f} ms, {8 * 4096 * 4096 / ms / 1e6:.0f} GB/s",
          flush=True)


for case in [case_saxpy, case_reduce, case_jacobi, case_collapse, case_levels, case_semantics,
             case_errors, case_atomics, case_routines, case_kernels, case_printf, case_math,
             case_private, case_perf]:
    try:
        case()
    except Exception as ex:  # a case that cannot run is a failure, not a crash of the rest
        failures.append(f"{case.__name__}: {type(ex).__name__}: {ex}")
        print(f"FAIL {case.__name__}: {type(ex).__name__}: {ex}", flush=True)

print(f"{passed} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
