//! acc-jit-host: the host back end. It compiles an `ir::Module` to native code with Cranelift.
//!
//! One [`Jit`] lives as long as its engine: every compile adds functions to the same
//! `JITModule`, so code from earlier compiles stays callable and later compiles call it by
//! `FnId`. The calling convention and the runtime functions are those of docs/ABI.md.
//!
//! Semantics chosen where C leaves a choice (LANGUAGE.md sections 2 and 4):
//! - Integer arithmetic wraps. `/` and `%` truncate toward zero; a zero divisor calls
//!   `acc_rt_div_zero`; `MIN / -1` is `MIN` and `MIN % -1` is `0` (wrapping, no trap).
//! - Shift counts are taken modulo the bit width of the shifted type (as x86 and Cranelift do):
//!   `x << 33` on an `i32` is `x << 1`, `x << -1` is `x << 31`. `>>` is arithmetic.
//! - Float to integer conversion truncates toward zero and saturates; NaN converts to 0.
//! - Floats are never contracted: a multiply and an add stay two roundings.
//! - `min`/`max`/`fmin`/`fmax` on floats follow C's `fmin`/`fmax`: a NaN operand yields the other.
//! - A `for` loop computes its trip count once from `start`, `end` and `step` (so it never
//!   overflows its variable, even at the ends of the type's range). A step the checker cannot
//!   prove nonzero (a variable) carries a site in the IR (`ForLoop::step_site`): a step of 0
//!   calls `acc_rt_zero_step` before the first iteration, a run-time error at the step.
//!
//! Compute regions are native functions called once per gang by the runtime's current device
//! (see `translate::region`); a launch passes the region's `RegionDesc`. A gang routine (`acc routine gang`)
//! takes the calling gang and the gang count as two extra `i64` parameters after its own, so
//! that its gang loops share their iterations like a region's; called from host code it is the
//! only gang (0 of 1). Private and firstprivate arrays are made per gang and freed at its end.
//!
//! `acc atomic` statements are atomic operations wherever they appear (`translate::atomic`):
//! read-modify-write instructions for integer `+ - & | ^ min max`, compare-and-swap loops for the
//! rest, so region functions may run their gangs on several threads at once.
//!
//! A call of a small loop-free function of the same compile, in a function or in a loop, is
//! translated as the callee's body in place (`translate::inline`); a small recursive function
//! unrolls its own recursion three levels this way.
//!
//! Array header fields are loaded with `readonly can_move` (a handle always points at a live
//! header whose shape never changes), so Cranelift hoists them out of loops; globals a loop
//! cannot change are loaded once before it (`translate::hoist`). A counted loop whose accesses
//! can be proven in bounds for its whole range before it starts runs a copy without their checks
//! when the proof holds, and the checked copy otherwise (`translate::bounds`); the locals its
//! body reads and never assigns are redefined at the top of the body, so that Cranelift sees
//! them as loop-invariant.

mod externs;
mod translate;

use std::collections::{HashMap, HashSet};
use std::fmt;

use acc_lang::analysis::RegionId;
use acc_lang::hir::{FnId, VarId};
use acc_lang::ir;
use acc_runtime::abi::Ctx;
use acc_runtime::launch::RegionDesc;
use cranelift_codegen::ir::{Function, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_codegen::Context;
use cranelift_frontend::FunctionBuilderContext;
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};

use translate::{Env, FnKind};

/// Whether compiled code knows how to call the runtime or stdlib function `name` (its
/// signature is in this crate's table).
pub fn has_signature(name: &str) -> bool {
    externs::lookup(name).is_some()
}

/// The engine's storage slot of each global: `ctx.globals[slot]`.
pub type GlobalSlots = HashMap<VarId, u32>;

/// A compile's `main`: runs the compile's top-level statements.
pub type MainFn = unsafe extern "C" fn(*mut Ctx);

pub use acc_runtime::launch::RegionFn;

/// What a compile produced.
#[derive(Clone, Debug)]
pub struct CompiledModule {
    /// The compile's top-level statements. Safety: call it with a valid context whose globals
    /// hold a slot for every global in the `GlobalSlots` given to `compile`, while the `Jit`
    /// lives.
    pub main: MainFn,
    /// The module's regions (launches reach them through their descriptors).
    pub regions: Vec<(RegionId, RegionFn)>,
    /// Each region's descriptor, which lives as long as the `Jit` (the engine attaches GPU
    /// kernels to them).
    pub descs: Vec<(RegionId, *const RegionDesc)>,
}

