//! Small user functions translated in place of their calls.
//!
//! A call of a candidate (`acc_lang::ir::inline`: a small function of the same compile, without
//! loops) is translated as the callee's body, inline, where calls repeat (in a function, or in
//! a loop of a `main` or a region), within the inlining's depth and budget: its locals become
//! new variables of the caller, its `return` jumps to the code after the call with the value,
//! and its run-time failures go straight to the caller's failure exit (where the caller's check
//! of `ctx.status` after the call would have sent them).
//!
//! Inlining changes no behaviour: the body is the one the callee would run, translated the
//! same way, with the same evaluation order, reference counting and run-time checks.

use std::collections::{HashMap, HashSet};

use acc_lang::hir::FnId;
use acc_lang::ir::{self, inline};
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value};

use super::{clif_type, Tx};
use crate::JitError;

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
        let fits = inline::within_limits(self.inline_depth, self.inlined_size);
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
        self.inlined_size = self
            .inlined_size
            .saturating_add(inline::block_size(&f.body));
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
