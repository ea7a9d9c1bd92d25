//! Devices: which one is current, and what each does with launches, data directives and
//! waits (LANGUAGE.md 7.3, 7.4, 7.7, 7.10).
//!
//! - `host`: one thread, host memory. Gangs run one after another on the caller's context.
//! - `multicore`: host memory, gangs on a thread pool. Data directives move nothing.
//! - `emulated` (`emulated.rs`): separate device memory per device, a presence table and
//!   async queues (worker threads) each, gangs on the thread pool. It behaves as a discrete
//!   GPU does, so that every data, queue and multi-device rule is testable without one.
//! - `nvidia` (`nvidia.rs`): a CUDA GPU.
//!
//! The discrete devices share their data rules (`discrete.rs`). The host devices run `async`
//! work synchronously (OpenACC allows it: an `async` operation may complete before the
//! directive returns); their queues are always drained.
//!
//! `Devices` belongs to the run's `Context` (`RunDevices`, which `Ctx::devices` points at):
//! this file selects the device; `compute.rs` runs
//! compute constructs, `directives.rs` data directives and waits; the `extern "C"` entry
//! points compiled code calls are in `entry.rs`.

mod autocompare;
mod compute;
mod deferred;
mod directives;
mod discrete;
mod edges;
mod emulated;
pub mod entry;
mod messages;
mod nvidia;
pub mod ops;
mod peer;
mod split;

use std::sync::Arc;

use crate::abi::Ctx;
use crate::error::{RunError, RunErrorKind};
use crate::kernels::KernelTable;
use crate::launch::UnitId;
use crate::profile::{DeviceRef, Place, ProfileOptions, Profiler};
pub use autocompare::{AutocompareOptions, F32_REL_TOL, F64_REL_TOL};
pub use compute::Launch;
pub use edges::EdgesFirst;
pub use emulated::Emulated;
pub use nvidia::{gpu_count, Nvidia};
pub use ops::{DataOpArg, DataPhase, QueueArg, ASYNC_NOVAL, ASYNC_SYNC};

pub use acc_abi::DeviceType;

/// Device type codes (`DeviceType`'s), as the runtime and the standard library match on them.
pub const DEVICE_NONE: i32 = DeviceType::None.code();
pub const DEVICE_DEFAULT: i32 = DeviceType::Default.code();
pub const DEVICE_HOST: i32 = DeviceType::Host.code();
pub const DEVICE_NOT_HOST: i32 = DeviceType::NotHost.code();
pub const DEVICE_NVIDIA: i32 = DeviceType::Nvidia.code();
pub const DEVICE_MULTICORE: i32 = DeviceType::Multicore.code();
pub const DEVICE_EMULATED: i32 = DeviceType::Emulated.code();

/// A device the runtime runs code on: the device types that name one kind of device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    Host,
    Multicore,
    Emulated,
    Nvidia,
}

impl DeviceKind {
    pub fn device_type(self) -> DeviceType {
        match self {
            DeviceKind::Host => DeviceType::Host,
            DeviceKind::Multicore => DeviceType::Multicore,
            DeviceKind::Emulated => DeviceType::Emulated,
            DeviceKind::Nvidia => DeviceType::Nvidia,
        }
    }

    /// Its `acc_device_t` value.
    pub fn code(self) -> i32 {
        self.device_type().code()
    }

    /// The kind a device type code names (`None` for `none`, `default`, `not_host` and
    /// unknown codes).
    pub fn from_code(code: i32) -> Option<DeviceKind> {
        Some(match DeviceType::from_code(code)? {
            DeviceType::Host => DeviceKind::Host,
            DeviceType::Multicore => DeviceKind::Multicore,
            DeviceType::Emulated => DeviceKind::Emulated,
            DeviceType::Nvidia => DeviceKind::Nvidia,
            DeviceType::None | DeviceType::Default | DeviceType::NotHost => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Host => "host",
            DeviceKind::Multicore => "multicore",
            DeviceKind::Emulated => "emulated",
            DeviceKind::Nvidia => "nvidia",
        }
    }

    pub fn from_name(name: &str) -> Option<DeviceKind> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "host" => DeviceKind::Host,
            "multicore" => DeviceKind::Multicore,
            "emulated" => DeviceKind::Emulated,
            "nvidia" => DeviceKind::Nvidia,
            _ => return None,
        })
    }
}

