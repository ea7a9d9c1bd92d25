//! Directive analysis: what the back ends and `--info` need to know about each compute
//! construct, computed once from the typed tree, and the directive rules that need names and
//! types (LANGUAGE.md 7.2-7.9).
//!
//! Per compute construct (`RegionInfo`, in source order, those inside functions included):
//! every variable it uses with its data attribute (a clause, or the implicit rule of 7.3),
//! reductions, the loop nest with each loop's resolved schedule (7.2's defaulting rules), launch
//! sizes per device type, and the functions it calls. Per device function (`RoutineInfo`): its
//! level and its loops.
//!
//! Errors: reductions on arrays or with an operator the type does not have, `default(none)`
//! omissions, recursion, array creation, host-only built-ins and data directives in device code,
//! routines writing global scalars, routine calls at a level the caller cannot provide, and
//! `num_workers × vector_length` above 1024. A `vector_length` that is not a multiple of 32 gives
//! a warning (rounded up). Warnings for porting mistakes (LANGUAGE.md 8): an array written but
//! only copied in (`regions`), a scalar every iteration of a parallel loop assigns (`loops`), a
//! host access during an `async` transfer and `present` of data nothing made present
//! (`hostflow`).
//!
//! Modules: `functions` (per-function summaries, the call graph), `regions` (compute constructs
//! and their data), `loops` (loop nests and schedules), `device` (what device code may contain),
//! `hostflow` (host code in order: asynchronous transfers and presence), `feedback` (`--info`).

mod dependence;
mod device;
mod feedback;
mod functions;
mod hostflow;
mod kernels;
mod loops;
mod regions;
pub mod split;
mod visit;

#[cfg(test)]
mod dependence_tests;
#[cfg(test)]
mod hostflow_tests;
#[cfg(test)]
mod tests;

use std::fmt;

pub use feedback::feedback;
pub use kernels::{KernelPart, Together};

use crate::diag::Diagnostic;
use crate::hir::{
    self, Construct, DataClause, DefaultKind, DeviceTypeName, FnId, ReductionOp, RoutineLevel,
    ScalarType, Type, VarId,
};
use crate::span::Span;

/// The analysis of one compile.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Every compute construct of this compile (top-level code and function bodies), in source
    /// order; `regions[i].id == RegionId(i)`.
    pub regions: Vec<RegionInfo>,
    /// Every function compiled for the device: this compile's `acc routine` functions and every
    /// function (of any compile) that device code of this compile calls, directly or not.
    pub routines: Vec<RoutineInfo>,
}

impl Analysis {
    /// The region of a compute directive, found by its directive line's span.
    pub fn region_at(&self, directive_span: Span) -> Option<&RegionInfo> {
        self.regions.iter().find(|r| r.span == directive_span)
    }

    pub fn routine(&self, f: FnId) -> Option<&RoutineInfo> {
        self.routines.iter().find(|r| r.function == f)
    }
}

/// Index into `Analysis::regions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RegionId(pub u32);

/// One compute construct (`parallel`, `kernels`, `serial`, or a combined `… loop`).
#[derive(Clone, Debug)]
pub struct RegionInfo {
    pub id: RegionId,
    pub construct: Construct,
    /// The directive line: the key back ends use to find the region of a `hir::Directive`.
    pub span: Span,
    pub construct_span: Span,
    /// The function whose body holds it; `None` in top-level code.
    pub function: Option<FnId>,
    /// `default(…)` of the construct, or else of the innermost enclosing `acc data`.
    pub default: Option<DefaultKind>,
    /// Every variable from outside the region that it uses or names in a clause, in order of
    /// first appearance (variables declared inside the region, loop variables and variables
    /// private to a loop of the region are not here). Globals used by the functions the region
    /// calls are here too.
    pub vars: Vec<VarUse>,
    /// Reductions whose result reaches the host after the region: those on the construct (or
    /// on a combined construct), and those on loops inside it of variables the construct does
    /// not reduce itself (copied back, 7.3 and 7.5).
    pub reductions: Vec<ReductionInfo>,
    /// The loops with a directive inside the region (for a combined construct, its own loop
    /// first), and in `kernels` regions every `for` loop. Parents come before their children.
    pub loops: Vec<LoopInfo>,
    /// Launch sizes and queue per device type (clauses after `device_type`).
    pub launch: PerDevice<Launch>,
    /// Every user function the region calls, directly or not (compiled as device routines).
    pub calls: Vec<FnId>,
    /// A `kernels` region that runs as several kernels, one per loop nest (7.6): its parts in
    /// order; empty when it runs as one kernel.
    pub parts: Vec<KernelPart>,
    /// Why a `kernels` region of several loop nests runs as one kernel.
    pub together: Option<Together>,
    /// What the runtime will make of the launch sizes it gives on NVIDIA GPUs, where that
    /// differs from the clauses as written (`--info`'s adjustments).
    pub adjustments: Vec<Adjustment>,
    /// `devices(…)` (LANGUAGE.md 7.11): how the construct's work is cut over devices.
    pub split: Option<split::SplitInfo>,
    /// A `parallel` construct that shares no loop over gangs (no gang loop, no gang routine):
    /// `launch.num_gangs` is 1 wherever the clauses give none (7.1), and some gave none.
    pub one_gang_default: bool,
}

