//! The worker process: reads inputs from standard input, runs each in-process, and answers on
//! standard output. A panic is caught and answered as a finding; an abort, a stack overflow or
//! a hang takes the worker down or stalls it, which the supervisor sees and records.
//!
//! Protocol (all lines end with `\n`):
//! - supervisor → worker: `<mode letter> <byte count>` then the input's bytes;
//! - worker → supervisor: `@@run` when a pipeline input starts running (it compiled), then
//!   `@@ok <compiled 0|1> <device runs> <differed 0|1>` or `@@finding <byte count>` followed
//!   by the signature line and the detail.
//!
//! Other lines on standard output are skipped by the supervisor, so stray output cannot
//! break the protocol; program output goes to a buffer, never to standard output.

use crate::exec::{self, Finding, Reached};
use crate::mutate::Mode;
use std::io::{BufRead, Read, Write};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Mutex;

/// Panics seen by the hook since the last execution: (location, message).
static PANICS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// A test-only fault planted in the worker (`--plant`): an input containing `PLANTED` makes
/// it fail this way, so the tests can show that each kind of failure is caught and saved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Plant {
    Panic,
    Abort,
    Overflow,
    Hang,
}

/// Compiled acc code runs on the worker's stack, as on the `acc` binary's main thread: the
/// same size, so that recursion depth behaves as for a user.
pub const STACK_SIZE: usize = 1 << 30;

/// Address space of a worker: room for the stacks the engine reserves (1 GiB here, 256 MiB per
/// compile thread, the device threads) and a few GiB of arrays. Beyond it an allocation fails
/// and acc must report "out of memory" (a mutated `zeros(1 << 40)`), instead of the machine
/// overcommitting and the OOM killer taking the fuzzer or a neighbour.
const ADDRESS_SPACE: u64 = 6 << 30;

fn limit_memory() {
    let limit = libc::rlimit {
        rlim_cur: ADDRESS_SPACE,
        rlim_max: ADDRESS_SPACE,
    };
    // SAFETY: setrlimit reads the struct; failure only leaves the limit unset.
    unsafe {
        libc::setrlimit(libc::RLIMIT_AS, &limit);
    }
}

/// Serve inputs until standard input closes. Never returns.
pub fn main(plant: Option<Plant>) -> ! {
    limit_memory();
    panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map_or_else(|| "?".to_string(), |l| format!("{}:{}", l.file(), l.line()));
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        // Written at once: if the panic turns into an abort (inside an `extern "C"` function),
        // this line on standard error is all the supervisor gets.
        eprintln!("@@panic {location}: {}", message.replace('\n', " "));
        PANICS
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((location, message));
    }));
    let status = std::thread::Builder::new()
        .name("acc-fuzz-worker".into())
        .stack_size(STACK_SIZE)
        .spawn(move || serve(plant))
        .map_or(3, |t| t.join().unwrap_or(3));
    std::process::exit(status)
}

fn serve(plant: Option<Plant>) -> i32 {
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut header = String::new();
    loop {
        header.clear();
        match input.read_line(&mut header) {
            Ok(0) | Err(_) => return 0,
            Ok(_) => {}
        }
        let mut parts = header.split_whitespace();
        let mode = parts
            .next()
            .and_then(|m| m.chars().next())
            .and_then(Mode::from_letter);
        let len = parts.next().and_then(|n| n.parse::<usize>().ok());
        let (Some(mode), Some(len)) = (mode, len) else {
            eprintln!("acc-fuzz worker: bad header {header:?}");
            return 2;
        };
        let mut bytes = vec![0; len];
        if input.read_exact(&mut bytes).is_err() {
            return 0;
        }
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let result = execute(mode, &text, plant, &mut || {
            let mut out = stdout.lock();
            let _ = out.write_all(b"@@run\n");
            let _ = out.flush();
        });
        let mut out = stdout.lock();
        let _ = match result {
            Ok(r) => writeln!(
                out,
                "@@ok {} {} {}",
                r.compiled as u8, r.device_runs, r.differed as u8
            ),
            Err(f) => {
                let payload = format!("{}\n{}", f.signature.replace('\n', " "), f.detail);
                write!(out, "@@finding {}\n{payload}", payload.len())
            }
        };
        let _ = out.flush();
    }
}

/// One input, with panics caught and reported as findings (a panic in another thread of the
/// engine, caught or not by its owner, counts too: the hook saw it).
pub fn execute(
    mode: Mode,
    text: &str,
    plant: Option<Plant>,
    phase: &mut dyn FnMut(),
) -> Result<Reached, Finding> {
    PANICS.lock().unwrap_or_else(|e| e.into_inner()).clear();
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        if let Some(p) = plant.filter(|_| text.contains("PLANTED")) {
            planted(p);
        }
        match mode {
            Mode::Frontend => exec::frontend(text),
            Mode::Generated | Mode::Mutated => exec::pipeline(text, mode, phase),
        }
    }));
    let panics = std::mem::take(&mut *PANICS.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some((location, message)) = panics.first() {
        return Err(Finding {
            signature: format!("panic at {location}"),
            detail: format!(
                "panicked at {location}: {message}{}",
                if result.is_ok() {
                    "\n(in another thread; the execution itself returned)"
                } else {
                    ""
                }
            ),
        });
    }
    match result {
        Ok(r) => r,
        Err(_) => Err(Finding {
            signature: "panic without a message".into(),
            detail: String::new(),
        }),
    }
}

fn planted(p: Plant) {
    match p {
        Plant::Panic => panic!("planted panic"),
        Plant::Abort => std::process::abort(),
        Plant::Overflow => {
            #[allow(unconditional_recursion)]
            fn down(n: u64) -> u64 {
                let pad = [n; 64];
                std::hint::black_box(&pad);
                down(n + 1) + pad[3]
            }
            // On a small stack of its own: the overflow kills the process as one on the
            // worker's 1 GiB stack would, without touching a gigabyte first.
            let _ = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(|| std::hint::black_box(down(0)))
                .map(|t| t.join());
        }
        Plant::Hang => loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
        },
    }
}
