//! Lowering tests: IR text snapshots of small programs (reviewed by reading them: each one shows
//! one rule of the lowering), `ir::verify` on every module lowered here, and the
//! examples.

mod interp;

use super::{lower, lower_with, Options};
use crate::diag::render_plain;
use crate::ir::Module;
use crate::{check_source, SourceFile};

fn module(src: &str) -> Module {
    let m = lowered(src);
    // Run it too: the reference counts must balance whatever the program does.
    if let Err(e) = interp::run(&m, SMALL) {
        if e.starts_with("bug") {
            panic!("{e}\n{m}");
        }
    }
    m
}

/// `ir::verify`'s errors, one a line.
fn verified(m: &Module) -> Result<(), String> {
    crate::ir::verify(m).map_err(|errors| {
        let lines: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        lines.join("\n")
    })
}

/// Lower `src` and check that the IR is well formed.
fn lowered(src: &str) -> Module {
    let source = SourceFile::new("t.acc", src);
    let compiled = match check_source(&source) {
        Ok(c) => c,
        Err(diags) => panic!("does not compile:\n{}", render_plain(&diags, &source)),
    };
    let m = lower(&compiled.hir, &compiled.analysis);
    if let Err(e) = verified(&m) {
        panic!("ill-formed IR: {e}\n{m}");
    }
    m
}

/// Parameters that make the examples small enough for the interpreter.
const SMALL: &[(&str, f64)] = &[
    ("n", 48.0),
    ("m", 16.0),
    ("iter_max", 10.0),
    ("bins", 8.0),
    ("blocks", 2.0),
    ("cols", 10.0),
    ("rows", 8.0),
    ("generations", 3.0),
    ("width", 16.0),
    ("height", 12.0),
    ("max_iter", 20.0),
    ("nx", 8.0),
];

/// Lower and run `src`; its output, or the error.
fn run(src: &str) -> Result<String, String> {
    interp::run(&module(src), &[])
}

fn output(src: &str) -> String {
    match run(src) {
        Ok(out) => out,
        Err(e) => panic!("{e}\n{}", module(src)),
    }
}

fn ir(src: &str) -> String {
    module(src).to_string()
}

macro_rules! snap {
    ($name:ident, $src:expr) => {
        #[test]
        fn $name() {
            insta::assert_snapshot!(ir($src));
        }
    };
}

snap!(
    scalars_and_arithmetic,
    r#"
let n = 10
let x: i32 = 3
let y = x * 2 + 1
let q = n / 3 % 2
let f = 1.5 * (y as f64)
print("values:", n, y, q, f)
"#
);

snap!(
    arrays_refcounts,
    r#"
fn fresh(n: i64) -> f64[] {
    let a = zeros(n)
    let b = a
    return b
}
{
    let a = zeros(3)
    let b = a
    a = ones(4)
    b = a
    print(a, sum(fresh(2)))
    let c = fresh(5)
}
"#
);

snap!(
    compound_assignment,
    r#"
fn idx() -> i64 { return 1 }
let a = zeros(i32, 4, 4)
let s: i32 = 0
s += 2
s *= 1.5
a[idx(), 2] += 3
a[1, 1] /= 2
a[idx(), idx()] <<= 1
"#
);

snap!(
    if_expressions_and_blocks,
    r#"
fn pick(c: bool, a: f64[], b: f64[]) -> f64[] {
    return if c { a } else { b }
}
let c = true
let x = if c { 1 } else { 2 }
let y = if c { let t = zeros(2); t[0] + 5.0 } else { 0.0 }
let z = c && if c { let u = 3; u > 2 } else { false }
print(x, y, z, pick(c, zeros(1), ones(1)))
"#
);

