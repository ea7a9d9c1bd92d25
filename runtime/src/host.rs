//! The host side of a run: what `Ctx::host` points at. Compiled code never reads it; the
//! runtime's and standard library's functions reach it through `host_state(ctx)`.

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use acc_abi::DeviceType;

use crate::abi::{Ctx, INTERRUPT_TIME_LIMIT, STATUS_ERROR, STATUS_OK};
use crate::error::{RunError, RunErrorKind};
use crate::picture::Pictures;
use crate::rng::Rng;

/// The value `acc_get_default_async` reports before any `acc_set_default_async`: OpenACC's
/// `acc_async_noval`, distinct from every numbered queue.
pub const INITIAL_DEFAULT_ASYNC: i32 = -1;

/// Output, the recorded error, parameters and random state of a run (or of a REPL session:
/// it outlives single runs).
pub struct HostState {
    out: Box<dyn Write + Send>,
    /// Something was written since the last flush (a run that printed nothing, such as most
    /// calls of a script function from the host, has nothing to flush).
    unflushed: bool,
    /// The first failure writing `out` (later writes are dropped).
    io_error: Option<io::Error>,
    error: Option<RunError>,
    params: HashMap<String, String>,
    rng: Rng,
    default_async: i32,
    /// The device type code of the code running with this state: `acc_device_host` for host
    /// code, the device's for a gang of a region on a threaded device (`acc_on_device`).
    on_device: i32,
    /// The embedding program's functions, by number (`acc_rt_host_call`).
    host_fns: Vec<(String, Box<dyn HostFn>)>,
    /// Where `imshow` and `plot` send their pictures.
    pictures: Pictures,
    /// While a split launch is left running (`device/deferred.rs`), what catches up on it:
    /// entry points call it first. (A function the devices set, so that this module, which
    /// they use, does not use them.)
    pub(crate) catch_up: Option<CatchUp>,
}

/// A function of the embedding program, called by host code with its arguments in 8-byte
/// slots (scalars in the low bytes, as compiled code stores them) and its result written to
/// one. An `Err` becomes a run-time error at the call.
pub trait HostFn: Send {
    fn call(&self, args: &[u64], ret: &mut u64) -> Result<(), String>;
}

impl HostState {
    /// A state writing to `out`. The engine flushes it at the end of a run and before it
    /// prints an error (`flush`).
    pub fn new(out: Box<dyn Write + Send>) -> HostState {
        HostState {
            out,
            unflushed: false,
            io_error: None,
            error: None,
            params: HashMap::new(),
            rng: Rng::default(),
            default_async: INITIAL_DEFAULT_ASYNC,
            on_device: DeviceType::Host.code(),
            host_fns: Vec::new(),
            pictures: Pictures::default(),
            catch_up: None,
        }
    }

    /// Where pictures go: the embedding program's display, and the numbering of unnamed files.
    pub fn pictures(&mut self) -> &mut Pictures {
        &mut self.pictures
    }

    /// Adds a function of the embedding program; gives its number.
    pub fn add_host_fn(&mut self, name: &str, f: Box<dyn HostFn>) -> u32 {
        self.host_fns.push((name.to_string(), f));
        (self.host_fns.len() - 1) as u32
    }

    /// Calls function `index` of the embedding program.
    pub fn call_host_fn(
        &self,
        index: u32,
        args: &[u64],
        ret: &mut u64,
    ) -> Result<(), RunErrorKind> {
        let Some((name, f)) = self.host_fns.get(index as usize) else {
            return Err(RunErrorKind::Internal {
                message: format!("no host function {index}"),
            });
        };
        f.call(args, ret)
            .map_err(|message| RunErrorKind::HostFunction {
                name: name.clone(),
                message,
            })
    }

    pub fn on_device(&self) -> i32 {
        self.on_device
    }

    pub fn set_on_device(&mut self, t: i32) {
        self.on_device = t;
    }

    /// A state writing to standard output through a buffer.
    pub fn stdout() -> HostState {
        HostState::new(Box::new(io::BufWriter::with_capacity(
            1 << 16,
            io::stdout(),
        )))
    }

    /// Replaces the output sink (flushing the old one) and returns the old one.
    pub fn set_output(&mut self, out: Box<dyn Write + Send>) -> Box<dyn Write + Send> {
        let _ = self.flush();
        std::mem::replace(&mut self.out, out)
    }

