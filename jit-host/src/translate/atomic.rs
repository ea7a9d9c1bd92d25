//! `acc atomic` (LANGUAGE.md 7.8) as real atomic operations, so that gangs running at the same
//! time on different threads update shared array elements correctly.
//!
//! Each `ir::Stmt::Atomic` carries its form, classified by lowering (jit-ptx acts on the
//! same): which location is accessed atomically — an array element, a global scalar,
//! or a region's `copy` scalar, which all gangs share through a memory cell (`Tx::cells`) —
//! where a read or captured value goes (a local, a global, an element: an ordinary store), and
//! whether a capture sees the old or the new value. A gang's own scalar stays plain (a
//! region's other scalars are per gang).
//!
//! How each is done:
//! - the element's address is computed once, with its bounds check (at the site of the
//!   location's first read, as the plain statement would report it);
//! - the parts of the value that do not read the location are evaluated once, before anything
//!   is read or written, in their order;
//! - `i32`/`i64` `+ - & | ^ min max` of the old value and such an operand is one `atomic_rmw`;
//!   a write in a capture is an `atomic_rmw` exchange;
//! - every other update (`*`, `/`, `e - x`, conversions, and all float updates) is a
//!   compare-and-swap loop on the location's bits: read the old value, compute the new one,
//!   store it if the location still holds the old bits, else retry with what it holds;
//! - a read is an `atomic_load`, a write an `atomic_store`.
//!
//! A capture's `v = x` gets the old value when it comes first and the new one otherwise.

use acc_lang::builtins::Builtin;
use acc_lang::ir::atomic::{load_site, rmw_of, Location, Parts, Read, Rmw, Target, Write};
use acc_lang::ir::{Atomic, Expr, ExprKind, ScalarType, SiteId};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, AtomicRmwOp, BlockArg, InstBuilder, MemFlagsData, Type, Value};

use super::expr::scalar_of;
use super::{is_float, scalar_type, Tx};
use crate::JitError;

/// Values of the subexpressions evaluated before the atomic operation, by node address.
type Evaluated = Vec<(*const Expr, Value)>;

/// The integer type of a scalar's bits.
fn bits_type(t: Type) -> Type {
    match t {
        types::F32 => types::I32,
        types::F64 => types::I64,
        t => t,
    }
}

fn flags() -> MemFlagsData {
    MemFlagsData::trusted()
}

impl Tx<'_, '_> {
    /// An `ir::Stmt::Atomic`, by the parts of its form. One without a form is a compiler bug,
    /// reported as such: never run as plain statements, which would lose updates without a
    /// word.
    pub(super) fn atomic(&mut self, a: &Atomic) -> Result<(), JitError> {
        let parts = a
            .parts()
            .map_err(|e| JitError::Unsupported(format!("an `acc atomic` statement: {e}")))?;
        match parts {
            // The gang's own scalar: no other thread sees it.
            Parts::Private => self.stmt(&a.body),
            Parts::Read { location, read } => self.atomic_read(location, read),
            Parts::Update(update) => self.atomic_update(&update, None).map(|_| ()),
            Parts::Capture {
                update,
                read,
                read_first,
            } => {
                let (old, new) = self.atomic_update(&update, read_first.then_some(&read))?;
                let seen = if read_first { old } else { new };
                let v = self.with_location(read.value, update.location, seen, &Vec::new())?;
                self.assign(read.target, v)
            }
        }
    }

    /// `v = value` of a read, with `value` already computed: an ordinary store (only the
    /// location's access is atomic).
    fn assign(&mut self, target: Target<'_>, v: Value) -> Result<(), JitError> {
        match target {
            Target::Local(l) => self.set_local(l, v)?,
            Target::Global(g) => {
                let (base, offset) = self.global_addr(g)?;
                self.b.ins().store(flags(), v, base, offset);
            }
            Target::Element {
                array,
                indices,
                site,
            } => {
                let site = self.unproven(indices, site);
                let (addr, _) = self.element_addr(array, indices, site)?;
                self.b.ins().store(flags(), v, addr, 0);
            }
        }
        Ok(())
    }

    /// `acc atomic read`: `v = x` with one atomic load.
    fn atomic_read(&mut self, loc: Location<'_>, read: Read<'_>) -> Result<(), JitError> {
        let t = scalar_type(self.location_type(read.value, loc)?);
        let site = loc.first_read(read.value).and_then(load_site);
        let addr = self.location_address(loc, site, loc.read_indices(read.value))?;
        let bits = self.b.ins().atomic_load(bits_type(t), flags(), addr);
        let old = self.value_of_bits(t, bits);
        let v = self.with_location(read.value, loc, old, &Vec::new())?;
        self.assign(read.target, v)
    }

