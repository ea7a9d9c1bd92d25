//! Compute regions: the region functions, and their launches.
//!
//! A region is a native function `(ctx, args, gang, num_gangs)`. `args` holds one 8-byte slot
//! per region parameter: a scalar in its low bytes (its natural width), an array as its handle.
//! A launch fills the slots and the data-op records and calls `acc_rt_launch`; the runtime's
//! current device runs the gangs (one after another on `host`, on threads on `multicore` and
//! `emulated`, each gang with its own copy of the slots) and combines the results; then the
//! `InOut` parameters' slots are copied back to their host variables.
//!
//! Inside, the body runs once per call (gang-redundant), except that a loop scheduled `gang`
//! runs only its gang's contiguous share of the iterations (`Tx::gang_share`); worker and
//! vector loops run whole, in order. Each gang's reduction accumulators start at the
//! operator's identity, and at the end of the call the partial result goes into its
//! parameter's slot: the runtime combines the gangs' partial results with the value before the
//! construct, in gang order (`acc_runtime::launch`). `acc atomic` statements are atomic
//! (see `atomic`), since gangs may run on several threads at once.

use acc_abi::{DeviceSizes, LaunchSizes, ABSENT, LAUNCH_RESULTS_LATE};
use acc_lang::ir::visit::{walk_expr, Visitor};
use acc_lang::ir::{DeviceExprs, Expr, ExprKind, Launch, LocalId, Pass, Place, Region, Ty};
use acc_runtime::abi::ARRAY_DIMS_OFFSET;
use acc_runtime::launch::{
    ComputeKind, DistinctDesc, ParamDesc, ParamPass, ReductionDesc, RegionDesc, RegionKey, UnitId,
};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Value};

use super::builtin::elem_code;
use super::{clif_type, Gang, Tx, CTX_GLOBALS_OFFSET, PTR};
use crate::JitError;

