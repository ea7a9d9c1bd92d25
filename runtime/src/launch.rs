//! Compute regions as the runtime sees them: what compiled code describes about a region
//! (`RegionDesc`), and running its gangs, one after another or on host threads, with the
//! reductions combined in a fixed order.
//!
//! A region is a native function `(ctx, args, gang, num_gangs)` (jit-host writes it). `args`
//! holds one 8-byte slot per parameter: a scalar in its low bytes, an array as its handle.
//! Each gang gets its own copy of the slots: on return, a reduction parameter's slot holds
//! that gang's partial result (not yet combined with anything), which the runtime combines
//! with the value before the construct in gang order (gang 0 first), so a float sum is the
//! same on every run with the same gang count. A `copy` scalar that is not a reduction
//! (`ParamPass::Shared`) lives in one memory cell all gangs share, as it lives in device
//! memory on a GPU (so `acc atomic` updates of it from every gang add up): its slot holds the
//! cell's address, and the cell's final value is the result.
//!
//! Gangs that run on threads each get a private `Ctx` and `HostState`: device `print` output
//! is collected per gang and written in gang order once every gang is done (as a GPU's printf
//! buffer appears at the next synchronization), and the first error in gang order wins.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use acc_abi::{DeviceSizes, LaunchSizes, ABSENT, MAX_GANGS};

use crate::abi::{Ctx, ELEM_BOOL, ELEM_F32, ELEM_F64, ELEM_I32, ELEM_I64, STATUS_OK};
use crate::error::{RunError, RunErrorKind};
use crate::gang_pool::GangPool;
use crate::host::{HostState, SharedBuffer};

/// `(ctx, args, gang, num_gangs)`.
pub type RegionFn = unsafe extern "C" fn(*mut Ctx, *mut u64, i64, i64);

/// How a parameter reaches the region (`ir::Pass`, which the runtime cannot name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamPass {
    Value,
    /// A reduction's variable: in, each gang's partial result out.
    InOut,
    /// A `copy` scalar: one cell shared by every gang (the slot holds its address).
    Shared,
    Private,
    Array,
    PrivateArray,
    FirstPrivateArray,
}

/// The compute construct, for the gang count: `serial` regions and `kernels` regions that run
/// as one gang (`ir::gangs::one_gang`: their statements outside loops run once) run one gang on
/// the host devices; a `kernels` region that is one loop nest runs as `Parallel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeKind {
    Parallel,
    Kernels,
    Serial,
}

pub use acc_abi::ReductionOp;

#[derive(Clone, Debug)]
pub struct ParamDesc {
    pub pass: ParamPass,
    /// `ELEM_*` of the scalar or of the array's elements.
    pub elem: u32,
    /// The region assigns it (an element, for an array): what `--autocompare` compares.
    pub written: bool,
    /// The variable's name, for `--autocompare`'s reports.
    pub name: String,
}

impl ParamPass {
    /// Does the parameter's final value go back to the host?
    pub fn is_result(self) -> bool {
        matches!(self, ParamPass::InOut | ParamPass::Shared)
    }
}

impl ParamDesc {
    /// A parameter the region does not write, with no name (for hand-made descriptors).
    pub fn new(pass: ParamPass, elem: u32) -> ParamDesc {
        ParamDesc {
            pass,
            elem,
            written: false,
            name: String::new(),
        }
    }

    /// Does the region read the device copy of this array (rather than only its shape)?
    pub fn is_array(&self) -> bool {
        matches!(self.pass, ParamPass::Array | ParamPass::FirstPrivateArray)
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ReductionDesc {
    pub op: ReductionOp,
    pub elem: u32,
    /// The `InOut` parameter whose slot carries the partial result.
    pub param: usize,
    /// The operator's identity on `elem`, as a slot holds it (the IR's `Reduction::identity`):
    /// what a device's part of a launch split over devices starts from (`device::split`).
    pub identity: u64,
}

/// A compile's unit of code: what the JIT frees together (`acc_jit_host::Jit::free`), and
/// with it the unit's GPU kernels.
pub type UnitId = u32;

/// Which region a descriptor describes: its compile's unit and its number in that compile's
/// module (`ir::RegionId`'s, which the runtime cannot name). A GPU launch finds the region's
/// kernel by it (`crate::kernels::KernelTable`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RegionKey {
    pub unit: UnitId,
    pub region: u32,
}

/// What compiled code tells the runtime about one region: what the host back end made of it.
/// It lives as long as the region's code (the JIT owns it); a launch passes its address.
#[derive(Debug)]
pub struct RegionDesc {
    pub key: RegionKey,
    /// The region function's address, set once the code is finalized (0 before).
    func: AtomicUsize,
    pub kind: ComputeKind,
    /// The construct's name (`parallel loop`), for `--profile` and notices.
    pub name: &'static str,
    pub params: Vec<ParamDesc>,
    pub reductions: Vec<ReductionDesc>,
    /// Array parameters that must be different storage (a loop was parallelized on that
    /// assumption): checked before every launch (`Devices::launch`).
    pub distinct: Vec<DistinctDesc>,
    /// `devices(…)` (LANGUAGE.md 7.11): how a launch is cut over devices, and the hidden
    /// parameters that bound the block of the split loop a launch runs (`Devices::launch`
    /// sets them).
    pub split: Option<acc_abi::split::SplitPlan>,
}

/// Two array parameters of a region that must not share storage, and the loop that needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistinctDesc {
    /// The parameter of the array the loop writes.
    pub written: usize,
    pub other: usize,
    /// The loop's site.
    pub site: u32,
}