    /// An update or write of `loc`; returns the old and the new value. `read` is a capture's
    /// read that comes first: its location read decides the bounds-check site.
    fn atomic_update(
        &mut self,
        update: &Write<'_>,
        read: Option<&Read<'_>>,
    ) -> Result<(Value, Value), JitError> {
        let loc = update.location;
        let elem = match loc {
            Location::Element { array, .. } => match array.ty {
                acc_lang::ir::Ty::Array { elem, .. } => elem,
                _ => return Err(JitError::Unsupported("indexing a scalar".into())),
            },
            Location::Global(_) | Location::Cell(_) => scalar_of(update.value, "an atomic update")?,
        };
        let t = scalar_type(elem);
        // The plain statements would check the location where it is first read.
        let first_read = read
            .and_then(|r| loc.first_read(r.value))
            .or_else(|| loc.first_read(update.value));
        let (site, indices) = match first_read {
            Some(e) => (load_site(e), loc.read_indices(e)),
            None => (update.site, loc.indices()),
        };
        let addr = self.location_address(loc, site, indices)?;
        let mut evaluated = Vec::new();
        self.evaluate_operands(update.value, loc, &mut evaluated)?;

        // The one operand of a write or of a read-modify-write instruction.
        let operand = match evaluated.as_slice() {
            &[(_, v)] => Some(v),
            _ => None,
        };
        match (operand, rmw_instruction(update.value, loc, elem)) {
            // A write, whose old value nothing needs.
            (Some(new), Some(AtomicRmwOp::Xchg)) if read.is_none() => {
                let bits = self.bits_of(t, new);
                self.b.ins().atomic_store(flags(), bits, addr);
                Ok((new, new))
            }
            (Some(x), Some(op)) => {
                let x = self.bits_of(t, x);
                let old = self.b.ins().atomic_rmw(bits_type(t), flags(), op, addr, x);
                let old = self.value_of_bits(t, old);
                let new = self.with_location(update.value, loc, old, &evaluated)?;
                Ok((old, new))
            }
            _ => self.compare_and_swap(t, addr, update.value, loc, &evaluated),
        }
    }

    /// The compare-and-swap loop of an update `x = value(x)`: the old and the new value.
    fn compare_and_swap(
        &mut self,
        t: Type,
        addr: Value,
        value: &Expr,
        loc: Location<'_>,
        evaluated: &Evaluated,
    ) -> Result<(Value, Value), JitError> {
        let bt = bits_type(t);
        let first = self.b.ins().atomic_load(bt, flags(), addr);
        let retry = self.b.create_block();
        let old_bits = self.b.append_block_param(retry, bt);
        let done = self.b.create_block();
        self.b.ins().jump(retry, &[BlockArg::Value(first)]);
        self.b.switch_to_block(retry);
        let old = self.value_of_bits(t, old_bits);
        let new = self.with_location(value, loc, old, evaluated)?;
        let new_bits = self.bits_of(t, new);
        let seen = self.b.ins().atomic_cas(flags(), addr, old_bits, new_bits);
        let stored = self.b.ins().icmp(IntCC::Equal, seen, old_bits);
        self.b
            .ins()
            .brif(stored, done, &[], retry, &[BlockArg::Value(seen)]);
        self.b.switch_to_block(done);
        Ok((old, new))
    }

    /// The address of the location, bounds-checked at `site` unless a versioned loop proved
    /// the access (`indices` are the checked access's).
    fn location_address(
        &mut self,
        loc: Location<'_>,
        site: Option<SiteId>,
        indices: &[Expr],
    ) -> Result<Value, JitError> {
        match loc {
            Location::Element { array, indices: at } => {
                let site = self.unproven(indices, site);
                let (addr, _) = self.element_addr(array, at, site)?;
                Ok(addr)
            }
            Location::Global(g) => {
                let (base, offset) = self.global_addr(g)?;
                let offset = self.iconst(types::I64, offset as i64);
                Ok(self.b.ins().iadd(base, offset))
            }
            Location::Cell(l) => {
                let (var, _) = self.local(l)?;
                Ok(self.b.use_var(var))
            }
        }
    }

    fn location_type(&self, value: &Expr, loc: Location<'_>) -> Result<ScalarType, JitError> {
        let read = loc
            .first_read(value)
            .ok_or_else(|| JitError::Unsupported("an atomic read of nothing".into()))?;
        scalar_of(read, "an atomic read")
    }

