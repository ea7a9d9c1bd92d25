//! Compute constructs: found by a walk over host code (top-level statements and this compile's
//! function bodies) that tracks the enclosing `acc data` regions; each gets its variables with
//! their data attributes (LANGUAGE.md 7.3), reductions, loops and launch configuration.

use super::loops::{self, LoopContext, Root};
use super::visit::{self, Visitor};
use super::{
    Adjustment, AdjustmentKind, AsyncQueue, Cx, DataAttr, Implicit, Launch, LoopInfo, PerDevice,
    ReductionInfo, RegionId, RegionInfo, Schedule, Size, VarUse,
};
use crate::diag::Diagnostic;
use crate::hir::{
    ClauseKind, Construct, DataRef, DefaultKind, DeviceTypeName, Directive, Expr, ExprKind, FnId,
    Place, PlaceKind, Stmt, StmtKind, VarId,
};
use crate::span::Span;

/// Every compute construct of this compile, in source order.
pub(super) fn collect(cx: &mut Cx) -> Vec<RegionInfo> {
    let program = cx.program;
    let declared = declared_globals(&program.top);
    let mut walk = HostWalk {
        cx,
        function: None,
        data: Vec::new(),
        declared,
        regions: Vec::new(),
    };
    for s in &program.top {
        walk.stmt(s);
    }
    for f in program.new_functions() {
        walk.function = Some(f.id);
        visit::walk_block(&mut walk, &f.body);
    }
    let mut regions = walk.regions;
    regions.sort_by_key(|r| r.span.start);
    for (i, r) in regions.iter_mut().enumerate() {
        r.id = RegionId(i as u32);
    }
    regions
}

/// Globals of this compile named by a top-level `acc declare`.
fn declared_globals(top: &[Stmt]) -> Vec<VarId> {
    let mut out = Vec::new();
    for s in top {
        if let StmtKind::Directive(d) = &s.kind {
            if d.construct == Construct::Declare {
                for c in &d.clauses {
                    if let ClauseKind::Data(_, refs) = &c.kind {
                        out.extend(refs.iter().map(|r| r.var));
                    }
                }
            }
        }
    }
    out
}

/// An enclosing `acc data` region: its default and the variables its clauses name.
struct DataScope {
    default: Option<DefaultKind>,
    named: Vec<VarId>,
    /// The arrays its clauses make present, whole, for the whole region (every data clause
    /// but `no_create`, which leaves absent data absent).
    held: Vec<VarId>,
    /// The directive line.
    span: Span,
}

struct HostWalk<'c, 'p> {
    cx: &'c mut Cx<'p>,
    function: Option<FnId>,
    data: Vec<DataScope>,
    declared: Vec<VarId>,
    regions: Vec<RegionInfo>,
}

impl Visitor for HostWalk<'_, '_> {
    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        if d.construct.is_compute() {
            let region = self.region(d);
            self.regions.push(region);
            return;
        }
        if d.construct == Construct::Data {
            let mut scope = DataScope {
                default: None,
                named: Vec::new(),
                held: Vec::new(),
                span: d.span,
            };
            for c in &d.clauses {
                match &c.kind {
                    ClauseKind::Default(k) => scope.default = Some(*k),
                    ClauseKind::Data(kind, refs) => {
                        scope.named.extend(refs.iter().map(|r| r.var));
                        // A section holds part of the array: a region using all of it
                        // finds it only partly present.
                        if *kind != crate::hir::DataClause::NoCreate {
                            scope.held.extend(
                                refs.iter().filter(|r| r.sections.is_none()).map(|r| r.var),
                            );
                        }
                    }
                    _ => {}
                }
            }
            self.data.push(scope);
            visit::walk_directive(self, d);
            self.data.pop();
            return;
        }
        visit::walk_directive(self, d);
    }
}

