//! Host code in order: what asynchronous operations and data constructs leave for the
//! statements after them. Two warnings for porting mistakes (LANGUAGE.md 8), each given only
//! where the code shows it for certain:
//!
//! - **A host access during an `async` transfer.** An `async` operation that writes the host's
//!   copy of an array (`update self`/`host`, the copy-out of an `async` compute construct,
//!   `data` construct or `exit data`) may still be running when the host reads or writes the
//!   array; one that reads it (`update device`, an `async` copy-in) may still be running when
//!   the host writes it. Until an `acc wait` (or `acc_wait`, …) that covers the operation's
//!   queue, or a synchronous construct whose `wait` clause does, such an access is a race.
//!   The flow is followed through straight-line code; after an `if`, only what both ways leave
//!   pending stays pending, and a loop starts from what nothing in its body waits for.
//!   Transfers of compute and data constructs count only where the array is certainly absent
//!   (see below), since a present array moves nothing; user functions that wait end every
//!   pending operation, and their accesses are not followed.
//! - **`present` of data nothing makes present.** In top-level code (a function cannot know
//!   what its callers hold; in the REPL, only arrays this input declares), a `present` clause,
//!   `default(present)` or `update` of an array that no enclosing `data` construct holds and
//!   that no `enter data`, `declare`, `acc_copyin`/`acc_create`, asynchronous construct or
//!   call of a function doing one of those can have made present before it: on a device with
//!   memory of its own the run stops there with the runtime's "not present" error.
//!
//! "Before" is in source order, or anywhere in a loop that holds both (a later iteration
//! runs it first). Arrays that share storage (`let b = a`) count as one; an array that may
//! hold any array (a parameter, a call's result) is never certainly absent.

use std::collections::HashSet;

use super::visit::{self, Visitor};
use super::{Cx, DataAttr, Implicit, RegionInfo};
use crate::builtins::Builtin;
use crate::diag::Diagnostic;
use crate::hir::{
    ClauseKind, Construct, DataClause, DeviceTypeName, Directive, Expr, ExprKind, FnId, Place,
    PlaceKind, Stmt, StmtKind, UpdateDir, VarId, VarKind,
};
use crate::span::Span;

/// Check top-level code and every function body of this compile.
pub(super) fn check(cx: &mut Cx, regions: &[RegionInfo]) {
    let program = cx.program;
    let effects = Effects::of(cx);
    let mut flow = Flow::new(cx, regions, &effects, None, &program.top);
    flow.block(&program.top);
    flow.report_absent();
    for f in program.new_functions() {
        let mut flow = Flow::new(cx, regions, &effects, Some(f.id), &f.body.stmts);
        flow.block(&f.body.stmts);
    }
}

// ---------------------------------------------------------------------------------------------
// What functions do
// ---------------------------------------------------------------------------------------------

/// What calling each function (or what it calls) may do, and what the whole program does.
struct Effects {
    /// Per function: it may make data present that outlives the call.
    enters: Vec<bool>,
    /// Per function: it may wait for a queue.
    waits: Vec<bool>,
    /// Some code changes the default queue (`acc_set_default_async`, `set default_async`).
    default_queue_moves: bool,
    /// Some code may select a device that shares host memory (where everything is present).
    may_select_shared: bool,
}

#[derive(Default)]
struct Direct {
    enters: bool,
    waits: bool,
    default_queue_moves: bool,
    may_select_shared: bool,
}

impl Visitor for Direct {
    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Builtin(b, args) = &e.kind {
            match b {
                Builtin::AccCopyin | Builtin::AccCreate => self.enters = true,
                Builtin::AccWait
                | Builtin::AccWaitAll
                | Builtin::AccWaitAsync
                | Builtin::AccAsyncTest
                | Builtin::AccAsyncTestAll => self.waits = true,
                Builtin::AccSetDefaultAsync => self.default_queue_moves = true,
                Builtin::AccSetDeviceType => self.may_select_shared |= !discrete(args.first()),
                Builtin::AccSetDeviceNum => self.may_select_shared |= !discrete(args.get(1)),
                // The embedding program's functions may do anything.
                Builtin::HostCall => {
                    self.enters = true;
                    self.waits = true;
                }
                _ => {}
            }
        }
        visit::walk_expr(self, e);
    }

    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        let is_async = d
            .clauses
            .iter()
            .any(|c| matches!(c.kind, ClauseKind::Async(_)));
        match d.construct {
            Construct::EnterData | Construct::Declare => self.enters = true,
            Construct::Wait => self.waits = true,
            Construct::Set => {
                for c in &d.clauses {
                    match &c.kind {
                        ClauseKind::DefaultAsync(_) => self.default_queue_moves = true,
                        ClauseKind::DeviceType(list) => {
                            self.may_select_shared |=
                                list.iter().any(|t| *t != DeviceTypeName::Nvidia)
                        }
                        _ => {}
                    }
                }
            }
            // Data of an asynchronous construct may stay present until its queue gets there.
            c if is_async && (c.is_compute() || c == Construct::Data) => self.enters = true,
            _ => {}
        }
        if d.clauses
            .iter()
            .any(|c| matches!(c.kind, ClauseKind::Wait(_)))
        {
            self.waits = true;
        }
        visit::walk_directive(self, d);
    }
}

