//! Which bounds checks of a counted loop can be hoisted out of it, for loop versioning in both
//! back ends.
//!
//! In a `for` loop with a constant positive step, an access whose array is loop-invariant and
//! each of whose indices is either `var + c` (the loop variable plus a constant) or a simple
//! loop-invariant expression stays in bounds in every iteration when it does at the first and
//! last values of `var` (the index is monotonic and, with the range checks the back ends emit,
//! never wraps). A back end emits the loop twice: a copy without those accesses' checks, run
//! when all of them hold for the whole range, and the ordinary checked copy otherwise, so that
//! an access that does fail still fails in the right iteration, with its own site. This module
//! finds the accesses; the pre-check is each back end's code.

use std::collections::HashSet;

use super::visit::{walk_expr, walk_stmt, Visitor};
use super::{BinOp, Block, Expr, ExprKind, GlobalId, LocalId, Place, ScalarType, Stmt};
use crate::hir::Const;

/// How deep versioned loops may nest (each level doubles the code of the loops inside).
pub const MAX_VERSION_DEPTH: u32 = 2;

/// The largest constant offset `var + c` accepted (keeps the pre-check's sums exact).
pub const MAX_OFFSET: i64 = 1 << 31;

/// One index of a hoistable access.
#[derive(Debug)]
pub enum Index<'a> {
    /// `var + c`.
    Affine(i64),
    /// An expression that has the same value in every iteration and cannot fail: constants,
    /// locals the loop does not assign, and `+ - *` of such integers.
    Invariant(&'a Expr),
}

/// An access whose checks a versioned loop's fast copy leaves out.
#[derive(Debug)]
pub struct Hoisted<'a> {
    /// Identifies the access: see [`access_key`].
    pub key: usize,
    /// The array: a local or global the loop does not assign.
    pub array: &'a Expr,
    pub indices: Vec<Index<'a>>,
}

/// The key of an access (a `Load` or `Store`): the address of its index list, which is the
/// same however often a back end walks the IR.
pub fn access_key(indices: &[Expr]) -> usize {
    indices.as_ptr() as usize
}

/// Locals a block assigns (its `Set`s, nested loop variables and reduction variables, launch
/// results).
pub fn assigned(b: &[Stmt], out: &mut HashSet<LocalId>) {
    for s in b {
        match s {
            Stmt::Set(l, _) => {
                out.insert(*l);
            }
            Stmt::If { then, els, .. } => {
                assigned(then, out);
                assigned(els, out);
            }
            Stmt::While { body, .. } | Stmt::DataRegion { body, .. } | Stmt::Block(body) => {
                assigned(body, out)
            }
            Stmt::For(f) => {
                out.insert(f.var);
                // A loop's reduction variables are reset before it and combined after it.
                out.extend(f.schedule.reductions.iter().map(|r| r.var));
                assigned(&f.body, out);
            }
            Stmt::Launch(l) => {
                for (_, p) in &l.results {
                    if let Place::Local(id) = p {
                        out.insert(*id);
                    }
                }
            }
            Stmt::Atomic(a) => assigned(std::slice::from_ref(&*a.body), out),
            _ => {}
        }
    }
}

/// The accesses of a loop body over `var` whose checks can be hoisted. `changing` names
/// locals that may change during the loop although the body does not assign them (a device's
/// shared cells, which other threads write); `global_invariant` says which globals hold still.
pub fn hoistable<'a>(
    var: LocalId,
    body: &'a Block,
    changing: impl IntoIterator<Item = LocalId>,
    global_invariant: &dyn Fn(&GlobalId) -> bool,
) -> Vec<Hoisted<'a>> {
    let mut written = HashSet::new();
    assigned(body, &mut written);
    if written.contains(&var) {
        return Vec::new();
    }
    written.extend(changing);
    let mut f = Finder {
        var,
        assigned: written,
        global_invariant,
        found: Vec::new(),
        reads: HashSet::new(),
    };
    f.block(body);
    f.found
}

