//! A compute region as a kernel (`.visible .entry acc_region_{N}`), with the parameters, the
//! result and partial-result slots and the error record of the crate's kernel ABI.

use acc_lang::hir::VarId;
use acc_lang::ir::{gang_loop, Construct, ExprKind, ForLoop, LocalId, Pass, Region, Stmt};

use crate::fx::{unsupported, FnKind, Fx, Gangs, Mode, Result, Val};
use crate::module::Cx;
use crate::ptx::{Class, Reg};
use crate::{ArrayParam, Kernel, KernelLaunch};

/// The register ceiling (`.maxnreg`) of a kernel with unrolled loops. Without one, ptxas
/// favours occupancy: it interleaves the unrolled copies' loads with their arithmetic to
/// need fewer registers, which undoes the unrolling (Jacobi's stencil on an H200, under
/// ncu: 48 registers and 125 µs, against 86 µs when its ten loads issued together). With
/// any ceiling it schedules for loads in flight up to it (the stencil: 56 registers, its
/// loads together, Jacobi as fast as before kernels took their arrays as parameters); kernels without unrolled
/// code keep ptxas's choice, which is what latency-bound ones (SpMV with a row per warp)
/// need. No kernel of the conformance suite reaches 64 registers under it.
const REGISTERS_FOR_UNROLLED: u32 = 128;

/// The 8-byte kernel parameters that fit in the 4 KiB a launch may pass (PTX ISA 8.0):
/// arrays whose pointer and extents would not fit are read from their headers.
const MAX_PARAM_WORDS: usize = 4096 / 8;

/// Whether a region must run as one gang: `serial` regions, and `kernels` regions other than
/// a single gang loop nest (whose statements outside the nest run once, LANGUAGE.md 7.6, and
/// whose loops may read what earlier statements wrote, which gangs cannot wait for). Every
/// block of a launch runs the code outside gang loops, so only assignments of a gang's own
/// scalars may stand beside the one loop nest: an assignment of a `copy` scalar's cell, run
/// by every block, would apply as many times as there are blocks, and a region with no gang
/// loop at all is all such code.
pub(crate) fn one_gang(r: &Region) -> bool {
    match r.construct {
        Construct::Serial | Construct::SerialLoop => true,
        Construct::Kernels | Construct::KernelsLoop => {
            let mut gang_loops = 0;
            for s in &r.body {
                match s {
                    Stmt::For(f) if f.schedule.gang => gang_loops += 1,
                    Stmt::Set(l, e) if !has_call(e) && !r.is_cell(l.0 as usize) => {}
                    _ => return true,
                }
            }
            gang_loops != 1
        }
        _ => false,
    }
}

/// Whether a region may spread each gang over several blocks (`KernelLaunch::split`): its body is
/// one gang loop whose body is one vector loop, with no reductions and bounds without calls
/// (code that every block of a gang runs must be free of effects). Memory-bound loop nests
/// like Jacobi's copy want many small blocks, as hand-written CUDA launches (the H100 runs
/// the copy 10% faster with four iterations per thread than with a row per block), but a
/// gang loop of 4094 rows gives only 4094 blocks of rows.
pub(crate) fn splits(r: &Region) -> bool {
    fn only_loop(body: &[Stmt]) -> Option<&ForLoop> {
        match body {
            [Stmt::For(f)] if f.schedule.reductions.is_empty() && f.schedule.collapse <= 1 => {
                let bounds = [&f.start, &f.end, &f.step];
                bounds.iter().all(|e| !has_call(e)).then_some(f)
            }
            _ => None,
        }
    }
    let Some(gang) = only_loop(&r.body) else {
        return false;
    };
    let Some(vector) = only_loop(&gang.body) else {
        return false;
    };
    let (g, v) = (&gang.schedule, &vector.schedule);
    r.reductions.is_empty()
        && !one_gang(r)
        && (g.gang && !g.worker && !g.vector)
        && (v.vector && !v.gang && !v.worker)
}

