//! Device code (LANGUAGE.md 7.9): which functions are compiled for the device, and what device
//! code may not contain: array creation, host-only built-ins and runtime routines, data
//! directives and compute constructs (in functions without `acc routine`, which `validate` did
//! not see as device code), writes to global scalars and rebinding of global arrays from
//! routines, rebinding a region's arrays from outside, and recursion.

use super::loops::{self, LoopContext, Root};
use super::visit::{self, Visitor};
use super::{Cx, RoutineInfo};
use crate::builtins::Builtin;
use crate::diag::Diagnostic;
use crate::hir::{
    Construct, Directive, Expr, ExprKind, FnId, Place, PlaceKind, RoutineLevel, Stmt, StmtKind,
    VarId, VarKind,
};
use crate::span::Span;

/// Check a compute region's body.
pub(super) fn check_region(cx: &mut Cx, body: &Stmt) {
    let mut scan = DeviceScan {
        cx,
        function: None,
        relocate: None,
        origin: None,
        bound: None,
        declared: Vec::new(),
    };
    scan.stmt(body);
}

/// How a function came to be compiled for the device.
#[derive(Clone, Copy)]
struct Origin {
    /// Where, in this compile's source: the `acc routine` line or the call that first reaches it
    /// from device code (for a function of an earlier compile, the first such call in this one).
    span: Span,
    /// The caller, when reached through another device function.
    caller: Option<FnId>,
}

/// The functions compiled for the device, each checked once.
pub(super) fn routines(cx: &mut Cx) -> Vec<RoutineInfo> {
    let program = cx.program;
    let mut order: Vec<(FnId, Origin)> = Vec::new();
    for f in program.new_functions() {
        if let Some(r) = &f.routine {
            order.push((
                f.id,
                Origin {
                    span: r.span,
                    caller: None,
                },
            ));
        }
    }
    for &(f, span) in &cx.device_calls {
        if !order.iter().any(|(g, _)| *g == f) {
            order.push((f, Origin { span, caller: None }));
        }
    }
    // Close over calls, breadth first, remembering the first call that reaches each.
    let mut i = 0;
    while i < order.len() {
        let (f, origin) = order[i];
        let calls: Vec<(FnId, Span)> = cx
            .summaries
            .get(f)
            .map(|s| s.calls.iter().map(|c| (c.callee, c.span)).collect())
            .unwrap_or_default();
        for (callee, span) in calls {
            if !order.iter().any(|(g, _)| *g == callee) {
                let span = if cx.is_new_fn(f) { span } else { origin.span };
                order.push((
                    callee,
                    Origin {
                        span,
                        caller: Some(f),
                    },
                ));
            }
        }
        i += 1;
    }

    let mut infos = Vec::new();
    for &(f, origin) in &order {
        let Some(function) = program.functions.get(f.index()) else {
            continue;
        };
        let function = function.clone();
        let is_new = cx.is_new_fn(f);
        // An `acc routine` of an earlier compile was checked when it was compiled.
        let checked_before = !is_new && function.routine.is_some();
        if !checked_before {
            let origin_label = match (&function.routine, origin.caller) {
                (Some(_), _) => None,
                (None, Some(caller)) => Some((
                    origin.span,
                    format!(
                        "`{}` is compiled for the device: `{}` calls it here",
                        function.name,
                        cx.fn_name(caller)
                    ),
                )),
                (None, None) => Some((
                    origin.span,
                    format!(
                        "`{}` is compiled for the device: a compute region calls it here",
                        function.name
                    ),
                )),
            };
            let mut scan = DeviceScan {
                cx,
                function: Some(f),
                relocate: (!is_new).then_some(origin.span),
                origin: origin_label,
                bound: None,
                declared: Vec::new(),
            };
            visit::walk_block(&mut scan, &function.body);
        }
        let level = function
            .routine
            .as_ref()
            .map_or(RoutineLevel::Seq, |r| r.level);
        let before = cx.diags.len();
        let loops = loops::collect(
            cx,
            LoopContext::Routine(level),
            Root::Block(&function.body),
            &[],
        );
        if checked_before {
            cx.diags.truncate(before);
        }
        let mut globals = Vec::new();
        for g in cx.summaries.reachable([f]) {
            for u in cx
                .summaries
                .get(g)
                .map(|s| s.globals.as_slice())
                .unwrap_or(&[])
            {
                if !globals.contains(&u.var) {
                    globals.push(u.var);
                }
            }
        }
        let mut calls: Vec<FnId> = Vec::new();
        for c in cx
            .summaries
            .get(f)
            .map(|s| s.calls.as_slice())
            .unwrap_or(&[])
        {
            if !calls.contains(&c.callee) {
                calls.push(c.callee);
            }
        }
        infos.push(RoutineInfo {
            function: f,
            name: function.name.clone(),
            level,
            explicit: function.routine.is_some(),
            calls,
            globals,
            loops,
        });
    }
    check_recursion(cx, &order);
    infos
}

