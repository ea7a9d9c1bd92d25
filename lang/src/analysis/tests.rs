//! Source-text tests of the analysis: data attributes, reductions, loop schedules, launch
//! configuration, device routines, and the rules that need types.

use super::*;
use crate::diag::Diagnostic;
use crate::span::SourceFile;

fn compile(src: &str) -> Result<crate::Compiled, Vec<Diagnostic>> {
    crate::check_source(&SourceFile::new("t.acc", src))
}

#[track_caller]
fn analysis(src: &str) -> Analysis {
    match compile(src) {
        Ok(c) => c.analysis,
        Err(d) => panic!(
            "expected no errors, got {:#?}\n{src}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        ),
    }
}

/// Exactly one error containing `message`, its primary span covering exactly `at`.
#[track_caller]
fn error(src: &str, message: &str, at: &str) -> Diagnostic {
    match compile(src) {
        Ok(_) => panic!("expected an error containing {message:?}, compiled fine\n{src}"),
        Err(ds) => crate::test_util::single_error(&ds, src, message, at),
    }
}

fn only_region(a: &Analysis) -> &RegionInfo {
    assert_eq!(a.regions.len(), 1, "expected one region");
    &a.regions[0]
}

#[track_caller]
fn var<'a>(r: &'a RegionInfo, name: &str) -> &'a VarUse {
    r.vars.iter().find(|v| v.name == name).unwrap_or_else(|| {
        panic!(
            "`{name}` not among {:?}",
            r.vars.iter().map(|v| &v.name).collect::<Vec<_>>()
        )
    })
}

fn has_var(r: &RegionInfo, name: &str) -> bool {
    r.vars.iter().any(|v| v.name == name)
}

#[track_caller]
fn implicit(r: &RegionInfo, name: &str) -> Implicit {
    match var(r, name).attr {
        DataAttr::Implicit(i) => i,
        ref other => panic!("`{name}` is {other:?}, not implicit"),
    }
}

#[track_caller]
fn clause(r: &RegionInfo, name: &str) -> DataClause {
    match var(r, name).attr {
        DataAttr::Clause { clause, .. } => clause,
        ref other => panic!("`{name}` is {other:?}, not in a data clause"),
    }
}

fn levels(gang: bool, worker: bool, vector: bool) -> Schedule {
    Schedule::Parallel(Levels {
        gang,
        worker,
        vector,
    })
}

fn schedules(loops: &[LoopInfo]) -> Vec<Schedule> {
    loops.iter().map(|l| l.schedule).collect()
}

const PRE: &str = "let n = 1000\nlet a = zeros(n)\nlet b = zeros(n)\nlet s = 0.0\n";

fn with_pre(body: &str) -> String {
    format!("{PRE}{body}")
}

// ---------------------------------------------------------------------------------------------
// Data attributes (7.3)
// ---------------------------------------------------------------------------------------------

#[test]
fn saxpy_attributes() {
    let src = "let n = 1 << 20\nlet x = fill(1.0f32, n)\nlet y = fill(2.0f32, n)\nlet a = 2.0f32\n\
               acc parallel loop copyin(x) copy(y)\nfor i in 0..n {\n    y[i] = a * x[i] + y[i]\n}\n";
    let an = analysis(src);
    let r = only_region(&an);
    assert_eq!(r.construct, Construct::ParallelLoop);
    assert_eq!(src.get(r.construct_span.range()), Some("parallel loop"));
    assert_eq!(r.function, None);
    assert_eq!(clause(r, "x"), DataClause::CopyIn);
    assert_eq!(clause(r, "y"), DataClause::Copy);
    assert_eq!(implicit(r, "a"), Implicit::FirstPrivate);
    assert_eq!(implicit(r, "n"), Implicit::FirstPrivate);
    assert!(!has_var(r, "i"), "loop variables are private");
    let y = var(r, "y");
    assert!(y.read && y.written);
    let x = var(r, "x");
    assert!(x.read && !x.written);
    assert_eq!(src.get(y.first_use.unwrap().range()), Some("y"));
    // Clause-named variables come first, in clause order.
    let names: Vec<&str> = r.vars.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["x", "y", "n", "a"]);
}

