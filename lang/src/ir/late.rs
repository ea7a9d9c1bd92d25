//! Late results: how long a launch's results may wait before the host takes them.
//!
//! A compute construct with results (reductions, `copy` scalars) makes the host wait for the
//! device before it goes on. Where the statements right after it are compute constructs that
//! neither read nor write those results, such as the copy-back loop that follows the
//! reduction loop of a Jacobi iteration, the host can start them first and take the results
//! after: the device then runs the next kernel while the host reads the first one's results,
//! instead of idling until the host has them (`Launch::results_after`).
//!
//! The window holds only `Launch` statements, of the same block: anything else (a host
//! statement, a data directive, the block's end) may read a result or show that the host did
//! not wait, so the results are taken before it. A launch in the window must not mention a
//! result place in any of its operands, write one as a result of its own, or call a function
//! (which could read a result global). The runtime may still take the results at once (every
//! device but a GPU does); the window only permits the wait to come later.

use std::collections::HashSet;

use super::visit::{walk_expr, Visitor};
use super::{
    Block, Expr, ExprKind, GlobalId, Launch, LocalId, Module, Place, Queue, RegionId, Stmt,
};

/// Sets `results_after` on every launch of the module's host code (`main` and functions;
/// regions hold no launches).
pub fn mark(module: &mut Module) {
    // Regions whose code calls functions, which may read any global.
    let calling: HashSet<RegionId> = module
        .regions
        .iter()
        .filter(|r| {
            let mut reads = Reads::default();
            reads.block(&r.body);
            reads.calls
        })
        .map(|r| r.id)
        .collect();
    mark_block(&mut module.main.body, &calling);
    for f in &mut module.functions {
        mark_block(&mut f.body, &calling);
    }
}

fn mark_block(b: &mut Block, calling: &HashSet<RegionId>) {
    for i in 0..b.len() {
        let window = match &b[i] {
            Stmt::Launch(l) if !l.results.is_empty() => window(l, &b[i + 1..], calling),
            _ => 0,
        };
        if let Stmt::Launch(l) = &mut b[i] {
            l.results_after = window;
        }
        for inner in blocks_of(&mut b[i]) {
            mark_block(inner, calling);
        }
    }
}

/// The nested blocks of a statement.
fn blocks_of(s: &mut Stmt) -> Vec<&mut Block> {
    match s {
        Stmt::If { then, els, .. } => vec![then, els],
        Stmt::While { body, .. } | Stmt::DataRegion { body, .. } | Stmt::Block(body) => {
            vec![body]
        }
        Stmt::For(f) => vec![&mut f.body],
        _ => Vec::new(),
    }
}

/// How many of the statements `after` launch `l` may run before `l`'s results are taken
/// (`calling`: the regions whose code calls functions).
fn window(l: &Launch, after: &[Stmt], calling: &HashSet<RegionId>) -> u32 {
    let places: Vec<&Place> = l.results.iter().map(|(_, p)| p).collect();
    let mut n = 0;
    for s in after {
        let Stmt::Launch(next) = s else { break };
        if calling.contains(&next.region) || !independent(next, &places) {
            break;
        }
        n += 1;
    }
    n
}

/// Whether launch `l` neither reads nor writes any of `places` and calls no function.
fn independent(l: &Launch, places: &[&Place]) -> bool {
    let mut reads = Reads::default();
    for e in operands(l) {
        reads.expr(e);
    }
    !reads.calls
        && places.iter().all(|p| !reads.mentions(p))
        && l.results
            .iter()
            .all(|(_, w)| places.iter().all(|p| !same(p, w)))
}

/// Every expression a launch evaluates on the host.
fn operands(l: &Launch) -> Vec<&Expr> {
    let mut v: Vec<&Expr> = l.args.iter().collect();
    v.extend(&l.if_cond);
    for sizes in [&l.num_gangs, &l.num_workers, &l.vector_length] {
        v.extend(
            sizes
                .nvidia
                .iter()
                .chain(&sizes.host)
                .chain(&sizes.multicore),
        );
    }
    if let Some(Queue::Numbered(q)) = &l.async_queue {
        v.push(q);
    }
    v.extend(l.wait.iter().flatten());
    for op in &l.data {
        v.push(&op.array);
        for r in op.ranges.iter().flatten() {
            v.extend(r.start.iter().chain(&r.count));
        }
    }
    v
}

fn same(a: &Place, b: &Place) -> bool {
    match (a, b) {
        (Place::Local(x), Place::Local(y)) => x == y,
        (Place::Global(x), Place::Global(y)) => x == y,
        _ => false,
    }
}

