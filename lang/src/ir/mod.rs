//! The IR: what the front end hands to both back ends (Cranelift for the host, PTX for GPUs).
//!
//! `lower` produces it from the checked `hir` and the `analysis`. It is structured (blocks,
//! `if`, counted loops) with typed expression trees, because both targets want structure:
//! Cranelift builds its blocks from it directly and the PTX emitter maps loops to its schedule.
//! It differs from `hir` in what a back end should not have to decide:
//! - Each function has its own numbered locals; globals are storage slots the engine owns.
//! - No expression contains a statement: `if` expressions and value blocks are flattened into
//!   temporaries, compound assignments evaluate their place once through temporaries.
//! - Every compute construct is outlined into a `Region` with an explicit parameter list, and the
//!   host code holds a `Launch` of it; data directives are explicit `DataOp`s.
//! - Every run-time check (bounds, integer division by zero, `assert`) names a `SiteId`, whose
//!   span and text the error message shows.
//! - Array reference counts are explicit: `Retain` and `Release` statements.
//! - Each `acc atomic` carries its form, classified once by lowering (`atomic::Form`): which
//!   location is accessed atomically and how, or that the statement is plain (a gang's own
//!   scalar).
//! - Strings exist only as `StringId`s in `print`, `assert` and `param` (and as the `i64`
//!   constant that is the last argument of `imshow`/`plot`: the path's `StringId`, or
//!   `builtins::NO_PATH`), formats as `FormatId`s.
//!
//! Nothing here names a Cranelift or PTX type: the IR is back-end neutral.
//!
//! Evaluation order: operands are evaluated left to right (a `Store` evaluates its array, then
//! its indices, then its value, and checks bounds before storing). Lowering has already spilled
//! into temporaries whatever would make another order observable, so a back end may rely on
//! this order without re-checking it.
//!
//! Every local is assigned before it is read, except `Pass::Private` region parameters
//! (uninitialized, as in OpenACC; a loop's `private` scalars are set to zero at the top of each
//! iteration instead). A block may end in `Break`, `Continue` or `Return`; lowering emits
//! nothing after them in the same block.
//!
//! Ownership, as lowering leaves it: `Call`, `Builtin`/`CheckedBuiltin` and `ArrayLit` of array
//! type produce an owned reference (count 1 for a new array); every other array expression
//! (`Local`, `Global`) is borrowed. `Eval` of an owned array expression releases the result;
//! nothing else is released implicitly. Parameters are borrowed. Inside region bodies the
//! `Retain`/`Release` statements are balanced and no array can be freed while a region runs
//! (the launch's arguments keep them alive), so a device back end may drop them, except that a
//! call of a user function returning an array hands over one reference.
//!
//! A call with no result (a `void` user function or built-in) has the placeholder type `bool`;
//! the callee's signature says that there is no value.
//!
//! `printf` formats: string arguments are folded into the format as text at compile time, so
//! every `Spec` takes one of the `Printf` values; a `Text` piece turned back into a C format
//! must have its `%` doubled.
//!
//! `verify` checks these rules on a module; lowering runs it in debug builds.
//!
//! `impl Display for Module` (module `print`) is the text `acc --emit ir` shows.

pub mod atomic;
pub mod bounds;
pub mod gang_loop;
pub mod gangs;
pub mod inline;
pub mod late;
mod print;
mod reduction;
pub mod uses;
pub mod verify;
pub mod visit;

use crate::analysis::{LoopInfo, RegionId};
use crate::builtins::{Builtin, FormatPiece};
use crate::hir::{Const, FnId, RoutineLevel, VarId};
use crate::span::Span;

pub use crate::ast::{
    AtomicKind, BinOp, Construct, DataClause, ReductionOp, ScalarType, UnOp, UpdateDir,
};
pub use atomic::Atomic;
pub use reduction::Reduction;
pub use verify::verify;