#[test]
fn implicit_arrays_are_copied_scalars_firstprivate() {
    let an = analysis(&with_pre(
        "acc parallel loop\nfor i in 0..n { a[i] = b[i] * s }\n",
    ));
    let r = only_region(&an);
    assert_eq!(implicit(r, "a"), Implicit::Copy);
    assert_eq!(implicit(r, "b"), Implicit::Copy);
    assert_eq!(implicit(r, "s"), Implicit::FirstPrivate);
    assert!(var(r, "a").written && !var(r, "a").read);
    assert!(var(r, "b").read && !var(r, "b").written);
}

#[test]
fn default_present_applies_to_arrays() {
    let an = analysis(&with_pre(
        "acc parallel loop default(present)\nfor i in 0..n { a[i] = s }\n",
    ));
    let r = only_region(&an);
    assert_eq!(r.default, Some(DefaultKind::Present));
    assert_eq!(implicit(r, "a"), Implicit::Present);
    assert_eq!(implicit(r, "s"), Implicit::FirstPrivate);
    // From an enclosing data region too.
    let an = analysis(&with_pre("acc data copy(a) default(present) {\n  acc parallel loop\n  for i in 0..n { b[i] = a[i] }\n}\n"));
    let r = only_region(&an);
    assert_eq!(r.default, Some(DefaultKind::Present));
    assert_eq!(implicit(r, "b"), Implicit::Present);
}

#[test]
fn kernels_copy_scalars_serial_firstprivate() {
    let an = analysis(&with_pre(
        "acc kernels {\n  s = 1.0\n  a[0] = s\n}\nacc serial {\n  s = 2.0\n}\n",
    ));
    assert_eq!(an.regions.len(), 2);
    assert_eq!(implicit(&an.regions[0], "s"), Implicit::Copy);
    assert_eq!(implicit(&an.regions[1], "s"), Implicit::FirstPrivate);
    assert!(var(&an.regions[1], "s").written);
}

#[test]
fn construct_private_and_firstprivate() {
    let an = analysis(&with_pre(
        "let t = zeros(4)\nacc parallel private(t) firstprivate(s) {\n  acc loop\n  for i in 0..n { a[i] = s }\n}\n",
    ));
    let r = only_region(&an);
    assert!(matches!(var(r, "t").attr, DataAttr::Private { .. }));
    assert!(matches!(var(r, "s").attr, DataAttr::FirstPrivate { .. }));
    assert_eq!(var(r, "t").first_use, None);
}

#[test]
fn loop_private_variables_stay_in_the_loop() {
    let an = analysis(&with_pre(
        "let t = 0.0\nacc parallel loop private(t)\nfor i in 0..n {\n  t = a[i] * 2.0\n  b[i] = t\n}\n",
    ));
    let r = only_region(&an);
    assert!(!has_var(r, "t"));
    assert_eq!(r.loops[0].private.len(), 1);
    let an = analysis(&with_pre(
        "let t = 0.0\nacc parallel {\n  acc loop private(t)\n  for i in 0..n {\n    t = a[i]\n    b[i] = t\n  }\n}\n",
    ));
    assert!(!has_var(only_region(&an), "t"));
}

#[test]
fn region_locals_are_not_region_variables() {
    let an = analysis(&with_pre(
        "acc parallel loop\nfor i in 0..n {\n  let u = a[i] + 1.0\n  b[i] = u\n}\n",
    ));
    let r = only_region(&an);
    assert!(!has_var(r, "u"));
    assert!(!has_var(r, "i"));
}

#[test]
fn sections_are_kept() {
    let an = analysis(&with_pre(
        "acc parallel loop copyin(a[0:n]) copyout(b[:n])\nfor i in 0..n { b[i] = a[i] }\n",
    ));
    let r = only_region(&an);
    match &var(r, "a").attr {
        DataAttr::Clause {
            clause: DataClause::CopyIn,
            sections: Some(s),
            ..
        } => assert_eq!(s.len(), 1),
        other => panic!("{other:?}"),
    }
    assert_eq!(clause(r, "b"), DataClause::CopyOut);
}

#[test]
fn declared_globals_are_present() {
    let an = analysis("let g = zeros(100)\nacc declare create(g)\nacc parallel loop\nfor i in 0..100 { g[i] = 1.0 }\n");
    assert_eq!(implicit(only_region(&an), "g"), Implicit::Present);
}

