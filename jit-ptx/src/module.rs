//! The module: every region that can be compiled as a kernel, the routines they call, and the
//! module-scope pieces they share (shared-memory buffers, the row barrier, string constants),
//! in one PTX text, and the descriptions of their print statements.

use std::collections::HashMap;

use acc_lang::hir::{FnId, RoutineLevel, VarId};
use acc_lang::ir;

use crate::call::{emit_function, prototype, reads_and_calls, FuncSig};
use crate::fx::{unsupported, Result};
use crate::plan::Mode;
use crate::{PtxError, PtxModule, PtxOptions};

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
    /// Some `while` loop polls the stop word (`Fx::poll_stop`), which the module declares.
    pub uses_stop_word: bool,
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
    /// The math library's helpers generated so far.
    pub math_done: Vec<crate::math::MathFn>,
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
            uses_stop_word: false,
            prints: Vec::new(),
            first_print: 0,
            functions: HashMap::new(),
            in_progress: Vec::new(),
            globals_read: HashMap::new(),
            math_done: Vec::new(),
            definitions: Vec::new(),
            globals: Vec::new(),
        }
    }

    /// Routine `id` for callers in `mode`, generated on first use. A `seq` routine has one
    /// variant (it runs in one thread); the others one per mode of their callers.
    pub(crate) fn function(&mut self, id: FnId, mode: Mode) -> Result<FuncSig> {
        let module = self.module;
        let Some(f) = module.functions.iter().find(|f| f.id == Some(id)) else {
            return unsupported(format!("a call of function {} of an earlier compile", id.0));
        };
        let mode = match f.device {
            Some(RoutineLevel::Seq) => Mode::Thread,
            _ => mode,
        };
        if let Some(done) = self.functions.get(&(id, mode)) {
            return done.clone().map_err(PtxError::Unsupported);
        }
        if self.in_progress.contains(&id) {
            return unsupported("a recursive routine");
        }
        self.in_progress.push(id);
        let result = emit_function(self, f, id, mode);
        self.in_progress.pop();
        let entry = match result {
            Ok((sig, text)) => {
                self.definitions.push((prototype(&sig), text));
                Ok(sig)
            }
            Err(PtxError::Unsupported(why)) => Err(format!("routine `{}`: {why}", f.name)),
        };
        self.functions.insert((id, mode), entry.clone());
        entry.map_err(PtxError::Unsupported)
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
        if self.in_progress.contains(&id) {
            return unsupported("a recursive routine");
        }
        self.in_progress.push(id);
        let result = self.body_globals(&f.body);
        self.in_progress.pop();
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

/// Generate the module; see the crate documentation.
pub(crate) fn emit(module: &ir::Module, options: &PtxOptions, first_print: u32) -> PtxModule {
    let mut cx = Cx::new(module, options.clone());
    cx.first_print = first_print;
    let mut kernels = Vec::new();
    let mut kernel_texts = Vec::new();
    let mut unsupported = Vec::new();
    for region in &module.regions {
        match crate::kernel::emit_kernel(&mut cx, region) {
            Ok((kernel, text)) => {
                kernels.push(kernel);
                kernel_texts.push(text);
            }
            Err(PtxError::Unsupported(why)) => unsupported.push((region.id, why)),
        }
    }
    let mut text = String::new();
    text += "//\n// Generated by acc-jit-ptx\n//\n\n";
    text += ".version 8.0\n.target sm_90\n.address_size 64\n\n";
    if cx.uses_scratch || cx.uses_row_barrier {
        text += ".extern .shared .align 8 .b8 acc_shared[];\n";
    }
    if cx.uses_stop_word {
        text += &format!(".visible .global .align 4 .u32 {};\n", crate::fx::STOP_WORD);
    }
    for g in &cx.globals {
        text += g;
    }
    text += "\n";
    if cx.uses_row_barrier {
        text += ROW_BARRIER;
        text += "\n";
    }
    for (proto, _) in &cx.definitions {
        text += proto;
    }
    if !cx.definitions.is_empty() {
        text += "\n";
    }
    for (_, def) in &cx.definitions {
        text += def;
        text += "\n";
    }
    for k in kernel_texts {
        text += &k;
        text += "\n";
    }
    PtxModule {
        text,
        kernels,
        unsupported,
        prints: cx.prints,
    }
}

/// Synchronize the threads of the calling thread's row (`%tid.y`), for code that rows run
/// independently (worker loops). A row of one whole warp (`vector_length(32)`) is one
/// `bar.warp.sync`; any other width, a sense-reversing barrier on the row's counter and
/// generation words in `acc_shared` after the scratch slots (zeroed by the kernel at its start). A thread waiting for
/// a row mate that failed (and left the kernel) leaves too, once the error record is set.
const ROW_BARRIER: &str = "\
.func acc_row_barrier (.param .b64 rb_err)
{
\t.reg .pred %p<4>;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<4>;
\tmov.u32 %r1, %ntid.x;
\tsetp.le.u32 %p1, %r1, 1;
\t@%p1 bra $Ldone;
\tsetp.ne.u32 %p1, %r1, 32;
\t@%p1 bra $Lsoft;
\tbar.warp.sync -1;
\tbra $Ldone;
$Lsoft:
\tld.param.u64 %rd1, [rb_err];
\tmov.u32 %r2, %ntid.y;
\tmul.lo.u32 %r2, %r2, %r1;
\tmov.u32 %r3, %tid.y;
\tadd.u32 %r2, %r2, %r3;
\tmov.u64 %rd2, acc_shared;
\tmul.wide.u32 %rd3, %r2, 8;
\tadd.u64 %rd2, %rd2, %rd3;
\tld.volatile.shared.u32 %r3, [%rd2+4];
\tfence.acq_rel.cta;
\tatom.shared.add.u32 %r4, [%rd2], 1;
\tsub.u32 %r5, %r1, 1;
\tsetp.eq.u32 %p2, %r4, %r5;
\t@!%p2 bra $Lwait;
\tst.volatile.shared.u32 [%rd2], 0;
\tfence.acq_rel.cta;
\tadd.u32 %r6, %r3, 1;
\tst.volatile.shared.u32 [%rd2+4], %r6;
\tbra $Ldone;
$Lwait:
\tld.volatile.shared.u32 %r6, [%rd2+4];
\tsetp.ne.u32 %p3, %r6, %r3;
\t@%p3 bra $Lleave;
\tld.volatile.global.u32 %r7, [%rd1];
\tsetp.ne.u32 %p3, %r7, 0;
\t@%p3 exit;
\tbra $Lwait;
$Lleave:
\tfence.acq_rel.cta;
$Ldone:
\tret;
}
";
