//! The words every acc crate shares, defined once: the front end writes them into the IR, the
//! back ends read them, and the runtime receives them from compiled code. Nothing here
//! depends on another acc crate.

pub mod gang_loop;
pub mod kernel;

/// A reduction's operator (`reduction(+: s)`, …): the front end parses it, lowering puts it
/// into the IR, the back ends combine with it, the runtime folds gangs' partial results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReductionOp {
    Add,
    Mul,
    Max,
    Min,
    BitAnd,
    BitOr,
    BitXor,
    And,
    Or,
}

impl ReductionOp {
    /// As written in a `reduction` clause.
    pub fn as_str(self) -> &'static str {
        match self {
            ReductionOp::Add => "+",
            ReductionOp::Mul => "*",
            ReductionOp::Max => "max",
            ReductionOp::Min => "min",
            ReductionOp::BitAnd => "&",
            ReductionOp::BitOr => "|",
            ReductionOp::BitXor => "^",
            ReductionOp::And => "&&",
            ReductionOp::Or => "||",
        }
    }
}

/// What a data directive does with its ops: the runtime needs it because the same clause
/// (`copy(a)`) means an entry or an exit depending on where it stands, and structured
/// (`data`, compute constructs) and dynamic (`enter data`, `exit data`, `declare`) reference
/// counts are separate (OpenACC 3.3, 2.6.7). Compiled code passes it as its `code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataPhase {
    /// Entry of a `data` construct (structured).
    RegionEntry,
    /// Exit of a `data` construct, also on `break`/`continue`/`return` out of its body.
    RegionExit,
    /// `enter data`, `declare` (dynamic).
    Enter,
    /// `exit data` (dynamic).
    Exit,
    /// `update`.
    Update,
}

impl DataPhase {
    /// Every phase, in code order.
    pub const CODES: [DataPhase; 5] = [
        DataPhase::RegionEntry,
        DataPhase::RegionExit,
        DataPhase::Enter,
        DataPhase::Exit,
        DataPhase::Update,
    ];

    pub fn from_code(c: u32) -> Option<DataPhase> {
        DataPhase::CODES.get(c as usize).copied()
    }

    /// What compiled code passes for it.
    pub fn code(self) -> u32 {
        self as u32
    }

    /// Structured (data and compute constructs) or dynamic reference counts.
    pub fn structured(self) -> bool {
        matches!(self, DataPhase::RegionEntry | DataPhase::RegionExit)
    }
}

/// The modifiers of a data directive (`exit data … finalize`, `update … if_present`), as one
/// set of bits: the IR holds it, compiled code passes its `bits`, the runtime reads it back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(transparent)]
pub struct DataModifiers(u32);

impl DataModifiers {
    pub const NONE: DataModifiers = DataModifiers(0);
    /// `finalize`: an exit drops every dynamic reference at once.
    pub const FINALIZE: DataModifiers = DataModifiers(1);
    /// `if_present`: an `update` of data not on the device does nothing.
    pub const IF_PRESENT: DataModifiers = DataModifiers(1 << 1);

    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The modifiers of `bits`; unknown bits are dropped.
    pub const fn from_bits(bits: u32) -> DataModifiers {
        DataModifiers(bits & (Self::FINALIZE.0 | Self::IF_PRESENT.0))
    }

    pub const fn contains(self, other: DataModifiers) -> bool {
        self.0 & other.0 == other.0
    }

    /// These and `other`.
    pub const fn with(self, other: DataModifiers) -> DataModifiers {
        DataModifiers(self.0 | other.0)
    }
}

/// Which threads of a GPU launch share a private array's copy: those that run the code using
/// it together. jit-ptx decides it; the runtime sizes the copies by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyLevel {
    /// One copy per block (`gridDim.x` copies): a construct's private arrays, and a loop's
    /// where the loop body runs gang-redundantly (a gang loop, or a `seq` loop outside worker
    /// and vector loops).
    Gang,
    /// One per row of a block (`gridDim.x * blockDim.y`): a worker loop's.
    Worker,
    /// One per thread (`gridDim.x * blockDim.x * blockDim.y`): a vector loop's, or a `seq`
    /// loop's inside one.
    Vector,
}

impl CopyLevel {
    /// Copies a block of `block_x * block_y` threads needs.
    pub fn per_block(self, block_x: u32, block_y: u32) -> u64 {
        match self {
            CopyLevel::Gang => 1,
            CopyLevel::Worker => u64::from(block_y),
            CopyLevel::Vector => u64::from(block_x) * u64::from(block_y),
        }
    }
}

/// The error record every kernel of a launch shares (page-locked host memory mapped into
/// the GPU): the first failing thread takes it (`status` from 0 to 1 with a compare-and-swap)
/// and fills the rest; the runtime reads it after the kernel. jit-ptx writes it at these
/// offsets (`offset_of!`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelErrorRecord {
    /// 0: no failure; 1: taken.
    pub status: u32,
    /// The failing check's site (`u32::MAX`: none).
    pub site: u32,
    /// A `KernelFailure` code.
    pub kind: u32,
    /// The failing dimension of a bounds check, the rank of a bad `dim` argument.
    pub dim: u32,
    /// The failing index (a bounds check), the bad dimension, an assertion's message.
    pub index: i64,
    /// The array's extents (a bounds check), -1 past its rank.
    pub shape: [i64; 6],
}

/// What a failed check in a kernel records (`KernelErrorRecord::kind`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelFailure {
    Bounds = 1,
    DivZero = 2,
    Assert = 3,
    BadDimension = 4,
    ZeroStep = 5,
    /// The host asked the kernel to stop: the run was interrupted or out of time (a `while`
    /// loop saw `STOP_WORD` set).
    Stopped = 6,
}

impl KernelFailure {
    pub fn from_code(code: u32) -> Option<KernelFailure> {
        use KernelFailure::*;
        [Bounds, DivZero, Assert, BadDimension, ZeroStep, Stopped]
            .into_iter()
            .find(|k| *k as u32 == code)
    }
}

/// The module global (`.u32`, device memory) that kernels' `while` loops poll and the host
/// sets to stop them.
pub const STOP_WORD: &str = "acc_stop";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_codes_round_trip() {
        for p in DataPhase::CODES {
            assert_eq!(DataPhase::from_code(p.code()), Some(p));
        }
        assert_eq!(DataPhase::from_code(5), None);
    }

    #[test]
    fn kernel_error_record_layout() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<KernelErrorRecord>(), 72);
        assert_eq!(offset_of!(KernelErrorRecord, site), 4);
        assert_eq!(offset_of!(KernelErrorRecord, kind), 8);
        assert_eq!(offset_of!(KernelErrorRecord, dim), 12);
        assert_eq!(offset_of!(KernelErrorRecord, index), 16);
        assert_eq!(offset_of!(KernelErrorRecord, shape), 24);
        for code in 1..=6 {
            assert_eq!(KernelFailure::from_code(code).map(|k| k as u32), Some(code));
        }
        assert_eq!(KernelFailure::from_code(0), None);
    }

    #[test]
    fn copies_per_block() {
        assert_eq!(CopyLevel::Gang.per_block(128, 4), 1);
        assert_eq!(CopyLevel::Worker.per_block(128, 4), 4);
        assert_eq!(CopyLevel::Vector.per_block(128, 4), 512);
    }
}