fn has_call(e: &acc_lang::ir::Expr) -> bool {
    match &e.kind {
        ExprKind::Call(..) => true,
        ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => has_call(x),
        ExprKind::Binary(_, a, b, _) => has_call(a) || has_call(b),
        ExprKind::Load { array, indices, .. } => has_call(array) || indices.iter().any(has_call),
        ExprKind::Builtin(_, args) | ExprKind::CheckedBuiltin(_, args, _) => {
            args.iter().any(has_call)
        }
        _ => false,
    }
}

/// Is parameter `i` a `copy` scalar (`InOut`, not a reduction's), which lives in memory?
/// Generate region `r` as a kernel: its description and text.
pub(crate) fn emit_kernel(cx: &mut Cx<'_>, r: &Region) -> Result<(Kernel, String)> {
    let name = format!("acc_region_{}", r.id.0);
    if r.params.len() > r.locals.len() {
        return unsupported("a region with more parameters than locals");
    }
    let private_arrays = crate::private::plan(r)?;
    let single = one_gang(r);
    // The globals its routines read. Scalars come as kernel parameters (their slot values at
    // the launch); an array is the region's own parameter for it (the analysis gives a region
    // every global its routines use), so routines work on the device copy, not the host's.
    let (array_globals, globals): (Vec<_>, Vec<_>) = cx
        .body_globals(&r.body)?
        .into_iter()
        .partition(|(_, t)| t.is_array());
    let globals: Vec<VarId> = globals.into_iter().map(|(g, _)| g).collect();
    let mut fx = Fx::new(cx, FnKind::Kernel, Mode::Block);
    fx.local_tys = r.locals.iter().map(|l| l.ty).collect();
    for l in &r.locals {
        let v = fx.fresh_local(l.ty);
        fx.locals.push(v);
    }
    let slots: Vec<_> = (0..r.params.len()).map(|_| fx.fresh(Class::B64)).collect();
    let (results, partials) = (fx.fresh(Class::B64), fx.fresh(Class::B64));
    for (i, s) in slots.iter().enumerate() {
        fx.ins(format!("ld.param.u64 {s}, [p{i}]"));
    }
    fx.ins(format!("ld.param.u64 {results}, [results]"));
    fx.ins(format!("ld.param.u64 {partials}, [partials]"));
    let err = fx.sp.err;
    fx.ins(format!("ld.param.u64 {err}, [error]"));
    for (k, g) in globals.iter().enumerate() {
        let v = fx.fresh(Class::B64);
        fx.ins(format!("ld.param.u64 {v}, [g{k}]"));
        fx.globals.push((*g, v));
    }
    let split = !single && private_arrays.is_empty() && splits(r);
    fx.read_special(if single {
        Gangs::One
    } else if split {
        Gangs::Split
    } else {
        Gangs::Hardware
    });

    // Parameters from their slots; other locals start at zero, as on the host.
    let mut copies = Vec::new();
    let mut arrays = Vec::new();
    // The 8-byte parameters besides the arrays' own: `p{i}`, the four of the ABI, `split`,
    // the globals' and the private arrays'.
    let mut param_words = r.params.len()
        + 4
        + usize::from(split)
        + globals.len()
        + private_arrays
            .iter()
            .map(|p| 1 + p.rank as usize)
            .sum::<usize>();
    for (i, l) in r.locals.iter().enumerate() {
        let v = fx.local(LocalId(i as u32))?;
        match (r.params.get(i).map(|p| p.pass), v) {
            (Some(Pass::InOut), Val::Scalar(..)) if r.is_cell(i) => {
                // A `copy` scalar lives in its result slot, which the runtime fills with the
                // argument: every thread of the launch shares it.
                let addr = fx.fresh(Class::B64);
                fx.ins(format!("add.u64 {addr}, {results}, {}", 8 * i));
                fx.cells.push((LocalId(i as u32), addr));
            }
            (Some(Pass::Value | Pass::InOut), Val::Scalar(d, s)) => fx.unslot_bits(d, slots[i], s),
            (Some(Pass::Array), Val::Array(a)) => {
                fx.ins(format!("mov.b64 {}, {}", a.hdr, slots[i]));
                let rank = a.dims.len();
                if param_words + 1 + rank <= MAX_PARAM_WORDS {
                    param_words += 1 + rank;
                    fx.ins(format!("ld.param.u64 {}, [p{i}_data]", a.data));
                    for (k, d) in a.dims.iter().enumerate() {
                        fx.ins(format!("ld.param.u64 {d}, [p{i}_d{k}]"));
                    }
                    arrays.push(ArrayParam {
                        param: i,
                        rank: rank as u32,
                    });
                } else {
                    // Past the parameter space: this one's header is read instead.
                    fx.load_header(&a);
                }
            }
            (Some(Pass::PrivateArray | Pass::FirstPrivateArray), Val::Array(a)) => {
                let Some(&p) = private_arrays.iter().find(|p| p.param == i) else {
                    return unsupported(format!("private array `{}` without a plan", l.name));
                };
                copies.push(fx.private_copy(&a, slots[i], p));
            }
            (None | Some(Pass::Private), Val::Scalar(d, s)) => fx.set_zero(d, s),
            (None, Val::Array(_)) => {}
            _ => {
                return unsupported(format!(
                    "parameter `{}` passed as {:?} with type {:?}",
                    l.name, r.params[i].pass, l.ty
                ))
            }
        }
    }
    for (g, _) in &array_globals {
        let param = r
            .params
            .iter()
            .position(|p| p.var == *g && p.pass == Pass::Array);
        let Some(Val::Array(a)) = param.map(|i| fx.local(LocalId(i as u32))).transpose()? else {
            return unsupported("a routine reads a global array that is not a region parameter");
        };
        fx.globals.push((*g, a.hdr));
        fx.global_arrays.push((*g, a));
    }
    for red in &r.reductions {
        match fx.local(red.private)? {
            Val::Scalar(d, s) if s == red.ty => fx.set_identity(d, red.op, s)?,
            _ => return unsupported("a reduction whose accumulator is not a scalar"),
        }
    }
    if single {
        // Blocks after the first only contribute identities.
        let rest = fx.fresh(Class::B32);
        fx.ins(format!("mov.u32 {rest}, %ctaid.x"));
        let other = fx.fresh(Class::Pred);
        fx.ins(format!("setp.ne.u32 {other}, {rest}, 0"));
        let go = fx.label("gang0");
        fx.ins(format!("@!{other} bra {go}"));
        write_partials(&mut fx, r, partials)?;
        fx.ins("exit");
        fx.place(&go);
    }
    let prologue = std::mem::take(&mut fx.code);

    fx.reductions = r
        .reductions
        .iter()
        .map(|red| (red.private, red.op))
        .collect();
    fx.block(&r.body)?;
    let end = fx.end_label.clone();
    fx.place(&end);
    write_partials(&mut fx, r, partials)?;
    fx.ins("ret");
    let body = std::mem::take(&mut fx.code);

    // After the one-gang exit: every thread of the block takes part.
    fx.first_private_copies(&copies);
    if fx.row_barriers_used {
        zero_row_barriers(&mut fx);
    }
    let uses_shared = fx.row_barriers_used || fx.scratch_used;
    let init = std::mem::take(&mut fx.code);

    let mut params: Vec<String> = (0..r.params.len())
        .map(|i| format!("\t.param .u64 p{i}"))
        .collect();
    params.push("\t.param .u64 results".into());
    params.push("\t.param .u64 partials".into());
    params.push("\t.param .u64 error".into());
    params.push("\t.param .u64 out".into());
    params.extend((0..globals.len()).map(|k| format!("\t.param .u64 g{k}")));
    for p in &private_arrays {
        params.push(format!("\t.param .u64 s{}", p.param));
        params.extend((0..p.rank).map(|k| format!("\t.param .u64 s{}_d{k}", p.param)));
    }
    for a in &arrays {
        params.push(format!("\t.param .u64 p{}_data", a.param));
        params.extend((0..a.rank).map(|k| format!("\t.param .u64 p{}_d{k}", a.param)));
    }
    if split {
        params.push("\t.param .u64 split".into());
    }
    let mut text = format!("// region {}: {}\n", r.id.0, r.construct.name());
    text += &format!(".visible .entry {name}(\n{}\n)\n", params.join(",\n"));
    if fx.unrolled {
        text += &format!(".maxnreg {REGISTERS_FOR_UNROLLED}\n");
    }
    text += "{\n";
    text += &fx.declarations();
    text += &prologue;
    text += &init;
    text += &body;
    text += &fx.cold;
    text += "}\n";
    Ok((
        Kernel {
            region: r.id,
            name,
            reductions: r.reductions.len(),
            globals,
            prints: fx.prints,
            launch: KernelLaunch {
                // A kernel without shared memory keeps the whole of L1 for its data.
                shared_per_thread: if uses_shared {
                    crate::module::SHARED_BYTES_PER_THREAD
                } else {
                    0
                },
                one_gang: single,
                private_arrays,
                arrays,
                split,
                gang_loop: gang_loop::gang_loop(r),
            },
        },
        text,
    ))
}