impl Tx<'_, '_> {
    /// The body of a region function; `params` are `(args, gang, num_gangs)`.
    pub(super) fn region_body(&mut self, r: &Region, params: &[Value]) -> Result<(), JitError> {
        let (args, gang, num_gangs) = (params[0], params[1], params[2]);
        let replaced = self.replaced_globals(r);
        if !replaced.is_empty() {
            // Loaded first, in the entry block, which dominates every way out (`fail` too).
            // A plain load, not the entry's movable one: it stays before the store that
            // points `ctx.globals` at the copy.
            let host =
                self.b
                    .ins()
                    .load(PTR, MemFlagsData::trusted(), self.ctx, CTX_GLOBALS_OFFSET);
            self.host_globals = Some(host);
        }
        let epilogue = self.b.create_block();
        self.gang = Some(Gang { gang, num_gangs });
        self.epilogue = Some(epilogue);
        if r.params.len() > self.locals.len() {
            return Err(JitError::Unsupported(format!(
                "region {:?} has more parameters than locals",
                r.id
            )));
        }
        // Arrays this gang owns, released at the end.
        let mut owned = Vec::new();
        for i in 0..r.params.len() {
            if r.is_cell(i) {
                self.cells.insert(LocalId(i as u32));
                // The local's variable holds the cell's address.
                let ty = self.locals[i].1;
                self.locals[i] = (self.b.declare_var(types::I64), ty);
            }
        }
        for (i, &(var, ty)) in self.locals.clone().iter().enumerate() {
            let pass = r.params.get(i).map(|p| p.pass);
            if self.cells.contains(&LocalId(i as u32)) {
                // The slot holds the address of the cell the gangs share.
                let addr = self
                    .b
                    .ins()
                    .load(types::I64, MemFlagsData::trusted(), args, slot(i));
                self.b.def_var(var, addr);
                continue;
            }
            let v = match pass {
                None | Some(Pass::Private) => self.zero(clif_type(ty)),
                Some(pass) => {
                    let v =
                        self.b
                            .ins()
                            .load(clif_type(ty), MemFlagsData::trusted(), args, slot(i));
                    match (pass, ty) {
                        // An array of the host array's shape: its extents are in its header.
                        (Pass::PrivateArray, Ty::Array { elem, rank }) => {
                            let code = self.iconst(types::I32, elem_code(elem));
                            let rank = self.iconst(types::I32, rank as i64);
                            let offset = self.iconst(types::I64, ARRAY_DIMS_OFFSET as i64);
                            let dims = self.b.ins().iadd(v, offset);
                            let a = self
                                .call_rt_value("acc_rt_array_new", &[self.ctx, code, rank, dims])?;
                            owned.push(a);
                            a
                        }
                        (Pass::FirstPrivateArray, Ty::Array { .. }) => {
                            let a = self.call_rt_value("acc_copy", &[self.ctx, v])?;
                            owned.push(a);
                            a
                        }
                        _ => v,
                    }
                }
            };
            self.b.def_var(var, v);
        }
        for red in &r.reductions {
            let (var, _) = self.local(red.reduction.var)?;
            let identity = self.constant(red.reduction.identity);
            self.b.def_var(var, identity);
        }
        self.device_globals(r, &replaced)?;

        self.block(&r.body)?;
        self.b.ins().jump(epilogue, &[]);

        self.b.switch_to_block(epilogue);
        for red in &r.reductions {
            let (var, _) = self.local(red.reduction.var)?;
            let partial = self.b.use_var(var);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), partial, args, slot(red.param));
        }
        for a in owned {
            self.call_rt("acc_rt_release", &[a])?;
        }
        self.restore_globals(self.host_globals);
        self.b.ins().return_(&[]);
        self.start_unreachable();
        Ok(())
    }

    /// Routines called by the region read globals through `ctx.globals`, and a global array
    /// there is the host's array. Where the region has global arrays among its parameters (the
    /// analysis gives a region every global its routines use) and calls functions, the gang
    /// runs on a copy of the slots in its stack frame in which those arrays are the region's
    /// arguments: the device copies on a discrete device (emulated, or nvidia's host fallback),
    /// the host arrays themselves on the others. Scalars keep their slot values, which are their
    /// values at region entry (routines may not assign globals). `ctx.globals` points at the
    /// copy until the region returns (`restore_globals`, on every way out).
    /// These are the `(slot, parameter)` pairs to replace; none where nothing needs the copy.
    fn replaced_globals(&self, r: &Region) -> Vec<(u32, usize)> {
        struct Calls(bool);
        impl<'a> Visitor<'a> for Calls {
            fn expr(&mut self, e: &'a Expr) {
                self.0 |= matches!(e.kind, ExprKind::Call(..));
                walk_expr(self, e);
            }
        }
        let mut calls = Calls(false);
        calls.block(&r.body);
        if !calls.0 {
            return Vec::new();
        }
        r.params
            .iter()
            .enumerate()
            .filter(|(_, p)| p.pass == Pass::Array && p.ty.is_array())
            .filter_map(|(i, p)| self.env.slots.get(&p.var).map(|&slot| (slot, i)))
            .collect()
    }

    /// Point `ctx.globals` at a copy of the slots with the `replaced` arrays set to the
    /// region's parameters (see `replaced_globals`).
    fn device_globals(&mut self, r: &Region, replaced: &[(u32, usize)]) -> Result<(), JitError> {
        let Some(host) = self.host_globals else {
            return Ok(());
        };
        debug_assert!(replaced.iter().all(|&(_, i)| i < r.params.len()));
        // Every global this compile and the earlier ones know; the routines use no others.
        let count = self.env.slots.values().max().map_or(0, |&m| m as usize + 1);
        let shadow = self.stack_buffer(count);
        self.copy_words(shadow, host, count);
        for &(slot, i) in replaced {
            let (var, _) = self.local(LocalId(i as u32))?;
            let array = self.b.use_var(var);
            let offset = i32::try_from(slot as i64 * 8)
                .map_err(|_| JitError::Unsupported(format!("global slot {slot} too large")))?;
            self.b
                .ins()
                .store(MemFlagsData::trusted(), array, shadow, offset);
        }
        self.b.ins().store(
            MemFlagsData::trusted(),
            shadow,
            self.ctx,
            CTX_GLOBALS_OFFSET,
        );
        // Code inlined into the region reads its globals through the copy too.
        self.globals = shadow;
        Ok(())
    }

    /// Point `ctx.globals` back at the engine's slots (see `device_globals`).
    pub(super) fn restore_globals(&mut self, host: Option<Value>) {
        if let Some(host) = host {
            self.b
                .ins()
                .store(MemFlagsData::trusted(), host, self.ctx, CTX_GLOBALS_OFFSET);
        }
    }

    /// Copy `words` 8-byte words from `src` to `dst` (a loop: the count is every global's).
    fn copy_words(&mut self, dst: Value, src: Value, words: usize) {
        let head = self.b.create_block();
        let body = self.b.create_block();
        let done = self.b.create_block();
        self.b.append_block_param(head, types::I64);
        let zero = self.iconst(types::I64, 0);
        self.b.ins().jump(head, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(head);
        let at = self.b.block_params(head)[0];
        let end = self.iconst(types::I64, words as i64 * 8);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, at, end);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let from = self.b.ins().iadd(src, at);
        let word = self
            .b
            .ins()
            .load(types::I64, MemFlagsData::trusted(), from, 0);
        let to = self.b.ins().iadd(dst, at);
        self.b.ins().store(MemFlagsData::trusted(), word, to, 0);
        let eight = self.iconst(types::I64, 8);
        let next = self.b.ins().iadd(at, eight);
        self.b.ins().jump(head, &[BlockArg::Value(next)]);
        self.b.switch_to_block(done);
    }

    /// `Stmt::Launch`: evaluate the arguments and clauses, call `acc_rt_launch`, store the
    /// `InOut` results; or, where the IR lets them wait (`Launch::results_after`), return
    /// them for `take_results` after the statements they wait for.
    pub(super) fn launch<'l>(
        &mut self,
        l: &'l Launch,
    ) -> Result<Option<LateResults<'l>>, JitError> {
        let region = self
            .env
            .module
            .regions
            .iter()
            .find(|r| r.id == l.region)
            .ok_or(JitError::UnknownRegion(l.region))?;
        let desc = *self
            .env
            .region_descs
            .get(&l.region)
            .ok_or(JitError::UnknownRegion(l.region))?;
        if l.args.len() != region.params.len() {
            return Err(JitError::Unsupported(format!(
                "launch of region {:?} with {} arguments for {} parameters",
                l.region,
                l.args.len(),
                region.params.len()
            )));
        }
        let args = self.stack_buffer(l.args.len());
        for (i, a) in l.args.iter().enumerate() {
            let v = self.expr(a)?;
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, args, slot(i));
        }
        let cond = self.condition(l.if_cond.as_ref())?;
        let late = l.results_after > 0;
        let flags = if late {
            self.b.ins().bor_imm_u(cond, i64::from(LAUNCH_RESULTS_LATE))
        } else {
            cond
        };
        let sizes = self.launch_sizes(l)?;
        let queue = self.queue_value(l.async_queue.as_ref())?;
        let (waits, nwaits) = self.wait_list(l.wait.as_deref())?;
        let (ops, nops) = self.data_ops(&l.data)?;
        let desc = self.iconst(types::I64, desc as i64);
        let site = self.site(Some(l.site));
        let call = [
            self.ctx, desc, args, ops, nops, sizes, flags, queue, waits, nwaits, site,
        ];
        // The gangs' errors that name no site of their own (a library call in a gang's
        // prologue, a panic) are the construct's.
        self.at_site(l.site, |x| x.call_rt("acc_rt_launch", &call))?;
        let results = LateResults {
            launch: l,
            params: region.params.iter().map(|p| p.ty).collect(),
            desc,
            args,
        };
        if late {
            return Ok(Some(results));
        }
        self.store_results(&results)?;
        Ok(None)
    }

    /// Takes the results of a launch that let them wait (`acc_rt_launch_results`, which waits
    /// for them where the launch was left running), and stores them.
    pub(super) fn take_results(&mut self, r: &LateResults) -> Result<(), JitError> {
        let call = [self.ctx, r.desc, r.args];
        self.at_site(r.launch.site, |x| x.call_rt("acc_rt_launch_results", &call))?;
        self.store_results(r)
    }

    /// Stores a launch's `InOut` results, from its argument slots, in their host variables.
    fn store_results(&mut self, r: &LateResults) -> Result<(), JitError> {
        let (l, args) = (r.launch, r.args);
        for (i, place) in &l.results {
            let ty = *r.params.get(*i).ok_or_else(|| {
                JitError::Unsupported(format!("launch result of parameter {i}, which is not one"))
            })?;
            let v = self
                .b
                .ins()
                .load(clif_type(ty), MemFlagsData::trusted(), args, slot(*i));
            match place {
                Place::Local(id) => {
                    let (var, _) = self.local(*id)?;
                    self.b.def_var(var, v);
                }
                Place::Global(g) => {
                    let (base, offset) = self.global_addr(*g)?;
                    self.b.ins().store(MemFlagsData::trusted(), v, base, offset);
                }
            }
        }
        Ok(())
    }

    /// The launch sizes `acc_rt_launch` takes (`acc_abi::LaunchSizes`): each device type's
    /// `num_gangs`, `num_workers` and `vector_length`, `ABSENT` where not given.
    fn launch_sizes(&mut self, l: &Launch) -> Result<Value, JitError> {
        use std::mem::{offset_of, size_of};
        type Pick = fn(&DeviceExprs) -> &Option<Expr>;
        let buf = self.stack_buffer(size_of::<LaunchSizes>() / 8);
        let sizes = [
            (offset_of!(DeviceSizes, num_gangs), &l.num_gangs),
            (offset_of!(DeviceSizes, num_workers), &l.num_workers),
            (offset_of!(DeviceSizes, vector_length), &l.vector_length),
        ];
        let devices: [(usize, Pick); 3] = [
            (offset_of!(LaunchSizes, nvidia), |d| &d.nvidia),
            (offset_of!(LaunchSizes, host), |d| &d.host),
            (offset_of!(LaunchSizes, multicore), |d| &d.multicore),
        ];
        for (size, exprs) in sizes {
            for (device, pick) in devices {
                let v = match pick(exprs) {
                    Some(e) => self.expr_i64(e)?,
                    None => self.iconst(types::I64, ABSENT),
                };
                let at = (device + size) as i32;
                self.b.ins().store(MemFlagsData::trusted(), v, buf, at);
            }
        }
        Ok(buf)
    }
}

