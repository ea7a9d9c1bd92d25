//! `Engine`: compile and run acc source on the host, keeping globals and functions across runs.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock, Weak};

use acc_jit_host::{GlobalSlots, Jit, UnitId};
use acc_lang::ir::{self, Ty};
use acc_lang::{Diagnostic, Frontend, SourceFile, Span};
use acc_runtime::abi::{ArrayHeader, Ctx};
use acc_runtime::array::HostShare;
use acc_runtime::context::{Context, Outcome};
use acc_runtime::device::DeviceOptions;
use acc_runtime::error::RunError;
use acc_runtime::host::HostState;
use acc_runtime::kernels::{DevicePrints, GpuKernel};
use acc_runtime::launch::RegionKey;
use acc_runtime::profile::SiteStats;

use crate::device_print::PrintTable;
use crate::error::Error;

/// What `Engine::emit` shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// The IR both back ends consume.
    Ir,
    /// The Cranelift IR of the host code.
    Clif,
    /// The PTX of the compute regions (one module, valid `ptxas` input).
    Ptx,
}

/// An acc session: what the REPL holds between lines and an embedder between calls. Globals
/// and functions declared by one `run` are visible to the next.
pub struct Engine {
    /// This engine's identity: a `Script` or `Func` runs only on the engine that made it.
    pub(crate) id: u64,
    pub(crate) frontend: Frontend,
    pub(crate) jit: Jit,
    pub(crate) context: Context,
    /// Storage slot of every global declared so far.
    pub(crate) slots: GlobalSlots,
    /// Globals holding arrays, released when the engine goes.
    pub(crate) array_slots: Vec<u32>,
    /// The code an embedder's `Script`s and `Func`s hold: kept while they live.
    pub(crate) held: Vec<Weak<HeldCode>>,
    /// Something was compiled since `free_code` last looked (a run of the same code again
    /// has nothing to free, unless a `Script` or `Func` was dropped).
    code_changed: bool,
    /// The embedder's bounds on runs, and the thread that enforces the time limit.
    pub(crate) limits: crate::Limits,
    pub(crate) watchdog: Option<crate::api::Watchdog>,
    /// How many slots the globals table has.
    slot_count: u32,
    /// Slots of globals no name refers to and no live code uses, for new globals.
    free_slots: Vec<u32>,
    /// The sources and check sites of the compiles whose code may still run (an error in a
    /// function of an earlier run points into that run's source), shared with the profiler's
    /// `ACC_NOTIFY` lines.
    compiles: Arc<RwLock<Compiles>>,
    /// The last source compiled, for run-time errors that have no site.
    last_source: Option<SourceFile>,
    /// Print the value of top-level expression statements (the REPL).
    print_values: bool,
    /// `--unchecked`: device code without bounds checks.
    unchecked: bool,
    /// The last source compiled, kept to run it again without compiling while nothing else was
    /// compiled in between (an embedder running one script in a loop): memory stays flat.
    last: Option<LastScript>,
    /// Every print statement of device code compiled so far, which formats the GPU's output.
    device_prints: Arc<PrintTable>,
    /// Make GPU kernels without a GPU (for tests of the kernel table on machines without one).
    kernels_without_gpu: bool,
}

/// The sources and check sites of the compiles whose code is alive, by their first site: sites
/// are numbered across compiles, and a compile's sites go with its code (`Engine::free_code`).
#[derive(Default)]
struct Compiles {
    by_first_site: BTreeMap<u32, Compile>,
    next_site: u32,
}

struct Compile {
    source: SourceFile,
    sites: Vec<ir::Site>,
    /// Its code (none while it is being compiled, or when it only was lowered: `--emit`).
    unit: Option<UnitId>,
    /// The id of its first device print statement, when it has GPU kernels.
    first_print: Option<u32>,
}

impl Compiles {
    fn site(&self, site: u32) -> Option<(&SourceFile, &ir::Site)> {
        let (&first, compile) = self.by_first_site.range(..=site).next_back()?;
        let site = compile.sites.get((site - first) as usize)?;
        Some((&compile.source, site))
    }

    /// `(construct or variable, file, line)`, for profiles, traces and notices.
    fn name(&self, site: u32) -> (String, String, u32) {
        match self.site(site) {
            Some((source, s)) => {
                let (line, _) = source.line_col(s.span.start);
                (s.what.clone(), source.name.to_string(), line as u32)
            }
            None => (String::new(), String::new(), 0),
        }
    }
}

