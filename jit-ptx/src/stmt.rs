//! Statements: assignments, stores, control flow, checks. Loops are in `schedule`.
//!
//! In `Block` and `Row` mode every thread of the block (or row) runs each statement with the
//! same values, so control flow stays uniform and barriers are safe; only the leader stores,
//! and a barrier follows each store so that the others read what it wrote. A `copy` scalar's
//! cell also gets a barrier before the leader's store (`Fx::write_local`): every thread reads
//! the cell, and no read may still be in flight when it changes.

use acc_lang::ir::{Block, Expr, ScalarType, SiteId, Stmt, StringId};

use crate::fx::{FailKind, Failure, FnKind, Fx, Val};
use crate::plan::Mode;
use crate::ptx::{mem, Class, Reg};
use crate::{unsupported, Result};

impl Fx<'_, '_> {
    pub(crate) fn block(&mut self, stmts: &Block) -> Result<()> {
        for s in stmts {
            self.stmt(s)?;
        }
        Ok(())
    }

    /// `array[indices] = value`, where `value` computes the stored value in the IR's order:
    /// after the array and the indices, before the bounds check (an access without a check
    /// has its address worked out before the value).
    pub(crate) fn store(
        &mut self,
        array: &Expr,
        indices: &[Expr],
        site: Option<SiteId>,
        value: impl FnOnce(&mut Self) -> Result<(Reg, ScalarType)>,
    ) -> Result<()> {
        let a = self.array(array)?;
        let site = self.checked_site(indices, site);
        let unchecked = match site {
            None => Some(self.unchecked_address(array, &a, indices)?),
            Some(_) => None,
        };
        let mut idx = Vec::with_capacity(indices.len());
        if unchecked.is_none() {
            for i in indices {
                idx.push(self.index(i)?);
            }
        }
        let (v, s) = value(self)?;
        if s != a.elem {
            return unsupported("a store of a value of another type than the array's");
        }
        let addr = match unchecked {
            Some(addr) => addr,
            None => self.element_addr(&a, &idx, site)?.into(),
        };
        let v = self.storable(v, s);
        let g = self.guard();
        let op = format!("{g}st.global.{} [{addr}]", mem(s));
        self.store_or_defer(array, indices, op, v);
        self.sync();
        Ok(())
    }

