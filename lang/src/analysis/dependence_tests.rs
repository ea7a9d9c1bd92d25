//! The dependence test (LANGUAGE.md 7.6) on small `kernels` programs: which loops it
//! parallelizes, the reductions it finds, and the reasons it gives for the loops it keeps
//! sequential. Expected verdicts are worked out by hand from the subscripts.

use super::*;
use crate::span::SourceFile;

const PRE: &str = "let n = 100\nlet a = zeros(n)\nlet b = zeros(n)\nlet g = zeros(n, n)\nlet h = zeros(n, n)\nlet idx = zeros(i64, n)\nlet s = 0.0\nlet k = 3\n";

/// The loops of the one region of `PRE` followed by `src`.
#[track_caller]
fn loops(src: &str) -> Vec<LoopInfo> {
    let text = format!("{PRE}{src}");
    let compiled = match crate::check_source(&SourceFile::new("t.acc", text.as_str())) {
        Ok(c) => c,
        Err(d) => panic!(
            "{:#?}\n{text}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        ),
    };
    let regions = compiled.analysis.regions;
    assert_eq!(regions.len(), 1, "one region expected");
    regions
        .into_iter()
        .next()
        .map(|r| r.loops)
        .unwrap_or_default()
}

#[track_caller]
fn parallel(l: &LoopInfo) {
    assert!(
        matches!(l.schedule, Schedule::Parallel(_)),
        "expected a parallel loop, got {} ({})",
        l.schedule,
        l.reason
    );
}

#[track_caller]
fn sequential(l: &LoopInfo, why: &str) {
    assert_eq!(
        l.schedule,
        Schedule::Seq,
        "expected a sequential loop ({})",
        l.reason
    );
    assert!(
        l.reason.contains(why),
        "reason {:?} lacks {why:?}",
        l.reason
    );
}

/// The operators of the loop's reductions.
fn reduced(l: &LoopInfo) -> Vec<&'static str> {
    l.reductions.iter().map(|r| r.op.as_str()).collect()
}

#[test]
fn independent_elements_are_parallel() {
    let l = loops("acc kernels {\n  for i in 0..n { a[i] = b[i] * 2.0 }\n}\n");
    parallel(&l[0]);
    assert_eq!(l[0].schedule.to_string(), "gang, vector");
    // Reads of other elements of an array the loop does not write are fine.
    let l = loops("acc kernels {\n  for i in 1..n-1 { a[i] = b[i-1] + b[i+1] + b[idx[i]] }\n}\n");
    parallel(&l[0]);
}

#[test]
fn a_nest_maps_gang_outside_and_vector_inside() {
    let l = loops(
        "acc kernels {\n  for j in 1..n-1 {\n    for i in 1..n-1 {\n      g[j, i] = 0.25 * (h[j, i+1] + h[j, i-1] + h[j-1, i] + h[j+1, i])\n    }\n  }\n}\n",
    );
    assert_eq!(l[0].schedule.to_string(), "gang");
    assert_eq!(l[1].schedule.to_string(), "vector");
    assert!(
        l[0].reason.contains("no loop-carried dependence"),
        "{}",
        l[0].reason
    );
}

#[test]
fn a_carried_dependence_keeps_the_loop_sequential_and_names_both_accesses() {
    let l = loops("acc kernels {\n  for i in 1..n { a[i] = a[i] + a[i - 1] }\n}\n");
    sequential(
        &l[0],
        "`a[i]` is written and `a[i - 1]` read by another iteration",
    );
    // Column j+1 of row j is read by the iteration that writes row j... of the inner loop only.
    let l = loops(
        "acc kernels {\n  for j in 0..n-1 {\n    for i in 1..n { g[j, i] = g[j, i - 1] + h[j, i] }\n  }\n}\n",
    );
    parallel(&l[0]);
    sequential(&l[1], "`g[j, i]` is written and `g[j, i - 1]` read");
    // Rows: the outer loop carries it, the inner one does not.
    let l = loops(
        "acc kernels {\n  for j in 1..n {\n    for i in 0..n { g[j, i] = g[j - 1, i] * 0.5 }\n  }\n}\n",
    );
    sequential(&l[0], "`g[j, i]` is written and `g[j - 1, i]` read");
    parallel(&l[1]);
}

#[test]
fn writes_to_one_element_from_every_iteration_are_a_dependence() {
    let l = loops("acc kernels {\n  for i in 0..n { a[0] = b[i] }\n}\n");
    sequential(&l[0], "`a[0]` is written by more than one iteration");
    let l = loops("acc kernels {\n  for i in 0..n { a[idx[i]] = b[i] }\n}\n");
    sequential(&l[0], "`a[idx[i]]` is written by more than one iteration");
}

