#!/usr/bin/env python3
"""Writes tests/conformance/directive_atomic_stress_<T>.acc and its .out for T in i32 i64 f32
f64: every atomic form (update in each spelling, read, write, capture in both orders, a capture
with a write) on every kind of location (an array element, a `copy` scalar, a global scalar in
host code, an element reached through a routine's parameter), with the captured value going to
a local, an array element and a `copy` scalar, over 100,000 iterations on every gang.

The expected output is computed here, in Python, from the same definitions: totals exactly, and
for captures the facts every valid serial order shares (tickets form a permutation, a swap
chain loses no value). Run: python3 tests/conformance/oracle/atomic_stress.py
"""
from fractions import Fraction
from pathlib import Path

N = 100_000
BUCKETS = 8
TOTALS = 10
HERE = Path(__file__).resolve().parent.parent

INT_TYPES = ("i32", "i64")


def val(i):
    return i % 7


def val2(i):
    return (i * 7919) % 1000


def factor(i, t):
    if t in INT_TYPES:
        return -1 if i % 997 == 0 else 1
    if i < 64:
        return Fraction(2)
    if i < 96:
        return Fraction(1, 2)
    return Fraction(1)


def divisor(i):
    return 2 if i < 16 else 1


def wrap(v, t):
    bits = 32 if t == "i32" else 64
    v &= (1 << bits) - 1
    return v - (1 << bits) if v >> (bits - 1) else v


def expected(t):
    ints = t in INT_TYPES
    lines = []
    buckets = [[i for i in range(N) if i % BUCKETS == b] for b in range(BUCKETS)]
    hist = [sum(val(i) for i in bs) for bs in buckets]
    lines.append(" ".join(map(str, hist)))  # hist (x op= e)
    lines.append(" ".join(map(str, hist)))  # hist2 (x = x op e)
    lines.append(" ".join(map(str, hist)))  # hist3 (x = e op x)
    lines.append(" ".join(str(1_000_000 - h) for h in hist))  # down
    lines.append(" ".join(str(max(val2(i) for i in bs)) for bs in buckets))
    lines.append(" ".join(str(min(val2(i) for i in bs)) for bs in buckets))
    muls = []
    for bs in buckets:
        p = Fraction(1)
        for i in bs:
            p *= factor(i, t)
        muls.append(p)
    lines.append(" ".join(str(int(p)) for p in muls))
    divs = []
    for bs in buckets:
        d = 1 << 20
        for i in bs:
            d //= divisor(i)
        divs.append(d)
    lines.append(" ".join(map(str, divs)))
    if ints:
        bor = []
        band = []
        bxor = []
        for bs in buckets:
            o, a, x = 0, -1, 0
            for i in bs:
                o |= 1 << (i % 31)
                a &= -1 ^ (1 << (i % 29))
                x ^= i
            bor.append(wrap(o, t))
            band.append(wrap(a, t))
            bxor.append(wrap(x, t))
        lines.append(" ".join(map(str, bor)))
        lines.append(" ".join(map(str, band)))
        lines.append(" ".join(map(str, bxor)))
    # the `copy` scalars: the same updates over all iterations
    total = sum(val(i) for i in range(N))
    cmul = Fraction(1)
    for i in range(N):
        cmul *= factor(i, t)
    cdiv = 1 << 20
    for i in range(N):
        cdiv //= divisor(i)
    cells = [total, 1_000_000 - total, max(val2(i) for i in range(N)),
             min(val2(i) for i in range(N)), int(cmul), cdiv]
    if ints:
        o, a, x = 0, -1, 0
        for i in range(N):
            o |= 1 << (i % 31)
            a &= -1 ^ (1 << (i % 29))
            x ^= i
        cells += [wrap(o, t), wrap(a, t), wrap(x, t)]
    lines.append(" ".join(map(str, cells)))
    # reads that saw an impossible value; writes
    lines.append("0 0")
    lines.append(" ".join(str(3 * b) for b in range(BUCKETS)) + " 42")
    # captures: counters' final values, then the number of broken facts (all 0)
    per_total = [len([i for i in range(N) if i % TOTALS == k]) for k in range(TOTALS)]
    counts = [len(bs) for bs in buckets]
    lines.append(f"{N} {N} {' '.join(map(str, counts))} 0 {N}")
    lines.append(" ".join(str(1_000_000 - 3 * c) for c in per_total))
    lines.append("0 0 0 0 0 0 0 0")
    lines.append(f"{2 * 1000}")  # the global bumped in host code: 1000 calls of +2
    return "\n".join(lines) + "\n"