/// Thread (0,0) of each block stores the block's partial result of each reduction in its
/// slot `r * gridDim.x + blockIdx.x`.
fn write_partials(fx: &mut Fx<'_, '_>, r: &Region, partials: Reg) -> Result<()> {
    if r.reductions.is_empty() {
        return Ok(());
    }
    let skip = fx.label("nopartials");
    let lead = fx.sp.lead;
    fx.ins(format!("@!{lead} bra {skip}"));
    let (ctaid, nctaid) = (fx.fresh(Class::B32), fx.fresh(Class::B32));
    fx.ins(format!("mov.u32 {ctaid}, %ctaid.x"));
    fx.ins(format!("mov.u32 {nctaid}, %nctaid.x"));
    for (k, red) in r.reductions.iter().enumerate() {
        let Val::Scalar(v, s) = fx.local(red.private)? else {
            return unsupported("a reduction whose accumulator is not a scalar");
        };
        let slot = fx.fresh(Class::B32);
        fx.ins(format!("mad.lo.u32 {slot}, {nctaid}, {k}, {ctaid}"));
        let off = fx.fresh(Class::B64);
        fx.ins(format!("mul.wide.u32 {off}, {slot}, 8"));
        let addr = fx.fresh(Class::B64);
        fx.ins(format!("add.u64 {addr}, {partials}, {off}"));
        let bits = fx.slot_bits(v, s);
        fx.ins(format!("st.global.u64 [{addr}], {bits}"));
    }
    fx.place(&skip);
    Ok(())
}

