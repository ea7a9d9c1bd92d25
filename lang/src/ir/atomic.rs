//! The forms of `Stmt::Atomic` (LANGUAGE.md 7.8), classified once for both back ends.
//!
//! Lowering hands over each form as ordinary statements whose location is evaluated once, with
//! the directive's kind: an update `x = f(x)` (`x op= e`, `x = x op e`, `x = e op x`,
//! `x = max(x, e)`, …) is a `Store` of the location (or a `Set`/`SetGlobal` of a scalar) whose
//! value reads it; a write is the same statement with a value that does not read it; a read is
//! `v = x`; a capture is a block of a read and an update or write, in either order. `v` may be
//! a local, a global or an array element. An element's array and indices are constants, locals
//! or globals, so two mentions of the location are the same expressions.
//!
//! Lowering classifies each statement once, as it builds the `Atomic` (`Atomic::new`), and
//! stores the decision in the IR as its `Form`: whether the location is shared (an element, a
//! global, or a region's `copy` scalar, which every gang shares through a memory cell) or a
//! gang's own scalar (`Form::Private`: plain statements), and in a capture which statement is
//! the read, so whether it sees the old or the new value. The back ends never classify: they
//! take the statement's `Parts` in the roles the form gives them (`Atomic::parts`: which
//! location is accessed atomically, the value it gets, where a read value goes) and act on
//! them. Every statement lowering produces has a form; one without is a compiler bug, stored as
//! the error, that the back ends report rather than run the statements without atomicity.
//! Which operations a back end does in one instruction (`rmw_of`) and which by
//! compare-and-swap is its own business; `tests/atomic_code.rs` checks both for every form,
//! type and location.
//!
//! The form sits beside the statement rather than owning its pieces so that each expression
//! exists once: the analyses (bounds-check hoisting, row starts, inlining sizes, uses) walk the
//! statement as before, and the facts they key by an expression's address (a proven access) are
//! the ones a back end finds when it emits the parts.

use super::{AtomicKind, BinOp, Expr, ExprKind, GlobalId, LocalId, ScalarType, SiteId, Stmt};
use crate::builtins::Builtin;

/// Where an atomic statement operates.
#[derive(Clone, Copy, Debug)]
pub enum Location<'e> {
    Element {
        array: &'e Expr,
        indices: &'e [Expr],
    },
    /// A global scalar (host code).
    Global(GlobalId),
    /// A region's `copy` scalar, which every gang shares through a memory cell.
    Cell(LocalId),
}

/// An update or write: its location, the value it stores and the store's bounds-check site.
#[derive(Clone, Copy, Debug)]
pub struct Write<'e> {
    pub location: Location<'e>,
    pub value: &'e Expr,
    pub site: Option<SiteId>,
}

/// A read-modify-write of one instruction: `x op e` or `e op x` for a commutative `op`
/// (`Sub` only as `x - e`), `min`/`max` of `x` and `e`, where `e` does not read `x`. Which
/// types a back end can do in one instruction is its own business.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rmw {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Min,
    Max,
}

fn same(a: &Expr, b: &Expr) -> bool {
    match (&a.kind, &b.kind) {
        (ExprKind::Local(x), ExprKind::Local(y)) => x == y,
        (ExprKind::Global(x), ExprKind::Global(y)) => x == y,
        (ExprKind::Const(x), ExprKind::Const(y)) => x == y,
        _ => false,
    }
}

impl<'e> Location<'e> {
    /// Whether `e` is a read of this location (as a whole).
    pub fn is_read(&self, e: &Expr) -> bool {
        match (self, &e.kind) {
            (
                Location::Element { array, indices },
                ExprKind::Load {
                    array: a,
                    indices: is,
                    ..
                },
            ) => {
                same(array, a)
                    && indices.len() == is.len()
                    && indices.iter().zip(is).all(|(x, y)| same(x, y))
            }
            (Location::Global(g), ExprKind::Global(h)) => g == h,
            (Location::Cell(l), ExprKind::Local(m)) => l == m,
            _ => false,
        }
    }

