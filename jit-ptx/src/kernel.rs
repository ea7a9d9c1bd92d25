//! A compute region as a kernel (`.visible .entry acc_region_{N}`), with the parameters, the
//! result and partial-result slots and the error record of the crate's kernel ABI.

use acc_lang::hir::VarId;
use acc_lang::ir::{gang_loop, LocalId, Pass, Region, Ty};

use crate::cx::Cx;
use crate::fx::{FnKind, Fx, Gangs, Val};
use crate::plan::{one_gang, splits, Entry, Mode, Plan};
use crate::private::Copy;
use crate::ptx::{Class, Reg};
use crate::{unsupported, ArrayParam, Kernel, KernelLaunch, PrivateArray, Result};

/// The register ceiling (`.maxnreg`) of a kernel whose plan unrolls loops. Without one, ptxas
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

/// A kernel's launch and parameters, decided from its region before any of its text.
struct Layout {
    /// It runs as one gang (`one_gang`).
    one_gang: bool,
    /// Each gang spreads over several blocks (`splits`).
    split: bool,
    private_arrays: Vec<PrivateArray>,
    /// The scalar globals its routines read: kernel parameters `g{k}`, their slot values at the
    /// launch.
    globals: Vec<VarId>,
    /// The global arrays its routines read: the region's own parameters for them (the
    /// analysis gives a region every global its routines use), so that routines work on the
    /// device copy, not the host's.
    array_globals: Vec<VarId>,
    /// The array parameters whose data pointer and extents come as kernel parameters; the
    /// others' are read from their headers.
    arrays: Vec<ArrayParam>,
    /// The `copy` scalars (`InOut` scalar parameters that are not reductions): each lives in
    /// its result slot, a memory cell every thread of the launch shares.
    cells: Vec<LocalId>,
}

impl Layout {
    fn of(cx: &mut Cx<'_>, r: &Region) -> Result<Layout> {
        let private_arrays = crate::private::plan(r)?;
        let single = one_gang(r);
        let (array_globals, globals): (Vec<_>, Vec<_>) = cx
            .body_globals(&r.body)?
            .into_iter()
            .partition(|(_, t)| t.is_array());
        let globals: Vec<VarId> = globals.into_iter().map(|(g, _)| g).collect();
        let split = !single && private_arrays.is_empty() && splits(r);
        // The 8-byte parameters besides the arrays' own: `p{i}`, the four of the ABI,
        // `split`, the globals' and the private arrays'. Arrays take theirs in order while
        // they fit in the parameter space.
        let mut param_words = r.params.len()
            + 4
            + usize::from(split)
            + globals.len()
            + private_arrays
                .iter()
                .map(|p| 1 + p.rank as usize)
                .sum::<usize>();
        let mut arrays = Vec::new();
        for (i, p) in r.params.iter().enumerate() {
            let rank = match (p.pass, r.locals[i].ty) {
                (Pass::Array, Ty::Array { rank, .. }) => rank as usize,
                _ => continue,
            };
            if param_words + 1 + rank <= MAX_PARAM_WORDS {
                param_words += 1 + rank;
                arrays.push(ArrayParam {
                    param: i,
                    rank: rank as u32,
                });
            }
        }
        Ok(Layout {
            one_gang: single,
            split,
            private_arrays,
            globals,
            array_globals: array_globals.into_iter().map(|(g, _)| g).collect(),
            arrays,
            cells: cells(r),
        })
    }

    /// Where the kernel's gang number and count come from.
    fn gangs(&self) -> Gangs {
        if self.one_gang {
            Gangs::One
        } else if self.split {
            Gangs::Split
        } else {
            Gangs::Hardware
        }
    }

    /// The kernel's parameter list.
    fn params(&self, r: &Region) -> Vec<String> {
        let mut params: Vec<String> = (0..r.params.len())
            .map(|i| format!("\t.param .u64 p{i}"))
            .collect();
        params.push("\t.param .u64 results".into());
        params.push("\t.param .u64 partials".into());
        params.push("\t.param .u64 error".into());
        params.push("\t.param .u64 out".into());
        params.extend((0..self.globals.len()).map(|k| format!("\t.param .u64 g{k}")));
        for p in &self.private_arrays {
            params.push(format!("\t.param .u64 s{}", p.param));
            params.extend((0..p.rank).map(|k| format!("\t.param .u64 s{}_d{k}", p.param)));
        }
        for a in &self.arrays {
            params.push(format!("\t.param .u64 p{}_data", a.param));
            params.extend((0..a.rank).map(|k| format!("\t.param .u64 p{}_d{k}", a.param)));
        }
        if self.split {
            params.push("\t.param .u64 split".into());
        }
        params
    }
}

