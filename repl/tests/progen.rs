//! Differential testing with generated programs (acc-progen): a fixed range of seeds runs on
//! host, multicore and emulated, and every device must print the same, report the same errors
//! and exit with the same status. A mismatch fails the test with the shrunk program.
//!
//! The seeds are fixed, so the test is deterministic; `ACC_PROGEN_COUNT` and
//! `ACC_PROGEN_SEED` run another range (`cargo run -p acc-progen --release` runs many more).
//! A second test runs programs that carry `devices(…)` clauses on host and on three emulated
//! devices (`emulated@3`), where those constructs split their loops.

use acc_progen::campaign::{check_seed, report, SeedResult};
use acc_progen::gen::{generate, Config};
use acc_progen::run::Runner;
use std::path::PathBuf;
use std::time::Duration;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Runs `seeds` on `devices`; panics with every failure.
fn agree(devices: &[&str], seeds: impl Iterator<Item = u64>) {
    let devices = devices.iter().map(|d| d.to_string()).collect();
    // A generous timeout: the machine may be busy; generated programs take milliseconds.
    let runner = Runner::new(
        PathBuf::from(env!("CARGO_BIN_EXE_acc")),
        devices,
        Duration::from_secs(60),
    );
    let cfg = Config::default();
    let mut failures = Vec::new();
    let mut count = 0;
    for seed in seeds {
        count += 1;
        match check_seed(&runner, &cfg, seed, 300) {
            SeedResult::Same => {}
            SeedResult::Invalid(p, o) => failures.push(format!(
                "seed {seed}: the generator made an invalid program\n{}\n{}",
                p.source(),
                o[0].describe()
            )),
            SeedResult::Differ(m) => failures.push(report(&runner, &m)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {count} programs failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn generated_programs_agree_on_host_multicore_and_emulated() {
    let count = env_u64("ACC_PROGEN_COUNT", 400);
    let first = env_u64("ACC_PROGEN_SEED", 1);
    agree(&["host", "multicore", "emulated"], first..first + count);
}

/// The first 60 programs from seed 1 that have a `devices(…)` clause, split over three
/// emulated devices.
#[test]
fn generated_programs_with_devices_clauses_agree_on_three_emulated_devices() {
    let cfg = Config::default();
    let seeds = (1..)
        .filter(|s| generate(*s, &cfg).source().contains("devices("))
        .take(60);
    agree(&["host", "emulated@3"], seeds);
}