    pub(crate) fn stmt(&mut self, s: &Stmt) -> Result<()> {
        match s {
            Stmt::Set(l, e) => {
                let v = self.expr(e)?;
                self.write_local(*l, &v)?;
            }
            Stmt::SetGlobal(..) => return unsupported("an assignment to a global in device code"),
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => self.store(array, indices, *site, |fx| fx.scalar(value))?,
            Stmt::Eval(e) => {
                self.expr_opt(e)?;
            }
            Stmt::If { cond, then, els } => {
                let c = self.pred(cond)?;
                let else_label = self.label("else");
                let done = self.label("endif");
                self.ins(format!("@!{c} bra {else_label}"));
                self.block(then)?;
                if !els.is_empty() {
                    self.ins(format!("bra {done}"));
                }
                self.place(&else_label);
                if !els.is_empty() {
                    self.block(els)?;
                    self.place(&done);
                }
            }
            Stmt::While { cond, body, site } => {
                // A `while` loop may never end: every `STOP_POLL_EVERY` trips it checks the
                // stop word (`Fx::check_stop`, `read_stop`). It is two loops: the inner one
                // runs the trips, counting them down; the outer one checks the word read after
                // the last round (0 before the first), starts reading it again, and starts the
                // count again.
                let outer = self.label("while");
                let top = self.label("trip");
                let latch = self.label("latch");
                let exit = self.label("wend");
                let count = self.fresh(Class::B32);
                let word = self.fresh(Class::B32);
                self.ins(format!("mov.u32 {word}, 0"));
                self.place(&outer);
                self.ins(format!("mov.u32 {count}, {}", crate::fx::STOP_POLL_EVERY));
                self.place(&top);
                let c = self.pred(cond)?;
                self.ins(format!("@!{c} bra {exit}"));
                self.enter_loop(crate::fx::LoopTargets {
                    brk: Some(exit.clone()),
                    cont: latch.clone(),
                });
                self.block(body)?;
                self.leave_loop();
                self.place(&latch);
                let more = self.fresh(Class::Pred);
                self.ins(format!("sub.u32 {count}, {count}, 1"));
                self.ins(format!("setp.ne.u32 {more}, {count}, 0"));
                self.ins(format!("@{more} bra {top}"));
                self.check_stop(word, site.0);
                self.read_stop(word);
                self.ins(format!("bra {outer}"));
                self.place(&exit);
            }
            Stmt::For(f) => self.for_loop(f)?,
            Stmt::Break => {
                let target = match self.loop_targets() {
                    Some(t) => t.brk.clone(),
                    None => return unsupported("`break` outside a loop"),
                };
                match target {
                    Some(l) => self.ins(format!("bra {l}")),
                    None => return unsupported("`break` out of a loop shared among threads"),
                }
            }
            Stmt::Continue => {
                let target = match self.loop_targets() {
                    Some(t) => t.cont.clone(),
                    None => return unsupported("`continue` outside a loop"),
                };
                self.ins(format!("bra {target}"));
            }
            Stmt::Return(e) => self.return_stmt(e.as_ref())?,
            // No array can be freed while a region runs (the launch's arguments keep them
            // alive): device code drops the reference counting.
            Stmt::Retain(_) | Stmt::Release(_) => {}
            // Device output is a record in a buffer: nothing in it fails, so its site is unused.
            Stmt::Print(args, _) => self.print(args)?,
            Stmt::Printf(fmt, args, _) => self.printf(*fmt, args)?,
            Stmt::Assert {
                cond,
                message,
                site,
            } => self.assert(cond, *message, site.0)?,
            Stmt::Launch(_) => return unsupported("a compute construct in device code"),
            Stmt::Data(_) | Stmt::DataRegion { .. } => {
                return unsupported("a data directive in device code")
            }
            Stmt::Wait { .. } => return unsupported("`acc wait` in device code"),
            Stmt::Atomic(a) => self.atomic(a)?,
            Stmt::Block(b) => self.block(b)?,
        }
        Ok(())
    }

    fn return_stmt(&mut self, e: Option<&Expr>) -> Result<()> {
        match self.kind() {
            FnKind::Kernel => {
                // Leaving early is uniform only where all threads run the same code.
                if self.mode() != Mode::Block {
                    return unsupported("`return` inside a worker or vector loop of a region");
                }
                if let Some(e) = e {
                    self.expr_opt(e)?;
                }
            }
            FnKind::Routine => {
                if self.mode() != self.entry_mode() {
                    return unsupported("`return` inside a loop shared among threads");
                }
                if let Some(e) = e {
                    let v = self.expr_opt(e)?;
                    if let (Some(Val::Scalar(r, s)), Some(_)) = (v, self.ret()) {
                        let r = self.storable_param(r, s);
                        let t = crate::call::param_type(s);
                        self.ins(format!("st.param.{t} [ret], {r}"));
                    }
                }
            }
        }
        let end = self.end_label();
        self.ins(format!("bra {end}"));
        Ok(())
    }

    /// `assert(cond[, message])`: the error record's `kind` is 3 and its `index` the message's
    /// string number (-1 without one).
    fn assert(&mut self, cond: &Expr, message: Option<StringId>, site: u32) -> Result<()> {
        let c = self.pred(cond)?;
        let failed = self.fresh(Class::Pred);
        self.ins(format!("not.pred {failed}, {c}"));
        let m = self.const_i64(message.map_or(-1, |m| m.0 as i64));
        let failure = Failure {
            index: Some(m),
            ..Failure::at(FailKind::Assert, site)
        };
        self.fail_if(failed, failure);
        Ok(())
    }
}
