//! The profiler: every device reports its events here (region entry and exit, kernel
//! launches, transfers, waits, allocations), and the profiler serves the three tools of
//! LANGUAGE.md 8 from them:
//!
//! - `--profile`: per-construct statistics, printed at exit by `report` (and readable as
//!   numbers through `stats`/`totals`, which the engine's tests use);
//! - `ACC_NOTIFY=bitmask`: one line per event as it happens, written to `notify_out`;
//! - `--trace FILE.json`: every timed event kept, written by `chrome_trace` in the Chrome trace
//!   format that Perfetto and `chrome://tracing` open, one process per device and one thread
//!   per queue.
//!
//! Each option turns on exactly its own bookkeeping: statistics are kept only under `profile`,
//! trace events only under `trace`. With everything off, `record` is one branch, and devices
//! can ask `enabled` before they take times at all.
//!
//! A site is the engine's number for a construct; the profiler never knows source text, so
//! `report` and `chrome_trace` take a resolver `site -> (construct name, file, line)`, and
//! notify lines use the one set with `set_resolver` (or print `site N`).

use std::collections::HashMap;
use std::fmt::{self, Write as _};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

/// `ACC_NOTIFY` bits.
pub const NOTIFY_LAUNCHES: u32 = 1;
pub const NOTIFY_TRANSFERS: u32 = 2;
pub const NOTIFY_WAITS: u32 = 4;
pub const NOTIFY_REGIONS: u32 = 8;
pub const NOTIFY_ALLOCATIONS: u32 = 16;
/// Every `ACC_NOTIFY` kind.
pub const NOTIFY_ALL: u32 =
    NOTIFY_LAUNCHES | NOTIFY_TRANSFERS | NOTIFY_WAITS | NOTIFY_REGIONS | NOTIFY_ALLOCATIONS;

/// The most trace events kept; later ones are counted and dropped, so that a traced program
/// launching kernels in a long loop cannot exhaust memory.
pub const TRACE_EVENT_LIMIT: usize = 1 << 22;

/// A site resolver: `site -> (construct name such as "parallel loop", file, line)`.
pub type Resolver = dyn Fn(u32) -> (String, String, u32) + Send + Sync;

/// What to record: the command line's `--profile`, `ACC_NOTIFY` and `--trace`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ProfileOptions {
    pub profile: bool,
    /// Bitmask of `NOTIFY_*`: 1 launches, 2 transfers, 4 waits, 8 region entry/exit,
    /// 16 allocations.
    pub notify: u32,
    pub trace: bool,
}

impl ProfileOptions {
    /// Whether anything is recorded (a report, notices or a trace).
    pub fn is_on(&self) -> bool {
        self.profile || self.trace || self.notify != 0
    }
}

/// A device: its type name (`"host"`, `"multicore"`, `"emulated"`, `"nvidia"`) and number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceRef {
    pub kind: &'static str,
    pub num: u32,
}

impl fmt::Display for DeviceRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.kind, self.num)
    }
}

/// Where an event happened: the construct's site, the device, and the queue (`None` =
/// synchronous; `Some(-1)` = the default async queue; `Some(q)` = queue `q`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Place {
    pub site: u32,
    pub device: DeviceRef,
    pub queue: Option<i32>,
}

/// The default async queue's number in `Place::queue` (OpenACC's `acc_async_noval`).
pub const DEFAULT_ASYNC_QUEUE: i32 = -1;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A compute or data construct reached (counted as "times reached").
    RegionEnter,
    /// A compute or data construct left.
    RegionExit,
    /// A kernel launch: `gangs` is the grid, `vector` x `workers` the block.
    Launch {
        gangs: u32,
        workers: u32,
        vector: u32,
    },
    /// A host-to-device transfer.
    Upload {
        bytes: u64,
    },
    /// A device-to-host transfer.
    Download {
        bytes: u64,
    },
    /// A device-to-device copy of rows that a launch split over devices needs (a halo, or rows
    /// another device wrote), recorded on the destination device at the compute (or data)
    /// construct's site. Copies through the host are `Upload`/`Download`s instead.
    Peer {
        bytes: u64,
    },
    /// A wait: `acc wait`, a `wait` clause, or the implicit end-of-construct synchronization.
    Wait,
    Alloc {
        bytes: u64,
    },
    Free {
        bytes: u64,
    },
    /// An MPI call (`mpi_send`, `mpi_allreduce`, …): the bytes this rank sent and received,
    /// timed around the whole call (a present section's staging through the host included).
    /// Recorded on the device `mpi:RANK`.
    Mpi {
        bytes: u64,
    },
}

impl EventKind {
    fn notify_bit(self) -> u32 {
        match self {
            EventKind::Launch { .. } => NOTIFY_LAUNCHES,
            EventKind::Upload { .. }
            | EventKind::Download { .. }
            | EventKind::Peer { .. }
            | EventKind::Mpi { .. } => NOTIFY_TRANSFERS,
            EventKind::Wait => NOTIFY_WAITS,
            EventKind::RegionEnter | EventKind::RegionExit => NOTIFY_REGIONS,
            EventKind::Alloc { .. } | EventKind::Free { .. } => NOTIFY_ALLOCATIONS,
        }
    }

    /// The word that starts a notify line and a trace event's name.
    fn verb(self) -> &'static str {
        match self {
            EventKind::RegionEnter => "enter",
            EventKind::RegionExit => "exit",
            EventKind::Launch { .. } => "launch",
            EventKind::Upload { .. } => "upload",
            EventKind::Download { .. } => "download",
            EventKind::Peer { .. } => "peer",
            EventKind::Wait => "wait",
            EventKind::Alloc { .. } => "alloc",
            EventKind::Free { .. } => "free",
            EventKind::Mpi { .. } => "mpi",
        }
    }

    /// The trace event's category.
    fn category(self) -> &'static str {
        match self {
            EventKind::RegionEnter | EventKind::RegionExit => "region",
            EventKind::Launch { .. } => "launch",
            EventKind::Upload { .. } | EventKind::Download { .. } => "transfer",
            EventKind::Peer { .. } => "halo",
            EventKind::Wait => "wait",
            EventKind::Alloc { .. } | EventKind::Free { .. } => "alloc",
            EventKind::Mpi { .. } => "mpi",
        }
    }

    /// The bytes a data event moves or allocates.
    fn bytes(self) -> Option<u64> {
        match self {
            EventKind::Upload { bytes }
            | EventKind::Download { bytes }
            | EventKind::Peer { bytes }
            | EventKind::Alloc { bytes }
            | EventKind::Free { bytes }
            | EventKind::Mpi { bytes } => Some(bytes),
            _ => None,
        }
    }
}

/// A launch configuration. Displays as `grid 1024 block 128` (`block 128x4` with workers:
/// vector lanes are CUDA's x, workers its y).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchShape {
    pub gangs: u32,
    pub workers: u32,
    pub vector: u32,
}

impl LaunchShape {
    fn block(self) -> String {
        if self.workers == 1 {
            self.vector.to_string()
        } else {
            format!("{}x{}", self.vector, self.workers)
        }
    }
}

impl fmt::Display for LaunchShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "grid {} block {}", self.gangs, self.block())
    }
}

/// Count and duration statistics of one kind of timed event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timing {
    pub count: u64,
    pub total: Duration,
    /// Zero while `count` is zero.
    pub min: Duration,
    pub max: Duration,
}