snap!(
    loops_with_break_and_continue,
    r#"
fn find(a: i64[], v: i64) -> i64 {
    for i in 0..len(a) {
        let tmp = zeros(2)
        if a[i] == v {
            return i
        }
        if a[i] < 0 { continue }
        let more = ones(1)
        if a[i] > 100 { break }
    }
    return -1
}
let k = 0
while k < 10 {
    let w = zeros(1)
    k += 1
    if k == 5 { break }
}
for j in 10..=0 step -2 { print(j) }
print(find(iota(5), 3))
"#
);

snap!(
    while_condition_with_statements,
    r#"
let k = 0
while sum(fill(k, 2)) < 6 {
    k += 1
}
"#
);

snap!(
    functions_returning_arrays,
    r#"
fn id(a: f64[]) -> f64[] { return a }
fn make(n: i64) -> f64[] {
    let t = zeros(n)
    return t
}
fn scale(a: f64[], s: f64) {
    for i in 0..len(a) { a[i] *= s }
}
let a = make(3)
let b = id(a)
scale(id(make(2)), 2.0)
make(1)
"#
);

snap!(
    globals_in_functions,
    r#"
let g = zeros(4)
let count = 0
fn bump() {
    count += 1
    g[0] = count
    g = ones(2)
}
bump()
print(g[bump_index()], count)
fn bump_index() -> i64 { bump(); return 0 }
"#
);

snap!(
    parallel_loop_with_reduction,
    r#"
fn dot(x: f64[], y: f64[]) -> f64 {
    let s = 0.0
    acc parallel loop reduction(+: s) present(x, y)
    for i in 0..len(x) { s += x[i] * y[i] }
    return s
}
let x = ones(100)
acc data copyin(x) {
    print(dot(x, x))
}
"#
);

snap!(
    data_region_and_directives,
    r#"
let n = 100
let A = zeros(n)
let B = zeros(n)
acc data copy(A) create(B) if(n > 10) async(1) {
    acc parallel loop async(1)
    for i in 0..n { B[i] = i; A[i] = B[i] * 2.0 }
    acc update host(A[0:10]) async(1)
    acc wait(1)
}
acc enter data copyin(B)
acc exit data delete(B) finalize
acc wait
acc set device_num(0) device_type(host)
acc declare create(A)
"#
);

snap!(
    region_clauses_and_data,
    r#"
let n = 64
let a = zeros(n)
let t = zeros(4)
let s = 1
let total = 0
acc parallel num_gangs(4) vector_length(64) firstprivate(t) copy(total) if(n > 1) self(false)
{
    acc loop gang reduction(+: total)
    for i in 0..n {
        a[i] = s + i
        total += i
    }
}
acc kernels
{
    for i in 0..n { a[i] = a[i] + 1 }
}
acc parallel loop device_type(nvidia) num_gangs(1) device_type(host) num_gangs(n)
for i in 0..n { a[i] = a[i] * 2 }
acc serial loop private(s)
for i in 0..n { s = i; a[i] = s }
"#
);

snap!(
    private_arrays,
    r#"
let tmp = zeros(i64, 3)
let out = zeros(i64, 4)
acc parallel loop private(tmp)
for i in 0..4 {
    for k in 0..3 { tmp[k] = i + k }
    out[i] = tmp[0] + tmp[1] + tmp[2]
}
acc parallel num_gangs(2) private(out) firstprivate(tmp)
{
    out[0] = tmp[1]
}
"#
);

snap!(
    jacobi_step,
    r#"
let n = 8
let A = zeros(n, n)
let Anew = zeros(n, n)
let err = 1.0
acc data copy(A) create(Anew) {
    while err > 1e-6 {
        err = 0.0
        acc parallel loop reduction(max: err)
        for j in 1..n - 1 {
            acc loop reduction(max: err)
            for i in 1..n - 1 {
                Anew[j, i] = 0.25 * (A[j, i + 1] + A[j, i - 1])
                err = max(err, abs(Anew[j, i] - A[j, i]))
            }
        }
    }
}
"#
);