/// Whether a device-type argument certainly names a device with memory of its own.
fn discrete(t: Option<&Expr>) -> bool {
    use acc_abi::DeviceType;
    let code = t.and_then(|e| e.as_const()).and_then(|c| c.as_i64());
    [DeviceType::Nvidia, DeviceType::Emulated]
        .iter()
        .any(|d| Some(i64::from(d.code())) == code)
}

impl Effects {
    fn of(cx: &Cx) -> Effects {
        let program = cx.program;
        let direct: Vec<Direct> = program
            .functions
            .iter()
            .map(|f| {
                let mut d = Direct::default();
                visit::walk_block(&mut d, &f.body);
                d
            })
            .collect();
        let mut top = Direct::default();
        for s in &program.top {
            top.stmt(s);
        }
        // Callers of each function, to carry each effect up the call graph.
        let mut callers: Vec<Vec<usize>> = vec![Vec::new(); direct.len()];
        for (caller, f) in cx.summaries.fns.iter().enumerate() {
            for call in &f.calls {
                if let Some(c) = callers.get_mut(call.callee.index()) {
                    c.push(caller);
                }
            }
        }
        let reach = |pick: fn(&Direct) -> bool| -> Vec<bool> {
            let mut on: Vec<bool> = direct.iter().map(pick).collect();
            let mut work: Vec<usize> = (0..on.len()).filter(|&i| on[i]).collect();
            while let Some(f) = work.pop() {
                for &c in &callers[f] {
                    if !on[c] {
                        on[c] = true;
                        work.push(c);
                    }
                }
            }
            on
        };
        let default_queue_moves =
            top.default_queue_moves || direct.iter().any(|d| d.default_queue_moves);
        let may_select_shared = top.may_select_shared || direct.iter().any(|d| d.may_select_shared);
        Effects {
            enters: reach(|d| d.enters),
            waits: reach(|d| d.waits),
            default_queue_moves,
            may_select_shared,
        }
    }

    fn enters(&self, f: FnId) -> bool {
        self.enters.get(f.index()).copied().unwrap_or(true)
    }

    fn waits(&self, f: FnId) -> bool {
        self.waits.get(f.index()).copied().unwrap_or(true)
    }
}

// ---------------------------------------------------------------------------------------------
// What may make data present
// ---------------------------------------------------------------------------------------------

/// Something in a body that may make an array present for the code after it.
struct Entry {
    /// Where it is (its start).
    at: u32,
    /// The loops around it.
    loops: Vec<Span>,
    /// The array; `None` for any array (a call, an array the analysis cannot name).
    var: Option<VarId>,
    /// The directive, when it is one (an operation is not its own earlier entry).
    directive: Option<Span>,
}

struct EntryScan<'a> {
    regions: &'a [RegionInfo],
    effects: &'a Effects,
    loops: Vec<Span>,
    entries: Vec<Entry>,
}

impl EntryScan<'_> {
    fn push(&mut self, at: Span, var: Option<VarId>, directive: Option<Span>) {
        self.entries.push(Entry {
            at: at.start,
            loops: self.loops.clone(),
            var,
            directive,
        });
    }
}

impl Visitor for EntryScan<'_> {
    fn stmt(&mut self, s: &Stmt) {
        let is_loop = matches!(s.kind, StmtKind::For(_) | StmtKind::While { .. });
        if is_loop {
            self.loops.push(s.span);
        }
        visit::walk_stmt(self, s);
        if is_loop {
            self.loops.pop();
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Builtin(Builtin::AccCopyin | Builtin::AccCreate, args) => {
                let var = args.first().and_then(array_var);
                self.push(e.span, var, None);
            }
            ExprKind::Builtin(Builtin::HostCall, _) => self.push(e.span, None, None),
            ExprKind::Call(f, _) if self.effects.enters(*f) => self.push(e.span, None, None),
            _ => {}
        }
        visit::walk_expr(self, e);
    }

    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        let is_async = d
            .clauses
            .iter()
            .any(|c| matches!(c.kind, ClauseKind::Async(_)));
        match d.construct {
            Construct::EnterData => {
                for r in data_refs(d) {
                    self.push(d.span, Some(r), Some(d.span));
                }
            }
            // A `declare` may act before any code runs: it counts from the start.
            Construct::Declare => {
                for r in data_refs(d) {
                    self.entries.push(Entry {
                        at: 0,
                        loops: Vec::new(),
                        var: Some(r),
                        directive: Some(d.span),
                    });
                }
            }
            Construct::Data if is_async => {
                for r in data_refs(d) {
                    self.push(d.span, Some(r), Some(d.span));
                }
            }
            c if c.is_compute() => {
                if is_async {
                    let vars: Vec<VarId> = self
                        .regions
                        .iter()
                        .find(|r| r.span == d.span)
                        .map(|r| r.vars.iter().map(|u| u.var).collect())
                        .unwrap_or_default();
                    for v in vars {
                        self.push(d.span, Some(v), Some(d.span));
                    }
                }
                // Device code makes nothing present; its clauses' expressions run on the host.
                for c in &d.clauses {
                    visit::walk_clause(self, c);
                }
                return;
            }
            _ => {}
        }
        visit::walk_directive(self, d);
    }
}

