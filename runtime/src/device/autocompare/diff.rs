//! What `--autocompare` counts as a difference and how it words one: the tolerances, the
//! comparison of a scalar or of an array's elements (device values against the host run's),
//! and the report lines. Pure: the launch side (`super`) fetches the values.

use std::fmt::{self, Write as _};

use crate::abi::{ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64};

/// `ACC_AUTOCOMPARE_LIMIT`'s default: differences reported per run.
pub const DEFAULT_LIMIT: usize = 50;
/// The default relative tolerance of `float64` values (LANGUAGE.md §8): a sum taken in
/// another order (a reduction over a different number of gangs) stays well inside it.
pub const F64_REL_TOL: f64 = 1e-9;
/// The default relative tolerance of `float32` values (about 800 units in the last place).
pub const F32_REL_TOL: f64 = 1e-4;
/// Differing elements shown per array.
const SHOWN: usize = 5;

/// `--autocompare`'s settings: `--rel-tol` and `--abs-tol` replace the defaults (exact for
/// integers, `F32_REL_TOL`/`F64_REL_TOL` for floats) for every numeric type; `bool`s are
/// always compared exactly. `limit` caps the variables reported in a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AutocompareOptions {
    pub rel_tol: Option<f64>,
    pub abs_tol: Option<f64>,
    pub limit: usize,
}

impl Default for AutocompareOptions {
    fn default() -> Self {
        AutocompareOptions {
            rel_tol: None,
            abs_tol: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

impl AutocompareOptions {
    /// The defaults with `ACC_AUTOCOMPARE_LIMIT`, when set.
    pub fn from_env() -> Result<AutocompareOptions, String> {
        let mut o = AutocompareOptions::default();
        if let Some(v) = std::env::var("ACC_AUTOCOMPARE_LIMIT")
            .ok()
            .filter(|v| !v.trim().is_empty())
        {
            o.limit = v
                .trim()
                .parse()
                .map_err(|_| format!("ACC_AUTOCOMPARE_LIMIT: `{v}` is not a number >= 0"))?;
        }
        Ok(o)
    }

    /// `(relative, absolute)` tolerance for values of element type `elem`.
    fn tolerance(&self, elem: u32) -> (f64, f64) {
        let default_rel = match elem {
            ELEM_F32 => F32_REL_TOL,
            ELEM_F64 => F64_REL_TOL,
            _ => 0.0,
        };
        (
            self.rel_tol.unwrap_or(default_rel),
            self.abs_tol.unwrap_or(0.0),
        )
    }
}

/// One value as compared and shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    F32(f32),
    F64(f64),
}

impl Value {
    /// The element of type `elem` at the start of `bytes` (native byte order, as arrays and
    /// argument slots hold them); `None` for an unknown type or too few bytes.
    pub fn decode(elem: u32, bytes: &[u8]) -> Option<Value> {
        fn take<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
            b.get(..N)?.try_into().ok()
        }
        Some(match elem {
            ELEM_BOOL => Value::Bool(*bytes.first()? != 0),
            ELEM_I32 => Value::Int(i32::from_ne_bytes(take(bytes)?) as i64),
            ELEM_I64 => Value::Int(i64::from_ne_bytes(take(bytes)?)),
            ELEM_F32 => Value::F32(f32::from_ne_bytes(take(bytes)?)),
            ELEM_F64 => Value::F64(f64::from_ne_bytes(take(bytes)?)),
            _ => return None,
        })
    }

    /// A scalar in an argument slot's low bytes.
    pub fn of_slot(elem: u32, slot: u64) -> Option<Value> {
        Value::decode(elem, &slot.to_ne_bytes())
    }

    fn number(self) -> f64 {
        match self {
            Value::Bool(b) => b as i64 as f64,
            Value::Int(i) => i as f64,
            Value::F32(x) => x as f64,
            Value::F64(x) => x,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            // As the language prints floats: `3.0`, not `3`.
            Value::F32(x) => write!(f, "{x:?}"),
            Value::F64(x) => write!(f, "{x:?}"),
        }
    }
}

/// `|device - host| / |host|`: 0 when both are equal (NaNs included), infinite when only
/// the host's is 0.
pub fn relative_error(device: Value, host: Value) -> f64 {
    let (d, h) = (device.number(), host.number());
    if d == h || (d.is_nan() && h.is_nan()) {
        0.0
    } else if h == 0.0 {
        f64::INFINITY
    } else {
        (d - h).abs() / h.abs()
    }
}

/// Whether two values of element type `elem` differ beyond the tolerances: equal values,
/// two NaNs, `|d - h| <= abs` and `|d - h| <= rel × |h|` all count as the same.
fn differs(opts: &AutocompareOptions, elem: u32, device: Value, host: Value) -> bool {
    if let (Value::Bool(d), Value::Bool(h)) = (device, host) {
        return d != h;
    }
    let (d, h) = (device.number(), host.number());
    if d == h || (d.is_nan() && h.is_nan()) {
        return false;
    }
    let (rel, abs) = opts.tolerance(elem);
    let gap = (d - h).abs();
    !(gap <= abs || gap <= rel * h.abs())
}

/// One differing element: its flat (row-major) index and both values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    pub index: usize,
    pub device: Value,
    pub host: Value,
}

