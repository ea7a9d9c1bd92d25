//! Device routines (`ir::Function`s with `device: Some(level)`) as `.func`s, and their calls.
//!
//! A `seq` routine runs in one thread: its body is generated in `Thread` mode (every store
//! its own, no barriers). Where the caller's threads run the same code redundantly (`Block`
//! or `Row` mode), only the leader calls it; the others wait at the barrier that publishes its
//! stores and take its result from the leader (`Fx::broadcast`).
//!
//! Signature: `.func (.param .T ret) acc_fn_{id}_{name} (.param .b64 err, .param .T a0, …)`:
//! the error record's address first, then the parameters (a scalar in a register of its
//! type, `bool` as a 0/1 `.b32`; an array as its device header's address, from which the
//! routine loads the data pointer and extents).

use acc_lang::hir::{FnId, RoutineLevel};
use acc_lang::ir::{Expr, Function, ScalarType, Ty};

use crate::fx::{unsupported, FnKind, Fx, Mode, Result, Val};
use crate::module::Cx;
use crate::ptx::{Class, Reg};

/// The `.param` type of a scalar.
pub(crate) fn param_type(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool | ScalarType::I32 => "b32",
        ScalarType::I64 => "b64",
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
    }
}

fn param_type_of(t: Ty) -> &'static str {
    match t {
        Ty::Scalar(s) => param_type(s),
        Ty::Array { .. } => "b64",
    }
}

/// What a call needs to know about a routine.
#[derive(Clone, Debug)]
pub(crate) struct FuncSig {
    pub name: String,
    pub params: Vec<Ty>,
    pub ret: Option<Ty>,
}

/// A routine's PTX name: `acc_fn_{id}_{name}`, the name reduced to `[A-Za-z0-9_]`.
pub(crate) fn function_name(f: &Function, id: FnId) -> String {
    let clean: String = f
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("acc_fn_{}_{clean}", id.0)
}

/// The routine's `.func` header (without `;` or body).
fn header(sig: &FuncSig) -> String {
    let ret = match sig.ret {
        Some(t) => format!("(.param .{} ret) ", param_type_of(t)),
        None => String::new(),
    };
    let mut params = vec![".param .b64 err".to_string()];
    for (i, &t) in sig.params.iter().enumerate() {
        params.push(format!(".param .{} a{i}", param_type_of(t)));
    }
    format!(".func {ret}{}({})", sig.name, params.join(", "))
}

/// Generate routine `f` as a `.func`: its prototype and definition.
pub(crate) fn emit_function(cx: &mut Cx<'_>, f: &Function, id: FnId) -> Result<(FuncSig, String)> {
    match f.device {
        Some(RoutineLevel::Seq) => {}
        Some(level) => {
            return unsupported(format!(
                "`{}`, a `{}` routine (only `seq` routines are compiled for the device yet)",
                f.name,
                level.name()
            ))
        }
        None => return unsupported(format!("`{}` is not compiled for the device", f.name)),
    }
    let mut params = Vec::with_capacity(f.params.len());
    for p in &f.params {
        match f.locals.get(p.0 as usize) {
            Some(l) => params.push(l.ty),
            None => return unsupported(format!("a parameter of `{}` without a local", f.name)),
        }
    }
    let sig = FuncSig {
        name: function_name(f, id),
        params,
        ret: f.ret,
    };
    if f.ret.is_some_and(|t| t.is_array()) {
        return unsupported(format!("`{}` returns an array", f.name));
    }
    let mut fx = Fx::new(cx, FnKind::Routine, Mode::Thread);
    fx.ret = f.ret;
    fx.local_tys = f.locals.iter().map(|l| l.ty).collect();
    for l in &f.locals {
        let v = fx.fresh_local(l.ty);
        fx.locals.push(v);
    }
    let err = fx.sp.err;
    fx.ins(format!("ld.param.u64 {err}, [err]"));
    fx.read_special(false);
    for (i, p) in f.params.iter().enumerate() {
        match fx.local(*p)? {
            Val::Scalar(r, s) => {
                let t = param_type(s);
                if s == ScalarType::Bool {
                    let b = fx.fresh(Class::B32);
                    fx.ins(format!("ld.param.{t} {b}, [a{i}]"));
                    fx.ins(format!("setp.ne.u32 {r}, {b}, 0"));
                } else {
                    fx.ins(format!("ld.param.{t} {r}, [a{i}]"));
                }
            }
            Val::Array(a) => {
                fx.ins(format!("ld.param.u64 {}, [a{i}]", a.hdr));
                fx.load_header(&a);
            }
        }
    }
    for (i, l) in f.locals.iter().enumerate() {
        if f.params.iter().any(|p| p.0 as usize == i) {
            continue;
        }
        if let (Val::Scalar(r, s), Ty::Scalar(_)) =
            (fx.local(acc_lang::ir::LocalId(i as u32))?, l.ty)
        {
            fx.set_zero(r, s);
        }
    }
    fx.block(&f.body)?;
    let end = fx.end_label.clone();
    fx.place(&end);
    fx.ins("ret");
    let text = format!(
        "{} \n{{\n{}{}{}}}\n",
        header(&sig),
        fx.declarations(),
        fx.code,
        fx.cold
    );
    Ok((sig, text))
}

