//! Scalar semantics: arithmetic, division, conversions, shifts, comparisons, math built-ins.

mod common;

use acc_lang::builtins::Builtin;
use acc_lang::ir::{BinOp::*, UnOp};
use common::*;

/// Print `op(a, b)` for each pair, computed twice: in a function of the two operands (so that
/// nothing folds at compile time) and in `main` with the operands in locals (where Cranelift may
/// fold them); both must agree.
fn table(t: acc_lang::ir::ScalarType, op: acc_lang::ir::BinOp, pairs: &[(Expr2, Expr2)]) -> String {
    let result = bin(op, var(0, s(t)), var(1, s(t)));
    let f = common::function(
        0,
        "op",
        2,
        Some(result.ty),
        &[("a", s(t)), ("b", s(t))],
        vec![ret(result.clone())],
    );
    let mut body = Vec::new();
    for (a, b) in pairs {
        body.push(set(0, a.clone()));
        body.push(set(1, b.clone()));
        body.push(print(vec![
            call(0, vec![var(0, s(t)), var(1, s(t))], result.ty),
            result.clone(),
        ]));
    }
    let r = run(&module(
        vec![f],
        common::main(&[("a", s(t)), ("b", s(t))], body),
    ));
    assert_eq!(r.status, 0, "{}", r.error);
    let mut out = String::new();
    for line in r.out.lines() {
        let (called, inline) = line.split_once(' ').unwrap();
        assert_eq!(called, inline, "function and folded results differ");
        out += called;
        out.push('\n');
    }
    out
}

type Expr2 = acc_lang::ir::Expr;

#[test]
fn integer_arithmetic_wraps() {
    let out = table(I32, Add, &[(i32c(i32::MAX), i32c(1)), (i32c(-5), i32c(3))]);
    assert_eq!(out, "-2147483648\n-2\n");
    let out = table(I32, Mul, &[(i32c(65536), i32c(65536)), (i32c(-7), i32c(6))]);
    assert_eq!(out, "0\n-42\n");
    let out = table(I64, Sub, &[(i64c(i64::MIN), i64c(1))]);
    assert_eq!(out, "9223372036854775807\n");
    let out = table(I64, Mul, &[(i64c(i64::MAX), i64c(2))]);
    assert_eq!(out, "-2\n");
    let r = run_main(
        &[("a", s(I32))],
        vec![
            set(0, i32c(i32::MIN)),
            print(vec![un(UnOp::Neg, var(0, s(I32)))]),
            print(vec![un(UnOp::BitNot, var(0, s(I32)))]),
        ],
    );
    assert_eq!(r.out, "-2147483648\n2147483647\n");
}

#[test]
fn division_truncates_toward_zero() {
    let pairs = [
        (i32c(7), i32c(2)),
        (i32c(-7), i32c(2)),
        (i32c(7), i32c(-2)),
        (i32c(-7), i32c(-2)),
    ];
    assert_eq!(table(I32, Div, &pairs), "3\n-3\n-3\n3\n");
    assert_eq!(table(I32, Rem, &pairs), "1\n-1\n1\n-1\n");
    let pairs = [(i64c(-9), i64c(4)), (i64c(9), i64c(-4))];
    assert_eq!(table(I64, Div, &pairs), "-2\n-2\n");
    assert_eq!(table(I64, Rem, &pairs), "-1\n1\n");
}

#[test]
fn min_divided_by_minus_one_wraps() {
    let pairs = [(i32c(i32::MIN), i32c(-1))];
    assert_eq!(table(I32, Div, &pairs), "-2147483648\n");
    assert_eq!(table(I32, Rem, &pairs), "0\n");
    let pairs = [(i64c(i64::MIN), i64c(-1))];
    assert_eq!(table(I64, Div, &pairs), "-9223372036854775808\n");
    assert_eq!(table(I64, Rem, &pairs), "0\n");
    // A constant divisor takes the short path.
    let r = run_main(
        &[("a", s(I32))],
        vec![
            set(0, i32c(i32::MIN)),
            print(vec![
                bin(Div, var(0, s(I32)), i32c(-1)),
                bin(Rem, var(0, s(I32)), i32c(-1)),
                bin(Div, var(0, s(I32)), i32c(7)),
                bin(Rem, var(0, s(I32)), i32c(7)),
            ]),
        ],
    );
    assert_eq!(r.out, "-2147483648 0 -306783378 -2\n");
}

