//! `acc atomic` (LANGUAGE.md 7.8) in device code, acting on the parts of the form lowering
//! stored with each atomic (`ir::Atomic::parts`) as jit-host's `atomic` does (an update or write of a location, a read into a target, a
//! capture of both in either order; a read or captured value is stored as usual).
//!
//! - The element's address is computed once, with its bounds check at the site of the
//!   location's first read; the parts of the value that do not read the location are
//!   evaluated once, before the atomic operation, in their order.
//! - `x + e`, `e + x`, `x - e` on `i32 i64 f32 f64`, and `& | ^ min max` on `i32 i64`: one
//!   `atom.global` instruction (`x - e` adds `-e`); a write in a capture is `atom.exch`, a
//!   plain write `st.relaxed.gpu`, a read `ld.relaxed.gpu`;
//! - every other update (`*`, `/`, `e - x`, conversions, float `min`/`max`): a loop of
//!   `atom.global.cas` on the location's bits.
//!
//! Where a block's (or row's) threads run the code redundantly, the leader alone does the
//! atomic operation; a captured or read value is broadcast to the others. A `copy` scalar of
//! the region lives in a memory cell that the whole launch shares, as on the host, and is
//! updated atomically there; another scalar is the gang's own: a plain statement, except
//! inside a vector loop, where each thread has its own copy (not compiled).

use acc_lang::builtins::Builtin;
use acc_lang::ir::atomic::{load_site, rmw_of, Location, Parts, Read, Rmw, Target, Write};
use acc_lang::ir::{Atomic, BinOp, Expr, ExprKind, ScalarType, SiteId, Stmt, Ty};

use crate::fx::{Fx, Val};
use crate::plan::Mode;
use crate::ptx::{arith, is_float, Class, Reg};
use crate::{unsupported, Result};

/// The one `atom` instruction of an update of `loc` (an element of type `s`), from
/// `ir::atomic::rmw_of`: the operation and whether the operand is negated (`x - e` adds `-e`).
/// Floats have only `add`.
fn rmw_op(value: &Expr, loc: Location<'_>, s: ScalarType) -> Option<(&'static str, bool)> {
    let int = matches!(s, ScalarType::I32 | ScalarType::I64);
    Some(match rmw_of(value, loc, s)? {
        Rmw::Add => ("add", false),
        Rmw::Sub => ("add", true),
        Rmw::And if int => ("and", false),
        Rmw::Or if int => ("or", false),
        Rmw::Xor if int => ("xor", false),
        Rmw::Min if int => ("min", false),
        Rmw::Max if int => ("max", false),
        _ => return None,
    })
}

/// The type suffix of an `atom` operation on `s`.
fn atom_type(op: &str, s: ScalarType) -> &'static str {
    match (op, s) {
        ("add", ScalarType::I32) => "u32",
        ("add", ScalarType::I64) => "u64",
        ("add", ScalarType::F32) => "f32",
        ("add", ScalarType::F64) => "f64",
        ("min" | "max", ScalarType::I32) => "s32",
        ("min" | "max", ScalarType::I64) => "s64",
        (_, ScalarType::I64 | ScalarType::F64) => "b64",
        _ => "b32",
    }
}

fn bits_class(s: ScalarType) -> Class {
    match s {
        ScalarType::I64 | ScalarType::F64 => Class::B64,
        _ => Class::B32,
    }
}

fn bits_suffix(s: ScalarType) -> &'static str {
    match s {
        ScalarType::I64 | ScalarType::F64 => "b64",
        _ => "b32",
    }
}

/// Values of the parts of an atomic's value evaluated before the operation, by node.
type Evaluated = Vec<(*const Expr, Reg)>;