/// Code an embedder holds (`Script`, `Func`): its unit stays while the holder lives.
pub(crate) struct HeldCode {
    pub unit: UnitId,
}

/// Engine identities; every engine gets a new one.
static NEXT_ENGINE: AtomicU64 = AtomicU64::new(1);

/// The host-shared arrays a run can reach, held exclusively while it runs (each with a
/// reference, so that a script releasing the last other one does not free the lock), and let
/// go when it ends.
#[derive(Default)]
pub(crate) struct RunLocks {
    held: Vec<(*mut ArrayHeader, &'static HostShare)>,
}

impl Drop for RunLocks {
    fn drop(&mut self) {
        for &(owner, share) in &self.held {
            share.lock.unlock_exclusive();
            // SAFETY: the reference taken in `Engine::lock_arrays`.
            unsafe { acc_runtime::array::release(owner) };
        }
    }
}

/// A compile's code: its unit, its top-level code, and the slots of the array globals that
/// code declares (released before it runs again).
pub(crate) struct UnitCode {
    pub unit: UnitId,
    pub main: acc_jit_host::MainFn,
    pub array_slots: Vec<u32>,
}

struct LastScript {
    text: String,
    name: String,
    unit: UnitId,
    main: acc_jit_host::MainFn,
    /// Slots of the array globals its top-level code declares, released before a re-run.
    array_slots: Vec<u32>,
}

impl Engine {
    /// An engine printing to standard output.
    pub fn new() -> Result<Engine, Error> {
        Engine::with_host(HostState::stdout())
    }

    /// An engine printing to `out` (an embedder's buffer, a test's capture).
    pub fn with_output(out: Box<dyn Write + Send>) -> Result<Engine, Error> {
        Engine::with_host(HostState::new(out))
    }

    fn with_host(host: HostState) -> Result<Engine, Error> {
        let mut symbols = acc_runtime::symbols();
        symbols.extend(acc_stdlib::symbols());
        let jit = Jit::new(&symbols).map_err(|e| Error::Internal(e.to_string()))?;
        Ok(Engine {
            id: NEXT_ENGINE.fetch_add(1, Ordering::Relaxed),
            held: Vec::new(),
            code_changed: false,
            limits: crate::Limits::default(),
            watchdog: None,
            frontend: Frontend::new(),
            jit,
            context: Context::new(host),
            slots: HashMap::new(),
            array_slots: Vec::new(),
            slot_count: 0,
            free_slots: Vec::new(),
            compiles: Arc::default(),
            last_source: None,
            print_values: false,
            unchecked: false,
            last: None,
            device_prints: Arc::default(),
            kernels_without_gpu: false,
        })
    }

    /// Make top-level expression statements print their value, as the REPL does.
    pub fn set_print_values(&mut self, on: bool) {
        self.print_values = on;
        self.last = None;
    }

    /// `--set name=value`: what `param("name", default)` returns, converted to the default's type.
    pub fn set_param(&mut self, name: &str, value: &str) {
        self.context.host().set_param(name, value);
    }

    /// The devices, their queues and profiling (`--device`, `--synchronous`, `--profile`,
    /// `--trace`, and the `ACC_*` environment variables through `DeviceOptions::from_env`).
    /// Devices made before are waited for and dropped.
    pub fn set_devices(&mut self, opts: DeviceOptions) {
        self.context.configure_devices(opts);
    }

    /// A notice about device selection (the requested device is not available), once.
    pub fn device_notice(&mut self) -> Option<String> {
        self.context.devices().notice.take()
    }

    /// The `--profile` report: per construct and line, what ran where and what moved.
    pub fn profile_report(&mut self) -> String {
        let profiler = self.context.devices().profiler().clone();
        profiler.report(&self.site_resolver())
    }

    /// The `--trace` output: Chrome trace JSON of every launch, transfer and wait.
    pub fn chrome_trace(&mut self) -> String {
        let profiler = self.context.devices().profiler().clone();
        profiler.chrome_trace(&self.site_resolver())
    }

    /// The profile's counts over all constructs (with `profile` on in the device options).
    pub fn profile_totals(&mut self) -> SiteStats {
        self.context.devices().profiler().totals()
    }

