//! acc-jit-ptx: the PTX back end. It compiles the compute regions of an `ir::Module` (and the
//! device routines they call) to one PTX module for `sm_90` (`.version 8.0`), text that
//! `ptxas` and the CUDA driver's JIT accept (ASCII only: the driver rejects other bytes). [`emit_module`] never fails as a whole: a region
//! that uses something this back end cannot compile is listed in
//! [`PtxModule::unsupported`] with the reason, and the runtime runs it on the host instead.
//!
//! # Kernel ABI
//!
//! One `.visible .entry acc_region_{N}` per region (`N` = `RegionId.0`), with the `.u64`
//! parameters, in order:
//!
//! - `p{i}` for each `Region::params[i]`: a scalar's 8-byte slot value (the scalar in its low
//!   bytes, like the host's argument slots; `bool` in the low byte), or, for an array
//!   (`Pass::Array`), the device address of a 64-byte device header laid out like the host's
//!   `ArrayHeader` prefix: `data: u64` at 0, `len: i64` at 8, `dims: [i64; 6]` at 16 (unused
//!   dims 1). The kernel loads the data pointer and the extents once, at its start
//!   (`ld.global.nc`: the header must not change while the kernel runs).
//! - `results`: the device address of one 8-byte slot per region parameter. The slot of each
//!   `Pass::InOut` parameter that is not a reduction's (a `copy` scalar) is that variable's
//!   storage for the whole launch, as the host devices share one cell per `copy` scalar: the
//!   runtime fills the slots with the arguments before the launch and reads these slots back
//!   after it; every thread reads and writes the variable there (in its natural width at the
//!   slot's start), and `acc atomic` updates it with atomic instructions. Where the threads of
//!   a block (or row) run the same code, all of them read the cell and the leader writes it
//!   between two barriers, so that no read is in flight when it changes (the slots are
//!   page-locked host memory, far enough away for such a read to refill L1 with the old value
//!   after the store). Other slots are not used.
//! - `partials`: the device address of `reductions.len() * gridDim.x` 8-byte slots: thread
//!   (0,0) of block `b` stores its block's partial result of reduction `r` (in the slot form
//!   above) at slot `r * gridDim.x + b`. The runtime combines them in block order with the
//!   value before the construct, as the host devices do (runtime/src/launch.rs).
//! - `error`: the device address of the error record (`acc_abi::KernelErrorRecord`), zeroed
//!   before the launch: `{ status: u32 @0, site: u32 @4, kind: u32 @8, dim: u32 @12,
//!   index: i64 @16, shape: [i64; 6] @24 }` (72 bytes). The first failing thread takes it with
//!   `atom.global.cas.b32` on `status` 0 → 1 and fills the rest; every failing thread then
//!   leaves the kernel (`exit`). `site` is the IR's `SiteId` (`u32::MAX` for a check without
//!   one). Kinds:
//!   - 1, bounds: `dim` is the first index out of range, `index` its value, `shape[..rank]`
//!     the array's extents and `shape[rank..]` -1 (so the rank is the number of entries that
//!     are not -1);
//!   - 2, integer division or remainder by zero;
//!   - 3, `assert` failed: `index` is the message's `StringId` (-1 without a message);
//!   - 4, `size(a, d)` with `d` outside `0..rank`: `index` is `d`, `dim` the rank.
//!   - 5, a `for` loop's step is 0 (checked before the first iteration where the IR gives
//!     the loop a `step_site`).
//! - `out`: the device address of the output buffer that `print` and `printf` append records
//!   to (0 is allowed for a kernel without [`Kernel::prints`]), in page-locked host memory
//!   mapped into the GPU: a 32-byte header (`acc_abi::OutputHeader`) `{ cursor: u64 @0,
//!   lost: u64 @8, capacity: u64 @16, end: u64 @24 }`, then `capacity` bytes of records from byte 32. The runtime sets `cursor`
//!   and `lost` to 0 and `capacity` and `end` to the capacity before the kernels that use it
//!   run, and reads the records once their stream is synchronized (so records need no
//!   publishing order). A record is 8-byte slots: a header slot, `id | n << 32` (`id` the print
//!   statement's [`DevicePrint`] id, `n` the number of value slots), then the `n` values. A
//!   printing thread reserves its record with one `atom.global.add.u64` of its size on `cursor`
//!   (a byte offset from byte 32); a record that does not end within `capacity` is not written:
//!   it adds 1 to `lost` and lowers `end` to its offset (`atom.min`). The cursor keeps passing
//!   the end, so every later record is lost too: the records that fit are the bytes before
//!   `min(cursor, end)`.
//!   The slots are those of [`DevicePrint`]: `print`'s values in the slot form above (`bool`
//!   0 or 1, `i32` sign-extended, `f32` its bits in the low 4 bytes), `printf`'s arguments as
//!   the host's `acc_printf` takes them (integers sign-extended to 64 bits, `bool` 0 or 1,
//!   floats converted to `f64`).
//! - `g{k}`, after `out`, one per entry of [`Kernel::globals`]: the 8-byte slot value of a
//!   global scalar that a routine called by the kernel reads (a routine sees a global's value
//!   at region entry, LANGUAGE.md 7.9). A global *array* a routine reads takes no parameter:
//!   the analysis makes it a parameter of the region (`Pass::Array`), and the kernel passes
//!   that parameter's device header to the routine, so routines read and write the device
//!   copy, never the host's array.
//! - For each entry of [`KernelLaunch::private_arrays`], in parameter order, after the `g{k}`:
//!   `s{i}` (`i` the parameter's index), the device address of the launch's copies of that
//!   private array, then `s{i}_d{k}` for `k` in `0..rank`, the original's extents. The
//!   runtime allocates, per launch, `copies * stride` bytes for it, where `stride` is the
//!   array's bytes (`len * elem_bytes`, `len` the product of the extents) rounded up to 16
//!   ([`private_copy_stride`]) and `copies` follows the entry's [`CopyLevel`]: `gridDim.x`
//!   (`Gang`), `gridDim.x * blockDim.y` (`Worker`) or `gridDim.x * blockDim.x * blockDim.y`
//!   (`Vector`). The copy of block `b`'s gang, row `y` or thread `t` (`t = y * blockDim.x +
//!   x`) is number `b`, `b * blockDim.y + y` or `b * blockDim.x * blockDim.y + t`, at `s{i} +
//!   number * stride` (a one-gang kernel uses copy 0, `b` being 0 for it). A copy's contents
//!   start undefined, except for `firstprivate` arrays (`PrivateArray::first`, always
//!   `Gang`): the parameter's `p{i}` is then the original's device header (the region's
//!   `copyin` data op makes it present), whose data the block's threads copy into the block's
//!   copy before the body runs. For a `private` array `p{i}` is not read (the runtime passes
//!   the original's header when it has one, else 0). The copies live until the kernel is
//!   done; nothing carries over between launches. Any grid remains correct, so the runtime
//!   may launch fewer blocks to keep the copies small.
//! - For each entry of [`KernelLaunch::arrays`] (the `Pass::Array` parameters, as many as fit in
//!   4 KiB of parameters with the others; the kernel reads the rest from their headers), in
//!   parameter order, after the private arrays' parameters: `p{i}_data`, the data pointer of `p{i}`'s header,
//!   then `p{i}_d{k}` for `k` in `0..rank`, its extents: the same values as the header's.
//!   The kernel reads these instead of the header: parameters live in the constant bank,
//!   which instructions read directly, so pointers and extents take no registers (a kernel
//!   that keeps five arrays' pointers and extents in registers needs 40 where 32 do, and runs
//!   fewer warps at once). The header itself still goes to routines.
//! - `split`, last, for a [`KernelLaunch::split`] kernel only: how many consecutive blocks share
//!   each gang (at least 1; the grid is a multiple of it). Block `b` is gang `b / split` of
//!   `grid / split` and takes turns `b % split`, `b % split + split`, … of `split * threads`
//!   iterations each of the gang loop's vector loop.
//!
//! Launch: grid `(num_gangs, 1, 1)`, block `(vector_length, num_workers, 1)`, dynamic shared
//! memory of [`KernelLaunch::shared_per_thread`] bytes per thread and per row (`acc_shared`: the
//! scratch slots of reductions and broadcasts, then the row barriers' words). Every kernel is correct for any grid and block size (gang,
//! worker and vector loops stride over the iteration space), blocks of up to 1024 threads.
//! A kernel with [`KernelLaunch::one_gang`] does its work in block 0 alone (other blocks store
//! identity partial results and leave), so it should be launched with one block: `serial`
//! regions (which should also get a block of one thread), and `kernels` regions that are not a
//! single gang loop nest.
//!
//! # What the kernels do
//!
//! Gang → block (`%ctaid.x`), worker → `%tid.y`, vector → `%tid.x`; the table of
//! `schedule` gives each loop level's share of iterations. Outside worker and vector loops
//! every thread of a block runs the code redundantly with the same values (gang-redundant,
//! worker- and vector-single); thread (0,0) alone performs stores, atomics and output there,
//! then the block synchronizes; inside a worker loop, each row's thread `x = 0` does, then the
//! row synchronizes (`acc_row_barrier`). Reductions combine deterministically (`reduce`).
//! Semantics follow jit-host (its module doc): wrapping integers, C's division with the
//! zero check, masked shift counts, saturating float-to-integer conversion, no contraction
//! (`add.rn`, `mul.rn`; `fma` only for `fma`), bounds checks unless [`PtxOptions::unchecked`].
//!
//! Routines: `seq` ones run in one thread (the leader, where threads share the code); `gang`,
//! `worker` and `vector` ones in the caller's threads, one variant per caller mode (`call`).
//! `print` and `printf` append records to the `out` buffer, which the runtime turns into text
//! with the host's formatting code (`print`): device output reads exactly as host output.
//! Math: PTX instructions where
//! they are exact (`sqrt.rn`, `abs`, `min`/`max`, `floor`/`ceil`/`trunc`, `copysign`, `fma`,
//! the classifications); `exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan atan2
//! sinh cosh tanh hypot fmod pow cbrt` and float `%` from the module's math library (`math`),
//! within 2 ulp (`examples/math_ulp.rs` and `gpu/math_ulp.py` measure them on a GPU).
//!
//! Private arrays (`private`): see `private` for who shares a copy (a construct's: the gang;
//! a loop's: the threads that run one iteration together).
//!
//! Not compiled yet (the region runs on the host): a private array passed to a routine or
//! assigned to another variable, `print` of an array, and the other constructs
//! [`PtxModule::unsupported`] names.