#[test]
fn globals_used_by_called_functions() {
    let src = "let table = ones(10)\nlet scale = 2.0\nfn lookup(i: i64) -> f64 { return table[i % 10] * scale }\n\
               let out = zeros(100)\nacc parallel loop\nfor i in 0..100 { out[i] = lookup(i) }\n";
    let an = analysis(src);
    let r = only_region(&an);
    assert_eq!(implicit(r, "table"), Implicit::Copy);
    assert_eq!(implicit(r, "scale"), Implicit::FirstPrivate);
    assert_eq!(
        src.get(var(r, "table").first_use.unwrap().range()),
        Some("lookup(i)")
    );
    assert!(var(r, "table").read && !var(r, "table").written);
}

#[test]
fn arrays_written_through_calls() {
    let src = "acc routine seq\nfn put(v: f64[], i: i64) { v[i] = 1.0 }\nfn get(v: f64[], i: i64) -> f64 { return v[i] }\n\
               let a = zeros(10)\nlet b = zeros(10)\nacc parallel loop\nfor i in 0..10 {\n  put(a, i)\n  b[i] = get(b, i)\n}\n";
    let an = analysis(src);
    let r = only_region(&an);
    assert!(var(r, "a").written);
    assert!(var(r, "b").read);
}

// ---------------------------------------------------------------------------------------------
// Reductions (7.5)
// ---------------------------------------------------------------------------------------------

#[test]
fn reduction_on_combined_construct() {
    let an = analysis(&with_pre(
        "acc parallel loop reduction(+: s)\nfor i in 0..n { s += a[i] }\n",
    ));
    let r = only_region(&an);
    assert!(matches!(
        var(r, "s").attr,
        DataAttr::Reduction {
            op: ReductionOp::Add,
            ..
        }
    ));
    assert_eq!(r.reductions.len(), 1);
    assert_eq!(r.reductions[0].ty, ScalarType::F64);
    assert_eq!(r.loops[0].reductions.len(), 1);
}

#[test]
fn reduction_on_inner_loop_is_copied_back() {
    let an = analysis("let m = zeros(10, 10)\nlet err = 0.0\nacc parallel {\n  acc loop reduction(max: err)\n  for i in 0..10 {\n    err = max(err, m[i, 0])\n  }\n}\n");
    let r = only_region(&an);
    assert_eq!(implicit(r, "err"), Implicit::Copy);
    assert_eq!(r.reductions.len(), 1);
    assert_eq!(r.reductions[0].op, ReductionOp::Max);
}

#[test]
fn reductions_of_region_locals_stay_in_the_region() {
    let an = analysis(&with_pre(
        "acc parallel loop gang\nfor i in 0..n {\n  let t = 0.0\n  acc loop vector reduction(+: t)\n  for j in 0..n { t += b[j] }\n  a[i] = t\n}\n",
    ));
    let r = only_region(&an);
    assert!(r.reductions.is_empty());
    assert_eq!(r.loops[1].reductions.len(), 1);
    assert!(!has_var(r, "t"));
}

#[test]
fn reduction_types_accepted() {
    analysis(
        "let k = 0i32\nlet big = 0i64\nlet ok = true\nlet m = 0.0f32\n\
         acc parallel loop reduction(max: k) reduction(^: big) reduction(||: ok) reduction(min: m)\n\
         for i in 0..10 {\n  k = max(k, i as i32)\n  big ^= i\n  ok = ok || i > 5\n  m = min(m, i as f32)\n}\n",
    );
}

#[test]
fn reduction_on_array() {
    let d = error(
        &with_pre("acc parallel loop reduction(+: a)\nfor i in 0..n { a[i] += 1.0 }\n"),
        "reduction on array `a`",
        "a",
    );
    assert!(d.help.unwrap().contains("acc atomic"));
}

#[test]
fn reduction_operator_must_fit_the_type() {
    let d = error(
        &with_pre("acc parallel loop reduction(&: s)\nfor i in 0..n { s += 1.0 }\n"),
        "`&` reduction needs an integer variable, `s` is f64",
        "s",
    );
    assert!(d.help.unwrap().contains("max"));
    error(
        "let k = 0\nacc parallel loop reduction(&&: k)\nfor i in 0..10 { k += 1 }\n",
        "`&&` reduction needs a bool variable, `k` is i64",
        "k",
    );
    error(
        "let f = false\nacc parallel loop reduction(+: f)\nfor i in 0..10 { f = true }\n",
        "`+` reduction needs a numeric variable, `f` is bool",
        "f",
    );
}

