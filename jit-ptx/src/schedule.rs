//! Counted loops and their schedules (LANGUAGE.md 7.2): how a loop's iterations are shared out
//! over gangs (blocks), workers (`%tid.y`) and vector lanes (`%tid.x`).
//!
//! Every loop first computes its trip count the way the host does (jit-host's `trip`): once,
//! from `start`, `end` and `step`, in unsigned arithmetic of the variable's width, so that it
//! never overflows. A sequential loop then runs iterations `0..=last`. A shared loop (or a
//! `collapse(n)` nest, flattened: its iteration count is the product of the loops' counts)
//! runs iteration numbers `first, first + stride, …` below the count, each thread its own,
//! where (`Partition`):
//!
//! | levels | first | stride | body runs in |
//! |---|---|---|---|
//! | gang | gang | gangs | `Block` |
//! | worker | `ty` | `nty` | `Row` |
//! | vector, worker vector | `tid` | `nthreads` | `Thread` |
//! | gang worker | `gang * nty + ty` | `gangs * nty` | `Row` |
//! | gang vector, gang worker vector | `gang * nthreads + tid` | `gangs * nthreads` | `Thread` |
//! | vector inside a worker loop | `tx` | `ntx` | `Thread` |
//!
//! with `tid = ty * ntx + tx` and `nthreads = ntx * nty`: a vector loop outside a worker loop
//! uses every thread of the block, so no thread runs an iteration redundantly. A collapsed
//! iteration number `k` is divided back into the loops' iteration numbers, innermost fastest
//! (`decompose`), once; each thread then advances them by its stride's digits with carries. Loops that divide work among threads reduce their reduction variables over
//! those threads afterwards (`reduce`), and synchronize the threads that share the code after
//! them.
//!
//! What to do with each loop (its row of the table, the variables it reduces and over which
//! threads, where its barrier goes) is decided beforehand, by `plan`; this module carries it
//! out.

use acc_lang::hir::Const;
use acc_lang::ir::{Block, Expr, ExprKind, ForLoop, LocalId, ScalarType, Ty};

use crate::fx::{FailKind, Failure, Fx, LoopTargets, Val};
use crate::plan::{collapse_nest, Barrier, LoopPlan, Share, Unroll, Versions};
use crate::ptx::{arith, Class, Reg};
use crate::version::LoopVersions;
use crate::{unsupported, Result};

/// A shared loop's iteration numbers for this thread: the first and the distance to its next
/// (u64).
#[derive(Clone, Copy, Debug)]
struct Partition {
    first: Reg,
    stride: Reg,
}

/// One loop of a nest, its bounds evaluated.
struct Bounds {
    var: LocalId,
    ty: ScalarType,
    start: Reg,
    step: Reg,
    /// Iteration count (u64).
    count: Reg,
}

/// The iteration numbers of the loops of a collapsed nest for flat iteration number `k`
/// (`counts` outermost first): the innermost loop varies fastest. The emitter generates
/// this computation (`Fx::decompose`); this copy documents and tests it.
pub fn decompose(mut k: u64, counts: &[u64]) -> Vec<u64> {
    let mut out = vec![0; counts.len()];
    for j in (1..counts.len()).rev() {
        out[j] = k % counts[j];
        k /= counts[j];
    }
    if !out.is_empty() {
        out[0] = k;
    }
    out
}

/// `digits += steps` in the mixed radix of `counts` (as `Fx::advance_digits` emits it).
pub fn advance(digits: &mut [u64], steps: &[u64], counts: &[u64]) {
    let mut carry = 0;
    for j in (0..digits.len()).rev() {
        digits[j] += steps[j] + carry;
        carry = 0;
        if j > 0 && digits[j] >= counts[j] {
            digits[j] -= counts[j];
            carry = 1;
        }
    }
}

impl Fx<'_, '_> {
    pub(crate) fn for_loop(&mut self, f: &ForLoop) -> Result<()> {
        let s = &f.schedule;
        if !(s.gang || s.worker || s.vector) {
            return self.seq_loop(f);
        }
        let nest = collapse_nest(f).or_else(unsupported)?;
        self.shared_loop(&nest)
    }