impl Timing {
    fn add(&mut self, d: Duration) {
        if self.count == 0 {
            self.min = d;
            self.max = d;
        } else {
            self.min = self.min.min(d);
            self.max = self.max.max(d);
        }
        self.count += 1;
        self.total = self.total.saturating_add(d);
    }

    fn merge(&mut self, other: &Timing) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = *other;
            return;
        }
        self.count += other.count;
        self.total = self.total.saturating_add(other.total);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
    }

    /// The mean duration (zero when nothing was counted).
    pub fn avg(&self) -> Duration {
        match self.count {
            0 => Duration::ZERO,
            n => {
                let nanos = self.total.as_nanos() / u128::from(n);
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }
        }
    }
}

/// Statistics of events that move or allocate bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteStats {
    pub bytes: u64,
    pub time: Timing,
}

impl ByteStats {
    pub fn count(&self) -> u64 {
        self.time.count
    }

    fn add(&mut self, bytes: u64, d: Duration) {
        self.bytes = self.bytes.saturating_add(bytes);
        self.time.add(d);
    }

    fn merge(&mut self, other: &ByteStats) {
        self.bytes = self.bytes.saturating_add(other.bytes);
        self.time.merge(&other.time);
    }
}

/// What happened at one site (or, from `totals`, everywhere).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SiteStats {
    /// Region entries: the times the construct was reached.
    pub reached: u64,
    /// Kernel launches and their device time.
    pub launches: Timing,
    /// The distinct launch configurations, in first-seen order, with how many launches had each.
    pub shapes: Vec<(LaunchShape, u64)>,
    pub uploads: ByteStats,
    pub downloads: ByteStats,
    /// Device-to-device copies (`EventKind::Peer`), on the destination device.
    pub peers: ByteStats,
    pub waits: Timing,
    pub allocs: ByteStats,
    pub frees: ByteStats,
    /// MPI calls (`EventKind::Mpi`): bytes sent and received.
    pub mpi: ByteStats,
    /// The devices the events happened on, in first-seen order.
    pub devices: Vec<DeviceRef>,
}

impl SiteStats {
    fn add(&mut self, device: DeviceRef, kind: EventKind, d: Duration) {
        if !self.devices.contains(&device) {
            self.devices.push(device);
        }
        match kind {
            EventKind::RegionEnter => self.reached += 1,
            EventKind::RegionExit => {}
            EventKind::Launch {
                gangs,
                workers,
                vector,
            } => {
                self.launches.add(d);
                self.count_shape(
                    LaunchShape {
                        gangs,
                        workers,
                        vector,
                    },
                    1,
                );
            }
            EventKind::Upload { bytes } => self.uploads.add(bytes, d),
            EventKind::Download { bytes } => self.downloads.add(bytes, d),
            EventKind::Peer { bytes } => self.peers.add(bytes, d),
            EventKind::Wait => self.waits.add(d),
            EventKind::Alloc { bytes } => self.allocs.add(bytes, d),
            EventKind::Free { bytes } => self.frees.add(bytes, d),
            EventKind::Mpi { bytes } => self.mpi.add(bytes, d),
        }
    }

    fn count_shape(&mut self, shape: LaunchShape, n: u64) {
        match self.shapes.iter_mut().find(|(s, _)| *s == shape) {
            Some((_, count)) => *count += n,
            None => self.shapes.push((shape, n)),
        }
    }

    fn merge(&mut self, other: &SiteStats) {
        self.reached += other.reached;
        self.launches.merge(&other.launches);
        for &(shape, n) in &other.shapes {
            self.count_shape(shape, n);
        }
        self.uploads.merge(&other.uploads);
        self.downloads.merge(&other.downloads);
        self.peers.merge(&other.peers);
        self.waits.merge(&other.waits);
        self.allocs.merge(&other.allocs);
        self.frees.merge(&other.frees);
        self.mpi.merge(&other.mpi);
        for device in &other.devices {
            if !self.devices.contains(device) {
                self.devices.push(*device);
            }
        }
    }
}

/// One timed event kept for the trace.
struct TraceEvent {
    place: Place,
    kind: EventKind,
    label: Option<String>,
    /// Since the profiler's origin.
    start: Duration,
    duration: Duration,
}

/// What `reset` clears.
struct State {
    /// Trace timestamps count from here.
    origin: Instant,
    sites: HashMap<u32, SiteStats>,
    events: Vec<TraceEvent>,
    dropped_events: u64,
}

impl State {
    fn new() -> State {
        State {
            origin: Instant::now(),
            sites: HashMap::new(),
            events: Vec::new(),
            dropped_events: 0,
        }
    }
}

/// The runtime's profiler; shared by every device (it is `Sync`: recording takes `&self`).
pub struct Profiler {
    /// What to record; its `profile` is `profiling`'s value when the profiler was made.
    opts: ProfileOptions,
    /// The `--profile` statistics are being collected (`set_profile` turns them on and off).
    profiling: AtomicBool,
    /// Anything to record at all: the one branch `record` takes when everything is off.
    enabled: AtomicBool,
    state: Mutex<State>,
    notify_out: Mutex<Box<dyn Write + Send>>,
    resolver: RwLock<Option<Box<Resolver>>>,
    /// What a first result waits for besides its work (GPU driver and context, PTX generation,
    /// the driver's JIT), in order.
    startup: Mutex<Vec<(String, std::time::Duration)>>,
}

impl Profiler {
    /// A profiler recording what `opts` asks for; notify lines go to `notify_out` (the engine
    /// passes stderr). Trace timestamps count from now.
    pub fn new(opts: ProfileOptions, notify_out: Box<dyn Write + Send>) -> Profiler {
        Profiler {
            opts,
            profiling: AtomicBool::new(opts.profile),
            enabled: AtomicBool::new(opts.profile || opts.trace || opts.notify & NOTIFY_ALL != 0),
            state: Mutex::new(State::new()),
            notify_out: Mutex::new(notify_out),
            resolver: RwLock::new(None),
            startup: Mutex::new(Vec::new()),
        }
    }

    /// Notes a start-up cost for the report's `start-up:` line (`--profile`).
    pub fn note_startup(&self, what: impl Into<String>, took: std::time::Duration) {
        if self.profiling() {
            let mut startup = self.startup.lock().unwrap_or_else(|e| e.into_inner());
            startup.push((what.into(), took));
        }
    }

    /// A profiler that records nothing.
    pub fn disabled() -> Profiler {
        Profiler::new(ProfileOptions::default(), Box::new(std::io::sink()))
    }

    pub fn options(&self) -> ProfileOptions {
        ProfileOptions {
            profile: self.profiling(),
            ..self.opts
        }
    }

