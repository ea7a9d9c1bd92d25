//! Source-text tests for the structural directive rules: each rule rejects what it should, with
//! the message and the primary span asserted, and accepts the legal neighbours.

use crate::diag::Diagnostic;
use crate::span::SourceFile;

fn diags(src: &str) -> Vec<Diagnostic> {
    let file = SourceFile::new("t.acc", src);
    let program = match crate::parse(&file) {
        Ok(p) => p,
        Err(e) => panic!("test source does not parse: {e:#?}\n{src}"),
    };
    super::validate(&program)
}

/// Asserts exactly one error, whose message contains `message` and whose primary span covers
/// exactly `at`; returns it for further checks.
#[track_caller]
fn error(src: &str, message: &str, at: &str) -> Diagnostic {
    crate::test_util::single_error(&diags(src), src, message, at)
}

#[track_caller]
fn clean(src: &str) {
    let ds = diags(src);
    assert!(
        ds.is_empty(),
        "expected no diagnostics, got {:#?}\n{src}",
        ds
    );
}

const PRE: &str = "let n = 100\nlet a = zeros(n)\nlet b = zeros(n)\nlet s = 0.0\n";

fn with_pre(body: &str) -> String {
    format!("{PRE}{body}")
}

// ---------------------------------------------------------------------------------------------
// Clauses per construct
// ---------------------------------------------------------------------------------------------

#[test]
fn num_gangs_not_on_loop() {
    let src =
        with_pre("acc parallel {\n  acc loop num_gangs(4)\n  for i in 0..n { a[i] = 1.0 }\n}\n");
    let d = error(
        &src,
        "`num_gangs` is not allowed on `acc loop`",
        "num_gangs",
    );
    assert!(d.help.unwrap().contains("enclosing compute construct"));
}

#[test]
fn collapse_not_on_parallel_without_loop() {
    let src = with_pre("acc parallel collapse(2) {\n  a[0] = 1.0\n}\n");
    let d = error(
        &src,
        "`collapse` is not allowed on `acc parallel`",
        "collapse",
    );
    assert!(d.help.unwrap().contains("acc parallel loop collapse"));
}

#[test]
fn finalize_only_on_exit_data() {
    let d = error(
        &with_pre("acc update host(a) finalize\n"),
        "`finalize` is not allowed on `acc update`",
        "finalize",
    );
    assert!(d.help.unwrap().contains("exit data"));
    clean(&with_pre(
        "acc enter data copyin(a)\nacc exit data delete(a) finalize\n",
    ));
}

#[test]
fn delete_only_on_exit_data() {
    error(
        &with_pre("acc data delete(a) {\n  a[0] = 1.0\n}\n"),
        "`delete` is not allowed on `acc data`",
        "delete",
    );
    error(
        &with_pre("acc enter data delete(a)\n"),
        "`delete` is not allowed on `acc enter data`",
        "delete",
    );
}

#[test]
fn enter_and_exit_data_directions() {
    let d = error(
        &with_pre("acc enter data copyout(a)\n"),
        "`copyout` is not allowed on `acc enter data`",
        "copyout",
    );
    assert!(d.help.unwrap().contains("exit data"));
    let d = error(
        &with_pre("acc exit data copyin(a)\n"),
        "`copyin` is not allowed on `acc exit data`",
        "copyin",
    );
    assert!(d.help.unwrap().contains("enter data"));
    error(
        &with_pre("acc enter data present(a)\n"),
        "`present` is not allowed on `acc enter data`",
        "present",
    );
    clean(&with_pre("acc enter data copyin(a) create(b) async(1) wait(2) if(n > 0)\nacc exit data copyout(a) delete(b) async(1)\n"));
}

#[test]
fn if_present_only_on_update() {
    error(
        &with_pre("acc parallel if_present {\n  a[0] = 1.0\n}\n"),
        "`if_present` is not allowed on `acc parallel`",
        "if_present",
    );
    clean(&with_pre(
        "acc update host(a) if_present async(3) wait(1)\n",
    ));
}

