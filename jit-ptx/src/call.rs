//! Device routines (`ir::Function`s with `device: Some(level)`) as `.func`s, and their calls.
//!
//! A `seq` routine runs in one thread: its body is generated in `Thread` mode (every store
//! its own, no barriers). Where the caller's threads run the same code redundantly (`Block`
//! or `Row` mode), only the leader calls it; the others wait at the barrier that publishes its
//! stores and take its result from the leader (`Fx::broadcast`).
//!
//! A `gang`, `worker` or `vector` routine is called by every thread of the caller's block (or
//! row) and shares its loops' iterations among them like the caller's own code: it is
//! generated once per mode it is called in (`_block` or `_row` after its name), in that mode.
//!
//! Signature: `.func (.param .T ret) NAME (.param .b64 err[, .param .b64 out][, .param .b32
//! gang, .param .b32 ngangs][, .param .b64 g0, …], .param .T a0, …)`: the error record's
//! address; the output buffer's, for a routine that prints (itself or in a routine it calls);
//! for the non-`seq` routines the caller's gang number and count (gang loops share iterations by
//! them); one `.b64` per global the routine (or a routine it calls) reads, in `VarId` order: a
//! scalar's 8-byte slot value, an array's device header (the region's copy of it, never the
//! host's: the kernel passes the header of the region parameter the analysis made for the
//! global); then the parameters (a scalar in a register of its type, `bool`
//! as a 0/1 `.b32`; an array as its device header's address, from which the routine loads the
//! data pointer and extents).

use acc_lang::hir::{FnId, RoutineLevel, VarId};
use acc_lang::ir::{Expr, Function, LocalId, ScalarType, Ty};

use crate::cx::{Cx, FuncSig};
use crate::fx::{FnKind, Fx, Gangs, Val};
use crate::plan::{Entry, Mode, Plan};
use crate::ptx::{Class, Reg};
use crate::{unsupported, PtxError, Result};

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

/// A routine's PTX name: `acc_fn_{id}_{name}` (the name reduced to `[A-Za-z0-9_]`), with
/// `_block` or `_row` for the variants of a non-`seq` routine.
pub(crate) fn function_name(f: &Function, id: FnId, mode: Mode) -> String {
    let clean: String = f
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let variant = match mode {
        Mode::Thread => "",
        Mode::Block => "_block",
        Mode::Row => "_row",
    };
    format!("acc_fn_{}_{clean}{variant}", id.0)
}

/// The routine's `.func` header (without `;` or body).
fn header(sig: &FuncSig) -> String {
    let ret = match sig.ret {
        Some(t) => format!("(.param .{} ret) ", param_type_of(t)),
        None => String::new(),
    };
    let mut params = vec![".param .b64 err".to_string()];
    if sig.prints {
        params.push(".param .b64 out".into());
    }
    if sig.shared {
        params.push(".param .b32 gang".into());
        params.push(".param .b32 ngangs".into());
    }
    for k in 0..sig.globals.len() {
        params.push(format!(".param .b64 g{k}"));
    }
    for (i, &t) in sig.params.iter().enumerate() {
        params.push(format!(".param .{} a{i}", param_type_of(t)));
    }
    format!(".func {ret}{}({})", sig.name, params.join(", "))
}

/// A routine's prototype line.
fn prototype(sig: &FuncSig) -> String {
    format!("{};\n", header(sig))
}

/// Routine `id` for callers in `mode`, generated on first use. A `seq` routine has one
/// variant (it runs in one thread); the others one per mode of their callers.
fn routine(cx: &mut Cx<'_>, id: FnId, mode: Mode) -> Result<FuncSig> {
    let module = cx.module;
    let Some(f) = module.functions.iter().find(|f| f.id == Some(id)) else {
        return unsupported(format!("a call of function {} of an earlier compile", id.0));
    };
    let mode = match f.device {
        Some(RoutineLevel::Seq) => Mode::Thread,
        _ => mode,
    };
    if let Some(done) = cx.routine(id, mode) {
        return done;
    }
    cx.enter(id)?;
    let result = emit_function(cx, f, id, mode);
    cx.leave();
    let entry = match result {
        Ok((sig, text)) => {
            cx.push_definition(prototype(&sig), text);
            Ok(sig)
        }
        Err(PtxError::Unsupported(why)) => Err(format!("routine `{}`: {why}", f.name)),
    };
    cx.record_routine(id, mode, entry.clone());
    entry.map_err(PtxError::Unsupported)
}

/// Generate routine `f` as a `.func` for callers in `mode`: its signature and definition.
fn emit_function<'m>(
    cx: &mut Cx<'m>,
    f: &'m Function,
    id: FnId,
    mode: Mode,
) -> Result<(FuncSig, String)> {
    let sig = signature(cx, f, id, mode)?;
    let entry = Entry {
        mode: if sig.shared { mode } else { Mode::Thread },
        reductions: &[],
        cells: &[],
        unchecked: cx.options.unchecked,
    };
    let mut fx = Fx::new(cx, FnKind::Routine, Plan::new(&f.body, &entry));
    fx.set_ret(f.ret);
    fx.add_locals(f.locals.iter().map(|l| l.ty));
    let err = fx.sp().err;
    fx.ins(format!("ld.param.u64 {err}, [err]"));
    fx.read_special(if sig.shared {
        Gangs::Params
    } else {
        Gangs::One
    });
    bind_params(&mut fx, f, &sig.globals)?;
    fx.block(&f.body)?;
    let end = fx.end_label();
    fx.place(&end);
    fx.ins("ret");
    let sig = FuncSig {
        row_barriers: fx.uses_row_barriers(),
        scratch: fx.uses_scratch(),
        prints: fx.prints(),
        ..sig
    };
    let text = format!(
        "{} \n{{\n{}{}{}}}\n",
        header(&sig),
        fx.declarations(),
        fx.take_code(),
        fx.cold()
    );
    Ok((sig, text))
}