    /// Whether `e` reads this location anywhere.
    pub fn read_in(&self, e: &Expr) -> bool {
        self.first_read(e).is_some()
    }

    /// The first read of this location in `e`'s evaluation order.
    pub fn first_read<'x>(&self, e: &'x Expr) -> Option<&'x Expr> {
        if self.is_read(e) {
            return Some(e);
        }
        match &e.kind {
            ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => {
                self.first_read(x)
            }
            ExprKind::Binary(_, l, r, _) => self.first_read(l).or_else(|| self.first_read(r)),
            ExprKind::Load { array, indices, .. } => self
                .first_read(array)
                .or_else(|| indices.iter().find_map(|i| self.first_read(i))),
            ExprKind::Call(_, args)
            | ExprKind::Builtin(_, args)
            | ExprKind::CheckedBuiltin(_, args, _)
            | ExprKind::ArrayLit(args, _) => args.iter().find_map(|a| self.first_read(a)),
            _ => None,
        }
    }

    /// An element's indices (none for a scalar).
    pub fn indices(&self) -> &'e [Expr] {
        match self {
            Location::Element { indices, .. } => indices,
            _ => &[],
        }
    }

    /// The indices of a read of this location (those of the location itself when `e` is not
    /// a load).
    pub fn read_indices<'x>(&self, e: &'x Expr) -> &'x [Expr]
    where
        'e: 'x,
    {
        match &e.kind {
            ExprKind::Load { indices, .. } => indices,
            _ => self.indices(),
        }
    }
}

/// Which kind of shared location an atomic accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shared {
    /// An array element (`Store` / `Load`).
    Element,
    /// A global scalar (`SetGlobal` / `Global`, host code).
    Global,
    /// A region's `copy` scalar, which every gang shares through a memory cell (`Set` /
    /// `Local`).
    Cell,
}

impl Location<'_> {
    /// The kind of this location.
    pub fn shared(&self) -> Shared {
        match self {
            Location::Element { .. } => Shared::Element,
            Location::Global(_) => Shared::Global,
            Location::Cell(_) => Shared::Cell,
        }
    }
}

/// What an `ir::Stmt::Atomic` does, decided once by lowering (`classify`) and kept in the IR:
/// the roles of its statements and the kind of location they access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// `v = x`: one atomic load of `x`.
    Read(Shared),
    /// `x = value`: an update when `value` reads `x`, else a write.
    Update(Shared),
    /// A capture block of a read and an update or write of one location; the read is the first
    /// statement (it sees the old value, `{ v = x; x += e }`) or the second (the new one).
    Capture { location: Shared, read_first: bool },
    /// Every location is a scalar local that is not shared (a gang's own variable): the
    /// statements run as written.
    Private,
}

/// `acc atomic` of the given kind (LANGUAGE.md 7.8), with its form.
#[derive(Clone, Debug)]
pub struct Atomic {
    pub kind: AtomicKind,
    /// The statement as lowering produced it (a capture is a `Block` of its two statements),
    /// each location evaluated once. The analyses walk it; a private form runs it.
    pub body: Box<Stmt>,
    /// What it does: `Err` only where lowering produced none of the forms, a compiler bug
    /// that the back ends report (`ir::verify` rejects it).
    pub form: Result<Form, NotAtomic>,
}

impl Atomic {
    /// The atomic of kind `kind` of statement `body`, classified (`is_cell`: the region's
    /// `copy` scalars, which every gang shares through a memory cell; any other local is the
    /// gang's own). Lowering is its one caller, where a region's cells are known.
    pub fn new(kind: AtomicKind, body: Stmt, is_cell: impl Fn(LocalId) -> bool) -> Self {
        let form = classify(kind, &body, is_cell);
        Atomic {
            kind,
            body: Box::new(body),
            form,
        }
    }

