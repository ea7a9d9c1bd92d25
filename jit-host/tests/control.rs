//! Control flow: loops, calls, recursion, globals, assert, exit, incremental compiles.

mod common;

use acc_lang::builtins::Builtin;
use acc_lang::hir::VarId;
use acc_lang::ir::{BinOp::*, Expr, Global, LocalId, ReductionOp, SiteId, Stmt, StringId};
use common::*;

fn print_i(v: u32, t: ScalarType) -> Stmt {
    print(vec![var(v, s(t))])
}

use acc_lang::ir::ScalarType;

fn loop_output(start: Expr, end: Expr, step: Expr, inclusive: bool) -> String {
    let t = start.ty;
    let r = run_opaque_with_locals(
        &[("i", t)],
        vec![for_(
            0,
            start,
            end,
            step,
            inclusive,
            vec![print(vec![var(0, t)])],
        )],
    );
    assert_eq!(r.status, 0, "{}", r.error);
    r.out.lines().collect::<Vec<_>>().join(" ")
}

fn run_opaque_with_locals(ls: &[(&str, acc_lang::ir::Ty)], body: Vec<Stmt>) -> Run {
    run(&module(identities(), main(ls, body)))
}

#[test]
fn counted_loops() {
    assert_eq!(loop_output(i64c(0), i64c(5), i64c(1), false), "0 1 2 3 4");
    assert_eq!(loop_output(i64c(0), i64c(5), i64c(2), true), "0 2 4");
    assert_eq!(loop_output(i64c(0), i64c(6), i64c(2), true), "0 2 4 6");
    assert_eq!(loop_output(i64c(5), i64c(0), i64c(-2), false), "5 3 1");
    assert_eq!(loop_output(i64c(5), i64c(1), i64c(-2), true), "5 3 1");
    assert_eq!(loop_output(i32c(3), i32c(3), i32c(1), false), "");
    assert_eq!(loop_output(i32c(3), i32c(3), i32c(1), true), "3");
    assert_eq!(loop_output(i32c(4), i32c(3), i32c(1), true), "");
    // A step whose sign is known only at run time.
    assert_eq!(
        loop_output(opaque(i64c(0)), opaque(i64c(7)), opaque(i64c(3)), false),
        "0 3 6"
    );
    assert_eq!(
        loop_output(opaque(i64c(7)), opaque(i64c(0)), opaque(i64c(-3)), true),
        "7 4 1"
    );
}

/// A step computed at run time that is 0 is an error at the step's site, before the first
/// iteration (the body never runs), for either width and whatever the bounds.
#[test]
fn a_zero_step_at_run_time_is_an_error_at_its_site() {
    for (start, end, step) in [
        (opaque(i32c(0)), opaque(i32c(7)), opaque(i32c(0))),
        (opaque(i64c(7)), opaque(i64c(0)), opaque(i64c(0))),
        (i64c(3), i64c(3), opaque(i64c(0))),
    ] {
        let t = start.ty;
        let r = run_opaque_with_locals(
            &[("i", t)],
            vec![for_(
                0,
                start,
                end,
                step,
                true,
                vec![print(vec![var(0, t)])],
            )],
        );
        assert_eq!(r.status, acc_runtime::abi::STATUS_ERROR);
        assert_eq!(r.error, format!("zero step at site {STEP_SITE}"));
        assert_eq!(r.out, "");
    }
}

#[test]
fn loops_at_the_ends_of_the_range_terminate() {
    let max = i32::MAX;
    assert_eq!(
        loop_output(i32c(max - 2), i32c(max), i32c(1), true),
        format!("{} {} {max}", max - 2, max - 1)
    );
    assert_eq!(
        loop_output(i32c(max - 2), i32c(max), i32c(10), true),
        format!("{}", max - 2)
    );
    assert_eq!(
        loop_output(
            opaque(i64c(i64::MIN + 1)),
            opaque(i64c(i64::MIN)),
            opaque(i64c(-1)),
            true
        ),
        format!("{} {}", i64::MIN + 1, i64::MIN)
    );
    // The whole i32 range in steps of 2^30.
    assert_eq!(
        loop_output(i32c(i32::MIN), i32c(i32::MAX), i32c(1 << 30), true),
        "-2147483648 -1073741824 0 1073741824"
    );
}