#[test]
fn gcd_and_distance_prove_disjoint_elements() {
    // Even elements written, odd ones read: 2i = 2i' + 1 has no integer solution.
    let l = loops("acc kernels {\n  for i in 0..n/2-1 { a[2 * i] = a[2 * i + 1] }\n}\n");
    parallel(&l[0]);
    // a[i] and a[i + 50] over 50 iterations never meet.
    let l = loops("acc kernels {\n  for i in 0..50 { a[i] = a[i + 50] }\n}\n");
    parallel(&l[0]);
    // … over 51 they do.
    let l = loops("acc kernels {\n  for i in 0..51 { a[i] = a[i + 50] }\n}\n");
    sequential(&l[0], "`a[i]` is written and `a[i + 50]` read");
    // A loop-invariant offset cancels: a[i + k] against a[i + k].
    let l = loops("acc kernels {\n  for i in 0..n-k { a[i + k] = a[i + k] * 2.0 }\n}\n");
    parallel(&l[0]);
}

#[test]
fn accumulations_become_reductions_with_their_operator() {
    for (stmt, op) in [
        ("s += a[i]", "+"),
        ("s = s + a[i]", "+"),
        ("s = a[i] + s", "+"),
        ("s -= a[i]", "+"),
        ("s *= a[i]", "*"),
        ("s = max(s, a[i])", "max"),
        ("s = min(a[i], s)", "min"),
        ("s = fmax(s, a[i])", "max"),
    ] {
        let l = loops(&format!(
            "acc kernels {{\n  for i in 0..n {{ {stmt} }}\n}}\n"
        ));
        parallel(&l[0]);
        assert_eq!(reduced(&l[0]), [op], "{stmt}");
    }
    let l = loops(
        "let m = 0\nlet any = false\nacc kernels {\n  for i in 0..n { m = m ^ idx[i]; any = any || a[i] > 1.0 }\n}\n",
    );
    parallel(&l[0]);
    assert_eq!(reduced(&l[0]), ["^", "||"]);
}

#[test]
fn a_reduction_in_a_nest_is_generated_on_every_loop_that_accumulates() {
    let l = loops(
        "acc kernels {\n  for j in 0..n {\n    for i in 0..n { s = max(s, abs(g[j, i] - h[j, i])) }\n  }\n}\n",
    );
    assert_eq!(reduced(&l[0]), ["max"]);
    assert_eq!(reduced(&l[1]), ["max"]);
    parallel(&l[0]);
    parallel(&l[1]);
}

#[test]
fn scalars_that_are_not_accumulations_keep_the_loop_sequential() {
    let l = loops("acc kernels {\n  for i in 0..n { b[i] = s; s = a[i] }\n}\n");
    sequential(
        &l[0],
        "scalar `s` is assigned in one iteration and read in another",
    );
    // Assigned first, but a global: its last value may be read after the region.
    let l = loops("acc kernels {\n  for i in 0..n { s = a[i]; b[i] = s }\n}\n");
    sequential(
        &l[0],
        "`s` is a global, whose value the host may read after the loop",
    );
    let l = loops("acc kernels {\n  for i in 0..n { s = a[i] }\n}\n");
    sequential(&l[0], "declare it inside the loop, `let s = …`");
    let l = loops("acc kernels {\n  for i in 0..n { s += a[i]; b[i] = s }\n}\n");
    sequential(&l[0], "scalar `s` is accumulated and also read in the loop");
    let l = loops("acc kernels {\n  for i in 0..n { s += a[i]; s *= 2.0 }\n}\n");
    sequential(&l[0], "accumulated with both `+` and `*`");
    // Declared inside the loop: private to each iteration.
    let l = loops("acc kernels {\n  for i in 0..n { let t = a[i] * 2.0; b[i] = t + t }\n}\n");
    parallel(&l[0]);
}

