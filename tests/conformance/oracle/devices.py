"""Expected outputs of the `devices(…)` scripts (LANGUAGE.md 7.11) and of examples/jacobi_multi.acc.

A construct with `devices(…)` must give the results it gives without the clause, so each function
below transcribes its script into plain sequential Python (the clause changes nothing) and
returns its standard output as a list of lines. Integers are small enough that no i64 wraps;
floats are exact (multiples of powers of two) or, in Jacobi, computed in the scripts' order with
IEEE doubles as Python has them (no contraction). Run `python3 devices.py` to (re)write the
`.out` files; `--check` compares instead of writing; names select some tests only.
"""
import os
import sys

from accfmt import f32, fmt_array, fmt_bool as B, fmt_f32 as F32, fmt_f64 as F64, write_or_check

HERE = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE = os.path.dirname(HERE)
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(CONFORMANCE)), "examples")
TESTS = {}


def test(directory):
    def register(fn):
        TESTS[fn.__name__] = (directory, fn)
        return fn
    return register


def show(a):
    """The scripts' `show(a)`: the elements separated by spaces."""
    return " ".join(str(v) for v in a)


def flat(rows):
    return [v for row in rows for v in row]


def grid(n, m, v=0):
    return [[v] * m for _ in range(n)]


def cdiv(a, b):
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def crem(a, b):
    return a - b * cdiv(a, b)


def srange(start, end, step=1, inclusive=False):
    """acc's `for j in start..end step s` (`..=` with inclusive) for s > 0."""
    return range(start, end + 1 if inclusive else end, step)


# --------------------------------------------------------------------------------------------

@test(CONFORMANCE)
def directive_devices_uneven():
    out = []
    a = [j * j + 1 for j in range(7)]
    out.append(show(a))
    b = [[10 * j + i + a[j + 4] for i in range(3)] for j in range(2)]
    out.append(fmt_array(flat(b), [2, 3], "i64"))

    n = 13
    u = [crem(j * 7, 5) for j in range(n)]
    v = [-1] * n
    for t in range(5):
        for j in range(1, n - 1):
            v[j] = u[j - 1] + u[j] * 2 + u[j + 1] + t
        for j in range(1, n - 1):
            u[j] = crem(v[j], 11)
    out += [show(u), show(v)]

    w = [0, 0]
    z = [0] * 5
    for j in range(2):
        w[j] = w[j] + 5 + j
    for j in range(2):
        w[j] = w[j] * 3
    for j in range(3, 4):
        z[j] = w[1] + 100
    for j in range(4, 2):
        z[j] = 99
    for j in range(2):
        z[j + 1] = z[j + 1] + w[j] * 10
    out += [show(w), show(z)]
    return out


@test(CONFORMANCE)
def directive_devices_stride():
    out = []
    n = 40
    x = [crem(i * i, 17) for i in range(n)]
    y = [0] * n
    for j in srange(3, 18, 2):
        y[2 * j + 1] = x[2 * j] + x[2 * j + 1] * 2 + x[2 * j + 2] * 3
    out.append(show(y))
    z = grid(n, 2)
    for j in srange(1, 13, 3, inclusive=True):
        z[3 * j - 3][0] = j
        z[3 * j - 2][1] = x[j] + x[j + 1] + 1
    out.append(show(flat(z)))
    w = [0] * n
    for j in srange(2, 19, 3):
        y[2 * j] = x[j] * 100 + x[j + 1]
    for j in srange(1, 12, 2):
        w[j] = y[3 * j] + y[3 * j + 1] + y[3 * j + 2]
    out += [show(y), show(w)]
    return out


@test(CONFORMANCE)
def directive_devices_clauses():
    out = []
    n = 23
    x = [3 * i + 1 for i in range(n)]
    y = [100 + i for i in range(n)]
    z = [-1] * n
    for j in range(n):
        y[j] = y[j] + x[j]
    out.append(show(y))
    for j in range(3, 20):
        z[j] = x[j - 1] + x[j + 1]
        y[j] = y[j] * 2 + z[j]
    out += [show(z), show(y)]
    o = [x[j] * x[j] - j for j in range(n)]
    out.append(show(o))
    m = 4
    A = [[j * 10 + i for i in range(m)] for j in range(11)]
    Bm = [[-j] * m for j in range(11)]
    for j in range(2, 9):
        for i in range(m):
            Bm[j][i] = Bm[j][i] + A[j - 1][i] + A[j + 1][i]
    out.append(show(flat(Bm)))
    return out


