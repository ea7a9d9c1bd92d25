//! Robustness through the embedding API (issue 14): run-time values that make no sense are
//! located errors on every host device, and the engine goes on.

use acc::DeviceKind;

#[path = "support/engine.rs"]
mod support;
use support::engine_on;

const DEVICES: [DeviceKind; 3] = [
    DeviceKind::Host,
    DeviceKind::Multicore,
    DeviceKind::Emulated,
];

/// A step that `--set` makes 0: host code, a gang loop, a `seq` loop in a region and a routine
/// each report it at the step expression (line and column counted by hand), and the engine
/// then runs the same code with a good step.
#[test]
fn a_zero_step_from_a_parameter_is_located_on_every_device() {
    let script = "\
let s: i64 = param(\"s\", 1)
acc routine seq
fn count(n: i64, st: i64) -> i64 {
    let c: i64 = 0
    for k in 0..n step st { c += 1 }
    return c
}
let a = zeros(i64, 4)
let where_: i64 = param(\"where\", 0)
if where_ == 0 {
    for i in 0..4 step s { a[i] = 1 }
}
if where_ == 1 {
    acc parallel loop copy(a)
    for i in 0..4 step s { a[i] = 2 }
}
if where_ == 2 {
    acc parallel loop copy(a)
    for i in 0..4 {
        acc loop seq
        for j in 0..i step s { a[i] += 1 }
    }
}
if where_ == 3 {
    acc parallel loop copy(a)
    for i in 0..4 { a[i] = count(i, s) }
}
print(a)
";
    // (where, line:col of the step)
    let cases = [(0, "11:24"), (1, "15:24"), (2, "21:28"), (3, "5:24")];
    for kind in DEVICES {
        let (mut e, out) = engine_on(kind);
        for (w, at) in cases {
            e.set_param("where", &w.to_string());
            e.set_param("s", "0");
            let err = e.run("z.acc", script).expect_err("a zero step fails");
            assert_eq!(err.exit_code(), acc::EXIT_RUNTIME_ERROR);
            let text = err.render(false);
            assert!(
                text.contains("a `for` loop with a step of 0"),
                "{kind:?} {w}: {text}"
            );
            assert!(
                text.contains(&format!("z.acc:{at}]")),
                "{kind:?} {w}: {text}"
            );
            e.set_param("s", "1");
            e.run("z.acc", script).expect("a step of 1 runs");
        }
        assert_eq!(
            out.contents(),
            "[1, 1, 1, 1]\n[2, 2, 2, 2]\n[0, 1, 2, 3]\n[0, 1, 2, 3]\n",
            "{kind:?}"
        );
    }
}
