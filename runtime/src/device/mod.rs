//! Devices: which one is current, and what each does with launches, data directives and
//! waits (LANGUAGE.md 7.3, 7.4, 7.7, 7.10).
//!
//! - `host`: one thread, host memory. Gangs run one after another on the caller's context.
//! - `multicore`: host memory, gangs on a thread pool. Data directives move nothing.
//! - `emulated` (`emulated.rs`): separate device memory per device, a presence table and
//!   async queues (worker threads) each, gangs on the thread pool. It behaves as a discrete
//!   GPU does, so that every data, queue and multi-device rule is testable without one.
//!
//! The host devices run `async` work synchronously (OpenACC allows it: an `async` operation
//! may complete before the directive returns); their queues are always drained.
//!
//! `Devices` lives in the run's `HostState`; the `extern "C"` entry points compiled code calls
//! are in `entry.rs`.

mod discrete;
mod emulated;
pub mod entry;
mod nvidia;
pub mod ops;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::abi::{ArrayHeader, Ctx};
use crate::error::{RunError, RunErrorKind};
use crate::host::host_state;
use crate::launch::{self, ComputeKind, RegionDesc};
use crate::profile::{DeviceRef, EventKind, Place, ProfileOptions, Profiler};
use crate::queue::QueueId;
pub use emulated::Emulated;
pub use nvidia::{gpu_count, Nvidia};
use ops::decode_queues;
pub use ops::{DataOpArg, DataPhase, QueueArg, ASYNC_NOVAL, ASYNC_SYNC, SECTION_ABSENT};

/// Device type codes: `acc_device_*` values (`acc_lang::builtins::BuiltinConst`).
pub const DEVICE_NONE: i32 = 0;
pub const DEVICE_DEFAULT: i32 = 1;
pub const DEVICE_HOST: i32 = 2;
pub const DEVICE_NOT_HOST: i32 = 3;
pub const DEVICE_NVIDIA: i32 = 4;
pub const DEVICE_MULTICORE: i32 = 8;
pub const DEVICE_EMULATED: i32 = 100;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    Host,
    Multicore,
    Emulated,
    Nvidia,
}

impl DeviceKind {
    pub fn code(self) -> i32 {
        match self {
            DeviceKind::Host => DEVICE_HOST,
            DeviceKind::Multicore => DEVICE_MULTICORE,
            DeviceKind::Emulated => DEVICE_EMULATED,
            DeviceKind::Nvidia => DEVICE_NVIDIA,
        }
    }