/// A launch size that does not apply as written (LANGUAGE.md 8, `--info`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Adjustment {
    /// The clause (`vector_length(100)`).
    pub clause: Span,
    pub kind: AdjustmentKind,
}

/// How a launch size changes. Sizes are those of NVIDIA GPUs (`acc_abi::nvidia_block`, the
/// rule the runtime launches with), except `GangsUnused`, which holds on every device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdjustmentKind {
    /// A constant `vector_length` that is not a whole number of warps, rounded up to `to`.
    VectorRounded { to: i64 },
    /// A constant `num_workers` clipped to `to` workers (with a vector length computed at run
    /// time; with a constant one, above 1024 threads is a compile error).
    WorkersClipped { to: i64 },
    /// A constant `vector_length` clipped to `to` lanes (the same).
    VectorClipped { to: i64 },
    /// A vector length computed at run time, with a constant `num_workers`: at most `most`
    /// lanes, so that the block holds at most 1024 threads.
    VectorAtMost { most: i64 },
    /// A constant vector length, with `num_workers` computed at run time: cut to
    /// `1024 / num_workers` lanes where `num_workers` is above `above`.
    VectorCutAbove { above: i64 },
    /// No `vector_length`, and `num_workers` computed at run time (the clause): the default
    /// vector length is cut to `1024 / num_workers` lanes where `num_workers` is above
    /// `above`.
    DefaultVectorCutAbove { above: i64 },
    /// `num_gangs` of a region that runs as one gang (`serial`, and the `kernels` regions of
    /// 7.6 that run as one kernel of a single gang).
    GangsUnused,
}

impl RegionInfo {
    pub fn var(&self, v: VarId) -> Option<&VarUse> {
        self.vars.iter().find(|u| u.var == v)
    }
}

/// A variable as a compute construct sees it.
#[derive(Clone, Debug)]
pub struct VarUse {
    pub var: VarId,
    pub name: String,
    pub ty: Type,
    pub attr: DataAttr,
    /// Where the region first uses it (or calls a function using it); `None` when only named in
    /// a clause.
    pub first_use: Option<Span>,
    /// The region (or a function it calls) reads it or, for an array, reads an element.
    pub read: bool,
    /// The region (or a function it calls) assigns it or, for an array, an element.
    pub written: bool,
    /// For an array under the implicit `copy` rule: the directive line of the innermost
    /// `acc data` construct around the region (in the same function body or top-level code)
    /// whose clauses make it present, whole (any data clause but `no_create`), so that the region
    /// finds it present and moves nothing (`--info` says `present(A) (held by …)`). Lexical
    /// only: a function cannot know what its callers hold.
    pub held_by: Option<Span>,
}

/// How a compute construct treats a variable.
#[derive(Clone, Debug)]
pub enum DataAttr {
    /// A data clause of the construct (or of the compute part of a combined construct).
    Clause {
        clause: DataClause,
        /// The section, when one is written.
        sections: Option<Vec<hir::SectionRange>>,
        /// The variable's entry in the clause.
        span: Span,
    },
    /// `private(v)` on a `parallel`/`serial`/`kernels` construct: one uninitialized copy per gang.
    Private { span: Span },
    /// `firstprivate(v)` on the construct: one copy per gang, initialized from the host value.
    FirstPrivate { span: Span },
    /// `reduction(op: v)` on the construct (or combined construct): reduced, the result copied
    /// back.
    Reduction { op: ReductionOp, span: Span },
    /// Named in no clause: the implicit rule of LANGUAGE.md 7.3.
    Implicit(Implicit),
}