#[test]
fn levels_only_on_loops_and_routines() {
    let d = error(
        &with_pre("acc parallel gang {\n  a[0] = 1.0\n}\n"),
        "`gang` is not allowed on `acc parallel`",
        "gang",
    );
    assert!(d.help.unwrap().contains("acc parallel loop gang"));
    error(
        &with_pre("acc data copy(a) seq {\n  a[0] = 1.0\n}\n"),
        "`seq` is not allowed on `acc data`",
        "seq",
    );
    error(
        &with_pre("acc update host(a) vector\n"),
        "`vector` is not allowed on `acc update`",
        "vector",
    );
}

#[test]
fn combined_constructs_take_both_parts() {
    clean(&with_pre(
        "acc parallel loop gang vector num_gangs(4) vector_length(128) collapse(1) copy(a) private(s) async(1) wait(2) if(n > 1) default(present)\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    clean(&with_pre(
        "acc kernels loop independent reduction(+: s) copyin(a)\nfor i in 0..n { s += a[i] }\n",
    ));
    clean(&with_pre(
        "acc serial loop reduction(+: s)\nfor i in 0..n { s += a[i] }\n",
    ));
}

#[test]
fn reduction_not_on_kernels() {
    error(
        &with_pre("acc kernels reduction(+: s) {\n  s += 1.0\n}\n"),
        "`reduction` is not allowed on `acc kernels`",
        "reduction",
    );
}

#[test]
fn serial_takes_no_sizes() {
    let d = error(
        &with_pre("acc serial num_gangs(2) {\n  a[0] = 1.0\n}\n"),
        "`num_gangs` is not allowed on `acc serial`",
        "num_gangs",
    );
    assert!(d.help.unwrap().contains("one gang"));
}

#[test]
fn atomic_takes_no_clauses() {
    let src = "let x = 0\nacc parallel {\n  acc atomic update async(1)\n  x += 1\n}\n";
    error(
        src,
        "`async` is not allowed on `acc atomic update`",
        "async",
    );
}

