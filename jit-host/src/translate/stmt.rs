//! Statements: assignments, control flow, counted loops, output, checks.

use acc_lang::hir::Const;
use acc_lang::ir::{
    visit, Block as IrBlock, Expr, ExprKind, ForLoop, PrintArg, ReductionOp, ScalarType, SiteId,
    Stmt, Ty,
};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, BlockArg, InstBuilder, MemFlagsData, Type, Value};
use cranelift_frontend::Variable;

use super::expr::scalar_of;
use super::region::LateResults;
use super::{is_float, scalar_type, LoopTargets, Tx};
use crate::JitError;

/// How many iterations of an innermost counted loop run between two interrupt checks (a few
/// microseconds of the tightest loop).
const INTERRUPT_CHUNK: i64 = 1 << 14;

impl Tx<'_, '_> {
    pub(super) fn block(&mut self, stmts: &IrBlock) -> Result<(), JitError> {
        // Launches whose results wait, with how many statements are still to come before
        // they are taken (`Launch::results_after`).
        let mut waiting: Vec<(LateResults, u32)> = Vec::new();
        for s in stmts {
            let late = match s {
                Stmt::Launch(l) => self.launch(l)?,
                s => {
                    self.stmt(s)?;
                    None
                }
            };
            for (r, left) in &mut waiting {
                *left -= 1;
                if *left == 0 {
                    self.take_results(r)?;
                }
            }
            waiting.retain(|(_, left)| *left > 0);
            if let Some(r) = late {
                let after = r.results_after();
                waiting.push((r, after));
            }
        }
        // The IR keeps the statements a launch's results wait for in its block
        // (`ir::verify`); were it not so, they are taken here.
        for (r, _) in &waiting {
            self.take_results(r)?;
        }
        Ok(())
    }

