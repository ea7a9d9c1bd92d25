//! The numbers a picture shows, read in place from an array's elements: a large array is never
//! copied to be drawn.

/// An array's elements, of any acc element type.
#[derive(Clone, Copy, Debug)]
pub enum Values<'a> {
    F64(&'a [f64]),
    F32(&'a [f32]),
    I64(&'a [i64]),
    I32(&'a [i32]),
    /// `bool` elements as acc stores them: one byte each, 0 or 1.
    Bool(&'a [u8]),
}

impl Values<'_> {
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Element `i` as an f64 (an i64 beyond 2^53 rounds; it is only drawn). `i` must be below
    /// `len()`.
    pub fn get(&self, i: usize) -> f64 {
        match self {
            Values::F64(v) => v[i],
            Values::F32(v) => f64::from(v[i]),
            Values::I64(v) => v[i] as f64,
            Values::I32(v) => f64::from(v[i]),
            Values::Bool(v) => f64::from(u8::from(v[i] != 0)),
        }
    }

    /// The smallest and largest finite elements, `None` when there is none (empty, or all NaN
    /// and infinite).
    pub fn finite_range(&self) -> Option<(f64, f64)> {
        let mut range: Option<(f64, f64)> = None;
        for i in 0..self.len() {
            let v = self.get(i);
            if v.is_finite() {
                range = Some(match range {
                    Some((lo, hi)) => (lo.min(v), hi.max(v)),
                    None => (v, v),
                });
            }
        }
        range
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_type_reads_as_f64() {
        assert_eq!(Values::F32(&[1.5]).get(0), 1.5);
        assert_eq!(Values::I64(&[-7]).get(0), -7.0);
        assert_eq!(Values::I32(&[3]).get(0), 3.0);
        assert_eq!(Values::Bool(&[0, 1]).get(1), 1.0);
    }

    #[test]
    fn range_skips_what_is_not_finite() {
        let v = [f64::NAN, 2.0, f64::INFINITY, -1.0, f64::NEG_INFINITY];
        assert_eq!(Values::F64(&v).finite_range(), Some((-1.0, 2.0)));
        assert_eq!(Values::F64(&[f64::NAN]).finite_range(), None);
        assert_eq!(Values::F64(&[]).finite_range(), None);
    }
}