/// The implicit data attributes of 7.3.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Implicit {
    /// Arrays without a default clause; scalars in `kernels`; scalars reduced by a loop inside
    /// the region.
    Copy,
    /// Arrays under `default(present)`, and globals under `acc declare`.
    Present,
    /// Scalars in `parallel` and `serial` regions (writes do not reach the host), and global
    /// scalars that only called routines read.
    FirstPrivate,
}

/// `reduction(op: var)`.
#[derive(Clone, Debug)]
pub struct ReductionInfo {
    pub op: ReductionOp,
    pub var: VarId,
    pub ty: ScalarType,
    /// The variable in the clause.
    pub span: Span,
}

/// A loop of a compute region or routine and its schedule.
#[derive(Clone, Debug)]
pub struct LoopInfo {
    /// The enclosing loop in the same list.
    pub parent: Option<usize>,
    /// The loop's directive line, or its `for` statement when it has none.
    pub span: Span,
    /// The `for` statement: the key back ends use to find the loop.
    pub for_span: Span,
    pub has_directive: bool,
    /// The variables of the associated loops (several with `collapse`/`tile`), outermost first.
    pub vars: Vec<VarId>,
    pub schedule: Schedule,
    /// Why the schedule is what it is, for `--info` (`explicit`, `default in a parallel region`, …).
    pub reason: String,
    /// `collapse(n)`: 1 without one.
    pub collapse: u32,
    /// `tile(…)` sizes; `None` entries are `*`.
    pub tile: Option<Vec<Option<u32>>>,
    pub independent: bool,
    /// The arguments of `gang(n)`, `worker(n)`, `vector(n)`.
    pub gang_size: Option<Size>,
    pub worker_size: Option<Size>,
    pub vector_size: Option<Size>,
    /// Variables private to each iteration (`private` clauses; loop variables are implicitly so).
    pub private: Vec<VarId>,
    /// The scalars of `private` that the dependence test made private (no clause names them):
    /// every iteration assigns them before reading them and nothing reads them after the loop.
    pub privatized: Vec<VarId>,
    /// Pairs of array variables that the dependence test took to be different storage when it
    /// parallelized the loop: the launch checks that they are (LANGUAGE.md 7.6).
    pub distinct: Vec<(VarId, VarId)>,
    pub reductions: Vec<ReductionInfo>,
    /// The loop's body (or its associated loops') contains a `break` out of the loop.
    pub has_break: bool,
}

/// How a loop's iterations run. Loops whose schedule the compiler chooses (`kernels`, `auto`)
/// get one of these from the dependence test (`dependence.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// One after another, in each thread that reaches the loop.
    Seq,
    /// Shared out over these levels (at least one is set).
    Parallel(Levels),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Levels {
    pub gang: bool,
    pub worker: bool,
    pub vector: bool,
}

impl Levels {
    pub fn is_empty(self) -> bool {
        !(self.gang || self.worker || self.vector)
    }
}

impl fmt::Display for Levels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = [
            (self.gang, "gang"),
            (self.worker, "worker"),
            (self.vector, "vector"),
        ]
        .into_iter()
        .filter(|(on, _)| *on)
        .map(|(_, n)| n)
        .collect();
        f.write_str(&names.join(", "))
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Schedule::Seq => f.write_str("seq"),
            Schedule::Parallel(levels) => levels.fmt(f),
        }
    }
}

/// A count given in a clause.
#[derive(Clone, Debug)]
pub enum Size {
    Const(i64),
    /// Evaluated on the host when the construct is reached.
    Expr(hir::Expr),
}

impl Size {
    pub fn as_const(&self) -> Option<i64> {
        match self {
            Size::Const(v) => Some(*v),
            Size::Expr(_) => None,
        }
    }
}

/// `async` as written.
#[derive(Clone, Debug)]
pub enum AsyncQueue {
    /// `async` with no argument: the default asynchronous queue.
    Default,
    Queue(hir::Expr),
}

/// A compute construct's launch configuration on one device type.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    pub num_gangs: Option<Size>,
    pub num_workers: Option<Size>,
    /// A constant is already rounded up to a multiple of 32.
    pub vector_length: Option<Size>,
    pub async_queue: Option<AsyncQueue>,
    /// `wait(q, …)`; an empty list waits for every queue.
    pub wait: Option<Vec<hir::Expr>>,
}

/// One value per device type of `device_type(…)`.
#[derive(Clone, Debug, Default)]
pub struct PerDevice<T> {
    pub nvidia: T,
    pub host: T,
    pub multicore: T,
}