snap!(
    atomics,
    r#"
let n = 100
let a = zeros(i32, n)
let h = zeros(i64, 4)
let count = 0
acc parallel loop copy(h, count)
for i in 0..n {
    acc atomic update
    h[a[i] % 4] += 1
    acc atomic
    h[0] = h[0] * 2
    let slot = 0
    acc atomic capture
    { slot = count; count += 1 }
    acc atomic read
    slot = h[a[i]]
    acc atomic write
    count = 7
}
"#
);

snap!(
    routines,
    r#"
acc routine seq
fn entry(i: i64, j: i64) -> f64 { return (i + 2 * j) % 7 - 2.0 }
acc routine worker
fn row(a: f64[,], x: f64[], i: i64, n: i64) {
    let xx = 0.0
    acc loop worker reduction(+: xx)
    for j in 0..n { xx += a[i, j] }
    x[i] = xx
}
fn helper(v: f64) -> f64 { return v * 2.0 }
let n = 4
let a = zeros(n, n)
let x = zeros(n)
acc parallel loop collapse(2)
for i in 0..n {
    for j in 0..n {
        a[i, j] = helper(entry(i, j))
    }
}
acc parallel loop gang num_workers(8)
for i in 0..n { row(a, x, i, n) }
let t = 0.0
acc parallel loop collapse(2) private(t)
for i in 0..n {
    for j in 0..n {
        t = a[i, j]
        a[i, j] = t * 2.0
    }
}
"#
);

snap!(
    print_printf_assert_param,
    r#"
let n = param("n", 256)
let name = 3
printf("%s=%5d [%-4s] %.2f%%\n", "n", n, "ab", 0.5)
print("n is", n, [1, 2, 3])
assert(n > 0, "n must be positive")
assert(n != 3)
print(size(zeros(2, 3), 1), reshape(iota(6), 2, 3))
acc_copyin(zeros(3)[0:2])
exit(0)
"#
);

snap!(
    evaluation_order_spills,
    r#"
let g = zeros(3)
fn swap() -> i64 { g = ones(3); return 1 }
let k = 1
let v = g[swap()]
let w = k + if true { k = 5; k } else { 0 }
let u = g[0] + if k > 2 { g = zeros(1); 1.0 } else { 2.0 }
"#
);

#[test]
fn repl_prints_top_level_values() {
    let source = SourceFile::new(
        "t.acc",
        "let x = 2\nx + 1\nzeros(2)\nprint(x)\nacc_get_device_type()\n",
    );
    let compiled = check_source(&source).expect("compiles");
    let m = lower_with(
        &compiled.hir,
        &compiled.analysis,
        Options {
            print_values: true,
            ..Options::default()
        },
    );
    verified(&m).expect("well formed");
    insta::assert_snapshot!(m.to_string());
}

/// Every example compiles, lowers without panicking, and gives well-formed IR.
#[test]
fn examples_lower() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("no examples folder at {}", dir.display());
    };
    let mut count = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "acc") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("readable example");
        let m = module(&text);
        assert!(!m.to_string().is_empty());
        if let Err(e) = interp::run(&m, SMALL) {
            panic!("{}: {e}", path.display());
        }
        count += 1;
    }
    assert!(count > 0, "no examples found in {}", dir.display());
}

/// Deep expressions lower and print on a test thread's stack (2 MiB), in a debug build, as deep
/// as the checker goes (it overflows first: near 550 chained operators, 60 nested `if`s).
#[test]
fn deep_expressions() {
    let chain = format!("let x = 1{}\nprint(x)\n", " + 1".repeat(500));
    lowered(&chain).to_string();
    let nested = format!("let y = {}1{}\n", "(1 + ".repeat(250), ")".repeat(250));
    lowered(&nested).to_string();
    let ifs = format!(
        "let z = {}0{}\n",
        "if true { 1 + ".repeat(55),
        " } else { 0 }".repeat(55)
    );
    lowered(&ifs).to_string();
}