#[test]
fn division_by_zero_is_an_error_at_its_site() {
    let r = run_main(
        &[("a", s(I64)), ("b", s(I64))],
        vec![
            set(0, i64c(5)),
            set(1, i64c(0)),
            print(vec![i64c(1)]),
            print(vec![bin_at(
                Rem,
                var(0, s(I64)),
                var(1, s(I64)),
                Some(acc_lang::ir::SiteId(3)),
            )]),
            print(vec![i64c(2)]),
        ],
    );
    assert_eq!(r.status, 1);
    assert_eq!(r.error, "division by zero at site 3");
    assert_eq!(r.out, "1\n");
}

#[test]
fn shifts_mask_the_count() {
    assert_eq!(
        table(
            I32,
            Shl,
            &[(i32c(1), i32c(33)), (i32c(1), i32c(-1)), (i32c(3), i32c(2))]
        ),
        "2\n-2147483648\n12\n"
    );
    assert_eq!(
        table(I32, Shr, &[(i32c(-8), i32c(1)), (i32c(-1), i32c(31))]),
        "-4\n-1\n"
    );
    assert_eq!(
        table(I64, Shl, &[(i64c(1), i64c(63))]),
        "-9223372036854775808\n"
    );
    // The count may have another integer type than the shifted value.
    let r = run_main(
        &[("a", s(I32)), ("n", s(I64))],
        vec![
            set(0, i32c(5)),
            set(1, i64c(2)),
            print(vec![bin(Shl, var(0, s(I32)), var(1, s(I64)))]),
        ],
    );
    assert_eq!(r.out, "20\n");
}

#[test]
fn bit_operations() {
    assert_eq!(table(I32, BitAnd, &[(i32c(12), i32c(10))]), "8\n");
    assert_eq!(table(I32, BitOr, &[(i32c(12), i32c(10))]), "14\n");
    assert_eq!(table(I64, BitXor, &[(i64c(12), i64c(10))]), "6\n");
}

#[test]
fn float_arithmetic_and_fmod() {
    assert_eq!(
        table(F64, Add, &[(f64c(0.1), f64c(0.2))]),
        "0.30000000000000004\n"
    );
    assert_eq!(table(F32, Mul, &[(f32c(1.5), f32c(2.0))]), "3.0\n");
    assert_eq!(table(F64, Div, &[(f64c(1.0), f64c(0.0))]), "inf\n");
    assert_eq!(table(F64, Rem, &[(f64c(-7.5), f64c(2.0))]), "-1.5\n");
    assert_eq!(table(F32, Rem, &[(f32c(7.5), f32c(-2.0))]), "1.5\n");
    let r = run_main(
        &[("a", s(F64))],
        vec![
            set(0, f64c(2.5)),
            print(vec![un(UnOp::Neg, var(0, s(F64)))]),
        ],
    );
    assert_eq!(r.out, "-2.5\n");
}

#[test]
fn floats_are_not_contracted() {
    // x*x + c: rounded twice it is 0; fused it would be 2^-60.
    let x = 1.0 + 2f64.powi(-30);
    let c = -(1.0 + 2f64.powi(-29));
    let body = vec![
        print(vec![bin(
            Add,
            bin(Mul, opaque(f64c(x)), opaque(f64c(x))),
            opaque(f64c(c)),
        )]),
        print(vec![builtin(
            Builtin::Fma,
            vec![opaque(f64c(x)), opaque(f64c(x)), opaque(f64c(c))],
            s(F64),
        )]),
    ];
    let r = run_opaque(body);
    assert_eq!(r.out, format!("0.0\n{:?}\n", 2f64.powi(-60)));
}