    /// Writes program output. A write failure (a closed pipe) is remembered and later output
    /// is dropped, so that the program runs to its end.
    pub fn write(&mut self, bytes: &[u8]) {
        self.unflushed = true;
        if self.io_error.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.io_error = Some(e);
            }
        }
    }

    pub fn write_str(&mut self, s: &str) {
        self.write(s.as_bytes());
    }

    pub fn flush(&mut self) -> io::Result<()> {
        match self.io_error.take() {
            Some(e) => Err(e),
            None if self.unflushed => {
                self.unflushed = false;
                self.out.flush()
            }
            None => Ok(()),
        }
    }

    /// `--set name=value`: what `param("name", default)` reads (the value is converted to the
    /// default's type when the script asks for it).
    pub fn set_param(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.params.insert(name.into(), value.into());
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.params.get(name).map(String::as_str)
    }

    pub fn params(&self) -> impl Iterator<Item = (&str, &str)> {
        self.params.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn rng(&mut self) -> &mut Rng {
        &mut self.rng
    }

    /// `seed(s)`.
    pub fn seed(&mut self, s: u64) {
        self.rng = Rng::new(s);
    }

    pub fn error(&self) -> Option<&RunError> {
        self.error.as_ref()
    }

    /// Whether an error is recorded (`take_error` would return one).
    pub fn has_error(&self) -> bool {
        self.error.is_some()
    }

    pub fn take_error(&mut self) -> Option<RunError> {
        self.error.take()
    }

    /// Rewrites the recorded error's kind (the error of one device's part of a split launch
    /// is told with the device's name).
    pub fn map_error(&mut self, f: impl FnOnce(RunErrorKind) -> RunErrorKind) {
        if let Some(e) = self.error.take() {
            self.error = Some(RunError {
                kind: f(e.kind),
                site: e.site,
            });
        }
    }

    pub fn default_async(&self) -> i32 {
        self.default_async
    }

    pub fn set_default_async(&mut self, q: i32) {
        self.default_async = q;
    }
}

/// Catches up on device work left running (`HostState::catch_up`).
pub(crate) type CatchUp = unsafe fn(*mut Ctx);

/// The host state of a context.
///
/// # Safety
/// `ctx` points at a live `Ctx` whose `host` is a live `HostState` (a `Context`'s), not
/// otherwise borrowed while the reference is used.
pub unsafe fn host_state<'a>(ctx: *mut Ctx) -> &'a mut HostState {
    &mut *((*ctx).host as *mut HostState)
}

/// Gives the recorded error, if it names no site, `site`.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn locate_error(ctx: *mut Ctx, site: u32) {
    if let Some(e) = host_state(ctx).error.as_mut() {
        e.site.get_or_insert(site);
    }
}

/// Records a run-time error and sets `STATUS_ERROR`, unless the run already stopped (the first
/// error, or `exit`, wins).
///
/// # Safety
/// As `host_state`.
pub unsafe fn fail(ctx: *mut Ctx, kind: RunErrorKind, site: Option<u32>) {
    if (*ctx).status != STATUS_OK {
        return;
    }
    // `u32::MAX` is the ABI's "no site" (what a routine that takes no site passes on): left
    // unset, the check after the call fills in the call's site (`locate_error`). Recorded as
    // a site, it named none and the error had no location (found by fuzzing: `acc_wait(-9)`).
    let site = site.filter(|&s| s != u32::MAX);
    host_state(ctx).error = Some(RunError { kind, site });
    (*ctx).status = STATUS_ERROR;
}

/// The error of a run stopped by interrupt word `word` (not `INTERRUPT_NONE`).
pub fn stop_error(word: u32) -> RunErrorKind {
    if word == INTERRUPT_TIME_LIMIT {
        RunErrorKind::TimeLimit
    } else {
        RunErrorKind::Interrupted
    }
}

/// Runs the body of an entry point that compiled code calls, turning a panic (a bug in the
/// runtime) into an internal error at `site`: a panic may not cross `extern "C"`, which aborts
/// the process, nor unwind into compiled code, which has no unwind tables. The REPL or the
/// embedding host then reports it and goes on.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn guard(ctx: *mut Ctx, site: Option<u32>, body: impl FnOnce()) {
    guarded(ctx, site, body)
}

/// `guard` for the launch of a compute construct, which may queue behind a split launch left
/// running instead of catching up on it first (`device/deferred.rs`).
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn guard_launch(ctx: *mut Ctx, site: Option<u32>, body: impl FnOnce()) {
    guarded_after(ctx, site, false, body)
}

