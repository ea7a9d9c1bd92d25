//! Each rule broken by a hand-built module, next to a module that keeps them all.

use super::*;
use crate::analysis::RegionId;
use crate::hir::VarId;
use crate::span::Span;

const I64: Ty = Ty::Scalar(ScalarType::I64);
const F64: Ty = Ty::Scalar(ScalarType::F64);

fn local(name: &str, ty: Ty) -> Local {
    Local {
        name: name.into(),
        ty,
    }
}

fn int(v: i64) -> Expr {
    Expr {
        kind: ExprKind::Const(Const::I64(v)),
        ty: I64,
    }
}

fn read(l: u32, ty: Ty) -> Expr {
    Expr {
        kind: ExprKind::Local(LocalId(l)),
        ty,
    }
}

fn print(e: Expr) -> Stmt {
    Stmt::Print(vec![PrintArg::Value(e)], SiteId(0))
}

fn counted(var: u32, body: Block) -> ForLoop {
    ForLoop {
        id: LoopId(var),
        var: LocalId(var),
        start: int(0),
        end: int(4),
        step: int(1),
        step_site: None,
        inclusive: false,
        body,
        schedule: LoopSchedule {
            collapse: 1,
            ..LoopSchedule::default()
        },
        site: SiteId(0),
    }
}

/// `s = 0.0; acc parallel reduction(+: s) { s += 1.0 }; print(s)`, with a loop in `main`.
fn valid() -> Module {
    let s_red = Reduction::new(LocalId(1), ReductionOp::Add, ScalarType::F64).unwrap();
    let region = Region {
        id: RegionId(0),
        construct: Construct::Parallel,
        span: Span::default(),
        params: vec![RegionParam {
            var: VarId(0),
            name: "s".into(),
            ty: F64,
            pass: Pass::InOut,
            written: true,
        }],
        locals: vec![local("s", F64), local("s.red", F64)],
        body: vec![Stmt::Set(
            LocalId(1),
            Expr {
                kind: ExprKind::Const(s_red.identity),
                ty: F64,
            },
        )],
        reductions: vec![RegionReduction {
            reduction: s_red,
            param: 0,
        }],
        loops: Vec::new(),
        distinct: Vec::new(),
        split: None,
    };
    let launch = Launch {
        region: RegionId(0),
        args: vec![read(0, F64)],
        results: vec![(0, Place::Local(LocalId(0)))],
        results_after: 0,
        if_cond: None,
        num_gangs: DeviceExprs::default(),
        num_workers: DeviceExprs::default(),
        vector_length: DeviceExprs::default(),
        async_queue: None,
        wait: None,
        data: Vec::new(),
        site: SiteId(0),
    };
    let zero = Expr {
        kind: ExprKind::Const(Const::F64(0.0)),
        ty: F64,
    };
    Module {
        main: Function {
            name: "main".into(),
            locals: vec![local("s", F64), local("i", I64), local("n", I64)],
            body: vec![
                Stmt::Set(LocalId(0), zero),
                Stmt::Launch(launch),
                Stmt::Set(LocalId(2), int(0)),
                Stmt::For(counted(1, vec![print(read(1, I64))])),
                print(read(0, F64)),
            ],
            ..Function::default()
        },
        regions: vec![region],
        sites: vec![Site {
            span: Span::default(),
            what: String::new(),
        }],
        ..Module::default()
    }
}

/// The rules `m` breaks, with the bodies that break them.
fn broken(m: &Module) -> Vec<(String, Rule)> {
    match verify(m) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.into_iter().map(|e| (e.body, e.rule)).collect(),
    }
}

fn in_main(rule: Rule) -> Vec<(String, Rule)> {
    vec![("main".to_string(), rule)]
}

fn in_region(rule: Rule) -> Vec<(String, Rule)> {
    vec![("region 0".to_string(), rule)]
}

#[test]
fn a_module_that_keeps_the_rules_passes() {
    assert_eq!(verify(&valid()), Ok(()));
    assert_valid(&valid());
}

#[test]
fn ids_in_range() {
    let mut m = valid();
    m.main
        .body
        .push(Stmt::Print(vec![PrintArg::Str(StringId(3))], SiteId(0)));
    assert_eq!(broken(&m), in_main(Rule::InRange));
    let mut m = valid();
    m.main.body.push(Stmt::Print(Vec::new(), SiteId(7)));
    assert_eq!(broken(&m), in_main(Rule::InRange));
    let mut m = valid();
    m.main.body.push(Stmt::Set(LocalId(9), int(1)));
    assert_eq!(broken(&m), in_main(Rule::InRange));
}

#[test]
fn types_agree() {
    let mut m = valid();
    m.main.body.push(Stmt::Set(LocalId(0), int(1)));
    assert_eq!(broken(&m), in_main(Rule::Types));
    let mut m = valid();
    let sum = Expr {
        kind: ExprKind::Binary(BinOp::Add, Box::new(int(1)), Box::new(read(0, F64)), None),
        ty: I64,
    };
    m.main.body.push(print(sum));
    assert_eq!(broken(&m), in_main(Rule::Types));
}

#[test]
fn locals_assigned_before_read() {
    let mut m = valid();
    m.main.locals.push(local("never", I64));
    m.main.body.push(print(read(3, I64)));
    assert_eq!(broken(&m), in_main(Rule::AssignedBeforeRead));
}

#[test]
fn nothing_after_a_jump() {
    // A `continue` followed by a statement.
    let mut m = valid();
    let Stmt::For(f) = &mut m.main.body[3] else {
        panic!("the loop")
    };
    f.body.insert(0, Stmt::Continue);
    assert_eq!(broken(&m), in_main(Rule::Jumps));
    // A `break` outside any loop.
    let mut m = valid();
    m.main.body.push(Stmt::Break);
    assert_eq!(broken(&m), in_main(Rule::Jumps));
    // A `return` in a region.
    let mut m = valid();
    m.regions[0].body.push(Stmt::Return(None));
    assert_eq!(broken(&m), in_region(Rule::Jumps));
}

