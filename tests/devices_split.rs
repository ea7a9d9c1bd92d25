//! `devices(…)` (LANGUAGE.md 7.11) carried out by the runtime on three emulated devices: that
//! the work really is split (launches on every device), that each row crosses only as often as
//! the design says (counted by hand below from the block split), and that the answers are the
//! sequential ones, computed here in Rust.

use acc::{Array, DeviceKind, DeviceOptions, Engine};
use acc_runtime::host::SharedBuffer;

fn three_devices() -> (Engine, SharedBuffer) {
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.set_devices(
        DeviceOptions::new()
            .device(DeviceKind::Emulated, 0)
            .emulated_devices(3)
            .profile(true),
    );
    (e, out)
}

/// The site of `construct` at `line`.
fn site(e: &mut Engine, construct: &str, line: u32) -> acc::ProfileSite {
    e.profile_sites()
        .into_iter()
        .find(|s| s.construct == construct && s.line == line)
        .unwrap_or_else(|| panic!("no `{construct}` at line {line}"))
}

const JACOBI: &str = "\
let n = 12
let m = 5
let A = zeros(n, m)
let Anew = zeros(n, m)
for i in 0..m {
    A[0, i] = 1.0
}
let err = 0.0
acc data copy(A) create(Anew) devices(all) {
    for it in 0..4 {
        err = 0.0
        acc parallel loop devices(all) reduction(max: err)
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1] + A[j - 1, i] + A[j + 1, i])
                err = max(err, abs(Anew[j, i] - A[j, i]))
            }
        }
        acc parallel loop devices(all)
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                A[j, i] = Anew[j, i]
            }
        }
    }
}
";

/// The same sweeps in Rust, in the script's order of operations.
fn jacobi_reference(n: usize, m: usize, sweeps: usize) -> (Vec<f64>, f64) {
    let mut a = vec![0.0f64; n * m];
    let mut anew = vec![0.0f64; n * m];
    a[..m].fill(1.0);
    let mut err = 0.0f64;
    for _ in 0..sweeps {
        err = 0.0;
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                let v = 0.25
                    * (a[j * m + i + 1]
                        + a[j * m + i - 1]
                        + a[(j - 1) * m + i]
                        + a[(j + 1) * m + i]);
                anew[j * m + i] = v;
                err = err.max((v - a[j * m + i]).abs());
            }
        }
        for j in 1..n - 1 {
            for i in 1..m - 1 {
                a[j * m + i] = anew[j * m + i];
            }
        }
    }
    (a, err)
}

#[test]
fn a_jacobi_split_over_three_devices_moves_each_row_once_and_only_halos_after() {
    let (mut e, _) = three_devices();
    e.run("jacobi.acc", JACOBI).unwrap();
    let a: Array<f64> = e.global("A").unwrap();
    let err: f64 = e.global("err").unwrap();
    let (want, want_err) = jacobi_reference(12, 5, 4);
    assert_eq!(a.to_vec(), want);
    assert_eq!(err, want_err);

    let row = 5 * 8;
    // `copy(A)` deals A's 12 rows out once (4 per device) and brings back the 10 rows the
    // sweeps wrote (rows 0 and 11 stay the host's); `create(Anew)` moves nothing.
    let data_a = site(&mut e, "A", 9);
    assert_eq!(data_a.stats.uploads.bytes, 12 * row);
    assert_eq!(data_a.stats.downloads.bytes, 10 * row);
    let devices: Vec<String> = data_a
        .stats
        .devices
        .iter()
        .map(|d| format!("{}:{}", d.kind, d.num))
        .collect();
    assert_eq!(devices, ["emulated:0", "emulated:1", "emulated:2"]);
    let anew_moved: u64 = (e.profile_sites().iter())
        .filter(|s| s.construct == "Anew")
        .map(|s| s.stats.uploads.bytes + s.stats.downloads.bytes)
        .sum();
    assert_eq!(anew_moved, 0);

    // The stencil: 4 sweeps, one launch per device each. Its loop runs j = 1..=10 in blocks
    // 1..=4, 5..=7, 8..=10 and reads rows j-1..=j+1: blocks need rows 0..=5, 4..=8, 7..=11.
    // Sweep 1, after the deal (rows 0-3, 4-7, 8-11): device 0 takes rows 4 and 5 from device
    // 1, device 1 row 8 from device 2, device 2 row 7 from device 1: 4 rows. The copy loop
    // reads and writes only its own rows of Anew and A, so it fetches nothing, but its writes
    // of rows 1-4, 5-7, 8-10 make the neighbours' halo copies stale, and the writers send
    // them at once: device 0 row 4 to device 1, device 1 row 5 to device 0 and row 7 to
    // device 2, device 2 row 8 to device 1: 4 rows a sweep, and later stencils fetch nothing.
    let stencil = site(&mut e, "parallel loop", 12);
    assert_eq!(stencil.stats.launches.count, 12);
    assert_eq!(stencil.stats.peers.bytes, 4 * row);
    let copy = site(&mut e, "parallel loop", 19);
    assert_eq!(copy.stats.launches.count, 12);
    assert_eq!(copy.stats.peers.bytes, 4 * 4 * row);
}