/// The harmless value an entry point returns after its body panicked (docs/ABI.md: 0, null),
/// once the internal error is recorded.
pub trait Fallback {
    fn fallback() -> Self;
}

macro_rules! fallbacks {
    ($($t:ty = $v:expr;)*) => {$(
        impl Fallback for $t {
            fn fallback() -> Self {
                $v
            }
        }
    )*};
}

fallbacks! {
    () = ();
    u8 = 0;
    i32 = 0;
    i64 = 0;
    f32 = 0.0;
    f64 = 0.0;
    *mut crate::abi::ArrayHeader = std::ptr::null_mut();
}

/// `guard` for an entry point with a result: the body's value, or `T::fallback()` after
/// recording a panic as an internal error at `site` (`None` for a library function that does
/// not know its call: compiled code checks the status after every call of one and gives the
/// error the call's site, `acc_rt_error_site`). Every `extern "C"` function of the runtime
/// and the standard library that takes a context runs its body through this.
///
/// A split launch left running is caught up on first (`device/deferred.rs`): its failure,
/// if it failed, is the run's error, and the body, which comes after it, does not run.
///
/// # Safety
/// `ctx` is a live context.
pub unsafe fn guarded<T: Fallback, F: FnOnce() -> T>(
    ctx: *mut Ctx,
    site: Option<u32>,
    body: F,
) -> T {
    guarded_after(ctx, site, true, body)
}

/// `guarded`, catching up on a split launch left running first where `catch_up` says so.
///
/// # Safety
/// `ctx` is a live context.
unsafe fn guarded_after<T: Fallback, F: FnOnce() -> T>(
    ctx: *mut Ctx,
    site: Option<u32>,
    catch_up: bool,
    body: F,
) -> T {
    let run = || {
        planted::fire::<F>();
        // (Tests call some entry points without a context.)
        let pending = match catch_up && !ctx.is_null() && !(*ctx).host.is_null() {
            true => host_state(ctx).catch_up,
            false => None,
        };
        if let Some(catch_up) = pending {
            catch_up(ctx);
            if (*ctx).status != STATUS_OK {
                return T::fallback();
            }
        }
        body()
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(v) => v,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "(no message)".into());
            let message = format!("the runtime panicked: {what}");
            fail(ctx, RunErrorKind::Internal { message }, site);
            T::fallback()
        }
    }
}

/// A panic planted in an entry point, for tests that no panic crosses `extern "C"` (there is
/// no other way to make a correct library function panic). Costs one relaxed load per call.
#[doc(hidden)]
pub mod planted {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;

    static ARMED: AtomicBool = AtomicBool::new(false);
    static TARGET: Mutex<Option<String>> = Mutex::new(None);

    /// The next call of the entry point named `function` (`acc_sum_f64`) panics, once. A
    /// process-wide setting: a test using it runs alone in its test binary.
    pub fn plant_panic(function: &str) {
        *TARGET.lock().unwrap_or_else(|e| e.into_inner()) = Some(format!("::{function}::"));
        ARMED.store(true, Ordering::SeqCst);
    }

    /// Panics if a panic is planted in the entry point whose body is the closure `F` (its
    /// type's name is the function's path followed by `::{{closure}}`).
    #[inline]
    pub(super) fn fire<F>() {
        if !ARMED.load(Ordering::Relaxed) {
            return;
        }
        let name = std::any::type_name::<F>();
        let mut target = TARGET.lock().unwrap_or_else(|e| e.into_inner());
        if target.as_deref().is_some_and(|t| name.contains(t)) {
            *target = None;
            ARMED.store(false, Ordering::SeqCst);
            drop(target);
            panic!("planted in {name}");
        }
    }
}