impl<T> PerDevice<T> {
    /// `Any` (`*`) reads as `nvidia`.
    pub fn get(&self, dev: DeviceTypeName) -> &T {
        match dev {
            DeviceTypeName::Nvidia | DeviceTypeName::Any => &self.nvidia,
            DeviceTypeName::Host => &self.host,
            DeviceTypeName::Multicore => &self.multicore,
        }
    }
}

/// A function compiled for the device.
#[derive(Clone, Debug)]
pub struct RoutineInfo {
    pub function: FnId,
    pub name: String,
    /// The `acc routine` level; `seq` for functions that device code calls without one.
    pub level: RoutineLevel,
    /// Declared with `acc routine`.
    pub explicit: bool,
    /// The user functions it calls directly.
    pub calls: Vec<FnId>,
    /// The globals it (or a function it calls) uses; their values are those at region entry.
    pub globals: Vec<VarId>,
    /// Its loops with directives, resolved as in a region of the routine's level.
    pub loops: Vec<LoopInfo>,
}

/// Analyze a checked program.
pub fn analyze(program: &hir::Program) -> (Analysis, Vec<Diagnostic>) {
    let mut cx = Cx {
        program,
        summaries: functions::Summaries::build(program),
        aliases: dependence::Aliases::default(),
        device_calls: Vec::new(),
        diags: Vec::new(),
    };
    cx.aliases = dependence::Aliases::build(&cx);
    let regions = regions::collect(&mut cx);
    hostflow::check(&mut cx, &regions);
    let routines = device::routines(&mut cx);
    (Analysis { regions, routines }, cx.diags)
}

/// What every part of the analysis shares.
pub(crate) struct Cx<'a> {
    program: &'a hir::Program,
    summaries: functions::Summaries,
    /// Which array variables may share storage (for the dependence test).
    aliases: dependence::Aliases,
    /// Calls of user functions made directly by compute regions, in source order.
    device_calls: Vec<(FnId, Span)>,
    diags: Vec<Diagnostic>,
}

impl Cx<'_> {
    fn var_name(&self, v: VarId) -> String {
        self.program
            .vars
            .get(v.index())
            .map_or_else(|| format!("#{}", v.0), |i| i.name.clone())
    }

    fn var_ty(&self, v: VarId) -> Type {
        self.program
            .vars
            .get(v.index())
            .map_or(Type::Error, |i| i.ty)
    }

    fn fn_name(&self, f: FnId) -> String {
        self.program
            .functions
            .get(f.index())
            .map_or_else(|| format!("#{}", f.0), |i| i.name.clone())
    }

    /// An expression as a reason shows it (`a[i - 1]`, `idx[j]`, `f(…)`).
    fn expr_text(&self, e: &crate::hir::Expr) -> String {
        use crate::hir::{Const, ExprKind, UnOp};
        match &e.kind {
            ExprKind::Const(Const::I32(c)) => c.to_string(),
            ExprKind::Const(Const::I64(c)) => c.to_string(),
            ExprKind::Var(v) => self.var_name(*v),
            ExprKind::Convert { expr, .. } => self.expr_text(expr),
            ExprKind::Unary(UnOp::Neg, a) => match a.kind {
                ExprKind::Binary(..) => format!("-({})", self.expr_text(a)),
                _ => format!("-{}", self.expr_text(a)),
            },
            ExprKind::Binary(op, a, b) => {
                // Operands that bind less tightly are parenthesized (the right one also at
                // the same level: every level associates to the left).
                let operand = |e: &crate::hir::Expr, right: bool| match &e.kind {
                    ExprKind::Binary(inner, ..)
                        if inner.precedence() < op.precedence()
                            || (right && inner.precedence() == op.precedence()) =>
                    {
                        format!("({})", self.expr_text(e))
                    }
                    _ => self.expr_text(e),
                };
                format!("{} {} {}", operand(a, false), op.as_str(), operand(b, true))
            }
            ExprKind::Index { base, indices } => {
                let ix: Vec<String> = indices.iter().map(|i| self.expr_text(i)).collect();
                format!("{}[{}]", self.expr_text(base), ix.join(", "))
            }
            ExprKind::Call(f, _) => format!("{}(…)", self.fn_name(*f)),
            ExprKind::Builtin(b, _) => format!("{}(…)", b.name()),
            _ => "…".into(),
        }
    }

    /// Whether `f` was defined by this compile (its spans point into this source).
    fn is_new_fn(&self, f: FnId) -> bool {
        f.0 >= self.program.first_new_fn
    }
}
