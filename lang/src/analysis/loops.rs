//! Loop nests of compute regions and routines, and their schedules (LANGUAGE.md 7.2).
//!
//! Two passes: first collect the loops (those with a directive, and in `kernels` regions every
//! `for`) into a tree, recording what each one names and what its body holds; then resolve the
//! schedules top-down. A loop that names no level takes one by 7.2's rules, given the level of
//! the loops around it and of the loops (and routine calls) inside it:
//! - outside any partitioned loop of a `parallel` region: `gang`, plus `vector` when nothing
//!   inside it takes a level;
//! - inside a `gang` loop: `vector`, or `worker` when something inside it is `vector`;
//! - inside a `worker` loop: `vector`;
//! - when no level is left between the enclosing loop's and the inner one's, `seq` (so that a
//!   defaulted loop never breaks the gang > worker > vector order; explicit orders are checked
//!   by `validate`).
//!
//! `kernels` loops without a level are `auto`, `serial` loops `seq`, and a routine's loops default
//! as in a region, below the routine's own level.

use super::dependence::{self, Verdict};
use super::visit::{self, Visitor};
use super::{Cx, Levels, LoopInfo, ReductionInfo, Schedule, Size};
use crate::diag::Diagnostic;
use crate::hir::{
    Block, ClauseKind, Construct, DataRef, DeviceTypeName, Directive, Expr, ExprKind, FnId,
    ForLoop, ReductionOp, RoutineLevel, Stmt, StmtKind, VarId,
};
use crate::span::Span;
use crate::validate::Level;

/// What kind of device code the loops are in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LoopContext {
    Parallel,
    Kernels,
    Serial,
    Routine(RoutineLevel),
}

impl LoopContext {
    pub fn of_construct(c: Construct) -> LoopContext {
        match c {
            Construct::Kernels | Construct::KernelsLoop => LoopContext::Kernels,
            Construct::Serial | Construct::SerialLoop => LoopContext::Serial,
            _ => LoopContext::Parallel,
        }
    }
}

/// Where the loops start: a combined construct's own loop, or a block.
pub(super) enum Root<'a> {
    Combined {
        directive: &'a Directive,
        for_loop: &'a ForLoop,
        for_span: Span,
    },
    Block(&'a Block),
}

/// Collect and resolve the loops under `root`; reports reduction and routine-call errors, and
/// races on scalars. `reduced`: the variables a `reduction` clause of the construct covers.
pub(super) fn collect(
    cx: &mut Cx,
    context: LoopContext,
    root: Root<'_>,
    reduced: &[VarId],
) -> Vec<LoopInfo> {
    let mut scan = Scan {
        cx,
        context,
        reduced: reduced.to_vec(),
        nodes: Vec::new(),
        targets: Vec::new(),
        calls: Vec::new(),
    };
    match root {
        Root::Combined {
            directive,
            for_loop,
            for_span,
        } => scan.node(Some(directive), for_loop, for_span, None),
        Root::Block(b) => scan.block(b, None),
    }
    scan.resolve()
}

/// What a `break` would leave.
#[derive(Clone, Copy)]
enum Target {
    /// A loop of the tree (or one of its associated loops).
    Node(usize),
    /// A `for`/`while` that is not in the tree.
    Plain,
}

struct Node {
    info: LoopInfo,
    /// Levels named explicitly (as they apply on NVIDIA devices).
    explicit: Levels,
    seq: bool,
    auto: bool,
    /// The dependence test's verdict, for a loop whose schedule the compiler chooses.
    verdict: Option<Verdict>,
    /// For a loop the program partitions: the scalars from outside it that every iteration
    /// assigns (a race unless a clause makes them private or reduced).
    writes: Vec<dependence::OutsideWrite>,
    /// Variables its `reduction` clauses name, valid or not (a rejected one has its error).
    reduction_named: Vec<VarId>,
}