#[test]
fn breaks_calls_and_output_keep_the_loop_sequential() {
    let l = loops("acc kernels {\n  for i in 0..n { if a[i] > 1.0 { break }\n b[i] = 1.0 }\n}\n");
    sequential(&l[0], "contains a `break`");
    let l = loops("acc kernels {\n  for i in 0..n { print(a[i]) }\n}\n");
    sequential(&l[0], "calls `print`");
    let l = loops(
        "fn put(x: f64[], i: i64) { x[i] = 1.0 }\nacc kernels {\n  for i in 0..n { put(a, i) }\n}\n",
    );
    sequential(&l[0], "calls `put`, which writes its argument `a`");
    // A function that writes nothing is known: the loop stays parallel.
    let l = loops(
        "fn twice(x: f64) -> f64 { return 2.0 * x }\nacc kernels {\n  for i in 0..n { a[i] = twice(b[i]) }\n}\n",
    );
    parallel(&l[0]);
    // … unless it reads the array the loop writes, anywhere.
    let l = loops(
        "fn first(x: f64[]) -> f64 { return x[0] }\nacc kernels {\n  for i in 0..n { a[i] = first(a) }\n}\n",
    );
    sequential(&l[0], "`a[i]` is written and `a` (passed to `first`) read");
}

#[test]
fn arrays_that_may_share_storage_are_a_dependence() {
    let l = loops("let c = a\nacc kernels {\n  for i in 1..n { c[i] = a[i - 1] }\n}\n");
    sequential(&l[0], "`c` is written and `a` may be the same array");
    let l = loops(
        "let r = reshape(g, n * n)\nacc kernels {\n  for i in 0..n { g[0, i] = r[i + 1] }\n}\n",
    );
    sequential(&l[0], "may be the same array");
    // A copy is new storage.
    let l = loops("let c = copy(a)\nacc kernels {\n  for i in 1..n { c[i] = a[i - 1] }\n}\n");
    parallel(&l[0]);
    // Array parameters may be the same array, unless the loop says `independent`.
    let text = "fn f(x: f64[], y: f64[]) {\n  acc kernels {\n    for i in 1..len(x) { x[i] = y[i - 1] }\n  }\n}\n";
    let l = loops(text);
    sequential(&l[0], "`x` is a parameter");
}

#[test]
fn atomic_updates_do_not_conflict_with_each_other() {
    let l = loops(
        "let hist = zeros(i64, 10)\nacc kernels {\n  for i in 0..n {\n    acc atomic update\n    hist[idx[i] % 10] += 1\n  }\n}\n",
    );
    parallel(&l[0]);
}

#[test]
fn explicit_clauses_are_obeyed() {
    let l = loops("acc kernels {\n  acc loop seq\n  for i in 0..n { a[i] = b[i] }\n}\n");
    sequential(&l[0], "explicit `seq`");
    let l =
        loops("acc kernels {\n  acc loop independent\n  for i in 1..n { a[i] = a[i - 1] }\n}\n");
    parallel(&l[0]);
    // `auto` in a parallel region is tested too.
    let l = loops("acc parallel {\n  acc loop auto\n  for i in 1..n { a[i] = a[i - 1] }\n}\n");
    sequential(&l[0], "`a[i]` is written and `a[i - 1]` read");
    let l = loops("acc parallel {\n  acc loop auto\n  for i in 0..n { a[i] = b[i] }\n}\n");
    parallel(&l[0]);
    // Outside kernels an accumulation needs its clause.
    let l = loops("acc parallel {\n  acc loop auto\n  for i in 0..n { s += a[i] }\n}\n");
    sequential(
        &l[0],
        "scalar `s` accumulates (add `reduction(+: s)` to share the loop)",
    );
}

#[test]
fn feedback_names_each_decision_with_its_place() {
    let text = "let n = 10\nlet a = zeros(n)\nlet s = 0.0\nacc kernels {\n  for i in 1..n {\n    a[i] = a[i - 1] + 1.0\n  }\n  for i in 0..n {\n    s = max(s, a[i])\n  }\n}\n";
    let source = SourceFile::new("f.acc", text);
    let compiled = crate::check_source(&source).expect("compiles");
    let info = feedback(&source, &compiled.hir, &compiled.analysis);
    assert_eq!(
        info,
        "f.acc:4:1: kernels: 2 loop nests\n\
         f.acc:4:1:   runs as 2 kernels in order: each gang loop nest alone, the statements between them in a single thread\n\
         f.acc:4:1:   data: implicit copy(n), implicit copy(a), implicit copy(s)\n\
         f.acc:5:3:   loop `i`: sequential (not parallelized: `a[i]` is written and `a[i - 1]` read by another iteration)\n\
         f.acc:8:3:   loop `i`: gang, vector(128) [GPU: thread blocks × threads of a block] (no loop-carried dependence; default: outermost loop, nothing inside takes a level)\n\
         f.acc:8:3:     reduction(max: s)\n"
    );
}

