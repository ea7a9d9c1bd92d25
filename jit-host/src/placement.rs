//! Where a function's loop branches land: a conditional branch of a small loop that crosses a
//! 32-byte boundary of the code, or ends on one, is moved by compiling the function again with
//! a few bytes of padding at its entry.
//!
//! Intel cores (the JCC erratum's microcode and its successors) do not keep such a branch in
//! the decoded-instruction cache, so the loop is decoded again on every iteration. A loop that
//! is otherwise fast then runs several times slower: on the 32-core Sapphire Rapids host of the
//! GPU machine, the Jacobi copy loop `A[j, i] = Anew[j, i]` took 600–750 µs instead of 140 µs
//! on some gangs whenever its `je` straddled a boundary, and the `kernels` Jacobi ran 1.3–1.6x
//! the time of the `parallel loop` one, which differed only in where its loop fell
//! (docs/GPU-RESULTS.md, session 18). Compilers avoid it by padding inside the function
//! (`-mbranches-within-32B-boundaries`); Cranelift emits no padding of its own, so the padding
//! here is dead stores to a stack slot at the function's entry, which run once per call.
//!
//! Functions start on 64-byte boundaries (`log2_min_function_alignment`), so an offset in the
//! compiled code tells where a branch lands in memory.

use cranelift_codegen::cursor::{Cursor, FuncCursor};
use cranelift_codegen::ir::{types, Function, InstBuilder, StackSlotData, StackSlotKind};
use cranelift_codegen::isa::TargetIsa;
use cranelift_codegen::{CodegenError, Context};

/// The log2 of the alignment every function gets (see the module comment).
pub(crate) const LOG2_FUNCTION_ALIGNMENT: &str = "6";

/// The boundary a branch must not cross.
const WINDOW: u32 = 32;

/// Back edges longer than this are not small loops (their branches are not worth a compile).
const SMALL_LOOP: u32 = 256;

/// The most padding stores tried (each moves the code by 8 to 12 bytes).
const MOST_STORES: u32 = 4;

/// Compiles `func`, padded at its entry when that moves every innermost small loop's
/// conditional branches off 32-byte boundaries (or, failing that, the most of them).
pub(crate) fn compile(isa: &dyn TargetIsa, func: Function) -> Result<Context, CodegenError> {
    let original = func.clone();
    let mut best = compiled(isa, func)?;
    let mut hazards = split_branches(&best);
    for stores in 1..=MOST_STORES {
        if hazards == 0 {
            break;
        }
        let mut padded = original.clone();
        pad_entry(&mut padded, stores);
        let ctx = compiled(isa, padded)?;
        let h = split_branches(&ctx);
        if h < hazards {
            (best, hazards) = (ctx, h);
        }
    }
    Ok(best)
}

fn compiled(isa: &dyn TargetIsa, func: Function) -> Result<Context, CodegenError> {
    let mut ctx = Context::for_function(func);
    ctx.compile(isa, &mut Default::default())
        .map_err(|e| e.inner)?;
    Ok(ctx)
}

/// How many conditional branches of the compiled function's innermost small loops cross or
/// end on a 32-byte boundary. A machine block ends where the next begins (`bb_starts`, from
/// `machine_code_cfg_info`); its last instructions are a `jcc rel32` (`0f 8x`), possibly
/// followed by a `jmp rel32` (`e9`), the only branch forms Cranelift's x64 back end emits.
fn split_branches(ctx: &Context) -> usize {
    let Some(code) = ctx.compiled_code() else {
        return 0;
    };
    let bytes = code.code_buffer();
    let starts = &code.bb_starts;
    let block_end = |start: u32| {
        (starts.iter().copied())
            .find(|&s| s > start)
            .unwrap_or(bytes.len() as u32)
    };
    let back_edges: Vec<(u32, u32)> = (code.bb_edges.iter().copied())
        .filter(|&(from, to)| to <= from && block_end(from) - to <= SMALL_LOOP)
        .collect();
    // Innermost loops only: no other back edge lies within.
    let innermost = |&&(from, to): &&(u32, u32)| {
        !(back_edges.iter()).any(|&(f, t)| (f, t) != (from, to) && t >= to && f <= from)
    };
    let mut split = Vec::new();
    for &(from, to) in back_edges.iter().filter(innermost) {
        // Every block of the loop, `to` up to the one with the back edge.
        for &s in starts.iter().filter(|&&s| s >= to && s <= from) {
            if let Some(b) = conditional_branch_before(bytes, block_end(s)) {
                if crosses(b) && !split.contains(&b.0) {
                    split.push(b.0);
                }
            }
        }
    }
    split.len()
}