/// One compile's worth of code.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// The functions this compile defines (functions of earlier compiles are already compiled;
    /// calls reach them by `FnId`).
    pub functions: Vec<Function>,
    /// This compile's top-level statements, as a function of no parameters.
    pub main: Function,
    /// Outlined compute regions, indexed by `RegionId`.
    pub regions: Vec<Region>,
    /// Globals this compile declares (storage the engine allocates before running `main`).
    pub globals: Vec<Global>,
    /// Source locations of run-time checks: `sites[i]` is `SiteId(first_site + i)`. Site ids
    /// are numbered across an engine's compiles, so that an error in a function compiled earlier
    /// still names its own source.
    pub sites: Vec<Site>,
    pub first_site: u32,
    /// String literals, indexed by `StringId`.
    pub strings: Vec<String>,
    /// `printf` formats, indexed by `FormatId`.
    pub formats: Vec<Vec<FormatPiece>>,
}

/// A value type. Arrays are handles to runtime array objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    Scalar(ScalarType),
    Array { elem: ScalarType, rank: u8 },
}

impl Ty {
    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Ty::Scalar(s) => Some(s),
            Ty::Array { .. } => None,
        }
    }

    pub fn is_array(self) -> bool {
        matches!(self, Ty::Array { .. })
    }
}

/// Index into a function's or region's `locals`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocalId(pub u32);

/// A global's storage slot: the `hir` variable it was declared as.
pub type GlobalId = VarId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SiteId(pub u32);

/// A counted loop's number, unique within its function or region (lowering numbers the loops
/// in the order it builds them): what a back end decides about a loop is keyed by it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LoopId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StringId(pub u32);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FormatId(pub u32);

#[derive(Clone, Debug)]
pub struct Global {
    pub id: GlobalId,
    pub name: String,
    pub ty: Ty,
}

/// Where a run-time check sits, and what its error names.
#[derive(Clone, Debug)]
pub struct Site {
    pub span: Span,
    /// The array's name for bounds checks, the asserted text for `assert`.
    pub what: String,
}

#[derive(Clone, Debug)]
pub struct Local {
    /// The source name, or `$tN` for temporaries.
    pub name: String,
    pub ty: Ty,
}

#[derive(Clone, Debug, Default)]
pub struct Function {
    /// `None` for a compile's `main`.
    pub id: Option<FnId>,
    pub name: String,
    /// The first `params.len()` locals are the parameters, in order.
    pub params: Vec<LocalId>,
    pub ret: Option<Ty>,
    pub locals: Vec<Local>,
    pub body: Block,
    /// Also compiled for the device, at this level (explicit `acc routine`, or `seq` because
    /// device code calls it).
    pub device: Option<RoutineLevel>,
    pub span: Span,
    /// A user function's name, where a call that finds the stack exhausted reports it (the
    /// back end checks the stack on entry); `None` for `main`.
    pub entry_site: Option<SiteId>,
}

pub type Block = Vec<Stmt>;

