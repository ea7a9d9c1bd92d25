//! Compute constructs: the host side (`Launch`: arguments, clauses, data ops, results) and the
//! outlined `Region` (parameters, reduction accumulators, the body).
//!
//! Parameters follow `RegionInfo::vars` in order. How each is passed:
//! - arrays: `Pass::Array`, with a data op for their clause or implicit attribute;
//!   `private` / `firstprivate` arrays of the construct are `PrivateArray` /
//!   `FirstPrivateArray` (the latter with a `copyin` data op: the copies start from the data).
//!   An array a loop of the region makes `private` is one more parameter after those of
//!   `RegionInfo::vars`, `PrivateArray`, bound to the variable inside that loop only.
//! - scalars: `firstprivate` (explicit or implicit) and `copyin`/`create`/`present`/`no_create`
//!   are `Value`; `private` is `Private`; `copy`, `copyout`, implicit `copy` (kernels, loop
//!   reductions) and reductions are `InOut`, written back through `Launch::results`.
//!
//! Reductions (`RegionInfo::reductions`): the body uses a private accumulator (`name.red`) that
//! the region's first statements set to the operator's identity; `Region::reductions` names it
//! and the `InOut` parameter the back end combines it with.

use super::body::{reduction, Body, Context, ScopeKind};
use super::expr::{constant, expr};
use super::{split, ty, Cx};
use crate::analysis::{self, DataAttr, Implicit, PerDevice, RegionId, RegionInfo, Size};
use crate::hir::{self, BinOp, ClauseKind, Const, DataClause, ScalarType, UnOp};
use crate::ir::{self, DataAction, ExprKind, Pass, Queue, Stmt, Ty};
use crate::span::Span;

