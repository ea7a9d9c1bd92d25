//! Addresses of accesses that need no bounds check (proven by an enclosing loop's pre-check,
//! or `--unchecked`). An index `v + c` or `v - c` with a constant `c` is split into its
//! variable part and its constant: the variable parts make the element's base address,
//! written the same way for every access of the same variables (so that ptxas computes it
//! once), and the constants become byte offsets, the last dimension's as the load's or
//! store's immediate. A stencil's reads of `A[j, i - 1]`, `A[j, i]`, `A[j, i + 1]` then share
//! one address, and `A[j ± 1, i]` add a row's bytes to it, where computing each index in full
//! cost about eight 64-bit instructions per access (a third of the Jacobi sweep's
//! instructions). The split is exact: a proven index is in bounds, so `v + c` did not wrap.
//!
//! Before a loop shared among threads, the part of such an address that the loop does not
//! change, the start of a row (`data + j·m·size` for `A[j ± c, i]` in an `i` loop), is
//! worked out once (`hoist_row_starts`): ptxas folds the row's multiplication into the
//! per-iteration address arithmetic, where it cannot move it out of the loop itself.

use std::fmt;

use std::collections::HashSet;

use acc_lang::hir::Const;
use acc_lang::ir::bounds;
use acc_lang::ir::visit::{walk_expr, walk_stmt, Visitor};
use acc_lang::ir::{BinOp, Block, Expr, ExprKind, LocalId, SiteId, Stmt};

use crate::fx::{ArrayVal, Fx};
use crate::ptx::{elem_size, Class, Reg};
use crate::{unsupported, Result};

/// An address operand: a register and a byte offset (`[reg+offset]`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Address {
    pub reg: Reg,
    pub offset: i64,
}

impl From<Reg> for Address {
    fn from(reg: Reg) -> Self {
        Address { reg, offset: 0 }
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            0 => write!(f, "{}", self.reg),
            o => write!(f, "{}+{o}", self.reg),
        }
    }
}

/// The largest byte offset folded into an operand (PTX immediates are 32-bit).
const MAX_OFFSET: u64 = 1 << 30;

/// That `n` indices index `a` (the checker guarantees it; a back-end bug otherwise).
pub(crate) fn indices_fit(a: &ArrayVal, n: usize) -> Result<()> {
    if n != a.dims.len() || n == 0 {
        return unsupported(format!("{n} indices for an array of rank {}", a.dims.len()));
    }
    Ok(())
}

/// `e` as a variable part and a constant: `v + c`, `c + v`, `v - c` (else `e` and 0).
fn split(e: &Expr) -> (&Expr, i64) {
    let int = |x: &Expr| match x.kind {
        ExprKind::Const(Const::I32(c)) => Some(i64::from(c)),
        ExprKind::Const(Const::I64(c)) => Some(c),
        _ => None,
    };
    if let ExprKind::Binary(op, l, r, None) = &e.kind {
        match (op, int(l), int(r)) {
            (BinOp::Add, None, Some(c)) => return (l, c),
            (BinOp::Add, Some(c), None) => return (r, c),
            (BinOp::Sub, None, Some(c)) => return (l, c.wrapping_neg()),
            _ => {}
        }
    }
    (e, 0)
}

/// The key of a row start: the array and the variable parts of the outer indices.
fn row_key(array: &Expr, outer: &[Expr]) -> String {
    let vars: Vec<&Expr> = outer.iter().map(|e| split(e).0).collect();
    format!("{array:?}{vars:?}")
}

/// The accesses of rank 2 or more in a loop body whose array and outer indices' variable
/// parts the body does not change.
struct Rows<'f, 'a> {
    fixed: &'f dyn Fn(&Expr) -> bool,
    found: Vec<(&'a Expr, &'a [Expr])>,
    keys: HashSet<String>,
}

impl<'a> Rows<'_, 'a> {
    fn access(&mut self, array: &'a Expr, indices: &'a [Expr]) {
        let Some((_, outer)) = indices.split_last() else {
            return;
        };
        if outer.is_empty()
            || !(self.fixed)(array)
            || !outer.iter().all(|e| (self.fixed)(split(e).0))
        {
            return;
        }
        if self.keys.insert(row_key(array, outer)) {
            self.found.push((array, outer));
        }
    }
}

impl<'a> Visitor<'a> for Rows<'_, 'a> {
    fn stmt(&mut self, s: &'a Stmt) {
        if let Stmt::Store { array, indices, .. } = s {
            self.access(array, indices);
        }
        walk_stmt(self, s);
    }

    fn expr(&mut self, e: &'a Expr) {
        if let ExprKind::Load { array, indices, .. } = &e.kind {
            self.access(array, indices);
        }
        walk_expr(self, e);
    }
}

