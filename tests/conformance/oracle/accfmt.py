"""Independent oracle for acc's print formatting (LANGUAGE.md section 6), written from the
reference, not from any implementation.

Floats print as the shortest decimal that reads back to the same value *in their own type*,
in plain notation for 1e-4 <= |x| < 1e16 and in exponent notation otherwise, always with a
decimal point or an exponent; `inf`, `-inf`, `nan`.

f64: Python's repr() is the shortest round-trip string (David Gay / Python's dtoa).
f32: found by search: the shortest correctly rounded `%.Ne` string whose nearest binary32
value (decided exactly with Fractions, ties to even) is the value itself.
"""
import math
import os
import struct
from fractions import Fraction


def f32(x):
    """Round a Python float (f64) to the nearest binary32 value (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _f32_from_bits(b):
    return struct.unpack("<f", struct.pack("<I", b))[0]


def _nearest_f32_is(q, x):
    """Is binary32 value x (finite, >0) the value nearest to the rational q (ties to even)?"""
    b = _f32_bits(x)
    here = Fraction(x)
    d = abs(q - here)
    for nb in (b - 1, b + 1):
        if nb < 0 or nb >= 0x7F800000:
            continue
        other = _f32_from_bits(nb)
        if other == 0.0 and nb != 0:
            continue
        od = abs(q - Fraction(other))
        if od < d:
            return False
        if od == d and (b & 1):  # tie: the even one wins
            return False
    if b == 0x7F7FFFFF:  # largest finite: above it rounds to inf past the halfway point
        limit = Fraction(x) + (Fraction(x) - Fraction(_f32_from_bits(b - 1))) / 2
        if q >= limit:
            return False
    return True


def _digits_exp(s):
    """'1.2345e+06' -> ('12345', 6)"""
    mant, e = s.split("e")
    digits = mant.replace(".", "").replace("-", "")
    digits = digits.rstrip("0") or "0"
    return digits, int(e)


def _layout(neg, digits, e, x):
    ax = abs(x)
    if ax == 0 or (1e-4 <= ax < 1e16):
        n = len(digits)
        if digits == "0":
            body = "0.0"
        elif e >= 0:
            if n - 1 <= e:
                body = digits + "0" * (e - (n - 1)) + ".0"
            else:
                body = digits[: e + 1] + "." + digits[e + 1 :]
        else:
            body = "0." + "0" * (-e - 1) + digits
    else:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + "e" + str(e)
    return ("-" if neg else "") + body


def fmt_f64(x):
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    neg = math.copysign(1.0, x) < 0
    if x == 0:
        return "-0.0" if neg else "0.0"
    r = repr(abs(x))
    # Re-derive digits/exponent from repr (shortest round trip).
    if "e" in r:
        mant, ee = r.split("e")
        e = int(ee)
        if "." in mant:
            ip, fp = mant.split(".")
        else:
            ip, fp = mant, ""
        digits = (ip + fp).rstrip("0") or "0"
        e = e + len(ip) - 1
    else:
        ip, fp = r.split(".")
        if ip != "0":
            digits = (ip + fp).lstrip("0").rstrip("0")
            e = len(ip.lstrip("0")) - 1
        else:
            stripped = fp.lstrip("0")
            e = -(len(fp) - len(stripped)) - 1
            digits = stripped.rstrip("0")
    return _layout(neg, digits, e, x)


def fmt_f32(x):
    x = f32(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    neg = math.copysign(1.0, x) < 0
    if x == 0:
        return "-0.0" if neg else "0.0"
    ax = abs(x)
    for p in range(1, 18):
        s = "%.*e" % (p - 1, ax)
        # '%.Ne' of the f64 value of an f32 is correctly rounded (the f64 is exact).
        if _nearest_f32_is(Fraction(s), ax):
            digits, e = _digits_exp(s)
            return _layout(neg, digits, e, x)
    raise AssertionError("no shortest form for %r" % x)


def fmt_bool(b):
    return "true" if b else "false"


def fmt_elem(v, ty):
    if ty == "f64":
        return fmt_f64(v)
    if ty == "f32":
        return fmt_f32(v)
    if ty == "bool":
        return fmt_bool(v)
    return str(v)


def fmt_array(values, shape, ty):
    """Nested brackets, one row per line for rank >= 2 (rows aligned under the first, no blank
    lines between blocks), dimensions longer than 10 elided to first three, `...`, last three."""
    def idxs(n):
        if n > 10:
            return [0, 1, 2, None, n - 3, n - 2, n - 1]
        return list(range(n))

    def rec(offset, dims, depth):
        if len(dims) == 1:
            parts = []
            for i in idxs(dims[0]):
                parts.append("..." if i is None else fmt_elem(values[offset + i], ty))
            return "[" + ", ".join(parts) + "]"
        stride = 1
        for d in dims[1:]:
            stride *= d
        parts = []
        for i in idxs(dims[0]):
            parts.append("..." if i is None else rec(offset + i * stride, dims[1:], depth + 1))
        sep = ",\n" + " " * (depth + 1)
        return "[" + sep.join(parts) + "]"

    return rec(0, list(shape), 0)


if __name__ == "__main__":
    # Self-checks against the examples in LANGUAGE.md section 6.
    assert fmt_f64(1.0) == "1.0"
    assert fmt_f64(0.1) == "0.1"
    assert fmt_f64(-0.0) == "-0.0"
    assert fmt_f64(16777216.0) == "16777216.0"
    assert fmt_f64(1e16) == "1e16"
    assert fmt_f64(2.5e-7) == "2.5e-7"
    assert fmt_f64(float("inf")) == "inf"
    assert fmt_f32(0.1) == "0.1"
    assert fmt_f32(1.0 / 3.0) == "0.33333334"
    assert fmt_f32(16777217.0) == "16777216.0"
    assert fmt_array(list(range(12)), [12], "i64") == "[0, 1, 2, ..., 9, 10, 11]"
    assert fmt_array([0, 0, 0, 0, 0, 5], [2, 3], "i64") == "[[0, 0, 0],\n [0, 0, 5]]"
    print("ok")


def write_or_check(path, name, text, check):
    """Writes an expected output `text` to `path`, or with `check` compares it with the file
    there; returns whether it was a problem (a difference, said on stdout)."""
    if check:
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            print("differs:", name)
            return True
        return False
    with open(path, "w") as f:
        f.write(text)
    return False