// Statements are built once and walked by the back ends; boxing the large directive variants
// would only add noise to every match.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Stmt {
    /// `local = value`. For an array local the value's reference is moved in: lowering has
    /// already retained a borrowed value and released the local's old array.
    Set(LocalId, Expr),
    /// `global = value`, with the same ownership rule.
    SetGlobal(GlobalId, Expr),
    /// `array[indices] = value`, bounds-checked unless `site` is `None`.
    Store {
        array: Expr,
        indices: Vec<Expr>,
        value: Expr,
        site: Option<SiteId>,
    },
    /// An expression evaluated for its effect (a call); an owned array result is released.
    Eval(Expr),
    If {
        cond: Expr,
        then: Block,
        els: Block,
    },
    /// `site` is where an interrupt or a time limit stops the loop (its `while`): every loop
    /// checks for one at its back edge.
    While {
        cond: Expr,
        body: Block,
        site: SiteId,
    },
    /// A counted loop: `start`, `end` and `step` are evaluated once, before the first iteration
    /// (a negative step counts down). `var` is private to the loop. A step that is not a
    /// nonzero constant carries `step_site`: a step of 0 at run time is an error there.
    For(ForLoop),
    Break,
    Continue,
    Return(Option<Expr>),
    /// Reference counting of array handles: +1, and -1 (freeing the array at zero).
    Retain(Expr),
    Release(Expr),
    /// `print(values…)`: one space between values, then a newline. Like every call into the
    /// library, it names the site that a failure in it (an output error, an internal one)
    /// reports.
    Print(Vec<PrintArg>, SiteId),
    /// `printf(format, values…)`, with the site of its failures.
    Printf(FormatId, Vec<Expr>, SiteId),
    /// `assert(cond[, message])`: a run-time error at `site` when `cond` is false.
    Assert {
        cond: Expr,
        message: Option<StringId>,
        site: SiteId,
    },
    /// Run a compute region (LANGUAGE.md 7.1).
    Launch(Launch),
    /// Data movement and presence (`acc data` entry/exit, `enter data`, `exit data`, `update`,
    /// and the data clauses of a compute construct, which `Launch` carries itself).
    Data(DataDirective),
    /// A structured data region: `enter` ops, the body, then `exit` ops.
    DataRegion {
        enter: DataDirective,
        body: Block,
        exit: DataDirective,
    },
    /// `acc wait[(queues)] [async(q)]`.
    Wait {
        queues: Vec<Expr>,
        async_queue: Option<Queue>,
        site: SiteId,
    },
    /// `acc atomic`: the statement, one of the forms of LANGUAGE.md 7.8 already lowered (a
    /// capture is a `Block` of its two statements), each location evaluated once, with the
    /// form lowering classified it as; both back ends act on that form.
    Atomic(Atomic),
    /// Statements run in order: only the capture block of an `Atomic` (`{ v = x; x += e }`).
    Block(Block),
}

#[derive(Clone, Debug)]
pub enum PrintArg {
    Value(Expr),
    Str(StringId),
}

#[derive(Clone, Debug)]
pub struct ForLoop {
    /// The loop's number in its function or region (not shown by `acc --emit ir`).
    pub id: LoopId,
    pub var: LocalId,
    pub start: Expr,
    pub end: Expr,
    pub step: Expr,
    /// Where a step of 0 is reported (`RunErrorKind::ZeroStep`): the step expression. `None`
    /// when the step is a nonzero constant (the checker rejects a literal 0), so that a back
    /// end checks exactly the loops that carry a site, before the first iteration.
    pub step_site: Option<SiteId>,
    pub inclusive: bool,
    pub body: Block,
    /// How the iterations are shared out, inside compute regions and device routines.
    pub schedule: LoopSchedule,
    /// Where an interrupt or a time limit stops the loop (its `for`).
    pub site: SiteId,
}

/// A loop's schedule as the back ends need it (from `analysis::LoopInfo`).
#[derive(Clone, Debug, Default)]
pub struct LoopSchedule {
    pub gang: bool,
    pub worker: bool,
    pub vector: bool,
    /// This loop heads a `collapse(n)` nest of `n` loops (1 otherwise): the next `n - 1` loops
    /// are its body's only statements.
    pub collapse: u32,
    /// Per-iteration reductions of this loop, each of the local the body accumulates into (the
    /// same local as outside the loop: a parallel back end gives each thread a copy starting at
    /// the identity and combines the copies into it after the loop; a sequential one can
    /// ignore the list).
    pub reductions: Vec<Reduction>,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Ty,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Const(Const),
    Local(LocalId),
    Global(GlobalId),
    Unary(UnOp, Box<Expr>),
    /// Operands of one type as in `hir` (shifts: the left's). `&&`/`||` short-circuit. Integer
    /// `/` and `%` carry the site that reports a division by zero.
    Binary(BinOp, Box<Expr>, Box<Expr>, Option<SiteId>),
    /// Numeric conversion to `Expr::ty` (float to integer truncates toward zero and saturates;
    /// bool to integer is 0 or 1).
    Convert(Box<Expr>),
    /// `array[indices]`, bounds-checked unless `site` is `None`.
    Load {
        array: Box<Expr>,
        indices: Vec<Expr>,
        site: Option<SiteId>,
    },
    /// A user function; an array result is owned by the caller.
    Call(FnId, Vec<Expr>),
    /// A built-in (arguments as `builtins` documents them after checking); an array result is
    /// owned by the caller.
    Builtin(Builtin, Vec<Expr>),
    /// A built-in that calls into the library, with the site its errors name: every one but
    /// the math functions and `len`/`rank` (`lower::expr::calls_library`). A failure can be
    /// the built-in's own (`size` of a missing dimension, `acc_copyout` of absent data) or an
    /// internal error in the library. Otherwise exactly `Builtin`.
    CheckedBuiltin(Builtin, Vec<Expr>, SiteId),
    /// `param("name", default)`; a `--set` value that is not of the type is an error at `site`.
    Param(StringId, Box<Expr>, SiteId),
    /// An array section, only as an argument of the `acc_*` data routines.
    Section {
        array: Box<Expr>,
        ranges: Vec<SectionRange>,
    },
    /// A new rank-1 array from its elements (owned), with the site of its failures.
    ArrayLit(Vec<Expr>, SiteId),
}

