//! Small user functions translated in place of their calls.
//!
//! A call costs a frame: the callee saves and restores the registers it uses, and the caller
//! keeps its live values across the call. For a small function that is most of the work (a
//! recursive `fib` spends nearly all its time entering and leaving frames), so a call of a
//! small function of the same compile, without loops, is translated as the callee's body,
//! inline, where calls repeat (in a function, or in a loop of a `main` or a region): its locals
//! become new variables of the caller, its `return` jumps to the code after the call with the
//! value, and its run-time failures go straight to the caller's failure exit (where the
//! caller's check of `ctx.status` after the call would have sent them). Recursion unrolls:
//! a small recursive function inlines its own calls, up to `MAX_DEPTH` levels, which cuts the
//! number of frames its recursion enters by about half per level.
//!
//! Only functions of the module being compiled are candidates (their string and format ids are
//! the module's own); gang routines, which take the caller's gang, never are. Inlining changes
//! no behaviour: the body is the one the callee would run, translated the same way, with the
//! same evaluation order, reference counting and run-time checks.

use std::collections::{HashMap, HashSet};

use acc_lang::hir::FnId;
use acc_lang::ir::{self, Block as IrBlock, Expr, ExprKind, PrintArg, Stmt};
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value};

use super::{clif_type, is_gang_routine, Tx};
use crate::JitError;

/// The largest body (in IR statements and expressions) inlined at a call.
const MAX_SIZE: usize = 40;

/// How many inlined bodies may nest (a body inlined into one that was itself inlined, …).
pub(super) const MAX_DEPTH: u32 = 3;

/// How much inlined code (in IR nodes) one function may grow by.
pub(super) const BUDGET: usize = 400;

/// The functions of `module` small enough to inline, by id.
pub(crate) fn candidates(module: &ir::Module) -> HashMap<FnId, &ir::Function> {
    module
        .functions
        .iter()
        .filter(|f| !is_gang_routine(f))
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
pub(super) fn block_size(b: &IrBlock) -> usize {
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

/// The state of the function body being translated that an inlined body replaces with its
/// own, and gives back after it.
struct Saved {
    locals: Vec<(cranelift_frontend::Variable, ir::Ty)>,
    cells: HashSet<ir::LocalId>,
    loops: Vec<super::LoopTargets>,
    ret: Option<ir::Ty>,
    gang: Option<super::Gang>,
    epilogue: Option<cranelift_codegen::ir::Block>,
    inline_exit: Option<cranelift_codegen::ir::Block>,
    cached_globals: HashMap<ir::GlobalId, Value>,
    proven: HashSet<usize>,
}

impl<'a> Tx<'a, '_> {
    /// The callee's body if a call of `id` is to be inlined here.
    pub(super) fn inline_candidate(&self, id: FnId) -> Option<&'a ir::Function> {
        let env: &'a super::Env<'a> = self.env;
        let f = *env.inlinable.get(&id)?;
        // Code of a `main` or a region outside loops runs once: a call there is not worth
        // the code.
        let hot = self.in_function || self.inline_depth > 0 || !self.loops.is_empty();
        let fits = self.inline_depth < MAX_DEPTH && self.inlined_size < BUDGET;
        (hot && fits).then_some(f)
    }

    /// The body of `f` in place of a call with the evaluated arguments `args`: its result, if
    /// it has one.
    pub(super) fn inline_call(
        &mut self,
        f: &'a ir::Function,
        args: &[Value],
    ) -> Result<Option<Value>, JitError> {
        let exit = self.b.create_block();
        let result = f.ret.map(|t| self.b.append_block_param(exit, clif_type(t)));
        let locals = f
            .locals
            .iter()
            .map(|l| (self.b.declare_var(clif_type(l.ty)), l.ty))
            .collect();
        let saved = Saved {
            locals: std::mem::replace(&mut self.locals, locals),
            // The region's shared scalars are its locals, not the callee's.
            cells: std::mem::take(&mut self.cells),
            loops: std::mem::take(&mut self.loops),
            ret: std::mem::replace(&mut self.ret, f.ret),
            // The callee runs as it would standalone: not a gang routine, so the only gang.
            gang: self.gang.take(),
            epilogue: self.epilogue.take(),
            inline_exit: self.inline_exit.replace(exit),
            // What the caller proved or loaded ahead is about its own code.
            cached_globals: std::mem::take(&mut self.cached_globals),
            proven: std::mem::take(&mut self.proven),
        };
        self.inline_depth += 1;
        self.inlined_size = self.inlined_size.saturating_add(block_size(&f.body));
        // The inlined body is one call deeper: its own calls count from there. (It does not
        // check the limit itself; the first call it makes that is not inlined does.)
        let outer_depth = self.depth;
        self.depth = self.b.ins().iadd_imm_u(outer_depth, 1);

        self.bind_params(f, args);
        self.block(&f.body)?;
        // Falling off the end, as `function_body` does.
        self.return_dummy();

        self.inline_depth -= 1;
        self.depth = outer_depth;
        self.locals = saved.locals;
        self.cells = saved.cells;
        self.loops = saved.loops;
        self.ret = saved.ret;
        self.gang = saved.gang;
        self.epilogue = saved.epilogue;
        self.inline_exit = saved.inline_exit;
        self.cached_globals = saved.cached_globals;
        self.proven = saved.proven;
        self.b.switch_to_block(exit);
        Ok(result)
    }

    /// Leave an inlined body: jump to the code after its call with the result, if any.
    pub(super) fn inline_return(&mut self, exit: cranelift_codegen::ir::Block, v: Option<Value>) {
        let args: Vec<BlockArg> = v.into_iter().map(BlockArg::Value).collect();
        self.b.ins().jump(exit, &args);
    }
}