    /// The statement's parts in the roles its form gives them. An error is a compiler bug: no
    /// form, or a statement that is not of its form (which `ir::verify` rejects).
    pub fn parts(&self) -> Result<Parts<'_>, NotAtomic> {
        let mismatch = NotAtomic("an atomic statement that is not of its form");
        let s = &*self.body;
        Ok(match self.form? {
            Form::Private => Parts::Private,
            Form::Update(at) => Parts::Update(write_at(s, at).ok_or(mismatch)?),
            Form::Read(at) => {
                let read = read_stmt(s).ok_or(mismatch)?;
                let location = location_at(read.value, at).ok_or(mismatch)?;
                Parts::Read { location, read }
            }
            Form::Capture {
                location,
                read_first,
            } => {
                let Stmt::Block(b) = s else {
                    return Err(mismatch);
                };
                let [first, second] = b.as_slice() else {
                    return Err(mismatch);
                };
                let (r, u) = if read_first {
                    (first, second)
                } else {
                    (second, first)
                };
                Parts::Capture {
                    update: write_at(u, location).ok_or(mismatch)?,
                    read: read_stmt(r).ok_or(mismatch)?,
                    read_first,
                }
            }
        })
    }
}

/// The update or write statement `s` of a location of kind `at`.
fn write_at(s: &Stmt, at: Shared) -> Option<Write<'_>> {
    let (location, value, site) = match (at, s) {
        (
            Shared::Element,
            Stmt::Store {
                array,
                indices,
                value,
                site,
            },
        ) => (Location::Element { array, indices }, value, *site),
        (Shared::Global, Stmt::SetGlobal(g, value)) => (Location::Global(*g), value, None),
        (Shared::Cell, Stmt::Set(l, value)) => (Location::Cell(*l), value, None),
        _ => return None,
    };
    Some(Write {
        location,
        value,
        site,
    })
}

/// The update or write statement `s` (`is_cell`: the region's `copy` scalars, whose `Set` is
/// a write of their cell; any other local is the gang's own).
fn write_of(s: &Stmt, is_cell: impl Fn(LocalId) -> bool) -> Option<Write<'_>> {
    let at = match s {
        Stmt::Store { .. } => Shared::Element,
        Stmt::SetGlobal(..) => Shared::Global,
        Stmt::Set(l, _) if is_cell(*l) => Shared::Cell,
        _ => return None,
    };
    write_at(s, at)
}

/// Where a read or a capture puts the value it read: `v` of `v = x`. Its store is an
/// ordinary one (OpenACC makes only the access of `x` atomic).
#[derive(Clone, Copy, Debug)]
pub enum Target<'e> {
    /// A local: the gang's (or thread's) own, or a region's `copy` scalar's cell.
    Local(LocalId),
    Global(GlobalId),
    Element {
        array: &'e Expr,
        indices: &'e [Expr],
        site: Option<SiteId>,
    },
}

/// A read `v = value`, where `value` is (a conversion of) the location's value.
#[derive(Clone, Copy, Debug)]
pub struct Read<'e> {
    pub target: Target<'e>,
    pub value: &'e Expr,
}

/// An `ir::Stmt::Atomic`'s statement in the roles its `Form` gives its pieces (`Atomic::parts`),
/// which jit-host and jit-ptx both act on.
#[derive(Clone, Copy, Debug)]
pub enum Parts<'e> {
    /// `v = x`: one atomic load of `location`.
    Read {
        location: Location<'e>,
        read: Read<'e>,
    },
    /// `x = value`: an update when `value` reads the location, else a write.
    Update(Write<'e>),
    /// A capture block: the update or write of the location and the read of it, which sees
    /// the old value when it comes first (`{ v = x; x += e }`) and the new one otherwise.
    Capture {
        update: Write<'e>,
        read: Read<'e>,
        read_first: bool,
    },
    /// The gang's own scalars: the statements run as written.
    Private,
}

