//! One body being lowered (a function, the top-level code, or a compute region): its locals,
//! the blocks being built, the variables' current locals, and the scopes whose arrays must be
//! released when control leaves them.

use std::collections::HashMap;

use super::Cx;
use crate::analysis::{LoopInfo, ReductionInfo};
use crate::hir::{self, VarId};
use crate::ir::{self, ExprKind, LocalId, Stmt, Ty};
use crate::span::Span;

/// What kind of body this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Context {
    /// The top-level code of a compile.
    Main,
    Function,
    /// An outlined compute region (device code).
    Region,
}

/// A scope: the arrays it owns (released, last first, when control leaves it) and what else
/// leaving it means.
struct Scope {
    owned: Vec<LocalId>,
    kind: ScopeKind,
}

pub(super) enum ScopeKind {
    /// A block, the body of a function, a branch of a flattened `if`.
    Block,
    /// A loop body: `break` and `continue` leave the scopes up to and including this one.
    Loop,
    /// The body of an `acc data` construct: leaving it early runs its exit directive.
    Data(ir::DataDirective),
}

/// Where a statement started: the temporaries registered after it are released when it ends.
#[derive(Clone, Copy)]
pub(super) struct Mark {
    depth: usize,
    len: usize,
}

pub(super) struct Body<'c, 'a> {
    pub cx: &'c mut Cx<'a>,
    pub context: Context,
    /// The analysis of the loops this body may contain (a region's or a routine's), found by
    /// their `for` statement's span.
    pub loops: &'a [LoopInfo],
    /// The statement being lowered sits directly in the top-level code.
    pub top_level: bool,
    /// In a region: the per-gang parameters standing for arrays that a loop makes `private`
    /// (bound to their variable inside that loop only).
    pub private_arrays: HashMap<VarId, LocalId>,
    /// In a region: its `copy` scalars' locals, which every gang shares through a memory cell
    /// (`ir::Region::is_cell`); what an atomic's form depends on.
    pub cells: Vec<LocalId>,
    locals: Vec<ir::Local>,
    temps: u32,
    /// The loops numbered so far (`ir::LoopId`).
    loop_ids: u32,
    vars: HashMap<VarId, LocalId>,
    blocks: Vec<ir::Block>,
    scopes: Vec<Scope>,
}

impl<'c, 'a> Body<'c, 'a> {
    pub fn new(cx: &'c mut Cx<'a>, context: Context, loops: &'a [LoopInfo]) -> Self {
        Body {
            cx,
            context,
            loops,
            top_level: false,
            private_arrays: HashMap::new(),
            cells: Vec::new(),
            locals: Vec::new(),
            temps: 0,
            loop_ids: 0,
            vars: HashMap::new(),
            blocks: vec![Vec::new()],
            scopes: Vec::new(),
        }
    }

    /// Lower statements as the whole body: one scope, released at the end.
    pub fn function_body(&mut self, stmts: &[hir::Stmt]) {
        self.function_body_owning(stmts, &[]);
    }

    /// A function body whose outermost scope owns `params` (array parameters it retains on
    /// entry).
    pub fn function_body_owning(&mut self, stmts: &[hir::Stmt], params: &[LocalId]) {
        self.push_scope(ScopeKind::Block);
        for &l in params {
            let e = self.local(l);
            self.emit(Stmt::Retain(e));
            self.own(l);
        }
        for s in stmts {
            self.top_level = self.context == Context::Main;
            self.stmt(s);
        }
        self.top_level = false;
        self.pop_scope();
    }

    pub fn finish(mut self) -> (Vec<ir::Local>, ir::Block) {
        let body = self.blocks.pop().unwrap_or_default();
        (self.locals, body)
    }

    // ---- locals and variables ------------------------------------------------------------

    pub fn new_local(&mut self, name: impl Into<String>, ty: Ty) -> LocalId {
        self.locals.push(ir::Local {
            name: name.into(),
            ty,
        });
        LocalId(self.locals.len() as u32 - 1)
    }

