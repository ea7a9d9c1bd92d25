//! The records compiled code passes for data clauses and queues, and their decoding.

use acc_abi::ABSENT;

use crate::abi::{ArrayHeader, MAX_RANK};
use crate::array;
use crate::error::RunErrorKind;
use crate::presence::Section;
use crate::queue::QueueId;

/// `DataOpArg::nranges` of a whole array named without a section.
pub const NO_SECTION: u32 = u32::MAX;

/// One variable of a data clause, as compiled code lays it out (120 bytes; docs/ABI.md).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct DataOpArg {
    pub array: *mut ArrayHeader,
    /// `ACTION_*`.
    pub action: u32,
    /// The site a run-time error names (the variable in its clause).
    pub site: u32,
    /// Ranges given, or `NO_SECTION`.
    pub nranges: u32,
    pub pad: u32,
    /// `(start, count)` per dimension; `ABSENT` where not written.
    pub ranges: [[i64; 2]; MAX_RANK],
}

pub const DATA_OP_SIZE: usize = std::mem::size_of::<DataOpArg>();

pub const ACTION_COPY: u32 = 0;
pub const ACTION_COPYIN: u32 = 1;
pub const ACTION_COPYOUT: u32 = 2;
pub const ACTION_CREATE: u32 = 3;
pub const ACTION_NO_CREATE: u32 = 4;
pub const ACTION_PRESENT: u32 = 5;
pub const ACTION_DELETE: u32 = 6;
/// `update host(…)` / `update self(…)`.
pub const ACTION_UPDATE_HOST: u32 = 10;
pub const ACTION_UPDATE_DEVICE: u32 = 11;

pub use acc_abi::DataPhase;

impl DataOpArg {
    /// A whole array.
    pub fn whole(array: *mut ArrayHeader, action: u32, site: u32) -> DataOpArg {
        DataOpArg {
            array,
            action,
            site,
            nranges: NO_SECTION,
            pad: 0,
            ranges: [[ABSENT; 2]; MAX_RANK],
        }
    }

    /// The section this op names, checked against the array's shape.
    ///
    /// # Safety
    /// `array` is a live array.
    pub unsafe fn section(&self) -> Result<Section, RunErrorKind> {
        let dims = array::shape(self.array);
        if self.nranges == NO_SECTION {
            return Ok(Section::whole(dims));
        }
        let n = (self.nranges as usize).min(MAX_RANK);
        let opt = |v: i64| (v != ABSENT).then_some(v);
        let ranges: Vec<(Option<i64>, Option<i64>)> = self.ranges[..n]
            .iter()
            .map(|&[s, c]| (opt(s), opt(c)))
            .collect();
        Section::from_ranges(dims, &ranges).map_err(RunErrorKind::BadSection)
    }
}

/// The array that owns `a`'s data: `a` itself, or the array a `reshape` view `a` shares.
/// Presence is keyed by it.
///
/// # Safety
/// `a` is a live array.
pub(crate) unsafe fn storage(a: *mut ArrayHeader) -> *mut ArrayHeader {
    if (*a).owner.is_null() {
        a
    } else {
        (*a).owner
    }
}

/// A clause's array and section as the presence table keeps them.
pub(crate) struct Placed {
    /// The array that owns the data (`storage`).
    pub storage: *mut ArrayHeader,
    /// The section in the storage's shape.
    pub section: Section,
    /// The section as written, in the shape of the clause's array (for messages).
    pub written: Section,
}

/// The op's section, checked against its array's shape, and placed in its storage: every
/// device checks this, so that a clause fails the same way on each (LANGUAGE.md 7.3).
///
/// # Safety
/// `op.array` is a live array.
pub(crate) unsafe fn placed(op: &DataOpArg) -> Result<Placed, RunErrorKind> {
    let written = op.section()?;
    let storage = storage(op.array);
    let (view, shared) = (array::shape(op.array), array::shape(storage));
    let section = if storage == op.array || view == shared {
        written
    } else {
        written
            .reshaped(view, shared)
            .ok_or_else(|| RunErrorKind::ViewSection {
                section: section_text(op, &written),
                storage: shared.to_vec(),
            })?
    };
    Ok(Placed {
        storage,
        section,
        written,
    })
}

/// The section as the clause wrote it, after the variable's name (`[0:10]`; empty for a
/// whole array): the name is the op's site text, which the engine adds to the message.
pub(crate) unsafe fn section_text(op: &DataOpArg, section: &Section) -> String {
    if op.nranges == NO_SECTION {
        String::new()
    } else {
        section.display("", array::shape(op.array))
    }
}

/// Where an operation runs: now, on the caller's thread, or on a queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueArg {
    Sync,
    Async(QueueId),
}

/// OpenACC's `acc_async_sync`: no `async` clause.
pub const ASYNC_SYNC: i64 = -2;
/// OpenACC's `acc_async_noval`: `async` with no argument (the default queue).
pub const ASYNC_NOVAL: i64 = -1;

impl QueueArg {
    /// A queue value of compiled code: `ASYNC_SYNC`, `ASYNC_NOVAL` (the default queue,
    /// `default_async` being what `acc_set_default_async` set), or a queue number >= 0.
    pub fn decode(q: i64, default_async: i32) -> Result<QueueArg, RunErrorKind> {
        match q {
            ASYNC_SYNC => Ok(QueueArg::Sync),
            ASYNC_NOVAL if i64::from(default_async) == ASYNC_NOVAL => {
                Ok(QueueArg::Async(QueueId::Default))
            }
            ASYNC_NOVAL => QueueArg::decode(i64::from(default_async), default_async),
            q if (0..=i64::from(i32::MAX)).contains(&q) => {
                Ok(QueueArg::Async(QueueId::Numbered(q as i32)))
            }
            q => Err(RunErrorKind::BadQueue { queue: q }),
        }
    }
}

/// The queues of a `wait(…)` list: `ASYNC_NOVAL` is the default queue.
pub fn decode_queues(qs: &[i64], default_async: i32) -> Result<Vec<QueueId>, RunErrorKind> {
    qs.iter()
        .filter_map(|&q| match QueueArg::decode(q, default_async) {
            Ok(QueueArg::Async(id)) => Some(Ok(id)),
            Ok(QueueArg::Sync) => None,
            Err(e) => Some(Err(e)),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_layout_is_what_compiled_code_writes() {
        assert_eq!(DATA_OP_SIZE, 120);
        assert_eq!(std::mem::offset_of!(DataOpArg, action), 8);
        assert_eq!(std::mem::offset_of!(DataOpArg, site), 12);
        assert_eq!(std::mem::offset_of!(DataOpArg, nranges), 16);
        assert_eq!(std::mem::offset_of!(DataOpArg, ranges), 24);
    }

    #[test]
    fn queue_values() {
        assert_eq!(QueueArg::decode(-2, -1), Ok(QueueArg::Sync));
        assert_eq!(
            QueueArg::decode(-1, -1),
            Ok(QueueArg::Async(QueueId::Default))
        );
        assert_eq!(
            QueueArg::decode(-1, 3),
            Ok(QueueArg::Async(QueueId::Numbered(3)))
        );
        assert_eq!(
            QueueArg::decode(5, -1),
            Ok(QueueArg::Async(QueueId::Numbered(5)))
        );
        assert!(QueueArg::decode(-7, -1).is_err());
    }
}