// SAFETY: the descriptors are `Sync` (atomics and `OnceLock`s) and outlive the module; the
// rest are function pointers.
unsafe impl Send for CompiledModule {}

#[derive(Debug)]
pub enum JitError {
    /// Cranelift could not declare, define or link a function (a bug in this crate, or an
    /// out-of-memory condition).
    Module(String),
    /// The generated Cranelift IR failed to verify (a bug in this crate).
    Verify { function: String, errors: String },
    /// The IR calls a runtime function that the symbol table does not provide.
    MissingSymbol(String),
    /// A global with no storage slot in the `GlobalSlots` map.
    MissingGlobalSlot(VarId),
    /// A call of a function that no compile defined.
    UnknownFunction(FnId),
    /// A `Launch` of a region that is not in the module.
    UnknownRegion(RegionId),
    /// An IR construct this back end does not handle (malformed IR, or a gap to fill).
    Unsupported(String),
    /// An earlier compile failed half-way through defining its functions; the Jit cannot be
    /// used any more.
    Poisoned,
}

impl fmt::Display for JitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JitError::Module(m) => write!(f, "code generation failed: {m}"),
            JitError::Verify { function, errors } => {
                write!(f, "generated code for `{function}` is invalid: {errors}")
            }
            JitError::MissingSymbol(s) => write!(f, "runtime function `{s}` is not available"),
            JitError::MissingGlobalSlot(v) => write!(f, "global {v:?} has no storage slot"),
            JitError::UnknownFunction(id) => write!(f, "call of unknown function {id:?}"),
            JitError::UnknownRegion(id) => write!(f, "launch of unknown region {id:?}"),
            JitError::Unsupported(m) => write!(f, "unsupported: {m}"),
            JitError::Poisoned => write!(f, "the JIT is unusable after an earlier failure"),
        }
    }
}

impl std::error::Error for JitError {}

impl From<cranelift_module::ModuleError> for JitError {
    fn from(e: cranelift_module::ModuleError) -> Self {
        JitError::Module(e.to_string())
    }
}

/// The host JIT of one engine.
pub struct Jit {
    module: Option<JITModule>,
    /// Names of the runtime and stdlib symbols the engine registered.
    symbols: HashSet<&'static str>,
    /// User functions of all successful compiles.
    functions: HashMap<FnId, FuncId>,
    /// Those of them compiled as gang routines (`translate::is_gang_routine`).
    gang_routines: HashSet<FnId>,
    /// String literals and format texts of all compiles (the code embeds their addresses).
    strings: Vec<Box<[u8]>>,
    /// The region descriptors of all compiles: launches embed their addresses, so each is
    /// boxed (a `Vec` moves its elements when it grows).
    #[allow(clippy::vec_box)]
    region_descs: Vec<Box<RegionDesc>>,
    /// Numbers the functions of each compile so that their names are unique.
    compiles: u32,
    poisoned: bool,
}

/// What `translate` produced: the translated functions, the ids of the user functions and
/// regions they define, and `main`'s.
struct Translation {
    functions: Vec<Translated>,
    new_functions: Vec<(FnId, FuncId)>,
    /// Every gang routine, of this compile and earlier ones.
    gang_routines: HashSet<FnId>,
    regions: Vec<(RegionId, FuncId)>,
    main: FuncId,
}

/// A translated (not yet defined) function.
struct Translated {
    id: FuncId,
    name: String,
    func: Function,
}

impl Jit {
    /// A JIT for the host, resolving calls to the runtime and standard library through
    /// `symbols` (`acc_runtime::abi::symbols()` and `acc_stdlib::symbols()`).
    pub fn new(symbols: &[(&'static str, *const u8)]) -> Result<Jit, JitError> {
        let mut flags = settings::builder();
        let set = |flags: &mut settings::Builder, k: &str, v: &str| {
            flags
                .set(k, v)
                .map_err(|e| JitError::Module(format!("setting {k}: {e}")))
        };
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "opt_level", "speed")?;
        // `compile` verifies each function itself, before defining any.
        set(&mut flags, "enable_verifier", "false")?;
        let isa = cranelift_native::builder()
            .map_err(|m| JitError::Module(format!("host machine is not supported: {m}")))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| JitError::Module(e.to_string()))?;
        let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
        builder.symbols(symbols.iter().map(|&(name, ptr)| (name, ptr)));
        Ok(Jit {
            module: Some(JITModule::new(builder)),
            symbols: symbols.iter().map(|&(name, _)| name).collect(),
            functions: HashMap::new(),
            gang_routines: HashSet::new(),
            strings: Vec::new(),
            region_descs: Vec::new(),
            compiles: 0,
            poisoned: false,
        })
    }

