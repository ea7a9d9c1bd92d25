//! Arrays (with the test allocator's real header layout) and compute regions on the host.

mod common;

use acc_lang::analysis::RegionId;
use acc_lang::builtins::Builtin;
use acc_lang::hir::VarId;
use acc_lang::ir::{
    BinOp::*, Construct, DeviceExprs, Expr, ExprKind, ForLoop, Launch, LocalId, LoopSchedule, Pass,
    Place, Reduction, ReductionOp, Region, RegionParam, RegionReduction, SiteId, Stmt,
};
use common::*;

fn zeros(elem: acc_lang::ir::ScalarType, dims: Vec<Expr>) -> Expr {
    let rank = dims.len() as u8;
    builtin(Builtin::Zeros, dims, arr(elem, rank))
}

#[test]
fn two_dimensional_arrays_are_row_major() {
    // a = zeros(i32, 3, 4); for i, j: a[i, j] = 10 * i + j; print(a, len(a), rank(a))
    let a = || var(0, arr(I32, 2));
    let i = || var(1, s(I64));
    let j = || var(2, s(I64));
    let body = vec![
        set(0, zeros(I32, vec![i64c(3), i64c(4)])),
        for_(
            1,
            i64c(0),
            i64c(3),
            i64c(1),
            false,
            vec![for_(
                2,
                i64c(0),
                i64c(4),
                i64c(1),
                false,
                vec![store(
                    a(),
                    vec![i(), j()],
                    conv(bin(Add, bin(Mul, i64c(10), i()), j()), I32),
                    Some(1),
                )],
            )],
        ),
        print(vec![
            a(),
            builtin(Builtin::Len, vec![a()], s(I64)),
            builtin(Builtin::Rank, vec![a()], s(I64)),
            load(a(), vec![i64c(2), i32c(1)], Some(2)),
        ]),
        Stmt::Release(a()),
    ];
    let r = run_main(&[("a", arr(I32, 2)), ("i", s(I64)), ("j", s(I64))], body);
    assert_eq!(r.status, 0, "{}", r.error);
    assert_eq!(
        r.out,
        "[0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23] 12 2 21\n"
    );
    assert_eq!(r.live, 0);
}

#[test]
fn element_types_use_their_width() {
    // One array of each type, element 1 set, then printed whole.
    let mut body = Vec::new();
    let types = [B, I32, I64, F32, F64];
    let values = [boolc(true), i32c(-2), i64c(1 << 40), f32c(0.5), f64c(-0.25)];
    let mut ls = Vec::new();
    for (k, (&t, v)) in types.iter().zip(values).enumerate() {
        ls.push(("a", arr(t, 1)));
        let a = || var(k as u32, arr(t, 1));
        body.push(set(k as u32, zeros(t, vec![i64c(3)])));
        body.push(store(a(), vec![i32c(1)], v, Some(0)));
        body.push(print(vec![a(), load(a(), vec![i64c(1)], None)]));
        body.push(Stmt::Release(a()));
    }
    let r = run_main(&ls, body);
    assert_eq!(
        r.out,
        "[false, true, false] true\n[0, -2, 0] -2\n[0, 1099511627776, 0] 1099511627776\n\
         [0.0, 0.5, 0.0] 0.5\n[0.0, -0.25, 0.0] -0.25\n"
    );
    assert_eq!(r.live, 0);
}

#[test]
fn bounds_errors_return_through_nested_calls() {
    // fn get(a: i64[], i: i64) -> i64 { return a[i] }   (site 5)
    // fn outer(a: i64[], i: i64) -> i64 { let x = get(a, i); print(-1); return x }
    // main: a = [1, 2, 3]; print(outer(a, 1)); print(outer(a, 3)); print(-2)
    let a = || var(0, arr(I64, 1));
    let i = || var(1, s(I64));
    let get = function(
        1,
        "get",
        2,
        Some(s(I64)),
        &[("a", arr(I64, 1)), ("i", s(I64))],
        vec![ret(load(a(), vec![i()], Some(5)))],
    );
    let outer = function(
        2,
        "outer",
        2,
        Some(s(I64)),
        &[("a", arr(I64, 1)), ("i", s(I64)), ("x", s(I64))],
        vec![
            set(2, call(1, vec![a(), i()], s(I64))),
            print(vec![i64c(-1)]),
            ret(var(2, s(I64))),
        ],
    );
    let lit = Expr {
        kind: ExprKind::ArrayLit(
            vec![i64c(1), i64c(2), i64c(3)],
            acc_lang::ir::SiteId(CALL_SITE),
        ),
        ty: arr(I64, 1),
    };
    let body = vec![
        set(0, lit),
        print(vec![call(2, vec![a(), i64c(1)], s(I64))]),
        print(vec![call(2, vec![a(), i64c(3)], s(I64))]),
        print(vec![i64c(-2)]),
    ];
    let r = run(&module(vec![get, outer], main(&[("a", arr(I64, 1))], body)));
    assert_eq!(r.status, 1);
    assert_eq!(r.out, "-1\n2\n");
    assert_eq!(r.error, "bounds: site 5, dim 0, index 3, extent 3");
}