/// `start:count`; `None` start is 0, `None` count runs to the end of the dimension.
#[derive(Clone, Debug)]
pub struct SectionRange {
    pub start: Option<Expr>,
    pub count: Option<Expr>,
}

// ---- compute regions ----------------------------------------------------------------------------

/// An outlined compute construct: a function of its captured variables that the device runs
/// with its gangs, workers and vector lanes.
#[derive(Clone, Debug)]
pub struct Region {
    pub id: RegionId,
    pub construct: Construct,
    /// The directive line.
    pub span: Span,
    /// What the region receives, in order; `params[i]` is bound to `locals[i]`.
    pub params: Vec<RegionParam>,
    pub locals: Vec<Local>,
    /// Runs once per gang (gang-redundant), with gang loops sharing out their iterations.
    pub body: Block,
    /// Reductions whose result reaches the host: each of the private local each gang
    /// accumulates into, combined with a parameter's value.
    pub reductions: Vec<RegionReduction>,
    /// The loops' analysis, for `--info` and the back ends' schedule choices.
    pub loops: Vec<LoopInfo>,
    /// Array parameters that must be different storage: a loop the dependence test
    /// parallelized took them to be (LANGUAGE.md 7.6). The runtime checks them at every launch,
    /// since a later compile or the embedding program may bind both names to one array.
    pub distinct: Vec<DistinctParams>,
    /// `devices(…)` (LANGUAGE.md 7.11): how a launch is cut over devices. When it can be cut
    /// (`split: Ok`), the region has two hidden `i64` parameters bounding the block of the
    /// split loop's iterations it runs (`LoopSplit::lo_param`/`hi_param`), and lowering has
    /// rewritten that loop (`lower::split`) to run only them.
    pub split: Option<SplitPlan>,
}

/// Defined in `acc-abi`, which the runtime shares.
pub use acc_abi::split::SplitPlan;

/// Two array parameters of a region that a parallelized loop needs to be different storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistinctParams {
    /// The written array's parameter.
    pub written: usize,
    /// The other array's parameter.
    pub other: usize,
    /// The loop (its `for`), where the error is reported.
    pub site: SiteId,
}

impl Region {
    /// Whether local `i` is a *cell*: a `copy` scalar parameter (`Pass::InOut`, not a
    /// reduction's) that every gang and thread of a launch shares through one memory cell, so
    /// that atomics on it are atomic across them. Every other scalar local is private to a
    /// gang (or a thread).
    pub fn is_cell(&self, i: usize) -> bool {
        is_cell_param(&self.params, &self.reductions, i)
    }
}

/// `Region::is_cell` of a region with these parameters and reductions (lowering asks while it
/// builds the region's body, to classify its atomics).
pub fn is_cell_param(params: &[RegionParam], reductions: &[RegionReduction], i: usize) -> bool {
    params.get(i).is_some_and(|p| p.pass == Pass::InOut)
        && !reductions.iter().any(|red| red.param == i)
}

#[derive(Clone, Debug)]
pub struct RegionParam {
    /// The host variable.
    pub var: VarId,
    pub name: String,
    pub ty: Ty,
    pub pass: Pass,
    /// The region (or a function it calls) assigns it, or an element of it
    /// (`analysis::VarUse::written`): what `--autocompare` compares after the region.
    pub written: bool,
}