// ---- behaviour: the interpreter runs the IR and checks every reference count ---------------

#[test]
fn jumps_release_what_they_leave() {
    let out = output(
        r#"
fn find(a: i64[], v: i64) -> i64 {
    for i in 0..len(a) {
        let tmp = zeros(2)
        if a[i] == v { return i }
        if a[i] < 0 { continue }
        let more = ones(1)
        if a[i] > 100 { break }
    }
    return -1
}
print(find([5, -1, 3, 200, 7], 3), find([5, -1, 200, 7], 7), find(iota(4), 9))
let k = 0
while true {
    let w = zeros(1)
    k += 1
    if k < 3 { continue }
    if k == 5 { break }
}
print(k)
"#,
    );
    assert_eq!(out, "2 -1 -1\n5\n");
}

#[test]
fn arrays_are_shared_and_counted() {
    let out = output(
        r#"
let g = zeros(3)
fn swap() -> i64 { g = ones(3); return 1 }
let v = g[swap()]
print(v, g[0])
fn id(a: f64[]) -> f64[] { return a }
fn make(n: i64) -> f64[] { let t = fill(2.0, n); let u = t; return u }
let a = make(3)
let b = id(a)
b[0] = 5.0
print(a[0], sum(id(make(2))))
{ let c = a; c = make(1); a = c }
print(len(a), len(b))
a = a
b = id(id(b))
print(len(a), b[0])
"#,
    );
    assert_eq!(out, "0.0 1.0\n5.0 4.0\n1 3\n1 5.0\n");
}

#[test]
fn if_expressions_and_short_circuits() {
    let out = output(
        r#"
fn pick(c: bool, a: f64[], b: f64[]) -> f64[] { return if c { a } else { b } }
let x = pick(true, zeros(2), ones(3))
let y = if len(x) > 1 { let t = fill(3.0, 2); t[1] } else { 0.0 }
let z = false || if y > 2.0 { let u = zeros(1); u[0] == 0.0 } else { false }
print(len(x), y, z)
let w = if z { copy(x) } else { x }
w[0] = 9.0
print(x[0], w[0])
let never = false && if 1 / 0 > 0 { true } else { false }
print(never)
"#,
    );
    assert_eq!(out, "2 3.0 true\n0.0 9.0\nfalse\n");
}

#[test]
fn compound_assignment_evaluates_its_place_once() {
    let out = output(
        r#"
let calls = 0
fn idx() -> i64 { calls += 1; return 1 }
let a = zeros(i32, 3, 3)
a[idx(), idx()] += 5
a[1, 1] *= 3
let s: i32 = 7
s /= 2
s += 1.6
print(a[1, 1], calls, s)
"#,
    );
    assert_eq!(out, "15 2 4\n");
}

#[test]
fn loop_conditions_with_statements() {
    let out = output("let k = 0\nwhile sum(fill(k, 2)) < 6 { k += 1 }\nprint(k)\n");
    assert_eq!(out, "3\n");
}

#[test]
fn leaving_a_data_region_early() {
    let out = output(
        r#"
fn f(a: f64[]) -> f64 {
    let s = 0.0
    acc data copyin(a) {
        for i in 0..len(a) {
            let t = zeros(1)
            if i == 2 { return s }
            s += a[i]
        }
    }
    return -1.0
}
print(f(ones(5)))
"#,
    );
    assert_eq!(out, "2.0\n");
}

#[test]
fn regions_reductions_and_private_copies() {
    let out = output(
        r#"
let n = 10
let x = iota(n)
let s = 0
acc parallel loop reduction(+: s)
for i in 0..n { s += x[i] }
let m = 0
acc parallel loop reduction(max: m)
for i in 0..n { m = max(m, x[i] * 2) }
let t = zeros(i64, 2)
acc parallel firstprivate(t) copy(s)
{
    t[0] = 100
    s += t[0]
}
let f = 1
acc parallel
{
    f = 50
}
print(s, m, t[0], f)
"#,
    );
    assert_eq!(out, "145 18 0 1\n");
}

