//! The asynchronous queues of one emulated device (LANGUAGE.md 7.7), the host-thread
//! counterpart of CUDA streams.
//!
//! Each queue is a lane: a FIFO of tasks with two counters, `submitted` and `completed`. Any
//! number of lanes share one bounded pool of worker threads (`acc-queue-worker-{n}`, started
//! as work arrives, at most the core count clamped to `MIN_WORKERS..=MAX_WORKERS`): a lane
//! with work is scheduled on the pool's ready list, and a worker serves it, running its jobs
//! one at a time in submission order, so a queue's jobs never overlap or reorder, while
//! different queues run on different workers. Queues are independent of each other; the only
//! links between them are the waits that `submit_wait` queues. Everything that waits
//! (`wait`, `wait_all`, a queued wait) waits for a *checkpoint*: "completed >= the submitted
//! count at the time of the call", so jobs submitted later never extend a wait that already
//! started.
//!
//! A queued wait never blocks a worker (with a bounded pool, workers blocked in waits whose
//! awaited jobs sit in lanes that wait for a worker would stop everything). When a worker
//! reaches a wait that is not over, it registers the lane with the awaited lane and *parks*
//! it: no worker holds it, and the awaited lane's next completed job schedules it again, to
//! look once more. The check and the registration are one step under the awaited lane's lock,
//! and a wake-up that arrives while the lane is still being served makes the worker look
//! again instead of parking, so no wake-up is lost. So the pool size bounds how many jobs
//! run at once, never whether the queues make progress: only jobs that block on something
//! outside the queues hold a worker.
//!
//! Synchronous mode (`--synchronous`, `ACC_SYNCHRONOUS=1`) runs every job on the caller's
//! thread at submit time, after the jobs of its queue that are still pending (when the mode
//! was switched on with work in flight).
//!
//! A job that panics does not take its queue down: the panic is caught, the job counts as
//! completed (so waiters are released), and its message is kept for `take_panics`.

use std::any::Any;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use crate::host::INITIAL_DEFAULT_ASYNC;

/// One operation queued on a device: a transfer, a launch, a wait.
pub type Job = Box<dyn FnOnce() + Send + 'static>;

/// The queue key: a numbered queue `q >= 0` (the `q` of `async(q)`), or the device's default
/// asynchronous queue, which is distinct from every numbered queue. Which queue `async` with no
/// argument means (`acc_set_default_async`) is the caller's business: it passes the key it
/// chose. Ordered `Default` first, then numbered queues ascending (the order of `used`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueId {
    Default,
    Numbered(i32),
}

impl QueueId {
    /// The queue an OpenACC async argument names: `q >= 0` is that queue, and
    /// `acc_async_noval` (`INITIAL_DEFAULT_ASYNC`, -1) the default queue. Other negative
    /// values (`acc_async_sync`) name no queue.
    pub fn from_async_arg(q: i32) -> Option<QueueId> {
        match q {
            INITIAL_DEFAULT_ASYNC => Some(QueueId::Default),
            q if q >= 0 => Some(QueueId::Numbered(q)),
            _ => None,
        }
    }
}

/// `default` or the queue's number, as in the worker thread's name `acc-queue-{q}`.
impl fmt::Display for QueueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueueId::Default => f.write_str("default"),
            QueueId::Numbered(q) => write!(f, "{q}"),
        }
    }
}

/// Locks a mutex, ignoring poisoning: jobs never run under these locks, so a poisoned lock
/// still guards consistent data.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn wait_on<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

// ---------------------------------------------------------------------------------------------
// Event

/// A one-shot flag threads can wait for; clones share it.
#[derive(Clone, Debug, Default)]
pub struct Event {
    inner: Arc<(Mutex<bool>, Condvar)>,
}

impl Event {
    pub fn new() -> Event {
        Event::default()
    }

    /// Sets the event and wakes every waiter. Signalling twice is harmless.
    pub fn signal(&self) {
        let (flag, cv) = &*self.inner;
        *lock(flag) = true;
        cv.notify_all();
    }

    pub fn is_set(&self) -> bool {
        *lock(&self.inner.0)
    }

    /// Blocks until the event is set.
    pub fn wait(&self) {
        let (flag, cv) = &*self.inner;
        let mut set = lock(flag);
        while !*set {
            set = wait_on(cv, set);
        }
    }

    /// Blocks until the event is set or `timeout` has passed; true when it is set.
    pub fn wait_timeout(&self, timeout: Duration) -> bool {
        let (flag, cv) = &*self.inner;
        let set = lock(flag);
        let (set, _) = cv
            .wait_timeout_while(set, timeout, |set| !*set)
            .unwrap_or_else(PoisonError::into_inner);
        *set
    }
}

// ---------------------------------------------------------------------------------------------
// Lanes: one queue's tasks and counters

/// What a lane holds: a job to run, or a queued wait (`submit_wait`), which holds no worker
/// while its checkpoints are not reached (see `Pool::serve`).
enum Task {
    Run(Job),
    Wait(Arc<[Checkpoint]>),
}

/// Where a lane stands with the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sched {
    /// Nothing to do, or its tasks are run inline (synchronous mode): no worker has it.
    Idle,
    /// In the pool's ready list, or being served by a worker.
    Scheduled,
    /// Its first task is a wait that is not over: registered with the awaited lane, whose
    /// progress schedules it again.
    Parked,
}

struct Lane {
    id: QueueId,
    state: Mutex<LaneState>,
    /// Blocking waiters (`wait`, `Checkpoint::wait`, inline jobs) wait here for `completed`
    /// to grow.
    progressed: Condvar,
}

struct LaneState {
    pending: VecDeque<Task>,
    /// Tasks submitted (queued or run inline) and completed; a queued wait counts as one.
    submitted: u64,
    completed: u64,
    sched: Sched,
    /// Set when a watched lane progressed while this lane was being served (not parked): the
    /// worker about to park it re-checks its wait instead, so that wake-up is not lost.
    woken: bool,
    /// Lanes parked on a wait for this lane: scheduled again (and removed) whenever this lane
    /// completes a task. Duplicates are harmless (a second wake is a spurious re-check).
    watchers: Vec<Arc<Lane>>,
}

