//! Bounds checks hoisted out of counted loops, by loop versioning.
//!
//! In a `for` loop with a constant positive step, an access whose array is loop-invariant and
//! each of whose indices is either `var + c` (the loop variable plus a constant) or a simple
//! loop-invariant expression stays in bounds in every iteration when it does at the first and
//! last values of `var` (the index is monotonic and, with the range checks below, never wraps).
//! The loop is then emitted twice: a copy without those accesses' checks, run when all of them
//! hold for the whole range, and the ordinary checked copy otherwise, so that an access that
//! does fail still fails in the right iteration, with its own site.

use std::collections::HashSet;

use acc_lang::hir::Const;
use acc_lang::ir::{BinOp, Block, Expr, ExprKind, LocalId, Place, PrintArg, ScalarType, Stmt};
use acc_runtime::abi::ARRAY_DIMS_OFFSET;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Type, Value};

use super::expr::scalar_of;
use super::Tx;
use crate::JitError;

/// How deep versioned loops may nest (each level doubles the code of the loops inside).
pub(super) const MAX_VERSION_DEPTH: u32 = 2;

/// The largest constant offset `var + c` the pre-check accepts (keeps its sums exact).
const MAX_OFFSET: i64 = 1 << 31;

/// One index of a hoistable access.
enum Index<'a> {
    /// `var + c`.
    Affine(i64),
    /// An expression that has the same value in every iteration and cannot fail.
    Invariant(&'a Expr),
}

/// An access whose checks the fast copy leaves out.
pub(super) struct Hoisted<'a> {
    /// Identifies the access: the address of its index list.
    pub key: usize,
    array: &'a Expr,
    indices: Vec<Index<'a>>,
}

/// The key of an access, as `Tx::proven` holds it.
pub(super) fn access_key(indices: &[Expr]) -> usize {
    indices.as_ptr() as usize
}

/// Locals a block assigns (its `Set`s, nested loop variables, launch results), and whether it
/// launches a region.
fn assigned(b: &[Stmt], out: &mut HashSet<LocalId>) {
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
                out.extend(f.schedule.reductions.iter().map(|&(l, _)| l));
                assigned(&f.body, out);
            }
            Stmt::Launch(l) => {
                for (_, p) in &l.results {
                    if let Place::Local(id) = p {
                        out.insert(*id);
                    }
                }
            }
            Stmt::Atomic(s) => assigned(std::slice::from_ref(s.as_ref()), out),
            _ => {}
        }
    }
}

struct Finder<'a, 'c> {
    var: LocalId,
    assigned: HashSet<LocalId>,
    tx_cached: &'c dyn Fn(&acc_lang::ir::GlobalId) -> bool,
    found: Vec<Hoisted<'a>>,
    /// Locals the body reads (as far as the walk sees: one it misses is only not pinned).
    reads: HashSet<LocalId>,
}

impl<'a> Finder<'a, '_> {
    fn invariant(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) => true,
            ExprKind::Local(l) => *l != self.var && !self.assigned.contains(l),
            ExprKind::Global(g) => (self.tx_cached)(g),
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
            ExprKind::Global(g) => (self.tx_cached)(g),
            _ => false,
        }
    }

    fn block(&mut self, b: &'a Block) {
        for s in b {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &'a Stmt) {
        match s {
            Stmt::Set(_, e)
            | Stmt::SetGlobal(_, e)
            | Stmt::Eval(e)
            | Stmt::Retain(e)
            | Stmt::Release(e)
            | Stmt::Assert { cond: e, .. } => self.expr(e),
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                self.expr(array);
                indices.iter().for_each(|e| self.expr(e));
                self.expr(value);
                if site.is_some() {
                    self.access(array, indices);
                }
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond);
                self.block(then);
                self.block(els);
            }
            Stmt::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            Stmt::For(f) => {
                self.expr(&f.start);
                self.expr(&f.end);
                self.expr(&f.step);
                self.block(&f.body);
            }
            Stmt::Return(Some(e)) => self.expr(e),
            Stmt::Print(args) => {
                for a in args {
                    if let PrintArg::Value(e) = a {
                        self.expr(e);
                    }
                }
            }
            Stmt::Printf(_, args) => args.iter().for_each(|e| self.expr(e)),
            Stmt::DataRegion { body, .. } | Stmt::Block(body) => self.block(body),
            Stmt::Atomic(s) => self.stmt(s),
            _ => {}
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        match &e.kind {
            ExprKind::Local(l) => {
                self.reads.insert(*l);
            }
            ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x) => self.expr(x),
            ExprKind::Binary(_, l, r, _) => {
                self.expr(l);
                self.expr(r);
            }
            ExprKind::Load {
                array,
                indices,
                site,
            } => {
                self.expr(array);
                indices.iter().for_each(|e| self.expr(e));
                if site.is_some() {
                    self.access(array, indices);
                }
            }
            ExprKind::Call(_, args)
            | ExprKind::Builtin(_, args)
            | ExprKind::CheckedBuiltin(_, args, _)
            | ExprKind::ArrayLit(args) => args.iter().for_each(|e| self.expr(e)),
            _ => {}
        }
    }
}