impl Fx<'_, '_> {
    /// Before loop `var` over `body`: the row starts of its accesses (module doc), in effect
    /// until `end_row_starts`.
    pub(crate) fn hoist_row_starts(&mut self, var: LocalId, body: &Block) -> Result<()> {
        let mut assigned = HashSet::new();
        bounds::assigned(body, &mut assigned);
        assigned.insert(var);
        let fixed = |e: &Expr| match e.kind {
            ExprKind::Local(l) => !assigned.contains(&l) && self.cell(l).is_none(),
            ExprKind::Const(_) => true,
            _ => false,
        };
        let mut rows = Rows {
            fixed: &fixed,
            found: Vec::new(),
            keys: HashSet::new(),
        };
        rows.block(body);
        let found = rows.found;
        let mut starts = Vec::new();
        for (array, outer) in found {
            let a = self.array(array)?;
            let mut linear = self.index(split(&outer[0]).0)?;
            for (e, d) in outer.iter().zip(&a.dims).skip(1) {
                let v = self.index(split(e).0)?;
                let l = self.fresh(Class::B64);
                self.ins(format!("mad.lo.s64 {l}, {linear}, {d}, {v}"));
                linear = l;
            }
            let (bytes, start) = (self.fresh(Class::B64), self.fresh(Class::B64));
            let last = a.dims[a.dims.len() - 1];
            let size = elem_size(a.elem);
            self.ins(format!("mul.lo.s64 {bytes}, {linear}, {last}"));
            self.ins(format!("mad.lo.s64 {start}, {bytes}, {size}, {}", a.data));
            starts.push((row_key(array, outer), start));
        }
        self.enter_row_starts(starts);
        Ok(())
    }

    /// The end of the loop that the last `hoist_row_starts` prepared.
    pub(crate) fn end_row_starts(&mut self) {
        self.leave_row_starts();
    }

    /// The start of row `array[outer…]` if an enclosing loop worked it out.
    fn row_start(&self, array: &Expr, outer: &[Expr]) -> Option<Reg> {
        self.row_start_of(&row_key(array, outer))
    }

    /// The site of an access's check, `None` where it needs none (proven, or `--unchecked`).
    pub(crate) fn checked_site(&self, indices: &[Expr], site: Option<SiteId>) -> Option<SiteId> {
        self.unproven(indices, site).filter(|_| !self.unchecked())
    }

    /// The address of `a[indices]`, an access that needs no check (module doc).
    pub(crate) fn unchecked_address(
        &mut self,
        array: &Expr,
        a: &ArrayVal,
        indices: &[Expr],
    ) -> Result<Address> {
        indices_fit(a, indices.len())?;
        let mut vars = Vec::with_capacity(indices.len());
        let mut offsets = Vec::with_capacity(indices.len());
        for e in indices {
            let (v, c) = split(e);
            vars.push(self.index(v)?);
            offsets.push(c);
        }
        let size = elem_size(a.elem) as i64;
        let rank = indices.len();
        let mut reg = self.fresh(Class::B64);
        let hoisted = match indices.split_last() {
            Some((_, outer)) if !outer.is_empty() => self.row_start(array, outer),
            _ => None,
        };
        if let Some(start) = hoisted {
            self.ins(format!(
                "mad.lo.s64 {reg}, {}, {size}, {start}",
                vars[rank - 1]
            ));
        } else {
            let mut linear = vars[0];
            for (v, d) in vars.iter().zip(&a.dims).skip(1) {
                let (row, l) = (self.fresh(Class::B64), self.fresh(Class::B64));
                self.ins(format!("mul.lo.s64 {row}, {linear}, {d}"));
                self.ins(format!("add.s64 {l}, {row}, {v}"));
                linear = l;
            }
            self.ins(format!("mad.lo.s64 {reg}, {linear}, {size}, {}", a.data));
        }
        // The constants of the outer dimensions, in steps of their dimension's bytes.
        let mut step = size.to_string();
        let outermost = offsets[..rank - 1].iter().position(|&c| c != 0);
        for k in (outermost.unwrap_or(rank - 1)..rank - 1).rev() {
            let bytes = self.fresh(Class::B64);
            self.ins(format!("mul.lo.s64 {bytes}, {}, {step}", a.dims[k + 1]));
            step = bytes.to_string();
            if offsets[k] != 0 {
                let moved = self.fresh(Class::B64);
                self.ins(format!(
                    "mad.lo.s64 {moved}, {bytes}, {}, {reg}",
                    offsets[k]
                ));
                reg = moved;
            }
        }
        // Modular arithmetic, as the full computation's.
        let offset = offsets[rank - 1].wrapping_mul(size);
        if offset.unsigned_abs() < MAX_OFFSET {
            return Ok(Address { reg, offset });
        }
        let moved = self.fresh(Class::B64);
        self.ins(format!("add.s64 {moved}, {reg}, {offset}"));
        Ok(moved.into())
    }
}
