//! Structural directive rules: everything about directives that needs no names or types.
//!
//! One walk over the AST with a context saying where each statement sits: at the top level, in
//! host code, inside a compute region or an `acc routine` function, inside which partitioned
//! loops. It reports
//! - clause placement (`clauses`): clauses a construct does not take, clauses after
//!   `device_type`, repeats and conflicts, literal arguments, required clauses;
//! - the statement a directive applies to: a block, a counted `for`, an `fn`, an atomic form
//!   (`atomic`), nothing for standalone directives;
//! - `collapse`/`tile` nests (`nest`);
//! - explicit loop levels out of order (gang outside worker outside vector) and levels a routine
//!   may not contain;
//! - directives out of place: `acc loop` outside device code, nested compute constructs, data
//!   directives in device code, `acc declare` below the top level;
//! - `break` out of a partitioned loop or a compute region, `return` inside a compute region.
//!
//! Loops whose level is left to the defaulting rules of LANGUAGE.md 7.2 are checked by
//! `analysis`, which resolves them.

mod atomic;
mod clauses;
mod nest;
#[cfg(test)]
mod tests;

pub use crate::clause::clause_names;

use crate::ast::{
    Block, Clause, ClauseKind, Construct, DeviceTypeName, Directive, Expr, ExprKind, FnDef,
    ForLoop, Program, Stmt, StmtKind,
};
use crate::diag::Diagnostic;
use crate::span::Span;

/// Check the directive rules of LANGUAGE.md section 7 that need no types.
pub fn validate(program: &Program) -> Vec<Diagnostic> {
    let mut v = Validator { diags: Vec::new() };
    let top = Ctx {
        top_level: true,
        device: None,
        levels: Vec::new(),
        loops: Vec::new(),
        function: None,
    };
    for stmt in &program.stmts {
        v.stmt(stmt, &top);
    }
    v.diags
}

/// A level of parallelism, outermost first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Level {
    Gang,
    Worker,
    Vector,
    Seq,
}

impl Level {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Level::Gang => "gang",
            Level::Worker => "worker",
            Level::Vector => "vector",
            Level::Seq => "seq",
        }
    }
}

/// Device code the walk is in.
#[derive(Clone)]
enum Device {
    /// Inside a compute construct (`construct` is the combined form where there is one).
    Compute { construct: Construct, span: Span },
    /// Inside the body of an `acc routine` function.
    Routine {
        level: Level,
        name: String,
        sig: Span,
    },
}

/// An enclosing `acc loop` that names levels explicitly.
#[derive(Clone)]
struct LevelFrame {
    /// Its innermost level (`gang vector` → vector).
    innermost: Level,
    /// The clause naming that level.
    clause: Span,
}

/// An enclosing `for`/`while` loop, for `break`.
#[derive(Clone, Copy)]
struct LoopFrame {
    /// The directive that shares out the loop's iterations, if any.
    partitioned: Option<Span>,
}

#[derive(Clone)]
struct Ctx {
    /// The statement is one of the program's top-level statements.
    top_level: bool,
    device: Option<Device>,
    /// Enclosing explicitly levelled loops within the current device code.
    levels: Vec<LevelFrame>,
    /// Enclosing loops within the current function or compute region.
    loops: Vec<LoopFrame>,
    /// The function whose body this is, if any.
    function: Option<String>,
}

impl Ctx {
    fn nested(&self) -> Ctx {
        Ctx {
            top_level: false,
            ..self.clone()
        }
    }

    /// Inside the compute construct `d`: device code with no enclosing loops or levels.
    fn compute_region(&self, d: &Directive) -> Ctx {
        Ctx {
            top_level: false,
            device: Some(Device::Compute {
                construct: d.construct,
                span: d.construct_span,
            }),
            levels: Vec::new(),
            loops: Vec::new(),
            function: self.function.clone(),
        }
    }

    fn in_loop(&self, frame: LoopFrame) -> Ctx {
        let mut c = self.nested();
        c.loops.push(frame);
        c
    }