/// The warnings of a program that compiles.
fn warnings(src: &str) -> Vec<String> {
    let text = format!("{PRE}{src}");
    match crate::check_source(&SourceFile::new("t.acc", text.as_str())) {
        Ok(c) => c.warnings.into_iter().map(|d| d.message).collect(),
        Err(d) => panic!("{:#?}", d.iter().map(|d| &d.message).collect::<Vec<_>>()),
    }
}

#[test]
fn a_scalar_every_iteration_assigns_is_a_race_until_a_clause_says_otherwise() {
    assert_eq!(
        warnings("acc parallel loop\nfor i in 0..n { s = a[i] }\n"),
        ["`s` is assigned by every iteration of a `gang, vector` loop"]
    );
    assert_eq!(
        warnings("acc parallel loop\nfor i in 0..n { s += a[i] }\n"),
        ["`s` is accumulated by every iteration of a `gang, vector` loop without a `reduction` clause"]
    );
    // Each way of saying what is meant silences it.
    for quiet in [
        "acc parallel loop private(s)\nfor i in 0..n { s = a[i]; b[i] = s }\n",
        "acc parallel loop reduction(+: s)\nfor i in 0..n { s += a[i] }\n",
        "acc parallel reduction(+: s) {\n  acc loop\n  for i in 0..n { s += a[i] }\n}\n",
        "acc parallel loop\nfor i in 0..n { let t = a[i]; b[i] = t }\n",
        "acc parallel loop\nfor i in 0..n {\n  acc atomic update\n  s += a[i]\n}\n",
        "acc parallel loop seq\nfor i in 0..n { s = a[i] }\n",
        // In kernels the accumulation becomes a reduction.
        "acc kernels loop gang vector\nfor i in 0..n { s += a[i] }\n",
    ] {
        assert_eq!(warnings(quiet), Vec::<String>::new(), "{quiet}");
    }
}

#[test]
fn an_array_written_but_only_copied_in_is_warned_of() {
    assert_eq!(
        warnings("acc parallel loop copyin(a)\nfor i in 0..n { a[i] = 1.0 }\n"),
        ["`a` is written in the region but only copied in: the host will not see the writes"]
    );
    for quiet in [
        "acc parallel loop copy(a)\nfor i in 0..n { a[i] = 1.0 }\n",
        "acc parallel loop copyin(a)\nfor i in 0..n { b[i] = a[i] }\n",
        "acc data copyin(a) {\n  acc parallel loop present(a)\n  for i in 0..n { a[i] = 1.0 }\n}\n",
    ] {
        assert_eq!(warnings(quiet), Vec::<String>::new(), "{quiet}");
    }
}

