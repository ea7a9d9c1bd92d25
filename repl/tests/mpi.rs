//! The acc command under MPI (the `mpi` feature): `mpirun -np 1, 2, 3` on the scripts of
//! `tests/mpi/` and on `examples/mpi/jacobi_mpi.acc`, checked against values worked out by hand
//! and against jacobi.acc's expected output. Needs Open MPI's `mpirun` (Debian's openmpi-bin).
//! Every run has a time limit: an MPI error must end every rank, never hang.
#![cfg(feature = "mpi")]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mpi")
        .join(name)
}

/// `mpirun -np N acc ARGS…` with a 60-second limit (`timeout`'s status 124 when it hangs).
fn mpirun(np: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new("timeout");
    c.args(["60", "mpirun", "-np", &np.to_string()])
        .args(["--oversubscribe", "--allow-run-as-root"])
        .arg(env!("CARGO_BIN_EXE_acc"))
        .args(args)
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("mpirun runs (install openmpi-bin)")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The lines of `out` from rank `r`, without their prefix.
fn rank_lines(out: &str, r: usize) -> Vec<String> {
    let prefix = format!("[rank {r}] ");
    out.lines()
        .filter_map(|l| {
            if r == 0 {
                (!l.starts_with("[rank ")).then(|| l.to_string())
            } else {
                l.strip_prefix(&prefix).map(str::to_string)
            }
        })
        .collect()
}

#[test]
fn jacobi_prints_what_jacobi_acc_prints_on_1_2_and_3_ranks() {
    let expected = std::fs::read_to_string(root().join("examples/jacobi.out")).unwrap();
    let example = root().join("examples/mpi/jacobi_mpi.acc");
    for np in [1, 2, 3] {
        let out = mpirun(np, &[example.to_str().unwrap()], &[]);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), expected, "np {np}");
    }
    // On the emulated devices (a device copy per rank), the halos move between device copies.
    let out = mpirun(2, &["--device", "emulated", example.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), expected);
}