    /// Whether anything is recorded at all; when not, devices need not take times.
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }

    /// Whether the `--profile` statistics are being collected.
    fn profiling(&self) -> bool {
        self.profiling.load(Ordering::Relaxed)
    }

    /// Starts or stops collecting the `--profile` statistics (traces and notify lines are as
    /// they were made); what was collected stays.
    pub fn set_profile(&self, on: bool) {
        self.profiling.store(on, Ordering::Relaxed);
        let others = self.opts.trace || self.opts.notify & NOTIFY_ALL != 0;
        self.enabled.store(on || others, Ordering::Relaxed);
    }

    /// Sets the resolver notify lines name sites with (`parallel loop @ file.acc:12`
    /// instead of `site 3`).
    pub fn set_resolver(&self, resolver: Box<Resolver>) {
        *self.resolver.write().unwrap_or_else(|e| e.into_inner()) = Some(resolver);
    }

    /// Records a timed event. `start` and `end` are measured by the device around the work
    /// (for queued work, on the queue's thread); for `RegionEnter`/`RegionExit` they bracket
    /// the construct's entry or exit actions.
    pub fn record(&self, place: Place, kind: EventKind, start: Instant, end: Instant) {
        if self.enabled() {
            self.record_event(place, kind, None, start, end);
        }
    }

    /// `record` with a label naming what the event is about: the array section of a transfer
    /// or allocation (`a[0:100]`), which names the trace event (`upload a[0:100]`) and appears
    /// in notify lines (`variable=a[0:100]`).
    pub fn record_named(
        &self,
        place: Place,
        kind: EventKind,
        label: &str,
        start: Instant,
        end: Instant,
    ) {
        if self.enabled() {
            self.record_event(place, kind, Some(label), start, end);
        }
    }

    fn record_event(
        &self,
        place: Place,
        kind: EventKind,
        label: Option<&str>,
        start: Instant,
        end: Instant,
    ) {
        if self.opts.notify & kind.notify_bit() != 0 {
            self.notify(place, kind, label);
        }
        let profiling = self.profiling();
        if !profiling && !self.opts.trace {
            return;
        }
        let duration = end.saturating_duration_since(start);
        let mut state = self.lock_state();
        if profiling {
            state
                .sites
                .entry(place.site)
                .or_default()
                .add(place.device, kind, duration);
        }
        if self.opts.trace {
            if state.events.len() < TRACE_EVENT_LIMIT {
                let start = start.saturating_duration_since(state.origin);
                state.events.push(TraceEvent {
                    place,
                    kind,
                    label: label.map(str::to_owned),
                    start,
                    duration,
                });
            } else {
                state.dropped_events += 1;
            }
        }
    }

    /// Writes one `ACC_NOTIFY` line, e.g.
    /// `launch emulated:0 queue sync parallel loop @ f.acc:12 gangs=2 workers=1 vector=1` or
    /// `upload emulated:0 queue 1 site 3 variable=a[0:100] bytes=800`.
    fn notify(&self, place: Place, kind: EventKind, label: Option<&str>) {
        let site = self.site_name(place.site);
        let mut line = format!(
            "{} {} queue {} {}",
            kind.verb(),
            place.device,
            notify_queue_name(place.queue),
            site
        );
        if let Some(label) = label {
            let key = if kind.bytes().is_some() {
                "variable"
            } else {
                "name"
            };
            let _ = write!(line, " {key}={label}");
        }
        match kind {
            EventKind::Launch {
                gangs,
                workers,
                vector,
            } => {
                let _ = write!(line, " gangs={gangs} workers={workers} vector={vector}");
            }
            _ => {
                if let Some(bytes) = kind.bytes() {
                    let _ = write!(line, " bytes={bytes}");
                }
            }
        }
        line.push('\n');
        self.notice(&line);
    }

    /// A site as notices name it: `parallel loop @ f.acc:12` with a resolver, else `site 3`.
    pub fn site_name(&self, site: u32) -> String {
        let resolver = self.resolver.read().unwrap_or_else(|e| e.into_inner());
        match resolver.as_deref() {
            Some(resolve) => construct_at(resolve, site),
            None => format!("site {site}"),
        }
    }

    /// Writes lines of text where notify lines go (standard error), e.g. `--autocompare`'s
    /// reports.
    pub fn notice(&self, text: &str) {
        // A closed stderr must not stop the program: write failures are ignored.
        let mut out = self.notify_out.lock().unwrap_or_else(|e| e.into_inner());
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }

    /// The statistics of one site (all zero if nothing happened there or `profile` is off).
    pub fn stats(&self, site: u32) -> SiteStats {
        self.lock_state()
            .sites
            .get(&site)
            .cloned()
            .unwrap_or_default()
    }

    /// The statistics of every site together.
    pub fn totals(&self) -> SiteStats {
        sum(&self.sites())
    }

    /// Every site's statistics at one moment, in site order (so that `shapes` and `devices`
    /// of a sum come out the same on every run); a notebook shows them as a table.
    pub fn sites(&self) -> Vec<(u32, SiteStats)> {
        let mut sites: Vec<(u32, SiteStats)> = self
            .lock_state()
            .sites
            .iter()
            .map(|(&site, stats)| (site, stats.clone()))
            .collect();
        sites.sort_by_key(|(site, _)| *site);
        sites
    }

    /// Forgets everything recorded and restarts the trace clock, as if newly created (options,
    /// notify output and resolver stay).
    pub fn reset(&self) {
        *self.lock_state() = State::new();
    }

    fn lock_state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The `--profile` report: per source file, per construct sorted by line, the times
    /// reached, launches with their grid and block and device time, transfers each way,
    /// device-to-device (peer) copies, waits and allocations; then a totals line. Times are in
    /// microseconds.
    pub fn report(&self, resolve: &dyn Fn(u32) -> (String, String, u32)) -> String {
        let snapshot = self.sites();
        let totals = sum(&snapshot);
        let mut sites: Vec<(String, u32, u32, String, SiteStats)> = snapshot
            .into_iter()
            .map(|(site, stats)| {
                let (construct, file, line) = resolve(site);
                (file, line, site, construct, stats)
            })
            .collect();
        sites.sort_by(|a, b| (&a.0, a.1, a.2).cmp(&(&b.0, b.1, b.2)));

        let mut out = String::from("acc profile (times in microseconds)\n");
        let mut current_file: Option<&str> = None;
        let line_width = sites
            .iter()
            .map(|s| s.1.to_string().len())
            .max()
            .unwrap_or(1);
        for (file, line, _, construct, stats) in &sites {
            if current_file != Some(file.as_str()) {
                let _ = writeln!(out, "{file}");
                current_file = Some(file.as_str());
            }
            write_site(&mut out, *line, line_width, construct, stats);
        }
        write_totals(&mut out, &totals);
        let startup = self.startup.lock().unwrap_or_else(|e| e.into_inner());
        if !startup.is_empty() {
            let parts: Vec<String> = startup
                .iter()
                .map(|(what, took)| format!("{what} {:.1}ms", took.as_secs_f64() * 1e3))
                .collect();
            let _ = writeln!(out, "start-up: {}", parts.join(", "));
        }
        out
    }

    /// The `--trace` file: Chrome trace format JSON, one process per device (named like
    /// `emulated:0`), one thread per queue (`sync`, `default async`, `queue 1`), one complete
    /// event per recorded event with `ts`/`dur` in microseconds since the profiler's creation
    /// (or last `reset`). Names: launches are their construct (`parallel loop @ mandel.acc:12`),
    /// region entry/exit `enter …`/`exit …`, data events their verb and label (`upload a`,
    /// or the verb alone without a label; device-to-device copies are `peer a` in category
    /// `halo`, on the destination device); every event's args name its construct.
    pub fn chrome_trace(&self, resolve: &dyn Fn(u32) -> (String, String, u32)) -> String {
        let state = self.lock_state();
        let mut sites: HashMap<u32, String> = HashMap::new();
        let mut lanes: Vec<(DeviceRef, Option<i32>)> = Vec::new();
        for event in &state.events {
            sites
                .entry(event.place.site)
                .or_insert_with(|| construct_at(resolve, event.place.site));
            let lane = (event.place.device, event.place.queue);
            if !lanes.contains(&lane) {
                lanes.push(lane);
            }
        }
        let ids = LaneIds::new(lanes);

        let mut records: Vec<String> = ids.metadata();
        for event in &state.events {
            let (pid, tid) = ids.of(event.place.device, event.place.queue);
            let construct = sites
                .get(&event.place.site)
                .map(String::as_str)
                .unwrap_or("");
            records.push(trace_event(event, pid, tid, construct));
        }

        let mut out = String::from("{\"traceEvents\":[\n");
        out.push_str(&records.join(",\n"));
        out.push_str("\n],\"displayTimeUnit\":\"ms\"");
        if state.dropped_events > 0 {
            let _ = write!(
                out,
                ",\"otherData\":{{\"dropped_events\":\"{}\"}}",
                state.dropped_events
            );
        }
        out.push_str("}\n");
        out
    }
}

