//! acc-jit-host: the host back end. It compiles an `ir::Module` to native code with Cranelift.
//!
//! One [`Jit`] lives as long as its engine. Each compile is a unit with its own `JITModule`;
//! later compiles call the functions of earlier units by address, and a unit is freed when
//! nothing can run it any more (`Jit::unreachable`, `Jit::free`). The calling convention and
//! the runtime functions are those of docs/ABI.md.
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
//! Each function's loops are placed so that no branch of an innermost loop crosses a 32-byte
//! boundary (`placement`), where Intel cores decode the loop again on every iteration.
//!
//! Array header fields are loaded with `readonly can_move` (a handle always points at a live
//! header whose shape never changes), so Cranelift hoists them out of loops; globals a loop
//! cannot change are loaded once before it (`translate::hoist`). A counted loop whose accesses
//! can be proven in bounds for its whole range before it starts runs a copy without their checks
//! when the proof holds, and the checked copy otherwise (`translate::bounds`); the locals its
//! body reads and never assigns are redefined at the top of the body, so that Cranelift sees
//! them as loop-invariant.

mod externs;
mod placement;
mod translate;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use acc_lang::analysis::RegionId;
use acc_lang::hir::{FnId, VarId};
use acc_lang::ir;
use acc_runtime::abi::Ctx;
use acc_runtime::launch::RegionDesc;
use cranelift_codegen::ir::{Function, Signature, UserFuncName};
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
    /// The unit holding its code: alive until `Jit::free`.
    pub unit: UnitId,
    /// The compile's top-level statements. Safety: call it with a valid context whose globals
    /// hold a slot for every global in the `GlobalSlots` given to `compile`, while the `Jit`
    /// lives.
    pub main: MainFn,
    /// The module's regions (launches reach them through their descriptors).
    pub regions: Vec<(RegionId, RegionFn)>,
}

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
///
/// Each compile is a [`UnitId`]: its own `JITModule`, with the strings and region descriptors
/// its code embeds. A unit is freed by [`Jit::free`] once nothing can run it any more
/// ([`Jit::unreachable`]); a later compile calls a function of an earlier unit through its
/// address, and the unit that calls it keeps it.
pub struct Jit {
    isa: cranelift_codegen::isa::OwnedTargetIsa,
    /// The runtime and stdlib symbols the engine registered, which every unit links against.
    symbols: Vec<(&'static str, SymbolAddress)>,
    symbol_names: HashSet<&'static str>,
    /// User functions of the units that are alive.
    functions: HashMap<FnId, Defined>,
    units: BTreeMap<UnitId, Unit>,
    /// Numbers the compiles (each unit's id, and the names of its functions).
    compiles: u32,
}

/// A compiled user function: `(ctx, params…) -> ret` in the platform's C calling convention
/// with the ABI's types (docs/ABI.md), plus `(gang, num_gangs)` for a gang routine.
#[derive(Clone, Copy, Debug)]
pub struct FunctionCode {
    pub address: *const u8,
    /// The unit holding it: its code lives while the unit does.
    pub unit: UnitId,
    pub gang_routine: bool,
}

/// A compile's unit of code: what [`Jit::free`] frees together (the runtime's word, since a
/// region's descriptor names its unit).
pub use acc_runtime::launch::UnitId;

/// A runtime or stdlib function's address (only ever called by compiled code).
#[derive(Clone, Copy)]
struct SymbolAddress(*const u8);

// SAFETY: an address of a function in this process.
unsafe impl Send for SymbolAddress {}

/// A user function that compiled code of later units may call.
#[derive(Clone)]
pub(crate) struct Defined {
    pub unit: UnitId,
    pub address: usize,
    pub signature: Signature,
    /// Compiled as a gang routine (`translate::is_gang_routine`).
    pub gang_routine: bool,
}

/// One compile's code and the data it embeds.
struct Unit {
    module: Option<JITModule>,
    /// String literals and format texts: never read, only kept while the code that embeds
    /// their addresses lives.
    #[allow(dead_code)]
    strings: Vec<Box<[u8]>>,
    /// The region descriptors: launches embed their addresses, so each is boxed.
    #[allow(clippy::vec_box)]
    region_descs: Vec<Box<RegionDesc>>,
    /// The units whose functions this unit's code calls.
    calls_into: Vec<UnitId>,
    /// The global slots its code uses.
    globals: Vec<u32>,
}

impl Drop for Unit {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: a unit is freed only when none of its code can run (`Jit::unreachable`:
            // no live function of it, no live unit calling into it, no caller holding it).
            unsafe { module.free_memory() };
        }
        // The strings and descriptors must outlive the code: the fields drop after this.
    }
}