impl HostWalk<'_, '_> {
    fn region(&mut self, d: &Directive) -> RegionInfo {
        let combined = d.construct.is_loop();
        let context = LoopContext::of_construct(d.construct);

        // The loops first: a combined construct's reductions are its loop's.
        let body = d.body.as_deref();
        let loop_root = match body.map(|b| (&b.kind, b.span)) {
            Some((StmtKind::For(f), span)) if combined => Some(Root::Combined {
                directive: d,
                for_loop: f,
                for_span: span,
            }),
            Some((StmtKind::Block(b), _)) if !combined => Some(Root::Block(b)),
            _ => None,
        };
        let reduced: Vec<VarId> = d
            .clauses
            .iter()
            .filter_map(|c| match &c.kind {
                ClauseKind::Reduction(_, refs) if !combined => Some(refs.iter().map(|r| r.var)),
                _ => None,
            })
            .flatten()
            .collect();
        let loops = loop_root.map_or_else(Vec::new, |root| {
            loops::collect(self.cx, context, root, &reduced)
        });

        // Clauses of the construct.
        let mut named: Vec<(VarId, DataAttr)> = Vec::new();
        let mut reductions: Vec<ReductionInfo> = Vec::new();
        let mut default = None;
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Data(kind, refs) => named.extend(refs.iter().map(|r| {
                    (
                        r.var,
                        DataAttr::Clause {
                            clause: *kind,
                            sections: r.sections.clone(),
                            span: r.span,
                        },
                    )
                })),
                // On a combined construct `private` applies to the loop.
                ClauseKind::Private(refs) if !combined => named.extend(
                    refs.iter()
                        .map(|r| (r.var, DataAttr::Private { span: r.span })),
                ),
                ClauseKind::FirstPrivate(refs) => named.extend(
                    refs.iter()
                        .map(|r| (r.var, DataAttr::FirstPrivate { span: r.span })),
                ),
                ClauseKind::Reduction(op, refs) if !combined => {
                    reductions.extend(loops::reductions(self.cx, *op, refs))
                }
                ClauseKind::Default(k) => default = Some(*k),
                _ => {}
            }
        }
        if combined {
            if let Some(first) = loops.first() {
                reductions.extend(first.reductions.iter().cloned());
            }
        }
        for r in &reductions {
            named.push((
                r.var,
                DataAttr::Reduction {
                    op: r.op,
                    span: r.span,
                },
            ));
        }
        let default = default.or_else(|| self.data.iter().rev().find_map(|s| s.default));

        if let Some(body) = body {
            super::device::check_region(self.cx, body);
        }

        // What the body uses.
        let mut scan = UseScan {
            cx: self.cx,
            loops: &loops,
            locals: Vec::new(),
            privatized: Vec::new(),
            uses: Vec::new(),
            calls: Vec::new(),
            inner_reductions: Vec::new(),
        };
        if combined {
            scan.privatized.push(private_vars(d));
        }
        if let Some(body) = body {
            scan.stmt(body);
        }
        let UseScan {
            locals,
            mut uses,
            calls,
            inner_reductions,
            ..
        } = scan;
        uses.retain(|u| !locals.contains(&u.var));
        self.cx
            .device_calls
            .extend(calls.iter().map(|c| (c.0, c.1)));

        // Globals the called functions use, charged to the call that reaches them.
        let callees = self.cx.summaries.reachable(calls.iter().map(|c| c.0));
        for &(f, call_span) in &calls {
            for g in self.cx.summaries.reachable([f]) {
                let Some(summary) = self.cx.summaries.get(g) else {
                    continue;
                };
                for global in &summary.globals {
                    match uses.iter_mut().find(|u| u.var == global.var) {
                        Some(u) => {
                            u.read |= global.read;
                            u.written |= global.written;
                        }
                        None => {
                            uses.push(Use {
                                var: global.var,
                                span: call_span,
                                read: global.read,
                                written: global.written,
                                via: Some(g),
                            });
                        }
                    }
                }
            }
        }

        // Variables: clause-named first (the directive line comes first), then the rest.
        let mut vars: Vec<VarUse> = Vec::new();
        for (v, attr) in named {
            if vars.iter().any(|u| u.var == v) {
                continue;
            }
            let used = uses.iter().find(|u| u.var == v);
            vars.push(VarUse {
                var: v,
                name: self.cx.var_name(v),
                ty: self.cx.var_ty(v),
                attr,
                first_use: used.map(|u| u.span),
                read: used.is_some_and(|u| u.read),
                written: used.is_some_and(|u| u.written),
                held_by: None,
            });
        }
        let mut missing: Vec<&Use> = Vec::new();
        for u in &uses {
            if vars.iter().any(|v| v.var == u.var) {
                continue;
            }
            let ty = self.cx.var_ty(u.var);
            let declared = self.declared.contains(&u.var);
            let reduced = inner_reductions.contains(&u.var);
            let attr = if declared {
                Implicit::Present
            } else if ty.is_array() {
                if default == Some(DefaultKind::Present) {
                    Implicit::Present
                } else {
                    Implicit::Copy
                }
            } else if reduced {
                Implicit::Copy
            } else if u.via.is_some() {
                Implicit::FirstPrivate
            } else if context == LoopContext::Kernels {
                Implicit::Copy
            } else {
                Implicit::FirstPrivate
            };
            let in_data_clause = self.data.iter().any(|s| s.named.contains(&u.var));
            if default == Some(DefaultKind::None) && !declared && !reduced && !in_data_clause {
                missing.push(u);
            }
            let held_by = (attr == Implicit::Copy && ty.is_array())
                .then(|| self.holder(u.var))
                .flatten();
            vars.push(VarUse {
                var: u.var,
                name: self.cx.var_name(u.var),
                ty,
                attr: DataAttr::Implicit(attr),
                first_use: Some(u.span),
                read: u.read,
                written: u.written,
                held_by,
            });
        }
        for u in missing {
            self.default_none_error(d, u);
        }
        for u in &vars {
            self.copyin_written_warning(u);
        }

        // Loop reductions of outside variables the construct does not reduce are copied back
        // too (those of variables declared in the region stay there).
        for l in &loops {
            for r in &l.reductions {
                if !reductions.iter().any(|x| x.var == r.var) && !locals.contains(&r.var) {
                    reductions.push(r.clone());
                }
            }
        }

        let mut launch = self.launch(d);
        let mut one_gang_default = false;
        if self.shares_no_loop_over_gangs(d, &loops, &callees) {
            for l in [&mut launch.nvidia, &mut launch.host, &mut launch.multicore] {
                if l.num_gangs.is_none() {
                    l.num_gangs = Some(Size::Const(1));
                    one_gang_default = true;
                }
            }
        }
        let (parts, together) =
            super::kernels::parts(d, &loops, &vars, launch.nvidia.async_queue.is_some());
        let adjustments = adjustments(d, runs_as_one_gang(d, &loops, &parts));
        let split = super::split::plan(self.cx, d, &loops, &vars, parts.len());
        RegionInfo {
            id: RegionId(0),
            construct: d.construct,
            span: d.span,
            construct_span: d.construct_span,
            function: self.function,
            default,
            vars,
            reductions,
            loops,
            launch,
            calls: callees,
            parts,
            adjustments,
            together,
            split,
            one_gang_default,
        }
    }

    /// A `parallel` construct with no gang loop and no call of a gang routine: every gang
    /// would run all of it (gang-redundant), repeating its effects as many times as there
    /// are gangs, a count that differs between devices. Where `num_gangs` is not given it
    /// runs as one gang (OpenACC leaves the default to the implementation, which may depend
    /// on the code), so that it does the same on every device.
    fn shares_no_loop_over_gangs(&self, d: &Directive, loops: &[LoopInfo], calls: &[FnId]) -> bool {
        let gang_loop = loops
            .iter()
            .any(|l| matches!(l.schedule, Schedule::Parallel(levels) if levels.gang));
        let gang_routine = calls.iter().any(|f| {
            self.cx
                .program
                .functions
                .get(f.index())
                .and_then(|f| f.routine.as_ref())
                .is_some_and(|r| r.level == crate::hir::RoutineLevel::Gang)
        });
        matches!(d.construct, Construct::Parallel | Construct::ParallelLoop)
            && !gang_loop
            && !gang_routine
    }

    /// The directive line of the innermost enclosing `acc data` construct that makes `v`
    /// present.
    fn holder(&self, v: VarId) -> Option<Span> {
        self.data
            .iter()
            .rev()
            .find(|s| s.held.contains(&v))
            .map(|s| s.span)
    }

    /// An array the region writes but only copies in: the writes never reach the host, which
    /// a port from host code rarely means. Naming the array in `copy`, `copyout` or `present`
    /// says what is meant and silences it.
    fn copyin_written_warning(&mut self, u: &VarUse) {
        let DataAttr::Clause {
            clause: crate::hir::DataClause::CopyIn,
            span,
            ..
        } = &u.attr
        else {
            return;
        };
        if !u.ty.is_array() || !u.written {
            return;
        }
        let name = &u.name;
        let mut w = Diagnostic::warning(
            format!("`{name}` is written in the region but only copied in: the host will not see the writes"),
            *span,
            "copied in only",
        )
        .with_help(format!(
            "use `copy({name})` or `copyout({name})` to bring the writes back; if only the device needs them, keep `{name}` on the device with a data region and name it in `present({name})`"
        ));
        if let Some(at) = u.first_use {
            w = w.with_label(at, "written here");
        }
        self.cx.diags.push(w);
    }

    fn default_none_error(&mut self, d: &Directive, u: &Use) {
        let name = self.cx.var_name(u.var);
        let ty = self.cx.var_ty(u.var);
        let clause = match (ty.is_array(), u.read, u.written) {
            (true, _, false) => "copyin",
            (true, false, true) => "copyout",
            (true, true, true) => "copy",
            (false, _, false) => "firstprivate",
            (false, _, true) => "copy",
        };
        let label = match u.via {
            Some(f) => format!("`{name}` is used by `{}`, called here", self.cx.fn_name(f)),
            None => format!("`{name}` used here"),
        };
        let also = if ty.is_array() {
            format!(", or `present({name})` if it is already on the device")
        } else {
            String::new()
        };
        self.cx.diags.push(
            Diagnostic::error(
                format!("`{name}` is not named in any clause of this `default(none)` construct"),
                u.span,
                label,
            )
            .with_label(
                d.construct_span,
                "`default(none)` requires every variable to be named",
            )
            .with_help(format!("add `{clause}({name})` to the directive{also}")),
        );
    }

    /// Sizes and queues as they apply on each device type; vector lengths rounded up to a
    /// multiple of 32 (with a warning) and thread counts checked on NVIDIA.
    fn launch(&mut self, d: &Directive) -> PerDevice<Launch> {
        let mut per = PerDevice::<Launch>::default();
        for dev in [
            DeviceTypeName::Nvidia,
            DeviceTypeName::Host,
            DeviceTypeName::Multicore,
        ] {
            let launch = match dev {
                DeviceTypeName::Host => &mut per.host,
                DeviceTypeName::Multicore => &mut per.multicore,
                _ => &mut per.nvidia,
            };
            for c in d.clauses_for(dev) {
                match &c.kind {
                    ClauseKind::NumGangs(e) => launch.num_gangs = Some(size(e)),
                    ClauseKind::NumWorkers(e) => launch.num_workers = Some(size(e)),
                    ClauseKind::VectorLength(e) => launch.vector_length = Some(size(e)),
                    ClauseKind::Async(q) => {
                        launch.async_queue = Some(
                            q.as_ref()
                                .map_or(AsyncQueue::Default, |e| AsyncQueue::Queue(e.clone())),
                        )
                    }
                    ClauseKind::Wait(qs) => launch.wait = Some(qs.clone()),
                    _ => {}
                }
            }
        }
        self.check_threads(d);
        if let Some(Size::Const(v)) = &mut per.nvidia.vector_length {
            *v = round_up_32(*v);
        }
        per
    }

    /// On NVIDIA: a vector length not a multiple of 32 is rounded up (warning); more than 1024
    /// threads per gang is an error.
    fn check_threads(&mut self, d: &Directive) {
        let mut workers: Option<(i64, Span)> = None;
        let mut vector: Option<(i64, Span)> = None;
        let mut dynamic_workers = false;
        let mut dynamic_vector = false;
        for c in d.clauses_for(DeviceTypeName::Nvidia) {
            match &c.kind {
                ClauseKind::NumWorkers(e) => match const_of(e) {
                    Some(v) => {
                        workers = Some((v, c.span));
                        dynamic_workers = false;
                    }
                    None => {
                        workers = None;
                        dynamic_workers = true;
                    }
                },
                ClauseKind::VectorLength(e) => match const_of(e) {
                    Some(v) => {
                        dynamic_vector = false;
                        if v > 0 && v % 32 != 0 {
                            self.cx.diags.push(
                                Diagnostic::warning(
                                    format!("`vector_length({v})` is rounded up to {}", round_up_32(v)),
                                    c.span,
                                    "not a multiple of 32",
                                )
                                .with_help("vector lanes come in warps of 32 threads on NVIDIA GPUs; give a multiple of 32"),
                            );
                        }
                        vector = Some((round_up_32(v), c.span));
                    }
                    None => {
                        vector = None;
                        dynamic_vector = true;
                    }
                },
                _ => {}
            }
        }
        // A count computed at run time is fitted to the block (`acc_abi::nvidia_block`).
        if dynamic_vector && vector.is_none() {
            return;
        }
        let (w, w_span) = match workers {
            Some((w, span)) => (w, Some(span)),
            None if dynamic_workers => return,
            None => (1, None),
        };
        let (v, v_span, v_text) = match vector {
            Some((v, span)) => (v, Some(span), format!("`vector_length` {v}")),
            None => (128, None, "the default `vector_length` of 128".to_string()),
        };
        if w.saturating_mul(v) > 1024 {
            let primary = w_span.or(v_span).unwrap_or(d.construct_span);
            let mut diag = Diagnostic::error(
                format!("{w} workers × {v_text} = {} threads per gang, above 1024", w.saturating_mul(v)),
                primary,
                "too many threads per gang",
            )
            .with_help("an NVIDIA thread block holds at most 1024 threads: lower `num_workers` or `vector_length`");
            if let (Some(vs), Some(_)) = (v_span, w_span) {
                diag = diag.with_label(vs, "vector length given here");
            }
            self.cx.diags.push(diag);
        }
    }
}