impl Fx<'_, '_> {
    /// An `ir::Stmt::Atomic`, by the parts of its form (as jit-host acts on them).
    pub(crate) fn atomic(&mut self, a: &Atomic) -> Result<()> {
        let parts = match a.parts() {
            Ok(parts) => parts,
            Err(e) => return unsupported(format!("an `acc atomic` statement: {e}")),
        };
        match parts {
            Parts::Private => self.scalar_atomic(&a.body),
            Parts::Update(Write {
                location,
                value,
                site,
            }) => {
                self.atomic_update(location, value, site, None, false)?;
                self.sync();
                Ok(())
            }
            Parts::Read { location, read } => self.atomic_read(location, read),
            Parts::Capture {
                update,
                read,
                read_first,
            } => {
                let loc = update.location;
                let (old, new, skip) = self.atomic_update(
                    loc,
                    update.value,
                    update.site,
                    read_first.then_some(read.value),
                    true,
                )?;
                let seen = if read_first { old } else { new };
                // Still on the leader's path: the captured value from the location's.
                let v = self.with_location(read.value, loc, seen, &Vec::new())?;
                self.place(&skip);
                self.write_target(read.target, read.value, v)
            }
        }
    }

    /// An atomic statement on a scalar local: the gang's own variable, a plain statement where
    /// the gang's threads share one copy of it.
    fn scalar_atomic(&mut self, s: &Stmt) -> Result<()> {
        if self.mode() == Mode::Thread {
            return unsupported(
                "an atomic update of a scalar inside a vector loop (each thread has its own copy)",
            );
        }
        self.stmt(s)
    }

    /// `v = value` of a read or capture, `v` holding `value` on the leader's path: an ordinary
    /// store (only the location's access is atomic). A local is shared with the block's (or
    /// row's) other threads first; an element or a cell is stored by the leader anyway.
    fn write_target(&mut self, target: Target<'_>, value: &Expr, v: Reg) -> Result<()> {
        let Ty::Scalar(s) = value.ty else {
            return unsupported("an atomic capture of an array");
        };
        match target {
            Target::Local(l) => {
                let v = match self.cell(l) {
                    Some(_) => v,
                    None => self.broadcast(v, s),
                };
                self.write_local(l, &Val::Scalar(v, s))
            }
            Target::Global(_) => unsupported("an atomic read into a global in device code"),
            Target::Element {
                array,
                indices,
                site,
            } => self.store(array, indices, site, |_| Ok((v, s))),
        }
    }

    /// `acc atomic read`: `v = x` with one relaxed load.
    fn atomic_read(&mut self, loc: Location<'_>, read: Read<'_>) -> Result<()> {
        let Some(first) = loc.first_read(read.value) else {
            return unsupported("an atomic read of nothing");
        };
        let (addr, elem) = self.location_address(loc, load_site(first))?;
        let skip = self.label("noatomic");
        if let Some(lead) = self.leader() {
            self.ins(format!("@!{lead} bra {skip}"));
        }
        let x = self.atomic_load(addr, elem);
        let v = self.with_location(read.value, loc, x, &Vec::new())?;
        self.place(&skip);
        self.write_target(read.target, read.value, v)
    }

    /// The address of the location (bounds-checked at `site`) and its element type.
    fn location_address(
        &mut self,
        loc: Location<'_>,
        site: Option<SiteId>,
    ) -> Result<(Reg, ScalarType)> {
        let (addr, elem) = match loc {
            Location::Element { array, indices } => {
                let a = self.array(array)?;
                let mut idx = Vec::with_capacity(indices.len());
                for i in indices {
                    idx.push(self.index(i)?);
                }
                let site = self.unproven(indices, site);
                (self.element_addr(&a, &idx, site)?, a.elem)
            }
            Location::Global(_) => {
                return unsupported("an atomic update of a global in device code");
            }
            Location::Cell(l) => {
                let (Some(addr), Some(Ty::Scalar(s))) = (self.cell(l), self.local_ty(l)) else {
                    return unsupported("an atomic location that is not a `copy` scalar");
                };
                (addr, s)
            }
        };
        if elem == ScalarType::Bool {
            return unsupported("an atomic operation on a bool");
        }
        Ok((addr, elem))
    }