    pub(super) fn stmt(&mut self, s: &Stmt) -> Result<(), JitError> {
        match s {
            Stmt::Set(l, e) => {
                let v = self.expr(e)?;
                self.set_local(*l, v)?;
            }
            Stmt::SetGlobal(g, e) => {
                let v = self.expr(e)?;
                let (base, offset) = self.global_addr(*g)?;
                self.b.ins().store(MemFlagsData::trusted(), v, base, offset);
            }
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                // The IR's order: array, indices, value, then the bounds check.
                let element = self.element(array, indices)?;
                let v = self.expr(value)?;
                let site = self.unproven(indices, *site);
                let addr = self.element_address(&element, site)?;
                self.b.ins().store(MemFlagsData::trusted(), v, addr, 0);
            }
            Stmt::Eval(e) => {
                let v = self.expr_opt(e)?;
                if let (Some(v), true) = (v, e.ty.is_array()) {
                    self.call_rt("acc_rt_release", &[v])?;
                }
            }
            Stmt::If { cond, then, els } => self.if_stmt(cond, then, els)?,
            Stmt::While { cond, body, site } => self.while_loop(cond, body, *site)?,
            Stmt::For(f) => self.for_loop(f)?,
            Stmt::Break | Stmt::Continue => {
                let target = self
                    .loops
                    .last()
                    .ok_or_else(|| JitError::Unsupported("`break` outside a loop".into()))?;
                let to = match s {
                    Stmt::Break => target.break_to,
                    _ => target.continue_to,
                };
                self.b.ins().jump(to, &[]);
                self.start_unreachable();
            }
            Stmt::Return(e) => self.return_stmt(e.as_ref())?,
            Stmt::Retain(e) => {
                let v = self.expr(e)?;
                self.call_rt("acc_rt_retain", &[v])?;
            }
            Stmt::Release(e) => {
                let v = self.expr(e)?;
                self.call_rt("acc_rt_release", &[v])?;
            }
            Stmt::Print(args, site) => self.at_site(*site, |x| x.print(args))?,
            Stmt::Printf(fmt, args, site) => self.at_site(*site, |x| x.printf(*fmt, args))?,
            Stmt::Assert {
                cond,
                message,
                site,
            } => {
                let c = self.expr(cond)?;
                let failed = self.b.create_block();
                let ok = self.b.create_block();
                self.b.set_cold_block(failed);
                self.b.ins().brif(c, ok, &[], failed, &[]);
                self.b.switch_to_block(failed);
                let (p, l) = match message {
                    Some(m) => self.string(*m)?,
                    None => (self.iconst(types::I64, 0), self.iconst(types::I64, 0)),
                };
                let site = self.site(Some(*site));
                self.call_rt_and_fail("acc_rt_assert_fail", &[self.ctx, site, p, l])?;
                self.b.switch_to_block(ok);
            }
            Stmt::Launch(l) => {
                if let Some(r) = self.launch(l)? {
                    self.take_results(&r)?;
                }
            }
            Stmt::Data(d) => self.data_directive(d)?,
            Stmt::DataRegion { enter, body, exit } => {
                self.data_directive(enter)?;
                self.block(body)?;
                self.data_directive(exit)?;
            }
            Stmt::Wait {
                queues,
                async_queue,
                site,
            } => self.wait_stmt(queues, async_queue.as_ref(), *site)?,
            Stmt::Atomic(a) => self.atomic(a)?,
            Stmt::Block(b) => self.block(b)?,
        }
        Ok(())
    }

    fn return_stmt(&mut self, e: Option<&Expr>) -> Result<(), JitError> {
        if let Some(epilogue) = self.epilogue {
            if let Some(e) = e {
                self.expr_opt(e)?;
            }
            self.b.ins().jump(epilogue, &[]);
        } else if let Some(exit) = self.inline_exit {
            let v = match e {
                Some(e) => self.expr_opt(e)?,
                None => None,
            };
            let v = v.filter(|_| self.ret.is_some());
            self.inline_return(exit, v);
        } else {
            match e {
                Some(e) => {
                    let v = self.expr(e)?;
                    self.b.ins().return_(&[v]);
                }
                None => self.return_dummy(),
            }
        }
        self.start_unreachable();
        Ok(())
    }

    fn if_stmt(&mut self, cond: &Expr, then: &IrBlock, els: &IrBlock) -> Result<(), JitError> {
        let c = self.expr(cond)?;
        let then_block = self.b.create_block();
        let else_block = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(c, then_block, &[], else_block, &[]);
        self.b.switch_to_block(then_block);
        self.block(then)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(else_block);
        self.block(els)?;
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        Ok(())
    }

    /// `while`, rotated: the condition is tested before the first iteration and again at the
    /// end of each (Cranelift hoists loop-invariant code out of loops of this shape, whose
    /// header is the body, but not always out of a loop whose header is the test).
    fn while_loop(&mut self, cond: &Expr, body: &IrBlock, site: SiteId) -> Result<(), JitError> {
        let body_block = self.b.create_block();
        let latch = self.b.create_block();
        let exit = self.b.create_block();
        let preloaded = self.preload_globals(&[cond], body)?;
        let word = self.interrupt_word();
        let c = self.expr(cond)?;
        self.b.ins().brif(c, body_block, &[], exit, &[]);
        self.b.switch_to_block(body_block);
        self.loops.push(LoopTargets {
            continue_to: latch,
            break_to: exit,
            word,
        });
        self.block(body)?;
        self.loops.pop();
        self.b.ins().jump(latch, &[]);
        self.b.switch_to_block(latch);
        self.check_interrupt(word, site)?;
        let c = self.expr(cond)?;
        self.b.ins().brif(c, body_block, &[], exit, &[]);
        self.b.switch_to_block(exit);
        self.forget_globals(preloaded);
        Ok(())
    }

    /// A counted loop. Its trip count is computed once, in unsigned arithmetic of the variable's
    /// width, so the loop never overflows its variable:
    /// `last = (end - start - 1) / step` (exclusive) or `(end - start) / step` (inclusive), with
    /// the differences taken the other way round for a negative step. The loop then runs
    /// iterations `0..=last`, the variable advancing by `step` (wrapping) between them.
    /// In a compute region or a gang routine, a gang loop runs only its gang's share of the
    /// iterations.
    pub(super) fn for_loop(&mut self, f: &ForLoop) -> Result<(), JitError> {
        let (var, var_ty) = self.local(f.var)?;
        let st = match var_ty {
            Ty::Scalar(s @ (ScalarType::I32 | ScalarType::I64)) => s,
            _ => {
                return Err(JitError::Unsupported(
                    "a loop variable that is not an integer".into(),
                ))
            }
        };
        let t = scalar_type(st);
        let start = self.expr(&f.start)?;
        let end = self.expr(&f.end)?;
        let step = self.expr(&f.step)?;
        if let Some(site) = f.step_site {
            let zero = self.iconst(t, 0);
            let is_zero = self.b.ins().icmp(IntCC::Equal, step, zero);
            self.fail_when(is_zero, "acc_rt_zero_step", site)?;
        }
        let constant_step = match f.step.kind {
            ExprKind::Const(Const::I32(v)) => Some(v as i64),
            ExprKind::Const(Const::I64(v)) => Some(v),
            _ => None,
        };
        let (nonempty, last) = self.trip(t, start, end, step, constant_step, f.inclusive);

        // Loop reductions: the variable accumulates this loop's iterations from the operator's
        // identity, and its value before the loop is combined in afterwards.
        let mut saved = Vec::new();
        for red in &f.schedule.reductions {
            let (rvar, _) = self.local(red.var)?;
            let before = self.b.use_var(rvar);
            let identity = self.constant(red.identity);
            self.b.def_var(rvar, identity);
            saved.push((rvar, red.ty, red.op, before));
        }

        let preloaded = self.preload_globals(&[], &f.body)?;
        let exit = self.b.create_block();
        let (nonempty, first, last) = match (self.gang, f.schedule.gang) {
            (Some(g), true) => self.gang_share(t, nonempty, last, g.gang, g.num_gangs),
            _ => {
                let zero = self.iconst(t, 0);
                (nonempty, zero, last)
            }
        };
        let pre = self.b.create_block();
        self.b.ins().brif(nonempty, pre, &[], exit, &[]);
        self.b.switch_to_block(pre);
        let word = self.interrupt_word();
        // The variable at iteration `first` (0 unless this gang starts further in).
        let offset = self.b.ins().imul(first, step);
        let v0 = self.b.ins().iadd(start, offset);
        let mut pinned = Vec::new();
        for l in self.invariant_locals(f.var, &f.body) {
            let (x, _) = self.local(l)?;
            pinned.push((x, self.b.use_var(x)));
        }
        let pinned = &pinned[..];
        let hoisted = match constant_step {
            Some(s) if s > 0 && self.version_depth < acc_lang::ir::bounds::MAX_VERSION_DEPTH => {
                self.hoistable(f.var, &f.body)
            }
            _ => Vec::new(),
        };
        if hoisted.is_empty() {
            self.loop_copy(f, var, t, first, v0, last, step, exit, pinned, word)?;
        } else {
            // The variable's last value: `first <= last` here, and it is a value the loop takes.
            let span = self.b.ins().imul(last, step);
            let v_last = self.b.ins().iadd(start, span);
            let ok = self.in_bounds_throughout(&hoisted, t, v0, v_last)?;
            let fast = self.b.create_block();
            let checked = self.b.create_block();
            self.b.ins().brif(ok, fast, &[], checked, &[]);
            self.b.switch_to_block(fast);
            let keys: Vec<usize> = hoisted.iter().map(|h| h.key).collect();
            self.proven.extend(keys.iter().copied());
            self.version_depth += 1;
            self.loop_copy(f, var, t, first, v0, last, step, exit, pinned, word)?;
            for k in &keys {
                self.proven.remove(k);
            }
            self.b.switch_to_block(checked);
            self.loop_copy(f, var, t, first, v0, last, step, exit, pinned, word)?;
            self.version_depth -= 1;
        }

        self.b.switch_to_block(exit);
        for (rvar, rs, op, before) in saved {
            let partial = self.b.use_var(rvar);
            let combined = self.combine(op, rs, before, partial);
            self.b.def_var(rvar, combined);
        }
        self.forget_globals(preloaded);
        Ok(())
    }

    /// One copy of a `for` loop's iterations `first..=last`, entered from the current block,
    /// leaving to `exit`.
    #[allow(clippy::too_many_arguments)]
    fn loop_copy(
        &mut self,
        f: &ForLoop,
        var: Variable,
        t: Type,
        first: Value,
        v0: Value,
        last: Value,
        step: Value,
        exit: cranelift_codegen::ir::Block,
        pinned: &[(Variable, Value)],
        word: Value,
    ) -> Result<(), JitError> {
        // An innermost loop checks for an interrupt once per chunk of `INTERRUPT_CHUNK`
        // iterations: the latch compares the iteration with the chunk's end (a block
        // parameter) instead of the last one, so iterations cost nothing more. A loop with
        // loops in it checks at every back edge (its inner loops run between the checks).
        let chunked = !visit::has_loop(&f.body);
        let body = self.b.create_block();
        let k = self.b.append_block_param(body, t);
        let v = self.b.append_block_param(body, t);
        let end = chunked.then(|| self.b.append_block_param(body, t));
        let mut entry = vec![BlockArg::Value(first), BlockArg::Value(v0)];
        if chunked {
            entry.push(BlockArg::Value(self.chunk_end(first, last)));
        }
        self.b.ins().jump(body, &entry);
        self.b.switch_to_block(body);
        self.b.def_var(var, v);
        for &(x, value) in pinned {
            self.b.def_var(x, value);
        }
        let latch = self.b.create_block();
        self.loops.push(LoopTargets {
            continue_to: latch,
            break_to: exit,
            word,
        });
        self.block(&f.body)?;
        self.loops.pop();
        self.b.ins().jump(latch, &[]);

        // `k`, `v` and `end` are the body block's parameters, so they are still this
        // iteration's here.
        self.b.switch_to_block(latch);
        let next = self.b.create_block();
        let one = self.iconst(t, 1);
        match end {
            None => {
                self.check_interrupt(word, f.site)?;
                let done = self.b.ins().icmp(IntCC::Equal, k, last);
                self.b.ins().brif(done, exit, &[], next, &[]);
                self.b.switch_to_block(next);
                let k1 = self.b.ins().iadd(k, one);
                let v1 = self.b.ins().iadd(v, step);
                self.b
                    .ins()
                    .jump(body, &[BlockArg::Value(k1), BlockArg::Value(v1)]);
            }
            Some(end) => {
                // The hot path (latch, next) has no join: `next` has the latch alone as
                // predecessor, so no value of the loop needs a block parameter (and a move)
                // on the way back; the cold refill jumps back to the body itself.
                let chunk_done = self.b.create_block();
                let refill = self.b.create_block();
                self.b.set_cold_block(refill);
                let at_end = self.b.ins().icmp(IntCC::Equal, k, end);
                self.b.ins().brif(at_end, chunk_done, &[], next, &[]);
                self.b.switch_to_block(next);
                let k1 = self.b.ins().iadd(k, one);
                let v1 = self.b.ins().iadd(v, step);
                self.b.ins().jump(
                    body,
                    &[
                        BlockArg::Value(k1),
                        BlockArg::Value(v1),
                        BlockArg::Value(end),
                    ],
                );
                self.b.switch_to_block(chunk_done);
                let done = self.b.ins().icmp(IntCC::Equal, k, last);
                self.b.ins().brif(done, exit, &[], refill, &[]);
                self.b.switch_to_block(refill);
                self.check_interrupt(word, f.site)?;
                let k1 = self.b.ins().iadd(k, one);
                let v1 = self.b.ins().iadd(v, step);
                let new_end = self.chunk_end(k1, last);
                self.b.ins().jump(
                    body,
                    &[
                        BlockArg::Value(k1),
                        BlockArg::Value(v1),
                        BlockArg::Value(new_end),
                    ],
                );
            }
        }
        Ok(())
    }

    /// The last iteration of the chunk that starts at iteration `from` (`from <= last`):
    /// `from + INTERRUPT_CHUNK - 1`, or `last` when that is sooner (no overflow: the sum is
    /// taken only when it is below `last`).
    fn chunk_end(&mut self, from: Value, last: Value) -> Value {
        let left = self.b.ins().isub(last, from);
        let long =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedGreaterThanOrEqual, left, INTERRUPT_CHUNK);
        let later = self.b.ins().iadd_imm_u(from, INTERRUPT_CHUNK - 1);
        self.b.ins().select(long, later, last)
    }

    /// Whether an access is still to be checked: `site`, unless an enclosing loop proved it.
    pub(super) fn unproven(&self, indices: &[Expr], site: Option<SiteId>) -> Option<SiteId> {
        site.filter(|_| {
            !self
                .proven
                .contains(&acc_lang::ir::bounds::access_key(indices))
        })
    }

    /// Whether the loop runs at all, and the number of its last iteration (`count - 1`).
    fn trip(
        &mut self,
        t: Type,
        start: Value,
        end: Value,
        step: Value,
        constant_step: Option<i64>,
        inclusive: bool,
    ) -> (Value, Value) {
        let (up_cc, down_cc) = if inclusive {
            (
                IntCC::SignedLessThanOrEqual,
                IntCC::SignedGreaterThanOrEqual,
            )
        } else {
            (IntCC::SignedLessThan, IntCC::SignedGreaterThan)
        };
        let (nonempty, diff, magnitude) = match constant_step {
            Some(s) if s > 0 => (
                self.b.ins().icmp(up_cc, start, end),
                self.b.ins().isub(end, start),
                step,
            ),
            Some(s) if s < 0 => (
                self.b.ins().icmp(down_cc, start, end),
                self.b.ins().isub(start, end),
                self.b.ins().ineg(step),
            ),
            _ => {
                // Decided at run time (a step of 0 failed before, where the loop carries a site;
                // none runs no iterations).
                let zero = self.iconst(t, 0);
                let up = self.b.ins().icmp(IntCC::SignedGreaterThan, step, zero);
                let down = self.b.ins().icmp(IntCC::SignedLessThan, step, zero);
                let up_ok = self.b.ins().icmp(up_cc, start, end);
                let down_ok = self.b.ins().icmp(down_cc, start, end);
                let up_run = self.b.ins().band(up, up_ok);
                let down_run = self.b.ins().band(down, down_ok);
                let nonempty = self.b.ins().bor(up_run, down_run);
                let up_diff = self.b.ins().isub(end, start);
                let down_diff = self.b.ins().isub(start, end);
                let diff = self.b.ins().select(up, up_diff, down_diff);
                let neg = self.b.ins().ineg(step);
                let magnitude = self.b.ins().select(up, step, neg);
                let one = self.iconst(t, 1);
                let is_zero = self.b.ins().icmp(IntCC::Equal, step, zero);
                let magnitude = self.b.ins().select(is_zero, one, magnitude);
                (nonempty, diff, magnitude)
            }
        };
        let span = if inclusive {
            diff
        } else {
            // Only used when the loop runs, where `diff >= 1`.
            let one = self.iconst(t, 1);
            self.b.ins().isub(diff, one)
        };
        // A constant step's magnitude is known: steps of a power of two (nearly all loops step
        // by 1) need no division.
        let last = match constant_step.map(i64::unsigned_abs) {
            Some(1) => span,
            Some(m) if m.is_power_of_two() => {
                let shift = self.iconst(t, m.trailing_zeros() as i64);
                self.b.ins().ushr(span, shift)
            }
            _ => self.b.ins().udiv(span, magnitude),
        };
        (nonempty, last)
    }

    /// This gang's contiguous share of iterations `0..=last`: the counts are split as evenly as
    /// possible, the first `count % num_gangs` gangs taking one more. Returns whether the share
    /// is non-empty, its first iteration and its last.
    fn gang_share(
        &mut self,
        t: Type,
        nonempty: Value,
        last: Value,
        gang: Value,
        num_gangs: Value,
    ) -> (Value, Value, Value) {
        // In 64-bit: the count of an i32 loop can be 2^32.
        let wide = |tx: &mut Self, v: Value| {
            if t == types::I64 {
                v
            } else {
                tx.b.ins().uextend(types::I64, v)
            }
        };
        let last64 = wide(self, last);
        let one = self.iconst(types::I64, 1);
        let zero = self.iconst(types::I64, 0);
        let count = self.b.ins().iadd(last64, one);
        let count = self.b.ins().select(nonempty, count, zero);
        let base = self.b.ins().udiv(count, num_gangs);
        let extra = self.b.ins().urem(count, num_gangs);
        let before = self.b.ins().imul(gang, base);
        let lower = self.b.ins().umin(gang, extra);
        let first = self.b.ins().iadd(before, lower);
        let gets_extra = self.b.ins().icmp(IntCC::UnsignedLessThan, gang, extra);
        let gets_extra = self.b.ins().uextend(types::I64, gets_extra);
        let mine = self.b.ins().iadd(base, gets_extra);
        let runs = self.b.ins().icmp(IntCC::NotEqual, mine, zero);
        let mine_last = self.b.ins().iadd(first, mine);
        let mine_last = self.b.ins().isub(mine_last, one);
        let narrow = |tx: &mut Self, v: Value| {
            if t == types::I64 {
                v
            } else {
                tx.b.ins().ireduce(t, v)
            }
        };
        let first = narrow(self, first);
        let mine_last = narrow(self, mine_last);
        (runs, first, mine_last)
    }

    /// `a op b` for a reduction operator.
    pub(super) fn combine(&mut self, op: ReductionOp, s: ScalarType, a: Value, b: Value) -> Value {
        let float = is_float(s);
        let ins = self.b.ins();
        match op {
            ReductionOp::Add if float => ins.fadd(a, b),
            ReductionOp::Add => ins.iadd(a, b),
            ReductionOp::Mul if float => ins.fmul(a, b),
            ReductionOp::Mul => ins.imul(a, b),
            ReductionOp::Max if float => self.c_fmax(a, b),
            ReductionOp::Min if float => self.c_fmin(a, b),
            ReductionOp::Max => ins.smax(a, b),
            ReductionOp::Min => ins.smin(a, b),
            ReductionOp::BitAnd | ReductionOp::And => ins.band(a, b),
            ReductionOp::BitOr | ReductionOp::Or => ins.bor(a, b),
            ReductionOp::BitXor => ins.bxor(a, b),
        }
    }

    /// C's `fmin`: a NaN operand yields the other operand.
    pub(super) fn c_fmin(&mut self, a: Value, b: Value) -> Value {
        let m = self.b.ins().fmin(a, b);
        self.nan_ignoring(a, b, m)
    }

    /// C's `fmax`.
    pub(super) fn c_fmax(&mut self, a: Value, b: Value) -> Value {
        let m = self.b.ins().fmax(a, b);
        self.nan_ignoring(a, b, m)
    }

    /// `m` (which propagates NaN), except `b` when `a` is NaN and `a` when `b` is.
    fn nan_ignoring(&mut self, a: Value, b: Value, m: Value) -> Value {
        let a_nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
        let b_nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
        let m = self.b.ins().select(a_nan, b, m);
        self.b.ins().select(b_nan, a, m)
    }

    /// `print(values…)`: every argument is evaluated before anything is printed, as a call's arguments
    /// are, so that a call among them that prints, or an error in one, comes first.
    pub(super) fn print(&mut self, args: &[PrintArg]) -> Result<(), JitError> {
        enum Piece {
            Text(acc_lang::ir::StringId),
            Value(Value, String),
        }
        let mut pieces = Vec::with_capacity(args.len());
        for a in args {
            pieces.push(match a {
                PrintArg::Str(s) => Piece::Text(*s),
                PrintArg::Value(e) => {
                    let printer = match e.ty {
                        Ty::Array { .. } => "acc_print_array".to_string(),
                        Ty::Scalar(s) => format!("acc_print_{}", s.name()),
                    };
                    Piece::Value(self.expr(e)?, printer)
                }
            });
        }
        for (i, piece) in pieces.into_iter().enumerate() {
            if i > 0 {
                self.call_rt("acc_print_space", &[self.ctx])?;
            }
            match piece {
                Piece::Text(s) => {
                    let (p, l) = self.string(s)?;
                    self.call_rt("acc_print_str", &[self.ctx, p, l])?;
                }
                Piece::Value(v, printer) => {
                    self.call_rt(&printer, &[self.ctx, v])?;
                }
            }
        }
        self.call_rt("acc_print_newline", &[self.ctx])?;
        Ok(())
    }

    /// `printf`: each argument in an 8-byte slot (integers sign-extended, floats as `f64`
    /// bits).
    pub(super) fn printf(
        &mut self,
        fmt: acc_lang::ir::FormatId,
        args: &[Expr],
    ) -> Result<(), JitError> {
        let &(ptr, len) = self
            .env
            .formats
            .get(fmt.0 as usize)
            .ok_or_else(|| JitError::Unsupported(format!("unknown format {fmt:?}")))?;
        let buf = self.stack_buffer(args.len());
        for (i, a) in args.iter().enumerate() {
            let v = self.expr(a)?;
            let bits = match scalar_of(a, "a `printf` argument")? {
                ScalarType::Bool => self.b.ins().uextend(types::I64, v),
                ScalarType::I32 => self.b.ins().sextend(types::I64, v),
                ScalarType::I64 => v,
                ScalarType::F32 => {
                    let d = self.b.ins().fpromote(types::F64, v);
                    self.b.ins().bitcast(types::I64, MemFlagsData::new(), d)
                }
                ScalarType::F64 => self.b.ins().bitcast(types::I64, MemFlagsData::new(), v),
            };
            self.b
                .ins()
                .store(MemFlagsData::trusted(), bits, buf, (i * 8) as i32);
        }
        let p = self.iconst(types::I64, ptr as i64);
        let l = self.iconst(types::I64, len as i64);
        let n = self.iconst(types::I32, args.len() as i64);
        self.call_rt("acc_printf", &[self.ctx, p, l, buf, n])?;
        Ok(())
    }
}
