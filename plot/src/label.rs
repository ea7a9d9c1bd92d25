//! Numbers as axis and colour-bar labels, and axis ranges that always have room.

/// `v` in at most `digits` significant digits, without trailing zeros: `0.25`, `1200`,
/// `3.142`, `1.5e-7`, `-2e+09`; `inf`, `-inf`, `nan` as acc prints them.
pub fn number(v: f64, digits: usize) -> String {
    if !v.is_finite() {
        return if v.is_nan() {
            "nan".into()
        } else if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        };
    }
    if v == 0.0 {
        return "0".into();
    }
    let digits = digits.max(1);
    let magnitude = v.abs().log10().floor() as i32;
    if (-4..6).contains(&magnitude) {
        let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
        trim_zeros(format!("{v:.decimals$}"))
    } else {
        let text = format!("{v:.prec$e}", prec = digits - 1);
        match text.split_once('e') {
            Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa.into())),
            None => text,
        }
    }
}

fn trim_zeros(text: String) -> String {
    if !text.contains('.') {
        return text;
    }
    let trimmed = text.trim_end_matches('0').trim_end_matches('.');
    if trimmed == "-0" {
        "0".into()
    } else {
        trimmed.into()
    }
}

/// An axis range showing `lo..=hi` with a margin of `pad` (a fraction of the span) on each
/// side; a single value gets a span of its own, so that it is drawn in the middle.
pub fn padded(lo: f64, hi: f64, pad: f64) -> (f64, f64) {
    if hi > lo {
        let margin = (hi - lo) * pad;
        // A span so wide that the margin overflows is shown without one.
        if (lo - margin).is_finite() && (hi + margin).is_finite() {
            return (lo - margin, hi + margin);
        }
        return (lo, hi);
    }
    let half = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
    (lo - half, hi + half)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_numbers() {
        assert_eq!(number(0.25, 4), "0.25");
        assert_eq!(number(1200.0, 4), "1200");
        assert_eq!(number(std::f64::consts::PI, 4), "3.142");
        assert_eq!(number(1.5e-7, 4), "1.5e-7");
        assert_eq!(number(-2e9, 4), "-2e9");
        assert_eq!(number(100.0, 3), "100");
        assert_eq!(number(-0.0001, 3), "-0.0001");
        assert_eq!(number(f64::NEG_INFINITY, 3), "-inf");
        assert_eq!(number(-0.00001, 2), "-1e-5");
    }

    #[test]
    fn ranges_have_room() {
        assert_eq!(padded(0.0, 10.0, 0.05), (-0.5, 10.5));
        assert_eq!(padded(0.0, 0.0, 0.05), (-1.0, 1.0));
        assert_eq!(padded(5.0, 5.0, 0.05), (4.5, 5.5));
        assert_eq!(padded(-f64::MAX, f64::MAX, 0.05), (-f64::MAX, f64::MAX));
    }
}