impl Node {
    /// Whether the compiler chooses the schedule: `auto`, and in `kernels` regions every loop
    /// that names no level, `seq` or `independent`.
    fn compiler_chooses(&self, context: LoopContext) -> bool {
        let open = self.explicit.is_empty() && !self.seq;
        match context {
            LoopContext::Kernels => open && (self.auto || !self.info.independent),
            LoopContext::Serial => false,
            LoopContext::Parallel | LoopContext::Routine(_) => open && self.auto,
        }
    }

    /// The dependence test found the iterations independent.
    fn proven(&self) -> bool {
        matches!(self.verdict, Some(Verdict::Parallel { .. }))
    }

    /// A loop whose level the defaulting rules pick.
    fn takes_default(&self, context: LoopContext) -> bool {
        let unmarked =
            self.info.has_directive && self.explicit.is_empty() && !self.seq && !self.auto;
        match context {
            LoopContext::Parallel | LoopContext::Routine(_) if self.proven() => true,
            LoopContext::Parallel => unmarked,
            LoopContext::Kernels => (unmarked && self.info.independent) || self.proven(),
            LoopContext::Serial | LoopContext::Routine(RoutineLevel::Seq) => false,
            LoopContext::Routine(_) => unmarked,
        }
    }
}

struct Scan<'c, 'p> {
    cx: &'c mut Cx<'p>,
    context: LoopContext,
    /// Variables a `reduction` clause of the construct covers.
    reduced: Vec<VarId>,
    nodes: Vec<Node>,
    targets: Vec<Target>,
    /// Calls of user functions and the loop they are in.
    calls: Vec<(FnId, Span, Option<usize>)>,
}

impl Scan<'_, '_> {
    fn block(&mut self, b: &Block, parent: Option<usize>) {
        for s in &b.stmts {
            self.stmt(s, parent);
        }
    }

    fn stmt(&mut self, s: &Stmt, parent: Option<usize>) {
        match &s.kind {
            StmtKind::Directive(d) => {
                for c in &d.clauses {
                    let mut calls = CallFinder::default();
                    visit::walk_clause(&mut calls, c);
                    self.note_calls(calls, parent);
                }
                match (d.construct, d.body.as_deref()) {
                    (
                        Construct::Loop,
                        Some(
                            body @ Stmt {
                                kind: StmtKind::For(f),
                                ..
                            },
                        ),
                    ) => self.node(Some(d), f, body.span, parent),
                    (_, Some(body)) => self.stmt(body, parent),
                    (_, None) => {}
                }
            }
            StmtKind::For(f) if self.context == LoopContext::Kernels => {
                self.node(None, f, s.span, parent)
            }
            StmtKind::For(f) => {
                self.exprs([Some(&f.start), Some(&f.end), f.step.as_ref()], parent);
                self.targets.push(Target::Plain);
                self.block(&f.body, parent);
                self.targets.pop();
            }
            StmtKind::While { cond, body } => {
                self.exprs([Some(cond)], parent);
                self.targets.push(Target::Plain);
                self.block(body, parent);
                self.targets.pop();
            }
            StmtKind::If { cond, then, els } => {
                self.exprs([Some(cond)], parent);
                self.block(then, parent);
                if let Some(els) = els {
                    self.stmt(els, parent);
                }
            }
            StmtKind::Block(b) => self.block(b, parent),
            StmtKind::Break => {
                if let Some(Target::Node(i)) = self.targets.last() {
                    if let Some(n) = self.nodes.get_mut(*i) {
                        n.info.has_break = true;
                    }
                }
            }
            StmtKind::Let { .. }
            | StmtKind::Assign { .. }
            | StmtKind::Expr(_)
            | StmtKind::Return(_)
            | StmtKind::Continue => {
                let mut calls = CallFinder::default();
                visit::walk_stmt(&mut calls, s);
                self.note_calls(calls, parent);
            }
        }
    }