impl Lane {
    fn new(id: QueueId) -> Lane {
        Lane {
            id,
            state: Mutex::new(LaneState {
                pending: VecDeque::new(),
                submitted: 0,
                completed: 0,
                sched: Sched::Idle,
                woken: false,
                watchers: Vec::new(),
            }),
            progressed: Condvar::new(),
        }
    }

    fn submitted(&self) -> u64 {
        lock(&self.state).submitted
    }

    fn has_completed(&self, target: u64) -> bool {
        lock(&self.state).completed >= target
    }

    fn wait_for(&self, target: u64) {
        let mut state = lock(&self.state);
        while state.completed < target {
            state = wait_on(&self.progressed, state);
        }
    }

    /// Counts one task completed, wakes the blocking waiters and hands back the parked lanes
    /// to schedule again.
    fn finish_one(&self) -> Vec<Arc<Lane>> {
        let watchers = {
            let mut state = lock(&self.state);
            state.completed += 1;
            std::mem::take(&mut state.watchers)
        };
        self.progressed.notify_all();
        watchers
    }

    /// Registers `watcher` to be woken when this lane progresses, unless `target` is reached
    /// already: the check and the registration are one step under this lane's lock, and
    /// `finish_one` takes the watchers under it, so no completion slips between them.
    /// True when registered (the target is not reached).
    fn watch(&self, target: u64, watcher: &Arc<Lane>) -> bool {
        let mut state = lock(&self.state);
        if state.completed >= target {
            return false;
        }
        state.watchers.push(Arc::clone(watcher));
        true
    }
}

type PanicLog = Arc<Mutex<Vec<String>>>;

/// Runs one job of `lane`, catching a panic, and counts it completed either way. Returns the
/// lanes to wake.
fn run_job(lane: &Lane, job: Job, panics: &PanicLog) -> Vec<Arc<Lane>> {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(job)) {
        let message = panic_message(payload.as_ref());
        lock(panics).push(format!("job on queue {} panicked: {message}", lane.id));
    }
    lane.finish_one()
}

fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// The worker pool

/// How many jobs a worker runs from one lane before it lets the other ready lanes have a
/// turn (the lane goes to the back of the ready list), so that a long queue does not starve
/// the others when the lanes outnumber the workers.
const BATCH: usize = 64;

/// The default pool size: the core count, at least `MIN_WORKERS` and at most `MAX_WORKERS`.
/// Jobs of the emulated device (transfers, kernels that run their gangs on the gang pool)
/// mostly keep a core busy, so more workers than cores buy little; a few more than one keep
/// queues overlapping on a small machine (and keep a queue whose job sleeps or blocks on the
/// host from stopping the others). Queued waits never hold a worker, so the size bounds only
/// how many *jobs* run at once, never whether the queues make progress.
pub const MIN_WORKERS: usize = 4;
pub const MAX_WORKERS: usize = 64;

fn default_workers() -> usize {
    thread::available_parallelism()
        .map_or(MIN_WORKERS, usize::from)
        .clamp(MIN_WORKERS, MAX_WORKERS)
}

struct Pool {
    state: Mutex<PoolState>,
    /// Idle workers wait here for a ready lane (or for the pool to close).
    work: Condvar,
    /// The most workers this pool starts.
    limit: usize,
    panics: PanicLog,
}

#[derive(Default)]
struct PoolState {
    /// Lanes with a task to run, each at most once (their `sched` is `Scheduled`).
    ready: VecDeque<Arc<Lane>>,
    /// Workers not serving a lane (waiting, or just started).
    idle: usize,
    workers: Vec<JoinHandle<()>>,
    /// Set by `Queues::drop` once every lane is drained: the workers exit.
    closing: bool,
}

impl Pool {
    /// Puts a lane (marked `Scheduled` by the caller) on the ready list, starting a worker
    /// when the ready lanes outnumber the idle workers and the pool is below its size.
    /// False when the pool has no worker at all and none could be started (out of threads):
    /// the caller then runs the lane's work inline.
    fn schedule(self: &Arc<Pool>, lane: Arc<Lane>) -> bool {
        let mut state = lock(&self.state);
        if state.ready.len() >= state.idle && state.workers.len() < self.limit {
            let pool = Arc::clone(self);
            let name = format!("acc-queue-worker-{}", state.workers.len());
            if let Ok(handle) = thread::Builder::new()
                .name(name)
                .spawn(move || pool.worker_loop())
            {
                state.workers.push(handle);
                state.idle += 1;
            }
        }
        if state.workers.is_empty() {
            return false;
        }
        state.ready.push_back(lane);
        drop(state);
        self.work.notify_one();
        true
    }

    fn worker_loop(self: &Arc<Pool>) {
        loop {
            let lane = {
                let mut state = lock(&self.state);
                loop {
                    if let Some(lane) = state.ready.pop_front() {
                        state.idle -= 1;
                        break lane;
                    }
                    if state.closing {
                        return;
                    }
                    state = wait_on(&self.work, state);
                }
            };
            self.serve(&lane);
            lock(&self.state).idle += 1;
        }
    }

    /// Wakes the lanes parked on a lane that progressed: a parked one is scheduled again (it
    /// re-checks its wait), one being served is told to re-check before it parks.
    fn wake(self: &Arc<Pool>, watchers: Vec<Arc<Lane>>) {
        for watcher in watchers {
            let reschedule = {
                let mut state = lock(&watcher.state);
                match state.sched {
                    Sched::Parked => {
                        state.sched = Sched::Scheduled;
                        true
                    }
                    Sched::Scheduled => {
                        state.woken = true;
                        false
                    }
                    // A registration left from a wait that is over (the lane emptied since).
                    Sched::Idle => false,
                }
            };
            if reschedule {
                self.schedule_or_drain(watcher);
            }
        }
    }

