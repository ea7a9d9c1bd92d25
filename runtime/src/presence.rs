//! The presence table of one device: which parts of which arrays have a device copy, and how
//! many reasons each part has to stay there.
//!
//! OpenACC data clauses are "present-or" clauses (OpenACC 3.3, 2.7): whether `copyin(a)` moves
//! anything depends on what is already on the device, not on the clause. A `parallel copy(a)`
//! inside an `acc data copy(a)` region finds `a` present and only counts one more reference;
//! the data leaves the device when the last reference goes. So every discrete device keeps this
//! table, and every data clause, `enter data`/`exit data`, `declare` and `acc_copyin`-style
//! routine asks it before transferring.
//!
//! Why it is shaped the way it is:
//!
//! - **Two counters per present section** (2.6.7). Constructs with a body (data and compute
//!   constructs) count in the *structured* counter, `enter data`/`exit data`, `declare` and the
//!   `acc_*` routines in the *dynamic* one, and data leaves when both are zero. Keeping them
//!   apart is what lets a data region nested in an `enter data` … `exit data` pair end without
//!   freeing data the dynamic side still holds, lets `exit data delete(a) finalize` drop every
//!   dynamic reference at once without touching the structured ones, and makes an `exit data`
//!   for data only a region holds a no-op instead of pulling it from under the region. A
//!   region's `present` and `no_create` clauses hold a structured reference too
//!   ([`PresenceTable::enter_present`]: counted only when the data is there, never made).
//! - **One device copy per array, shared by all its present sections.** Entering the first
//!   section of an array allocates the whole array once (`make`); a section only decides which
//!   elements are transferred and may be used. A kernel then indexes every array the same way,
//!   whichever section brought it, and two sections of one array never need two allocations.
//!   The copy is handed back to the caller when the array's last section leaves.
//! - **Present sections of one array are disjoint.** A clause's section either lies inside one
//!   present section (it is counted there), or is disjoint from all of them (it becomes a new
//!   entry); a section that overlaps present data without lying inside one present section is
//!   an error (LANGUAGE.md 7.3; OpenACC requires present data to lie within one present
//!   allocation). That makes "the entry a section belongs to" unambiguous, for exits too.
//! - **The table moves no data and frees nothing.** Its answers say what the caller must do:
//!   [`Entered::Fresh`] — transfer in (for `copy`/`copyin`); [`Exited::Removed`] and
//!   [`Exited::Freed`] — transfer out (for `copy`/`copyout`), and for `Freed` release the
//!   device copy, which only the caller can do at the right time: memory must not be freed while
//!   a queued asynchronous operation may still use it (LANGUAGE.md 7.7). Being generic over the
//!   device copy `D` keeps the rules testable without a device and shared by every discrete
//!   device (nvidia, emulated).
//!
//! OpenACC's "no action" cases are answers too, not errors ([`NoAction`]): an exit whose counter
//! is already zero does nothing (3.3, 2.7.9 and 2.7.11: "if the dynamic reference counter for
//! var is zero, no action is taken"; likewise for the structured counter at a region's exit),
//! and data never entered has a zero dynamic counter, so `exit data delete(a)` or
//! `acc_delete(a)` of absent data does nothing either. A *structured* exit of absent data is
//! reported as [`PresenceError::Absent`]: every region exit pairs with an entry, so it only
//! happens when the device was shut down or reset inside the region, and the caller decides.
//! A section with no elements (`a[i:0]`) is treated like OpenACC's null pointer: it is never
//! entered, counted or transferred.
//!
//! Keys are array identities (`ArrayHeader::id`). A `reshape` shares its owner's data, so the
//! caller keys a view by its owner's id and gives every section in the owner's shape
//! ([`Section::reshaped`]): all sections of one id must have one shape.

use crate::abi::MAX_RANK;
use crate::error::{SectionError, SectionErrorKind, SectionRange};
use std::collections::btree_map::{BTreeMap, Entry};
use std::convert::Infallible;

// ---------------------------------------------------------------------------------------------
// Sections

/// A box of an array's index space: dimension `d < rank` covers `lo[d]..hi[d]` (`hi`
/// exclusive). Dimensions past `rank` hold `0..1`, so equal boxes compare equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Section {
    pub rank: usize,
    pub lo: [i64; MAX_RANK],
    pub hi: [i64; MAX_RANK],
}

impl Section {
    /// The whole array of extents `dims` (rank 0, a scalar, has one element).
    ///
    /// # Panics
    /// When `dims` has more than `MAX_RANK` entries; array headers never do.
    pub fn whole(dims: &[i64]) -> Section {
        assert!(
            dims.len() <= MAX_RANK,
            "an array of rank {} (at most {MAX_RANK})",
            dims.len()
        );
        let mut section = Section {
            rank: dims.len(),
            lo: [0; MAX_RANK],
            hi: [1; MAX_RANK],
        };
        for (hi, &extent) in section.hi.iter_mut().zip(dims) {
            *hi = extent.max(0);
        }
        section
    }

    /// `a[start:count, …]` of an array of extents `dims`: a missing start is 0, a missing count
    /// runs to the end of the dimension, and dimensions with no range are whole.
    pub fn from_ranges(dims: &[i64], ranges: &[SectionRange]) -> Result<Section, SectionError> {
        let error = |kind| SectionError {
            ranges: ranges.to_vec(),
            dims: dims.to_vec(),
            kind,
        };
        if ranges.len() > dims.len() {
            return Err(error(SectionErrorKind::TooManyRanges));
        }
        let mut section = Section::whole(dims);
        for (dim, (&extent, &(start, count))) in dims.iter().zip(ranges).enumerate() {
            let lo = start.unwrap_or(0);
            if lo < 0 {
                return Err(error(SectionErrorKind::NegativeStart { dim, start: lo }));
            }
            if lo > extent {
                return Err(error(SectionErrorKind::StartPastEnd { dim, start: lo }));
            }
            let count = count.unwrap_or(extent - lo);
            if count < 0 {
                return Err(error(SectionErrorKind::NegativeCount { dim, count }));
            }
            match lo.checked_add(count) {
                Some(hi) if hi <= extent => {
                    section.lo[dim] = lo;
                    section.hi[dim] = hi;
                }
                _ => return Err(error(SectionErrorKind::PastEnd { dim })),
            }
        }
        Ok(section)
    }

    /// The number of indices the section covers in dimension `dim` (1 past the rank).
    pub fn count(&self, dim: usize) -> i64 {
        match (self.lo.get(dim), self.hi.get(dim)) {
            (Some(lo), Some(hi)) if dim < self.rank => (hi - lo).max(0),
            _ => 1,
        }
    }

    /// The number of elements in the section.
    pub fn elements(&self) -> i64 {
        (0..self.rank).fold(1i64, |n, d| n.saturating_mul(self.count(d)))
    }

    /// Whether the section has no elements (`a[i:0]`, or any section of an empty array).
    pub fn is_empty(&self) -> bool {
        (0..self.rank).any(|d| self.count(d) == 0)
    }

    /// Whether every element of `other` is in `self`. Sections of different ranks (of different
    /// arrays, or of one array in two shapes) never contain each other; an empty section lies
    /// in every section of its rank.
    pub fn contains(&self, other: &Section) -> bool {
        self.rank == other.rank
            && (other.is_empty()
                || (0..self.rank).all(|d| self.lo[d] <= other.lo[d] && other.hi[d] <= self.hi[d]))
    }

    /// Whether the two sections share an element (never for different ranks).
    pub fn overlaps(&self, other: &Section) -> bool {
        self.rank == other.rank
            && !self.is_empty()
            && !other.is_empty()
            && (0..self.rank).all(|d| self.lo[d] < other.hi[d] && other.lo[d] < self.hi[d])
    }

    /// Whether the section is the whole of an array of extents `dims`.
    pub fn is_whole(&self, dims: &[i64]) -> bool {
        self.rank == dims.len()
            && dims
                .iter()
                .enumerate()
                .all(|(d, &extent)| self.lo[d] == 0 && self.hi[d] == extent)
    }

    /// The contiguous runs `(offset, length)` of elements (row-major offsets into an array of
    /// extents `dims`) that make up the section, in increasing order and merged where
    /// consecutive: a whole array, or a block of whole rows, is one run; a block of columns is
    /// one run per row. This is what a transfer of the section copies.
    pub fn runs(&self, dims: &[i64]) -> Runs {
        Runs::new(self, dims)
    }

    /// The section as written in acc: `a` for the whole array, else `a[start:count, …]`.
    pub fn display(&self, name: &str, dims: &[i64]) -> String {
        if self.is_whole(dims) {
            return name.to_string();
        }
        let ranges: Vec<String> = (0..self.rank)
            .map(|d| format!("{}:{}", self.lo[d], self.count(d)))
            .collect();
        format!("{name}[{}]", ranges.join(", "))
    }