/// The benchmark's overlapped Jacobi (`bench/gpu/acc/jacobi_mpi.acc`: edge rows, interior and
/// copy on three async queues, each gang's largest change by atomic max, the exchanges beside
/// the kernels) solves jacobi.acc's problem: the same iterations and error as
/// `examples/jacobi.out`, and its sum (taken in another order, so to 1e-9 relative), on 1, 2
/// and 3 ranks, on the host and on emulated devices (async queues on threads of their own).
#[test]
fn the_overlapped_benchmark_jacobi_solves_jacobi_acc_s_problem() {
    let expected = std::fs::read_to_string(root().join("examples/jacobi.out")).unwrap();
    let last = expected.lines().last().unwrap();
    // "iterations: 1000, error: 2.419263e-04, sum(A): 4361.503235"
    let field = |name: &str| {
        let at = last.find(name).unwrap() + name.len();
        last[at..].split(',').next().unwrap().trim().to_string()
    };
    let (iterations, error) = (field("iterations:"), field("error:"));
    let sum: f64 = field("sum(A):").parse().unwrap();
    let bench = root().join("bench/gpu/acc/jacobi_mpi.acc");
    let args = [
        "--set",
        "n=256",
        "--set",
        "iter_max=1000",
        "--set",
        "reps=1",
    ];
    for (np, device) in [
        (1, "host"),
        (2, "host"),
        (3, "host"),
        (2, "emulated"),
        (3, "emulated"),
    ] {
        let mut all = vec!["--device", device, bench.to_str().unwrap()];
        all.extend(args);
        let out = mpirun(np, &all, &[]);
        assert!(
            out.status.success(),
            "np {np} {device}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        let check = stdout
            .split_whitespace()
            .find_map(|w| w.strip_prefix("check="))
            .unwrap_or_else(|| panic!("np {np} {device}: no check= in {stdout}"));
        let parts: Vec<&str> = check.split(',').collect();
        assert_eq!(parts[0], iterations, "np {np} {device}: {check}");
        assert_eq!(parts[1], error, "np {np} {device}: {check}");
        let got: f64 = parts[2].parse().unwrap();
        assert!(
            (got - sum).abs() <= 1e-9 * sum,
            "np {np} {device}: sum {got}, jacobi.acc's {sum}"
        );
    }
}

/// Arrays held split by a `devices(all)` region over three emulated devices per rank: the
/// sections travel from and to the rows' holders, not one device's copy (whose rows outside
/// its block are stale). Worked out by hand: rank r's `a[i]` is `i + 10 r`, it receives its
/// left neighbour's, and `c[i]` is that plus 0.5.
#[test]
fn sections_of_arrays_held_split_travel_from_and_to_their_rows_holders() {
    for np in [1usize, 2] {
        let out = mpirun(
            np,
            &[
                "--device",
                "emulated",
                script("devices_split.acc").to_str().unwrap(),
            ],
            &[("ACC_EMULATED_DEVICES", "3")],
        );
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        for r in 0..np {
            let left = (r + np - 1) % np;
            let c: Vec<String> = (0..9).map(|i| format!("{}.5", 10 * left + i)).collect();
            assert_eq!(
                rank_lines(&stdout, r),
                vec![format!(
                    "{r} {}.0 {}.0 {}.0 [{}]",
                    10 * r + 1,
                    10 * r + 8,
                    10 * left + 8,
                    c.join(", ")
                )],
                "np {np}:\n{stdout}"
            );
        }
    }
}

#[test]
fn built_ins_on_1_2_and_3_ranks() {
    for np in [1usize, 2, 3] {
        let out = mpirun(np, &[script("basics.acc").to_str().unwrap()], &[]);
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "np {np}: {}", text(&out.stderr));
        let n = np as i64;
        let total: i64 = (1..=n).sum();
        let prod: i64 = (2..=n + 1).product();
        let most = 1.5 * (n - 1) as f64;
        let bits = (1i64 << n) - 1;
        let sums: Vec<String> = (0..4)
            .map(|k| (n * k + (0..n).sum::<i64>()).to_string())
            .collect();
        let fmax = format!("{n}.0");
        for r in 0..np {
            let r64 = r as i64;
            let left = (r64 + n - 1) % n;
            let expected = vec![
                format!(
                    "{r} {n} {total} {most:?} {} {prod} {bits} true true",
                    10 - (n - 1)
                ),
                format!("[{}]", sums.join(", ")),
                format!("[{}.0, {fmax}, {fmax}, {}.0]", r + 1, r + 1),
                format!("{} [{m}, {m}, {m}]", 100 + n - 1, m = n - 1),
                format!("{}.0 {}.0", left * 10, left * 10),
            ];
            let mut expected = expected;
            if r == 0 {
                expected.push(format!("received {}", (1..n).sum::<i64>()));
            }
            expected.push("[7.0, 7.0] true".into());
            expected.push(format!("{left} {}", left + 2));
            let (mine, theirs) = (10 * r64, 10 * left);
            expected.push(format!(
                "[{}, {}, {}, {}, {}, {}]",
                mine,
                mine + 1,
                theirs,
                theirs + 1,
                theirs + 2,
                theirs + 3
            ));
            assert_eq!(
                rank_lines(&stdout, r),
                expected,
                "np {np} rank {r}:\n{stdout}"
            );
        }
    }
}

#[test]
fn present_sections_move_between_device_copies() {
    for np in [1usize, 2] {
        let out = mpirun(
            np,
            &[
                "--device",
                "emulated",
                "--profile",
                script("device.acc").to_str().unwrap(),
            ],
            &[],
        );
        let stdout = text(&out.stdout);
        assert!(out.status.success(), "{}", text(&out.stderr));
        for r in 0..np {
            // Rank r received its left neighbour's device values 10 * left + i; the host
            // copies of the sections were staged through, and hold the device values too.
            let left = (r + np - 1) % np;
            let c: Vec<String> = (0..4).map(|i| format!("{}.5", 10 * left + i)).collect();
            assert_eq!(
                rank_lines(&stdout, r),
                vec![format!(
                    "{r} {}.0 {}.0 [{}]",
                    10 * r + 1,
                    10 * left + 1,
                    c.join(", ")
                )],
                "np {np}:\n{stdout}"
            );
        }
        // The profile shows the call with its bytes, and its staging transfers.
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains("mpi_sendrecv on emulated:0, mpi:0"),
            "{stderr}"
        );
        assert!(stderr.contains("mpi calls 1, 64 bytes"), "{stderr}");
    }
}

