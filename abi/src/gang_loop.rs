//! A region's outermost gang loop, as a formula of the launch's arguments: how many
//! iterations it has, worked out before the launch, so that a GPU's grid fits the work (a
//! one-element loop gets one block, a long streaming loop enough blocks that every thread
//! takes a few iterations) rather than one size for every loop. The front end finds the
//! formula (`acc_lang::ir::gang_loop`), the PTX back end hands it over with its kernel, and
//! the runtime evaluates it on the arguments of each launch.

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
    /// The lesser (a loop cut to a block of a device split, `split.rs`).
    Min(Box<TripExpr>, Box<TripExpr>),
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

/// The values of a launch's arguments that a formula reads (the runtime reads them from the
/// argument slots and array headers). `None` for an argument that is not there.
pub trait Arguments {
    /// Scalar parameter `i`, sign-extended to 64 bits.
    fn scalar(&self, i: usize) -> Option<i64>;
    /// `len` of array parameter `i`.
    fn len(&self, i: usize) -> Option<i64>;
    /// Extent `d` of array parameter `i`.
    fn extent(&self, i: usize, d: usize) -> Option<i64>;
}

impl TripExpr {
    /// The value for these arguments, wrapping as the code does.
    pub fn eval(&self, args: &impl Arguments) -> Option<i64> {
        Some(match self {
            TripExpr::Const(v) => *v,
            TripExpr::Arg(i) => args.scalar(*i)?,
            TripExpr::Len(i) => args.len(*i)?,
            TripExpr::Dim(i, d) => args.extent(*i, *d)?,
            TripExpr::Add(a, b) => a.eval(args)?.wrapping_add(b.eval(args)?),
            TripExpr::Sub(a, b) => a.eval(args)?.wrapping_sub(b.eval(args)?),
            TripExpr::Mul(a, b) => a.eval(args)?.wrapping_mul(b.eval(args)?),
            TripExpr::Min(a, b) => a.eval(args)?.min(b.eval(args)?),
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
    pub fn trip_count(&self, args: &impl Arguments) -> Option<u64> {
        self.counted.trip_count(args)
    }
}

impl Counted {
    /// How many iterations the loop has for these arguments.
    pub fn trip_count(&self, args: &impl Arguments) -> Option<u64> {
        let (start, end) = (self.start.eval(args)?, self.end.eval(args)?);
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

    /// Scalars `[-3, 10]`; one array of extents `[7, 5]`, as parameter 0.
    struct Args;

    impl Arguments for Args {
        fn scalar(&self, i: usize) -> Option<i64> {
            [0, -3, 10].get(i).copied()
        }
        fn len(&self, i: usize) -> Option<i64> {
            (i == 0).then_some(35)
        }
        fn extent(&self, i: usize, d: usize) -> Option<i64> {
            [7, 5].get(d).copied().filter(|_| i == 0)
        }
    }

    fn count(start: TripExpr, end: TripExpr, step: i64, inclusive: bool) -> Option<u64> {
        Counted {
            start,
            end,
            step,
            inclusive,
        }
        .trip_count(&Args)
    }

    #[test]
    fn trip_counts_follow_the_loop_forms() {
        use TripExpr::*;
        let boxed = Box::new;
        assert_eq!(count(Const(0), Len(0), 1, false), Some(35));
        assert_eq!(
            count(Const(1), Sub(boxed(Dim(0, 0)), boxed(Const(1))), 1, false),
            Some(5)
        );
        assert_eq!(count(Arg(1), Arg(2), 1, false), Some(13));
        assert_eq!(count(Arg(1), Arg(2), 1, true), Some(14));
        assert_eq!(count(Const(0), Arg(2), 3, false), Some(4));
        assert_eq!(count(Arg(2), Arg(1), 1, false), Some(0));
        assert_eq!(
            count(Const(0), Mul(boxed(Dim(0, 1)), boxed(Arg(2))), 2, false),
            Some(25)
        );
        assert_eq!(count(Const(0), Arg(5), 1, false), None);
        assert_eq!(count(Const(0), Dim(0, 9), 1, false), None);
        assert_eq!(count(Const(0), Const(10), 0, false), None);
        // A split block: `min(hi * step, end - start) + start` with hi = 10, start = -3.
        let cut = Add(
            boxed(Min(
                boxed(Mul(boxed(Arg(2)), boxed(Const(1)))),
                boxed(Const(8)),
            )),
            boxed(Arg(1)),
        );
        assert_eq!(count(Arg(1), cut, 1, false), Some(8));
    }

    #[test]
    fn a_gang_takes_an_iteration_per_thread_it_shares_the_loop_with() {
        let g = |worker, vector| GangLoop {
            counted: Counted {
                start: TripExpr::Const(0),
                end: TripExpr::Const(1),
                step: 1,
                inclusive: false,
            },
            worker,
            vector,
            inner: None,
        };
        assert_eq!(g(false, false).per_gang(4, 32), 1);
        assert_eq!(g(true, false).per_gang(4, 32), 4);
        assert_eq!(g(false, true).per_gang(4, 32), 32);
        assert_eq!(g(true, true).per_gang(4, 32), 128);
    }
}