/// Whether the region runs as one gang on every device, as far as the analysis can tell for
/// certain (`ir::gangs::one_gang` decides on the lowered region): `serial` regions, a
/// `kernels loop` whose loop is not a gang loop, and a `kernels` region that runs as one kernel
/// (no parts) without exactly one loop nest or whose one nest is not a gang loop.
fn runs_as_one_gang(d: &Directive, loops: &[LoopInfo], parts: &[super::KernelPart]) -> bool {
    let gang = |l: &LoopInfo| matches!(l.schedule, Schedule::Parallel(levels) if levels.gang);
    let mut roots = loops.iter().filter(|l| l.parent.is_none());
    match d.construct {
        Construct::Serial | Construct::SerialLoop => true,
        Construct::KernelsLoop => loops.first().is_some_and(|l| !gang(l)),
        Construct::Kernels if parts.is_empty() => match (roots.next(), roots.next()) {
            (Some(only), None) => !gang(only),
            _ => true,
        },
        _ => false,
    }
}

/// The launch sizes that will not apply as written (`--info`): `num_gangs` of a region that
/// runs as one gang; on NVIDIA, a constant `vector_length` rounded up to whole warps, and what
/// `acc_abi::nvidia_block` (the runtime's rule) does to the block the clauses give.
fn adjustments(d: &Directive, one_gang: bool) -> Vec<Adjustment> {
    use acc_abi::{nvidia_block, ABSENT, MAX_WORKERS};
    let mut out = Vec::new();
    let mut push = |clause: Span, kind| out.push(Adjustment { clause, kind });
    if one_gang {
        for c in &d.clauses {
            if let ClauseKind::NumGangs(_) = c.kind {
                push(c.span, AdjustmentKind::GangsUnused);
            }
        }
    }
    // Per clause: its constant (`None` when computed at run time) and where it is.
    let mut workers: Option<(Option<i64>, Span)> = None;
    let mut vector: Option<(Option<i64>, Span)> = None;
    for c in d.clauses_for(DeviceTypeName::Nvidia) {
        match &c.kind {
            ClauseKind::NumWorkers(e) => workers = Some((const_of(e), c.span)),
            ClauseKind::VectorLength(e) => vector = Some((const_of(e), c.span)),
            _ => {}
        }
    }
    if let Some((Some(v), span)) = vector {
        if round_up_32(v) != v {
            push(span, AdjustmentKind::VectorRounded { to: round_up_32(v) });
            vector = Some((Some(round_up_32(v)), span));
        }
    }
    let given = |x: Option<(Option<i64>, Span)>| match x {
        None => Some(ABSENT),
        Some((c, _)) => c,
    };
    match (given(workers), given(vector)) {
        (Some(w), Some(v)) => {
            let (x, y) = nvidia_block(w, v);
            if let (Some((_, span)), true) = (workers, i64::from(y) != w) {
                push(span, AdjustmentKind::WorkersClipped { to: y.into() });
            }
            if let (Some((_, span)), true) = (vector, i64::from(x) != v) {
                push(span, AdjustmentKind::VectorClipped { to: x.into() });
            }
        }
        // The vector length is computed at run time.
        (Some(w), None) if w != ABSENT => {
            let (most, y) = nvidia_block(w, i64::MAX);
            if let (Some((_, span)), true) = (workers, i64::from(y) != w) {
                push(span, AdjustmentKind::WorkersClipped { to: y.into() });
            }
            if let Some((_, span)) = vector {
                push(span, AdjustmentKind::VectorAtMost { most: most.into() });
            }
        }
        // The worker count is computed at run time: the most workers that leave the vector
        // length whole.
        (None, Some(v)) => {
            let whole = (1..=MAX_WORKERS)
                .take_while(|&w| i64::from(nvidia_block(w, v).0) == nvidia_block(1, v).0.into())
                .last()
                .unwrap_or(0);
            if whole < MAX_WORKERS {
                match (vector, workers) {
                    (Some((_, span)), _) => {
                        push(span, AdjustmentKind::VectorCutAbove { above: whole })
                    }
                    (None, Some((_, span))) => {
                        push(span, AdjustmentKind::DefaultVectorCutAbove { above: whole })
                    }
                    (None, None) => {}
                }
            }
        }
        _ => {}
    }
    out
}