    fn atomic_load(&mut self, addr: Reg, s: ScalarType) -> Reg {
        let d = self.fresh_of(s);
        let t = match s {
            ScalarType::I32 => "b32",
            ScalarType::I64 => "b64",
            _ => arith(s),
        };
        self.ins(format!("ld.relaxed.gpu.global.{t} {d}, [{addr}]"));
        d
    }

    /// An update or write of `loc`: returns the old value, the new value and the label after the leader's part (placed by the caller for a `capture`; placed
    /// here otherwise). `read` is a capture's read that comes first: its location read
    /// decides the bounds-check site.
    fn atomic_update(
        &mut self,
        loc: Location<'_>,
        value: &Expr,
        store_site: Option<SiteId>,
        read: Option<&Expr>,
        capture: bool,
    ) -> Result<(Reg, Reg, String)> {
        let first_read = read
            .and_then(|r| loc.first_read(r))
            .or_else(|| loc.first_read(value));
        let site = match first_read {
            Some(e) => load_site(e),
            None => store_site,
        };
        let (addr, elem) = self.location_address(loc, site)?;
        let mut evaluated = Vec::new();
        self.evaluate_operands(value, loc, &mut evaluated)?;
        let skip = self.label("noatomic");
        if let Some(lead) = self.leader() {
            self.ins(format!("@!{lead} bra {skip}"));
        }
        let operand = match evaluated.as_slice() {
            &[(_, v)] => Some(v),
            _ => None,
        };
        let result = if !loc.read_in(value) {
            // A write.
            let Some(new) = operand else {
                return unsupported("an atomic write of no value");
            };
            if capture {
                let old = self.fresh_of(elem);
                let t = bits_suffix(elem);
                self.ins(format!("atom.global.exch.{t} {old}, [{addr}], {new}"));
                (old, new)
            } else {
                let t = match elem {
                    ScalarType::I32 => "b32",
                    ScalarType::I64 => "b64",
                    _ => arith(elem),
                };
                self.ins(format!("st.relaxed.gpu.global.{t} [{addr}], {new}"));
                (new, new)
            }
        } else {
            match (operand, rmw_op(value, loc, elem)) {
                (Some(x), Some((op, negate))) => {
                    let x = if negate {
                        let n = self.fresh_of(elem);
                        self.ins(format!("neg.{} {n}, {x}", arith(elem)));
                        n
                    } else {
                        x
                    };
                    let old = self.fresh_of(elem);
                    let t = atom_type(op, elem);
                    self.ins(format!("atom.global.{op}.{t} {old}, [{addr}], {x}"));
                    let new = self.with_location(value, loc, old, &evaluated)?;
                    (old, new)
                }
                _ => self.compare_and_swap(addr, elem, value, loc, &evaluated)?,
            }
        };
        if !capture {
            self.place(&skip);
        }
        Ok((result.0, result.1, skip))
    }

    /// `x = value(x)` as a loop of compare-and-swap on the location's bits.
    fn compare_and_swap(
        &mut self,
        addr: Reg,
        elem: ScalarType,
        value: &Expr,
        loc: Location<'_>,
        evaluated: &Evaluated,
    ) -> Result<(Reg, Reg)> {
        let bt = bits_suffix(elem);
        let old_bits = self.fresh(bits_class(elem));
        self.ins(format!("ld.relaxed.gpu.global.{bt} {old_bits}, [{addr}]"));
        let retry = self.label("cas");
        self.place(&retry);
        let old = if is_float(elem) {
            let f = self.fresh_of(elem);
            self.ins(format!("mov.{bt} {f}, {old_bits}"));
            f
        } else {
            old_bits
        };
        let new = self.with_location(value, loc, old, evaluated)?;
        let new_bits = self.fresh(bits_class(elem));
        self.ins(format!("mov.{bt} {new_bits}, {new}"));
        let seen = self.fresh(bits_class(elem));
        self.ins(format!(
            "atom.global.cas.{bt} {seen}, [{addr}], {old_bits}, {new_bits}"
        ));
        let stored = self.fresh(Class::Pred);
        self.ins(format!("setp.eq.{bt} {stored}, {seen}, {old_bits}"));
        self.ins(format!("mov.{bt} {old_bits}, {seen}"));
        self.ins(format!("@!{stored} bra {retry}"));
        // `old` must survive the loop's reuse of `old_bits`: the value that was replaced.
        let kept = self.fresh_of(elem);
        if is_float(elem) {
            self.ins(format!("mov.{bt} {kept}, {old}"));
        } else {
            // `old_bits` now holds `seen`, equal to the replaced value.
            self.ins(format!("mov.{bt} {kept}, {old_bits}"));
        }
        Ok((kept, new))
    }