/// A device function that can reach itself through calls is an error, reported once per cycle
/// at the call that closes it.
fn check_recursion(cx: &mut Cx, order: &[(FnId, Origin)]) {
    let mut reported: Vec<FnId> = Vec::new();
    for &(f, origin) in order {
        if reported.contains(&f) {
            continue;
        }
        let calls = cx
            .summaries
            .get(f)
            .map(|s| s.calls.clone())
            .unwrap_or_default();
        let Some(call) = calls
            .iter()
            .find(|c| c.callee == f || cx.summaries.reachable([c.callee]).contains(&f))
        else {
            continue;
        };
        // Every function on a cycle through `f` is covered by this report.
        let on_cycle: Vec<FnId> = cx
            .summaries
            .reachable([call.callee])
            .into_iter()
            .filter(|g| cx.summaries.reachable([*g]).contains(&f))
            .collect();
        reported.push(f);
        reported.extend(on_cycle);
        let name = cx.fn_name(f);
        let (message, label) = if call.callee == f {
            (
                format!("recursive call of `{name}` in device code"),
                format!("`{name}` calls itself"),
            )
        } else {
            let callee = cx.fn_name(call.callee);
            (
                format!("recursion in device code: `{name}` calls `{callee}`, which leads back to `{name}`"),
                format!("calls `{callee}`"),
            )
        };
        let (span, label) = if cx.is_new_fn(f) {
            (call.span, label)
        } else {
            (
                origin.span,
                format!("{label} (in an earlier input); compiled for the device here"),
            )
        };
        let mut d = Diagnostic::error(message, span, label)
            .with_help(format!("device code may not recurse: rewrite `{name}` with a loop, or call it only from host code"));
        if origin.span != span {
            d = d.with_label(origin.span, "compiled for the device because of this");
        }
        cx.diags.push(d);
    }
}

struct DeviceScan<'c, 'p> {
    cx: &'c mut Cx<'p>,
    /// The function being checked; `None` for a region body.
    function: Option<FnId>,
    /// For a function of an earlier compile: report at this span of this compile instead.
    relocate: Option<Span>,
    /// Why the function is device code, as a secondary label.
    origin: Option<(Span, String)>,
    /// The initializer being visited of `let name = …`, and `name`: an array created there
    /// is named in the help.
    bound: Option<(Span, String)>,
    /// The variables declared in the device code being checked: a region body may rebind an
    /// array of its own, never one from outside.
    declared: Vec<VarId>,
}

impl DeviceScan<'_, '_> {
    fn report(&mut self, message: String, span: Span, label: String, help: String) {
        let d = match self.relocate {
            Some(at) => {
                let name = self
                    .function
                    .map(|f| self.cx.fn_name(f))
                    .unwrap_or_default();
                Diagnostic::error(
                    format!("{message} (in `{name}`, defined in an earlier input)"),
                    at,
                    format!("`{name}` is compiled for the device here"),
                )
            }
            None => {
                let mut d = Diagnostic::error(message, span, label);
                if let Some((s, l)) = &self.origin {
                    d = d.with_label(*s, l.clone());
                }
                d
            }
        };
        self.cx.diags.push(d.with_help(help));
    }

    /// How to avoid creating the array at `span` in device code.
    fn allocation_help(&self, span: Span) -> String {
        if let Some(f) = self.function {
            return format!(
                "create the array in host code and pass it to `{}` as an argument",
                self.cx.fn_name(f)
            );
        }
        match &self.bound {
            Some((at, name)) if *at == span => format!(
                "create `{name}` on the host before the region and name it in a data clause \
                 (`create({name})`), or give each gang its own copy with `private({name})`"
            ),
            _ => "create the array on the host before the region and name it in a data clause \
                  (`create(…)`), or give each gang its own copy with `private(…)`"
                .into(),
        }
    }

    /// A function of the embedding program: Rust code on the host, never device code.
    fn host_call(&mut self, args: &[crate::hir::Expr], span: Span) {
        let name = match args.first().map(|a| &a.kind) {
            Some(ExprKind::Const(crate::hir::Const::I64(i))) => self
                .cx
                .program
                .host_functions
                .get(*i as usize)
                .cloned()
                .unwrap_or_default(),
            _ => String::new(),
        };
        self.report(
            format!("`{name}` cannot be called in device code"),
            span,
            "a Rust function of the embedding program".into(),
            format!(
                "`{name}` was registered by the program that embeds acc and runs on the host: call \
                 it before or after the region and pass its result in"
            ),
        );
    }