fn sum(sites: &[(u32, SiteStats)]) -> SiteStats {
    let mut total = SiteStats::default();
    for (_, stats) in sites {
        total.merge(stats);
    }
    total
}

/// `parallel loop @ mandel.acc:12`.
fn construct_at(resolve: &dyn Fn(u32) -> (String, String, u32), site: u32) -> String {
    let (construct, file, line) = resolve(site);
    format!("{construct} @ {file}:{line}")
}

fn notify_queue_name(queue: Option<i32>) -> String {
    match queue {
        None => "sync".to_owned(),
        Some(DEFAULT_ASYNC_QUEUE) => "default".to_owned(),
        Some(q) => q.to_string(),
    }
}

fn trace_queue_name(queue: Option<i32>) -> String {
    match queue {
        None => "sync".to_owned(),
        Some(DEFAULT_ASYNC_QUEUE) => "default async".to_owned(),
        Some(q) => format!("queue {q}"),
    }
}

/// Sync first, then the default async queue, then numbered queues in order.
fn queue_order(queue: Option<i32>) -> (u8, i32) {
    match queue {
        None => (0, 0),
        Some(DEFAULT_ASYNC_QUEUE) => (1, 0),
        Some(q) => (2, q),
    }
}

/// Trace process ids per device and thread ids per queue: numbered from 1 in sorted order,
/// so that the same program gives the same trace layout.
struct LaneIds {
    devices: Vec<DeviceRef>,
    /// Per device (same index), its queues in order.
    queues: Vec<Vec<Option<i32>>>,
}

impl LaneIds {
    fn new(mut lanes: Vec<(DeviceRef, Option<i32>)>) -> LaneIds {
        lanes.sort_by_key(|&(device, queue)| (device, queue_order(queue)));
        let mut ids = LaneIds {
            devices: Vec::new(),
            queues: Vec::new(),
        };
        for (device, queue) in lanes {
            if ids.devices.last() != Some(&device) {
                ids.devices.push(device);
                ids.queues.push(Vec::new());
            }
            if let Some(queues) = ids.queues.last_mut() {
                queues.push(queue);
            }
        }
        ids
    }

    fn of(&self, device: DeviceRef, queue: Option<i32>) -> (usize, usize) {
        let d = self.devices.iter().position(|&x| x == device).unwrap_or(0);
        let q = self
            .queues
            .get(d)
            .and_then(|queues| queues.iter().position(|&x| x == queue))
            .unwrap_or(0);
        (d + 1, q + 1)
    }

    /// `process_name`/`thread_name` events and sort indices, so that viewers show
    /// `emulated:0` with its `sync`, `default async`, `queue 1` rows in this order.
    fn metadata(&self) -> Vec<String> {
        let mut records = Vec::new();
        for (d, device) in self.devices.iter().enumerate() {
            let pid = d + 1;
            records.push(format!(
                "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
                json_string(&device.to_string())
            ));
            records.push(format!(
                "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"args\":{{\"sort_index\":{pid}}}}}"
            ));
            for (q, &queue) in self.queues[d].iter().enumerate() {
                let tid = q + 1;
                records.push(format!(
                    "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"name\":{}}}}}",
                    json_string(&trace_queue_name(queue))
                ));
                records.push(format!(
                    "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}"
                ));
            }
        }
        records
    }
}

/// One complete (`"ph":"X"`) event.
fn trace_event(event: &TraceEvent, pid: usize, tid: usize, construct: &str) -> String {
    let kind = event.kind;
    let name = match (kind, &event.label) {
        (EventKind::Launch { .. }, _) => construct.to_owned(),
        (EventKind::RegionEnter | EventKind::RegionExit, _) => {
            format!("{} {construct}", kind.verb())
        }
        (_, Some(label)) => format!("{} {label}", kind.verb()),
        (_, None) => kind.verb().to_owned(),
    };
    let mut args = format!("\"construct\":{}", json_string(construct));
    if let Some(label) = &event.label {
        let _ = write!(args, ",\"label\":{}", json_string(label));
    }
    if let EventKind::Launch {
        gangs,
        workers,
        vector,
    } = kind
    {
        let shape = LaunchShape {
            gangs,
            workers,
            vector,
        };
        let _ = write!(
            args,
            ",\"gangs\":{gangs},\"workers\":{workers},\"vector\":{vector},\"grid\":{gangs},\"block\":{}",
            json_string(&shape.block())
        );
    }
    if let Some(bytes) = kind.bytes() {
        let _ = write!(args, ",\"bytes\":{bytes}");
    }
    format!(
        "{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"pid\":{pid},\"tid\":{tid},\"ts\":{},\"dur\":{},\"args\":{{{args}}}}}",
        json_string(&name),
        kind.category(),
        micros(event.start),
        micros(event.duration),
    )
}

/// A duration as a JSON number of microseconds with nanosecond precision (`12.345`).
fn micros(d: Duration) -> String {
    let nanos = d.as_nanos();
    format!("{}.{:03}", nanos / 1000, nanos % 1000)
}

/// A JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Microseconds with one decimal.
fn us(d: Duration) -> String {
    let tenths = (d.as_nanos() + 50) / 100;
    format!("{}.{}", tenths / 10, tenths % 10)
}