/// The storage an array argument slot's array uses: its owner's header for a view, its own
/// otherwise (what presence is keyed by).
///
/// # Safety
/// `slot` holds a live `ArrayHeader` pointer.
unsafe fn storage_of(slot: u64) -> *const crate::abi::ArrayHeader {
    let header = slot as usize as *const crate::abi::ArrayHeader;
    match header.as_ref() {
        Some(h) if !h.owner.is_null() => h.owner,
        _ => header,
    }
}

impl RegionDesc {
    /// The first pair of parameters that must be different storage but are not, with the
    /// error to report (at the loop that needs them distinct).
    ///
    /// # Safety
    /// The array parameters' slots of `args` hold live `ArrayHeader` pointers.
    pub unsafe fn shared_storage(&self, args: &[u64]) -> Option<RunError> {
        self.distinct.iter().find_map(|d| {
            let (a, b) = (*args.get(d.written)?, *args.get(d.other)?);
            if storage_of(a) != storage_of(b) {
                return None;
            }
            let name = |i: usize| {
                self.params
                    .get(i)
                    .map_or_else(String::new, |p| p.name.clone())
            };
            Some(RunError {
                kind: RunErrorKind::SharedStorage {
                    written: name(d.written),
                    other: name(d.other),
                },
                site: Some(d.site),
            })
        })
    }

    pub fn new(
        key: RegionKey,
        kind: ComputeKind,
        name: &'static str,
        params: Vec<ParamDesc>,
        reductions: Vec<ReductionDesc>,
    ) -> RegionDesc {
        RegionDesc {
            key,
            func: AtomicUsize::new(0),
            kind,
            name,
            params,
            reductions,
            distinct: Vec::new(),
            split: None,
        }
    }

    pub fn set_func(&self, f: RegionFn) {
        self.func.store(f as usize, Ordering::Release);
    }

    pub fn func(&self) -> Option<RegionFn> {
        match self.func.load(Ordering::Acquire) {
            0 => None,
            // SAFETY: only `set_func` stores a non-zero value, and it stores a `RegionFn`.
            p => Some(unsafe { std::mem::transmute::<usize, RegionFn>(p) }),
        }
    }

    /// Does a launch have results to copy back (so that it cannot return before the region
    /// has run)?
    pub fn has_results(&self) -> bool {
        self.params.iter().any(|p| p.pass.is_result())
    }
}

/// What running a region's gangs produced.
pub struct GangsResult {
    /// The argument slots after the run: reductions combined, `InOut` values from gang 0.
    pub args: Vec<u64>,
    /// Device output, in gang order (threaded runs only; a run on the caller's context
    /// writes its output directly).
    pub output: Vec<u8>,
    pub error: Option<RunError>,
}

/// Runs `gangs` gangs of a region one after another on `ctx` (the host device: output and
/// errors go straight to `ctx`). Stops at the first gang that fails.
///
/// # Safety
/// `ctx` is a live context; `args` matches `desc.params`; `func` is the region's code.
pub unsafe fn run_gangs_inline(
    ctx: *mut Ctx,
    desc: &RegionDesc,
    func: RegionFn,
    args: &[u64],
    gangs: i64,
) -> Vec<u64> {
    let cells = SharedCells::new(desc, args);
    let mut combined = Combined::new(desc, args);
    for g in 0..gangs {
        let mut slots = cells.slots(args);
        func(ctx, slots.as_mut_ptr(), g, gangs);
        combined.add(slots);
        if (*ctx).status != STATUS_OK {
            break;
        }
    }
    cells.results(combined.finish())
}