/// Zero the row barriers' words (in `acc_shared`, after the scratch slots), every thread a
/// share, before any row uses them (shared memory starts undefined).
fn zero_row_barriers(fx: &mut Fx<'_, '_>) {
    let sp = fx.sp;
    let i = fx.fresh(Class::B32);
    let base = fx.fresh(Class::B64);
    let off = fx.fresh(Class::B64);
    let addr = fx.fresh(Class::B64);
    let done = fx.fresh(Class::Pred);
    let top = fx.label("rbzero");
    let end = fx.label("rbzeroed");
    fx.comment("zero the row barriers");
    fx.ins(format!("mov.u32 {i}, {}", sp.tid));
    // After the scratch slots, one per thread.
    fx.ins(format!("mov.u64 {base}, acc_shared"));
    fx.ins(format!("mul.wide.u32 {off}, {}, 8", sp.nthreads));
    fx.ins(format!("add.u64 {base}, {base}, {off}"));
    fx.place(&top);
    // One word per row.
    fx.ins(format!("setp.ge.u32 {done}, {i}, {}", sp.nty));
    fx.ins(format!("@{done} bra {end}"));
    fx.ins(format!("mul.wide.u32 {off}, {i}, 8"));
    fx.ins(format!("add.u64 {addr}, {base}, {off}"));
    fx.ins(format!("st.shared.u64 [{addr}], 0"));
    fx.ins(format!("add.u32 {i}, {i}, {}", sp.nthreads));
    fx.ins(format!("bra {top}"));
    fx.place(&end);
    fx.ins("bar.sync 0");
}
