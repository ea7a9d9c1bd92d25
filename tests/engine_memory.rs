//! Memory over many runs of one engine. A file of its own: the live-array counter is global to
//! the process, so no other test may allocate arrays while one counts (the tests here take
//! turns through `serial`).

use acc::Engine;
use acc_runtime::host::SharedBuffer;

/// Held by each test while it runs: they count the process's arrays and memory.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

#[path = "support/memory.rs"]
mod memory;
use memory::rss;

#[test]
fn running_a_script_10000_times_leaves_memory_flat() {
    let _serial = serial();
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    let script = "let a = fill(1.0, 1000)\nlet s = 0.0\nfor i in 0..len(a) { s += a[i] }\n\
                  fn scaled(v: f64[], k: f64) -> f64[] { let b = copy(v)\n for i in 0..len(b) { b[i] *= k }\n return b }\n\
                  let t = scaled(a, 2.0)\nassert(sum(t) == 2.0 * s)\n";
    for _ in 0..1_000 {
        e.run("loop.acc", script).unwrap();
    }
    let arrays = acc_runtime::array::live_arrays();
    let before = rss();
    for _ in 0..10_000 {
        e.run("loop.acc", script).unwrap();
    }
    let grown = rss().saturating_sub(before);
    assert_eq!(acc_runtime::array::live_arrays(), arrays, "arrays leaked");
    assert!(grown < 4 << 20, "resident memory grew by {grown} bytes");
    assert_eq!(out.contents(), "");
}

/// Distinct texts: nothing is cached, every run compiles. Its code, sources and sites go when
/// it has run (the setup's function stays: a name refers to it).
#[test]
fn distinct_runs_free_their_code_and_leave_memory_flat() {
    let _serial = serial();
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.run(
        "setup.acc",
        "let a = fill(1.0, 64)\nlet s = 0.0\nfn twice(x: f64) -> f64 { return 2.0 * x }\n",
    )
    .unwrap();
    let run = |e: &mut Engine, i: usize| {
        let text = format!(
            "s = 0.0\nacc parallel loop reduction(+: s)\nfor j in 0..len(a) {{ s += twice(a[j]) + {i}.0 }}\nassert(s == {})\n",
            64 * (2 + i)
        );
        e.run(&format!("run{i}.acc"), &text).unwrap();
    };
    for i in 0..300 {
        run(&mut e, i);
    }
    let (arrays, slots) = (acc_runtime::array::live_arrays(), e.global_slots());
    let before = rss();
    for i in 300..3_300 {
        run(&mut e, i);
    }
    let grown = rss().saturating_sub(before);
    // The setup's unit (`twice`) and the last run's, kept to run it again.
    assert_eq!(e.code_units(), 2);
    assert_eq!(e.global_slots(), slots, "global slots leaked");
    assert_eq!(acc_runtime::array::live_arrays(), arrays, "arrays leaked");
    // Each run kept about 18 kB before its code was freed (54 MB here).
    assert!(grown < 6 << 20, "resident memory grew by {grown} bytes");
    assert_eq!(out.contents(), "");
}

/// A redefined function's code lives while live code calls it, and goes with its last caller.
#[test]
fn a_redefined_function_frees_its_code_when_nothing_calls_it() {
    let _serial = serial();
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.run("1.acc", "fn f() -> i64 { return 1 }").unwrap();
    e.run("2.acc", "fn g() -> i64 { return 10 * f() }").unwrap();
    assert_eq!(e.code_units(), 2);
    e.run("3.acc", "fn f() -> i64 { return 2 }").unwrap();
    // The old `f` stays: `g` calls it.
    assert_eq!(e.code_units(), 3);
    e.run("4.acc", "print(g(), f())").unwrap();
    assert_eq!(out.take(), b"10 2\n");
    // The last script is kept until another runs; `print` declares nothing.
    e.run("5.acc", "fn g() -> i64 { return 100 * f() }")
        .unwrap();
    // The old `g` and the old `f` go: units of 3.acc and 5.acc are left.
    assert_eq!(e.code_units(), 2);
    e.run("6.acc", "print(g())").unwrap();
    assert_eq!(out.take(), b"200\n");
}

/// A global declared again releases the old one's array once no live code uses it.
#[test]
fn a_global_declared_again_releases_its_array() {
    let _serial = serial();
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.run("0.acc", "let keep = 1").unwrap();
    let arrays = acc_runtime::array::live_arrays();
    for i in 0..50 {
        e.run(&format!("{i}.acc"), &format!("let a = fill({i}.0, 1000)"))
            .unwrap();
    }
    e.run("f.acc", "fn first(v: f64[]) -> f64 { return v[0] }")
        .unwrap();
    e.run("p.acc", "print(first(a))").unwrap();
    assert_eq!(out.take(), b"49.0\n");
    // `a` of the last `let` only, and slots for `keep` and `a`.
    assert_eq!(acc_runtime::array::live_arrays(), arrays + 1);
    assert_eq!(e.global_slots(), 2);
    // A function that uses a global keeps it while the function is live.
    e.run("g.acc", "fn head() -> f64 { return a[0] }").unwrap();
    e.run("a.acc", "let a = fill(7.0, 10)").unwrap();
    e.run("h.acc", "print(head(), a[0])").unwrap();
    assert_eq!(out.take(), b"49.0 7.0\n");
    assert_eq!(acc_runtime::array::live_arrays(), arrays + 2);
}

/// A run that fails frees its code too; an error in a function of an earlier run still points
/// into that run's source after many runs in between.
#[test]
fn failed_runs_free_their_code_and_old_functions_keep_their_sources() {
    let _serial = serial();
    let out = SharedBuffer::new();
    let mut e = Engine::with_output(Box::new(out.clone())).expect("engine");
    e.run(
        "lib.acc",
        "let small = fill(1.0, 2)\nfn at(v: f64[], i: i64) -> f64 {\n  return v[i]\n}\n",
    )
    .unwrap();
    for i in 0..200 {
        let err = e
            .run(&format!("bad{i}.acc"), &format!("print(small[{i} + 2])"))
            .unwrap_err();
        assert!(err.render(false).contains("out of bounds"), "{err}");
        assert!(
            err.render(false).contains(&format!("bad{i}.acc:1:")),
            "{err}"
        );
    }
    assert_eq!(e.code_units(), 2);
    let err = e
        .run("call.acc", "let v = fill(1.0, 3)\nprint(at(v, 5))")
        .unwrap_err();
    let shown = err.render(false);
    assert!(shown.contains("lib.acc:3:"), "{shown}");
}