#[test]
fn negative_and_later_dimension_indices_are_caught() {
    let a = || var(0, arr(F64, 2));
    let check = |i: Expr, j: Expr| {
        let body = vec![
            set(0, zeros(F64, vec![i64c(2), i64c(3)])),
            store(a(), vec![opaque(i), opaque(j)], f64c(1.0), Some(4)),
            print(vec![i64c(0)]),
        ];
        let r = run(&module(identities(), main(&[("a", arr(F64, 2))], body)));
        (r.status, r.error)
    };
    assert_eq!(
        check(i64c(-1), i64c(0)),
        (1, "bounds: site 4, dim 0, index -1, extent 2".into())
    );
    assert_eq!(
        check(i64c(1), i64c(3)),
        (1, "bounds: site 4, dim 1, index 3, extent 3".into())
    );
    assert_eq!(
        check(i32c(1), i32c(-5)),
        (1, "bounds: site 4, dim 1, index -5, extent 3".into())
    );
    assert_eq!(check(i64c(1), i64c(2)), (0, String::new()));
}

#[test]
fn eval_releases_an_owned_array_result() {
    let body = vec![
        Stmt::Eval(zeros(I64, vec![i64c(4)])),
        Stmt::Eval(builtin(
            Builtin::Copy,
            vec![zeros(I64, vec![i64c(2)])],
            arr(I64, 1),
        )),
    ];
    let r = run_main(&[], body);
    // The inner zeros of `copy(zeros(2))` is lowering's to release; the results are released.
    assert_eq!(r.live, 1);
    let body = vec![
        set(0, zeros(I64, vec![i64c(4)])),
        Stmt::Retain(var(0, arr(I64, 1))),
        Stmt::Release(var(0, arr(I64, 1))),
        print(vec![builtin(
            Builtin::Sum,
            vec![var(0, arr(I64, 1))],
            s(I64),
        )]),
        Stmt::Release(var(0, arr(I64, 1))),
    ];
    let r = run_main(&[("a", arr(I64, 1))], body);
    assert_eq!((r.out.as_str(), r.live), ("0\n", 0));
}

// ---- regions ----------------------------------------------------------------------------------

fn param(name: &str, ty: acc_lang::ir::Ty, pass: Pass, var: u32) -> RegionParam {
    RegionParam {
        var: VarId(var),
        name: name.into(),
        ty,
        pass,
        written: true,
    }
}

fn gang_loop(v: u32, end: Expr, body: Vec<Stmt>, reductions: Vec<Reduction>) -> Stmt {
    Stmt::For(ForLoop {
        id: acc_lang::ir::LoopId(v),
        var: LocalId(v),
        start: i64c(0),
        end,
        step: i64c(1),
        step_site: None,
        inclusive: false,
        body,
        schedule: LoopSchedule {
            gang: true,
            vector: true,
            collapse: 1,
            reductions,
            ..Default::default()
        },
        site: acc_lang::ir::SiteId(CALL_SITE),
    })
}