    /// The number of the next loop this body builds.
    pub fn new_loop_id(&mut self) -> ir::LoopId {
        self.loop_ids += 1;
        ir::LoopId(self.loop_ids - 1)
    }

    /// A fresh temporary (`$tN`).
    pub fn temp(&mut self, ty: Ty) -> LocalId {
        let name = format!("$t{}", self.temps);
        self.temps += 1;
        self.new_local(name, ty)
    }

    pub fn is_temp(&self, l: LocalId) -> bool {
        self.locals
            .get(l.0 as usize)
            .is_some_and(|x| x.name.starts_with('$'))
    }

    pub fn local_ty(&self, l: LocalId) -> Ty {
        self.locals
            .get(l.0 as usize)
            .map_or(Ty::Scalar(hir::ScalarType::Bool), |x| x.ty)
    }

    /// A new local for a variable's declaration (`let`, parameter, loop variable).
    pub fn declare(&mut self, v: VarId) -> LocalId {
        let l = self.new_local(self.cx.var_name(v), self.cx.var_ty(v));
        self.vars.insert(v, l);
        l
    }

    /// Whether `v` has storage here already (a global, or a declared local).
    pub fn is_visible(&self, v: VarId) -> bool {
        self.vars.contains_key(&v) || self.cx.is_global(v)
    }

    /// Make `v` mean `local` from now on; returns what it meant before.
    pub fn bind(&mut self, v: VarId, local: Option<LocalId>) -> Option<LocalId> {
        match local {
            Some(l) => self.vars.insert(v, l),
            None => self.vars.remove(&v),
        }
    }

    /// Where `v` lives here: a local, or a global. (In a region every outside variable is a
    /// parameter, so globals only appear there if the analysis left one out.)
    pub fn storage(&mut self, v: VarId) -> Storage {
        if let Some(&l) = self.vars.get(&v) {
            return Storage::Local(l);
        }
        if self.cx.is_global(v) {
            return Storage::Global(v);
        }
        // A variable the walk has not seen declared (not in a checked program): give it a local
        // so that the IR stays well formed.
        Storage::Local(self.declare(v))
    }

    /// A read of `v`.
    pub fn read(&mut self, v: VarId) -> ir::Expr {
        match self.storage(v) {
            Storage::Local(l) => self.local(l),
            Storage::Global(g) => ir::Expr {
                kind: ExprKind::Global(g),
                ty: self.cx.var_ty(g),
            },
        }
    }

    pub fn local(&self, l: LocalId) -> ir::Expr {
        ir::Expr {
            kind: ExprKind::Local(l),
            ty: self.local_ty(l),
        }
    }

    /// `v = value` (ownership already settled by the caller).
    pub fn set(&mut self, v: VarId, value: ir::Expr) -> Stmt {
        match self.storage(v) {
            Storage::Local(l) => Stmt::Set(l, value),
            Storage::Global(g) => Stmt::SetGlobal(g, value),
        }
    }

    pub fn place(&mut self, v: VarId) -> ir::Place {
        match self.storage(v) {
            Storage::Local(l) => ir::Place::Local(l),
            Storage::Global(g) => ir::Place::Global(g),
        }
    }