    /// `schedule`, or, with no worker to be had, serves the lane on this thread.
    fn schedule_or_drain(self: &Arc<Pool>, lane: Arc<Lane>) {
        if !self.schedule(Arc::clone(&lane)) {
            self.serve(&lane);
        }
    }

    /// Serves a scheduled lane: runs its tasks in order, at most `BATCH` jobs, without ever
    /// blocking on another lane. Leaves it `Idle` when it is empty, `Parked` (registered with
    /// the lane it waits for) when its first task is a wait that is not over, or back on the
    /// ready list when the batch is used up.
    fn serve(self: &Arc<Pool>, lane: &Arc<Lane>) {
        let mut ran = 0;
        loop {
            let task = {
                let mut state = lock(&lane.state);
                if ran == BATCH && !state.pending.is_empty() {
                    drop(state);
                    if self.schedule(Arc::clone(lane)) {
                        return;
                    }
                    // No worker to hand it to: go on here.
                    ran = 0;
                    continue;
                }
                // Any wake-up that comes after this point makes `woken` true again.
                state.woken = false;
                match state.pending.front() {
                    None => {
                        state.sched = Sched::Idle;
                        return;
                    }
                    Some(Task::Wait(checkpoints)) => Task::Wait(Arc::clone(checkpoints)),
                    Some(Task::Run(_)) => state.pending.pop_front().expect("front was a job"),
                }
            };
            match task {
                Task::Run(job) => {
                    let watchers = run_job(lane, job, &self.panics);
                    self.wake(watchers);
                    ran += 1;
                }
                Task::Wait(checkpoints) => {
                    let blocking = checkpoints.iter().find_map(|c| {
                        let (awaited, target) = c.lane.as_ref()?;
                        awaited.watch(*target, lane).then_some(())
                    });
                    let mut state = lock(&lane.state);
                    if blocking.is_none() {
                        // Every checkpoint is reached: the wait is done.
                        state.pending.pop_front();
                        drop(state);
                        let watchers = lane.finish_one();
                        self.wake(watchers);
                    } else if !state.woken {
                        // Registered with the awaited lane, which wakes this one when it
                        // progresses; no worker is held meanwhile.
                        state.sched = Sched::Parked;
                        return;
                    }
                    // Woken while registering: look again.
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Checkpoints

/// The point a queue reaches when the jobs submitted to it up to some moment have finished.
/// Jobs submitted after that moment do not move it.
#[derive(Clone)]
pub struct Checkpoint {
    /// None for a queue never used: reached from the start.
    lane: Option<(Arc<Lane>, u64)>,
}

impl Checkpoint {
    pub fn is_reached(&self) -> bool {
        self.lane
            .as_ref()
            .is_none_or(|(lane, target)| lane.has_completed(*target))
    }

    /// Blocks until the checkpoint is reached.
    pub fn wait(&self) {
        if let Some((lane, target)) = &self.lane {
            lane.wait_for(*target);
        }
    }
}

impl fmt::Debug for Checkpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.lane {
            None => f.write_str("Checkpoint(unused queue)"),
            Some((lane, target)) => write!(f, "Checkpoint(queue {}, job {target})", lane.id),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Queues

/// The asynchronous queues of one device. `Send + Sync`: any host thread may submit and wait.
pub struct Queues {
    synchronous: bool,
    lanes: Mutex<BTreeMap<QueueId, Arc<Lane>>>,
    pool: Arc<Pool>,
}

impl Queues {
    /// `synchronous`: `--synchronous` / `ACC_SYNCHRONOUS=1`: every job runs on the caller's
    /// thread at submit time. The pool has the default size (the core count, clamped to
    /// `MIN_WORKERS..=MAX_WORKERS`).
    pub fn new(synchronous: bool) -> Queues {
        Queues::with_workers(synchronous, default_workers())
    }

    /// Queues served by at most `workers` threads (at least 1).
    pub fn with_workers(synchronous: bool, workers: usize) -> Queues {
        Queues {
            synchronous,
            lanes: Mutex::new(BTreeMap::new()),
            pool: Arc::new(Pool {
                state: Mutex::new(PoolState::default()),
                work: Condvar::new(),
                limit: workers.max(1),
                panics: PanicLog::default(),
            }),
        }
    }

    /// Switches synchronous mode. Jobs already queued keep their order: a job submitted
    /// synchronously still runs after its queue's pending ones.
    pub fn set_synchronous(&mut self, on: bool) {
        self.synchronous = on;
    }

    pub fn is_synchronous(&self) -> bool {
        self.synchronous
    }

    /// The worker threads started so far: never more than the pool size, however many
    /// queues are used.
    pub fn workers_started(&self) -> usize {
        lock(&self.pool.state).workers.len()
    }

    /// The lane of `q`, created on first use.
    fn lane(&self, q: QueueId) -> Arc<Lane> {
        let mut lanes = lock(&self.lanes);
        Arc::clone(lanes.entry(q).or_insert_with(|| Arc::new(Lane::new(q))))
    }

    /// The lane of `q` if it has been used.
    fn existing_lane(&self, q: QueueId) -> Option<Arc<Lane>> {
        lock(&self.lanes).get(&q).map(Arc::clone)
    }

    /// Queues `task` on `lane` and schedules the lane if no worker has it and it is not
    /// parked (a parked lane is scheduled by the progress it waits for).
    fn push(&self, lane: &Arc<Lane>, task: Task) {
        let schedule = {
            let mut state = lock(&lane.state);
            state.submitted += 1;
            state.pending.push_back(task);
            let idle = state.sched == Sched::Idle;
            if idle {
                state.sched = Sched::Scheduled;
            }
            idle
        };
        if schedule {
            self.pool.schedule_or_drain(Arc::clone(lane));
        }
    }

    /// Runs `job` on the caller's thread, in its place in the lane's order: after every task
    /// submitted to the lane before it.
    fn run_inline(&self, lane: &Lane, job: Job) {
        let ticket = {
            let mut state = lock(&lane.state);
            state.submitted += 1;
            state.submitted
        };
        lane.wait_for(ticket - 1);
        let watchers = run_job(lane, job, &self.pool.panics);
        self.pool.wake(watchers);
    }

    /// Queues `job` on `q` and returns at once; in synchronous mode runs it before returning.
    pub fn submit(&self, q: QueueId, job: Job) {
        let lane = self.lane(q);
        if self.synchronous {
            self.run_inline(&lane, job);
        } else {
            self.push(&lane, Task::Run(job));
        }
    }

    /// Queues on `q` a wait for the jobs submitted so far to the queues `on` (`acc wait(on…)
    /// async(q)`, the `wait` clause of an async construct): q's later jobs start only after
    /// those have finished; the caller is not blocked (except in synchronous mode, where the
    /// wait happens here). Waiting on `q` itself is a no-op: its earlier jobs already come
    /// first. The waited-for counts are taken before q's wait is queued, so crossed waits
    /// (q on r, r on q) never deadlock. The queued wait holds no worker while it waits.
    pub fn submit_wait(&self, q: QueueId, on: &[QueueId]) {
        let checkpoints: Vec<Checkpoint> = on
            .iter()
            .filter(|&&other| other != q)
            .map(|&other| self.checkpoint(other))
            .filter(|checkpoint| !checkpoint.is_reached())
            .collect();
        // q counts as used even when there is nothing to wait for.
        let lane = self.lane(q);
        if self.synchronous {
            checkpoints.iter().for_each(Checkpoint::wait);
        } else if !checkpoints.is_empty() {
            self.push(&lane, Task::Wait(checkpoints.into()));
        }
    }

    /// The checkpoint of `q` now: reached when every job submitted to q so far has finished.
    pub fn checkpoint(&self, q: QueueId) -> Checkpoint {
        Checkpoint {
            lane: self.existing_lane(q).map(|lane| {
                let target = lane.submitted();
                (lane, target)
            }),
        }
    }

    /// Blocks until every job submitted to `q` so far has finished (`acc wait(q)`). A queue
    /// never used returns at once. Must not be called from a job of `q` (it would wait for
    /// itself).
    pub fn wait(&self, q: QueueId) {
        self.checkpoint(q).wait();
    }

    /// Blocks until every job submitted so far to any queue has finished (`acc wait`).
    pub fn wait_all(&self) {
        self.checkpoints().iter().for_each(Checkpoint::wait);
    }

    /// `acc_async_test(q)`: true when every job submitted to q so far has finished.
    pub fn test(&self, q: QueueId) -> bool {
        self.checkpoint(q).is_reached()
    }

    /// `acc_async_test_all()`.
    pub fn test_all(&self) -> bool {
        self.checkpoints().iter().all(Checkpoint::is_reached)
    }

    /// The checkpoints of every used queue, all taken under one lock.
    fn checkpoints(&self) -> Vec<Checkpoint> {
        lock(&self.lanes)
            .values()
            .map(|lane| Checkpoint {
                lane: Some((Arc::clone(lane), lane.submitted())),
            })
            .collect()
    }

    /// An event set once the jobs submitted to `q` so far have finished (CUDA's event record):
    /// set at once for a queue with nothing pending.
    pub fn record(&self, q: QueueId) -> Event {
        let event = Event::new();
        if self.test(q) {
            event.signal();
        } else {
            let signal = event.clone();
            self.submit(q, Box::new(move || signal.signal()));
        }
        event
    }

    /// The queues used so far (by `submit` or `submit_wait`), default first, then ascending.
    pub fn used(&self) -> Vec<QueueId> {
        lock(&self.lanes).keys().copied().collect()
    }

    /// The messages of the jobs that panicked since the last call, oldest first, each naming
    /// its queue: `job on queue 2 panicked: …`.
    pub fn take_panics(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.pool.panics))
    }
}

impl fmt::Debug for Queues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queues")
            .field("synchronous", &self.synchronous)
            .field("used", &self.used())
            .finish()
    }
}

/// Completes every queued job, then stops and joins the workers. (A job blocked forever, on
/// something outside the queues, blocks the drop too.)
impl Drop for Queues {
    fn drop(&mut self) {
        // No one else can submit now (`&mut self`), and jobs cannot reach the queues, so once
        // every lane has completed what it was given, nothing is left for the workers.
        self.wait_all();
        let workers = {
            let mut state = lock(&self.pool.state);
            state.closing = true;
            std::mem::take(&mut state.workers)
        };
        self.pool.work.notify_all();
        for worker in workers {
            // A worker never panics (jobs are caught); nothing to report if it did.
            let _ = worker.join();
        }
        // The lanes (and the parked lanes' watcher lists, which point back at lanes) go now:
        // break the cycles a registration may have left.
        for lane in lock(&self.lanes).values() {
            lock(&lane.state).watchers.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Instant;

    /// How long a test waits for something that must happen before it calls it a hang.
    const PATIENCE: Duration = Duration::from_secs(10);
    /// How long a test watches for something that must not happen.
    const GLANCE: Duration = Duration::from_millis(50);

    const Q0: QueueId = QueueId::Numbered(0);
    const Q1: QueueId = QueueId::Numbered(1);
    const Q2: QueueId = QueueId::Numbered(2);

    /// An event that is signalled when it goes out of scope, so that a failed assertion
    /// unwinds through the `Queues`' drop instead of hanging in it on a blocked job. Declared
    /// after the queues, it is dropped before them.
    struct Gate(Event);

    impl Gate {
        fn new() -> Gate {
            Gate(Event::new())
        }
    }

    impl std::ops::Deref for Gate {
        type Target = Event;
        fn deref(&self) -> &Event {
            &self.0
        }
    }

    impl Drop for Gate {
        fn drop(&mut self) {
            self.0.signal();
        }
    }

    /// Runs `f` on a thread of its own; true when it returns within `PATIENCE`. (A wait that
    /// never returns then fails its test instead of hanging it.)
    fn returns_in_time(f: impl FnOnce() + Send + 'static) -> bool {
        let (tx, rx) = mpsc::channel();
        thread::spawn(move || {
            f();
            let _ = tx.send(());
        });
        rx.recv_timeout(PATIENCE).is_ok()
    }

    /// A job that blocks until `gate` is signalled.
    fn blocked_on(gate: &Event) -> Job {
        let gate = gate.clone();
        Box::new(move || gate.wait())
    }

    /// A job that sends `value` on `tx`.
    fn send<T: Send + 'static>(tx: &mpsc::Sender<T>, value: T) -> Job {
        let tx = tx.clone();
        Box::new(move || {
            let _ = tx.send(value);
        })
    }

    /// A job that appends `value` to `log`.
    fn append<T: Send + 'static>(log: &Arc<Mutex<Vec<T>>>, value: T) -> Job {
        let log = Arc::clone(log);
        Box::new(move || lock(&log).push(value))
    }

    fn new_log<T>() -> Arc<Mutex<Vec<T>>> {
        Arc::new(Mutex::new(Vec::new()))
    }

    #[test]
    fn queues_and_events_are_send_and_sync() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<Queues>();
        assert_send_sync::<Event>();
        assert_send_sync::<Checkpoint>();
    }

    #[test]
    fn queue_ids_display_order_and_come_from_async_arguments() {
        assert_eq!(QueueId::Default.to_string(), "default");
        assert_eq!(QueueId::Numbered(7).to_string(), "7");
        assert!(QueueId::Default < QueueId::Numbered(0));
        assert!(QueueId::Numbered(2) < QueueId::Numbered(10));
        assert_eq!(QueueId::from_async_arg(-1), Some(QueueId::Default));
        assert_eq!(QueueId::from_async_arg(0), Some(Q0));
        assert_eq!(QueueId::from_async_arg(5), Some(QueueId::Numbered(5)));
        assert_eq!(QueueId::from_async_arg(-2), None);
    }

    #[test]
    fn events_wake_every_clone() {
        let event = Event::new();
        assert!(!event.is_set());
        assert!(!event.wait_timeout(Duration::from_millis(1)));
        let waiters: Vec<_> = (0..3)
            .map(|_| {
                let event = event.clone();
                thread::spawn(move || event.wait())
            })
            .collect();
        event.signal();
        event.signal();
        for waiter in waiters {
            waiter.join().unwrap();
        }
        assert!(event.is_set());
        assert!(event.wait_timeout(Duration::ZERO));
    }

    #[test]
    fn jobs_of_one_queue_run_in_order_on_the_named_workers() {
        let queues = Queues::new(false);
        let log = new_log();
        for i in 0..1000 {
            queues.submit(Q1, append(&log, i));
        }
        let names = new_log();
        for q in [QueueId::Default, QueueId::Numbered(3)] {
            let names = Arc::clone(&names);
            queues.submit(
                q,
                Box::new(move || {
                    lock(&names).push(thread::current().name().map(str::to_string));
                }),
            );
        }
        queues.wait(Q1);
        assert_eq!(*lock(&log), (0..1000).collect::<Vec<_>>());
        queues.wait_all();
        // Workers are shared by all queues (no thread per queue): named for the pool.
        let names = lock(&names).clone();
        assert_eq!(names.len(), 2);
        for name in names {
            let name = name.expect("workers are named");
            assert!(name.starts_with("acc-queue-worker-"), "{name}");
        }
    }

    #[test]
    fn a_blocked_queue_does_not_stop_another() {
        let queues = Queues::new(false);
        let gate = Gate::new();
        let (tx, rx) = mpsc::channel();
        queues.submit(Q1, blocked_on(&gate));
        queues.submit(Q1, send(&tx, "q1"));
        queues.submit(Q2, send(&tx, "q2"));
        assert_eq!(rx.recv_timeout(PATIENCE), Ok("q2"));
        queues.wait(Q2);
        assert!(queues.test(Q2));
        assert!(!queues.test(Q1));
        gate.signal();
        assert_eq!(rx.recv_timeout(PATIENCE), Ok("q1"));
        queues.wait(Q1);
        assert!(queues.test(Q1));
    }

    #[test]
    fn wait_blocks_the_caller_until_earlier_jobs_finish() {
        let queues = Queues::new(false);
        let gate = Gate::new();
        let log = new_log();
        queues.submit(Q1, blocked_on(&gate));
        queues.submit(Q1, append(&log, "job"));
        let (tx, rx) = mpsc::channel();
        thread::scope(|s| {
            s.spawn(|| {
                queues.wait(Q1);
                lock(&log).push("waited");
                tx.send(()).unwrap();
            });
            assert!(rx.recv_timeout(GLANCE).is_err(), "wait returned early");
            gate.signal();
            rx.recv_timeout(PATIENCE).expect("wait never returned");
        });
        assert_eq!(*lock(&log), ["job", "waited"]);
    }

    #[test]
    fn waits_are_not_extended_by_later_jobs() {
        let queues = Queues::new(false);
        let first = Gate::new();
        let later = Gate::new();
        queues.submit(Q1, blocked_on(&first));
        // What `wait(Q1)` waits for, taken now; then a later job that stays blocked.
        let checkpoint = queues.checkpoint(Q1);
        queues.submit(Q1, blocked_on(&later));
        assert!(!checkpoint.is_reached());
        first.signal();
        let waiter = checkpoint.clone();
        assert!(
            returns_in_time(move || waiter.wait()),
            "the wait waited for a later job"
        );
        assert!(checkpoint.is_reached());
        assert!(!queues.test(Q1), "the later job is still blocked");
        later.signal();
        queues.wait(Q1);
        assert!(queues.test(Q1));
    }

    #[test]
    fn unused_queues_are_finished_and_unused() {
        let queues = Queues::new(false);
        queues.wait(Q0);
        queues.wait_all();
        assert!(queues.test(Q0));
        assert!(queues.test_all());
        assert!(queues.checkpoint(Q2).is_reached());
        assert!(queues.used().is_empty());
        assert!(queues.record(Q0).is_set());
    }

    #[test]
    fn used_lists_queues_default_first() {
        let queues = Queues::new(false);
        queues.submit(QueueId::Numbered(4), Box::new(|| {}));
        queues.submit_wait(Q2, &[]);
        queues.submit(QueueId::Default, Box::new(|| {}));
        queues.submit(Q1, Box::new(|| {}));
        queues.wait(Q0);
        assert_eq!(
            queues.used(),
            [QueueId::Default, Q1, Q2, QueueId::Numbered(4)]
        );
    }

    #[test]
    fn submit_wait_orders_a_queue_after_the_earlier_jobs_of_another() {
        let queues = Queues::new(false);
        let q_first = Gate::new();
        let q_later = Gate::new();
        let log = new_log();
        let (tx, rx) = mpsc::channel();
        queues.submit(Q1, blocked_on(&q_first));
        queues.submit(Q1, append(&log, "q1 earlier"));
        queues.submit_wait(Q2, &[Q1]);
        queues.submit(Q1, blocked_on(&q_later));
        queues.submit(Q2, append(&log, "q2"));
        queues.submit(Q2, send(&tx, ()));
        assert!(rx.recv_timeout(GLANCE).is_err(), "q2 did not wait for q1");
        assert!(!queues.test(Q2));
        q_first.signal();
        // Q1's later job is still blocked: Q2 must not wait for it.
        rx.recv_timeout(PATIENCE)
            .expect("q2 waited for q1's later job");
        assert!(!queues.test(Q1));
        assert_eq!(*lock(&log), ["q1 earlier", "q2"]);
        q_later.signal();
        queues.wait_all();
    }

    #[test]
    fn submit_wait_does_not_block_the_caller_and_skips_the_own_queue() {
        let queues = Queues::new(false);
        let gate = Gate::new();
        let (tx, rx) = mpsc::channel();
        queues.submit(Q1, blocked_on(&gate));
        // Returns at once although Q1 is blocked; waiting on Q2 itself is a no-op.
        queues.submit_wait(Q2, &[Q1, Q2]);
        queues.submit_wait(Q1, &[Q1]);
        queues.submit(Q1, send(&tx, "q1"));
        queues.submit(Q2, send(&tx, "q2"));
        assert!(rx.recv_timeout(GLANCE).is_err());
        gate.signal();
        let mut got = [rx.recv_timeout(PATIENCE), rx.recv_timeout(PATIENCE)].map(Result::ok);
        got.sort();
        assert_eq!(got, [Some("q1"), Some("q2")]);
    }

    #[test]
    fn crossed_waits_do_not_deadlock() {
        let queues = Queues::new(false);
        let gate = Gate::new();
        queues.submit(Q1, blocked_on(&gate));
        queues.submit(Q2, blocked_on(&gate));
        queues.submit_wait(Q1, &[Q2]);
        queues.submit_wait(Q2, &[Q1]);
        let done = queues.record(Q1);
        let done2 = queues.record(Q2);
        gate.signal();
        assert!(done.wait_timeout(PATIENCE) && done2.wait_timeout(PATIENCE));
    }

    #[test]
    fn test_is_false_while_a_job_is_blocked() {
        let queues = Queues::new(false);
        let gate = Gate::new();
        let (started_tx, started_rx) = mpsc::channel();
        queues.submit(Q0, send(&started_tx, ()));
        queues.submit(Q0, blocked_on(&gate));
        started_rx.recv_timeout(PATIENCE).unwrap();
        assert!(!queues.test(Q0));
        assert!(!queues.test_all());
        assert!(queues.test(Q1));
        let recorded = queues.record(Q0);
        assert!(!recorded.is_set());
        gate.signal();
        queues.wait(Q0);
        assert!(queues.test(Q0));
        assert!(queues.test_all());
        assert!(recorded.wait_timeout(PATIENCE));
    }

    #[test]
    fn wait_all_waits_for_every_queue() {
        let queues = Queues::new(false);
        let count = Arc::new(AtomicUsize::new(0));
        let gate = Gate::new();
        for q in [QueueId::Default, Q0, Q1, Q2] {
            queues.submit(q, blocked_on(&gate));
            for _ in 0..25 {
                let count = Arc::clone(&count);
                queues.submit(
                    q,
                    Box::new(move || {
                        count.fetch_add(1, Ordering::SeqCst);
                    }),
                );
            }
        }
        assert!(!queues.test_all());
        gate.signal();
        queues.wait_all();
        assert_eq!(count.load(Ordering::SeqCst), 100);
        assert!(queues.test_all());
    }

    #[test]
    fn synchronous_mode_runs_jobs_inline() {
        let mut queues = Queues::new(true);
        let caller = thread::current().id();
        let ran_on = new_log();
        {
            let ran_on = Arc::clone(&ran_on);
            queues.submit(
                Q1,
                Box::new(move || lock(&ran_on).push(thread::current().id())),
            );
        }
        assert_eq!(*lock(&ran_on), [caller], "ran before submit returned");
        queues.submit_wait(Q2, &[Q1]);
        assert!(queues.test_all());
        assert_eq!(queues.used(), [Q1, Q2]);

        // Switched off and on again with work in flight: order within a queue holds.
        queues.set_synchronous(false);
        let gate = Gate::new();
        let log = new_log();
        queues.submit(Q1, blocked_on(&gate));
        queues.submit(Q1, append(&log, "async"));
        queues.set_synchronous(true);
        let releaser = {
            let gate = gate.clone();
            thread::spawn(move || {
                thread::sleep(GLANCE);
                gate.signal();
            })
        };
        queues.submit(Q1, append(&log, "sync"));
        assert_eq!(*lock(&log), ["async", "sync"]);
        releaser.join().unwrap();
    }

    #[test]
    fn dropping_the_queues_completes_pending_jobs() {
        let count = Arc::new(AtomicUsize::new(0));
        {
            let queues = Queues::new(false);
            let gate = Gate::new();
            for q in [Q0, Q1] {
                queues.submit(q, blocked_on(&gate));
                for _ in 0..100 {
                    let count = Arc::clone(&count);
                    queues.submit(
                        q,
                        Box::new(move || {
                            count.fetch_add(1, Ordering::SeqCst);
                        }),
                    );
                }
            }
            queues.submit_wait(Q2, &[Q0, Q1]);
            assert_eq!(count.load(Ordering::SeqCst), 0);
            gate.signal();
        }
        assert_eq!(count.load(Ordering::SeqCst), 200);
        // Every job (and its captured clone) is gone: the workers are done with them.
        assert_eq!(Arc::strong_count(&count), 1);
    }

    #[test]
    fn a_panicking_job_is_reported_and_the_queue_goes_on() {
        let queues = Queues::new(false);
        let log = new_log();
        queues.submit(Q1, Box::new(|| panic!("boom")));
        queues.submit(Q1, append(&log, 1));
        queues.submit(
            QueueId::Default,
            Box::new(|| std::panic::panic_any(format!("bang {}", 2))),
        );
        queues.wait_all();
        queues.submit(Q1, append(&log, 2));
        queues.wait(Q1);
        assert_eq!(*lock(&log), [1, 2]);
        let mut panics = queues.take_panics();
        panics.sort();
        assert_eq!(
            panics,
            [
                "job on queue 1 panicked: boom",
                "job on queue default panicked: bang 2"
            ]
        );
        assert!(queues.take_panics().is_empty());

        // Synchronous mode catches them too.
        let sync = Queues::new(true);
        sync.submit(Q0, Box::new(|| panic!("inline")));
        assert_eq!(sync.take_panics(), ["job on queue 0 panicked: inline"]);
        assert!(sync.test(Q0));
    }

    #[test]
    fn stress_many_jobs_with_crossed_waits() {
        // The default pool, and pools smaller than the number of queues (where parked waits
        // are what keeps things moving).
        for workers in [default_workers(), 2, 1] {
            stress_with(Queues::with_workers(false, workers));
        }
    }

    fn stress_with(queues: Queues) {
        const QUEUES: i32 = 4;
        const JOBS: usize = 10_000;
        let logs: Vec<_> = (0..QUEUES).map(|_| new_log()).collect();
        let total = Arc::new(AtomicUsize::new(0));
        let start = Instant::now();
        for i in 0..JOBS {
            let q = (i % QUEUES as usize) as i32;
            if i % 97 == 0 {
                let other = QueueId::Numbered((q + 1 + (i as i32 / 97) % 3) % QUEUES);
                queues.submit_wait(QueueId::Numbered(q), &[other]);
            }
            let log = Arc::clone(&logs[q as usize]);
            let total = Arc::clone(&total);
            queues.submit(
                QueueId::Numbered(q),
                Box::new(move || {
                    lock(&log).push(i);
                    total.fetch_add(1, Ordering::Relaxed);
                }),
            );
        }
        let submitted_in = start.elapsed();
        let queues = Arc::new(queues);
        let waiter = Arc::clone(&queues);
        if !returns_in_time(move || waiter.wait_all()) {
            // Deadlocked: dropping the queues would hang too.
            std::mem::forget(queues);
            panic!("the queued waits deadlocked");
        }
        assert!(queues.test_all());
        assert_eq!(total.load(Ordering::SeqCst), JOBS);
        for (q, log) in logs.iter().enumerate() {
            let expected: Vec<usize> = (q..JOBS).step_by(QUEUES as usize).collect();
            assert_eq!(*lock(log), expected, "queue {q} out of order");
        }
        // Not a benchmark, only a guard against something pathological (a thread per job).
        assert!(submitted_in < Duration::from_secs(5), "{submitted_in:?}");
    }

    /// The threads of this process now (Linux), for a bound that a thread per queue breaks.
    fn process_threads() -> Option<usize> {
        let status = std::fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("Threads:"))?;
        line["Threads:".len()..].trim().parse().ok()
    }