@test(CONFORMANCE)
def directive_devices_gather():
    out = []
    n = 17
    x = [i * i for i in range(n)]
    idx = [(i * 5 + 3) % n for i in range(n)]
    y = [x[idx[j]] * 100 + x[n - 1 - j] for j in range(n)]
    out.append(show(y))
    m = 3
    Bm = [[j * 10 + i for i in range(m)] for j in range(n)]
    C = [[Bm[idx[j]][i] + Bm[j][m - 1 - i] * 1000 for i in range(m)] for j in range(n)]
    out.append(show(flat(C)))
    for t in range(3):
        for j in range(n):
            x[j] = x[j] + j * (t + 1)
        for j in range(n):
            y[j] = y[j] + x[idx[j]]
    out += [show(x), show(y)]
    return out


@test(CONFORMANCE)
def directive_devices_reduction_ops():
    out = []
    n = 11
    v = [crem(i * 29, 13) - 6 for i in range(n)]
    f = [vi * 0.375 - 1.0 for vi in v]
    g = [f32(f32(vi * 1.5) + 0.25) for vi in v]

    s32 = 7 + sum(vi * 3 for vi in v)
    s64 = -100 + sum(vi * vi for vi in v)
    out.append("%d %d" % (s32, s64))

    out.append(" ".join([F64(max([-1000.0] + f)), F64(min([1000.0] + f)),
                         F32(max([-1000.0] + g)), F32(min([1000.0] + g))]))
    out.append(F64(max([50.0] + f)) + " " + F64(min([-50.0] + f)))

    p, bor, bxor, band, all_pos, any_neg = 1, 0, 0, -1, True, False
    for j in range(n):
        p *= 1 + j % 3
        bor |= 1 << j
        bxor ^= v[j] + 6
        band &= v[j] + 22
        all_pos = all_pos and v[j] > -7
        any_neg = any_neg or v[j] < -5
    out.append("%d %d %d %d %s %s" % (p, bor, bxor, band, B(all_pos), B(any_neg)))

    out.append("%d %s" % (1000 + v[4] + v[5], F64(max(-1.0, f[4], f[5]))))
    out.append("%d %s" % (5, F64(2.5)))

    M = [[(j * 7 + i * 11) % 23 for i in range(5)] for j in range(n)]
    total = 0
    for r in range(3):
        hi = max([-1] + [M[j][i] * (r + 1) for j in range(r, n) for i in range(5)])
        cnt = sum(M[j][i] % 3 for j in range(r, n) for i in range(5))
        out.append("%d %d %d" % (r, hi, cnt))
        total += hi + cnt
    out.append(str(total))
    return out


@test(CONFORMANCE)
def directive_devices_update():
    out = []
    n, m = 10, 4
    A = [[j * 10 + i for i in range(m)] for j in range(n)]
    Bm = grid(n, m)
    x = [j + 1 for j in range(n)]
    out.append("%d %d %d %d" % (sum(flat(A)), A[0][3], A[5][1], A[9][2]))
    for j in range(n):
        A[j][0] = -A[j][0]
    for j in range(n):
        for i in range(m):
            Bm[j][i] = A[j][i]
            if j > 0:
                Bm[j][i] += A[j - 1][i] * 100
            if j < n - 1:
                Bm[j][i] += A[j + 1][i] * 10000
    for j in range(3, 6):
        for i in range(m):
            A[j][i] = 1000 + j * 10 + i
    for j in range(n):
        for i in range(m):
            A[j][i] *= 2
    for j in range(4, 8):
        out.append("%d %d %d %d" % tuple(A[j]))
    out.append(str(x[6]))
    x[6] = 70
    for j in range(n):
        x[j] = x[j] * 3 + j
    out.append("%d %d %d" % (x[5], x[6], x[7]))
    out += [show(flat(A)), show(flat(Bm)), show(x)]
    return out