mod address;
mod atomic;
mod call;
mod cx;
mod expr;
mod fx;
mod kernel;
mod math;
mod module;
mod plan;
mod print;
mod private;
mod ptx;
mod reduce;
mod schedule;
mod stmt;
#[cfg(test)]
mod tests;
mod unroll;
mod version;

use std::fmt;

use acc_lang::analysis::RegionId;
use acc_lang::builtins::FormatPiece;
use acc_lang::ir::{self, ScalarType};

pub use schedule::{advance, decompose};

/// Options of the generated code.
#[derive(Clone, Debug, Default)]
pub struct PtxOptions {
    /// Leave out array bounds checks (`--unchecked`).
    pub unchecked: bool,
}

/// A module's PTX and what it holds.
#[derive(Clone, Debug)]
pub struct PtxModule {
    /// The PTX text: every kernel that could be generated, and the routines they call.
    pub text: String,
    pub kernels: Vec<Kernel>,
    /// The regions that could not be generated, with the reason (run them on the host).
    pub unsupported: Vec<(RegionId, String)>,
    /// The module's `print` and `printf` statements in device code: entry `i` describes the
    /// records of print id `first_print + i` (see [`emit_module_numbered`]).
    pub prints: Vec<DevicePrint>,
}

/// What the records of one `print` or `printf` statement of device code hold, so that the
/// runtime can write them as the host would: each value takes one 8-byte slot of the record,
/// in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DevicePrint {
    /// `print(…)`: its text (the spaces between values and the final newline included) and
    /// values, each value a slot in the kernel ABI's slot form.
    Print(Vec<PrintPiece>),
    /// `printf(format, …)`: the format (string arguments already folded into its text); each
    /// conversion takes one slot as the host's `acc_printf` does (integers sign-extended to
    /// 64 bits, floats as `f64`).
    Printf(Vec<FormatPiece>),
}