/// `acc parallel num_gangs(4) copy(hits) reduction(+: total)`:
///   print(-1)                       // gang-redundant: once per gang
///   acc loop gang: for i in 0..n { hits[i] += 1; total += i }
fn counting_region() -> Region {
    // params: hits (array), n (value), total (in-out, reduced into local 3); locals 3.. private
    let hits = || var(0, arr(I64, 1));
    let i = || var(4, s(I64));
    Region {
        id: RegionId(0),
        construct: Construct::Parallel,
        span: Default::default(),
        params: vec![
            param("hits", arr(I64, 1), Pass::Array, 10),
            param("n", s(I64), Pass::Value, 11),
            param("total", s(I64), Pass::InOut, 12),
        ],
        locals: locals(&[
            ("hits", arr(I64, 1)),
            ("n", s(I64)),
            ("total", s(I64)),
            ("total.private", s(I64)),
            ("i", s(I64)),
        ]),
        body: vec![
            print(vec![i64c(-1)]),
            gang_loop(
                4,
                var(1, s(I64)),
                vec![
                    store(
                        hits(),
                        vec![i()],
                        bin(Add, load(hits(), vec![i()], Some(1)), i64c(1)),
                        Some(1),
                    ),
                    set(3, bin(Add, var(3, s(I64)), i())),
                ],
                vec![],
            ),
        ],
        reductions: vec![RegionReduction {
            reduction: Reduction::new(LocalId(3), ReductionOp::Add, I64).unwrap(),
            param: 2,
        }],
        loops: vec![],
        distinct: vec![],
        split: None,
    }
}

fn launch(args: Vec<Expr>, num_gangs: Option<Expr>, results: Vec<(usize, Place)>) -> Stmt {
    Stmt::Launch(Launch {
        region: RegionId(0),
        args,
        results,
        results_after: 0,
        if_cond: None,
        num_gangs: DeviceExprs {
            host: num_gangs,
            ..Default::default()
        },
        num_workers: DeviceExprs::default(),
        vector_length: DeviceExprs::default(),
        async_queue: None,
        wait: None,
        data: vec![],
        site: SiteId(0),
    })
}

#[test]
fn gangs_share_a_gang_loop_and_combine_reductions() {
    for (n, gangs) in [(10, 4), (3, 4), (0, 4), (9, 1), (5, 7)] {
        let hits = || var(0, arr(I64, 1));
        let body = vec![
            set(0, zeros(I64, vec![i64c(n)])),
            set(1, i64c(5)),
            launch(
                vec![hits(), i64c(n), var(1, s(I64))],
                Some(i64c(gangs)),
                vec![(2, Place::Local(LocalId(1)))],
            ),
            print(vec![hits(), var(1, s(I64))]),
            Stmt::Release(hits()),
        ];
        let mut m = module(
            vec![],
            main(&[("hits", arr(I64, 1)), ("total", s(I64))], body),
        );
        m.regions = vec![counting_region()];
        let r = run(&m);
        assert_eq!(r.status, 0, "{}", r.error);
        let redundant = "-1\n".repeat(gangs as usize);
        let ones = vec!["1"; n as usize].join(", ");
        let total = 5 + n * (n - 1) / 2;
        assert_eq!(
            r.out,
            format!("{redundant}[{ones}] {total}\n"),
            "n = {n}, gangs = {gangs}"
        );
        assert_eq!(r.live, 0);
    }
}

#[test]
fn num_gangs_defaults_to_one_and_is_at_least_one() {
    for gangs in [None, Some(i64c(0)), Some(i64c(-3))] {
        let body = vec![
            set(0, zeros(I64, vec![i64c(4)])),
            launch(vec![var(0, arr(I64, 1)), i64c(4), i64c(0)], gangs, vec![]),
            print(vec![var(0, arr(I64, 1))]),
        ];
        let mut m = module(vec![], main(&[("hits", arr(I64, 1))], body));
        m.regions = vec![counting_region()];
        assert_eq!(run(&m).out, "-1\n[1, 1, 1, 1]\n");
    }
}

#[test]
fn region_errors_stop_the_launch() {
    // hits has 3 elements but the loop runs to 6: gang 0 (0..2) passes, gang 1 fails at 3.
    let body = vec![
        set(0, zeros(I64, vec![i64c(3)])),
        launch(
            vec![var(0, arr(I64, 1)), i64c(6), i64c(0)],
            Some(i64c(3)),
            vec![],
        ),
        print(vec![i64c(99)]),
    ];
    let mut m = module(vec![], main(&[("hits", arr(I64, 1))], body));
    m.regions = vec![counting_region()];
    let r = run(&m);
    assert_eq!(r.status, 1);
    assert_eq!(r.out, "-1\n-1\n");
    assert_eq!(r.error, "bounds: site 1, dim 0, index 3, extent 3");
}