    /// The analysis of the loop whose `for` statement is at `span`.
    pub fn loop_info(&self, span: Span) -> Option<&'a LoopInfo> {
        let loops: &'a [LoopInfo] = self.loops;
        loops.iter().find(|l| l.for_span == span)
    }

    // ---- blocks --------------------------------------------------------------------------

    /// Append a statement to the block being built (nothing follows a jump).
    pub fn emit(&mut self, s: Stmt) {
        let Some(block) = self.blocks.last_mut() else {
            return;
        };
        if matches!(
            block.last(),
            Some(Stmt::Break | Stmt::Continue | Stmt::Return(_))
        ) {
            return;
        }
        block.push(s);
    }

    pub fn open_block(&mut self) {
        self.blocks.push(Vec::new());
    }

    pub fn close_block(&mut self) -> ir::Block {
        if self.blocks.len() > 1 {
            self.blocks.pop().unwrap_or_default()
        } else {
            Vec::new()
        }
    }

    /// Build a block with `f`, in a scope of `kind` that ends with the block.
    pub fn nested(&mut self, kind: ScopeKind, f: impl FnOnce(&mut Self)) -> ir::Block {
        self.open_block();
        self.push_scope(kind);
        f(self);
        self.pop_scope();
        self.close_block()
    }

    // ---- scopes and ownership ------------------------------------------------------------

    pub fn push_scope(&mut self, kind: ScopeKind) {
        self.scopes.push(Scope {
            owned: Vec::new(),
            kind,
        });
    }

    /// End the innermost scope, releasing its arrays.
    pub fn pop_scope(&mut self) {
        if let Some(scope) = self.scopes.pop() {
            for l in scope.owned.into_iter().rev() {
                let e = self.local(l);
                self.emit(Stmt::Release(e));
            }
        }
    }

    /// The innermost scope owns the array in `l` from now on.
    pub fn own(&mut self, l: LocalId) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.owned.push(l);
        }
    }

    /// Whether the innermost scope owns anything yet.
    pub fn scope_owns_anything(&self) -> bool {
        self.scopes.last().is_some_and(|s| !s.owned.is_empty())
    }

    pub fn mark(&self) -> Mark {
        Mark {
            depth: self.scopes.len(),
            len: self.scopes.last().map_or(0, |s| s.owned.len()),
        }
    }

    /// Release the temporaries registered since `mark` (the statement that used them is done).
    pub fn flush(&mut self, mark: Mark) {
        if self.scopes.len() != mark.depth {
            return;
        }
        let Some(scope) = self.scopes.last_mut() else {
            return;
        };
        if scope.owned.len() <= mark.len {
            return;
        }
        let done: Vec<LocalId> = scope.owned.drain(mark.len..).collect();
        for l in done.into_iter().rev() {
            let e = self.local(l);
            self.emit(Stmt::Release(e));
        }
    }

    /// Whether leaving every scope (a `return`) has anything to do.
    pub fn return_needs_cleanup(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| !s.owned.is_empty() || matches!(s.kind, ScopeKind::Data(_)))
    }

    /// Emit what leaving the scopes from `from` outwards means (innermost first).
    fn leave_scopes(&mut self, from: usize) {
        let mut stmts = Vec::new();
        for scope in self.scopes[from..].iter().rev() {
            for &l in scope.owned.iter().rev() {
                stmts.push(Stmt::Release(self.local(l)));
            }
            if let ScopeKind::Data(exit) = &scope.kind {
                stmts.push(Stmt::Data(exit.clone()));
            }
        }
        for s in stmts {
            self.emit(s);
        }
    }

    /// Cleanup before `break`/`continue`: the scopes up to the innermost loop body. `false` when
    /// there is no loop (not in a checked program).
    pub fn leave_loop(&mut self) -> bool {
        match self
            .scopes
            .iter()
            .rposition(|s| matches!(s.kind, ScopeKind::Loop))
        {
            Some(i) => {
                self.leave_scopes(i);
                true
            }
            None => false,
        }
    }

    /// Cleanup before `return`: every scope.
    pub fn leave_all(&mut self) {
        self.leave_scopes(0);
    }
}

/// Where a variable lives in the body being lowered.
#[derive(Clone, Copy, Debug)]
pub(super) enum Storage {
    Local(LocalId),
    Global(VarId),
}

/// The IR's reduction of `r` (a loop's or a region's) into `var`.
pub(super) fn reduction(var: LocalId, r: &ReductionInfo) -> ir::Reduction {
    ir::Reduction::new(var, r.op, r.ty)
        .expect("the checker accepts only reductions whose operator applies to the type")
}