    fn builtin(&mut self, b: Builtin, span: Span) {
        let name = b.name();
        if b.allocates() {
            let help = self.allocation_help(span);
            self.report(
                format!("`{name}` creates an array in device code"),
                span,
                "allocates".into(),
                help,
            );
            return;
        }
        if b.allowed_on_device() {
            return;
        }
        let help = match b {
            Builtin::Sum | Builtin::Product | Builtin::Maximum | Builtin::Minimum => {
                "host reductions run on the host: accumulate in a loop with `reduction(…)`, or call it after the region".to_string()
            }
            Builtin::Exit => "set a flag in the region and call `exit` after it".to_string(),
            Builtin::Param => "read the parameter into a variable before the region".to_string(),
            Builtin::Clock => "time the region from host code around it".to_string(),
            Builtin::Seed | Builtin::Random => "seed and draw random numbers on the host".to_string(),
            Builtin::Assert => "check the condition after the region".to_string(),
            Builtin::Imshow | Builtin::Plot => {
                "pictures are drawn on the host: copy the data back (`copyout`, `update self`) and call it after the region".to_string()
            }
            _ if b.is_mpi() => {
                "MPI is called from host code: call it after the region, on data the region left on the device (a present section is sent from its device copy)".to_string()
            }
            _ if b.is_runtime_routine() => {
                "`acc_on_device` is the only runtime routine device code may call; call this one before or after the region".to_string()
            }
            _ => "call it before or after the region".to_string(),
        };
        self.report(
            format!("`{name}` cannot be called in device code"),
            span,
            "host-only function".into(),
            help,
        );
    }
}

impl Visitor for DeviceScan<'_, '_> {
    fn stmt(&mut self, s: &Stmt) {
        let outer = self.bound.take();
        if let StmtKind::Let { var, init } = &s.kind {
            self.declared.push(*var);
            let name = self
                .cx
                .program
                .vars
                .get(var.index())
                .map(|v| v.name.clone());
            self.bound = name.map(|n| (init.span, n));
        }
        visit::walk_stmt(self, s);
        self.bound = outer;
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::ArrayLit(_) => {
                let help = self.allocation_help(e.span);
                self.report(
                    "an array literal creates an array in device code".into(),
                    e.span,
                    "allocates".into(),
                    help,
                )
            }
            ExprKind::Builtin(Builtin::HostCall, args) => self.host_call(args, e.span),
            ExprKind::Builtin(b, _) => self.builtin(*b, e.span),
            _ => {}
        }
        visit::walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, compound: bool) {
        if let (Some(f), PlaceKind::Var(v)) = (self.function, &p.kind) {
            let info = self.cx.program.vars.get(v.index());
            if let Some(info) = info.filter(|i| i.kind == VarKind::Global && i.ty.is_scalar()) {
                let var = info.name.clone();
                let name = self.cx.fn_name(f);
                self.report(
                    format!("device routine `{name}` writes global `{var}`"),
                    p.span,
                    format!("assigns global scalar `{var}`"),
                    format!("in device code a global scalar keeps its value from region entry: pass `{var}` in and return the new value, or keep it in an array"),
                );
            }
            // In device code a global array is the calling region's copy of it (its device
            // copy on a discrete device), which no assignment can rebind to another array.
            if let Some(info) = info.filter(|i| i.kind == VarKind::Global && i.ty.is_array()) {
                let var = info.name.clone();
                let name = self.cx.fn_name(f);
                self.report(
                    format!("device routine `{name}` rebinds global array `{var}`"),
                    p.span,
                    format!("assigns global array `{var}`"),
                    format!("in device code `{var}` is the region's copy of the array: assign its elements (`{var}[i] = …`), or rebind it on the host"),
                );
            }
        }
        // A region's arrays from outside are its copies (the device's, on a discrete device),
        // and its launch holds them: rebinding one would be seen by no one, and would drop
        // the launch's reference.
        if let (None, PlaceKind::Var(v)) = (self.function, &p.kind) {
            let info = self.cx.program.vars.get(v.index());
            if let Some(info) = info.filter(|i| i.ty.is_array() && !self.declared.contains(v)) {
                let var = info.name.clone();
                self.report(
                    format!("a compute region rebinds array `{var}`"),
                    p.span,
                    format!("assigns array `{var}`"),
                    format!("in a compute region `{var}` is the region's copy of the array: assign its elements (`{var}[i] = …`), or rebind it on the host before or after the region"),
                );
            }
        }
        let _ = compound;
        visit::walk_place(self, p);
    }

    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        // Regions and `acc routine` functions were checked by `validate`; a function compiled
        // for the device only because device code calls it was not.
        let in_plain_function = self
            .function
            .and_then(|f| self.cx.program.functions.get(f.index()))
            .is_some_and(|f| f.routine.is_none());
        if in_plain_function && !matches!(d.construct, Construct::Loop | Construct::Atomic(_)) {
            let name = self
                .function
                .map(|f| self.cx.fn_name(f))
                .unwrap_or_default();
            self.report(
                format!(
                    "`acc {}` in `{name}`, which is compiled for the device",
                    d.construct.name()
                ),
                d.construct_span,
                "not allowed in device code".into(),
                format!(
                    "move the directive to host code, or stop calling `{name}` from device code"
                ),
            );
        }
        visit::walk_directive(self, d);
    }
}