    /// The loop variable's type.
    fn var_type(&self, var: LocalId) -> Result<ScalarType> {
        match self.local_ty(var) {
            Some(Ty::Scalar(s @ (ScalarType::I32 | ScalarType::I64))) => Ok(s),
            _ => unsupported("a loop variable that is not an integer"),
        }
    }

    /// Evaluate `start`, `end`, `step` once (into fresh registers, so that the body cannot
    /// change them) and compute whether the loop runs and its last iteration number.
    fn bounds(&mut self, f: &ForLoop) -> Result<(ScalarType, Reg, Reg, Reg, Reg)> {
        let t = self.var_type(f.var)?;
        let eval = |fx: &mut Self, e: &Expr| -> Result<Reg> {
            let (v, s) = fx.scalar(e)?;
            if s != t {
                return unsupported("loop bounds of another type than the variable");
            }
            let d = fx.fresh_of(t);
            fx.ins(format!("mov.{} {d}, {v}", crate::ptx::bits(t)));
            Ok(d)
        };
        let start = eval(self, &f.start)?;
        let end = eval(self, &f.end)?;
        let step = eval(self, &f.step)?;
        if let Some(site) = f.step_site {
            // A step of 0 computed at run time: an error at the step, before any iteration.
            let zero = self.fresh(Class::Pred);
            self.ins(format!("setp.eq.{} {zero}, {step}, 0", arith(t)));
            let site = self.site(Some(site));
            self.fail_if(zero, Failure::at(FailKind::ZeroStep, site));
        }
        let constant_step = match f.step.kind {
            ExprKind::Const(Const::I32(v)) => Some(v as i64),
            ExprKind::Const(Const::I64(v)) => Some(v),
            _ => None,
        };
        let (nonempty, last) = self.trip(t, start, end, step, constant_step, f.inclusive);
        Ok((t, start, step, nonempty, last))
    }

    /// Whether the loop runs at all, and the number of its last iteration (`count - 1`), in
    /// the variable's width (jit-host's `trip`, instruction for instruction).
    fn trip(
        &mut self,
        t: ScalarType,
        start: Reg,
        end: Reg,
        step: Reg,
        constant_step: Option<i64>,
        inclusive: bool,
    ) -> (Reg, Reg) {
        let ty = arith(t);
        let (up_cc, down_cc) = if inclusive {
            ("le", "ge")
        } else {
            ("lt", "gt")
        };
        let nonempty = self.fresh(Class::Pred);
        let diff = self.fresh_of(t);
        let magnitude;
        match constant_step {
            Some(s) if s > 0 => {
                self.ins(format!("setp.{up_cc}.{ty} {nonempty}, {start}, {end}"));
                self.ins(format!("sub.{ty} {diff}, {end}, {start}"));
                magnitude = step;
            }
            Some(s) if s < 0 => {
                self.ins(format!("setp.{down_cc}.{ty} {nonempty}, {start}, {end}"));
                self.ins(format!("sub.{ty} {diff}, {start}, {end}"));
                magnitude = self.fresh_of(t);
                self.ins(format!("neg.{ty} {magnitude}, {step}"));
            }
            _ => {
                // Decided at run time (a step of 0 failed before, where the loop carries a site;
                // none runs no iterations).
                let (up, down, up_ok, down_ok) = (
                    self.fresh(Class::Pred),
                    self.fresh(Class::Pred),
                    self.fresh(Class::Pred),
                    self.fresh(Class::Pred),
                );
                self.ins(format!("setp.gt.{ty} {up}, {step}, 0"));
                self.ins(format!("setp.lt.{ty} {down}, {step}, 0"));
                self.ins(format!("setp.{up_cc}.{ty} {up_ok}, {start}, {end}"));
                self.ins(format!("setp.{down_cc}.{ty} {down_ok}, {start}, {end}"));
                let (a, b) = (self.fresh(Class::Pred), self.fresh(Class::Pred));
                self.ins(format!("and.pred {a}, {up}, {up_ok}"));
                self.ins(format!("and.pred {b}, {down}, {down_ok}"));
                self.ins(format!("or.pred {nonempty}, {a}, {b}"));
                let (ud, dd) = (self.fresh_of(t), self.fresh_of(t));
                self.ins(format!("sub.{ty} {ud}, {end}, {start}"));
                self.ins(format!("sub.{ty} {dd}, {start}, {end}"));
                self.ins(format!("selp.{ty} {diff}, {ud}, {dd}, {up}"));
                let neg = self.fresh_of(t);
                self.ins(format!("neg.{ty} {neg}, {step}"));
                let m = self.fresh_of(t);
                self.ins(format!("selp.{ty} {m}, {step}, {neg}, {up}"));
                let zero = self.fresh(Class::Pred);
                self.ins(format!("setp.eq.{ty} {zero}, {step}, 0"));
                self.ins(format!("selp.{ty} {m}, 1, {m}, {zero}"));
                magnitude = m;
            }
        }
        let span = if inclusive {
            diff
        } else {
            // Only used when the loop runs, where `diff >= 1`.
            let s = self.fresh_of(t);
            self.ins(format!("sub.{ty} {s}, {diff}, 1"));
            s
        };
        let u = if t == ScalarType::I32 { "u32" } else { "u64" };
        let last = match constant_step.map(i64::unsigned_abs) {
            Some(1) => span,
            Some(m) if m.is_power_of_two() => {
                let l = self.fresh_of(t);
                self.ins(format!("shr.{u} {l}, {span}, {}", m.trailing_zeros()));
                l
            }
            _ => {
                let l = self.fresh_of(t);
                self.ins(format!("div.{u} {l}, {span}, {magnitude}"));
                l
            }
        };
        (nonempty, last)
    }

