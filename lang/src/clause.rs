//! Directive clauses, defined once.
//!
//! `ClauseKind` is written once, generic over the expression and variable-reference types, and
//! serves both the parsed tree (`ast::ClauseKind`) and the checked one (`hir::ClauseKind`).
//! `CLAUSES`, one row per clause, drives everything else that knows about clauses:
//! - the parser: which words are clauses and how each one's arguments read (`Args`);
//! - the "did you mean" suggestion for a misspelled clause;
//! - the validator: on which constructs a clause may appear, which may follow `device_type`,
//!   which may repeat;
//! - the clause lists of help lines and of the REPL's completion (`clause_names`).
//!
//! Adding a clause is a variant of `ClauseKind` and of `ClauseKey` and a row of `CLAUSES`, all
//! in this file; the compiler then names each match that must handle it (`key`, `map`, `exprs`,
//! `vars`, here too). What remains is the code that acts on it (analysis or lowering).

use crate::ast::{self, Construct, DataClause, DefaultKind, DeviceTypeName, UpdateDir};
use crate::span::Span;

/// Defined in `acc-abi`, which every crate shares.
pub use acc_abi::ReductionOp;

/// A clause as written, with its arguments as `E` expressions and `R` variable references.
#[derive(Clone, Debug)]
pub struct Clause<E, R> {
    pub kind: ClauseKind<E, R>,
    /// The clause's name as written (`copyin`, `pcopy`, …).
    pub name_span: Span,
    /// The whole clause, arguments included.
    pub span: Span,
}

/// The clauses, with their arguments. In `hir`, conditions are `bool` and the integer arguments
/// (queues, gang/worker/vector counts, `collapse`, tile sizes, device numbers) are `i64`.
#[derive(Clone, Debug)]
pub enum ClauseKind<E, R> {
    If(E),
    /// `self[(cond)]` on a compute construct. (`self(list)` on `update` is `Update(Self_, …)`.)
    SelfCond(Option<E>),
    Async(Option<E>),
    /// `wait[(q, …)]` as a clause (and the argument list of the `wait` directive).
    Wait(Vec<E>),
    NumGangs(E),
    NumWorkers(E),
    VectorLength(E),
    Gang(Option<E>),
    Worker(Option<E>),
    Vector(Option<E>),
    Seq,
    Auto,
    Independent,
    Collapse(E),
    /// `tile(s0, s1, …)`; `None` is `*`.
    Tile(Vec<Option<E>>),
    Private(Vec<R>),
    FirstPrivate(Vec<R>),
    Reduction(ReductionOp, Vec<R>),
    Default(DefaultKind),
    /// `copy`, `copyin`, … and their `present_or_` / `p` spellings.
    Data(DataClause, Vec<R>),
    /// `update host(…)`, `update self(…)`, `update device(…)`.
    Update(UpdateDir, Vec<R>),
    DeviceType(Vec<DeviceTypeName>),
    Finalize,
    IfPresent,
    /// `set device_num(n)`.
    DeviceNum(E),
    /// `set default_async(q)`.
    DefaultAsync(E),
    /// `devices(all)` (`None`) or `devices(0, 1)`: acc's extension (LANGUAGE.md 7.11), the
    /// devices of the current type a compute or `data` construct is split over.
    Devices(Option<Vec<E>>),
}

/// A clause without its arguments: what the tables are keyed by. Data clauses are told apart
/// (`copyin` is allowed where `copyout` is not); the three `update` directions are one clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClauseKey {
    If,
    SelfCond,
    Async,
    Wait,
    NumGangs,
    NumWorkers,
    VectorLength,
    Gang,
    Worker,
    Vector,
    Seq,
    Auto,
    Independent,
    Collapse,
    Tile,
    Private,
    FirstPrivate,
    Reduction,
    Default,
    Data(DataClause),
    Update,
    DeviceType,
    Finalize,
    IfPresent,
    DeviceNum,
    DefaultAsync,
    Devices,
}