    /// `n` distinct queues, each with a job, a queued wait for the previous queue and a second
    /// job that checks both first jobs ran: all of them work, with a bounded thread count.
    fn many_queues(n: usize) {
        let queues = Queues::new(false);
        let firsts: Arc<Vec<AtomicBool>> =
            Arc::new((0..n).map(|_| AtomicBool::new(false)).collect());
        let in_order = Arc::new(AtomicUsize::new(0));
        let threads = Arc::new(Mutex::new(HashSet::new()));
        for i in 0..n {
            let q = QueueId::Numbered(i as i32);
            let (first, seen) = (Arc::clone(&firsts), Arc::clone(&threads));
            queues.submit(
                q,
                Box::new(move || {
                    first[i].store(true, Ordering::SeqCst);
                    lock(&seen).insert(thread::current().id());
                }),
            );
            if i > 0 {
                queues.submit_wait(q, &[QueueId::Numbered(i as i32 - 1)]);
            }
            let (first, in_order) = (Arc::clone(&firsts), Arc::clone(&in_order));
            queues.submit(
                q,
                Box::new(move || {
                    if first[i].load(Ordering::SeqCst)
                        && (i == 0 || first[i - 1].load(Ordering::SeqCst))
                    {
                        in_order.fetch_add(1, Ordering::SeqCst);
                    }
                }),
            );
        }
        // Far below a thread per queue, with room for the other tests running meanwhile.
        if let Some(now) = process_threads() {
            assert!(now < 1000, "{now} threads for {n} queues");
        }
        queues.wait_all();
        assert_eq!(in_order.load(Ordering::SeqCst), n);
        assert_eq!(queues.used().len(), n);
        assert!(queues.workers_started() <= default_workers());
        let distinct = lock(&threads).len();
        assert!(
            (1..=default_workers()).contains(&distinct),
            "{n} queues ran on {distinct} threads"
        );
    }