    fn compute(&self) -> Option<(Construct, Span)> {
        match &self.device {
            Some(Device::Compute { construct, span }) => Some((*construct, *span)),
            _ => None,
        }
    }
}

struct Validator {
    diags: Vec<Diagnostic>,
}

impl Validator {
    fn block(&mut self, b: &Block, ctx: &Ctx) {
        let inner = ctx.nested();
        for s in &b.stmts {
            self.stmt(s, &inner);
        }
    }

    fn stmt(&mut self, s: &Stmt, ctx: &Ctx) {
        let inner = ctx.nested();
        match &s.kind {
            StmtKind::Let { init, .. } => self.expr(init, &inner),
            StmtKind::Assign { target, value, .. } => {
                self.expr(target, &inner);
                self.expr(value, &inner);
            }
            StmtKind::Expr(e) => self.expr(e, &inner),
            StmtKind::If { cond, then, els } => {
                self.expr(cond, &inner);
                self.block(then, &inner);
                if let Some(els) = els {
                    self.stmt(els, &inner);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond, &inner);
                self.block(body, &ctx.in_loop(LoopFrame { partitioned: None }));
            }
            StmtKind::For(f) => self.for_loop(f, 1, None, &inner),
            StmtKind::Break | StmtKind::Continue => self.jump(s, ctx),
            StmtKind::Return(value) => {
                if let Some((construct, span)) = ctx.compute() {
                    self.diags.push(
                        Diagnostic::error(
                            "`return` inside a compute region",
                            s.span,
                            "returns from device code",
                        )
                        .with_label(span, format!("inside this `acc {}`", construct.name()))
                        .with_help("store the result in a variable and return after the region"),
                    );
                }
                if let Some(e) = value {
                    self.expr(e, &inner);
                }
            }
            StmtKind::Block(b) => self.block(b, &inner),
            StmtKind::Fn(f) => self.function(f, None, ctx),
            StmtKind::Directive(d) => self.directive(d, ctx),
            StmtKind::Error => {}
        }
    }

    /// Statements inside expressions (`if` expression blocks).
    fn expr(&mut self, e: &Expr, ctx: &Ctx) {
        match &e.kind {
            ExprKind::Block(stmts, last) => {
                for s in stmts {
                    self.stmt(s, ctx);
                }
                self.expr(last, ctx);
            }
            ExprKind::If(c, t, f) => {
                self.expr(c, ctx);
                self.expr(t, ctx);
                self.expr(f, ctx);
            }
            ExprKind::Unary(_, a) | ExprKind::Cast(a, _) => self.expr(a, ctx),
            ExprKind::Binary(_, a, b) => {
                self.expr(a, ctx);
                self.expr(b, ctx);
            }
            ExprKind::Call(_, args) | ExprKind::ArrayLit(args) => {
                for a in args {
                    self.expr(a, ctx);
                }
            }
            ExprKind::Index(base, args) => {
                self.expr(base, ctx);
                for a in args {
                    self.expr(a, ctx);
                }
            }
            _ => {}
        }
    }

    /// A `for` loop and, when `depth > 1`, the loops perfectly nested in it that a `collapse` or
    /// `tile` associates with the same directive (all share its partitioning).
    fn for_loop(&mut self, f: &ForLoop, depth: u64, partitioned: Option<Span>, ctx: &Ctx) {
        self.expr(&f.start, ctx);
        self.expr(&f.end, ctx);
        if let Some(step) = &f.step {
            self.expr(step, ctx);
        }
        let inner = ctx.in_loop(LoopFrame { partitioned });
        if depth > 1 {
            if let [only] = f.body.stmts.as_slice() {
                if let StmtKind::For(next) = &only.kind {
                    self.for_loop(next, depth - 1, partitioned, &inner);
                    return;
                }
            }
        }
        self.block(&f.body, &inner);
    }