/// How `ClauseKind::map` turns one tree's clause arguments into another's (the checker's
/// typing of `ast` clauses into `hir` ones).
pub trait MapClauseArgs<E, R, E2, R2> {
    /// A condition (`if`, `self`); `clause` is the clause's name, for messages.
    fn condition(&mut self, clause: &'static str, e: &E) -> E2;
    /// An integer argument: a queue, a count, a size or a device number.
    fn integer(&mut self, clause: &'static str, e: &E) -> E2;
    /// A variable list.
    fn vars(&mut self, refs: &[R]) -> Vec<R2>;
}

impl<E, R> ClauseKind<E, R> {
    pub fn key(&self) -> ClauseKey {
        use ClauseKind as C;
        match self {
            C::If(_) => ClauseKey::If,
            C::SelfCond(_) => ClauseKey::SelfCond,
            C::Async(_) => ClauseKey::Async,
            C::Wait(_) => ClauseKey::Wait,
            C::NumGangs(_) => ClauseKey::NumGangs,
            C::NumWorkers(_) => ClauseKey::NumWorkers,
            C::VectorLength(_) => ClauseKey::VectorLength,
            C::Gang(_) => ClauseKey::Gang,
            C::Worker(_) => ClauseKey::Worker,
            C::Vector(_) => ClauseKey::Vector,
            C::Seq => ClauseKey::Seq,
            C::Auto => ClauseKey::Auto,
            C::Independent => ClauseKey::Independent,
            C::Collapse(_) => ClauseKey::Collapse,
            C::Tile(_) => ClauseKey::Tile,
            C::Private(_) => ClauseKey::Private,
            C::FirstPrivate(_) => ClauseKey::FirstPrivate,
            C::Reduction(..) => ClauseKey::Reduction,
            C::Default(_) => ClauseKey::Default,
            C::Data(d, _) => ClauseKey::Data(*d),
            C::Update(..) => ClauseKey::Update,
            C::DeviceType(_) => ClauseKey::DeviceType,
            C::Finalize => ClauseKey::Finalize,
            C::IfPresent => ClauseKey::IfPresent,
            C::DeviceNum(_) => ClauseKey::DeviceNum,
            C::DefaultAsync(_) => ClauseKey::DefaultAsync,
            C::Devices(_) => ClauseKey::Devices,
        }
    }

    /// The clause's canonical name, as the reference spells it.
    pub fn name(&self) -> &'static str {
        match self {
            ClauseKind::Update(dir, _) => dir.name(),
            kind => kind.key().name(),
        }
    }

    /// The same clause over other argument types.
    pub fn map<E2, R2>(&self, m: &mut impl MapClauseArgs<E, R, E2, R2>) -> ClauseKind<E2, R2> {
        use ClauseKind as C;
        let name = self.name();
        match self {
            C::If(e) => C::If(m.condition(name, e)),
            C::SelfCond(e) => C::SelfCond(e.as_ref().map(|e| m.condition(name, e))),
            C::Async(e) => C::Async(e.as_ref().map(|e| m.integer(name, e))),
            C::Wait(qs) => C::Wait(qs.iter().map(|e| m.integer(name, e)).collect()),
            C::NumGangs(e) => C::NumGangs(m.integer(name, e)),
            C::NumWorkers(e) => C::NumWorkers(m.integer(name, e)),
            C::VectorLength(e) => C::VectorLength(m.integer(name, e)),
            C::Gang(e) => C::Gang(e.as_ref().map(|e| m.integer(name, e))),
            C::Worker(e) => C::Worker(e.as_ref().map(|e| m.integer(name, e))),
            C::Vector(e) => C::Vector(e.as_ref().map(|e| m.integer(name, e))),
            C::Seq => C::Seq,
            C::Auto => C::Auto,
            C::Independent => C::Independent,
            C::Collapse(e) => C::Collapse(m.integer(name, e)),
            C::Tile(sizes) => C::Tile(
                sizes
                    .iter()
                    .map(|s| s.as_ref().map(|e| m.integer(name, e)))
                    .collect(),
            ),
            C::Private(refs) => C::Private(m.vars(refs)),
            C::FirstPrivate(refs) => C::FirstPrivate(m.vars(refs)),
            C::Reduction(op, refs) => C::Reduction(*op, m.vars(refs)),
            C::Default(k) => C::Default(*k),
            C::Data(dc, refs) => C::Data(*dc, m.vars(refs)),
            C::Update(dir, refs) => C::Update(*dir, m.vars(refs)),
            C::DeviceType(list) => C::DeviceType(list.clone()),
            C::Finalize => C::Finalize,
            C::IfPresent => C::IfPresent,
            C::DeviceNum(e) => C::DeviceNum(m.integer(name, e)),
            C::DefaultAsync(e) => C::DefaultAsync(m.integer(name, e)),
            C::Devices(list) => C::Devices(
                list.as_ref()
                    .map(|es| es.iter().map(|e| m.integer(name, e)).collect()),
            ),
        }
    }

    /// The argument expressions, in order (a visitor's walk).
    pub fn exprs(&self) -> Vec<&E> {
        use ClauseKind as C;
        match self {
            C::If(e)
            | C::NumGangs(e)
            | C::NumWorkers(e)
            | C::VectorLength(e)
            | C::Collapse(e)
            | C::DeviceNum(e)
            | C::DefaultAsync(e) => vec![e],
            C::SelfCond(e) | C::Async(e) | C::Gang(e) | C::Worker(e) | C::Vector(e) => {
                e.iter().collect()
            }
            C::Wait(es) => es.iter().collect(),
            C::Devices(es) => es.iter().flatten().collect(),
            C::Tile(sizes) => sizes.iter().flatten().collect(),
            C::Seq
            | C::Auto
            | C::Independent
            | C::Private(_)
            | C::FirstPrivate(_)
            | C::Reduction(..)
            | C::Default(_)
            | C::Data(..)
            | C::Update(..)
            | C::DeviceType(_)
            | C::Finalize
            | C::IfPresent => Vec::new(),
        }
    }

    /// The variable references of a list clause (none for other clauses).
    pub fn vars(&self) -> &[R] {
        use ClauseKind as C;
        match self {
            C::Private(refs)
            | C::FirstPrivate(refs)
            | C::Reduction(_, refs)
            | C::Data(_, refs)
            | C::Update(_, refs) => refs,
            C::If(_)
            | C::SelfCond(_)
            | C::Async(_)
            | C::Wait(_)
            | C::NumGangs(_)
            | C::NumWorkers(_)
            | C::VectorLength(_)
            | C::Gang(_)
            | C::Worker(_)
            | C::Vector(_)
            | C::Seq
            | C::Auto
            | C::Independent
            | C::Collapse(_)
            | C::Tile(_)
            | C::Default(_)
            | C::DeviceType(_)
            | C::Finalize
            | C::IfPresent
            | C::DeviceNum(_)
            | C::DefaultAsync(_)
            | C::Devices(_) => &[],
        }
    }
}

impl ClauseKey {
    /// This clause's row of `CLAUSES`.
    pub fn spec(self) -> &'static ClauseSpec {
        CLAUSES
            .iter()
            .find(|s| s.key == self)
            .expect("every clause key has a row in CLAUSES")
    }