    fn exprs<'e>(
        &mut self,
        exprs: impl IntoIterator<Item = Option<&'e Expr>>,
        parent: Option<usize>,
    ) {
        let mut calls = CallFinder::default();
        for e in exprs.into_iter().flatten() {
            calls.expr(e);
        }
        self.note_calls(calls, parent);
    }

    fn note_calls(&mut self, calls: CallFinder, parent: Option<usize>) {
        self.calls
            .extend(calls.calls.into_iter().map(|(f, span)| (f, span, parent)));
    }

    /// A loop of the tree: its clauses, its associated loops, then its body.
    fn node(
        &mut self,
        directive: Option<&Directive>,
        f: &ForLoop,
        for_span: Span,
        parent: Option<usize>,
    ) {
        let mut node = Node {
            info: LoopInfo {
                parent,
                span: directive.map_or(for_span, |d| d.span),
                for_span,
                has_directive: directive.is_some(),
                vars: vec![f.var],
                schedule: Schedule::Seq,
                reason: String::new(),
                collapse: 1,
                tile: None,
                independent: false,
                gang_size: None,
                worker_size: None,
                vector_size: None,
                private: Vec::new(),
                privatized: Vec::new(),
                distinct: Vec::new(),
                reductions: Vec::new(),
                has_break: false,
            },
            explicit: Levels::default(),
            seq: false,
            auto: false,
            verdict: None,
            writes: Vec::new(),
            reduction_named: Vec::new(),
        };
        if let Some(d) = directive {
            self.read_clauses(d, &mut node);
        }
        let depth = node
            .info
            .collapse
            .max(node.info.tile.as_ref().map_or(1, |t| t.len() as u32));
        let mut innermost = f;
        for _ in 1..depth {
            match innermost.body.stmts.as_slice() {
                [Stmt {
                    kind: StmtKind::For(next),
                    ..
                }] => {
                    node.info.vars.push(next.var);
                    innermost = next;
                }
                _ => break,
            }
        }
        let index = self.nodes.len();
        let associated = node.info.vars.len();
        self.nodes.push(node);
        self.exprs([Some(&f.start), Some(&f.end), f.step.as_ref()], parent);
        for _ in 0..associated {
            self.targets.push(Target::Node(index));
        }
        self.block(&innermost.body, Some(index));
        for _ in 0..associated {
            self.targets.pop();
        }
        self.test_dependences(index, f, &innermost.body);
    }

    /// The dependence test of a loop whose schedule the compiler chooses; in `kernels` regions,
    /// also the accumulations of loops the program partitions, which become reductions there
    /// (LANGUAGE.md 7.6) as the compiler would generate them for an `auto` loop.
    fn test_dependences(&mut self, index: usize, outer: &ForLoop, body: &Block) {
        let node = &self.nodes[index];
        let chooses = node.compiler_chooses(self.context);
        let nest = dependence::LoopNest {
            vars: &node.info.vars,
            private: &node.info.private,
            outer,
            body,
            has_break: node.info.has_break,
        };
        if !chooses && self.context != LoopContext::Kernels {
            if !node.seq && self.context != LoopContext::Serial {
                let writes = dependence::outside_writes(self.cx, &nest);
                self.nodes[index].writes = writes;
            }
            return;
        }
        if !chooses && node.seq {
            return;
        }
        let mut verdict = dependence::test(self.cx, &nest);
        // Outside `kernels`, scalars are private to a gang unless a clause says otherwise: an
        // accumulation there is the program's to declare.
        if let (
            LoopContext::Parallel | LoopContext::Routine(_),
            Verdict::Parallel { reductions, .. },
        ) = (self.context, &verdict)
        {
            if let Some(r) = reductions.first() {
                let name = self.cx.var_name(r.var);
                verdict = Verdict::Sequential(format!(
                    "scalar `{name}` accumulates (add `reduction({}: {name})` to share the loop)",
                    r.op.as_str()
                ));
            }
        }
        let node = &mut self.nodes[index];
        if let Verdict::Parallel {
            reductions,
            privatized,
            distinct,
        } = &verdict
        {
            if chooses {
                node.info.distinct.clone_from(distinct);
            }
            for r in reductions {
                if !node.info.reductions.iter().any(|x| x.var == r.var) {
                    node.info.reductions.push(r.clone());
                }
            }
            // As a `private` clause would: lowering gives each iteration its own copy, and the
            // region does not capture the variable for it.
            for &v in privatized {
                if !node.info.private.contains(&v) {
                    node.info.private.push(v);
                    node.info.privatized.push(v);
                }
            }
        }
        if chooses {
            node.verdict = Some(verdict);
        }
    }

    fn read_clauses(&mut self, d: &Directive, node: &mut Node) {
        // Levels and sizes as they apply on NVIDIA devices.
        for c in d.clauses_for(DeviceTypeName::Nvidia) {
            match &c.kind {
                ClauseKind::Gang(n) => {
                    node.explicit.gang = true;
                    node.info.gang_size = n.as_ref().map(size);
                }
                ClauseKind::Worker(n) => {
                    node.explicit.worker = true;
                    node.info.worker_size = n.as_ref().map(size);
                }
                ClauseKind::Vector(n) => {
                    node.explicit.vector = true;
                    node.info.vector_size = n.as_ref().map(size);
                }
                ClauseKind::Seq => node.seq = true,
                ClauseKind::Auto => node.auto = true,
                ClauseKind::Independent => node.info.independent = true,
                ClauseKind::Collapse(n) => {
                    if let Some(v) = n.as_const().and_then(|c| c.as_i64()) {
                        node.info.collapse = u32::try_from(v).unwrap_or(1).max(1);
                    }
                }
                ClauseKind::Tile(sizes) => {
                    node.info.tile = Some(
                        sizes
                            .iter()
                            .map(|s| {
                                s.as_ref()
                                    .and_then(|e| e.as_const())
                                    .and_then(|c| c.as_i64())
                                    .and_then(|v| u32::try_from(v).ok())
                            })
                            .collect(),
                    );
                }
                _ => {}
            }
        }
        for c in &d.clauses {
            match &c.kind {
                ClauseKind::Private(refs) => node.info.private.extend(refs.iter().map(|r| r.var)),
                ClauseKind::Reduction(op, refs) => {
                    node.reduction_named.extend(refs.iter().map(|r| r.var));
                    let found = reductions(self.cx, *op, refs);
                    node.info.reductions.extend(found);
                }
                _ => {}
            }
        }
    }

    /// Resolve every schedule, check routine calls against them, and hand out the loops.
    fn resolve(mut self) -> Vec<LoopInfo> {
        let n = self.nodes.len();
        // Bottom-up: the outermost level named inside each loop (loops and routine calls), and
        // whether a loop inside it takes a default level. Children come after their parents.
        let mut nested_min: Vec<Option<Level>> = vec![None; n];
        let mut nested_default: Vec<bool> = vec![false; n];
        for &(f, _, parent) in &self.calls {
            if let (Some(p), Some(level)) = (parent, routine_level(self.cx, f)) {
                nested_min[p] = min_level(nested_min[p], Some(level));
            }
        }
        for i in (0..n).rev() {
            let Some(p) = self.nodes[i].info.parent else {
                continue;
            };
            let own = outermost(self.nodes[i].explicit);
            nested_min[p] = min_level(nested_min[p], min_level(own, nested_min[i]));
            nested_default[p] |= nested_default[i] || self.nodes[i].takes_default(self.context);
        }
        // Top-down: the innermost partitioned level around each loop.
        let base = match self.context {
            LoopContext::Routine(RoutineLevel::Gang)
            | LoopContext::Parallel
            | LoopContext::Kernels => None,
            LoopContext::Routine(RoutineLevel::Worker) => Some(Level::Gang),
            LoopContext::Routine(RoutineLevel::Vector) => Some(Level::Worker),
            LoopContext::Routine(RoutineLevel::Seq) | LoopContext::Serial => Some(Level::Seq),
        };
        let mut around: Vec<Option<Level>> = vec![base; n];
        for i in 0..n {
            let enclosing = match self.nodes[i].info.parent {
                Some(p) => inner_level(&self.nodes[p].info.schedule).or(around[p]),
                None => base,
            };
            around[i] = enclosing;
            let (schedule, reason) = self.schedule(i, enclosing, nested_min[i], nested_default[i]);
            self.nodes[i].info.schedule = schedule;
            self.nodes[i].info.reason = reason;
        }
        self.check_calls(&around);
        self.check_races();
        self.nodes.into_iter().map(|node| node.info).collect()
    }

    fn schedule(
        &self,
        i: usize,
        enclosing: Option<Level>,
        nested_min: Option<Level>,
        nested_default: bool,
    ) -> (Schedule, String) {
        let node = &self.nodes[i];
        if self.context == LoopContext::Serial {
            return (Schedule::Seq, "in a serial region".into());
        }
        if node.seq {
            return (Schedule::Seq, "explicit `seq`".into());
        }
        if !node.explicit.is_empty() {
            return (Schedule::Parallel(node.explicit), "explicit".into());
        }
        if let Some(Verdict::Sequential(why)) = &node.verdict {
            return (Schedule::Seq, format!("not parallelized: {why}"));
        }
        if !node.takes_default(self.context) {
            return (Schedule::Seq, "in an `acc routine seq` function".into());
        }
        let (schedule, reason) = self.default_schedule(enclosing, nested_min, nested_default);
        if !node.proven() {
            return (schedule, reason);
        }
        let private: Vec<String> = node
            .info
            .privatized
            .iter()
            .map(|v| format!("`{}`", self.cx.var_name(*v)))
            .collect();
        let with = match private.as_slice() {
            [] => String::new(),
            [one] => format!(" with {one} private to each iteration"),
            many => format!(" with {} private to each iteration", many.join(", ")),
        };
        (
            schedule,
            format!("no loop-carried dependence{with}; {reason}"),
        )
    }

    /// 7.2's defaulting rules, given the levels around and inside a loop.
    fn default_schedule(
        &self,
        enclosing: Option<Level>,
        nested_min: Option<Level>,
        nested_default: bool,
    ) -> (Schedule, String) {
        let only = |gang, worker, vector| {
            Schedule::Parallel(Levels {
                gang,
                worker,
                vector,
            })
        };
        match enclosing {
            None if nested_min == Some(Level::Gang) => {
                (Schedule::Seq, "default: a loop inside it is `gang`".into())
            }
            None if nested_min.is_none() && !nested_default => (
                only(true, false, true),
                "default: outermost loop, nothing inside takes a level".into(),
            ),
            None => (only(true, false, false), "default: outermost loop".into()),
            Some(Level::Gang) if nested_min == Some(Level::Worker) => (
                Schedule::Seq,
                "default: no level left between the gang loop around it and the worker loop inside".into(),
            ),
            Some(Level::Gang) if nested_min == Some(Level::Vector) || nested_default => (
                only(false, true, false),
                "default: inside a gang loop, with a vector loop inside".into(),
            ),
            Some(Level::Gang) => (only(false, false, true), "default: inside a gang loop".into()),
            Some(Level::Worker) if nested_min == Some(Level::Vector) => (
                Schedule::Seq,
                "default: no level left between the worker loop around it and the vector loop inside".into(),
            ),
            Some(Level::Worker) => (only(false, false, true), "default: inside a worker loop".into()),
            Some(Level::Vector) | Some(Level::Seq) => (Schedule::Seq, "default: no level left inside a vector loop".into()),
        }
    }

    /// Warns of scalars from outside a partitioned loop that every iteration assigns with no
    /// clause to say how: a race (LANGUAGE.md 7.2), silenced by declaring the variable inside
    /// the loop, `private`, or a `reduction` on the loop or one around it.
    fn check_races(&mut self) {
        let mut found = Vec::new();
        for (i, node) in self.nodes.iter().enumerate() {
            if !matches!(node.info.schedule, Schedule::Parallel(_)) {
                continue;
            }
            for w in &node.writes {
                let mut covered = self.reduced.contains(&w.var);
                let mut at = Some(i);
                while let Some(j) = at {
                    let info = &self.nodes[j].info;
                    covered |= info.private.contains(&w.var)
                        || info.reductions.iter().any(|r| r.var == w.var)
                        || self.nodes[j].reduction_named.contains(&w.var);
                    at = info.parent;
                }
                if !covered {
                    found.push((w.var, w.span, w.op, node.info.span, node.info.schedule));
                }
            }
        }
        for (v, span, op, loop_span, schedule) in found {
            let name = self.cx.var_name(v);
            let d = match op {
                Some(op) => Diagnostic::warning(
                    format!("`{name}` is accumulated by every iteration of a `{schedule}` loop without a `reduction` clause"),
                    span,
                    "accumulated here by iterations that run at once",
                )
                .with_help(format!(
                    "add `reduction({}: {name})` to the loop: without it the iterations race and updates are lost",
                    op.as_str()
                )),
                None => Diagnostic::warning(
                    format!("`{name}` is assigned by every iteration of a `{schedule}` loop"),
                    span,
                    "assigned here by iterations that run at once",
                )
                .with_help(format!(
                    "declare it inside the loop (`let {name} = …`) or add `private({name})` to the loop: without that the iterations race on one variable"
                )),
            };
            self.cx.diags.push(d.with_label(loop_span, "the loop"));
        }
    }

    /// A routine of level L may be called only where level L is still free: outside loops of
    /// level L and inside (OpenACC 2.15.1).
    fn check_calls(&mut self, around: &[Option<Level>]) {
        if self.context == LoopContext::Serial {
            return;
        }
        let base = match self.context {
            LoopContext::Routine(RoutineLevel::Worker) => Some(Level::Gang),
            LoopContext::Routine(RoutineLevel::Vector) => Some(Level::Worker),
            LoopContext::Routine(RoutineLevel::Seq) => Some(Level::Seq),
            _ => None,
        };
        let mut found = Vec::new();
        for &(f, span, parent) in &self.calls {
            let Some(level) = routine_level(self.cx, f) else {
                continue;
            };
            let here = match parent {
                Some(p) => inner_level(&self.nodes[p].info.schedule).or(around[p]),
                None => base,
            };
            if let Some(here) = here {
                if here >= level {
                    found.push((
                        f,
                        span,
                        level,
                        here,
                        parent.map(|p| self.nodes[p].info.span),
                    ));
                }
            }
        }
        for (f, span, level, here, loop_span) in found {
            let name = self.cx.fn_name(f);
            let (message, label) = match (here, loop_span) {
                (Level::Seq, _) => (
                    format!("`acc routine {}` function `{name}` called from an `acc routine seq` function", level.name()),
                    "called from sequential device code".to_string(),
                ),
                (_, Some(_)) => (
                    format!("`acc routine {}` function `{name}` called inside a `{}` loop", level.name(), here.name()),
                    format!("needs the `{}` level, which the loop around it already uses", level.name()),
                ),
                (_, None) => (
                    format!("`acc routine {}` function `{name}` called from an `acc routine {}` function", level.name(), here.name()),
                    format!("needs the `{}` level", level.name()),
                ),
            };
            let mut d = Diagnostic::error(message, span, label).with_help(format!(
                "call a `{}` routine from outside loops of that level, or declare `{name}` with a lower level (`acc routine seq`)",
                level.name()
            ));
            if let Some(ls) = loop_span {
                d = d.with_label(ls, "the loop around the call");
            }
            self.cx.diags.push(d);
        }
    }
}

