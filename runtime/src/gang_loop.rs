//! A launch's arguments as the values a gang-loop formula reads (`acc_abi::gang_loop`): the
//! front end writes the formula of a region's outermost gang loop, the GPU device evaluates it
//! here on each launch's argument slots and array headers to size its grid.

use acc_abi::gang_loop::Arguments;

use crate::abi::{ArrayHeader, ELEM_I32};
use crate::launch::ParamDesc;

/// The argument slots of a launch (parameter `i`'s slot at `args[i]`, an array's slot holding
/// its host header) of a region with parameters `params`.
pub struct LaunchArgs<'a> {
    args: &'a [u64],
    params: &'a [ParamDesc],
}

impl<'a> LaunchArgs<'a> {
    /// # Safety
    /// The array parameters' slots hold live array headers while the value is used.
    pub unsafe fn new(args: &'a [u64], params: &'a [ParamDesc]) -> LaunchArgs<'a> {
        LaunchArgs { args, params }
    }

    fn header(&self, i: usize) -> Option<&ArrayHeader> {
        let p = *self.args.get(i)? as usize as *const ArrayHeader;
        // SAFETY: `new`'s caller promised live headers in the array slots.
        unsafe { p.as_ref() }
    }
}

impl Arguments for LaunchArgs<'_> {
    fn scalar(&self, i: usize) -> Option<i64> {
        let slot = *self.args.get(i)?;
        Some(if self.params.get(i)?.elem == ELEM_I32 {
            slot as u32 as i32 as i64
        } else {
            slot as i64
        })
    }

    fn len(&self, i: usize) -> Option<i64> {
        Some(self.header(i)?.len)
    }

    fn extent(&self, i: usize, d: usize) -> Option<i64> {
        Some(*self.header(i)?.dims.get(d)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::abi::{ELEM_F64, ELEM_I64, MAX_RANK};
    use acc_abi::gang_loop::{Counted, TripExpr};

    fn header(dims: &[i64]) -> ArrayHeader {
        let mut h: ArrayHeader = unsafe { std::mem::zeroed() };
        h.len = dims.iter().product();
        h.dims = [1; MAX_RANK];
        h.dims[..dims.len()].copy_from_slice(dims);
        h.rank = dims.len() as u32;
        h
    }

    #[test]
    fn formulas_read_scalars_and_array_headers() {
        let a = header(&[7, 5]);
        let args = [&a as *const ArrayHeader as u64, (-3i32) as u32 as u64, 10];
        let param = |elem| ParamDesc::new(crate::launch::ParamPass::Value, elem);
        let elems = [param(ELEM_F64), param(ELEM_I32), param(ELEM_I64)];
        // SAFETY: slot 0 holds `a`'s header, alive for the test.
        let launch = unsafe { LaunchArgs::new(&args, &elems) };
        let count = |start, end, step, inclusive| {
            Counted {
                start,
                end,
                step,
                inclusive,
            }
            .trip_count(&launch)
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
