use crate::ast::*;
use crate::span::SourceFile;

fn parse_ok(src: &str) -> Program {
    match crate::parse(&SourceFile::new("t.acc", src)) {
        Ok(p) => p,
        Err(d) => panic!(
            "unexpected errors for {src:?}:\n{}",
            crate::diag::render_plain(&d, &SourceFile::new("t.acc", src))
        ),
    }
}

fn parse_err(src: &str) -> Vec<crate::Diagnostic> {
    match crate::parse(&SourceFile::new("t.acc", src)) {
        Ok(p) => panic!("expected errors for {src:?}, got {p:?}"),
        Err(d) => d,
    }
}

fn only_stmt(src: &str) -> StmtKind {
    let mut p = parse_ok(src);
    assert_eq!(p.stmts.len(), 1, "{:?}", p.stmts);
    p.stmts.remove(0).kind
}

fn expr_of(src: &str) -> Expr {
    match only_stmt(src) {
        StmtKind::Expr(e) => e,
        other => panic!("not an expression statement: {other:?}"),
    }
}

/// A compact rendering of an expression's tree, for precedence tests.
fn sexp(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v, _) => v.to_string(),
        ExprKind::Float(t, _) => t.clone(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Name(n) => n.name.clone(),
        ExprKind::Unary(op, x) => format!("({op:?} {})", sexp(x)),
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.as_str(), sexp(a), sexp(b)),
        ExprKind::Cast(x, t) => format!("(as {} {}{})", sexp(x), t.elem.name(), t.rank),
        ExprKind::Call(f, args) => format!(
            "{}({})",
            f.name,
            args.iter().map(sexp).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Index(b, args) => format!(
            "{}[{}]",
            sexp(b),
            args.iter().map(sexp).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::Section(a, b) => format!(
            "{}:{}",
            a.as_ref().map_or(String::new(), |x| sexp(x)),
            b.as_ref().map_or(String::new(), |x| sexp(x))
        ),
        ExprKind::ArrayLit(items) => format!(
            "[{}]",
            items.iter().map(sexp).collect::<Vec<_>>().join(", ")
        ),
        ExprKind::If(c, t, f) => format!("(if {} {} {})", sexp(c), sexp(t), sexp(f)),
        ExprKind::Block(stmts, v) => format!("{{{} {}}}", stmts.len(), sexp(v)),
        ExprKind::Error => "ERR".into(),
    }
}

#[test]
fn precedence_follows_the_reference() {
    let cases = [
        ("a || b && c", "(|| a (&& b c))"),
        ("a == b | c", "(== a (| b c))"),
        ("a | b ^ c & d", "(| a (^ b (& c d)))"),
        ("a & b << c", "(& a (<< b c))"),
        ("a << b + c", "(<< a (+ b c))"),
        ("a + b * c - d", "(- (+ a (* b c)) d)"),
        ("-a * b", "(* (Neg a) b)"),
        ("-x as i32", "(Neg (as x i320))"),
        ("!f(a, b)[i, j]", "(Not f(a, b)[i, j])"),
        ("a < b == c", "(== (< a b) c)"),
        ("1.5e3 + 2.0f32", "(+ 1.5e3 2.0)"),
        ("[1, 2, 3]", "[1, 2, 3]"),
        ("x as f64[]", "(as x f641)"),
        (
            "f(if c { 1 } else if d { 2 } else { 3 })",
            "f((if c {0 1} (if d {0 2} {0 3})))",
        ),
        ("a[1:n-2, :m]", "a[1:(- n 2), :m]"),
        (
            "f(if a { if b { 1 } else { 2 } } else { 3 })",
            "f((if a {0 (if b {0 1} {0 2})} {0 3}))",
        ),
    ];
    for (src, want) in cases {
        assert_eq!(sexp(&expr_of(src)), want, "{src}");
    }
}