impl Parts<'_> {
    /// The form these parts have.
    fn form(&self) -> Form {
        match self {
            Parts::Read { location, .. } => Form::Read(location.shared()),
            Parts::Update(update) => Form::Update(update.location.shared()),
            Parts::Capture {
                update, read_first, ..
            } => Form::Capture {
                location: update.location.shared(),
                read_first: *read_first,
            },
            Parts::Private => Form::Private,
        }
    }
}

/// Why an atomic statement has none of the forms (lowering produced something else).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAtomic(pub &'static str);

impl std::fmt::Display for NotAtomic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0)
    }
}

/// The form of the statement `s` of an `ir::Stmt::Atomic` of kind `kind` (`is_cell`: the
/// region's `copy` scalars, which every gang shares through a memory cell; any other local is
/// private). Lowering produces only these forms, so an error is a compiler bug. Lowering
/// classifies (`Atomic::new`); `ir::verify` classifies again to check the stored form.
pub(crate) fn classify(
    kind: AtomicKind,
    s: &Stmt,
    is_cell: impl Fn(LocalId) -> bool,
) -> Result<Form, NotAtomic> {
    find_parts(kind, s, is_cell).map(|parts| parts.form())
}

/// The parts of the statement `s` of an atomic of kind `kind`, found by their shapes.
///
/// A capture block `{ a; b }` is tried as a read followed by an update first, as
/// `validate::atomic` reads it, so that a block whose statements each mention the other's
/// location gets the meaning the checker gave it.
fn find_parts(
    kind: AtomicKind,
    s: &Stmt,
    is_cell: impl Fn(LocalId) -> bool,
) -> Result<Parts<'_>, NotAtomic> {
    let is_cell = &is_cell;
    match (kind, s) {
        (AtomicKind::Capture, Stmt::Block(b)) => {
            let [first, second] = b.as_slice() else {
                return Err(NotAtomic("a capture block of other than two statements"));
            };
            let capture = [(second, first, true), (first, second, false)]
                .into_iter()
                .find_map(|(u, r, read_first)| {
                    let update = write_of(u, is_cell)?;
                    let read = read_of(r, &update.location)?;
                    Some(Parts::Capture {
                        update,
                        read,
                        read_first,
                    })
                });
            match capture {
                Some(parts) => Ok(parts),
                None if private_capture(first, second, is_cell) => Ok(Parts::Private),
                None => Err(NotAtomic(
                    "a capture block without a read of the updated location",
                )),
            }
        }
        (AtomicKind::Capture, _) => Err(NotAtomic("a capture that is not a block")),
        (AtomicKind::Read, _) => {
            let read = read_stmt(s).ok_or(NotAtomic("an atomic read that is not an assignment"))?;
            match read_location(read.value, is_cell) {
                Some(location) => Ok(Parts::Read { location, read }),
                None if read_private(read.value, is_cell).is_some() => Ok(Parts::Private),
                None => Err(NotAtomic("an atomic read of no location")),
            }
        }
        (AtomicKind::Update | AtomicKind::Write, _) => match write_of(s, is_cell) {
            Some(update) => Ok(Parts::Update(update)),
            None if matches!(s, Stmt::Set(l, _) if !is_cell(*l)) => Ok(Parts::Private),
            None => Err(NotAtomic("an atomic update that is not an assignment")),
        },
    }
}

/// The private scalar local that `value` reads whole (possibly converted).
fn read_private(value: &Expr, is_cell: &impl Fn(LocalId) -> bool) -> Option<LocalId> {
    match &value.kind {
        ExprKind::Local(l) if !is_cell(*l) => Some(*l),
        ExprKind::Convert(x) => read_private(x, is_cell),
        _ => None,
    }
}

