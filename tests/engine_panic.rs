//! No panic crosses `extern "C"` (issue 14): a panic planted in a library entry point becomes
//! an internal error at the call's location, and the engine runs the next script. One test
//! only: a planted panic is process-wide (`acc_runtime::host::planted`).

use acc::{DeviceKind, Engine};
use acc_runtime::host::planted::plant_panic;

#[path = "support/engine.rs"]
mod support;
use support::engine_on;

/// Plants a panic in `function`, runs `script` as `file`, and returns the rendered error.
fn panicking_run(e: &mut Engine, function: &str, file: &str, script: &str) -> String {
    plant_panic(function);
    let err = e
        .run(file, script)
        .expect_err("the planted panic fails the run");
    assert_eq!(err.exit_code(), acc::EXIT_RUNTIME_ERROR, "{function}");
    let text = err.render(false);
    assert!(
        text.contains("the runtime panicked") && text.contains(function),
        "{function}: {text}"
    );
    text
}

#[test]
fn a_panic_in_a_library_call_is_a_located_internal_error_and_the_engine_goes_on() {
    let (mut e, out) = engine_on(DeviceKind::Host);
    e.set_param("n", "4");
    // Each case: the entry point, the script, where the error points (line:col by hand).
    let located = [
        // A function with a site parameter.
        (
            "acc_maximum_i64",
            "let a = iota(4)\nprint(maximum(a))\n",
            "a.acc:2:7",
        ),
        // Library functions without one: compiled code locates the error after the call.
        ("acc_iota", "print(1)\nlet b = iota(3)\n", "b.acc:2:9"),
        (
            "acc_param_i64",
            "let n = 2\nn = param(\"n\", 1)\n",
            "c.acc:2:5",
        ),
        // A directive entry point (host::guard).
        (
            "acc_rt_launch",
            "let c = zeros(i64, 2)\nacc parallel loop copy(c)\nfor i in 0..2 { c[i] = i }\n",
            "d.acc:2:1",
        ),
        // Printing, array literals and the other library calls that fail only by a panic.
        ("acc_print_i64", "let x = 5\n  print(x)\n", "e.acc:2:3"),
        ("acc_printf", "printf(\"%d\\n\", 1)\n", "h.acc:1:1"),
        (
            "acc_array_lit_i64",
            "let a = 1\nlet b = [a, 2]\n",
            "i.acc:2:9",
        ),
        ("acc_sum_i64", "let s = sum(iota(3))\n", "j.acc:1:9"),
        ("acc_copy", "let c = copy(iota(3))\n", "k.acc:1:9"),
        ("acc_clock", "let t = clock()\n", "l.acc:1:9"),
    ];
    for (function, script, at) in located {
        let file = at.split(':').next().unwrap();
        let text = panicking_run(&mut e, function, file, script);
        assert!(text.contains(&format!("[{at}]")), "{function}: {text}");
        // The same code runs once the panic is gone.
        e.run(file, script).expect("runs without the panic");
    }
    assert_eq!(out.take(), b"3\n1\n1\n5\n1\n");
    e.run("f.acc", "print(maximum(iota(3)) + 40)").unwrap();
    assert_eq!(out.contents(), "42\n");

    // In a gang on another thread (multicore): the gang's error is the run's.
    let (mut m, out) = engine_on(DeviceKind::Multicore);
    let script = "acc parallel loop\nfor i in 0..4 { print(i * 10) }\n";
    let text = panicking_run(&mut m, "acc_print_i64", "g.acc", script);
    assert!(text.contains("[g.acc:2:17]"), "{text}");
    // A gang's own copy of a `firstprivate` array: located at the construct.
    let private = "let a = iota(4)\nlet s = zeros(i64, 4)\nacc parallel loop firstprivate(a) copy(s)\nfor i in 0..4 { s[i] = a[i] }\n";
    let text = panicking_run(&mut m, "acc_copy", "p.acc", private);
    assert!(text.contains("[p.acc:3:1]"), "{text}");
    out.take();
    m.run("g.acc", script).unwrap();
    let mut lines: Vec<String> = out.contents().lines().map(String::from).collect();
    lines.sort();
    assert_eq!(lines, ["0", "10", "20", "30"]);
}