    /// The same elements as a box of an array of extents `to` holding the same data in another
    /// shape (a `reshape` of an array of extents `from`), when they form one: the whole array
    /// always does, a block of whole rows often does, a block of columns seldom does.
    pub fn reshaped(&self, from: &[i64], to: &[i64]) -> Option<Section> {
        let size = |dims: &[i64]| dims.iter().fold(1i64, |n, &e| n.saturating_mul(e.max(0)));
        if to.len() > MAX_RANK || size(from) != size(to) {
            return None;
        }
        if self.is_whole(from) {
            return Some(Section::whole(to));
        }
        if self.is_empty() {
            let mut empty = Section::whole(to);
            if empty.rank > 0 {
                empty.hi[0] = 0;
            }
            return Some(empty);
        }
        // If the elements form a box of `to`, its first and last elements are the box's
        // corners (row-major offsets grow with every index).
        let first = self.runs(from).next()?.0;
        let last = self.runs(from).last().map(|(at, len)| at + len - 1)?;
        let mut candidate = Section::whole(to);
        let (mut lo, mut hi) = (first, last);
        for d in (0..to.len()).rev() {
            let extent = to[d];
            candidate.lo[d] = lo % extent;
            candidate.hi[d] = hi % extent + 1;
            lo /= extent;
            hi /= extent;
        }
        let same =
            candidate.elements() == self.elements() && candidate.runs(to).eq(self.runs(from));
        same.then_some(candidate)
    }
}

/// The runs of a section: see [`Section::runs`].
#[derive(Clone, Debug)]
pub struct Runs {
    /// Index ranges of the outer dimensions, the ones stepped through one run at a time.
    lo: [i64; MAX_RANK],
    hi: [i64; MAX_RANK],
    /// Row-major element strides of the array.
    stride: [i64; MAX_RANK],
    /// The next run's indices in the outer dimensions `0..outer`.
    at: [i64; MAX_RANK],
    outer: usize,
    /// Offset of a run's first element within its outer position, and the run length.
    base: i64,
    len: i64,
    done: bool,
}

impl Runs {
    fn new(section: &Section, dims: &[i64]) -> Runs {
        debug_assert_eq!(section.rank, dims.len(), "a section of another rank");
        let rank = section.rank.min(MAX_RANK);
        let extent = |d: usize| dims.get(d).copied().unwrap_or(1).max(0);
        let mut stride = [0i64; MAX_RANK];
        let mut size = 1i64;
        for d in (0..rank).rev() {
            stride[d] = size;
            size = size.saturating_mul(extent(d));
        }
        // Trailing whole dimensions merge into one run with the dimension before them; the
        // dimensions before that are stepped through.
        let mut merged = rank;
        while merged > 0
            && section.lo[merged - 1] == 0
            && section.hi[merged - 1] == extent(merged - 1)
        {
            merged -= 1;
        }
        let (outer, base, len) = match merged.checked_sub(1) {
            None => (0, 0, size),
            Some(run) => (
                run,
                section.lo[run] * stride[run],
                section.count(run) * stride[run],
            ),
        };
        Runs {
            lo: section.lo,
            hi: section.hi,
            stride,
            at: section.lo,
            outer,
            base,
            len,
            done: section.is_empty() || len == 0,
        }
    }
}

impl Iterator for Runs {
    type Item = (i64, i64);

    fn next(&mut self) -> Option<(i64, i64)> {
        if self.done {
            return None;
        }
        let offset = self.base
            + (0..self.outer)
                .map(|d| self.at[d] * self.stride[d])
                .sum::<i64>();
        // Step the outer indices like an odometer, last dimension fastest.
        let mut d = self.outer;
        loop {
            if d == 0 {
                self.done = true;
                break;
            }
            d -= 1;
            self.at[d] += 1;
            if self.at[d] < self.hi[d] {
                break;
            }
            self.at[d] = self.lo[d];
        }
        Some((offset, self.len))
    }
}

// ---------------------------------------------------------------------------------------------
// The table

/// Which reference counter an entry or exit uses (OpenACC 3.3, 2.6.7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RefKind {
    /// Data and compute constructs: entered at the construct's start, exited at its end.
    Structured,
    /// `enter data`/`exit data`, `declare`, and `acc_copyin`, `acc_create`, `acc_copyout`,
    /// `acc_delete`.
    Dynamic,
}

/// One present section of an array and its reference counts (at least one is non-zero).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresentSection {
    pub section: Section,
    pub structured: u32,
    pub dynamic: u32,
}

impl PresentSection {
    fn new(section: Section, kind: RefKind) -> PresentSection {
        let mut entry = PresentSection {
            section,
            structured: 0,
            dynamic: 0,
        };
        *entry.count_mut(kind) = 1;
        entry
    }

    fn count_mut(&mut self, kind: RefKind) -> &mut u32 {
        match kind {
            RefKind::Structured => &mut self.structured,
            RefKind::Dynamic => &mut self.dynamic,
        }
    }
}

/// The presence table of one device; `D` is an array's device copy.
#[derive(Debug)]
pub struct PresenceTable<D> {
    /// By array identity. Ordered, so that `drain` and debugging output are reproducible.
    arrays: BTreeMap<u64, PresentArray<D>>,
}

/// An array with a device copy, and its present sections: disjoint, not empty, each with a
/// non-zero count.
#[derive(Debug)]
struct PresentArray<D> {
    device: D,
    sections: Vec<PresentSection>,
}

/// Where a (non-empty) section stands among an array's present sections.
enum Place {
    /// Inside the present section at this index.
    Inside(usize),
    /// Overlapping this present section without lying inside any.
    Overlapping(Section),
    Disjoint,
}

impl<D> PresentArray<D> {
    fn place(&self, section: &Section) -> Place {
        if section.is_empty() {
            return Place::Disjoint;
        }
        if let Some(i) = self
            .sections
            .iter()
            .position(|p| p.section.contains(section))
        {
            return Place::Inside(i);
        }
        match self.sections.iter().find(|p| p.section.overlaps(section)) {
            Some(p) => Place::Overlapping(p.section),
            None => Place::Disjoint,
        }
    }
}

/// The answer of [`PresenceTable::lookup`].
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup<'a, D> {
    /// The section lies inside one present section (an empty section: the array has a device
    /// copy).
    Present(&'a D),
    /// No element of the section is present.
    Absent,
    /// Some elements are present but the section does not lie inside one present section;
    /// `present` is a present section it overlaps.
    Partial { present: Section },
}

/// The answer of a successful [`PresenceTable::enter`].
#[derive(Debug, PartialEq, Eq)]
pub enum Entered<'a, D> {
    /// The section lies inside the present section `entry`, whose count went up: nothing to
    /// transfer.
    Present { entry: Section, device: &'a D },
    /// The section is newly present with count 1: transfer it in (`copy`, `copyin`).
    /// `made`: the device copy was just made, this being the array's first present section.
    Fresh { device: &'a D, made: bool },
    /// The section has no elements: nothing was entered, counted or made.
    Empty,
}

impl<'a, D> Entered<'a, D> {
    /// Whether the section was not present before, so that `copy`/`copyin` transfer it in.
    pub fn fresh(&self) -> bool {
        matches!(self, Entered::Fresh { .. })
    }

    /// The array's device copy (`None` for an empty section).
    pub fn device(&self) -> Option<&'a D> {
        match *self {
            Entered::Present { device, .. } | Entered::Fresh { device, .. } => Some(device),
            Entered::Empty => None,
        }
    }
}

/// The answer of a successful [`PresenceTable::exit`].
#[derive(Debug, PartialEq, Eq)]
pub enum Exited<'a, D> {
    /// A count went down and the section stays present (with these counts): nothing to do.
    Kept(PresentSection),
    /// OpenACC's "no action is taken", for the reason given.
    NoAction(NoAction),
    /// The present section `entry` left; other sections of the array stay, and so does its
    /// device copy. `copy`/`copyout`: transfer the exited section out of `device`.
    Removed { entry: Section, device: &'a D },
    /// The array's last present section `entry` left and the device copy with it.
    /// `copy`/`copyout`: transfer the exited section out of `device`; then free `device`, once
    /// no queued operation may still use it.
    Freed { entry: Section, device: D },
}

/// Why an exit did nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoAction {
    /// The section has no elements.
    Empty,
    /// A dynamic exit of data that is not present: its dynamic count is zero (OpenACC 3.3,
    /// 2.7.11).
    NotPresent,
    /// The section is present but the exit's counter is already zero: an `exit data` of data
    /// that only regions hold, or a region exit of data that only `enter data` holds.
    ZeroCount,
}

impl<'a, D> Exited<'a, D> {
    /// Whether the section left the device, so that `copy`/`copyout` transfer it out.
    pub fn removed(&self) -> bool {
        matches!(self, Exited::Removed { .. } | Exited::Freed { .. })
    }

