//! Tests of the host-code warnings (`hostflow`: host accesses during `async` transfers,
//! `present` of data nothing makes present) and of `--info`'s data and launch lines
//! (`present(A) (held by …)`, adjustments of launch sizes).

use super::*;
use crate::span::SourceFile;

const PRE: &str = "let n = 100\nlet a = zeros(n)\nlet b = zeros(n)\n";

/// The warnings of a program that compiles, as messages.
#[track_caller]
fn warnings(src: &str) -> Vec<String> {
    let text = format!("{PRE}{src}");
    match crate::check_source(&SourceFile::new("t.acc", text.as_str())) {
        Ok(c) => c.warnings.into_iter().map(|d| d.message).collect(),
        Err(d) => panic!(
            "{:#?}\n{text}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        ),
    }
}

#[track_caller]
fn quiet(src: &str) {
    assert_eq!(warnings(src), Vec::<String>::new(), "\n{src}");
}

/// The `--info` feedback of a program.
fn info(src: &str) -> String {
    let text = format!("{PRE}{src}");
    let source = SourceFile::new("t.acc", text.as_str());
    let compiled = crate::check_source(&source).expect("compiles");
    feedback(&source, &compiled.hir, &compiled.analysis)
}

const READ: &str =
    "`a` is read on the host while an asynchronous copy to the host may still be writing it";
const OVERWRITE: &str =
    "`a` is written on the host while an asynchronous copy to the host may still overwrite it";
const WRITE_B: &str =
    "`b` is written on the host while an asynchronous copy to the device may still be reading it";

// ---------------------------------------------------------------------------------------------
// Host accesses during asynchronous transfers
// ---------------------------------------------------------------------------------------------

#[test]
fn a_host_read_after_an_async_update_self_needs_a_wait() {
    let entered = "acc enter data copyin(a, b)\n";
    assert_eq!(
        warnings(&format!(
            "{entered}acc update self(a) async(1)\nprint(a[0])\n"
        )),
        [READ]
    );
    assert_eq!(
        warnings(&format!(
            "{entered}acc update host(a) async\nlet s = sum(a)\n"
        )),
        [READ]
    );
    assert_eq!(
        warnings(&format!(
            "{entered}acc update self(a) async(1)\na[0] = 1.0\n"
        )),
        [OVERWRITE]
    );
    // Only the first access after each operation is reported.
    assert_eq!(
        warnings(&format!(
            "{entered}acc update self(a) async(1)\nprint(a[0])\nprint(a[1])\n"
        )),
        [READ]
    );
    // A wait for another queue does not cover it.
    assert_eq!(
        warnings(&format!(
            "{entered}acc update self(a) async(1)\nacc wait(2)\nprint(a[0])\n"
        )),
        [READ]
    );
    // Storage bound to `a` is `a`.
    assert_eq!(
        warnings(&format!(
            "{entered}let v = a\nacc update self(v) async(1)\nprint(a[0])\n"
        )),
        [READ]
    );
}

#[test]
fn the_wait_that_covers_the_queue_silences_it() {
    let e = "acc enter data copyin(a, b)\n";
    for fix in [
        "acc update self(a) async(1)\nacc wait(1)\nprint(a[0])\n",
        "acc update self(a) async(1)\nacc wait\nprint(a[0])\n",
        "acc update self(a) async(1)\nacc wait(2, 1)\nprint(a[0])\n",
        "acc update self(a) async\nacc wait\nprint(a[0])\n",
        "acc update self(a) async\nacc wait(-1)\nprint(a[0])\n",
        "acc update self(a) async(1)\nacc_wait(1)\nprint(a[0])\n",
        "acc update self(a) async(1)\nacc_wait_all()\nprint(a[0])\n",
        // `acc wait(1) async(2)` hands queue 1's operations to queue 2.
        "acc update self(a) async(1)\nacc wait(1) async(2)\nacc wait(2)\nprint(a[0])\n",
        // A synchronous construct whose `wait` clause covers the queue.
        "acc update self(a) async(1)\nacc parallel loop present(b) wait(1)\nfor i in 0..n { b[i] = 1.0 }\nprint(a[0])\n",
        // A queue computed at run time: any wait with a queue computed at run time may cover it.
        "let q = 3\nacc update self(a) async(q)\nacc wait(q)\nprint(a[0])\n",
        // A function that waits.
        "fn sync() { acc wait }\nacc update self(a) async(1)\nsync()\nprint(a[0])\n",
        // Not an access of the elements: rebinding, the length.
        "acc update self(a) async(1)\nlet m = len(a)\na = zeros(n)\nprint(a[0])\n",
        // `if_present` and `if` make the transfer uncertain.
        "acc update self(a) async(1) if_present\nprint(a[0])\n",
        "acc update self(a) async(1) if(n > 3)\nprint(a[0])\n",
    ] {
        quiet(&format!("{e}{fix}"));
    }
}

#[test]
fn a_host_write_after_an_async_transfer_to_the_device_needs_a_wait() {
    let e = "acc enter data copyin(a, b)\n";
    assert_eq!(
        warnings(&format!("{e}acc update device(b) async(1)\nb[0] = 2.0\n")),
        [WRITE_B]
    );
    // Reading is fine.
    quiet(&format!("{e}acc update device(b) async(1)\nprint(b[0])\n"));
    quiet(&format!(
        "{e}acc update device(b) async(1)\nacc wait(1)\nb[0] = 2.0\n"
    ));
    // `enter data copyin` of an array certainly absent.
    assert_eq!(
        warnings("acc enter data copyin(b) async(1)\nb[0] = 2.0\nacc wait\n"),
        [WRITE_B]
    );
    // Already present: nothing moves.
    quiet("acc enter data copyin(b)\nacc enter data copyin(b) async(1)\nb[0] = 2.0\n");
}

#[test]
fn async_compute_and_data_constructs_move_absent_arrays() {
    assert_eq!(
        warnings("acc parallel loop async(1)\nfor i in 0..n { a[i] = 1.0 }\nprint(a[0])\n"),
        [READ]
    );
    assert_eq!(
        warnings(
            "acc parallel loop copyout(a) async(1)\nfor i in 0..n { a[i] = 1.0 }\na[0] = 1.0\n"
        ),
        [OVERWRITE]
    );
    assert_eq!(
        warnings("acc parallel loop async(1)\nfor i in 0..n { a[i] = b[i] }\nb[0] = 1.0\n"),
        [WRITE_B]
    );
    assert_eq!(
        warnings("acc data copy(a) async(2) {\n  acc parallel loop present(a) async(2)\n  for i in 0..n { a[i] = 1.0 }\n}\nprint(a[0])\n"),
        [READ]
    );
    assert_eq!(
        warnings("acc data copyin(b) async(2) {\n  b[0] = 1.0\n}\nacc wait\n"),
        [WRITE_B]
    );
    assert_eq!(
        warnings("acc enter data copyin(a)\nacc exit data copyout(a) async(1)\nprint(a[0])\n"),
        [READ]
    );
    for fix in [
        "acc parallel loop async(1)\nfor i in 0..n { a[i] = 1.0 }\nacc wait(1)\nprint(a[0])\n",
        // Held by a data construct: nothing moves at the construct.
        "acc data copy(a) {\n  acc parallel loop async(1)\n  for i in 0..n { a[i] = 1.0 }\n  print(b[0])\n  acc wait\n}\nprint(a[0])\n",
        // Entered before: present, nothing moves.
        "acc enter data copyin(a)\nacc parallel loop async(1)\nfor i in 0..n { a[i] = 1.0 }\nprint(a[0])\n",
        // A reduction's result makes the construct wait for its queue.
        "let s = 0.0\nacc parallel loop reduction(+: s) async(1)\nfor i in 0..n { s += a[i]; a[i] = 0.0 }\nprint(a[0])\n",
        // Inside a data construct that holds it, `exit data` moves nothing.
        "acc data copy(a) {\n  acc enter data copyin(a)\n  acc exit data copyout(a) async(1)\n  print(a[0])\n}\n",
        // A parameter may be present already (the caller's data).
        "fn f(x: f64[]) {\n  acc parallel loop async(1)\n  for i in 0..len(x) { x[i] = 1.0 }\n  print(x[0])\n}\n",
    ] {
        quiet(fix);
    }
}

#[test]
fn control_flow_keeps_only_what_is_certain() {
    let e = "acc enter data copyin(a, b)\n";
    // After an `if` that waits on one side only, the operation may be done.
    quiet(&format!(
        "{e}acc update self(a) async(1)\nif n > 5 {{\n  acc wait(1)\n}}\nprint(a[0])\n"
    ));
    // Waiting on both sides.
    quiet(&format!("{e}acc update self(a) async(1)\nif n > 5 {{\n  acc wait(1)\n}} else {{\n  acc wait\n}}\nprint(a[0])\n"));
    // Neither side waits: still pending.
    assert_eq!(
        warnings(&format!(
            "{e}acc update self(a) async(1)\nif n > 5 {{\n  print(1)\n}}\nprint(a[0])\n"
        )),
        [READ]
    );
    // An operation started on one side only is not certain after the `if`.
    quiet(&format!(
        "{e}if n > 5 {{\n  acc update self(a) async(1)\n}}\nprint(a[0])\n"
    ));
    // A loop whose body waits starts every iteration from nothing pending.
    quiet(&format!(
        "{e}acc update self(a) async(1)\nfor i in 0..3 {{\n  print(a[i])\n  acc wait\n}}\n"
    ));
    // A loop that does not wait: the first iteration reads before the wait.
    assert_eq!(
        warnings(&format!(
            "{e}acc update self(a) async(1)\nfor i in 0..3 {{\n  print(a[i])\n}}\nacc wait\n"
        )),
        [READ]
    );
    // Inside a function body too.
    assert_eq!(
        warnings("fn f(m: i64) {\n  let x = zeros(m)\n  acc enter data copyin(x) async(1)\n  x[0] = 1.0\n  acc wait\n}\n"),
        ["`x` is written on the host while an asynchronous copy to the device may still be reading it"]
    );
}

#[test]
fn the_async_warning_points_at_the_access_and_the_operation() {
    let text = format!("{PRE}acc enter data copyin(a)\nacc update self(a) async(3)\nprint(a[0])\n");
    let c = crate::check_source(&SourceFile::new("t.acc", text.as_str())).expect("compiles");
    let [w] = c.warnings.as_slice() else {
        panic!("{:?}", c.warnings)
    };
    assert_eq!(text.get(w.span().range()), Some("a[0]"));
    assert_eq!(w.labels.len(), 2);
    assert_eq!(text.get(w.labels[1].span.range()), Some("a"));
    assert!(w
        .help
        .as_deref()
        .unwrap_or("")
        .starts_with("add `acc wait(3)` before this access"));
}

// ---------------------------------------------------------------------------------------------
// `present` of data nothing makes present
// ---------------------------------------------------------------------------------------------

const ABSENT_A: &str =
    "`a` is not on the device here: no data construct around this holds it and nothing before makes it present";

#[test]
fn present_of_data_never_entered_is_warned_of() {
    assert_eq!(
        warnings("acc parallel loop present(a)\nfor i in 0..n { a[i] = 1.0 }\n"),
        [ABSENT_A]
    );
    assert_eq!(warnings("acc update self(a)\n"), [ABSENT_A]);
    assert_eq!(warnings("acc update device(a[0:10])\n"), [ABSENT_A]);
    assert_eq!(
        warnings("acc data present(a) {\n  print(1)\n}\n"),
        [ABSENT_A]
    );
    assert_eq!(
        warnings("acc parallel loop default(present)\nfor i in 0..n { a[i] = 1.0 }\n"),
        [ABSENT_A]
    );
    // An `enter data` after it comes too late.
    assert_eq!(
        warnings("acc update self(a)\nacc enter data copyin(a)\n"),
        [ABSENT_A]
    );
    // The run stops at the first: one warning per array.
    assert_eq!(
        warnings("acc update self(a)\nacc update self(a)\n"),
        [ABSENT_A]
    );
}

#[test]
fn present_of_data_made_present_is_quiet() {
    for fix in [
        "acc data copy(a) {\n  acc parallel loop present(a)\n  for i in 0..n { a[i] = 1.0 }\n  acc update self(a)\n}\n",
        "acc data no_create(a) {\n  acc update self(a)\n}\n",
        "acc enter data copyin(a)\nacc update self(a)\n",
        "acc enter data create(a[0:10])\nacc update self(a[0:10])\n",
        "acc_copyin(a)\nacc update self(a)\n",
        "acc_create(a)\nacc update self(a)\n",
        "acc declare create(a)\nacc update self(a)\n",
        "let v = a\nacc enter data copyin(v)\nacc update self(a)\n",
        "acc update self(a) if_present\n",
        "acc update self(a) if(n > 5)\n",
        "acc parallel loop present(a) if(n > 5)\nfor i in 0..n { a[i] = 1.0 }\n",
        // A later iteration of the loop has entered it.
        "for it in 0..2 {\n  if it > 0 {\n    acc update self(a)\n  }\n  acc enter data copyin(a)\n}\n",
        // A function that enters data, called before.
        "fn up(x: f64[]) { acc enter data copyin(x) }\nup(a)\nacc update self(a)\n",
        // An asynchronous construct may leave it present for a while.
        "acc parallel loop async(1)\nfor i in 0..n { a[i] = 1.0 }\nacc update self(a)\nacc wait\n",
        // A function cannot know what its callers hold.
        "fn f(x: f64[]) {\n  acc update self(x)\n}\nfn g() {\n  acc update self(a)\n}\n",
        // The host device shares memory: everything is present there.
        "acc_set_device_type(acc_device_host)\nacc update self(a)\n",
        // Arrays a call returns may be any array.
        "fn get() -> f64[] { return a }\nlet c = get()\nacc enter data copyin(a)\nacc update self(c)\n",
    ] {
        quiet(fix);
    }
    // Selecting a device with memory of its own keeps the warning.
    assert_eq!(
        warnings("acc_set_device_type(acc_device_emulated)\nacc update self(a)\n"),
        [ABSENT_A]
    );
}

#[test]
fn present_warnings_see_only_this_inputs_arrays() {
    // In the REPL, an earlier input may have entered the data.
    let mut fe = crate::Frontend::new();
    fe.compile(&SourceFile::new(
        "1",
        "let a = zeros(10)\nacc enter data copyin(a)\nlet c = zeros(10)",
    ))
    .expect("compiles");
    let later = fe
        .compile(&SourceFile::new(
            "2",
            "acc update self(a)\nlet v = c\nacc update self(v)",
        ))
        .expect("compiles");
    assert!(later.warnings.is_empty(), "{:?}", later.warnings);
    let fresh = fe
        .compile(&SourceFile::new(
            "3",
            "let d = zeros(10)\nacc update self(d)",
        ))
        .expect("compiles");
    assert_eq!(fresh.warnings.len(), 1);
}

// ---------------------------------------------------------------------------------------------
// `--info`: data held by a data region, launch adjustments
// ---------------------------------------------------------------------------------------------

#[test]
fn feedback_says_present_for_arrays_an_enclosing_data_region_holds() {
    let text = info(
        "acc data copyin(a) create(b) {\n  acc parallel loop\n  for i in 0..n { b[i] = a[i] }\n}\nacc parallel loop\nfor i in 0..n { b[i] = a[i] }\n",
    );
    assert!(
        text.contains("t.acc:5:3:   data: implicit firstprivate(n), present(b) (held by the data region at 4:1), present(a) (held by the data region at 4:1)\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "t.acc:8:1:   data: implicit firstprivate(n), implicit copy(b), implicit copy(a)\n"
        ),
        "{text}"
    );
    // The innermost holder; `no_create` holds nothing; functions see only their own body.
    let text = info("acc data copy(a) {\n  acc data copy(a) no_create(b) {\n    acc parallel loop\n    for i in 0..n { b[i] = a[i] }\n  }\n}\nfn f(x: f64[]) {\n  acc parallel loop\n  for i in 0..len(x) { x[i] = 1.0 }\n}\n");
    assert!(
        text.contains("implicit copy(b), present(a) (held by the data region at 5:3)"),
        "{text}"
    );
    assert!(text.contains("implicit copy(x)"), "{text}");
    // A section is only part of the array: the region finds it partly present.
    let text =
        info("acc data copy(a[0:10]) {\n  acc parallel loop\n  for i in 0..n { a[i] = 1.0 }\n}\n");
    assert!(
        text.contains("data: implicit firstprivate(n), implicit copy(a)\n"),
        "{text}"
    );
}

fn launch_lines(src: &str) -> Vec<String> {
    info(src)
        .lines()
        .filter_map(|l| l.split_once("   launch: ").map(|(_, x)| x.to_string()))
        .collect()
}

#[test]
fn feedback_reports_the_launch_sizes_that_change() {
    assert_eq!(
        launch_lines("acc parallel loop vector_length(100)\nfor i in 0..n { a[i] = 1.0 }\n"),
        ["`vector_length(100)` rounded up to 128 (whole warps of 32 threads)"]
    );
    assert_eq!(
        launch_lines("let v = 64\nacc parallel num_workers(64) vector_length(v) {\n  acc loop gang worker\n  for i in 0..n { a[i] = 1.0 }\n}\n"),
        [
            "`num_workers(64)` clipped to 32 (the most workers of a gang on an NVIDIA GPU)",
            "`vector_length(v)` at most 32 at run time (a thread block holds at most 1024 threads)"
        ]
    );
    assert_eq!(
        launch_lines("let w = 4\nacc parallel num_workers(w) vector_length(256) {\n  acc loop gang worker\n  for i in 0..n { a[i] = 1.0 }\n}\n"),
        ["`vector_length(256)` cut to 1024 / num_workers at run time where num_workers is above 4 (a thread block holds at most 1024 threads)"]
    );
    assert_eq!(
        launch_lines("let w = 4\nacc parallel num_workers(w) {\n  acc loop gang worker\n  for i in 0..n { a[i] = 1.0 }\n}\n"),
        ["`num_workers(w)` cuts the default vector length of 128 to 1024 / num_workers at run time where num_workers is above 8 (a thread block holds at most 1024 threads)"]
    );
    assert_eq!(
        launch_lines("acc kernels num_gangs(8) {\n  for i in 1..n { a[i] = a[i - 1] }\n}\n"),
        ["`num_gangs(8)` not used: the region runs as one gang"]
    );
    for same in [
        "acc parallel loop vector_length(64) num_workers(4) num_gangs(8)\nfor i in 0..n { a[i] = 1.0 }\n",
        "acc kernels loop num_gangs(8)\nfor i in 0..n { a[i] = 1.0 }\n",
        "let w = 4\nacc parallel num_workers(w) vector_length(32) {\n  acc loop gang worker\n  for i in 0..n { a[i] = 1.0 }\n}\n",
    ] {
        assert_eq!(launch_lines(same), Vec::<String>::new(), "{same}");
    }
}

/// What `--info` says of a region's block is what the runtime launches: for constant sizes
/// that compile, `acc_abi::nvidia_block` (the runtime's rule) leaves them as the compiler passes
/// them, and the compiler rejects exactly those whose block the runtime would have to change.
#[test]
fn constant_launch_sizes_compile_exactly_when_the_runtime_takes_them_as_they_are() {
    for w in [
        None,
        Some(1),
        Some(2),
        Some(4),
        Some(8),
        Some(16),
        Some(32),
        Some(33),
        Some(64),
    ] {
        for v in [
            None,
            Some(1),
            Some(31),
            Some(32),
            Some(100),
            Some(128),
            Some(512),
            Some(1000),
            Some(1024),
            Some(2048),
        ] {
            let mut clauses = String::new();
            if let Some(w) = w {
                clauses += &format!(" num_workers({w})");
            }
            if let Some(v) = v {
                clauses += &format!(" vector_length({v})");
            }
            let text = format!("{PRE}acc parallel{clauses} {{\n  acc loop gang worker\n  for i in 0..n {{ a[i] = 1.0 }}\n}}\n");
            let passed = v.map_or(acc_abi::ABSENT, |v: i64| (v + 31) / 32 * 32);
            let given_w = w.unwrap_or(acc_abi::ABSENT);
            let (x, y) = acc_abi::nvidia_block(given_w, passed);
            // The default vector length counts as given (a constant block of more than 1024
            // threads is an error, LANGUAGE.md 7.2).
            let vector = if v.is_none() {
                acc_abi::DEFAULT_VECTOR_LENGTH
            } else {
                passed
            };
            let unchanged = (w.is_none() || i64::from(y) == given_w) && i64::from(x) == vector;
            let compiled = crate::check_source(&SourceFile::new("t.acc", text.as_str()));
            assert_eq!(compiled.is_ok(), unchanged, "{clauses}");
            if let Ok(c) = compiled {
                let r = &c.analysis.regions[0];
                assert!(
                    r.adjustments
                        .iter()
                        .all(|a| matches!(a.kind, AdjustmentKind::VectorRounded { .. })),
                    "{clauses}: {:?}",
                    r.adjustments
                );
            }
        }
    }
}

/// `num_gangs` is reported unused only where the lowered region runs as one gang
/// (`ir::gangs::one_gang`, which the back ends and the runtime follow).
#[test]
fn unused_num_gangs_agrees_with_the_lowered_region() {
    for src in [
        "acc kernels num_gangs(8) {\n  for i in 1..n { a[i] = a[i - 1] }\n}\n",
        "acc kernels num_gangs(8) {\n  for i in 0..n { a[i] = 1.0 }\n}\n",
        "acc kernels num_gangs(8) async {\n  for i in 0..n { a[i] = 1.0 }\n  for i in 0..n { b[i] = 1.0 }\n}\n",
        "acc kernels num_gangs(8) {\n  for i in 0..n { a[i] = 1.0 }\n  for i in 0..n { b[i] = 1.0 }\n}\n",
        "acc kernels loop num_gangs(8)\nfor i in 1..n { a[i] = a[i - 1] }\n",
        "acc kernels loop num_gangs(8)\nfor i in 0..n { a[i] = 1.0 }\n",
        "acc kernels num_gangs(8) {\n  let t = 2.0\n  for i in 0..n { a[i] = t }\n}\n",
        "acc kernels num_gangs(8) {\n  if n > 2 {\n    for i in 0..n { a[i] = 1.0 }\n  }\n}\n",
        "acc parallel loop num_gangs(8)\nfor i in 0..n { a[i] = 1.0 }\n",
    ] {
        let text = format!("{PRE}{src}");
        let c = crate::check_source(&SourceFile::new("t.acc", text.as_str())).expect("compiles");
        let m = crate::lower::lower(&c.hir, &c.analysis);
        let r = &c.analysis.regions[0];
        let unused = r.adjustments.iter().any(|a| a.kind == AdjustmentKind::GangsUnused);
        if unused {
            let lowered: Vec<_> = m.regions.iter().filter(|x| x.span == r.span).collect();
            assert!(!lowered.is_empty(), "{src}");
            assert!(
                lowered.iter().all(|x| crate::ir::gangs::one_gang(x)),
                "reported unused but runs gangs:\n{src}"
            );
        }
    }
}