/// The place a statement assigns and the value it assigns.
fn target_of(s: &Stmt) -> Option<(Target<'_>, &Expr)> {
    Some(match s {
        Stmt::Set(l, e) => (Target::Local(*l), e),
        Stmt::SetGlobal(g, e) => (Target::Global(*g), e),
        Stmt::Store {
            array,
            indices,
            value,
            site,
        } => (
            Target::Element {
                array,
                indices,
                site: *site,
            },
            value,
        ),
        _ => return None,
    })
}

/// `s` as a read `v = value` (whatever `value` is).
fn read_stmt(s: &Stmt) -> Option<Read<'_>> {
    target_of(s).map(|(target, value)| Read { target, value })
}

/// `s` as the read `v = (conversion of) x` of `loc` in a capture.
fn read_of<'e>(s: &'e Stmt, loc: &Location<'_>) -> Option<Read<'e>> {
    read_stmt(s).filter(|read| loc.is_read(without_conversions(read.value)))
}

/// `e` without the conversions around it: the load a converted read of a location reads.
fn without_conversions(e: &Expr) -> &Expr {
    match &e.kind {
        ExprKind::Convert(x) => without_conversions(x),
        _ => e,
    }
}

/// A capture block whose location is a private scalar local `x`: one statement sets `x`, the
/// other reads `x` whole.
fn private_capture(a: &Stmt, b: &Stmt, is_cell: &impl Fn(LocalId) -> bool) -> bool {
    [(a, b), (b, a)]
        .into_iter()
        .any(|(u, r)| match (u, target_of(r)) {
            (Stmt::Set(x, _), Some((_, value))) => read_private(value, is_cell) == Some(*x),
            _ => false,
        })
}

/// The location that `v = value` reads atomically: `value` is (a conversion of) one load, a
/// global, or a `copy` scalar's cell.
fn read_location(value: &Expr, is_cell: impl Fn(LocalId) -> bool) -> Option<Location<'_>> {
    let at = match &without_conversions(value).kind {
        ExprKind::Load { .. } => Shared::Element,
        ExprKind::Global(_) => Shared::Global,
        ExprKind::Local(l) if is_cell(*l) => Shared::Cell,
        _ => return None,
    };
    location_at(value, at)
}

/// The location of kind `at` that `value`, (a conversion of) a read of it, reads.
fn location_at(value: &Expr, at: Shared) -> Option<Location<'_>> {
    match (at, &without_conversions(value).kind) {
        (Shared::Element, ExprKind::Load { array, indices, .. }) => {
            Some(Location::Element { array, indices })
        }
        (Shared::Global, ExprKind::Global(g)) => Some(Location::Global(*g)),
        (Shared::Cell, ExprKind::Local(l)) => Some(Location::Cell(*l)),
        _ => None,
    }
}

/// The bounds-check site of a location read.
pub fn load_site(e: &Expr) -> Option<SiteId> {
    match &e.kind {
        ExprKind::Load { site, .. } => *site,
        _ => None,
    }
}

/// `value` as one read-modify-write of `loc`, whose type is `ty`.
pub fn rmw_of(value: &Expr, loc: Location<'_>, ty: ScalarType) -> Option<Rmw> {
    if value.ty.scalar() != Some(ty) {
        return None;
    }
    let operand = |a: &Expr, b: &Expr| loc.is_read(a) && !loc.read_in(b);
    match &value.kind {
        ExprKind::Binary(op, l, r, _) => {
            let rmw = match op {
                BinOp::Add => Rmw::Add,
                BinOp::Sub => Rmw::Sub,
                BinOp::BitAnd => Rmw::And,
                BinOp::BitOr => Rmw::Or,
                BinOp::BitXor => Rmw::Xor,
                _ => return None,
            };
            let fits = operand(l, r) || (rmw != Rmw::Sub && operand(r, l));
            fits.then_some(rmw)
        }
        ExprKind::Builtin(b @ (Builtin::Min | Builtin::Max), args) => match args.as_slice() {
            [l, r] if operand(l, r) || operand(r, l) => Some(match b {
                Builtin::Min => Rmw::Min,
                _ => Rmw::Max,
            }),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests;