#[test]
fn statements() {
    assert!(matches!(
        only_stmt("let x: f32[,] = zeros(f32, 2, 2)"),
        StmtKind::Let {
            ty: Some(TypeExpr { rank: 2, .. }),
            ..
        }
    ));
    assert!(matches!(
        only_stmt("a[i, j] += 1.0"),
        StmtKind::Assign {
            op: Some(BinOp::Add),
            ..
        }
    ));
    assert!(matches!(
        only_stmt("for i in 0..=n step -2 { }"),
        StmtKind::For(f) if matches!(*f, ForLoop {
            inclusive: true,
            step: Some(_),
            ..
        })
    ));
    assert!(matches!(
        only_stmt("while x < 3 { x += 1 }"),
        StmtKind::While { .. }
    ));
    let p = parse_ok("if a {\n x = 1\n}\nelse if b {\n}\nelse\n{\n}\n");
    assert_eq!(p.stmts.len(), 1);
    let StmtKind::Fn(f) =
        only_stmt("fn dot(x: f64[], y: f64[]) -> f64\n{\n let s = 0.0; return s\n}")
    else {
        panic!()
    };
    assert_eq!(f.params.len(), 2);
    assert_eq!(f.ret.map(|t| t.elem), Some(ScalarType::F64));
    let p = parse_ok("\n\n;x = 1;; y = 2\n\n");
    assert_eq!(p.stmts.len(), 2);
}

#[test]
fn directives_and_clauses() {
    let src = "acc parallel loop gang vector_length(32), copyin(x[0:n]) copy(y) reduction(+: s, t) \\\n  device_type(nvidia) num_gangs(10)\nfor i in 0..n { y[i] = x[i] }";
    let StmtKind::Directive(d) = only_stmt(src) else {
        panic!()
    };
    assert_eq!(d.construct, Construct::ParallelLoop);
    let names: Vec<_> = d.clauses.iter().map(|c| c.kind.name()).collect();
    assert_eq!(
        names,
        [
            "gang",
            "vector_length",
            "copyin",
            "copy",
            "reduction",
            "device_type",
            "num_gangs"
        ]
    );
    assert!(matches!(
        d.body.as_deref(),
        Some(Stmt {
            kind: StmtKind::For(_),
            ..
        })
    ));
    assert_eq!(d.clauses_for(DeviceTypeName::Host).count(), 5);
    assert_eq!(d.clauses_for(DeviceTypeName::Nvidia).count(), 6);

    let StmtKind::Directive(d) = only_stmt("acc data copy(a) create(b[1:n-2, 0:m]) {\n x = 1\n}")
    else {
        panic!()
    };
    let ClauseKind::Data(DataClause::Create, refs) = &d.clauses[1].kind else {
        panic!()
    };
    assert_eq!(refs[0].sections.as_ref().map(Vec::len), Some(2));
    assert!(matches!(
        d.body.as_deref(),
        Some(Stmt {
            kind: StmtKind::Block(_),
            ..
        })
    ));

    let p = parse_ok("acc enter data copyin(a) async(1) wait(0)\nacc update self(a[0:n]) if_present\nacc wait(1, 2) async(3)\nacc wait\nacc exit data delete(a) finalize");
    let cons: Vec<_> = p
        .stmts
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Directive(d) => (d.construct, d.body.is_none()),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        cons,
        [
            (Construct::EnterData, true),
            (Construct::Update, true),
            (Construct::Wait, true),
            (Construct::Wait, true),
            (Construct::ExitData, true)
        ]
    );

    let StmtKind::Directive(d) = only_stmt("acc update self(a) host(b)") else {
        panic!()
    };
    assert!(
        matches!(&d.clauses[0].kind, ClauseKind::Update(UpdateDir::Self_, refs) if refs[0].name.name == "a")
    );
    let StmtKind::Directive(d) = only_stmt("acc atomic capture\n{ v = x; x += 1 }") else {
        panic!()
    };
    assert_eq!(d.construct, Construct::Atomic(AtomicKind::Capture));
    let StmtKind::Directive(d) = only_stmt("acc routine seq\nfn f(x: f64) -> f64 { return x }")
    else {
        panic!()
    };
    assert!(matches!(
        d.body.as_deref(),
        Some(Stmt {
            kind: StmtKind::Fn(_),
            ..
        })
    ));
    let StmtKind::Directive(d) = only_stmt("acc parallel if(host) self(n > 3)\n{\n}") else {
        panic!()
    };
    assert!(matches!(
        &d.clauses[0].kind,
        ClauseKind::If(Expr {
            kind: ExprKind::Name(_),
            ..
        })
    ));
    assert!(matches!(&d.clauses[1].kind, ClauseKind::SelfCond(Some(_))));
    let StmtKind::Directive(d) =
        only_stmt("acc loop tile(*, 4) collapse(2) private(t) gang(num: 4)\nfor i in 0..n {}")
    else {
        panic!()
    };
    assert!(matches!(&d.clauses[0].kind, ClauseKind::Tile(v) if v.len() == 2 && v[0].is_none()));
}