    /// A loop that every thread sharing the code runs whole (no level, or `seq`).
    fn seq_loop(&mut self, f: &ForLoop) -> Result<()> {
        let (t, start, step, nonempty, last) = self.bounds(f)?;
        let ty = arith(t);
        let var = match self.local(f.var)? {
            Val::Scalar(r, _) => r,
            Val::Array(_) => return unsupported("an array loop variable"),
        };
        let plan = self.plan();
        let versions = plan.versions(self.version(), f.id);
        let versions = self.loop_versions(versions, t, start, step, last)?;
        let saved = self.start_reductions(&f.schedule.reductions)?;
        let exit = self.label("fend");
        self.ins(format!("@!{nonempty} bra {exit}"));
        // Versioned, the whole loop is copied: a branch inside the body would keep ptxas
        // from unrolling and pipelining the unchecked one.
        self.versioned(&versions, |fx, copy| {
            let (top, latch) = (fx.label("for"), fx.label("fnext"));
            let k = fx.fresh_of(t);
            let v = fx.fresh_of(t);
            fx.ins(format!("mov.{ty} {k}, 0"));
            fx.ins(format!("mov.{ty} {v}, {start}"));
            if matches!(copy.unroll, Some(Unroll::Seq)) {
                let rolled = fx.label("rolled");
                let trips = fx.unrolled_trips(
                    ty,
                    k,
                    last,
                    &exit,
                    &rolled,
                    |fx| {
                        fx.ins(format!("mov.{ty} {var}, {v}"));
                        fx.block(&f.body)
                    },
                    |fx| {
                        fx.ins(format!("add.{ty} {k}, {k}, 1"));
                        fx.ins(format!("add.{ty} {v}, {v}, {step}"));
                    },
                );
                trips?;
                fx.place(&rolled);
            }
            fx.place(&top);
            fx.ins(format!("mov.{ty} {var}, {v}"));
            fx.enter_loop(LoopTargets {
                brk: Some(exit.clone()),
                cont: latch.clone(),
            });
            let body = fx.block(&f.body);
            fx.leave_loop();
            body?;
            fx.place(&latch);
            let done = fx.fresh(Class::Pred);
            fx.ins(format!("setp.eq.{ty} {done}, {k}, {last}"));
            fx.ins(format!("@{done} bra {exit}"));
            fx.ins(format!("add.{ty} {k}, {k}, 1"));
            fx.ins(format!("add.{ty} {v}, {v}, {step}"));
            fx.ins(format!("bra {top}"));
            Ok(())
        })?;
        self.place(&exit);
        self.finish_reductions(saved, |_| None)
    }

