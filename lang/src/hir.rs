//! The typed, resolved program that `check` produces and every later pass consumes (directive
//! analysis, the Cranelift and PTX back ends). Nothing here needs the source text again.
//!
//! What the checker guarantees about a `Program` it returns without errors:
//! - Every name is resolved: variables to `VarId`s (table `Program::vars`), calls to a user
//!   function (`FnId`, table `Program::functions`) or a `Builtin`.
//! - Every expression has a concrete `ty` (never `Type::Error`) and a span.
//! - Literals are typed constants (`Const`): an untyped literal has already taken the type its
//!   context needs, and a float literal used as `f32` was rounded once from its decimal text.
//!   A negated literal (`-1`, `-2.5`) is folded into one constant.
//! - Every implicit conversion is an explicit `Convert` node: the operands of a `Binary` have the
//!   same type (for shifts: the left operand's type; for `&& ||`: bool); call arguments have their
//!   parameter's type; assigned values have the target's type; returned values the return type.
//!   An `as` cast is a `Convert` with `explicit: true` (or disappears when it converts a value to
//!   its own type).
//! - Statements reference only variables visible at that point; array element types and ranks
//!   match wherever an array is passed or assigned.
//!
//! Ids are global to one `check::Checker`: a later compile (REPL line, `Engine::run`) sees the
//! variables and functions of earlier committed compiles with the same ids, and its own get
//! higher ones. `Program::vars` and `Program::functions` hold everything known (earlier compiles
//! included) so that a back end compiling a compute region can reach the body of any function it
//! calls; `Program::first_new_var` / `first_new_fn` say which entries this compile added.

use std::fmt;
use std::sync::Arc;

use crate::builtins::Builtin;
use crate::span::Span;

pub use crate::ast::{
    AtomicKind, BinOp, Construct, DataClause, DefaultKind, DeviceTypeName, ReductionOp, ScalarType,
    UnOp, UpdateDir,
};

// ---------------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Type {
    Scalar(ScalarType),
    /// An array of rank 1..=6; a reference to a runtime array object.
    Array {
        elem: ScalarType,
        rank: u8,
    },
    /// The "value" of a call to a function with no return type.
    Void,
    /// A string literal; exists only as an argument of `print`, `printf` and `assert`.
    Str,
    /// Poison: the type of an expression that already had an error. Never in a program that
    /// checked without errors.
    Error,
}

impl Type {
    pub const BOOL: Type = Type::Scalar(ScalarType::Bool);
    pub const I32: Type = Type::Scalar(ScalarType::I32);
    pub const I64: Type = Type::Scalar(ScalarType::I64);
    pub const F32: Type = Type::Scalar(ScalarType::F32);
    pub const F64: Type = Type::Scalar(ScalarType::F64);

    /// `elem` for rank 0, an array type otherwise.
    pub fn from_parts(elem: ScalarType, rank: u8) -> Type {
        if rank == 0 {
            Type::Scalar(elem)
        } else {
            Type::Array { elem, rank }
        }
    }

    pub fn is_array(self) -> bool {
        matches!(self, Type::Array { .. })
    }

    pub fn is_scalar(self) -> bool {
        matches!(self, Type::Scalar(_))
    }

    pub fn is_error(self) -> bool {
        self == Type::Error
    }

    /// The scalar type of a scalar, or the element type of an array.
    pub fn elem(self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) | Type::Array { elem: s, .. } => Some(s),
            _ => None,
        }
    }

    /// The scalar type, if this is a scalar.
    pub fn scalar(self) -> Option<ScalarType> {
        match self {
            Type::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// 0 for scalars, the rank for arrays.
    pub fn rank(self) -> u8 {
        match self {
            Type::Array { rank, .. } => rank,
            _ => 0,
        }
    }

    pub fn is_int(self) -> bool {
        self.scalar().is_some_and(ScalarType::is_int)
    }

    pub fn is_float(self) -> bool {
        self.scalar().is_some_and(ScalarType::is_float)
    }

    pub fn is_numeric(self) -> bool {
        self.scalar().is_some_and(ScalarType::is_numeric)
    }
}

impl From<ScalarType> for Type {
    fn from(s: ScalarType) -> Type {
        Type::Scalar(s)
    }
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Scalar(s) => f.write_str(s.name()),
            Type::Array { elem, rank } => {
                write!(f, "{}[", elem.name())?;
                for _ in 1..*rank {
                    f.write_str(",")?;
                }
                f.write_str("]")
            }
            Type::Void => f.write_str("void"),
            Type::Str => f.write_str("string"),
            Type::Error => f.write_str("{error}"),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Variables and functions
// ---------------------------------------------------------------------------------------------

/// Index into `Program::vars`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(pub u32);

/// Index into `Program::functions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FnId(pub u32);

impl VarId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl FnId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VarKind {
    /// A `let` at the top level of a script (not inside a block): lives as long as the
    /// environment, visible to later compiles and to functions defined below it.
    Global,
    /// A `let` inside a block (of a function, or of top-level code).
    Local,
    Param,
    /// The variable of a `for` loop (read-only inside the loop).
    LoopVar,
}

#[derive(Clone, Debug)]
pub struct VarInfo {
    pub name: String,
    pub ty: Type,
    pub kind: VarKind,
    /// The name at its declaration.
    pub span: Span,
    /// The function whose body declares it; `None` for globals and top-level code's locals.
    pub owner: Option<FnId>,
}

/// The level of an `acc routine` function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RoutineLevel {
    Gang,
    Worker,
    Vector,
    Seq,
}

impl RoutineLevel {
    pub fn name(self) -> &'static str {
        match self {
            RoutineLevel::Gang => "gang",
            RoutineLevel::Worker => "worker",
            RoutineLevel::Vector => "vector",
            RoutineLevel::Seq => "seq",
        }
    }
}

