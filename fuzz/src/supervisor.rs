//! The supervisor: generates inputs, feeds them to worker processes (this binary's hidden
//! `worker` command), and records what goes wrong. A worker that dies (abort, stack overflow,
//! a signal) or stops answering within the time bound is killed and restarted, and the input
//! it was given is saved: the supervisor always knows it, because it sent it.

use crate::corpus::Corpus;
use crate::exec::{Finding, Reached};
use crate::mutate::{Mode, Mutator};
use crate::worker::Plant;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Which harness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Target {
    /// Front end (and lowering, IR text, PTX emission) on mutated programs.
    Frontend,
    /// The whole pipeline on host, multicore and emulated: generated and mutated programs.
    Pipeline,
}

/// Time bounds of one execution.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Until the worker answers, or says a pipeline input compiled and runs: the compiler's
    /// time (a front-end input's whole time).
    pub compile: Duration,
    /// Running a generated program on all devices (they are small and quick: a hang is a bug).
    pub run_generated: Duration,
    /// Running a mutated program: it may loop for ever by itself, so running past this is
    /// counted as slow, saved for a look, and not a finding.
    pub run_mutated: Duration,
}

impl Limits {
    /// Every bound `factor` times as long.
    pub fn scaled(&self, factor: u32) -> Limits {
        Limits {
            compile: self.compile * factor,
            run_generated: self.run_generated * factor,
            run_mutated: self.run_mutated * factor,
        }
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            compile: Duration::from_secs(2),
            run_generated: Duration::from_secs(20),
            run_mutated: Duration::from_secs(3),
        }
    }
}

/// What became of one execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Passed(Reached),
    /// An oracle failed or a panic was caught: the worker lives on.
    Finding(Finding),
    /// The worker died.
    Crash(Finding),
    /// The worker stopped answering.
    Hang(Finding),
    /// A mutated program ran past its time (its own loop, most likely).
    Slow,
}

impl Verdict {
    /// The directory under `--out` that keeps its inputs.
    fn dir(&self) -> Option<&'static str> {
        match self {
            Verdict::Passed(_) => None,
            Verdict::Finding(_) => Some("findings"),
            Verdict::Crash(_) => Some("crashes"),
            Verdict::Hang(_) => Some("hangs"),
            Verdict::Slow => Some("slow"),
        }
    }

    pub fn finding(&self) -> Option<&Finding> {
        match self {
            Verdict::Finding(f) | Verdict::Crash(f) | Verdict::Hang(f) => Some(f),
            _ => None,
        }
    }
}

enum Msg {
    Run,
    Done(Result<Reached, Finding>),
}

/// One worker process.
pub struct Worker {
    exe: PathBuf,
    plant: Option<Plant>,
    child: Child,
    stdin: ChildStdin,
    rx: Receiver<Msg>,
    /// The last of the worker's standard error (panic messages before an abort).
    stderr: Arc<Mutex<String>>,
    pub restarts: u64,
    /// The worker's current directory, its own and removed with it: the files that programs
    /// write (pictures: `imshow`, `plot`) land there, not where the fuzzer was started.
    scratch: PathBuf,
}

/// Standard error kept per worker.
const STDERR_KEEP: usize = 16 << 10;

