//! Memory and time over many distinct runs of one engine (issue 14's leak goal): each run's
//! text differs, so nothing is cached, and none declares anything new.
//!
//! `cargo bench --bench distinct_runs -- [RUNS]` prints, every tenth of the way, the resident
//! memory, the code units alive and the mean time per run of the last tenth. The device comes
//! from `ACC_DEVICE_TYPE` (`host`, `multicore`, `emulated`, `nvidia`), as for `acc`; on a GPU
//! every run loads a PTX module, which must be unloaded when its code goes.

use std::time::Instant;

use acc::Engine;
use acc_runtime::host::SharedBuffer;

#[path = "../tests/support/memory.rs"]
mod memory;
use memory::rss;

fn main() {
    let runs: usize = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(100_000);
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.set_devices(acc::DeviceOptions::from_env().expect("ACC_* variables"));
    e.run(
        "setup.acc",
        "let a = fill(1.0, 64)\nlet s = 0.0\nfn twice(x: f64) -> f64 { return 2.0 * x }\n",
    )
    .expect("setup");
    let step = (runs / 10).max(1);
    let start_rss = rss();
    let mut t = Instant::now();
    println!(
        "{:>8} {:>10} {:>6} {:>12}",
        "runs", "rss MiB", "units", "us/run"
    );
    for i in 0..runs {
        let text = format!(
            "s = 0.0\nacc parallel loop reduction(+: s)\nfor j in 0..len(a) {{ s += twice(a[j]) + {i}.0 }}\nassert(s > 0.0)\n"
        );
        e.run(&format!("run{i}.acc"), &text).expect("run");
        out.take();
        if (i + 1) % step == 0 {
            let per = t.elapsed().as_secs_f64() * 1e6 / step as f64;
            println!(
                "{:>8} {:>10.1} {:>6} {:>12.1}",
                i + 1,
                rss() as f64 / (1 << 20) as f64,
                e.code_units(),
                per
            );
            t = Instant::now();
        }
    }
    let grown = rss().saturating_sub(start_rss);
    println!("grown: {:.1} MiB", grown as f64 / (1 << 20) as f64);
}