/// A piece of a `print` statement's output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintPiece {
    Text(String),
    /// The next slot, a value of this type.
    Value(ScalarType),
}

impl DevicePrint {
    /// The number of value slots of its records.
    pub fn slots(&self) -> usize {
        match self {
            DevicePrint::Print(pieces) => pieces
                .iter()
                .filter(|p| matches!(p, PrintPiece::Value(_)))
                .count(),
            DevicePrint::Printf(pieces) => pieces
                .iter()
                .filter(|p| matches!(p, FormatPiece::Spec(_)))
                .count(),
        }
    }
}

/// One kernel of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    pub region: RegionId,
    /// The entry's name, `acc_region_{N}`.
    pub name: String,
    /// `Region::reductions.len()`: the partial results each block writes.
    pub reductions: usize,
    /// The global scalars its routines read: after `out`, the kernel takes one `.u64`
    /// parameter `g{k}` per entry, the global's 8-byte slot value at the launch. (Global
    /// arrays its routines read are region parameters, not entries here.)
    pub globals: Vec<acc_lang::hir::VarId>,
    /// The kernel (or a routine it calls) has `print` or `printf` statements: it needs an
    /// output buffer (its `out` parameter).
    pub prints: bool,
    /// How to launch it, for the runtime as it is: its dynamic shared memory, one gang or
    /// split, the private arrays (`s{i}`, `s{i}_d{k}`) and shared arrays (`p{i}_data`,
    /// `p{i}_d{k}`) it takes parameters for, and its gang loop's trip count as a formula.
    pub launch: KernelLaunch,
}

pub use acc_abi::kernel::{private_copy_stride, ArrayParam, KernelLaunch, PrivateArray};
pub use acc_abi::CopyLevel;

/// Why a region or routine could not be generated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PtxError {
    Unsupported(String),
}

impl fmt::Display for PtxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PtxError::Unsupported(what) => write!(f, "not supported on the device: {what}"),
        }
    }
}

impl std::error::Error for PtxError {}

pub(crate) type Result<T> = std::result::Result<T, PtxError>;

pub(crate) fn unsupported<T>(what: impl Into<String>) -> Result<T> {
    Err(PtxError::Unsupported(what.into()))
}

/// Generate the PTX of `module`'s compute regions (print ids from 0).
pub fn emit_module(module: &ir::Module, options: &PtxOptions) -> PtxModule {
    module::emit(module, options, 0)
}

/// Generate the PTX of `module`'s compute regions, numbering its print statements from
/// `first_print`: modules whose kernels share an output buffer (the compiles of one engine)
/// need distinct ids.
pub fn emit_module_numbered(
    module: &ir::Module,
    options: &PtxOptions,
    first_print: u32,
) -> PtxModule {
    module::emit(module, options, first_print)
}