    /// Evaluate, in order, the largest parts of `e` that do not read `loc`.
    fn evaluate_operands(
        &mut self,
        e: &Expr,
        loc: Location<'_>,
        out: &mut Evaluated,
    ) -> Result<()> {
        if loc.is_read(e) {
            return Ok(());
        }
        if !loc.read_in(e) {
            let (v, _) = self.scalar(e)?;
            out.push((e as *const Expr, v));
            return Ok(());
        }
        match &e.kind {
            ExprKind::Unary(_, x) | ExprKind::Convert(x) => self.evaluate_operands(x, loc, out),
            ExprKind::Binary(op, l, r, _) if !matches!(op, BinOp::And | BinOp::Or) => {
                self.evaluate_operands(l, loc, out)?;
                self.evaluate_operands(r, loc, out)
            }
            ExprKind::Builtin(Builtin::Min | Builtin::Max, args) => {
                for a in args {
                    self.evaluate_operands(a, loc, out)?;
                }
                Ok(())
            }
            _ => unsupported("an atomic value that reads its location inside a call"),
        }
    }

    /// `e` computed from the location's value `x` and the operands evaluated before.
    fn with_location(
        &mut self,
        e: &Expr,
        loc: Location<'_>,
        x: Reg,
        evaluated: &Evaluated,
    ) -> Result<Reg> {
        if loc.is_read(e) {
            return Ok(x);
        }
        if let Some(&(_, v)) = evaluated.iter().find(|&&(p, _)| std::ptr::eq(p, e)) {
            return Ok(v);
        }
        if !loc.read_in(e) {
            return unsupported("an atomic operand not evaluated");
        }
        let t = match e.ty {
            Ty::Scalar(t) => t,
            Ty::Array { .. } => return unsupported("an atomic value of array type"),
        };
        let scalar = |e: &Expr| match e.ty {
            Ty::Scalar(s) => Ok(s),
            Ty::Array { .. } => unsupported("an atomic value of array type"),
        };
        match &e.kind {
            ExprKind::Unary(op, a) => {
                let v = self.with_location(a, loc, x, evaluated)?;
                self.unary_value(*op, v, scalar(a)?)
            }
            ExprKind::Convert(a) => {
                let v = self.with_location(a, loc, x, evaluated)?;
                Ok(self.convert(v, scalar(a)?, t))
            }
            ExprKind::Binary(op, l, r, site) => {
                let a = self.with_location(l, loc, x, evaluated)?;
                let c = self.with_location(r, loc, x, evaluated)?;
                match self.binary_values(*op, a, scalar(l)?, c, scalar(r)?, r, *site)? {
                    Val::Scalar(v, _) => Ok(v),
                    Val::Array(_) => unsupported("an atomic value of array type"),
                }
            }
            ExprKind::Builtin(b @ (Builtin::Min | Builtin::Max), args) if args.len() == 2 => {
                let a = self.with_location(&args[0], loc, x, evaluated)?;
                let c = self.with_location(&args[1], loc, x, evaluated)?;
                let d = self.fresh_of(t);
                let op = if *b == Builtin::Min { "min" } else { "max" };
                self.ins(format!("{op}.{} {d}, {a}, {c}", arith(t)));
                Ok(d)
            }
            _ => unsupported("an atomic value of this form"),
        }
    }
}
