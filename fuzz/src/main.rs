//! `acc-fuzz`: run a fuzzing campaign, replay or minimize saved inputs (docs/FUZZING.md).

use acc_fuzz::mutate::Mode;
use acc_fuzz::supervisor::{self, Limits, Options, Target, Worker};
use acc_fuzz::worker::{self, Plant};
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "acc-fuzz",
    about = "Fuzzing harnesses for acc (docs/FUZZING.md)"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a campaign: generate inputs, run them in worker processes, save what fails.
    Run {
        target: Target,
        /// First seed (job J uses a stream of its own derived from it).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Stop after this many executions (all jobs together).
        #[arg(long)]
        iterations: Option<u64>,
        /// Stop after this many seconds.
        #[arg(long)]
        seconds: Option<u64>,
        /// Worker processes.
        #[arg(long, default_value_t = 1)]
        jobs: usize,
        /// Where findings go: crashes/, hangs/, findings/ (failed oracles, caught panics) and
        /// slow/ (mutated programs that ran long: not findings).
        #[arg(long, default_value = "fuzz-out")]
        out: PathBuf,
        /// Seconds an input may take to compile (the whole of a front-end input).
        #[arg(long, default_value_t = 2.0)]
        timeout: f64,
        /// Directories of seed programs (default: tests/conformance, examples,
        /// tests/progen-regressions, tests/fuzz-regressions).
        #[arg(long)]
        corpus: Vec<PathBuf>,
        /// Progress lines every this many seconds (0: none).
        #[arg(long, default_value_t = 10)]
        progress: u64,
        /// Test the harness: inputs containing PLANTED fail this way in the worker.
        #[arg(long, hide = true)]
        plant: Option<Plant>,
    },
    /// Run saved inputs in this process (no supervisor), printing each verdict.
    Replay {
        target: Target,
        files: Vec<PathBuf>,
        /// For the pipeline: the input is a generated program whose devices must agree.
        #[arg(long)]
        generated: bool,
    },
    /// Shrink a saved input to a small one with the same finding.
    Minimize {
        target: Target,
        file: PathBuf,
        #[arg(long)]
        generated: bool,
        /// Executions at most.
        #[arg(long, default_value_t = 3000)]
        budget: usize,
    },
    /// Serve inputs from standard input (what the supervisor starts).
    #[command(hide = true)]
    Worker {
        #[arg(long)]
        plant: Option<Plant>,
    },
}

fn mode(target: Target, generated: bool) -> Mode {
    match (target, generated) {
        (Target::Frontend, _) => Mode::Frontend,
        (Target::Pipeline, true) => Mode::Generated,
        (Target::Pipeline, false) => Mode::Mutated,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Cmd::Worker { plant } => worker::main(plant),
        Cmd::Run {
            target,
            seed,
            iterations,
            seconds,
            jobs,
            out,
            timeout,
            corpus,
            progress,
            plant,
        } => {
            let opts = Options {
                target,
                seed,
                iterations: iterations.or(if seconds.is_none() {
                    Some(10_000)
                } else {
                    None
                }),
                seconds,
                jobs,
                out,
                limits: Limits {
                    compile: Duration::from_secs_f64(timeout),
                    ..Limits::default()
                },
                corpus: if corpus.is_empty() {
                    acc_fuzz::corpus::default_dirs()
                } else {
                    corpus
                },
                plant,
                progress: (progress > 0).then(|| Duration::from_secs(progress)),
            };
            let stats = supervisor::campaign(&opts);
            println!("{}", stats.summary(target));
            if stats.finding_count() == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Cmd::Replay {
            target,
            files,
            generated,
        } => {
            let mut failed = false;
            for f in &files {
                let text = match std::fs::read(f) {
                    Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                    Err(e) => {
                        eprintln!("{}: {e}", f.display());
                        failed = true;
                        continue;
                    }
                };
                let start = std::time::Instant::now();
                // On the worker's stack, so that deep recursion behaves (and takes the time) as
                // it did in the worker.
                let m = mode(target, generated);
                let result = std::thread::scope(|s| {
                    std::thread::Builder::new()
                        .stack_size(worker::STACK_SIZE)
                        .spawn_scoped(s, || worker::execute(m, &text, None, &mut || {}))
                        .expect("a thread for the input")
                        .join()
                        .expect("execute catches panics")
                });
                let secs = start.elapsed().as_secs_f64();
                match result {
                    Ok(r) => println!("{}: passed in {secs:.3} s ({r:?})", f.display()),
                    Err(finding) => {
                        failed = true;
                        println!(
                            "{}: FINDING in {secs:.3} s: {}\n{}",
                            f.display(),
                            finding.signature,
                            finding.detail
                        );
                    }
                }
            }
            if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            }
        }
        Cmd::Minimize {
            target,
            file,
            generated,
            budget,
        } => {
            let text = match std::fs::read(&file) {
                Ok(b) => String::from_utf8_lossy(&b).into_owned(),
                Err(e) => {
                    eprintln!("{}: {e}", file.display());
                    return ExitCode::FAILURE;
                }
            };
            let exe = std::env::current_exe().expect("the fuzzer's own path");
            let mut w = Worker::spawn(&exe, None).expect("start a worker");
            let small = supervisor::minimize(
                &mut w,
                mode(target, generated),
                &text,
                &Limits::default(),
                budget,
            );
            print!("{small}");
            ExitCode::SUCCESS
        }
    }
}