/// The variables a directive's data clauses name.
fn data_refs(d: &Directive) -> impl Iterator<Item = VarId> + '_ {
    d.clauses.iter().flat_map(|c| match &c.kind {
        ClauseKind::Data(_, refs) => refs.iter().map(|r| r.var).collect(),
        _ => Vec::new(),
    })
}

/// The array an argument of a data routine names (`a` or `a[i:n]`).
fn array_var(e: &Expr) -> Option<VarId> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Section { base, .. } => base.as_var(),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------
// The walk
// ---------------------------------------------------------------------------------------------

/// A queue of an `async` operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Queue {
    /// `async` without an argument, or `acc_async_noval` (-1).
    Default,
    Num(i64),
    /// Computed at run time.
    Unknown,
}

/// `async` with this argument: `None` for `acc_async_sync` (-2), which is synchronous.
fn queue_of(e: Option<&Expr>) -> Option<Queue> {
    let Some(e) = e else {
        return Some(Queue::Default);
    };
    match e.as_const().and_then(|c| c.as_i64()) {
        Some(-1) => Some(Queue::Default),
        Some(-2) => None,
        Some(q) => Some(Queue::Num(q)),
        None => Some(Queue::Unknown),
    }
}

/// An asynchronous transfer that may still be running.
#[derive(Clone, Debug)]
struct Pending {
    var: VarId,
    /// It writes the host's copy (device to host): host reads and writes race with it.
    to_host: bool,
    /// It reads the host's copy (host to device): host writes race with it.
    from_host: bool,
    /// A wait for any of these ends it (`acc wait(q) async(r)` adds `r`).
    queues: Vec<Queue>,
    /// The variable in its clause, or its construct.
    at: Span,
    /// What the operation does here, for the message.
    label: String,
}

impl Pending {
    fn same(&self, other: &Pending) -> bool {
        self.at == other.at && self.var == other.var && self.to_host == other.to_host
    }
}

/// A `present` clause, `default(present)` or `update` in top-level code.
struct PresenceSite {
    var: VarId,
    /// The variable in the clause (or its first use, for `default(present)`).
    span: Span,
    /// `present`, `default(present)` or `update`.
    how: &'static str,
    /// The loops around it.
    loops: Vec<Span>,
}

struct Flow<'c, 'p, 'a> {
    cx: &'c mut Cx<'p>,
    regions: &'a [RegionInfo],
    effects: &'a Effects,
    /// The function whose body this is; `None` for top-level code.
    function: Option<FnId>,
    entries: Vec<Entry>,
    loops: Vec<Span>,
    /// The arrays each enclosing `data` construct names.
    held: Vec<Vec<VarId>>,
    pending: Vec<Pending>,
    /// The operations already warned of.
    warned: HashSet<(Span, VarId, bool)>,
    sites: Vec<PresenceSite>,
}

