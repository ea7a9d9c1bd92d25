//! A region's outermost gang loop, as a formula of the launch's arguments: how many
//! iterations it has, worked out before the launch, so that a GPU's grid fits the work (a
//! one-element loop gets one block, a long streaming loop enough blocks that every thread
//! takes a few iterations) rather than one size for every loop.

use crate::abi::{ArrayHeader, ELEM_I32, MAX_RANK};
use crate::launch::ParamDesc;

/// An integer expression over a launch's arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TripExpr {
    Const(i64),
    /// Scalar parameter `i` (an `i32` is sign-extended).
    Arg(usize),
    /// Extent `d` of array parameter `i` (`len` for a rank-1 array).
    Dim(usize, usize),
    /// `len` of array parameter `i`.
    Len(usize),
    Add(Box<TripExpr>, Box<TripExpr>),
    Sub(Box<TripExpr>, Box<TripExpr>),
    Mul(Box<TripExpr>, Box<TripExpr>),
}

/// A counted loop: `for v in start..end` (or `..=`) by a constant positive `step`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    pub start: TripExpr,
    pub end: TripExpr,
    pub step: i64,
    pub inclusive: bool,
}

/// The gang loop.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GangLoop {
    pub counted: Counted,
    /// The loop is also shared among a gang's workers (`gang worker`): a gang takes one
    /// iteration per worker at a time.
    pub worker: bool,
    /// The loop is also shared among vector lanes (`gang vector`): one per lane.
    pub vector: bool,
    /// The vector loop that is the gang loop's whole body, when its bounds are formulas too
    /// (the same in every gang-loop iteration): a split kernel's blocks share it.
    pub inner: Option<Counted>,
}

impl TripExpr {
    /// The value for the arguments `args` (parameter `i`'s slot at `args[i]`, an array's
    /// slot holding its host header) of parameters `params`; wrapping as the code does.
    /// `None` for an argument that is not there.
    ///
    /// # Safety
    /// The array parameters' slots hold live array headers.
    pub unsafe fn eval(&self, args: &[u64], params: &[ParamDesc]) -> Option<i64> {
        let header = |i: usize| {
            let p = *args.get(i)? as usize as *const ArrayHeader;
            (!p.is_null()).then_some(p)
        };
        Some(match self {
            TripExpr::Const(v) => *v,
            TripExpr::Arg(i) => {
                let slot = *args.get(*i)?;
                if params.get(*i)?.elem == ELEM_I32 {
                    slot as u32 as i32 as i64
                } else {
                    slot as i64
                }
            }
            TripExpr::Len(i) => (*header(*i)?).len,
            TripExpr::Dim(i, d) if *d < MAX_RANK => (*header(*i)?).dims[*d],
            TripExpr::Dim(..) => return None,
            TripExpr::Add(a, b) => a.eval(args, params)?.wrapping_add(b.eval(args, params)?),
            TripExpr::Sub(a, b) => a.eval(args, params)?.wrapping_sub(b.eval(args, params)?),
            TripExpr::Mul(a, b) => a.eval(args, params)?.wrapping_mul(b.eval(args, params)?),
        })
    }
}

impl GangLoop {
    /// How many iterations a gang of `workers` rows of `vector` lanes takes at a time.
    pub fn per_gang(&self, workers: u32, vector: u32) -> u32 {
        let w = if self.worker { workers } else { 1 };
        let v = if self.vector { vector } else { 1 };
        w.saturating_mul(v).max(1)
    }

    /// How many iterations the loop has for these arguments.
    ///
    /// # Safety
    /// As [`TripExpr::eval`].
    pub unsafe fn trip_count(&self, args: &[u64], params: &[ParamDesc]) -> Option<u64> {
        self.counted.trip_count(args, params)
    }
}

impl Counted {
    /// How many iterations the loop has for these arguments.
    ///
    /// # Safety
    /// As [`TripExpr::eval`].
    pub unsafe fn trip_count(&self, args: &[u64], params: &[ParamDesc]) -> Option<u64> {
        let (start, end) = (self.start.eval(args, params)?, self.end.eval(args, params)?);
        if self.step <= 0 {
            return None;
        }
        let span = i128::from(end) - i128::from(start) + i128::from(self.inclusive);
        if span <= 0 {
            return Some(0);
        }
        let step = i128::from(self.step);
        u64::try_from((span + step - 1) / step).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ELEM_F64, ELEM_I64};

    fn header(dims: &[i64]) -> ArrayHeader {
        let mut h: ArrayHeader = unsafe { std::mem::zeroed() };
        h.len = dims.iter().product();
        h.dims = [1; MAX_RANK];
        h.dims[..dims.len()].copy_from_slice(dims);
        h.rank = dims.len() as u32;
        h
    }

    #[test]
    fn trip_counts_follow_the_loop_forms() {
        let a = header(&[7, 5]);
        let args = [&a as *const ArrayHeader as u64, (-3i32) as u32 as u64, 10];
        let param = |elem| ParamDesc {
            pass: crate::launch::ParamPass::Value,
            elem,
        };
        let elems = [param(ELEM_F64), param(ELEM_I32), param(ELEM_I64)];
        let count = |start, end, step, inclusive| unsafe {
            Counted {
                start,
                end,
                step,
                inclusive,
            }
            .trip_count(&args, &elems)
        };
        use TripExpr::*;
        assert_eq!(count(Const(0), Len(0), 1, false), Some(35));
        assert_eq!(
            count(
                Const(1),
                Sub(Box::new(Dim(0, 0)), Box::new(Const(1))),
                1,
                false
            ),
            Some(5)
        );
        assert_eq!(count(Arg(1), Arg(2), 1, false), Some(13));
        assert_eq!(count(Arg(1), Arg(2), 1, true), Some(14));
        assert_eq!(count(Const(0), Arg(2), 3, false), Some(4));
        assert_eq!(count(Arg(2), Arg(1), 1, false), Some(0));
        assert_eq!(
            count(
                Const(0),
                Mul(Box::new(Dim(0, 1)), Box::new(Arg(2))),
                2,
                false
            ),
            Some(25)
        );
        assert_eq!(count(Const(0), Arg(5), 1, false), None);
        assert_eq!(count(Const(0), Dim(0, 9), 1, false), None);
    }
}