    fn jump(&mut self, s: &Stmt, ctx: &Ctx) {
        let word = if matches!(s.kind, StmtKind::Break) {
            "break"
        } else {
            "continue"
        };
        match ctx.loops.last() {
            // Outside any loop of this function or region: the checker reports a stray jump in
            // host code; in a region it would leave the region.
            None => {
                if let Some((construct, span)) = ctx.compute() {
                    self.diags.push(
                        Diagnostic::error(
                            format!("`{word}` cannot leave a compute region"),
                            s.span,
                            "jumps out of device code",
                        )
                        .with_label(span, format!("inside this `acc {}`", construct.name()))
                        .with_help("a compute region runs to its end; use a flag variable and test it after the region"),
                    );
                }
            }
            Some(LoopFrame {
                partitioned: Some(directive),
            }) if word == "break" => {
                self.diags.push(
                    Diagnostic::error(
                        "`break` cannot leave a partitioned loop",
                        s.span,
                        "breaks out of a loop whose iterations are shared out",
                    )
                    .with_label(*directive, "iterations shared out here")
                    .with_help("mark the loop `seq` to run it sequentially, or skip the remaining iterations with `continue`"),
                );
            }
            Some(_) => {}
        }
    }

    fn function(&mut self, f: &FnDef, routine: Option<Level>, ctx: &Ctx) {
        if let Some(device) = &ctx.device {
            let mut d = Diagnostic::error(
                format!("function `{}` defined in device code", f.name.name),
                f.sig_span,
                "function definition here",
            )
            .with_help("define functions at the top level; device code may call them");
            d = match device {
                Device::Compute { construct, span } => {
                    d.with_label(*span, format!("inside this `acc {}`", construct.name()))
                }
                Device::Routine { sig, .. } => d.with_label(*sig, "inside this routine"),
            };
            self.diags.push(d);
            return;
        }
        let body_ctx = Ctx {
            top_level: false,
            device: routine.map(|level| Device::Routine {
                level,
                name: f.name.name.clone(),
                sig: f.sig_span,
            }),
            levels: Vec::new(),
            loops: Vec::new(),
            function: Some(f.name.name.clone()),
        };
        self.block(&f.body, &body_ctx);
    }

    fn directive(&mut self, d: &Directive, ctx: &Ctx) {
        clauses::check(d, &mut self.diags);
        self.placement(d, ctx);
        let body = d.body.as_deref();
        let inner = ctx.nested();
        match d.construct {
            Construct::Parallel | Construct::Kernels | Construct::Serial => {
                if let Some(block) = self.expect_block(d, body) {
                    self.block(block, &ctx.compute_region(d));
                }
            }
            Construct::Data => {
                if let Some(block) = self.expect_block(d, body) {
                    self.block(block, &inner);
                }
            }
            Construct::ParallelLoop | Construct::KernelsLoop | Construct::SerialLoop => {
                if let Some(f) = self.expect_for(d, body) {
                    self.acc_loop(d, f, &ctx.compute_region(d));
                }
            }
            Construct::Loop => {
                if let Some(f) = self.expect_for(d, body) {
                    self.acc_loop(d, f, &inner);
                }
            }
            Construct::Atomic(kind) => match body {
                Some(b) => atomic::check(kind, b, &mut self.diags),
                None => self.diags.push(
                    Diagnostic::error(
                        format!(
                            "`acc {}` must be followed by a statement",
                            d.construct.name()
                        ),
                        d.span,
                        "nothing follows",
                    )
                    .with_help("put the atomic statement on the next line, e.g. `x += 1`"),
                ),
            },
            Construct::Routine => match body.map(|b| &b.kind) {
                Some(StmtKind::Fn(f)) => {
                    let level = routine_level(d);
                    self.function(f, Some(level), ctx);
                }
                _ => self.diags.push(
                    Diagnostic::error(
                        "`acc routine` must be followed by a function definition",
                        body.map_or(d.span, |b| b.span),
                        "not a function definition",
                    )
                    .with_help("put `acc routine seq` on the line before `fn name(…)`"),
                ),
            },
            Construct::EnterData
            | Construct::ExitData
            | Construct::Update
            | Construct::Wait
            | Construct::Declare
            | Construct::Set => {
                if let Some(b) = body {
                    self.diags.push(
                        Diagnostic::error(
                            format!("`acc {}` does not apply to a statement", d.construct.name()),
                            b.span,
                            "unexpected statement",
                        )
                        .with_label(d.construct_span, "a standalone directive")
                        .with_help("end the directive's line before the statement"),
                    );
                }
            }
        }
    }