/// How a captured variable reaches the region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// A copy of the host value; writes stay in the region (firstprivate scalars).
    Value,
    /// The value goes in and the region's final value comes back to the host variable (scalars
    /// under `copy`, `copyout`, reductions).
    InOut,
    /// Uninitialized, per gang (`private`).
    Private,
    /// An array handle; the region reads and writes the device copy of its data.
    Array,
    /// An array private to each gang (`private(a)` on the construct, or on a loop of the
    /// region): the argument is the host array; each gang gets its own array of that shape
    /// (contents unspecified), which the back end makes when the gang starts and frees when it
    /// ends. (Per gang, not per iteration: iterations of one gang that run concurrently share
    /// it.)
    PrivateArray,
    /// `firstprivate(a)` of an array: as `PrivateArray`, each gang's array starting as a copy
    /// of the host array.
    FirstPrivateArray,
}

#[derive(Clone, Debug)]
pub struct RegionReduction {
    /// Of the gang-private accumulator, which the region's body starts by setting to the
    /// identity.
    pub reduction: Reduction,
    /// The `InOut` parameter combined with the partial results.
    pub param: usize,
}

/// Run a region: evaluate its clauses, move data, launch, move data back.
#[derive(Clone, Debug)]
pub struct Launch {
    pub region: RegionId,
    /// One per `Region::params`, in order: the host value or array handle.
    pub args: Vec<Expr>,
    /// Where `InOut` parameters' final values go: `(param index, host variable)`.
    pub results: Vec<(usize, Place)>,
    /// How many of the statements after this one (of its block) may run before the results
    /// are stored: compute constructs that neither read nor write them (`late`), which the
    /// host may start while the device computes this one's results. 0: at once.
    pub results_after: u32,
    /// `if(cond)`: false runs the region on the host, with no data movement.
    pub if_cond: Option<Expr>,
    /// Launch sizes per device type (already evaluated to `i64` expressions).
    pub num_gangs: DeviceExprs,
    pub num_workers: DeviceExprs,
    pub vector_length: DeviceExprs,
    pub async_queue: Option<Queue>,
    pub wait: Option<Vec<Expr>>,
    /// The data clauses and implicit data attributes of the construct.
    pub data: Vec<DataOp>,
    pub site: SiteId,
}

/// Where a host value is stored back.
#[derive(Clone, Debug)]
pub enum Place {
    Local(LocalId),
    Global(GlobalId),
}

/// An `i64` expression per device type (`device_type` scoping resolved).
#[derive(Clone, Debug, Default)]
pub struct DeviceExprs {
    pub nvidia: Option<Expr>,
    pub host: Option<Expr>,
    pub multicore: Option<Expr>,
}

#[derive(Clone, Debug)]
pub enum Queue {
    /// `async` without an argument: the default asynchronous queue.
    Default,
    Numbered(Expr),
}

/// A data directive, or the data half of a construct.
#[derive(Clone, Debug)]
pub struct DataDirective {
    /// Which reference count the ops change, and in which direction.
    pub phase: DataPhase,
    pub ops: Vec<DataOp>,
    pub if_cond: Option<Expr>,
    pub async_queue: Option<Queue>,
    pub wait: Option<Vec<Expr>>,
    /// `exit data … finalize`, `update … if_present`.
    pub modifiers: DataModifiers,
    pub site: SiteId,
}

/// Defined in `acc-abi`, which the runtime shares.
pub use acc_abi::{DataModifiers, DataPhase};

/// One variable of a data clause.
#[derive(Clone, Debug)]
pub struct DataOp {
    pub action: DataAction,
    /// The array (a scalar in a data clause is passed as a region parameter instead).
    pub array: Expr,
    pub name: String,
    pub ranges: Option<Vec<SectionRange>>,
    /// The clause's variable, for error messages.
    pub span: Span,
    /// The site a run-time error of this op names (at `span`, naming the variable).
    pub site: SiteId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataAction {
    /// A data clause (on entry and exit of a region or `data` construct, or `enter`/`exit`).
    Clause(DataClause),
    /// `update host|self|device`.
    Update(UpdateDir),
}