/// The loops of the one region of `src` (no prelude), inside a function or not.
#[track_caller]
fn loops_of(src: &str) -> Vec<LoopInfo> {
    let compiled = match crate::check_source(&SourceFile::new("t.acc", src)) {
        Ok(c) => c,
        Err(d) => panic!(
            "{:#?}\n{src}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        ),
    };
    let regions = compiled.analysis.regions;
    assert_eq!(regions.len(), 1, "one region expected");
    regions
        .into_iter()
        .next()
        .map(|r| r.loops)
        .unwrap_or_default()
}

/// The names of the loop's privatized scalars.
fn privatized(l: &LoopInfo, src: &str) -> Vec<String> {
    let compiled = crate::check_source(&SourceFile::new("t.acc", src)).expect("compiles");
    l.privatized
        .iter()
        .map(|v| compiled.hir.var(*v).name.clone())
        .collect()
}

#[test]
fn a_local_scalar_assigned_first_in_every_iteration_is_privatized() {
    // `t` is assigned before any read in every iteration, and read nowhere after the loop.
    let src = "fn f(a: f64[], b: f64[]) {\n  let c = copy(a)\n  let d = copy(b)\n  let t = 0.0\n  acc kernels {\n    for i in 0..len(c) { t = c[i] * 2.0; d[i] = t + 1.0 }\n  }\n}\n";
    let l = loops_of(src);
    parallel(&l[0]);
    assert_eq!(privatized(&l[0], src), ["t"]);
    assert!(l[0].private.iter().any(|v| l[0].privatized.contains(v)));
    assert!(
        l[0].reason.contains("with `t` private to each iteration"),
        "{}",
        l[0].reason
    );
    // An inner loop whose iterations each assign `t` first leaves it dead for the outer one too.
    let src = "fn f(g: f64[,]) {\n  let h = copy(g)\n  let t = 0.0\n  acc kernels {\n    for j in 0..size(h, 0) {\n      for i in 0..size(h, 1) { t = h[j, i]; h[j, i] = t * t }\n    }\n  }\n}\n";
    let l = loops_of(src);
    parallel(&l[0]);
    parallel(&l[1]);
    assert_eq!(privatized(&l[0], src), ["t"]);
    assert_eq!(privatized(&l[1], src), ["t"]);
    // A parameter is the function's own copy.
    let src = "fn f(a: f64[], t: f64) {\n  let c = copy(a)\n  acc kernels {\n    for i in 0..len(c) { t = c[i]; c[i] = t + t }\n  }\n}\n";
    parallel(&loops_of(src)[0]);
}

#[test]
fn a_scalar_read_before_its_assignment_or_after_the_loop_stays_shared() {
    let body = |stmts: &str, after: &str| {
        format!("fn f(a: f64[], b: f64[]) -> f64 {{\n  let c = copy(a)\n  let d = copy(b)\n  let t = 0.0\n  acc kernels {{\n    for i in 0..len(c) {{ {stmts} }}\n  }}\n  return {after}\n}}\n")
    };
    // Read first: the previous iteration's value.
    let l = loops_of(&body("d[i] = t; t = c[i]", "0.0"));
    sequential(
        &l[0],
        "scalar `t` is assigned in one iteration and read in another",
    );
    // Assigned only under a condition: an iteration may read an earlier one's value.
    let l = loops_of(&body("if c[i] > 0.0 { t = c[i] }\n d[i] = t", "0.0"));
    sequential(&l[0], "assigned in one iteration and read in another");
    // Assigned in an inner loop that may not run, then read.
    let l = loops_of(&body("for j in 0..i { t = c[j] }\n d[i] = t", "0.0"));
    sequential(&l[0], "assigned in one iteration and read in another");
    // Compound: reads the old value.
    let l = loops_of(&body("t = t * 0.5 + c[i]; d[i] = t", "0.0"));
    sequential(&l[0], "scalar `t`");
    // Read after the loop: the last iteration's value is needed.
    let l = loops_of(&body("t = c[i]; d[i] = t", "t"));
    sequential(
        &l[0],
        "scalar `t` is assigned before it is read in every iteration, but `t` is used outside the loops that assign it first",
    );
    // A global: later code, and later compiles, may read it.
    let l = loops("acc kernels {\n  for i in 0..n { s = a[i]; b[i] = s }\n}\n");
    sequential(&l[0], "`s` is a global");
}

#[test]
fn a_private_clause_on_a_kernels_loop_makes_the_scalar_private() {
    let l = loops(
        "acc kernels {\n  acc loop private(s)\n  for i in 0..n { s = a[i]; b[i] = s * s }\n}\n",
    );
    parallel(&l[0]);
}

#[test]
fn constant_subscripts_outside_the_loop_range_do_not_conflict() {
    // i ≥ 1: a[0] is never written.
    let l = loops("acc kernels {\n  for i in 1..n { a[i] = a[0] + b[i] }\n}\n");
    parallel(&l[0]);
    // i ≤ n - 1: a[n] (a symbol's subscript) is never written (the runtime checks bounds).
    let l = loops("acc kernels {\n  for i in 0..n-1 { a[i] = a[n - 1] * b[i] }\n}\n");
    parallel(&l[0]);
    // An inclusive range: i ≤ 49, element 50 is read only.
    let l = loops("acc kernels {\n  for i in 0..=49 { a[i] = a[50] }\n}\n");
    parallel(&l[0]);
    // Two ranges a symbol apart: [0, k-1] written, [k, 2k-1] read.
    let l = loops("acc kernels {\n  for i in 0..k { a[i] = a[i + k] }\n}\n");
    parallel(&l[0]);
    // 0 is in 0..n: iteration 0 writes what the others read.
    let l = loops("acc kernels {\n  for i in 0..n { a[i] = a[0] }\n}\n");
    sequential(
        &l[0],
        "`a[i]` is written and `a[0]` read by another iteration",
    );
    // n - 1 is the last value of 0..n.
    let l = loops("acc kernels {\n  for i in 0..n { a[i] = a[n - 1] }\n}\n");
    sequential(&l[0], "`a[i]` is written and `a[n - 1]` read");
    // [0, k] and [k, 2k] share k.
    let l = loops("acc kernels {\n  for i in 0..=k { a[i] = a[i + k] }\n}\n");
    sequential(&l[0], "`a[i]` is written and `a[i + k]` read");
    // A bound the loop assigns is no symbol; neither is one of unknown sign's step.
    let l = loops("acc kernels {\n  for i in 1..n { a[i] = a[0]; k = 2 }\n}\n");
    sequential(&l[0], "scalar `k`");
}