#[test]
fn device_type_scopes_clauses() {
    clean(&with_pre(
        "acc parallel loop num_gangs(8) device_type(nvidia) num_gangs(64) vector_length(256) device_type(host) num_gangs(1)\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    let d = error(
        &with_pre("acc parallel device_type(nvidia) private(s) {\n  s = 1.0\n}\n"),
        "`private` may not follow `device_type` on `acc parallel`",
        "private",
    );
    assert_eq!(d.labels.len(), 2);
    error(
        &with_pre("acc serial device_type(nvidia) num_gangs(2) {\n  a[0] = 1.0\n}\n"),
        "`num_gangs` is not allowed on `acc serial`",
        "num_gangs",
    );
    error(
        &with_pre("acc enter data device_type(nvidia) copyin(a)\n"),
        "`device_type` is not allowed on `acc enter data`",
        "device_type",
    );
}

#[test]
fn repeated_clauses() {
    let src = with_pre("acc parallel num_gangs(2) num_gangs(4) {\n  a[0] = 1.0\n}\n");
    let d = error(
        &src,
        "`num_gangs` appears more than once on `acc parallel`",
        "num_gangs",
    );
    assert_eq!(d.span().start as usize, src.rfind("num_gangs").unwrap());
    error(
        &with_pre("acc parallel default(none) default(present) {\n  a[0] = 1.0\n}\n"),
        "`default` appears more than once",
        "default",
    );
    error(
        &with_pre("acc parallel loop collapse(1) collapse(1)\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`collapse` appears more than once",
        "collapse",
    );
    // The same clause may be given again for a device type.
    clean(&with_pre(
        "acc parallel num_gangs(2) device_type(nvidia) num_gangs(4) {\n  a[0] = 1.0\n}\n",
    ));
}

#[test]
fn exclusive_loop_clauses() {
    let d = error(
        &with_pre("acc parallel loop seq gang\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`seq` and `gang` cannot both appear on `acc parallel loop`",
        "gang",
    );
    assert!(d.help.unwrap().contains("sequentially"));
    error(
        &with_pre("acc parallel loop independent seq\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`independent` and `seq` cannot both appear",
        "seq",
    );
    error(
        &with_pre("acc kernels loop auto independent\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`auto` and `independent` cannot both appear",
        "independent",
    );
    error(
        &with_pre("acc parallel loop collapse(2) tile(4, 4)\nfor i in 0..n {\n  for j in 0..n { a[i] = 1.0 }\n}\n"),
        "`collapse` and `tile` cannot both appear",
        "tile",
    );
    clean(&with_pre(
        "acc parallel loop gang worker vector\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
}

#[test]
fn routine_has_one_level() {
    error(
        "acc routine seq vector\nfn f(x: f64) -> f64 { return x }\n",
        "`seq` and `vector` cannot both appear on `acc routine`",
        "vector",
    );
    error(
        "acc routine gang(4)\nfn f(x: f64) -> f64 { return x }\n",
        "`gang` on `acc routine` takes no argument",
        "4",
    );
    clean("acc routine vector\nfn f(x: f64) -> f64 { return x }\n");
    clean("acc routine\nfn g(x: f64) -> f64 { return x }\n");
}

#[test]
fn constructs_needing_clauses() {
    let d = error(
        &with_pre("acc update if_present\n"),
        "`acc update` needs a `host(…)`, `self(…)` or `device(…)` clause",
        "acc update if_present",
    );
    assert!(d.help.unwrap().contains("host(a)"));
    error(
        &with_pre("acc enter data async(1)\n"),
        "`acc enter data` needs a `copyin` or `create` clause",
        "acc enter data async(1)",
    );
    error(
        &with_pre("acc exit data finalize\n"),
        "`acc exit data` needs a `copyout` or `delete` clause",
        "acc exit data finalize",
    );
    error(
        &with_pre("acc data {\n  a[0] = 1.0\n}\n"),
        "`acc data` needs a data clause",
        "acc data",
    );
    error("acc set\n", "`acc set` needs a `device_num`", "acc set");
    clean(
        "acc set device_num(0) device_type(acc_device_host)\n"
            .replace("acc_device_host", "host")
            .as_str(),
    );
    clean(&with_pre("acc data default(present) {\n  a[0] = 1.0\n}\n"));
}

#[test]
fn variable_named_in_two_clauses() {
    let src = with_pre("acc parallel copy(a) copyin(a) {\n  a[0] = 1.0\n}\n");
    let d = error(&src, "`a` appears in more than one data clause", "a");
    assert_eq!(d.span().start as usize, src.rfind("copyin(a)").unwrap() + 7);
    error(
        &with_pre("acc parallel private(s) firstprivate(s) {\n  s = 1.0\n}\n"),
        "`s` appears in both `private` and `firstprivate`",
        "s",
    );
    error(
        &with_pre("acc parallel loop private(s) reduction(+: s)\nfor i in 0..n { s += 1.0 }\n"),
        "`s` appears in both `private` and `reduction`",
        "s",
    );
    clean(&with_pre(
        "acc parallel loop copy(s) reduction(+: s)\nfor i in 0..n { s += 1.0 }\n",
    ));
    clean(&with_pre("acc update host(a[0:10]) host(a[90:10])\n"));
}

#[test]
fn literal_arguments() {
    let d = error(
        &with_pre("acc parallel loop collapse(n)\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`collapse` needs a positive integer literal",
        "n",
    );
    assert!(d.help.unwrap().contains("collapse(2)"));
    error(
        &with_pre("acc parallel loop collapse(0)\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`collapse` needs a positive integer literal",
        "0",
    );
    error(
        &with_pre(
            "acc parallel loop tile(0, *)\nfor i in 0..n {\n  for j in 0..n { a[i] = 1.0 }\n}\n",
        ),
        "a tile size must be a positive integer literal or `*`",
        "0",
    );
    error(
        &with_pre("acc parallel num_gangs(0) {\n  a[0] = 1.0\n}\n"),
        "`num_gangs` must be at least 1",
        "0",
    );
    error(
        &with_pre("acc parallel async(-1) {\n  a[0] = 1.0\n}\n"),
        "an async queue must be an integer ≥ 0",
        "-1",
    );
    clean(&with_pre(
        "acc parallel loop tile(*, 8)\nfor i in 0..n {\n  for j in 0..n { a[i] = 1.0 }\n}\n",
    ));
}

#[test]
fn wait_directive_forms() {
    clean("acc wait\nacc wait(1)\nacc wait(1, 2) async(3)\nacc wait if(true)\n");
    error(
        &with_pre("acc wait copy(a)\n"),
        "`copy` is not allowed on `acc wait`",
        "copy",
    );
    error(
        "acc wait(1) async(2) async(3)\n",
        "`async` appears more than once on `acc wait`",
        "async",
    );
}

#[test]
fn declare_forms() {
    clean("let g = zeros(10)\nacc declare create(g)\nlet h = ones(4)\nacc declare copyin(h)\n");
    error(
        "let g = zeros(10)\nacc declare copyout(g)\n",
        "`copyout` is not allowed on `acc declare`",
        "copyout",
    );
    let d = error(
        "fn f() {\n  let t = zeros(10)\n  acc declare create(t)\n}\n",
        "`acc declare` must be at the top level",
        "declare",
    );
    assert!(d.help.unwrap().contains("top-level `let`"));
}

// ---------------------------------------------------------------------------------------------
// The statement a directive applies to
// ---------------------------------------------------------------------------------------------

#[test]
fn loop_constructs_need_a_for() {
    let d = error(
        &with_pre("acc parallel loop\nwhile s < 1.0 { s += 0.5 }\n"),
        "`acc parallel loop` must be followed by a `for` loop, found a `while` loop",
        "while s < 1.0 { s += 0.5 }",
    );
    assert!(d.help.unwrap().contains("for i in lo..hi"));
    let d = error(
        &with_pre("acc kernels loop {\n  a[0] = 1.0\n}\n"),
        "`acc kernels loop` must be followed by a `for` loop, found a block",
        "{\n  a[0] = 1.0\n}",
    );
    assert!(d.help.unwrap().contains("acc kernels"));
    error(
        &with_pre("acc parallel {\n  acc loop\n  a[0] = 1.0\n}\n"),
        "`acc loop` must be followed by a `for` loop",
        "a[0] = 1.0",
    );
}

#[test]
fn compute_constructs_need_a_block() {
    let d = error(
        &with_pre("acc parallel\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`acc parallel` must be followed by a block",
        "for i in 0..n { a[i] = 1.0 }",
    );
    assert!(d.help.unwrap().contains("acc parallel loop"));
    clean(&with_pre(
        "acc parallel {\n  a[0] = 1.0\n}\nacc serial\n{\n  a[1] = 2.0\n}\n",
    ));
}

#[test]
fn routine_needs_a_function() {
    error(
        "let x = 1.0\nacc routine seq\nx = 2.0\n",
        "`acc routine` must be followed by a function definition",
        "x = 2.0",
    );
}

#[test]
fn atomic_forms_accepted() {
    let src = "let x = 0.0\nlet v = 0.0\nlet k = 0\nlet c = zeros(i32, 10)\nlet n = 10\n\
        acc parallel loop\nfor i in 0..n {\n\
        acc atomic\n  x += 1.0\n\
        acc atomic update\n  c[i % 10] = c[i % 10] + 1\n\
        acc atomic update\n  x = 2.0 * x\n\
        acc atomic\n  x = max(x, 3.0)\n\
        acc atomic update\n  k = min(i as i32, k)\n\
        acc atomic update\n  k ^= 3\n\
        acc atomic read\n  v = x\n\
        acc atomic write\n  x = v + 1.0\n\
        acc atomic capture\n  { v = x; x += 1.0 }\n\
        acc atomic capture\n  { c[0] -= 1; k = c[0] }\n\
        acc atomic capture\n  { v = x; x = 0.0 }\n\
        }\n";
    clean(src);
}

#[test]
fn atomic_forms_rejected() {
    let pre = "let x = 0.0\nlet y = 0.0\nlet v = 0.0\nlet k = 0\nacc parallel {\n";
    let d = error(
        &format!("{pre}acc atomic update\n  k %= 2\n}}\n"),
        "`acc atomic update` needs an update statement",
        "k %= 2",
    );
    assert_eq!(d.labels[0].message, "`%=` is not an atomic operation");
    let d = error(
        &format!("{pre}acc atomic update\n  x = y + 1.0\n}}\n"),
        "`acc atomic update` needs an update statement",
        "y + 1.0",
    );
    assert!(d.help.unwrap().contains("x = max(x, e)"));
    error(
        &format!("{pre}acc atomic\n  x = x + x\n}}\n"),
        "needs an update statement",
        "x",
    );
    error(
        &format!("{pre}acc atomic read\n  v = x + 1.0\n}}\n"),
        "`acc atomic read` needs a statement `v = x`",
        "x + 1.0",
    );
    error(
        &format!("{pre}acc atomic write\n  x = x * 2.0\n}}\n"),
        "`acc atomic write` needs a statement `x = e`",
        "x * 2.0",
    );
    error(
        &format!("{pre}acc atomic capture\n  {{ v = x; y += 1.0 }}\n}}\n"),
        "`acc atomic capture` needs a capture block",
        "y",
    );
    error(
        &format!("{pre}acc atomic capture\n  {{ v = x; x += 1.0; v = x }}\n}}\n"),
        "`acc atomic capture` needs a capture block",
        "{ v = x; x += 1.0; v = x }",
    );
    error(
        &format!("{pre}acc atomic capture\n  x += 1.0\n}}\n"),
        "needs a capture block",
        "x += 1.0",
    );
}

#[test]
fn standalone_directives_are_clean_without_body() {
    clean(&with_pre(
        "acc update device(a)\na[0] = 2.0\nacc enter data create(b)\nb[0] = 1.0\n",
    ));
}

// ---------------------------------------------------------------------------------------------
// collapse and tile nests
// ---------------------------------------------------------------------------------------------

#[test]
fn collapse_perfect_nest() {
    clean("let m = zeros(8, 8, 8)\nacc parallel loop collapse(3)\nfor i in 0..8 {\n  for j in 0..8 {\n    for k in 0..8 { m[i, j, k] = 1.0 }\n  }\n}\n");
}

#[test]
fn collapse_imperfect_nest() {
    let src = "let m = zeros(8, 8)\nlet s = 0.0\nacc parallel loop collapse(2)\nfor i in 0..8 {\n  s = 1.0\n  for j in 0..8 { m[i, j] = s }\n}\n";
    let d = error(src, "`collapse(2)` needs perfectly nested loops", "s = 1.0");
    assert_eq!(src.get(d.labels[1].span.range()), Some("collapse(2)"));
    // A statement after the inner loop is as bad.
    error(
        "let m = zeros(8, 8)\nacc parallel loop collapse(2)\nfor i in 0..8 {\n  for j in 0..8 { m[i, j] = 1.0 }\n  m[i, 0] = 2.0\n}\n",
        "`collapse(2)` needs perfectly nested loops",
        "m[i, 0] = 2.0",
    );
}

#[test]
fn collapse_too_few_loops() {
    let src = "let m = zeros(8, 8)\nacc parallel loop collapse(3)\nfor i in 0..8 {\n  for j in 0..8 { m[i, j] = 1.0 }\n}\n";
    let d = error(
        src,
        "`collapse(3)` needs 3 nested `for` loops, but the nest has 2",
        "collapse(3)",
    );
    assert!(d.help.unwrap().contains("collapse(2)"));
    assert_eq!(src.get(d.labels[1].span.range()), Some("j"));
}

#[test]
fn collapse_needs_rectangular_bounds() {
    error(
        "let m = zeros(8, 8)\nacc parallel loop collapse(2)\nfor i in 0..8 {\n  for j in 0..i { m[i, j] = 1.0 }\n}\n",
        "the bounds of a loop in `collapse(2)` may not depend on `i`",
        "for j in 0..i ",
    );
}

#[test]
fn collapsed_loop_with_its_own_directive() {
    error(
        "let m = zeros(8, 8)\nacc parallel loop collapse(2)\nfor i in 0..8 {\n  acc loop vector\n  for j in 0..8 { m[i, j] = 1.0 }\n}\n",
        "a loop inside `collapse(2)` may not have its own directive",
        "acc loop vector\n  for j in 0..8 { m[i, j] = 1.0 }",
    );
}

#[test]
fn tile_needs_one_loop_per_size() {
    error(
        &with_pre("acc parallel loop tile(32, 32)\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`tile(32, 32)` needs 2 nested `for` loops, but the nest has 1",
        "tile(32, 32)",
    );
    let d = error(
        &with_pre(
            "acc parallel loop tile(8, *, 4)\nfor i in 0..n {\n  for j in 0..n { a[i] = 1.0 }\n}\n",
        ),
        "`tile(8, *, 4)` needs 3 nested `for` loops, but the nest has 2",
        "tile(8, *, 4)",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("use `tile(8, *)` or add the missing loops")
    );
    let d = error(
        &with_pre("acc parallel loop collapse(2)\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`collapse(2)` needs 2 nested `for` loops, but the nest has 1",
        "collapse(2)",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("use `collapse(1)` or add the missing loops")
    );
}

// ---------------------------------------------------------------------------------------------
// Loop levels
// ---------------------------------------------------------------------------------------------

const GRID: &str = "let m = zeros(8, 8, 8)\n";

#[test]
fn levels_in_order() {
    clean(&format!(
        "{GRID}acc parallel loop gang\nfor i in 0..8 {{\n  acc loop worker\n  for j in 0..8 {{\n    acc loop vector\n    for k in 0..8 {{ m[i, j, k] = 1.0 }}\n  }}\n}}\n"
    ));
    // A seq loop in between does not count.
    clean(&format!(
        "{GRID}acc parallel {{\n  acc loop gang\n  for i in 0..8 {{\n    acc loop seq\n    for j in 0..8 {{\n      acc loop vector\n      for k in 0..8 {{ m[i, j, k] = 1.0 }}\n    }}\n  }}\n}}\n"
    ));
}

#[test]
fn gang_inside_vector() {
    let src = format!(
        "{GRID}acc parallel {{\n  acc loop vector\n  for i in 0..8 {{\n    acc loop gang\n    for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n  }}\n}}\n"
    );
    let d = error(
        &src,
        "loop levels out of order: a `gang` loop inside a `vector` loop",
        "gang",
    );
    assert_eq!(src.get(d.labels[1].span.range()), Some("vector"));
}

#[test]
fn worker_inside_vector_and_gang_inside_gang() {
    error(
        &format!("{GRID}acc parallel loop vector\nfor i in 0..8 {{\n  acc loop worker\n  for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n}}\n"),
        "a `worker` loop inside a `vector` loop",
        "worker",
    );
    error(
        &format!("{GRID}acc parallel loop gang vector\nfor i in 0..8 {{\n  acc loop gang\n  for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n}}\n"),
        "a `gang` loop inside a `vector` loop",
        "gang",
    );
    error(
        &format!("{GRID}acc kernels {{\n  acc loop gang\n  for i in 0..8 {{\n    acc loop gang\n    for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n  }}\n}}\n"),
        "a `gang` loop inside a `gang` loop",
        "gang",
    );
}

#[test]
fn levels_in_serial_regions_are_sequential() {
    clean(&format!(
        "{GRID}acc serial loop vector\nfor i in 0..8 {{\n  acc loop gang\n  for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n}}\n"
    ));
}

#[test]
fn routine_levels() {
    let d = error(
        "acc routine seq\nfn f(a: f64[]) {\n  acc loop gang\n  for i in 0..len(a) { a[i] = 0.0 }\n}\n",
        "a `gang` loop inside `acc routine seq` function `f`",
        "gang",
    );
    assert!(d.help.unwrap().contains("acc routine gang"));
    error(
        "acc routine vector\nfn f(a: f64[]) {\n  acc loop worker\n  for i in 0..len(a) { a[i] = 0.0 }\n}\n",
        "a `worker` loop inside `acc routine vector` function `f`",
        "worker",
    );
    clean("acc routine vector\nfn f(a: f64[]) {\n  acc loop vector\n  for i in 0..len(a) { a[i] = 0.0 }\n}\n");
    clean("acc routine seq\nfn f(a: f64[]) {\n  acc loop seq\n  for i in 0..len(a) { a[i] = 0.0 }\n}\n");
    clean("acc routine gang\nfn f(a: f64[]) {\n  acc loop gang worker\n  for i in 0..len(a) { a[i] = 0.0 }\n}\n");
}

// ---------------------------------------------------------------------------------------------
// Placement
// ---------------------------------------------------------------------------------------------

#[test]
fn acc_loop_outside_device_code() {
    let d = error(
        &with_pre("acc loop\nfor i in 0..n { a[i] = 1.0 }\n"),
        "`acc loop` outside a compute region",
        "loop",
    );
    assert!(d.help.unwrap().contains("acc parallel loop"));
    let d = error(
        "fn f(a: f64[]) {\n  acc loop\n  for i in 0..len(a) { a[i] = 1.0 }\n}\n",
        "`acc loop` outside a compute region",
        "loop",
    );
    assert!(d
        .help
        .unwrap()
        .contains("declare `f` with `acc routine gang`"));
}

#[test]
fn nested_compute_constructs() {
    let src = with_pre("acc parallel {\n  acc kernels loop\n  for i in 0..n { a[i] = 1.0 }\n}\n");
    let d = error(
        &src,
        "compute constructs cannot be nested: `acc kernels loop` inside `acc parallel`",
        "kernels loop",
    );
    assert_eq!(src.get(d.labels[1].span.range()), Some("parallel"));
    error(
        "acc routine seq\nfn f(a: f64[]) {\n  acc parallel loop\n  for i in 0..len(a) { a[i] = 1.0 }\n}\n",
        "`acc parallel loop` inside device routine `f`",
        "parallel loop",
    );
}

#[test]
fn data_directives_in_device_code() {
    let d = error(
        &with_pre("acc parallel {\n  acc update host(a)\n}\n"),
        "`acc update` inside a compute region",
        "update",
    );
    assert!(d.help.unwrap().contains("before or after the region"));
    error(
        &with_pre("acc kernels {\n  acc data copy(b) {\n    b[0] = 1.0\n  }\n}\n"),
        "`acc data` inside a compute region",
        "data",
    );
    error(
        &with_pre("acc parallel loop\nfor i in 0..n {\n  acc wait\n}\n"),
        "`acc wait` inside a compute region",
        "wait",
    );
    error(
        "acc routine seq\nfn f(a: f64[]) {\n  acc enter data copyin(a)\n}\n",
        "`acc enter data` inside device routine `f`",
        "enter data",
    );
    error(
        &with_pre("acc serial {\n  acc set device_num(0)\n}\n"),
        "`acc set` inside a compute region",
        "set",
    );
}

#[test]
fn break_out_of_partitioned_loop() {
    let src = with_pre("acc parallel loop\nfor i in 0..n {\n  if a[i] > 1.0 { break }\n}\n");
    let d = error(&src, "`break` cannot leave a partitioned loop", "break");
    assert_eq!(src.get(d.labels[1].span.range()), Some("parallel loop"));
    error(
        &with_pre("acc parallel {\n  acc loop gang\n  for i in 0..n {\n    break\n  }\n}\n"),
        "`break` cannot leave a partitioned loop",
        "break",
    );
}

#[test]
fn break_and_continue_allowed() {
    // continue, break from an inner sequential loop, break in seq/auto/kernels/serial loops.
    clean(&with_pre(
        "acc parallel loop\nfor i in 0..n {\n  if a[i] > 1.0 { continue }\n  for j in 0..n {\n    if j > i { break }\n  }\n}\n",
    ));
    clean(&with_pre(
        "acc parallel loop seq\nfor i in 0..n {\n  break\n}\n",
    ));
    clean(&with_pre("acc kernels loop\nfor i in 0..n {\n  break\n}\n"));
    clean(&with_pre("acc serial loop\nfor i in 0..n {\n  break\n}\n"));
}

#[test]
fn jumps_out_of_a_region() {
    error(
        &with_pre("while true {\n  acc parallel {\n    break\n  }\n}\n"),
        "`break` cannot leave a compute region",
        "break",
    );
    error(
        &with_pre("for k in 0..2 {\n  acc serial {\n    continue\n  }\n}\n"),
        "`continue` cannot leave a compute region",
        "continue",
    );
}

#[test]
fn return_inside_region() {
    let src = "fn f(a: f64[]) -> f64 {\n  acc parallel {\n    return 1.0\n  }\n  return 0.0\n}\n";
    error(src, "`return` inside a compute region", "return 1.0");
    clean("acc routine seq\nfn g(x: f64) -> f64 {\n  if x > 0.0 { return x }\n  return -x\n}\n");
}

#[test]
fn collapsed_inner_loops_are_partitioned() {
    error(
        "let m = zeros(8, 8)\nacc parallel loop collapse(2)\nfor i in 0..8 {\n  for j in 0..8 {\n    break\n  }\n}\n",
        "`break` cannot leave a partitioned loop",
        "break",
    );
}

#[test]
fn saxpy_is_clean() {
    clean(
        "let n = 1 << 20\nlet x = fill(1.0f32, n)\nlet y = fill(2.0f32, n)\nlet a = 2.0f32\n\
         acc parallel loop copyin(x) copy(y)\nfor i in 0..n {\n    y[i] = a * x[i] + y[i]\n}\nprint(y[0], y[n - 1])\n",
    );
}