@test(CONFORMANCE)
def directive_devices_halo():
    out = []
    n = 11
    a = [(j * 3) % 7 for j in range(n)]
    b = [0] * n
    for t in range(6):
        for j in range(n):
            s = a[j]
            if j >= 2:
                s += a[j - 2]
            if j >= 1:
                s += a[j - 1] * 2
            if j + 1 < n:
                s += a[j + 1] * 3
            if j + 2 < n:
                s += a[j + 2] * 4
            b[j] = crem(s, 101)
        for j in range(1, n - 1):
            a[j] = crem(b[j - 1] + b[j + 1] + t, 97)
    out += [show(a), show(b)]

    c = [j * j for j in range(8)]
    d = [0] * 8
    for t in range(4):
        for j in range(7):
            s = c[j + 1]
            if j >= 2:
                s += c[j - 2]
            if j + 4 < 8:
                s += c[j + 4]
            d[j] = crem(s, 1000)
        for j in range(7):
            c[j + 1] = d[j] + t
    out += [show(c), show(d)]

    P = grid(9, 5)
    Q = grid(9, 5)
    for i in range(5):
        P[0][i] = 1000000
        Q[0][i] = 1000000
    for t in range(7):
        for j in range(1, 8):
            for i in range(1, 4):
                Q[j][i] = cdiv(P[j - 1][i] + P[j + 1][i] + P[j][i - 1] + P[j][i + 1], 4)
        for j in range(1, 8):
            for i in range(1, 4):
                P[j][i] = Q[j][i]
    out.append(fmt_array(flat(P), [9, 5], "i64"))
    return out


@test(CONFORMANCE)
def directive_devices_kernels():
    out = []
    n, m = 13, 6
    A = [[(j * 7 + i * 5) % 11 for i in range(m)] for j in range(n)]
    Bm = grid(n, m)
    for j in range(1, n - 1):
        for i in range(m):
            Bm[j][i] = A[j - 1][i] + A[j][i] * 2 + A[j + 1][i]
    out.append(str(sum(Bm[j][i] * (j % 3) for j in range(n) for i in range(m))))
    r = [sum(Bm[j][i] * (i + 1) for i in range(m)) for j in range(n)]
    out.append(str(max([0] + r)))
    out += [show(r), show(flat(Bm))]
    return out


@test(CONFORMANCE)
def directive_devices_partial():
    out = []
    a = [0] * 12
    for j in range(8):
        a[j] = 100 + j
    for j in range(1, 5):
        a[2 * j + 1] = 200 + j
    out.append(show(a))
    b = [0] * 13
    for j in range(8):
        b[j] = j * 3
    for j in srange(1, 12, 2):
        b[j] = -j
    out.append(show(b))
    C = [[j * 10 + i for i in range(3)] for j in range(10)]
    for j in range(3, 10):
        C[j][1] = -j
    out.append(show(flat(C)))
    return out


@test(CONFORMANCE)
def directive_devices_mixed():
    n = 10
    p = [(i * 3 + 1) % n for i in range(n)]
    a = [j * j for j in range(n)]
    b = [0] * n
    s = 0
    for j in range(n):
        s += a[j]
        b[j] = s
    for j in range(1, n):
        a[j] = b[j] - b[j - 1]
    for j in range(2, 5):
        a[j] += 1000
    for j in range(n):
        b[p[j]] = a[j] * 2
    for j in range(n - 1):
        a[j] = a[j] + b[j + 1]
    return [show(a), show(b)]


@test(CONFORMANCE)
def directive_devices_list():
    out = []
    n = 9
    x = [i * 4 - 7 for i in range(n)]
    y = [xj * xj for xj in x]
    out.append(show(y))
    out.append(str(sum(y[j] - x[j] for j in range(n))))
    for j in range(1, n - 1):
        y[j] = x[j - 1] + x[j + 1] + y[j]
    y = [v * 2 for v in y]
    out.append(show(y))
    z = [j + 1 for j in range(n)]
    for j in range(1, n):
        z[j] = z[j] * 10 + j
    out.append(show(z))
    u = [j + 1 for j in range(n)]
    w = [0] * n
    for j in range(1, n):
        w[j] = u[j] * 10 + u[j - 1]
    for j in range(n - 1):
        u[j] = w[j + 1] * 2
    for j in range(n):
        w[j] = w[j] + u[j]
    out += [show(u), show(w)]
    return out