#[test]
fn comparisons() {
    let nan = f64::NAN;
    let pairs = [
        (f64c(1.0), f64c(2.0)),
        (f64c(nan), f64c(nan)),
        (f64c(2.0), f64c(2.0)),
    ];
    assert_eq!(table(F64, Lt, &pairs), "true\nfalse\nfalse\n");
    assert_eq!(table(F64, Ne, &pairs), "true\ntrue\nfalse\n");
    assert_eq!(table(F64, Eq, &pairs), "false\nfalse\ntrue\n");
    assert_eq!(table(F64, Ge, &pairs), "false\nfalse\ntrue\n");
    let pairs = [(i32c(-1), i32c(1)), (i32c(3), i32c(3))];
    assert_eq!(table(I32, Lt, &pairs), "true\nfalse\n");
    assert_eq!(table(I32, Le, &pairs), "true\ntrue\n");
    assert_eq!(table(B, Eq, &[(boolc(true), boolc(false))]), "false\n");
    let r = run_main(
        &[("b", s(B))],
        vec![
            set(0, boolc(false)),
            print(vec![un(UnOp::Not, var(0, s(B)))]),
        ],
    );
    assert_eq!(r.out, "true\n");
}

#[test]
fn conversions() {
    let cases = vec![
        conv(f64c(1e20), I32),
        conv(f64c(-1e20), I32),
        conv(f64c(f64::NAN), I32),
        conv(f64c(-3.7), I32),
        conv(f32c(3.99), I64),
        conv(f64c(f64::INFINITY), I64),
        conv(i64c(1 << 40), I32),
        conv(i32c(-5), I64),
        conv(i64c(-3), F64),
        conv(i32c(16777217), F32),
        conv(f64c(0.1), F32),
        conv(f32c(0.1), F64),
        conv(boolc(true), I32),
        conv(boolc(true), I64),
    ];
    let mut body = Vec::new();
    for c in cases {
        let acc_lang::ir::ExprKind::Convert(inner) = c.kind else {
            unreachable!()
        };
        body.push(print(vec![acc_lang::ir::Expr {
            kind: acc_lang::ir::ExprKind::Convert(Box::new(opaque(*inner))),
            ty: c.ty,
        }]));
    }
    let r = run_opaque(body);
    assert_eq!(
        r.out,
        "2147483647\n-2147483648\n0\n-3\n3\n9223372036854775807\n0\n-5\n-3.0\n16777216.0\n0.1\n\
         0.10000000149011612\n1\n1\n"
    );
}

#[test]
fn short_circuit() {
    // f() prints and returns true: it must run only when the left side does not decide.
    let f = common::function(
        0,
        "f",
        0,
        Some(s(B)),
        &[],
        vec![print(vec![i32c(99)]), ret(boolc(true))],
    );
    let fcall = || call(0, vec![], s(B));
    let main = common::main(
        &[("t", s(B)), ("f", s(B))],
        vec![
            set(0, boolc(true)),
            set(1, boolc(false)),
            print(vec![bin(And, var(1, s(B)), fcall())]),
            print(vec![bin(Or, var(0, s(B)), fcall())]),
            print(vec![bin(And, var(0, s(B)), fcall())]),
            print(vec![bin(Or, var(1, s(B)), fcall())]),
        ],
    );
    let r = run(&module(vec![f], main));
    assert_eq!(r.out, "false\ntrue\n99\ntrue\n99\ntrue\n");
}