#[test]
fn several_errors_in_one_run() {
    let d = parse_err("let x = \nlet y = 2 +* 3\nfn f(a b) { }\nlet ok = 1\nz = (1 +)\n");
    assert!(d.len() >= 3, "{d:#?}");
}

#[test]
fn helpful_syntax_errors() {
    let first = |src: &str| parse_err(src).remove(0);
    let d = first("whlie x < 3 {\n}");
    assert!(d.help.as_deref().unwrap_or("").contains("`while`"), "{d:?}");
    let d = first("acc paralel loop\nfor i in 0..n {}");
    assert_eq!(d.message, "unknown directive `acc paralel`");
    assert!(d.help.as_deref().unwrap_or("").contains("parallel"));
    let d = first("acc parallel loop copyinn(a)\nfor i in 0..n {}");
    assert_eq!(d.message, "unknown clause `copyinn`");
    let d = first("acc data create(image[n])\n{\n}");
    assert_eq!(d.message, "a section in a data clause needs a colon");
    let d = first("let x: float = 1.0");
    assert_eq!(d.message, "unknown type `float`");
    let d = first("for (i = 0; i < n; i++) {}");
    assert!(d.message.contains("C-style"), "{d:?}");
    let d = first("if x = 1 {\n}");
    assert!(d.help.as_deref().unwrap_or("").contains("=="), "{d:?}");
    let d = first("acc parallel loop reduction(avg: s)\nfor i in 0..n {}");
    assert_eq!(d.message, "`avg` is not a reduction operator");
    let d = first("1 + 2 = x");
    assert_eq!(d.message, "cannot assign to this expression");
}

#[test]
fn a_repl_reads_on_until_the_construct_comes() {
    use crate::awaits_more;
    for unfinished in [
        "acc parallel loop copy(a)\n",
        "let a = zeros(3)\nacc parallel loop copy(a)\n",
        "acc data copy(a)\n",
        "acc routine seq\n",
        "acc atomic update\n",
        "for i in 0..3 {\n",
        "let x = 1 + \\\n",
        // A binary operator or comma at the end of a line continues the statement.
        "let s = 1 +\n",
        "let t = s *\n",
        "let ok = s > 0 &&\n",
        "let u = s + // a comment after the operator\n",
        "print(1,\n",
    ] {
        assert!(awaits_more(unfinished), "{unfinished:?}");
    }
    for complete in [
        "acc parallel loop copy(a)\nfor i in 0..3 { a[i] = 1.0 }\n",
        "acc update self(a)\n",
        "acc wait\n",
        "let x = 1\n",
        // Mistakes are not unfinished: they run, and their errors show at once.
        "let x = )\n",
        "acc parallel loop copy(a)\nlet x = 1\n",
        "acc paralel loop\n",
        "let s = 1 +\n2\n",
        "let n = -1\n",
        "let f = !true\n",
    ] {
        assert!(!awaits_more(complete), "{complete:?}");
    }
}