fn round_up_32(v: i64) -> i64 {
    if v <= 0 {
        v
    } else {
        v.saturating_add(31) / 32 * 32
    }
}

fn const_of(e: &Expr) -> Option<i64> {
    e.as_const().and_then(|c| c.as_i64())
}

fn size(e: &Expr) -> Size {
    match const_of(e) {
        Some(v) => Size::Const(v),
        None => Size::Expr(e.clone()),
    }
}

fn private_vars(d: &Directive) -> Vec<VarId> {
    d.clauses
        .iter()
        .filter_map(|c| match &c.kind {
            ClauseKind::Private(refs) => Some(refs.iter().map(|r| r.var)),
            _ => None,
        })
        .flatten()
        .collect()
}

/// A variable the region body uses.
struct Use {
    var: VarId,
    span: Span,
    read: bool,
    written: bool,
    /// The called function that uses it, when only a call does.
    via: Option<FnId>,
}

struct UseScan<'c, 'p> {
    cx: &'c Cx<'p>,
    /// The region's loops: the variables private to each (clauses, and the dependence test's).
    loops: &'c [super::LoopInfo],
    /// Variables declared inside the region.
    locals: Vec<VarId>,
    /// `private` lists of the loops being walked.
    privatized: Vec<Vec<VarId>>,
    uses: Vec<Use>,
    /// Direct calls of user functions.
    calls: Vec<(FnId, Span)>,
    /// Variables reduced by loops inside the region.
    inner_reductions: Vec<VarId>,
}