/// The variables expressions read, and whether they call a function.
#[derive(Default)]
struct Reads {
    locals: HashSet<LocalId>,
    globals: HashSet<GlobalId>,
    calls: bool,
}

impl Reads {
    fn mentions(&self, p: &Place) -> bool {
        match p {
            Place::Local(l) => self.locals.contains(l),
            Place::Global(g) => self.globals.contains(g),
        }
    }
}

impl<'a> Visitor<'a> for Reads {
    fn expr(&mut self, e: &'a Expr) {
        match &e.kind {
            ExprKind::Local(l) => {
                self.locals.insert(*l);
            }
            ExprKind::Global(g) => {
                self.globals.insert(*g);
            }
            ExprKind::Call(..) => self.calls = true,
            _ => {}
        }
        walk_expr(self, e);
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{Block, Module, Stmt};
    use crate::{lower_source, SourceFile};

    /// Every launch's `results_after`, in program order (nested blocks included).
    fn windows(src: &str) -> Vec<u32> {
        let m: Module = lower_source(&SourceFile::new("t.acc", src)).expect("compiles");
        fn walk(b: &Block, out: &mut Vec<u32>) {
            for s in b {
                match s {
                    Stmt::Launch(l) => out.push(l.results_after),
                    Stmt::If { then, els, .. } => {
                        walk(then, out);
                        walk(els, out);
                    }
                    Stmt::While { body, .. }
                    | Stmt::DataRegion { body, .. }
                    | Stmt::Block(body) => walk(body, out),
                    Stmt::For(f) => walk(&f.body, out),
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        walk(&m.main.body, &mut out);
        for f in &m.functions {
            walk(&f.body, &mut out);
        }
        out
    }

    const HEAD: &str = "let n = 8\nlet a = zeros(n)\nlet b = zeros(n)\nlet s = 0.0\nlet t = 0.0\n";

    fn program(body: &str) -> String {
        format!("{HEAD}{body}")
    }

    const SUM: &str = "acc parallel loop reduction(+: s)\nfor i in 0..n { s += a[i] }\n";
    const COPY: &str = "acc parallel loop\nfor i in 0..n { b[i] = a[i] }\n";

    #[test]
    fn launches_that_do_not_use_the_result_come_first() {
        // The copy and a second, independent reduction; then a host statement ends it.
        let src = program(&format!(
            "{SUM}{COPY}acc parallel loop reduction(+: t)\nfor i in 0..n {{ t += b[i] }}\nprint(s)\n{COPY}"
        ));
        assert_eq!(windows(&src), vec![2, 0, 0, 0]);
    }

    #[test]
    fn a_launch_that_reads_or_writes_the_result_ends_the_window() {
        let reads = program(&format!(
            "{SUM}acc parallel loop\nfor i in 0..n {{ b[i] = s }}\n"
        ));
        assert_eq!(windows(&reads), vec![0, 0]);
        let writes = program(&format!(
            "{SUM}{COPY}acc parallel loop reduction(+: s)\nfor i in 0..n {{ s += 1.0 }}\n"
        ));
        assert_eq!(windows(&writes), vec![1, 0, 0]);
        let sized = program(&format!(
            "let g = 4\n{}acc parallel loop num_gangs(g)\nfor i in 0..n {{ b[i] = 1.0 }}\n",
            SUM.replace("reduction(+: s)", "reduction(+: g)")
                .replace("s += a[i]", "g += 1")
        ));
        assert_eq!(windows(&sized), vec![0, 0]);
    }

    #[test]
    fn calls_end_the_window() {
        // A function could read the result global: in the launch's operands, or in the
        // region's code.
        let in_operands = format!(
            "fn four() -> i64 {{ return 4 }}\n{}",
            program(&format!(
                "{SUM}acc parallel loop num_gangs(four())\nfor i in 0..n {{ b[i] = 1.0 }}\n"
            ))
        );
        assert_eq!(windows(&in_operands), vec![0, 0]);
        let in_region = format!(
            "acc routine seq\nfn one() -> f64 {{ return 1.0 }}\n{}",
            program(&format!(
                "{SUM}acc parallel loop\nfor i in 0..n {{ b[i] = one() }}\n"
            ))
        );
        assert_eq!(windows(&in_region), vec![0, 0]);
    }

    #[test]
    fn the_window_ends_with_its_block() {
        let src = program(&format!("if n > 0 {{\n{SUM}{COPY}}}\n{COPY}"));
        assert_eq!(windows(&src), vec![1, 0, 0]);
        // In a loop, too: the next iteration's launches are not in it.
        let src = program(&format!("for k in 0..2 {{\n{SUM}{COPY}}}\n"));
        assert_eq!(windows(&src), vec![1, 0]);
    }
}