/// What `translate` produced: the translated functions, the user functions and regions they
/// define, `main`'s id, and the earlier units the code calls.
struct Translation {
    functions: Vec<Translated>,
    new_functions: Vec<(FnId, FuncId, Signature, bool)>,
    regions: Vec<(RegionId, FuncId)>,
    main: FuncId,
    calls_into: Vec<UnitId>,
    globals: Vec<u32>,
}

/// A translated (not yet defined) function.
struct Translated {
    id: FuncId,
    name: String,
    func: Function,
}

impl Jit {
    /// A JIT for the host, resolving calls to the runtime and standard library through
    /// `symbols` (`acc_runtime::symbols()` and `acc_stdlib::symbols()`).
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
        // Block offsets, and functions at known alignment, for `placement`.
        set(&mut flags, "machine_code_cfg_info", "true")?;
        set(
            &mut flags,
            "log2_min_function_alignment",
            placement::LOG2_FUNCTION_ALIGNMENT,
        )?;
        let isa = cranelift_native::builder()
            .map_err(|m| JitError::Module(format!("host machine is not supported: {m}")))?
            .finish(settings::Flags::new(flags))
            .map_err(|e| JitError::Module(e.to_string()))?;
        Ok(Jit {
            isa,
            symbols: symbols
                .iter()
                .map(|&(name, p)| (name, SymbolAddress(p)))
                .collect(),
            symbol_names: symbols.iter().map(|&(name, _)| name).collect(),
            functions: HashMap::new(),
            units: BTreeMap::new(),
            compiles: 0,
        })
    }

    /// An empty module linked against the runtime and stdlib.
    fn new_module(&self) -> JITModule {
        let mut builder = JITBuilder::with_isa(self.isa.clone(), default_libcall_names());
        builder.symbols(self.symbols.iter().map(|&(name, p)| (name, p.0)));
        JITModule::new(builder)
    }

    /// Compile a module: its functions, its regions and its `main`, as a new unit. `slots` must
    /// give a slot for every global the code uses (those of this module's `globals` and
    /// earlier ones). On an error nothing of it is kept.
    pub fn compile(
        &mut self,
        module: &ir::Module,
        slots: &GlobalSlots,
    ) -> Result<CompiledModule, JitError> {
        self.compiles += 1;
        let unit_id = self.compiles;
        let mut unit = Unit::new(self.new_module());
        let strings = unit.keep_strings(module);
        let jit = unit.module.as_mut().expect("made above");
        let Translation {
            functions: translated,
            new_functions,
            regions,
            main: main_id,
            calls_into,
            globals,
        } = self.translate(
            jit,
            &mut unit.region_descs,
            &strings,
            module,
            slots,
            unit_id,
        )?;
        unit.calls_into = calls_into;
        unit.globals = globals;
        // If defining fails, `unit` drops here and frees whatever was made.
        for t in translated {
            placement::define(jit, t.id, t.func)
                .map_err(|e| JitError::Module(format!("{}: {e}", t.name)))?;
        }
        jit.finalize_definitions()?;
        for (id, fid, signature, gang_routine) in new_functions {
            let address = jit.get_finalized_function(fid) as usize;
            let defined = Defined {
                unit: unit_id,
                address,
                signature,
                gang_routine,
            };
            self.functions.insert(id, defined);
        }
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
        // One descriptor per region, in order.
        for (desc, (_, f)) in unit.region_descs.iter().zip(&regions) {
            desc.set_func(*f);
        }
        self.units.insert(unit_id, unit);
        Ok(CompiledModule {
            unit: unit_id,
            main,
            regions,
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
        let mut scratch = Unit::new(self.new_module());
        let strings = scratch.keep_strings(module);
        let jit = scratch.module.as_mut().expect("made above");
        let translated = self
            .translate(
                jit,
                &mut scratch.region_descs,
                &strings,
                module,
                slots,
                self.compiles + 1,
            )?
            .functions;
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
    /// directly), while its unit is alive. Its signature is `(ctx, params…) -> ret` with the
    /// ABI's types.
    pub fn function_address(&self, id: FnId) -> Option<*const u8> {
        self.functions.get(&id).map(|d| d.address as *const u8)
    }

    /// Where a compiled user function is, while its unit is alive.
    pub fn function_code(&self, id: FnId) -> Option<FunctionCode> {
        self.functions.get(&id).map(|d| FunctionCode {
            address: d.address as *const u8,
            unit: d.unit,
            gang_routine: d.gang_routine,
        })
    }

    /// The units nothing can run any more, given the functions later code may still call
    /// (`live`: those a name refers to now) and the units a caller holds on to (`keep`: a
    /// cached `main`). A unit is reachable from a live function's unit, a kept unit, and any
    /// unit a reachable one calls into.
    pub fn unreachable(
        &self,
        live: impl IntoIterator<Item = FnId>,
        keep: impl IntoIterator<Item = UnitId>,
    ) -> Vec<UnitId> {
        let mut reached = HashSet::new();
        let mut stack: Vec<UnitId> = live
            .into_iter()
            .filter_map(|f| self.functions.get(&f).map(|d| d.unit))
            .chain(keep)
            .collect();
        while let Some(u) = stack.pop() {
            if reached.insert(u) {
                if let Some(unit) = self.units.get(&u) {
                    stack.extend(&unit.calls_into);
                }
            }
        }
        self.units
            .keys()
            .filter(|u| !reached.contains(u))
            .copied()
            .collect()
    }

    /// Frees units `unreachable` gave: their code, strings, descriptors and functions.
    ///
    /// # Safety
    /// None of their code runs or will be called: no device work of theirs is queued, and
    /// nothing holds their `main`, regions or descriptors.
    pub unsafe fn free(&mut self, units: &[UnitId]) {
        let units: HashSet<UnitId> = units.iter().copied().collect();
        self.functions.retain(|_, d| !units.contains(&d.unit));
        self.units.retain(|u, _| !units.contains(u));
    }

    /// The global slots the code of live units uses.
    pub fn globals_in_use(&self) -> impl Iterator<Item = u32> + '_ {
        self.units.values().flat_map(|u| u.globals.iter().copied())
    }

    /// How many units are alive (for tests of the freeing).
    pub fn live_units(&self) -> usize {
        self.units.len()
    }

    /// Declare and translate every function of `module` into `jit`, verifying each. The
    /// region descriptors go into `descs`, boxed: the code embeds their addresses.
    #[allow(clippy::vec_box)]
    fn translate(
        &self,
        jit: &mut JITModule,
        descs: &mut Vec<Box<RegionDesc>>,
        strings: &translate::Strings,
        module: &ir::Module,
        slots: &GlobalSlots,
        compile: UnitId,
    ) -> Result<Translation, JitError> {
        // Declare first, so that bodies can call each other in any order.
        let mut local = HashMap::new();
        let mut gang_routines = HashSet::new();
        let mut new_functions = Vec::new();
        let mut fn_ids = Vec::new();
        for f in &module.functions {
            let id = f
                .id
                .ok_or_else(|| JitError::Unsupported(format!("function `{}` has no id", f.name)))?;
            let sig = translate::function_signature(jit, f)?;
            let name = format!("{}#{}.{compile}", f.name, id.0);
            let fid = jit.declare_function(&name, Linkage::Local, &sig)?;
            local.insert(id, fid);
            let gang_routine = translate::is_gang_routine(f);
            if gang_routine {
                gang_routines.insert(id);
            }
            new_functions.push((id, fid, sig, gang_routine));
            fn_ids.push((fid, name));
        }
        let mut regions = HashMap::new();
        let mut region_ids = Vec::new();
        let mut region_descs = HashMap::new();
        for r in &module.regions {
            let desc = Box::new(translate::region_desc(r, compile));
            region_descs.insert(r.id, &*desc as *const RegionDesc as usize);
            descs.push(desc);
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
            local_functions: &local,
            earlier_functions: &self.functions,
            region_descs: &region_descs,
            slots,
            symbols: &self.symbol_names,
            strings: &strings.strings,
            formats: &strings.formats,
            local_gang_routines: &gang_routines,
            inlinable: acc_lang::ir::inline::candidates(module),
            calls_into: Default::default(),
            globals_used: Default::default(),
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
        let calls_into = env.calls_into.into_inner().into_iter().collect();
        let globals = env.globals_used.into_inner().into_iter().collect();
        Ok(Translation {
            functions: out,
            new_functions,
            regions: module
                .regions
                .iter()
                .map(|r| (r.id, regions[&r.id]))
                .collect(),
            main: main_id,
            calls_into,
            globals,
        })
    }
}

impl Unit {
    fn new(module: JITModule) -> Unit {
        Unit {
            module: Some(module),
            strings: Vec::new(),
            region_descs: Vec::new(),
            calls_into: Vec::new(),
            globals: Vec::new(),
        }
    }

    /// Copy the module's string literals and `printf` formats into storage that lives as long
    /// as the unit; the code embeds their addresses.
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