/// The `jcc rel32` that ends at `end`, or just before a `jmp rel32` that does: its range.
fn conditional_branch_before(bytes: &[u8], end: u32) -> Option<(u32, u32)> {
    let is_jcc = |at: u32| {
        let at = at as usize;
        bytes.get(at) == Some(&0x0f) && bytes.get(at + 1).is_some_and(|b| b & 0xf0 == 0x80)
    };
    let jcc_end = match end {
        e if e >= 6 && is_jcc(e - 6) => e,
        e if e >= 11 && bytes.get(e as usize - 5) == Some(&0xe9) && is_jcc(e - 11) => e - 5,
        _ => return None,
    };
    Some((jcc_end - 6, jcc_end))
}

fn crosses((start, end): (u32, u32)) -> bool {
    start / WINDOW != (end - 1) / WINDOW || end % WINDOW == 0
}

/// Adds `stores` dead one-byte stores to a stack slot of their own at the top of the entry
/// block.
fn pad_entry(func: &mut Function, stores: u32) {
    let slot =
        func.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, stores, 0));
    let Some(entry) = func.layout.entry_block() else {
        return;
    };
    let mut pos = FuncCursor::new(func).at_first_insertion_point(entry);
    for i in 0..stores {
        let v = pos.ins().iconst(types::I8, i64::from(i));
        pos.ins().stack_store(types::I64, v, slot, i as i32);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{condcodes::IntCC, AbiParam, MemFlagsData, Signature};
    use cranelift_codegen::isa::CallConv;
    use cranelift_codegen::settings::{self, Configurable};
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// `f(p, n)`: `lead` stores before a loop copying `p[i]` to `p[i + 1]` for `i < n`.
    fn copy_loop(isa: &dyn TargetIsa, lead: i64) -> Function {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params
            .extend([AbiParam::new(types::I64), AbiParam::new(types::I64)]);
        let mut func = Function::with_name_signature(Default::default(), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let (entry, body, exit) = (b.create_block(), b.create_block(), b.create_block());
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let (p, n) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let flags = MemFlagsData::trusted();
        for k in 0..lead {
            let v = b.ins().iconst(types::I64, k);
            b.ins().store(flags, v, p, (8 * k) as i32);
        }
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(body, &[zero.into()]);
        b.switch_to_block(body);
        let i = b.append_block_param(body, types::I64);
        let at = b.ins().ishl_imm_u(i, 3);
        let at = b.ins().iadd(p, at);
        let v = b.ins().load(types::I64, flags, at, 0);
        b.ins().store(flags, v, at, 8);
        let i1 = b.ins().iadd_imm_s(i, 1);
        let more = b.ins().icmp(IntCC::SignedLessThan, i1, n);
        b.ins().brif(more, body, &[i1.into()], exit, &[]);
        b.switch_to_block(exit);
        b.ins().return_(&[]);
        b.seal_all_blocks();
        b.finalize(isa.frontend_config());
        func
    }

    #[test]
    fn a_loop_whose_branch_straddles_a_boundary_is_moved_off_it() {
        let mut flags = settings::builder();
        flags.set("opt_level", "speed").unwrap();
        flags.set("machine_code_cfg_info", "true").unwrap();
        flags
            .set("log2_min_function_alignment", LOG2_FUNCTION_ALIGNMENT)
            .unwrap();
        let Ok(isa) = cranelift_native::builder() else {
            return; // not an x86-64 host: nothing to place
        };
        let isa = isa.finish(settings::Flags::new(flags)).unwrap();
        if isa.triple().architecture.to_string() != "x86_64" {
            return;
        }
        let mut straddling = 0;
        for lead in 0..24 {
            let plain = compiled(&*isa, copy_loop(&*isa, lead)).unwrap();
            if split_branches(&plain) == 0 {
                continue;
            }
            straddling += 1;
            let placed = compile(&*isa, copy_loop(&*isa, lead)).unwrap();
            assert_eq!(split_branches(&placed), 0, "{lead} stores before the loop");
        }
        // Some of the 24 layouts put the loop's branch across a boundary.
        assert!(straddling > 0);
    }

    #[test]
    fn a_branch_across_or_ending_on_a_boundary_is_split() {
        assert!(crosses((0x1c, 0x22)));
        assert!(crosses((0x1b, 0x21)));
        assert!(crosses((0x1a, 0x20)));
        assert!(!crosses((0x20, 0x26)));
        assert!(!crosses((0x19, 0x1f)));
    }

    #[test]
    fn conditional_branches_are_found_before_a_block_end() {
        // cmp; je +0x13 | add …
        let mut code = vec![0x90; 0x19];
        code.extend([0x4d, 0x3b, 0xdd, 0x0f, 0x84, 0x13, 0, 0, 0]);
        assert_eq!(conditional_branch_before(&code, 0x22), Some((0x1c, 0x22)));
        // jne …; jmp …
        code.extend([0x0f, 0x85, 1, 0, 0, 0, 0xe9, 2, 0, 0, 0]);
        assert_eq!(conditional_branch_before(&code, 0x2d), Some((0x22, 0x28)));
        // a block ending in a plain jump has none
        code.extend([0x90, 0xe9, 2, 0, 0, 0]);
        assert_eq!(conditional_branch_before(&code, 0x33), None);
    }
}
