//! IR to Cranelift IR, one function at a time.
//!
//! `Tx` holds the state of one function being built: the builder, a Cranelift variable per IR
//! local, the context pointer, the enclosing loops and the block that returns after a failure.
//! Statements are in `stmt`, expressions in `expr`, array addressing in `array`, built-ins in
//! `builtin`, compute regions and launches in `region`.

mod array;
mod atomic;
mod bounds;
mod builtin;
mod directive;
mod expr;
mod hoist;
mod inline;
mod region;
pub(crate) use region::region_desc;
mod stmt;

use std::collections::{HashMap, HashSet};

use acc_lang::analysis::RegionId;
use acc_lang::builtins::FormatPiece;
use acc_lang::hir::{Const, FnId};
use acc_lang::ir::{self, ScalarType, Ty};
use acc_runtime::abi::{
    CTX_GLOBALS_OFFSET, CTX_INTERRUPT_OFFSET, CTX_MAX_DEPTH_OFFSET, CTX_STACK_LIMIT_OFFSET,
    CTX_STATUS_OFFSET,
};
use cranelift_codegen::ir::{
    types, AbiParam, Block, FuncRef, Function, InstBuilder, MemFlagsData, Signature, Type, Value,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Linkage, Module};

use crate::externs::{self, A};
use crate::{GlobalSlots, JitError};

/// Pointers (handles, the context, buffers) are 64-bit.
pub(crate) const PTR: Type = types::I64;

/// The site number passed for a run-time check whose IR carries no site.
pub(crate) const NO_SITE: u32 = u32::MAX;

/// Addresses of the kept string literals and `printf` formats: `(ptr, len)`.
pub(crate) struct Strings {
    pub strings: Vec<(usize, usize)>,
    pub formats: Vec<(usize, usize)>,
}

/// What a compile knows while translating its functions.
pub(crate) struct Env<'a> {
    pub module: &'a ir::Module,
    /// The user functions this compile defines.
    pub local_functions: &'a HashMap<FnId, FuncId>,
    /// Those of earlier compiles whose units are alive, called by address.
    pub earlier_functions: &'a HashMap<FnId, crate::Defined>,
    /// The address of each region's `acc_runtime::launch::RegionDesc`, which launches pass.
    pub region_descs: &'a HashMap<RegionId, usize>,
    pub slots: &'a GlobalSlots,
    pub symbols: &'a HashSet<&'static str>,
    pub strings: &'a [(usize, usize)],
    pub formats: &'a [(usize, usize)],
    /// This compile's functions compiled as gang routines, which take the caller's gang and
    /// gang count as two more parameters (`Defined::gang_routine` says it of earlier ones).
    pub local_gang_routines: &'a HashSet<FnId>,
    /// Functions of this compile small enough to inline at their calls (`inline`).
    pub inlinable: HashMap<FnId, &'a ir::Function>,
    /// The earlier units this compile's code calls into, which must outlive it.
    pub calls_into: std::cell::RefCell<std::collections::BTreeSet<crate::UnitId>>,
    /// The global slots this compile's code uses, which must not be reused while it lives.
    pub globals_used: std::cell::RefCell<std::collections::BTreeSet<u32>>,
}

/// How code calls a user function.
pub(crate) enum Callee<'a> {
    /// A function of this compile: a direct call.
    Local(FuncId),
    /// A function of an earlier unit: a call through its address.
    Earlier(&'a crate::Defined),
}

impl Env<'_> {
    pub fn callee(&self, id: FnId) -> Option<Callee<'_>> {
        match self.local_functions.get(&id) {
            Some(&f) => Some(Callee::Local(f)),
            None => self.earlier_functions.get(&id).map(Callee::Earlier),
        }
    }

    pub fn is_gang_routine(&self, id: FnId) -> bool {
        self.local_gang_routines.contains(&id)
            || self
                .earlier_functions
                .get(&id)
                .is_some_and(|d| d.gang_routine)
    }
}

/// A function that takes `(gang, num_gangs)` after its parameters: a gang routine, whose gang
/// loops share their iterations over the gangs of the region that calls it.
pub(crate) fn is_gang_routine(f: &ir::Function) -> bool {
    f.device == Some(acc_lang::hir::RoutineLevel::Gang)
}

