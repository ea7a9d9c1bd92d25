//! How a `kernels` region runs (LANGUAGE.md 7.6): as one kernel, or as one kernel per loop nest.
//!
//! A loop nest whose outer loop is a gang loop is a kernel of its own, and each run of other
//! statements between such nests one single-gang kernel, so that every nest gets the whole
//! device and the next one sees what it wrote. The region runs as one kernel when it is a
//! `kernels loop`, its body is not a block, it has fewer than two parts or no gang nest, it is
//! `async` (its scalars flow from part to part through the host), it has a construct-level
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

/// The parts of a `kernels` region, or none when it runs as one kernel.
pub(super) fn parts(
    d: &Directive,
    loops: &[LoopInfo],
    vars: &[VarUse],
    is_async: bool,
) -> Vec<KernelPart> {
    let construct_level = vars.iter().any(|u| {
        matches!(
            u.attr,
            DataAttr::Private { .. } | DataAttr::FirstPrivate { .. } | DataAttr::Reduction { .. }
        )
    });
    if d.construct != Construct::Kernels || is_async || construct_level {
        return Vec::new();
    }
    let Some(StmtKind::Block(block)) = d.body.as_deref().map(|b| &b.kind) else {
        return Vec::new();
    };
    let mut parts: Vec<KernelPart> = Vec::new();
    for (i, s) in block.stmts.iter().enumerate() {
        if matches!(s.kind, StmtKind::Let { .. }) {
            return Vec::new();
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
        return Vec::new();
    }
    parts
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
