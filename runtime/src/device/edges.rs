//! Edges first: a GPU's part of a split launch that sends rows to other GPUs (halo rows,
//! `Devices::push_stale_rows`) runs the iterations that write those rows first, as a launch
//! of their own, and then the rest of its block. The rows leave on the GPU's push stream as
//! soon as the edge iterations are done, while the rest of the block runs, so that the copy
//! between GPUs and the wait for it are off the critical path (docs/ARCHITECTURE.md,
//! "Several GPUs").
//!
//! This is a plan: which iterations go first, and whether the split pays. `split.rs`
//! carries it out.

use std::ops::Range;

/// Whether a part runs its edge iterations first (`ACC_EDGES_FIRST`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EdgesFirst {
    /// Where each part's kernel is long beside the host's time to start every part
    /// (`pays`).
    #[default]
    Auto,
    /// Wherever a part sends rows (tests use it on small arrays).
    On,
    Off,
}

impl EdgesFirst {
    /// `auto`, `on` (or `1`) and `off` (or `0`).
    pub fn from_name(name: &str) -> Option<EdgesFirst> {
        match name.trim() {
            "auto" => Some(EdgesFirst::Auto),
            "on" | "1" => Some(EdgesFirst::On),
            "off" | "0" => Some(EdgesFirst::Off),
            _ => None,
        }
    }

    /// Whether a part that writes `written` bytes, one of `parts` parts, runs its edges
    /// first. The edge launch costs the host one more kernel start per GPU, and the GPU a
    /// short kernel; what it hides is the copy between GPUs and the wait for it, 10–20 µs.
    /// That pays where the rest of the block runs longer than the host takes to start every
    /// part: with `AUTO_BYTES_PER_PART` written per part, a GPU's kernel (at about 3 TB/s,
    /// reading as much as it writes) lasts about 8 µs per part. Measured on four H100s
    /// (docs/GPU-RESULTS.md, session 20): Jacobi at 8192² gains on two and four GPUs, and at
    /// 4096² on two, where each part writes 67 MB; at 4096² on four (33 MB a part) the host
    /// is the limit and the extra starts cost more than they hide.
    pub fn pays(self, written: u64, parts: usize) -> bool {
        match self {
            EdgesFirst::On => true,
            EdgesFirst::Off => false,
            EdgesFirst::Auto => written >= parts as u64 * AUTO_BYTES_PER_PART,
        }
    }
}

/// Bytes a part writes per part of the launch for `EdgesFirst::Auto` to run its edges first.
const AUTO_BYTES_PER_PART: u64 = 12 << 20;

/// The most iterations an edge may have: a halo is a row or two.
const MAX_EDGE: i64 = 16;

/// A part's block `lo..hi` cut so that the iterations writing the rows it sends run first:
/// `low` and `high` (either may be empty), then `interior`; `bounds` are the kernel's
/// parameters that take a launch's first iteration and one past its last
/// (`LoopSplit::lo_param`, `hi_param`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Edges {
    pub(crate) low: Range<i64>,
    pub(crate) high: Range<i64>,
    pub(crate) interior: Range<i64>,
    pub(crate) bounds: (usize, usize),
}

impl Edges {
    /// The edge launches, in order, without the empty ones.
    pub(crate) fn first(&self) -> impl Iterator<Item = Range<i64>> + '_ {
        [&self.low, &self.high]
            .into_iter()
            .filter(|r| !r.is_empty())
            .cloned()
    }
}

/// The fewest iterations at each end of block `lo..hi` whose writes take in every row the
/// part sends, given `misses(a, b)`: whether iterations `a..b` write none of those rows.
/// The low edge is found against the block's first half and the high edge against its second;
/// then the interior between them must miss every sent row as a whole (a hull of strided
/// writes may reach across a half). `None` where no such cut exists with edges of at most
/// `MAX_EDGE` iterations and a quarter of the block each, or where nothing needs to go first.
pub(crate) fn edges(
    block: Range<i64>,
    misses: impl Fn(i64, i64) -> bool,
    bounds: (usize, usize),
) -> Option<Edges> {
    let (lo, hi) = (block.start, block.end);
    let n = hi - lo;
    if n < 4 {
        return None;
    }
    let most = MAX_EDGE.min(n / 4);
    let mid = lo + n / 2;
    let a = (0..=most).find(|&a| misses(lo + a, mid))?;
    let b = (0..=most).find(|&b| misses(mid, hi - b))?;
    if a + b == 0 || !misses(lo + a, hi - b) {
        return None;
    }
    Some(Edges {
        low: lo..lo + a,
        high: hi - b..hi,
        interior: lo + a..hi - b,
        bounds,
    })
}