impl<'a> Body<'_, 'a> {
    pub fn compute(&mut self, d: &hir::Directive) {
        let analysis = self.cx.analysis;
        let info = match analysis.region_at(d.span) {
            Some(info) if self.context != Context::Region => info,
            // Not analyzed, or nested in a region (neither in a checked program): inline.
            _ => {
                if let Some(body) = &d.body {
                    self.stmt(body);
                }
                return;
            }
        };

        if let Some(parts) = kernel_parts(info, d) {
            return self.split_kernels(d, info, parts);
        }
        let part = Part {
            id: info.id,
            span: d.span,
            stmts: d.body.as_deref().into_iter().collect(),
            reductions: info.reductions.clone(),
            writes: info
                .vars
                .iter()
                .filter(|u| u.written)
                .map(|u| u.var)
                .collect(),
        };
        let if_cond = self.launch_if(d);
        let async_queue = self.async_queue(info);
        let wait = info
            .launch
            .nvidia
            .wait
            .as_ref()
            .map(|qs| qs.iter().map(|q| self.clause_value(q)).collect());
        let launch = self.launch_part(d, info, part, if_cond, async_queue, wait);
        self.emit(Stmt::Launch(launch));
    }

    /// A `kernels` region whose loop nests run as kernels of their own (LANGUAGE.md 7.6): a
    /// data region holding the construct's data clauses around one launch per part, in order.
    /// Each part receives what the whole region receives (its arrays are present, so their data
    /// ops only count references); scalars reach the host after each part and the next part
    /// reads them from there, as `copy` scalars of consecutive regions do.
    fn split_kernels(&mut self, d: &hir::Directive, info: &'a RegionInfo, parts: Vec<Part<'_>>) {
        let if_cond = self.launch_if(d);
        let async_queue = self.async_queue(info);
        let wait = info
            .launch
            .nvidia
            .wait
            .as_ref()
            .map(|qs| qs.iter().map(|q| self.clause_value(q)).collect());
        let mut ops = Vec::new();
        for u in &info.vars {
            if ty(u.ty).is_array() {
                self.array_arg(u, d.span, &mut ops);
            }
        }
        let enter = ir::DataDirective {
            phase: ir::DataPhase::RegionEntry,
            ops,
            if_cond: if_cond.clone(),
            async_queue: async_queue.clone(),
            wait,
            modifiers: ir::DataModifiers::default(),
            site: self.cx.site(d.span, d.construct.name()),
        };
        let exit = ir::DataDirective {
            phase: ir::DataPhase::RegionExit,
            wait: None,
            ..enter.clone()
        };
        let body = self.nested(ScopeKind::Data(exit.clone()), |b| {
            for (i, mut part) in parts.into_iter().enumerate() {
                if i > 0 {
                    part.id = RegionId(b.cx.regions.len() as u32);
                }
                let launch =
                    b.launch_part(d, info, part, if_cond.clone(), async_queue.clone(), None);
                b.emit(Stmt::Launch(launch));
            }
        });
        self.emit(Stmt::DataRegion { enter, body, exit });
    }

    /// The queue of a compute construct's `async` clause, if it has one.
    fn async_queue(&mut self, info: &RegionInfo) -> Option<Queue> {
        let q = info.launch.nvidia.async_queue.as_ref()?;
        Some(match q {
            analysis::AsyncQueue::Default => Queue::Default,
            analysis::AsyncQueue::Queue(e) => Queue::Numbered(self.clause_value(e)),
        })
    }

    /// The launch of one part of a compute construct (the whole construct, or one kernel of a
    /// split `kernels` region), its region outlined.
    fn launch_part(
        &mut self,
        d: &hir::Directive,
        info: &'a RegionInfo,
        part: Part<'_>,
        if_cond: Option<ir::Expr>,
        async_queue: Option<Queue>,
        wait: Option<Vec<ir::Expr>>,
    ) -> ir::Launch {
        let mut params = Vec::with_capacity(info.vars.len());
        let mut args = Vec::with_capacity(info.vars.len());
        let mut results = Vec::new();
        let mut data = Vec::new();
        for (i, u) in info.vars.iter().enumerate() {
            let t = ty(u.ty);
            let reduced = part.reductions.iter().any(|r| r.var == u.var);
            let pass = pass_of(t, &u.attr, reduced, part.writes.contains(&u.var));
            let arg = if t.is_array() {
                self.array_arg(u, d.span, &mut data)
            } else {
                self.read(u.var)
            };
            if pass == Pass::InOut {
                results.push((i, self.place(u.var)));
            }
            params.push(ir::RegionParam {
                var: u.var,
                name: u.name.clone(),
                ty: t,
                pass,
                written: u.written,
            });
            args.push(arg);
        }
        let mut loop_private = Vec::new();
        for l in &info.loops {
            for &p in &l.private {
                let t = self.cx.var_ty(p);
                if !t.is_array() || loop_private.contains(&p) || !self.is_visible(p) {
                    continue;
                }
                loop_private.push(p);
                params.push(ir::RegionParam {
                    var: p,
                    name: self.cx.var_name(p),
                    ty: t,
                    pass: Pass::PrivateArray,
                    written: false,
                });
                args.push(self.read(p));
            }
        }

        // `devices(…)` that can be cut: the block's bounds, two hidden parameters the runtime
        // sets (`acc_abi::split`); the host's arguments run the whole loop.
        let hidden = match &info.split {
            Some(s) if s.verdict.is_ok() => {
                let lo = params.len();
                for name in ["split_lo", "split_hi"] {
                    params.push(ir::RegionParam {
                        var: split::HIDDEN,
                        name: name.into(),
                        ty: Ty::Scalar(ScalarType::I64),
                        pass: Pass::Value,
                        written: false,
                    });
                }
                args.push(constant(Const::I64(0)));
                args.push(constant(Const::I64(i64::MAX)));
                Some((lo, lo + 1))
            }
            _ => None,
        };

        let mut sizes = SizeCache::default();
        let num_gangs = self.device_exprs(&info.launch, |l| &l.num_gangs, &mut sizes);
        let num_workers = self.device_exprs(&info.launch, |l| &l.num_workers, &mut sizes);
        let vector_length = self.device_exprs(&info.launch, |l| &l.vector_length, &mut sizes);
        let site = self.cx.site(part.span, d.construct.name());

        let distinct = self.distinct_params(info, &params);
        let id = part.id;
        let mut region = outline(self.cx, info, params, d.construct, part);
        region.distinct = distinct;
        if let Some(s) = &info.split {
            let plan = split::cut(&mut region, s, hidden);
            if let (Some((_, hi)), Ok(cut)) = (hidden, &plan.split) {
                args[hi] = constant(Const::I64(cut.everything().1));
            }
            region.split = Some(plan);
        }
        let slot = id.0 as usize;
        if slot == self.cx.regions.len() {
            self.cx.regions.push(None);
        }
        if let Some(slot) = self.cx.regions.get_mut(slot) {
            *slot = Some(region);
        }
        ir::Launch {
            region: id,
            args,
            results,
            results_after: 0,
            if_cond,
            num_gangs,
            num_workers,
            vector_length,
            async_queue,
            wait,
            data,
            site,
        }
    }

    /// The array parameters the region's parallelized loops take to be different storage
    /// (`analysis::LoopInfo::distinct`), each with a site at its loop.
    fn distinct_params(
        &mut self,
        info: &RegionInfo,
        params: &[ir::RegionParam],
    ) -> Vec<ir::DistinctParams> {
        let array = |v: hir::VarId| {
            params
                .iter()
                .position(|p| p.var == v && p.pass == Pass::Array)
        };
        let mut out: Vec<ir::DistinctParams> = Vec::new();
        for l in &info.loops {
            if !matches!(l.schedule, analysis::Schedule::Parallel(_)) {
                continue;
            }
            let mut site = None;
            for &(a, b) in &l.distinct {
                let (Some(written), Some(other)) = (array(a), array(b)) else {
                    continue;
                };
                if written == other
                    || out.iter().any(|d| {
                        (d.written, d.other) == (written, other)
                            || (d.written, d.other) == (other, written)
                    })
                {
                    continue;
                }
                let at = *site.get_or_insert_with(|| self.cx.site(l.for_span, "loop"));
                out.push(ir::DistinctParams {
                    written,
                    other,
                    site: at,
                });
            }
        }
        out
    }

    /// The host array a region parameter receives, and its data op.
    fn array_arg(
        &mut self,
        u: &analysis::VarUse,
        at: Span,
        data: &mut Vec<ir::DataOp>,
    ) -> ir::Expr {
        let read = self.read(u.var);
        let op = |b: &mut Self, action: DataClause, array: ir::Expr, ranges, span| ir::DataOp {
            action: DataAction::Clause(action),
            array,
            name: u.name.clone(),
            ranges,
            span,
            site: b.cx.site(span, u.name.clone()),
        };
        match &u.attr {
            DataAttr::Private { .. } => read,
            DataAttr::FirstPrivate { span } => {
                data.push(op(self, DataClause::CopyIn, read.clone(), None, *span));
                read
            }
            DataAttr::Clause {
                clause,
                sections,
                span,
            } => {
                let ranges = sections.as_ref().map(|rs| {
                    rs.iter()
                        .map(|sr| ir::SectionRange {
                            start: sr.start.as_ref().map(|x| self.clause_value(x)),
                            count: sr.count.as_ref().map(|x| self.clause_value(x)),
                        })
                        .collect()
                });
                data.push(op(self, *clause, read.clone(), ranges, *span));
                read
            }
            DataAttr::Implicit(Implicit::Present) => {
                data.push(op(
                    self,
                    DataClause::Present,
                    read.clone(),
                    None,
                    u.first_use.unwrap_or(at),
                ));
                read
            }
            DataAttr::Implicit(_) | DataAttr::Reduction { .. } => {
                data.push(op(
                    self,
                    DataClause::Copy,
                    read.clone(),
                    None,
                    u.first_use.unwrap_or(at),
                ));
                read
            }
        }
    }

    /// `if(c)` and `self(c)` as one condition: true runs on the device. (Constant parts fold.)
    fn launch_if(&mut self, d: &hir::Directive) -> Option<ir::Expr> {
        let bool_ty = Ty::Scalar(ScalarType::Bool);
        let mut cond: Option<ir::Expr> = None;
        for c in &d.clauses {
            let this = match &c.kind {
                ClauseKind::If(e) => self.clause_value(e),
                ClauseKind::SelfCond(None) => constant(Const::Bool(false)),
                ClauseKind::SelfCond(Some(e)) => {
                    let x = self.clause_value(e);
                    match x.kind {
                        ExprKind::Const(Const::Bool(b)) => constant(Const::Bool(!b)),
                        _ => expr(ExprKind::Unary(UnOp::Not, Box::new(x)), bool_ty),
                    }
                }
                _ => continue,
            };
            cond = match (cond, this) {
                (None, this) => Some(this),
                (Some(prev), this) if is_true(&this) => Some(prev),
                (Some(prev), this) if is_true(&prev) => Some(this),
                (Some(prev), this) => Some(expr(
                    ExprKind::Binary(BinOp::And, Box::new(prev), Box::new(this), None),
                    bool_ty,
                )),
            };
        }
        cond
    }

    fn device_exprs(
        &mut self,
        launch: &PerDevice<analysis::Launch>,
        get: impl Fn(&analysis::Launch) -> &Option<Size>,
        cache: &mut SizeCache,
    ) -> ir::DeviceExprs {
        let mut one = |b: &mut Self, l: &analysis::Launch| -> Option<ir::Expr> {
            match get(l).as_ref()? {
                Size::Const(v) => Some(constant(Const::I64(*v))),
                Size::Expr(e) => {
                    if let Some((_, x)) = cache.0.iter().find(|(s, _)| *s == e.span) {
                        return Some(x.clone());
                    }
                    let x = b.clause_value(e);
                    cache.0.push((e.span, x.clone()));
                    Some(x)
                }
            }
        };
        ir::DeviceExprs {
            nvidia: one(self, &launch.nvidia),
            host: one(self, &launch.host),
            multicore: one(self, &launch.multicore),
        }
    }
}