/// Routine `f`'s signature for callers in `mode`, before its body is generated (which fills
/// in what the body uses), or why it cannot be generated.
fn signature(cx: &mut Cx<'_>, f: &Function, id: FnId, mode: Mode) -> Result<FuncSig> {
    let shared = match f.device {
        Some(RoutineLevel::Seq) => false,
        Some(_) => true,
        None => return unsupported(format!("`{}` is not compiled for the device", f.name)),
    };
    if shared && mode == Mode::Thread {
        return unsupported(format!(
            "`{}`, a `{}` routine, called inside a vector loop",
            f.name,
            f.device.map_or("", |l| l.name())
        ));
    }
    let mut params = Vec::with_capacity(f.params.len());
    for p in &f.params {
        match f.locals.get(p.0 as usize) {
            Some(l) => params.push(l.ty),
            None => return unsupported(format!("a parameter of `{}` without a local", f.name)),
        }
    }
    if f.ret.is_some_and(|t| t.is_array()) {
        return unsupported(format!("`{}` returns an array", f.name));
    }
    let mode = if shared { mode } else { Mode::Thread };
    Ok(FuncSig {
        name: function_name(f, id, mode),
        params,
        ret: f.ret,
        shared,
        globals: cx.globals_of(id)?,
        row_barriers: false,
        scratch: false,
        prints: false,
    })
}

/// The routine's globals and parameters from its `.param`s; its other locals at zero.
fn bind_params(fx: &mut Fx<'_, '_>, f: &Function, globals: &[(VarId, Ty)]) -> Result<()> {
    for (k, &(g, ty)) in globals.iter().enumerate() {
        // A global array: the caller passes its device header.
        if ty.is_array() {
            if let Val::Array(a) = fx.fresh_local(ty) {
                fx.ins(format!("ld.param.u64 {}, [g{k}]", a.hdr));
                fx.load_header(&a);
                fx.add_global(g, a.hdr);
                fx.add_global_array(g, a);
                continue;
            }
        }
        let r = fx.fresh(Class::B64);
        fx.ins(format!("ld.param.u64 {r}, [g{k}]"));
        fx.add_global(g, r);
    }
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
        if let (Val::Scalar(r, s), Ty::Scalar(_)) = (fx.local(LocalId(i as u32))?, l.ty) {
            fx.set_zero(r, s);
        }
    }
    Ok(())
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
        let mode = self.mode();
        let sig = routine(self.cx(), id, mode)?;
        self.note_call(&sig);
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
        let mut globals = Vec::with_capacity(sig.globals.len());
        for (g, _) in &sig.globals {
            match self.global(*g) {
                Some(r) => globals.push(r),
                None => return unsupported("a global that the caller was not given"),
            }
        }
        // A `seq` routine runs in the leader alone where threads share the code.
        let single = !sig.shared;
        let skip = self.label("nocall");
        if let (true, Some(lead)) = (single, self.leader()) {
            self.ins(format!("@!{lead} bra {skip}"));
        }
        let result = sig
            .ret
            .and_then(|t| t.scalar())
            .map(|s| (self.fresh_of(s), s));
        // The caller's own `out` parameter (it prints, through this call).
        let out = sig.prints.then(|| {
            let out = self.fresh(Class::B64);
            self.ins(format!("ld.param.u64 {out}, [out]"));
            out
        });
        self.open_scope();
        let mut names = vec!["c_err".to_string()];
        self.ins(".param .b64 c_err");
        let err = self.sp().err;
        let mut stores = vec![format!("st.param.b64 [c_err], {err}")];
        if let Some(out) = out {
            self.ins(".param .b64 c_out");
            stores.push(format!("st.param.b64 [c_out], {out}"));
            names.push("c_out".into());
        }
        if sig.shared {
            self.ins(".param .b32 c_gang");
            self.ins(".param .b32 c_ngangs");
            stores.push(format!("st.param.b32 [c_gang], {}", self.sp().gang));
            stores.push(format!("st.param.b32 [c_ngangs], {}", self.sp().ngangs));
            names.push("c_gang".into());
            names.push("c_ngangs".into());
        }
        for (k, r) in globals.iter().enumerate() {
            self.ins(format!(".param .b64 c_g{k}"));
            stores.push(format!("st.param.b64 [c_g{k}], {r}"));
            names.push(format!("c_g{k}"));
        }
        for (i, (r, t)) in regs.iter().enumerate() {
            self.ins(format!(".param .{t} c_a{i}"));
            stores.push(format!("st.param.{t} [c_a{i}], {r}"));
            names.push(format!("c_a{i}"));
        }
        if let Some((_, s)) = result {
            self.ins(format!(".param .{} c_ret", param_type(s)));
        }
        for s in stores {
            self.ins(s);
        }
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
        self.close_scope();
        self.place(&skip);
        if !single || self.mode() == Mode::Thread {
            return Ok(result.map(|(r, s)| Val::Scalar(r, s)));
        }
        Ok(match result {
            Some((r, s)) => Some(Val::Scalar(self.broadcast(r, s), s)),
            None => {
                // The routine's stores become visible to the threads that did not call it.
                self.sync();
                None
            }
        })
    }
}
