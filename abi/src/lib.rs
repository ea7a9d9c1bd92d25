//! The words every acc crate shares, defined once: the front end writes them into the IR, the
//! back ends read them, and the runtime receives them from compiled code. Nothing here
//! depends on another acc crate.

pub mod gang_loop;
pub mod kernel;
pub mod split;

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
    /// `devices(…)` on a `data` construct (LANGUAGE.md 7.11): its arrays are held split over
    /// devices. The devices are `device_list`'s: a mask of device numbers in the high bits,
    /// or none of them for `devices(all)`.
    pub const DEVICES: DataModifiers = DataModifiers(1 << 2);
    /// The first bit of the device mask: device `d` is bit `DEVICE_MASK_SHIFT + d`.
    const DEVICE_MASK_SHIFT: u32 = 16;
    /// Device numbers a `data … devices(…)` list can name (validation rejects larger ones).
    pub const MAX_LISTED_DEVICE: i64 = 15;

    pub const fn bits(self) -> u32 {
        self.0
    }

    /// The modifiers of `bits`; unknown bits are dropped.
    pub const fn from_bits(bits: u32) -> DataModifiers {
        let known = Self::FINALIZE.0 | Self::IF_PRESENT.0 | Self::DEVICES.0;
        let mask = if bits & Self::DEVICES.0 != 0 {
            bits & (u32::MAX << Self::DEVICE_MASK_SHIFT)
        } else {
            0
        };
        DataModifiers((bits & known) | mask)
    }

    /// These modifiers with `devices(list)`. Numbers past `MAX_LISTED_DEVICE` are dropped
    /// (validation rejects them) and the order of a list is not kept: a data region holds
    /// its arrays on a set of devices.
    pub fn with_devices(self, list: &split::DeviceList) -> DataModifiers {
        let mut bits = self.0 | Self::DEVICES.0;
        if let split::DeviceList::Numbers(numbers) = list {
            for &d in numbers {
                if (0..=Self::MAX_LISTED_DEVICE).contains(&d) {
                    bits |= 1 << (Self::DEVICE_MASK_SHIFT + d as u32);
                }
            }
        }
        DataModifiers(bits)
    }

    /// The `devices(…)` list of a `data` construct (`None` without the clause).
    pub fn device_list(self) -> Option<split::DeviceList> {
        if !self.contains(Self::DEVICES) {
            return None;
        }
        let mask = self.0 >> Self::DEVICE_MASK_SHIFT;
        Some(match mask {
            0 => split::DeviceList::All,
            _ => split::DeviceList::Numbers(
                (0..=Self::MAX_LISTED_DEVICE)
                    .filter(|d| mask & (1 << d) != 0)
                    .collect(),
            ),
        })
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

/// An array's element type: what compiled code passes for it and `ArrayHeader::elem` holds
/// (lang's `ScalarType`, in its order).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElemType {
    Bool = 0,
    I32 = 1,
    I64 = 2,
    F32 = 3,
    F64 = 4,
}

impl ElemType {
    /// Every element type, in code order.
    pub const ALL: [ElemType; 5] = [
        ElemType::Bool,
        ElemType::I32,
        ElemType::I64,
        ElemType::F32,
        ElemType::F64,
    ];

    /// What compiled code passes for it.
    pub const fn code(self) -> u32 {
        self as u32
    }

    pub fn from_code(code: u32) -> Option<ElemType> {
        ElemType::ALL.get(code as usize).copied()
    }

    /// Bytes of one element (a `bool` is one byte, 0 or 1).
    pub const fn size(self) -> usize {
        match self {
            ElemType::Bool => 1,
            ElemType::I32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::F64 => 8,
        }
    }
}

/// A device type: the `acc_device_*` constants of a program, what `acc_get_device_type`
/// returns and `acc_on_device` and the `device_type` clauses take (OpenACC 3.3, 3.1).
/// `none`, `default`, `host`, `not_host` and `nvidia` have NVHPC's `openacc.h` values.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceType {
    None = 0,
    Default = 1,
    Host = 2,
    NotHost = 3,
    Nvidia = 4,
    Multicore = 8,
    Emulated = 100,
}

impl DeviceType {
    /// Every device type.
    pub const ALL: [DeviceType; 7] = [
        DeviceType::None,
        DeviceType::Default,
        DeviceType::Host,
        DeviceType::NotHost,
        DeviceType::Nvidia,
        DeviceType::Multicore,
        DeviceType::Emulated,
    ];

    /// Its `acc_device_t` value.
    pub const fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<DeviceType> {
        DeviceType::ALL.into_iter().find(|t| t.code() == code)
    }
}

/// An `acc_device_property_t` value (`acc_get_property`): the built-in constants
/// `acc_property_memory` and `acc_property_free_memory` have these codes, and the library
/// answers by them.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceProperty {
    /// The device's memory, in bytes.
    Memory = 1,
    /// The memory still free, in bytes.
    FreeMemory = 2,
}

