//! Directives other than compute constructs: data constructs and data movement, `wait`,
//! `declare`, `set`, and atomics.
//!
//! Choices:
//! - Data clauses name arrays only: a scalar in `copyin(s)` or `update host(s)` has no data to
//!   move (regions get scalars as parameters), so it is left out.
//! - Clauses after `device_type(…)` are taken as they apply on `nvidia` (the analysis reads
//!   `device_type(*)` the same way); launch sizes keep all three device types.
//! - `acc data`: the `if` condition and queue are evaluated once, into temporaries, and the
//!   arrays are pinned (retained in temporaries) so that the exit acts on the arrays that
//!   entered even if the body rebinds a variable. A `break`, `continue` or `return` that
//!   leaves the body runs the exit directive first (`Stmt::Data`).
//! - `acc declare create(a)` / `copyin(a)`: a `Stmt::Data` with those clauses, never exited
//!   (the device copy lives as long as the global).
//! - `acc set`: calls of the runtime routines it means (`acc_set_device_type`,
//!   `acc_set_device_num(n, t)` with the named type or the current one,
//!   `acc_set_default_async`), under `if(cond)` when given.
//! - `acc wait … if(c)`: the `Wait` statement inside an `If`.

use super::body::{Body, ScopeKind};
use super::expr::{constant, convert_to, expr};
use super::scan::same;
use crate::builtins::{Builtin, BuiltinConst};
use crate::hir::{
    self, ClauseKind, CompoundOp, Const, Construct, DataRef, DeviceTypeName, PlaceKind, ScalarType,
    StmtKind, VarId,
};
use crate::ir::{self, DataAction, ExprKind, Queue, Stmt, Ty};
use crate::span::Span;

impl Body<'_, '_> {
    pub fn directive(&mut self, d: &hir::Directive) {
        match d.construct {
            c if c.is_compute() => self.compute(d),
            Construct::Data => self.data_region(d),
            Construct::EnterData | Construct::ExitData | Construct::Update | Construct::Declare => {
                let dd = self.data_directive(d, false);
                self.emit(Stmt::Data(dd));
            }
            Construct::Wait => self.wait(d),
            Construct::Atomic(kind) => self.atomic(kind, d),
            Construct::Set => self.set_directive(d),
            _ => {
                // `acc loop` (its loop finds its schedule by span) and anything else with a body.
                if let Some(body) = &d.body {
                    self.stmt(body);
                }
            }
        }
    }