#[test]
fn atomic_capture_hands_out_slots() {
    let out = output(
        r#"
let count = 0
let picked = zeros(i64, 5)
acc parallel loop copy(count, picked)
for i in 0..5 {
    let slot = 0
    acc atomic capture
    { slot = count; count += 1 }
    picked[slot] = i * 10
}
print(count, picked)
"#,
    );
    assert_eq!(out, "5 [0, 10, 20, 30, 40]\n");
}

#[test]
fn run_time_errors_are_checked() {
    let bounds = run("let a = zeros(3)\nprint(a[3])\n").unwrap_err();
    assert!(
        bounds.starts_with("error: index out of bounds: index 3"),
        "{bounds}"
    );
    let div = run("let z = 0\nprint(1 / z)\n").unwrap_err();
    assert!(div.starts_with("error: integer division by zero"), "{div}");
    let assertion = run("assert(1 > 2, \"no\")\n").unwrap_err();
    assert!(
        assertion.starts_with("error: assertion failed no"),
        "{assertion}"
    );
}

/// The interpreter does catch unbalanced counts (so that the tests above mean something).
#[test]
fn interpreter_catches_count_mistakes() {
    let m = lowered("{ let a = zeros(2)\nprint(a) }\n");
    assert!(interp::run(&m, &[]).is_ok());
    let mut leaky = m.clone();
    leaky
        .main
        .body
        .retain(|s| !matches!(s, crate::ir::Stmt::Release(_)));
    let leak = interp::run(&leaky, &[]).unwrap_err();
    assert!(leak.contains("leak"), "{leak}");
    let mut twice = m.clone();
    let release = m
        .main
        .body
        .iter()
        .find(|s| matches!(s, crate::ir::Stmt::Release(_)))
        .cloned()
        .expect("a release");
    twice.main.body.push(release);
    let freed = interp::run(&twice, &[]).unwrap_err();
    assert!(freed.contains("freed"), "{freed}");
}

/// The conformance suite (LANGUAGE.md on the host device), run by the interpreter: every script
/// that compiles lowers to well-formed IR that runs without a lowering bug, and prints what its
/// `.out` says, except where the interpreter is not the language (listed with the reason).
#[test]
fn conformance_suite() {
    // Lowering, the checks and the interpreter recurse over the tree, as deep as the nesting
    // limits allow (a 2000-arm `else if` chain): on a deep stack, as the engine runs them.
    crate::with_deep_stack(conformance_suite_on_this_thread);
}

