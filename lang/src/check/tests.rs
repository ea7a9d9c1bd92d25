//! Checker tests: source text in; hir types and conversions, or error messages, out.
//! Expressions are shown as s-expressions: `(f64 n)` is an implicit conversion to f64,
//! `(as f64 n)` an explicit one, constants carry their type (`2.0f32`, `1i32`).

use super::Checker;
use crate::ast::BinOp;
use crate::ast::ScalarType;
use crate::builtins::Builtin;
use crate::diag::Diagnostic;
use crate::hir::{
    ClauseKind, CompoundOp, Const, Expr, ExprKind, Program, RoutineLevel, Stmt, StmtKind, Type,
    VarKind,
};
use crate::span::SourceFile;

fn parse(src: &str) -> crate::ast::Program {
    match crate::parse(&SourceFile::new("t.acc", src)) {
        Ok(p) => p,
        Err(d) => panic!("parse error in test source: {:#?}", d),
    }
}

fn check_with(ck: &mut Checker, src: &str) -> Result<Program, Vec<Diagnostic>> {
    ck.check(&parse(src)).map(|(p, _)| p)
}

fn ok(src: &str) -> Program {
    match Checker::new().check(&parse(src)) {
        Ok((p, _)) => p,
        Err(d) => panic!(
            "unexpected errors: {:#?}",
            d.iter().map(|d| &d.message).collect::<Vec<_>>()
        ),
    }
}

fn errors(src: &str) -> Vec<Diagnostic> {
    match Checker::new().check(&parse(src)) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(d) => d,
    }
}

/// The single error of `src`, which must contain `needle`.
fn error(src: &str, needle: &str) -> Diagnostic {
    let ds = errors(src);
    let msgs: Vec<&str> = ds.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(ds.len(), 1, "expected one error, got {msgs:#?}");
    assert!(
        ds[0].message.contains(needle),
        "expected an error containing {needle:?}, got {msgs:#?}"
    );
    ds.into_iter().next().unwrap()
}

fn show(p: &Program, e: &Expr) -> String {
    let list = |xs: &[Expr]| xs.iter().map(|x| show(p, x)).collect::<Vec<_>>().join(", ");
    match &e.kind {
        ExprKind::Const(c) => c.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Var(v) => p.var(*v).name.clone(),
        ExprKind::Unary(op, x) => {
            let sym = match op {
                crate::ast::UnOp::Neg => "-",
                crate::ast::UnOp::Not => "!",
                crate::ast::UnOp::BitNot => "~",
            };
            format!("({sym} {})", show(p, x))
        }
        ExprKind::Binary(op, l, r) => format!("({} {} {})", op.as_str(), show(p, l), show(p, r)),
        ExprKind::Convert { expr, explicit } => format!(
            "({}{} {})",
            if *explicit { "as " } else { "" },
            e.ty,
            show(p, expr)
        ),
        ExprKind::Call(f, args) => format!("{}({})", p.function(*f).name, list(args)),
        ExprKind::Builtin(b, args) => format!("{}({})", b.name(), list(args)),
        ExprKind::Index { base, indices } => format!("{}[{}]", show(p, base), list(indices)),
        ExprKind::Section { base, ranges } => {
            let rs: Vec<String> = ranges
                .iter()
                .map(|r| {
                    format!(
                        "{}:{}",
                        r.start.as_ref().map_or(String::new(), |x| show(p, x)),
                        r.count.as_ref().map_or(String::new(), |x| show(p, x))
                    )
                })
                .collect();
            format!("{}[{}]", show(p, base), rs.join(", "))
        }
        ExprKind::ArrayLit(xs) => format!("[{}]", list(xs)),
        ExprKind::If(c, t, f) => format!("(if {} {} {})", show(p, c), show(p, t), show(p, f)),
        ExprKind::Block(_, x) => format!("{{… {}}}", show(p, x)),
        ExprKind::Error => "ERROR".into(),
    }
}