/// The `copy` scalars of region `r`: its `InOut` scalar parameters that are not reductions.
pub(crate) fn cells(r: &Region) -> Vec<LocalId> {
    (0..r.params.len())
        .filter(|&i| r.is_cell(i) && !r.locals[i].ty.is_array())
        .map(|i| LocalId(i as u32))
        .collect()
}

/// Generate region `r` as a kernel: its description and text.
pub(crate) fn emit_kernel<'m>(cx: &mut Cx<'m>, r: &'m Region) -> Result<(Kernel, String)> {
    if r.params.len() > r.locals.len() {
        return unsupported("a region with more parameters than locals");
    }
    let layout = Layout::of(cx, r)?;
    let reductions: Vec<_> = r.reductions.iter().map(|red| red.reduction).collect();
    let entry = Entry {
        mode: Mode::Block,
        reductions: &reductions,
        cells: &layout.cells,
        unchecked: cx.options.unchecked,
    };
    let plan = Plan::new(&r.body, &entry);
    let ceiling = plan.unrolled().then_some(REGISTERS_FOR_UNROLLED);
    let mut fx = Fx::new(cx, FnKind::Kernel, plan);
    fx.add_locals(r.locals.iter().map(|l| l.ty));
    let (copies, partials) = prologue(&mut fx, r, &layout)?;
    let prologue = fx.take_code();

    fx.block(&r.body)?;
    let end = fx.end_label();
    fx.place(&end);
    write_partials(&mut fx, r, partials)?;
    fx.ins("ret");
    let body = fx.take_code();

    // After the one-gang exit: every thread of the block takes part.
    fx.first_private_copies(&copies);
    if fx.uses_row_barriers() {
        zero_row_barriers(&mut fx);
    }
    let init = fx.take_code();

    let name = format!("acc_region_{}", r.id.0);
    let mut text = format!("// region {}: {}\n", r.id.0, r.construct.name());
    text += &format!(
        ".visible .entry {name}(\n{}\n)\n",
        layout.params(r).join(",\n")
    );
    if let Some(n) = ceiling {
        text += &format!(".maxnreg {n}\n");
    }
    text += "{\n";
    text += &fx.declarations();
    text += &prologue;
    text += &init;
    text += &body;
    text += fx.cold();
    text += "}\n";
    Ok((layout.kernel(r, name, &fx), text))
}

impl Layout {
    /// The kernel's description, once `fx` has generated its code (which says whether it,
    /// or a routine it calls, uses shared memory or prints).
    fn kernel(self, r: &Region, name: String, fx: &Fx<'_, '_>) -> Kernel {
        let uses_shared = fx.uses_row_barriers() || fx.uses_scratch();
        Kernel {
            region: r.id,
            name,
            reductions: r.reductions.len(),
            globals: self.globals,
            prints: fx.prints(),
            launch: KernelLaunch {
                // A kernel without shared memory keeps the whole of L1 for its data.
                shared_per_thread: if uses_shared {
                    crate::cx::SHARED_BYTES_PER_THREAD
                } else {
                    0
                },
                one_gang: self.one_gang,
                private_arrays: self.private_arrays,
                arrays: self.arrays,
                split: self.split,
                gang_loop: gang_loop::gang_loop(r),
            },
        }
    }
}