fn is_true(e: &ir::Expr) -> bool {
    matches!(e.kind, ExprKind::Const(Const::Bool(true)))
}

/// Size clause expressions already evaluated, by span (the same clause applies to several
/// device types).
#[derive(Default)]
struct SizeCache(Vec<(Span, ir::Expr)>);

/// How a variable reaches the region (`written`: the region assigns it).
fn pass_of(t: Ty, attr: &DataAttr, reduced: bool, written: bool) -> Pass {
    if t.is_array() {
        return match attr {
            DataAttr::Private { .. } => Pass::PrivateArray,
            DataAttr::FirstPrivate { .. } => Pass::FirstPrivateArray,
            _ => Pass::Array,
        };
    }
    if reduced {
        return Pass::InOut;
    }
    match attr {
        DataAttr::FirstPrivate { .. } | DataAttr::Implicit(Implicit::FirstPrivate) => Pass::Value,
        DataAttr::Private { .. } => Pass::Private,
        DataAttr::Clause {
            clause: DataClause::Copy | DataClause::CopyOut,
            ..
        } => Pass::InOut,
        DataAttr::Clause { .. } | DataAttr::Implicit(Implicit::Present) => Pass::Value,
        // An implicit `copy` scalar the region never assigns comes back unchanged: it goes in
        // as a value, which spares a device-to-host copy after every launch.
        DataAttr::Implicit(Implicit::Copy) if !written => Pass::Value,
        DataAttr::Reduction { .. } | DataAttr::Implicit(Implicit::Copy) => Pass::InOut,
    }
}

