//! The asynchronous queues of one emulated device (LANGUAGE.md 7.7), the host-thread
//! counterpart of CUDA streams.
//!
//! Each queue is a lane: a FIFO of jobs run in order by one worker thread (`acc-queue-{q}`,
//! started on the queue's first use), with two counters, `submitted` and `completed`. Queues
//! are independent of each other; the only links between them are the waits that
//! `submit_wait` queues. Everything that waits (`wait`, `wait_all`, a queued wait) waits for
//! a *checkpoint*: "completed >= the submitted count at the time of the call", so jobs
//! submitted later never extend a wait that already started.
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
// Lanes: one queue's jobs, counters and worker

struct Lane {
    id: QueueId,
    state: Mutex<LaneState>,
    /// The worker waits here for jobs (or for the lane to close).
    has_work: Condvar,
    /// Waiters wait here for `completed` to grow.
    progressed: Condvar,
}

#[derive(Default)]
struct LaneState {
    pending: VecDeque<Job>,
    submitted: u64,
    completed: u64,
    /// Set when the owner is dropped: the worker drains `pending`, then exits.
    closing: bool,
}

impl Lane {
    fn new(id: QueueId) -> Lane {
        Lane {
            id,
            state: Mutex::new(LaneState::default()),
            has_work: Condvar::new(),
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

    /// Hands `job` to the worker.
    fn push(&self, job: Job) {
        let mut state = lock(&self.state);
        state.submitted += 1;
        state.pending.push_back(job);
        drop(state);
        self.has_work.notify_one();
    }

    /// The worker's next job, or None once the lane is closed and drained.
    fn next_job(&self) -> Option<Job> {
        let mut state = lock(&self.state);
        loop {
            if let Some(job) = state.pending.pop_front() {
                return Some(job);
            }
            if state.closing {
                return None;
            }
            state = wait_on(&self.has_work, state);
        }
    }

    fn finish_one(&self) {
        lock(&self.state).completed += 1;
        self.progressed.notify_all();
    }

    fn close(&self) {
        lock(&self.state).closing = true;
        self.has_work.notify_all();
    }
}

type PanicLog = Arc<Mutex<Vec<String>>>;

/// Runs one job of `lane`, catching a panic, and counts it completed either way.
fn run_job(lane: &Lane, job: Job, panics: &PanicLog) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(job)) {
        let message = panic_message(payload.as_ref());
        lock(panics).push(format!("job on queue {} panicked: {message}", lane.id));
    }
    lane.finish_one();
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

/// Runs `job` on the caller's thread, in its place in the lane's order: after every job
/// submitted to the lane before it.
fn run_inline(lane: &Lane, job: Job, panics: &PanicLog) {
    let ticket = {
        let mut state = lock(&lane.state);
        state.submitted += 1;
        state.submitted
    };
    lane.wait_for(ticket - 1);
    run_job(lane, job, panics);
}

fn worker_loop(lane: &Lane, panics: &PanicLog) {
    while let Some(job) = lane.next_job() {
        run_job(lane, job, panics);
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

struct LaneEntry {
    lane: Arc<Lane>,
    /// None until the first asynchronous submission (or when the thread could not be
    /// started: that lane then runs its jobs inline).
    worker: Option<JoinHandle<()>>,
    spawn_failed: bool,
}

/// The asynchronous queues of one device. `Send + Sync`: any host thread may submit and wait.
pub struct Queues {
    synchronous: bool,
    lanes: Mutex<BTreeMap<QueueId, LaneEntry>>,
    panics: PanicLog,
}

impl Queues {
    /// `synchronous`: `--synchronous` / `ACC_SYNCHRONOUS=1`: every job runs on the caller's
    /// thread at submit time.
    pub fn new(synchronous: bool) -> Queues {
        Queues {
            synchronous,
            lanes: Mutex::new(BTreeMap::new()),
            panics: PanicLog::default(),
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

    /// The lane of `q`, created on first use; with `threaded`, its worker is started if it
    /// is not running yet. The second result says whether the lane has a worker.
    fn lane(&self, q: QueueId, threaded: bool) -> (Arc<Lane>, bool) {
        let mut lanes = lock(&self.lanes);
        let entry = lanes.entry(q).or_insert_with(|| LaneEntry {
            lane: Arc::new(Lane::new(q)),
            worker: None,
            spawn_failed: false,
        });
        if threaded && entry.worker.is_none() && !entry.spawn_failed {
            let lane = Arc::clone(&entry.lane);
            let panics = Arc::clone(&self.panics);
            match thread::Builder::new()
                .name(format!("acc-queue-{q}"))
                .spawn(move || worker_loop(&lane, &panics))
            {
                Ok(handle) => entry.worker = Some(handle),
                // Out of threads: the queue still works, synchronously.
                Err(_) => entry.spawn_failed = true,
            }
        }
        (Arc::clone(&entry.lane), entry.worker.is_some())
    }

    /// The lane of `q` if it has been used.
    fn existing_lane(&self, q: QueueId) -> Option<Arc<Lane>> {
        lock(&self.lanes)
            .get(&q)
            .map(|entry| Arc::clone(&entry.lane))
    }

    /// Queues `job` on `q` (starting q's worker on first use) and returns at once; in
    /// synchronous mode runs it before returning.
    pub fn submit(&self, q: QueueId, job: Job) {
        let (lane, threaded) = self.lane(q, !self.synchronous);
        if threaded && !self.synchronous {
            lane.push(job);
        } else {
            run_inline(&lane, job, &self.panics);
        }
    }

    /// Queues on `q` a wait for the jobs submitted so far to the queues `on` (`acc wait(on…)
    /// async(q)`, the `wait` clause of an async construct): q's later jobs start only after
    /// those have finished; the caller is not blocked (except in synchronous mode, where the
    /// wait happens here). Waiting on `q` itself is a no-op: its earlier jobs already come
    /// first. The waited-for counts are taken before q's wait is queued, so crossed waits
    /// (q on r, r on q) never deadlock.
    pub fn submit_wait(&self, q: QueueId, on: &[QueueId]) {
        let checkpoints: Vec<Checkpoint> = on
            .iter()
            .filter(|&&other| other != q)
            .map(|&other| self.checkpoint(other))
            .filter(|checkpoint| !checkpoint.is_reached())
            .collect();
        if self.synchronous {
            checkpoints.iter().for_each(Checkpoint::wait);
            self.lane(q, false);
        } else if checkpoints.is_empty() {
            // Nothing to wait for, but q counts as used.
            self.lane(q, true);
        } else {
            self.submit(
                q,
                Box::new(move || checkpoints.iter().for_each(Checkpoint::wait)),
            );
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
            .map(|entry| Checkpoint {
                lane: Some((Arc::clone(&entry.lane), entry.lane.submitted())),
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
        std::mem::take(&mut *lock(&self.panics))
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
        let lanes = std::mem::take(&mut *lock(&self.lanes));
        // Close every lane before joining any: a queued wait on one lane may need another
        // lane's jobs, and a closed worker still drains what it holds.
        for entry in lanes.values() {
            entry.lane.close();
        }
        for entry in lanes.into_values() {
            if let Some(worker) = entry.worker {
                // A worker never panics (jobs are caught); nothing to report if it did.
                let _ = worker.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
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
    fn jobs_of_one_queue_run_in_order_on_its_named_thread() {
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
        let mut names = lock(&names).clone();
        names.sort();
        assert_eq!(
            names,
            [Some("acc-queue-3".into()), Some("acc-queue-default".into())]
        );
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
        const QUEUES: i32 = 4;
        const JOBS: usize = 10_000;
        let queues = Queues::new(false);
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
        queues.wait_all();
        assert!(queues.test_all());
        assert_eq!(total.load(Ordering::SeqCst), JOBS);
        for (q, log) in logs.iter().enumerate() {
            let expected: Vec<usize> = (q..JOBS).step_by(QUEUES as usize).collect();
            assert_eq!(*lock(log), expected, "queue {q} out of order");
        }
        // Not a benchmark, only a guard against something pathological (a thread per job).
        assert!(submitted_in < Duration::from_secs(5), "{submitted_in:?}");
    }
}
