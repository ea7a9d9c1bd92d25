//! Small functions inlined at their calls behave exactly as called ones: results, early
//! returns, run-time errors, `exit`, reference counts, recursion.

mod common;

use acc_lang::builtins::Builtin;
use acc_lang::ir::{BinOp::*, Expr, ExprKind, Stmt};
use common::*;

fn fib_function() -> acc_lang::ir::Function {
    let n = || var(0, s(I64));
    function(
        7,
        "fib",
        1,
        Some(s(I64)),
        &[("n", s(I64))],
        vec![
            if_(bin(Lt, n(), i64c(2)), vec![ret(n())], vec![]),
            ret(bin(
                Add,
                call(7, vec![bin(Sub, n(), i64c(1))], s(I64)),
                call(7, vec![bin(Sub, n(), i64c(2))], s(I64)),
            )),
        ],
    )
}

fn array_literal(values: &[i64]) -> Expr {
    Expr {
        kind: ExprKind::ArrayLit(values.iter().map(|&v| i64c(v)).collect()),
        ty: arr(I64, 1),
    }
}

#[test]
fn recursion_deeper_than_the_inlining_gives_the_same_results() {
    // for k in 0..=25 { print(fib(k)) }
    let body = vec![for_(
        0,
        i64c(0),
        i64c(25),
        i64c(1),
        true,
        vec![print(vec![call(7, vec![var(0, s(I64))], s(I64))])],
    )];
    let r = run(&module(vec![fib_function()], main(&[("k", s(I64))], body)));
    let (mut a, mut b) = (0i64, 1i64);
    let mut expected = String::new();
    for _ in 0..=25 {
        expected += &format!("{a}\n");
        (a, b) = (b, a + b);
    }
    assert_eq!(r.out, expected);
}

#[test]
fn small_functions_are_inlined_and_large_ones_called() {
    let mut jit = acc_jit_host::Jit::new(&symbols()).unwrap();
    // A body of more than 40 IR nodes: a sum of 30 terms.
    let mut big = var(0, s(I64));
    for i in 0..30 {
        big = bin(Add, big, i64c(i));
    }
    let large = function(
        8,
        "large",
        1,
        Some(s(I64)),
        &[("x", s(I64))],
        vec![ret(big)],
    );
    let m = module(
        vec![fib_function(), large],
        main(
            &[],
            vec![print(vec![
                call(7, vec![i64c(30)], s(I64)),
                call(8, vec![i64c(1)], s(I64)),
            ])],
        ),
    );
    let text = jit.clif_text(&m, &Default::default(), false).unwrap();
    let main_text = text.split("; main").nth(1).unwrap();
    // Calls of the user function declared `index`-th in this fresh JIT (`fib` 0, `large` 1).
    let calls_of = |index: usize| {
        let decl = format!(" = colocated u0:{index} ");
        let fnref = main_text
            .lines()
            .find(|l| l.contains(&decl))
            .and_then(|l| l.split_whitespace().next());
        fnref.map_or(0, |f| main_text.matches(&format!("call {f}(")).count())
    };
    assert_eq!(calls_of(1), 1, "{main_text}");
    // Three levels of `fib` inlined into `main`: the eight calls of the innermost copies remain.
    assert_eq!(calls_of(0), 8, "{main_text}");
}

#[test]
fn an_inlined_bounds_error_stops_at_its_site() {
    // fn get(a: i64[], i: i64) -> i64 { return a[i] }   (site 5)
    // main: a = [10, 20, 30]; for i in 0..5 { print(get(a, i)) }; print(-1)
    let get = function(
        1,
        "get",
        2,
        Some(s(I64)),
        &[("a", arr(I64, 1)), ("i", s(I64))],
        vec![ret(load(
            var(0, arr(I64, 1)),
            vec![var(1, s(I64))],
            Some(5),
        ))],
    );
    let body = vec![
        set(0, array_literal(&[10, 20, 30])),
        for_(
            1,
            i64c(0),
            i64c(5),
            i64c(1),
            false,
            vec![print(vec![call(
                1,
                vec![var(0, arr(I64, 1)), var(1, s(I64))],
                s(I64),
            )])],
        ),
        print(vec![i64c(-1)]),
    ];
    let r = run(&module(
        vec![get],
        main(&[("a", arr(I64, 1)), ("i", s(I64))], body),
    ));
    assert_eq!((r.status, r.out.as_str()), (1, "10\n20\n30\n"));
    assert_eq!(r.error, "bounds: site 5, dim 0, index 3, extent 3");
}

