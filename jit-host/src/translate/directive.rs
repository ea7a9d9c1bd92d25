//! Data directives, `wait`, and the data and queue arguments of launches: compiled code
//! evaluates the clauses into records on its stack and calls the runtime (`acc_rt_data`,
//! `acc_rt_wait`, `acc_rt_launch`; docs/ABI.md), which owns every rule of presence, transfers
//! and queues.

use acc_abi::ABSENT;
use acc_lang::ir::{
    DataAction, DataClause, DataDirective, DataOp, Expr, ExprKind, Queue, SectionRange, SiteId,
    UpdateDir,
};
use acc_runtime::abi::MAX_RANK;
use acc_runtime::device::ops::{
    ACTION_COPY, ACTION_COPYIN, ACTION_COPYOUT, ACTION_CREATE, ACTION_DELETE, ACTION_NO_CREATE,
    ACTION_PRESENT, ACTION_UPDATE_DEVICE, ACTION_UPDATE_HOST, DATA_OP_SIZE, NO_SECTION,
};
use acc_runtime::device::{ASYNC_NOVAL, ASYNC_SYNC};
use cranelift_codegen::ir::{types, InstBuilder, MemFlagsData, Value};

use super::expr::scalar_of;
use super::Tx;
use crate::JitError;

fn action_code(a: DataAction) -> u32 {
    match a {
        DataAction::Clause(c) => match c {
            DataClause::Copy => ACTION_COPY,
            DataClause::CopyIn => ACTION_COPYIN,
            DataClause::CopyOut => ACTION_COPYOUT,
            DataClause::Create => ACTION_CREATE,
            DataClause::NoCreate => ACTION_NO_CREATE,
            DataClause::Present => ACTION_PRESENT,
            DataClause::Delete => ACTION_DELETE,
        },
        DataAction::Update(UpdateDir::Host | UpdateDir::Self_) => ACTION_UPDATE_HOST,
        DataAction::Update(UpdateDir::Device) => ACTION_UPDATE_DEVICE,
    }
}

impl Tx<'_, '_> {
    /// `Stmt::Data`, and each half of `Stmt::DataRegion`.
    pub(super) fn data_directive(&mut self, d: &DataDirective) -> Result<(), JitError> {
        let (ops, nops) = self.data_ops(&d.ops)?;
        let cond = self.condition(d.if_cond.as_ref())?;
        let queue = self.queue_value(d.async_queue.as_ref())?;
        let (waits, nwaits) = self.wait_list(d.wait.as_deref())?;
        let phase = self.iconst(types::I32, i64::from(d.phase.code()));
        let flags = self.iconst(types::I32, i64::from(d.modifiers.bits()));
        let site = self.site(Some(d.site));
        let args = [
            self.ctx, phase, ops, nops, flags, cond, queue, waits, nwaits, site,
        ];
        self.at_site(d.site, |x| x.call_rt("acc_rt_data", &args))?;
        Ok(())
    }

    /// `Stmt::Wait`.
    pub(super) fn wait_stmt(
        &mut self,
        queues: &[Expr],
        async_queue: Option<&Queue>,
        site: SiteId,
    ) -> Result<(), JitError> {
        let (list, n) = self.wait_list(Some(queues))?;
        let all = self.iconst(types::I8, i64::from(queues.is_empty()));
        let queue = self.queue_value(async_queue)?;
        let at = self.site(Some(site));
        let ctx = self.ctx;
        self.at_site(site, |x| {
            x.call_rt("acc_rt_wait", &[ctx, list, n, all, queue, at])
        })?;
        Ok(())
    }

    /// The records of a list of data ops: `(pointer, count as i32)`.
    pub(super) fn data_ops(&mut self, ops: &[DataOp]) -> Result<(Value, Value), JitError> {
        let slots = DATA_OP_SIZE / 8;
        let buf = self.stack_buffer(ops.len() * slots);
        for (i, op) in ops.iter().enumerate() {
            let at = (i * DATA_OP_SIZE) as i32;
            let array = self.expr(&op.array)?;
            self.store_op(
                buf,
                at,
                array,
                action_code(op.action),
                op.site,
                op.ranges.as_deref(),
            )?;
        }
        let n = self.iconst(types::I32, ops.len() as i64);
        Ok((buf, n))
    }