#[test]
fn region_results_reach_globals_and_private_arrays_are_per_gang() {
    // acc parallel num_gangs(3) copy(g) firstprivate(t) private(u):
    //   t[0] += 1; u[1] = 5; g = g * 2 + t[0] + u[1] + len(u)
    // Each gang has its own t (starting as the host's [10, 0]) and u (of the host u's shape).
    let t = || var(1, arr(I64, 1));
    let u = || var(2, arr(I64, 2));
    let region = Region {
        id: RegionId(0),
        construct: Construct::Parallel,
        span: Default::default(),
        params: vec![
            param("g", s(I64), Pass::InOut, 0),
            param("t", arr(I64, 1), Pass::FirstPrivateArray, 1),
            param("u", arr(I64, 2), Pass::PrivateArray, 2),
        ],
        locals: locals(&[("g", s(I64)), ("t", arr(I64, 1)), ("u", arr(I64, 2))]),
        body: vec![
            store(
                t(),
                vec![i64c(0)],
                bin(Add, load(t(), vec![i64c(0)], Some(0)), i64c(1)),
                Some(0),
            ),
            store(u(), vec![i64c(0), i64c(1)], i64c(5), Some(0)),
            set(
                0,
                bin(
                    Add,
                    bin(
                        Add,
                        bin(Mul, var(0, s(I64)), i64c(2)),
                        load(t(), vec![i64c(0)], Some(0)),
                    ),
                    bin(
                        Add,
                        load(u(), vec![i64c(0), i64c(1)], Some(0)),
                        builtin(Builtin::Len, vec![u()], s(I64)),
                    ),
                ),
            ),
        ],
        reductions: vec![],
        loops: vec![],
        distinct: vec![],
        split: None,
    };
    let body = vec![
        Stmt::SetGlobal(VarId(0), i64c(1)),
        set(0, zeros(I64, vec![i64c(2)])),
        store(var(0, arr(I64, 1)), vec![i64c(0)], i64c(10), None),
        set(1, zeros(I64, vec![i64c(1), i64c(3)])),
        launch(
            vec![global(0, s(I64)), var(0, arr(I64, 1)), var(1, arr(I64, 2))],
            Some(i64c(3)),
            vec![(0, Place::Global(VarId(0)))],
        ),
        print(vec![
            global(0, s(I64)),
            var(0, arr(I64, 1)),
            var(1, arr(I64, 2)),
        ]),
        Stmt::Release(var(0, arr(I64, 1))),
        Stmt::Release(var(1, arr(I64, 2))),
    ];
    let mut m = module(
        vec![],
        main(&[("t", arr(I64, 1)), ("u", arr(I64, 2))], body),
    );
    m.globals = vec![acc_lang::ir::Global {
        id: VarId(0),
        name: "g".into(),
        ty: s(I64),
    }];
    m.regions = vec![region];
    let r = run(&m);
    assert_eq!(r.status, 0, "{}", r.error);
    // A copied-back scalar that is not a reduction is one cell all gangs share (as in device
    // memory); gangs run one after another here, each doubling it and adding 11 + 5 + 3:
    // 1 -> 21 -> 61 -> 141. The host arrays are untouched and the gangs' arrays are freed.
    assert_eq!(r.out, "141 [10, 0] [0, 0, 0]\n");
    assert_eq!(r.live, 0);

    // `serial` runs one gang whatever num_gangs says.
    m.regions[0].construct = Construct::Serial;
    assert_eq!(run(&m).out, "21 [10, 0] [0, 0, 0]\n");
}

#[test]
fn float_max_reduction_over_gangs() {
    // err = 0.5; acc parallel loop num_gangs(3) reduction(max: err): for i in 0..n { err = max(err, x[i]) }
    let x = || var(0, arr(F32, 1));
    let lit = Expr {
        kind: ExprKind::ArrayLit(
            vec![f32c(0.25), f32c(f32::NAN), f32c(3.0), f32c(-1.0), f32c(2.0)],
            acc_lang::ir::SiteId(CALL_SITE),
        ),
        ty: arr(F32, 1),
    };
    let region = Region {
        id: RegionId(0),
        construct: Construct::ParallelLoop,
        span: Default::default(),
        params: vec![
            param("x", arr(F32, 1), Pass::Array, 0),
            param("err", s(F32), Pass::InOut, 1),
        ],
        locals: locals(&[("x", arr(F32, 1)), ("err", s(F32)), ("i", s(I64))]),
        body: vec![gang_loop(
            2,
            builtin(Builtin::Len, vec![x()], s(I64)),
            vec![set(
                1,
                builtin(
                    Builtin::Max,
                    vec![var(1, s(F32)), load(x(), vec![var(2, s(I64))], Some(0))],
                    s(F32),
                ),
            )],
            vec![],
        )],
        reductions: vec![RegionReduction {
            reduction: Reduction::new(LocalId(1), ReductionOp::Max, F32).unwrap(),
            param: 1,
        }],
        loops: vec![],
        distinct: vec![],
        split: None,
    };
    let body = vec![
        set(0, lit),
        set(1, f32c(0.5)),
        launch(
            vec![x(), var(1, s(F32))],
            Some(i64c(3)),
            vec![(1, Place::Local(LocalId(1)))],
        ),
        print(vec![var(1, s(F32))]),
    ];
    let mut m = module(vec![], main(&[("x", arr(F32, 1)), ("err", s(F32))], body));
    m.regions = vec![region];
    let r = run(&m);
    assert_eq!(r.out, "3.0\n");
}