#[test]
fn each_rank_writes_its_trace_and_heads_its_profile() {
    let dir = std::env::temp_dir().join(format!("acc-mpi-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.json");
    let out = mpirun(
        2,
        &[
            "--profile",
            "--trace",
            trace.to_str().unwrap(),
            script("device.acc").to_str().unwrap(),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (file, rank) in [("t.json", 0), ("t.rank1.json", 1)] {
        let json = std::fs::read_to_string(dir.join(file)).expect(file);
        assert!(json.contains("\"cat\":\"mpi\""), "{file}");
        assert!(json.contains(&format!("mpi:{rank}")), "{file}");
    }
    let stderr = text(&out.stderr);
    assert!(stderr.contains("[rank 1] totals: "), "{stderr}");
    assert!(stderr.contains("\ntotals: "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn each_rank_starts_on_a_device_by_its_local_rank() {
    let file = script("device_num.acc");
    let args = ["--device", "emulated", file.to_str().unwrap()];
    let out = mpirun(3, &args, &[("ACC_EMULATED_DEVICES", "2")]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for (r, device) in [(0, 0), (1, 1), (2, 0)] {
        assert_eq!(
            rank_lines(&stdout, r),
            vec![format!("{r} {device}")],
            "{stdout}"
        );
    }
    // ACC_DEVICE_NUM decides where it is set.
    let env = [("ACC_EMULATED_DEVICES", "2"), ("ACC_DEVICE_NUM", "1")];
    let out = mpirun(2, &args, &env);
    let stdout = text(&out.stdout);
    for r in 0..2 {
        assert_eq!(rank_lines(&stdout, r), vec![format!("{r} 1")], "{stdout}");
    }
}

#[test]
fn output_of_other_ranks_is_prefixed_or_dropped() {
    let quiet = mpirun(
        2,
        &["--mpi-quiet", script("device.acc").to_str().unwrap()],
        &[],
    );
    assert!(quiet.status.success());
    let stdout = text(&quiet.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(stdout.starts_with("0 "), "{stdout}");
    let env = mpirun(
        2,
        &[script("device.acc").to_str().unwrap()],
        &[("ACC_MPI_QUIET", "1")],
    );
    assert_eq!(text(&env.stdout).lines().count(), 1);
}

#[test]
fn an_error_on_one_rank_ends_every_rank() {
    let out = mpirun(3, &[script("fails_on_one.acc").to_str().unwrap()], &[]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_ne!(out.status.code(), Some(124), "hung:\n{stderr}");
    assert!(!out.status.success());
    assert!(!stdout.contains("after the barrier"), "{stdout}");
    assert!(
        stderr.contains("[rank 1]   × index out of bounds"),
        "{stderr}"
    );
    assert!(stderr.contains("fails_on_one.acc:4:5"), "{stderr}");
}

#[test]
fn mpi_errors_name_the_call() {
    let out = mpirun(2, &[script("bad_rank.acc").to_str().unwrap()], &[]);
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(124), "hung:\n{stderr}");
    assert!(!out.status.success());
    assert!(
        stderr.contains("MPI: the destination 2 is not a rank of this run of 2"),
        "{stderr}"
    );
    assert!(stderr.contains("bad_rank.acc:2:1"), "{stderr}");
    assert!(stderr.contains("help: the ranks are 0 to 1"), "{stderr}");

    let out = mpirun(2, &[script("mismatch.acc").to_str().unwrap()], &[]);
    let stderr = text(&out.stderr);
    assert_ne!(out.status.code(), Some(124), "hung:\n{stderr}");
    assert!(!out.status.success());
    assert!(stderr.contains("mismatch.acc:4:1"), "{stderr}");
    assert!(
        stderr.contains("the receiving section must have as many elements"),
        "{stderr}"
    );

    // One rank, not under mpirun: a receive nothing was sent for is an error, not a hang.
    let out = Command::new(env!("CARGO_BIN_EXE_acc"))
        .arg(script("mismatch.acc"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not a rank of this run of 1"));
}