    /// The device copy to transfer out of, when the section left.
    pub fn device(&self) -> Option<&D> {
        match self {
            Exited::Removed { device, .. } => Some(device),
            Exited::Freed { device, .. } => Some(device),
            Exited::Kept(_) | Exited::NoAction(_) => None,
        }
    }

    /// The device copy to free, when the array left the device.
    pub fn into_freed(self) -> Option<D> {
        match self {
            Exited::Freed { device, .. } => Some(device),
            _ => None,
        }
    }
}

/// A presence rule broken by an entry, exit or required lookup of a section (which the caller
/// has: it is not repeated here).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PresenceError {
    /// No element of the section is present (a `present` clause, `update`, a region's exit).
    Absent,
    /// The section overlaps the present section `present` without lying inside a present
    /// section.
    Partial { present: Section },
}

impl PresenceError {
    /// The error as a run-time error message, for section `requested` of the array `name` of
    /// extents `dims`, on the device the caller names (`device`, e.g. "nvidia device 0").
    pub fn message(&self, name: &str, dims: &[i64], requested: &Section, device: &str) -> String {
        let requested_text = requested.display(name, dims);
        match self {
            PresenceError::Absent => format!("`{requested_text}` is not present on {device}"),
            PresenceError::Partial { present } => {
                let present_text = present.display(name, dims);
                if requested.contains(present) {
                    format!(
                        "`{requested_text}` extends past `{present_text}`, the section present \
                         on {device}"
                    )
                } else {
                    format!(
                        "`{requested_text}` is only partly present on {device}: it overlaps the \
                         present section `{present_text}`"
                    )
                }
            }
        }
    }

    /// How to fix it.
    pub fn help(&self, name: &str, dims: &[i64]) -> String {
        match self {
            PresenceError::Absent => format!(
                "put `{name}` on the device first: a data clause on an enclosing `acc data`, \
                 `acc enter data copyin({name})`, or `acc_copyin({name})`"
            ),
            PresenceError::Partial { present } => format!(
                "a section must lie inside one present section: use a section inside `{}`, or \
                 make the whole section present at once",
                present.display(name, dims)
            ),
        }
    }
}

/// Why [`PresenceTable::try_enter`] failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnterError<E> {
    Presence(PresenceError),
    /// Making the device copy failed (out of device memory); the table is unchanged.
    Make(E),
}

impl<E> From<PresenceError> for EnterError<E> {
    fn from(error: PresenceError) -> Self {
        EnterError::Presence(error)
    }
}

impl<D> Default for PresenceTable<D> {
    fn default() -> Self {
        PresenceTable::new()
    }
}

impl<D> PresenceTable<D> {
    pub fn new() -> Self {
        PresenceTable {
            arrays: BTreeMap::new(),
        }
    }

