//! What the generation of one module shares (`Cx`): the IR module, the options, the
//! routines generated so far and their signatures, the module-scope pieces the functions use
//! (shared memory, the row barrier, constants) and the print statements.

use std::collections::HashMap;

use acc_lang::hir::{FnId, VarId};
use acc_lang::ir::{self, Expr, ExprKind, Stmt, Ty};

use crate::plan::Mode;
use crate::{unsupported, PtxError, PtxOptions, Result};

/// Bytes of dynamic shared memory per thread and per row of a block (`acc_shared`: first the
/// scratch buffer, an 8-byte slot per thread, then the row barriers' words, a counter and a
/// generation per row). Sized at launch, so that a small block does not hold the 16 KiB the
/// largest would need (which kept resident blocks, and latency-bound kernels' speed, down).
pub(crate) const SHARED_BYTES_PER_THREAD: u32 = 8;

/// What the generation of one module shares.
pub(crate) struct Cx<'m> {
    pub module: &'m ir::Module,
    pub options: PtxOptions,
    pub uses_scratch: bool,
    pub uses_row_barrier: bool,
    /// The print statements generated so far: entry `i` has id `first_print + i`.
    pub prints: Vec<crate::DevicePrint>,
    pub first_print: u32,
    /// Routines generated (or found impossible), by id and the mode of their callers.
    functions: HashMap<(FnId, Mode), std::result::Result<FuncSig, String>>,
    /// Routines being generated (a call back into one is recursion).
    in_progress: Vec<FnId>,
    /// The globals each routine reads, itself or through the routines it calls.
    globals_read: HashMap<FnId, Vec<(VarId, ir::Ty)>>,
    /// Prototypes and definitions of the generated routines, in order of generation.
    definitions: Vec<(String, String)>,
    /// The helpers generated so far (the math library's), by symbol.
    helpers_done: Vec<String>,
    /// Module-scope constants (the math library's tables).
    pub globals: Vec<String>,
}

impl<'m> Cx<'m> {
    pub(crate) fn new(module: &'m ir::Module, options: PtxOptions) -> Self {
        Cx {
            module,
            options,
            uses_scratch: false,
            uses_row_barrier: false,
            prints: Vec::new(),
            first_print: 0,
            functions: HashMap::new(),
            in_progress: Vec::new(),
            globals_read: HashMap::new(),
            helpers_done: Vec::new(),
            definitions: Vec::new(),
            globals: Vec::new(),
        }
    }

    /// Routine `id` for callers in `mode` if generated (or found impossible) before.
    pub(crate) fn routine(&self, id: FnId, mode: Mode) -> Option<Result<FuncSig>> {
        let done = self.functions.get(&(id, mode))?;
        Some(done.clone().map_err(PtxError::Unsupported))
    }

    /// Records routine `id` for callers in `mode`, generated or found impossible.
    pub(crate) fn record_routine(
        &mut self,
        id: FnId,
        mode: Mode,
        entry: std::result::Result<FuncSig, String>,
    ) {
        self.functions.insert((id, mode), entry);
    }

    /// Routine `id` is being generated from now on (`leave` ends it): a call back into it
    /// is recursion, refused here.
    pub(crate) fn enter(&mut self, id: FnId) -> Result<()> {
        if self.in_progress.contains(&id) {
            return unsupported("a recursive routine");
        }
        self.in_progress.push(id);
        Ok(())
    }

    /// The end of the routine the last `enter` began.
    pub(crate) fn leave(&mut self) {
        self.in_progress.pop();
    }

    /// Whether the helper named `symbol` is wanted for the first time (it then counts as
    /// generated).
    pub(crate) fn first_use(&mut self, symbol: String) -> bool {
        if self.helpers_done.contains(&symbol) {
            return false;
        }
        self.helpers_done.push(symbol);
        true
    }

    /// The prototypes and definitions of the module's `.func`s, in order of generation.
    pub(crate) fn definitions(&self) -> &[(String, String)] {
        &self.definitions
    }

    /// Add a `.func` to the module: its prototype line and its definition.
    pub(crate) fn push_definition(&mut self, prototype: String, text: String) {
        self.definitions.push((prototype, text));
    }

    /// The globals that routine `id` reads, itself or through the routines it calls, in
    /// `VarId` order, with their types.
    pub(crate) fn globals_of(&mut self, id: FnId) -> Result<Vec<(VarId, ir::Ty)>> {
        if let Some(g) = self.globals_read.get(&id) {
            return Ok(g.clone());
        }
        let module = self.module;
        let Some(f) = module.functions.iter().find(|f| f.id == Some(id)) else {
            return unsupported(format!("a call of function {} of an earlier compile", id.0));
        };
        self.enter(id)?;
        let result = self.body_globals(&f.body);
        self.leave();
        let globals = result?;
        self.globals_read.insert(id, globals.clone());
        Ok(globals)
    }

