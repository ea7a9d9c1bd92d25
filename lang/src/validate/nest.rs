//! The loop nest a `collapse(n)` or `tile(…)` clause takes: `n` perfectly nested counted loops
//! (nothing between them) whose bounds do not depend on the outer loops' variables.

use crate::ast::{Clause, ClauseKind, Expr, ExprKind, ForLoop, Stmt, StmtKind};
use crate::diag::Diagnostic;
use crate::span::Span;

/// Check that `outer` heads `depth` perfectly nested loops; `what` names the clause for messages
/// (`collapse(2)`, `tile(32, 32)`).
pub(super) fn check(
    outer: &ForLoop,
    depth: u64,
    clause: &Clause,
    what: &str,
    diags: &mut Vec<Diagnostic>,
) {
    let mut current = outer;
    let mut outer_vars: Vec<&str> = vec![&outer.var.name];
    let mut found: u64 = 1;
    while found < depth {
        let stmts = &current.body.stmts;
        let inner = stmts.iter().position(is_loop_like);
        match (stmts.as_slice(), inner) {
            ([only], _) if matches!(only.kind, StmtKind::For(_)) => {
                let StmtKind::For(next) = &only.kind else {
                    return;
                };
                if let Some(var) = bound_dependence(next, &outer_vars) {
                    diags.push(
                        Diagnostic::error(
                            format!("the bounds of a loop in `{what}` may not depend on `{var}`"),
                            header_span(only, next),
                            format!("bounds use `{var}` of an enclosing collapsed loop"),
                        )
                        .with_label(clause.span, "loops associated here")
                        .with_help("collapsed and tiled loops must form a rectangular iteration space; associate fewer loops"),
                    );
                    return;
                }
                outer_vars.push(&next.var.name);
                current = next;
                found += 1;
            }
            ([only], Some(_)) => {
                diags.push(
                    Diagnostic::error(
                        format!("a loop inside `{what}` may not have its own directive"),
                        only.span,
                        "this loop is already part of the associated nest",
                    )
                    .with_label(clause.span, "loops associated here")
                    .with_help("remove the inner directive, or associate fewer loops"),
                );
                return;
            }
            (_, Some(pos)) => {
                let offending = stmts
                    .iter()
                    .enumerate()
                    .find(|&(i, _)| i != pos)
                    .map_or(current.body.span, |(_, s)| s.span);
                diags.push(
                    Diagnostic::error(
                        format!("`{what}` needs perfectly nested loops"),
                        offending,
                        "statement between the associated loops",
                    )
                    .with_label(clause.span, "loops associated here")
                    .with_help(
                        "move the statement into the innermost loop or out of the nest, or associate fewer loops",
                    ),
                );
                return;
            }
            (_, None) => {
                diags.push(
                    Diagnostic::error(
                        format!(
                            "`{what}` needs {depth} nested `for` loops, but the nest has {found}"
                        ),
                        clause.span,
                        format!("asks for {depth} loops"),
                    )
                    .with_label(current.var.span, "innermost loop of the nest")
                    .with_help(format!(
                        "use `{}` or add the missing loops",
                        fewer(clause, found)
                    )),
                );
                return;
            }
        }
    }
}

/// The clause as it would fit a nest of `found` loops, for the help line: `collapse(2)`,
/// `tile(8, 8)` (the first sizes as written).
fn fewer(clause: &Clause, found: u64) -> String {
    match &clause.kind {
        ClauseKind::Tile(sizes) => {
            let keep = usize::try_from(found)
                .unwrap_or(usize::MAX)
                .min(sizes.len());
            super::tile_text(&sizes[..keep])
        }
        _ => format!("collapse({found})"),
    }
}

/// A `for`, or a directive applied to one (`acc loop` inside the nest).
fn is_loop_like(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::For(_) => true,
        StmtKind::Directive(d) => d.body.as_deref().is_some_and(is_loop_like),
        _ => false,
    }
}

/// `for i in a..b step c` up to its body.
fn header_span(stmt: &Stmt, f: &ForLoop) -> Span {
    Span {
        start: stmt.span.start,
        end: f.body.span.start.max(stmt.span.start),
    }
}

/// The first of `vars` that the loop's bounds or step mention.
fn bound_dependence<'a>(f: &ForLoop, vars: &[&'a str]) -> Option<&'a str> {
    let exprs = [Some(&f.start), Some(&f.end), f.step.as_ref()];
    vars.iter().copied().find(|v| {
        exprs.iter().flatten().any(|e| {
            any_subexpr(
                e,
                &mut |x| matches!(&x.kind, ExprKind::Name(id) if id.name == *v),
            )
        })
    })
}

/// Whether `pred` holds for `e` or any expression inside it (final expressions of blocks
/// included; statements inside expression blocks are not searched).
pub(super) fn any_subexpr(e: &Expr, pred: &mut impl FnMut(&Expr) -> bool) -> bool {
    if pred(e) {
        return true;
    }
    match &e.kind {
        ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => any_subexpr(a, pred),
        ExprKind::Binary(_, a, b) => any_subexpr(a, pred) || any_subexpr(b, pred),
        ExprKind::Call(_, args) | ExprKind::ArrayLit(args) => {
            args.iter().any(|a| any_subexpr(a, pred))
        }
        ExprKind::Index(base, args) => {
            any_subexpr(base, pred) || args.iter().any(|a| any_subexpr(a, pred))
        }
        ExprKind::Section(a, b) => {
            a.as_deref().is_some_and(|a| any_subexpr(a, pred))
                || b.as_deref().is_some_and(|b| any_subexpr(b, pred))
        }
        ExprKind::If(c, t, f) => {
            any_subexpr(c, pred) || any_subexpr(t, pred) || any_subexpr(f, pred)
        }
        ExprKind::Block(_, last) => any_subexpr(last, pred),
        ExprKind::Int(..)
        | ExprKind::Float(..)
        | ExprKind::Bool(_)
        | ExprKind::Str(_)
        | ExprKind::Name(_)
        | ExprKind::Error => false,
    }
}