/// How the devices are set up: from the environment (`from_env`), then the command line, or
/// by a program that embeds acc, with the builder methods:
///
/// ```
/// use acc_runtime::device::{DeviceKind, DeviceOptions};
/// let opts = DeviceOptions::new().device(DeviceKind::Emulated, 1).threads(4).profile(true);
/// assert_eq!((opts.kind, opts.num, opts.threads), (Some(DeviceKind::Emulated), 1, 4));
/// ```
///
/// It may gain fields (`#[non_exhaustive]`): other crates build it with `new()` or
/// `from_env()` and the builder methods.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct DeviceOptions {
    /// The initial device type; `None`: an NVIDIA GPU when there is one, else `multicore`.
    pub kind: Option<DeviceKind>,
    pub num: usize,
    /// `ACC_EMULATED_DEVICES` (default 2).
    pub emulated: usize,
    /// `--synchronous` / `ACC_SYNCHRONOUS=1`.
    pub synchronous: bool,
    /// Threads of the multicore and emulated devices (default: the machine's cores).
    pub threads: usize,
    pub profile: ProfileOptions,
    /// `--autocompare` (`ACC_AUTOCOMPARE=1`): every compute region checked against a host run.
    pub autocompare: Option<AutocompareOptions>,
    /// `ACC_EDGES_FIRST`: whether GPUs of a split launch run the iterations that write the
    /// rows they send to other GPUs first (`edges.rs`).
    pub edges_first: EdgesFirst,
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions {
            kind: None,
            num: 0,
            emulated: 2,
            synchronous: false,
            threads: std::thread::available_parallelism().map_or(2, |n| n.get()),
            profile: ProfileOptions::default(),
            autocompare: None,
            edges_first: EdgesFirst::Auto,
        }
    }
}

impl DeviceOptions {
    /// The defaults: a GPU when there is one (else `multicore`), two emulated devices, as
    /// many host threads as cores, asynchronous queues, no profile.
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// let opts = DeviceOptions::new();
    /// assert_eq!((opts.kind, opts.emulated, opts.synchronous), (None, 2, false));
    /// ```
    pub fn new() -> DeviceOptions {
        DeviceOptions::default()
    }

    /// Start on device `num` of type `kind`.
    ///
    /// ```
    /// # use acc_runtime::device::{DeviceKind, DeviceOptions};
    /// let opts = DeviceOptions::new().device(DeviceKind::Multicore, 0);
    /// assert_eq!(opts.kind, Some(DeviceKind::Multicore));
    /// ```
    pub fn device(mut self, kind: DeviceKind, num: usize) -> DeviceOptions {
        self.kind = Some(kind);
        self.num = num;
        self
    }

    /// How many emulated devices there are (at least 1).
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// assert_eq!(DeviceOptions::new().emulated_devices(0).emulated, 1);
    /// ```
    pub fn emulated_devices(mut self, count: usize) -> DeviceOptions {
        self.emulated = count.max(1);
        self
    }

    /// Run every `async` operation synchronously.
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// assert!(DeviceOptions::new().synchronous(true).synchronous);
    /// ```
    pub fn synchronous(mut self, on: bool) -> DeviceOptions {
        self.synchronous = on;
        self
    }

    /// Threads of the multicore and emulated devices (at least 1).
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// assert_eq!(DeviceOptions::new().threads(8).threads, 8);
    /// ```
    pub fn threads(mut self, count: usize) -> DeviceOptions {
        self.threads = count.max(1);
        self
    }

