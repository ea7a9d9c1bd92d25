//! The syntax tree the parser produces. Every node carries the span of its source text.
//!
//! The tree is untyped and unresolved: names are plain strings, literals keep their text.
//! `check` turns it into the typed tree of `hir`, which is what later passes consume.

use crate::span::Span;
use crate::token::{FloatSuffix, IntSuffix};

/// A name as written, with where it was written.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// A parsed script: its top-level statements in order (function definitions included).
#[derive(Clone, Debug, Default)]
pub struct Program {
    pub stmts: Vec<Stmt>,
}

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
    /// `let name[: ty] = init`
    Let {
        name: Ident,
        ty: Option<TypeExpr>,
        init: Expr,
    },
    /// `target = value`, or `target op= value` when `op` is set. `target` is a name or an index.
    Assign {
        target: Expr,
        op: Option<BinOp>,
        value: Expr,
    },
    /// An expression evaluated for its effect (a call) or, at the REPL's top level, its value.
    Expr(Expr),
    /// `if cond { … } [else if … | else { … }]`; `els` is a `Block` or another `If` statement.
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
    Return(Option<Expr>),
    Block(Block),
    Fn(FnDef),
    Directive(Directive),
    /// A statement that failed to parse; its diagnostic has been reported.
    Error,
}

/// `for var in start..end [step s] { body }`, or `..=` when `inclusive`.
#[derive(Clone, Debug)]
pub struct ForLoop {
    pub var: Ident,
    pub start: Expr,
    pub end: Expr,
    pub inclusive: bool,
    pub step: Option<Expr>,
    pub body: Block,
}

#[derive(Clone, Debug)]
pub struct FnDef {
    pub name: Ident,
    pub params: Vec<Param>,
    pub ret: Option<TypeExpr>,
    pub body: Block,
    /// The span of `fn name(params) -> ret`, for messages about the function as a whole.
    pub sig_span: Span,
}

#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub ty: TypeExpr,
}

/// Element and scalar types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScalarType {
    Bool,
    I32,
    I64,
    F32,
    F64,
}

impl ScalarType {
    pub const ALL: [ScalarType; 5] = [
        ScalarType::Bool,
        ScalarType::I32,
        ScalarType::I64,
        ScalarType::F32,
        ScalarType::F64,
    ];

    /// The element type code of arrays of it (`ArrayHeader::elem`), and of its values where
    /// compiled code passes a type.
    pub fn elem_type(self) -> acc_abi::ElemType {
        match self {
            ScalarType::Bool => acc_abi::ElemType::Bool,
            ScalarType::I32 => acc_abi::ElemType::I32,
            ScalarType::I64 => acc_abi::ElemType::I64,
            ScalarType::F32 => acc_abi::ElemType::F32,
            ScalarType::F64 => acc_abi::ElemType::F64,
        }
    }