/// An `acc routine` directive written before a function.
#[derive(Clone, Debug)]
pub struct Routine {
    /// `seq` when the directive names no level.
    pub level: RoutineLevel,
    /// All its clauses, as written (the level clause included).
    pub clauses: Vec<Clause>,
    /// The directive line.
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Function {
    pub id: FnId,
    pub name: String,
    pub name_span: Span,
    pub params: Vec<VarId>,
    /// `Type::Void` when no `-> T` is written.
    pub ret: Type,
    pub body: Block,
    /// `fn name(params) -> ret`.
    pub sig_span: Span,
    /// The whole definition.
    pub span: Span,
    /// Set when an `acc routine` directive precedes the definition. (A function called from device
    /// code without one is an implicit `seq` routine: that is for the analysis to decide.)
    pub routine: Option<Routine>,
}

// ---------------------------------------------------------------------------------------------
// The program
// ---------------------------------------------------------------------------------------------

/// Every variable known to the checker, indexed by `VarId`: those of earlier compiles, shared
/// with the checker (a compile copies only the variables it declares, so a long REPL session's
/// compiles do not each copy the whole table), then this compile's.
#[derive(Clone, Debug, Default)]
pub struct Vars {
    earlier: Arc<Vec<VarInfo>>,
    new: Vec<VarInfo>,
}

impl Vars {
    pub fn len(&self) -> usize {
        self.earlier.len() + self.new.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, index: usize) -> Option<&VarInfo> {
        match index.checked_sub(self.earlier.len()) {
            None => self.earlier.get(index),
            Some(i) => self.new.get(i),
        }
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &VarInfo> {
        self.earlier.iter().chain(&self.new)
    }

    /// Declares a variable: its id is the next one.
    pub fn push(&mut self, info: VarInfo) -> VarId {
        let id = VarId(self.len() as u32);
        self.new.push(info);
        id
    }

    /// Forgets the variables declared since the last `settle`.
    pub fn forget_new(&mut self) {
        self.new.clear();
    }

    /// Makes the variables declared so far earlier ones. Copies the shared table only while an
    /// older `Program` still holds it (the checker settles when the next check starts, when the
    /// engine has dropped the last one).
    pub fn settle(&mut self) {
        // Top-level code's own locals (in its loops and blocks), declared last, can never be
        // named again: their ids are given out anew, so that a session's loops at the top
        // level do not grow the table by every run.
        while self.new.last().is_some_and(|v| {
            v.owner.is_none() && matches!(v.kind, VarKind::Local | VarKind::LoopVar)
        }) {
            self.new.pop();
        }
        if !self.new.is_empty() {
            Arc::make_mut(&mut self.earlier).append(&mut self.new);
        }
    }
}

impl std::ops::Index<usize> for Vars {
    type Output = VarInfo;