    /// Whether `section` of array `id` is present (a `present` clause, `no_create`, `update`,
    /// `acc_is_present`).
    pub fn lookup(&self, id: u64, section: &Section) -> Lookup<'_, D> {
        let Some(array) = self.arrays.get(&id) else {
            return Lookup::Absent;
        };
        if section.is_empty() {
            return Lookup::Present(&array.device);
        }
        match array.place(section) {
            Place::Inside(_) => Lookup::Present(&array.device),
            Place::Overlapping(present) => Lookup::Partial { present },
            Place::Disjoint => Lookup::Absent,
        }
    }

    /// The entry of a data clause (`copy`, `copyin`, `copyout`, `create` at a construct's
    /// start, `enter data`, `declare`, `acc_copyin`, `acc_create`), counted in `kind`'s
    /// counter. `make` makes the array's device copy when it has none yet.
    pub fn enter(
        &mut self,
        id: u64,
        section: Section,
        kind: RefKind,
        make: impl FnOnce() -> D,
    ) -> Result<Entered<'_, D>, PresenceError> {
        match self.try_enter(id, section, kind, || Ok::<D, Infallible>(make())) {
            Ok(entered) => Ok(entered),
            Err(EnterError::Presence(error)) => Err(error),
            Err(EnterError::Make(never)) => match never {},
        }
    }

    /// [`enter`](Self::enter) with a device copy that may fail to be made.
    pub fn try_enter<E>(
        &mut self,
        id: u64,
        section: Section,
        kind: RefKind,
        make: impl FnOnce() -> Result<D, E>,
    ) -> Result<Entered<'_, D>, EnterError<E>> {
        if section.is_empty() {
            return Ok(Entered::Empty);
        }
        match self.arrays.entry(id) {
            Entry::Vacant(vacant) => {
                let device = make().map_err(EnterError::Make)?;
                let array = vacant.insert(PresentArray {
                    device,
                    sections: vec![PresentSection::new(section, kind)],
                });
                Ok(Entered::Fresh {
                    device: &array.device,
                    made: true,
                })
            }
            Entry::Occupied(occupied) => {
                let array = occupied.into_mut();
                match array.place(&section) {
                    Place::Inside(i) => {
                        let entry = &mut array.sections[i];
                        let count = entry.count_mut(kind);
                        *count = count.saturating_add(1);
                        Ok(Entered::Present {
                            entry: entry.section,
                            device: &array.device,
                        })
                    }
                    Place::Overlapping(present) => {
                        Err(EnterError::Presence(PresenceError::Partial { present }))
                    }
                    Place::Disjoint => {
                        array.sections.push(PresentSection::new(section, kind));
                        Ok(Entered::Fresh {
                            device: &array.device,
                            made: false,
                        })
                    }
                }
            }
        }
    }

    /// The entry of a `present` or `no_create` clause (OpenACC 3.3, 2.7.5 and 2.7.10): when
    /// `section` lies inside a present section, that section's `kind` count goes up (a
    /// structured construct holds its data like any other data clause, so an `exit data`
    /// inside the construct cannot remove it), and nothing is ever made or transferred.
    /// Absent data is [`PresenceError::Absent`] (an error for `present`, the host's data for
    /// `no_create`: the caller decides); an empty section is [`Entered::Empty`] when the array
    /// has a device copy and absent otherwise, as for [`lookup`](Self::lookup). Its exit is an
    /// ordinary [`exit`](Self::exit) of `kind`, whose zero-count and absent answers are then
    /// "no action" (the entry found the data absent).
    pub fn enter_present(
        &mut self,
        id: u64,
        section: &Section,
        kind: RefKind,
    ) -> Result<Entered<'_, D>, PresenceError> {
        let Some(array) = self.arrays.get_mut(&id) else {
            return Err(PresenceError::Absent);
        };
        if section.is_empty() {
            return Ok(Entered::Empty);
        }
        match array.place(section) {
            Place::Inside(i) => {
                let entry = &mut array.sections[i];
                let count = entry.count_mut(kind);
                *count = count.saturating_add(1);
                Ok(Entered::Present {
                    entry: entry.section,
                    device: &array.device,
                })
            }
            Place::Overlapping(present) => Err(PresenceError::Partial { present }),
            Place::Disjoint => Err(PresenceError::Absent),
        }
    }

    /// The exit of a data clause (a construct's end, `exit data copyout/delete`,
    /// `acc_copyout`, `acc_delete`): the present section holding `section` loses one count of
    /// `kind`. `finalize` (dynamic exits only; ignored on structured ones) sets the dynamic
    /// count to zero at once. A structured exit never touches the dynamic count, nor a dynamic
    /// exit the structured one. The section leaves when both counts are zero; see [`Exited`]
    /// for what the caller does then, and the module docs for the no-action cases.
    pub fn exit(
        &mut self,
        id: u64,
        section: &Section,
        kind: RefKind,
        finalize: bool,
    ) -> Result<Exited<'_, D>, PresenceError> {
        let absent = match kind {
            RefKind::Dynamic => Ok(Exited::NoAction(NoAction::NotPresent)),
            RefKind::Structured => Err(PresenceError::Absent),
        };
        if section.is_empty() {
            return Ok(Exited::NoAction(NoAction::Empty));
        }
        let Some(array) = self.arrays.get_mut(&id) else {
            return absent;
        };
        let i = match array.place(section) {
            Place::Inside(i) => i,
            Place::Overlapping(present) => return Err(PresenceError::Partial { present }),
            Place::Disjoint => return absent,
        };
        let entry = &mut array.sections[i];
        let count = entry.count_mut(kind);
        if *count == 0 {
            return Ok(Exited::NoAction(NoAction::ZeroCount));
        }
        *count = if finalize && kind == RefKind::Dynamic {
            0
        } else {
            *count - 1
        };
        if entry.structured > 0 || entry.dynamic > 0 {
            return Ok(Exited::Kept(*entry));
        }
        let entry = array.sections.remove(i).section;
        let last = array.sections.is_empty();
        // Both lookups below find the array just borrowed: only the borrow rules make us
        // look again.
        let gone = PresenceError::Absent;
        if last {
            let array = self.arrays.remove(&id).ok_or(gone)?;
            Ok(Exited::Freed {
                entry,
                device: array.device,
            })
        } else {
            let array = self.arrays.get(&id).ok_or(gone)?;
            Ok(Exited::Removed {
                entry,
                device: &array.device,
            })
        }
    }

    /// The device copy of array `id`, when any section of it is present.
    pub fn device(&self, id: u64) -> Option<&D> {
        self.arrays.get(&id).map(|array| &array.device)
    }

    /// The `(structured, dynamic)` counts of the present section holding `section`, when it
    /// lies inside one (never for an empty section).
    pub fn counts(&self, id: u64, section: &Section) -> Option<(u32, u32)> {
        let array = self.arrays.get(&id)?;
        match array.place(section) {
            Place::Inside(i) => {
                let entry = &array.sections[i];
                Some((entry.structured, entry.dynamic))
            }
            Place::Overlapping(_) | Place::Disjoint => None,
        }
    }

    /// The present sections of array `id`, in the order they were entered.
    pub fn sections(&self, id: u64) -> &[PresentSection] {
        self.arrays
            .get(&id)
            .map_or(&[], |array| array.sections.as_slice())
    }

    /// Whether no array is present.
    pub fn is_empty(&self) -> bool {
        self.arrays.is_empty()
    }

    /// The number of arrays with a device copy.
    pub fn len(&self) -> usize {
        self.arrays.len()
    }

    /// Everything, for device shutdown or reset: the table is emptied and the device copies are
    /// handed back (by increasing id) for the caller to free.
    pub fn drain(&mut self) -> Vec<(u64, D)> {
        std::mem::take(&mut self.arrays)
            .into_iter()
            .map(|(id, array)| (id, array.device))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cell::Cell;

    /// `a[start:count, …]` with every range written out.
    fn sec(dims: &[i64], ranges: &[(i64, i64)]) -> Section {
        let ranges: Vec<SectionRange> = ranges.iter().map(|&(s, c)| (Some(s), Some(c))).collect();
        Section::from_ranges(dims, &ranges).unwrap()
    }

    /// The row-major offsets of a section's elements, by plain enumeration of its indices.
    fn offsets(section: &Section, dims: &[i64]) -> Vec<i64> {
        fn walk(s: &Section, dims: &[i64], d: usize, prefix: i64, out: &mut Vec<i64>) {
            if d == dims.len() {
                out.push(prefix);
                return;
            }
            for i in s.lo[d]..s.hi[d] {
                walk(s, dims, d + 1, prefix * dims[d] + i, out);
            }
        }
        let mut out = Vec::new();
        walk(section, dims, 0, 0, &mut out);
        out
    }

    /// The runs of a section, by merging its enumerated offsets.
    fn brute_runs(section: &Section, dims: &[i64]) -> Vec<(i64, i64)> {
        let mut runs: Vec<(i64, i64)> = Vec::new();
        for at in offsets(section, dims) {
            match runs.last_mut() {
                Some((start, len)) if *start + *len == at => *len += 1,
                _ => runs.push((at, 1)),
            }
        }
        runs
    }

    fn check_runs(section: &Section, dims: &[i64]) -> Vec<(i64, i64)> {
        let runs: Vec<(i64, i64)> = section.runs(dims).collect();
        assert_eq!(runs, brute_runs(section, dims), "{section:?} of {dims:?}");
        runs
    }

    // --- sections ------------------------------------------------------------------------

    #[test]
    fn whole_and_default_ranges() {
        let dims = [4, 5];
        let whole = Section::whole(&dims);
        assert!(whole.is_whole(&dims));
        assert_eq!(whole.elements(), 20);
        assert_eq!(Section::from_ranges(&dims, &[]).unwrap(), whole);
        assert_eq!(
            Section::from_ranges(&dims, &[(None, None), (None, None)]).unwrap(),
            whole
        );
        // Fewer ranges than dimensions: the rest are whole.
        let rows = Section::from_ranges(&dims, &[(Some(1), Some(2))]).unwrap();
        assert_eq!(rows, sec(&dims, &[(1, 2), (0, 5)]));
        // `a[:n]` and `a[i:]`.
        assert_eq!(
            Section::from_ranges(&[10], &[(None, Some(3))]).unwrap(),
            sec(&[10], &[(0, 3)])
        );
        assert_eq!(
            Section::from_ranges(&[10], &[(Some(3), None)]).unwrap(),
            sec(&[10], &[(3, 7)])
        );
        assert!(!sec(&[10], &[(3, 7)]).is_whole(&[10]));
        assert!(!whole.is_whole(&[4, 6]));
        assert!(!whole.is_whole(&[4]));
    }

    #[test]
    fn scalars_are_rank_zero_sections_of_one_element() {
        let s = Section::whole(&[]);
        assert_eq!(s.rank, 0);
        assert_eq!(s.elements(), 1);
        assert!(!s.is_empty());
        assert!(s.contains(&s) && s.overlaps(&s));
        assert_eq!(s.runs(&[]).collect::<Vec<_>>(), [(0, 1)]);
        assert_eq!(s.display("s", &[]), "s");
    }

    #[test]
    fn empty_sections() {
        let empty = sec(&[10], &[(4, 0)]);
        assert!(empty.is_empty());
        assert_eq!(empty.elements(), 0);
        assert_eq!(empty.runs(&[10]).count(), 0);
        // A start equal to the extent is allowed when nothing follows it.
        assert!(Section::from_ranges(&[10], &[(Some(10), None)])
            .unwrap()
            .is_empty());
        assert!(Section::whole(&[3, 0]).is_empty());
        assert_eq!(Section::whole(&[3, 0]).runs(&[3, 0]).count(), 0);
        // Empty sections lie in every section of their rank and overlap nothing.
        let some = sec(&[10], &[(0, 2)]);
        assert!(some.contains(&empty));
        assert!(!some.overlaps(&empty) && !empty.overlaps(&empty));
    }

    #[test]
    fn section_errors_read_well() {
        let err = |dims: &[i64], ranges: &[SectionRange]| {
            Section::from_ranges(dims, ranges).unwrap_err().message("a")
        };
        assert_eq!(
            err(&[12], &[(Some(5), Some(10))]),
            "section `a[5:10]` runs past the end of `a` (length 12)"
        );
        assert_eq!(
            err(&[4, 12], &[(None, None), (Some(5), Some(10))]),
            "section `a[:, 5:10]` runs past the end of dimension 1 of `a` (extent 12)"
        );
        assert_eq!(
            err(&[12], &[(Some(13), None)]),
            "section `a[13:]` starts past the end of `a` (length 12)"
        );
        assert_eq!(
            err(&[12], &[(Some(-1), Some(2))]),
            "section `a[-1:2]` has a negative start (-1)"
        );
        assert_eq!(
            err(&[3, 12], &[(Some(0), Some(1)), (None, Some(-2))]),
            "section `a[0:1, :-2]` has a negative count (-2) in dimension 1"
        );
        assert_eq!(
            err(&[12], &[(Some(0), Some(1)), (Some(0), Some(1))]),
            "section `a[0:1, 0:1]` has 2 ranges but `a` has rank 1"
        );
        // start + count overflowing is past the end, not a panic.
        let overflow = Section::from_ranges(&[12], &[(Some(5), Some(i64::MAX))]).unwrap_err();
        assert_eq!(overflow.kind, SectionErrorKind::PastEnd { dim: 0 });
    }

    #[test]
    fn rank_one_contains_and_overlaps() {
        let dims = [100];
        let a = sec(&dims, &[(10, 20)]); // 10..30
        assert!(a.contains(&sec(&dims, &[(10, 20)])));
        assert!(a.contains(&sec(&dims, &[(15, 5)])));
        assert!(!a.contains(&sec(&dims, &[(25, 10)])));
        assert!(a.overlaps(&sec(&dims, &[(25, 10)])));
        assert!(a.overlaps(&sec(&dims, &[(0, 11)])));
        // Touching is not overlapping.
        assert!(!a.overlaps(&sec(&dims, &[(30, 5)])));
        assert!(!a.overlaps(&sec(&dims, &[(0, 10)])));
        assert!(Section::whole(&dims).contains(&a));
        // Different ranks are different shapes: never related.
        assert!(!Section::whole(&[10, 10]).contains(&a));
        assert!(!Section::whole(&[10, 10]).overlaps(&a));
    }

    #[test]
    fn rank_two_and_three_boxes() {
        let dims = [8, 8];
        let block = sec(&dims, &[(2, 4), (2, 4)]); // rows 2..6, columns 2..6
        assert!(block.contains(&sec(&dims, &[(3, 2), (2, 4)])));
        assert!(!block.contains(&sec(&dims, &[(3, 2), (1, 4)])));
        // Overlapping in rows but not in columns: disjoint.
        assert!(!block.overlaps(&sec(&dims, &[(2, 4), (6, 2)])));
        assert!(block.overlaps(&sec(&dims, &[(5, 3), (5, 3)])));
        // A cross through the block overlaps it without either containing the other.
        let cross = sec(&dims, &[(0, 8), (3, 1)]);
        assert!(block.overlaps(&cross) && !block.contains(&cross) && !cross.contains(&block));

        let dims = [4, 5, 6];
        let cube = sec(&dims, &[(1, 2), (1, 3), (2, 3)]);
        assert_eq!(cube.elements(), 18);
        assert!(cube.contains(&sec(&dims, &[(2, 1), (1, 3), (3, 2)])));
        assert!(!cube.contains(&sec(&dims, &[(2, 1), (1, 3), (3, 3)])));
        assert!(cube.overlaps(&sec(&dims, &[(0, 2), (0, 2), (0, 3)])));
        assert!(!cube.overlaps(&sec(&dims, &[(0, 1), (0, 5), (0, 6)])));
        assert!(!cube.overlaps(&sec(&dims, &[(0, 4), (0, 5), (5, 1)])));
    }

    #[test]
    fn display_uses_start_count() {
        let dims = [4, 6];
        assert_eq!(Section::whole(&dims).display("a", &dims), "a");
        assert_eq!(sec(&[12], &[(2, 10)]).display("a", &[12]), "a[2:10]");
        assert_eq!(
            sec(&dims, &[(0, 4), (1, 3)]).display("a", &dims),
            "a[0:4, 1:3]"
        );
        assert_eq!(
            Section::from_ranges(&dims, &[(Some(1), Some(2))])
                .unwrap()
                .display("m", &dims),
            "m[1:2, 0:6]"
        );
    }

    #[test]
    fn runs_of_whole_arrays_are_one_run() {
        for dims in [&[7][..], &[3, 4], &[2, 3, 4], &[1, 1, 5, 1]] {
            let runs = check_runs(&Section::whole(dims), dims);
            assert_eq!(runs, [(0, dims.iter().product())]);
        }
    }

    #[test]
    fn runs_of_row_and_column_blocks() {
        let dims = [6, 10];
        // Whole rows are one run.
        assert_eq!(
            check_runs(&sec(&dims, &[(2, 3), (0, 10)]), &dims),
            [(20, 30)]
        );
        // Columns are one run per row.
        assert_eq!(
            check_runs(&sec(&dims, &[(1, 3), (4, 2)]), &dims),
            [(14, 2), (24, 2), (34, 2)]
        );
        // A single column.
        assert_eq!(
            check_runs(&sec(&dims, &[(0, 6), (9, 1)]), &dims),
            [(9, 1), (19, 1), (29, 1), (39, 1), (49, 1), (59, 1)]
        );
        assert_eq!(check_runs(&sec(&[12], &[(2, 10)]), &[12]), [(2, 10)]);
    }

    #[test]
    fn runs_of_three_dimensional_boxes() {
        let dims = [4, 5, 6];
        // Whole planes: one run.
        assert_eq!(
            check_runs(
                &Section::from_ranges(&dims, &[(Some(1), Some(2))]).unwrap(),
                &dims
            ),
            [(30, 60)]
        );
        // Whole rows of some planes: one run per plane.
        assert_eq!(
            check_runs(&sec(&dims, &[(1, 2), (2, 2), (0, 6)]), &dims),
            [(42, 12), (72, 12)]
        );
        // An inner box: one run per (plane, row).
        let runs = check_runs(&sec(&dims, &[(1, 2), (1, 3), (2, 3)]), &dims);
        assert_eq!(runs.len(), 6);
        // A plane with one index in the first dimension and whole rest: one run.
        assert_eq!(
            check_runs(&sec(&dims, &[(3, 1), (0, 5), (0, 6)]), &dims),
            [(90, 30)]
        );
    }

    #[test]
    fn reshaped_sections() {
        let (flat, matrix) = ([12], [3, 4]);
        assert_eq!(
            Section::whole(&flat).reshaped(&flat, &matrix),
            Some(Section::whole(&matrix))
        );
        // Rows 1..3 of the matrix are elements 4..12 of the flat array, and back.
        let rows = sec(&matrix, &[(1, 2), (0, 4)]);
        assert_eq!(rows.reshaped(&matrix, &flat), Some(sec(&flat, &[(4, 8)])));
        assert_eq!(sec(&flat, &[(4, 8)]).reshaped(&flat, &matrix), Some(rows));
        // Part of one row is a box; a run across a row boundary is not.
        assert_eq!(
            sec(&flat, &[(5, 2)]).reshaped(&flat, &matrix),
            Some(sec(&matrix, &[(1, 1), (1, 2)]))
        );
        assert_eq!(sec(&flat, &[(3, 2)]).reshaped(&flat, &matrix), None);
        // A column block of the matrix is no range of the flat array.
        assert_eq!(
            sec(&matrix, &[(0, 3), (1, 1)]).reshaped(&matrix, &flat),
            None
        );
        // Different element counts.
        assert_eq!(Section::whole(&flat).reshaped(&flat, &[5]), None);
    }

    proptest! {
        #[test]
        fn runs_match_enumeration(
            dims in prop::collection::vec(1i64..5, 1..=4),
            picks in prop::collection::vec((0i64..5, 0i64..5), 4),
        ) {
            let ranges: Vec<SectionRange> = dims
                .iter()
                .zip(&picks)
                .map(|(&e, &(a, b))| {
                    let (lo, hi) = (a % (e + 1), b % (e + 1));
                    let (lo, hi) = (lo.min(hi), lo.max(hi));
                    (Some(lo), Some(hi - lo))
                })
                .collect();
            let section = Section::from_ranges(&dims, &ranges).unwrap();
            let runs = check_runs(&section, &dims);
            prop_assert_eq!(runs.iter().map(|r| r.1).sum::<i64>(), section.elements());
            // Merged: no run ends where the next begins.
            prop_assert!(runs.windows(2).all(|w| w[0].0 + w[0].1 < w[1].0));
            // A reshape to the flat array and back keeps the elements when it succeeds.
            let flat = [dims.iter().product::<i64>()];
            if let Some(linear) = section.reshaped(&dims, &flat) {
                prop_assert_eq!(offsets(&linear, &flat), offsets(&section, &dims));
                if !section.is_empty() {
                    prop_assert_eq!(linear.reshaped(&flat, &dims), Some(section));
                }
            } else {
                prop_assert!(runs.len() > 1);
            }
        }
    }

    // --- the table -----------------------------------------------------------------------

    /// A table of `u32` device copies, numbered in the order they were made.
    struct Fixture {
        table: PresenceTable<u32>,
        made: Cell<u32>,
    }

    impl Fixture {
        fn new() -> Fixture {
            Fixture {
                table: PresenceTable::new(),
                made: Cell::new(0),
            }
        }

        fn enter(
            &mut self,
            id: u64,
            section: Section,
            kind: RefKind,
        ) -> Result<Entered<'_, u32>, PresenceError> {
            let made = &self.made;
            self.table.enter(id, section, kind, || {
                made.set(made.get() + 1);
                made.get()
            })
        }
    }

    const A: u64 = 1;
    const B: u64 = 2;
    use RefKind::{Dynamic, Structured};

    #[test]
    fn whole_array_enter_lookup_exit() {
        let mut f = Fixture::new();
        let whole = Section::whole(&[100]);
        assert_eq!(f.table.lookup(A, &whole), Lookup::Absent);
        assert_eq!(
            f.enter(A, whole, Structured),
            Ok(Entered::Fresh {
                device: &1,
                made: true
            })
        );
        assert_eq!(f.table.lookup(A, &whole), Lookup::Present(&1));
        assert_eq!(
            f.table.lookup(A, &sec(&[100], &[(5, 10)])),
            Lookup::Present(&1)
        );
        assert_eq!(f.table.lookup(B, &whole), Lookup::Absent);
        assert_eq!(f.table.len(), 1);
        // Present: counted, not transferred again.
        let again = f.enter(A, whole, Structured).unwrap();
        assert!(!again.fresh());
        assert_eq!(again.device(), Some(&1));
        assert_eq!(f.table.counts(A, &whole), Some((2, 0)));
        assert_eq!(
            f.table.exit(A, &whole, Structured, false),
            Ok(Exited::Kept(PresentSection {
                section: whole,
                structured: 1,
                dynamic: 0
            }))
        );
        let last = f.table.exit(A, &whole, Structured, false).unwrap();
        assert!(last.removed());
        assert_eq!(last.device(), Some(&1));
        assert_eq!(last.into_freed(), Some(1));
        assert!(f.table.is_empty());
        assert_eq!(f.table.device(A), None);
        assert_eq!(f.made.get(), 1);
    }

    #[test]
    fn sections_inside_present_data_are_counted_there() {
        let mut f = Fixture::new();
        let dims = [100];
        let outer = sec(&dims, &[(0, 50)]);
        f.enter(A, outer, Structured).unwrap();
        let inner = sec(&dims, &[(10, 20)]);
        assert_eq!(
            f.enter(A, inner, Structured),
            Ok(Entered::Present {
                entry: outer,
                device: &1
            })
        );
        assert_eq!(f.table.counts(A, &inner), Some((2, 0)));
        assert_eq!(f.table.counts(A, &outer), Some((2, 0)));
        // Leaving through the inner section decrements the outer entry.
        assert!(matches!(
            f.table.exit(A, &inner, Structured, false),
            Ok(Exited::Kept(_))
        ));
        assert_eq!(
            f.table.exit(A, &inner, Structured, false),
            Ok(Exited::Freed {
                entry: outer,
                device: 1
            })
        );
    }

    #[test]
    fn partly_present_sections_are_errors() {
        let mut f = Fixture::new();
        let dims = [100];
        let present = sec(&dims, &[(10, 20)]); // 10..30
        f.enter(A, present, Dynamic).unwrap();
        for requested in [
            sec(&dims, &[(20, 20)]), // runs past the end of the present section
            sec(&dims, &[(0, 11)]),  // starts before it
            sec(&dims, &[(0, 100)]), // contains it
            Section::whole(&dims),
        ] {
            let partial = PresenceError::Partial { present };
            assert_eq!(f.table.lookup(A, &requested), Lookup::Partial { present });
            assert_eq!(f.enter(A, requested, Structured), Err(partial));
            assert_eq!(f.table.exit(A, &requested, Dynamic, false), Err(partial));
            assert_eq!(f.table.exit(A, &requested, Structured, false), Err(partial));
            assert_eq!(f.table.counts(A, &requested), None);
        }
        // Nothing changed.
        assert_eq!(f.table.counts(A, &present), Some((0, 1)));
        assert_eq!(f.table.sections(A).len(), 1);
    }

    #[test]
    fn a_section_across_two_present_sections_is_partial() {
        let mut f = Fixture::new();
        let dims = [20];
        let (left, right) = (sec(&dims, &[(0, 10)]), sec(&dims, &[(10, 10)]));
        f.enter(A, left, Dynamic).unwrap();
        f.enter(A, right, Dynamic).unwrap();
        // Every element of 5..15 is present, but not inside one present section.
        let across = sec(&dims, &[(5, 10)]);
        assert_eq!(
            f.table.lookup(A, &across),
            Lookup::Partial { present: left }
        );
        assert!(f.enter(A, across, Dynamic).is_err());
    }

    #[test]
    fn rank_two_partial_errors() {
        let mut f = Fixture::new();
        let dims = [8, 8];
        let rows = sec(&dims, &[(0, 4), (0, 8)]);
        f.enter(A, rows, Structured).unwrap();
        assert_eq!(
            f.table.lookup(A, &sec(&dims, &[(1, 2), (3, 5)])),
            Lookup::Present(&1)
        );
        // A column through present and absent rows.
        let column = sec(&dims, &[(0, 8), (3, 1)]);
        let err = f.enter(A, column, Structured).unwrap_err();
        assert_eq!(err, PresenceError::Partial { present: rows });
        assert_eq!(
            err.message("m", &dims, &column, "nvidia device 0"),
            "`m[0:8, 3:1]` is only partly present on nvidia device 0: it overlaps the present \
             section `m[0:4, 0:8]`"
        );
        // The other rows are disjoint: a new section, no new device copy.
        let rest = sec(&dims, &[(4, 4), (0, 8)]);
        assert_eq!(
            f.enter(A, rest, Structured),
            Ok(Entered::Fresh {
                device: &1,
                made: false
            })
        );
        // Now the whole matrix is present in two sections, and still not inside one.
        assert_eq!(
            f.table.lookup(A, &Section::whole(&dims)),
            Lookup::Partial { present: rows }
        );
    }

    #[test]
    fn several_sections_share_one_device_copy() {
        let mut f = Fixture::new();
        let dims = [4, 5, 6];
        let (p, q, r) = (
            sec(&dims, &[(0, 1), (0, 5), (0, 6)]),
            sec(&dims, &[(1, 2), (0, 2), (0, 6)]),
            sec(&dims, &[(1, 2), (2, 3), (1, 2)]),
        );
        assert!(f.enter(A, p, Dynamic).unwrap().fresh());
        assert!(f.enter(A, q, Structured).unwrap().fresh());
        assert!(f.enter(A, r, Dynamic).unwrap().fresh());
        assert_eq!(f.made.get(), 1);
        assert_eq!(f.table.sections(A).len(), 3);
        assert_eq!(f.table.device(A), Some(&1));
        assert_eq!(
            f.table.exit(A, &q, Structured, false),
            Ok(Exited::Removed {
                entry: q,
                device: &1
            })
        );
        assert_eq!(f.table.lookup(A, &q), Lookup::Absent);
        assert_eq!(
            f.table.exit(A, &p, Dynamic, false),
            Ok(Exited::Removed {
                entry: p,
                device: &1
            })
        );
        assert_eq!(f.table.device(A), Some(&1));
        assert_eq!(
            f.table.exit(A, &r, Dynamic, false),
            Ok(Exited::Freed {
                entry: r,
                device: 1
            })
        );
        assert_eq!(f.table.device(A), None);
        // A later entry makes a new copy.
        assert!(matches!(
            f.enter(A, p, Dynamic),
            Ok(Entered::Fresh {
                device: &2,
                made: true
            })
        ));
    }

    #[test]
    fn two_enter_data_then_one_exit_data_keeps_the_data() {
        let mut f = Fixture::new();
        let a = Section::whole(&[10]);
        assert!(f.enter(A, a, Dynamic).unwrap().fresh());
        assert!(!f.enter(A, a, Dynamic).unwrap().fresh());
        let exited = f.table.exit(A, &a, Dynamic, false).unwrap();
        assert!(!exited.removed());
        assert_eq!(f.table.counts(A, &a), Some((0, 1)));
        assert!(f.table.exit(A, &a, Dynamic, false).unwrap().removed());
        assert!(f.table.is_empty());
    }

    #[test]
    fn finalize_drops_every_dynamic_reference_at_once() {
        let mut f = Fixture::new();
        let a = Section::whole(&[10]);
        for _ in 0..3 {
            f.enter(A, a, Dynamic).unwrap();
        }
        assert_eq!(
            f.table.exit(A, &a, Dynamic, true),
            Ok(Exited::Freed {
                entry: a,
                device: 1
            })
        );
        // Inside a data region, finalize leaves the structured reference alone.
        f.enter(A, a, Structured).unwrap();
        f.enter(A, a, Dynamic).unwrap();
        f.enter(A, a, Dynamic).unwrap();
        assert!(matches!(
            f.table.exit(A, &a, Dynamic, true),
            Ok(Exited::Kept(PresentSection {
                structured: 1,
                dynamic: 0,
                ..
            }))
        ));
        assert!(f.table.exit(A, &a, Structured, false).unwrap().removed());
        // finalize means nothing to a structured exit.
        f.enter(A, a, Structured).unwrap();
        f.enter(A, a, Structured).unwrap();
        f.enter(A, a, Dynamic).unwrap();
        assert!(!f.table.exit(A, &a, Structured, true).unwrap().removed());
        assert_eq!(f.table.counts(A, &a), Some((1, 1)));
    }

    #[test]
    fn a_data_region_inside_enter_and_exit_data() {
        let mut f = Fixture::new();
        let a = Section::whole(&[10]);
        // enter data copyin(a)
        assert!(f.enter(A, a, Dynamic).unwrap().fresh());
        // acc data copy(a) { parallel copy(a) { } }: present, no transfers either way.
        assert!(!f.enter(A, a, Structured).unwrap().fresh());
        assert!(!f.enter(A, a, Structured).unwrap().fresh());
        assert_eq!(f.table.counts(A, &a), Some((2, 1)));
        assert!(!f.table.exit(A, &a, Structured, false).unwrap().removed());
        assert!(!f.table.exit(A, &a, Structured, false).unwrap().removed());
        assert_eq!(f.table.counts(A, &a), Some((0, 1)));
        // exit data copyout(a): now it leaves.
        assert!(f.table.exit(A, &a, Dynamic, false).unwrap().removed());
    }

    #[test]
    fn enter_data_inside_a_data_region_outlives_nothing() {
        let mut f = Fixture::new();
        let a = Section::whole(&[10]);
        // acc data copy(a) { enter data copyin(a); exit data delete(a) }
        f.enter(A, a, Structured).unwrap();
        f.enter(A, a, Dynamic).unwrap();
        assert!(!f.table.exit(A, &a, Dynamic, false).unwrap().removed());
        // A second exit data finds the dynamic count at zero: no action, the region keeps a.
        assert_eq!(
            f.table.exit(A, &a, Dynamic, false),
            Ok(Exited::NoAction(NoAction::ZeroCount))
        );
        assert_eq!(
            f.table.exit(A, &a, Dynamic, true),
            Ok(Exited::NoAction(NoAction::ZeroCount))
        );
        assert_eq!(f.table.counts(A, &a), Some((1, 0)));
        // The region's end copies out and frees.
        assert!(f.table.exit(A, &a, Structured, false).unwrap().removed());
    }

    #[test]
    fn exits_of_absent_data() {
        let mut f = Fixture::new();
        let a = Section::whole(&[10]);
        // exit data / acc_delete of data never entered: no action (its dynamic count is 0).
        assert_eq!(
            f.table.exit(A, &a, Dynamic, false),
            Ok(Exited::NoAction(NoAction::NotPresent))
        );
        // A region exit without its entry is the caller's to report.
        assert_eq!(
            f.table.exit(A, &a, Structured, false),
            Err(PresenceError::Absent)
        );
        // Same when the array is present but not that section.
        f.enter(A, sec(&[10], &[(0, 5)]), Structured).unwrap();
        let other = sec(&[10], &[(5, 5)]);
        assert_eq!(
            f.table.exit(A, &other, Dynamic, false),
            Ok(Exited::NoAction(NoAction::NotPresent))
        );
        assert_eq!(
            f.table.exit(A, &other, Structured, false),
            Err(PresenceError::Absent)
        );
        // A region exit of data only enter data holds: no action.
        f.enter(B, a, Dynamic).unwrap();
        assert_eq!(
            f.table.exit(B, &a, Structured, false),
            Ok(Exited::NoAction(NoAction::ZeroCount))
        );
        assert_eq!(f.table.counts(B, &a), Some((0, 1)));
    }

    #[test]
    fn empty_sections_are_never_entered() {
        let mut f = Fixture::new();
        let nothing = sec(&[10], &[(3, 0)]);
        assert_eq!(f.enter(A, nothing, Structured), Ok(Entered::Empty));
        assert_eq!(f.made.get(), 0);
        assert!(f.table.is_empty());
        assert_eq!(f.table.lookup(A, &nothing), Lookup::Absent);
        assert_eq!(
            f.table.exit(A, &nothing, Structured, false),
            Ok(Exited::NoAction(NoAction::Empty))
        );
        // With the array present, an empty section finds its device copy.
        f.enter(A, sec(&[10], &[(0, 2)]), Dynamic).unwrap();
        assert_eq!(f.table.lookup(A, &nothing), Lookup::Present(&1));
        assert_eq!(f.table.counts(A, &nothing), None);
        assert_eq!(f.enter(A, nothing, Dynamic), Ok(Entered::Empty));
        assert_eq!(f.table.sections(A).len(), 1);
    }

    #[test]
    fn present_holds_data_against_an_exit_data() {
        // `enter data copyin(c)`; `data present(c) { exit data delete(c) … }`: the region's
        // structured reference keeps `c` until the region ends (OpenACC 3.3, 2.7.5).
        let mut f = Fixture::new();
        let c = Section::whole(&[10]);
        f.enter(A, c, Dynamic).unwrap();
        assert!(matches!(
            f.table.enter_present(A, &c, Structured),
            Ok(Entered::Present { .. })
        ));
        assert_eq!(f.table.counts(A, &c), Some((1, 1)));
        assert!(matches!(
            f.table.exit(A, &c, Dynamic, false),
            Ok(Exited::Kept(_))
        ));
        assert_eq!(f.table.lookup(A, &c), Lookup::Present(&1));
        // Nested present regions count too.
        f.table.enter_present(A, &c, Structured).unwrap();
        assert!(matches!(
            f.table.exit(A, &c, Structured, false),
            Ok(Exited::Kept(_))
        ));
        assert_eq!(
            f.table.exit(A, &c, Structured, false),
            Ok(Exited::Freed {
                entry: c,
                device: 1
            })
        );
        // Absent data is neither counted nor made (`no_create` then uses the host's data),
        // and the region's exit is then no action.
        assert_eq!(
            f.table.enter_present(A, &c, Structured),
            Err(PresenceError::Absent)
        );
        assert!(f.table.is_empty());
        f.enter(A, sec(&[10], &[(0, 5)]), Dynamic).unwrap();
        assert_eq!(
            f.table.enter_present(A, &c, Structured),
            Err(PresenceError::Partial {
                present: sec(&[10], &[(0, 5)])
            })
        );
        assert_eq!(
            f.table.enter_present(A, &sec(&[10], &[(5, 5)]), Structured),
            Err(PresenceError::Absent)
        );
        assert_eq!(
            f.table.exit(A, &sec(&[10], &[(0, 5)]), Structured, false),
            Ok(Exited::NoAction(NoAction::ZeroCount))
        );
        assert_eq!(f.made.get(), 2);
    }

    #[test]
    fn a_failed_make_leaves_the_table_unchanged() {
        let mut table: PresenceTable<u32> = PresenceTable::new();
        let a = Section::whole(&[10]);
        assert_eq!(
            table.try_enter(A, a, Dynamic, || Err("out of memory")),
            Err(EnterError::Make("out of memory"))
        );
        assert!(table.is_empty());
        assert!(table
            .try_enter(A, a, Dynamic, || Ok::<_, &str>(7))
            .unwrap()
            .fresh());
        // Present data makes nothing, so a failing maker is never called.
        let entered = table.try_enter(A, a, Dynamic, || -> Result<u32, &str> {
            panic!("made twice")
        });
        assert!(matches!(entered, Ok(Entered::Present { device: &7, .. })));
    }

    #[test]
    fn drain_hands_back_every_device_copy() {
        let mut f = Fixture::new();
        f.enter(B, Section::whole(&[3]), Structured).unwrap();
        f.enter(A, sec(&[9], &[(0, 3)]), Dynamic).unwrap();
        f.enter(A, sec(&[9], &[(3, 3)]), Dynamic).unwrap();
        assert_eq!(f.table.len(), 2);
        assert_eq!(f.table.drain(), [(A, 2), (B, 1)]);
        assert!(f.table.is_empty());
        assert_eq!(f.table.lookup(A, &sec(&[9], &[(0, 3)])), Lookup::Absent);
        assert!(f.table.drain().is_empty());
    }

    #[test]
    fn presence_errors_read_well() {
        let dims = [100];
        let absent = PresenceError::Absent;
        assert_eq!(
            absent.message("a", &dims, &sec(&dims, &[(0, 10)]), "nvidia device 0"),
            "`a[0:10]` is not present on nvidia device 0"
        );
        assert!(absent.help("a", &dims).contains("acc enter data copyin(a)"));
        let extends = PresenceError::Partial {
            present: sec(&dims, &[(0, 50)]),
        };
        assert_eq!(
            extends.message("a", &dims, &Section::whole(&dims), "emulated device 1"),
            "`a` extends past `a[0:50]`, the section present on emulated device 1"
        );
        assert!(extends.help("a", &dims).contains("inside `a[0:50]`"));
    }

    // --- random sequences against a model ------------------------------------------------

    /// The arrays of the model test: small, so that random sections often meet.
    const SHAPES: [&[i64]; 3] = [&[7], &[4, 3], &[3, 2, 2]];

    #[derive(Clone, Debug)]
    enum Op {
        Enter(RefKind),
        /// A `present` or `no_create` clause's entry.
        EnterPresent(RefKind),
        Exit(RefKind, bool),
        Lookup,
    }

    /// An element-by-element model: every element of an array knows which present section
    /// (by tag) holds it. It shares no box arithmetic with the table.
    #[derive(Default)]
    struct Model {
        arrays: BTreeMap<u64, ModelArray>,
        made: u32,
    }

    struct ModelArray {
        device: u32,
        holder: Vec<Option<usize>>,
        entries: BTreeMap<usize, PresentSection>,
        next_tag: usize,
    }

    /// Where a section stands in the model, from its elements' holders.
    enum ModelPlace {
        Empty,
        Absent,
        Inside(usize),
        Partial(Vec<Section>),
    }

    impl Model {
        fn place(&self, id: u64, section: &Section) -> ModelPlace {
            let dims = SHAPES[id as usize];
            let elements = offsets(section, dims);
            if elements.is_empty() {
                return ModelPlace::Empty;
            }
            let Some(array) = self.arrays.get(&id) else {
                return ModelPlace::Absent;
            };
            let holders: Vec<Option<usize>> =
                elements.iter().map(|&e| array.holder[e as usize]).collect();
            if holders.iter().all(Option::is_none) {
                return ModelPlace::Absent;
            }
            if let Some(tag) = holders[0] {
                if holders.iter().all(|&h| h == Some(tag))
                    && array.entries[&tag].section.contains(section)
                {
                    return ModelPlace::Inside(tag);
                }
            }
            let mut overlapped: Vec<Section> = holders
                .iter()
                .flatten()
                .map(|tag| array.entries[tag].section)
                .collect();
            overlapped.dedup();
            ModelPlace::Partial(overlapped)
        }
    }

    fn section_strategy() -> impl Strategy<Value = (u64, Section)> {
        (
            0..SHAPES.len(),
            prop::collection::vec((0i64..8, 0i64..8), 3),
            0u8..16,
        )
            .prop_map(|(index, picks, shape)| {
                let dims = SHAPES[index];
                let ranges: Vec<SectionRange> = dims
                    .iter()
                    .zip(&picks)
                    .map(|(&extent, &(a, b))| {
                        let lo = a % extent;
                        let count = match shape {
                            0 => 0,                       // empty now and then
                            1..=4 => return (None, None), // whole dimensions often
                            _ => 1 + b % (extent - lo),
                        };
                        (Some(lo), Some(count))
                    })
                    .collect();
                (index as u64, Section::from_ranges(dims, &ranges).unwrap())
            })
    }

    fn op_strategy() -> impl Strategy<Value = Op> {
        let kind = prop_oneof![Just(Structured), Just(Dynamic)];
        prop_oneof![
            3 => kind.clone().prop_map(Op::Enter),
            2 => kind.clone().prop_map(Op::EnterPresent),
            3 => (kind, prop::bool::weighted(0.2)).prop_map(|(k, f)| Op::Exit(k, f)),
            1 => Just(Op::Lookup),
        ]
    }

    fn run_op(
        table: &mut PresenceTable<u32>,
        model: &mut Model,
        id: u64,
        section: Section,
        op: Op,
    ) -> Result<(), TestCaseError> {
        let place = model.place(id, &section);
        match op {
            Op::Lookup => match (table.lookup(id, &section), place) {
                (Lookup::Present(&d), ModelPlace::Inside(_) | ModelPlace::Empty) => {
                    prop_assert_eq!(Some(d), model.arrays.get(&id).map(|a| a.device))
                }
                (Lookup::Absent, ModelPlace::Absent) => {}
                (Lookup::Absent, ModelPlace::Empty) => {
                    prop_assert!(!model.arrays.contains_key(&id))
                }
                (Lookup::Partial { present }, ModelPlace::Partial(overlapped)) => {
                    prop_assert!(overlapped.contains(&present))
                }
                (got, _) => prop_assert!(false, "lookup gave {got:?}"),
            },
            Op::EnterPresent(kind) => match (table.enter_present(id, &section, kind), place) {
                (Ok(Entered::Empty), ModelPlace::Empty) => {
                    prop_assert!(model.arrays.contains_key(&id))
                }
                (Err(PresenceError::Absent), ModelPlace::Empty) => {
                    prop_assert!(!model.arrays.contains_key(&id))
                }
                (Err(PresenceError::Absent), ModelPlace::Absent) => {}
                (Ok(Entered::Present { entry, device }), ModelPlace::Inside(tag)) => {
                    let array = model.arrays.get_mut(&id).unwrap();
                    prop_assert_eq!(*device, array.device);
                    let e = array.entries.get_mut(&tag).unwrap();
                    prop_assert_eq!(entry, e.section);
                    *e.count_mut(kind) += 1;
                }
                (Err(PresenceError::Partial { present }), ModelPlace::Partial(o)) => {
                    prop_assert!(o.contains(&present));
                }
                (got, _) => prop_assert!(false, "enter_present gave {got:?}"),
            },
            Op::Enter(kind) => {
                let next = model.made + 1;
                let entered = table.enter(id, section, kind, || next);
                match (entered, place) {
                    (Ok(Entered::Empty), ModelPlace::Empty) => {}
                    (Ok(Entered::Present { entry, device }), ModelPlace::Inside(tag)) => {
                        let array = model.arrays.get_mut(&id).unwrap();
                        prop_assert_eq!(*device, array.device);
                        let e = array.entries.get_mut(&tag).unwrap();
                        prop_assert_eq!(entry, e.section);
                        *e.count_mut(kind) += 1;
                    }
                    (Ok(Entered::Fresh { device, made }), ModelPlace::Absent) => {
                        prop_assert_eq!(made, !model.arrays.contains_key(&id));
                        if made {
                            model.made = next;
                            model.arrays.insert(
                                id,
                                ModelArray {
                                    device: next,
                                    holder: vec![
                                        None;
                                        offsets(
                                            &Section::whole(SHAPES[id as usize]),
                                            SHAPES[id as usize]
                                        )
                                        .len()
                                    ],
                                    entries: BTreeMap::new(),
                                    next_tag: 0,
                                },
                            );
                        }
                        let array = model.arrays.get_mut(&id).unwrap();
                        prop_assert_eq!(*device, array.device);
                        let tag = array.next_tag;
                        array.next_tag += 1;
                        for e in offsets(&section, SHAPES[id as usize]) {
                            array.holder[e as usize] = Some(tag);
                        }
                        array
                            .entries
                            .insert(tag, PresentSection::new(section, kind));
                    }
                    (Err(PresenceError::Partial { present }), ModelPlace::Partial(o)) => {
                        prop_assert!(o.contains(&present));
                    }
                    (got, _) => prop_assert!(false, "enter gave {got:?}"),
                }
            }
            Op::Exit(kind, finalize) => {
                let exited = table.exit(id, &section, kind, finalize);
                match (exited, place) {
                    (Ok(Exited::NoAction(NoAction::Empty)), ModelPlace::Empty) => {}
                    (Ok(Exited::NoAction(NoAction::NotPresent)), ModelPlace::Absent) => {
                        prop_assert_eq!(kind, Dynamic)
                    }
                    (Err(PresenceError::Absent), ModelPlace::Absent) => {
                        prop_assert_eq!(kind, Structured);
                    }
                    (Err(PresenceError::Partial { present }), ModelPlace::Partial(o)) => {
                        prop_assert!(o.contains(&present))
                    }
                    (outcome, ModelPlace::Inside(tag)) => {
                        let array = model.arrays.get_mut(&id).unwrap();
                        let entry = array.entries.get_mut(&tag).unwrap();
                        let count = entry.count_mut(kind);
                        if *count == 0 {
                            prop_assert_eq!(outcome, Ok(Exited::NoAction(NoAction::ZeroCount)));
                            return Ok(());
                        }
                        *count = if finalize && kind == Dynamic {
                            0
                        } else {
                            *count - 1
                        };
                        if entry.structured > 0 || entry.dynamic > 0 {
                            prop_assert_eq!(outcome, Ok(Exited::Kept(*entry)));
                            return Ok(());
                        }
                        let removed = array.entries.remove(&tag).unwrap().section;
                        for h in array.holder.iter_mut().filter(|h| **h == Some(tag)) {
                            *h = None;
                        }
                        if array.entries.is_empty() {
                            let device = array.device;
                            model.arrays.remove(&id);
                            prop_assert_eq!(
                                outcome,
                                Ok(Exited::Freed {
                                    entry: removed,
                                    device
                                })
                            );
                        } else {
                            prop_assert_eq!(
                                outcome,
                                Ok(Exited::Removed {
                                    entry: removed,
                                    device: &array.device
                                })
                            );
                        }
                    }
                    (got, _) => prop_assert!(false, "exit gave {got:?}"),
                }
            }
        }
        Ok(())
    }

    /// The table holds exactly the model's sections, counts and device copies, and its own
    /// invariants: present sections of an array are disjoint, non-empty and counted.
    fn check_consistent(table: &PresenceTable<u32>, model: &Model) -> Result<(), TestCaseError> {
        prop_assert_eq!(table.len(), model.arrays.len());
        for id in 0..SHAPES.len() as u64 {
            let mut got = table.sections(id).to_vec();
            let mut want: Vec<PresentSection> = model
                .arrays
                .get(&id)
                .map(|a| a.entries.values().copied().collect())
                .unwrap_or_default();
            let key = |p: &PresentSection| (p.section.lo, p.section.hi);
            got.sort_by_key(key);
            want.sort_by_key(key);
            prop_assert_eq!(&got, &want);
            prop_assert_eq!(
                table.device(id).copied(),
                model.arrays.get(&id).map(|a| a.device)
            );
            for (i, p) in got.iter().enumerate() {
                prop_assert!(!p.section.is_empty());
                prop_assert!(p.structured > 0 || p.dynamic > 0);
                prop_assert_eq!(
                    table.counts(id, &p.section),
                    Some((p.structured, p.dynamic))
                );
                for q in &got[i + 1..] {
                    prop_assert!(!p.section.overlaps(&q.section));
                }
            }
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn random_sequences_follow_the_model(
            ops in prop::collection::vec((section_strategy(), op_strategy()), 1..80),
        ) {
            let mut table = PresenceTable::new();
            let mut model = Model::default();
            for ((id, section), op) in ops {
                run_op(&mut table, &mut model, id, section, op)?;
                check_consistent(&table, &model)?;
            }
            // Shutdown hands back exactly the copies still present.
            let expected: Vec<(u64, u32)> = model.arrays.iter().map(|(&id, a)| (id, a.device)).collect();
            prop_assert_eq!(table.drain(), expected);
            prop_assert!(table.is_empty());
        }
    }
}