#[cfg(test)]
#[allow(clippy::single_range_in_vec_init)] // a list of one range of rows sent
mod tests {
    use super::*;

    const BOUNDS: (usize, usize) = (3, 4);

    fn edges(block: Range<i64>, misses: impl Fn(i64, i64) -> bool) -> Option<Edges> {
        super::edges(block, misses, BOUNDS)
    }

    /// Iterations `a..b` writing rows `coef * i + offset` (for `i` in `a..b`) miss `sent`.
    fn writes_miss(coef: i64, offset: i64, sent: Vec<Range<i64>>) -> impl Fn(i64, i64) -> bool {
        move |a, b| {
            if a >= b {
                return true;
            }
            let (x, y) = (coef * a + offset, coef * (b - 1) + offset);
            let (first, last) = (x.min(y), x.max(y));
            sent.iter().all(|r| last < r.start || first >= r.end)
        }
    }

    #[test]
    fn a_middle_block_sends_its_first_and_last_rows() {
        // Jacobi's copy loop on the second of three GPUs: iterations 10..20 write rows
        // 11..21 (j = i + 1); rows 11 and 20 go to the neighbours.
        let e = edges(10..20, writes_miss(1, 1, vec![11..12, 20..21])).unwrap();
        assert_eq!(e.low, 10..11);
        assert_eq!(e.high, 19..20);
        assert_eq!(e.interior, 11..19);
        assert_eq!(e.first().collect::<Vec<_>>(), vec![10..11, 19..20]);
    }

    #[test]
    fn an_end_block_sends_one_side_and_wide_halos_take_more_iterations() {
        let e = edges(0..100, writes_miss(1, 0, vec![97..100])).unwrap();
        assert_eq!(e.first().count(), 1);
        assert_eq!((e.low, e.high, e.interior), (0..0, 97..100, 0..97));
        // Two rows per iteration (rows 2i and 2i+1 as a hull of one row per iteration).
        let e = edges(0..40, writes_miss(2, 0, vec![0..4])).unwrap();
        assert_eq!((e.low, e.interior), (0..2, 2..40));
        // Rows that fall as the iterations rise (row 99 - i; a `RowSpan` never does this, the
        // cut does not rely on it).
        let e = edges(0..100, writes_miss(-1, 99, vec![0..1])).unwrap();
        assert_eq!((e.high, e.interior), (99..100, 0..99));
    }

    #[test]
    fn no_cut_where_the_sent_rows_are_not_at_an_end_or_the_block_is_small() {
        // A row written in the middle of the block.
        assert_eq!(edges(0..100, writes_miss(1, 0, vec![50..51])), None);
        // A halo deeper than the edges may be.
        assert_eq!(edges(0..100, writes_miss(1, 0, vec![0..30])), None);
        // Three iterations: nothing to overlap.
        assert_eq!(edges(0..3, writes_miss(1, 0, vec![0..1])), None);
        // Nothing sent.
        assert_eq!(edges(0..100, writes_miss(1, 0, vec![])), None);
        // Every iteration writes the whole array.
        assert_eq!(edges(0..100, |_, _| false), None);
    }

    #[test]
    fn auto_pays_for_long_parts_only() {
        assert!(EdgesFirst::Auto.pays(64 << 20, 2));
        assert!(!EdgesFirst::Auto.pays(32 << 20, 4));
        assert!(EdgesFirst::On.pays(1, 8));
        assert!(!EdgesFirst::Off.pays(u64::MAX, 1));
        assert_eq!(EdgesFirst::from_name(" on "), Some(EdgesFirst::On));
        assert_eq!(EdgesFirst::from_name("sometimes"), None);
    }
}