/// The kinds of native function a compile defines.
pub(crate) enum FnKind<'a> {
    Function(&'a ir::Function),
    Region(&'a ir::Region),
    Main(&'a ir::Function),
}

/// The Cranelift type of a value of IR type `t`.
pub(crate) fn clif_type(t: Ty) -> Type {
    match t {
        Ty::Scalar(s) => scalar_type(s),
        Ty::Array { .. } => PTR,
    }
}

pub(crate) fn scalar_type(s: ScalarType) -> Type {
    match s {
        ScalarType::Bool => types::I8,
        ScalarType::I32 => types::I32,
        ScalarType::I64 => types::I64,
        ScalarType::F32 => types::F32,
        ScalarType::F64 => types::F64,
    }
}

pub(crate) fn is_float(s: ScalarType) -> bool {
    matches!(s, ScalarType::F32 | ScalarType::F64)
}

/// The ABI parameter of an IR type: bools zero-extended and `i32`s sign-extended, as C
/// compilers (and Rust's `extern "C"`) expect of their callers.
fn abi_param(t: Type) -> AbiParam {
    match t {
        types::I8 => AbiParam::new(t).uext(),
        types::I32 => AbiParam::new(t).sext(),
        _ => AbiParam::new(t),
    }
}

/// `(ctx, depth, params…) -> ret`: `depth` is the call's nesting (1 for a call from top-level
/// code, a region or the host), which the callee compares with `Ctx::max_depth`.
pub(crate) fn function_signature(jit: &JITModule, f: &ir::Function) -> Result<Signature, JitError> {
    let mut sig = jit.make_signature();
    sig.params.push(AbiParam::new(PTR));
    sig.params.push(AbiParam::new(types::I64));
    for &p in &f.params {
        let local = f.locals.get(p.0 as usize).ok_or_else(|| {
            JitError::Unsupported(format!("parameter {p:?} of `{}` has no local", f.name))
        })?;
        sig.params.push(abi_param(clif_type(local.ty)));
    }
    if is_gang_routine(f) {
        sig.params.push(AbiParam::new(types::I64));
        sig.params.push(AbiParam::new(types::I64));
    }
    if let Some(r) = f.ret {
        sig.returns.push(abi_param(clif_type(r)));
    }
    Ok(sig)
}

/// `(ctx, args, gang, num_gangs)`.
pub(crate) fn region_signature(jit: &JITModule) -> Signature {
    let mut sig = jit.make_signature();
    for t in [PTR, PTR, types::I64, types::I64] {
        sig.params.push(AbiParam::new(t));
    }
    sig
}

/// `(ctx)`.
pub(crate) fn main_signature(jit: &JITModule) -> Signature {
    let mut sig = jit.make_signature();
    sig.params.push(AbiParam::new(PTR));
    sig
}

/// The format text `acc_printf` receives: the pieces written back, `%` in text doubled.
pub(crate) fn format_text(pieces: &[FormatPiece]) -> String {
    let mut s = String::new();
    for p in pieces {
        match p {
            FormatPiece::Text(t) => s += &t.replace('%', "%%"),
            FormatPiece::Spec(spec) => s += &spec.text(),
        }
    }
    s
}

/// Where `break` and `continue` of a loop go.
struct LoopTargets {
    continue_to: Block,
    break_to: Block,
    /// The interrupt word's address, loaded before the loop: loops inside reuse it.
    word: Value,
}

/// Which gang runs the code being translated, in a compute region or a gang routine: gang
/// loops run only this gang's share of their iterations.
#[derive(Clone, Copy)]
struct Gang {
    gang: Value,
    num_gangs: Value,
}

/// One function under construction.
pub(crate) struct Tx<'a, 'f> {
    b: FunctionBuilder<'f>,
    jit: &'a mut JITModule,
    env: &'a Env<'a>,
    ctx: Value,
    /// `ctx.globals`, loaded on entry (the engine does not move the globals during a run).
    globals: Value,
    locals: Vec<(Variable, Ty)>,
    /// In a region: the `InOut` scalars that are not reductions (`copy` scalars). The gangs
    /// share each through a memory cell the runtime provides; the local's variable holds the
    /// cell's address, and reads, writes and atomics go through it.
    cells: HashSet<ir::LocalId>,
    loops: Vec<LoopTargets>,
    /// Returns a dummy value: a call failed and `ctx.status` is set.
    fail: Block,
    ret: Option<Ty>,
    gang: Option<Gang>,
    /// In a region: where its body ends (reductions and write-back follow); `return` goes there.
    epilogue: Option<Block>,
    imports: HashMap<String, FuncRef>,
    users: HashMap<FuncId, FuncRef>,
    /// Globals loaded before the enclosing loops, which do not change them (`hoist`).
    cached_globals: HashMap<ir::GlobalId, Value>,
    /// Accesses whose bounds an enclosing loop's pre-check has proven (`bounds`).
    proven: HashSet<usize>,
    /// The site of the checked built-in being called, which its failures report.
    call_site: Option<ir::SiteId>,
    /// How many versioned loops enclose the code being translated.
    version_depth: u32,
    /// In an inlined body: where its `return` goes (`inline`).
    inline_exit: Option<Block>,
    /// How many inlined bodies enclose the code being translated.
    inline_depth: u32,
    /// Translating a user function (not a `main` or a region, whose code outside loops runs
    /// once per run or per gang).
    in_function: bool,
    /// The IR size of all the bodies inlined into this function so far.
    inlined_size: usize,
    /// The nesting of the code being translated: the function's `depth` parameter (0 in a
    /// `main` or a region), plus one in each inlined body. Calls pass it plus one.
    depth: Value,
    /// In a region that runs on a copy of the global slots: the engine's slots, which
    /// `ctx.globals` gets back on every way out (`region::device_globals`).
    host_globals: Option<Value>,
}

/// Build `func`'s body.
pub(crate) fn translate(
    jit: &mut JITModule,
    env: &Env<'_>,
    fctx: &mut FunctionBuilderContext,
    func: &mut Function,
    kind: FnKind<'_>,
) -> Result<(), JitError> {
    let mut b = FunctionBuilder::new(func, fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let params = b.block_params(entry).to_vec();
    let ctx = params[0];
    // A function's own parameters follow `ctx` and its depth; `main` and regions are depth 0.
    let (depth, params) = match kind {
        FnKind::Function(_) => (params[1], params[2..].to_vec()),
        FnKind::Main(_) | FnKind::Region(_) => {
            (b.ins().iconst(types::I64, 0), params[1..].to_vec())
        }
    };
    let globals = b.ins().load(
        PTR,
        MemFlagsData::trusted().with_readonly().with_can_move(),
        ctx,
        CTX_GLOBALS_OFFSET,
    );
    let fail = b.create_block();
    b.set_cold_block(fail);
    let (locals, ret) = match &kind {
        FnKind::Function(f) | FnKind::Main(f) => (&f.locals, f.ret),
        FnKind::Region(r) => (&r.locals, None),
    };
    let locals = locals
        .iter()
        .map(|l| (b.declare_var(clif_type(l.ty)), l.ty))
        .collect();
    let mut tx = Tx {
        b,
        jit,
        env,
        ctx,
        globals,
        locals,
        cells: HashSet::new(),
        loops: Vec::new(),
        fail,
        ret,
        gang: None,
        epilogue: None,
        imports: HashMap::new(),
        users: HashMap::new(),
        cached_globals: HashMap::new(),
        proven: HashSet::new(),
        call_site: None,
        version_depth: 0,
        inline_exit: None,
        inline_depth: 0,
        in_function: matches!(kind, FnKind::Function(_)),
        inlined_size: 0,
        host_globals: None,
        depth,
    };
    match kind {
        FnKind::Function(f) | FnKind::Main(f) => tx.function_body(f, &params)?,
        FnKind::Region(r) => tx.region_body(r, &params)?,
    }
    tx.b.switch_to_block(tx.fail);
    // A failed region leaves too: the host's code after it reads the engine's slots.
    tx.restore_globals(tx.host_globals);
    tx.return_dummy();
    tx.b.seal_all_blocks();
    let config = tx.jit.target_config();
    tx.b.finalize(config);
    Ok(())
}

impl<'a, 'f> Tx<'a, 'f> {
    fn function_body(&mut self, f: &ir::Function, params: &[Value]) -> Result<(), JitError> {
        if let Some(site) = f.entry_site {
            self.check_stack(site)?;
            self.check_depth(site)?;
        }
        if is_gang_routine(f) {
            if let [.., gang, num_gangs] = *params {
                self.gang = Some(Gang { gang, num_gangs });
            }
        }
        self.bind_params(f, params);
        self.block(&f.body)?;
        // Falling off the end: a `main`, or a function whose every path returned already.
        self.return_dummy();
        Ok(())
    }

    /// A user function's entry: when the stack pointer is below `ctx.stack_limit`, record a
    /// stack overflow at `site` and leave, so that runaway recursion ends in an error the
    /// REPL and the embedding host survive instead of the thread's guard page. (One compare
    /// with a value the function loads anyway from its first cache line.)
    fn check_stack(&mut self, site: ir::SiteId) -> Result<(), JitError> {
        let sp = self.b.ins().get_stack_pointer(PTR);
        let limit = self.b.ins().load(
            PTR,
            MemFlagsData::trusted(),
            self.ctx,
            CTX_STACK_LIMIT_OFFSET,
        );
        let exhausted = self.b.ins().icmp(
            cranelift_codegen::ir::condcodes::IntCC::UnsignedLessThan,
            sp,
            limit,
        );
        self.fail_when(exhausted, "acc_rt_stack_overflow", site)
    }

    /// When `cond` holds, call the runtime's `report(ctx, site)` (which records the error) and
    /// leave: a cold block, so that the check costs one predictable branch.
    pub(super) fn fail_when(
        &mut self,
        cond: Value,
        report: &str,
        site: ir::SiteId,
    ) -> Result<(), JitError> {
        let fail = self.b.create_block();
        let ok = self.b.create_block();
        self.b.set_cold_block(fail);
        self.b.ins().brif(cond, fail, &[], ok, &[]);
        self.b.switch_to_block(fail);
        let site = self.iconst(types::I32, i64::from(site.0));
        let ctx = self.ctx;
        self.call_rt_and_fail(report, &[ctx, site])?;
        self.b.switch_to_block(ok);
        Ok(())
    }

    /// The run's interrupt word's address, loaded before a loop (it does not change while the
    /// run goes on), or the enclosing loop's (a short inner loop entered again and again
    /// loads nothing).
    pub(super) fn interrupt_word(&mut self) -> Value {
        if let Some(outer) = self.loops.last() {
            return outer.word;
        }
        self.b
            .ins()
            .load(PTR, MemFlagsData::trusted(), self.ctx, CTX_INTERRUPT_OFFSET)
    }

    /// At a loop's back edge: stop at `site` when the interrupt word (at `word`) is set. An
    /// atomic load, so that no optimization takes it out of the loop; one predictable branch.
    pub(super) fn check_interrupt(
        &mut self,
        word: Value,
        site: ir::SiteId,
    ) -> Result<(), JitError> {
        let w = self
            .b
            .ins()
            .atomic_load(types::I32, MemFlagsData::trusted(), word);
        self.fail_when(w, "acc_rt_interrupted", site)
    }

    /// A user function's entry: a call deeper than `ctx.max_depth` is an error at `site` (the
    /// function's name). One load from the context's first cache line, one compare.
    fn check_depth(&mut self, site: ir::SiteId) -> Result<(), JitError> {
        let limit = self.b.ins().load(
            types::I64,
            MemFlagsData::trusted(),
            self.ctx,
            CTX_MAX_DEPTH_OFFSET,
        );
        let deeper = self.b.ins().icmp(
            cranelift_codegen::ir::condcodes::IntCC::UnsignedGreaterThan,
            self.depth,
            limit,
        );
        self.fail_when(deeper, "acc_rt_depth_limit", site)
    }

    /// Define `f`'s parameters as `params` and its other locals as zero.
    fn bind_params(&mut self, f: &ir::Function, params: &[Value]) {
        for (i, &(var, ty)) in self.locals.clone().iter().enumerate() {
            let v = match f.params.iter().position(|p| p.0 as usize == i) {
                Some(k) => params[k],
                None => self.zero(clif_type(ty)),
            };
            self.b.def_var(var, v);
        }
    }

    /// `return` with a zero of the function's result type (after a failure, or at an end
    /// that the checker guarantees is not reached).
    fn return_dummy(&mut self) {
        if let Some(exit) = self.inline_exit {
            let z = self.ret.map(|t| self.zero(clif_type(t)));
            self.inline_return(exit, z);
            return;
        }
        match self.ret {
            Some(t) => {
                let z = self.zero(clif_type(t));
                self.b.ins().return_(&[z]);
            }
            None => {
                self.b.ins().return_(&[]);
            }
        }
    }

    // ---- small helpers ------------------------------------------------------------------------

    /// An integer constant of type `t`, given as its signed value.
    fn iconst(&mut self, t: Type, v: i64) -> Value {
        let bits = t.bits();
        let imm = if bits >= 64 {
            v
        } else {
            v & ((1i64 << bits) - 1)
        };
        self.b.ins().iconst(t, imm)
    }

    fn zero(&mut self, t: Type) -> Value {
        match t {
            types::F32 => self.b.ins().f32const(0.0),
            types::F64 => self.b.ins().f64const(0.0),
            _ => self.iconst(t, 0),
        }
    }

    fn constant(&mut self, c: Const) -> Value {
        match c {
            Const::Bool(v) => self.iconst(types::I8, v as i64),
            Const::I32(v) => self.iconst(types::I32, v as i64),
            Const::I64(v) => self.iconst(types::I64, v),
            Const::F32(v) => self.b.ins().f32const(v),
            Const::F64(v) => self.b.ins().f64const(v),
        }
    }

    /// A local's value (loaded from its cell when it has one).
    fn read_local(&mut self, id: ir::LocalId) -> Result<Value, JitError> {
        let (var, ty) = self.local(id)?;
        let v = self.b.use_var(var);
        Ok(if self.cells.contains(&id) {
            self.b
                .ins()
                .load(clif_type(ty), MemFlagsData::trusted(), v, 0)
        } else {
            v
        })
    }

    /// `local = v` (stored into its cell when it has one).
    fn set_local(&mut self, id: ir::LocalId, v: Value) -> Result<(), JitError> {
        let (var, _) = self.local(id)?;
        if self.cells.contains(&id) {
            let addr = self.b.use_var(var);
            self.b.ins().store(MemFlagsData::trusted(), v, addr, 0);
        } else {
            self.b.def_var(var, v);
        }
        Ok(())
    }

    fn local(&self, id: ir::LocalId) -> Result<(Variable, Ty), JitError> {
        self.locals
            .get(id.0 as usize)
            .copied()
            .ok_or_else(|| JitError::Unsupported(format!("unknown local {id:?}")))
    }

    /// The address of a global's slot.
    fn global_addr(&mut self, g: ir::GlobalId) -> Result<(Value, i32), JitError> {
        let slot = *self
            .env
            .slots
            .get(&g)
            .ok_or(JitError::MissingGlobalSlot(g))?;
        self.env.globals_used.borrow_mut().insert(slot);
        let offset = i32::try_from(slot as i64 * 8)
            .map_err(|_| JitError::Unsupported(format!("global slot {slot} too large")))?;
        Ok((self.globals, offset))
    }

    /// Continue in a new block that nothing jumps to yet (after a `return`, `break` or
    /// `continue`, so that any statements after it have somewhere to go).
    fn start_unreachable(&mut self) {
        let b = self.b.create_block();
        self.b.switch_to_block(b);
    }

    /// Translate with `site` as the call site: the library functions `f` calls that take no
    /// site of their own give their errors this one (`check_status`).
    pub(super) fn at_site<T>(&mut self, site: ir::SiteId, f: impl FnOnce(&mut Self) -> T) -> T {
        let outer = self.call_site.replace(site);
        let v = f(self);
        self.call_site = outer;
        v
    }

    /// Leave the function at once when `ctx.status` is non-zero.
    fn check_status(&mut self) {
        let status = self.b.ins().load(
            types::I32,
            MemFlagsData::trusted(),
            self.ctx,
            CTX_STATUS_OFFSET,
        );
        let ok = self.b.create_block();
        match self.call_site {
            // A library function does not know where it was called from: the failure path
            // tells the error.
            Some(site) => {
                let locate = self.b.create_block();
                self.b.ins().brif(status, locate, &[], ok, &[]);
                self.b.switch_to_block(locate);
                let site = self.iconst(types::I32, i64::from(site.0));
                let ctx = self.ctx;
                if let Some(ext) = externs::lookup("acc_rt_error_site") {
                    if let Ok(f) = self.import("acc_rt_error_site", &ext) {
                        self.b.ins().call(f, &[ctx, site]);
                    }
                }
                self.b.ins().jump(self.fail, &[]);
            }
            None => {
                self.b.ins().brif(status, self.fail, &[], ok, &[]);
            }
        }
        self.b.switch_to_block(ok);
    }

    /// Call a runtime or stdlib function by name; checks `ctx.status` afterwards when the
    /// function may fail. Bool arguments and results are `i8` 0/1.
    fn call_rt(&mut self, name: &str, args: &[Value]) -> Result<Option<Value>, JitError> {
        let ext = externs::lookup(name)
            .ok_or_else(|| JitError::Unsupported(format!("no signature for `{name}`")))?;
        let f = self.import(name, &ext)?;
        let call = self.b.ins().call(f, args);
        let result = self.b.inst_results(call).first().copied();
        if ext.may_fail {
            self.check_status();
        }
        Ok(result)
    }

    /// Like `call_rt` for functions that return a value.
    fn call_rt_value(&mut self, name: &str, args: &[Value]) -> Result<Value, JitError> {
        self.call_rt(name, args)?
            .ok_or_else(|| JitError::Unsupported(format!("`{name}` returns nothing")))
    }

    /// Call a function that always fails (records an error), then leave.
    fn call_rt_and_fail(&mut self, name: &str, args: &[Value]) -> Result<(), JitError> {
        let ext = externs::lookup(name)
            .ok_or_else(|| JitError::Unsupported(format!("no signature for `{name}`")))?;
        let f = self.import(name, &ext)?;
        self.b.ins().call(f, args);
        self.b.ins().jump(self.fail, &[]);
        Ok(())
    }

    fn import(&mut self, name: &str, ext: &externs::Extern) -> Result<FuncRef, JitError> {
        if let Some(&f) = self.imports.get(name) {
            return Ok(f);
        }
        if !self.env.symbols.contains(name) {
            return Err(JitError::MissingSymbol(name.to_string()));
        }
        let mut sig = self.jit.make_signature();
        let clif = |a: A| match a {
            A::Ptr | A::I64 => types::I64,
            A::Bool => types::I8,
            A::I32 | A::U32 => types::I32,
            A::F32 => types::F32,
            A::F64 => types::F64,
        };
        let param = |a: A| match a {
            A::Bool | A::U32 => AbiParam::new(clif(a)).uext(),
            A::I32 => AbiParam::new(clif(a)).sext(),
            _ => AbiParam::new(clif(a)),
        };
        sig.params.extend(ext.params.iter().map(|&a| param(a)));
        sig.returns.extend(ext.ret.map(param));
        let id = self.jit.declare_function(name, Linkage::Import, &sig)?;
        let f = self.jit.declare_func_in_func(id, self.b.func);
        self.imports.insert(name.to_string(), f);
        Ok(f)
    }

    /// A reference to a user function or region of this or an earlier compile.
    fn user_func(&mut self, id: FuncId) -> FuncRef {
        if let Some(&f) = self.users.get(&id) {
            return f;
        }
        let f = self.jit.declare_func_in_func(id, self.b.func);
        self.users.insert(id, f);
        f
    }

    /// The address and length of a string literal.
    fn string(&mut self, id: ir::StringId) -> Result<(Value, Value), JitError> {
        let &(ptr, len) = self
            .env
            .strings
            .get(id.0 as usize)
            .ok_or_else(|| JitError::Unsupported(format!("unknown string {id:?}")))?;
        let p = self.iconst(PTR, ptr as i64);
        let l = self.iconst(types::I64, len as i64);
        Ok((p, l))
    }

    /// A stack buffer of `n` 8-byte slots, and its address.
    fn stack_buffer(&mut self, n: usize) -> Value {
        use cranelift_codegen::ir::{StackSlotData, StackSlotKind};
        let size = (n.max(1) * 8) as u32;
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            size,
            3,
        ));
        self.b.ins().stack_addr(PTR, slot, 0)
    }

    fn site(&mut self, site: Option<ir::SiteId>) -> Value {
        let s = site.map_or(NO_SITE, |s| s.0);
        self.iconst(types::I32, s as i64)
    }
}
