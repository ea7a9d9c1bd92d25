//! Lowering's classification, stored as the form, and the parts the back ends get from it, on
//! hand-built statements of a region with local 0 an `i64` array `x`, local 1 an `i64` `v`
//! and local 2 an `i64` `c`.

use super::*;
use crate::hir::Const;
use crate::ir::Ty;

const I64: Ty = Ty::Scalar(ScalarType::I64);

fn local(l: u32, ty: Ty) -> Expr {
    Expr {
        kind: ExprKind::Local(LocalId(l)),
        ty,
    }
}

fn one() -> Expr {
    Expr {
        kind: ExprKind::Const(Const::I64(1)),
        ty: I64,
    }
}

fn x() -> Expr {
    local(
        0,
        Ty::Array {
            elem: ScalarType::I64,
            rank: 1,
        },
    )
}

/// `x[1]`
fn element() -> Expr {
    Expr {
        kind: ExprKind::Load {
            array: Box::new(x()),
            indices: vec![one()],
            site: Some(SiteId(7)),
        },
        ty: I64,
    }
}

fn plus_one(e: Expr) -> Expr {
    Expr {
        kind: ExprKind::Binary(BinOp::Add, Box::new(e), Box::new(one()), None),
        ty: I64,
    }
}

/// `x[1] = x[1] + 1`
fn increment() -> Stmt {
    Stmt::Store {
        array: x(),
        indices: vec![one()],
        value: plus_one(element()),
        site: Some(SiteId(8)),
    }
}

/// `v = x[1]`
fn read_element() -> Stmt {
    Stmt::Set(LocalId(1), element())
}

fn no_cells(_: LocalId) -> bool {
    false
}

fn c_is_a_cell(l: LocalId) -> bool {
    l == LocalId(2)
}

#[test]
fn a_capture_reads_the_old_value_when_its_read_comes_first() {
    let old = Stmt::Block(vec![read_element(), increment()]);
    let a = Atomic::new(AtomicKind::Capture, old, no_cells);
    let location = Shared::Element;
    assert_eq!(
        a.form,
        Ok(Form::Capture {
            location,
            read_first: true
        })
    );
    let Ok(Parts::Capture {
        update,
        read,
        read_first: true,
    }) = a.parts()
    else {
        panic!("a capture: {:?}", a.parts());
    };
    assert!(matches!(update.location, Location::Element { .. }));
    assert_eq!(update.site, Some(SiteId(8)));
    assert!(matches!(read.target, Target::Local(LocalId(1))));
    // The parts are the statement's own expressions, not copies.
    let Stmt::Block(b) = &*a.body else {
        panic!("the block")
    };
    let Stmt::Store { value, .. } = &b[1] else {
        panic!("the store")
    };
    assert!(std::ptr::eq(update.value, value));

    let new = Stmt::Block(vec![increment(), read_element()]);
    let a = Atomic::new(AtomicKind::Capture, new, no_cells);
    assert_eq!(
        a.form,
        Ok(Form::Capture {
            location,
            read_first: false
        })
    );
    assert!(matches!(
        a.parts(),
        Ok(Parts::Capture {
            read_first: false,
            ..
        })
    ));
}

#[test]
fn a_copy_scalar_is_shared_and_any_other_local_private() {
    let add = || Stmt::Set(LocalId(2), plus_one(local(2, I64)));
    let shared = Atomic::new(AtomicKind::Update, add(), c_is_a_cell);
    assert_eq!(shared.form, Ok(Form::Update(Shared::Cell)));
    assert!(matches!(
        shared.parts(),
        Ok(Parts::Update(Write {
            location: Location::Cell(LocalId(2)),
            site: None,
            ..
        }))
    ));
    let private = Atomic::new(AtomicKind::Update, add(), no_cells);
    assert_eq!(private.form, Ok(Form::Private));
    assert!(matches!(private.parts(), Ok(Parts::Private)));

    let read = || Stmt::Set(LocalId(1), local(2, I64));
    let shared = Atomic::new(AtomicKind::Read, read(), c_is_a_cell);
    assert_eq!(shared.form, Ok(Form::Read(Shared::Cell)));
    assert!(matches!(
        shared.parts(),
        Ok(Parts::Read {
            location: Location::Cell(LocalId(2)),
            read: Read {
                target: Target::Local(LocalId(1)),
                ..
            },
        })
    ));
    let private = Atomic::new(AtomicKind::Read, read(), no_cells);
    assert_eq!(private.form, Ok(Form::Private));
}

#[test]
fn a_statement_of_no_form_or_not_of_its_form_has_no_parts() {
    let none = Atomic::new(AtomicKind::Capture, increment(), no_cells);
    assert_eq!(none.form, Err(NotAtomic("a capture that is not a block")));
    assert!(none.parts().is_err());
    let wrong = Atomic {
        kind: AtomicKind::Update,
        body: Box::new(increment()),
        form: Ok(Form::Update(Shared::Global)),
    };
    assert!(wrong.parts().is_err());
}
