//! Stopping a GPU's running work when the run is interrupted or out of time: waits poll
//! their stream while watching the run's interrupt word; kernels' `while` loops poll the stop
//! word beside their error record, which the waits set with a plain store; work that does not
//! stop is abandoned, and the device settles before its next use (docs/ABI.md).

use std::time::Instant;

use cudarc::driver::{result, sys};

use super::{driver_error, Nvidia};
use crate::abi::Ctx;
use crate::error::RunErrorKind;

/// How long a wait goes on after asking the kernels to stop: long enough for `while` loops,
/// which poll the stop word every 1024 trips, to see it. Then the wait is abandoned.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_millis(200);

impl Nvidia {
    /// Whether every stream of this device has finished its work.
    pub(super) fn idle(&self) -> bool {
        let memory = &self.data.memory;
        std::iter::once(&memory.sync)
            .chain(memory.queues.values())
            // SAFETY: streams of this device.
            .all(|&s| unsafe { sys::cuStreamQuery(s) } == sys::CUresult::CUDA_SUCCESS)
    }

    /// Waits for `stream`'s work as `cuStreamSynchronize` would, watching the run's interrupt
    /// word meanwhile (a blocking wait could not be interrupted). Once the word is set, the
    /// stop word asks the kernels to stop (their `while` loops poll it); work still running
    /// `STOP_GRACE` later is abandoned (`abandon`), and the wait fails with the stop.
    ///
    /// # Safety
    /// `ctx` is a live context; `stream` is this device's.
    pub(super) unsafe fn await_stream(
        &mut self,
        ctx: *mut Ctx,
        stream: sys::CUstream,
    ) -> Result<(), RunErrorKind> {
        self.await_work(ctx, || sys::cuStreamQuery(stream))
    }

    /// `await_stream` for the work before `event` on its stream (work queued after it may
    /// go on running).
    ///
    /// # Safety
    /// `ctx` is a live context; `event` is this device's, recorded.
    pub(super) unsafe fn await_event(
        &mut self,
        ctx: *mut Ctx,
        event: sys::CUevent,
    ) -> Result<(), RunErrorKind> {
        self.await_work(ctx, || sys::cuEventQuery(event))
    }

    /// The wait of `await_stream` and `await_event`, with `query` polling the work.
    unsafe fn await_work(
        &mut self,
        ctx: *mut Ctx,
        query: impl Fn() -> sys::CUresult,
    ) -> Result<(), RunErrorKind> {
        let mut polls = 0u32;
        loop {
            match query() {
                sys::CUresult::CUDA_SUCCESS => return Ok(()),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                e => return Err(driver_error("waiting for the GPU", result::DriverError(e))),
            }
            let word = (*(*ctx).interrupt).load(std::sync::atomic::Ordering::Relaxed);
            if word != crate::abi::INTERRUPT_NONE {
                if self.abandoned {
                    return Err(crate::host::stop_error(word));
                }
                let since = match self.stop_sent {
                    Some(since) => since,
                    None => {
                        self.set_stop_words(word);
                        *self.stop_sent.insert(Instant::now())
                    }
                };
                if since.elapsed() >= STOP_GRACE {
                    self.abandon();
                    return Err(crate::host::stop_error(word));
                }
            }
            polls = polls.saturating_add(1);
            pause(polls);
        }
    }

    /// Sets the stop word beside each error record to `word` (`acc_abi::STOP_WORD_OFFSET`):
    /// a store to page-locked host memory that running kernels read. No work is queued on
    /// the GPU for it: such work could wait behind the kernel it should stop (another
    /// engine's work on the same GPU can stand between them), and then nothing would stop.
    fn set_stop_words(&mut self, word: u32) {
        for record in &mut self.errors {
            record.set_word(acc_abi::STOP_WORD_OFFSET, word);
        }
    }

    /// Gives up on this device's running work after a stop. Its kernels run on, and stream
    /// order keeps later work behind them. For the rest of the run nothing is copied back to
    /// the host, and the synchronous stream waits for every queue, so that memory freed on it
    /// is not freed under a queued kernel. Before the device launches or waits again,
    /// `settle` waits for the abandoned kernels.
    fn abandon(&mut self) {
        self.abandoned = true;
        self.data.memory.downloads_dropped = true;
        let sync = self.data.memory.sync;
        for &s in self.data.memory.queues.values() {
            // SAFETY: streams of this device; as `join`.
            unsafe {
                let Ok(ev) = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
                else {
                    continue;
                };
                if result::event::record(ev, s).is_ok() {
                    let _ = result::stream::wait_event(
                        sync,
                        ev,
                        sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                    );
                }
                let _ = result::event::destroy(ev);
            }
        }
    }

    /// The end of a run (its queues waited for or abandoned). Without abandoned kernels, a
    /// stop sent in the run is taken back now; with them, by `settle`, once they are done.
    pub(crate) fn end_run(&mut self) {
        if self.abandoned {
            self.unsettled = true;
        } else if self.stop_sent.is_some() {
            self.set_stop_words(crate::abi::INTERRUPT_NONE);
        }
        self.stop_sent = None;
        self.abandoned = false;
        self.data.memory.downloads_dropped = false;
        self.unload_idle_modules();
    }

    /// Before a launch or a wait after a run that abandoned kernels: waits for them (an
    /// interrupt stops this wait too), then clears what they left: an error, output, the stop
    /// words.
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(super) unsafe fn settle(&mut self, ctx: *mut Ctx) -> Result<(), RunErrorKind> {
        if !self.unsettled {
            return Ok(());
        }
        let memory = &self.data.memory;
        let streams: Vec<sys::CUstream> = std::iter::once(memory.sync)
            .chain(memory.queues.values().copied())
            .collect();
        for s in streams {
            self.await_stream(ctx, s)?;
        }
        for record in &mut self.errors {
            record.write(acc_abi::KernelErrorRecord::default());
        }
        self.output.discard();
        self.set_stop_words(crate::abi::INTERRUPT_NONE);
        self.unsettled = false;
        self.unload_idle_modules();
        Ok(())
    }
}

/// How a wait for the GPU passes the time between two polls: spinning at first (a short
/// kernel's wait costs what `cuStreamSynchronize`'s spinning costs), then yielding, then
/// sleeping (a long kernel's wait leaves the core to others, for at most 50 µs late).
fn pause(polls: u32) {
    match polls {
        0..2000 => std::hint::spin_loop(),
        2000..4000 => std::thread::yield_now(),
        _ => std::thread::sleep(std::time::Duration::from_micros(50)),
    }
}