    /// The canonical name (`host/self/device` for the `update` directions).
    pub fn name(self) -> &'static str {
        match self {
            ClauseKey::Update => "host/self/device",
            key => key.spec().spellings[0],
        }
    }

    /// A level of parallelism (or the request to choose one) on a loop or routine.
    pub fn is_level(self) -> bool {
        matches!(
            self,
            ClauseKey::Gang
                | ClauseKey::Worker
                | ClauseKey::Vector
                | ClauseKey::Seq
                | ClauseKey::Auto
        )
    }

    /// Whether the clause may appear on `construct` at all.
    pub fn allowed_on(self, construct: Construct) -> bool {
        self.spec().on.meets(Places::of(construct))
    }

    /// Whether it may follow a `device_type` clause on `construct` (OpenACC 3.3 per construct;
    /// a combined construct takes what either part takes). `device_type` itself always may.
    pub fn allowed_after_device_type(self, construct: Construct) -> bool {
        self == ClauseKey::DeviceType || self.spec().after_device_type.meets(Places::of(construct))
    }
}

/// A set of constructs, as a bit set: a combined construct is its compute part and `LOOP`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Places(u16);

impl Places {
    pub const NONE: Places = Places(0);
    pub const PARALLEL: Places = Places(1);
    pub const KERNELS: Places = Places(1 << 1);
    pub const SERIAL: Places = Places(1 << 2);
    pub const LOOP: Places = Places(1 << 3);
    pub const DATA: Places = Places(1 << 4);
    pub const ENTER_DATA: Places = Places(1 << 5);
    pub const EXIT_DATA: Places = Places(1 << 6);
    pub const UPDATE: Places = Places(1 << 7);
    pub const WAIT: Places = Places(1 << 8);
    pub const ROUTINE: Places = Places(1 << 9);
    pub const DECLARE: Places = Places(1 << 10);
    pub const SET: Places = Places(1 << 11);
    pub const COMPUTE: Places = Places::PARALLEL.or(Places::KERNELS).or(Places::SERIAL);