#[test]
fn clauses_outside_a_devices_region_move_each_block_its_rows() {
    let (mut e, _) = three_devices();
    let script = "\
let n = 10
let x = zeros(n)
let y = zeros(n)
for i in 0..n {
    x[i] = i
    y[i] = 100 * i
}
acc parallel loop devices(all) copyin(x) copy(y)
for i in 0..n {
    y[i] = 2.0 * x[i] + y[i]
}
";
    e.run("saxpy.acc", script).unwrap();
    let y: Array<f64> = e.global("y").unwrap();
    let want: Vec<f64> = (0..10).map(|i| 2.0 * i as f64 + 100.0 * i as f64).collect();
    assert_eq!(y.to_vec(), want);
    // Blocks of 4, 3 and 3 elements: every element of x and y goes to one device, and y's
    // come back once; x, only read, does not come back.
    let x = site(&mut e, "x", 8);
    assert_eq!((x.stats.uploads.bytes, x.stats.downloads.bytes), (80, 0));
    assert_eq!(x.stats.uploads.count(), 3);
    let y = site(&mut e, "y", 8);
    assert_eq!((y.stats.uploads.bytes, y.stats.downloads.bytes), (80, 80));
    assert_eq!(site(&mut e, "parallel loop", 8).stats.launches.count, 3);
}

#[test]
fn an_error_in_one_devices_block_names_the_device_and_the_global_index() {
    let (mut e, _) = three_devices();
    let script = "\
let n = 10
let a = zeros(n)
acc parallel loop devices(all) copy(a)
for i in 0..n {
    a[i + 1] = 1.0
}
";
    let err = e.run("oob.acc", script).unwrap_err().to_string();
    // Blocks i = 0..=3, 4..=6, 7..=9: only the last reaches a[10].
    assert!(
        err.contains("index 10 for `a` of length 10 (on emulated:2, which ran iterations 7 to 9"),
        "{err}"
    );
    assert!(err.contains("oob.acc:5:5"), "{err}");
    // The engine goes on, with nothing left on the devices.
    e.run(
        "next.acc",
        "let b = zeros(3)\nacc parallel loop devices(all) copy(b)\nfor i in 0..3 { b[i] = i }",
    )
    .unwrap();
    let b: Array<f64> = e.global("b").unwrap();
    assert_eq!(b.to_vec(), [0.0, 1.0, 2.0]);
}

#[test]
fn an_error_in_the_only_part_names_its_device_unless_it_is_the_current_one() {
    let (mut e, _) = three_devices();
    // The whole loop runs on device 2 (not the current device 0): its error says so.
    let on_two = "\
let a = zeros(4)
acc parallel loop devices(2) copy(a)
for i in 0..4 {
    a[i + 1] = 1.0
}
";
    let err = e.run("two.acc", on_two).unwrap_err().to_string();
    assert!(
        err.contains("index 4 for `a` of length 4 (on emulated:2, which ran iterations 0 to 3"),
        "{err}"
    );
    // On the current device alone it fails as it would without the clause.
    let err = e
        .run("zero.acc", &on_two.replace("devices(2)", "devices(0)"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("index 4 for `a` of length 4"), "{err}");
    assert!(!err.contains("on emulated:"), "{err}");
}

#[test]
fn sums_and_maxima_combine_across_devices_in_order() {
    let (mut e, _) = three_devices();
    let script = "\
let n = 1000
let total = 7
let biggest = -1
acc parallel loop devices(all) reduction(+: total) reduction(max: biggest)
for i in 0..n {
    total += i
    biggest = max(biggest, (i * 37) % 1000)
}
";
    e.run("red.acc", script).unwrap();
    let total: i64 = e.global("total").unwrap();
    let biggest: i64 = e.global("biggest").unwrap();
    assert_eq!(total, 7 + 999 * 1000 / 2);
    assert_eq!(
        biggest,
        (0..1000i64).map(|i| (i * 37) % 1000).max().unwrap()
    );
    assert_eq!(site(&mut e, "parallel loop", 4).stats.launches.count, 3);
}