fn conformance_suite_on_this_thread() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "acc"))
        .collect();
    paths.sort();
    let mut failures = Vec::new();
    for path in &paths {
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("?")
            .to_string();
        let text = std::fs::read_to_string(path).expect("readable script");
        let source = SourceFile::new(format!("{name}.acc"), text.as_str());
        let Ok(compiled) = check_source(&source) else {
            if !name.starts_with("error_compile_") {
                failures.push(format!("{name}: does not compile"));
            }
            continue;
        };
        let m = lower(&compiled.hir, &compiled.analysis);
        if let Err(e) = verified(&m) {
            failures.push(format!("{name}: ill-formed IR: {e}"));
            continue;
        }
        let result = interp::run(&m, &[]);
        if let Err(e) = &result {
            if e.starts_with("bug") {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        }
        let first = text.lines().next().unwrap_or("");
        if let Some(expected) = first.strip_prefix("// expect-error:") {
            match result {
                Err(e) if e.contains(expected.trim()) => {}
                other => failures.push(format!(
                    "{name}: expected error `{}`, got {other:?}",
                    expected.trim()
                )),
            }
            continue;
        }
        let out = std::fs::read_to_string(path.with_extension("out")).unwrap_or_default();
        match result {
            Ok(got) if got == out => {}
            Ok(got) => failures.push(format!(
                "{name}: output differs\n--- expected\n{out}--- got\n{got}"
            )),
            Err(e) => failures.push(format!("{name}: {e}")),
        }
    }
    let stale: Vec<&str> = INTERPRETER_DIFFERS
        .iter()
        .map(|(n, _)| *n)
        .filter(|n| !failures.iter().any(|f| f.starts_with(&format!("{n}:"))))
        .collect();
    assert!(
        stale.is_empty(),
        "these now pass: remove them from INTERPRETER_DIFFERS: {stale:?}"
    );
    let unexpected: Vec<&String> = failures
        .iter()
        .filter(|f| {
            !INTERPRETER_DIFFERS
                .iter()
                .any(|(n, _)| f.starts_with(&format!("{n}:")))
        })
        .collect();
    assert!(
        unexpected.is_empty(),
        "{} of {} conformance scripts fail:\n\n{}",
        unexpected.len(),
        paths.len(),
        unexpected
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

/// Scripts whose output the test interpreter cannot reproduce, and why (not lowering bugs).
const INTERPRETER_DIFFERS: &[(&str, &str)] = &[
    (
        "builtin_random_seed",
        "the interpreter's `random` is constant",
    ),
    // The interpreter is one host device: these select an emulated device themselves.
    ("device_multi", "the interpreter has no emulated devices"),
    (
        "error_runtime_not_present",
        "the interpreter has no emulated devices",
    ),
    (
        "error_runtime_partly_present",
        "the interpreter has no emulated devices",
    ),
    (
        "error_runtime_update_absent",
        "the interpreter has no emulated devices",
    ),
    (
        "error_runtime_memcpy_d2d_absent",
        "the interpreter has no emulated devices",
    ),
    // Checks the runtime makes, not lowering.
    (
        "error_runtime_async_negative",
        "the runtime checks queue values; the interpreter has no queues",
    ),
    (
        "error_runtime_in_data_region",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_bounds",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_bounds_rank2",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_clock",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_exit",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_host_error",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_last",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_next",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_queued",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_queued_print",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_order_print",
        "the interpreter words a bounds error its own way",
    ),
    (
        "error_runtime_devices_section",
        "the runtime checks data-clause sections; the interpreter ignores data clauses",
    ),
    (
        "error_runtime_section_past_end",
        "the runtime checks data-clause sections; the interpreter ignores data clauses",
    ),
    (
        "error_runtime_section_past_end_launch",
        "the runtime checks data-clause sections; the interpreter ignores data clauses",
    ),
    (
        "error_runtime_view_section",
        "the runtime checks data-clause sections; the interpreter ignores data clauses",
    ),
    // Limits the runtime enforces, not lowering.
    (
        "directive_num_gangs_many",
        "100,000 gangs exceed the interpreter's step budget",
    ),
    (
        "directive_devices_wait",
        "its busy work (to make the later devices' blocks slow) exceeds the interpreter's step budget",
    ),
    (
        "error_runtime_num_gangs_huge",
        "the runtime checks launch sizes; the interpreter runs every gang",
    ),
    (
        "error_runtime_num_gangs_negative",
        "the runtime checks launch sizes; the interpreter runs every gang",
    ),
    (
        "error_runtime_recursion_too_deep",
        "the interpreter bounds its own call depth, below the compiled code's stack check",
    ),
    (
        "func_recursion_deep",
        "the interpreter bounds its own call depth, below the compiled code's stack check",
    ),
];

/// Line-level mutations of the examples and conformance scripts (most still compile, in shapes
/// nobody wrote): what checks lowers to well-formed IR whose counts balance when it runs.
mod mutations {
    use super::*;
    use proptest::prelude::*;

    fn corpus() -> &'static [String] {
        static CORPUS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        CORPUS.get_or_init(|| {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let mut files = Vec::new();
            for dir in ["examples", "tests/conformance"] {
                for entry in std::fs::read_dir(root.join(dir))
                    .into_iter()
                    .flatten()
                    .flatten()
                {
                    let path = entry.path();
                    if path.extension().is_some_and(|e| e == "acc") {
                        files.push(path);
                    }
                }
            }
            files.sort();
            files
                .iter()
                .filter_map(|p| std::fs::read_to_string(p).ok())
                .collect()
        })
    }

    proptest! {
        // `ACC_MUTATIONS=N` runs N cases (a longer hunt than CI's 400); `ACC_MUTATION_DUMP=DIR`
        // writes each program the interpreter ran to its end, with its output, for
        // `fuzz/interp_vs_acc.py` (docs/FUZZING.md).
        #![proptest_config(ProptestConfig {
            cases: std::env::var("ACC_MUTATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(400),
            ..ProptestConfig::default()
        })]

        #[test]
        fn mutated_scripts_lower_and_balance(
            pick in 0..10_000usize,
            edits in prop::collection::vec((0..3u8, 0..10_000usize, 0..10_000usize), 1..4),
        ) {
            let corpus = corpus();
            prop_assume!(!corpus.is_empty());
            let mut lines: Vec<&str> = corpus[pick % corpus.len()].lines().collect();
            for (kind, a, b) in edits {
                if lines.is_empty() {
                    break;
                }
                let (i, j) = (a % lines.len(), b % lines.len());
                match kind {
                    0 => {
                        lines.remove(i);
                    }
                    1 => lines.insert(j, lines[i]),
                    _ => lines.swap(i, j),
                }
            }
            let text = lines.join("\n") + "\n";
            let source = SourceFile::new("t.acc", text.as_str());
            if let Ok(compiled) = check_source(&source) {
                let m = lower(&compiled.hir, &compiled.analysis);
                if let Err(e) = verified(&m) {
                    panic!("ill-formed IR: {e}\n{text}\n{m}");
                }
                match interp::run_limited(&m, SMALL, 200_000) {
                    Err(e) if e.starts_with("bug") => panic!("{e}\n{text}\n{m}"),
                    Ok(out) => {
                        if let Some(dir) = std::env::var_os("ACC_MUTATION_DUMP") {
                            use std::hash::{Hash, Hasher};
                            let mut h = std::collections::hash_map::DefaultHasher::new();
                            text.hash(&mut h);
                            let base = std::path::Path::new(&dir).join(format!("m{:016x}", h.finish()));
                            let _ = std::fs::write(base.with_extension("acc"), &text);
                            let _ = std::fs::write(base.with_extension("out"), &out);
                        }
                    }
                    Err(_) => {}
                }
            }
        }
    }
}

