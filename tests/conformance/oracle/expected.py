"""Expected outputs of the conformance scripts whose values are not obvious by hand.

Each function below transcribes one script into Python, computing every value independently
(f32 arithmetic is emulated by rounding every intermediate result to binary32 with `f32`, which
is exact for + - * / and sqrt since binary64 has more than 2*24+2 bits), and returns its
standard output. Run `python3 expected.py` to (re)write the `.out` files; `--check` compares
instead of writing.
"""
import math
import os
import sys

from accfmt import f32, fmt_f32 as F32, fmt_f64 as F64, fmt_array, fmt_bool as B, write_or_check

HERE = os.path.dirname(os.path.abspath(__file__))
OUT_DIR = os.path.dirname(HERE)
TESTS = {}


def test(fn):
    TESTS[fn.__name__] = fn
    return fn


def line(*parts):
    return " ".join(parts)


def wrap32(v):
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def wrap64(v):
    v &= 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >= 1 << 63 else v


def cdiv(a, b):
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def crem(a, b):
    return a - b * cdiv(a, b)


# --------------------------------------------------------------------------------------------
# types
# --------------------------------------------------------------------------------------------

@test
def types_literal_inference_f32():
    x = f32(0.1)
    y = f32(f32(3.0) * x)
    z = f32(x + f32(0.2))
    w = f32(1.0 / 3.0)
    return [F32(y), F32(z), F32(w), F32(f32(f32(16777216.0) + 1.0))]


@test
def types_literal_int_as_float():
    d = f32(1.0)
    return [F64(7.0), F64(3.0), F64(3.0), F32(f32(d / 3.0)), F64(5.0)]


@test
def types_usual_arith_int_float():
    return [F32(f32(f32(16777217) * 1.0)), F32(f32(7.0 / 2.0)), F64(7.5),
            F64(float(9007199254740993) + 0.0)]


@test
def types_usual_arith_f32_f64():
    a = f32(0.1)
    return [F64(a + 0.0), B(a == 0.1), F32(f32(a * 1.0))]


# --------------------------------------------------------------------------------------------
# print
# --------------------------------------------------------------------------------------------

def P64(*xs):
    return " ".join(F64(x) for x in xs)


def P32(*xs):
    return " ".join(F32(x) for x in xs)


@test
def print_float_f64_plain():
    return [P64(1.0, 0.1, 0.5, 100.0, 1.5, -2.25),
            P64(123456.789, 0.0001, 0.00012345),
            P64(1e15, 9999999999999998.0, 1234567890123456.0),
            P64(16777216.0, 4294967296.0),
            P64(0.3, 2.0 / 3.0, 100.0 / 3.0),
            P64(3.141592653589793, 2.718281828459045)]


@test
def print_float_f64_exponent():
    return [P64(1e16, 2.5e-7, 1e-5, 0.00009999),
            P64(1.2345e20, -3e100, 1.7976931348623157e308),
            P64(5e-324, 2.2250738585072014e-308),
            P64(12345678901234567890.0),
            P64(1.0 / 3.0 * 1e-10)]


@test
def print_float_f64_shortest():
    return [P64(0.1 + 0.2, 1.0 / 3.0, 0.1 * 3.0),
            P64(1.1 * 1.1, 1e23, 9007199254740993.0),
            P64(0.7 + 0.1, 4.35 * 100.0),
            P64(2.0 / 7.0)]


@test
def print_float_f32():
    third = f32(1.0 / 3.0)
    x = f32(1.1)
    return [P32(third, 0.1, f32(2.0 / 3.0)),
            P32(16777216.0, 16777217.0, 3.4028235e38),
            P32(1e-45, 1.1754944e-38, 1e16, 1e15),
            P32(0.00025, 0.00001, 123.456),
            P32(f32(x * x))]


@test
def print_float_f32_vs_f64():
    x = f32(0.1)
    t = f32(1.0 / 3.0)
    return [F32(x) + " " + F64(x), F32(t) + " " + F64(t), F32(1e16) + " " + F64(f32(1e16))]


def main():
    check = "--check" in sys.argv
    bad = 0
    for name, fn in TESTS.items():
        text = "\n".join(fn()) + "\n"
        path = os.path.join(OUT_DIR, name + ".out")
        if not os.path.exists(os.path.join(OUT_DIR, name + ".acc")):
            print("no script for", name)
            bad += 1
            continue
        bad += write_or_check(path, name, text, check)
    print(len(TESTS), "expected outputs", "checked" if check else "written", bad, "problems")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