    /// The globals that `body` reads, itself or through the routines it calls, with their
    /// types.
    pub(crate) fn body_globals(&mut self, body: &[ir::Stmt]) -> Result<Vec<(VarId, ir::Ty)>> {
        let (mut globals, mut calls) = (Vec::new(), Vec::new());
        reads_and_calls(body, &mut globals, &mut calls);
        calls.sort_by_key(|c| c.0);
        calls.dedup();
        for c in calls {
            globals.extend(self.globals_of(c)?);
        }
        globals.sort_by_key(|g| g.0.index());
        globals.dedup_by_key(|g| g.0);
        Ok(globals)
    }
}

/// What a call needs to know about a routine.
#[derive(Clone, Debug)]
pub(crate) struct FuncSig {
    pub name: String,
    pub params: Vec<Ty>,
    pub ret: Option<Ty>,
    /// Not `seq`: takes the caller's gang and gang count, and runs in the caller's mode.
    pub shared: bool,
    /// The globals it reads (scalars and arrays), in `VarId` order, with their types.
    pub globals: Vec<(VarId, Ty)>,
    /// It synchronizes rows (`acc_row_barrier`, whose words the kernel must zero).
    pub row_barriers: bool,
    /// It uses the shared scratch slots (reductions over threads, broadcasts).
    pub scratch: bool,
    /// It prints: it takes the output buffer's address (`out`).
    pub prints: bool,
}

/// The globals that `stmts` read directly (with their types), and the functions they call.
fn reads_and_calls(stmts: &[Stmt], globals: &mut Vec<(VarId, Ty)>, calls: &mut Vec<FnId>) {
    fn expr(e: &Expr, globals: &mut Vec<(VarId, Ty)>, calls: &mut Vec<FnId>) {
        match &e.kind {
            ExprKind::Global(g) => globals.push((*g, e.ty)),
            ExprKind::Call(f, args) => {
                calls.push(*f);
                args.iter().for_each(|a| expr(a, globals, calls));
            }
            ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => {
                expr(x, globals, calls)
            }
            ExprKind::Binary(_, a, b, _) => {
                expr(a, globals, calls);
                expr(b, globals, calls);
            }
            ExprKind::Load { array, indices, .. } => {
                expr(array, globals, calls);
                indices.iter().for_each(|i| expr(i, globals, calls));
            }
            ExprKind::Builtin(_, args)
            | ExprKind::CheckedBuiltin(_, args, _)
            | ExprKind::ArrayLit(args, _) => args.iter().for_each(|a| expr(a, globals, calls)),
            ExprKind::Section { array, .. } => expr(array, globals, calls),
            ExprKind::Const(_) | ExprKind::Local(_) => {}
        }
    }
    for s in stmts {
        match s {
            Stmt::Set(_, e) | Stmt::SetGlobal(_, e) | Stmt::Eval(e) => expr(e, globals, calls),
            Stmt::Store {
                array,
                indices,
                value,
                ..
            } => {
                expr(array, globals, calls);
                indices.iter().for_each(|i| expr(i, globals, calls));
                expr(value, globals, calls);
            }
            Stmt::If { cond, then, els } => {
                expr(cond, globals, calls);
                reads_and_calls(then, globals, calls);
                reads_and_calls(els, globals, calls);
            }
            Stmt::While { cond, body, .. } => {
                expr(cond, globals, calls);
                reads_and_calls(body, globals, calls);
            }
            Stmt::For(f) => {
                expr(&f.start, globals, calls);
                expr(&f.end, globals, calls);
                expr(&f.step, globals, calls);
                reads_and_calls(&f.body, globals, calls);
            }
            Stmt::Return(Some(e)) | Stmt::Retain(e) | Stmt::Release(e) => expr(e, globals, calls),
            Stmt::Print(args, _) => {
                for a in args {
                    if let acc_lang::ir::PrintArg::Value(e) = a {
                        expr(e, globals, calls);
                    }
                }
            }
            Stmt::Printf(_, args, _) => args.iter().for_each(|a| expr(a, globals, calls)),
            Stmt::Assert { cond, .. } => expr(cond, globals, calls),
            Stmt::Atomic(a) => reads_and_calls(std::slice::from_ref(&*a.body), globals, calls),
            Stmt::Block(b) => reads_and_calls(b, globals, calls),
            Stmt::DataRegion { body, .. } => reads_and_calls(body, globals, calls),
            _ => {}
        }
    }
}
