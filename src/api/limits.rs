//! Stopping runs: [`InterruptHandle`] from another thread, and [`Limits`] on depth and time.
//!
//! All three use one mechanism (`acc_runtime::context::RunStop`): compiled code checks the
//! run's interrupt word at the back edges of its loops (every iteration of a loop with loops
//! in it, every 16,384th of an innermost one), and every user function compares its call
//! depth with the depth limit on entry, beside its stack check; a stop sets the word and the
//! depth limit to 0, so that it reaches code without loops at its next call. A stopped run
//! ends with an error that says where it stopped; the engine, its globals and its functions
//! stay usable.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use acc_runtime::abi::{INTERRUPT_REQUESTED, INTERRUPT_TIME_LIMIT};
use acc_runtime::context::RunStop;

use crate::Engine;

/// Stops an engine's run from any thread: `Send + Sync + Clone`, and usable after the engine
/// is gone (it then does nothing).
///
/// The run in progress stops at its next loop iteration or function call on a host device
/// (host code and compute regions on `host`, `multicore` and `emulated` alike; a recursion
/// without loops at its next call) with [`Error::Interrupted`](crate::Error::Interrupted). An
/// interrupt while no run is going on stops the next run at its first loop or call.
///
/// ```
/// use std::time::Duration;
/// let mut engine = acc::Engine::new()?;
/// let stop = engine.interrupt_handle();
/// let watchdog = std::thread::spawn(move || {
///     std::thread::sleep(Duration::from_millis(50));
///     stop.interrupt();
/// });
/// let err = engine.run("spin.acc", "let n = 0\nwhile true { n += 1 }").unwrap_err();
/// assert!(matches!(err, acc::Error::Interrupted { .. }));
/// assert!(err.to_string().contains("spin.acc:2:1"));
/// watchdog.join().unwrap();
/// engine.run("after.acc", "print(n > 0)")?; // the engine goes on
/// # Ok::<(), acc::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct InterruptHandle {
    stop: RunStop,
}

impl InterruptHandle {
    /// Stops the run in progress (or the next one).
    pub fn interrupt(&self) {
        self.stop.stop(INTERRUPT_REQUESTED);
    }
}

/// Bounds on every run and call of an engine ([`Engine::set_limits`]). `None` is no bound.
///
/// ```
/// use std::time::Duration;
/// use acc::{Engine, Error, Limits};
/// let mut engine = Engine::new()?;
/// engine.set_limits(Limits {
///     max_call_depth: Some(100),
///     max_run_time: Some(Duration::from_millis(100)),
///     ..Limits::default()
/// });
/// let err = engine
///     .run("deep.acc", "fn down(n: i64) -> i64 { return down(n + 1) }\nprint(down(0))")
///     .unwrap_err();
/// assert!(matches!(err, Error::Limit { .. }), "{err}");
/// let err = engine.run("slow.acc", "while true { }").unwrap_err();
/// assert!(matches!(err, Error::Limit { .. }), "{err}");
/// # Ok::<(), acc::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// The deepest nesting of user-function calls: a call from top-level code or from the
    /// host is depth 1. Without it, recursion is bounded by the stack (also an error, not a
    /// crash). A small function the compiler inlines is checked at its first call that is
    /// not inlined, so a recursion stops within 3 calls of the limit.
    pub max_call_depth: Option<u64>,
    /// The longest a run (or a call through [`Func`](crate::Func)) may take, its device work
    /// included; past it, the run stops at its next loop iteration with
    /// [`Error::Limit`](crate::Error::Limit).
    pub max_run_time: Option<Duration>,
}

/// Sets the interrupt word when a run's time is up: one thread per engine with a time limit,
/// waiting for the deadline of the run in progress.
pub(crate) struct Watchdog {
    shared: Arc<(Mutex<Deadline>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Default)]
struct Deadline {
    at: Option<Instant>,
    quit: bool,
}

impl Watchdog {
    fn new(stop: RunStop) -> Option<Watchdog> {
        let shared = Arc::new((Mutex::new(Deadline::default()), Condvar::new()));
        let theirs = shared.clone();
        let thread = std::thread::Builder::new()
            .name("acc-watchdog".into())
            .spawn(move || {
                let (lock, wake) = &*theirs;
                let mut d = lock.lock().unwrap_or_else(|e| e.into_inner());
                while !d.quit {
                    d = match d.at {
                        None => wake.wait(d).unwrap_or_else(|e| e.into_inner()),
                        Some(at) if Instant::now() >= at => {
                            // Under the lock: `disarm` cannot clear the stop before this store.
                            stop.stop(INTERRUPT_TIME_LIMIT);
                            d.at = None;
                            d
                        }
                        Some(at) => {
                            let left = at.saturating_duration_since(Instant::now());
                            wake.wait_timeout(d, left)
                                .unwrap_or_else(|e| e.into_inner())
                                .0
                        }
                    };
                }
            })
            .ok()?;
        Some(Watchdog {
            shared,
            thread: Some(thread),
        })
    }

    fn set(&self, at: Option<Instant>) {
        let (lock, wake) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).at = at;
        wake.notify_one();
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (lock, wake) = &*self.shared;
        lock.lock().unwrap_or_else(|e| e.into_inner()).quit = true;
        wake.notify_one();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Engine {
    /// A handle that stops this engine's runs from any thread.
    pub fn interrupt_handle(&self) -> InterruptHandle {
        InterruptHandle {
            stop: self.context.run_stop(),
        }
    }

    /// Bounds every later run and call (see [`Limits`]).
    pub fn set_limits(&mut self, limits: Limits) {
        self.context.set_max_depth(limits.max_call_depth);
        self.limits = limits;
        if limits.max_run_time.is_some() && self.watchdog.is_none() {
            self.watchdog = Watchdog::new(self.context.run_stop());
        }
    }

    /// The bounds in force.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Starts the time limit's clock for a run or call that starts now.
    pub(crate) fn arm_limits(&mut self) {
        if let (Some(limit), Some(w)) = (self.limits.max_run_time, &self.watchdog) {
            w.set(Instant::now().checked_add(limit));
        }
    }

    /// Stops the clock and clears the interrupt word, at the end of a run or call (its device
    /// work finished).
    pub(crate) fn disarm_limits(&mut self) {
        if let Some(w) = &self.watchdog {
            w.set(None);
        }
        self.context.clear_interrupt();
    }
}