impl Worker {
    pub fn spawn(exe: &Path, plant: Option<Plant>) -> std::io::Result<Worker> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let scratch = std::env::temp_dir().join(format!(
            "acc-fuzz-worker-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&scratch)?;
        let mut cmd = Command::new(exe);
        cmd.arg("worker").current_dir(&scratch);
        if let Some(p) = plant {
            cmd.arg("--plant").arg(format!("{p:?}").to_lowercase());
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut err = child.stderr.take().expect("piped stderr");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            let mut line = String::new();
            loop {
                line.clear();
                match r.read_line(&mut line) {
                    Ok(0) | Err(_) => return,
                    Ok(_) => {}
                }
                let l = line.trim_end();
                let msg = if l == "@@run" {
                    Msg::Run
                } else if let Some(rest) = l.strip_prefix("@@ok ") {
                    let v: Vec<u32> = rest.split(' ').filter_map(|x| x.parse().ok()).collect();
                    Msg::Done(Ok(Reached {
                        compiled: v.first() == Some(&1),
                        device_runs: v.get(1).copied().unwrap_or(0),
                        differed: v.get(2) == Some(&1),
                    }))
                } else if let Some(n) = l.strip_prefix("@@finding ") {
                    let mut payload = vec![0; n.parse().unwrap_or(0)];
                    if r.read_exact(&mut payload).is_err() {
                        return;
                    }
                    let payload = String::from_utf8_lossy(&payload).into_owned();
                    let (signature, detail) = payload.split_once('\n').unwrap_or((&payload, ""));
                    Msg::Done(Err(Finding {
                        signature: signature.to_string(),
                        detail: detail.to_string(),
                    }))
                } else {
                    continue; // stray output
                };
                if tx.send(msg).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let keep = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    return;
                }
                let mut s = keep.lock().unwrap_or_else(|e| e.into_inner());
                s.push_str(&String::from_utf8_lossy(&buf[..n]));
                if s.len() > 2 * STDERR_KEEP {
                    let mut cut = s.len() - STDERR_KEEP;
                    while !s.is_char_boundary(cut) {
                        cut += 1;
                    }
                    s.drain(..cut);
                }
            }
        });
        Ok(Worker {
            exe: exe.to_path_buf(),
            plant,
            child,
            stdin,
            rx,
            stderr,
            restarts: 0,
            scratch,
        })
    }

    fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        match Worker::spawn(&self.exe, self.plant) {
            Ok(w) => {
                let restarts = self.restarts + 1;
                *self = w;
                self.restarts = restarts;
            }
            Err(e) => panic!("cannot restart the worker {}: {e}", self.exe.display()),
        }
    }

    /// Run one input, restarting the worker after a crash or a hang.
    pub fn execute(&mut self, mode: Mode, text: &str, limits: &Limits) -> Verdict {
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        let sent = writeln!(self.stdin, "{} {}", mode.letter(), text.len())
            .and_then(|()| self.stdin.write_all(text.as_bytes()))
            .and_then(|()| self.stdin.flush());
        let mut deadline = Instant::now() + limits.compile;
        let mut running = false;
        loop {
            if sent.is_err() {
                break;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Msg::Run) => {
                    running = true;
                    deadline = Instant::now()
                        + match mode {
                            Mode::Mutated => limits.run_mutated,
                            _ => limits.run_generated,
                        };
                }
                Ok(Msg::Done(Ok(r))) => return Verdict::Passed(r),
                Ok(Msg::Done(Err(f))) => return Verdict::Finding(f),
                Err(RecvTimeoutError::Timeout) => {
                    self.restart();
                    if running && mode == Mode::Mutated {
                        return Verdict::Slow;
                    }
                    let (what, limit) = if running {
                        ("running", limits.run_generated)
                    } else {
                        ("compiling", limits.compile)
                    };
                    return Verdict::Hang(Finding {
                        signature: format!("hang while {what}"),
                        detail: format!("no answer within {} s", limit.as_secs_f64()),
                    });
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        // The worker died: its exit status and last words say how.
        let status = self.child.wait().ok();
        // The stderr reader may still be draining the pipe.
        std::thread::sleep(Duration::from_millis(20));
        let stderr = self
            .stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        self.restart();
        Verdict::Crash(crash_finding(status, &stderr, running))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

fn crash_finding(status: Option<std::process::ExitStatus>, stderr: &str, running: bool) -> Finding {
    use std::os::unix::process::ExitStatusExt;
    let how = match status {
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => format!("exit {c}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => "unknown end".into(),
        },
        None => "unknown end".into(),
    };
    let phase = if running { "running" } else { "compiling" };
    let cause = if let Some(l) = stderr.lines().rev().find(|l| l.starts_with("@@panic ")) {
        let at = l["@@panic ".len()..].split(": ").next().unwrap_or("?");
        format!("abort after a panic at {at}")
    } else if stderr.contains("has overflowed its stack") {
        "stack overflow".into()
    } else if stderr.contains("memory allocation of") {
        "allocation failure".into()
    } else {
        how.clone()
    };
    Finding {
        signature: format!("crash while {phase}: {cause}"),
        detail: format!("{how}; standard error:\n{stderr}"),
    }
}

/// A campaign's settings.
#[derive(Clone, Debug)]
pub struct Options {
    pub target: Target,
    pub seed: u64,
    pub iterations: Option<u64>,
    pub seconds: Option<u64>,
    pub jobs: usize,
    pub out: PathBuf,
    pub limits: Limits,
    pub corpus: Vec<PathBuf>,
    pub plant: Option<Plant>,
    /// Progress lines every this often (none when `None`).
    pub progress: Option<Duration>,
}

/// A campaign's totals.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub executions: u64,
    pub compiled: u64,
    pub generated: u64,
    pub device_runs: u64,
    pub differed: u64,
    pub slow: u64,
    /// Hangs that did not happen again with five times the time (counted in `slow` too).
    pub unconfirmed: u64,
    pub restarts: u64,
    /// Findings by signature: count, and the first saved input.
    pub findings: BTreeMap<String, (u64, String)>,
    pub elapsed: Duration,
}

impl Stats {
    pub fn finding_count(&self) -> u64 {
        self.findings.values().map(|(n, _)| n).sum()
    }

    pub fn summary(&self, target: Target) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut s = format!(
            "{:?}: {} executions in {:.1} s ({:.0}/s), {} compiled",
            target,
            self.executions,
            secs,
            self.executions as f64 / secs,
            self.compiled
        );
        if target == Target::Pipeline {
            s += &format!(
                ", {} generated, {} device runs, {} mutated programs differing between devices (not findings), {} slow",
                self.generated, self.device_runs, self.differed, self.slow
            );
        }
        s += &format!(
            ", {} unconfirmed hangs, {} worker restarts, {} findings",
            self.unconfirmed,
            self.restarts,
            self.finding_count()
        );
        for (sig, (n, file)) in &self.findings {
            s += &format!("\n  {n} × {sig}\n      e.g. {file}");
        }
        s
    }
}

/// Inputs kept per signature (the first ones; the rest are counted). A hang or a crash says
/// little about its cause in its signature, so more of those are kept.
const KEEP_PER_SIGNATURE: u64 = 3;
const KEEP_PER_HANG_OR_CRASH: u64 = 25;
/// Slow inputs kept, and mutated programs whose devices differed.
const KEEP_SLOW: u64 = 20;

/// Run a campaign: `jobs` workers until the iteration count or the time is reached.
pub fn campaign(opts: &Options) -> Stats {
    let corpus = Corpus::load(&opts.corpus);
    let exe = std::env::current_exe().expect("the fuzzer's own path");
    let stats = Mutex::new(Stats::default());
    let issued = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let deadline = opts.seconds.map(|s| start + Duration::from_secs(s));
    std::thread::scope(|scope| {
        for job in 0..opts.jobs.max(1) {
            let (corpus, exe, stats, issued, done, stop) =
                (&corpus, &exe, &stats, &issued, &done, &stop);
            scope.spawn(move || {
                let seed = opts
                    .seed
                    .wrapping_add((job as u64).wrapping_mul(0x1000_0000_0000));
                let mut mutator = Mutator::new(seed, corpus);
                let mut worker = Worker::spawn(exe, opts.plant).expect("start a worker");
                loop {
                    if stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d)
                    {
                        break;
                    }
                    if let Some(n) = opts.iterations {
                        if issued.fetch_add(1, Ordering::Relaxed) >= n {
                            break;
                        }
                    }
                    let (mode, text) = match opts.target {
                        Target::Frontend => (Mode::Frontend, mutator.frontend_input()),
                        Target::Pipeline => mutator.pipeline_input(),
                    };
                    let mut verdict = worker.execute(mode, &text, &opts.limits);
                    if let Verdict::Hang(_) = verdict {
                        // On a loaded machine a worker can stall past the limit with nothing
                        // wrong: a hang counts once it runs past five times the limit as well.
                        let again = worker.execute(mode, &text, &opts.limits.scaled(5));
                        if !matches!(again, Verdict::Hang(_)) {
                            stats.lock().unwrap_or_else(|e| e.into_inner()).unconfirmed += 1;
                            verdict = Verdict::Slow;
                        }
                    }
                    record(opts, stats, mode, &text, &verdict);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                stats.lock().unwrap_or_else(|e| e.into_inner()).restarts += worker.restarts;
            });
        }
        if let Some(every) = opts.progress {
            let mut last = (Instant::now(), 0u64);
            while done.load(Ordering::Relaxed) < opts.iterations.unwrap_or(u64::MAX)
                && deadline.is_none_or(|d| Instant::now() < d)
            {
                std::thread::sleep(Duration::from_millis(200));
                if last.0.elapsed() >= every {
                    let n = done.load(Ordering::Relaxed);
                    let s = stats.lock().unwrap_or_else(|e| e.into_inner());
                    eprintln!(
                        "[{:>6.0} s] {} executions ({:.0}/s now), {} compiled, {} device runs, {} slow, {} findings",
                        start.elapsed().as_secs_f64(),
                        n,
                        (n - last.1) as f64 / last.0.elapsed().as_secs_f64(),
                        s.compiled,
                        s.device_runs,
                        s.slow,
                        s.finding_count()
                    );
                    last = (Instant::now(), n);
                }
            }
            stop.store(true, Ordering::Relaxed);
        }
    });
    let mut stats = stats.into_inner().unwrap_or_else(|e| e.into_inner());
    stats.elapsed = start.elapsed();
    stats
}

fn record(opts: &Options, stats: &Mutex<Stats>, mode: Mode, text: &str, verdict: &Verdict) {
    let mut s = stats.lock().unwrap_or_else(|e| e.into_inner());
    s.executions += 1;
    if mode == Mode::Generated {
        s.generated += 1;
    }
    match verdict {
        Verdict::Passed(r) => {
            s.compiled += r.compiled as u64;
            s.device_runs += r.device_runs as u64;
            s.differed += r.differed as u64;
            // Not findings (a mutated program may race or rely on shared memory), but worth a
            // look now and then: the first few are kept.
            if r.differed && s.differed <= KEEP_SLOW {
                let n = s.differed;
                drop(s);
                let dir = opts.out.join("differ");
                let _ = std::fs::create_dir_all(&dir);
                let _ = std::fs::write(dir.join(format!("{}-differ-{n}.acc", mode.letter())), text);
            }
            return;
        }
        Verdict::Slow => {
            // A pipeline input reaches "running" only once it compiled.
            s.compiled += (mode != Mode::Frontend) as u64;
            s.slow += 1;
            if s.slow > KEEP_SLOW {
                return;
            }
        }
        _ => {}
    }
    let Some(dir) = verdict.dir() else { return };
    let finding = verdict.finding().cloned();
    let (count, name) = match &finding {
        Some(f) => {
            let entry = s
                .findings
                .entry(f.signature.clone())
                .or_insert((0, String::new()));
            entry.0 += 1;
            let keep = match verdict {
                Verdict::Finding(_) => KEEP_PER_SIGNATURE,
                _ => KEEP_PER_HANG_OR_CRASH,
            };
            if entry.0 > keep {
                return;
            }
            let name = format!("{}-{:016x}-{}", mode.letter(), hash(&f.signature), entry.0);
            if entry.1.is_empty() {
                entry.1 = opts
                    .out
                    .join(dir)
                    .join(format!("{name}.acc"))
                    .display()
                    .to_string();
            }
            (entry.0, name)
        }
        None => (s.slow, format!("{}-slow-{}", mode.letter(), s.slow)),
    };
    drop(s);
    let dir = opts.out.join(dir);
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{name}.acc")), text);
    let about = match &finding {
        Some(f) => format!(
            "mode: {mode:?}\nsignature: {}\noccurrence: {count}\n\n{}\n",
            f.signature, f.detail
        ),
        None => format!("mode: {mode:?}\nran longer than the limit\n"),
    };
    let _ = std::fs::write(dir.join(format!("{name}.txt")), about);
}

/// FNV-1a: a stable file name per signature.
fn hash(s: &str) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in s.bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Delta debugging (ddmin over lines, then characters): the smallest input found that still
/// gives the same signature, within `budget` executions.
pub fn minimize(
    worker: &mut Worker,
    mode: Mode,
    text: &str,
    limits: &Limits,
    budget: usize,
) -> String {
    let Some(target) = worker.execute(mode, text, limits).finding().cloned() else {
        return text.to_string();
    };
    let runs = std::cell::Cell::new(1);
    let same = |w: &mut Worker, candidate: &str| {
        runs.set(runs.get() + 1);
        w.execute(mode, candidate, limits)
            .finding()
            .is_some_and(|f| f.signature == target.signature)
    };
    let mut best = text.to_string();
    for by_char in [false, true] {
        let mut chunks: Vec<String> = if by_char {
            best.chars().map(String::from).collect()
        } else {
            best.split_inclusive('\n').map(String::from).collect()
        };
        let mut n = 2;
        while chunks.len() >= 2 && runs.get() < budget {
            let size = chunks.len().div_ceil(n);
            let mut reduced = false;
            for k in 0..n {
                let (lo, hi) = (k * size, ((k + 1) * size).min(chunks.len()));
                if lo >= hi {
                    continue;
                }
                let candidate: String = chunks[..lo].concat() + &chunks[hi..].concat();
                if runs.get() < budget && same(worker, &candidate) {
                    chunks.drain(lo..hi);
                    reduced = true;
                    break;
                }
            }
            if reduced {
                n = (n - 1).max(2);
            } else if n >= chunks.len() {
                break;
            } else {
                n = (2 * n).min(chunks.len());
            }
        }
        best = chunks.concat();
    }
    best
}