#[test]
fn math_builtins() {
    let f =
        |b: Builtin, args: Vec<Expr2>| builtin(b, args.into_iter().map(opaque).collect(), s(F64));
    let nan = f64c(f64::NAN);
    let r = run_opaque(vec![
        print(vec![
            f(Builtin::Sqrt, vec![f64c(2.0)]),
            f(Builtin::Floor, vec![f64c(-1.5)]),
            f(Builtin::Ceil, vec![f64c(-1.5)]),
            f(Builtin::Trunc, vec![f64c(-1.5)]),
            f(Builtin::Round, vec![f64c(-2.5)]),
            f(Builtin::Fabs, vec![f64c(-3.0)]),
            f(Builtin::Copysign, vec![f64c(3.0), f64c(-0.0)]),
            f(Builtin::Pow, vec![f64c(2.0), f64c(10.0)]),
        ]),
        // C fmin/fmax: a NaN operand yields the other one.
        print(vec![
            f(Builtin::Min, vec![nan.clone(), f64c(1.0)]),
            f(Builtin::Max, vec![f64c(1.0), nan.clone()]),
            f(Builtin::Fmin, vec![f64c(-1.0), f64c(2.0)]),
            f(Builtin::Fmax, vec![f64c(-1.0), f64c(2.0)]),
            f(Builtin::Max, vec![nan.clone(), nan.clone()]),
        ]),
        print(vec![
            builtin(Builtin::Isnan, vec![opaque(nan.clone())], s(B)),
            builtin(Builtin::Isinf, vec![opaque(f64c(f64::NEG_INFINITY))], s(B)),
            builtin(Builtin::Isfinite, vec![opaque(f64c(f64::INFINITY))], s(B)),
            builtin(Builtin::Isfinite, vec![opaque(nan)], s(B)),
            builtin(Builtin::Isfinite, vec![opaque(f64c(1.0))], s(B)),
        ]),
        print(vec![
            builtin(Builtin::Abs, vec![opaque(i32c(i32::MIN))], s(I32)),
            builtin(Builtin::Abs, vec![opaque(i64c(-4))], s(I64)),
            builtin(
                Builtin::Min,
                vec![opaque(i32c(-4)), opaque(i32c(3))],
                s(I32),
            ),
            builtin(
                Builtin::Max,
                vec![opaque(i64c(-4)), opaque(i64c(3))],
                s(I64),
            ),
            builtin(Builtin::Abs, vec![opaque(f32c(-0.5))], s(F32)),
        ]),
    ]);
    assert_eq!(r.status, 0, "{}", r.error);
    assert_eq!(
        r.out,
        "1.4142135623730951 -2.0 -1.0 -1.0 -3.0 3.0 -3.0 1024.0\n\
         1.0 1.0 -1.0 2.0 NaN\n\
         true true false false true\n\
         -2147483648 4 -4 3 0.5\n"
    );
}

#[test]
fn printf_packs_its_arguments() {
    use acc_lang::builtins::parse_format;
    let mut m = module(vec![], common::main(&[], vec![]));
    m.formats = vec![parse_format("%d%% of %5.2f, %x %c\n").unwrap()];
    m.main.body = vec![acc_lang::ir::Stmt::Printf(
        acc_lang::ir::FormatId(0),
        vec![i32c(-1), f32c(0.5), i64c(255), i32c(65)],
        acc_lang::ir::SiteId(CALL_SITE),
    )];
    let r = run(&m);
    assert_eq!(
        r.out,
        "printf(\"%d%% of %5.2f, %x %c\\n\"; 0xffffffffffffffff, 0x3fe0000000000000, 0xff, 0x41)"
    );
}

#[test]
fn param_and_on_device() {
    let mut m = module(vec![], common::main(&[], vec![]));
    m.strings = vec!["answer".into(), "other".into()];
    let param = |id: u32| acc_lang::ir::Expr {
        kind: acc_lang::ir::ExprKind::Param(
            acc_lang::ir::StringId(id),
            Box::new(i64c(7)),
            acc_lang::ir::SiteId(0),
        ),
        ty: s(I64),
    };
    m.main.body = vec![print(vec![
        param(0),
        param(1),
        builtin(Builtin::AccOnDevice, vec![i32c(2)], s(B)),
    ])];
    let r = run(&m);
    assert_eq!(r.out, "42 7 true\n");
}