/// A launch whose results wait (`Launch::results_after`): what `Tx::take_results` needs.
pub(super) struct LateResults<'l> {
    launch: &'l Launch,
    /// The region's parameter types.
    params: Vec<Ty>,
    /// The region descriptor and the argument slots the launch was given.
    desc: Value,
    args: Value,
}

impl LateResults<'_> {
    /// How many statements after the launch its results wait for.
    pub(super) fn results_after(&self) -> u32 {
        self.launch.results_after
    }
}

/// What the runtime needs to know about a region of unit `unit` to run it.
pub(crate) fn region_desc(r: &Region, unit: UnitId) -> RegionDesc {
    use acc_lang::ir::Construct;
    // A `kernels` region runs as one gang only where the GPU's does (`ir::gangs::one_gang`):
    // a single loop nest, a part of a split region included, runs its gangs as a `parallel`
    // one would.
    let kind = match r.construct {
        Construct::Parallel | Construct::ParallelLoop => ComputeKind::Parallel,
        Construct::Serial | Construct::SerialLoop => ComputeKind::Serial,
        _ if acc_lang::ir::gangs::one_gang(r) => ComputeKind::Kernels,
        _ => ComputeKind::Parallel,
    };
    let elem = |t: Ty| match t {
        Ty::Scalar(s) | Ty::Array { elem: s, .. } => elem_code(s) as u32,
    };
    let params = r
        .params
        .iter()
        .enumerate()
        .map(|(i, p)| ParamDesc {
            pass: match p.pass {
                Pass::Value => ParamPass::Value,
                Pass::InOut if r.is_cell(i) => ParamPass::Shared,
                Pass::InOut => ParamPass::InOut,
                Pass::Private => ParamPass::Private,
                Pass::Array => ParamPass::Array,
                Pass::PrivateArray => ParamPass::PrivateArray,
                Pass::FirstPrivateArray => ParamPass::FirstPrivateArray,
            },
            elem: elem(p.ty),
            written: p.written,
            name: p.name.clone(),
        })
        .collect();
    let reductions = r
        .reductions
        .iter()
        .map(|red| ReductionDesc {
            op: red.reduction.op,
            elem: elem_code(red.reduction.ty) as u32,
            param: red.param,
            identity: slot_bits(red.reduction.identity),
        })
        .collect();
    let key = RegionKey {
        unit,
        region: r.id.0,
    };
    let mut desc = RegionDesc::new(key, kind, r.construct.name(), params, reductions);
    desc.distinct = r
        .distinct
        .iter()
        .map(|d| DistinctDesc {
            written: d.written,
            other: d.other,
            site: d.site.0,
        })
        .collect();
    desc.split = r.split.clone();
    desc
}

/// The byte offset of parameter `i`'s slot in a region's argument buffer.
fn slot(i: usize) -> i32 {
    (i * 8) as i32
}

/// A constant as an argument slot holds it: the value in the low bytes (what the runtime's
/// `launch::combine` reads).
fn slot_bits(c: acc_lang::hir::Const) -> u64 {
    use acc_lang::hir::Const;
    match c {
        Const::Bool(b) => u64::from(b),
        Const::I32(v) => u64::from(v as u32),
        Const::I64(v) => v as u64,
        Const::F32(v) => u64::from(v.to_bits()),
        Const::F64(v) => v.to_bits(),
    }
}
