//! A run-time error (or `exit`) inside a data construct undoes the construct's data
//! environment, as leaving it would (LANGUAGE.md 7.4 and 9): nothing stays present in the
//! engine, so a later construct of the same engine (a REPL session) copies its data again. A
//! file of its own: the live-array counter is global to the process.

use acc::{DeviceKind, Error};

#[path = "support/engine.rs"]
mod support;
use support::engine_on;

/// Held by every test: they count live arrays, a counter global to the process.
static ALONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

const DEVICES: [DeviceKind; 3] = [
    DeviceKind::Host,
    DeviceKind::Multicore,
    DeviceKind::Emulated,
];

/// The region writes 5.0 everywhere on the device, then fails on the host.
const FAILING: &str = "let a = zeros(10)
acc data copy(a) {
    acc parallel loop
    for i in 0..10 { a[i] = 5.0 }
    let z = a[20]
}
";

#[test]
fn a_construct_after_an_error_in_a_data_region_copies_its_data_again() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    for kind in DEVICES {
        let (mut e, out) = engine_on(kind);
        let err = e.run("fail.acc", FAILING).unwrap_err();
        let text = err.render(false);
        assert!(
            text.contains("index out of bounds: index 20 for `a` of length 10"),
            "{kind:?}: {text}"
        );
        assert!(text.contains("fail.acc:5"), "{kind:?}: {text}");
        assert_eq!(e.present_arrays(), 0, "{kind:?}: `a` left present");
        // The region's copy-out ran while unwinding: the host sees what the device wrote
        // before the error, as on the devices that share host memory.
        e.run("print.acc", "print(a)\n").expect("runs");
        assert_eq!(
            out.take(),
            format!("[{}]\n", ["5.0"; 10].join(", ")).as_bytes(),
            "{kind:?}"
        );
        // `copy(a)` copies in and out again: 70.0, not a stale 0.0 or 5.0.
        let later = "acc parallel loop copy(a)
for i in 0..10 { a[i] = a[i] * 14.0 }
print(a[0], a[9], acc_is_present(a))
";
        e.run("later.acc", later).expect("runs");
        let present = kind != DeviceKind::Emulated;
        assert_eq!(
            out.take(),
            format!("70.0 70.0 {present}\n").as_bytes(),
            "{kind:?}"
        );
        assert_eq!(e.present_arrays(), 0);
    }
}

#[test]
fn nested_regions_exit_and_enter_data_stay() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (mut e, out) = engine_on(DeviceKind::Emulated);
    // `b` entered dynamically stays present across the error; the regions' references go.
    let script = "let a = ones(4)
let b = ones(4)
acc enter data copyin(b)
acc data copy(a) present(b) {
    acc data create(b) copyin(a) {
        acc parallel loop
        for i in 0..4 { a[i] = 2.0; b[i] = 3.0 }
        exit(3)
    }
}
";
    match e.run("exit.acc", script) {
        Err(Error::Exit(3)) => {}
        other => panic!("expected exit 3, got {other:?}"),
    }
    assert_eq!(e.present_arrays(), 1, "only `b` stays");
    e.run(
        "after.acc",
        "print(a, acc_is_present(a), acc_is_present(b))
acc exit data copyout(b)
print(b, acc_is_present(b))
",
    )
    .expect("runs");
    assert_eq!(
        out.take(),
        b"[2.0, 2.0, 2.0, 2.0] false true\n[3.0, 3.0, 3.0, 3.0] false\n"
    );
    assert_eq!(e.present_arrays(), 0);
}

#[test]
fn a_failed_entry_undoes_the_clauses_entered_before_it() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    let (mut e, _) = engine_on(DeviceKind::Emulated);
    // `copy(a)` enters, then `present(b)` fails: `a` leaves again.
    let script = "let a = ones(4)
let b = ones(4)
acc data copy(a) present(b) {
    print(1)
}
";
    let err = e.run("entry.acc", script).unwrap_err();
    assert!(
        err.render(false)
            .contains("`b` is not present on emulated:0"),
        "{}",
        err.render(false)
    );
    assert_eq!(e.present_arrays(), 0);
    // The same for a compute construct's clauses.
    let script = "let c = ones(4)
let d = ones(4)
acc parallel loop copy(c) present(d)
for i in 0..4 { c[i] = d[i] }
";
    assert!(e.run("launch.acc", script).is_err());
    assert_eq!(e.present_arrays(), 0);
}

/// Arrays made and not freed over `runs` failing runs of `FAILING` on `kind`.
fn arrays_left(kind: DeviceKind, runs: usize) -> usize {
    let (mut e, out) = engine_on(kind);
    assert!(e.run("fail.acc", FAILING).is_err());
    let arrays = acc_runtime::array::live_arrays();
    for _ in 0..runs {
        assert!(e.run("fail.acc", FAILING).is_err());
    }
    assert_eq!(e.present_arrays(), 0, "entries left in the presence table");
    let left = acc_runtime::array::live_arrays().saturating_sub(arrays);
    e.run("print.acc", "print(a[0])\n").expect("runs");
    assert_eq!(out.take(), b"5.0\n");
    left
}

#[test]
fn ten_thousand_failing_runs_leave_nothing_present() {
    let _alone = ALONE.lock().unwrap_or_else(|e| e.into_inner());
    // The emulated device frees every device copy and presence entry it made. (Compiled code
    // does not release the local array references of a function an error leaves, on any
    // device: the region's own reference on `a` is one per failed run, on `host` too.)
    let host = arrays_left(DeviceKind::Host, 10_000);
    let emulated = arrays_left(DeviceKind::Emulated, 10_000);
    assert_eq!(emulated, host, "device copies leaked");
}