    /// This thread's iteration numbers of a loop shared as `share` (the module's table).
    fn partition(&mut self, share: Share) -> Partition {
        let sp = self.sp();
        let wide = |fx: &mut Self, r: Reg| {
            let d = fx.fresh(Class::B64);
            fx.ins(format!("cvt.u64.u32 {d}, {r}"));
            d
        };
        // `a * n + b` and `a * n` in 64 bits, from u32 registers.
        let mad = |fx: &mut Self, a: Reg, n: Reg, b: Reg| {
            let p = fx.fresh(Class::B64);
            fx.ins(format!("mul.wide.u32 {p}, {a}, {n}"));
            let bw = fx.fresh(Class::B64);
            fx.ins(format!("cvt.u64.u32 {bw}, {b}"));
            let d = fx.fresh(Class::B64);
            fx.ins(format!("add.u64 {d}, {p}, {bw}"));
            d
        };
        let mul = |fx: &mut Self, a: Reg, n: Reg| {
            let p = fx.fresh(Class::B64);
            fx.ins(format!("mul.wide.u32 {p}, {a}, {n}"));
            p
        };
        let (first, stride) = match share {
            Share::Gangs => (wide(self, sp.gang), wide(self, sp.ngangs)),
            Share::Rows => (wide(self, sp.ty), wide(self, sp.nty)),
            // In a split kernel the gang's blocks take turns at the gang loop's vector loop.
            Share::Threads => match self.split() {
                Some((part, parts)) => (
                    mad(self, part, sp.nthreads, sp.tid),
                    mul(self, parts, sp.nthreads),
                ),
                None => (wide(self, sp.tid), wide(self, sp.nthreads)),
            },
            Share::GangRows => (
                mad(self, sp.gang, sp.nty, sp.ty),
                mul(self, sp.ngangs, sp.nty),
            ),
            Share::GangThreads => (
                mad(self, sp.gang, sp.nthreads, sp.tid),
                mul(self, sp.ngangs, sp.nthreads),
            ),
            Share::Lanes => (wide(self, sp.tx), wide(self, sp.ntx)),
        };
        Partition { first, stride }
    }

    /// The bounds of a loop nest's loops, their iteration count (u64), and the nest's
    /// versions as `plan` says (one where it is a collapsed nest), chosen after the first
    /// loop's bounds.
    fn nest_bounds<'p, 'a>(
        &mut self,
        nest: &[&ForLoop],
        plan: &'p Versions<'a>,
    ) -> Result<(Vec<Bounds>, Reg, LoopVersions<'p, 'a>)> {
        let mut bounds = Vec::with_capacity(nest.len());
        let mut versions = None;
        for (j, f) in nest.iter().enumerate() {
            let outer: Vec<LocalId> = nest[..j].iter().map(|g| g.var).collect();
            if [&f.start, &f.end, &f.step]
                .iter()
                .any(|e| reads_any(e, &outer))
            {
                return unsupported("a collapsed loop whose bounds depend on an outer loop");
            }
            let (t, start, step, nonempty, last) = self.bounds(f)?;
            if j == 0 {
                versions = Some(self.loop_versions(plan, t, start, step, last)?);
            }
            let count = self.fresh(Class::B64);
            if t == ScalarType::I32 {
                self.ins(format!("cvt.u64.u32 {count}, {last}"));
            } else {
                self.ins(format!("mov.b64 {count}, {last}"));
            }
            self.ins(format!("add.u64 {count}, {count}, 1"));
            self.ins(format!("selp.b64 {count}, {count}, 0, {nonempty}"));
            bounds.push(Bounds {
                var: f.var,
                ty: t,
                start,
                step,
                count,
            });
        }
        let mut total = bounds[0].count;
        for b in &bounds[1..] {
            let m = self.fresh(Class::B64);
            self.ins(format!("mul.lo.u64 {m}, {total}, {}", b.count));
            total = m;
        }
        let Some(versions) = versions else {
            return unsupported("an empty loop nest");
        };
        Ok((bounds, total, versions))
    }