    pub fn from_code(code: i32) -> Option<DeviceKind> {
        Some(match code {
            DEVICE_HOST => DeviceKind::Host,
            DEVICE_MULTICORE => DeviceKind::Multicore,
            DEVICE_EMULATED => DeviceKind::Emulated,
            DEVICE_NVIDIA => DeviceKind::Nvidia,
            _ => return None,
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

/// How the devices are set up: from the environment (`from_env`), then the command line.
#[derive(Clone, Debug)]
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
        }
    }
}

impl DeviceOptions {
    /// `ACC_DEVICE_TYPE`, `ACC_DEVICE_NUM`, `ACC_EMULATED_DEVICES`, `ACC_SYNCHRONOUS`,
    /// `ACC_NUM_CORES`, `ACC_PROFILE`, `ACC_NOTIFY`. Values that do not parse are errors.
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
    pool: Option<Arc<rayon::ThreadPool>>,
    emulated: Vec<Emulated>,
    /// GPUs opened so far, by number.
    nvidia: Vec<Option<Nvidia>>,
    profiler: Arc<Profiler>,
    /// A notice for the user, set when the requested device is not available (`--info`).
    pub notice: Option<String>,
}

impl Devices {
    pub fn new(opts: DeviceOptions) -> Devices {
        let profiler = Arc::new(Profiler::new(opts.profile, Box::new(std::io::stderr())));
        let mut d = Devices {
            kind: DeviceKind::Multicore,
            num: 0,
            pool: None,
            emulated: Vec::new(),
            nvidia: Vec::new(),
            profiler,
            notice: None,
            opts,
        };
        let (kind, num) = (d.opts.kind, d.opts.num);
        match kind {
            None if gpu_count() > 0 => d.kind = DeviceKind::Nvidia,
            None => {}
            Some(DeviceKind::Nvidia) if gpu_count() == 0 => {
                d.notice = Some("no NVIDIA GPU or CUDA driver found: running on multicore".into())
            }
            Some(k) if d.select(k, num).is_err() => {
                d.notice = Some(format!(
                    "there is no {} device {num}: running on {} device 0",
                    k.name(),
                    k.name()
                ));
                let _ = d.select(k, 0);
            }
            Some(_) => {}
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

    fn pool(&mut self) -> Arc<rayon::ThreadPool> {
        let threads = self.opts.threads;
        self.pool
            .get_or_insert_with(|| {
                Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(threads)
                        .thread_name(|i| format!("acc-gang-{i}"))
                        .build()
                        .expect("a thread pool"),
                )
            })
            .clone()
    }

    /// The current emulated device (made on first use).
    fn emulated(&mut self, num: usize) -> &mut Emulated {
        while self.emulated.len() <= num {
            let n = self.emulated.len();
            let e = Emulated::new(n, self.opts.synchronous, self.profiler.clone());
            self.emulated.push(e);
        }
        &mut self.emulated[num]
    }

    /// The current device, when it has memory of its own (opening a GPU on first use).
    fn current_device(&mut self) -> Result<Current<'_>, RunErrorKind> {
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
                Ok(self.nvidia[num]
                    .as_mut()
                    .map_or(Current::Shared, Current::Nvidia))
            }
            DeviceKind::Host | DeviceKind::Multicore => Ok(Current::Shared),
        }
    }

    fn place(&self, site: u32, queue: Option<i32>) -> Place {
        Place {
            site,
            device: DeviceRef {
                kind: self.kind.name(),
                num: self.num as u32,
            },
            queue,
        }
    }

    /// The gang count of a launch on the current device: `num_gangs` for its type (the
    /// `nvidia` one on `emulated`, which stands in for a GPU), else one per pool thread on
    /// the threaded devices and 1 on `host`; always 1 for `serial` and `kernels`.
    fn gangs(&self, desc: &RegionDesc, sizes: &[i64; 9], kind: DeviceKind) -> i64 {
        if desc.kind != ComputeKind::Parallel {
            return 1;
        }
        let (given, default) = match kind {
            DeviceKind::Host => (sizes[3], 1),
            DeviceKind::Multicore => (sizes[6], self.opts.threads as i64),
            DeviceKind::Emulated | DeviceKind::Nvidia => (sizes[0], self.opts.threads as i64),
        };
        if given == SECTION_ABSENT {
            default
        } else {
            given.max(1)
        }
    }

    /// Runs a region on the host or multicore device, or on the host for `if(false)`.
    ///
    /// # Safety
    /// As `entry::acc_rt_launch`.
    unsafe fn launch_shared_memory(
        &mut self,
        ctx: *mut Ctx,
        desc: &RegionDesc,
        args: &mut [u64],
        sizes: &[i64; 9],
        kind: DeviceKind,
        site: u32,
    ) {
        let Some(func) = desc.func() else {
            return internal(ctx, "a region launched before its code was finalized");
        };
        let gangs = self.gangs(desc, sizes, kind);
        let start = std::time::Instant::now();
        if kind == DeviceKind::Host || gangs == 1 {
            let out = launch::run_gangs_inline(ctx, desc, func, args, gangs);
            args.copy_from_slice(&out);
        } else {
            let pool = self.pool();
            let r = launch::run_gangs_threaded(
                &pool,
                (*ctx).globals,
                DEVICE_MULTICORE,
                desc,
                func,
                args,
                gangs,
            );
            host_state(ctx).write(&r.output);
            if let Some(e) = r.error {
                report(ctx, e);
            }
            args.copy_from_slice(&r.args);
        }
        let place = self.place(site, None);
        self.profiler.record(
            place,
            EventKind::Launch {
                gangs: gangs as u32,
                workers: 1,
                vector: 1,
            },
            start,
            std::time::Instant::now(),
        );
    }

    /// Waits for every queue of every device and reports what finished (the end of a run).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub unsafe fn finish(&mut self, ctx: *mut Ctx) {
        for e in &mut self.emulated {
            e.wait_all();
        }
        for e in &mut self.emulated {
            e.drain(ctx);
        }
        for gpu in self.nvidia.iter_mut().flatten() {
            gpu.wait(ctx, None);
        }
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
        for e in &mut self.emulated {
            e.wait_all();
            e.free_all();
        }
        for gpu in self.nvidia.iter_mut().flatten() {
            gpu.free_all();
        }
    }
}

