//! The threads the host devices run gangs on: a fork-join pool built for one launch after
//! another, as OpenMP runtimes are.
//!
//! A launch hands the pool a task per gang. The calling thread runs tasks too, and each of
//! the `participants` takes the same tasks every launch (participant `p` runs `p`,
//! `p + participants`, …): consecutive loops over the same rows run on the same threads, so
//! the rows one launch wrote are still in that core's cache for the next. Between launches
//! an idle thread spins on the launch counter for `SPIN`, so that the next launch of a loop
//! starts it in a few hundred nanoseconds, and only then sleeps.
//!
//! rayon, which ran the gangs before, lets the launching thread sleep, wakes sleeping threads
//! one by one and moves tasks between them: on 32 threads a launch over present data took
//! 48 µs, against 18 µs here, and a 2048² Jacobi sweep's gangs started up to 150 µs after the
//! launch (docs/GPU-RESULTS.md, session 18).

use std::any::Any;
use std::cell::{Cell, UnsafeCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long an idle thread waits for the next launch before it sleeps.
const SPIN: Duration = Duration::from_millis(1);

/// After this much of `SPIN`, an idle thread yields its core between looks (the thread that
/// will launch next may need it).
const YIELD_AFTER: Duration = Duration::from_micros(50);

thread_local! {
    /// Whether this thread is running a pool task (a task that launches runs it inline).
    static IN_TASK: Cell<bool> = const { Cell::new(false) };
}

/// A pool of `participants - 1` threads that, with the thread calling `run`, run a launch's
/// tasks.
pub struct GangPool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// One launch at a time (an emulated device's queues may launch concurrently).
    launching: Mutex<()>,
}

/// A launch's tasks: `f(t)` for every `t < tasks`.
#[derive(Clone, Copy)]
struct Job {
    f: *const (dyn Fn(usize) + Sync + 'static),
    tasks: usize,
}

struct Shared {
    participants: usize,
    /// Whether idle threads spin before they sleep: only when every participant has a core
    /// (with more threads than cores, spinning ones hold up those with work: a launch of
    /// empty tasks on 16 threads of 2 cores took 470 µs spinning, 90 µs asleep).
    spin: bool,
    /// Bumped by each launch (and by the pool's end).
    launches: AtomicU64,
    /// The current launch; written only while no worker reads it (before `launches` is
    /// bumped, after every worker has checked in for the previous launch).
    job: UnsafeCell<Job>,
    /// Workers done with the current launch.
    checked_in: AtomicUsize,
    /// Workers asleep (or about to be) on `wake`.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
    /// Whether the launching thread waits asleep on `all_in` for the last worker to check in
    /// (after spinning for `SPIN`: a long launch's caller does not keep its core busy).
    caller_asleep: AtomicBool,
    all_in: Condvar,
    stop: AtomicBool,
    /// The first panic of the current launch's tasks, raised again in the caller.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
}

// SAFETY: `job` is written by the launching thread only while no worker reads it (see the
// field); everything else is atomics and mutexes. The closure it points to is `Sync`.
unsafe impl Sync for Shared {}
unsafe impl Send for Shared {}

impl GangPool {
    /// A pool whose launches run on `participants` threads, the caller's included.
    pub fn new(participants: usize) -> GangPool {
        let participants = participants.max(1);
        let noop: &(dyn Fn(usize) + Sync) = &|_| {};
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let shared = Arc::new(Shared {
            participants,
            spin: participants <= cores,
            launches: AtomicU64::new(0),
            job: UnsafeCell::new(Job {
                f: noop as *const _,
                tasks: 0,
            }),
            checked_in: AtomicUsize::new(0),
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
            caller_asleep: AtomicBool::new(false),
            all_in: Condvar::new(),
            stop: AtomicBool::new(false),
            panic: Mutex::new(None),
        });
        let mut pool = GangPool {
            shared,
            workers: Vec::new(),
            launching: Mutex::new(()),
        };
        for p in 1..participants {
            let shared = pool.shared.clone();
            let started = std::thread::Builder::new()
                .name(format!("acc-gang-{p}"))
                .spawn(move || shared.work(p));
            match started {
                Ok(worker) => pool.workers.push(worker),
                // Out of threads: the pool has as many participants as could start (those
                // started end with this one).
                Err(_) => return GangPool::new(p),
            }
        }
        pool
    }