    #[test]
    fn twenty_thousand_queues_share_a_bounded_pool() {
        many_queues(20_000);
    }

    #[test]
    fn a_hundred_thousand_queues_share_a_bounded_pool() {
        many_queues(100_000);
    }

    /// Holds the only worker of `queues` on a gated job of queue 0 while the test queues the
    /// rest, so that the order in which lanes become ready is the order of submission.
    fn hold_the_worker(queues: &Queues, gate: &Event) {
        let (tx, rx) = mpsc::channel();
        queues.submit(Q0, send(&tx, ()));
        queues.submit(Q0, blocked_on(gate));
        rx.recv_timeout(PATIENCE).expect("the worker never started");
    }

    #[test]
    fn one_worker_parks_waits_instead_of_blocking_in_them() {
        const N: i32 = 200;
        let queues = Queues::with_workers(false, 1);
        let gate = Gate::new();
        hold_the_worker(&queues, &gate);
        // Lanes 1..=N become ready in ascending order; lane i waits for lane i+1, so the one
        // worker meets every wait before the job it waits for: a worker blocking in a wait
        // would hang here.
        for i in 1..=N {
            queues.submit(QueueId::Numbered(i), Box::new(|| {}));
        }
        let log = new_log();
        for i in (1..=N).rev() {
            if i < N {
                queues.submit_wait(QueueId::Numbered(i), &[QueueId::Numbered(i + 1)]);
            }
            queues.submit(QueueId::Numbered(i), append(&log, i));
        }
        gate.signal();
        let done = queues.record(Q1);
        if !done.wait_timeout(PATIENCE) {
            // Deadlocked: dropping the queues would hang too.
            std::mem::forget(queues);
            panic!("the queued waits deadlocked");
        }
        assert_eq!(*lock(&log), (1..=N).rev().collect::<Vec<_>>());
        assert_eq!(queues.workers_started(), 1);
    }