    pub const fn or(self, other: Places) -> Places {
        Places(self.0 | other.0)
    }

    fn meets(self, other: Places) -> bool {
        self.0 & other.0 != 0
    }

    pub fn of(construct: Construct) -> Places {
        match construct {
            Construct::Parallel => Places::PARALLEL,
            Construct::Kernels => Places::KERNELS,
            Construct::Serial => Places::SERIAL,
            Construct::ParallelLoop => Places::PARALLEL.or(Places::LOOP),
            Construct::KernelsLoop => Places::KERNELS.or(Places::LOOP),
            Construct::SerialLoop => Places::SERIAL.or(Places::LOOP),
            Construct::Loop => Places::LOOP,
            Construct::Data => Places::DATA,
            Construct::EnterData => Places::ENTER_DATA,
            Construct::ExitData => Places::EXIT_DATA,
            Construct::Update => Places::UPDATE,
            Construct::Wait => Places::WAIT,
            Construct::Atomic(_) => Places::NONE,
            Construct::Routine => Places::ROUTINE,
            Construct::Declare => Places::DECLARE,
            Construct::Set => Places::SET,
        }
    }
}

/// How the parser reads a clause's arguments and builds its `ast::ClauseKind`.
#[derive(Clone, Copy, Debug)]
pub enum Args {
    /// No parentheses.
    Flag(fn() -> ast::ClauseKind),
    /// Exactly one value in parentheses; the string is an example for the help line.
    One(fn(ast::Expr) -> ast::ClauseKind, &'static str),
    /// An optional value: `async`, `async(q)`.
    Optional(fn(Option<ast::Expr>) -> ast::ClauseKind),
    /// A level with an optional size, which may be named by one of the words (`gang(num: n)`).
    Level(
        fn(Option<ast::Expr>) -> ast::ClauseKind,
        &'static [&'static str],
    ),
    /// An optional list of values (`wait(1, 2)`).
    List(fn(Vec<ast::Expr>) -> ast::ClauseKind),
    /// A list of variables and array sections.
    Vars(fn(Vec<ast::DataRef>) -> ast::ClauseKind),
    /// `self` (a condition, or on `update` a variable list), `tile`, `reduction`, `default`,
    /// `device_type`, `devices` (`all` or a list): their own grammar in the parser.
    Special,
}

/// One clause: everything about it that does not depend on its arguments' values.
#[derive(Clone, Copy, Debug)]
pub struct ClauseSpec {
    pub key: ClauseKey,
    /// The canonical spelling first, then older spellings the parser also accepts.
    pub spellings: &'static [&'static str],
    pub args: Args,
    /// The constructs it may appear on.
    pub on: Places,
    /// The constructs on which it may follow a `device_type` clause.
    pub after_device_type: Places,
    /// May appear more than once in a `device_type` segment (variable lists).
    pub repeats: bool,
}

use ast::ClauseKind as K;
use ClauseKey as Key;
use DataClause::{Copy, CopyIn, CopyOut, Create, Delete, NoCreate, Present};

const NONE: Places = Places::NONE;
const COMPUTE: Places = Places::COMPUTE;
const LOOP: Places = Places::LOOP;
/// `num_gangs`, `num_workers` and `vector_length`.
const COUNTS: Places = Places::PARALLEL.or(Places::KERNELS);
/// Where `async` and `wait` may appear.
const QUEUED: Places = COMPUTE
    .or(Places::DATA)
    .or(Places::ENTER_DATA)
    .or(Places::EXIT_DATA)
    .or(Places::UPDATE)
    .or(Places::WAIT);
/// Where async and wait may follow `device_type`.
const QUEUED_PER_DEVICE: Places = COMPUTE.or(Places::DATA).or(Places::UPDATE);
const STRUCTURED: Places = COMPUTE.or(Places::DATA);
const LEVEL: Places = LOOP.or(Places::ROUTINE);

const fn row(
    key: ClauseKey,
    spellings: &'static [&'static str],
    args: Args,
    on: Places,
) -> ClauseSpec {
    ClauseSpec {
        key,
        spellings,
        args,
        on,
        after_device_type: NONE,
        repeats: false,
    }
}

