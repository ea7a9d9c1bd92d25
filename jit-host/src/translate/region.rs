//! Compute regions on the host device, and their launches.
//!
//! A region is a native function `(ctx, args, gang, num_gangs)`. `args` holds one 8-byte slot
//! per region parameter: a scalar in its low bytes (its natural width), an array as its handle.
//! A launch fills the slots, calls the function once per gang, one gang after another, then
//! copies the `InOut` parameters' slots back to their host variables.
//!
//! Inside, the body runs once per call (gang-redundant), except that a loop scheduled `gang`
//! runs only its gang's contiguous share of the iterations (`Tx::gang_share`); worker and
//! vector loops run whole, in order. Each gang's reduction accumulators start at the
//! operator's identity and are combined into their parameter's slot at the end of the call;
//! since gangs run one after another, a plain read-combine-write is enough here. (A device
//! layer that runs gangs concurrently, issue 4, needs per-gang slots or atomics for these
//! combines and for `InOut` scalars; `acc atomic` statements on array elements are atomic
//! already, see `atomic`.)

use acc_lang::ir::{Construct, Launch, Pass, Place, Region, ScalarType, Ty};
use acc_runtime::abi::ARRAY_DIMS_OFFSET;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Value};

use super::builtin::elem_code;
use super::expr::scalar_of;
use super::{clif_type, scalar_type, Gang, Tx};
use crate::JitError;

impl Tx<'_, '_> {
    /// The body of a region function; `params` are `(args, gang, num_gangs)`.
    pub(super) fn region_body(&mut self, r: &Region, params: &[Value]) -> Result<(), JitError> {
        let (args, gang, num_gangs) = (params[0], params[1], params[2]);
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
        for (i, &(var, ty)) in self.locals.clone().iter().enumerate() {
            let pass = r.params.get(i).map(|p| p.pass);
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
            let (var, _) = self.local(red.private)?;
            let identity = self.identity(red.op, red.ty);
            self.b.def_var(var, identity);
        }

        self.block(&r.body)?;
        self.b.ins().jump(epilogue, &[]);

        self.b.switch_to_block(epilogue);
        for red in &r.reductions {
            let (var, _) = self.local(red.private)?;
            let t = scalar_type(red.ty);
            let offset = slot(red.param);
            let before = self.b.ins().load(t, MemFlagsData::trusted(), args, offset);
            let partial = self.b.use_var(var);
            let combined = self.combine(red.op, red.ty, before, partial);
            self.b
                .ins()
                .store(MemFlagsData::trusted(), combined, args, offset);
        }
        for (i, p) in r.params.iter().enumerate() {
            let reduced = r.reductions.iter().any(|red| red.param == i);
            if p.pass == Pass::InOut && !reduced {
                let (var, _) = self.local(acc_lang::ir::LocalId(i as u32))?;
                let v = self.b.use_var(var);
                self.b
                    .ins()
                    .store(MemFlagsData::trusted(), v, args, slot(i));
            }
        }
        for a in owned {
            self.call_rt("acc_rt_release", &[a])?;
        }
        self.b.ins().return_(&[]);
        self.start_unreachable();
        Ok(())
    }

    /// `Stmt::Launch` on the host device.
    pub(super) fn launch(&mut self, l: &Launch) -> Result<(), JitError> {
        let region = self
            .env
            .module
            .regions
            .iter()
            .find(|r| r.id == l.region)
            .ok_or(JitError::UnknownRegion(l.region))?;
        let fid = *self
            .env
            .regions
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
        // `if(false)` runs the region on the host: here, that is where it runs anyway.
        if let Some(c) = &l.if_cond {
            self.expr(c)?;
        }
        let num_gangs = self.num_gangs(region.construct, l)?;
        self.queue(l.async_queue.as_ref())?;
        for w in l.wait.iter().flatten() {
            self.expr(w)?;
        }

        // for gang in 0..num_gangs { region(ctx, args, gang, num_gangs) }
        let header = self.b.create_block();
        let gang = self.b.append_block_param(header, types::I64);
        let body = self.b.create_block();
        let done = self.b.create_block();
        let zero = self.iconst(types::I64, 0);
        self.b.ins().jump(header, &[BlockArg::Value(zero)]);
        self.b.switch_to_block(header);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, gang, num_gangs);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let f = self.user_func(fid);
        self.b.ins().call(f, &[self.ctx, args, gang, num_gangs]);
        self.check_status();
        let one = self.iconst(types::I64, 1);
        let next = self.b.ins().iadd(gang, one);
        self.b.ins().jump(header, &[BlockArg::Value(next)]);
        self.b.switch_to_block(done);

        for (i, place) in &l.results {
            let p = region.params.get(*i).ok_or_else(|| {
                JitError::Unsupported(format!("launch result of parameter {i}, which is not one"))
            })?;
            let v = self
                .b
                .ins()
                .load(clif_type(p.ty), MemFlagsData::trusted(), args, slot(*i));
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

    /// The host device's gang count: the `num_gangs` clause for `host` on a `parallel`
    /// construct (at least 1), and 1 otherwise. `serial` has one gang by definition, and a
    /// `kernels` region's statements outside loops run once, so it runs as one gang too.
    fn num_gangs(&mut self, construct: Construct, l: &Launch) -> Result<Value, JitError> {
        let one = self.iconst(types::I64, 1);
        let parallel = matches!(construct, Construct::Parallel | Construct::ParallelLoop);
        let (Some(e), true) = (&l.num_gangs.host, parallel) else {
            return Ok(one);
        };
        let v = self.expr(e)?;
        let v = match scalar_of(e, "`num_gangs`")? {
            ScalarType::I32 => self.b.ins().sextend(types::I64, v),
            _ => v,
        };
        let too_few = self.b.ins().icmp(IntCC::SignedLessThan, v, one);
        Ok(self.b.ins().select(too_few, one, v))
    }
}

/// The byte offset of parameter `i`'s slot in a region's argument buffer.
fn slot(i: usize) -> i32 {
    (i * 8) as i32
}