    /// Record a profile (`Engine::profile_report`).
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// assert!(DeviceOptions::new().profile(true).profile.profile);
    /// ```
    pub fn profile(mut self, on: bool) -> DeviceOptions {
        self.profile.profile = on;
        self
    }

    /// Record a trace of every kernel, transfer and wait (`Engine::chrome_trace`).
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// assert!(DeviceOptions::new().trace(true).profile.trace);
    /// ```
    pub fn trace(mut self, on: bool) -> DeviceOptions {
        self.profile.trace = on;
        self
    }

    /// Print a notice per event of the kinds in `mask` (`ACC_NOTIFY`: 1 launches,
    /// 2 transfers, 4 waits, 8 region entry and exit, 16 allocations).
    ///
    /// ```
    /// # use acc_runtime::device::DeviceOptions;
    /// assert_eq!(DeviceOptions::new().notify(1 | 2).profile.notify, 3);
    /// ```
    pub fn notify(mut self, mask: u32) -> DeviceOptions {
        self.profile.notify = mask;
        self
    }

    /// Run every compute region again on the host and report where the results differ
    /// (`--autocompare`; `None`: off).
    ///
    /// ```
    /// # use acc_runtime::device::{AutocompareOptions, DeviceOptions};
    /// let opts = DeviceOptions::new().autocompare(Some(AutocompareOptions::default()));
    /// assert_eq!(opts.autocompare.map(|a| a.limit), Some(50));
    /// ```
    pub fn autocompare(mut self, opts: Option<AutocompareOptions>) -> DeviceOptions {
        self.autocompare = opts;
        self
    }

    /// Whether the GPUs of a split launch that send rows to each other run the iterations
    /// writing those rows first, so that the rows travel while the rest runs (`Auto`: where
    /// each GPU's part is long enough for it to pay).
    ///
    /// ```
    /// # use acc_runtime::device::{DeviceOptions, EdgesFirst};
    /// assert_eq!(DeviceOptions::new().edges_first(EdgesFirst::Off).edges_first, EdgesFirst::Off);
    /// ```
    pub fn edges_first(mut self, mode: EdgesFirst) -> DeviceOptions {
        self.edges_first = mode;
        self
    }

    /// `ACC_DEVICE_TYPE`, `ACC_DEVICE_NUM`, `ACC_EMULATED_DEVICES`, `ACC_SYNCHRONOUS`,
    /// `ACC_NUM_CORES`, `ACC_PROFILE`, `ACC_NOTIFY`, `ACC_AUTOCOMPARE`,
    /// `ACC_AUTOCOMPARE_LIMIT`, `ACC_EDGES_FIRST`. Values that do not parse are errors.
    pub fn from_env() -> Result<DeviceOptions, String> {
        let mut o = DeviceOptions::default();
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        if let Some(t) = var("ACC_DEVICE_TYPE") {
            o.kind = Some(DeviceKind::from_name(&t).ok_or_else(|| {
                format!("ACC_DEVICE_TYPE=`{t}`: expected nvidia, host, multicore or emulated")
            })?);
        }
        if let Some(n) = var("ACC_DEVICE_NUM") {
            o.num = parse_count("ACC_DEVICE_NUM", &n)?;
        }
        if let Some(n) = var("ACC_EMULATED_DEVICES") {
            o.emulated = parse_count("ACC_EMULATED_DEVICES", &n)?.max(1);
        }
        if let Some(n) = var("ACC_NUM_CORES") {
            o.threads = parse_count("ACC_NUM_CORES", &n)?.max(1);
        }
        o.synchronous = var("ACC_SYNCHRONOUS").is_some_and(|v| v.trim() != "0");
        o.profile.profile = var("ACC_PROFILE").is_some_and(|v| v.trim() != "0");
        if let Some(n) = var("ACC_NOTIFY") {
            o.profile.notify = parse_count("ACC_NOTIFY", &n)? as u32;
        }
        if var("ACC_AUTOCOMPARE").is_some_and(|v| v.trim() != "0") {
            o.autocompare = Some(AutocompareOptions::from_env()?);
        }
        if let Some(v) = var("ACC_EDGES_FIRST") {
            o.edges_first = EdgesFirst::from_name(&v)
                .ok_or_else(|| format!("ACC_EDGES_FIRST=`{v}`: expected auto, on or off"))?;
        }
        Ok(o)
    }