    /// One record for a data routine's argument (`acc_copyin(a[0:n])`): the array or section.
    pub(super) fn routine_op(
        &mut self,
        arg: &Expr,
        action: u32,
        site: Option<SiteId>,
    ) -> Result<Value, JitError> {
        let buf = self.stack_buffer(DATA_OP_SIZE / 8);
        let (array, ranges) = match &arg.kind {
            ExprKind::Section { array, ranges } => (array.as_ref(), Some(ranges.as_slice())),
            _ => (arg, None),
        };
        let a = self.expr(array)?;
        let site = site.unwrap_or(SiteId(super::NO_SITE));
        self.store_op(buf, 0, a, action, site, ranges)?;
        Ok(buf)
    }

    fn store_op(
        &mut self,
        buf: Value,
        at: i32,
        array: Value,
        action: u32,
        site: SiteId,
        ranges: Option<&[SectionRange]>,
    ) -> Result<(), JitError> {
        let flags = MemFlagsData::trusted();
        self.b.ins().store(flags, array, buf, at);
        let action = self.iconst(types::I32, i64::from(action));
        self.b.ins().store(flags, action, buf, at + 8);
        let site = self.iconst(types::I32, i64::from(site.0));
        self.b.ins().store(flags, site, buf, at + 12);
        let n = ranges.map_or(NO_SECTION, |r| r.len().min(MAX_RANK) as u32);
        let n = self.iconst(types::I32, i64::from(n));
        self.b.ins().store(flags, n, buf, at + 16);
        for (d, r) in ranges.unwrap_or(&[]).iter().take(MAX_RANK).enumerate() {
            let start = self.i64_or_absent(r.start.as_ref())?;
            let count = self.i64_or_absent(r.count.as_ref())?;
            let off = at + 24 + (d as i32) * 16;
            self.b.ins().store(flags, start, buf, off);
            self.b.ins().store(flags, count, buf, off + 8);
        }
        Ok(())
    }

    fn i64_or_absent(&mut self, e: Option<&Expr>) -> Result<Value, JitError> {
        match e {
            Some(e) => self.expr_i64(e),
            None => Ok(self.iconst(types::I64, ABSENT)),
        }
    }

    /// An integer expression widened to `i64`.
    pub(super) fn expr_i64(&mut self, e: &Expr) -> Result<Value, JitError> {
        let v = self.expr(e)?;
        Ok(match scalar_of(e, "a clause argument")? {
            acc_lang::ir::ScalarType::I64 => v,
            acc_lang::ir::ScalarType::Bool => self.b.ins().uextend(types::I64, v),
            _ => self.b.ins().sextend(types::I64, v),
        })
    }

    /// An `if` clause as a `u8` (true when absent).
    pub(super) fn condition(&mut self, c: Option<&Expr>) -> Result<Value, JitError> {
        match c {
            Some(c) => self.expr(c),
            None => Ok(self.iconst(types::I8, 1)),
        }
    }

    /// An `async` clause's value: `ASYNC_SYNC` without one, `ASYNC_NOVAL` for `async` alone.
    pub(super) fn queue_value(&mut self, q: Option<&Queue>) -> Result<Value, JitError> {
        match q {
            None => Ok(self.iconst(types::I64, ASYNC_SYNC)),
            Some(Queue::Default) => Ok(self.iconst(types::I64, ASYNC_NOVAL)),
            Some(Queue::Numbered(e)) => self.expr_i64(e),
        }
    }

    /// A `wait` clause: `(pointer, count as i32)`, count -1 without the clause.
    pub(super) fn wait_list(&mut self, w: Option<&[Expr]>) -> Result<(Value, Value), JitError> {
        let Some(w) = w else {
            let null = self.iconst(types::I64, 0);
            let none = self.iconst(types::I32, -1);
            return Ok((null, none));
        };
        let buf = self.stack_buffer(w.len());
        for (i, q) in w.iter().enumerate() {
            let v = self.expr_i64(q)?;
            self.b
                .ins()
                .store(MemFlagsData::trusted(), v, buf, (i * 8) as i32);
        }
        let n = self.iconst(types::I32, w.len() as i64);
        Ok((buf, n))
    }
}