/// The region itself: parameters bound to its first locals, accumulators, then the body.
fn outline<'a>(
    cx: &mut Cx<'a>,
    info: &'a RegionInfo,
    params: Vec<ir::RegionParam>,
    construct: hir::Construct,
    part: Part<'_>,
) -> ir::Region {
    let mut b = Body::new(cx, Context::Region, &info.loops);
    for (i, p) in params.iter().enumerate() {
        let l = b.new_local(p.name.clone(), p.ty);
        if p.var == split::HIDDEN {
            continue;
        }
        if i < info.vars.len() {
            b.bind(p.var, Some(l));
        } else {
            b.private_arrays.insert(p.var, l);
        }
    }
    b.push_scope(ScopeKind::Block);
    let mut reductions: Vec<ir::RegionReduction> = Vec::new();
    for r in &part.reductions {
        let Some(param) = params
            .iter()
            .position(|p| p.var == r.var && p.pass == Pass::InOut)
        else {
            continue;
        };
        if reductions.iter().any(|x| x.param == param) {
            continue;
        }
        let name = format!("{}.red", params[param].name);
        let private = b.new_local(name, Ty::Scalar(r.ty));
        b.bind(r.var, Some(private));
        let reduction = reduction(private, r);
        b.emit(Stmt::Set(private, constant(reduction.identity)));
        reductions.push(ir::RegionReduction { reduction, param });
    }
    // Parameter `i` is local `i`.
    b.cells = (0..params.len())
        .filter(|&i| ir::is_cell_param(&params, &reductions, i))
        .map(|i| ir::LocalId(i as u32))
        .collect();
    for s in part.stmts {
        b.stmt(s);
    }
    b.pop_scope();
    let (locals, body) = b.finish();
    ir::Region {
        id: part.id,
        construct,
        span: part.span,
        params,
        locals,
        body,
        reductions,
        loops: info.loops.clone(),
        distinct: Vec::new(),
        split: None,
    }
}