    /// `--device TYPE[:N]`.
    pub fn set_device(&mut self, spec: &str) -> Result<(), String> {
        let (t, n) = match spec.split_once(':') {
            Some((t, n)) => (t, Some(n)),
            None => (spec, None),
        };
        self.kind = Some(DeviceKind::from_name(t).ok_or_else(|| {
            format!("unknown device type `{t}`: expected nvidia, host, multicore or emulated")
        })?);
        if let Some(n) = n {
            self.num = parse_count("the device number", n)?;
        }
        Ok(())
    }
}

fn parse_count(what: &str, v: &str) -> Result<usize, String> {
    v.trim()
        .parse()
        .map_err(|_| format!("{what}: `{v}` is not a number >= 0"))
}

/// Every device of a run, and which one is current.
pub struct Devices {
    opts: DeviceOptions,
    kind: DeviceKind,
    num: usize,
    /// The thread pool of the multicore and emulated devices, made on first use.
    pool: Option<Arc<crate::gang_pool::GangPool>>,
    emulated: Vec<Emulated>,
    /// GPUs opened so far, by number.
    nvidia: Vec<Option<Nvidia>>,
    profiler: Arc<Profiler>,
    /// The GPU kernels of the live compiles, which a launch on a GPU runs (the `RunDevices`'
    /// table: it outlives these devices).
    kernels: Arc<KernelTable>,
    /// The `data` constructs entered and not yet exited, innermost last.
    open: Vec<OpenRegion>,
    /// The arrays `data … devices(…)` regions hold split over devices (`split.rs`).
    split: split::SplitArrays,
    /// A split launch left running (`deferred.rs`).
    deferred: Option<deferred::Deferred>,
    /// The results of late launches the host caught up on, by the address of their argument
    /// slots, until compiled code takes them (`take_late_results`).
    late_results: Vec<(usize, Vec<u64>)>,
    /// `--autocompare`'s state; `None` when it is off.
    autocompare: Option<autocompare::Autocompare>,
    /// A notice for the user, set when the requested device, or without a request a GPU, is
    /// not available (`--info`).
    pub notice: Option<String>,
}

impl Devices {
    pub fn new(opts: DeviceOptions, kernels: Arc<KernelTable>) -> Devices {
        let profiler = Arc::new(Profiler::new(opts.profile, Box::new(std::io::stderr())));
        let mut d = Devices {
            kind: DeviceKind::Multicore,
            num: 0,
            pool: None,
            emulated: Vec::new(),
            nvidia: Vec::new(),
            profiler,
            kernels,
            open: Vec::new(),
            split: Default::default(),
            deferred: None,
            late_results: Vec::new(),
            notice: None,
            autocompare: opts.autocompare.map(autocompare::Autocompare::new),
            opts,
        };
        let (kind, num) = (d.opts.kind, d.opts.num);
        match kind {
            None | Some(DeviceKind::Nvidia) if gpu_count() == 0 => {
                d.notice = Some("no NVIDIA GPU or CUDA driver found: running on multicore".into())
            }
            // The default type is the GPU's, and the number (`ACC_DEVICE_NUM`, an MPI rank's
            // GPU) applies to it as to a named type.
            kind if d.select(kind.unwrap_or(DeviceKind::Nvidia), num).is_err() => {
                let k = kind.unwrap_or(DeviceKind::Nvidia);
                d.notice = Some(format!(
                    "there is no {} device {num}: running on {} device 0",
                    k.name(),
                    k.name()
                ));
                let _ = d.select(k, 0);
            }
            _ => {}
        }
        d
    }