    #[test]
    fn crossed_waits_do_not_deadlock_with_one_worker() {
        let queues = Queues::with_workers(false, 1);
        let gate = Gate::new();
        hold_the_worker(&queues, &gate);
        let log = new_log();
        queues.submit(Q1, append(&log, "q1 before"));
        queues.submit(Q2, append(&log, "q2 before"));
        queues.submit_wait(Q1, &[Q2]);
        queues.submit_wait(Q2, &[Q1]);
        queues.submit(Q1, append(&log, "q1 after"));
        queues.submit(Q2, append(&log, "q2 after"));
        gate.signal();
        assert!(returns_in_time({
            let queues = Arc::new(queues);
            move || queues.wait_all()
        }));
        let log = lock(&log).clone();
        let at = |what| log.iter().position(|&s| s == what).unwrap();
        assert!(at("q1 before") < at("q2 after") && at("q2 before") < at("q1 after"));
    }

    #[test]
    fn a_blocked_queue_leaves_the_other_workers_to_the_other_queues() {
        // Blocking k queues on gates needs more than k workers for the others to progress:
        // with 2, one is held by the gate and the other serves a thousand queues.
        let queues = Queues::with_workers(false, 2);
        let gate = Gate::new();
        queues.submit(Q0, blocked_on(&gate));
        let count = Arc::new(AtomicUsize::new(0));
        for q in 1..=1000 {
            let count = Arc::clone(&count);
            queues.submit(
                QueueId::Numbered(q),
                Box::new(move || {
                    count.fetch_add(1, Ordering::SeqCst);
                }),
            );
        }
        let waiter = queues.checkpoint(QueueId::Numbered(1000));
        assert!(returns_in_time(move || waiter.wait()));
        for q in 1..=1000 {
            queues.wait(QueueId::Numbered(q));
        }
        assert_eq!(count.load(Ordering::SeqCst), 1000);
        assert!(!queues.test(Q0));
        gate.signal();
        queues.wait(Q0);
        assert_eq!(queues.workers_started(), 2);
    }