#[test]
fn checks_carry_sites() {
    let mut m = valid();
    let quotient = Expr {
        kind: ExprKind::Binary(BinOp::Div, Box::new(int(1)), Box::new(read(2, I64)), None),
        ty: I64,
    };
    m.main.body.push(print(quotient));
    assert_eq!(broken(&m), in_main(Rule::Sites));
    let mut m = valid();
    let Stmt::For(f) = &mut m.main.body[3] else {
        panic!("the loop")
    };
    f.step = read(2, I64);
    assert_eq!(broken(&m), in_main(Rule::Sites));
}

#[test]
fn loops_well_formed() {
    let mut m = valid();
    let Stmt::For(f) = &mut m.main.body[3] else {
        panic!("the loop")
    };
    f.schedule.collapse = 2;
    assert_eq!(broken(&m), in_main(Rule::Loops));
    // The same loop id twice in one body.
    let mut m = valid();
    let again = m.main.body[3].clone();
    m.main.body.push(again);
    assert_eq!(broken(&m), in_main(Rule::Loops));
}

#[test]
fn reference_counts_of_arrays() {
    let mut m = valid();
    m.main.body.push(Stmt::Retain(read(2, I64)));
    assert_eq!(broken(&m), in_main(Rule::RefCounts));
}

#[test]
fn atomics_have_their_form() {
    use atomic::{Form, Shared};
    let update = || Stmt::Set(LocalId(2), int(1));
    // `n = 1` of main's own `n`: a private update, which verifies.
    let mut m = valid();
    let private = Atomic::new(AtomicKind::Update, update(), |_| false);
    assert_eq!(private.form, Ok(Form::Private));
    m.main.body.push(Stmt::Atomic(private));
    assert_eq!(broken(&m), Vec::new());
    // A capture that is not a block has no form.
    let mut m = valid();
    let capture = Atomic::new(AtomicKind::Capture, update(), |_| false);
    m.main.body.push(Stmt::Atomic(capture));
    assert_eq!(broken(&m), in_main(Rule::Atomics));
    // A stored form that is not the statement's: main has no cells.
    let mut m = valid();
    m.main.body.push(Stmt::Atomic(Atomic {
        kind: AtomicKind::Update,
        body: Box::new(update()),
        form: Ok(Form::Update(Shared::Cell)),
    }));
    assert_eq!(broken(&m), in_main(Rule::Atomics));
}

#[test]
fn launches_match_regions() {
    let mut m = valid();
    let Stmt::Launch(l) = &mut m.main.body[1] else {
        panic!("the launch")
    };
    l.args.push(int(1));
    assert_eq!(broken(&m), in_main(Rule::Launches));
    let mut m = valid();
    let Stmt::Launch(l) = &mut m.main.body[1] else {
        panic!("the launch")
    };
    l.num_gangs.nvidia = Some(read(0, F64));
    assert_eq!(broken(&m), in_main(Rule::Launches));
}

#[test]
fn regions_well_formed() {
    let mut m = valid();
    m.regions[0].id = RegionId(2);
    assert_eq!(broken(&m), in_region(Rule::Regions));
    let mut m = valid();
    m.regions[0].locals[0].ty = I64;
    assert_eq!(broken(&m), in_region(Rule::Regions));
}

#[test]
fn reductions_well_formed() {
    // A loop reduction from the wrong value.
    let mut m = valid();
    let Stmt::For(f) = &mut m.main.body[3] else {
        panic!("the loop")
    };
    let mut red = Reduction::new(LocalId(2), ReductionOp::Mul, ScalarType::I64).unwrap();
    red.identity = Const::I64(0);
    f.schedule.reductions.push(red);
    assert_eq!(broken(&m), in_main(Rule::Reductions));
    // A loop reduction of a local of another type.
    let mut m = valid();
    let Stmt::For(f) = &mut m.main.body[3] else {
        panic!("the loop")
    };
    let red = Reduction::new(LocalId(0), ReductionOp::Max, ScalarType::I64).unwrap();
    f.schedule.reductions.push(red);
    assert_eq!(broken(&m), in_main(Rule::Reductions));
    // An operator that does not apply to the type.
    let mut m = valid();
    m.regions[0].reductions[0].reduction.op = ReductionOp::BitAnd;
    assert_eq!(broken(&m), in_region(Rule::Reductions));
    // A region reduction into a parameter that does not come back.
    // (The launch then has no result to store either.)
    let mut m = valid();
    m.regions[0].params[0].pass = Pass::Value;
    let Stmt::Launch(l) = &mut m.main.body[1] else {
        panic!("the launch")
    };
    l.results.clear();
    assert_eq!(broken(&m), in_region(Rule::Reductions));
}

#[test]
fn every_body_reports_its_first_broken_rule() {
    let mut m = valid();
    m.main.body.push(Stmt::Set(LocalId(0), int(1)));
    m.regions[0].id = RegionId(1);
    let errors = verify(&m).unwrap_err();
    assert_eq!(errors.len(), 2);
    assert_eq!(
        errors[0].to_string(),
        "main: rule `types agree` broken: set of Scalar(F64) local with Scalar(I64)"
    );
    assert_eq!(errors[1].body, "region 0");
}

#[test]
#[should_panic(expected = "region 0: rule `regions well formed` broken")]
fn lowering_panics_on_a_broken_rule() {
    let mut m = valid();
    m.regions[0].id = RegionId(1);
    assert_valid(&m);
}