    fn index(&self, index: usize) -> &VarInfo {
        self.get(index).expect("a variable id of this checker")
    }
}

#[derive(Clone, Debug, Default)]
pub struct Program {
    /// Every variable known to the checker, indexed by `VarId` (earlier compiles included).
    pub vars: Vars,
    /// Every function known to the checker, indexed by `FnId` (earlier compiles included;
    /// a function redefined by a later compile keeps its old entry, later calls use the new one).
    pub functions: Vec<Arc<Function>>,
    /// `vars[first_new_var..]` were declared by this compile.
    pub first_new_var: u32,
    /// `functions[first_new_fn..]` were defined by this compile.
    pub first_new_fn: u32,
    /// The top-level statements of this compile, in order. Function definitions (and the
    /// `acc routine` directives before them) are not here: they are in `functions`.
    pub top: Vec<Stmt>,
    /// The names of the embedding program's functions (`Builtin::HostCall`), by number.
    pub host_functions: Vec<String>,
    /// Where this compile names a device type (`acc_device_host`, …), whose constant is an
    /// `i32`: the REPL shows such a value by its name.
    pub device_type_names: Vec<Span>,
}

impl Program {
    pub fn var(&self, id: VarId) -> &VarInfo {
        &self.vars[id.index()]
    }

    pub fn function(&self, id: FnId) -> &Function {
        &self.functions[id.index()]
    }

    /// The functions this compile defined.
    pub fn new_functions(&self) -> impl Iterator<Item = &Function> {
        self.functions
            .iter()
            .skip(self.first_new_fn as usize)
            .map(|f| &**f)
    }

    /// The globals this compile declared, in declaration order.
    pub fn new_globals(&self) -> impl Iterator<Item = (VarId, &VarInfo)> {
        self.vars
            .iter()
            .enumerate()
            .skip(self.first_new_var as usize)
            .filter(|(_, v)| v.kind == VarKind::Global)
            .map(|(i, v)| (VarId(i as u32), v))
    }
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum StmtKind {
    /// `let x = init`; `init` has the variable's type (for a global: also a `VarKind::Global`).
    Let {
        var: VarId,
        init: Expr,
    },
    /// `place = value` (`op: None`; `value` has the place's type) or `place op= value`.
    Assign {
        place: Place,
        op: Option<CompoundOp>,
        value: Expr,
    },
    /// An expression evaluated for its effect; at the REPL's top level its value is printed
    /// (unless its type is `Void`).
    Expr(Expr),
    /// `els` is a `Block` or another `If` statement.
    If {
        cond: Expr,
        then: Block,
        els: Option<Box<Stmt>>,
    },
    While {
        cond: Expr,
        body: Block,
    },
    For(Box<ForLoop>),
    Break,
    Continue,
    /// The value has the function's return type.
    Return(Option<Expr>),
    Block(Block),
    Directive(Directive),
}

/// A compound assignment `place op= value`, meaning `place = place op value` with the place
/// evaluated once: load the place, convert it to `ty`, apply `op` with `value` (which already has
/// type `ty`), convert the result back to the place's type, store. `ty` is the usual arithmetic
/// conversion of the place's type and the value's (for `<<= >>=`: the place's type).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompoundOp {
    pub op: BinOp,
    pub ty: ScalarType,
}

/// Something that can be assigned to.
#[derive(Clone, Debug)]
pub struct Place {
    pub kind: PlaceKind,
    /// The type of the stored value (the variable's type, or the element type).
    pub ty: Type,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum PlaceKind {
    /// A whole variable (a scalar, or an array variable rebound to another array of its type).
    Var(VarId),
    /// An element: `base` is array-typed (almost always an `ExprKind::Var`), one index per
    /// dimension, each of any integer type.
    Index { base: Box<Expr>, indices: Vec<Expr> },
}

/// `for var in start..end [step s]` (or `..=` when `inclusive`). `start`, `end` and `step` have
/// the variable's type: `i32` when the bounds are `i32` (or one is and the other an untyped
/// literal), `i64` otherwise. A constant step is a `Const` (never zero); a negative step counts down.
#[derive(Clone, Debug)]
pub struct ForLoop {
    pub var: VarId,
    pub start: Expr,
    pub end: Expr,
    pub inclusive: bool,
    pub step: Option<Expr>,
    pub body: Block,
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

/// A typed constant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Const {
    Bool(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
}

impl Const {
    pub fn ty(self) -> ScalarType {
        match self {
            Const::Bool(_) => ScalarType::Bool,
            Const::I32(_) => ScalarType::I32,
            Const::I64(_) => ScalarType::I64,
            Const::F32(_) => ScalarType::F32,
            Const::F64(_) => ScalarType::F64,
        }
    }