/// Every statement of the program, nested ones and function bodies included.
fn all_stmts(p: &Program) -> Vec<&Stmt> {
    fn walk<'a>(s: &'a Stmt, out: &mut Vec<&'a Stmt>) {
        out.push(s);
        match &s.kind {
            StmtKind::If { then, els, .. } => {
                then.stmts.iter().for_each(|s| walk(s, out));
                if let Some(e) = els {
                    walk(e, out);
                }
            }
            StmtKind::While { body, .. } => body.stmts.iter().for_each(|s| walk(s, out)),
            StmtKind::For(f) => f.body.stmts.iter().for_each(|s| walk(s, out)),
            StmtKind::Block(b) => b.stmts.iter().for_each(|s| walk(s, out)),
            StmtKind::Directive(d) => {
                if let Some(b) = &d.body {
                    walk(b, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    p.top.iter().for_each(|s| walk(s, &mut out));
    for f in p.new_functions() {
        f.body.stmts.iter().for_each(|s| walk(s, &mut out));
    }
    out
}

/// The initializer of the (last) `let name`.
fn init<'a>(p: &'a Program, name: &str) -> &'a Expr {
    all_stmts(p)
        .into_iter()
        .rev()
        .find_map(|s| match &s.kind {
            StmtKind::Let { var, init } if p.var(*var).name == name => Some(init),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no `let {name}`"))
}

/// `let name = e`: the type of `name` and `e` shown.
fn let_of(src: &str, name: &str) -> (Type, String) {
    let p = ok(src);
    let e = init(&p, name);
    let var = p.vars.iter().rev().find(|v| v.name == name).unwrap();
    (var.ty, show(&p, e))
}

fn ty_of(src: &str, name: &str) -> Type {
    let_of(src, name).0
}

/// The assignments of the program: (compound op, value shown).
fn assigns(p: &Program) -> Vec<(Option<CompoundOp>, String)> {
    all_stmts(p)
        .into_iter()
        .filter_map(|s| match &s.kind {
            StmtKind::Assign { op, value, .. } => Some((*op, show(p, value))),
            _ => None,
        })
        .collect()
}

const F32_1: Type = Type::Array {
    elem: ScalarType::F32,
    rank: 1,
};
const F64_1: Type = Type::Array {
    elem: ScalarType::F64,
    rank: 1,
};

// ---------------------------------------------------------------------------------------------
// Literals take their context's type
// ---------------------------------------------------------------------------------------------

#[test]
fn float_literal_takes_f32_from_array_element() {
    let (ty, e) = let_of("let x = zeros(f32, 10)\nlet y = 2.0 * x[0]", "y");
    assert_eq!(ty, Type::F32);
    assert_eq!(e, "(* 2.0f32 x[0i64])");
}

#[test]
fn int_literal_takes_i32_from_variable() {
    let (ty, e) = let_of("let n: i32 = 5\nlet m = n - 1", "m");
    assert_eq!(ty, Type::I32);
    assert_eq!(e, "(- n 1i32)");
}

#[test]
fn literals_without_context_are_i64_and_f64() {
    assert_eq!(let_of("let a = 1", "a"), (Type::I64, "1i64".into()));
    assert_eq!(let_of("let b = 2.5", "b"), (Type::F64, "2.5f64".into()));
    assert_eq!(
        let_of("let c = 1 + 2", "c"),
        (Type::I64, "(+ 1i64 2i64)".into())
    );
    assert_eq!(
        let_of("let d = 1 + 2.0", "d"),
        (Type::F64, "(+ 1.0f64 2.0f64)".into())
    );
}

#[test]
fn declared_type_gives_literal_its_type() {
    assert_eq!(let_of("let k: i32 = 3", "k"), (Type::I32, "3i32".into()));
    assert_eq!(let_of("let k: f32 = 3", "k"), (Type::F32, "3.0f32".into()));
    assert_eq!(let_of("let k: i32 = -3", "k"), (Type::I32, "-3i32".into()));
}

#[test]
fn f32_literal_is_rounded_once_from_its_text() {
    let p = ok("let x: f32 = 0.1\nlet y: f32 = 16777217.0");
    assert_eq!(init(&p, "x").as_const(), Some(Const::F32(0.1f32)));
    assert_eq!(init(&p, "y").as_const(), Some(Const::F32(16777216.0)));
}

#[test]
fn element_assignment_literal_takes_element_type() {
    let p = ok("let x = zeros(f32, 4)\nx[0] = 0.0\nx[1] = 1");
    assert_eq!(
        assigns(&p),
        vec![(None, "0.0f32".to_string()), (None, "1.0f32".to_string())]
    );
}

#[test]
fn argument_literal_takes_parameter_type() {
    let (ty, e) = let_of("fn f(a: i32) -> i32 { return a }\nlet r = f(1)", "r");
    assert_eq!(ty, Type::I32);
    assert_eq!(e, "f(1i32)");
}

#[test]
fn max_with_literal_follows_the_typed_argument() {
    assert_eq!(
        let_of("let a: i32 = 2\nlet m = max(a, 1)", "m"),
        (Type::I32, "max(a, 1i32)".into())
    );
    assert_eq!(
        let_of("let m = min(1, 2.5)", "m"),
        (Type::F64, "min(1.0f64, 2.5f64)".into())
    );
}

#[test]
fn comparison_literal_takes_the_other_side() {
    assert_eq!(
        let_of("let i: i32 = 0\nlet c = i < 10", "c"),
        (Type::BOOL, "(< i 10i32)".into())
    );
    assert_eq!(
        let_of("let c = 10 > 2.5", "c"),
        (Type::BOOL, "(> 10.0f64 2.5f64)".into())
    );
}

#[test]
fn float_literal_never_becomes_an_integer() {
    assert_eq!(
        let_of("let n: i32 = 1\nlet y = n * 2.5", "y"),
        (Type::F64, "(* (f64 n) 2.5f64)".into())
    );
    // Assignment narrows a float expression (C), but not a float literal.
    assert_eq!(
        let_of("let x = 1.5\nlet k: i32 = x * 2.0", "k"),
        (Type::I32, "(i32 (* x 2.0f64))".into())
    );
    error(
        "let k: i32 = 2.7",
        "float literal `2.7` cannot become i32 `k`",
    );
}

#[test]
fn integer_arithmetic_on_literals_stays_integer() {
    // C: 7 / 2 == 3, then converted.
    assert_eq!(
        let_of("let x = zeros(f32, 2)\nlet y = x[0] * (7 / 2)", "y"),
        (Type::F32, "(* x[0i64] (f32 (/ 7i64 2i64)))".into())
    );
    assert_eq!(let_of("let z: f64 = 1 / 3", "z").1, "(f64 (/ 1i64 3i64))");
}

#[test]
fn integer_literal_out_of_range_is_an_error() {
    let d = error("let k: i32 = 3000000000", "does not fit in i32");
    assert!(d.message.contains("`3000000000`"));
    error("let k: i32 = -2147483649", "does not fit in i32");
    error("let k = 9223372036854775808", "does not fit in i64");
    assert_eq!(let_of("let k: i32 = -2147483648", "k").1, "-2147483648i32");
    assert_eq!(let_of("let k = -2147483648i32", "k").1, "-2147483648i32");
    assert_eq!(
        let_of("let k = -9223372036854775808", "k").1,
        "-9223372036854775808i64"
    );
}

#[test]
fn big_literal_next_to_i32_makes_the_operation_i64() {
    assert_eq!(
        let_of("let n: i32 = 1\nlet m = n + 3000000000", "m"),
        (Type::I64, "(+ (i64 n) 3000000000i64)".into())
    );
}

#[test]
fn float_literal_out_of_range() {
    error("let x: f32 = 1e39", "out of range for f32");
    error("let x = 1e999", "out of range for f64");
}

// ---------------------------------------------------------------------------------------------
// Conversions and operators
// ---------------------------------------------------------------------------------------------

#[test]
fn usual_arithmetic_conversions() {
    let src = "let a: i32 = 1\nlet b: i64 = 2\nlet c: f32 = 3\nlet d: f64 = 4\n\
               let ab = a + b\nlet bc = b * c\nlet cd = c - d\nlet ad = a / d";
    assert_eq!(let_of(src, "ab"), (Type::I64, "(+ (i64 a) b)".into()));
    assert_eq!(let_of(src, "bc"), (Type::F32, "(* (f32 b) c)".into()));
    assert_eq!(let_of(src, "cd"), (Type::F64, "(- (f64 c) d)".into()));
    assert_eq!(let_of(src, "ad"), (Type::F64, "(/ (f64 a) d)".into()));
}

#[test]
fn assignment_converts_with_narrowing() {
    let p = ok("let n: i32 = 0\nlet x = 2.5\nn = x");
    assert_eq!(assigns(&p), vec![(None, "(i32 x)".to_string())]);
}

#[test]
fn bool_does_not_mix_with_numbers() {
    let d = error(
        "let b = true\nlet c = b + 1",
        "`+` cannot be applied to bool and i64",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("`bool` does not mix with numbers: convert it with `b as i64`")
    );
    error("let n: i32 = true", "cannot assign bool to `n` of type i32");
    error("let b: bool = 1", "cannot assign i64 to `b` of type bool");
}

#[test]
fn as_converts_numbers_and_bool_to_numbers() {
    assert_eq!(
        let_of("let b = true\nlet i = b as i32", "i"),
        (Type::I32, "(as i32 b)".into())
    );
    assert_eq!(
        let_of("let x = 2.5\nlet i = x as i32", "i"),
        (Type::I32, "(as i32 x)".into())
    );
    assert_eq!(let_of("let x = 2.5\nlet y = x as f64", "y").1, "x");
    let d = error(
        "let x = 1.5\nlet b = x as bool",
        "cannot convert f64 to bool",
    );
    assert_eq!(d.help.as_deref(), Some("compare explicitly: `x != 0.0`"));
    error(
        "let a = zeros(3)\nlet b = a as f32",
        "cannot convert f64[] to f32",
    );
}

#[test]
fn conditions_must_be_bool() {
    let d = error("let n = 1\nif n { print(n) }", "must be bool, found i64");
    assert_eq!(d.help.as_deref(), Some("compare explicitly: `n != 0`"));
    let d = error("if 2.5 { }", "must be bool, found f64");
    assert_eq!(d.help.as_deref(), Some("compare explicitly: `2.5 != 0.0`"));
    error("let x = 1\nwhile x { x = x - 1 }", "must be bool");
    error(
        "let x = 1\nlet b = x && true",
        "`&&` cannot be applied to i64 and bool",
    );
}

#[test]
fn unary_operators() {
    assert_eq!(
        let_of("let n: i32 = 1\nlet m = ~n", "m"),
        (Type::I32, "(~ n)".into())
    );
    assert_eq!(
        let_of("let b = !true", "b"),
        (Type::BOOL, "(! true)".into())
    );
    assert_eq!(
        let_of("let x: f32 = 1\nlet y = -x", "y"),
        (Type::F32, "(- x)".into())
    );
    error("let x = ~1.5", "`~` needs an integer, found f64");
    error("let x = !1", "`!` needs a bool, found i64");
    error("let x = -true", "`-` needs a number, found bool");
}

#[test]
fn shifts_bitwise_and_remainder() {
    assert_eq!(
        let_of("let n: i32 = 1\nlet s = n << 2", "s"),
        (Type::I32, "(<< n 2i32)".into())
    );
    assert_eq!(
        let_of("let s = 1 << 20", "s"),
        (Type::I64, "(<< 1i64 20i64)".into())
    );
    assert_eq!(
        let_of("let n: i32 = 1\nlet k: i64 = 3\nlet s = n << k", "s"),
        (Type::I32, "(<< n (i32 k))".into())
    );
    assert_eq!(
        let_of("let r = 5.5 % 2.0", "r"),
        (Type::F64, "(% 5.5f64 2.0f64)".into())
    );
    assert_eq!(let_of("let b = true & false", "b").0, Type::BOOL);
    error("let x = 1.5 << 2", "`<<` cannot be applied to f64 and i64");
    error("let x = 1.5 & 2.5", "cannot be applied to f64 and f64");
}

#[test]
fn if_expression_unifies_branches() {
    assert_eq!(
        ty_of("let c = true\nlet v = if c { 1 } else { 2.5 }", "v"),
        Type::F64
    );
    assert_eq!(
        ty_of("let c = true\nlet v: i32 = if c { 1 } else { 2 }", "v"),
        Type::I32
    );
    error(
        "let c = true\nlet v = if c { 1 } else { false }",
        "`if` branches have different types",
    );
}

#[test]
fn one_error_per_mistake() {
    // The unknown name poisons what depends on it: one error, not three.
    let ds = errors("let x = undefined_thing\nlet y = x + 1\nlet z = y * 2\nprint(z)");
    assert_eq!(ds.len(), 1, "{ds:#?}");
    // Independent mistakes are all reported.
    let ds = errors("let a = nope1\nlet b: i32 = true\nprint(nope2)");
    assert_eq!(ds.len(), 3, "{ds:#?}");
}

// ---------------------------------------------------------------------------------------------
// Arrays
// ---------------------------------------------------------------------------------------------

#[test]
fn indexing_needs_rank_indices_of_integer_type() {
    let d = error(
        "let a = zeros(3, 3)\na[1] = 0.0",
        "`a` has rank 2 but 1 index was given",
    );
    assert!(d.help.unwrap().contains("a[i, j]"));
    let p = ok("let a = zeros(3, 3)\nlet i: i32 = 0\nlet v = a[i, 2]");
    assert_eq!(show(&p, init(&p, "v")), "a[i, 2i64]");
    error(
        "let a = zeros(3)\nlet v = a[1.5]",
        "an array index must be an integer, found f64",
    );
    error(
        "let x = 1.0\nlet v = x[0]",
        "`x` is not an array; it has type f64",
    );
}

#[test]
fn arrays_are_references_with_fixed_type() {
    assert_eq!(ty_of("let a = zeros(3)\nlet b = a", "b"), F64_1);
    let d = error(
        "let a = zeros(3)\na = zeros(3, 3)",
        "cannot assign f64[,] to `a` of type f64[]",
    );
    assert!(d.help.unwrap().contains("reshape"));
    error(
        "let a = zeros(3)\na = zeros(f32, 3)",
        "cannot assign f32[] to `a` of type f64[]",
    );
    error(
        "let a = zeros(3)\na = 1.0",
        "cannot assign f64 to `a` of type f64[]",
    );
    error(
        "let a = zeros(3)\nlet b = a + 1.0",
        "`+` cannot be applied to f64[] and f64",
    );
}

#[test]
fn array_literals() {
    assert_eq!(let_of("let a = [1, 2, 3]", "a").1, "[1i64, 2i64, 3i64]");
    assert_eq!(
        let_of("let a = [1, 2.5]", "a"),
        (F64_1, "[1.0f64, 2.5f64]".into())
    );
    assert_eq!(
        let_of("let a: f32[] = [1.0, 2]", "a"),
        (F32_1, "[1.0f32, 2.0f32]".into())
    );
    assert_eq!(
        let_of("let x: f32 = 1\nlet a = [x, 2.0]", "a"),
        (F32_1, "[x, 2.0f32]".into())
    );
    error("let a = [true, 1]", "array literal mixes bool and numbers");
    error("let a = []", "empty array literal");
    error(
        "let a = [zeros(2)]",
        "array literal elements must be scalars",
    );
}

// ---------------------------------------------------------------------------------------------
// Variables, scopes, globals
// ---------------------------------------------------------------------------------------------

#[test]
fn globals_and_locals() {
    let p = ok("let g = 1\n{\n let t = 2\n}\nfn f(x: i64) -> i64 {\n let y = x\n return y + g\n}");
    let kind = |name: &str| p.vars.iter().find(|v| v.name == name).unwrap().kind;
    assert_eq!(kind("g"), VarKind::Global);
    assert_eq!(kind("t"), VarKind::Local);
    assert_eq!(kind("x"), VarKind::Param);
    assert_eq!(kind("y"), VarKind::Local);
    let y = p.vars.iter().find(|v| v.name == "y").unwrap();
    assert!(y.owner.is_some());
}

#[test]
fn shadowing_with_let() {
    let p = ok("let x = 1\nlet x = 2.5\nlet y = x");
    assert_eq!(init(&p, "y").ty, Type::F64);
    ok("let x = 1\n{\n let x = true\n if x { print(x) }\n}\nlet z = x + 1");
}

#[test]
fn block_scoped_variables() {
    error("{\n let t = 1\n}\nprint(t)", "unknown variable `t`");
}

#[test]
fn function_sees_only_globals_above() {
    ok("let g = 1\nfn f() -> i64 { return g }");
    let d = error(
        "fn f() -> i64 { return g }\nlet g = 1",
        "`g` is declared after this function",
    );
    assert_eq!(d.labels.len(), 3);
    assert_eq!(d.labels[1].message, "declared here, below the function");
    error("print(g)\nlet g = 1", "`g` is used before its declaration");
}

#[test]
fn functions_write_globals() {
    let p = ok("let count = 0\nfn bump() { count += 1 }\nbump()");
    assert_eq!(assigns(&p).len(), 1);
}

#[test]
fn unknown_names_suggest_close_ones() {
    let d = error("let count = 1\nprint(cout)", "unknown variable `cout`");
    assert_eq!(d.help.as_deref(), Some("did you mean `count`?"));
    let d = error("prnt(1)", "unknown function `prnt`");
    assert_eq!(d.help.as_deref(), Some("did you mean `print`?"));
    let d = error(
        "fn square(x: f64) -> f64 { return x * x }\nlet y = sqare(2.0)",
        "unknown function",
    );
    assert_eq!(d.help.as_deref(), Some("did you mean `square`?"));
    error(
        "let x = 1\nlet y = x(2)",
        "`x` is a variable, not a function",
    );
    error("let y = sqrt", "`sqrt` is a function, not a value");
}

#[test]
fn loop_variable_is_read_only() {
    error(
        "for i in 0..10 { i = 2 }",
        "cannot assign to the loop variable `i`",
    );
}

// ---------------------------------------------------------------------------------------------
// Functions
// ---------------------------------------------------------------------------------------------

#[test]
fn functions_are_hoisted_and_may_recurse() {
    ok("print(f(2))\nfn f(x: i64) -> i64 { return x * 2 }");
    ok(
        "fn even(n: i64) -> bool {\n if n == 0 { return true }\n return odd(n - 1)\n}\n\
        fn odd(n: i64) -> bool {\n if n == 0 { return false }\n return even(n - 1)\n}\n\
        print(even(10))",
    );
}

#[test]
fn return_values_and_types() {
    let d = error(
        "fn f() { return 1 }",
        "`f` has no return type, but returns a value",
    );
    assert_eq!(d.help.as_deref(), Some("declare the return type: `-> i64`"));
    error(
        "fn f() -> i32 { return }",
        "missing return value: `f` returns i32",
    );
    let p = ok("fn f() -> f32 { return 1 }");
    let f = p.new_functions().next().unwrap();
    let StmtKind::Return(Some(v)) = &f.body.stmts[0].kind else {
        panic!()
    };
    assert_eq!(show(&p, v), "1.0f32");
    error(
        "fn f() -> i32 { return true }",
        "`f` returns i32, but this is bool",
    );
}

#[test]
fn every_path_must_return() {
    error(
        "fn f(x: i32) -> i32 {\n if x > 0 { return 1 }\n}",
        "`f` can reach its end without returning a value",
    );
    ok("fn f(x: i32) -> i32 {\n if x > 0 { return 1 } else { return 2 }\n}");
    ok("fn f(x: i32) -> i32 {\n if x > 0 { return 1 } else if x < 0 { return 2 } else { return 0 }\n}");
    ok("fn f(x: i32) -> i32 {\n while true { return 1 }\n}");
    ok("fn f(x: i32) -> i32 {\n exit(1)\n}");
    error(
        "fn f(x: i32) -> i32 {\n while true { break }\n}",
        "can reach its end",
    );
}

#[test]
fn user_functions_shadow_builtins() {
    let p = ok("fn sum(a: f64[]) -> f64 { return 1.0 }\nlet s = sum(zeros(3))");
    assert!(matches!(init(&p, "s").kind, ExprKind::Call(..)));
}

#[test]
fn duplicate_function_is_an_error() {
    let d = error("fn f() { }\nfn f() { }", "function `f` is defined twice");
    assert_eq!(d.labels[1].message, "first defined here");
}

#[test]
fn wrong_arity_shows_the_signature() {
    let d = error(
        "fn f(a: i32, b: f64) -> f64 { return b }\nlet y = f(1)",
        "`f` takes 2 arguments but 1 was given",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("the signature is `fn f(a: i32, b: f64) -> f64`")
    );
    let d = error(
        "let y = sqrt(1.0, 2.0)",
        "`sqrt` takes 1 argument but 2 were given",
    );
    assert!(d.help.unwrap().contains("sqrt(x: F) -> F"));
}

#[test]
fn arguments_convert_to_parameter_types() {
    let p = ok(
        "fn f(a: f32, n: i32) -> f32 { return a }\nlet x = 2.5\nlet k: i64 = 3\nlet y = f(x, k)",
    );
    assert_eq!(show(&p, init(&p, "y")), "f((f32 x), (i32 k))");
    error(
        "fn f(a: f64[]) { }\nf(zeros(f32, 3))",
        "argument `a` of `f` must be f64[], found f32[]",
    );
    error(
        "fn f(a: f64[]) { }\nf(1.0)",
        "argument `a` of `f` must be f64[], found f64",
    );
}

#[test]
fn nested_function_is_an_error() {
    error(
        "{\n fn g() { }\n}",
        "function `g` is defined inside a block",
    );
}

#[test]
fn void_call_has_no_value() {
    error("let x = print(1)", "this call has no value");
    error("fn f() { }\nlet y = f() + 1", "this call has no value");
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

#[test]
fn for_loop_variable_types() {
    let loop_var = |src: &str| {
        let p = ok(src);
        let f = all_stmts(&p)
            .into_iter()
            .find_map(|s| match &s.kind {
                StmtKind::For(f) => Some(f.clone()),
                _ => None,
            })
            .unwrap();
        (p.var(f.var).ty, show(&p, &f.start), show(&p, &f.end))
    };
    assert_eq!(
        loop_var("for i in 0..10 { }"),
        (Type::I64, "0i64".into(), "10i64".into())
    );
    assert_eq!(
        loop_var("let n: i32 = 10\nfor i in 0..n { }"),
        (Type::I32, "0i32".into(), "n".into())
    );
    assert_eq!(loop_var("let n = 10\nfor i in 0..n { }").0, Type::I64);
    assert_eq!(
        loop_var("let a: i32 = 0\nlet b: i64 = 9\nfor i in a..b { }"),
        (Type::I64, "(i64 a)".into(), "b".into())
    );
    assert_eq!(
        loop_var("let x = zeros(4)\nfor i in 0..len(x) { }").0,
        Type::I64
    );
}

#[test]
fn for_loop_step() {
    let p = ok("for i in 10..0 step -1 { }");
    let StmtKind::For(f) = &p.top[0].kind else {
        panic!()
    };
    assert_eq!(
        f.step.as_ref().and_then(Expr::as_const),
        Some(Const::I64(-1))
    );
    error(
        "for i in 0..10 step 0 { }",
        "the step of a `for` loop must not be zero",
    );
    error(
        "for i in 0..10 step 0.5 { }",
        "a `for` step must be an integer",
    );
    error(
        "for i in 0.0..10 { }",
        "the start of a `for` range must be an integer, found f64",
    );
}

#[test]
fn break_continue_return_placement() {
    error("break", "`break` outside a loop");
    error("if true { continue }", "`continue` outside a loop");
    ok("while true { break }\nfor i in 0..3 { if i == 1 { continue } }");
    let d = error("return", "`return` outside a function");
    assert!(d.help.unwrap().contains("exit(code)"));
}

#[test]
fn compound_assignment_types() {
    let p = ok(
        "let n: i32 = 1\nn += 1.5\nlet x: f32 = 0\nx += 1\nn <<= 2\nlet a = zeros(3)\na[0] *= 2",
    );
    let ops = assigns(&p);
    assert_eq!(
        ops,
        vec![
            (
                Some(CompoundOp {
                    op: BinOp::Add,
                    ty: ScalarType::F64
                }),
                "1.5f64".into()
            ),
            (
                Some(CompoundOp {
                    op: BinOp::Add,
                    ty: ScalarType::F32
                }),
                "1.0f32".into()
            ),
            (
                Some(CompoundOp {
                    op: BinOp::Shl,
                    ty: ScalarType::I32
                }),
                "2i32".into()
            ),
            (
                Some(CompoundOp {
                    op: BinOp::Mul,
                    ty: ScalarType::F64
                }),
                "2.0f64".into()
            ),
        ]
    );
    error(
        "let b = true\nb += 1",
        "`+` cannot be applied to bool and i64",
    );
    error("let a = zeros(3)\na += 1.0", "cannot be applied to f64[]");
}

#[test]
fn strings_only_as_print_arguments() {
    error(
        "let s = \"hello\"",
        "a string can only be an argument of `print`, `printf` or `assert`",
    );
    error("\"hello\"", "a string can only be an argument");
    error(
        "fn f(s: f64) { }\nf(\"x\")",
        "a string can only be an argument",
    );
    ok("print(\"a\", 1, 2.5, true, zeros(2))\nassert(1 < 2, \"math works\")");
}

// ---------------------------------------------------------------------------------------------
// Built-in functions
// ---------------------------------------------------------------------------------------------

#[test]
fn array_constructors() {
    assert_eq!(
        let_of("let n: i32 = 3\nlet a = zeros(f32, n, 4)", "a"),
        (
            Type::Array {
                elem: ScalarType::F32,
                rank: 2
            },
            "zeros((i64 n), 4i64)".into()
        )
    );
    assert_eq!(ty_of("let a = ones(5)", "a"), F64_1);
    assert_eq!(
        ty_of("let a = zeros(bool, 2)", "a"),
        Type::Array {
            elem: ScalarType::Bool,
            rank: 1
        }
    );
    assert_eq!(
        ty_of("let a = random(f32, 2, 2, 2)", "a"),
        Type::Array {
            elem: ScalarType::F32,
            rank: 3
        }
    );
    assert_eq!(
        let_of("let a = fill(1.0f32, 5)", "a"),
        (F32_1, "fill(1.0f32, 5i64)".into())
    );
    assert_eq!(
        let_of("let a: f32[] = fill(1.0, 4)", "a"),
        (F32_1, "fill(1.0f32, 4i64)".into())
    );
    assert_eq!(
        ty_of("let a = fill(7, 2, 3)", "a"),
        Type::Array {
            elem: ScalarType::I64,
            rank: 2
        }
    );
    assert_eq!(
        ty_of("let a = iota(10)", "a"),
        Type::Array {
            elem: ScalarType::I64,
            rank: 1
        }
    );
    assert_eq!(
        let_of("let a = linspace(0, 1, 11)", "a"),
        (F64_1, "linspace(0.0f64, 1.0f64, 11i64)".into())
    );
    error(
        "let a = zeros(2.5)",
        "an array dimension must be an integer, found f64",
    );
    error(
        "let a = zeros(1, 1, 1, 1, 1, 1, 1)",
        "`zeros` needs 1 to 6 dimensions, found 7",
    );
    error(
        "let a = zeros(f32)",
        "`zeros` needs 1 to 6 dimensions, found 0",
    );
    error("let a = random(i32, 3)", "`random` makes f32 or f64 arrays");
}

#[test]
fn array_queries_and_reductions() {
    let src = "let a = zeros(f32, 2, 3)\nlet b = iota(4)\nlet n = len(a)\nlet s = size(a, 1)\n\
               let r = rank(a)\nlet c = copy(a)\nlet d = reshape(a, 6)\nlet sa = sum(a)\n\
               let sb = sum(b)\nlet pb = product(b)\nlet mb = maximum(b)\nlet ma = minimum(a)";
    assert_eq!(ty_of(src, "n"), Type::I64);
    assert_eq!(let_of(src, "s"), (Type::I64, "size(a, 1i64)".into()));
    assert_eq!(ty_of(src, "r"), Type::I64);
    assert_eq!(
        ty_of(src, "c"),
        Type::Array {
            elem: ScalarType::F32,
            rank: 2
        }
    );
    assert_eq!(ty_of(src, "d"), F32_1);
    assert_eq!(ty_of(src, "sa"), Type::F32);
    assert_eq!(ty_of(src, "sb"), Type::I64);
    assert_eq!(ty_of(src, "pb"), Type::I64);
    assert_eq!(ty_of(src, "mb"), Type::I64);
    assert_eq!(ty_of(src, "ma"), Type::F32);
    assert_eq!(
        ty_of("let a = zeros(i32, 3)\nlet s = sum(a)", "s"),
        Type::I64
    );
    error("let s = sum(1.0)", "`sum` takes an array, found f64");
    error(
        "let s = sum(zeros(bool, 2))",
        "`sum` needs a numeric array, found bool[]",
    );
}

#[test]
fn math_is_generic_over_float_types() {
    assert_eq!(
        let_of("let x: f32 = 2\nlet y = sqrt(x)", "y"),
        (Type::F32, "sqrt(x)".into())
    );
    assert_eq!(
        let_of("let y = sqrt(2)", "y"),
        (Type::F64, "sqrt(2.0f64)".into())
    );
    assert_eq!(
        let_of("let n = 2\nlet y = sqrt(n)", "y"),
        (Type::F64, "sqrt((f64 n))".into())
    );
    assert_eq!(
        let_of("let x: f32 = 2\nlet y = pow(x, 2)", "y"),
        (Type::F32, "pow(x, 2.0f32)".into())
    );
    assert_eq!(
        let_of("let x: f32 = 2\nlet y = fma(x, x, 1.0)", "y"),
        (Type::F32, "fma(x, x, 1.0f32)".into())
    );
    assert_eq!(
        let_of("let n: i32 = -2\nlet y = abs(n)", "y"),
        (Type::I32, "abs(n)".into())
    );
    assert_eq!(
        let_of("let y = fabs(-2)", "y"),
        (Type::F64, "fabs(-2.0f64)".into())
    );
    assert_eq!(
        let_of("let x: f32 = 2\nlet y = isnan(x)", "y"),
        (Type::BOOL, "isnan(x)".into())
    );
    assert_eq!(ty_of("let y = fmod(5.0, 2.0)", "y"), Type::F64);
    assert_eq!(ty_of("let t = clock()", "t"), Type::F64);
    error("let y = sqrt(true)", "`sqrt` needs a number, found bool");
    error("let y = sin(zeros(3))", "`sin` needs a number, found f64[]");
}

#[test]
fn control_builtins() {
    ok("let x = 1\nassert(x > 0)\nassert(x > 0, \"positive\")\nseed(42)\nexit(0)");
    error("assert(1)", "the condition of `assert` must be bool");
    error(
        "let m = 1\nassert(true, m)",
        "the message of `assert` must be a string literal",
    );
    assert_eq!(
        let_of("let n = param(\"n\", 100)", "n"),
        (Type::I64, "param(\"n\", 100i64)".into())
    );
    assert_eq!(let_of("let n: i32 = param(\"n\", 100)", "n").0, Type::I32);
    assert_eq!(ty_of("let t = param(\"tol\", 1e-6)", "t"), Type::F64);
    error(
        "let n = param(\"n\", zeros(2))",
        "the default of `param` must be a scalar",
    );
}

#[test]
fn printf_formats_are_checked() {
    ok("let n: i32 = 1\nlet x = 2.5\nprintf(\"%5d, %0.6f %s %c %x %ld %% %e %g\\n\", n, x, \"s\", 65, 255, n, x, 1)");
    let d = error(
        "printf(\"%d\\n\", 1.5)",
        "`%d` expects an integer, found f64",
    );
    assert_eq!(d.labels[0].message, "this is f64");
    error(
        "let x: f32 = 1\nprintf(\"%i\", x)",
        "`%i` expects an integer, found f32",
    );
    error(
        "let n = 1\nprintf(\"%f\", n)",
        "`%f` expects a float, found i64",
    );
    error("printf(\"%s\", 1)", "`%s` expects a string, found i64");
    error(
        "printf(\"%d\", true)",
        "`%d` expects an integer, found bool",
    );
    error(
        "printf(\"%f %d\\n\", 1.0)",
        "the format has 2 conversions but `printf` has 1 value",
    );
    error(
        "printf(\"%f\\n\", 1.0, 2.0)",
        "`printf` has 2 values but the format has 1 conversion",
    );
    error("printf(\"%q\", 1)", "unsupported `printf` conversion `%q`");
    error(
        "let n = 1\nprintf(n)",
        "the format of `printf` must be a string literal",
    );
}

// ---------------------------------------------------------------------------------------------
// Runtime routines and constants
// ---------------------------------------------------------------------------------------------

#[test]
fn runtime_routines() {
    let src = "let a = zeros(2000)\nlet n = 100\n\
               let p = acc_is_present(a[100:1000])\nacc_copyin(a[0:n])\nacc_create(a)\n\
               let d = acc_on_device(acc_device_host)\n\
               let m = acc_get_property(0, acc_device_nvidia, acc_property_memory)\n\
               let k = acc_get_num_devices(acc_device_nvidia)\nacc_wait(1)\nacc_wait_all()";
    assert_eq!(
        let_of(src, "p"),
        (Type::BOOL, "acc_is_present(a[100i64:1000i64])".into())
    );
    assert_eq!(let_of(src, "d"), (Type::BOOL, "acc_on_device(2i32)".into()));
    assert_eq!(
        let_of(src, "m"),
        (Type::I64, "acc_get_property(0i32, 4i32, 1i32)".into())
    );
    assert_eq!(ty_of(src, "k"), Type::I32);
    let p = ok(src);
    let copyin = all_stmts(&p)
        .into_iter()
        .find_map(|s| match &s.kind {
            StmtKind::Expr(e) if matches!(e.kind, ExprKind::Builtin(Builtin::AccCopyin, _)) => {
                Some(show(&p, e))
            }
            _ => None,
        })
        .unwrap();
    assert_eq!(copyin, "acc_copyin(a[0i64:n])");
    error(
        "let x = 1.0\nacc_copyin(x)",
        "`acc_copyin` takes an array or an array section, found f64",
    );
    error(
        "let a = zeros(3, 3)\nacc_copyin(a[0:3])",
        "`a` has rank 2 but the section gives 1 range",
    );
    error(
        "let a = zeros(3)\nlet b = a[0:2]",
        "an array section is not allowed here",
    );
}

#[test]
fn builtin_constants_can_be_shadowed() {
    let p = ok("let acc_device_host = 5\nlet d = acc_device_host");
    assert_eq!(show(&p, init(&p, "d")), "acc_device_host");
    error(
        "acc_device_host = 3",
        "cannot assign to the constant `acc_device_host`",
    );
}

// ---------------------------------------------------------------------------------------------
// Directives
// ---------------------------------------------------------------------------------------------

fn directive_clauses(p: &Program) -> Vec<ClauseKind> {
    all_stmts(p)
        .into_iter()
        .find_map(|s| match &s.kind {
            StmtKind::Directive(d) => Some(d.clauses.iter().map(|c| c.kind.clone()).collect()),
            _ => None,
        })
        .unwrap()
}

#[test]
fn directive_clauses_are_resolved_and_typed() {
    let p = ok("let a = zeros(10)\nlet n: i32 = 10\n\
                acc parallel loop copyin(a[0:n]) num_gangs(4) if(n > 5) async(1)\n\
                for i in 0..n { a[i] = 1.0 }");
    let clauses = directive_clauses(&p);
    let ClauseKind::Data(_, refs) = &clauses[0] else {
        panic!("{clauses:?}")
    };
    assert_eq!(p.var(refs[0].var).name, "a");
    let sec = &refs[0].sections.as_ref().unwrap()[0];
    assert_eq!(show(&p, sec.count.as_ref().unwrap()), "(i64 n)");
    let ClauseKind::NumGangs(g) = &clauses[1] else {
        panic!()
    };
    assert_eq!(show(&p, g), "4i64");
    let ClauseKind::If(c) = &clauses[2] else {
        panic!()
    };
    assert_eq!(c.ty, Type::BOOL);
    let ClauseKind::Async(Some(q)) = &clauses[3] else {
        panic!()
    };
    assert_eq!(q.ty, Type::I64);
}

#[test]
fn directive_clause_errors() {
    let d = error(
        "let alpha = zeros(10)\nacc parallel loop copy(alpah)\nfor i in 0..10 { alpha[i] = 1.0 }",
        "unknown variable `alpah`",
    );
    assert_eq!(d.help.as_deref(), Some("did you mean `alpha`?"));
    error(
        "let n = 10\nacc parallel if(n)\n{\n}",
        "the condition of `if` must be bool, found i64",
    );
    error(
        "let s = 1.0\nacc data copy(s[0:4])\n{\n}",
        "`s` is not an array; it has type f64",
    );
    error(
        "let a = zeros(4, 4)\nacc data copy(a[0:4])\n{\n}",
        "`a` has rank 2 but the section gives 1 range",
    );
    error(
        "acc parallel num_gangs(2.5)\n{\n}",
        "the argument of `num_gangs` must be an integer, found f64",
    );
}

#[test]
fn device_type_markers_are_kept_in_order() {
    let p = ok("let a = zeros(10)\nacc parallel loop device_type(nvidia) vector_length(256) device_type(host) num_gangs(1)\nfor i in 0..10 { a[i] = 0.0 }");
    let clauses = directive_clauses(&p);
    assert!(matches!(clauses[0], ClauseKind::DeviceType(_)));
    assert!(matches!(clauses[1], ClauseKind::VectorLength(_)));
    assert!(matches!(clauses[2], ClauseKind::DeviceType(_)));
}

#[test]
fn routine_is_recorded_on_the_function() {
    let p = ok(
        "acc routine vector\nfn f(x: f64) -> f64 { return x }\nacc routine\nfn g() { }\nfn h() { }",
    );
    let fs: Vec<_> = p.new_functions().collect();
    assert_eq!(
        fs[0].routine.as_ref().map(|r| r.level),
        Some(RoutineLevel::Vector)
    );
    assert_eq!(
        fs[1].routine.as_ref().map(|r| r.level),
        Some(RoutineLevel::Seq)
    );
    assert!(fs[2].routine.is_none());
    assert!(p.top.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Incremental compilation
// ---------------------------------------------------------------------------------------------

#[test]
fn later_compiles_see_committed_declarations() {
    let mut ck = Checker::new();
    let p1 = check_with(&mut ck, "let g = 1\nfn f() -> i64 { return g }").unwrap();
    ck.commit();
    let g_id = p1.new_globals().next().unwrap().0;
    let p2 = check_with(&mut ck, "let h = f() + g").unwrap();
    ck.commit();
    let ExprKind::Binary(_, l, r) = &init(&p2, "h").kind else {
        panic!()
    };
    assert!(matches!(l.kind, ExprKind::Call(..)));
    assert_eq!(r.as_var(), Some(g_id));
    assert_eq!(p2.first_new_fn, 1);
    assert_eq!(p2.functions.len(), 1);
    assert!(p2.first_new_var as usize > g_id.index());
}

#[test]
fn rollback_forgets_and_errors_keep_nothing() {
    let mut ck = Checker::new();
    check_with(&mut ck, "let z = 1").unwrap();
    ck.rollback();
    assert!(check_with(&mut ck, "print(z)").is_err());
    // A failed check keeps nothing either.
    assert!(check_with(&mut ck, "let q = 1\nprint(nope)").is_err());
    assert!(check_with(&mut ck, "print(q)").is_err());
    // An uncommitted check is rolled back by the next one.
    check_with(&mut ck, "let w = 1").unwrap();
    assert!(check_with(&mut ck, "print(w)").is_err());
}

#[test]
fn redefinition_in_a_later_compile_replaces_the_function() {
    let mut ck = Checker::new();
    check_with(&mut ck, "fn f() -> i64 { return 1 }").unwrap();
    ck.commit();
    let p = check_with(&mut ck, "fn f() -> f64 { return 2.0 }\nlet y = f()").unwrap();
    assert_eq!(init(&p, "y").ty, Type::F64);
}

#[test]
fn call_must_not_run_before_the_globals_it_uses() {
    let d = error(
        "f()\nlet g = 1\nfn f() { print(g) }",
        "`f` uses `g` before `g` is declared",
    );
    assert_eq!(d.labels[1].message, "declared here");
    error(
        "h()\nlet g = 1\nfn f() { print(g) }\nfn h() { f() }",
        "`h` uses `g` (through `f`) before `g` is declared",
    );
    ok("let g = 1\nf()\nfn f() { print(g) }");
    ok("fn f() { f() }\nf()");
}

/// A program touching most rules, for the robustness test below.
const CORPUS: &str = r#"let n = param("n", 100)
let a = zeros(f32, n)
let b = fill(2.0f32, n)
let m: i32 = 4
fn dot(x: f32[], y: f32[]) -> f32 {
    let s = 0.0f32
    acc parallel loop reduction(+: s) present(x, y)
    for i in 0..len(x) { s += x[i] * y[i] }
    return s
}
acc routine seq
fn clampi(v: i32, lo: i32) -> i32 {
    if v < lo { return lo } else { return v }
}
acc data copyin(b[0:n]) copy(a) {
    acc parallel loop gang vector num_gangs(m) async(1)
    for i in 0..n step 2 {
        a[i] = 2.0 * b[i] + clampi(m, 1)
    }
    acc wait(1)
}
let t = if n > 10 { 1.5 } else { 2 }
printf("%d %f %s\n", m, dot(a, b), "ok")
print(acc_is_present(a[0:n]), sum(a), [1, 2.5], t as i32)
"#;

#[test]
fn never_panics_on_mutilated_programs() {
    ok(CORPUS);
    let lines: Vec<&str> = CORPUS.lines().collect();
    for i in 0..lines.len() {
        let mut without = lines.clone();
        without.remove(i);
        let mut cut = lines.clone();
        cut[i] = &lines[i][..lines[i].len() / 2];
        for v in [without.join("\n"), cut.join("\n")] {
            if let Ok(p) = crate::parse(&SourceFile::new("t.acc", v)) {
                let _ = Checker::new().check(&p);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Help lines: the user's own names and values, no cascades
// ---------------------------------------------------------------------------------------------

/// The source text a span of `d` covers.
fn span_text<'a>(src: &'a str, d: &Diagnostic, label: usize) -> &'a str {
    let span = d
        .labels
        .get(label)
        .map_or_else(Default::default, |l| l.span);
    src.get(span.range()).unwrap_or("<bad span>")
}

#[test]
fn float_literal_given_an_integer_type_is_an_error() {
    let src = "let k: i32 = 1.5\nprint(k)";
    let d = error(src, "float literal `1.5` cannot become i32 `k`");
    assert_eq!(span_text(src, &d, 0), "1.5");
    assert_eq!(span_text(src, &d, 1), "i32");
    assert_eq!(
        d.help.as_deref(),
        Some("write `1.5 as i32` to truncate toward zero, or declare `k: f64`")
    );
    // A whole number is most likely meant as the integer.
    let d = error(
        "let k: i32 = 0\nk = -2.0",
        "float literal `-2.0` cannot become i32 `k`",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("write the integer `-2`, or declare `k: f64`")
    );
    let d = error(
        "fn f(n: i32) { print(n) }\nf(2.5)",
        "float literal `2.5` cannot become argument `n` of `f`, of type i32",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("write `2.5 as i32` to truncate toward zero, or declare the parameter `n: f64`")
    );
    let d = error(
        "fn f() -> i64 { return 0.5 }",
        "float literal `0.5` cannot become i64, the return type of `f`",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("write `0.5 as i64` to truncate toward zero, or declare `-> f64`")
    );
    let d = error(
        "let a = zeros(i32, 3)\na[0] = 1.5f32",
        "float literal `1.5f32` cannot become an element of type i32",
    );
    assert_eq!(
        d.help.as_deref(),
        Some("write `1.5f32 as i32` to truncate toward zero")
    );
    // Float expressions still narrow, as in C; `op=` computes in the float type.
    ok("let x = 2.5\nlet k: i32 = x\nlet j: i32 = x * 2.0\nlet n: i32 = 1\nn += 1.5");
    ok("let k: i32 = 2\nlet x: f64 = 1.5\nlet y: f32 = 2.5");
}

#[test]
fn printf_errors_point_at_the_conversion() {
    let src = "let a = 1\nprintf(\"%d %d\\n\", a)";
    let d = error(src, "the format has 2 conversions but `printf` has 1 value");
    assert_eq!(d.span().start as usize, src.rfind("%d").unwrap());
    assert_eq!(span_text(src, &d, 0), "%d");
    assert_eq!(d.labels[0].message, "`%d` has no value");
    assert_eq!(span_text(src, &d, 1), "a");
    assert_eq!(d.labels[1].message, "1 value given");
    assert!(d.help.unwrap().contains("one value per conversion"));
    // Escapes before the conversion are two source bytes each.
    let src = "printf(\"x\\t\\\"\\\\%d\\\" %5.2f\\n\", 1)";
    let d = error(src, "the format has 2 conversions but `printf` has 1 value");
    assert_eq!(span_text(src, &d, 0), "%5.2f");
    // A raw tab decodes like `\t`: the offset is unknown, the whole format is shown.
    let src = "printf(\"\t%d %d\", 1)";
    let d = error(src, "the format has 2 conversions");
    assert_eq!(span_text(src, &d, 0), "\"\t%d %d\"");
    // Mismatches label the conversion too.
    let src = "let n = 42\nprintf(\"n = %f\\n\", n)";
    let d = error(src, "`%f` expects a float, found i64");
    assert_eq!(span_text(src, &d, 0), "n");
    assert_eq!(span_text(src, &d, 1), "%f");
    assert_eq!(
        d.help.as_deref(),
        Some("use `%d` for integers, or convert: `n as f64`")
    );
    let src = "let n = 42\nprintf(\"%q\\n\", n)";
    let d = error(src, "unsupported `printf` conversion `%q`");
    assert_eq!(d.message, "unsupported `printf` conversion `%q`");
    assert_eq!(span_text(src, &d, 0), "%q");
    assert_eq!(
        d.help.as_deref(),
        Some("conversions: %d %i %u %x %f %e %g %s %c, and %% for `%`")
    );
}

#[test]
fn value_returned_without_a_return_type_is_reported_once() {
    let fn_src = "fn double(x: f64) {\n    return x * 2.0\n}\n";
    let uses = "print(double(1.0))\nlet y = double(2.0) + 1.0\nprintf(\"%f\", double(3.0))\n";
    for src in [format!("{fn_src}{uses}"), format!("{uses}{fn_src}")] {
        let d = error(&src, "`double` has no return type, but returns a value");
        assert_eq!(d.help.as_deref(), Some("declare the return type: `-> f64`"));
    }
    // A function that really returns nothing still has no value.
    error("fn f() { }\nprint(f())", "this call has no value to print");
    error("fn f() { }\nlet x = f()", "this call has no value");
}

#[test]
fn unknown_function_suggests_the_acc_name() {
    let help = |src: &str| error(src, "unknown function").help;
    let a = "let a = zeros(10)\n";
    assert_eq!(
        help(&format!("{a}let n = lenght(a)")).as_deref(),
        Some("did you mean `len`?")
    );
    assert_eq!(
        help(&format!("{a}let n = length(a)")).as_deref(),
        Some("did you mean `len`?")
    );
    assert_eq!(
        help(&format!("{a}let n = lenn(a)")).as_deref(),
        Some("did you mean `len`?")
    );
    assert_eq!(help("println(1)").as_deref(), Some("did you mean `print`?"));
    assert_eq!(
        help("print_f(\"x\")").as_deref(),
        Some("did you mean `printf`?")
    );
    assert_eq!(
        help("let b = array(3)").as_deref(),
        Some("did you mean `zeros`?")
    );
    assert!(help("let r = range(10)")
        .unwrap()
        .contains("`for i in 0..n` loop"));
    assert_eq!(
        help("let n = 3\nlet x = float(n)").as_deref(),
        Some("convert with `as`: `n as f64`")
    );
    assert_eq!(
        help("let x = sqrtf(2.0)").as_deref(),
        Some("did you mean `sqrt`?")
    );
    assert_eq!(
        help("let x = i32(2.5)").as_deref(),
        Some("convert with `as`: `2.5 as i32`")
    );
    assert_eq!(help("let x = frobnicate(2.0)"), None);
    // A variable called like a function gets no alias.
    let d = error(
        &format!("{a}let length = 3\nlet n = length(a)"),
        "`length` is a variable, not a function",
    );
    assert_eq!(d.help, None);
}

#[test]
fn assigning_an_undeclared_variable_says_how_to_declare_it() {
    let ds = errors("count = 0\nprint(count)");
    assert_eq!(ds[0].message, "unknown variable `count`");
    assert_eq!(
        ds[0].help.as_deref(),
        Some("declare it first: `let count = 0`")
    );
    let d = error("let n = 4\ncount = n * 2", "unknown variable `count`");
    assert_eq!(
        d.help.as_deref(),
        Some("declare it first: `let count = n * 2`")
    );
    let d = error("total += 1.5", "unknown variable `total`");
    assert_eq!(
        d.help.as_deref(),
        Some("declare it first with a starting value: `let total = 0.0`")
    );
    // A near miss of a declared name is more likely a typo.
    let d = error("let count = 0\ncont = 1", "unknown variable `cont`");
    assert_eq!(d.help.as_deref(), Some("did you mean `count`?"));
}

#[test]
fn assigning_a_scalar_to_an_array_suggests_fill() {
    let d = error(
        "let a = zeros(10)\na = 0.0",
        "cannot assign f64 to `a` of type f64[]",
    );
    assert_eq!(
        d.help.as_deref(),
        Some(
            "to set every element write a loop: `for i in 0..len(a) { a[i] = 0.0 }`, or make a \
             new array: `a = fill(0.0, len(a))`"
        )
    );
    let d = error("let m = zeros(2, 3)\nm = 1.5", "cannot assign f64 to `m`");
    assert!(d
        .help
        .unwrap()
        .contains("`m = fill(1.5, size(m, 0), size(m, 1))`"));
}

#[test]
fn helps_use_the_names_in_the_code() {
    let help = |src: &str, message: &str| error(src, message).help.unwrap_or_default();
    assert_eq!(
        help(
            "let done = false\nif done == 1 { }",
            "`==` cannot be applied to bool and i64"
        ),
        "compare with `true` or `false`, or test the bool itself: `if done { … }`"
    );
    assert_eq!(
        help("let flag = true\nlet x = flag + 1", "`+` cannot be applied"),
        "`bool` does not mix with numbers: convert it with `flag as i64`"
    );
    assert_eq!(
        help("let k: i32 = true", "cannot assign bool"),
        "`bool` does not mix with numbers: write `1` instead of `true`"
    );
    assert_eq!(
        help("let n = 0\nif !n { }", "`!` needs a bool"),
        "for a bitwise not use `~`; to test for zero write `n == 0`"
    );
    assert_eq!(
        help(
            "let a = zeros(3)\nlet i = 2.0\nprint(a[i])",
            "an array index must be"
        ),
        "convert it explicitly: `i as i64` (truncates toward zero)"
    );
    assert_eq!(
        help("let n = 1\nlet b = n && true", "`&&` cannot be applied"),
        "`&&` needs bool operands; compare explicitly: `n != 0`"
    );
    assert_eq!(
        help(
            "let x = 1.5\nlet b = (x + 1.0) || false",
            "`||` cannot be applied"
        ),
        "`||` needs bool operands; compare explicitly with `!= 0.0`"
    );
    assert_eq!(
        help("let v = zeros(3)\nprintf(\"%d\", v[1])", "`%d` expects"),
        "use `%f`, `%e` or `%g` for floats, or convert: `v[1] as i64`"
    );
    assert_eq!(
        help(
            "let v = zeros(3)\nprintf(\"%d\", v[1] * 2.0)",
            "`%d` expects"
        ),
        "use `%f`, `%e` or `%g` for floats, or convert with `as i64`"
    );
    assert_eq!(
        help(
            "let a = zeros(3)\nlet b = sum(a) as bool",
            "cannot convert f64 to bool"
        ),
        "compare explicitly: `sum(a) != 0.0`"
    );
}

#[test]
fn later_compiles_share_the_variable_table_and_reuse_top_level_loop_ids() {
    let mut ck = Checker::new();
    let p = check_with(
        &mut ck,
        "let g = 1\nfn f(x: i64) -> i64 { let y = x\n return y }",
    )
    .unwrap();
    ck.commit();
    let declared = p.vars.len();
    assert_eq!(declared, 3, "g, x and y");
    drop(p);
    // A loop at the top level: its variable and the block's local can never be named again.
    let p = check_with(&mut ck, "for i in 0..3 { let t = i\n print(t + g) }").unwrap();
    assert_eq!(p.vars.len(), declared + 2);
    ck.commit();
    drop(p);
    // The next compile gives their ids out again; the global and the function's keep theirs.
    let p = check_with(&mut ck, "for k in 0..3 { print(k + f(g)) }\nlet h = g").unwrap();
    assert_eq!(p.vars.len(), declared + 2, "k and h");
    assert_eq!(p.vars[declared].name, "k");
    assert_eq!(p.vars[0].name, "g");
    ck.commit();
    drop(p);
    // `h` is a global: it stays, and so does `k` before it.
    let p = check_with(&mut ck, "print(h)").unwrap();
    assert_eq!(p.vars.len(), declared + 2);
    assert_eq!(p.vars[declared + 1].name, "h");
}