    pub fn from_name(s: &str) -> Option<ScalarType> {
        Some(match s {
            "bool" => ScalarType::Bool,
            "i32" => ScalarType::I32,
            "i64" => ScalarType::I64,
            "f32" => ScalarType::F32,
            "f64" => ScalarType::F64,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I32 => "i32",
            ScalarType::I64 => "i64",
            ScalarType::F32 => "f32",
            ScalarType::F64 => "f64",
        }
    }

    pub fn is_int(self) -> bool {
        matches!(self, ScalarType::I32 | ScalarType::I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    pub fn is_numeric(self) -> bool {
        self != ScalarType::Bool
    }
}

/// A type as written: `f64`, `i32[,]` (rank = commas + 1).
#[derive(Clone, Debug, PartialEq)]
pub struct TypeExpr {
    pub elem: ScalarType,
    /// 0 for a scalar, 1..=6 for an array.
    pub rank: u8,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ExprKind {
    Int(u64, Option<IntSuffix>),
    /// Float literal text (no underscores, no suffix), so each type rounds it once from decimal.
    Float(String, Option<FloatSuffix>),
    Bool(bool),
    /// String literal with escapes already decoded.
    Str(String),
    Name(Ident),
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Cast(Box<Expr>, TypeExpr),
    Call(Ident, Vec<Expr>),
    /// `base[i, j]`; an argument may be a `Section` (only meaningful in `acc_is_present(a[0:n])`
    /// and the other runtime routines that take sections; the checker rejects it elsewhere).
    Index(Box<Expr>, Vec<Expr>),
    /// `start:count` inside brackets, either side optional.
    Section(Option<Box<Expr>>, Option<Box<Expr>>),
    ArrayLit(Vec<Expr>),
    /// `if cond { e } else { e }` as an expression; `els` is a `Block` or another `If` expression.
    If(Box<Expr>, Box<Expr>, Box<Expr>),
    /// A block used as the value of an `if` expression: statements then a final expression.
    Block(Vec<Stmt>, Box<Expr>),
    /// An expression that failed to parse; its diagnostic has been reported.
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    Neg,
    Not,
    BitNot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinOp {
    pub fn as_str(self) -> &'static str {
        use BinOp::*;
        match self {
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Rem => "%",
            BitAnd => "&",
            BitOr => "|",
            BitXor => "^",
            Shl => "<<",
            Shr => ">>",
            And => "&&",
            Or => "||",
            Eq => "==",
            Ne => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
        }
    }

    pub fn is_comparison(self) -> bool {
        use BinOp::*;
        matches!(self, Eq | Ne | Lt | Le | Gt | Ge)
    }

    /// How tightly the operator binds (LANGUAGE.md §4): higher binds tighter; every level is
    /// left-associative, and prefix operators (`-`, `!`, `~`) bind tighter than any.
    pub fn precedence(self) -> u8 {
        use BinOp::*;
        match self {
            Mul | Div | Rem => 9,
            Add | Sub => 8,
            Shl | Shr => 7,
            BitAnd => 6,
            BitXor => 5,
            BitOr => 4,
            Eq | Ne | Lt | Le | Gt | Ge => 3,
            And => 2,
            Or => 1,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Directives (LANGUAGE.md section 7)
// ---------------------------------------------------------------------------------------------

/// `acc <construct> <clauses>` and the statement it applies to, if the construct takes one.
#[derive(Clone, Debug)]
pub struct Directive {
    pub construct: Construct,
    /// The construct's words (`parallel loop`, `enter data`, …).
    pub construct_span: Span,
    /// Clauses in source order; `device_type` clauses stay in the list as scope markers
    /// (see `Directive::clauses_for`).
    pub clauses: Vec<Clause>,
    /// The statement the directive applies to: a block, a `for`, an `fn` (for `routine`), one
    /// atomic statement or capture block. `None` for standalone directives.
    pub body: Option<Box<Stmt>>,
    /// The directive line itself (from `acc` to its last clause).
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Construct {
    Parallel,
    ParallelLoop,
    Kernels,
    KernelsLoop,
    Serial,
    SerialLoop,
    Loop,
    Data,
    EnterData,
    ExitData,
    Update,
    Wait,
    Atomic(AtomicKind),
    Routine,
    Declare,
    Set,
}

impl Construct {
    /// Every construct, in the order of LANGUAGE.md section 7 (each `atomic` kind once).
    pub const ALL: [Construct; 19] = [
        Construct::Parallel,
        Construct::ParallelLoop,
        Construct::Kernels,
        Construct::KernelsLoop,
        Construct::Serial,
        Construct::SerialLoop,
        Construct::Loop,
        Construct::Data,
        Construct::EnterData,
        Construct::ExitData,
        Construct::Update,
        Construct::Wait,
        Construct::Atomic(AtomicKind::Update),
        Construct::Atomic(AtomicKind::Read),
        Construct::Atomic(AtomicKind::Write),
        Construct::Atomic(AtomicKind::Capture),
        Construct::Routine,
        Construct::Declare,
        Construct::Set,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Construct::Parallel => "parallel",
            Construct::ParallelLoop => "parallel loop",
            Construct::Kernels => "kernels",
            Construct::KernelsLoop => "kernels loop",
            Construct::Serial => "serial",
            Construct::SerialLoop => "serial loop",
            Construct::Loop => "loop",
            Construct::Data => "data",
            Construct::EnterData => "enter data",
            Construct::ExitData => "exit data",
            Construct::Update => "update",
            Construct::Wait => "wait",
            Construct::Atomic(AtomicKind::Update) => "atomic update",
            Construct::Atomic(AtomicKind::Read) => "atomic read",
            Construct::Atomic(AtomicKind::Write) => "atomic write",
            Construct::Atomic(AtomicKind::Capture) => "atomic capture",
            Construct::Routine => "routine",
            Construct::Declare => "declare",
            Construct::Set => "set",
        }
    }

    /// A compute construct (launches device code), combined forms included.
    pub fn is_compute(self) -> bool {
        matches!(
            self,
            Construct::Parallel
                | Construct::ParallelLoop
                | Construct::Kernels
                | Construct::KernelsLoop
                | Construct::Serial
                | Construct::SerialLoop
        )
    }

    /// Constructs whose body must be a counted `for` loop.
    pub fn is_loop(self) -> bool {
        matches!(
            self,
            Construct::ParallelLoop
                | Construct::KernelsLoop
                | Construct::SerialLoop
                | Construct::Loop
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicKind {
    Update,
    Read,
    Write,
    Capture,
}

/// A clause of a parsed directive (`clause`, defined once for `ast` and `hir`).
pub type Clause = crate::clause::Clause<Expr, DataRef>;
pub type ClauseKind = crate::clause::ClauseKind<Expr, DataRef>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataClause {
    Copy,
    CopyIn,
    CopyOut,
    Create,
    NoCreate,
    Present,
    Delete,
}

impl DataClause {
    pub fn name(self) -> &'static str {
        crate::clause::ClauseKey::Data(self).name()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UpdateDir {
    /// `host(…)`: device → host.
    Host,
    /// `self(…)`: device → host (same as `host`).
    Self_,
    /// `device(…)`: host → device.
    Device,
}

impl UpdateDir {
    /// The clause's name.
    pub fn name(self) -> &'static str {
        match self {
            UpdateDir::Host => "host",
            UpdateDir::Self_ => "self",
            UpdateDir::Device => "device",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DefaultKind {
    None,
    Present,
}

pub use crate::clause::ReductionOp;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DeviceTypeName {
    Nvidia,
    Host,
    Multicore,
    /// `*`: every device type.
    Any,
}

/// A variable or array section in a clause: `a`, `a[1:n-2, 0:m]`.
#[derive(Clone, Debug)]
pub struct DataRef {
    pub name: Ident,
    /// One `start:count` pair per dimension, when a section is given.
    pub sections: Option<Vec<SectionRange>>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct SectionRange {
    /// Missing means 0.
    pub start: Option<Expr>,
    /// Missing means "to the end of the dimension".
    pub count: Option<Expr>,
    pub span: Span,
}

impl Directive {
    /// The clauses that apply on a device of type `dev`: those before the first `device_type`
    /// clause, plus those after a `device_type` naming `dev` (or `*`), up to the next one.
    pub fn clauses_for(&self, dev: DeviceTypeName) -> impl Iterator<Item = &Clause> {
        clauses_for_device(&self.clauses, dev, |c| match &c.kind {
            ClauseKind::DeviceType(list) => Some(list),
            _ => None,
        })
    }
}

/// `device_type` scoping, for the AST's and hir's clause lists: the clauses (not markers) that
/// apply on `dev`. `marker` gives the device types of a `device_type` clause.
pub fn clauses_for_device<'a, C>(
    clauses: &'a [C],
    dev: DeviceTypeName,
    marker: impl Fn(&C) -> Option<&Vec<DeviceTypeName>> + 'a,
) -> impl Iterator<Item = &'a C> + 'a {
    let mut active = true;
    clauses.iter().filter(move |c| match marker(c) {
        Some(list) => {
            active = list.contains(&dev) || list.contains(&DeviceTypeName::Any);
            false
        }
        None => active,
    })
}