    /// Where a directive may stand.
    fn placement(&mut self, d: &Directive, ctx: &Ctx) {
        let cname = d.construct.name();
        let device_label = |diag: Diagnostic| match &ctx.device {
            Some(Device::Compute { construct, span }) => {
                diag.with_label(*span, format!("inside this `acc {}`", construct.name()))
            }
            Some(Device::Routine { sig, .. }) => {
                diag.with_label(*sig, "compiled for the device by `acc routine`")
            }
            None => diag,
        };
        let where_ = match &ctx.device {
            Some(Device::Compute { .. }) => "a compute region".to_string(),
            Some(Device::Routine { name, .. }) => format!("device routine `{name}`"),
            None => String::new(),
        };
        let in_device = ctx.device.is_some();
        match d.construct {
            c if c.is_compute() && in_device => {
                let message = match &ctx.device {
                    Some(Device::Compute { construct, .. }) => format!(
                        "compute constructs cannot be nested: `acc {cname}` inside `acc {}`",
                        construct.name()
                    ),
                    _ => format!("`acc {cname}` inside {where_}"),
                };
                self.diags.push(
                    device_label(Diagnostic::error(
                        message,
                        d.construct_span,
                        "nested compute construct",
                    ))
                    .with_help("use `acc loop` inside the region to share out a nested loop"),
                );
            }
            Construct::Loop if !in_device => {
                self.diags.push(
                    Diagnostic::error(
                        "`acc loop` outside a compute region",
                        d.construct_span,
                        "not inside `acc parallel`, `acc kernels`, `acc serial` or an `acc routine`",
                    )
                    .with_help(match &ctx.function {
                        Some(name) => format!("use `acc parallel loop` to offload this loop, or declare `{name}` with `acc routine gang`, `worker` or `vector` to call it from device code"),
                        None => "use `acc parallel loop` to offload this loop, or put it inside an `acc parallel { … }` region".to_string(),
                    }),
                );
            }
            Construct::Data
            | Construct::EnterData
            | Construct::ExitData
            | Construct::Update
            | Construct::Wait
            | Construct::Declare
            | Construct::Set
            | Construct::Routine
                if in_device =>
            {
                let help = match d.construct {
                    Construct::Wait => "`acc wait` blocks the host: move it before or after the region".to_string(),
                    Construct::Routine => "put `acc routine` before a top-level `fn`".to_string(),
                    Construct::Declare => "put `acc declare` after the top-level `let` of its variable".to_string(),
                    _ => format!(
                        "data directives run on the host: move the `acc {cname}` before or after the region, or use data clauses on the compute construct"
                    ),
                };
                self.diags.push(
                    device_label(Diagnostic::error(
                        format!("`acc {cname}` inside {where_}"),
                        d.construct_span,
                        "not allowed in device code",
                    ))
                    .with_help(help),
                );
            }
            Construct::Declare if !ctx.top_level => {
                self.diags.push(
                    Diagnostic::error(
                        "`acc declare` must be at the top level",
                        d.construct_span,
                        "not a top-level statement",
                    )
                    .with_help(
                        "put `acc declare` right after the top-level `let` of the global it names",
                    ),
                );
            }
            _ => {}
        }
    }

