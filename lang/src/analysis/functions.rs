//! What each function does that device code cares about: whom it calls (with which array
//! arguments), which globals it reads or writes, which array parameters it writes (through the
//! functions it calls too). Computed once for every function the checker knows.

use super::visit::{self, Visitor};
use crate::hir::{Expr, ExprKind, FnId, Place, PlaceKind, Program, VarId, VarKind};
use crate::span::Span;

/// A call of a user function.
#[derive(Clone, Debug)]
pub(super) struct CallSite {
    pub callee: FnId,
    pub span: Span,
    /// Per argument, the variable passed when the argument is a plain variable.
    pub args: Vec<Option<VarId>>,
}

/// A use of a global variable inside a function body.
#[derive(Clone, Debug)]
pub(super) struct GlobalUse {
    pub var: VarId,
    pub read: bool,
    pub written: bool,
}

#[derive(Clone, Debug, Default)]
pub(super) struct FnSummary {
    pub calls: Vec<CallSite>,
    pub globals: Vec<GlobalUse>,
    /// Per parameter: the function (or a function it calls) assigns to it or its elements.
    pub writes_param: Vec<bool>,
}

pub(super) struct Summaries {
    pub fns: Vec<FnSummary>,
}

impl Summaries {
    pub fn build(program: &Program) -> Summaries {
        let mut fns: Vec<FnSummary> = program
            .functions
            .iter()
            .map(|f| {
                let mut scan = Scan {
                    program,
                    params: &f.params,
                    summary: FnSummary {
                        writes_param: vec![false; f.params.len()],
                        ..FnSummary::default()
                    },
                };
                visit::walk_block(&mut scan, &f.body);
                scan.summary
            })
            .collect();
        // Writes through calls: `g(a)` writes `a` when `g` writes that parameter; iterate to a
        // fixed point (the call graph may have cycles on the host).
        let mut changed = true;
        while changed {
            changed = false;
            for caller in 0..fns.len() {
                let mut updates: Vec<(Option<usize>, Option<usize>)> = Vec::new();
                for call in &fns[caller].calls {
                    let Some(callee) = fns.get(call.callee.index()) else {
                        continue;
                    };
                    for (i, arg) in call.args.iter().enumerate() {
                        let (Some(v), Some(true)) = (arg, callee.writes_param.get(i)) else {
                            continue;
                        };
                        let param = program
                            .functions
                            .get(caller)
                            .and_then(|f| f.params.iter().position(|p| p == v));
                        let global = fns[caller]
                            .globals
                            .iter()
                            .position(|g| g.var == *v && !g.written);
                        updates.push((param, global));
                    }
                }
                for (param, global) in updates {
                    if let Some(p) = param {
                        if !fns[caller].writes_param[p] {
                            fns[caller].writes_param[p] = true;
                            changed = true;
                        }
                    }
                    if let Some(g) = global {
                        fns[caller].globals[g].written = true;
                        changed = true;
                    }
                }
            }
        }
        Summaries { fns }
    }

    pub fn get(&self, f: FnId) -> Option<&FnSummary> {
        self.fns.get(f.index())
    }

    /// `f`'s parameter `i` is written by it or by what it calls.
    pub fn writes_param(&self, f: FnId, i: usize) -> bool {
        self.get(f)
            .and_then(|s| s.writes_param.get(i))
            .copied()
            .unwrap_or(false)
    }

    /// Every function reachable from `roots` through calls, roots included, each once, in the
    /// order found.
    pub fn reachable(&self, roots: impl IntoIterator<Item = FnId>) -> Vec<FnId> {
        let mut seen: Vec<FnId> = Vec::new();
        let mut stack: Vec<FnId> = roots.into_iter().collect();
        stack.reverse();
        while let Some(f) = stack.pop() {
            if seen.contains(&f) {
                continue;
            }
            seen.push(f);
            if let Some(s) = self.get(f) {
                for call in s.calls.iter().rev() {
                    if !seen.contains(&call.callee) {
                        stack.push(call.callee);
                    }
                }
            }
        }
        seen
    }
}

struct Scan<'a> {
    program: &'a Program,
    params: &'a [VarId],
    summary: FnSummary,
}

impl Scan<'_> {
    fn is_global(&self, v: VarId) -> bool {
        self.program
            .vars
            .get(v.index())
            .is_some_and(|info| info.kind == VarKind::Global)
    }

    fn note_global(&mut self, var: VarId, read: bool, written: bool) {
        if !self.is_global(var) {
            return;
        }
        match self.summary.globals.iter_mut().find(|g| g.var == var) {
            Some(g) => {
                g.read |= read;
                g.written |= written;
            }
            None => self.summary.globals.push(GlobalUse { var, read, written }),
        }
    }

    fn note_write(&mut self, var: VarId, compound: bool) {
        if let Some(i) = self.params.iter().position(|p| *p == var) {
            if let Some(w) = self.summary.writes_param.get_mut(i) {
                *w = true;
            }
        }
        self.note_global(var, compound, true);
    }
}

impl Visitor for Scan<'_> {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(v) => self.note_global(*v, true, false),
            ExprKind::Call(f, args) => self.summary.calls.push(CallSite {
                callee: *f,
                span: e.span,
                args: args.iter().map(Expr::as_var).collect(),
            }),
            _ => {}
        }
        visit::walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, compound: bool) {
        match &p.kind {
            PlaceKind::Var(v) => self.note_write(*v, compound),
            PlaceKind::Index { base, indices } => {
                match base.as_var() {
                    Some(v) => self.note_write(v, compound),
                    None => self.expr(base),
                }
                for i in indices {
                    self.expr(i);
                }
            }
        }
    }
}