    fn clauses<'d>(&self, d: &'d hir::Directive) -> impl Iterator<Item = &'d hir::Clause> {
        d.clauses_for(DeviceTypeName::Nvidia)
    }

    /// A clause argument, evaluated now: anything but a constant or a variable read goes into
    /// a temporary, so that the statement carrying it may evaluate its fields in any order.
    pub fn clause_value(&mut self, e: &hir::Expr) -> ir::Expr {
        let x = self.operand(e);
        match x.kind {
            ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Global(_) => x,
            _ => self.spill(x),
        }
    }

    /// A clause argument frozen for later: constants stay, everything else is spilled.
    fn frozen(&mut self, e: &hir::Expr) -> ir::Expr {
        let x = self.operand(e);
        self.spill(x)
    }

    pub fn queue(&mut self, q: Option<&hir::Expr>, freeze: bool) -> Queue {
        match q {
            None => Queue::Default,
            Some(e) if freeze => Queue::Numbered(self.frozen(e)),
            Some(e) => Queue::Numbered(self.clause_value(e)),
        }
    }

    /// One data op per array of the directive's data (and `update`) clauses.
    fn data_ops(&mut self, d: &hir::Directive, pin: bool) -> Vec<ir::DataOp> {
        let mut ops = Vec::new();
        let clauses: Vec<&hir::Clause> = self.clauses(d).collect();
        for c in clauses {
            let (action, refs) = match &c.kind {
                ClauseKind::Data(kind, refs) => (DataAction::Clause(*kind), refs),
                ClauseKind::Update(dir, refs) => (DataAction::Update(*dir), refs),
                _ => continue,
            };
            for r in refs {
                if let Some(op) = self.data_op(action, r, pin) {
                    ops.push(op);
                }
            }
        }
        ops
    }

    pub fn data_op(&mut self, action: DataAction, r: &DataRef, pin: bool) -> Option<ir::DataOp> {
        if !self.cx.var_ty(r.var).is_array() {
            return None;
        }
        let read = self.read(r.var);
        let array = if pin { self.spill(read) } else { read };
        // A data region's exit must see the sections its entry saw.
        let bound = |b: &mut Self, x: &hir::Expr| {
            if pin {
                b.frozen(x)
            } else {
                b.clause_value(x)
            }
        };
        let ranges = r.sections.as_ref().map(|rs| {
            rs.iter()
                .map(|sr| ir::SectionRange {
                    start: sr.start.as_ref().map(|x| bound(self, x)),
                    count: sr.count.as_ref().map(|x| bound(self, x)),
                })
                .collect()
        });
        let name = self.cx.var_name(r.var);
        let site = self.cx.site(r.span, name.clone());
        Some(ir::DataOp {
            action,
            array,
            name,
            ranges,
            span: r.span,
            site,
        })
    }

    fn if_clause(&mut self, d: &hir::Directive, freeze: bool) -> Option<ir::Expr> {
        let e = d.clauses.iter().find_map(|c| match &c.kind {
            ClauseKind::If(e) => Some(e),
            _ => None,
        })?;
        Some(if freeze {
            self.frozen(e)
        } else {
            self.clause_value(e)
        })
    }

    /// `enter data`, `exit data`, `update`, `declare`, or the entry of `data` (`freeze`).
    fn data_directive(&mut self, d: &hir::Directive, freeze: bool) -> ir::DataDirective {
        let if_cond = self.if_clause(d, freeze);
        let mut async_queue = None;
        let mut wait = None;
        let mut modifiers = ir::DataModifiers::NONE;
        let clauses: Vec<&hir::Clause> = self.clauses(d).collect();
        for c in clauses {
            match &c.kind {
                ClauseKind::Async(q) => async_queue = Some(self.queue(q.as_ref(), freeze)),
                ClauseKind::Wait(qs) => {
                    wait = Some(qs.iter().map(|q| self.clause_value(q)).collect())
                }
                ClauseKind::Finalize => modifiers = modifiers.with(ir::DataModifiers::FINALIZE),
                ClauseKind::IfPresent => modifiers = modifiers.with(ir::DataModifiers::IF_PRESENT),
                _ => {}
            }
        }
        if let Some((_, list)) = crate::analysis::split::devices_clause(d) {
            modifiers = modifiers.with_devices(&list);
        }
        let ops = self.data_ops(d, freeze);
        let site = self.cx.site(d.span, d.construct.name());
        let phase = match d.construct {
            Construct::Data => ir::DataPhase::RegionEntry,
            Construct::ExitData => ir::DataPhase::Exit,
            Construct::Update => ir::DataPhase::Update,
            _ => ir::DataPhase::Enter,
        };
        ir::DataDirective {
            phase,
            ops,
            if_cond,
            async_queue,
            wait,
            modifiers,
            site,
        }
    }

    fn data_region(&mut self, d: &hir::Directive) {
        let enter = self.data_directive(d, true);
        let exit = ir::DataDirective {
            phase: ir::DataPhase::RegionExit,
            wait: None,
            ..enter.clone()
        };
        let body = match &d.body {
            Some(b) => self.nested(ScopeKind::Data(exit.clone()), |x| x.stmt(b)),
            None => Vec::new(),
        };
        self.emit(Stmt::DataRegion { enter, body, exit });
    }

    fn wait(&mut self, d: &hir::Directive) {
        let if_cond = self.if_clause(d, false);
        let mut queues = Vec::new();
        let mut async_queue = None;
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Wait(qs) => queues = qs.iter().map(|q| self.clause_value(q)).collect(),
                ClauseKind::Async(q) => async_queue = Some(self.queue(q.as_ref(), false)),
                _ => {}
            }
        }
        let site = self.cx.site(d.span, "wait");
        let wait = Stmt::Wait {
            queues,
            async_queue,
            site,
        };
        match if_cond {
            Some(cond) => self.emit(Stmt::If {
                cond,
                then: vec![wait],
                els: Vec::new(),
            }),
            None => self.emit(wait),
        }
    }

    fn set_directive(&mut self, d: &hir::Directive) {
        let if_cond = self.if_clause(d, false);
        let mut device_type = None;
        let mut device_num = None;
        let mut default_async = None;
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::DeviceType(list) => {
                    device_type = list.first().copied().map(|t| (t, c.span))
                }
                ClauseKind::DeviceNum(e) => device_num = Some((e, c.span)),
                ClauseKind::DefaultAsync(e) => default_async = Some(e),
                _ => {}
            }
        }
        // Selecting a device can fail (no such device): each call reports at its clause, as a
        // call of the routine reports at the call (found by fuzzing: the error had no location).
        let type_site = device_type.map(|(_, span)| self.cx.site(span, "acc set"));
        let num_site = device_num.map(|(_, span)| self.cx.site(span, "acc set"));
        let i32_ty = Ty::Scalar(ScalarType::I32);
        let call = |b: Builtin, args: Vec<ir::Expr>| {
            Stmt::Eval(expr(
                ExprKind::Builtin(b, args),
                Ty::Scalar(ScalarType::Bool),
            ))
        };
        let checked = |b: Builtin, args: Vec<ir::Expr>, site: Option<ir::SiteId>| {
            let kind = match site {
                Some(site) => ExprKind::CheckedBuiltin(b, args, site),
                None => ExprKind::Builtin(b, args),
            };
            Stmt::Eval(expr(kind, Ty::Scalar(ScalarType::Bool)))
        };
        let then = self.nested(ScopeKind::Block, |x| {
            let t = device_type.map(|(t, _)| constant(Const::I32(device_code(t))));
            if let Some(t) = &t {
                x.emit(checked(
                    Builtin::AccSetDeviceType,
                    vec![t.clone()],
                    type_site,
                ));
            }
            if let Some((n, _)) = device_num {
                let n = x.operand(n);
                let t = t.unwrap_or_else(|| {
                    expr(
                        ExprKind::Builtin(Builtin::AccGetDeviceType, Vec::new()),
                        i32_ty,
                    )
                });
                x.emit(checked(
                    Builtin::AccSetDeviceNum,
                    vec![convert_to(n, ScalarType::I32), t],
                    num_site,
                ));
            }
            if let Some(q) = default_async {
                let q = x.operand(q);
                x.emit(call(
                    Builtin::AccSetDefaultAsync,
                    vec![convert_to(q, ScalarType::I32)],
                ));
            }
        });
        match if_cond {
            Some(cond) => self.emit(Stmt::If {
                cond,
                then,
                els: Vec::new(),
            }),
            None => {
                for s in then {
                    self.emit(s);
                }
            }
        }
    }

    // ---- atomics -------------------------------------------------------------------------

    /// `acc atomic`: the statement (or capture block) with each location evaluated once: an
    /// element's indices go into temporaries before the `Atomic` unless they are constants or
    /// locals, and every mention of the same location reads the same expressions. Reads and
    /// the store of an element carry a bounds-check site.
    fn atomic(&mut self, kind: ir::AtomicKind, d: &hir::Directive) {
        let Some(body) = &d.body else {
            return;
        };
        let mut locs = Locations::default();
        match &body.kind {
            StmtKind::Assign { place, op, value } => {
                let s = self.atomic_assign(place, *op, value, body.span, &mut locs);
                self.emit_atomic(kind, s);
            }
            StmtKind::Block(b) => {
                let mut stmts = Vec::new();
                for s in &b.stmts {
                    match &s.kind {
                        StmtKind::Assign { place, op, value } => {
                            stmts.push(self.atomic_assign(place, *op, value, s.span, &mut locs))
                        }
                        // Not an atomic form (the checker rejects these): run it as written.
                        _ => self.stmt(s),
                    }
                }
                self.emit_atomic(kind, Stmt::Block(stmts));
            }
            _ => self.stmt(body),
        }
    }

    /// The atomic of statement `s`, classified here, where the region's cells are known, so
    /// that the back ends only act on its form.
    fn emit_atomic(&mut self, kind: ir::AtomicKind, s: Stmt) {
        let atomic = ir::Atomic::new(kind, s, |l| self.cells.contains(&l));
        self.emit(Stmt::Atomic(atomic));
    }

    fn atomic_assign<'h>(
        &mut self,
        place: &'h hir::Place,
        op: Option<CompoundOp>,
        value: &'h hir::Expr,
        span: Span,
        locs: &mut Locations<'h>,
    ) -> Stmt {
        let key = match &place.kind {
            PlaceKind::Var(v) => Key::Var(*v),
            PlaceKind::Index { base, indices } => Key::Elem(base, indices),
        };
        let new = match op {
            Some(cop) => {
                let cur = self.location_read(key, place.span, place.ty, locs);
                let rhs = self.operand(value);
                self.compound(cop, cur, rhs, place.ty, span)
            }
            None => self.atomic_value(value, locs),
        };
        match key {
            Key::Var(v) => self.set(v, new),
            Key::Elem(base, indices) => {
                let (array, indices) = self.location(base, indices, locs);
                let what = super::expr::array_name(self, base);
                let site = self.cx.site(place.span, what);
                Stmt::Store {
                    array,
                    indices,
                    value: new,
                    site: Some(site),
                }
            }
        }
    }

    /// The value of an atomic statement: locations read through `location_read`, the rest
    /// lowered as usual.
    fn atomic_value<'h>(&mut self, e: &'h hir::Expr, locs: &mut Locations<'h>) -> ir::Expr {
        use hir::ExprKind as H;
        match &e.kind {
            H::Var(v) if e.ty.is_scalar() => self.location_read(Key::Var(*v), e.span, e.ty, locs),
            H::Index { base, indices } if base.as_var().is_some() => {
                self.location_read(Key::Elem(base, indices), e.span, e.ty, locs)
            }
            H::Binary(op, l, r) => {
                let a = self.atomic_value(l, locs);
                let b = self.atomic_value(r, locs);
                let site = self.division_site(*op, a.ty, e.span);
                expr(
                    ExprKind::Binary(*op, Box::new(a), Box::new(b), site),
                    super::ty(e.ty),
                )
            }
            H::Convert { expr: x, .. } => {
                let x = self.atomic_value(x, locs);
                match e.ty.scalar() {
                    Some(s) => convert_to(x, s),
                    None => x,
                }
            }
            H::Builtin(b @ (Builtin::Min | Builtin::Max), args) => {
                let xs = args.iter().map(|a| self.atomic_value(a, locs)).collect();
                expr(ExprKind::Builtin(*b, xs), super::ty(e.ty))
            }
            _ => self.operand(e),
        }
    }

    fn location_read<'h>(
        &mut self,
        key: Key<'h>,
        span: Span,
        ty: hir::Type,
        locs: &mut Locations<'h>,
    ) -> ir::Expr {
        match key {
            Key::Var(v) => self.read(v),
            Key::Elem(base, indices) => {
                let (array, indices) = self.location(base, indices, locs);
                let what = super::expr::array_name(self, base);
                let site = self.cx.site(span, what);
                expr(
                    ExprKind::Load {
                        array: Box::new(array),
                        indices,
                        site: Some(site),
                    },
                    super::ty(ty),
                )
            }
        }
    }

    /// An element location's array and indices, lowered once per atomic.
    fn location<'h>(
        &mut self,
        base: &'h hir::Expr,
        indices: &'h [hir::Expr],
        locs: &mut Locations<'h>,
    ) -> (ir::Expr, Vec<ir::Expr>) {
        if let Some(found) = locs.find(base, indices) {
            return found;
        }
        let array = self.operand(base);
        let xs: Vec<ir::Expr> = indices
            .iter()
            .map(|i| {
                let x = self.operand(i);
                match x.kind {
                    ExprKind::Const(_) | ExprKind::Local(_) => x,
                    _ => self.spill(x),
                }
            })
            .collect();
        locs.0.push((base, indices, array.clone(), xs.clone()));
        (array, xs)
    }
}