/// Site ids continue from `Options::first_site` (an engine numbers them across compiles).
#[test]
fn sites_are_numbered_from_the_first_site() {
    let source = SourceFile::new("t.acc", "let a = zeros(3)\nprint(a[1] / 2)\n");
    let compiled = check_source(&source).expect("compiles");
    let m = lower_with(
        &compiled.hir,
        &compiled.analysis,
        Options {
            first_site: 40,
            ..Options::default()
        },
    );
    verified(&m).expect("well formed");
    let text = m.to_string();
    assert!(text.contains("zeros(3i64)!s40"), "{text}");
    assert!(text.contains("a[1i64]!s41"), "{text}");
    assert!(text.contains("  s41 "), "{text}");
}

/// `exit` leaves arrays of the frames it ends held; that is not a leak (found by
/// `mutated_scripts_lower_and_balance`).
#[test]
fn exit_with_arrays_held_is_not_a_leak() {
    let out = run("for i in 0..4 {\n    let a = zeros(4)\n    if i == 2 {\n        exit(1)\n    }\n    a[i] = 1.0\n}\nprint(\"unreached\")\n");
    assert_eq!(out, Ok(String::new()));
}

/// `devices(…)`: the cut split loop runs exactly the original iterations `[lo, hi)` (by
/// normalized index) for the block parameters set in the launch, whatever the loop's form.
#[test]
fn a_cut_loop_runs_its_block_of_iterations() {
    use crate::hir::Const;
    use crate::ir::{Expr, ExprKind, Stmt, Ty};
    // (loop header, the loop variable's values in order as a reference: Rust's ranges).
    let forms: Vec<(&str, Vec<i64>)> = vec![
        ("for j in 0..20", (0..20).collect()),
        ("for j in 2..=17 step 3", (2..=17).step_by(3).collect()),
        ("for j in 2..17 step 3", (2..17).step_by(3).collect()),
        ("for j in 1..n - 1", (1..19).collect()),
        ("for j in 5..5", Vec::new()),
        ("for j in 9..=3", Vec::new()),
        ("for j in 0..=0", vec![0]),
    ];
    let blocks = [(0, 0), (0, 1), (2, 5), (3, 1000), (0, i64::MAX), (25, 30)];
    for (header, values) in &forms {
        let src = format!(
            "let n = 20\nlet a = zeros(i64, n)\nacc parallel loop devices(all)\n{header} {{\n  \
             a[j] = 1\n}}\nfor i in 0..n {{\n  print(a[i])\n}}\n"
        );
        for &(lo, hi) in &blocks {
            let mut m = lowered(&src);
            let plan = m.regions[0].split.clone().expect("a plan");
            let cut = plan.split.expect("split");
            if hi == i64::MAX && header.contains("step 3") {
                // `hi` is at most `i64::MAX / step`: the host's own argument.
                continue;
            }
            let launch = m.main.body.iter_mut().find_map(|s| match s {
                Stmt::Launch(l) => Some(l),
                _ => None,
            });
            let launch = launch.expect("a launch");
            let int = |v| Expr {
                kind: ExprKind::Const(Const::I64(v)),
                ty: Ty::Scalar(crate::hir::ScalarType::I64),
            };
            launch.args[cut.lo_param] = int(lo);
            launch.args[cut.hi_param] = int(hi);
            let out = interp::run(&m, &[]).unwrap_or_else(|e| panic!("{header}: {e}\n{m}"));
            let (lo_u, hi_u) = (lo as usize, (hi as usize).min(values.len()));
            let ran: Vec<i64> = values
                .get(lo_u.min(hi_u)..hi_u)
                .unwrap_or_default()
                .to_vec();
            let expected: String = (0..20)
                .map(|i| if ran.contains(&i) { "1\n" } else { "0\n" })
                .collect();
            assert_eq!(out, expected, "{header}, block [{lo}, {hi})");
        }
    }
}

/// The host's own arguments of a cut region run the whole loop.
#[test]
fn a_cut_loop_runs_whole_with_the_host_arguments() {
    let out = output(
        "let n = 10\nlet a = zeros(i64, n)\nacc parallel loop devices(all)\n\
         for j in 1..=n - 1 step 4 {\n  a[j] = 1\n}\nfor i in 0..n {\n  print(a[i])\n}\n",
    );
    // j = 1, 5, 9.
    assert_eq!(out, "0\n1\n0\n0\n0\n1\n0\n0\n0\n1\n");
}

#[test]
fn the_ir_names_the_arrays_a_parallelized_loop_needs_distinct() {
    let text = ir("let a = zeros(8)
let b = zeros(8)
acc kernels {
    for i in 0..8 {
        a[i] = b[i] + 1.0
    }
}
");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with("distinct"))
        .unwrap_or_else(|| panic!("no distinct line in\n{text}"));
    assert!(
        line.starts_with("  distinct a b (checked at launch) !s"),
        "{line}"
    );
}