impl UseScan<'_, '_> {
    fn note(&mut self, var: VarId, span: Span, read: bool, written: bool) {
        if self.privatized.iter().any(|p| p.contains(&var)) {
            return;
        }
        match self.uses.iter_mut().find(|u| u.var == var) {
            Some(u) => {
                u.read |= read;
                u.written |= written;
            }
            None => self.uses.push(Use {
                var,
                span,
                read,
                written,
                via: None,
            }),
        }
    }
}

impl Visitor for UseScan<'_, '_> {
    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, .. } => self.locals.push(*var),
            StmtKind::For(f) => {
                self.locals.push(f.var);
                let private = self.loops.iter().find(|l| l.for_span == s.span);
                self.privatized
                    .push(private.map_or_else(Vec::new, |l| l.private.clone()));
                visit::walk_stmt(self, s);
                self.privatized.pop();
                return;
            }
            _ => {}
        }
        visit::walk_stmt(self, s);
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(v) => self.note(*v, e.span, true, false),
            ExprKind::Call(f, args) => {
                self.calls.push((*f, e.span));
                for (i, a) in args.iter().enumerate() {
                    if let (Some(v), true) = (a.as_var(), a.ty.is_array()) {
                        let written = self.cx.summaries.writes_param(*f, i);
                        self.note(v, a.span, true, written);
                    }
                }
            }
            _ => {}
        }
        visit::walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, compound: bool) {
        match &p.kind {
            PlaceKind::Var(v) => self.note(*v, p.span, compound, true),
            PlaceKind::Index { base, indices } => {
                match base.as_var() {
                    Some(v) => self.note(v, base.span, compound, true),
                    None => self.expr(base),
                }
                for i in indices {
                    self.expr(i);
                }
            }
        }
    }

    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        // Loops (and atomics) inside the region: their `private` variables are private inside
        // them; their reduction variables are used (and copied back).
        self.privatized.push(private_vars(d));
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Private(_) => {}
                ClauseKind::Reduction(_, refs) => {
                    for r in refs {
                        self.inner_reductions.push(r.var);
                        self.reduction_ref(r);
                    }
                }
                _ => visit::walk_clause(self, c),
            }
        }
        if let Some(body) = &d.body {
            self.stmt(body);
        }
        self.privatized.pop();
    }
}

impl UseScan<'_, '_> {
    fn reduction_ref(&mut self, r: &DataRef) {
        // The reduction happens inside the loop, whose private list does not hide it.
        let saved = self.privatized.pop();
        self.note(r.var, r.span, true, true);
        if let Some(s) = saved {
            self.privatized.push(s);
        }
    }
}