/// An output sink the engine (or a test) can read back: clones share one buffer.
#[derive(Clone, Default)]
pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    pub fn new() -> SharedBuffer {
        SharedBuffer::default()
    }

    /// Everything written so far, as text (invalid UTF-8 replaced).
    pub fn contents(&self) -> String {
        String::from_utf8_lossy(&self.lock()).into_owned()
    }

    /// Takes everything written so far, leaving the buffer empty.
    pub fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.lock())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        // A panic while holding the lock leaves plain bytes behind: still usable.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.lock().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_an_entry_point_is_an_internal_error_at_its_site() {
        let mut context = crate::context::Context::new(HostState::new(Box::new(io::sink())));
        let ctx = context.ctx_ptr();
        unsafe {
            guard(ctx, Some(7), || panic!("a broken invariant"));
            assert_eq!((*ctx).status, STATUS_ERROR);
        }
        let error = context.host().take_error().expect("an error");
        assert_eq!(error.site, Some(7));
        assert!(
            matches!(&error.kind, RunErrorKind::Internal { message } if message.contains("a broken invariant")),
            "{error:?}"
        );
        // The context stays usable: a guarded body that returns records nothing.
        unsafe {
            (*ctx).status = STATUS_OK;
            guard(ctx, Some(8), || {});
            assert_eq!((*ctx).status, STATUS_OK);
        }
    }

    #[test]
    fn a_guarded_entry_point_returns_its_value_or_a_harmless_one_after_a_panic() {
        let mut context = crate::context::Context::new(HostState::new(Box::new(io::sink())));
        let ctx = context.ctx_ptr();
        unsafe {
            assert_eq!(guarded(ctx, None, || 41i64 + 1), 42);
            assert_eq!((*ctx).status, STATUS_OK);
            let a: *mut crate::abi::ArrayHeader = guarded(ctx, None, || panic!("no array"));
            assert!(a.is_null());
        }
        let error = context.host().take_error().expect("an error");
        assert_eq!(error.site, None);
        assert!(
            matches!(&error.kind, RunErrorKind::Internal { message } if message == "the runtime panicked: no array"),
            "{error:?}"
        );
        unsafe {
            (*ctx).status = STATUS_OK;
            assert_eq!(guarded(ctx, Some(3), || -> f64 { panic!("{}", 1.5) }), 0.0);
            assert_eq!((*ctx).status, STATUS_ERROR);
        }
        let error = context.host().take_error().expect("an error");
        assert_eq!(error.site, Some(3));
        assert!(format!("{error:?}").contains("1.5"), "{error:?}");
    }

    /// Stands for an entry point: its body is a closure named after the function.
    unsafe fn acc_test_planted_entry(ctx: *mut Ctx) -> i32 {
        guarded(ctx, None, || 7)
    }

    #[test]
    fn a_planted_panic_fires_once_in_the_named_entry_point() {
        let mut context = crate::context::Context::new(HostState::new(Box::new(io::sink())));
        let ctx = context.ctx_ptr();
        planted::plant_panic("acc_test_planted_entry");
        unsafe {
            // Another entry point is not hit.
            assert_eq!(guarded(ctx, None, || 5), 5);
            assert_eq!((*ctx).status, STATUS_OK);
            assert_eq!(acc_test_planted_entry(ctx), 0);
            assert_eq!((*ctx).status, STATUS_ERROR);
            (*ctx).status = STATUS_OK;
            assert_eq!(acc_test_planted_entry(ctx), 7);
            assert_eq!((*ctx).status, STATUS_OK);
        }
        let error = context.host().take_error().expect("an error");
        assert!(
            matches!(&error.kind, RunErrorKind::Internal { message } if message.contains("planted in") && message.contains("acc_test_planted_entry")),
            "{error:?}"
        );
    }

    struct Broken;
    impl Write for Broken {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::BrokenPipe, "closed"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn output_goes_to_the_sink() {
        let buf = SharedBuffer::new();
        let mut h = HostState::new(Box::new(buf.clone()));
        h.write_str("hello ");
        h.write(b"world\n");
        h.flush().unwrap();
        assert_eq!(buf.contents(), "hello world\n");
        assert_eq!(buf.take(), b"hello world\n");
        assert_eq!(buf.contents(), "");
    }

    #[test]
    fn write_failures_are_remembered_once() {
        let mut h = HostState::new(Box::new(Broken));
        h.write_str("x");
        h.write_str("y");
        assert_eq!(h.flush().unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        let buf = SharedBuffer::new();
        h.set_output(Box::new(buf.clone()));
        h.write_str("z");
        assert_eq!(buf.contents(), "z");
    }

    #[test]
    fn params_and_seed() {
        let mut h = HostState::new(Box::new(io::sink()));
        h.set_param("n", "100");
        h.set_param("n", "200");
        assert_eq!(h.param("n"), Some("200"));
        assert_eq!(h.param("m"), None);
        assert_eq!(h.params().count(), 1);
        h.seed(7);
        let a = h.rng().next_u64();
        h.seed(7);
        assert_eq!(h.rng().next_u64(), a);
        assert_eq!(h.default_async(), INITIAL_DEFAULT_ASYNC);
        h.set_default_async(3);
        assert_eq!(h.default_async(), 3);
    }
}