@test(CONFORMANCE)
def directive_devices_async():
    n = 11
    a = [j * 5 + 1 for j in range(n)]
    b = [0] * n
    for j in range(1, n - 1):
        b[j] = a[j - 1] + a[j + 1]
    out = [show(b)]
    a = [a[j] + b[j] * 100 for j in range(n)]
    out += [show(a), str(sum(a))]
    return out


def jacobi_lines(n, m, iter_max):
    """examples/jacobi.acc (and jacobi_multi.acc): every operation in the script's order."""
    tol = 1e-6
    A = [[0.0] * m for _ in range(n)]
    Anew = [[0.0] * m for _ in range(n)]
    for j in range(m):
        A[0][j] = 1.0
        Anew[0][j] = 1.0
    out = ["Jacobi relaxation Calculation: %d x %d mesh" % (n, m)]
    err = 1.0
    it = 0
    cols = range(1, m - 1)
    while err > tol and it < iter_max:
        err = 0.0
        for j in range(1, n - 1):
            up, row, down, new = A[j - 1], A[j], A[j + 1], Anew[j]
            for i in cols:
                v = 0.25 * (row[i + 1] + row[i - 1] + up[i] + down[i])
                new[i] = v
                d = abs(v - row[i])
                if d > err:
                    err = d
        for j in range(1, n - 1):
            A[j][1:m - 1] = Anew[j][1:m - 1]
        if it % 100 == 0:
            out.append("%5d, %0.6f" % (it, err))
        it += 1
    total = 0.0
    for row in A:
        for v in row:
            total += v
    out.append("iterations: %d, error: %0.6e, sum(A): %0.6f" % (it, err, total))
    return out


@test(CONFORMANCE)
def directive_devices_wait():
    n = 30
    out = ["last iteration %d" % (n - 1)]
    out.append(show([j + 1 for j in range(n)]))
    out.append(show([j * 3 for j in range(n)]))
    c = [j * j for j in range(n)]
    d = [0] * n
    for j in range(1, n - 1):
        d[j] = c[j - 1] + c[j + 1]
    out.append(show(d))
    return out


@test(CONFORMANCE)
def directive_devices_enter_data():
    n = 12
    a = [i * 10 + 1 for i in range(n)]
    b = [100 - i + i * 1000 for i in range(n)]
    return [show([a[j] + b[j] for j in range(n)])]


@test(CONFORMANCE)
def directive_devices_redundant():
    # num_gangs(4): `s += 1` runs once per gang; num_gangs(2): two lines.
    return ["4", "gang start", "gang start", str(sum(range(12)))]


@test(CONFORMANCE)
def directive_devices_sequence():
    out = []
    n = 12
    a = [j + 1 for j in range(n)]
    b = [2 * a[j] for j in range(n)]
    a = [b[j] + 1 for j in range(n)]
    for j in range(1, n - 1):
        b[j] = a[j - 1] + a[j + 1]
    out.append(str(sum(b)))
    a = [v * 10 for v in a]
    out.append(show(a))
    a = [a[j] + b[j] for j in range(n)]
    out.append(B(True))
    a = [v - 1 for v in a]
    out += [show(a), show(b)]
    return out


@test(CONFORMANCE)
def directive_devices_push():
    n = 8
    b = [0.0] * n
    c = [0.0] * n
    for j in range(6):
        b[j] = 1.0
    for j in range(n):
        b[j] = j * j + 2.0
    for _ in range(3):
        for j in range(1, n - 1):
            c[j] = b[j - 1] + b[j + 1]
        for j in range(1, n - 1):
            b[j] = c[j] * 0.5
    return [fmt_array(b, [n], "f64"), fmt_array(c, [n], "f64")]


@test(EXAMPLES)
def jacobi_multi():
    return jacobi_lines(256, 256, 1000)


def main():
    check = "--check" in sys.argv
    names = [a for a in sys.argv[1:] if not a.startswith("--")]
    bad = 0
    for name, (directory, fn) in TESTS.items():
        if names and name not in names:
            continue
        if not os.path.exists(os.path.join(directory, name + ".acc")):
            print("no script for", name)
            bad += 1
            continue
        text = "\n".join(fn()) + "\n"
        path = os.path.join(directory, name + ".out")
        bad += write_or_check(path, name, text, check)
    count = len(names) if names else len(TESTS)
    print(count, "expected outputs", "checked" if check else "written", bad, "problems")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