/// The kernel's first instructions: its parameters read, the special registers, the locals
/// bound (`bind_locals`), the region's reduction variables at their identities and, in a
/// kernel that runs one gang, the exit of every block but the first. Returns the private
/// copies that the threads set up together and the partial results' address.
fn prologue(fx: &mut Fx<'_, '_>, r: &Region, layout: &Layout) -> Result<(Vec<Copy>, Reg)> {
    let slots: Vec<_> = (0..r.params.len()).map(|_| fx.fresh(Class::B64)).collect();
    let (results, partials) = (fx.fresh(Class::B64), fx.fresh(Class::B64));
    for (i, s) in slots.iter().enumerate() {
        fx.ins(format!("ld.param.u64 {s}, [p{i}]"));
    }
    fx.ins(format!("ld.param.u64 {results}, [results]"));
    fx.ins(format!("ld.param.u64 {partials}, [partials]"));
    let err = fx.sp().err;
    fx.ins(format!("ld.param.u64 {err}, [error]"));
    for (k, g) in layout.globals.iter().enumerate() {
        let v = fx.fresh(Class::B64);
        fx.ins(format!("ld.param.u64 {v}, [g{k}]"));
        fx.add_global(*g, v);
    }
    fx.read_special(layout.gangs());
    let copies = bind_locals(fx, r, layout, &slots, results)?;
    for red in &r.reductions {
        match fx.local(red.reduction.var)? {
            Val::Scalar(d, s) if s == red.reduction.ty => {
                fx.set_identity(d, red.reduction.identity)
            }
            _ => return unsupported("a reduction whose accumulator is not a scalar"),
        }
    }
    if layout.one_gang {
        // Blocks after the first only contribute identities.
        let rest = fx.fresh(Class::B32);
        fx.ins(format!("mov.u32 {rest}, %ctaid.x"));
        let other = fx.fresh(Class::Pred);
        fx.ins(format!("setp.ne.u32 {other}, {rest}, 0"));
        let go = fx.label("gang0");
        fx.ins(format!("@!{other} bra {go}"));
        write_partials(fx, r, partials)?;
        fx.ins("exit");
        fx.place(&go);
    }
    Ok((copies, partials))
}

/// The locals from their parameter slots (`copy` scalars in their cells, arrays as the
/// layout passes them, private arrays' copies), the others at zero, as on the host; and the
/// global arrays the routines read, as their parameters. Returns the private copies, which
/// the kernel's threads set up together (`first_private_copies`).
fn bind_locals(
    fx: &mut Fx<'_, '_>,
    r: &Region,
    layout: &Layout,
    slots: &[Reg],
    results: Reg,
) -> Result<Vec<Copy>> {
    let mut copies = Vec::new();
    for (i, l) in r.locals.iter().enumerate() {
        let v = fx.local(LocalId(i as u32))?;
        match (r.params.get(i).map(|p| p.pass), v) {
            (Some(Pass::InOut), Val::Scalar(..)) if layout.cells.contains(&LocalId(i as u32)) => {
                // A `copy` scalar lives in its result slot, which the runtime fills with the
                // argument: every thread of the launch shares it.
                let addr = fx.fresh(Class::B64);
                fx.ins(format!("add.u64 {addr}, {results}, {}", 8 * i));
                fx.add_cell(LocalId(i as u32), addr);
            }
            (Some(Pass::Value | Pass::InOut), Val::Scalar(d, s)) => fx.unslot_bits(d, slots[i], s),
            (Some(Pass::Array), Val::Array(a)) => {
                fx.ins(format!("mov.b64 {}, {}", a.hdr, slots[i]));
                if layout.arrays.iter().any(|p| p.param == i) {
                    fx.ins(format!("ld.param.u64 {}, [p{i}_data]", a.data));
                    for (k, d) in a.dims.iter().enumerate() {
                        fx.ins(format!("ld.param.u64 {d}, [p{i}_d{k}]"));
                    }
                } else {
                    // Past the parameter space: this one's header is read instead.
                    fx.load_header(&a);
                }
            }
            (Some(Pass::PrivateArray | Pass::FirstPrivateArray), Val::Array(a)) => {
                let Some(&p) = layout.private_arrays.iter().find(|p| p.param == i) else {
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
    for g in &layout.array_globals {
        let param = r
            .params
            .iter()
            .position(|p| p.var == *g && p.pass == Pass::Array);
        let Some(Val::Array(a)) = param.map(|i| fx.local(LocalId(i as u32))).transpose()? else {
            return unsupported("a routine reads a global array that is not a region parameter");
        };
        fx.add_global(*g, a.hdr);
        fx.add_global_array(*g, a);
    }
    Ok(copies)
}

/// Thread (0,0) of each block stores the block's partial result of each reduction in its
/// slot `r * gridDim.x + blockIdx.x`.
fn write_partials(fx: &mut Fx<'_, '_>, r: &Region, partials: Reg) -> Result<()> {
    if r.reductions.is_empty() {
        return Ok(());
    }
    let skip = fx.label("nopartials");
    let lead = fx.sp().lead;
    fx.ins(format!("@!{lead} bra {skip}"));
    let (ctaid, nctaid) = (fx.fresh(Class::B32), fx.fresh(Class::B32));
    fx.ins(format!("mov.u32 {ctaid}, %ctaid.x"));
    fx.ins(format!("mov.u32 {nctaid}, %nctaid.x"));
    for (k, red) in r.reductions.iter().enumerate() {
        let Val::Scalar(v, s) = fx.local(red.reduction.var)? else {
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
    let sp = fx.sp();
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