    /// A loop (or collapsed nest) whose iterations are shared among gangs and threads, as
    /// its plan says.
    fn shared_loop(&mut self, nest: &[&ForLoop]) -> Result<()> {
        let plans = self.plan();
        let LoopPlan::Shared(plan) = plans.get(nest[0].id) else {
            unreachable!("a shared loop planned as sequential");
        };
        let body = &nest[nest.len() - 1].body;
        let versions = plans.versions(self.version(), nest[0].id);
        let (bounds, total, versions) = self.nest_bounds(nest, versions)?;
        let share = plan.share.or_else(unsupported)?;
        let part = self.partition(share);
        let saved = self.start_reductions(&plan.reductions)?;

        let k = self.fresh(Class::B64);
        self.ins(format!("mov.b64 {k}, {}", part.first));
        // A collapsed nest keeps its loops' iteration numbers as digits of `k` in the mixed
        // radix of their counts: divided out once for the first iteration (and the stride),
        // then advanced by the stride's digits with carries, no division per iteration.
        let counts: Vec<Reg> = bounds.iter().map(|b| b.count).collect();
        let (digits, steps) = if counts.len() > 1 {
            let first = self.decompose(k, &counts);
            let digits: Vec<Reg> = first
                .iter()
                .map(|d| {
                    let r = self.fresh(Class::B64);
                    self.ins(format!("mov.b64 {r}, {d}"));
                    r
                })
                .collect();
            let steps = self.decompose(part.stride, &counts);
            (digits, steps)
        } else {
            (vec![k], Vec::new())
        };
        let top = self.label("par");
        let latch = self.label("pnext");
        let exit = self.label("pend");
        let outer_mode = self.set_mode(share.body());
        self.enter_loop(LoopTargets {
            brk: None,
            cont: latch.clone(),
        });
        // Row starts the loop does not change, then its unrolled trips (a single loop only).
        let single = match bounds.as_slice() {
            [b] => Some(b),
            _ => None,
        };
        let result = match single {
            Some(b) => self.hoist_row_starts(b.var, body).and_then(|()| {
                self.unrolled_thread_loop(b, body, [k, part.stride, total], &versions, &top)
            }),
            None => Ok(()),
        };
        self.place(&top);
        let done = self.fresh(Class::Pred);
        self.ins(format!("setp.ge.u64 {done}, {k}, {total}"));
        self.ins(format!("@{done} bra {exit}"));
        let result = result.and_then(|()| {
            for (b, &it) in bounds.iter().zip(&digits) {
                self.set_loop_var(b, it)?;
            }
            self.versioned(&versions, |fx, _| fx.block(body))
        });
        self.leave_loop();
        self.set_mode(outer_mode);
        result?;
        self.place(&latch);
        self.ins(format!("add.u64 {k}, {k}, {}", part.stride));
        if !steps.is_empty() {
            self.advance_digits(&digits, &steps, &counts);
        }
        self.ins(format!("bra {top}"));
        self.place(&exit);
        if single.is_some() {
            self.end_row_starts();
        }
        self.finish_reductions(saved, |l| plan.group_of(l))?;
        if plan.barrier == Barrier::After {
            self.sync();
        }
        Ok(())
    }

    /// Before a thread loop `b` whose plan unrolls it (`unroll`): its unrolled trips, where
    /// the body's checks are proven (its fast version's predicate holds) and the arrays whose
    /// accesses it reorders are distinct; the ordinary loop (`ordinary`) otherwise, and for
    /// the rest. `[k, stride, total]`: this thread's next iteration number, the distance to
    /// its next, and the loop's iteration count.
    fn unrolled_thread_loop(
        &mut self,
        b: &Bounds,
        body: &Block,
        [k, stride, total]: [Reg; 3],
        versions: &LoopVersions<'_, '_>,
        ordinary: &str,
    ) -> Result<()> {
        let fast = versions.fast();
        let Some(Unroll::Threads(distinct)) = &fast.unroll else {
            return Ok(());
        };
        self.unless_fast(versions, ordinary);
        for &(stored, read) in distinct {
            let (s, r) = (self.array(stored)?.data, self.array(read)?.data);
            let same = self.fresh(Class::Pred);
            self.ins(format!("setp.eq.u64 {same}, {s}, {r}"));
            self.ins(format!("@{same} bra {ordinary}"));
        }
        self.in_version(fast.id, |fx| {
            fx.unrolled_shared(body, k, stride, total, |fx, it| fx.set_loop_var(b, it))
        })
    }