    pub fn options(&self) -> &DeviceOptions {
        &self.opts
    }

    pub fn profiler(&self) -> &Arc<Profiler> {
        &self.profiler
    }

    pub fn current(&self) -> (DeviceKind, usize) {
        (self.kind, self.num)
    }

    /// How many devices of a type there are (`acc_get_num_devices`).
    pub fn count(&self, t: i32) -> usize {
        match t {
            DEVICE_HOST | DEVICE_MULTICORE => 1,
            DEVICE_EMULATED => self.opts.emulated,
            DEVICE_DEFAULT => self.count(self.kind.code()),
            DEVICE_NVIDIA => gpu_count(),
            DEVICE_NOT_HOST => self.opts.emulated + gpu_count(),
            _ => 0,
        }
    }

    /// `acc_set_device_num(n, t)` / `acc_set_device_type(t)`.
    pub fn select(&mut self, kind: DeviceKind, num: usize) -> Result<(), RunErrorKind> {
        let n = self.count(kind.code());
        if num >= n {
            return Err(RunErrorKind::NoSuchDevice {
                message: match n {
                    0 => format!("there is no {} device", kind.name()),
                    1 => format!("there is no {} device {num} (there is 1: 0)", kind.name()),
                    _ => format!(
                        "there is no {} device {num} (there are {n}: 0 to {})",
                        kind.name(),
                        n - 1
                    ),
                },
            });
        }
        self.kind = kind;
        self.num = num;
        Ok(())
    }

    /// Device type `t` resolved: `acc_device_default` is the current type, `not_host` the
    /// emulated device.
    pub fn resolve(&self, t: i32) -> Option<DeviceKind> {
        match t {
            DEVICE_DEFAULT => Some(self.kind),
            DEVICE_NOT_HOST => Some(DeviceKind::Emulated),
            _ => DeviceKind::from_code(t),
        }
    }

    pub(super) fn pool(&mut self) -> Arc<crate::gang_pool::GangPool> {
        let threads = self.opts.threads;
        self.pool
            .get_or_insert_with(|| Arc::new(crate::gang_pool::GangPool::new(threads)))
            .clone()
    }

    /// The current emulated device (made on first use).
    pub(super) fn emulated(&mut self, num: usize) -> &mut Emulated {
        while self.emulated.len() <= num {
            let n = self.emulated.len();
            let e = Emulated::new(n, self.opts.synchronous, self.profiler.clone());
            self.emulated.push(e);
        }
        &mut self.emulated[num]
    }