fn timing_line(t: &Timing) -> String {
    format!(
        "total={} min={} max={} avg={}",
        us(t.total),
        us(t.min),
        us(t.max),
        us(t.avg())
    )
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// How many launch shapes a report line lists before summarizing the rest.
const SHAPES_SHOWN: usize = 4;

/// One construct's entry of the report:
///
/// ```text
///    12: parallel loop reached 3 times on emulated:0
///          launches 3, grid 1024 block 128
///            device time(us): total=… min=… max=… avg=…
///          uploads 2, 1600 bytes
///            time(us): total=… min=… max=… avg=…
/// ```
fn write_site(out: &mut String, line: u32, width: usize, construct: &str, s: &SiteStats) {
    let devices: Vec<String> = s.devices.iter().map(ToString::to_string).collect();
    // Executable directives (`update`, `wait`) may report transfers without an entry.
    let reached = match s.reached {
        0 => String::new(),
        n => format!(" reached {}", plural(n, "time", "times")),
    };
    let _ = writeln!(
        out,
        "  {line:>width$}: {construct}{reached} on {}",
        devices.join(", ")
    );
    let body = " ".repeat(width + 6);
    if s.launches.count > 0 {
        let mut shapes: Vec<String> = s
            .shapes
            .iter()
            .take(SHAPES_SHOWN)
            .map(|&(shape, n)| {
                if s.shapes.len() == 1 {
                    shape.to_string()
                } else {
                    format!("{shape} ({})", plural(n, "time", "times"))
                }
            })
            .collect();
        if s.shapes.len() > SHAPES_SHOWN {
            shapes.push(format!("{} more shapes", s.shapes.len() - SHAPES_SHOWN));
        }
        let _ = writeln!(
            out,
            "{body}launches {}, {}",
            s.launches.count,
            shapes.join(", ")
        );
        let _ = writeln!(out, "{body}  device time(us): {}", timing_line(&s.launches));
    }
    for (what, stats) in [
        ("uploads", &s.uploads),
        ("downloads", &s.downloads),
        ("peer copies", &s.peers),
        ("allocs", &s.allocs),
        ("frees", &s.frees),
        ("mpi calls", &s.mpi),
    ] {
        if stats.count() > 0 {
            let _ = writeln!(out, "{body}{what} {}, {} bytes", stats.count(), stats.bytes);
            let _ = writeln!(out, "{body}  time(us): {}", timing_line(&stats.time));
        }
    }
    if s.waits.count > 0 {
        let _ = writeln!(out, "{body}waits {}", s.waits.count);
        let _ = writeln!(out, "{body}  time(us): {}", timing_line(&s.waits));
    }
}

/// `totals: reached 4, launches 3 (device time 12.0us), uploads 2 (1600 bytes, 3.0us), …`;
/// device-to-device copies (`peer copies 2 (…)`, after downloads) only where there were any.
fn write_totals(out: &mut String, t: &SiteStats) {
    let peers = match t.peers.count() {
        0 => String::new(),
        n => format!(
            ", peer copies {n} ({} bytes, {}us)",
            t.peers.bytes,
            us(t.peers.time.total)
        ),
    };
    let mpi = match t.mpi.count() {
        0 => String::new(),
        n => format!(
            ", mpi calls {n} ({} bytes, {}us)",
            t.mpi.bytes,
            us(t.mpi.time.total)
        ),
    };
    let _ = writeln!(
        out,
        "totals: reached {}, launches {} (device time {}us), uploads {} ({} bytes, {}us), downloads {} ({} bytes, {}us){peers}, waits {} ({}us){mpi}",
        t.reached,
        t.launches.count,
        us(t.launches.total),
        t.uploads.count(),
        t.uploads.bytes,
        us(t.uploads.time.total),
        t.downloads.count(),
        t.downloads.bytes,
        us(t.downloads.time.total),
        t.waits.count,
        us(t.waits.total),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::SharedBuffer;
    use serde_json::Value;
    use std::sync::Arc;

    const EMU0: DeviceRef = DeviceRef {
        kind: "emulated",
        num: 0,
    };
    const EMU1: DeviceRef = DeviceRef {
        kind: "emulated",
        num: 1,
    };

    fn at(site: u32, device: DeviceRef, queue: Option<i32>) -> Place {
        Place {
            site,
            device,
            queue,
        }
    }

    fn sync(site: u32) -> Place {
        at(site, EMU0, None)
    }

    fn launch(gangs: u32, vector: u32) -> EventKind {
        EventKind::Launch {
            gangs,
            workers: 1,
            vector,
        }
    }

    fn us_(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    /// Records events with exact durations: each starts `offset` after a fixed base.
    struct Clock {
        base: Instant,
    }

    impl Clock {
        fn new() -> Clock {
            Clock {
                base: Instant::now(),
            }
        }

        fn span(&self, offset: Duration, duration: Duration) -> (Instant, Instant) {
            let start = self.base + offset;
            (start, start + duration)
        }
    }

    fn record(p: &Profiler, c: &Clock, place: Place, kind: EventKind, at_us: u64, dur_us: u64) {
        let (start, end) = c.span(us_(at_us), us_(dur_us));
        p.record(place, kind, start, end);
    }

    fn profiler(opts: ProfileOptions) -> (Profiler, SharedBuffer) {
        let buf = SharedBuffer::new();
        (Profiler::new(opts, Box::new(buf.clone())), buf)
    }

    fn profiling() -> Profiler {
        profiler(ProfileOptions {
            profile: true,
            ..ProfileOptions::default()
        })
        .0
    }

    fn resolve(site: u32) -> (String, String, u32) {
        let (construct, file, line) = match site {
            3 => ("parallel loop", "jacobi.acc", 12),
            4 => ("kernels", "a.acc", 100),
            7 => ("data", "jacobi.acc", 5),
            9 => ("update", "jacobi.acc", 30),
            _ => ("parallel", "other.acc", site),
        };
        (construct.to_owned(), file.to_owned(), line)
    }

    #[test]
    fn profiler_is_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<Profiler>();
    }

    #[test]
    fn statistics_aggregate_per_site_and_direction() {
        let p = profiling();
        let c = Clock::new();
        record(&p, &c, sync(3), EventKind::RegionEnter, 0, 1);
        record(&p, &c, sync(3), launch(1024, 128), 1, 10);
        record(&p, &c, sync(3), launch(1024, 128), 20, 30);
        record(&p, &c, sync(3), launch(512, 128), 60, 20);
        record(&p, &c, sync(3), EventKind::Upload { bytes: 800 }, 90, 4);
        record(&p, &c, sync(3), EventKind::Upload { bytes: 1600 }, 95, 8);
        record(&p, &c, sync(3), EventKind::Download { bytes: 800 }, 110, 6);
        record(&p, &c, at(3, EMU0, Some(1)), EventKind::Wait, 120, 3);
        record(&p, &c, sync(3), EventKind::RegionExit, 130, 1);
        record(&p, &c, sync(3), EventKind::RegionEnter, 140, 1);
        record(
            &p,
            &c,
            at(7, EMU1, None),
            EventKind::Alloc { bytes: 64 },
            0,
            2,
        );
        record(
            &p,
            &c,
            at(7, EMU1, None),
            EventKind::Free { bytes: 64 },
            5,
            1,
        );
        record(
            &p,
            &c,
            at(7, EMU1, None),
            EventKind::Upload { bytes: 64 },
            7,
            2,
        );

        let s = p.stats(3);
        assert_eq!(s.reached, 2);
        assert_eq!(s.launches.count, 3);
        assert_eq!(s.launches.total, us_(60));
        assert_eq!(s.launches.min, us_(10));
        assert_eq!(s.launches.max, us_(30));
        assert_eq!(s.launches.avg(), us_(20));
        let shape = |gangs| LaunchShape {
            gangs,
            workers: 1,
            vector: 128,
        };
        assert_eq!(s.shapes, vec![(shape(1024), 2), (shape(512), 1)]);
        assert_eq!((s.uploads.count(), s.uploads.bytes), (2, 2400));
        assert_eq!(
            (s.uploads.time.min, s.uploads.time.max, s.uploads.time.avg()),
            (us_(4), us_(8), us_(6))
        );
        assert_eq!((s.downloads.count(), s.downloads.bytes), (1, 800));
        assert_eq!(s.downloads.time.total, us_(6));
        assert_eq!((s.waits.count, s.waits.total), (1, us_(3)));
        assert_eq!(s.allocs, ByteStats::default());
        assert_eq!(s.devices, vec![EMU0]);

        let d = p.stats(7);
        assert_eq!(d.reached, 0);
        assert_eq!(d.launches.count, 0);
        assert_eq!((d.allocs.count(), d.allocs.bytes), (1, 64));
        assert_eq!((d.frees.count(), d.frees.bytes), (1, 64));
        assert_eq!((d.uploads.count(), d.uploads.bytes), (1, 64));
        assert_eq!(d.devices, vec![EMU1]);

        assert_eq!(p.stats(99), SiteStats::default());

        let t = p.totals();
        assert_eq!(t.reached, 2);
        assert_eq!(t.launches.count, 3);
        assert_eq!((t.uploads.count(), t.uploads.bytes), (3, 2464));
        assert_eq!(
            (t.uploads.time.min, t.uploads.time.max, t.uploads.time.total),
            (us_(2), us_(8), us_(14))
        );
        assert_eq!((t.downloads.count(), t.downloads.bytes), (1, 800));
        assert_eq!(t.waits.count, 1);
        assert_eq!(t.devices, vec![EMU0, EMU1]);

        p.reset();
        assert_eq!(p.stats(3), SiteStats::default());
        assert_eq!(p.totals(), SiteStats::default());
    }

    #[test]
    fn an_end_before_the_start_counts_as_zero_time() {
        let p = profiling();
        let now = Instant::now();
        p.record(sync(1), launch(1, 1), now + us_(5), now);
        assert_eq!(p.stats(1).launches.count, 1);
        assert_eq!(p.stats(1).launches.max, Duration::ZERO);
    }

    #[test]
    fn start_up_costs_close_the_report_in_order() {
        let p = profiling();
        p.note_startup("driver", Duration::from_micros(1500));
        p.note_startup("nvidia:0 context", Duration::from_millis(300));
        let report = p.report(&resolve);
        assert!(
            report.ends_with("start-up: driver 1.5ms, nvidia:0 context 300.0ms\n"),
            "{report}"
        );
        // Nothing noted, no line; and nothing is noted without `--profile`.
        assert!(!profiling().report(&resolve).contains("start-up"));
        let quiet = Profiler::disabled();
        quiet.note_startup("driver", Duration::from_millis(1));
        assert!(!quiet.report(&resolve).contains("start-up"));
    }

    #[test]
    fn report_lists_constructs_by_file_and_line() {
        let p = profiling();
        let c = Clock::new();
        // Recorded out of line order, and site numbers unrelated to lines.
        record(&p, &c, sync(9), EventKind::Download { bytes: 4000 }, 0, 7);
        record(&p, &c, sync(3), EventKind::RegionEnter, 0, 0);
        for (i, d) in [10, 30, 20].into_iter().enumerate() {
            record(&p, &c, sync(3), launch(1024, 128), 100 * i as u64, d);
        }
        record(&p, &c, sync(3), EventKind::Wait, 400, 2);
        record(&p, &c, sync(7), EventKind::RegionEnter, 0, 0);
        record(&p, &c, sync(7), EventKind::Upload { bytes: 800 }, 0, 4);
        record(&p, &c, sync(7), EventKind::Upload { bytes: 1600 }, 10, 8);
        record(&p, &c, at(4, EMU1, Some(1)), EventKind::RegionEnter, 0, 0);
        record(
            &p,
            &c,
            at(4, EMU1, Some(1)),
            EventKind::Launch {
                gangs: 8,
                workers: 4,
                vector: 32,
            },
            0,
            5,
        );
        record(&p, &c, at(4, EMU1, Some(1)), launch(16, 32), 10, 5);

        let report = p.report(&resolve);
        let expected = [
            "acc profile (times in microseconds)",
            "a.acc",
            "  100: kernels reached 1 time on emulated:1",
            "         launches 2, grid 8 block 32x4 (1 time), grid 16 block 32 (1 time)",
            "           device time(us): total=10.0 min=5.0 max=5.0 avg=5.0",
            "jacobi.acc",
            "    5: data reached 1 time on emulated:0",
            "         uploads 2, 2400 bytes",
            "           time(us): total=12.0 min=4.0 max=8.0 avg=6.0",
            "   12: parallel loop reached 1 time on emulated:0",
            "         launches 3, grid 1024 block 128",
            "           device time(us): total=60.0 min=10.0 max=30.0 avg=20.0",
            "         waits 1",
            "           time(us): total=2.0 min=2.0 max=2.0 avg=2.0",
            "   30: update on emulated:0",
            "         downloads 1, 4000 bytes",
            "           time(us): total=7.0 min=7.0 max=7.0 avg=7.0",
            "totals: reached 3, launches 5 (device time 70.0us), uploads 2 (2400 bytes, 12.0us), \
             downloads 1 (4000 bytes, 7.0us), waits 1 (2.0us)",
        ];
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines, expected, "report:\n{report}");
    }

    #[test]
    fn an_empty_report_still_has_its_totals() {
        let report = profiling().report(&resolve);
        assert_eq!(
            report,
            "acc profile (times in microseconds)\ntotals: reached 0, launches 0 (device time \
             0.0us), uploads 0 (0 bytes, 0.0us), downloads 0 (0 bytes, 0.0us), waits 0 (0.0us)\n"
        );
    }

    /// A loop split over emulated:0 and emulated:1 (site 3), each device getting its halo row
    /// from the other, plus a data region (site 7) whose rows move device to device.
    fn split_loop_with_halos(p: &Profiler) {
        let c = Clock::new();
        let (start, end) = c.span(us_(0), us_(3));
        p.record_named(
            at(3, EMU1, None),
            EventKind::Peer { bytes: 1024 },
            "a[127:1]",
            start,
            end,
        );
        record(
            p,
            &c,
            at(3, EMU0, None),
            EventKind::Peer { bytes: 1024 },
            0,
            5,
        );
        record(p, &c, at(3, EMU0, None), EventKind::RegionEnter, 10, 0);
        record(p, &c, at(3, EMU0, None), launch(64, 128), 10, 20);
        record(p, &c, at(3, EMU1, None), launch(64, 128), 10, 30);
        record(
            p,
            &c,
            at(7, EMU1, None),
            EventKind::Peer { bytes: 4096 },
            50,
            4,
        );
    }

    #[test]
    fn peer_copies_count_per_site_and_in_the_totals() {
        let p = profiling();
        split_loop_with_halos(&p);
        let s = p.stats(3);
        assert_eq!((s.peers.count(), s.peers.bytes), (2, 2048));
        assert_eq!(
            (s.peers.time.min, s.peers.time.max, s.peers.time.total),
            (us_(3), us_(5), us_(8))
        );
        assert_eq!((s.uploads.count(), s.downloads.count()), (0, 0));
        assert_eq!(s.devices, vec![EMU1, EMU0]);
        let t = p.totals();
        assert_eq!((t.peers.count(), t.peers.bytes), (3, 6144));
        assert_eq!(t.peers.time.total, us_(12));
    }

    #[test]
    fn report_shows_peer_copies_beside_the_transfers() {
        let p = profiling();
        split_loop_with_halos(&p);
        let c = Clock::new();
        record(&p, &c, sync(7), EventKind::Upload { bytes: 800 }, 0, 2);
        let report = p.report(&resolve);
        let expected = [
            "acc profile (times in microseconds)",
            "jacobi.acc",
            "   5: data on emulated:1, emulated:0",
            "        uploads 1, 800 bytes",
            "          time(us): total=2.0 min=2.0 max=2.0 avg=2.0",
            "        peer copies 1, 4096 bytes",
            "          time(us): total=4.0 min=4.0 max=4.0 avg=4.0",
            "  12: parallel loop reached 1 time on emulated:1, emulated:0",
            "        launches 2, grid 64 block 128",
            "          device time(us): total=50.0 min=20.0 max=30.0 avg=25.0",
            "        peer copies 2, 2048 bytes",
            "          time(us): total=8.0 min=3.0 max=5.0 avg=4.0",
            "totals: reached 1, launches 2 (device time 50.0us), uploads 1 (800 bytes, 2.0us), \
             downloads 0 (0 bytes, 0.0us), peer copies 3 (6144 bytes, 12.0us), waits 0 (0.0us)",
        ];
        let lines: Vec<&str> = report.lines().collect();
        assert_eq!(lines, expected, "report:\n{report}");
    }

    #[test]
    fn notify_prints_peer_copies_as_transfers() {
        let (p, buf) = notifying(NOTIFY_TRANSFERS);
        split_loop_with_halos(&p);
        assert_eq!(
            buf.contents(),
            "peer emulated:1 queue sync site 3 variable=a[127:1] bytes=1024\n\
             peer emulated:0 queue sync site 3 bytes=1024\n\
             peer emulated:1 queue sync site 7 bytes=4096\n"
        );
        let (p, buf) = notifying(NOTIFY_ALL & !NOTIFY_TRANSFERS);
        split_loop_with_halos(&p);
        assert!(!buf.contents().contains("peer"), "{}", buf.contents());
    }

    #[test]
    fn chrome_trace_shows_peer_copies_on_the_destination_device() {
        let p = tracing();
        split_loop_with_halos(&p);
        let events = trace_events(&p, "X");
        let peers: Vec<&Value> = events.iter().filter(|e| e["cat"] == "halo").collect();
        assert_eq!(peers.len(), 3);
        let halo = peers[0];
        assert_eq!(halo["name"], "peer a[127:1]");
        assert_eq!(halo["pid"], 2, "emulated:1 is the second process");
        assert_eq!(halo["args"]["bytes"], 1024);
        assert_eq!(halo["args"]["label"], "a[127:1]");
        assert_eq!(halo["args"]["construct"], "parallel loop @ jacobi.acc:12");
        assert_eq!(halo["dur"].as_f64(), Some(3.0));
        assert_eq!(peers[1]["name"], "peer");
        assert_eq!(peers[1]["pid"], 1);
        assert_eq!(peers[1]["dur"].as_f64(), Some(5.0));
        assert_eq!(peers[2]["args"]["construct"], "data @ jacobi.acc:5");
        assert_eq!(peers[2]["args"]["bytes"], 4096);
    }

    /// One event of every kind, at site 3 on emulated:0's queue 2.
    fn one_of_each(p: &Profiler) {
        let c = Clock::new();
        let place = at(3, EMU0, Some(2));
        record(p, &c, place, EventKind::RegionEnter, 0, 0);
        record(p, &c, place, EventKind::Alloc { bytes: 800 }, 0, 1);
        let (start, end) = c.span(us_(1), us_(1));
        p.record_named(
            place,
            EventKind::Upload { bytes: 800 },
            "a[0:100]",
            start,
            end,
        );
        record(p, &c, place, launch(2, 1), 2, 1);
        record(p, &c, place, EventKind::Download { bytes: 800 }, 3, 1);
        record(p, &c, place, EventKind::Wait, 4, 1);
        record(p, &c, place, EventKind::Free { bytes: 800 }, 5, 1);
        record(p, &c, place, EventKind::RegionExit, 6, 0);
    }

    fn notifying(mask: u32) -> (Profiler, SharedBuffer) {
        profiler(ProfileOptions {
            notify: mask,
            ..ProfileOptions::default()
        })
    }

    #[test]
    fn notify_prints_every_enabled_kind_as_it_happens() {
        let (p, buf) = notifying(NOTIFY_ALL);
        one_of_each(&p);
        assert_eq!(
            buf.contents(),
            "enter emulated:0 queue 2 site 3\n\
             alloc emulated:0 queue 2 site 3 bytes=800\n\
             upload emulated:0 queue 2 site 3 variable=a[0:100] bytes=800\n\
             launch emulated:0 queue 2 site 3 gangs=2 workers=1 vector=1\n\
             download emulated:0 queue 2 site 3 bytes=800\n\
             wait emulated:0 queue 2 site 3\n\
             free emulated:0 queue 2 site 3 bytes=800\n\
             exit emulated:0 queue 2 site 3\n"
        );
    }

    #[test]
    fn notify_prints_only_the_kinds_in_the_mask() {
        let cases: [(u32, &[&str]); 6] = [
            (NOTIFY_LAUNCHES, &["launch"]),
            (NOTIFY_TRANSFERS, &["upload", "download"]),
            (NOTIFY_WAITS, &["wait"]),
            (NOTIFY_REGIONS, &["enter", "exit"]),
            (NOTIFY_ALLOCATIONS, &["alloc", "free"]),
            (NOTIFY_LAUNCHES | NOTIFY_WAITS, &["launch", "wait"]),
        ];
        for (mask, verbs) in cases {
            let (p, buf) = notifying(mask);
            assert!(p.enabled());
            one_of_each(&p);
            let printed: Vec<String> = buf
                .contents()
                .lines()
                .map(|l| l.split(' ').next().unwrap_or("").to_owned())
                .collect();
            assert_eq!(printed, verbs, "mask {mask}");
        }
    }

    #[test]
    fn notify_names_sites_through_the_resolver_and_queues_by_kind() {
        let (p, buf) = notifying(NOTIFY_LAUNCHES | NOTIFY_TRANSFERS);
        p.set_resolver(Box::new(resolve));
        let now = Instant::now();
        p.record(sync(3), launch(2, 128), now, now);
        p.record(
            at(3, EMU1, Some(DEFAULT_ASYNC_QUEUE)),
            EventKind::Download { bytes: 8 },
            now,
            now,
        );
        assert_eq!(
            buf.contents(),
            "launch emulated:0 queue sync parallel loop @ jacobi.acc:12 gangs=2 workers=1 vector=128\n\
             download emulated:1 queue default parallel loop @ jacobi.acc:12 bytes=8\n"
        );
    }

    #[test]
    fn nothing_enabled_records_nothing() {
        let (p, buf) = notifying(0);
        assert!(!p.enabled());
        assert!(!Profiler::disabled().enabled());
        one_of_each(&p);
        assert_eq!(buf.contents(), "");
        assert_eq!(p.totals(), SiteStats::default());
        assert_eq!(trace_events(&p, "X").len(), 0);
    }

    #[test]
    fn each_option_keeps_only_its_own_records() {
        let (p, buf) = notifying(NOTIFY_LAUNCHES);
        one_of_each(&p);
        assert_eq!(p.totals(), SiteStats::default());
        assert_eq!(trace_events(&p, "X").len(), 0);
        assert_eq!(buf.contents().lines().count(), 1);

        let (p, buf) = profiler(ProfileOptions {
            trace: true,
            ..ProfileOptions::default()
        });
        one_of_each(&p);
        assert_eq!(p.totals(), SiteStats::default());
        assert_eq!(trace_events(&p, "X").len(), 8);
        assert_eq!(buf.contents(), "");

        let p = profiling();
        one_of_each(&p);
        assert_eq!(p.totals().launches.count, 1);
        assert_eq!(trace_events(&p, "X").len(), 0);
    }

    fn tracing() -> Profiler {
        profiler(ProfileOptions {
            trace: true,
            ..ProfileOptions::default()
        })
        .0
    }

    fn parse_trace(p: &Profiler) -> Value {
        let text = p.chrome_trace(&resolve);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    /// The trace's events of one phase (`"X"`, `"M"`).
    fn trace_events(p: &Profiler, phase: &str) -> Vec<Value> {
        let trace = parse_trace(p);
        trace["traceEvents"]
            .as_array()
            .expect("traceEvents is an array")
            .iter()
            .filter(|e| e["ph"] == phase)
            .cloned()
            .collect()
    }

    /// `(pid, tid)` -> name from the metadata events named `what`.
    fn names(meta: &[Value], what: &str) -> Vec<(u64, u64, String)> {
        let mut names: Vec<(u64, u64, String)> = meta
            .iter()
            .filter(|e| e["name"] == what)
            .map(|e| {
                (
                    e["pid"].as_u64().unwrap(),
                    e["tid"].as_u64().unwrap(),
                    e["args"]["name"].as_str().unwrap().to_owned(),
                )
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn chrome_trace_has_a_process_per_device_and_a_thread_per_queue() {
        let p = tracing();
        let c = Clock::new();
        // Queue order in the trace does not depend on recording order.
        record(&p, &c, at(3, EMU1, Some(1)), launch(4, 32), 0, 5);
        record(&p, &c, at(3, EMU0, Some(1)), launch(4, 32), 0, 5);
        record(&p, &c, at(3, EMU0, None), EventKind::Wait, 0, 5);
        record(
            &p,
            &c,
            at(3, EMU0, Some(DEFAULT_ASYNC_QUEUE)),
            EventKind::Wait,
            0,
            5,
        );
        record(&p, &c, at(3, EMU1, Some(1)), EventKind::Wait, 10, 5);

        let trace = parse_trace(&p);
        assert_eq!(trace["displayTimeUnit"], "ms");
        let meta = trace_events(&p, "M");
        assert_eq!(
            names(&meta, "process_name"),
            vec![
                (1, 0, "emulated:0".to_owned()),
                (2, 0, "emulated:1".to_owned())
            ]
        );
        assert_eq!(
            names(&meta, "thread_name"),
            vec![
                (1, 1, "sync".to_owned()),
                (1, 2, "default async".to_owned()),
                (1, 3, "queue 1".to_owned()),
                (2, 1, "queue 1".to_owned()),
            ]
        );
        let lanes: Vec<(u64, u64)> = trace_events(&p, "X")
            .iter()
            .map(|e| (e["pid"].as_u64().unwrap(), e["tid"].as_u64().unwrap()))
            .collect();
        assert_eq!(lanes, vec![(2, 1), (1, 3), (1, 1), (1, 2), (2, 1)]);
    }

    #[test]
    fn chrome_trace_has_one_complete_event_per_recorded_event() {
        let p = tracing();
        one_of_each(&p);
        // An event that started before the profiler existed starts at 0.
        let early = Instant::now()
            .checked_sub(Duration::from_secs(1))
            .unwrap_or_else(Instant::now);
        p.record(sync(4), launch(1, 1), early, early);
        let start = Instant::now();
        let end = start + us_(12);
        p.record_named(
            sync(4),
            EventKind::Download { bytes: 16 },
            "odd \"name\"\n\\",
            start,
            end,
        );

        let events = trace_events(&p, "X");
        assert_eq!(events.len(), 10);
        for e in &events {
            assert!(e["ts"].as_f64().unwrap() >= 0.0, "{e}");
            assert!(e["dur"].as_f64().unwrap() >= 0.0, "{e}");
            assert_eq!(e["pid"], 1);
        }
        let summary: Vec<(&str, &str)> = events
            .iter()
            .map(|e| (e["name"].as_str().unwrap(), e["cat"].as_str().unwrap()))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("enter parallel loop @ jacobi.acc:12", "region"),
                ("alloc", "alloc"),
                ("upload a[0:100]", "transfer"),
                ("parallel loop @ jacobi.acc:12", "launch"),
                ("download", "transfer"),
                ("wait", "wait"),
                ("free", "alloc"),
                ("exit parallel loop @ jacobi.acc:12", "region"),
                ("kernels @ a.acc:100", "launch"),
                ("download odd \"name\"\n\\", "transfer"),
            ]
        );
        let upload = &events[2];
        assert_eq!(upload["args"]["bytes"], 800);
        assert_eq!(upload["args"]["label"], "a[0:100]");
        assert_eq!(upload["args"]["construct"], "parallel loop @ jacobi.acc:12");
        assert_eq!(upload["dur"].as_f64(), Some(1.0));
        let kernel = &events[3];
        assert_eq!(kernel["args"]["grid"], 2);
        assert_eq!(kernel["args"]["block"], "1");
        assert_eq!(kernel["args"]["gangs"], 2);
        assert_eq!(events[8]["ts"].as_f64(), Some(0.0));
        assert_eq!(events[9]["dur"].as_f64(), Some(12.0));

        p.reset();
        assert_eq!(trace_events(&p, "X").len(), 0);
        assert_eq!(trace_events(&p, "M").len(), 0);
    }

    #[test]
    fn an_empty_trace_is_valid_json() {
        let trace = parse_trace(&tracing());
        assert_eq!(trace["traceEvents"].as_array().map(Vec::len), Some(0));
    }

    #[test]
    fn json_strings_escape_quotes_backslashes_and_controls() {
        let s = json_string("a\"b\\c\nd\te\u{1}f\u{e9}");
        assert_eq!(s, "\"a\\\"b\\\\c\\nd\\te\\u0001f\u{e9}\"");
        let back: String = serde_json::from_str(&s).unwrap();
        assert_eq!(back, "a\"b\\c\nd\te\u{1}f\u{e9}");
    }

    #[test]
    fn concurrent_recording_counts_everything() {
        const THREADS: u32 = 4;
        const EACH: u64 = 1000;
        let p = Arc::new(profiler(ProfileOptions {
            profile: true,
            notify: NOTIFY_TRANSFERS,
            trace: true,
        }));
        let workers: Vec<_> = (0..THREADS)
            .map(|t| {
                let p = Arc::clone(&p);
                std::thread::spawn(move || {
                    let place = at(t % 2, EMU0, Some(t as i32));
                    for _ in 0..EACH {
                        let start = Instant::now();
                        p.0.record(place, launch(t + 1, 32), start, Instant::now());
                        p.0.record(place, EventKind::Upload { bytes: 8 }, start, Instant::now());
                    }
                })
            })
            .collect();
        for w in workers {
            w.join().unwrap();
        }
        let (p, buf) = &*p;
        let total = u64::from(THREADS) * EACH;
        let t = p.totals();
        assert_eq!(t.launches.count, total);
        assert_eq!((t.uploads.count(), t.uploads.bytes), (total, 8 * total));
        assert_eq!(t.shapes.iter().map(|s| s.1).sum::<u64>(), total);
        assert_eq!(p.stats(0).launches.count, 2 * EACH);
        assert_eq!(p.stats(1).uploads.count(), 2 * EACH);
        let contents = buf.contents();
        assert_eq!(contents.lines().count() as u64, total);
        assert!(contents
            .lines()
            .all(|l| l.starts_with("upload emulated:0 queue ")));
        assert_eq!(trace_events(p, "X").len() as u64, 2 * total);
    }
}