/// The level of a user function as a routine, when it is more than `seq`.
fn routine_level(cx: &Cx, f: FnId) -> Option<Level> {
    let level = cx.program.functions.get(f.index())?.routine.as_ref()?.level;
    match level {
        RoutineLevel::Gang => Some(Level::Gang),
        RoutineLevel::Worker => Some(Level::Worker),
        RoutineLevel::Vector => Some(Level::Vector),
        RoutineLevel::Seq => None,
    }
}

fn outermost(l: Levels) -> Option<Level> {
    if l.gang {
        Some(Level::Gang)
    } else if l.worker {
        Some(Level::Worker)
    } else if l.vector {
        Some(Level::Vector)
    } else {
        None
    }
}

/// The innermost level a schedule partitions over.
fn inner_level(s: &Schedule) -> Option<Level> {
    match s {
        Schedule::Parallel(l) if l.vector => Some(Level::Vector),
        Schedule::Parallel(l) if l.worker => Some(Level::Worker),
        Schedule::Parallel(l) if l.gang => Some(Level::Gang),
        _ => None,
    }
}

fn min_level(a: Option<Level>, b: Option<Level>) -> Option<Level> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn size(e: &Expr) -> Size {
    match e.as_const().and_then(|c| c.as_i64()) {
        Some(v) => Size::Const(v),
        None => Size::Expr(e.clone()),
    }
}