    fn expect_block<'a>(&mut self, d: &Directive, body: Option<&'a Stmt>) -> Option<&'a Block> {
        let cname = d.construct.name();
        match body.map(|b| &b.kind) {
            Some(StmtKind::Block(block)) => Some(block),
            other => {
                let help = match (other, d.construct) {
                    (Some(StmtKind::For(_)), c) if c.is_compute() => format!(
                        "use `acc {cname} loop` for a single loop, or wrap the loop in `{{ … }}`"
                    ),
                    _ => "put the region's statements in `{ … }` (the brace may open on the directive's line)".to_string(),
                };
                self.diags.push(
                    Diagnostic::error(
                        format!("`acc {cname}` must be followed by a block `{{ … }}`"),
                        body.map_or(d.span, |b| b.span),
                        if body.is_some() {
                            "not a block"
                        } else {
                            "no block follows"
                        },
                    )
                    .with_help(help),
                );
                None
            }
        }
    }

    fn expect_for<'a>(&mut self, d: &Directive, body: Option<&'a Stmt>) -> Option<&'a ForLoop> {
        let cname = d.construct.name();
        let found = match body.map(|b| &b.kind) {
            Some(StmtKind::For(f)) => return Some(f),
            Some(StmtKind::While { .. }) => "a `while` loop",
            Some(StmtKind::Directive(_)) => "another directive",
            Some(StmtKind::Block(_)) => "a block",
            Some(_) => "a statement that is not a loop",
            None => "nothing",
        };
        let help = match body.map(|b| &b.kind) {
            Some(StmtKind::While { .. }) => {
                "rewrite it as a counted loop `for i in lo..hi`".to_string()
            }
            Some(StmtKind::Block(_)) if d.construct != Construct::Loop => {
                let compute = cname.trim_end_matches(" loop");
                format!("use `acc {compute}` for a block")
            }
            _ => format!("put a `for` loop right after `acc {cname}`"),
        };
        self.diags.push(
            Diagnostic::error(
                format!("`acc {cname}` must be followed by a `for` loop, found {found}"),
                body.map_or(d.span, |b| b.span),
                "not a counted `for` loop",
            )
            .with_help(help),
        );
        None
    }

    /// A loop construct (combined or `acc loop`) and its nest. `ctx` is the device code it runs
    /// in (for a combined construct, its own region).
    fn acc_loop(&mut self, d: &Directive, f: &ForLoop, ctx: &Ctx) {
        let depth = self.associated_depth(d, f);
        let levels: Vec<(Level, Span)> = explicit_levels(d);
        let serial = matches!(
            ctx.compute(),
            Some((Construct::Serial | Construct::SerialLoop, _))
        );
        if !serial {
            self.check_level_order(&levels, ctx);
        }
        let mut inner = ctx.nested();
        if let Some(&(innermost, clause)) = levels.iter().max_by_key(|(l, _)| *l) {
            inner.levels.push(LevelFrame { innermost, clause });
        }
        let partitioned = (!serial && is_partitioned(d, ctx)).then_some(d.construct_span);
        self.for_loop(f, depth, partitioned, &inner);
    }

    /// The number of loops the directive associates (`collapse(n)`, `tile` sizes), after
    /// checking the nest has them.
    fn associated_depth(&mut self, d: &Directive, f: &ForLoop) -> u64 {
        let mut depth = 1;
        for clause in &d.clauses {
            let (n, what) = match &clause.kind {
                ClauseKind::Collapse(n) => match clauses::positive_literal(n) {
                    Some(n) => (n, format!("collapse({n})")),
                    None => continue,
                },
                ClauseKind::Tile(sizes) if !sizes.is_empty() => {
                    (sizes.len() as u64, tile_text(sizes))
                }
                _ => continue,
            };
            nest::check(f, n, clause, &what, &mut self.diags);
            depth = depth.max(n);
        }
        depth
    }

    /// Explicit levels against the enclosing loops' and the routine's.
    fn check_level_order(&mut self, levels: &[(Level, Span)], ctx: &Ctx) {
        let Some(&(outermost, span)) = levels.iter().min_by_key(|(l, _)| *l) else {
            return;
        };
        if let Some(outer) = ctx
            .levels
            .iter()
            .rev()
            .find(|frame| frame.innermost >= outermost)
        {
            let this = outermost.name();
            let that = outer.innermost.name();
            self.diags.push(
                Diagnostic::error(
                    format!("loop levels out of order: a `{this}` loop inside a `{that}` loop"),
                    span,
                    format!("`{this}` loop here"),
                )
                .with_label(outer.clause, format!("inside this `{that}` loop"))
                .with_help("levels nest gang outside worker outside vector; give the inner loop a level inside its enclosing loop's, or `seq`"),
            );
            return;
        }
        if let Some(Device::Routine { level, name, sig }) = &ctx.device {
            if outermost < *level {
                let allowed = match level {
                    Level::Seq => {
                        "a `seq` routine runs in one thread and may contain only `seq` loops"
                            .to_string()
                    }
                    l => format!(
                        "a `{}` routine may contain loops of level `{}` and inside",
                        l.name(),
                        l.name()
                    ),
                };
                self.diags.push(
                    Diagnostic::error(
                        format!(
                            "a `{}` loop inside `acc routine {}` function `{name}`",
                            outermost.name(),
                            level.name()
                        ),
                        span,
                        format!("`{}` loop here", outermost.name()),
                    )
                    .with_label(*sig, format!("declared `acc routine {}`", level.name()))
                    .with_help(format!(
                        "{allowed}; declare the function `acc routine {}` or mark the loop `seq`",
                        outermost.name()
                    )),
                );
            }
        }
    }
}