    /// Compile a module: its functions, its regions and its `main`. `slots` must give a slot
    /// for every global the code uses (those of this module's `globals` and earlier ones).
    pub fn compile(
        &mut self,
        module: &ir::Module,
        slots: &GlobalSlots,
    ) -> Result<CompiledModule, JitError> {
        let Translation {
            functions: translated,
            new_functions,
            gang_routines,
            regions,
            main: main_id,
        } = self.translate(module, slots)?;
        let jit = self.module.as_mut().ok_or(JitError::Poisoned)?;
        // Every function verified, so defining should not fail; if it does, functions already
        // defined may refer to ones that are not, and the module cannot be finalized safely.
        for t in translated {
            let mut ctx = Context::for_function(t.func);
            if let Err(e) = jit.define_function(t.id, &mut ctx) {
                self.poisoned = true;
                return Err(JitError::Module(format!("{}: {e:?}", t.name)));
            }
        }
        if let Err(e) = jit.finalize_definitions() {
            self.poisoned = true;
            return Err(e.into());
        }
        self.functions.extend(new_functions);
        self.gang_routines = gang_routines;
        let main = jit.get_finalized_function(main_id);
        // SAFETY: `main_id` was declared with the signature `(ctx: ptr)` and no results.
        let main = unsafe { std::mem::transmute::<*const u8, MainFn>(main) };
        let regions: Vec<(RegionId, RegionFn)> = regions
            .into_iter()
            .map(|(id, f)| {
                let p = jit.get_finalized_function(f);
                // SAFETY: regions are declared with `region_signature`.
                (id, unsafe { std::mem::transmute::<*const u8, RegionFn>(p) })
            })
            .collect();
        // This compile's descriptors are the last ones made, one per region, in order.
        let descs = &self.region_descs[self.region_descs.len() - regions.len()..];
        for (desc, (_, f)) in descs.iter().zip(&regions) {
            desc.set_func(*f);
        }
        let descs = descs
            .iter()
            .zip(&regions)
            .map(|(d, (id, _))| (*id, &**d as *const RegionDesc))
            .collect();
        Ok(CompiledModule {
            main,
            regions,
            descs,
        })
    }

    /// The Cranelift IR of each function, region and `main` of `module` (`--emit clif`), as
    /// `compile` generates it, or with `optimized` after Cranelift's optimizations (what the
    /// machine code is made from). Nothing is defined.
    pub fn clif_text(
        &mut self,
        module: &ir::Module,
        slots: &GlobalSlots,
        optimized: bool,
    ) -> Result<String, JitError> {
        let translated = self.translate(module, slots)?.functions;
        let jit = self.module.as_ref().ok_or(JitError::Poisoned)?;
        let mut out = String::new();
        for t in translated {
            let mut ctx = Context::for_function(t.func);
            if optimized {
                ctx.optimize(jit.isa(), &mut Default::default())
                    .map_err(|e| JitError::Module(format!("{}: {e:?}", t.name)))?;
            }
            out += &format!("; {}\n{}\n", t.name, ctx.func.display());
        }
        Ok(out)
    }

    /// The address of a compiled user function (for tests and embedders that call functions
    /// directly). Its signature is `(ctx, params…) -> ret` with the ABI's types.
    pub fn function_address(&self, id: FnId) -> Option<*const u8> {
        let jit = self.module.as_ref()?;
        self.functions
            .get(&id)
            .map(|&f| jit.get_finalized_function(f))
    }