impl DeviceProperty {
    pub const fn code(self) -> i32 {
        self as i32
    }

    pub fn from_code(code: i32) -> Option<DeviceProperty> {
        [DeviceProperty::Memory, DeviceProperty::FreeMemory]
            .into_iter()
            .find(|p| p.code() == code)
    }
}

/// A launch size, section bound or section length that the program did not give.
pub const ABSENT: i64 = i64::MIN;

/// The largest `num_gangs` (and `num_workers`, `vector_length`) any device runs: a CUDA grid's
/// limit, the same on every device so that a program behaves alike everywhere.
pub const MAX_GANGS: i64 = i32::MAX as i64;

/// The sizes a compute construct gives one device type: its `num_gangs`, `num_workers` and
/// `vector_length` clauses' values, `ABSENT` where not given.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceSizes {
    pub num_gangs: i64,
    pub num_workers: i64,
    pub vector_length: i64,
}

impl DeviceSizes {
    /// No size given.
    pub const ABSENT: DeviceSizes = DeviceSizes {
        num_gangs: ABSENT,
        num_workers: ABSENT,
        vector_length: ABSENT,
    };

    /// The three sizes, in field order.
    pub fn values(&self) -> [i64; 3] {
        [self.num_gangs, self.num_workers, self.vector_length]
    }
}

/// The most threads an NVIDIA thread block holds: a gang's `num_workers × vector_length`.
pub const MAX_BLOCK_THREADS: i64 = 1024;

/// The most workers a gang has on an NVIDIA GPU (rows of its block, `%tid.y`).
pub const MAX_WORKERS: i64 = 32;

/// A gang's vector length without a `vector_length` clause.
pub const DEFAULT_VECTOR_LENGTH: i64 = 128;

/// A gang's thread block on an NVIDIA GPU, `(vector lanes, workers)` (`%tid.x` by `%tid.y`),
/// for a launch's `num_workers` and `vector_length` values, `ABSENT` where not given: one
/// worker by default, a given count clamped to 1..=`MAX_WORKERS`; `DEFAULT_VECTOR_LENGTH`
/// lanes by default, and the default or a given length clamped to 1..=`MAX_BLOCK_THREADS` /
/// workers, so that a block never holds more threads than the GPU allows. The runtime
/// launches with this block, and `--info` reports from it where the block differs from what
/// the program gives (the one definition of the rule). The compiler has already rounded a
/// constant `vector_length` up to whole warps, and rejected constants whose product is above
/// `MAX_BLOCK_THREADS`, so the clamps apply to values computed at run time.
pub fn nvidia_block(num_workers: i64, vector_length: i64) -> (u32, u32) {
    let workers = if num_workers == ABSENT {
        1
    } else {
        num_workers.clamp(1, MAX_WORKERS)
    };
    let vector = if vector_length == ABSENT {
        DEFAULT_VECTOR_LENGTH
    } else {
        vector_length
    };
    let vector = vector.clamp(1, MAX_BLOCK_THREADS / workers);
    (vector as u32, workers as u32)
}

/// Bits of `acc_rt_launch`'s `flags` byte. `LAUNCH_IF`: the `if` clause is true (or absent).
/// `LAUNCH_RESULTS_LATE`: compiled code takes the results with `acc_rt_launch_results` before
/// it reads them (`acc_lang::ir::late`), so the runtime may return before they exist and leave
/// the launch running.
pub const LAUNCH_IF: u8 = 1;
pub const LAUNCH_RESULTS_LATE: u8 = 2;

/// The launch sizes compiled code passes `acc_rt_launch`: each device type's clauses (a
/// `device_type(…)` clause chooses among them). The emulated device follows `nvidia`'s.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchSizes {
    pub nvidia: DeviceSizes,
    pub host: DeviceSizes,
    pub multicore: DeviceSizes,
}

impl LaunchSizes {
    /// Every size given, in layout order.
    pub fn values(&self) -> impl Iterator<Item = i64> {
        [self.nvidia, self.host, self.multicore]
            .into_iter()
            .flat_map(|d| d.values())
    }
}

/// The header of a GPU output buffer (page-locked host memory mapped into the GPU), before
/// its records: kernels' `print` and `printf` statements reserve records with an atomic add on
/// `cursor`, count those that do not fit in `lost`, and never write past `end`. jit-ptx
/// writes it at these offsets (`offset_of!`); the runtime reads it after the kernel.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputHeader {
    /// Bytes of records reserved so far (may run past `end`).
    pub cursor: u64,
    /// Records that did not fit.
    pub lost: u64,
    /// Bytes of records the buffer holds.
    pub capacity: u64,
    /// Where the records that fit end: `capacity` while all fit, else where the first record
    /// that did not would have started (kernels lower it with an atomic min).
    pub end: u64,
}