    /// The current device, when it has memory of its own (opening a GPU on first use).
    pub(super) fn current_device(&mut self) -> Result<Current<'_>, RunErrorKind> {
        let num = self.num;
        match self.kind {
            DeviceKind::Emulated => Ok(Current::Emulated(self.emulated(num))),
            DeviceKind::Nvidia => {
                while self.nvidia.len() <= num {
                    self.nvidia.push(None);
                }
                if self.nvidia[num].is_none() {
                    self.nvidia[num] = Some(Nvidia::new(num, self.profiler.clone())?);
                }
                match self.nvidia[num].as_mut() {
                    Some(gpu) => {
                        gpu.make_current()?;
                        Ok(Current::Nvidia(gpu))
                    }
                    None => Ok(Current::Shared),
                }
            }
            DeviceKind::Host | DeviceKind::Multicore => Ok(Current::Shared),
        }
    }

    pub(super) fn place(&self, site: u32, queue: Option<i32>) -> Place {
        Place {
            site,
            device: DeviceRef {
                kind: self.kind.name(),
                num: self.num as u32,
            },
            queue,
        }
    }

    /// Waits for every queue of every device and reports what finished (the end of a run).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub unsafe fn finish(&mut self, ctx: *mut Ctx) {
        self.catch_up(ctx);
        // Results compiled code never took: its run failed before it got to them.
        self.late_results.clear();
        // A run on the host devices (a call of a small function, say) has nothing to finish.
        if self.emulated.is_empty() && self.nvidia.is_empty() && self.open.is_empty() {
            return;
        }
        for e in &mut self.emulated {
            e.wait_all();
        }
        for e in &mut self.emulated {
            e.drain(ctx);
        }
        for gpu in self.nvidia.iter_mut().flatten() {
            gpu.wait(ctx, None);
        }
        self.unwind();
        for gpu in self.nvidia.iter_mut().flatten() {
            gpu.end_run();
        }
    }

    /// `data` constructs entered and not exited (0 between runs).
    pub fn open_regions(&self) -> usize {
        self.open.len()
    }

    /// `(total, free)` memory of GPU `num` in bytes (`acc_get_property`), opening it if needed;
    /// `None` when there is no such GPU.
    pub fn gpu_memory(&mut self, num: usize) -> Option<(u64, u64)> {
        if num >= gpu_count() {
            return None;
        }
        while self.nvidia.len() <= num {
            self.nvidia.push(None);
        }
        if self.nvidia[num].is_none() {
            self.nvidia[num] = Nvidia::new(num, self.profiler.clone()).ok();
        }
        let memory = self.nvidia[num].as_ref()?.memory();
        // Leave the current device's context current.
        if let (DeviceKind::Nvidia, Some(Some(gpu))) = (self.kind, self.nvidia.get(self.num)) {
            let _ = gpu.make_current();
        }
        memory
    }

    /// Drops what the GPUs made for the kernels of a PTX text (`Nvidia::forget_kernels`).
    fn forget_kernels(&mut self, ptx: &Arc<str>) {
        for gpu in self.nvidia.iter_mut().flatten() {
            gpu.forget_kernels(ptx);
        }
    }

    /// The devices made so far on which any part of host array `a` is present (the REPL's
    /// `:vars`); the devices that share host memory are not listed.
    ///
    /// # Safety
    /// `a` is a live array.
    pub unsafe fn present_on(&self, a: *mut crate::abi::ArrayHeader) -> Vec<DeviceRef> {
        let device = |kind: &'static str, num: usize| DeviceRef {
            kind,
            num: num as u32,
        };
        let emulated = (self.emulated.iter().enumerate())
            .filter(|(_, e)| e.copy_of(a).is_some())
            .map(|(num, _)| device("emulated", num));
        let gpus = (self.nvidia.iter().enumerate())
            .filter(|(_, g)| g.as_ref().is_some_and(|g| g.holds(a)))
            .map(|(num, _)| device("nvidia", num));
        emulated.chain(gpus).collect()
    }

    /// Turns the `--profile` statistics on or off from now on, keeping the devices and their
    /// data (the REPL's `:profile on|off`; what was recorded stays).
    pub fn set_profile(&mut self, on: bool) {
        self.opts.profile.profile = on;
        self.profiler.set_profile(on);
    }

    /// Arrays present on any device (0 when every data region and `enter data` was exited).
    pub fn present_arrays(&self) -> usize {
        let emulated: usize = self.emulated.iter().map(Emulated::present_arrays).sum();
        let gpus: usize = self
            .nvidia
            .iter()
            .flatten()
            .map(Nvidia::present_arrays)
            .sum();
        emulated + gpus
    }
}

impl Drop for Devices {
    fn drop(&mut self) {
        // SAFETY: the records hold references on their arrays.
        unsafe { self.unwind() };
        for (_, s) in self.split.drain() {
            // SAFETY: the entry's reference (unwinding exited the regions holding it).
            unsafe { crate::array::release(s.host()) };
        }
        for e in &mut self.emulated {
            e.wait_all();
            e.free_all();
        }
        for gpu in self.nvidia.iter_mut().flatten() {
            gpu.free_all();
        }
    }
}

