//! A compute construct's split over several devices (`devices(…)`, LANGUAGE.md 7.11, acc's
//! extension): which loop is cut into contiguous blocks of iterations, and which rows of each
//! array one block reads and writes. The front end decides it (`acc_lang::analysis::split`),
//! lowering puts it into the IR (`ir::Region::split`), the host back end hands it to the runtime
//! in the region's descriptor (`RegionDesc::split`), and the runtime cuts each launch by it.
//!
//! The split loop's iterations are numbered `0..trip` (its *normalized* index: iteration `k`
//! runs `start + k * step`). Compiled code receives two hidden `i64` parameters, `lo` and `hi`,
//! and runs exactly the iterations `k` with `lo <= k < min(hi, trip)`: `lo = 0, hi = trip` (or
//! any `hi` from `trip` to `i64::MAX / step`, `LoopSplit::everything`) runs the whole loop. The
//! cut loop is `for j in start + lo*step .. start + min(hi*step, end' - start)` by `step`, with
//! `end'` one past an inclusive end: `hi*step` may not overflow, hence the upper limit.

use crate::gang_loop::{Arguments, Counted};

/// The rows (first, slowest dimension; a 1-D array's elements) of one array that a block of
/// the split loop's iterations reads or writes, in terms of the values `first ..= last` that the
/// loop's variable takes in the block (`LoopSplit::values`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowSpan {
    /// None.
    None,
    /// The rows `coef * first + lo_offset ..= coef * last + hi_offset`, from subscripts
    /// `coef * j + c` of the loop variable `j` (`coef > 0`), `lo_offset` the least and
    /// `hi_offset` the greatest `c`.
    Rows {
        coef: i64,
        lo_offset: i64,
        hi_offset: i64,
    },
    /// Every row: a subscript that is not affine in the split loop's index.
    Whole,
}

impl RowSpan {
    /// The rows, as an inclusive range, that a block whose loop variable runs `first ..= last`
    /// uses (`None`: no row; an empty block is `None`). Not clipped to the array: a block at
    /// the edge may reach past it, where the code's bounds check stops it.
    pub fn rows(&self, first: i64, last: i64, rows_in_array: i64) -> Option<(i64, i64)> {
        match *self {
            RowSpan::None => None,
            _ if last < first => None,
            RowSpan::Whole => (rows_in_array > 0).then(|| (0, rows_in_array - 1)),
            RowSpan::Rows {
                coef,
                lo_offset,
                hi_offset,
            } => Some((
                coef.saturating_mul(first).saturating_add(lo_offset),
                coef.saturating_mul(last).saturating_add(hi_offset),
            )),
        }
    }

    /// Both uses together: the rows either one takes.
    pub fn union(&self, other: &RowSpan) -> RowSpan {
        match (self, other) {
            (RowSpan::None, x) | (x, RowSpan::None) => x.clone(),
            (RowSpan::Whole, _) | (_, RowSpan::Whole) => RowSpan::Whole,
            (
                RowSpan::Rows {
                    coef: a,
                    lo_offset: alo,
                    hi_offset: ahi,
                },
                RowSpan::Rows {
                    coef: b,
                    lo_offset: blo,
                    hi_offset: bhi,
                },
            ) if a == b => RowSpan::Rows {
                coef: *a,
                lo_offset: (*alo).min(*blo),
                hi_offset: (*ahi).max(*bhi),
            },
            _ => RowSpan::Whole,
        }
    }
}

/// What one block of the split loop does to one array parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ArraySplit {
    /// The region parameter (an `Array` one).
    pub param: usize,
    pub reads: RowSpan,
    pub writes: RowSpan,
}

/// Which devices of the current type the construct runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    /// `devices(all)`: every device of the current type, in number order.
    All,
    /// `devices(0, 2)`: these device numbers, in this order (constants in this version).
    Numbers(Vec<i64>),
}

/// How a region's launch is cut over devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SplitPlan {
    pub devices: DeviceList,
    /// The split itself, or why the construct runs on one device (the current one).
    pub split: Result<LoopSplit, String>,
}

/// A region whose split loop can be cut.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoopSplit {
    /// The hidden `i64` parameters that bound the block: its first normalized iteration and
    /// one past its last.
    pub lo_param: usize,
    pub hi_param: usize,
    /// The split loop as written (before lowering cut it): its trip count on a launch's
    /// arguments is what the runtime divides.
    pub counted: Counted,
    /// Every array parameter the region uses, in parameter order.
    pub arrays: Vec<ArraySplit>,
    /// The order of a block's iterations can be seen: the region prints, or calls a function
    /// (which may). Such a block runs its iterations in one launch, in order (the runtime
    /// does not run its edge iterations first).
    pub ordered: bool,
}