/// The slots after a run, folded gang by gang as the gangs finish (so that memory does not
/// grow with the gang count): each reduction's value before the construct combined with
/// every gang's partial result in gang order; other `InOut` slots from gang 0.
struct Combined<'d> {
    desc: &'d RegionDesc,
    /// Gang 0's slots, once it has run.
    first: Option<Vec<u64>>,
    /// Each reduction's value so far, in `desc.reductions`' order.
    reductions: Vec<u64>,
    before: Vec<u64>,
}

impl<'d> Combined<'d> {
    fn new(desc: &'d RegionDesc, before: &[u64]) -> Combined<'d> {
        Combined {
            desc,
            first: None,
            reductions: desc.reductions.iter().map(|r| before[r.param]).collect(),
            before: before.to_vec(),
        }
    }

    /// The next gang's slots.
    fn add(&mut self, slots: Vec<u64>) {
        for (v, r) in self.reductions.iter_mut().zip(&self.desc.reductions) {
            *v = combine(r.op, r.elem, *v, slots[r.param]);
        }
        if self.first.is_none() {
            self.first = Some(slots);
        }
    }

    fn finish(self) -> Vec<u64> {
        let mut after = self.first.unwrap_or(self.before);
        for (v, r) in self.reductions.iter().zip(&self.desc.reductions) {
            after[r.param] = *v;
        }
        after
    }
}

/// The memory cells of a launch's `Shared` parameters (one `u64` each, 8-byte aligned, at
/// a stable address while the gangs run).
struct SharedCells {
    /// Atomics: the gangs write them through their addresses while the cells are shared.
    cells: Vec<AtomicU64>,
    /// `(parameter, cell)`.
    params: Vec<(usize, usize)>,
}

impl SharedCells {
    fn new(desc: &RegionDesc, args: &[u64]) -> SharedCells {
        let params: Vec<(usize, usize)> = (desc.params.iter().enumerate())
            .filter(|(_, p)| p.pass == ParamPass::Shared)
            .enumerate()
            .map(|(cell, (i, _))| (i, cell))
            .collect();
        let cells = params
            .iter()
            .map(|&(i, _)| AtomicU64::new(args[i]))
            .collect();
        SharedCells { cells, params }
    }

    /// A gang's slots: the arguments, with the cells' addresses for the shared parameters.
    fn slots(&self, args: &[u64]) -> Vec<u64> {
        let mut slots = args.to_vec();
        for &(i, cell) in &self.params {
            slots[i] = self.cells[cell].as_ptr() as usize as u64;
        }
        slots
    }