    /// Sets a loop's variable for its iteration number `it` (u64).
    fn set_loop_var(&mut self, b: &Bounds, it: Reg) -> Result<()> {
        let var = match self.local(b.var)? {
            Val::Scalar(r, _) => r,
            Val::Array(_) => return unsupported("an array loop variable"),
        };
        let ty = arith(b.ty);
        let it = if b.ty == ScalarType::I32 {
            let n = self.fresh(Class::B32);
            self.ins(format!("cvt.u32.u64 {n}, {it}"));
            n
        } else {
            it
        };
        self.ins(format!("mad.lo.{ty} {var}, {it}, {}, {}", b.step, b.start));
        Ok(())
    }

    /// `digits += steps` in the mixed radix of `counts` (innermost last; the outermost digit
    /// unbounded): each lower digit plus its step and carry is below twice its count, so one
    /// subtraction brings it back.
    fn advance_digits(&mut self, digits: &[Reg], steps: &[Reg], counts: &[Reg]) {
        let mut carry: Option<Reg> = None;
        for j in (0..digits.len()).rev() {
            let d = digits[j];
            self.ins(format!("add.u64 {d}, {d}, {}", steps[j]));
            if let Some(c) = carry {
                self.ins(format!("@{c} add.u64 {d}, {d}, 1"));
            }
            if j > 0 {
                let c = self.fresh(Class::Pred);
                self.ins(format!("setp.ge.u64 {c}, {d}, {}", counts[j]));
                self.ins(format!("@{c} sub.u64 {d}, {d}, {}", counts[j]));
                carry = Some(c);
            }
        }
    }

    /// The iteration numbers (u64) of the loops of a nest for flat iteration `k`.
    fn decompose(&mut self, k: Reg, counts: &[Reg]) -> Vec<Reg> {
        let mut out = vec![k; counts.len()];
        let mut rest = k;
        for j in (1..counts.len()).rev() {
            let r = self.fresh(Class::B64);
            self.ins(format!("rem.u64 {r}, {rest}, {}", counts[j]));
            let q = self.fresh(Class::B64);
            self.ins(format!("div.u64 {q}, {rest}, {}", counts[j]));
            out[j] = r;
            rest = q;
        }
        out[0] = rest;
        out
    }
}

/// Whether `e` reads any of `locals`.
fn reads_any(e: &Expr, locals: &[LocalId]) -> bool {
    match &e.kind {
        ExprKind::Local(l) => locals.contains(l),
        ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => {
            reads_any(x, locals)
        }
        ExprKind::Binary(_, a, b, _) => reads_any(a, locals) || reads_any(b, locals),
        ExprKind::Load { array, indices, .. } => {
            reads_any(array, locals) || indices.iter().any(|i| reads_any(i, locals))
        }
        ExprKind::Call(_, args)
        | ExprKind::Builtin(_, args)
        | ExprKind::CheckedBuiltin(_, args, _)
        | ExprKind::ArrayLit(args, _) => args.iter().any(|a| reads_any(a, locals)),
        ExprKind::Section { array, ranges } => {
            reads_any(array, locals)
                || ranges.iter().any(|r| {
                    r.start.as_ref().is_some_and(|s| reads_any(s, locals))
                        || r.count.as_ref().is_some_and(|c| reads_any(c, locals))
                })
        }
        ExprKind::Const(_) | ExprKind::Global(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{advance, decompose};

    #[test]
    fn decompose_matches_nested_loops_innermost_fastest() {
        let counts = [3u64, 4, 5];
        let mut k = 0;
        for i in 0..3 {
            for j in 0..4 {
                for l in 0..5 {
                    assert_eq!(decompose(k, &counts), vec![i, j, l]);
                    k += 1;
                }
            }
        }
    }

    #[test]
    fn advancing_by_the_stride_digits_matches_dividing() {
        let counts = [7u64, 3, 5];
        for first in 0..20 {
            for stride in [1u64, 2, 4, 14, 15, 16, 33, 104, 105, 1000] {
                let steps = decompose(stride, &counts);
                let mut digits = decompose(first, &counts);
                let mut k = first;
                while k < 105 {
                    assert_eq!(
                        digits,
                        decompose(k, &counts),
                        "first {first} stride {stride}"
                    );
                    k += stride;
                    advance(&mut digits, &steps, &counts);
                }
            }
        }
    }

    #[test]
    fn decompose_of_one_loop_is_the_iteration_number() {
        assert_eq!(decompose(17, &[100]), vec![17]);
    }
}