    /// The threads a launch runs on, the caller's included.
    pub fn participants(&self) -> usize {
        self.shared.participants
    }

    /// Runs `f(t)` for every `t < tasks`, each once, on the pool's threads and the caller's,
    /// and returns when all have returned. A panic in a task is raised again here. Called from
    /// inside a task, it runs the tasks one after another on that thread.
    pub fn run(&self, tasks: usize, f: &(dyn Fn(usize) + Sync)) {
        if tasks == 0 {
            return;
        }
        if self.shared.participants == 1 || IN_TASK.with(Cell::get) {
            (0..tasks).for_each(f);
            return;
        }
        let _one = self.launching.lock().unwrap_or_else(|e| e.into_inner());
        let s = &*self.shared;
        // SAFETY: every worker has checked in for the previous launch (the end of this
        // function waits for it), so none reads `job`; `f` outlives this call, which returns
        // only after every worker has checked in for this launch.
        unsafe {
            *s.job.get() = Job {
                f: std::mem::transmute::<
                    *const (dyn Fn(usize) + Sync + '_),
                    *const (dyn Fn(usize) + Sync + 'static),
                >(f),
                tasks,
            }
        };
        s.checked_in.store(0, Ordering::Relaxed);
        s.launches.fetch_add(1, Ordering::SeqCst);
        if s.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = s.sleep.lock().unwrap_or_else(|e| e.into_inner());
            s.wake.notify_all();
        }
        s.run_share(0);
        s.wait_for_workers();
        let panic = s.panic.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(payload) = panic {
            resume_unwind(payload);
        }
    }
}

impl Shared {
    /// Participant `p`'s tasks of the current launch.
    fn run_share(&self, p: usize) {
        // SAFETY: read after the launch was published (`launches`, acquired) and before
        // this thread checks in.
        let job = unsafe { *self.job.get() };
        let was = IN_TASK.with(|t| t.replace(true));
        for t in (p..job.tasks).step_by(self.participants) {
            // SAFETY: the launching thread keeps the closure alive until every participant
            // is done (`GangPool::run`).
            let f = unsafe { &*job.f };
            if let Err(payload) = catch_unwind(AssertUnwindSafe(|| f(t))) {
                let later = {
                    let mut first = self.panic.lock().unwrap_or_else(|e| e.into_inner());
                    match *first {
                        None => first.replace(payload),
                        Some(_) => Some(payload),
                    }
                };
                // A later panic's payload is dropped here, where its own `Drop` may panic
                // without taking the thread (and the launch's check-in) with it.
                let _ = catch_unwind(AssertUnwindSafe(move || drop(later)));
            }
        }
        IN_TASK.with(|t| t.set(was));
    }

    /// A worker thread: its share of each launch, until the pool ends.
    fn work(&self, p: usize) {
        let mut seen = 0;
        loop {
            seen = self.next_launch(seen);
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            self.run_share(p);
            let now_in = self.checked_in.fetch_add(1, Ordering::SeqCst) + 1;
            if now_in == self.participants - 1 && self.caller_asleep.load(Ordering::SeqCst) {
                let _g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
                self.all_in.notify_one();
            }
        }
    }