#[derive(Clone, Copy)]
enum Key<'h> {
    Var(VarId),
    Elem(&'h hir::Expr, &'h [hir::Expr]),
}

/// The element locations an atomic has lowered: base, indices, and their IR.
#[derive(Default)]
struct Locations<'h>(Vec<(&'h hir::Expr, &'h [hir::Expr], ir::Expr, Vec<ir::Expr>)>);

impl Locations<'_> {
    fn find(&self, base: &hir::Expr, indices: &[hir::Expr]) -> Option<(ir::Expr, Vec<ir::Expr>)> {
        self.0
            .iter()
            .find(|(b, is, _, _)| {
                same(b, base)
                    && is.len() == indices.len()
                    && is.iter().zip(indices).all(|(x, y)| same(x, y))
            })
            .map(|(_, _, a, xs)| (a.clone(), xs.clone()))
    }
}

/// The `acc_device_*` value of a device type name.
pub(super) fn device_code(t: DeviceTypeName) -> i32 {
    match t {
        DeviceTypeName::Nvidia => BuiltinConst::DeviceNvidia.value(),
        DeviceTypeName::Host => BuiltinConst::DeviceHost.value(),
        DeviceTypeName::Multicore => BuiltinConst::DeviceMulticore.value(),
        DeviceTypeName::Any => BuiltinConst::DeviceDefault.value(),
    }
}
