//! Where a function's loop branches land: a branch of an innermost small loop that crosses a
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
use cranelift_jit::JITModule;
use cranelift_module::{FuncId, Module, ModuleReloc};

/// The log2 of the alignment every function gets (see the module comment).
pub(crate) const LOG2_FUNCTION_ALIGNMENT: &str = "6";

/// The boundary a branch must not cross.
const WINDOW: u32 = 32;

/// Back edges longer than this are not small loops (their branches are not worth a compile).
const SMALL_LOOP: u32 = 256;

/// The most padding stores tried (each moves the code by a few bytes).
const MOST_STORES: u32 = 4;

/// How far before a conditional branch its fused compare starts (`cmp r64, r64`, the form of
/// acc's loop latches): the pair must not cross a boundary either.
const FUSED_COMPARE: u32 = 3;

/// Compiles `func` (`compile`) and defines it in `jit` from its bytes, with what
/// `JITModule::define_function` would give it: the same alignment and relocations. (That
/// method compiles by itself, with no look at the result.)
pub(crate) fn define(jit: &mut JITModule, id: FuncId, func: Function) -> Result<(), String> {
    let ctx = compile(jit.isa(), func).map_err(|e| format!("{e:?}"))?;
    let code = ctx.compiled_code().expect("compiled above");
    let align = (code.buffer.alignment as u64)
        .max(jit.isa().function_alignment().minimum as u64)
        .max(jit.isa().symbol_alignment());
    let relocs: Vec<ModuleReloc> = (code.buffer.relocs().iter())
        .map(|r| ModuleReloc::from_mach_reloc(r, &ctx.func, id))
        .collect();
    jit.define_function_bytes(id, align, code.code_buffer(), &relocs)
        .map_err(|e| format!("{e:?}"))
}

/// Compiles `func`, padded at its entry when that moves the branches of its innermost small
/// loops off 32-byte boundaries (or, failing that, most of them).
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
        // The unpadded function compiled; a padded one that does not is only not taken.
        let Ok(ctx) = compiled(isa, padded) else {
            break;
        };
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

/// A branch at the end of a machine block: where its bytes are and where it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Branch {
    start: u32,
    end: u32,
    target: u32,
    conditional: bool,
}

/// How many branches of the compiled function's innermost small loops cross or end on a
/// 32-byte boundary. Branches are read from the bytes at the end of each machine block
/// (`bb_starts`, from `machine_code_cfg_info`): a `jcc rel32` (`0f 8x`), a `jmp rel32` (`e9`),
/// or both, the only branch forms Cranelift's x64 back end emits. (`bb_edges` is not used: in
/// Cranelift 0.135 it pairs blocks wrongly after a cold block, which acc's loops have.)
fn split_branches(ctx: &Context) -> usize {
    let Some(code) = ctx.compiled_code() else {
        return 0;
    };
    let bytes = code.code_buffer();
    let mut starts = code.bb_starts.clone();
    starts.sort_unstable();
    let mut branches = Vec::new();
    for (i, &start) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(bytes.len() as u32);
        branches.extend(branches_before(bytes, start, end));
    }
    // A loop is a branch back to before itself; small ones only.
    let loops: Vec<(u32, u32)> = (branches.iter())
        .filter(|b| b.target < b.start && b.end - b.target <= SMALL_LOOP)
        .map(|b| (b.target, b.end))
        .collect();
    let innermost = |&&(from, to): &&(u32, u32)| {
        !(loops.iter()).any(|&(f, t)| (f, t) != (from, to) && f >= from && t <= to)
    };
    let mut split = Vec::new();
    for &(from, to) in loops.iter().filter(innermost) {
        for b in branches.iter().filter(|b| b.start >= from && b.end <= to) {
            let start = if b.conditional {
                b.start.saturating_sub(FUSED_COMPARE)
            } else {
                b.start
            };
            if crosses((start, b.end)) && !split.contains(&b.start) {
                split.push(b.start);
            }
        }
    }
    split.len()
}

/// The branches that end the block `start..end`: a `jcc rel32` ending at `end`, or a
/// `jmp rel32` ending there, possibly after a `jcc rel32`.
fn branches_before(bytes: &[u8], start: u32, end: u32) -> Vec<Branch> {
    let at = |i: u32| bytes.get(i as usize).copied();
    let rel32 = |i: u32| {
        let b = bytes.get(i as usize..i as usize + 4)?;
        Some(i32::from_le_bytes(b.try_into().ok()?))
    };
    let jcc = |end: u32| {
        let s = end.checked_sub(6).filter(|&s| s >= start)?;
        (at(s) == Some(0x0f) && at(s + 1).is_some_and(|b| b & 0xf0 == 0x80)).then_some(())?;
        Some(Branch {
            start: s,
            end,
            target: end.checked_add_signed(rel32(s + 2)?)?,
            conditional: true,
        })
    };
    let jmp = |end: u32| {
        let s = end.checked_sub(5).filter(|&s| s >= start)?;
        (at(s) == Some(0xe9)).then_some(())?;
        Some(Branch {
            start: s,
            end,
            target: end.checked_add_signed(rel32(s + 1)?)?,
            conditional: false,
        })
    };
    match (jcc(end), jmp(end)) {
        (Some(j), _) => vec![j],
        (None, Some(j)) => jcc(j.start).into_iter().chain([j]).collect(),
        (None, None) => Vec::new(),
    }
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

    /// `f(p, n)`: `lead` stores before a loop copying `p[i]` to `p[i + 1]` for `i < n`, with a
    /// cold block off its latch.
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
        // As acc's chunked loops: the latch leaves for a cold block every 1024 iterations,
        // which comes back to the body (Cranelift moves cold blocks to the function's end).
        let (latch, refill) = (b.create_block(), b.create_block());
        b.set_cold_block(refill);
        let more = b.ins().icmp(IntCC::SignedLessThan, i1, n);
        b.ins().brif(more, latch, &[], exit, &[]);
        b.switch_to_block(latch);
        let low = b.ins().band_imm_u(i1, 1023);
        let chunk_end = b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        b.ins().brif(chunk_end, refill, &[], body, &[i1.into()]);
        b.switch_to_block(refill);
        b.ins().store(flags, i1, p, 0);
        b.ins().jump(body, &[i1.into()]);
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
    fn branches_are_read_from_a_block_end() {
        // cmp; je +0x13 (to 0x35)
        let mut code = vec![0x90; 0x19];
        code.extend([0x4d, 0x3b, 0xdd, 0x0f, 0x84, 0x13, 0, 0, 0]);
        let je = Branch {
            start: 0x1c,
            end: 0x22,
            target: 0x35,
            conditional: true,
        };
        assert_eq!(branches_before(&code, 0, 0x22), [je]);
        // jne +1; jmp back to 0x10
        code.extend([0x0f, 0x85, 1, 0, 0, 0, 0xe9, 0xe3, 0xff, 0xff, 0xff]);
        let both = branches_before(&code, 0x22, 0x2d);
        let ends: Vec<_> = both
            .iter()
            .map(|b| (b.start, b.end, b.target, b.conditional))
            .collect();
        assert_eq!(ends, [(0x22, 0x28, 0x29, true), (0x28, 0x2d, 0x10, false)]);
        // a branch is read only within its block
        assert_eq!(branches_before(&code, 0x28, 0x2d).len(), 1);
        // a block ending in no branch
        code.extend([0x90; 6]);
        assert!(branches_before(&code, 0x2d, 0x33).is_empty());
    }
}