#[test]
fn break_continue_and_nested_loops() {
    let i = || var(0, s(I64));
    let j = || var(1, s(I64));
    // for i in 0..10 { if i == 2 { continue }; if i == 5 { break }; for j in 0..i { if j == 1 { break } print(i, j) } }
    let body = vec![for_(
        0,
        i64c(0),
        i64c(10),
        i64c(1),
        false,
        vec![
            if_(bin(Eq, i(), i64c(2)), vec![Stmt::Continue], vec![]),
            if_(
                bin(Eq, i(), i64c(5)),
                vec![Stmt::Break, print(vec![i64c(-1)])],
                vec![],
            ),
            for_(
                1,
                i64c(0),
                i(),
                i64c(1),
                false,
                vec![
                    if_(bin(Eq, j(), i64c(1)), vec![Stmt::Break], vec![]),
                    print(vec![i(), j()]),
                ],
            ),
        ],
    )];
    let r = run_main(&[("i", s(I64)), ("j", s(I64))], body);
    assert_eq!(r.out, "1 0\n3 0\n4 0\n");
}

#[test]
fn while_loops() {
    // n = 27; steps = 0; while n != 1 { if n % 2 == 0 { n = n / 2 } else { n = 3 * n + 1 }; steps += 1 }
    let n = || var(0, s(I64));
    let steps = || var(1, s(I64));
    let body = vec![
        set(0, opaque(i64c(27))),
        set(1, i64c(0)),
        Stmt::While {
            cond: bin(Ne, n(), i64c(1)),
            body: vec![
                if_(
                    bin(Eq, bin(Rem, n(), i64c(2)), i64c(0)),
                    vec![set(0, bin(Div, n(), i64c(2)))],
                    vec![set(0, bin(Add, bin(Mul, i64c(3), n()), i64c(1)))],
                ),
                set(1, bin(Add, steps(), i64c(1))),
                if_(bin(Gt, steps(), i64c(1000)), vec![Stmt::Break], vec![]),
                if_(bin(Ne, n(), i64c(1)), vec![Stmt::Continue], vec![]),
                print(vec![i64c(-1)]),
            ],
            site: acc_lang::ir::SiteId(CALL_SITE),
        },
        print_i(1, I64),
    ];
    let r = run_opaque_with_locals(&[("n", s(I64)), ("steps", s(I64))], body);
    assert_eq!(r.out, "-1\n111\n");
}

#[test]
fn recursion() {
    let n = || var(0, s(I32));
    let fib = function(
        7,
        "fib",
        1,
        Some(s(I64)),
        &[("n", s(I32))],
        vec![
            if_(bin(Lt, n(), i32c(2)), vec![ret(conv(n(), I64))], vec![]),
            ret(bin(
                Add,
                call(7, vec![bin(Sub, n(), i32c(1))], s(I64)),
                call(7, vec![bin(Sub, n(), i32c(2))], s(I64)),
            )),
        ],
    );
    let r = run(&module(
        vec![fib],
        main(&[], vec![print(vec![call(7, vec![i32c(30)], s(I64))])]),
    ));
    assert_eq!(r.out, "832040\n");
}

#[test]
fn globals_and_incremental_compiles() {
    let mut session = Session::new();
    // Compile 1: `let g = 10; fn bump(k: i32) -> i32 { g = g + k; return g }`.
    let g = || global(3, s(I32));
    let bump = function(
        1,
        "bump",
        1,
        Some(s(I32)),
        &[("k", s(I32))],
        vec![
            Stmt::SetGlobal(VarId(3), bin(Add, g(), var(0, s(I32)))),
            ret(g()),
        ],
    );
    let mut m1 = module(
        vec![bump],
        main(&[], vec![Stmt::SetGlobal(VarId(3), i32c(10))]),
    );
    m1.globals = vec![Global {
        id: VarId(3),
        name: "g".into(),
        ty: s(I32),
    }];
    let r = session.run(&m1);
    assert_eq!(r.status, 0);
    // Compile 2 calls the function of compile 1 and reads the global.
    let m2 = module(
        vec![],
        main(&[], vec![print(vec![call(1, vec![i32c(5)], s(I32)), g()])]),
    );
    assert_eq!(session.run(&m2).out, "15 15\n");
    // Compile 3 redefines `bump` under a new id; the old one stays callable.
    let bump2 = function(
        2,
        "bump",
        1,
        Some(s(I32)),
        &[("k", s(I32))],
        vec![ret(bin(Mul, var(0, s(I32)), i32c(100)))],
    );
    let m3 = module(
        vec![bump2],
        main(
            &[],
            vec![print(vec![
                call(2, vec![i32c(5)], s(I32)),
                call(1, vec![i32c(1)], s(I32)),
            ])],
        ),
    );
    assert_eq!(session.run(&m3).out, "500 16\n");
}