/// The reductions of one `reduction(op: …)` clause, reporting variables the operator cannot
/// reduce (arrays, sections, wrong types).
pub(super) fn reductions(cx: &mut Cx, op: ReductionOp, refs: &[DataRef]) -> Vec<ReductionInfo> {
    let mut out = Vec::new();
    for r in refs {
        let name = cx.var_name(r.var);
        let ty = cx.var_ty(r.var);
        let Some(scalar) = ty.scalar() else {
            if ty.is_array() {
                cx.diags.push(
                    Diagnostic::error(format!("reduction on array `{name}`"), r.span, format!("`{name}` is an array ({ty})"))
                        .with_help("reductions combine scalars: reduce into a scalar variable, or update the elements with `acc atomic`"),
                );
            }
            continue;
        };
        if r.sections.is_some() {
            cx.diags.push(
                Diagnostic::error(
                    "a reduction variable must be a scalar variable",
                    r.span,
                    "not a plain variable",
                )
                .with_help(format!("write `reduction({}: {name})`", op.as_str())),
            );
            continue;
        }
        let (fits, needs, instead) = match op {
            ReductionOp::Add | ReductionOp::Mul | ReductionOp::Max | ReductionOp::Min => (
                scalar.is_numeric(),
                "a numeric",
                "use `&&` or `||` for bool",
            ),
            ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor => (
                scalar.is_int(),
                "an integer",
                if scalar.is_float() {
                    "use `+`, `*`, `max` or `min` for floats"
                } else {
                    "use `&&` or `||` for bool"
                },
            ),
            ReductionOp::And | ReductionOp::Or => (
                scalar == crate::hir::ScalarType::Bool,
                "a bool",
                if scalar.is_int() {
                    "use `&` or `|` for integer bits"
                } else {
                    "use `+`, `*`, `max` or `min` for floats"
                },
            ),
        };
        if !fits {
            cx.diags.push(
                Diagnostic::error(
                    format!(
                        "`{}` reduction needs {needs} variable, `{name}` is {}",
                        op.as_str(),
                        scalar.name()
                    ),
                    r.span,
                    format!("`{name}` is {}", scalar.name()),
                )
                .with_help(instead),
            );
            continue;
        }
        out.push(ReductionInfo {
            op,
            var: r.var,
            ty: scalar,
            span: r.span,
        });
    }
    out
}

/// Calls of user functions in an expression (or statement).
#[derive(Default)]
struct CallFinder {
    calls: Vec<(FnId, Span)>,
}

impl Visitor for CallFinder {
    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Call(f, _) = &e.kind {
            self.calls.push((*f, e.span));
        }
        visit::walk_expr(self, e);
    }
}