    #[test]
    fn a_long_queue_does_not_starve_another_on_one_worker() {
        let queues = Queues::with_workers(false, 1);
        let gate = Gate::new();
        hold_the_worker(&queues, &gate);
        let log = new_log();
        for i in 0..10 * BATCH {
            queues.submit(Q1, append(&log, i));
        }
        queues.submit(Q2, append(&log, usize::MAX));
        gate.signal();
        queues.wait_all();
        let log = lock(&log).clone();
        let q2_at = log.iter().position(|&i| i == usize::MAX).unwrap();
        assert_eq!(q2_at, BATCH, "q2 waited for q1's batch only");
        log.iter()
            .filter(|&&i| i != usize::MAX)
            .zip(0..)
            .for_each(|(&i, expected)| assert_eq!(i, expected));
    }

    #[test]
    fn dropping_the_queues_completes_parked_waits() {
        let count = Arc::new(AtomicUsize::new(0));
        let queues = Queues::with_workers(false, 1);
        {
            let gate = Gate::new();
            hold_the_worker(&queues, &gate);
            for q in 1..=50 {
                queues.submit_wait(QueueId::Numbered(q), &[QueueId::Numbered(q - 1)]);
                let count = Arc::clone(&count);
                queues.submit(
                    QueueId::Numbered(q),
                    Box::new(move || {
                        count.fetch_add(1, Ordering::SeqCst);
                    }),
                );
            }
            gate.signal();
        }
        assert!(returns_in_time(move || drop(queues)), "the drop hung");
        assert_eq!(count.load(Ordering::SeqCst), 50);
        assert_eq!(Arc::strong_count(&count), 1);
    }
}