/// Records an error from device code (with its own site) in the host context.
///
/// # Safety
/// `ctx` is a live context.
pub(crate) unsafe fn report(ctx: *mut Ctx, e: RunError) {
    crate::host::fail(ctx, e.kind, e.site);
}

unsafe fn internal(ctx: *mut Ctx, message: &str) {
    crate::host::fail(
        ctx,
        RunErrorKind::Internal {
            message: message.into(),
        },
        None,
    );
}

/// The current device as the directives see it.
enum Current<'a> {
    /// Host memory: data directives move nothing, queues are always drained.
    Shared,
    Emulated(&'a mut Emulated),
    Nvidia(&'a mut Nvidia),
}

/// A pointer that a queued job carries to another thread.
#[derive(Clone, Copy)]
struct SendPtr<T>(*const T);
// SAFETY: what it points at outlives every queued job (the engine waits for all queues at the
// end of a run; region descriptors live as long as their code) and is only read.
unsafe impl<T> Send for SendPtr<T> {}

impl Devices {
    /// `acc_rt_launch`: a compute construct's data entry, the kernel, the data exit.
    ///
    /// # Safety
    /// `ctx` is a live context; `args` matches `desc.params`; the ops' arrays are live.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn launch(
        &mut self,
        ctx: *mut Ctx,
        desc: &RegionDesc,
        args: &mut [u64],
        ops: &[DataOpArg],
        sizes: &[i64; 9],
        cond: bool,
        queue: i64,
        waits: Option<&[i64]>,
        site: u32,
    ) {
        let now = Instant::now();
        self.profiler
            .record(self.place(site, None), EventKind::RegionEnter, now, now);
        match (cond, self.kind) {
            (false, _) => self.launch_shared_memory(ctx, desc, args, sizes, DeviceKind::Host, site),
            (true, DeviceKind::Emulated) => {
                self.launch_emulated(ctx, desc, args, ops, sizes, queue, waits, site)
            }
            (true, DeviceKind::Nvidia) => {
                self.launch_nvidia(ctx, desc, args, ops, sizes, queue, waits, site)
            }
            (true, kind) => self.launch_shared_memory(ctx, desc, args, sizes, kind, site),
        }
        let now = Instant::now();
        self.profiler
            .record(self.place(site, None), EventKind::RegionExit, now, now);
    }

    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_emulated(
        &mut self,
        ctx: *mut Ctx,
        desc: &RegionDesc,
        args: &mut [u64],
        ops: &[DataOpArg],
        sizes: &[i64; 9],
        queue: i64,
        waits: Option<&[i64]>,
        site: u32,
    ) {
        let Some(func) = desc.func() else {
            return internal(ctx, "a region launched before its code was finalized");
        };
        let Some(q) = self.queue_arg(ctx, queue, site) else {
            return;
        };
        if !self.wait_clause(ctx, waits, q, site) {
            return;
        }
        let gangs = self.gangs(desc, sizes, DeviceKind::Emulated);
        let pool = self.pool();
        let num = self.num;
        let profiler = self.profiler.clone();
        let place = self.place(site, emulated::queue_number(q));
        let dev = self.emulated(num);
        for op in ops {
            if let Err(e) = dev.data_op(DataPhase::RegionEntry, op, false, false, q) {
                return report(ctx, e);
            }
        }
        let mut slots = args.to_vec();
        for (slot, p) in slots.iter_mut().zip(&desc.params) {
            if p.is_array() {
                let a = dev.device_array(*slot as usize as *mut ArrayHeader);
                crate::array::retain(a);
                *slot = a as usize as u64;
            }
        }
        let results = Arc::new(Mutex::new(None));
        let (mailbox, out) = (dev.mailbox(), results.clone());
        let (globals, desc_ptr) = (SendPtr((*ctx).globals), SendPtr(desc as *const RegionDesc));
        let job = move || {
            let globals = globals;
            let desc_ptr = desc_ptr;
            // SAFETY: see `SendPtr`; the slots hold references on their arrays.
            let desc = unsafe { &*desc_ptr.0 };
            let start = Instant::now();
            let r = unsafe {
                launch::run_gangs_threaded(
                    &pool,
                    globals.0 as *mut u64,
                    DEVICE_EMULATED,
                    desc,
                    func,
                    &slots,
                    gangs,
                )
            };
            let launch = EventKind::Launch {
                gangs: gangs as u32,
                workers: 1,
                vector: 1,
            };
            profiler.record(place, launch, start, Instant::now());
            for (slot, p) in slots.iter().zip(&desc.params) {
                if p.is_array() {
                    // SAFETY: the reference taken when the job was made.
                    unsafe { crate::array::release(*slot as usize as *mut ArrayHeader) };
                }
            }
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r.args);
            let mut m = mailbox.lock().unwrap_or_else(|e| e.into_inner());
            m.push(emulated::Completion {
                output: r.output,
                error: r.error,
            });
        };
        dev.run(q, Box::new(job));
        for op in ops {
            if let Err(e) = dev.data_op(DataPhase::RegionExit, op, false, false, q) {
                report(ctx, e);
                break;
            }
        }
        if q == QueueArg::Sync || desc.has_results() {
            if let QueueArg::Async(id) = q {
                dev.wait(id);
            }
            dev.drain(ctx);
            if let Some(after) = results.lock().unwrap_or_else(|e| e.into_inner()).take() {
                for (i, p) in desc.params.iter().enumerate() {
                    if p.pass.is_result() {
                        args[i] = after[i];
                    }
                }
            }
        }
    }

    /// A queue argument of compiled code, or `None` after recording a bad one.
    unsafe fn queue_arg(&self, ctx: *mut Ctx, queue: i64, site: u32) -> Option<QueueArg> {
        if self.opts.synchronous {
            return Some(QueueArg::Sync);
        }
        match QueueArg::decode(queue, host_state(ctx).default_async()) {
            Ok(q) => Some(q),
            Err(kind) => {
                crate::host::fail(ctx, kind, Some(site));
                None
            }
        }
    }

    /// A `wait(…)` clause on the current emulated device before an operation on `q`: the
    /// host waits for a synchronous operation, the queue for an asynchronous one. False after
    /// recording an error.
    unsafe fn wait_clause(
        &mut self,
        ctx: *mut Ctx,
        waits: Option<&[i64]>,
        q: QueueArg,
        site: u32,
    ) -> bool {
        let Some(waits) = waits else { return true };
        let ids = match decode_queues(waits, host_state(ctx).default_async()) {
            Ok(ids) => ids,
            Err(kind) => {
                crate::host::fail(ctx, kind, Some(site));
                return false;
            }
        };
        self.wait_on(ctx, &ids, waits.is_empty(), q, site);
        (*ctx).status == crate::abi::STATUS_OK
    }

    /// Waits for queues `ids` (all queues when `all`): the host blocks (`q` is `Sync`) or
    /// queue `q` waits.
    unsafe fn wait_on(
        &mut self,
        ctx: *mut Ctx,
        ids: &[QueueId],
        all: bool,
        q: QueueArg,
        site: u32,
    ) {
        let place = self.place(site, emulated::queue_number(q));
        let profiler = self.profiler.clone();
        let start = Instant::now();
        match self.current_device() {
            Err(e) => return crate::host::fail(ctx, e, Some(site)),
            Ok(Current::Shared) => return,
            Ok(Current::Emulated(dev)) => {
                let ids: Vec<QueueId> = if all {
                    dev.queues().used()
                } else {
                    ids.to_vec()
                };
                match q {
                    QueueArg::Sync => {
                        if all {
                            dev.wait_all();
                        } else {
                            for &id in &ids {
                                dev.wait(id);
                            }
                        }
                        dev.drain(ctx);
                    }
                    QueueArg::Async(r) => dev.queues().submit_wait(r, &ids),
                }
            }
            Ok(Current::Nvidia(gpu)) => match q {
                QueueArg::Sync if all => gpu.wait(ctx, None),
                QueueArg::Sync => ids.iter().for_each(|&id| gpu.wait(ctx, Some(id))),
                QueueArg::Async(r) => {
                    let ids = if all { gpu.queues_used() } else { ids.to_vec() };
                    if let Err(e) = gpu.join(r, &ids) {
                        crate::host::fail(ctx, e, Some(site));
                    }
                }
            },
        }
        profiler.record(place, EventKind::Wait, start, Instant::now());
    }

    /// `acc_rt_data`: a data directive, or one side of a `data` construct.
    ///
    /// # Safety
    /// `ctx` is a live context; the ops' arrays are live.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn data(
        &mut self,
        ctx: *mut Ctx,
        phase: DataPhase,
        ops: &[DataOpArg],
        finalize: bool,
        if_present: bool,
        queue: i64,
        waits: Option<&[i64]>,
        site: u32,
    ) {
        let now = Instant::now();
        let event = match phase {
            DataPhase::RegionExit => EventKind::RegionExit,
            _ => EventKind::RegionEnter,
        };
        self.profiler
            .record(self.place(site, None), event, now, now);
        if matches!(self.kind, DeviceKind::Host | DeviceKind::Multicore) {
            return;
        }
        let Some(q) = self.queue_arg(ctx, queue, site) else {
            return;
        };
        if !self.wait_clause(ctx, waits, q, site) {
            return;
        }
        let done = match self.current_device() {
            Err(e) => Err(RunError {
                kind: e,
                site: Some(site),
            }),
            Ok(Current::Shared) => Ok(()),
            Ok(Current::Emulated(dev)) => ops
                .iter()
                .try_for_each(|op| dev.data_op(phase, op, finalize, if_present, q)),
            Ok(Current::Nvidia(gpu)) => ops
                .iter()
                .try_for_each(|op| gpu.data_op(phase, op, finalize, if_present, q)),
        };
        if let Err(e) = done {
            report(ctx, e);
        }
    }

    /// `acc wait(queues…) [async(q)]` (`all`: `acc wait` with no list).
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub unsafe fn wait(&mut self, ctx: *mut Ctx, queues: &[i64], all: bool, queue: i64, site: u32) {
        if matches!(self.kind, DeviceKind::Host | DeviceKind::Multicore) {
            return;
        }
        let Some(q) = self.queue_arg(ctx, queue, site) else {
            return;
        };
        let ids = match decode_queues(queues, host_state(ctx).default_async()) {
            Ok(ids) => ids,
            Err(kind) => return crate::host::fail(ctx, kind, Some(site)),
        };
        self.wait_on(ctx, &ids, all, q, site);
    }

    /// A data routine (`acc_copyin(a)` …) on the current device: a dynamic data op.
    ///
    /// # Safety
    /// `ctx` is a live context; `op.array` is live.
    pub unsafe fn routine(&mut self, ctx: *mut Ctx, phase: DataPhase, op: &DataOpArg) {
        let site = op.site;
        self.data(
            ctx,
            phase,
            std::slice::from_ref(op),
            false,
            false,
            ASYNC_SYNC,
            None,
            site,
        );
    }

    /// `acc_is_present(a)`: always true on devices that share host memory.
    ///
    /// # Safety
    /// `ctx` is a live context; `op.array` is live.
    pub unsafe fn is_present(&mut self, ctx: *mut Ctx, op: &DataOpArg) -> bool {
        let present = match self.current_device() {
            Err(e) => Err(e),
            Ok(Current::Shared) => Ok(true),
            Ok(Current::Emulated(dev)) => dev.is_present(op),
            Ok(Current::Nvidia(gpu)) => gpu.is_present(op),
        };
        match present {
            Ok(p) => p,
            Err(kind) => {
                crate::host::fail(ctx, kind, Some(op.site));
                false
            }
        }
    }

    /// `acc_async_test(q)` / `acc_async_test_all()` (`None`).
    pub fn async_test(&mut self, q: Option<QueueId>) -> bool {
        match self.current_device() {
            Err(_) | Ok(Current::Shared) => true,
            Ok(Current::Emulated(dev)) => match q {
                Some(id) => dev.queues().test(id),
                None => dev.queues().test_all(),
            },
            Ok(Current::Nvidia(gpu)) => gpu.test(q),
        }
    }

    /// A compute construct on the current GPU.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_nvidia(
        &mut self,
        ctx: *mut Ctx,
        desc: &RegionDesc,
        args: &mut [u64],
        ops: &[DataOpArg],
        sizes: &[i64; 9],
        queue: i64,
        waits: Option<&[i64]>,
        site: u32,
    ) {
        let Some(q) = self.queue_arg(ctx, queue, site) else {
            return;
        };
        if !self.wait_clause(ctx, waits, q, site) {
            return;
        }
        // Device printf output appears when the GPU synchronizes: the host's goes first.
        let _ = host_state(ctx).flush();
        let native = matches!(desc.gpu.kernel.get(), Some(Ok(_)));
        let done = match self.current_device() {
            Ok(Current::Nvidia(gpu)) if native => gpu.launch(ctx, desc, args, ops, sizes, q, site),
            Ok(Current::Nvidia(_)) => {
                self.launch_for_gpu_on_host(ctx, desc, args, ops, sizes, q, site)
            }
            Ok(_) => Ok(()),
            Err(e) => Err(RunError {
                kind: e,
                site: Some(site),
            }),
        };
        if let Err(e) = done {
            report(ctx, e);
        }
    }

    /// A region the GPU has no kernel for (jit-ptx does not emit it yet), run on the host in
    /// the GPU's place: each array argument present on the GPU is mirrored into a temporary
    /// host array (so the host's own copy is left alone, as a GPU run would), the gangs run on
    /// the pool, and the mirrors go back to the GPU. Correct for any region; slow (every array
    /// crosses the bus twice). Asynchronous launches of such regions run synchronously.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_for_gpu_on_host(
        &mut self,
        ctx: *mut Ctx,
        desc: &RegionDesc,
        args: &mut [u64],
        ops: &[DataOpArg],
        sizes: &[i64; 9],
        q: QueueArg,
        site: u32,
    ) -> Result<(), RunError> {
        let at = |kind| RunError {
            kind,
            site: Some(site),
        };
        let Some(func) = desc.func() else {
            return Err(at(RunErrorKind::Internal {
                message: "a region launched before its code was finalized".into(),
            }));
        };
        if let QueueArg::Async(id) = q {
            self.wait_on(ctx, &[id], false, QueueArg::Sync, site);
        }
        let pool = self.pool();
        let gangs = self.gangs(desc, sizes, DeviceKind::Nvidia);
        let Ok(Current::Nvidia(gpu)) = self.current_device() else {
            return Ok(());
        };
        for op in ops {
            gpu.data_op(DataPhase::RegionEntry, op, false, false, QueueArg::Sync)?;
        }
        let mut slots = args.to_vec();
        let mut mirrors = Vec::new();
        for (slot, p) in slots.iter_mut().zip(&desc.params) {
            if p.is_array() {
                let host = *slot as usize as *mut ArrayHeader;
                if let Some(temp) = gpu.mirror(host).map_err(at)? {
                    mirrors.push((host, temp));
                    *slot = temp as usize as u64;
                }
            }
        }
        let r = launch::run_gangs_threaded(
            &pool,
            (*ctx).globals,
            DEVICE_NVIDIA,
            desc,
            func,
            &slots,
            gangs,
        );
        for (host, temp) in mirrors {
            gpu.unmirror(host, temp).map_err(at)?;
        }
        host_state(ctx).write(&r.output);
        if let Some(e) = r.error {
            return Err(e);
        }
        for (i, p) in desc.params.iter().enumerate() {
            if p.pass.is_result() {
                args[i] = r.args[i];
            }
        }
        for op in ops {
            gpu.data_op(DataPhase::RegionExit, op, false, false, QueueArg::Sync)?;
        }
        Ok(())
    }
}