#[test]
fn early_returns_leave_only_the_inlined_body() {
    // fn find(a: i64[], x: i64) -> i64 { for i in 0..3 { if a[i] == x { return i } } return -1 }
    // fn show(x: i64) { if x < 0 { print(-100); return } print(x) }
    let a = || var(0, arr(I64, 1));
    let i = || var(2, s(I64));
    let find = function(
        1,
        "find",
        2,
        Some(s(I64)),
        &[("a", arr(I64, 1)), ("x", s(I64)), ("i", s(I64))],
        vec![
            for_(
                2,
                i64c(0),
                i64c(3),
                i64c(1),
                false,
                vec![if_(
                    bin(Eq, load(a(), vec![i()], Some(1)), var(1, s(I64))),
                    vec![ret(i())],
                    vec![],
                )],
            ),
            ret(i64c(-1)),
        ],
    );
    let x = || var(0, s(I64));
    let show = function(
        2,
        "show",
        1,
        None,
        &[("x", s(I64))],
        vec![
            if_(
                bin(Lt, x(), i64c(0)),
                vec![print(vec![i64c(-100)]), Stmt::Return(None)],
                vec![],
            ),
            print(vec![x()]),
        ],
    );
    // main: a = [5, 6, 7]; for v in 4..9 { show(find(a, v)) }; print(a[0])
    let body = vec![
        set(0, array_literal(&[5, 6, 7])),
        for_(
            1,
            i64c(4),
            i64c(9),
            i64c(1),
            false,
            vec![Stmt::Eval(call(
                2,
                vec![call(1, vec![var(0, arr(I64, 1)), var(1, s(I64))], s(I64))],
                s(B),
            ))],
        ),
        print(vec![load(var(0, arr(I64, 1)), vec![i64c(0)], Some(1))]),
        Stmt::Release(var(0, arr(I64, 1))),
    ];
    let r = run(&module(
        vec![find, show],
        main(&[("a", arr(I64, 1)), ("v", s(I64))], body),
    ));
    assert_eq!(r.status, 0, "{}", r.error);
    assert_eq!(r.out, "-100\n0\n1\n2\n-100\n5\n");
    assert_eq!(r.live, 0);
}

#[test]
fn an_inlined_exit_ends_the_program() {
    // fn quit(c: i32) -> i64 { exit(c); print(9); return 1 }
    let quit = function(
        1,
        "quit",
        1,
        Some(s(I64)),
        &[("c", s(I32))],
        vec![
            Stmt::Eval(builtin(Builtin::Exit, vec![var(0, s(I32))], s(I32))),
            print(vec![i32c(9)]),
            ret(i64c(1)),
        ],
    );
    let body = vec![
        print(vec![i32c(7)]),
        print(vec![call(1, vec![i32c(3)], s(I64))]),
        print(vec![i32c(8)]),
    ];
    let r = run(&module(vec![quit], main(&[], body)));
    assert_eq!((r.out.as_str(), r.exit_code), ("7\n", 3));
    assert_ne!(r.status, 0);
}

#[test]
fn inlined_array_results_keep_their_reference_counts() {
    // fn dup(a: i64[]) -> i64[] { return copy(a) }
    // main: a = [1, 2]; b = dup(a); b[0] = 9; print(a, b); release a, b
    let dup = function(
        1,
        "dup",
        1,
        Some(arr(I64, 1)),
        &[("a", arr(I64, 1))],
        vec![ret(builtin(
            Builtin::Copy,
            vec![var(0, arr(I64, 1))],
            arr(I64, 1),
        ))],
    );
    let a = || var(0, arr(I64, 1));
    let b = || var(1, arr(I64, 1));
    let body = vec![
        set(0, array_literal(&[1, 2])),
        set(1, call(1, vec![a()], arr(I64, 1))),
        store(b(), vec![i64c(0)], i64c(9), Some(1)),
        print(vec![a(), b()]),
        Stmt::Release(a()),
        Stmt::Release(b()),
    ];
    let r = run(&module(
        vec![dup],
        main(&[("a", arr(I64, 1)), ("b", arr(I64, 1))], body),
    ));
    assert_eq!(r.status, 0, "{}", r.error);
    assert_eq!(r.out, "[1, 2] [9, 2]\n");
    assert_eq!(r.live, 0);
}

#[test]
fn a_recursive_copy_checks_its_own_accesses() {
    // A loop whose checks are hoisted (versioned) in one copy of `f` must not lend that proof
    // to the same access in a copy of `f` inlined inside it, which loops further.
    // fn f(a: i64[], n: i64) -> i64 {
    //     let t = 0
    //     for i in 0..n { t = t + a[i]; if n < 3 { t = t + f(a, n + 1) } }
    //     return t
    // }
    let a = || var(0, arr(I64, 1));
    let n = || var(1, s(I64));
    let t = || var(2, s(I64));
    let i = || var(3, s(I64));
    let f = function(
        1,
        "f",
        2,
        Some(s(I64)),
        &[
            ("a", arr(I64, 1)),
            ("n", s(I64)),
            ("t", s(I64)),
            ("i", s(I64)),
        ],
        vec![
            set(2, i64c(0)),
            for_(
                3,
                i64c(0),
                n(),
                i64c(1),
                false,
                vec![
                    set(2, bin(Add, t(), load(a(), vec![i()], Some(6)))),
                    if_(
                        bin(Lt, n(), i64c(3)),
                        vec![set(
                            2,
                            bin(Add, t(), call(1, vec![a(), bin(Add, n(), i64c(1))], s(I64))),
                        )],
                        vec![],
                    ),
                ],
            ),
            ret(t()),
        ],
    );
    let run_with = |values: &[i64]| {
        let body = vec![
            set(0, array_literal(values)),
            print(vec![call(1, vec![var(0, arr(I64, 1)), i64c(1)], s(I64))]),
            Stmt::Release(var(0, arr(I64, 1))),
        ];
        run(&module(vec![f.clone()], main(&[("a", arr(I64, 1))], body)))
    };
    // f(a, 3) = a0 + a1 + a2; f(a, 2) = a0 + f3 + a1 + f3; f(a, 1) = a0 + f2.
    let r = run_with(&[1, 10, 100]);
    assert_eq!(r.status, 0, "{}", r.error);
    let f3 = 111;
    let f2 = 1 + f3 + 10 + f3;
    assert_eq!(r.out, format!("{}\n", 1 + f2));
    let r = run_with(&[1, 10]);
    assert_eq!(r.status, 1);
    assert_eq!(r.error, "bounds: site 6, dim 0, index 2, extent 2");
}
