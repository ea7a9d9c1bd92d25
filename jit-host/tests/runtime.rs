//! The back end with the real runtime and standard library (`acc_runtime`, `acc_stdlib`).

mod common;

use std::sync::Mutex;

use acc_jit_host::{GlobalSlots, Jit};
use acc_lang::builtins::{parse_format, Builtin};
use acc_lang::ir::{BinOp::*, Expr, ExprKind, FormatId, Module, SiteId, Stmt};
use acc_runtime::{Context, HostState, Outcome, RunErrorKind, SharedBuffer};
use common::*;

/// The runtime counts live arrays per process: tests that check it run one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn all_symbols() -> Vec<(&'static str, *const u8)> {
    let mut s = acc_runtime::symbols();
    s.extend(acc_stdlib::symbols());
    s
}

/// Run `m` with the real runtime: its output, how it ended, and the arrays it leaked.
fn run_real(m: &Module) -> (String, Outcome, isize) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let before = acc_runtime::live_arrays() as isize;
    let out = SharedBuffer::new();
    let mut context = Context::new(HostState::new(Box::new(out.clone())));
    let slots: GlobalSlots = m
        .globals
        .iter()
        .enumerate()
        .map(|(i, g)| (g.id, i as u32))
        .collect();
    context.ensure_globals(slots.len());
    let mut jit = Jit::new(&all_symbols()).unwrap();
    let compiled = jit.compile(m, &slots).unwrap();
    unsafe { (compiled.main)(context.ctx_ptr()) };
    let outcome = context.finish();
    drop(context);
    let leaked = acc_runtime::live_arrays() as isize - before;
    (out.contents(), outcome, leaked)
}

#[test]
fn every_runtime_symbol_has_a_signature() {
    for (name, _) in all_symbols() {
        assert!(
            acc_jit_host::has_signature(name),
            "no signature for `{name}`"
        );
    }
}

#[test]
fn prints_through_the_stdlib() {
    let a = || var(0, arr(F64, 2));
    let body = vec![
        set(
            0,
            builtin(Builtin::Ones, vec![i64c(2), i64c(3)], arr(F64, 2)),
        ),
        store(a(), vec![i64c(1), i64c(2)], f64c(0.1), Some(0)),
        print(vec![
            a(),
            f32c(16777216.0),
            boolc(false),
            i32c(-7),
            f64c(1e16),
        ]),
        Stmt::Release(a()),
    ];
    let (out, outcome, leaked) = run_real(&module(vec![], main(&[("a", arr(F64, 2))], body)));
    assert_eq!(outcome, Outcome::Finished);
    assert_eq!(
        out,
        "[[1.0, 1.0, 1.0],\n [1.0, 1.0, 0.1]] 16777216.0 false -7 1e16\n"
    );
    assert_eq!(leaked, 0);
}

#[test]
fn printf_through_the_stdlib() {
    let mut m = module(vec![], main(&[], vec![]));
    m.formats = vec![parse_format("%d%% of %5.2f|%-4d|%c\n").unwrap()];
    m.main.body = vec![Stmt::Printf(
        FormatId(0),
        vec![i32c(-3), f32c(0.125), i64c(42), i32c(0x263A)],
        acc_lang::ir::SiteId(CALL_SITE),
    )];
    let (out, outcome, _) = run_real(&m);
    assert_eq!(outcome, Outcome::Finished);
    assert_eq!(out, "-3% of  0.12|42  |☺\n");
}

#[test]
fn runtime_errors_carry_their_site() {
    let a = || var(0, arr(I32, 1));
    let body = vec![
        set(0, builtin(Builtin::Zeros, vec![i64c(4)], arr(I32, 1))),
        print(vec![load(a(), vec![i64c(3)], Some(2))]),
        print(vec![load(a(), vec![i64c(4)], Some(3))]),
    ];
    let (out, outcome, _) = run_real(&module(vec![], main(&[("a", arr(I32, 1))], body)));
    assert_eq!(out, "0\n");
    let Outcome::Error(e) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(e.site, Some(3));
    assert_eq!(
        e.kind,
        RunErrorKind::Bounds {
            index: 4,
            dim: 0,
            shape: vec![4]
        }
    );

    let body = vec![print(vec![bin_at(
        Div,
        opaque(i32c(1)),
        opaque(i32c(0)),
        Some(SiteId(6)),
    )])];
    let (_, outcome, _) = run_real(&module(identities(), main(&[], body)));
    let Outcome::Error(e) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!((e.kind, e.site), (RunErrorKind::DivZero, Some(6)));
}