def script(t):
    ints = t in INT_TYPES
    z = f"0{t}" if ints else f"0.0{t}"
    lines = [
        f"// Every atomic form on {t} locations (elements, `copy` scalars, a global in host code,",
        "// an element through a routine's parameter), captured values into locals, elements and",
        "// `copy` scalars, 100,000 iterations on all gangs: exact totals, and for captures the",
        "// facts every serial order shares. Generated, with its .out, by oracle/atomic_stress.py.",
        f"let n = {N}",
        f"let vals = zeros({t}, n)",
        f"let vals2 = zeros({t}, n)",
        f"let factors = zeros({t}, n)",
        f"let divisors = zeros({t}, n)",
        "for i in 0..n {",
        f"    vals[i] = (i % 7) as {t}",
        f"    vals2[i] = ((i * 7919) % 1000) as {t}",
    ]
    if ints:
        lines.append(f"    factors[i] = if i % 997 == 0 {{ -1 as {t} }} else {{ 1 as {t} }}")
    else:
        lines.append(
            f"    factors[i] = if i < 64 {{ 2 as {t} }} else {{ if i < 96 {{ 0.5 as {t} }} else {{ 1 as {t} }} }}"
        )
    lines += [
        f"    divisors[i] = if i < 16 {{ 2 as {t} }} else {{ 1 as {t} }}",
        "}",
        f"let hist = zeros({t}, {BUCKETS})",
        f"let hist2 = zeros({t}, {BUCKETS})",
        f"let hist3 = zeros({t}, {BUCKETS})",
        f"let down = fill(1000000 as {t}, {BUCKETS})",
        f"let mx = zeros({t}, {BUCKETS})",
        f"let mn = fill(1000 as {t}, {BUCKETS})",
        f"let mul = fill(1 as {t}, {BUCKETS})",
        f"let dv = fill((1 << 20) as {t}, {BUCKETS})",
        f"let bor = zeros({t}, {BUCKETS})",
        f"let band = fill(-1 as {t}, {BUCKETS})",
        f"let bxor = zeros({t}, {BUCKETS})",
        f"let w = zeros({t}, {BUCKETS})",
        "let badread = zeros(i64, 2)",
        f"let cadd = {z}",
        f"let cdown = 1000000 as {t}",
        f"let cmx = {z}",
        f"let cmn = 1000 as {t}",
        f"let cmul = 1 as {t}",
        f"let cdiv = (1 << 20) as {t}",
        f"let cor = {z}",
        f"let cand = -1 as {t}",
        f"let cxor = {z}",
        f"let cw = {z}",
        "acc parallel loop copy(hist, hist2, hist3, down, mx, mn, mul, dv, bor, band, bxor, w, badread) \\",
        "    copy(cadd, cdown, cmx, cmn, cmul, cdiv, cor, cand, cxor, cw) copyin(vals, vals2, factors, divisors)",
        "for i in 0..n {",
        f"    let b = i % {BUCKETS}",
        "    let v = vals[i]",
        "    acc atomic update",
        "    hist[b] += v",
        "    acc atomic",
        "    hist2[b] = hist2[b] + v",
        "    acc atomic",
        "    hist3[b] = v + hist3[b]",
        "    acc atomic",
        "    down[b] -= v",
        "    acc atomic",
        "    mx[b] = max(mx[b], vals2[i])",
        "    acc atomic",
        "    mn[b] = min(vals2[i], mn[b])",
        "    acc atomic",
        "    mul[b] *= factors[i]",
        "    acc atomic",
        "    dv[b] = dv[b] / divisors[i]",
        "    acc atomic",
        "    cadd += v",
        "    acc atomic",
        "    cdown = cdown - v",
        "    acc atomic",
        "    cmx = max(cmx, vals2[i])",
        "    acc atomic",
        "    cmn = min(cmn, vals2[i])",
        "    acc atomic",
        "    cmul = factors[i] * cmul",
        "    acc atomic",
        "    cdiv /= divisors[i]",
    ]
    if ints:
        lines += [
            f"    let bit = (1 << (i % 31)) as {t}",
            f"    let mask = (-1 ^ (1 << (i % 29))) as {t}",
            "    acc atomic",
            "    bor[b] |= bit",
            "    acc atomic",
            "    band[b] = band[b] & mask",
            "    acc atomic",
            f"    bxor[b] = (i as {t}) ^ bxor[b]",
            "    acc atomic",
            "    cor = cor | bit",
            "    acc atomic",
            "    cand &= mask",
            "    acc atomic",
            f"    cxor ^= i as {t}",
        ]
    lines += [
        f"    let r = {z}",
        "    acc atomic read",
        "    r = hist[b]",
        "    if r < 0 || r > 60000 {",
        "        acc atomic",
        "        badread[0] += 1",
        "    }",
        "    acc atomic read",
        "    r = cadd",
        "    if r < 0 || r > 300000 {",
        "        acc atomic",
        "        badread[1] += 1",
        "    }",
        "    acc atomic write",
        f"    w[b] = (b * 3) as {t}",
        "    acc atomic write",
        "    cw = 42",
        "}",
    ]
    arrays = ["hist", "hist2", "hist3", "down", "mx", "mn", "mul", "dv"]
    if ints:
        arrays += ["bor", "band", "bxor"]
    lines.append("fn show(a: %s[]) {" % t)
    lines.append("    for k in 0..len(a) {")
    lines.append('        printf("%d", a[k] as i64)')
    lines.append('        if k + 1 < len(a) { printf(" ") } else { printf("\\n") }')
    lines.append("    }")
    lines.append("}")
    for a in arrays:
        lines.append(f"show({a})")
    cells = ["cadd", "cdown", "cmx", "cmn", "cmul", "cdiv"]
    if ints:
        cells += ["cor", "cand", "cxor"]
    lines.append("print(" + ", ".join(f"{c} as i64" for c in cells) + ")")
    lines.append("print(badread[0], badread[1])")
    lines.append("for k in 0..len(w) { printf(\"%d \", w[k] as i64) }")
    lines.append("print(cw as i64)")
    # captures
    lines += [
        "",
        "// Captures. Tickets from a counter are a permutation of 0..n-1 (read first) or 1..n",
        "// (update first); a swap chain's captured values and the final value are the initial",
        "// value and every written value, each once.",
        "acc routine seq",
        f"fn take(c: {t}[]) -> {t} {{",
        f"    let mine = {z}",
        "    acc atomic capture",
        "    { mine = c[0]; c[0] += 1 }",
        "    return mine",
        "}",
        f"let ctr = zeros({t}, 1)",
        f"let cctr = {z}",
        f"let ctr3 = zeros({t}, {BUCKETS})",
        f"let cdn = n as {t}",
        f"let sw = fill(-1 as {t}, 1)",
        f"let rctr = zeros({t}, 1)",
        f"let totals = fill(1000000 as {t}, {TOTALS})",
        f"let got1 = zeros({t}, n)",
        f"let got2 = zeros({t}, n)",
        f"let got3 = zeros({t}, n)",
        f"let got4 = zeros({t}, n)",
        f"let got5 = zeros({t}, n)",
        f"let got6 = zeros({t}, n)",
        f"let got7 = zeros({t}, n)",
        f"let last = {z}",
        f"let five = 5 as {t}",
        "acc parallel copy(ctr, cctr, ctr3, cdn, sw, rctr, totals, got1, got2, got3, got4, got5, got6, got7, last, five)",
        "{",
        "    acc loop gang vector",
        "    for i in 0..n {",
        f"        let b = i % {BUCKETS}",
        f"        let t1 = {z}",
        "        acc atomic capture",
        "        { t1 = ctr[0]; ctr[0] += 1 }",
        "        got1[i] = t1",
        "        acc atomic capture",
        "        { got2[i] = cctr; cctr = cctr + 1 }",
        "        acc atomic capture",
        "        { ctr3[b] += 1; got3[i] = ctr3[b] }",
        f"        let t4 = {z}",
        "        acc atomic capture",
        "        { cdn -= 1; t4 = cdn }",
        "        got4[i] = t4",
        "        acc atomic capture",
        f"        {{ got5[i] = sw[0]; sw[0] = i as {t} }}",
        f"        acc atomic capture",
        f"        {{ got6[i] = totals[i % {TOTALS}]; totals[i % {TOTALS}] -= 3 }}",
        "        got7[i] = take(rctr)",
        "        acc atomic capture",
        "        { last = five; five = max(five, 5) }",
        "    }",
        "}",
        "// how often each value was seen",
        "fn seen(got: %s[], lo: i64, span: i64) -> i64[] {" % t,
        "    let s = zeros(i64, span)",
        "    for i in 0..len(got) {",
        "        let k = got[i] as i64 - lo",
        "        if k >= 0 && k < span { s[k] += 1 }",
        "    }",
        "    return s",
        "}",
        "fn not_once(s: i64[]) -> i64 {",
        "    let bad = 0",
        "    for k in 0..len(s) { if s[k] != 1 { bad += 1 } }",
        "    return bad",
        "}",
        "// update first, per bucket: tickets 1..count of the bucket",
        "fn bucket_bad(got: %s[], buckets: i64) -> i64 {" % t,
        "    let bad = 0",
        "    for b in 0..buckets {",
        "        let count = (len(got) - b + buckets - 1) / buckets",
        "        let s = zeros(i64, count)",
        "        for i in b..len(got) step buckets {",
        "            let k = got[i] as i64 - 1",
        "            if k >= 0 && k < count { s[k] += 1 } else { bad += 1 }",
        "        }",
        "        bad += not_once(s)",
        "    }",
        "    return bad",
        "}",
        "// captured old values of a bucket decremented by 3 from 1000000: 1000000 - 3k, each k once",
        "fn totals_bad(got: %s[], buckets: i64) -> i64 {" % t,
        "    let bad = 0",
        "    for b in 0..buckets {",
        "        let count = (len(got) - b + buckets - 1) / buckets",
        "        let s = zeros(i64, count)",
        "        for i in b..len(got) step buckets {",
        "            let d = 1000000 - got[i] as i64",
        "            if d % 3 == 0 && d / 3 >= 0 && d / 3 < count { s[d / 3] += 1 } else { bad += 1 }",
        "        }",
        "        bad += not_once(s)",
        "    }",
        "    return bad",
        "}",
        "let chain = seen(got5, -1, n + 1)",
        "chain[sw[0] as i64 + 1] += 1",
        "print(ctr[0] as i64, cctr as i64, "
        + ", ".join(f"ctr3[{b}] as i64" for b in range(BUCKETS))
        + ", cdn as i64, rctr[0] as i64)",
        "for k in 0..len(totals) { printf(\"%d\", totals[k] as i64); if k + 1 < len(totals) { printf(\" \") } }",
        'printf("\\n")',
        "print(not_once(seen(got1, 0, n)), not_once(seen(got2, 0, n)), bucket_bad(got3, 8), \\",
        "    not_once(seen(got4, 0, n)), not_once(chain), totals_bad(got6, 10), \\",
        "    not_once(seen(got7, 0, n)), if last as i64 == 5 { 0 } else { 1 })",
        "",
        "// a global scalar updated atomically in host code",
        f"let g = {z}",
        "fn bump() {",
        "    acc atomic update",
        "    g += 2",
        "}",
        "for k in 0..1000 { bump() }",
        "print(g as i64)",
    ]
    return "\n".join(lines) + "\n"


def main():
    for t in ("i32", "i64", "f32", "f64"):
        name = HERE / f"directive_atomic_stress_{t}"
        name.with_suffix(".acc").write_text(script(t))
        name.with_suffix(".out").write_text(expected(t))


if __name__ == "__main__":
    main()