#[test]
fn bool_and_float_globals_use_their_width() {
    let mut m = module(
        vec![],
        main(
            &[],
            vec![
                Stmt::SetGlobal(VarId(0), boolc(true)),
                Stmt::SetGlobal(VarId(1), f32c(1.5)),
                Stmt::SetGlobal(VarId(2), f64c(-2.25)),
                print(vec![global(0, s(B)), global(1, s(F32)), global(2, s(F64))]),
            ],
        ),
    );
    m.globals = (0..3)
        .map(|i| Global {
            id: VarId(i),
            name: format!("g{i}"),
            ty: s([B, F32, F64][i as usize]),
        })
        .collect();
    let mut session = Session::new();
    session.globals = vec![u64::MAX; 8];
    let r = session.run(&m);
    assert_eq!(r.out, "true 1.5 -2.25\n");
    assert_eq!(session.globals[0], u64::MAX << 8 | 1, "a bool is one byte");
    assert_eq!(session.globals[1] as u32, 1.5f32.to_bits());
}

#[test]
fn assert_and_exit_stop_the_program() {
    let mut m = module(vec![], main(&[], vec![]));
    m.strings = vec!["too big".into()];
    m.main.body = vec![
        Stmt::Assert {
            cond: opaque(boolc(true)),
            message: None,
            site: SiteId(1),
        },
        print(vec![i32c(1)]),
        Stmt::Assert {
            cond: opaque(boolc(false)),
            message: Some(StringId(0)),
            site: SiteId(2),
        },
        print(vec![i32c(2)]),
    ];
    m.functions = identities();
    let r = run(&m);
    assert_eq!((r.status, r.out.as_str()), (1, "1\n"));
    assert_eq!(r.error, "assert at site 2: \"too big\"");

    let f = function(
        1,
        "quit",
        0,
        Some(s(I64)),
        &[],
        vec![
            Stmt::Eval(builtin(Builtin::Exit, vec![i32c(3)], s(I32))),
            print(vec![i32c(9)]),
            ret(i64c(1)),
        ],
    );
    let r = run(&module(
        vec![f],
        main(
            &[],
            vec![print(vec![call(1, vec![], s(I64))]), print(vec![i32c(8)])],
        ),
    ));
    assert_eq!((r.status, r.exit_code, r.out.as_str()), (2, 3, ""));
}

#[test]
fn loop_reductions_start_from_the_identity() {
    // s = 100; for i in 1..=4 reduction(*: s) { s = s * i }  →  100 * 24
    let mut f = acc_lang::ir::ForLoop {
        id: acc_lang::ir::LoopId(0),
        var: LocalId(0),
        start: i64c(1),
        end: i64c(4),
        step: i64c(1),
        step_site: None,
        inclusive: true,
        body: vec![set(1, bin(Mul, var(1, s(I64)), var(0, s(I64))))],
        schedule: Default::default(),
        site: acc_lang::ir::SiteId(CALL_SITE),
    };
    f.schedule.reductions =
        vec![acc_lang::ir::Reduction::new(LocalId(1), ReductionOp::Mul, I64).unwrap()];
    let r = run_main(
        &[("i", s(I64)), ("s", s(I64))],
        vec![set(1, i64c(100)), Stmt::For(f), print_i(1, I64)],
    );
    assert_eq!(r.out, "2400\n");
}

#[test]
fn missing_runtime_symbols_are_reported() {
    let mut jit = acc_jit_host::Jit::new(&[]).unwrap();
    let m = module(vec![], main(&[], vec![print(vec![i32c(1)])]));
    let e = jit.compile(&m, &Default::default()).unwrap_err();
    assert!(
        matches!(e, acc_jit_host::JitError::MissingSymbol(ref s) if s == "acc_print_i32"),
        "{e}"
    );
    // The Jit is still usable.
    let ok = module(vec![], main(&[], vec![]));
    assert!(jit.compile(&ok, &Default::default()).is_ok());
}