impl OutputHeader {
    /// The header of an empty buffer of `capacity` bytes of records.
    pub const fn empty(capacity: u64) -> OutputHeader {
        OutputHeader {
            cursor: 0,
            lost: 0,
            capacity,
            end: capacity,
        }
    }
}

/// Where the stop word is: a `u32` at this byte offset from the error record a kernel is
/// given (just past the `KernelErrorRecord`, in the same page-locked host memory), which
/// kernels' `while` loops poll and the host sets to stop them. The host writes it with a
/// plain store: stopping a kernel needs no work queued on the GPU, which could wait behind
/// the very kernel it should stop (docs/ABI.md).
pub const STOP_WORD_OFFSET: usize = std::mem::size_of::<KernelErrorRecord>();

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lists_cross_in_the_modifier_bits() {
        use split::DeviceList;
        let none = DataModifiers::FINALIZE;
        assert_eq!(none.device_list(), None);
        let all = none.with_devices(&DeviceList::All);
        assert_eq!(
            DataModifiers::from_bits(all.bits()).device_list(),
            Some(DeviceList::All)
        );
        assert!(DataModifiers::from_bits(all.bits()).contains(DataModifiers::FINALIZE));
        // A data region holds a set: order and repeats go, numbers past 15 are dropped.
        let listed = DataModifiers::NONE.with_devices(&DeviceList::Numbers(vec![3, 0, 3, 15, 16]));
        assert_eq!(
            DataModifiers::from_bits(listed.bits()).device_list(),
            Some(DeviceList::Numbers(vec![0, 3, 15]))
        );
        // Mask bits without the flag are unknown bits.
        assert_eq!(DataModifiers::from_bits(1 << 20).device_list(), None);
        assert_eq!(DataModifiers::from_bits(1 << 20), DataModifiers::NONE);
    }

    #[test]
    fn nvidia_blocks_hold_at_most_1024_threads() {
        assert_eq!(nvidia_block(ABSENT, ABSENT), (128, 1));
        assert_eq!(nvidia_block(ABSENT, 256), (256, 1));
        assert_eq!(nvidia_block(4, 256), (256, 4));
        assert_eq!(nvidia_block(8, 256), (128, 8));
        // The default shrinks too: 16 workers of 128 lanes would not launch.
        assert_eq!(nvidia_block(16, ABSENT), (64, 16));
        assert_eq!(nvidia_block(64, ABSENT), (32, 32));
        assert_eq!(nvidia_block(0, 0), (1, 1));
        assert_eq!(nvidia_block(ABSENT, 5000), (1024, 1));
        for w in [ABSENT, -3, 1, 2, 3, 7, 31, 32, 33, 1 << 40] {
            for v in [ABSENT, -1, 1, 31, 100, 128, 1000, 1024, 1025, 1 << 40] {
                let (x, y) = nvidia_block(w, v);
                assert!(
                    x >= 1 && y >= 1 && u64::from(x) * u64::from(y) <= 1024,
                    "{w} {v}"
                );
            }
        }
    }

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
    fn elem_and_device_codes_round_trip() {
        for e in ElemType::ALL {
            assert_eq!(ElemType::from_code(e.code()), Some(e));
        }
        assert_eq!(ElemType::from_code(5), None);
        for t in DeviceType::ALL {
            assert_eq!(DeviceType::from_code(t.code()), Some(t));
        }
        assert_eq!(DeviceType::from_code(5), None);
    }

    #[test]
    fn launch_sizes_layout() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<DeviceSizes>(), 24);
        assert_eq!(offset_of!(DeviceSizes, num_gangs), 0);
        assert_eq!(offset_of!(DeviceSizes, num_workers), 8);
        assert_eq!(offset_of!(DeviceSizes, vector_length), 16);
        assert_eq!(size_of::<LaunchSizes>(), 72);
        assert_eq!(offset_of!(LaunchSizes, nvidia), 0);
        assert_eq!(offset_of!(LaunchSizes, host), 24);
        assert_eq!(offset_of!(LaunchSizes, multicore), 48);
    }

    #[test]
    fn output_header_layout() {
        use std::mem::{offset_of, size_of};
        assert_eq!(size_of::<OutputHeader>(), 32);
        assert_eq!(offset_of!(OutputHeader, cursor), 0);
        assert_eq!(offset_of!(OutputHeader, lost), 8);
        assert_eq!(offset_of!(OutputHeader, capacity), 16);
        assert_eq!(offset_of!(OutputHeader, end), 24);
    }

    #[test]
    fn copies_per_block() {
        assert_eq!(CopyLevel::Gang.per_block(128, 4), 1);
        assert_eq!(CopyLevel::Worker.per_block(128, 4), 4);
        assert_eq!(CopyLevel::Vector.per_block(128, 4), 512);
    }
}