    /// How many compiles' code is alive: the functions names refer to, what they call, and the
    /// last script (for leak checks; stays flat over runs that declare nothing new).
    pub fn code_units(&self) -> usize {
        self.jit.live_units()
    }

    /// How many global slots are in use (for leak checks).
    pub fn global_slots(&self) -> usize {
        self.slots.len()
    }

    /// Arrays present on any device (0 when every data region and `enter data` was exited).
    pub fn present_arrays(&mut self) -> usize {
        self.context
            .devices_if_made()
            .map_or(0, |d| d.present_arrays())
    }

    /// Maps a site to `(construct or variable, file, line)` for profiles, traces and notices.
    pub(crate) fn site_resolver(
        &self,
    ) -> impl Fn(u32) -> (String, String, u32) + Send + Sync + 'static {
        let compiles = self.compiles.clone();
        move |site| {
            let compiles = compiles.read().unwrap_or_else(|e| e.into_inner());
            compiles.name(site)
        }
    }

    /// Where `print` and `printf` write from now on.
    pub fn set_output(&mut self, out: Box<dyn Write + Send>) {
        let _ = self.context.flush();
        self.context.host().set_output(out);
    }

    /// Run a script file.
    pub fn run_file(&mut self, path: &Path) -> Result<(), Error> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        self.run(&path.display().to_string(), &text)
    }

    /// Compile `text` (named `name` in messages) and run its top-level statements.
    pub fn run(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let main = match &self.last {
            Some(last) if last.text == text && last.name == name => {
                for &slot in &last.array_slots {
                    self.context.release_global_array(slot as usize);
                }
                last.main
            }
            _ => self.compile_last(name, text)?,
        };
        let result = self.run_main(main);
        self.free_code();
        result
    }

    /// Runs a compile's top-level code with the host-shared arrays its globals hold locked.
    pub(crate) fn run_main(&mut self, main: acc_jit_host::MainFn) -> Result<(), Error> {
        let mut locks = RunLocks::default();
        self.lock_arrays(&[], &mut locks)?;
        let ctx = self.start_run();
        // SAFETY: every global the code uses has a slot, and the context outlives the call.
        unsafe { main(ctx) };
        let result = self.end_run(ctx);
        drop(locks);
        result
    }

    /// The context for compiled code about to run on this thread.
    pub(crate) fn start_run(&mut self) -> *mut Ctx {
        self.arm_limits();
        let ctx = self.context.ctx_ptr();
        let resolver = self.site_resolver();
        let devices = self.context.devices();
        let opts = devices.options();
        // Notify lines and `--autocompare`'s reports name constructs by file and line.
        if opts.profile.notify != 0 || opts.autocompare.is_some() {
            devices.profiler().set_resolver(Box::new(resolver));
        }
        ctx
    }

    /// Ends what compiled code started on `ctx`: queued device work finishes (its output and
    /// errors are reported now), the output is flushed, and the run's error, if any, is given.
    pub(crate) fn end_run(&mut self, ctx: *mut Ctx) -> Result<(), Error> {
        if let Some(devices) = self.context.devices_if_made() {
            // SAFETY: `ctx` is the context's.
            unsafe { devices.finish(ctx) };
        }
        self.disarm_limits();
        match self.context.finish() {
            Outcome::Finished => Ok(()),
            Outcome::Exit(code) => Err(Error::Exit(code)),
            Outcome::Error(e) => Err(self.run_error(e)),
        }
    }

    /// Locks every host-shared array that code run now can reach: those the globals hold and
    /// `args`. A run never waits for the host: an array the host is reading or writing (in
    /// `Array::read`/`write`, on another thread or around this call) is an error.
    ///
    /// The locks go into `locks` (released when it drops), not into the result: a call of a
    /// function of scalars then pays one test for this, with nothing moved.
    #[inline]
    pub(crate) fn lock_arrays(
        &mut self,
        args: &[*mut ArrayHeader],
        locks: &mut RunLocks,
    ) -> Result<(), Error> {
        if self.array_slots.is_empty() && args.is_empty() {
            return Ok(());
        }
        self.lock_shared_arrays(args, locks)
    }

    fn lock_shared_arrays(
        &mut self,
        args: &[*mut ArrayHeader],
        locks: &mut RunLocks,
    ) -> Result<(), Error> {
        let globals = self.context.globals();
        let handles = self
            .array_slots
            .iter()
            .filter_map(|&s| globals.get(s as usize))
            .map(|&v| v as usize as *mut ArrayHeader)
            .chain(args.iter().copied())
            .filter(|a| !a.is_null());
        for a in handles {
            // SAFETY: globals and arguments hold live arrays.
            let owner = unsafe { acc_runtime::array::data_owner(a) };
            // SAFETY: as above.
            let Some(share) = (unsafe { acc_runtime::array::host_share_if_any(owner) }) else {
                continue;
            };
            if locks.held.iter().any(|&(o, _)| o == owner) {
                continue;
            }
            // SAFETY: a live array; the reference taken keeps its share alive until `RunLocks`
            // drops, which is what the `'static` stands for.
            let share: &'static HostShare = unsafe {
                acc_runtime::array::retain(owner);
                &*(share as *const HostShare)
            };
            // Never waits, so taking several cannot deadlock with another engine's run.
            if !share.lock.try_lock_exclusive() {
                // SAFETY: the reference just taken.
                unsafe { acc_runtime::array::release(owner) };
                return Err(Error::Usage(
                    "an array the code uses is being read or written by the host \
                     (`Array::read`/`write`) or used by another engine's run"
                        .into(),
                ));
            }
            locks.held.push((owner, share));
        }
        Ok(())
    }

    /// Frees the code nothing can run any more (the top-level code of finished runs, functions
    /// redefined since and not called by live code) with its sources and sites. Keeps
    /// everything while profiling: the report names the sites of every run.
    pub(crate) fn free_code(&mut self) {
        if !self.code_changed && self.held.iter().all(|h| h.strong_count() > 0) {
            return;
        }
        if self
            .context
            .devices_if_made()
            .is_some_and(|d| d.options().profile.is_on())
        {
            return;
        }
        self.code_changed = false;
        self.held.retain(|h| h.strong_count() > 0);
        let keep = self
            .last
            .as_ref()
            .map(|l| l.unit)
            .into_iter()
            .chain(self.held.iter().filter_map(|h| h.upgrade().map(|h| h.unit)));
        let dead = self.jit.unreachable(self.frontend.live_functions(), keep);
        self.context.forget_gpu_kernels(&dead);
        // SAFETY: the run finished and its device work with it (`Devices::finish`); nothing
        // holds the code of these units (`last` is kept).
        unsafe { self.jit.free(&dead) };
        let dead: HashSet<UnitId> = dead.into_iter().collect();
        let prints = &self.device_prints;
        self.compiles
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .by_first_site
            .retain(|_, c| {
                let live = c.unit.is_some_and(|u| !dead.contains(&u));
                if let (false, Some(first)) = (live, c.first_print) {
                    prints.forget(first);
                }
                live
            });
        self.free_globals();
    }

    /// Compile `text` without running it and give the IR (`Emit::Ir`), the Cranelift IR
    /// (`Emit::Clif`) or the PTX (`Emit::Ptx`) it compiles to: `acc --emit ir|clif|ptx`, and
    /// the REPL's `:ir`, `:clif` and `:ptx`. The session does not change: what `text` declares
    /// is not kept.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("a.acc", "let n = 4")?;
    /// let ir = engine.emit("b.acc", "let m = n * 2", acc::Emit::Ir)?;
    /// assert!(ir.contains("global @m: i64"), "{ir}");
    /// assert!(engine.run("c.acc", "print(m)").is_err()); // `m` was not kept
    /// engine.run("d.acc", "let m = 1.5")?; // and the name is free
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn emit(&mut self, name: &str, text: &str, what: Emit) -> Result<String, Error> {
        let source = SourceFile::new(name, text);
        let options = acc_lang::lower::Options {
            print_values: self.print_values,
            first_site: self
                .compiles
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .next_site,
        };
        let module = self
            .frontend
            .compile_trial(&source, |compiled| {
                acc_lang::with_deep_stack(|| {
                    acc_lang::lower::lower_with(&compiled.hir, &compiled.analysis, options)
                })
            })
            .map_err(|diagnostics| Error::Compile {
                diagnostics,
                source: source.clone(),
            })?;
        match what {
            Emit::Ir => Ok(module.to_string()),
            Emit::Clif => {
                // The text's own globals get slots for this text only: none is kept.
                let mut slots = self.slots.clone();
                for (g, slot) in module.globals.iter().zip(self.slot_count..) {
                    slots.insert(g.id, slot);
                }
                self.jit
                    .clif_text(&module, &slots, false)
                    .map_err(|e| Error::Internal(e.to_string()))
            }
            Emit::Ptx => {
                let options = self.ptx_options();
                let ptx = acc_lang::with_deep_stack(|| acc_jit_ptx::emit_module(&module, &options));
                let mut text = ptx.text;
                for (region, why) in &ptx.unsupported {
                    text += &format!("// region {}: runs on the host: {why}\n", region.0);
                }
                Ok(text)
            }
        }
    }

    /// Check and lower `text`, recording its source and sites for error messages under its
    /// first site number, which it also gives.
    fn lower(&mut self, name: &str, text: &str) -> Result<(ir::Module, u32), Error> {
        self.last = None;
        self.code_changed = true;
        let source = SourceFile::new(name, text);
        self.last_source = Some(source.clone());
        let compiled = self
            .frontend
            .compile(&source)
            .map_err(|diagnostics| Error::Compile {
                diagnostics,
                source: source.clone(),
            })?;
        let first_site = self
            .compiles
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .next_site;
        let options = acc_lang::lower::Options {
            print_values: self.print_values,
            first_site,
        };
        let module = acc_lang::with_deep_stack(|| {
            acc_lang::lower::lower_with(&compiled.hir, &compiled.analysis, options)
        });
        let mut compiles = self.compiles.write().unwrap_or_else(|e| e.into_inner());
        compiles.next_site += module.sites.len() as u32;
        let compile = Compile {
            source,
            sites: module.sites.clone(),
            unit: None,
            first_print: None,
        };
        compiles.by_first_site.insert(first_site, compile);
        Ok((module, first_site))
    }

    /// Drops the record of a compile that has no code.
    fn forget_compile(&mut self, first_site: u32) {
        let mut compiles = self.compiles.write().unwrap_or_else(|e| e.into_inner());
        compiles.by_first_site.remove(&first_site);
    }

    /// Compile `text` and give its `main`, keeping it as the last script.
    fn compile_last(&mut self, name: &str, text: &str) -> Result<acc_jit_host::MainFn, Error> {
        let code = self.compile_unit(name, text)?;
        let main = code.main;
        self.last = Some(LastScript {
            text: text.to_string(),
            name: name.to_string(),
            unit: code.unit,
            main: code.main,
            array_slots: code.array_slots,
        });
        Ok(main)
    }

    /// Compile `text` as a new unit of code.
    pub(crate) fn compile_unit(&mut self, name: &str, text: &str) -> Result<UnitCode, Error> {
        let (module, first_site) = self.lower(name, text)?;
        self.allocate_globals(&module.globals);
        let (jit, slots) = (&mut self.jit, &self.slots);
        let code = match acc_lang::with_deep_stack(|| jit.compile(&module, slots)) {
            Ok(code) => code,
            Err(e) => {
                self.forget_compile(first_site);
                return Err(Error::Internal(e.to_string()));
            }
        };
        let first_print = self.make_gpu_kernels(&module, code.unit);
        if let Some(c) = self
            .compiles
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .by_first_site
            .get_mut(&first_site)
        {
            c.unit = Some(code.unit);
            c.first_print = first_print;
        }
        let array_slots = module
            .globals
            .iter()
            .filter(|g| g.ty.is_array())
            .filter_map(|g| self.slots.get(&g.id).copied())
            .collect();
        Ok(UnitCode {
            unit: code.unit,
            main: code.main,
            array_slots,
        })
    }

    /// Makes the GPU kernels of a compile when there is a GPU to run them: one PTX module per
    /// compile (loaded by a GPU on first use), each region's kernel in the devices' table under
    /// the region's key. A region jit-ptx cannot compile gets none and runs on the host. Gives
    /// the id of the compile's first device print statement when it made kernels.
    fn make_gpu_kernels(&mut self, module: &ir::Module, unit: UnitId) -> Option<u32> {
        if module.regions.is_empty() || !self.makes_gpu_kernels() {
            return None;
        }
        let start = std::time::Instant::now();
        let prints = &self.device_prints;
        let (options, first_print) = (self.ptx_options(), prints.next_id());
        let ptx = acc_lang::with_deep_stack(|| {
            acc_jit_ptx::emit_module_numbered(module, &options, first_print)
        });
        prints.extend(ptx.prints);
        let prints: Arc<dyn DevicePrints> = prints.clone();
        let profiler = self.context.devices().profiler().clone();
        profiler.note_startup("PTX generation", start.elapsed());
        let text: Arc<str> = ptx.text.into();
        let strings: Arc<[String]> = module.strings.clone().into();
        let table = self.context.gpu_kernels();
        for k in &ptx.kernels {
            let kernel = GpuKernel {
                ptx: text.clone(),
                name: k.name.clone(),
                strings: strings.clone(),
                globals: (k.globals.iter())
                    .filter_map(|v| self.slots.get(v).copied())
                    .collect(),
                prints: k.prints.then(|| prints.clone()),
                launch: k.launch.clone(),
            };
            let key = RegionKey {
                unit,
                region: k.region.0,
            };
            table.insert(key, kernel);
        }
        Some(first_print)
    }

    /// Whether compiles make GPU kernels: when there is a GPU (or a test of the kernel table
    /// asks for them without one).
    fn makes_gpu_kernels(&self) -> bool {
        self.kernels_without_gpu || acc_runtime::device::gpu_count() > 0
    }

    fn ptx_options(&self) -> acc_jit_ptx::PtxOptions {
        acc_jit_ptx::PtxOptions {
            unchecked: self.unchecked,
        }
    }

    /// `--unchecked`: no bounds checks in device code (host code keeps them).
    pub fn set_unchecked(&mut self, on: bool) {
        self.unchecked = on;
        self.last = None;
    }

    fn allocate_globals(&mut self, globals: &[ir::Global]) {
        for g in globals {
            let slot = self.free_slots.pop().unwrap_or_else(|| {
                self.slot_count += 1;
                self.slot_count - 1
            });
            self.slots.insert(g.id, slot);
            if let Ty::Array { .. } = g.ty {
                self.array_slots.push(slot);
            }
        }
        self.context.ensure_globals(self.slot_count as usize);
    }

    /// Releases the globals no name refers to any more (a `let` at the top level declared the
    /// name again) and no live code uses, and frees their slots for new globals.
    fn free_globals(&mut self) {
        let mut live: HashSet<u32> = self
            .frontend
            .live_globals()
            .filter_map(|v| self.slots.get(&v).copied())
            .collect();
        live.extend(self.jit.globals_in_use());
        if live.len() == self.slots.len() {
            return;
        }
        let dead: HashSet<u32> = self
            .slots
            .values()
            .copied()
            .filter(|s| !live.contains(s))
            .collect();
        self.slots.retain(|_, s| !dead.contains(s));
        for &slot in &dead {
            if let Some(i) = self.array_slots.iter().position(|&a| a == slot) {
                self.array_slots.swap_remove(i);
                self.context.release_global_array(slot as usize);
            } else {
                self.context.clear_global(slot as usize);
            }
        }
        self.free_slots.extend(dead);
    }

    /// A run-time error as a diagnostic at its site, in the source it came from.
    fn run_error(&self, e: RunError) -> Error {
        let compiles = self.compiles.read().unwrap_or_else(|e| e.into_inner());
        let site = e.site.and_then(|s| compiles.site(s));
        let (source, span, what) = match site {
            Some((source, site)) => (source.clone(), site.span, site.what.clone()),
            None => (
                self.last_source
                    .clone()
                    .unwrap_or_else(|| SourceFile::new("", "")),
                Span::default(),
                String::new(),
            ),
        };
        let what = if what.is_empty() {
            source
                .text
                .get(span.range())
                .unwrap_or_default()
                .to_string()
        } else {
            what
        };
        let message = e.kind.message(&what);
        let diagnostic = match site {
            Some(_) => Diagnostic::error(message, span, e.kind.label()),
            None => Diagnostic::unlocated(message),
        };
        let diagnostic = match e.kind.help() {
            Some(h) => diagnostic.with_help(h),
            None => diagnostic,
        };
        use acc_runtime::error::RunErrorKind as K;
        let diagnostic = Box::new(diagnostic);
        match e.kind {
            K::Interrupted => Error::Interrupted { diagnostic, source },
            K::TimeLimit | K::CallDepth { .. } => Error::Limit { diagnostic, source },
            _ => Error::Runtime { diagnostic, source },
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        for &slot in &self.array_slots {
            self.context.release_global_array(slot as usize);
        }
    }
}

#[cfg(test)]
mod tests;