    /// Declare and translate every function of `module`, verifying each.
    fn translate(
        &mut self,
        module: &ir::Module,
        slots: &GlobalSlots,
    ) -> Result<Translation, JitError> {
        if self.poisoned {
            return Err(JitError::Poisoned);
        }
        self.compiles += 1;
        let compile = self.compiles;
        let strings = self.keep_strings(module);
        let jit = self.module.as_mut().ok_or(JitError::Poisoned)?;

        // Declare first, so that bodies can call each other in any order.
        let mut functions = self.functions.clone();
        let mut gang_routines = self.gang_routines.clone();
        let mut new_functions = Vec::new();
        let mut fn_ids = Vec::new();
        for f in &module.functions {
            let id = f
                .id
                .ok_or_else(|| JitError::Unsupported(format!("function `{}` has no id", f.name)))?;
            let sig = translate::function_signature(jit, f)?;
            let name = format!("{}#{}.{compile}", f.name, id.0);
            let fid = jit.declare_function(&name, Linkage::Local, &sig)?;
            functions.insert(id, fid);
            if translate::is_gang_routine(f) {
                gang_routines.insert(id);
            }
            new_functions.push((id, fid));
            fn_ids.push((fid, name));
        }
        let mut regions = HashMap::new();
        let mut region_ids = Vec::new();
        let mut region_descs = HashMap::new();
        for r in &module.regions {
            let desc = Box::new(translate::region_desc(r));
            region_descs.insert(r.id, &*desc as *const RegionDesc as usize);
            self.region_descs.push(desc);
            let sig = translate::region_signature(jit);
            let name = format!("region{}.{compile}", r.id.0);
            let fid = jit.declare_function(&name, Linkage::Local, &sig)?;
            regions.insert(r.id, fid);
            region_ids.push((fid, name));
        }
        let main_name = format!("main.{compile}");
        let main_sig = translate::main_signature(jit);
        let main_id = jit.declare_function(&main_name, Linkage::Local, &main_sig)?;

        let env = Env {
            module,
            functions: &functions,
            region_descs: &region_descs,
            slots,
            symbols: &self.symbols,
            strings: &strings.strings,
            formats: &strings.formats,
            gang_routines: &gang_routines,
            inlinable: translate::inline_candidates(module),
        };
        let mut fctx = FunctionBuilderContext::new();
        let mut out = Vec::new();
        let mut finish =
            |jit: &mut JITModule, id: FuncId, name: &str, kind: FnKind| -> Result<(), JitError> {
                let sig = jit.declarations().get_function_decl(id).signature.clone();
                let mut func = Function::with_name_signature(UserFuncName::testcase(name), sig);
                translate::translate(jit, &env, &mut fctx, &mut func, kind)?;
                cranelift_codegen::verify_function(&func, jit.isa()).map_err(|e| {
                    JitError::Verify {
                        function: name.to_string(),
                        errors: format!("{e}\n{}", func.display()),
                    }
                })?;
                out.push(Translated {
                    id,
                    name: name.to_string(),
                    func,
                });
                Ok(())
            };
        for (f, (id, name)) in module.functions.iter().zip(&fn_ids) {
            finish(jit, *id, name, FnKind::Function(f))?;
        }
        for (r, (id, name)) in module.regions.iter().zip(&region_ids) {
            finish(jit, *id, name, FnKind::Region(r))?;
        }
        finish(jit, main_id, &main_name, FnKind::Main(&module.main))?;
        Ok(Translation {
            functions: out,
            new_functions,
            gang_routines,
            regions: module
                .regions
                .iter()
                .map(|r| (r.id, regions[&r.id]))
                .collect(),
            main: main_id,
        })
    }

    /// Copy the module's string literals and `printf` formats into storage that lives as long
    /// as the Jit; the code embeds their addresses.
    fn keep_strings(&mut self, module: &ir::Module) -> translate::Strings {
        let mut keep = |text: String| -> (usize, usize) {
            let bytes = text.into_bytes().into_boxed_slice();
            let at = (bytes.as_ptr() as usize, bytes.len());
            self.strings.push(bytes);
            at
        };
        let strings = module.strings.iter().map(|s| keep(s.clone())).collect();
        let formats = module
            .formats
            .iter()
            .map(|pieces| keep(translate::format_text(pieces)))
            .collect();
        translate::Strings { strings, formats }
    }
}

impl Drop for Jit {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the engine owns the Jit and calls no compiled code after dropping it.
            unsafe { module.free_memory() };
        }
        // The strings must outlive the code: the fields drop after this.
    }
}