#[test]
fn clif_text_shows_every_function() {
    let mut jit = acc_jit_host::Jit::new(&symbols()).unwrap();
    let f = function(
        4,
        "twice",
        1,
        Some(s(I64)),
        &[("x", s(I64))],
        vec![ret(bin(Mul, var(0, s(I64)), i64c(2)))],
    );
    let m = module(
        vec![f],
        main(&[], vec![print(vec![call(4, vec![i64c(3)], s(I64))])]),
    );
    let text = jit.clif_text(&m, &Default::default(), false).unwrap();
    assert!(text.contains("; twice#4"), "{text}");
    assert!(text.contains("imul"), "{text}");
    assert!(text.contains("; main"), "{text}");
    assert!(text.contains("call"), "{text}");
    // Optimized, `x * 2` is `x + x` (`x` after `ctx` and the call depth) and the unused
    // globals pointer is gone.
    let text = jit.clif_text(&m, &Default::default(), true).unwrap();
    let twice = text.split("; main").next().unwrap();
    assert!(
        twice.contains("iadd v2, v2") && !twice.contains("load"),
        "{text}"
    );
}

#[test]
fn jit_can_move_between_threads() {
    fn send<T: Send>() {}
    send::<acc_jit_host::Jit>();
}

/// Globals 0 (`i64[]`), 1 and 2 (`i64`).
fn with_globals(functions: Vec<acc_lang::ir::Function>, body: Vec<Stmt>) -> Run {
    let mut m = module(functions, main(&[("i", s(I64)), ("j", s(I64))], body));
    m.globals = [arr(I64, 1), s(I64), s(I64)]
        .iter()
        .enumerate()
        .map(|(i, &ty)| Global {
            id: VarId(i as u32),
            name: format!("g{i}"),
            ty,
        })
        .collect();
    run(&m)
}

#[test]
fn loops_see_the_globals_they_change() {
    let a = || global(0, arr(I64, 1));
    let g1 = || global(1, s(I64));
    let g2 = || global(2, s(I64));
    let i = || var(0, s(I64));
    let lit = Expr {
        kind: acc_lang::ir::ExprKind::ArrayLit(
            vec![i64c(1), i64c(2), i64c(3)],
            acc_lang::ir::SiteId(CALL_SITE),
        ),
        ty: arr(I64, 1),
    };
    let bump = function(
        1,
        "bump",
        0,
        None,
        &[],
        vec![Stmt::SetGlobal(VarId(1), bin(Add, g1(), i64c(10)))],
    );
    let len = || builtin(Builtin::Len, vec![a()], s(I64));
    let body = vec![
        Stmt::SetGlobal(VarId(0), lit),
        Stmt::SetGlobal(VarId(1), i64c(0)),
        Stmt::SetGlobal(VarId(2), i64c(0)),
        // Reads the array (cacheable) and accumulates into a global (not).
        for_(
            0,
            i64c(0),
            len(),
            i64c(1),
            false,
            vec![Stmt::SetGlobal(
                VarId(1),
                bin(Add, g1(), load(a(), vec![i()], Some(0))),
            )],
        ),
        print(vec![g1()]),
        Stmt::While {
            cond: bin(Lt, g1(), i64c(100)),
            body: vec![Stmt::SetGlobal(VarId(1), bin(Mul, g1(), i64c(2)))],
            site: acc_lang::ir::SiteId(CALL_SITE),
        },
        print(vec![g1()]),
        // A call may change any global.
        for_(
            0,
            i64c(0),
            i64c(3),
            i64c(1),
            false,
            vec![Stmt::Eval(call(1, vec![], s(I64))), print(vec![g1()])],
        ),
        // Nested: the outer loop caches g2, the inner one writes g1.
        for_(
            0,
            i64c(0),
            i64c(2),
            i64c(1),
            false,
            vec![for_(
                1,
                i64c(0),
                i64c(2),
                i64c(1),
                false,
                vec![Stmt::SetGlobal(VarId(1), bin(Add, g1(), g2()))],
            )],
        ),
        print(vec![g1()]),
        for_(
            0,
            i64c(0),
            i64c(3),
            i64c(1),
            false,
            vec![
                print(vec![g2()]),
                Stmt::SetGlobal(VarId(2), bin(Add, g2(), i64c(1))),
            ],
        ),
    ];
    let r = with_globals(vec![bump], body);
    assert_eq!(r.status, 0, "{}", r.error);
    assert_eq!(r.out, "6\n192\n202\n212\n222\n222\n0\n1\n2\n");
}