/// The devices of a run, made on first use (a run that uses none starts no GPU driver): what
/// `Ctx::devices` points at. A `Context` owns it.
#[derive(Default)]
pub struct RunDevices {
    devices: Option<Box<Devices>>,
    options: DeviceOptions,
    /// The GPU kernels of the live compiles, kept when the devices are set up anew (the code
    /// that launches them stays).
    kernels: Arc<KernelTable>,
}

impl RunDevices {
    /// Sets up the devices anew (waiting for and dropping the old ones).
    pub fn configure(&mut self, options: DeviceOptions) {
        self.devices = None;
        self.options = options;
    }

    /// The devices (made on first use).
    pub fn get(&mut self) -> &mut Devices {
        let (options, kernels) = (&self.options, &self.kernels);
        self.devices
            .get_or_insert_with(|| Box::new(Devices::new(options.clone(), kernels.clone())))
    }

    /// The devices if they were made.
    pub fn if_made(&mut self) -> Option<&mut Devices> {
        self.devices.as_deref_mut()
    }

    /// The GPU kernels of the live compiles.
    pub fn kernels(&self) -> &KernelTable {
        &self.kernels
    }

    /// Drops the GPU kernels of `units`, whose code is being freed, and what the GPUs made
    /// for them. Nothing of theirs may be queued (the runs that used them finished).
    pub fn forget_units(&mut self, units: &[UnitId]) {
        let texts = self.kernels.remove_units(units);
        if let Some(devices) = self.devices.as_deref_mut() {
            for ptx in &texts {
                devices.forget_kernels(ptx);
            }
        }
    }
}

/// The devices of the run of `ctx` (made on first use). Panics in a gang's context, whose
/// code uses no device (the checker allows no device routine in a region).
///
/// # Safety
/// `ctx` is a live context whose `devices` is null or a live `RunDevices`, not otherwise
/// borrowed while the reference is used.
pub unsafe fn devices<'a>(ctx: *mut Ctx) -> &'a mut Devices {
    let run = (*ctx).devices as *mut RunDevices;
    assert!(!run.is_null(), "a device used from a gang's context");
    (*run).get()
}

pub(crate) use deferred::catch_up;

/// Records an error from device code (with its own site) in the host context.
///
/// # Safety
/// `ctx` is a live context.
pub(crate) unsafe fn report(ctx: *mut Ctx, e: RunError) {
    crate::host::fail(ctx, e.kind, e.site);
}

/// A `data` construct that was entered and not yet exited (`Devices::data`).
pub(crate) struct OpenRegion {
    /// The device its clauses were entered on; `None` for one that shares host memory.
    device: Option<(DeviceKind, usize)>,
    /// Its `async` queue.
    q: QueueArg,
    /// The clauses entered, each holding a reference on its array.
    ops: Vec<DataOpArg>,
    /// `devices(…)`: the devices it holds its arrays split over (empty for a plain region).
    split: Vec<usize>,
}

impl OpenRegion {
    /// # Safety
    /// The ops' arrays are live.
    unsafe fn new(device: Option<(DeviceKind, usize)>, q: QueueArg, ops: &[DataOpArg]) -> Self {
        for op in ops {
            crate::array::retain(op.array);
        }
        OpenRegion {
            device,
            q,
            ops: ops.to_vec(),
            split: Vec::new(),
        }
    }
}

impl Drop for OpenRegion {
    fn drop(&mut self) {
        for op in &self.ops {
            // SAFETY: the reference taken in `new`.
            unsafe { crate::array::release(op.array) };
        }
    }
}

/// The current device as the directives see it.
pub(super) enum Current<'a> {
    /// Host memory: data directives move nothing, queues are always drained.
    Shared,
    Emulated(&'a mut Emulated),
    Nvidia(&'a mut Nvidia),
}