#[test]
fn array_builtins_through_the_stdlib() {
    let v = || var(0, arr(I64, 1));
    let lit = Expr {
        kind: ExprKind::ArrayLit(
            vec![i64c(3), i64c(-1), i64c(4)],
            acc_lang::ir::SiteId(CALL_SITE),
        ),
        ty: arr(I64, 1),
    };
    let body = vec![
        set(0, lit),
        print(vec![
            builtin(Builtin::Sum, vec![v()], s(I64)),
            builtin(Builtin::Maximum, vec![v()], s(I64)),
            builtin(Builtin::Len, vec![v()], s(I64)),
            builtin(Builtin::Size, vec![v(), i64c(0)], s(I64)),
            builtin(Builtin::Rank, vec![v()], s(I64)),
        ]),
        set(1, builtin(Builtin::Iota, vec![i64c(6)], arr(I64, 1))),
        set(
            2,
            builtin(
                Builtin::Reshape,
                vec![var(1, arr(I64, 1)), i64c(2), i64c(3)],
                arr(I64, 2),
            ),
        ),
        print(vec![
            var(2, arr(I64, 2)),
            load(var(2, arr(I64, 2)), vec![i64c(1), i64c(0)], Some(0)),
        ]),
        print(vec![builtin(
            Builtin::Fill,
            vec![f32c(0.5), i64c(2)],
            arr(F32, 1),
        )]),
        Stmt::Release(v()),
        Stmt::Release(var(1, arr(I64, 1))),
        Stmt::Release(var(2, arr(I64, 2))),
    ];
    let (out, outcome, leaked) = run_real(&module(
        vec![],
        main(
            &[("v", arr(I64, 1)), ("w", arr(I64, 1)), ("m", arr(I64, 2))],
            body,
        ),
    ));
    assert_eq!(outcome, Outcome::Finished);
    // The fill array printed in place is leaked: releasing it is lowering's job.
    assert_eq!(out, "6 4 3 3 1\n[[0, 1, 2],\n [3, 4, 5]] 3\n[0.5, 0.5]\n");
    assert_eq!(leaked, 1);
}

#[test]
fn math_through_the_stdlib() {
    let f =
        |b: Builtin, args: Vec<Expr>| builtin(b, args.into_iter().map(opaque).collect(), s(F64));
    let body = vec![print(vec![
        f(Builtin::Exp, vec![f64c(0.0)]),
        f(Builtin::Round, vec![f64c(2.5)]),
        f(Builtin::Atan2, vec![f64c(0.0), f64c(-1.0)]),
        f(Builtin::Hypot, vec![f64c(3.0), f64c(4.0)]),
        bin(Rem, opaque(f64c(7.0)), opaque(f64c(-4.0))),
    ])];
    let (out, outcome, _) = run_real(&module(identities(), main(&[], body)));
    assert_eq!(outcome, Outcome::Finished);
    assert_eq!(out, "1.0 3.0 3.141592653589793 5.0 3.0\n");
}

#[test]
fn checked_builtins_report_their_site() {
    let v = || var(0, arr(I64, 1));
    let checked = |b: Builtin, args: Vec<Expr>, ty, site: u32| Expr {
        kind: ExprKind::CheckedBuiltin(b, args, SiteId(site)),
        ty,
    };
    let body = vec![
        set(0, checked(Builtin::Iota, vec![i64c(3)], arr(I64, 1), 1)),
        print(vec![checked(Builtin::Size, vec![v(), i64c(0)], s(I64), 2)]),
        print(vec![checked(Builtin::Size, vec![v(), i64c(1)], s(I64), 7)]),
    ];
    let (out, outcome, _) = run_real(&module(vec![], main(&[("v", arr(I64, 1))], body)));
    assert_eq!(out, "3\n");
    let Outcome::Error(e) = outcome else {
        panic!("{outcome:?}")
    };
    assert_eq!(e.site, Some(7));
    assert_eq!(e.kind, RunErrorKind::BadDimension { dim: 1, rank: 1 });
}