impl ClauseSpec {
    const fn per_device(self, places: Places) -> ClauseSpec {
        ClauseSpec {
            after_device_type: places,
            ..self
        }
    }

    const fn repeating(self) -> ClauseSpec {
        ClauseSpec {
            repeats: true,
            ..self
        }
    }
}

/// Every clause, in the order help lines and completions list them (OpenACC 3.3, LANGUAGE.md
/// 7.1-7.10).
#[rustfmt::skip]
pub const CLAUSES: &[ClauseSpec] = &[
    row(Key::If, &["if"], Args::One(K::If, "if(n > 1000)"),
        QUEUED.or(Places::SET)),
    row(Key::SelfCond, &["self"], Args::Special, COMPUTE),
    row(Key::Async, &["async"], Args::Optional(K::Async), QUEUED).per_device(QUEUED_PER_DEVICE),
    row(Key::Wait, &["wait"], Args::List(K::Wait), QUEUED).per_device(QUEUED_PER_DEVICE),
    row(Key::NumGangs, &["num_gangs"], Args::One(K::NumGangs, "num_gangs(1024)"), COUNTS)
        .per_device(COUNTS),
    row(Key::NumWorkers, &["num_workers"], Args::One(K::NumWorkers, "num_workers(4)"), COUNTS)
        .per_device(COUNTS),
    row(Key::VectorLength, &["vector_length"], Args::One(K::VectorLength, "vector_length(128)"),
        COUNTS).per_device(COUNTS),
    row(Key::Gang, &["gang"], Args::Level(K::Gang, &["num", "static"]), LEVEL).per_device(LEVEL),
    row(Key::Worker, &["worker"], Args::Level(K::Worker, &["num"]), LEVEL).per_device(LEVEL),
    row(Key::Vector, &["vector"], Args::Level(K::Vector, &["length"]), LEVEL).per_device(LEVEL),
    row(Key::Seq, &["seq"], Args::Flag(|| K::Seq), LEVEL).per_device(LEVEL),
    row(Key::Auto, &["auto"], Args::Flag(|| K::Auto), LOOP).per_device(LOOP),
    row(Key::Independent, &["independent"], Args::Flag(|| K::Independent), LOOP).per_device(LOOP),
    row(Key::Collapse, &["collapse"], Args::One(K::Collapse, "collapse(2)"), LOOP)
        .per_device(LOOP),
    row(Key::Tile, &["tile"], Args::Special, LOOP).per_device(LOOP),
    row(Key::Private, &["private"], Args::Vars(K::Private), COMPUTE.or(LOOP)).repeating(),
    row(Key::FirstPrivate, &["firstprivate"], Args::Vars(K::FirstPrivate), COMPUTE).repeating(),
    // LANGUAGE.md 7.5 lists where reductions may appear: not on `kernels`.
    row(Key::Reduction, &["reduction"], Args::Special,
        Places::PARALLEL.or(Places::SERIAL).or(LOOP)).repeating(),
    row(Key::Default, &["default"], Args::Special, STRUCTURED),
    row(Key::Data(Copy), &["copy", "pcopy", "present_or_copy"],
        Args::Vars(|l| K::Data(Copy, l)), STRUCTURED).repeating(),
    // At the top level OpenACC's `declare` takes `create` and `copyin` (plus clauses acc does
    // not have); `copy`, `copyout` and `present` need a function scope acc lacks.
    row(Key::Data(CopyIn), &["copyin", "pcopyin", "present_or_copyin"],
        Args::Vars(|l| K::Data(CopyIn, l)),
        STRUCTURED.or(Places::ENTER_DATA).or(Places::DECLARE)).repeating(),
    row(Key::Data(CopyOut), &["copyout", "pcopyout", "present_or_copyout"],
        Args::Vars(|l| K::Data(CopyOut, l)), STRUCTURED.or(Places::EXIT_DATA)).repeating(),
    row(Key::Data(Create), &["create", "pcreate", "present_or_create"],
        Args::Vars(|l| K::Data(Create, l)),
        STRUCTURED.or(Places::ENTER_DATA).or(Places::DECLARE)).repeating(),
    row(Key::Data(NoCreate), &["no_create"], Args::Vars(|l| K::Data(NoCreate, l)), STRUCTURED)
        .repeating(),
    row(Key::Data(Present), &["present"], Args::Vars(|l| K::Data(Present, l)), STRUCTURED)
        .repeating(),
    row(Key::Data(Delete), &["delete"], Args::Vars(|l| K::Data(Delete, l)), Places::EXIT_DATA)
        .repeating(),
    // `self(…)` on `update` comes from the `self` row (the parser cannot tell a condition from
    // a variable list); `host` and `device` are rows of their own with the same key.
    row(Key::Update, &["host"], Args::Vars(|l| K::Update(UpdateDir::Host, l)), Places::UPDATE)
        .repeating(),
    row(Key::Update, &["device"], Args::Vars(|l| K::Update(UpdateDir::Device, l)),
        Places::UPDATE).repeating(),
    row(Key::DeviceType, &["device_type", "dtype"], Args::Special,
        COMPUTE.or(LOOP).or(Places::DATA).or(Places::UPDATE).or(Places::ROUTINE).or(Places::SET)),
    row(Key::Finalize, &["finalize"], Args::Flag(|| K::Finalize), Places::EXIT_DATA),
    row(Key::IfPresent, &["if_present"], Args::Flag(|| K::IfPresent), Places::UPDATE),
    row(Key::DeviceNum, &["device_num"], Args::One(K::DeviceNum, ""), Places::SET),
    row(Key::DefaultAsync, &["default_async"], Args::One(K::DefaultAsync, ""), Places::SET),
    // acc's extension (LANGUAGE.md 7.11): not on `serial` (one gang has nothing to split), not
    // per device type (it names devices of the current type).
    row(Key::Devices, &["devices"], Args::Special,
        Places::PARALLEL.or(Places::KERNELS).or(Places::DATA)),
];