    /// The results: the cells' final values in their parameters' slots.
    fn results(&self, mut after: Vec<u64>) -> Vec<u64> {
        for &(i, cell) in &self.params {
            after[i] = self.cells[cell].load(Ordering::Relaxed);
        }
        after
    }
}

/// What each gang's context of a threaded run takes from the launching context: the globals'
/// slots, and the interrupt word and depth limit, so that the gangs stop with the run.
#[derive(Clone, Copy)]
pub struct Launcher {
    pub globals: *mut u64,
    pub interrupt: *const std::sync::atomic::AtomicU32,
    pub max_depth: u64,
}

// SAFETY: the pointers are only read through while the launching run lasts, which outlives
// its gangs and its queued work (the engine waits for all queues at the end of a run).
unsafe impl Send for Launcher {}

impl Launcher {
    /// # Safety
    /// `ctx` is a live context.
    pub unsafe fn of(ctx: *const Ctx) -> Launcher {
        Launcher {
            globals: (*ctx).globals,
            interrupt: (*ctx).interrupt,
            max_depth: (*ctx).max_depth,
        }
    }
}

/// Runs `gangs` gangs of a region on `pool`'s threads, each with its own context (sharing
/// the launcher's globals), and combines them. `on_device` is the device type code
/// `acc_on_device` answers inside.
///
/// # Safety
/// As `run_gangs_inline`; the launcher's globals stay valid while the gangs run and region
/// code only reads them.
pub unsafe fn run_gangs_threaded(
    pool: &GangPool,
    launcher: Launcher,
    on_device: i32,
    desc: &RegionDesc,
    func: RegionFn,
    args: &[u64],
    gangs: i64,
) -> GangsResult {
    struct Gang {
        slots: Vec<u64>,
        out: SharedBuffer,
        error: Option<RunError>,
    }
    let (globals, interrupt, max_depth) = (
        launcher.globals as usize,
        launcher.interrupt as usize,
        launcher.max_depth,
    );
    let cells = SharedCells::new(desc, args);
    let run = |g: i64| -> Gang {
        let mut slots = cells.slots(args);
        let out = SharedBuffer::new();
        let mut host = HostState::new(Box::new(out.clone()));
        host.set_on_device(on_device);
        let mut ctx = Ctx {
            globals: globals as *mut u64,
            status: STATUS_OK,
            exit_code: 0,
            host: (&mut host as *mut HostState).cast(),
            stack_limit: crate::abi::stack_limit_here(),
            interrupt: interrupt as *const std::sync::atomic::AtomicU32,
            max_depth,
            devices: std::ptr::null_mut(),
        };
        // SAFETY: the caller's contract; `ctx` and `host` outlive the call.
        unsafe { func(&mut ctx, slots.as_mut_ptr(), g, gangs) };
        Gang {
            slots,
            out,
            error: host.take_error(),
        }
    };
    // Gangs run a batch at a time, each batch folded into the result in gang order before the
    // next starts: per-gang storage is bounded by the batch, whatever `num_gangs` asks for.
    let batch = (pool.participants() as i64 * GANGS_PER_THREAD_IN_A_BATCH).max(1);
    let mut combined = Combined::new(desc, args);
    let mut output = Vec::new();
    let mut error = None;
    let mut start = 0;
    while start < gangs && error.is_none() {
        let end = gangs.min(start + batch);
        let done: Vec<Mutex<Option<Gang>>> = (start..end).map(|_| Mutex::new(None)).collect();
        pool.run(done.len(), &|t| {
            let gang = run(start + t as i64);
            *done[t].lock().unwrap_or_else(|e| e.into_inner()) = Some(gang);
        });
        for g in done {
            let g = g.into_inner().unwrap_or_else(|e| e.into_inner());
            let g = g.expect("every gang of a batch ran");
            output.extend_from_slice(&g.out.take());
            if error.is_none() {
                error = g.error;
            }
            combined.add(g.slots);
        }
        start = end;
    }
    GangsResult {
        args: cells.results(combined.finish()),
        output,
        error,
    }
}

/// Checks a launch's `num_gangs`, `num_workers` and `vector_length` values, for every device
/// type alike: each given one is 1 to `MAX_GANGS`.
pub fn check_sizes(sizes: &LaunchSizes) -> Result<(), RunErrorKind> {
    for d in [sizes.nvidia, sizes.host, sizes.multicore] {
        let DeviceSizes {
            num_gangs,
            num_workers,
            vector_length,
        } = d;
        let clauses = [
            ("num_gangs", num_gangs),
            ("num_workers", num_workers),
            ("vector_length", vector_length),
        ];
        for (clause, value) in clauses {
            if value != ABSENT && !(1..=MAX_GANGS).contains(&value) {
                return Err(RunErrorKind::BadLaunchSize { clause, value });
            }
        }
    }
    Ok(())
}

/// How many gangs per pool thread a threaded run starts at once (see `run_gangs_threaded`).
const GANGS_PER_THREAD_IN_A_BATCH: i64 = 64;

/// The slots after a run of gangs that left `per_gang` (see `Combined`).
#[cfg(test)]
fn combine_gangs(desc: &RegionDesc, before: &[u64], per_gang: &[Vec<u64>]) -> Vec<u64> {
    let mut combined = Combined::new(desc, before);
    for g in per_gang {
        combined.add(g.clone());
    }
    combined.finish()
}

/// `init op values[0] op values[1] …`, in that order (a reduction's partial results, one per
/// block of a launch). The element type is matched once, not per value, and the operator's
/// match leaves the loop: a thousand f64 maxima take 0.8 µs instead of 4.9.
pub fn combine_all(op: ReductionOp, elem: u32, init: u64, values: &[u64]) -> u64 {
    let fold = |elem| values.iter().fold(init, |a, &b| combine(op, elem, a, b));
    match elem {
        ELEM_F64 => fold(ELEM_F64),
        ELEM_F32 => fold(ELEM_F32),
        ELEM_I32 => fold(ELEM_I32),
        ELEM_I64 => fold(ELEM_I64),
        ELEM_BOOL => fold(ELEM_BOOL),
        _ => init,
    }
}

/// `a op b` on two slots holding `elem` values (C's `fmax`/`fmin` for floats: a NaN
/// operand yields the other).
#[inline(always)]
pub fn combine(op: ReductionOp, elem: u32, a: u64, b: u64) -> u64 {
    match elem {
        ELEM_F64 => {
            let (x, y) = (f64::from_bits(a), f64::from_bits(b));
            float_op(op, x, y).to_bits()
        }
        ELEM_F32 => {
            let (x, y) = (f32::from_bits(a as u32), f32::from_bits(b as u32));
            u64::from(float_op32(op, x, y).to_bits())
        }
        ELEM_I32 => {
            int_op(op, i64::from(a as u32 as i32), i64::from(b as u32 as i32)) as i32 as u32 as u64
        }
        ELEM_I64 => int_op(op, a as i64, b as i64) as u64,
        ELEM_BOOL => u64::from(int_op(op, (a & 0xff) as i64, (b & 0xff) as i64) != 0),
        _ => a,
    }
}

fn int_op(op: ReductionOp, a: i64, b: i64) -> i64 {
    match op {
        ReductionOp::Add => a.wrapping_add(b),
        ReductionOp::Mul => a.wrapping_mul(b),
        ReductionOp::Max => a.max(b),
        ReductionOp::Min => a.min(b),
        ReductionOp::BitAnd => a & b,
        ReductionOp::BitOr => a | b,
        ReductionOp::BitXor => a ^ b,
        ReductionOp::And => i64::from(a != 0 && b != 0),
        ReductionOp::Or => i64::from(a != 0 || b != 0),
    }
}

fn float_op(op: ReductionOp, a: f64, b: f64) -> f64 {
    match op {
        ReductionOp::Add => a + b,
        ReductionOp::Mul => a * b,
        ReductionOp::Max => a.max(b),
        ReductionOp::Min => a.min(b),
        _ => a,
    }
}

fn float_op32(op: ReductionOp, a: f32, b: f32) -> f32 {
    match op {
        ReductionOp::Add => a + b,
        ReductionOp::Mul => a * b,
        ReductionOp::Max => a.max(b),
        ReductionOp::Min => a.min(b),
        _ => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combine_wraps_i32_and_ignores_nan() {
        let a = (i32::MAX as u32) as u64;
        let r = combine(ReductionOp::Add, ELEM_I32, a, 1);
        assert_eq!(r as u32 as i32, i32::MIN);
        let nan = f64::NAN.to_bits();
        assert_eq!(
            combine(ReductionOp::Max, ELEM_F64, nan, 2f64.to_bits()),
            2f64.to_bits()
        );
        let m = combine(
            ReductionOp::Min,
            ELEM_F32,
            3f32.to_bits() as u64,
            (-1f32).to_bits() as u64,
        );
        assert_eq!(f32::from_bits(m as u32), -1.0);
        assert_eq!(combine(ReductionOp::And, ELEM_BOOL, 1, 0), 0);
        assert_eq!(combine(ReductionOp::Or, ELEM_BOOL, 1, 0), 1);
    }

    #[test]
    fn combine_all_folds_in_order_from_the_value_before() {
        let f = |v: f64| v.to_bits();
        // Float sums depend on the order: ((1e16 + 1) + 1) - 1e16 is 0 left to right.
        let sum = combine_all(
            ReductionOp::Add,
            ELEM_F64,
            f(1e16),
            &[f(1.0), f(1.0), f(-1e16)],
        );
        assert_eq!(f64::from_bits(sum), 0.0);
        let max = combine_all(
            ReductionOp::Max,
            ELEM_F64,
            f(-1.0),
            &[f(f64::NAN), f(3.0), f(2.0)],
        );
        assert_eq!(f64::from_bits(max), 3.0);
        let wrapped = combine_all(ReductionOp::Add, ELEM_I32, i32::MAX as u32 as u64, &[1, 1]);
        assert_eq!(wrapped as u32 as i32, i32::MIN + 1);
        assert_eq!(combine_all(ReductionOp::And, ELEM_BOOL, 1, &[1, 0, 1]), 0);
        assert_eq!(combine_all(ReductionOp::Mul, ELEM_I64, 5, &[]), 5);
    }

    #[test]
    fn gangs_combine_in_order_with_the_prior_value() {
        let desc = RegionDesc::new(
            RegionKey { unit: 1, region: 0 },
            ComputeKind::Parallel,
            "parallel",
            vec![
                ParamDesc::new(ParamPass::InOut, ELEM_I64),
                ParamDesc::new(ParamPass::InOut, ELEM_I64),
            ],
            vec![ReductionDesc {
                op: ReductionOp::Add,
                elem: ELEM_I64,
                param: 0,
                identity: 0,
            }],
        );
        let before = [10u64, 7];
        let gangs = vec![vec![1u64, 100], vec![2, 200], vec![3, 300]];
        assert_eq!(combine_gangs(&desc, &before, &gangs), vec![16, 100]);
    }
}
