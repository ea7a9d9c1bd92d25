//! What a REPL asks of the front end besides compiling: a compile that keeps nothing, the type
//! of an expression, the functions and globals in scope, and the clauses each construct takes.

use acc_lang::ast::Construct;
use acc_lang::{Frontend, SourceFile};

fn source(text: &str) -> SourceFile {
    SourceFile::new("<test>", text)
}

#[test]
fn a_trial_compile_keeps_nothing() {
    let mut fe = Frontend::new();
    fe.compile(&source(
        "let n = 3\nfn twice(x: i64) -> i64 { return 2 * x }",
    ))
    .expect("compiles");
    let globals = fe
        .compile_trial(
            &source("let m = twice(n)\nfn half(x: f64) -> f64 { return x / 2.0 }"),
            |c| c.hir.top.len(),
        )
        .expect("compiles");
    assert_eq!(globals, 1);
    assert!(fe.global("m").is_none(), "a trial's global is not kept");
    assert!(
        fe.function("half").is_none(),
        "a trial's function is not kept"
    );
    // What was there before is still there, and a later compile may use the names.
    assert!(fe.global("n").is_some());
    fe.compile(&source(
        "let m = 1.5\nfn half(x: i64) -> i64 { return x / 2 }",
    ))
    .expect("compiles after the trial");
    assert_eq!(
        fe.global("m").map(|(_, t)| t.to_string()),
        Some("f64".into())
    );
}

#[test]
fn a_failed_trial_keeps_nothing_either() {
    let mut fe = Frontend::new();
    let errors = fe
        .compile_trial(&source("let k = 1\nprint(nope)"), |_| ())
        .expect_err("an unknown name");
    assert!(errors[0].message.contains("nope"), "{}", errors[0].message);
    assert!(fe.global("k").is_none());
}

#[test]
fn expression_types() {
    let mut fe = Frontend::new();
    fe.compile(&source(
        "let a = zeros(f32, 3, 4)\nfn dot(x: f64[], y: f64[]) -> f64 { return 0.0 }",
    ))
    .expect("compiles");
    let ty =
        |fe: &mut Frontend, text: &str| fe.expression_type(&source(text)).map(|t| t.to_string());
    assert_eq!(ty(&mut fe, "a").unwrap(), "f32[,]");
    assert_eq!(ty(&mut fe, "a[0, 1] * 2").unwrap(), "f32");
    assert_eq!(ty(&mut fe, "dot(ones(2), ones(2))").unwrap(), "f64");
    assert_eq!(ty(&mut fe, "1 < 2").unwrap(), "bool");
    assert_eq!(ty(&mut fe, "iota(5)").unwrap(), "i64[]");
    let statement = ty(&mut fe, "let b = 1").unwrap_err();
    assert_eq!(statement[0].message, "expected an expression");
    assert!(fe.global("b").is_none());
}

#[test]
fn signatures_and_globals_in_scope() {
    let mut fe = Frontend::new();
    fe.compile(&source(
        "let n: i32 = 2\nlet x = ones(4)\nfn dot(x: f64[], y: f64[]) -> f64 { return 0.0 }\nfn hello() { print(1) }",
    ))
    .expect("compiles");
    let sigs = fe.function_signatures();
    assert_eq!(
        sigs,
        vec![
            (
                "dot".to_string(),
                "fn dot(x: f64[], y: f64[]) -> f64".to_string()
            ),
            ("hello".to_string(), "fn hello()".to_string()),
        ]
    );
    let globals: Vec<(String, String)> = fe
        .globals()
        .into_iter()
        .map(|(name, _, ty)| (name, ty.to_string()))
        .collect();
    assert_eq!(
        globals,
        vec![("n".into(), "i32".into()), ("x".into(), "f64[]".into())]
    );
}

#[test]
fn clauses_per_construct_come_from_the_validator_table() {
    use acc_lang::validate::clause_names;
    let update = clause_names(Construct::Update);
    for c in [
        "host",
        "self",
        "device",
        "if_present",
        "async",
        "wait",
        "if",
    ] {
        assert!(update.contains(&c), "update takes {c}: {update:?}");
    }
    assert!(!update.contains(&"copyin"));
    let enter = clause_names(Construct::EnterData);
    assert!(enter.contains(&"copyin") && enter.contains(&"create"));
    assert!(!enter.contains(&"copyout") && !enter.contains(&"delete"));
    let pl = clause_names(Construct::ParallelLoop);
    for c in [
        "gang",
        "vector",
        "collapse",
        "reduction",
        "copy",
        "num_gangs",
    ] {
        assert!(pl.contains(&c), "parallel loop takes {c}");
    }
    assert!(clause_names(Construct::Atomic(acc_lang::ast::AtomicKind::Read)).is_empty());
    // Each construct's name is listed once.
    let names: Vec<&str> = Construct::ALL.iter().map(|c| c.name()).collect();
    assert!(names.contains(&"enter data") && names.contains(&"atomic capture"));
}