fn is_int(e: &Expr) -> bool {
    matches!(e.ty.scalar(), Some(ScalarType::I32 | ScalarType::I64))
}

impl Tx<'_, '_> {
    /// The accesses of a loop body over `var` whose checks can be hoisted (those already
    /// proven by an enclosing loop are left out).
    pub(super) fn hoistable<'a>(&self, var: LocalId, body: &'a Block) -> Vec<Hoisted<'a>> {
        let mut written = HashSet::new();
        assigned(body, &mut written);
        if written.contains(&var) {
            return Vec::new();
        }
        // Other gangs may change a shared cell during the loop: never an invariant.
        written.extend(self.cells.iter().copied());
        let cached = |g: &acc_lang::ir::GlobalId| self.cached_globals.contains_key(g);
        let mut f = Finder {
            var,
            assigned: written,
            tx_cached: &cached,
            found: Vec::new(),
            reads: HashSet::new(),
        };
        f.block(body);
        f.found
            .into_iter()
            .filter(|h| !self.proven.contains(&h.key))
            .collect()
    }

    /// The locals a loop body reads and never assigns, other than `var`. Their values before
    /// the loop are theirs in every iteration; redefining them at the top of the body keeps
    /// the SSA builder from threading them through the loop header as block parameters, which
    /// Cranelift would not see as loop-invariant.
    pub(super) fn invariant_locals(&self, var: LocalId, body: &Block) -> Vec<LocalId> {
        let mut written = HashSet::new();
        assigned(body, &mut written);
        written.insert(var);
        let cached = |_: &acc_lang::ir::GlobalId| false;
        let mut f = Finder {
            var,
            assigned: written.clone(),
            tx_cached: &cached,
            found: Vec::new(),
            reads: HashSet::new(),
        };
        f.block(body);
        let mut out: Vec<LocalId> = f.reads.difference(&written).copied().collect();
        out.sort();
        out
    }

    /// Whether every access of `hoisted` is in bounds for `var` from `first` to `last` (of type
    /// `t`, `first <= last`): evaluated before the loop, with no side effects.
    pub(super) fn in_bounds_throughout(
        &mut self,
        hoisted: &[Hoisted<'_>],
        t: Type,
        first: Value,
        last: Value,
    ) -> Result<Value, JitError> {
        let wide = |tx: &mut Self, v: Value| {
            if tx.b.func.dfg.value_type(v) == types::I64 {
                v
            } else {
                tx.b.ins().sextend(types::I64, v)
            }
        };
        let lo = wide(self, first);
        let hi = wide(self, last);
        // Keep `var + c` exact in 64 bits (and, for an `i32` index, within `i32`).
        let limit = self.iconst(types::I64, 1 << 62);
        let neg_limit = self.iconst(types::I64, -(1 << 62));
        let a = self.b.ins().icmp(IntCC::SignedLessThan, hi, limit);
        let b = self.b.ins().icmp(IntCC::SignedGreaterThan, lo, neg_limit);
        let mut ok = self.b.ins().band(a, b);
        // The same access often appears several times (`x[i]` read, then updated): check it once.
        let mut seen = HashSet::new();
        for h in hoisted {
            let text: Vec<String> = h
                .indices
                .iter()
                .map(|i| match i {
                    Index::Affine(c) => format!("var{c:+}"),
                    Index::Invariant(e) => format!("{e:?}"),
                })
                .collect();
            if !seen.insert(format!("{:?}{text:?}", h.array)) {
                continue;
            }
            let handle = self.expr(h.array)?;
            for (k, index) in h.indices.iter().enumerate() {
                let offset = ARRAY_DIMS_OFFSET + 8 * k as i32;
                let dim = self.b.ins().load(
                    types::I64,
                    MemFlagsData::trusted().with_readonly().with_can_move(),
                    handle,
                    offset,
                );
                let fits = match index {
                    Index::Affine(c) => {
                        let c = self.iconst(types::I64, *c);
                        let low = self.b.ins().iadd(lo, c);
                        let high = self.b.ins().iadd(hi, c);
                        let zero = self.iconst(types::I64, 0);
                        let nonneg = self
                            .b
                            .ins()
                            .icmp(IntCC::SignedGreaterThanOrEqual, low, zero);
                        let below = self.b.ins().icmp(IntCC::SignedLessThan, high, dim);
                        let mut fits = self.b.ins().band(nonneg, below);
                        if t != types::I64 {
                            let max = self.iconst(types::I64, i32::MAX as i64);
                            let narrow = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, high, max);
                            fits = self.b.ins().band(fits, narrow);
                        }
                        fits
                    }
                    Index::Invariant(e) => {
                        let v = self.expr(e)?;
                        let v = match scalar_of(e, "an index")? {
                            ScalarType::I32 => self.b.ins().sextend(types::I64, v),
                            _ => v,
                        };
                        self.b.ins().icmp(IntCC::UnsignedLessThan, v, dim)
                    }
                };
                ok = self.b.ins().band(ok, fits);
            }
        }
        Ok(ok)
    }
}