/// A routine's prototype line.
pub(crate) fn prototype(sig: &FuncSig) -> String {
    format!("{};\n", header(sig))
}

impl Fx<'_, '_> {
    /// A scalar as the register its `.param` takes.
    pub(crate) fn storable_param(&mut self, r: Reg, s: ScalarType) -> Reg {
        if s == ScalarType::Bool {
            let b = self.fresh(Class::B32);
            self.ins(format!("selp.b32 {b}, 1, 0, {r}"));
            b
        } else {
            r
        }
    }

    /// A call of a user routine.
    pub(crate) fn call(&mut self, id: FnId, args: &[Expr]) -> Result<Option<Val>> {
        let sig = self.cx.function(id)?;
        if sig.params.len() != args.len() {
            return unsupported(format!("a call of `{}` with the wrong arity", sig.name));
        }
        let mut regs = Vec::with_capacity(args.len());
        for (a, &t) in args.iter().zip(&sig.params) {
            let r = match (self.expr(a)?, t) {
                (Val::Scalar(r, s), Ty::Scalar(u)) if s == u => self.storable_param(r, s),
                (Val::Array(a), Ty::Array { .. }) => a.hdr,
                _ => {
                    return unsupported(format!("an argument of `{}` of the wrong type", sig.name))
                }
            };
            regs.push((r, param_type_of(t)));
        }
        let skip = self.label("nocall");
        if let Some(lead) = self.leader() {
            self.ins(format!("@!{lead} bra {skip}"));
        }
        let result = sig
            .ret
            .and_then(|t| t.scalar())
            .map(|s| (self.fresh_of(s), s));
        self.code.push_str("\t{\n");
        self.ins(".param .b64 c_err");
        for (i, (_, t)) in regs.iter().enumerate() {
            self.ins(format!(".param .{t} c_a{i}"));
        }
        if let Some((_, s)) = result {
            self.ins(format!(".param .{} c_ret", param_type(s)));
        }
        let err = self.sp.err;
        self.ins(format!("st.param.b64 [c_err], {err}"));
        for (i, (r, t)) in regs.iter().enumerate() {
            self.ins(format!("st.param.{t} [c_a{i}], {r}"));
        }
        let mut names = vec!["c_err".to_string()];
        names.extend((0..regs.len()).map(|i| format!("c_a{i}")));
        let ret = if result.is_some() { "(c_ret), " } else { "" };
        self.ins(format!("call {ret}{}, ({})", sig.name, names.join(", ")));
        if let Some((r, s)) = result {
            if s == ScalarType::Bool {
                let b = self.fresh(Class::B32);
                self.ins(format!("ld.param.b32 {b}, [c_ret]"));
                self.ins(format!("setp.ne.u32 {r}, {b}, 0"));
            } else {
                self.ins(format!("ld.param.{} {r}, [c_ret]", param_type(s)));
            }
        }
        self.code.push_str("\t}\n");
        self.place(&skip);
        Ok(match result {
            Some((r, s)) if self.mode != Mode::Thread => Some(Val::Scalar(self.broadcast(r, s), s)),
            Some((r, s)) => Some(Val::Scalar(r, s)),
            None => {
                // The routine's stores become visible to the threads that did not call it.
                self.sync();
                None
            }
        })
    }
}