    /// Evaluate, in order, the largest parts of `e` that do not read `loc`.
    fn evaluate_operands(
        &mut self,
        e: &Expr,
        loc: Location<'_>,
        out: &mut Evaluated,
    ) -> Result<(), JitError> {
        if loc.is_read(e) {
            return Ok(());
        }
        if !loc.read_in(e) {
            let v = self.expr(e)?;
            out.push((e as *const Expr, v));
            return Ok(());
        }
        match &e.kind {
            ExprKind::Unary(_, x) | ExprKind::Convert(x) => self.evaluate_operands(x, loc, out),
            ExprKind::Binary(_, l, r, _) => {
                self.evaluate_operands(l, loc, out)?;
                self.evaluate_operands(r, loc, out)
            }
            ExprKind::Builtin(Builtin::Min | Builtin::Max, args) => {
                for a in args {
                    self.evaluate_operands(a, loc, out)?;
                }
                Ok(())
            }
            _ => Err(JitError::Unsupported(
                "an atomic value that reads its location inside a call".into(),
            )),
        }
    }

    /// `e` with the location's value `x` and the operands evaluated before.
    fn with_location(
        &mut self,
        e: &Expr,
        loc: Location<'_>,
        x: Value,
        evaluated: &Evaluated,
    ) -> Result<Value, JitError> {
        if loc.is_read(e) {
            return Ok(x);
        }
        if let Some(&(_, v)) = evaluated.iter().find(|&&(p, _)| std::ptr::eq(p, e)) {
            return Ok(v);
        }
        if !loc.read_in(e) {
            // A write's value (`evaluated` holds it already); reached only for malformed IR.
            return Err(JitError::Unsupported(
                "an atomic operand not evaluated".into(),
            ));
        }
        let t = scalar_of(e, "an atomic value")?;
        match &e.kind {
            ExprKind::Unary(op, a) => {
                let at = scalar_of(a, "an operator")?;
                let v = self.with_location(a, loc, x, evaluated)?;
                Ok(self.unary_value(*op, at, v))
            }
            ExprKind::Convert(a) => {
                let from = scalar_of(a, "a conversion")?;
                let v = self.with_location(a, loc, x, evaluated)?;
                Ok(self.convert(v, from, t))
            }
            ExprKind::Binary(op, l, r, site) => {
                let lt = scalar_of(l, "an operator")?;
                let a = self.with_location(l, loc, x, evaluated)?;
                let c = self.with_location(r, loc, x, evaluated)?;
                self.binary_values(*op, lt, a, c, r, *site)
            }
            ExprKind::Builtin(b @ (Builtin::Min | Builtin::Max), args) if args.len() == 2 => {
                let a = self.with_location(&args[0], loc, x, evaluated)?;
                let c = self.with_location(&args[1], loc, x, evaluated)?;
                Ok(match (*b, is_float(t)) {
                    (Builtin::Min, true) => self.c_fmin(a, c),
                    (Builtin::Max, true) => self.c_fmax(a, c),
                    (Builtin::Min, false) => self.b.ins().smin(a, c),
                    _ => self.b.ins().smax(a, c),
                })
            }
            _ => Err(JitError::Unsupported("an atomic value of this form".into())),
        }
    }

    fn bits_of(&mut self, t: Type, v: Value) -> Value {
        if t.is_float() {
            self.b.ins().bitcast(bits_type(t), MemFlagsData::new(), v)
        } else {
            v
        }
    }

    fn value_of_bits(&mut self, t: Type, v: Value) -> Value {
        if t.is_float() {
            self.b.ins().bitcast(t, MemFlagsData::new(), v)
        } else {
            v
        }
    }
}

/// The single read-modify-write instruction of `value` as an update of `loc` of an integer
/// element (`ir::atomic::rmw_of`), or a write in a capture (an exchange).
fn rmw_instruction(value: &Expr, loc: Location<'_>, elem: ScalarType) -> Option<AtomicRmwOp> {
    if !loc.read_in(value) {
        return Some(AtomicRmwOp::Xchg);
    }
    if !matches!(elem, ScalarType::I32 | ScalarType::I64) {
        return None;
    }
    Some(match rmw_of(value, loc, elem)? {
        Rmw::Add => AtomicRmwOp::Add,
        Rmw::Sub => AtomicRmwOp::Sub,
        Rmw::And => AtomicRmwOp::And,
        Rmw::Or => AtomicRmwOp::Or,
        Rmw::Xor => AtomicRmwOp::Xor,
        Rmw::Min => AtomicRmwOp::Smin,
        Rmw::Max => AtomicRmwOp::Smax,
    })
}
