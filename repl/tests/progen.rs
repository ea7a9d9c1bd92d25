//! Differential testing with generated programs (acc-progen): a fixed range of seeds runs on
//! host, multicore and emulated, and every device must print the same, report the same errors
//! and exit with the same status. A mismatch fails the test with the shrunk program.
//!
//! The seeds are fixed, so the test is deterministic; `ACC_PROGEN_COUNT` and
//! `ACC_PROGEN_SEED` run another range (`cargo run -p acc-progen --release` runs many more).

use acc_progen::campaign::{check_seed, report, SeedResult};
use acc_progen::gen::Config;
use acc_progen::run::Runner;
use std::path::PathBuf;
use std::time::Duration;

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn generated_programs_agree_on_host_multicore_and_emulated() {
    let count = env_u64("ACC_PROGEN_COUNT", 400);
    let first = env_u64("ACC_PROGEN_SEED", 1);
    let devices = ["host", "multicore", "emulated"].map(String::from).to_vec();
    // A generous timeout: the machine may be busy; generated programs take milliseconds.
    let runner = Runner::new(
        PathBuf::from(env!("CARGO_BIN_EXE_acc")),
        devices,
        Duration::from_secs(60),
    );
    let cfg = Config::default();
    let mut failures = Vec::new();
    for seed in first..first + count {
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
