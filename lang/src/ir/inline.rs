//! Which calls a back end may translate as the callee's body, inline (jit-host's `inline`
//! does): the choice is the IR's, the translation the back end's.
//!
//! A call costs a frame: the callee saves and restores the registers it uses, and the caller
//! keeps its live values across the call. For a small function that is most of the work (a
//! recursive `fib` spends nearly all its time entering and leaving frames). So a function is a
//! candidate when it is small (`MAX_SIZE`) and has no loops; recursion unrolls, a small
//! recursive function inlining its own calls up to `MAX_DEPTH` levels, which cuts the number of
//! frames its recursion enters by about half per level; and one function grows by at most
//! `BUDGET` nodes of inlined code.
//!
//! Only functions of the module being compiled are candidates (their string and format ids are
//! the module's own); gang routines, which take the caller's gang, never are.

use std::collections::HashMap;

use super::visit::{has_loop, walk_expr, walk_stmt, Visitor};
use super::{Block, Expr, ExprKind, Function, Module, PrintArg, Stmt};
use crate::hir::{FnId, RoutineLevel};

/// The largest body (in IR statements and expressions) inlined at a call.
const MAX_SIZE: usize = 40;

/// How many inlined bodies may nest (a body inlined into one that was itself inlined, …).
const MAX_DEPTH: u32 = 3;

/// How much inlined code (in IR nodes) one function may grow by.
const BUDGET: usize = 400;

/// Whether a body may still be inlined at a call `depth` inlined bodies deep, in a function
/// that inlining has grown by `grown` IR nodes so far.
pub fn within_limits(depth: u32, grown: usize) -> bool {
    depth < MAX_DEPTH && grown < BUDGET
}

/// The functions of `module` small enough to inline, by id.
pub fn candidates(module: &Module) -> HashMap<FnId, &Function> {
    module
        .functions
        .iter()
        .filter(|f| f.device != Some(RoutineLevel::Gang))
        .filter_map(|f| Some((f.id?, f)))
        // Functions with loops are not inlined: their call costs little next to the loop, and
        // inlining them would copy their loops (twice over where the bounds checks are
        // versioned) into every caller.
        .filter(|(_, f)| block_size(&f.body) <= MAX_SIZE && !has_loop(&f.body))
        .collect()
}

/// The size of a block in statements and expressions; statements that move data or launch
/// regions, and array sections, count as too large, so that functions holding them are never
/// inlined.
pub fn block_size(b: &Block) -> usize {
    let mut size = Size::default();
    size.block(b);
    if size.too_large {
        usize::MAX
    } else {
        size.nodes
    }
}

/// Counts the statements and expressions a walk meets (and a `print`'s text pieces).
#[derive(Default)]
struct Size {
    nodes: usize,
    too_large: bool,
}

impl<'a> Visitor<'a> for Size {
    fn stmt(&mut self, s: &'a Stmt) {
        self.nodes += 1;
        match s {
            Stmt::Launch(_) | Stmt::Data(_) | Stmt::DataRegion { .. } | Stmt::Wait { .. } => {
                self.too_large = true
            }
            Stmt::Print(args, _) => {
                self.nodes += args
                    .iter()
                    .filter(|a| matches!(a, PrintArg::Str(_)))
                    .count();
                walk_stmt(self, s);
            }
            _ => walk_stmt(self, s),
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        self.nodes += 1;
        match e.kind {
            ExprKind::Section { .. } => self.too_large = true,
            _ => walk_expr(self, e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::SourceFile;

    /// The names of the candidates of `text`'s functions, sorted.
    fn candidates_of(text: &str) -> Vec<String> {
        let m = crate::lower_source(&SourceFile::new("t.acc", text)).expect("valid source");
        let mut names: Vec<String> = candidates(&m).values().map(|f| f.name.clone()).collect();
        names.sort();
        names
    }

    #[test]
    fn small_functions_without_loops_are_candidates() {
        let text = "fn twice(x: f64) -> f64 {\n  return 2.0 * x\n}\n\
                    fn fib(n: i64) -> i64 {\n  if n < 2 {\n    return n\n  }\n  \
                    return fib(n - 1) + fib(n - 2)\n}\n\
                    fn total(a: f64[]) -> f64 {\n  let s = 0.0\n  for i in 0..len(a) {\n    \
                    s = s + a[i]\n  }\n  return s\n}\n";
        assert_eq!(candidates_of(text), ["fib", "twice"]);
    }

    #[test]
    fn large_functions_are_not_candidates() {
        let sum = (0..MAX_SIZE)
            .map(|i| format!("x * {i}.0"))
            .collect::<Vec<_>>();
        let text = format!(
            "fn big(x: f64) -> f64 {{\n  return {}\n}}\n",
            sum.join(" + ")
        );
        assert!(candidates_of(&text).is_empty());
    }

    #[test]
    fn data_movement_and_regions_are_never_inlined() {
        let text = "fn fill(a: f64[]) {\n  acc parallel loop\n  for i in 0..len(a) {\n    \
                    a[i] = 1.0\n  }\n}\nfn send(a: f64[]) {\n  acc update device(a)\n}\n";
        assert!(candidates_of(text).is_empty());
    }

    #[test]
    fn inlining_stops_at_the_depth_and_the_budget() {
        assert!(within_limits(0, 0));
        assert!(within_limits(MAX_DEPTH - 1, BUDGET - 1));
        assert!(!within_limits(MAX_DEPTH, 0));
        assert!(!within_limits(0, BUDGET));
    }
}
