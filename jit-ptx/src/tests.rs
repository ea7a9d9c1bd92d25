//! Unit tests of the emitter's pieces: registers of locals, schedules, reductions' identities,
//! the instructions chosen for C's semantics, and which regions run as one gang.

use acc_lang::ir::{self, ReductionOp, ScalarType, Ty};
use acc_lang::span::SourceFile;

use crate::cx::Cx;
use crate::fx::{FnKind, Fx, Val};
use crate::plan::{Mode, Plan};
use crate::ptx::Class;
use crate::{emit_module, PtxOptions};

fn lower(text: &str) -> ir::Module {
    acc_lang::lower_source(&SourceFile::new("test.acc", text)).unwrap_or_else(|d| panic!("{d:?}"))
}

/// The PTX text of the module of `text`, which must have no unsupported region.
fn ptx(text: &str) -> String {
    let m = emit_module(&lower(text), &PtxOptions::default());
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    m.text
}

#[test]
fn locals_get_registers_of_their_class() {
    let module = ir::Module::default();
    let mut cx = Cx::new(&module, PtxOptions::default());
    let mut fx = Fx::new(&mut cx, FnKind::Kernel, Plan::no_loops(Mode::Block));
    let Val::Scalar(r, ScalarType::F32) = fx.fresh_local(Ty::Scalar(ScalarType::F32)) else {
        panic!("a scalar local");
    };
    assert_eq!(r.class, Class::F32);
    let Val::Scalar(p, _) = fx.fresh_local(Ty::Scalar(ScalarType::Bool)) else {
        panic!("a scalar local");
    };
    assert_eq!(p.class, Class::Pred);
    let Val::Array(a) = fx.fresh_local(Ty::Array {
        elem: ScalarType::I32,
        rank: 3,
    }) else {
        panic!("an array local");
    };
    // The header address, the data pointer and one register per extent, all distinct.
    let mut all = vec![a.hdr, a.data];
    all.extend(&a.dims);
    assert_eq!(all.len(), 5);
    assert!(all.iter().all(|r| r.class == Class::B64));
    let mut names: Vec<String> = all.iter().map(|r| r.to_string()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), 5);
    assert_eq!(a.elem, ScalarType::I32);
}

#[test]
fn reduction_identities() {
    let module = ir::Module::default();
    let mut cx = Cx::new(&module, PtxOptions::default());
    let mut fx = Fx::new(&mut cx, FnKind::Kernel, Plan::no_loops(Mode::Block));
    let cases = [
        (ReductionOp::Add, ScalarType::F64, "0d0000000000000000"),
        (ReductionOp::Mul, ScalarType::F32, "0f3F800000"),
        (ReductionOp::Max, ScalarType::I32, "0x80000000"),
        (ReductionOp::Min, ScalarType::I64, "9223372036854775807"),
        (ReductionOp::Max, ScalarType::F32, "0fFF800000"),
        (ReductionOp::BitAnd, ScalarType::I64, "0xFFFFFFFFFFFFFFFF"),
        (ReductionOp::And, ScalarType::Bool, "1"),
        (ReductionOp::Or, ScalarType::Bool, "0"),
    ];
    for (op, s, literal) in cases {
        let r = fx.fresh_of(s);
        fx.take_code();
        let red = ir::Reduction::new(ir::LocalId(0), op, s).unwrap();
        fx.set_identity(r, red.identity);
        let code = fx.take_code();
        assert!(
            code.trim_end().ends_with(&format!("{r}, {literal};")),
            "{op:?} {s:?}: {code}",
        );
    }
}