// ---------------------------------------------------------------------------------------------
// Loop schedules (7.2)
// ---------------------------------------------------------------------------------------------

const GRID: &str = "let m = zeros(8, 8, 8)\n";

#[test]
fn parallel_loop_defaults_to_gang_vector() {
    let an = analysis(&with_pre(
        "acc parallel loop\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    let l = &only_region(&an).loops;
    assert_eq!(schedules(l), [levels(true, false, true)]);
    assert!(l[0].has_directive);
    assert!(l[0].reason.starts_with("default"));
}

#[test]
fn nested_defaults() {
    let an = analysis(&format!(
        "{GRID}acc parallel loop\nfor i in 0..8 {{\n  acc loop\n  for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n}}\n"
    ));
    assert_eq!(
        schedules(&only_region(&an).loops),
        [levels(true, false, false), levels(false, false, true)]
    );
    let an = analysis(&format!(
        "{GRID}acc parallel loop\nfor i in 0..8 {{\n  acc loop\n  for j in 0..8 {{\n    acc loop\n    for k in 0..8 {{ m[i, j, k] = 1.0 }}\n  }}\n}}\n"
    ));
    let loops = &only_region(&an).loops;
    assert_eq!(
        schedules(loops),
        [
            levels(true, false, false),
            levels(false, true, false),
            levels(false, false, true)
        ]
    );
    assert_eq!(loops[1].parent, Some(0));
    assert_eq!(loops[2].parent, Some(1));
}

#[test]
fn explicit_inner_level_stops_outer_vector() {
    let an = analysis(&format!(
        "{GRID}acc parallel loop\nfor i in 0..8 {{\n  acc loop vector\n  for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n}}\n"
    ));
    let loops = &only_region(&an).loops;
    assert_eq!(
        schedules(loops),
        [levels(true, false, false), levels(false, false, true)]
    );
    assert_eq!(loops[1].reason, "explicit");
    // An unmarked loop between a gang and a vector loop becomes a worker loop.
    let an = analysis(&format!(
        "{GRID}acc parallel {{\n  acc loop gang\n  for i in 0..8 {{\n    acc loop\n    for j in 0..8 {{\n      acc loop vector\n      for k in 0..8 {{ m[i, j, k] = 1.0 }}\n    }}\n  }}\n}}\n"
    ));
    assert_eq!(
        schedules(&only_region(&an).loops),
        [
            levels(true, false, false),
            levels(false, true, false),
            levels(false, false, true)
        ]
    );
}

#[test]
fn no_level_left_means_seq() {
    let an = analysis(&format!(
        "{GRID}acc parallel {{\n  acc loop gang\n  for i in 0..8 {{\n    acc loop\n    for j in 0..8 {{\n      acc loop worker\n      for k in 0..8 {{ m[i, j, k] = 1.0 }}\n    }}\n  }}\n}}\n"
    ));
    assert_eq!(
        schedules(&only_region(&an).loops),
        [
            levels(true, false, false),
            Schedule::Seq,
            levels(false, true, false)
        ]
    );
}

#[test]
fn seq_kernels_and_serial() {
    let an = analysis(&with_pre(
        "acc parallel loop seq\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    assert_eq!(schedules(&only_region(&an).loops), [Schedule::Seq]);
    let an = analysis(&with_pre(
        "acc kernels {\n  for i in 0..n { a[i] = 1.0 }\n  acc loop independent\n  for i in 0..n { b[i] = 2.0 }\n}\n",
    ));
    let loops = &only_region(&an).loops;
    // The first loop has no dependence, so the compiler chooses gang and vector itself.
    assert_eq!(
        schedules(loops),
        [levels(true, false, true), levels(true, false, true)]
    );
    assert!(!loops[0].has_directive);
    let an = analysis(&with_pre(
        "acc kernels loop\nfor i in 0..n {\n  if a[i] > 1.0 { break }\n}\n",
    ));
    let l = &only_region(&an).loops[0];
    assert_eq!(l.schedule, Schedule::Seq);
    assert!(l.has_break);
    let an = analysis(&with_pre(
        "acc serial loop gang\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    assert_eq!(schedules(&only_region(&an).loops), [Schedule::Seq]);
}

#[test]
fn collapse_and_tile() {
    let an = analysis(&format!(
        "{GRID}acc parallel loop collapse(2)\nfor i in 0..8 {{\n  for j in 0..8 {{\n    for k in 0..8 {{ m[i, j, k] = 1.0 }}\n  }}\n}}\n"
    ));
    let l = &only_region(&an).loops;
    assert_eq!(l.len(), 1);
    assert_eq!(l[0].collapse, 2);
    assert_eq!(l[0].vars.len(), 2);
    let an = analysis(&format!(
        "{GRID}acc parallel loop tile(32, *)\nfor i in 0..8 {{\n  for j in 0..8 {{ m[i, j, 0] = 1.0 }}\n}}\n"
    ));
    let l = &only_region(&an).loops[0];
    assert_eq!(l.tile, Some(vec![Some(32), None]));
    assert_eq!(l.vars.len(), 2);
}

#[test]
fn routine_loops_default_below_the_routine_level() {
    let an = analysis(
        "acc routine vector\nfn fill_row(r: f64[], v: f64) {\n  acc loop\n  for i in 0..len(r) { r[i] = v }\n}\n\
         acc routine seq\nfn total(r: f64[]) -> f64 {\n  let t = 0.0\n  acc loop\n  for i in 0..len(r) { t += r[i] }\n  return t\n}\n",
    );
    assert_eq!(an.routines.len(), 2);
    let fill = an.routines.iter().find(|r| r.name == "fill_row").unwrap();
    assert_eq!(fill.level, RoutineLevel::Vector);
    assert!(fill.explicit);
    assert_eq!(schedules(&fill.loops), [levels(false, false, true)]);
    let total = an.routines.iter().find(|r| r.name == "total").unwrap();
    assert_eq!(schedules(&total.loops), [Schedule::Seq]);
}

#[test]
fn calls_of_vector_routines_keep_the_vector_level_free() {
    let an = analysis(
        "acc routine vector\nfn row(m: f64[,], i: i64) {\n  acc loop vector\n  for j in 0..size(m, 1) { m[i, j] = 0.0 }\n}\n\
         let m = zeros(8, 8)\nacc parallel loop\nfor i in 0..8 { row(m, i) }\n",
    );
    assert_eq!(
        schedules(&only_region(&an).loops),
        [levels(true, false, false)]
    );
}

#[test]
fn routine_called_at_a_level_in_use() {
    let d = error(
        "acc routine vector\nfn row(m: f64[,], i: i64) {\n  acc loop vector\n  for j in 0..size(m, 1) { m[i, j] = 0.0 }\n}\n\
         let m = zeros(8, 8)\nacc parallel loop gang vector\nfor i in 0..8 { row(m, i) }\n",
        "`acc routine vector` function `row` called inside a `vector` loop",
        "row(m, i)",
    );
    assert_eq!(d.labels.len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Launch configuration
// ---------------------------------------------------------------------------------------------

#[test]
fn launch_sizes_per_device_type() {
    let an = analysis(&with_pre(
        "acc parallel loop num_gangs(8) vector_length(64) async(2) device_type(host) num_gangs(1)\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    let r = only_region(&an);
    assert_eq!(
        r.launch.nvidia.num_gangs.as_ref().and_then(Size::as_const),
        Some(8)
    );
    assert_eq!(
        r.launch
            .get(DeviceTypeName::Host)
            .num_gangs
            .as_ref()
            .and_then(Size::as_const),
        Some(1)
    );
    assert_eq!(
        r.launch
            .multicore
            .num_gangs
            .as_ref()
            .and_then(Size::as_const),
        Some(8)
    );
    assert_eq!(
        r.launch
            .nvidia
            .vector_length
            .as_ref()
            .and_then(Size::as_const),
        Some(64)
    );
    assert!(matches!(
        r.launch.nvidia.async_queue,
        Some(AsyncQueue::Queue(_))
    ));
    let an = analysis(&with_pre(
        "acc parallel loop num_gangs(n / 2) async\nfor i in 0..n { a[i] = 1.0 }\n",
    ));
    let r = only_region(&an);
    assert!(matches!(r.launch.nvidia.num_gangs, Some(Size::Expr(_))));
    assert!(matches!(
        r.launch.nvidia.async_queue,
        Some(AsyncQueue::Default)
    ));
}

#[test]
fn vector_length_rounded_up_with_a_warning() {
    let src = with_pre("acc parallel loop vector_length(100)\nfor i in 0..n { a[i] = 1.0 }\n");
    let c = compile(&src).expect("compiles");
    let r = only_region(&c.analysis);
    assert_eq!(
        r.launch
            .nvidia
            .vector_length
            .as_ref()
            .and_then(Size::as_const),
        Some(128)
    );
    assert_eq!(c.warnings.len(), 1);
    assert_eq!(c.warnings[0].severity, crate::Severity::Warning);
    assert_eq!(
        c.warnings[0].message,
        "`vector_length(100)` is rounded up to 128"
    );
    assert_eq!(
        src.get(c.warnings[0].span().range()),
        Some("vector_length(100)")
    );
}

#[test]
fn too_many_threads_per_gang() {
    let d = error(
        &with_pre("acc parallel num_workers(16) vector_length(128) {\n  a[0] = 1.0\n}\n"),
        "16 workers × `vector_length` 128 = 2048 threads per gang, above 1024",
        "num_workers(16)",
    );
    assert_eq!(d.labels.len(), 2);
    error(
        &with_pre("acc parallel loop num_workers(16)\nfor i in 0..n { a[i] = 1.0 }\n"),
        "16 workers × the default `vector_length` of 128 = 2048 threads per gang",
        "num_workers(16)",
    );
    analysis(&with_pre(
        "acc parallel num_workers(8) vector_length(128) {\n  a[0] = 1.0\n}\n",
    ));
    analysis(&with_pre(
        "acc parallel num_workers(n) vector_length(1024) {\n  a[0] = 1.0\n}\n",
    ));
}

// ---------------------------------------------------------------------------------------------
// default(none)
// ---------------------------------------------------------------------------------------------

#[test]
fn default_none_names_the_missing_variable() {
    let src = with_pre(
        "acc parallel loop default(none) copyout(a) copyin(b)\nfor i in 0..n { a[i] = b[i] }\n",
    );
    let d = error(
        &src,
        "`n` is not named in any clause of this `default(none)` construct",
        "n",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("add `firstprivate(n)` to the directive")
    );
    assert_eq!(src.get(d.labels[1].span.range()), Some("parallel loop"));
    let d = error(
        &with_pre("acc parallel loop default(none) copyout(a) firstprivate(n)\nfor i in 0..n { a[i] = b[i] }\n"),
        "`b` is not named in any clause",
        "b",
    );
    assert!(d.help.unwrap().contains("copyin(b)"));
}

#[test]
fn default_none_satisfied() {
    analysis(&with_pre(
        "acc parallel loop default(none) copyout(a) copyin(b) firstprivate(n)\nfor i in 0..n {\n  let t = b[i]\n  a[i] = t\n}\n",
    ));
    // Named by an enclosing data region, or reduced by a loop.
    analysis(&with_pre(
        "acc data copyin(b) {\n  acc parallel default(none) firstprivate(n) copy(a) {\n    acc loop reduction(+: s)\n    for i in 0..n { s += b[i]; a[i] = s }\n  }\n}\n",
    ));
}

// ---------------------------------------------------------------------------------------------
// Device code (7.9)
// ---------------------------------------------------------------------------------------------

#[test]
fn recursion_in_device_code() {
    let src = "fn depth(k: i64) -> i64 {\n  if k <= 0 { return 0 }\n  return depth(k - 1) + 1\n}\n\
               let out = zeros(i64, 10)\nacc parallel loop\nfor i in 0..10 { out[i] = depth(i) }\n";
    let d = error(
        src,
        "recursive call of `depth` in device code",
        "depth(k - 1)",
    );
    assert!(d.help.unwrap().contains("loop"));
    // Mutual recursion is reported once.
    error(
        "fn ping(k: i64) -> i64 {\n  if k <= 0 { return 0 }\n  return pong(k - 1)\n}\nfn pong(k: i64) -> i64 { return ping(k) }\n\
         let out = zeros(i64, 10)\nacc parallel loop\nfor i in 0..10 { out[i] = ping(i) }\n",
        "recursion in device code: `ping` calls `pong`, which leads back to `ping`",
        "pong(k - 1)",
    );
    // On the host it is fine.
    analysis("fn fact(k: i64) -> i64 {\n  if k <= 1 { return 1 }\n  return k * fact(k - 1)\n}\nprint(fact(5))\n");
}

#[test]
fn array_creation_in_device_code() {
    let d = error(
        &with_pre("acc parallel loop\nfor i in 0..n {\n  let tmp = zeros(4)\n  a[i] = tmp[0]\n}\n"),
        "`zeros` creates an array in device code",
        "zeros(4)",
    );
    assert_eq!(
        d.help.as_deref(),
        Some(
            "create `tmp` on the host before the region and name it in a data clause \
             (`create(tmp)`), or give each gang its own copy with `private(tmp)`"
        )
    );
    // Not bound by a `let`: no name to show.
    let d = error(
        &with_pre("acc parallel loop\nfor i in 0..n {\n  a[i] = len(zeros(4)) * 1.0\n}\n"),
        "`zeros` creates an array in device code",
        "zeros(4)",
    );
    assert!(d.help.unwrap().contains("(`create(…)`)"));
    error(
        &with_pre("acc parallel loop\nfor i in 0..n {\n  let t = [1.0, 2.0]\n  a[i] = t[0]\n}\n"),
        "an array literal creates an array in device code",
        "[1.0, 2.0]",
    );
    let src = "fn scratch() -> f64 {\n  let t = ones(3)\n  return t[0]\n}\nlet a = zeros(10)\nacc parallel loop\nfor i in 0..10 { a[i] = scratch() }\n";
    let d = error(src, "`ones` creates an array in device code", "ones(3)");
    assert_eq!(src.get(d.labels[1].span.range()), Some("scratch()"));
    assert_eq!(
        d.help.as_deref(),
        Some("create the array in host code and pass it to `scratch` as an argument")
    );
}

#[test]
fn host_only_builtins_in_device_code() {
    error(
        &with_pre("acc parallel {\n  exit(1)\n}\n"),
        "`exit` cannot be called in device code",
        "exit(1)",
    );
    error(
        &with_pre("acc parallel loop\nfor i in 0..n { a[i] = clock() }\n"),
        "`clock` cannot be called in device code",
        "clock()",
    );
    let d = error(
        &with_pre("acc serial {\n  s = sum(a)\n}\n"),
        "`sum` cannot be called in device code",
        "sum(a)",
    );
    assert!(d.help.unwrap().contains("reduction"));
    error(
        &with_pre("acc parallel {\n  s = param(\"k\", 1.0)\n}\n"),
        "`param` cannot be called in device code",
        "param(\"k\", 1.0)",
    );
    error(
        &with_pre("acc parallel {\n  acc_copyin(a)\n}\n"),
        "`acc_copyin` cannot be called in device code",
        "acc_copyin(a)",
    );
    analysis(&with_pre(
        "acc parallel loop\nfor i in 0..n {\n  if acc_on_device(acc_device_host) { printf(\"%d\\n\", i) }\n  a[i] = sqrt(b[i]) + len(b) as f64\n}\n",
    ));
}

#[test]
fn routines_may_not_write_global_scalars() {
    let src =
        "let count = 0\nfn bump() { count += 1 }\nacc parallel loop\nfor i in 0..10 { bump() }\n";
    let d = error(src, "device routine `bump` writes global `count`", "count");
    assert_eq!(src.get(d.labels[1].span.range()), Some("bump()"));
    // From the host it is fine; so is writing a global array's elements.
    analysis("let count = 0\nfn bump() { count += 1 }\nbump()\n");
    analysis("let hits = zeros(i64, 10)\nfn hit(i: i64) { hits[i] = 1 }\nacc parallel loop\nfor i in 0..10 { hit(i) }\n");
}

#[test]
fn data_directives_in_functions_called_from_device_code() {
    error(
        "fn sync(v: f64[]) {\n  acc update host(v)\n}\nlet a = zeros(10)\nacc parallel {\n  sync(a)\n}\n",
        "`acc update` in `sync`, which is compiled for the device",
        "update",
    );
}

#[test]
fn routines_list_explicit_and_called_functions() {
    let an = analysis(
        "fn sq(x: f64) -> f64 { return x * x }\nfn norm(x: f64, y: f64) -> f64 { return sqrt(sq(x) + sq(y)) }\n\
         acc routine seq\nfn unused(x: f64) -> f64 { return x }\nfn host_only() { print(1) }\n\
         let a = zeros(10)\nacc parallel loop\nfor i in 0..10 { a[i] = norm(a[i], 1.0) }\nhost_only()\n",
    );
    let mut names: Vec<&str> = an.routines.iter().map(|r| r.name.as_str()).collect();
    names.sort();
    assert_eq!(names, ["norm", "sq", "unused"]);
    let norm = an.routines.iter().find(|r| r.name == "norm").unwrap();
    assert!(!norm.explicit);
    assert_eq!(norm.level, RoutineLevel::Seq);
    assert_eq!(norm.calls.len(), 1);
    let r = only_region(&an);
    assert_eq!(r.calls.len(), 2);
}

#[test]
fn regions_in_source_order_with_their_function() {
    let src = "fn work(v: f64[]) {\n  acc parallel loop\n  for i in 0..len(v) { v[i] = 1.0 }\n}\n\
               let a = zeros(10)\nacc kernels {\n  a[0] = 2.0\n}\nwork(a)\n";
    let an = analysis(src);
    assert_eq!(an.regions.len(), 2);
    assert_eq!(an.regions[0].construct, Construct::ParallelLoop);
    assert!(an.regions[0].function.is_some());
    assert_eq!(an.regions[1].construct, Construct::Kernels);
    assert_eq!(an.regions[1].function, None);
    assert_eq!(an.regions[1].id, RegionId(1));
    assert!(an.region_at(an.regions[1].span).is_some());
    // The array parameter is a region variable, implicitly copied.
    assert_eq!(implicit(&an.regions[0], "v"), Implicit::Copy);
}

/// A `parallel` construct that shares no loop over gangs runs as one gang where `num_gangs` is
/// not given (7.1); a gang loop, a gang routine or the clause keeps the count as it was.
#[test]
fn parallel_without_gang_work_runs_one_gang() {
    let gangs = |src: &str| {
        let a = analysis(src);
        let r = only_region(&a);
        let size = |l: &Launch| match l.num_gangs {
            Some(Size::Const(v)) => Some(v),
            Some(Size::Expr(_)) => Some(-1),
            None => None,
        };
        (
            r.one_gang_default,
            [
                size(&r.launch.nvidia),
                size(&r.launch.host),
                size(&r.launch.multicore),
            ],
        )
    };
    let pre = "let a = zeros(8)\n";
    let one = (true, [Some(1); 3]);
    let chosen = (false, [None; 3]);
    for body in [
        "acc parallel loop worker\nfor i in 0..8 { a[i] = 1.0 }\n",
        "acc parallel loop vector\nfor i in 0..8 { a[i] = 1.0 }\n",
        "acc parallel loop seq\nfor i in 0..8 { a[i] = 1.0 }\n",
        "acc parallel { a[0] = 1.0 }\n",
        "acc parallel {\n  acc loop worker\n  for i in 0..8 { a[i] = 1.0 }\n}\n",
    ] {
        assert_eq!(gangs(&format!("{pre}{body}")), one, "{body}");
    }
    for body in [
        "acc parallel loop\nfor i in 0..8 { a[i] = 1.0 }\n",
        "acc parallel loop gang\nfor i in 0..8 { a[i] = 1.0 }\n",
        "acc parallel {\n  acc loop\n  for i in 0..8 { a[i] = 1.0 }\n}\n",
        "acc parallel {\n  if true {\n    acc loop gang\n    for i in 0..8 { a[i] = 1.0 }\n  }\n}\n",
        "acc routine gang\nfn fill_it(a: f64[]) {\n  acc loop gang\n  for i in 0..8 { a[i] = 1.0 }\n}\nacc parallel { fill_it(a) }\n",
    ] {
        assert_eq!(gangs(&format!("{pre}{body}")), chosen, "{body}");
    }
    // The clause wins where it is given, and the default fills the other device types.
    assert_eq!(
        gangs(&format!(
            "{pre}acc parallel num_gangs(4) {{ a[0] = 1.0 }}\n"
        )),
        (false, [Some(4); 3])
    );
    assert_eq!(
        gangs(&format!(
            "{pre}acc parallel device_type(host) num_gangs(4) {{ a[0] = 1.0 }}\n"
        )),
        (true, [Some(1), Some(4), Some(1)])
    );
    // `serial` and `kernels` have rules of their own (7.1, 7.6).
    assert_eq!(
        gangs(&format!("{pre}acc serial {{ a[0] = 1.0 }}\n")),
        chosen
    );
}
