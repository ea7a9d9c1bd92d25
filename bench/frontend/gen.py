#!/usr/bin/env python3
"""Large programs for timing `acc check` (docs/ARCHITECTURE.md, "Front-end scale").

    python3 bench/frontend/gen.py valid  1000000 > /tmp/valid.acc
    python3 bench/frontend/gen.py errors 1000000 > /tmp/errors.acc
    python3 bench/frontend/gen.py syntax 1000000 > /tmp/syntax.acc
    python3 bench/frontend/gen.py chain  1000000 > /tmp/chain.acc
    python3 bench/frontend/gen.py nest   1000000 > /tmp/nest.acc

`valid`: units of about 40 lines, each with its own globals, a host function with loops and
branches, an `acc routine seq`, a parallel loop with a reduction, a data region around a
kernels region, a collapsed 2-D loop nest, atomics, async/wait and printing; every unit
calls functions of the unit before it, so names resolve across the whole file.
`errors`: the same units with five mistakes each, one line in nine (type errors, unknown
names, some close to a real one, wrong arities); `syntax`: the same with syntax errors.
`chain`: one `if`/`else if` chain of that many lines.
`nest`: many functions of nested blocks and loops at the nesting limit's depth.
Deterministic: the same arguments give the same text.
"""

import sys


def unit(k, errors):
    p = k - 1
    n = 8 + k % 17
    lines = [
        f"let g{k} = zeros({n})",
        f"let m{k} = zeros(i64, {n}, 4)",
        f"let s{k}: f64 = 0.0",
        f"let c{k}: i64 = 0",
        f"fn f{k}(x: f64[], n: i64) -> f64 {{",
        "    let t = 0.0",
        "    for i in 0..n {",
        "        if i % 3 == 0 {",
        "            t += x[i] * 2.0",
        "        } else if i % 3 == 1 {",
        "            t -= x[i] / 4.0",
        "        } else {",
        f"            t = t * 0.5 + {k % 7}.25",
        "        }",
        "    }",
        "    return t",
        "}",
        "acc routine seq",
        f"fn r{k}(v: f64) -> f64 {{",
        f"    return v * v + {k % 5}.0",
        "}",
        f"acc parallel loop copy(g{k}) reduction(+: s{k})",
        f"for i in 0..{n} {{",
        f"    g{k}[i] = r{k}(i * 1.0)",
        f"    s{k} += g{k}[i]",
        "}",
        f"acc data copy(m{k}) {{",
        f"    acc parallel loop collapse(2) async({k % 4})",
        f"    for i in 0..{n} {{",
        "        for j in 0..4 {",
        f"            m{k}[i, j] = (i * 4 + j) & {k % 255 + 1}",
        "        }",
        "    }",
        f"    acc wait({k % 4})",
        "}",
        f"acc parallel loop copy(c{k})",
        f"for i in 0..{n} {{",
        "    acc atomic update",
        f"    c{k} += i",
        "}",
    ]
    if p >= 1:
        lines.append(f"printf(\"%d %f %f\\n\", c{k}, s{k}, f{p}(g{p}, {8 + p % 17}))")
    else:
        lines.append(f"print(c{k}, s{k})")
    if errors:
        if errors == "syntax":
            bad = [
                f"let h{k} = (1 + * 2)",
                f"print(g{k}[0] +)",
                f"fn q{k}(a: f64) -> {{ return a }}",
                f"let = {k}",
                f"for i in 0.. {{ }}",
                f"c{k} += ",
                f"let x{k} = 1 2",
                f"if {{ print(1) }}",
            ]
        else:
            bad = [
                f"let e{k}: i32 = true",                 # type
                f"print(g{k}x[0])",                      # unknown name, close to g{k}
                f"s{k} = f{k}(g{k})",                    # wrong arity
                f"c{k} = c{k} + 1.5 * true",             # bool in arithmetic
                f"let u{k} = undefined_{k % 100} + 1",   # unknown name
                f"g{k} = 3",                             # scalar to an array
                f"print(r{k}(1.0, 2.0, 3.0))",           # wrong arity
                f"s{k} = m{k}[0]",                       # rank mismatch
            ]
        out = []
        for i, l in enumerate(lines):
            out.append(l)
            # After a complete statement at top level only (never inside a block).
            if i in (3, 20, 25, 34, 39):
                out.append(bad[(k + i) % len(bad)])
        lines = out
    return lines


def valid(target, errors=False):
    out = []
    k = 0
    count = 0
    while count < target:
        u = unit(k, errors)
        out.extend(u)
        count += len(u)
        k += 1
    return out


def chain(target):
    out = ["let x: i64 = 3", "let y: i64 = 0"]
    out.append("if x == 0 {")
    i = 1
    while len(out) < target - 3:
        out.append(f"    y = {i}")
        out.append(f"}} else if x == {i} {{")
        i += 1
    out.append("    y = -1")
    out.append("}")
    out.append("print(y)")
    return out


def nest(target):
    out = []
    k = 0
    depth = 60
    while len(out) < target:
        out.append(f"fn n{k}(a: i64) -> i64 {{")
        out.append("    let t = a")
        for d in range(depth):
            ind = "    " * (d + 1)
            if d % 2 == 0:
                out.append(f"{ind}if t > {d} {{")
            else:
                out.append(f"{ind}for i{d} in 0..2 {{")
            out.append(f"{ind}    t = t + ({d} * (t ^ {d}))")
        for d in reversed(range(depth)):
            out.append("    " * (d + 1) + "}")
        out.append("    return t")
        out.append("}")
        k += 1
    return out


def main():
    kind, target = sys.argv[1], int(sys.argv[2])
    lines = {
        "valid": lambda: valid(target),
        "errors": lambda: valid(target, errors="check"),
        "syntax": lambda: valid(target, errors="syntax"),
        "chain": lambda: chain(target),
        "nest": lambda: nest(target),
    }[kind]()
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