/// What differs in one variable: the number of differing elements (1 for a scalar) and the
/// first `SHOWN` of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Differences {
    pub count: usize,
    pub first: Vec<Difference>,
}

/// The scalars of element type `elem` in two argument slots, compared.
pub fn compare_scalar(
    opts: &AutocompareOptions,
    elem: u32,
    device: u64,
    host: u64,
) -> Option<Differences> {
    let (d, h) = (Value::of_slot(elem, device)?, Value::of_slot(elem, host)?);
    differs(opts, elem, d, h).then(|| Differences {
        count: 1,
        first: vec![Difference {
            index: 0,
            device: d,
            host: h,
        }],
    })
}

/// An array the region writes, as bytes of its elements: what each run started from and
/// ended with.
pub struct Runs<'a> {
    pub device_before: &'a [u8],
    pub device: &'a [u8],
    pub host_before: &'a [u8],
    pub host: &'a [u8],
}

/// The elements of an array of type `elem` (`size` bytes each) that either run changed,
/// compared; an element neither run wrote (the rest of a `create`d array, say) is not.
pub fn compare_elements(
    opts: &AutocompareOptions,
    elem: u32,
    size: usize,
    runs: &Runs<'_>,
) -> Option<Differences> {
    // The usual case, decided by one `memcmp`: both runs ended with the same bits.
    if runs.device == runs.host {
        return None;
    }
    let mut found = Differences {
        count: 0,
        first: Vec::new(),
    };
    let elements = |b| <[u8]>::chunks_exact(b, size);
    let all = (elements(runs.device).zip(elements(runs.device_before)))
        .zip(elements(runs.host).zip(elements(runs.host_before)));
    for (index, ((device, device_before), (host, host_before))) in all.enumerate() {
        if device == device_before && host == host_before {
            continue;
        }
        let (Some(d), Some(h)) = (Value::decode(elem, device), Value::decode(elem, host)) else {
            return None;
        };
        if differs(opts, elem, d, h) {
            found.count += 1;
            if found.first.len() < SHOWN {
                found.first.push(Difference {
                    index,
                    device: d,
                    host: h,
                });
            }
        }
    }
    (found.count > 0).then_some(found)
}

/// A flat row-major index in an array of extents `shape`, as the language writes it: `2, 3`.
fn index_text(mut flat: usize, shape: &[i64]) -> String {
    let mut parts = vec![0usize; shape.len()];
    for (part, &extent) in parts.iter_mut().zip(shape).rev() {
        let extent = extent.max(1) as usize;
        *part = flat % extent;
        flat /= extent;
    }
    let parts: Vec<String> = parts.iter().map(|p| p.to_string()).collect();
    parts.join(", ")
}

