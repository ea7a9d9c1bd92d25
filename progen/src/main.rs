//! `acc-progen N [options]`: generates N programs, runs each on several devices with the `acc`
//! binary, and reports (and shrinks, and saves) those whose results differ.

use acc_progen::campaign::{check_seed, report, save, SeedResult};
use acc_progen::gen::{generate, Config};
use acc_progen::run::{DeviceSpec, Runner};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const USAGE: &str =
    "usage: acc-progen N [--seed S] [--devices host,multicore,emulated] [--acc PATH]
                  [--jobs J] [--timeout SECS] [--save DIR] [--write DIR] [--budget B]
                  [--known-bugs] [--no-errors] [--no-devices] [--units K]
  Runs N generated programs (seeds S, S+1, …) on every device and compares standard output,
  standard error and exit status. Mismatches are shrunk (up to B candidates, 0: don't) and
  saved as regression tests in DIR (default progen-regressions). --write DIR only writes the
  programs (DIR/progen_SEED.acc) without running them. --acc defaults to `acc` beside this
  binary.
  A device is what `acc --device` takes (host, multicore, emulated, emulated:1, nvidia, …);
  emulated@K (or emulated:D@K) runs on a machine of K emulated devices
  (ACC_EMULATED_DEVICES=K, and ACC_EDGES_FIRST=on: halo rows' iterations first, as on GPUs),
  so that --devices host,emulated@1,emulated@2,emulated@3 compares the devices(…) splits over
  1, 2 and 3 devices. Programs carry devices(…) clauses now and
  then; --no-devices leaves them out (the programs are otherwise the same).";

struct Args {
    n: u64,
    seed: u64,
    devices: Vec<String>,
    acc: Option<PathBuf>,
    jobs: usize,
    timeout: u64,
    save: PathBuf,
    write: Option<PathBuf>,
    budget: usize,
    cfg: Config,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        n: 0,
        seed: 1,
        devices: vec!["host".into(), "multicore".into(), "emulated".into()],
        acc: None,
        jobs: 1,
        timeout: 20,
        save: PathBuf::from("progen-regressions"),
        write: None,
        budget: 600,
        cfg: Config::default(),
    };
    let mut it = std::env::args().skip(1);
    let mut n = None;
    while let Some(arg) = it.next() {
        let mut val = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        let num = |s: String| s.parse::<u64>().map_err(|_| format!("not a number: {s}"));
        match arg.as_str() {
            "--seed" => a.seed = num(val("--seed")?)?,
            "--devices" => {
                a.devices = val("--devices")?.split(',').map(String::from).collect();
                for d in &a.devices {
                    DeviceSpec::parse(d)?;
                }
            }
            "--acc" => a.acc = Some(PathBuf::from(val("--acc")?)),
            "--jobs" => a.jobs = num(val("--jobs")?)?.max(1) as usize,
            "--timeout" => a.timeout = num(val("--timeout")?)?,
            "--save" => a.save = PathBuf::from(val("--save")?),
            "--write" => a.write = Some(PathBuf::from(val("--write")?)),
            "--budget" => a.budget = num(val("--budget")?)? as usize,
            "--units" => a.cfg.max_units = num(val("--units")?)?.max(1) as usize,
            "--known-bugs" => a.cfg.known_bugs = true,
            "--no-errors" => a.cfg.errors = false,
            "--no-devices" => a.cfg.devices = false,
            "-h" | "--help" => return Err(USAGE.into()),
            s if n.is_none() && !s.starts_with('-') => n = Some(num(s.to_string())?),
            s => return Err(format!("unknown argument {s}\n{USAGE}")),
        }
    }
    a.n = n.ok_or(USAGE.to_string())?;
    Ok(a)
}

fn main() {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Some(dir) = &args.write {
        std::fs::create_dir_all(dir).expect("create the output folder");
        for s in args.seed..args.seed + args.n {
            let p = generate(s, &args.cfg);
            std::fs::write(dir.join(format!("progen_{s}.acc")), p.source())
                .expect("write a program");
        }
        println!("wrote {} programs to {}", args.n, dir.display());
        return;
    }
    let acc = args.acc.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().expect("own path");
        exe.with_file_name(if cfg!(windows) { "acc.exe" } else { "acc" })
    });
    // The programs run in a scratch folder: a relative path would not find acc there.
    let acc = match std::path::absolute(&acc) {
        Ok(a) if a.is_file() => a,
        _ => {
            eprintln!(
                "acc-progen: no acc at {} (build it with `cargo build --release -p acc-repl`, or give --acc PATH)",
                acc.display()
            );
            std::process::exit(2);
        }
    };
    let runner = Runner::new(acc, args.devices.clone(), Duration::from_secs(args.timeout));
    let next = AtomicU64::new(args.seed);
    let (differ, invalid) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let out = Mutex::new(());
    let start = Instant::now();
    let end = args.seed + args.n;
    std::thread::scope(|s| {
        for _ in 0..args.jobs {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                if seed >= end {
                    break;
                }
                match check_seed(&runner, &args.cfg, seed, args.budget) {
                    SeedResult::Same => {}
                    SeedResult::Invalid(p, o) => {
                        invalid.fetch_add(1, Ordering::Relaxed);
                        let _g = out.lock().unwrap();
                        println!("=== seed {seed}: generated an invalid program (a generator bug)");
                        println!("{}--- {}", p.source(), o[0].describe());
                    }
                    SeedResult::Differ(m) => {
                        differ.fetch_add(1, Ordering::Relaxed);
                        let _g = out.lock().unwrap();
                        println!("{}", report(&runner, &m));
                        if let Err(e) = save(&runner, &m, &args.save) {
                            eprintln!("cannot save the regression: {e}");
                        }
                    }
                }
                let done = seed + 1 - args.seed;
                if done.is_multiple_of(500) {
                    let _g = out.lock().unwrap();
                    eprintln!("[{done} programs, {:.0}s]", start.elapsed().as_secs_f64());
                }
            });
        }
    });
    let (k, inv) = (
        differ.load(Ordering::Relaxed),
        invalid.load(Ordering::Relaxed),
    );
    println!(
        "{} programs, {k} differed, {inv} invalid ({}, {:.0}s)",
        args.n,
        args.devices.join("/"),
        start.elapsed().as_secs_f64()
    );
    if k + inv > 0 {
        std::process::exit(1);
    }
}
