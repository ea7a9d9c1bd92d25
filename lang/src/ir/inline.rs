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
        .filter(|(_, f)| block_size(&f.body) <= MAX_SIZE && !has_loop(&f.body))
        .collect()
}

/// Whether a block holds a loop. Functions with loops are not inlined: their call costs
/// little next to the loop, and inlining them would copy their loops (twice over where the
/// bounds checks are versioned) into every caller.
fn has_loop(b: &[Stmt]) -> bool {
    b.iter().any(|s| match s {
        Stmt::For(_) | Stmt::While { .. } => true,
        Stmt::If { then, els, .. } => has_loop(then) || has_loop(els),
        Stmt::DataRegion { body, .. } | Stmt::Block(body) => has_loop(body),
        Stmt::Atomic(_, s) => has_loop(std::slice::from_ref(s.as_ref())),
        _ => false,
    })
}

/// The size of a block in statements and expressions; statements that move data or launch
/// regions count as too large, so that functions holding them are never inlined.
pub fn block_size(b: &Block) -> usize {
    b.iter().map(stmt_size).fold(0, usize::saturating_add)
}

fn stmt_size(s: &Stmt) -> usize {
    let exprs = |es: &[Expr]| es.iter().map(expr_size).fold(0, usize::saturating_add);
    let own = match s {
        Stmt::Set(_, e)
        | Stmt::SetGlobal(_, e)
        | Stmt::Eval(e)
        | Stmt::Retain(e)
        | Stmt::Release(e)
        | Stmt::Return(Some(e))
        | Stmt::Assert { cond: e, .. } => expr_size(e),
        Stmt::Store {
            array,
            indices,
            value,
            ..
        } => expr_size(array) + exprs(indices) + expr_size(value),
        Stmt::If { cond, then, els } => expr_size(cond) + block_size(then) + block_size(els),
        Stmt::While { cond, body, .. } => expr_size(cond) + block_size(body),
        Stmt::For(f) => {
            expr_size(&f.start) + expr_size(&f.end) + expr_size(&f.step) + block_size(&f.body)
        }
        Stmt::Break | Stmt::Continue | Stmt::Return(None) => 0,
        Stmt::Print(args, _) => args
            .iter()
            .map(|a| match a {
                PrintArg::Value(e) => expr_size(e),
                PrintArg::Str(_) => 1,
            })
            .sum(),
        Stmt::Printf(_, args, _) => exprs(args),
        Stmt::Atomic(_, s) => stmt_size(s),
        Stmt::Block(b) => block_size(b),
        Stmt::Launch(_) | Stmt::Data(_) | Stmt::DataRegion { .. } | Stmt::Wait { .. } => usize::MAX,
    };
    own.saturating_add(1)
}

fn expr_size(e: &Expr) -> usize {
    let exprs = |es: &[Expr]| es.iter().map(expr_size).fold(0, usize::saturating_add);
    let own = match &e.kind {
        ExprKind::Const(_) | ExprKind::Local(_) | ExprKind::Global(_) => 0,
        ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => expr_size(x),
        ExprKind::Binary(_, l, r, _) => expr_size(l) + expr_size(r),
        ExprKind::Load { array, indices, .. } => expr_size(array) + exprs(indices),
        ExprKind::Call(_, args)
        | ExprKind::Builtin(_, args)
        | ExprKind::CheckedBuiltin(_, args, _)
        | ExprKind::ArrayLit(args, _) => exprs(args),
        ExprKind::Section { .. } => usize::MAX,
    };
    own.saturating_add(1)
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
