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
//! `classify` turns that into a `Form`, which jit-host and jit-ptx both act on: which location
//! is accessed atomically, where a read value goes, whether a capture sees the old or the new
//! value. A location that is a gang's own scalar is `Form::Private` (plain statements); every
//! other statement either has a form or is a compiler error, never plain statements. Which
//! operations a back end does in one instruction (`rmw_of`) and which by compare-and-swap is
//! its own business; `tests/atomic_code.rs` checks both for every form, type and location.

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

/// The update or write statement `s` (`is_cell`: the region's `copy` scalars, whose `Set` is
/// a write of their cell; any other local is the gang's own).
pub fn write_of(s: &Stmt, is_cell: impl Fn(LocalId) -> bool) -> Option<Write<'_>> {
    let (location, value, site) = match s {
        Stmt::Store {
            array,
            indices,
            value,
            site,
        } => (Location::Element { array, indices }, value, *site),
        Stmt::SetGlobal(g, value) => (Location::Global(*g), value, None),
        Stmt::Set(l, value) if is_cell(*l) => (Location::Cell(*l), value, None),
        _ => return None,
    };
    Some(Write {
        location,
        value,
        site,
    })
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

/// What an `ir::Stmt::Atomic` does, classified once for both back ends.
#[derive(Clone, Copy, Debug)]
pub enum Form<'e> {
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
    /// Every location is a scalar local that is not shared (a gang's own variable): the
    /// statements run as written.
    Private,
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
/// private). Lowering produces only these forms, so an error is a compiler bug, which the back
/// ends report as such rather than running the statements without atomicity.
///
/// A capture block `{ a; b }` is tried as a read followed by an update first, as
/// `validate::atomic` reads it, so that a block whose statements each mention the other's
/// location gets the meaning the checker gave it.
pub fn classify(
    kind: AtomicKind,
    s: &Stmt,
    is_cell: impl Fn(LocalId) -> bool,
) -> Result<Form<'_>, NotAtomic> {
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
                    Some(Form::Capture {
                        update,
                        read,
                        read_first,
                    })
                });
            match capture {
                Some(form) => Ok(form),
                None if private_capture(first, second, is_cell) => Ok(Form::Private),
                None => Err(NotAtomic(
                    "a capture block without a read of the updated location",
                )),
            }
        }
        (AtomicKind::Capture, _) => Err(NotAtomic("a capture that is not a block")),
        (AtomicKind::Read, _) => {
            let (target, value) =
                target_of(s).ok_or(NotAtomic("an atomic read that is not an assignment"))?;
            match read_location(value, is_cell) {
                Some(location) => Ok(Form::Read {
                    location,
                    read: Read { target, value },
                }),
                None if read_private(value, is_cell).is_some() => Ok(Form::Private),
                None => Err(NotAtomic("an atomic read of no location")),
            }
        }
        (AtomicKind::Update | AtomicKind::Write, _) => match write_of(s, is_cell) {
            Some(update) => Ok(Form::Update(update)),
            None if matches!(s, Stmt::Set(l, _) if !is_cell(*l)) => Ok(Form::Private),
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

/// `s` as the read `v = (conversion of) x` of `loc` in a capture.
fn read_of<'e>(s: &'e Stmt, loc: &Location<'_>) -> Option<Read<'e>> {
    let (target, value) = target_of(s)?;
    loc.is_read(without_conversions(value))
        .then_some(Read { target, value })
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
pub fn read_location(value: &Expr, is_cell: impl Fn(LocalId) -> bool) -> Option<Location<'_>> {
    match &value.kind {
        ExprKind::Load { array, indices, .. } => Some(Location::Element { array, indices }),
        ExprKind::Global(g) => Some(Location::Global(*g)),
        ExprKind::Local(l) if is_cell(*l) => Some(Location::Cell(*l)),
        ExprKind::Convert(x) => read_location(x, is_cell),
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