/// What one launch of a compute construct runs: the whole body, or one part of a split
/// `kernels` region.
struct Part<'h> {
    id: RegionId,
    /// Where its launches are reported (the directive, or the part's first statement).
    span: Span,
    stmts: Vec<&'h hir::Stmt>,
    /// The region-level reductions of the loops it holds.
    reductions: Vec<analysis::ReductionInfo>,
    /// The scalars it assigns (`RegionInfo::vars`' `written` for the whole region).
    writes: Vec<hir::VarId>,
}

/// The parts of a split `kernels` region (`RegionInfo::parts`), with their statements and the
/// region-level reductions of the loops each one holds.
fn kernel_parts<'h>(info: &RegionInfo, d: &'h hir::Directive) -> Option<Vec<Part<'h>>> {
    let stmts = match d.body.as_deref().map(|b| &b.kind) {
        Some(hir::StmtKind::Block(b)) if !info.parts.is_empty() => &b.stmts,
        _ => return None,
    };
    let parts = info.parts.iter().map(|p| {
        let reductions = info
            .reductions
            .iter()
            .filter(|r| {
                info.loops.iter().any(|l| {
                    within(l.for_span, p.span) && l.reductions.iter().any(|x| x.var == r.var)
                })
            })
            .cloned()
            .collect();
        Part {
            // The first part keeps the construct's id; `split_kernels` numbers the others.
            id: info.id,
            span: p.span,
            stmts: stmts
                .get(p.stmts.clone())
                .unwrap_or_default()
                .iter()
                .collect(),
            reductions,
            writes: p.writes.clone(),
        }
    });
    Some(parts.collect())
}

fn within(inner: Span, outer: Span) -> bool {
    outer.start <= inner.start && inner.end <= outer.end
}