#[test]
fn stores_evaluate_array_indices_value_then_check() {
    // a[idx()] = val() with idx() printing 1 and returning 5 (out of bounds), val() printing 2.
    let idx = function(
        1,
        "idx",
        0,
        Some(s(I64)),
        &[],
        vec![print(vec![i64c(1)]), ret(i64c(5))],
    );
    let val = function(
        2,
        "val",
        0,
        Some(s(F64)),
        &[],
        vec![print(vec![i64c(2)]), ret(f64c(0.0))],
    );
    let body = vec![
        set(0, zeros(F64, vec![i64c(3)])),
        store(
            var(0, arr(F64, 1)),
            vec![call(1, vec![], s(I64))],
            call(2, vec![], s(F64)),
            Some(4),
        ),
    ];
    let r = run(&module(vec![idx, val], main(&[("a", arr(F64, 1))], body)));
    assert_eq!(r.out, "1\n2\n");
    assert_eq!(r.error, "bounds: site 4, dim 0, index 5, extent 3");
}

/// `a = zeros(f64, 3, 4); for j in 0..rows { for i in lo..hi { print(j, i); a[j, i + 1] = 1.0
/// (site 7); print(a[j - 0, i] (site 8)) } }`: the loops' bounds checks are hoisted when the
/// whole range is in bounds, and an access that fails still fails in its own iteration.
fn versioned_run(rows: i64, lo: i64, hi: i64) -> Run {
    let a = || var(0, arr(F64, 2));
    let j = || var(1, s(I64));
    let i = || var(2, s(I64));
    let inner = for_(
        2,
        opaque(i64c(lo)),
        opaque(i64c(hi)),
        i64c(1),
        false,
        vec![
            print(vec![j(), i()]),
            store(a(), vec![j(), bin(Add, i(), i64c(1))], f64c(1.0), Some(7)),
            print(vec![conv(
                load(a(), vec![bin(Sub, j(), i64c(0)), i()], Some(8)),
                I64,
            )]),
        ],
    );
    let body = vec![
        set(0, zeros(F64, vec![i64c(3), i64c(4)])),
        for_(1, i64c(0), opaque(i64c(rows)), i64c(1), false, vec![inner]),
    ];
    let ls = [("a", arr(F64, 2)), ("j", s(I64)), ("i", s(I64))];
    run(&module(identities(), main(&ls, body)))
}

#[test]
fn hoisted_bounds_checks_still_fail_in_the_right_iteration() {
    let ok = versioned_run(3, 0, 3);
    assert_eq!((ok.status, ok.error.as_str()), (0, ""));
    assert_eq!(ok.out.lines().count(), 18);
    // The last column: `i + 1` fails at i = 3, after that iteration's print.
    let r = versioned_run(1, 2, 4);
    assert_eq!(r.out, "0 2\n0\n0 3\n");
    assert_eq!(r.error, "bounds: site 7, dim 1, index 4, extent 4");
    // A row past the end: the invariant index `j` fails at its first inner iteration.
    let r = versioned_run(4, 0, 1);
    assert_eq!(r.out, "0 0\n0\n1 0\n0\n2 0\n0\n3 0\n");
    assert_eq!(r.error, "bounds: site 7, dim 0, index 3, extent 3");
    // A negative start.
    let r = versioned_run(1, -1, 2);
    assert_eq!(r.out, "0 -1\n");
    assert_eq!(r.error, "bounds: site 8, dim 1, index -1, extent 4");
}