impl<'c, 'p, 'a> Flow<'c, 'p, 'a> {
    fn new(
        cx: &'c mut Cx<'p>,
        regions: &'a [RegionInfo],
        effects: &'a Effects,
        function: Option<FnId>,
        body: &[Stmt],
    ) -> Flow<'c, 'p, 'a> {
        let mut scan = EntryScan {
            regions,
            effects,
            loops: Vec::new(),
            entries: Vec::new(),
        };
        for s in body {
            scan.stmt(s);
        }
        Flow {
            cx,
            regions,
            effects,
            function,
            entries: scan.entries,
            loops: Vec::new(),
            held: Vec::new(),
            pending: Vec::new(),
            warned: HashSet::new(),
            sites: Vec::new(),
        }
    }

    fn block(&mut self, stmts: &[Stmt]) {
        for s in stmts {
            self.stmt(s);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { init, .. } => self.expr(init),
            StmtKind::Assign { place, op, value } => {
                self.expr(value);
                self.assign(place, op.is_some());
            }
            StmtKind::Expr(e) => self.expr(e),
            StmtKind::If { cond, then, els } => {
                self.expr(cond);
                let before = self.pending.clone();
                self.block(&then.stmts);
                let then_end = std::mem::replace(&mut self.pending, before);
                if let Some(els) = els {
                    self.stmt(els);
                }
                self.merge(then_end);
            }
            StmtKind::While { cond, body } => {
                self.loop_head(s);
                self.loops.push(s.span);
                self.expr(cond);
                let head = self.pending.clone();
                self.block(&body.stmts);
                self.pending = head;
                self.loops.pop();
            }
            StmtKind::For(f) => {
                self.expr(&f.start);
                self.expr(&f.end);
                if let Some(step) = &f.step {
                    self.expr(step);
                }
                self.loop_head(s);
                self.loops.push(s.span);
                let head = self.pending.clone();
                self.block(&f.body.stmts);
                self.pending = head;
                self.loops.pop();
            }
            StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Block(b) => self.block(&b.stmts),
            StmtKind::Directive(d) => self.directive(d),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue => {}
        }
    }

    /// After an `if`: what both ways leave pending (a wait on either way's queues ends it).
    fn merge(&mut self, other: Vec<Pending>) {
        let mut kept = Vec::new();
        for p in std::mem::take(&mut self.pending) {
            if let Some(o) = other.iter().find(|o| o.same(&p)) {
                let mut p = p;
                for q in &o.queues {
                    if !p.queues.contains(q) {
                        p.queues.push(*q);
                    }
                }
                kept.push(p);
            }
        }
        self.pending = kept;
    }

    /// What is pending at the start of every iteration of the loop `s`: what is pending
    /// before it and nothing in it waits for or rebinds.
    fn loop_head(&mut self, s: &Stmt) {
        let mut scan = WaitScan {
            effects: self.effects,
            all: false,
            queues: Vec::new(),
            rebound: Vec::new(),
        };
        scan.stmt(s);
        if scan.all {
            self.pending.clear();
            return;
        }
        let moves = self.effects.default_queue_moves;
        self.pending.retain(|p| {
            !scan.rebound.contains(&p.var)
                && !p.queues.iter().any(|q| covers(&scan.queues, *q, moves))
        });
    }

    /// `place = …` or `place op= …`.
    fn assign(&mut self, place: &Place, compound: bool) {
        match &place.kind {
            PlaceKind::Var(v) => {
                // The variable names other storage from here on.
                if self.cx.var_ty(*v).is_array() {
                    self.pending.retain(|p| p.var != *v);
                }
            }
            PlaceKind::Index { base, indices } => {
                for i in indices {
                    self.expr(i);
                }
                match base.as_var() {
                    Some(v) => self.access(v, true, compound, place.span),
                    None => self.expr(base),
                }
            }
        }
    }

    /// Host code evaluates `e`: its accesses in order, and the waits of the routines it calls.
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Index { base, indices } => {
                for i in indices {
                    self.expr(i);
                }
                match base.as_var() {
                    Some(v) => self.access(v, false, true, e.span),
                    None => self.expr(base),
                }
            }
            ExprKind::Builtin(b, args) => {
                let reads = !b.is_runtime_routine()
                    && !matches!(
                        b,
                        Builtin::Len | Builtin::Size | Builtin::Rank | Builtin::Reshape
                    );
                for a in args {
                    match a.as_var() {
                        Some(v) if a.ty.is_array() => {
                            if reads {
                                self.access(v, false, true, a.span);
                            }
                        }
                        _ => self.expr(a),
                    }
                }
                self.builtin_waits(*b, args);
            }
            ExprKind::Call(f, args) => {
                for a in args {
                    self.expr(a);
                }
                if self.effects.waits(*f) {
                    self.pending.clear();
                }
            }
            ExprKind::If(c, a, b) => {
                self.expr(c);
                let before = self.pending.clone();
                self.expr(a);
                let a_end = std::mem::replace(&mut self.pending, before);
                self.expr(b);
                self.merge(a_end);
            }
            ExprKind::Block(stmts, last) => {
                self.block(stmts);
                self.expr(last);
            }
            _ => visit::walk_expr(&mut ExprWalk(self), e),
        }
    }

    fn builtin_waits(&mut self, b: Builtin, args: &[Expr]) {
        match b {
            Builtin::AccWait | Builtin::AccAsyncTest => self.wait(&args[..args.len().min(1)]),
            Builtin::AccWaitAll | Builtin::AccAsyncTestAll | Builtin::HostCall => {
                self.pending.clear()
            }
            Builtin::AccWaitAsync => {
                if let (Some(q), Some(r)) = (args.first(), args.get(1)) {
                    self.join(std::slice::from_ref(q), queue_of(Some(r)));
                }
            }
            _ => {}
        }
    }

    /// The host waits for the queues `qs` (every queue when empty).
    fn wait(&mut self, qs: &[Expr]) {
        let keys: Vec<Queue> = qs.iter().filter_map(|q| queue_of(Some(q))).collect();
        if qs.is_empty() || keys.contains(&Queue::Unknown) {
            self.pending.clear();
            return;
        }
        let moves = self.effects.default_queue_moves;
        self.pending
            .retain(|p| !p.queues.iter().any(|q| covers(&keys, *q, moves)));
    }

    /// Queue `to` waits for the queues `qs` (every queue when empty): a wait for `to` now ends
    /// their operations too.
    fn join(&mut self, qs: &[Expr], to: Option<Queue>) {
        let Some(to) = to else {
            // `async(acc_async_sync)`: the host waits.
            self.wait(qs);
            return;
        };
        let keys: Vec<Queue> = qs.iter().filter_map(|q| queue_of(Some(q))).collect();
        let all = qs.is_empty() || keys.contains(&Queue::Unknown);
        let moves = self.effects.default_queue_moves;
        for p in &mut self.pending {
            if (all || p.queues.iter().any(|q| covers(&keys, *q, moves))) && !p.queues.contains(&to)
            {
                p.queues.push(to);
            }
        }
    }

    fn directive(&mut self, d: &Directive) {
        // The clauses' expressions run on the host first.
        for c in &d.clauses {
            for e in c.kind.exprs() {
                self.expr(e);
            }
            for r in c.kind.vars() {
                for range in r.sections.iter().flatten() {
                    if let Some(s) = &range.start {
                        self.expr(s);
                    }
                    if let Some(n) = &range.count {
                        self.expr(n);
                    }
                }
            }
        }
        let mut queue = None;
        let mut is_async = false;
        let mut waits: Option<&[Expr]> = None;
        let mut conditional = false;
        let mut if_present = false;
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Async(q) => {
                    is_async = true;
                    queue = queue_of(q.as_ref());
                }
                ClauseKind::Wait(qs) => waits = Some(qs),
                ClauseKind::If(e) => {
                    conditional |= !matches!(e.as_const(), Some(crate::hir::Const::Bool(true)))
                }
                ClauseKind::SelfCond(_) => conditional = true,
                ClauseKind::IfPresent => if_present = true,
                _ => {}
            }
        }
        // `acc_async_sync` is synchronous.
        let queue = if is_async { queue } else { None };
        if d.construct == Construct::Wait {
            match queue {
                Some(q) => self.join(waits.unwrap_or(&[]), Some(q)),
                None => self.wait(waits.unwrap_or(&[])),
            }
            return;
        }
        // A `wait` clause delays the operation; a synchronous one makes the host wait too.
        if let Some(qs) = waits {
            match queue {
                Some(q) => self.join(qs, Some(q)),
                None => self.wait(qs),
            }
        }
        match d.construct {
            c if c.is_compute() => self.compute(d, queue, conditional),
            Construct::Data => {
                let transfers = match (queue, conditional) {
                    (Some(q), false) => self.data_transfers(d, q),
                    _ => Vec::new(),
                };
                if self.function.is_none() && !conditional {
                    self.presence_sites(d, "present");
                }
                // The copy-ins run while the body runs, the copy-outs after it.
                let (ins, outs): (Vec<Pending>, Vec<Pending>) =
                    transfers.into_iter().partition(|p| p.from_host);
                self.pending.extend(ins);
                self.held.push(data_refs(d).collect());
                if let Some(body) = &d.body {
                    self.stmt(body);
                }
                self.held.pop();
                self.pending.extend(outs);
            }
            Construct::EnterData => {
                if let (Some(q), false) = (queue, conditional) {
                    for c in &d.clauses {
                        let ClauseKind::Data(DataClause::CopyIn, refs) = &c.kind else {
                            continue;
                        };
                        for r in refs {
                            if self.certainly_absent(r.var, d.span) {
                                self.pending.push(Pending {
                                    var: r.var,
                                    to_host: false,
                                    from_host: true,
                                    queues: vec![q],
                                    at: r.span,
                                    label:
                                        "copied from the host asynchronously by this `enter data`"
                                            .into(),
                                });
                            }
                        }
                    }
                }
            }
            Construct::ExitData => {
                if let (Some(q), false) = (queue, conditional) {
                    for c in &d.clauses {
                        let ClauseKind::Data(DataClause::CopyOut, refs) = &c.kind else {
                            continue;
                        };
                        for r in refs {
                            // Inside a data construct that holds it nothing leaves.
                            if !self.is_held(r.var) && self.known_storage(r.var) {
                                self.pending.push(Pending {
                                    var: r.var,
                                    to_host: true,
                                    from_host: false,
                                    queues: vec![q],
                                    at: r.span,
                                    label: "copied to the host asynchronously by this `exit data`"
                                        .into(),
                                });
                            }
                        }
                    }
                }
            }
            Construct::Update => {
                if self.function.is_none() && !conditional && !if_present {
                    self.presence_sites(d, "update");
                }
                if let (Some(q), false, false) = (queue, conditional, if_present) {
                    for c in &d.clauses {
                        let ClauseKind::Update(dir, refs) = &c.kind else {
                            continue;
                        };
                        let (to_host, label) = match dir {
                            UpdateDir::Device => (
                                false,
                                "copied from the host asynchronously by this `update`",
                            ),
                            UpdateDir::Host | UpdateDir::Self_ => {
                                (true, "copied to the host asynchronously by this `update`")
                            }
                        };
                        for r in refs {
                            if self.cx.var_ty(r.var).is_array() {
                                self.pending.push(Pending {
                                    var: r.var,
                                    to_host,
                                    from_host: !to_host,
                                    queues: vec![q],
                                    at: r.span,
                                    label: label.into(),
                                });
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// A compute construct: its transfers when `async`; its `present` requirements.
    fn compute(&mut self, d: &Directive, queue: Option<Queue>, conditional: bool) {
        let Some(region) = self.regions.iter().find(|r| r.span == d.span) else {
            return;
        };
        if self.function.is_none() && !conditional {
            self.presence_sites(d, "present");
            for u in &region.vars {
                if matches!(u.attr, DataAttr::Implicit(Implicit::Present))
                    && region.default == Some(crate::hir::DefaultKind::Present)
                {
                    if let Some(span) = u.first_use {
                        self.site(u.var, span, "default(present)");
                    }
                }
            }
        }
        let Some(q) = queue else {
            return;
        };
        // A construct with results for the host waits for its queue (LANGUAGE.md 8).
        let results = !region.reductions.is_empty()
            || region.vars.iter().any(|u| {
                !u.ty.is_array()
                    && matches!(
                        u.attr,
                        DataAttr::Clause {
                            clause: DataClause::Copy | DataClause::CopyOut,
                            ..
                        } | DataAttr::Implicit(Implicit::Copy)
                    )
            });
        if results {
            self.wait_queue(q);
            return;
        }
        if conditional {
            return;
        }
        let mut new = Vec::new();
        for u in &region.vars {
            if !u.ty.is_array() || u.held_by.is_some() {
                continue;
            }
            // Copy-ins and copy-outs the implementation may skip for an implicit `copy` of an
            // array the region does not read (write) count only where it does.
            let (from_host, to_host, at, what) = match &u.attr {
                DataAttr::Clause { clause, span, .. } => match clause {
                    DataClause::Copy => (true, u.written, *span, String::new()),
                    DataClause::CopyIn => (true, false, *span, String::new()),
                    DataClause::CopyOut => (false, true, *span, String::new()),
                    _ => continue,
                },
                DataAttr::Implicit(Implicit::Copy) => (
                    u.read,
                    u.written,
                    d.construct_span,
                    format!("`{}` (implicit `copy`) ", u.name),
                ),
                _ => continue,
            };
            if !(from_host || to_host) || !self.certainly_absent(u.var, d.span) {
                continue;
            }
            // One operation each way: the copy-in at the start, the copy-out at the end.
            if from_host {
                new.push(Pending {
                    var: u.var,
                    to_host: false,
                    from_host: true,
                    queues: vec![q],
                    at,
                    label: format!(
                        "{what}copied from the host asynchronously as this construct starts"
                    ),
                });
            }
            if to_host {
                new.push(Pending {
                    var: u.var,
                    to_host: true,
                    from_host: false,
                    queues: vec![q],
                    at,
                    label: format!(
                        "{what}copied to the host asynchronously as this construct ends"
                    ),
                });
            }
        }
        self.pending.extend(new);
    }

    /// The transfers of an asynchronous `data` construct on queue `q`, of arrays certainly
    /// absent before it.
    fn data_transfers(&self, d: &Directive, q: Queue) -> Vec<Pending> {
        let mut out = Vec::new();
        for c in &d.clauses {
            let ClauseKind::Data(clause, refs) = &c.kind else {
                continue;
            };
            let (from_host, to_host) = match clause {
                DataClause::Copy => (true, true),
                DataClause::CopyIn => (true, false),
                DataClause::CopyOut => (false, true),
                _ => continue,
            };
            for r in refs {
                if !self.cx.var_ty(r.var).is_array() || !self.certainly_absent(r.var, d.span) {
                    continue;
                }
                if from_host {
                    out.push(Pending {
                        var: r.var,
                        to_host: false,
                        from_host: true,
                        queues: vec![q],
                        at: r.span,
                        label:
                            "copied from the host asynchronously as this `data` construct starts"
                                .into(),
                    });
                }
                if to_host {
                    out.push(Pending {
                        var: r.var,
                        to_host: true,
                        from_host: false,
                        queues: vec![q],
                        at: r.span,
                        label: "copied to the host asynchronously as this `data` construct ends"
                            .into(),
                    });
                }
            }
        }
        out
    }

    /// Queue `q` is drained before the next statement.
    fn wait_queue(&mut self, q: Queue) {
        let moves = self.effects.default_queue_moves;
        match q {
            Queue::Unknown => self.pending.clear(),
            q => self
                .pending
                .retain(|p| !p.queues.iter().any(|x| covers(&[q], *x, moves))),
        }
    }

    /// The host reads (`read`) and/or writes (`write`) an element of `v`.
    fn access(&mut self, v: VarId, write: bool, read: bool, span: Span) {
        let mut found = Vec::new();
        for p in &self.pending {
            if !self.cx.aliases.same_storage(p.var, v) {
                continue;
            }
            let races = (p.to_host && (read || write)) || (p.from_host && write);
            if races && !self.warned.contains(&(p.at, p.var, p.to_host)) {
                found.push(p.clone());
            }
        }
        for p in found {
            self.warned.insert((p.at, p.var, p.to_host));
            self.async_warning(&p, v, write, span);
        }
    }

    fn async_warning(&mut self, p: &Pending, v: VarId, write: bool, span: Span) {
        let name = self.cx.var_name(v);
        let (message, label) = match (write, p.to_host) {
            (false, _) => (
                format!("`{name}` is read on the host while an asynchronous copy to the host may still be writing it"),
                "read before a wait",
            ),
            (true, true) => (
                format!("`{name}` is written on the host while an asynchronous copy to the host may still overwrite it"),
                "written before a wait",
            ),
            (true, false) => (
                format!("`{name}` is written on the host while an asynchronous copy to the device may still be reading it"),
                "written before a wait",
            ),
        };
        let wait = match p.queues.first() {
            Some(Queue::Num(q)) => {
                format!("add `acc wait({q})` before this access (or `acc wait`, for every queue)")
            }
            Some(Queue::Default) => "add `acc wait` before this access".to_string(),
            _ => "add `acc wait(q)` with the operation's queue before this access (or `acc wait`, for every queue)".to_string(),
        };
        self.cx.diags.push(
            Diagnostic::warning(message, span, label)
                .with_label(p.at, p.label.clone())
                .with_help(format!(
                    "{wait}: until then the operation may still be running"
                )),
        );
    }

    /// Whether an enclosing `data` construct of this body names `v` (or storage it shares).
    fn is_held(&self, v: VarId) -> bool {
        self.held
            .iter()
            .flatten()
            .any(|h| self.cx.aliases.same_storage(*h, v))
    }

    /// Whether `v` names storage this body alone can make present: arrays declared by this
    /// compile's top-level code (for top-level code) or locals of the function, bound only to
    /// each other and to fresh arrays.
    fn known_storage(&self, v: VarId) -> bool {
        let Some(class) = self.cx.aliases.class_of(v) else {
            return false;
        };
        let program = self.cx.program;
        class.iter().all(|w| {
            let Some(info) = program.vars.get(w.index()) else {
                return false;
            };
            match self.function {
                None => w.0 >= program.first_new_var && info.owner.is_none(),
                Some(f) => info.owner == Some(f) && info.kind == VarKind::Local,
            }
        })
    }

    /// Whether `v` is certainly absent at the directive `at`: storage of this body's own that
    /// no enclosing data construct holds and nothing before (see the module's comment) may have
    /// made present.
    fn certainly_absent(&self, v: VarId, at: Span) -> bool {
        if !self.known_storage(v) || self.is_held(v) {
            return false;
        }
        !self.entries.iter().any(|e| {
            e.directive != Some(at)
                && e.var.is_none_or(|w| self.cx.aliases.same_storage(w, v))
                && (e.at < at.start || e.loops.iter().any(|l| self.loops.contains(l)))
        })
    }

    /// The arrays a `present` clause (or, for `update`, any clause) of `d` requires.
    fn presence_sites(&mut self, d: &Directive, how: &'static str) {
        for c in &d.clauses {
            let refs = match &c.kind {
                ClauseKind::Data(DataClause::Present, refs) if how == "present" => refs,
                ClauseKind::Update(_, refs) if how == "update" => refs,
                _ => continue,
            };
            for r in refs {
                self.site(r.var, r.span, how);
            }
        }
    }

    fn site(&mut self, var: VarId, span: Span, how: &'static str) {
        if !self.cx.var_ty(var).is_array() || self.is_held(var) {
            return;
        }
        self.sites.push(PresenceSite {
            var,
            span,
            how,
            loops: self.loops.clone(),
        });
    }

    /// Top-level code: the presence warnings, one per array (the run stops at the first).
    fn report_absent(&mut self) {
        if self.effects.may_select_shared {
            return;
        }
        let sites = std::mem::take(&mut self.sites);
        let mut reported: Vec<VarId> = Vec::new();
        for s in sites {
            if reported
                .iter()
                .any(|r| self.cx.aliases.same_storage(*r, s.var))
            {
                continue;
            }
            let absent = self.known_storage(s.var)
                && !self.entries.iter().any(|e| {
                    e.var.is_none_or(|w| self.cx.aliases.same_storage(w, s.var))
                        && (e.at < s.span.start || e.loops.iter().any(|l| s.loops.contains(l)))
                });
            if !absent {
                continue;
            }
            reported.push(s.var);
            let name = self.cx.var_name(s.var);
            let (label, runtime) = match s.how {
                "update" => (
                    "`update` needs it on the device".to_string(),
                    format!("`update` of `{name}`, which is not present on …"),
                ),
                "default(present)" => (
                    format!("`default(present)` needs `{name}` on the device"),
                    format!("`{name}` is not present on …"),
                ),
                _ => (
                    "`present` needs it on the device".to_string(),
                    format!("`{name}` is not present on …"),
                ),
            };
            self.cx.diags.push(
                Diagnostic::warning(
                    format!("`{name}` is not on the device here: no data construct around this holds it and nothing before makes it present"),
                    s.span,
                    label,
                )
                .with_help(format!(
                    "wrap this code in `acc data copy({name}) {{ … }}`, or put `acc enter data copyin({name})` before it{}; as it is, a device with memory of its own (nvidia, emulated) stops the run here with \"{runtime}\"",
                    if s.how == "update" { ", or add `if_present` to skip it while absent" } else { "" }
                )),
            );
        }
    }
}

/// Whether a wait for the queues `keys` ends an operation on queue `q`. `moves`: the program
/// changes the default queue, which may then be any numbered one.
fn covers(keys: &[Queue], q: Queue, moves: bool) -> bool {
    match q {
        Queue::Unknown => true,
        Queue::Default if moves => true,
        q => {
            keys.contains(&q)
                || keys.contains(&Queue::Unknown)
                || (moves && keys.contains(&Queue::Default))
        }
    }
}

/// Expressions without accesses of their own: their parts, in order.
struct ExprWalk<'f, 'c, 'p, 'a>(&'f mut Flow<'c, 'p, 'a>);

impl Visitor for ExprWalk<'_, '_, '_, '_> {
    fn expr(&mut self, e: &Expr) {
        self.0.expr(e);
    }
}

/// What a loop body waits for, and the arrays it rebinds.
struct WaitScan<'a> {
    effects: &'a Effects,
    /// It may wait for every queue.
    all: bool,
    queues: Vec<Queue>,
    rebound: Vec<VarId>,
}

impl WaitScan<'_> {
    fn queues(&mut self, qs: &[Expr]) {
        if qs.is_empty() {
            self.all = true;
        }
        for q in qs {
            match queue_of(Some(q)) {
                Some(Queue::Unknown) | None => self.all = true,
                Some(q) => self.queues.push(q),
            }
        }
    }
}

impl Visitor for WaitScan<'_> {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Builtin(b, args) => match b {
                Builtin::AccWait | Builtin::AccAsyncTest | Builtin::AccWaitAsync => {
                    self.queues(&args[..args.len().min(1)])
                }
                Builtin::AccWaitAll | Builtin::AccAsyncTestAll | Builtin::HostCall => {
                    self.all = true
                }
                _ => {}
            },
            ExprKind::Call(f, _) if self.effects.waits(*f) => self.all = true,
            _ => {}
        }
        visit::walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, compound: bool) {
        if let PlaceKind::Var(v) = p.kind {
            self.rebound.push(v);
        }
        let _ = compound;
        visit::walk_place(self, p);
    }

    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Wait(qs) => self.queues(qs),
                // An asynchronous compute construct may drain its queue (results for the host).
                ClauseKind::Async(q) if d.construct.is_compute() => match queue_of(q.as_ref()) {
                    Some(Queue::Unknown) => self.all = true,
                    Some(q) => self.queues.push(q),
                    None => {}
                },
                _ => {}
            }
        }
        if d.construct == Construct::Wait
            && !d
                .clauses
                .iter()
                .any(|c| matches!(c.kind, ClauseKind::Wait(_)))
        {
            self.all = true;
        }
        visit::walk_directive(self, d);
    }
}
