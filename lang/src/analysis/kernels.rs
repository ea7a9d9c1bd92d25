//! How a `kernels` region runs (LANGUAGE.md 7.6): as one kernel, or as one kernel per loop nest.
//!
//! A loop nest whose outer loop is a gang loop is a kernel of its own, and each run of other
//! statements between such nests one single-gang kernel, so that every nest gets the whole
//! device and the next one sees what it wrote. The region runs as one kernel when it is a
//! `kernels loop`, its body is not a block, it has fewer than two parts or no gang nest, it is
//! `async` and a part uses a scalar an earlier part assigns (scalars flow from part to part
//! through the host, where an asynchronous result arrives only at a `wait`), it has a construct-level
//! `private`, `firstprivate` or `reduction`, or its body declares a variable at its top level
//! (a local that later parts would need).

use std::ops::Range;

use super::visit::{self, Visitor};
use super::{DataAttr, LoopInfo, Schedule, VarUse};
use crate::hir::{Construct, Directive, Place, PlaceKind, Stmt, StmtKind, VarId};
use crate::span::Span;

/// One kernel of a split `kernels` region.
#[derive(Clone, Debug)]
pub struct KernelPart {
    /// The top-level statements of the region's block that it runs.
    pub stmts: Range<usize>,
    /// A gang loop nest (otherwise statements run by a single gang).
    pub nest: bool,
    /// From its first statement to its last.
    pub span: Span,
    /// The scalars it assigns: the others need not come back to the host after it.
    pub writes: Vec<VarId>,
}

/// Why a `kernels` region of several loop nests runs as one kernel, for `--info`.
#[derive(Clone, Debug)]
pub enum Together {
    /// `async`, and a part uses this scalar, which an earlier part assigns.
    AsyncScalar(VarId),
    /// A construct-level `private`, `firstprivate` or `reduction` (the clause's name).
    ConstructClause(&'static str),
    /// A `let` at the top level of the block.
    Let(Span),
}

/// The parts of a `kernels` region: none when it runs as one kernel, with the reason where it
/// has several nests to keep together.
pub(super) fn parts(
    d: &Directive,
    loops: &[LoopInfo],
    vars: &[VarUse],
    is_async: bool,
) -> (Vec<KernelPart>, Option<Together>) {
    let none = |why| (Vec::new(), why);
    if d.construct != Construct::Kernels {
        return none(None);
    }
    let Some(StmtKind::Block(block)) = d.body.as_deref().map(|b| &b.kind) else {
        return none(None);
    };
    let mut parts: Vec<KernelPart> = Vec::new();
    let mut first_let = None;
    for (i, s) in block.stmts.iter().enumerate() {
        if matches!(s.kind, StmtKind::Let { .. }) && first_let.is_none() {
            first_let = Some(s.span);
        }
        let nest = gang_nest(s, loops);
        match parts.last_mut() {
            Some(p) if !p.nest && !nest => {
                p.stmts.end = i + 1;
                p.span = p.span.to(s.span);
            }
            _ => parts.push(KernelPart {
                stmts: i..i + 1,
                nest,
                span: s.span,
                writes: Vec::new(),
            }),
        }
        if let Some(p) = parts.last_mut() {
            assigned(s, &mut p.writes);
        }
    }
    if parts.len() < 2 || !parts.iter().any(|p| p.nest) {
        return none(None);
    }
    let construct_clause = vars.iter().find_map(|u| match u.attr {
        DataAttr::Private { .. } => Some("private"),
        DataAttr::FirstPrivate { .. } => Some("firstprivate"),
        DataAttr::Reduction { .. } => Some("reduction"),
        _ => None,
    });
    if let Some(clause) = construct_clause {
        return none(Some(Together::ConstructClause(clause)));
    }
    if let Some(at) = first_let {
        return none(Some(Together::Let(at)));
    }
    if let Some(v) = is_async
        .then(|| scalar_passed_on(&block.stmts, &parts))
        .flatten()
    {
        return none(Some(Together::AsyncScalar(v)));
    }
    (parts, None)
}

/// A scalar that an earlier part assigns and a later part uses. Split parts pass scalars
/// through the host, and the result of an asynchronous part arrives there only at a `wait`,
/// after the later parts are queued.
fn scalar_passed_on(stmts: &[Stmt], parts: &[KernelPart]) -> Option<VarId> {
    parts.iter().enumerate().find_map(|(k, earlier)| {
        earlier.writes.iter().copied().find(|&v| {
            parts[k + 1..].iter().any(|later| {
                stmts[later.stmts.clone()]
                    .iter()
                    .any(|s| visit::stmt_mentions(s, v))
            })
        })
    })
}

/// Whether `s` is a loop nest whose outer loop is a gang loop.
fn gang_nest(s: &Stmt, loops: &[LoopInfo]) -> bool {
    let for_span = match &s.kind {
        StmtKind::For(_) => s.span,
        StmtKind::Directive(Directive {
            construct: Construct::Loop,
            body: Some(body),
            ..
        }) if matches!(body.kind, StmtKind::For(_)) => body.span,
        _ => return false,
    };
    loops.iter().any(|l| {
        l.parent.is_none()
            && l.for_span == for_span
            && matches!(l.schedule, Schedule::Parallel(levels) if levels.gang)
    })
}

/// Adds the variables `s` assigns whole (scalars) to `out`.
fn assigned(s: &Stmt, out: &mut Vec<VarId>) {
    struct Assigned<'a>(&'a mut Vec<VarId>);
    impl Visitor for Assigned<'_> {
        fn place(&mut self, p: &Place, compound: bool) {
            if let PlaceKind::Var(v) = p.kind {
                if !self.0.contains(&v) {
                    self.0.push(v);
                }
            }
            let _ = compound;
            visit::walk_place(self, p);
        }
    }
    Assigned(out).stmt(s);
}