#[test]
fn loops_share_iterations_by_their_levels() {
    // gang vector: first = ctaid * nthreads + tid, stride = nctaid * nthreads.
    let text = ptx("let a = zeros(100)
acc parallel loop copy(a)
for i in 0..100 {
    a[i] = 1.0
}
");
    assert!(text.contains("mul.wide.u32 %rd"), "{text}");
    assert!(text.contains("%ctaid.x") && text.contains("%nctaid.x"));
    // A gang loop alone strides by whole blocks, with its vector loop over the block's
    // threads, and a barrier after the vector loop.
    let text = ptx("let a = zeros(10, 10)
acc parallel loop gang copy(a)
for i in 0..10 {
    acc loop vector
    for j in 0..10 {
        a[i, j] = 1.0
    }
}
");
    assert!(text.contains("bar.sync 0"), "{text}");
}

#[test]
fn collapse_divides_the_flat_iteration_back() {
    let text = ptx("let a = zeros(i32, 3, 4, 5)
acc parallel loop collapse(3) copy(a)
for i in 0..3 {
    for j in 0..4 {
        for k in 0..5 {
            a[i, j, k] = 1
        }
    }
}
");
    // Divided once for the first iteration and once for the stride (two levels below the
    // first, a `rem` and a `div` each), outside the loop; advanced with carries inside it.
    assert_eq!(text.matches("rem.u64").count(), 4, "{text}");
    assert_eq!(text.matches("div.u64").count(), 4, "{text}");
    let top = text.find("_par:").expect("the loop");
    assert!(!text[top..].contains("div.u64"), "{text}");
    assert!(text[top..].contains("sub.u64"), "{text}");
    assert_eq!(
        crate::decompose(3 * 20 - 1, &[3, 4, 5]),
        vec![2, 3, 4],
        "the last iteration"
    );
}

#[test]
fn c_semantics_instructions() {
    let text = ptx("let r = zeros(i32, 8)
let f = zeros(f32, 8)
let d: i32 = 3
let x = 2.5f32
acc serial copy(r, f) {
    r[0] = d / 2
    r[1] = d % d
    r[2] = d << d
    r[3] = (x as i32)
    f[0] = x * x + x
    f[1] = fma(x, x, x)
}
");
    // A constant divisor needs no zero check; a variable one does (and `MIN % -1` is 0).
    assert!(text.contains("div.s32"));
    assert!(text.contains("setp.eq.s32") && text.contains("rem.s32"));
    // Shift counts are masked to the width.
    assert!(text.contains("and.b32") && text.contains("shl.b32"));
    // Floats: rounded operations, no contraction, fma only when asked for.
    assert!(text.contains("mul.rn.f32") && text.contains("add.rn.f32"));
    assert_eq!(text.matches("fma.rn.f32").count(), 1);
    // Saturating conversion with NaN to 0.
    assert!(text.contains("cvt.rzi.s32.f32") && text.contains("testp.notanumber.f32"));
}

#[test]
fn unchecked_drops_bounds_checks() {
    let source = "let a = zeros(100)
acc parallel loop copy(a)
for i in 0..100 {
    a[i] = a[i] + 1.0
}
";
    let m = lower(source);
    let checked = emit_module(&m, &PtxOptions { unchecked: false }).text;
    let unchecked = emit_module(&m, &PtxOptions { unchecked: true }).text;
    assert!(checked.contains("atom.global.cas.b32"));
    assert!(!unchecked.contains("atom.global.cas.b32"));
}

#[test]
fn serial_and_dependent_kernels_run_as_one_gang() {
    let m = lower(
        "let a = zeros(10)
acc serial copy(a) {
    a[0] = 1.0
}
acc kernels copy(a) {
    a[0] = 2.0
    for i in 1..10 {
        a[i] = a[i - 1]
    }
}
acc parallel loop copy(a)
for i in 0..10 {
    a[i] = 3.0
}
let s = 3
acc kernels copy(s) {
    s = s * 2
}
let t = 1
acc kernels copy(a) copy(t) {
    t = t + 1
    for i in 0..10 {
        a[i] = 4.0
    }
}
acc kernels copy(a) {
    let k = 5.0
    acc loop gang
    for i in 0..10 {
        a[i] = k
    }
}
",
    );
    // A `kernels` region of `copy` scalar assignments alone runs as one gang (each block
    // would apply the assignment again), and so does one whose loop carries a dependence
    // from the statement before it (`a[i - 1]`: sequential, so no gang nest to split off); a gang's own scalar beside one loop nest does not need to. The fifth region
    // is split (LANGUAGE.md 7.6): its assignment of `t` is a single-gang kernel (the fifth),
    // its loop nest a kernel of its own (the seventh, numbered after every construct).
    let one: Vec<bool> = m.regions.iter().map(crate::plan::one_gang).collect();
    assert_eq!(one, vec![true, true, false, true, true, false, false]);
}

#[test]
fn unsupported_regions_are_listed_with_the_reason() {
    let m = emit_module(
        &lower(
            "let a = zeros(10)
acc parallel loop copy(a)
for i in 0..10 {
    print(a)
}
let b = zeros(10)
acc parallel loop copy(b)
for i in 0..10 {
    b[i] = 1.0
}
",
        ),
        &PtxOptions::default(),
    );
    assert_eq!(m.kernels.len(), 1);
    assert_eq!(m.kernels[0].name, "acc_region_1");
    assert_eq!(m.unsupported.len(), 1);
    assert!(m.unsupported[0].1.contains("print"), "{:?}", m.unsupported);
    assert!(!m.text.contains("acc_region_0"));
}

/// The number of bounds checks (branches to a failure path) in `text`.
fn checks(text: &str) -> usize {
    text.lines().filter(|l| l.contains("_fail;")).count()
}

#[test]
fn bounds_checks_of_counted_loops_are_hoisted_into_a_checked_copy() {
    let text = ptx("let x = zeros(100)\nlet y = zeros(100)\nlet n = 100\n\
         acc parallel loop\nfor i in 1..n - 1 {\n  y[i] = x[i - 1] + x[i + 1]\n}\n");
    // The fast copy runs when one pre-check before the loop holds; the checked copy keeps
    // every access's own check (3 accesses), so that a failure names its site.
    assert_eq!(text.matches("_checked;").count(), 1, "{text}");
    assert_eq!(checks(&text), 3, "{text}");
    let unchecked = emit_module(
        &lower("let x = zeros(100)\nacc parallel loop\nfor i in 0..100 {\n  x[i] = 1.0\n}\n"),
        &PtxOptions { unchecked: true },
    );
    assert_eq!(checks(&unchecked.text), 0);
    assert!(!unchecked.text.contains("_checked;"));
}

#[test]
fn an_access_that_varies_otherwise_keeps_its_check_in_both_copies() {
    // `x[k]` with `k` read from memory cannot be proven before the loop.
    let text = ptx("let x = zeros(100)\nlet idx = zeros(i64, 100)\n\
         acc parallel loop\nfor i in 0..100 {\n  x[idx[i]] = 1.0\n}\n");
    // `idx[i]` is checked only in the checked copy; `x[idx[i]]` in both.
    assert_eq!(checks(&text), 3, "{text}");
}

#[test]
fn a_sequential_loop_is_versioned_whole() {
    let text = ptx("let x = zeros(100)\nlet s = 0.0\n\
         acc serial {\n  for i in 0..100 {\n    s += x[i]\n  }\n}\n");
    // Two copies of the loop: two loop heads.
    assert_eq!(text.matches("_for:").count(), 2, "{text}");
}

#[test]
fn a_straight_sequential_loop_runs_unrolled_with_its_checks_at_the_end_of_a_trip() {
    let text = ptx(
        "let x = zeros(10)\nlet idx = zeros(i64, 10)\nlet s = 0.0\n\
         acc serial copy(s) {\n  let t = 0.0\n  for j in 0..10 {\n    t += x[idx[j]]\n  }\n  s = t\n}\n",
    );
    let trip = &text[text.find("_unrolled:").expect("an unrolled trip")..];
    let trip = &trip[..trip.find("_rolled:").expect("the rolled loop after it")];
    // Four gathers, each load of `x` from an address that is safe until the check.
    assert_eq!(trip.matches("ld.global.f64").count(), 4, "{trip}");
    assert_eq!(trip.matches("selp.b64").count(), 4, "{trip}");
    // The checks of the trip, in order, after its last load.
    let last_load = trip.rfind("ld.global.f64").unwrap();
    assert_eq!(trip[last_load..].matches("_fail;").count(), 4, "{trip}");
}

#[test]
fn a_loop_with_a_branch_or_a_call_is_not_unrolled() {
    let text = ptx(
        "let x = zeros(10)\nlet s = 0.0\n\
         acc serial copy(s) {\n  for j in 0..10 {\n    if x[j] > 0.0 {\n      s += 1.0\n    }\n  }\n}\n",
    );
    assert!(!text.contains("_unrolled:"), "{text}");
}

/// The code of a thread loop's unrolled trips, from its head to its end label.
fn unrolled_trips(text: &str) -> &str {
    let trip = &text[text.find("_unrolled:").expect("unrolled trips")..];
    &trip[..trip.find("_unrolledend:").expect("their end")]
}

#[test]
fn a_straight_thread_loop_runs_unrolled_with_every_load_before_the_stores() {
    let text = ptx("let x = zeros(1000)\nlet y = zeros(1000)\n\
         acc parallel loop\nfor i in 0..1000 {\n  y[i] = 2.0 * x[i] + y[i]\n}\n");
    let trips = unrolled_trips(&text);
    let copies = crate::unroll::THREAD_UNROLL as usize;
    assert_eq!(
        trips.matches("ld.global.f64").count(),
        2 * copies,
        "{trips}"
    );
    assert_eq!(trips.matches("st.global.f64").count(), copies, "{trips}");
    let last_load = trips.rfind("ld.global.f64").unwrap();
    let first_store = trips.find("st.global.f64").unwrap();
    assert!(last_load < first_store, "{trips}");
    // `y` is read before it is stored: no pair of arrays to tell apart at run time.
    assert!(!text.contains("setp.eq.u64"), "{text}");
}

#[test]
fn an_element_stored_then_read_is_forwarded_and_other_names_are_told_apart() {
    let text = ptx(
        "let a = zeros(1000)\nlet b = zeros(1000)\nlet c = zeros(1000)\n\
         acc parallel loop\nfor i in 0..1000 {\n  a[i] = 1.0\n  c[i] = a[i] + b[i]\n}\n",
    );
    let trips = unrolled_trips(&text);
    // `a[i]` is not loaded again; `b` is read after the store to `a`, so the trips run only
    // where `a` and `b` are different arrays (and `a` and `a` is no question).
    let copies = crate::unroll::THREAD_UNROLL as usize;
    assert_eq!(trips.matches("ld.global.f64").count(), copies, "{trips}");
    let head = &text[..text.find("_unrolled:").unwrap()];
    assert_eq!(head.matches("setp.eq.u64").count(), 1, "{head}");
}

#[test]
fn a_thread_loop_reading_another_element_of_an_array_it_stores_is_not_unrolled() {
    let text = ptx("let a = zeros(2000)\nlet b = zeros(1000)\n\
         acc parallel loop\nfor i in 0..1000 {\n  a[i] = 1.0\n  b[i] = a[i + 1000]\n}\n");
    assert!(!text.contains("_unrolled:"), "{text}");
}

#[test]
fn proven_neighbours_share_an_address_and_differ_by_immediates() {
    let text = ptx("let a = zeros(100)\nlet b = zeros(100)\n\
         acc parallel loop\nfor i in 1..99 {\n  b[i] = a[i - 1] + a[i] + a[i + 1]\n}\n");
    let trips = unrolled_trips(&text);
    // Per copy: one address for `a[i]` with `-8` and `+8` beside it.
    let copies = crate::unroll::THREAD_UNROLL as usize;
    assert_eq!(trips.matches("+-8];").count(), copies, "{trips}");
    assert_eq!(trips.matches("+8];").count(), copies, "{trips}");
}

#[test]
fn a_row_start_that_a_thread_loop_does_not_change_is_worked_out_before_it() {
    let text = ptx("let a = zeros(10, 100)\nlet b = zeros(10, 100)\n\
         acc parallel loop\nfor j in 1..9 {\n  acc loop\n  for i in 0..100 {\n    \
         b[j, i] = a[j - 1, i] + a[j + 1, i]\n  }\n}\n");
    let trips = unrolled_trips(&text);
    // In the trips no row index is multiplied by an extent: each access is its row's start
    // plus `i` elements, rows `j - 1` and `j + 1` a row's bytes (extent × 8) from `j`'s.
    let muls: Vec<&str> = trips.lines().filter(|l| l.contains("mul.lo.s64")).collect();
    assert!(muls.iter().all(|l| l.ends_with(", 8;")), "{trips}");
    let copies = crate::unroll::THREAD_UNROLL as usize;
    assert_eq!(
        trips.matches("ld.global.f64").count(),
        2 * copies,
        "{trips}"
    );
}

#[test]
fn kernels_take_the_data_pointers_and_extents_of_their_arrays_as_parameters() {
    let text = "let a = zeros(i32, 4, 5)\nlet b = zeros(8)\nlet n = 3\n\
                acc parallel loop\nfor i in 0..n {\n    a[i, 1] = i\n    b[i] = 1.0\n}\n";
    let m = emit_module(&lower(text), &PtxOptions::default());
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    let k = &m.kernels[0];
    let mut ranks: Vec<u32> = k.launch.arrays.iter().map(|a| a.rank).collect();
    ranks.sort();
    assert_eq!(ranks, [1, 2]);
    for a in &k.launch.arrays {
        let i = a.param;
        assert!(
            m.text.contains(&format!(".param .u64 p{i}_data")),
            "{}",
            m.text
        );
        assert!(m.text.contains(&format!("[p{i}_data]")));
        for d in 0..a.rank {
            assert!(m.text.contains(&format!("[p{i}_d{d}]")));
        }
        assert!(!m.text.contains(&format!("p{i}_d{}", a.rank)));
    }
    // The headers are not read: the parameters hold the same values.
    assert!(!m.text.contains("ld.global.nc.u64"), "{}", m.text);
    // The extents follow the other parameters, after `out`.
    let out = m.text.find(".param .u64 out").unwrap();
    assert!(m.text.find("_data").unwrap() > out);
}

#[test]
fn only_kernels_with_unrolled_loops_get_a_register_ceiling() {
    let straight =
        ptx("let x = zeros(64)\nacc parallel loop\nfor i in 0..64 {\n    x[i] = 2.0 * x[i]\n}\n");
    assert!(straight.contains(".maxnreg 128\n{"), "{straight}");
    let branching = ptx(
        "let x = zeros(64)\nacc parallel loop\nfor i in 0..64 {\n    if x[i] > 0.0 {\n        x[i] = 1.0\n    }\n}\n",
    );
    assert!(!branching.contains(".maxnreg"), "{branching}");
}

#[test]
fn arrays_past_the_parameter_space_are_read_from_their_headers() {
    // 80 arrays of rank 6 would need 80 * 7 words of their own: more than 4 KiB in all.
    let mut text = String::new();
    let mut body = String::new();
    for k in 0..80 {
        text += &format!("let a{k} = zeros(1, 1, 1, 1, 1, 2)\n");
        body += &format!("    a{k}[0, 0, 0, 0, 0, i] = 1.0\n");
    }
    text += &format!("acc parallel loop\nfor i in 0..2 {{\n{body}}}\n");
    let m = emit_module(&lower(&text), &PtxOptions::default());
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    let k = &m.kernels[0];
    assert!(
        !k.launch.arrays.is_empty() && k.launch.arrays.len() < 80,
        "{}",
        k.launch.arrays.len()
    );
    let words = m.text.matches(".param .u64").count();
    assert!(words <= 512, "{words} parameters");
    // Every array is read, from its parameters or else from its header.
    assert_eq!(
        m.text.matches("ld.global.nc.u64").count(),
        7 * (80 - k.launch.arrays.len())
    );
}

/// For every store only the leader makes (`@%p st.global… [R]`), whether a load of the same
/// address `[R]` comes after the last barrier before it, in the text's order (a loop's body
/// comes after the barrier that ends its previous iteration).
fn leader_store_after_racing_load(ptx: &str) -> Option<String> {
    let lines: Vec<&str> = ptx.lines().map(str::trim).collect();
    for (i, line) in lines.iter().enumerate() {
        if !(line.starts_with("@%p") && line.contains(" st.global.")) {
            continue;
        }
        let addr = &line[line.find('[')?..=line.find(']')?];
        for earlier in lines[..i].iter().rev() {
            if earlier.starts_with("bar.sync") || earlier.starts_with("bar.warp.sync") {
                break;
            }
            if earlier.starts_with("ld.global") && earlier.contains(addr) {
                return Some(format!("`{earlier}` … `{line}`"));
            }
        }
    }
    None
}

/// A `copy` scalar of a `kernels` region accumulated in a sequential loop lives in a cell that
/// every thread reads and the leader writes. No thread's read of the cell may be in flight when
/// the leader stores: a barrier comes between them (on an H100 the racing reads lost updates of
/// an i32 sum, 1192322944 instead of 1146749120).
#[test]
fn leader_stores_a_cell_only_after_every_thread_read_it() {
    let text = ptx("let n = 100\n\
         let a = zeros(i32, n + 1)\n\
         let s: i32 = 0\n\
         acc kernels copyin(a) copy(s)\n\
         {\n\
             acc loop seq\n\
             for i in 1..=n {\n\
                 s += a[i]\n\
             }\n\
         }\n\
         print(s)\n");
    assert!(text.contains("st.global.b32"), "{text}");
    if let Some(race) = leader_store_after_racing_load(&text) {
        panic!("a leader's store races with a read: {race}\n{text}");
    }
}

#[test]
fn the_race_check_sees_a_load_before_a_leader_store() {
    let racy = "ld.global.b32 %r1, [%rd12];\nadd.s32 %r2, %r1, 1;\n\
                @%p1 st.global.b32 [%rd12], %r2;\nbar.sync 0;";
    assert!(leader_store_after_racing_load(racy).is_some());
    let fenced = "ld.global.b32 %r1, [%rd12];\nadd.s32 %r2, %r1, 1;\nbar.sync 0;\n\
                  @%p1 st.global.b32 [%rd12], %r2;\nbar.sync 0;";
    assert!(leader_store_after_racing_load(fenced).is_none());
}

/// A routine that reads a global array gets the region's parameter for it, the device copy's
/// header, not a slot value of the host's array: the kernel takes no `g{k}` for it, and the
/// header it passes is the one it loaded from that parameter.
#[test]
fn routines_get_the_device_header_of_a_global_array() {
    let m = emit_module(
        &lower(
            "let g = zeros(i64, 4)\n\
             let s = 2\n\
             acc routine seq\n\
             fn get(i: i64) -> i64 {\n\
                 return g[i] * s\n\
             }\n\
             let out = zeros(i64, 4)\n\
             acc data copyin(g) {\n\
                 acc parallel loop copyout(out)\n\
                 for i in 0..4 {\n\
                     out[i] = get(i)\n\
                 }\n\
             }\n\
             print(out)\n",
        ),
        &PtxOptions::default(),
    );
    assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
    let [kernel] = &m.kernels[..] else {
        panic!("one kernel: {:?}", m.kernels);
    };
    // Only the scalar `s` comes as a slot value.
    assert_eq!(kernel.globals.len(), 1, "{:?}", kernel.globals);
    let text = &m.text;
    assert!(
        text.contains(
            "acc_fn_0_get(.param .b64 err, .param .b64 g0, .param .b64 g1, .param .b64 a0)"
        ),
        "{text}"
    );
    // `g` is region parameter 1 (after `out`): its header register goes to the call as `c_g0`.
    let entry = &text[text.find(".entry").unwrap()..];
    let lines: Vec<&str> = entry.lines().map(str::trim).collect();
    let loaded = lines
        .iter()
        .find_map(|l| l.strip_prefix("ld.param.u64 ")?.strip_suffix(", [p1];"))
        .expect("the header of parameter 1 is loaded");
    let header = lines
        .iter()
        .find_map(|l| {
            l.strip_prefix("mov.b64 ")?
                .strip_suffix(&format!(", {loaded};"))
        })
        .expect("the array's header register");
    assert!(
        lines.contains(&format!("st.param.b64 [c_g0], {header};").as_str()),
        "{entry}"
    );
}

#[test]
fn kernels_carry_their_gang_loop_for_the_grid() {
    let m = emit_module(
        &lower(
            "let n = 100
let a = zeros(n, n)
acc parallel loop gang
for j in 0..n {
    acc loop vector
    for i in 0..n {
        a[j, i] = 1.0
    }
}
acc serial {
    let m = 3
    acc loop gang
    for i in 0..m {
        a[0, i] = 2.0
    }
}
",
        ),
        &PtxOptions::default(),
    );
    let launches: Vec<_> = m.kernels.iter().map(|k| &k.launch).collect();
    let [split, serial] = launches.as_slice() else {
        panic!("two kernels: {:?}", m.kernels);
    };
    // The split kernel's blocks share the vector loop, whose bounds are a formula too.
    let gang = split.gang_loop.as_ref().expect("a formula of `n`");
    assert!(split.split && gang.inner.is_some(), "{split:?}");
    // Bounds the region computes have no formula.
    assert_eq!(serial.gang_loop, None);
}