/// The locals a loop body reads and never assigns, other than `var`, in ascending order.
pub fn invariant_locals(var: LocalId, body: &Block) -> Vec<LocalId> {
    let mut written = HashSet::new();
    assigned(body, &mut written);
    written.insert(var);
    let mut f = Finder {
        var,
        assigned: written.clone(),
        global_invariant: &|_| false,
        found: Vec::new(),
        reads: HashSet::new(),
    };
    f.block(body);
    let mut out: Vec<LocalId> = f.reads.difference(&written).copied().collect();
    out.sort();
    out
}

/// The accesses of `hoisted` that differ in array or indices (`x[i]` read and then updated
/// needs one pre-check).
pub fn distinct<'h, 'a>(hoisted: &'h [Hoisted<'a>]) -> Vec<&'h Hoisted<'a>> {
    let mut seen = HashSet::new();
    hoisted
        .iter()
        .filter(|h| {
            let text: Vec<String> = h
                .indices
                .iter()
                .map(|i| match i {
                    Index::Affine(c) => format!("var{c:+}"),
                    Index::Invariant(e) => format!("{e:?}"),
                })
                .collect();
            seen.insert(format!("{:?}{text:?}", h.array))
        })
        .collect()
}

struct Finder<'a, 'c> {
    var: LocalId,
    assigned: HashSet<LocalId>,
    global_invariant: &'c dyn Fn(&GlobalId) -> bool,
    found: Vec<Hoisted<'a>>,
    /// Locals the body reads (as far as the walk sees: one it misses is only not pinned).
    reads: HashSet<LocalId>,
}

impl<'a> Finder<'a, '_> {
    fn invariant(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) => true,
            ExprKind::Local(l) => *l != self.var && !self.assigned.contains(l),
            ExprKind::Global(g) => (self.global_invariant)(g),
            ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, l, r, None) => {
                is_int(e) && self.invariant(l) && self.invariant(r)
            }
            _ => false,
        }
    }

    fn index(&self, e: &'a Expr) -> Option<Index<'a>> {
        let is_var = |x: &Expr| matches!(x.kind, ExprKind::Local(l) if l == self.var);
        let constant = |x: &Expr| match x.kind {
            ExprKind::Const(Const::I32(v)) => Some(v as i64),
            ExprKind::Const(Const::I64(v)) => Some(v),
            _ => None,
        };
        let affine = match &e.kind {
            _ if is_var(e) => Some(0),
            ExprKind::Binary(BinOp::Add, l, r, None) if is_var(l) => constant(r),
            ExprKind::Binary(BinOp::Add, l, r, None) if is_var(r) => constant(l),
            ExprKind::Binary(BinOp::Sub, l, r, None) if is_var(l) => constant(r).map(|c| -c),
            _ => None,
        };
        match affine {
            Some(c) if c.abs() <= MAX_OFFSET => Some(Index::Affine(c)),
            Some(_) => None,
            None if self.invariant(e) => Some(Index::Invariant(e)),
            None => None,
        }
    }

    fn access(&mut self, array: &'a Expr, indices: &'a [Expr]) {
        if !self.invariant_array(array) || indices.is_empty() {
            return;
        }
        let idx: Option<Vec<_>> = indices.iter().map(|i| self.index(i)).collect();
        if let Some(idx) = idx {
            self.found.push(Hoisted {
                key: access_key(indices),
                array,
                indices: idx,
            });
        }
    }

    fn invariant_array(&self, a: &Expr) -> bool {
        match &a.kind {
            ExprKind::Local(l) => !self.assigned.contains(l),
            ExprKind::Global(g) => (self.global_invariant)(g),
            _ => false,
        }
    }
}

impl<'a> Visitor<'a> for Finder<'a, '_> {
    fn stmt(&mut self, s: &'a Stmt) {
        walk_stmt(self, s);
        if let Stmt::Store {
            array,
            indices,
            site: Some(_),
            ..
        } = s
        {
            self.access(array, indices);
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        walk_expr(self, e);
        match &e.kind {
            ExprKind::Local(l) => {
                self.reads.insert(*l);
            }
            ExprKind::Load {
                array,
                indices,
                site: Some(_),
            } => self.access(array, indices),
            _ => {}
        }
    }
}

fn is_int(e: &Expr) -> bool {
    matches!(e.ty.scalar(), Some(ScalarType::I32 | ScalarType::I64))
}