    /// The value of an integer constant.
    pub fn as_i64(self) -> Option<i64> {
        match self {
            Const::I32(v) => Some(v.into()),
            Const::I64(v) => Some(v),
            _ => None,
        }
    }
}

impl fmt::Display for Const {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Const::Bool(b) => write!(f, "{b}"),
            Const::I32(v) => write!(f, "{v}i32"),
            Const::I64(v) => write!(f, "{v}i64"),
            Const::F32(v) => write!(f, "{v:?}f32"),
            Const::F64(v) => write!(f, "{v:?}f64"),
        }
    }
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Const(Const),
    /// A string literal (escapes decoded); only as an argument of `print`, `printf`, `assert`,
    /// `param`.
    Str(String),
    Var(VarId),
    /// `Neg` on a number, `Not` on bool, `BitNot` on an integer; the result has the operand's type.
    Unary(UnOp, Box<Expr>),
    /// Operands already converted: arithmetic, bitwise and comparisons have both operands of one
    /// type (`& | ^` also on bool); shifts have both converted to the left's (the result's) type;
    /// `&& ||` take bools. Comparisons and logic yield bool, the others the operand type.
    /// `%` on floats is C's `fmod`.
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Converts a scalar to `Expr::ty` (numeric <-> numeric; `explicit` bool -> integer). Float to
    /// integer truncates toward zero and saturates. `explicit` when written with `as`.
    Convert {
        expr: Box<Expr>,
        explicit: bool,
    },
    /// A call of a user function; arguments have the parameter types.
    Call(FnId, Vec<Expr>),
    /// A call of a built-in function. Type arguments (`zeros(f32, n)`) are not in `args`: the
    /// result type `Expr::ty` says them. See `builtins` for each one's arguments after checking.
    Builtin(Builtin, Vec<Expr>),
    /// `base[i, j]`: `base` is array-typed, one index per dimension, each of any integer type.
    Index {
        base: Box<Expr>,
        indices: Vec<Expr>,
    },
    /// `base[start:count, …]` as an argument of a runtime routine that takes sections
    /// (`acc_is_present`, `acc_copyin`, …); `ty` is the array's type. One range per dimension.
    Section {
        base: Box<Expr>,
        ranges: Vec<SectionRange>,
    },
    /// `[e0, e1, …]`: a new rank-1 array; the elements have its element type.
    ArrayLit(Vec<Expr>),
    /// `if c { a } else { b }` as an expression; both branches have the result type.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A block with statements and a final value.
    Block(Vec<Stmt>, Box<Expr>),
    /// An expression that had an error (only in programs that failed to check).
    Error,
}

impl Expr {
    /// The variable this expression names, if it is a plain variable reference.
    pub fn as_var(&self) -> Option<VarId> {
        match self.kind {
            ExprKind::Var(v) => Some(v),
            _ => None,
        }
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<Const> {
        match self.kind {
            ExprKind::Const(c) => Some(c),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Directives
// ---------------------------------------------------------------------------------------------

/// `acc <construct> <clauses>` and the statement it applies to. (`acc routine` is not here: it is
/// recorded on its function, `Function::routine`.)
#[derive(Clone, Debug)]
pub struct Directive {
    pub construct: Construct,
    pub construct_span: Span,
    /// In source order, `device_type` clauses kept as scope markers (see `clauses_for`).
    pub clauses: Vec<Clause>,
    /// The block, `for` loop or atomic statement the directive applies to.
    pub body: Option<Box<Stmt>>,
    /// The directive line.
    pub span: Span,
}

impl Directive {
    /// The clauses that apply on a device of type `dev`: those before the first `device_type`
    /// clause, plus those after a `device_type` naming `dev` (or `*`), up to the next one.
    pub fn clauses_for(&self, dev: DeviceTypeName) -> impl Iterator<Item = &Clause> {
        crate::ast::clauses_for_device(&self.clauses, dev, |c| match &c.kind {
            ClauseKind::DeviceType(list) => Some(list),
            _ => None,
        })
    }
}

/// A clause of a checked directive (`clause`, defined once for `ast` and `hir`): conditions
/// are `bool`; the integer arguments (queues, gang/worker/vector counts, `collapse`, tile sizes,
/// device numbers) are converted to `i64`.
pub type Clause = crate::clause::Clause<Expr, DataRef>;
pub type ClauseKind = crate::clause::ClauseKind<Expr, DataRef>;

/// A variable or array section named in a clause.
#[derive(Clone, Debug)]
pub struct DataRef {
    pub var: VarId,
    /// One range per dimension of the array (never on a scalar), when a section is written.
    pub sections: Option<Vec<SectionRange>>,
    pub span: Span,
}

/// `start:count` of one dimension; both `i64` when present.
#[derive(Clone, Debug)]
pub struct SectionRange {
    /// Missing means 0.
    pub start: Option<Expr>,
    /// Missing means "to the end of the dimension".
    pub count: Option<Expr>,
    pub span: Span,
}