/// `tile(32, *)` as written (sizes that are not literals shown as `…`).
fn tile_text(sizes: &[Option<Expr>]) -> String {
    let sizes: Vec<String> = sizes
        .iter()
        .map(|s| match s.as_ref().map(|e| &e.kind) {
            None => "*".to_string(),
            Some(ExprKind::Int(v, _)) => v.to_string(),
            Some(_) => "…".to_string(),
        })
        .collect();
    format!("tile({})", sizes.join(", "))
}

/// The gang/worker/vector clauses of a loop directive, as they apply on NVIDIA devices.
fn explicit_levels(d: &Directive) -> Vec<(Level, Span)> {
    d.clauses_for(DeviceTypeName::Nvidia)
        .filter_map(|c| match c.kind {
            ClauseKind::Gang(_) => Some((Level::Gang, c.name_span)),
            ClauseKind::Worker(_) => Some((Level::Worker, c.name_span)),
            ClauseKind::Vector(_) => Some((Level::Vector, c.name_span)),
            _ => None,
        })
        .collect()
}

/// A routine's level: the first level clause, `seq` when none.
fn routine_level(d: &Directive) -> Level {
    d.clauses
        .iter()
        .find_map(|c| match c.kind {
            ClauseKind::Gang(_) => Some(Level::Gang),
            ClauseKind::Worker(_) => Some(Level::Worker),
            ClauseKind::Vector(_) => Some(Level::Vector),
            ClauseKind::Seq => Some(Level::Seq),
            _ => None,
        })
        .unwrap_or(Level::Seq)
}

/// Whether the loop's iterations are shared out among threads: explicit levels or
/// `independent`, or no level in a `parallel` region (the defaults of 7.2 make it gang/vector)
/// or a non-`seq` routine. `seq` and `auto` loops, and unmarked loops in `kernels` regions
/// (the compiler decides, and a loop with a `break` stays sequential), are not.
fn is_partitioned(d: &Directive, ctx: &Ctx) -> bool {
    let clauses: Vec<&Clause> = d.clauses_for(DeviceTypeName::Nvidia).collect();
    let has = |f: fn(&ClauseKind) -> bool| clauses.iter().any(|c| f(&c.kind));
    if has(|k| matches!(k, ClauseKind::Seq | ClauseKind::Auto)) {
        return false;
    }
    if has(|k| {
        matches!(
            k,
            ClauseKind::Gang(_)
                | ClauseKind::Worker(_)
                | ClauseKind::Vector(_)
                | ClauseKind::Independent
        )
    }) {
        return true;
    }
    match &ctx.device {
        Some(Device::Compute { construct, .. }) => {
            matches!(construct, Construct::Parallel | Construct::ParallelLoop)
        }
        Some(Device::Routine { level, .. }) => *level != Level::Seq,
        None => false,
    }
}
