//! The embedding API: state across runs, errors, and memory over many runs.

use acc::Engine;
use acc_runtime::host::SharedBuffer;

fn engine() -> (Engine, SharedBuffer) {
    let out = SharedBuffer::new();
    let engine = Engine::with_output(Box::new(out.clone())).expect("engine");
    (engine, out)
}

#[test]
fn later_runs_see_earlier_globals_and_functions() {
    let (mut e, out) = engine();
    e.run(
        "a.acc",
        "let x = 20\nfn twice(v: i64) -> i64 { return 2 * v }",
    )
    .unwrap();
    e.run("b.acc", "print(twice(x) + 2)").unwrap();
    assert_eq!(out.contents(), "42\n");
}

#[test]
fn errors_leave_the_engine_usable() {
    let (mut e, out) = engine();
    let err = e.run("a.acc", "let a = zeros(2)\nprint(a[2])").unwrap_err();
    assert_eq!(err.exit_code(), acc::EXIT_RUNTIME_ERROR);
    assert!(err.render(false).contains("index out of bounds"), "{err}");
    let err = e.run("b.acc", "print(nope)").unwrap_err();
    assert_eq!(err.exit_code(), acc::EXIT_COMPILE_ERROR);
    e.run("c.acc", "print(len(a))").unwrap();
    assert_eq!(out.contents(), "2\n");
}

#[test]
fn params_reach_the_script() {
    let (mut e, out) = engine();
    e.set_param("n", "7");
    e.run("p.acc", "print(param(\"n\", 1) * 2, param(\"m\", 1.5))")
        .unwrap();
    assert_eq!(out.contents(), "14 1.5\n");
}

#[test]
fn runaway_recursion_is_an_error_the_engine_survives() {
    let (mut e, out) = engine();
    let err = e
        .run(
            "a.acc",
            "fn f(n: i64) -> i64 { return f(n + 1) + 1 }\nprint(f(0))",
        )
        .unwrap_err();
    assert_eq!(err.exit_code(), acc::EXIT_RUNTIME_ERROR);
    let text = err.render(false);
    assert!(text.contains("recursion too deep"), "{text}");
    assert!(text.contains("a.acc:1:4"), "{text}");
    // The engine goes on, and so does deep recursion that ends, on another thread too.
    e.run(
        "b.acc",
        "fn d(n: i64) -> i64 { if n == 0 { return 0 }\nreturn d(n - 1) + 1 }\nprint(d(50000))",
    )
    .unwrap();
    let mut e = std::thread::spawn(move || {
        e.run("c.acc", "print(f(0))").unwrap_err();
        e.run("d.acc", "print(d(1000))").unwrap();
        e
    })
    .join()
    .unwrap();
    e.run("e.acc", "print(7)").unwrap();
    assert_eq!(out.contents(), "50000\n1000\n7\n");
}
