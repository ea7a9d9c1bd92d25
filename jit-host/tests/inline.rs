//! Small functions inlined at their calls behave exactly as called ones: results, early
//! returns, run-time errors, `exit`, reference counts, recursion. (Calls are inlined inside
//! loops and functions, so the tests call from loops.)

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
        kind: ExprKind::ArrayLit(
            values.iter().map(|&v| i64c(v)).collect(),
            acc_lang::ir::SiteId(CALL_SITE),
        ),
        ty: arr(I64, 1),
    }
}

/// `for <local v> in 0..1 { body }`: a loop, where calls are inlined.
fn once(v: u32, body: Vec<Stmt>) -> Stmt {
    for_(v, i64c(0), i64c(1), i64c(1), false, body)
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

/// How many calls `text` (one function's CLIF) makes of the user function declared
/// `index`-th in a fresh JIT.
fn calls_of(text: &str, index: usize) -> usize {
    let decl = format!(" = colocated u0:{index} ");
    let fnref = text
        .lines()
        .find(|l| l.contains(&decl))
        .and_then(|l| l.split_whitespace().next());
    fnref.map_or(0, |f| text.matches(&format!("call {f}(")).count())
}

#[test]
fn small_functions_are_inlined_where_calls_repeat() {
    let mut jit = acc_jit_host::Jit::new(&symbols()).unwrap();
    // More than 40 IR nodes: a sum of 30 terms.
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
    // Small, but with a loop.
    let looping = function(
        9,
        "looping",
        1,
        Some(s(I64)),
        &[("x", s(I64)), ("i", s(I64))],
        vec![
            for_(1, i64c(0), i64c(3), i64c(1), false, vec![]),
            ret(var(0, s(I64))),
        ],
    );
    let twice = function(
        10,
        "twice",
        1,
        Some(s(I64)),
        &[("x", s(I64))],
        vec![ret(bin(Mul, var(0, s(I64)), i64c(2)))],
    );
    let k = || var(0, s(I64));
    let m = module(
        vec![fib_function(), large, looping, twice],
        main(
            &[("k", s(I64))],
            vec![
                // Once, outside loops: called.
                print(vec![call(7, vec![i64c(30)], s(I64))]),
                for_(
                    0,
                    i64c(0),
                    i64c(3),
                    i64c(1),
                    false,
                    vec![print(vec![
                        call(8, vec![k()], s(I64)),
                        call(9, vec![k()], s(I64)),
                        call(10, vec![k()], s(I64)),
                    ])],
                ),
            ],
        ),
    );
    let text = jit.clif_text(&m, &Default::default(), false).unwrap();
    let fib_text = text.split("; large").next().unwrap();
    let main_text = text.split("; main").nth(1).unwrap();
    // `fib` inlines its own calls three levels deep: 2 + 4 + 8 inlined bodies, whose
    // innermost make 16 calls.
    assert_eq!(calls_of(fib_text, 0), 16, "{fib_text}");
    assert_eq!(calls_of(main_text, 0), 1, "{main_text}");
    assert_eq!(calls_of(main_text, 1), 1, "{main_text}");
    assert_eq!(calls_of(main_text, 2), 1, "{main_text}");
    assert_eq!(calls_of(main_text, 3), 0, "{main_text}");
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
    // fn find(a: i64[], x: i64) -> i64 {
    //     if a[0] == x { return 0 }; if a[1] == x { return 1 }; if a[2] == x { return 2 }
    //     return -1
    // }
    let a = || var(0, arr(I64, 1));
    let test = |i: i64| {
        if_(
            bin(Eq, load(a(), vec![i64c(i)], Some(1)), var(1, s(I64))),
            vec![ret(i64c(i))],
            vec![],
        )
    };
    let find = function(
        1,
        "find",
        2,
        Some(s(I64)),
        &[("a", arr(I64, 1)), ("x", s(I64))],
        vec![test(0), test(1), test(2), ret(i64c(-1))],
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
    // main: for j in 0..1 { print(7); print(quit(3)); print(8) }
    let body = vec![once(
        0,
        vec![
            print(vec![i32c(7)]),
            print(vec![call(1, vec![i32c(3)], s(I64))]),
            print(vec![i32c(8)]),
        ],
    )];
    let r = run(&module(vec![quit], main(&[("j", s(I64))], body)));
    assert_eq!((r.out.as_str(), r.exit_code), ("7\n", 3));
    assert_ne!(r.status, 0);
}

#[test]
fn inlined_array_results_keep_their_reference_counts() {
    // fn dup(a: i64[]) -> i64[] { return copy(a) }
    // main: a = [1, 2]; for j in 0..1 { b = dup(a) }; b[0] = 9; print(a, b); release a, b
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
        once(2, vec![set(1, call(1, vec![a()], arr(I64, 1)))]),
        store(b(), vec![i64c(0)], i64c(9), Some(1)),
        print(vec![a(), b()]),
        Stmt::Release(a()),
        Stmt::Release(b()),
    ];
    let r = run(&module(
        vec![dup],
        main(
            &[("a", arr(I64, 1)), ("b", arr(I64, 1)), ("j", s(I64))],
            body,
        ),
    ));
    assert_eq!(r.status, 0, "{}", r.error);
    assert_eq!(r.out, "[1, 2] [9, 2]\n");
    assert_eq!(r.live, 0);
}