/// The report of one variable: `shape` is `None` for a scalar. Every line starts
/// `autocompare: `; `site` names the construct (`parallel loop @ f.acc:9`).
pub fn report(site: &str, name: &str, shape: Option<&[i64]>, found: &Differences) -> String {
    let mut text = String::new();
    let line = |d: &Difference| {
        format!(
            "device {}, host {}, relative error {:.3e}",
            d.device,
            d.host,
            relative_error(d.device, d.host)
        )
    };
    match shape {
        None => {
            if let Some(d) = found.first.first() {
                let _ = writeln!(text, "autocompare: {site}: `{name}` differs: {}", line(d));
            }
        }
        Some(shape) => {
            let total: i64 = shape.iter().product();
            let _ = writeln!(
                text,
                "autocompare: {site}: `{name}` differs in {} of {total} elements",
                found.count
            );
            for d in &found.first {
                let at = index_text(d.index, shape);
                let _ = writeln!(text, "autocompare:   {name}[{at}]: {}", line(d));
            }
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f64s(v: &[f64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn integers_are_exact_and_floats_have_a_small_relative_tolerance() {
        let o = AutocompareOptions::default();
        assert!(compare_scalar(&o, ELEM_I64, 1000, 1001).is_some());
        assert!(compare_scalar(&o, ELEM_I64, 7, 7).is_none());
        // 1 + 1e-12 is within 1e-9 of 1; 1.001 is not.
        let near = (1.0f64 + 1e-12).to_bits();
        assert!(compare_scalar(&o, ELEM_F64, near, 1.0f64.to_bits()).is_none());
        let far = 1.001f64.to_bits();
        assert!(compare_scalar(&o, ELEM_F64, far, 1.0f64.to_bits()).is_some());
        // float32: 1.00001 is within 1e-4 of 1.
        let f = |x: f32| x.to_bits() as u64;
        assert!(compare_scalar(&o, ELEM_F32, f(1.00001), f(1.0)).is_none());
        assert!(compare_scalar(&o, ELEM_F32, f(1.01), f(1.0)).is_some());
    }

    #[test]
    fn given_tolerances_apply_to_integers_too_but_not_to_bools() {
        let o = AutocompareOptions {
            abs_tol: Some(2.0),
            ..Default::default()
        };
        assert!(compare_scalar(&o, ELEM_I32, 10, 12).is_none());
        assert!(compare_scalar(&o, ELEM_I32, 10, 13).is_some());
        assert!(compare_scalar(&o, ELEM_BOOL, 0, 1).is_some());
        let rel = AutocompareOptions {
            rel_tol: Some(0.1),
            ..Default::default()
        };
        assert!(compare_scalar(&rel, ELEM_I64, 95, 100).is_none());
        assert!(compare_scalar(&rel, ELEM_I64, 89, 100).is_some());
    }

    #[test]
    fn nans_match_nans_only() {
        let o = AutocompareOptions::default();
        let nan = f64::NAN.to_bits();
        assert!(compare_scalar(&o, ELEM_F64, nan, nan).is_none());
        assert!(compare_scalar(&o, ELEM_F64, nan, 1.0f64.to_bits()).is_some());
        let inf = f64::INFINITY.to_bits();
        assert!(compare_scalar(&o, ELEM_F64, inf, inf).is_none());
    }

    #[test]
    fn arrays_count_every_difference_and_keep_the_first_five() {
        let o = AutocompareOptions::default();
        let zeros = f64s(&[0.0; 8]);
        let device = f64s(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 0.0]);
        let runs = Runs {
            device_before: &zeros,
            device: &device,
            host_before: &zeros,
            host: &zeros,
        };
        let found = compare_elements(&o, ELEM_F64, 8, &runs).unwrap();
        assert_eq!(found.count, 6);
        let indices: Vec<usize> = found.first.iter().map(|d| d.index).collect();
        assert_eq!(indices, [1, 2, 3, 4, 5]);
        let same = Runs {
            device: &zeros,
            ..runs
        };
        assert!(compare_elements(&o, ELEM_F64, 8, &same).is_none());
    }

    #[test]
    fn elements_neither_run_wrote_are_not_compared() {
        // A `create`d array: the device's copy starts at 0, the host's at 1; both runs write
        // element 1 only, to the same value; element 2 is written differently.
        let o = AutocompareOptions::default();
        let runs = Runs {
            device_before: &f64s(&[0.0, 0.0, 0.0]),
            device: &f64s(&[0.0, 5.0, 7.0]),
            host_before: &f64s(&[1.0, 1.0, 1.0]),
            host: &f64s(&[1.0, 5.0, 8.0]),
        };
        let found = compare_elements(&o, ELEM_F64, 8, &runs).unwrap();
        assert_eq!(found.count, 1);
        assert_eq!(
            found.first,
            [Difference {
                index: 2,
                device: Value::F64(7.0),
                host: Value::F64(8.0),
            }]
        );
    }

    #[test]
    fn reports_name_the_site_the_indices_both_values_and_the_relative_error() {
        let found = Differences {
            count: 2,
            first: vec![
                Difference {
                    index: 0,
                    device: Value::F64(3.0),
                    host: Value::F64(6.0),
                },
                Difference {
                    index: 5,
                    device: Value::F64(1.0),
                    host: Value::F64(0.0),
                },
            ],
        };
        let text = report("parallel loop @ f.acc:9", "a", Some(&[2, 3]), &found);
        assert_eq!(
            text,
            "autocompare: parallel loop @ f.acc:9: `a` differs in 2 of 6 elements\n\
             autocompare:   a[0, 0]: device 3.0, host 6.0, relative error 5.000e-1\n\
             autocompare:   a[1, 2]: device 1.0, host 0.0, relative error inf\n"
        );
        let scalar = Differences {
            count: 1,
            first: vec![Difference {
                index: 0,
                device: Value::Int(250),
                host: Value::Int(1000),
            }],
        };
        assert_eq!(
            report("parallel @ g.acc:4", "s", None, &scalar),
            "autocompare: parallel @ g.acc:4: `s` differs: device 250, host 1000, \
             relative error 7.500e-1\n"
        );
    }
}