/// The row of a clause word, if it is one.
pub fn by_spelling(word: &str) -> Option<&'static ClauseSpec> {
    CLAUSES.iter().find(|s| s.spellings.contains(&word))
}

/// Every word the parser takes as a clause name.
pub fn spellings() -> impl Iterator<Item = &'static str> {
    CLAUSES.iter().flat_map(|s| s.spellings.iter().copied())
}

/// The canonical names of the clauses `construct` takes (the three `update` directions each),
/// for help lines and the REPL's completion: the same table the validator enforces.
pub fn clause_names(construct: Construct) -> Vec<&'static str> {
    let mut names = Vec::new();
    for spec in CLAUSES.iter().filter(|s| s.key.allowed_on(construct)) {
        match spec.key {
            Key::Update if spec.spellings[0] == "host" => names.extend(["host", "self", "device"]),
            Key::Update => {}
            key => names.push(key.name()),
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows that share a key (the `update` directions) agree on everything but the spelling.
    #[test]
    fn rows_with_one_key_agree() {
        for a in CLAUSES {
            let first = a.key.spec();
            assert_eq!(first.on, a.on, "{:?}", a.key);
            assert_eq!(first.after_device_type, a.after_device_type, "{:?}", a.key);
            assert_eq!(first.repeats, a.repeats, "{:?}", a.key);
        }
    }

    #[test]
    fn every_spelling_names_one_row() {
        let words: Vec<&str> = spellings().collect();
        for w in &words {
            assert_eq!(words.iter().filter(|v| *v == w).count(), 1, "{w}");
        }
    }

    /// A clause allowed after `device_type` on a construct is allowed on it.
    #[test]
    fn per_device_clauses_are_allowed_clauses() {
        for spec in CLAUSES {
            assert_eq!(
                spec.after_device_type.0 & !spec.on.0,
                0,
                "{:?} may follow device_type where it may not appear",
                spec.key
            );
        }
    }

    /// The keys parsed from the rows' constructors are the rows' own.
    #[test]
    fn constructors_build_their_key() {
        let e = || ast::Expr {
            kind: ast::ExprKind::Int(1, None),
            span: Span::default(),
        };
        for spec in CLAUSES {
            let built = match spec.args {
                Args::Flag(f) => f(),
                Args::One(f, _) => f(e()),
                Args::Optional(f) | Args::Level(f, _) => f(None),
                Args::List(f) => f(Vec::new()),
                Args::Vars(f) => f(Vec::new()),
                Args::Special => continue,
            };
            assert_eq!(built.key(), spec.key, "{}", spec.spellings[0]);
        }
    }
}