    /// The launching thread, done with its share: waits for every worker to check in,
    /// spinning for `SPIN`, then asleep.
    fn wait_for_workers(&self) {
        let workers = self.participants - 1;
        if self.spin && spin_until(|| self.checked_in.load(Ordering::Acquire) >= workers) {
            return;
        }
        let mut g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
        // Announced before the last look, so that the last worker sees it.
        self.caller_asleep.store(true, Ordering::SeqCst);
        while self.checked_in.load(Ordering::SeqCst) < workers {
            g = self.all_in.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        self.caller_asleep.store(false, Ordering::SeqCst);
    }

    /// Waits for a launch after `seen`: spinning for `SPIN`, then asleep.
    fn next_launch(&self, seen: u64) -> u64 {
        let now = || self.launches.load(Ordering::Acquire);
        if self.spin && spin_until(|| now() != seen) {
            return now();
        }
        let mut g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
        // Counted before the last look, so that a launch after it sees a sleeper to wake.
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        let now = loop {
            let now = self.launches.load(Ordering::SeqCst);
            if now != seen {
                break now;
            }
            g = self.wake.wait(g).unwrap_or_else(|e| e.into_inner());
        };
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
        now
    }
}

/// Spins until `done` answers true (true) or `SPIN` has passed (false), yielding the core
/// between looks after `YIELD_AFTER`.
fn spin_until(done: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    let mut looks = 0u32;
    loop {
        if done() {
            return true;
        }
        looks = looks.wrapping_add(1);
        if !looks.is_multiple_of(64) {
            std::hint::spin_loop();
            continue;
        }
        let waited = start.elapsed();
        if waited > SPIN {
            return false;
        }
        if waited > YIELD_AFTER {
            std::thread::yield_now();
        }
    }
}

impl Drop for GangPool {
    fn drop(&mut self) {
        let s = &*self.shared;
        s.stop.store(true, Ordering::Release);
        s.launches.fetch_add(1, Ordering::SeqCst);
        {
            let _g = s.sleep.lock().unwrap_or_else(|e| e.into_inner());
            s.wake.notify_all();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_task_runs_once_whatever_the_counts() {
        for participants in [1, 2, 3, 8] {
            let pool = GangPool::new(participants);
            for tasks in [0, 1, 2, 7, 8, 9, 100] {
                let runs: Vec<AtomicU32> = (0..tasks).map(|_| AtomicU32::new(0)).collect();
                pool.run(tasks, &|t| {
                    runs[t].fetch_add(1, Ordering::Relaxed);
                });
                assert!(runs.iter().all(|r| r.load(Ordering::Relaxed) == 1));
            }
        }
    }

    #[test]
    fn a_participant_takes_the_same_tasks_every_launch() {
        let pool = GangPool::new(4);
        let threads = || {
            let ids = Mutex::new(vec![None; 8]);
            pool.run(8, &|t| {
                ids.lock().unwrap()[t] = Some(std::thread::current().id());
            });
            ids.into_inner().unwrap()
        };
        let first = threads();
        for _ in 0..50 {
            assert_eq!(threads(), first);
        }
        // Tasks t and t + 4 share a thread; the caller runs 0 and 4.
        assert_eq!(first[0], Some(std::thread::current().id()));
        assert_eq!(first[1], first[5]);
        assert_ne!(first[1], first[2]);
    }

    #[test]
    fn threads_asleep_wake_for_the_next_launch() {
        let pool = GangPool::new(3);
        let count = AtomicU32::new(0);
        for _ in 0..3 {
            std::thread::sleep(SPIN * 3);
            pool.run(3, &|_| {
                count.fetch_add(1, Ordering::Relaxed);
            });
        }
        assert_eq!(count.load(Ordering::Relaxed), 9);
    }

    #[test]
    fn a_caller_asleep_wakes_when_a_long_task_ends() {
        let pool = GangPool::new(3);
        let count = AtomicU32::new(0);
        for _ in 0..3 {
            pool.run(3, &|t| {
                if t == 2 {
                    std::thread::sleep(SPIN * 5);
                }
                count.fetch_add(1, Ordering::Relaxed);
            });
        }
        assert_eq!(count.load(Ordering::Relaxed), 9);
    }

    #[test]
    fn a_panicking_task_is_raised_in_the_caller_and_the_pool_goes_on() {
        let pool = GangPool::new(3);
        let r = catch_unwind(AssertUnwindSafe(|| {
            pool.run(6, &|t| {
                if t == 4 {
                    panic!("task 4");
                }
            })
        }));
        let payload = r.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"task 4"));
        let count = AtomicU32::new(0);
        pool.run(6, &|_| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn a_task_that_launches_runs_its_launch_inline() {
        let pool = GangPool::new(2);
        let count = AtomicU32::new(0);
        pool.run(2, &|_| {
            pool.run(3, &|_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
        });
        assert_eq!(count.load(Ordering::Relaxed), 6);
    }

    #[test]
    fn launches_from_several_threads_take_turns() {
        let pool = Arc::new(GangPool::new(3));
        let count = Arc::new(AtomicU32::new(0));
        let callers: Vec<_> = (0..4)
            .map(|_| {
                let (pool, count) = (pool.clone(), count.clone());
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        pool.run(5, &|_| {
                            count.fetch_add(1, Ordering::Relaxed);
                        });
                    }
                })
            })
            .collect();
        for c in callers {
            c.join().unwrap();
        }
        assert_eq!(count.load(Ordering::Relaxed), 4 * 100 * 5);
    }
}