impl LoopSplit {
    /// The split loop's iterations on a launch's arguments (`None`: the formula could not be
    /// read; run the whole loop, `lo = 0, hi = i64::MAX`).
    pub fn trip_count(&self, args: &impl Arguments) -> Option<i64> {
        i64::try_from(self.counted.trip_count(args)?).ok()
    }

    /// The `(lo, hi)` that run the whole loop without knowing its trip count.
    pub fn everything(&self) -> (i64, i64) {
        (0, i64::MAX / self.counted.step.max(1))
    }

    /// The first and last values of the loop variable in the block `[lo, hi)` of normalized
    /// iterations (`last < first` for an empty block), for `RowSpan::rows`.
    pub fn values(&self, lo: i64, hi: i64, args: &impl Arguments) -> Option<(i64, i64)> {
        let start = self.counted.start.eval(args)?;
        let at = |k: i64| start.checked_add(k.checked_mul(self.counted.step)?);
        Some((at(lo)?, at(hi - 1)?))
    }
}

/// The blocks `[lo, hi)` of `trip` iterations over `devices` devices: contiguous, in device
/// order, the first `trip % devices` one iteration longer.
pub fn blocks(trip: i64, devices: usize) -> Vec<(i64, i64)> {
    let n = devices.max(1) as i64;
    let trip = trip.max(0);
    let (base, extra) = (trip / n, trip % n);
    let mut lo = 0;
    (0..n)
        .map(|d| {
            let hi = lo + base + i64::from(d < extra);
            let block = (lo, hi);
            lo = hi;
            block
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_contiguous_and_uneven_splits_go_first() {
        assert_eq!(blocks(10, 3), vec![(0, 4), (4, 7), (7, 10)]);
        assert_eq!(blocks(2, 3), vec![(0, 1), (1, 2), (2, 2)]);
        assert_eq!(blocks(0, 2), vec![(0, 0), (0, 0)]);
        assert_eq!(blocks(-5, 1), vec![(0, 0)]);
        assert_eq!(blocks(7, 0), vec![(0, 7)]);
    }

    #[test]
    fn rows_of_a_block() {
        // A Jacobi read `A[j-1..=j+1]`; the block runs j = 3..=5: rows 2..=6.
        let halo = RowSpan::Rows {
            coef: 1,
            lo_offset: -1,
            hi_offset: 1,
        };
        assert_eq!(halo.rows(3, 5, 100), Some((2, 6)));
        assert_eq!(halo.rows(5, 4, 100), None);
        assert_eq!(RowSpan::Whole.rows(0, 1, 8), Some((0, 7)));
        assert_eq!(RowSpan::None.rows(0, 4, 8), None);
        // Every other row: `b[2*j + 1]`, j = 3..=5 → rows 7..=11.
        let odd = RowSpan::Rows {
            coef: 2,
            lo_offset: 1,
            hi_offset: 1,
        };
        assert_eq!(odd.rows(3, 5, 100), Some((7, 11)));
    }

    #[test]
    fn block_values_follow_start_and_step() {
        struct NoArgs;
        impl Arguments for NoArgs {
            fn scalar(&self, _: usize) -> Option<i64> {
                None
            }
            fn len(&self, _: usize) -> Option<i64> {
                None
            }
            fn extent(&self, _: usize, _: usize) -> Option<i64> {
                None
            }
        }
        use crate::gang_loop::TripExpr;
        // `for j in 1..=10 by 3`: j = 1, 4, 7, 10; the block [1, 3) runs j = 4 and 7.
        let split = LoopSplit {
            lo_param: 0,
            hi_param: 1,
            counted: Counted {
                start: TripExpr::Const(1),
                end: TripExpr::Const(10),
                step: 3,
                inclusive: true,
            },
            arrays: Vec::new(),
            ordered: false,
        };
        assert_eq!(split.trip_count(&NoArgs), Some(4));
        assert_eq!(split.values(1, 3, &NoArgs), Some((4, 7)));
        assert_eq!(split.values(2, 2, &NoArgs), Some((7, 4)));
    }

    #[test]
    fn unions_widen_to_both() {
        let r = |lo, hi| RowSpan::Rows {
            coef: 1,
            lo_offset: lo,
            hi_offset: hi,
        };
        assert_eq!(r(0, 0).union(&r(-1, 1)), r(-1, 1));
        assert_eq!(RowSpan::None.union(&r(2, 3)), r(2, 3));
        assert_eq!(r(0, 0).union(&RowSpan::Whole), RowSpan::Whole);
        let twice = RowSpan::Rows {
            coef: 2,
            lo_offset: 0,
            hi_offset: 0,
        };
        assert_eq!(r(0, 0).union(&twice), RowSpan::Whole);
    }
}
