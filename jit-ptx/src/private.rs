//! Private arrays on the device (`private(a)` and `firstprivate(a)` of an array, LANGUAGE.md
//! 7.3): every thread group that runs the code using the array together gets a copy of its
//! own, in device scratch the runtime allocates per launch (the crate's kernel ABI).
//!
//! - Which threads share a copy ([`CopyLevel`]): a construct's private array is the gang's,
//!   one copy per block. A loop's private array (a parameter bound inside its loop only) is
//!   each iteration's: the threads that run one iteration together share a copy, so its level
//!   follows the mode (`plan::Mode`) that the loop's body runs in, worked out from the region's
//!   `LoopInfo`s (the loop's levels and its enclosing loops', by the plan's rule,
//!   `Mode::inside`, which `schedule`'s partitions follow):
//!   gang-redundant code (`Block`) one copy per block, a worker loop's body (`Row`) one per
//!   row, a vector loop's body (`Thread`) one per thread. Several loops making the same array
//!   private share its parameter: they must agree on the level.
//! - Copy `c` of parameter `i` starts at `s{i} + c * stride`, `stride` being the array's
//!   bytes rounded up to 16 ([`crate::private_copy_stride`]); the extents are the original's
//!   (`s{i}_d{k}`), so bounds checks and `size` see its shape.
//! - `firstprivate` (construct level only: loops take no `firstprivate`): the block's threads
//!   copy the original (`p{i}`'s device header) into the block's copy together, then
//!   synchronize, before the body runs.
//! - The kernel holds the original's header in the array's `hdr` register, which a routine
//!   call would pass on: a private array passed to a routine, or assigned to another local
//!   (which could then be), is not compiled (the region runs on the host).

use acc_lang::analysis::{LoopInfo, Schedule};
use acc_lang::hir::VarId;
use acc_lang::ir::visit::{walk_expr, walk_stmt, Visitor};
use acc_lang::ir::{Expr, ExprKind, LocalId, Pass, Region, Stmt, Ty};

use crate::fx::{ArrayVal, Fx};
use crate::plan::Mode;
use crate::ptx::{elem_size, Class, Reg};
use crate::{unsupported, CopyLevel, PrivateArray, Result};

/// The private arrays of region `r`, in parameter order, with the level of their copies.
pub(crate) fn plan(r: &Region) -> Result<Vec<PrivateArray>> {
    let mut out = Vec::new();
    for (i, p) in r.params.iter().enumerate() {
        let first = match p.pass {
            Pass::PrivateArray => false,
            Pass::FirstPrivateArray => true,
            _ => continue,
        };
        let Ty::Array { elem, rank } = p.ty else {
            return unsupported(format!("private array `{}` that is not an array", p.name));
        };
        let mut walk = Walk {
            local: LocalId(i as u32),
            escapes: false,
        };
        walk.block(&r.body);
        if walk.escapes {
            return unsupported(format!(
                "private array `{}` passed to a routine or assigned to another variable",
                p.name
            ));
        }
        let level = if first || !is_loop_private(r, i) {
            CopyLevel::Gang
        } else {
            loop_level(r, p.var).ok_or_else(|| {
                crate::PtxError::Unsupported(format!(
                    "private array `{}` of loops of different levels",
                    p.name
                ))
            })?
        };
        out.push(PrivateArray {
            param: i,
            rank: u32::from(rank),
            elem_bytes: elem_size(elem) as u32,
            level,
            first,
        });
    }
    Ok(out)
}

/// Is parameter `i` a loop's private array? Lowering adds those after the construct's
/// variables (`lower::region`): the last `PrivateArray` parameter of a variable that a loop of
/// the region makes private. (A variable that both the construct and a loop make private has
/// two parameters; the construct's comes first.)
fn is_loop_private(r: &Region, i: usize) -> bool {
    let p = &r.params[i];
    p.pass == Pass::PrivateArray
        && r.loops.iter().any(|l| l.private.contains(&p.var))
        && !r.params[i + 1..].iter().any(|q| q.var == p.var)
}

/// The level of the copies of a loop's private array `var`: that of the body of each loop
/// making it private (`None` when they differ).
fn loop_level(r: &Region, var: VarId) -> Option<CopyLevel> {
    let mut level = None;
    for (k, l) in r.loops.iter().enumerate() {
        if !l.private.contains(&var) {
            continue;
        }
        let this = match loop_body_mode(&r.loops, k) {
            Mode::Block => CopyLevel::Gang,
            Mode::Row => CopyLevel::Worker,
            Mode::Thread => CopyLevel::Vector,
        };
        match level {
            Some(l) if l != this => return None,
            _ => level = Some(this),
        }
    }
    level
}

/// The mode loop `k`'s body runs in: the region's `Block`, through the partitions of the
/// loop's enclosing loops and its own.
fn loop_body_mode(loops: &[LoopInfo], k: usize) -> Mode {
    let mut chain = vec![k];
    while let Some(parent) = chain.last().and_then(|&c| loops.get(c)?.parent) {
        if chain.contains(&parent) {
            break;
        }
        chain.push(parent);
    }
    chain
        .iter()
        .rev()
        .fold(Mode::Block, |mode, &c| match loops[c].schedule {
            Schedule::Parallel(l) => mode.inside(l.gang, l.worker, l.vector),
            Schedule::Seq => mode,
        })
}

/// Whether a local escapes: passed to a routine, or assigned to another local.
struct Walk {
    local: LocalId,
    escapes: bool,
}

impl<'a> Visitor<'a> for Walk {
    fn stmt(&mut self, s: &'a Stmt) {
        match s {
            // `b = a` would make `b` the private array under another name.
            Stmt::Set(_, e) if matches!(e.kind, ExprKind::Local(x) if x == self.local) => {
                self.escapes = true
            }
            _ => walk_stmt(self, s),
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        if let ExprKind::Call(_, args) = &e.kind {
            if args
                .iter()
                .any(|a| matches!(a.kind, ExprKind::Local(l) if l == self.local))
            {
                self.escapes = true;
            }
        }
        walk_expr(self, e);
    }
}

/// A private array's copy as the kernel set it up: what `firstprivate` copies need.
pub(crate) struct Copy {
    pub array: ArrayVal,
    /// Its element count (u64).
    pub len: Reg,
    pub plan: PrivateArray,
}

impl Fx<'_, '_> {
    /// Point `a` (parameter `p.param`, whose `p{i}` is in `slot`) at this thread's copy:
    /// extents from `s{i}_d{k}`, data at `s{i} + copy * stride`. (In the prologue, after the
    /// special registers.)
    pub(crate) fn private_copy(&mut self, a: &ArrayVal, slot: Reg, p: PrivateArray) -> Copy {
        let i = p.param;
        let sp = self.sp();
        self.comment(format!("private array (parameter {i}): this thread's copy"));
        self.ins(format!("mov.b64 {}, {slot}", a.hdr));
        let base = self.fresh(Class::B64);
        self.ins(format!("ld.param.u64 {base}, [s{i}]"));
        for (k, d) in a.dims.iter().enumerate() {
            self.ins(format!("ld.param.u64 {d}, [s{i}_d{k}]"));
        }
        let len = self.fresh(Class::B64);
        self.ins(format!("mov.u64 {len}, 1"));
        for d in &a.dims {
            self.ins(format!("mul.lo.u64 {len}, {len}, {d}"));
        }
        let stride = self.fresh(Class::B64);
        self.ins(format!("mul.lo.u64 {stride}, {len}, {}", p.elem_bytes));
        self.ins(format!("add.u64 {stride}, {stride}, 15"));
        self.ins(format!("and.b64 {stride}, {stride}, -16"));
        let copy = self.fresh(Class::B64);
        match p.level {
            CopyLevel::Gang => self.ins(format!("cvt.u64.u32 {copy}, {}", sp.gang)),
            CopyLevel::Worker | CopyLevel::Vector => {
                let (per_block, within) = match p.level {
                    CopyLevel::Worker => (sp.nty, sp.ty),
                    _ => (sp.nthreads, sp.tid),
                };
                let w = self.fresh(Class::B64);
                self.ins(format!("mul.wide.u32 {copy}, {}, {per_block}", sp.gang));
                self.ins(format!("cvt.u64.u32 {w}, {within}"));
                self.ins(format!("add.u64 {copy}, {copy}, {w}"));
            }
        }
        self.ins(format!("mad.lo.u64 {}, {copy}, {stride}, {base}", a.data));
        Copy {
            array: a.clone(),
            len,
            plan: p,
        }
    }

    /// `firstprivate` copies: the block's threads copy each original into the block's copy
    /// together (element `e` by thread `e mod nthreads`), then synchronize.
    pub(crate) fn first_private_copies(&mut self, copies: &[Copy]) {
        let sp = self.sp();
        let mut any = false;
        for c in copies.iter().filter(|c| c.plan.first) {
            any = true;
            self.comment(format!(
                "firstprivate array (parameter {}): copy the original",
                c.plan.param
            ));
            let src = self.fresh(Class::B64);
            self.ins(format!("ld.global.nc.u64 {src}, [{}]", c.array.hdr));
            let (class, width) = match c.plan.elem_bytes {
                8 => (Class::B64, "u64"),
                4 => (Class::B32, "u32"),
                _ => (Class::B32, "u8"),
            };
            let e = self.fresh(Class::B64);
            let step = self.fresh(Class::B64);
            let off = self.fresh(Class::B64);
            let (from, to) = (self.fresh(Class::B64), self.fresh(Class::B64));
            let v = self.fresh(class);
            let done = self.fresh(Class::Pred);
            let top = self.label("fpcopy");
            let end = self.label("fpcopied");
            self.ins(format!("cvt.u64.u32 {e}, {}", sp.tid));
            self.ins(format!("cvt.u64.u32 {step}, {}", sp.nthreads));
            self.place(&top);
            self.ins(format!("setp.ge.u64 {done}, {e}, {}", c.len));
            self.ins(format!("@{done} bra {end}"));
            self.ins(format!("mul.lo.u64 {off}, {e}, {}", c.plan.elem_bytes));
            self.ins(format!("add.u64 {from}, {src}, {off}"));
            self.ins(format!("add.u64 {to}, {}, {off}", c.array.data));
            self.ins(format!("ld.global.{width} {v}, [{from}]"));
            self.ins(format!("st.global.{width} [{to}], {v}"));
            self.ins(format!("add.u64 {e}, {e}, {step}"));
            self.ins(format!("bra {top}"));
            self.place(&end);
        }
        if any {
            self.ins("bar.sync 0");
        }
    }
}

#[cfg(test)]
mod tests {
    use acc_lang::span::SourceFile;

    use crate::{emit_module, CopyLevel, Kernel, PtxModule, PtxOptions};

    fn module(text: &str) -> PtxModule {
        let m = acc_lang::lower_source(&SourceFile::new("test.acc", text))
            .unwrap_or_else(|d| panic!("{d:?}"));
        emit_module(&m, &PtxOptions::default())
    }

    /// The only kernel of `text`, which must compile.
    fn kernel(text: &str) -> (Kernel, String) {
        let m = module(text);
        assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
        assert_eq!(m.kernels.len(), 1);
        (m.kernels[0].clone(), m.text)
    }

    /// `(param, level, first)` of each private array of the only kernel of `text`.
    fn levels(text: &str) -> Vec<(usize, CopyLevel, bool)> {
        kernel(text)
            .0
            .launch
            .private_arrays
            .iter()
            .map(|p| (p.param, p.level, p.first))
            .collect()
    }

    #[test]
    fn a_construct_gives_each_gang_a_copy() {
        let (k, text) = kernel(
            "let t = zeros(i64, 4, 3)
let out = zeros(i64, 8)
acc parallel num_gangs(2) private(t) copy(out) {
    acc loop vector
    for j in 0..4 {
        t[j, 0] = j
    }
    acc loop gang vector
    for i in 0..8 {
        out[i] = t[i % 4, 0]
    }
}
",
        );
        // Construct level, even though every use is inside a vector loop: the gang's
        // threads share it (the second loop reads what the first wrote).
        assert_eq!(k.launch.private_arrays.len(), 1);
        let p = k.launch.private_arrays[0];
        assert_eq!(
            (p.level, p.first, p.rank, p.elem_bytes),
            (CopyLevel::Gang, false, 2, 8)
        );
        let i = p.param;
        for param in [format!("s{i}"), format!("s{i}_d0"), format!("s{i}_d1")] {
            assert!(text.contains(&format!(".param .u64 {param}")), "{text}");
        }
        // The copy: the gang's number times the stride, from the copies' base.
        assert!(text.contains("and.b64"), "{text}");
        assert!(!text.contains("firstprivate array"), "{text}");
    }

    #[test]
    fn firstprivate_copies_the_original_into_the_gangs_copy() {
        let (k, text) = kernel(
            "let w = [10, 20, 30]
let out = zeros(i64, 6)
acc parallel num_gangs(3) firstprivate(w) {
    w[0] += 1
    acc loop
    for i in 0..6 {
        out[i] = w[i % 3]
    }
}
",
        );
        assert_eq!(
            k.launch
                .private_arrays
                .iter()
                .map(|p| (p.level, p.first))
                .collect::<Vec<_>>(),
            [(CopyLevel::Gang, true)]
        );
        let copy = text
            .split("copy the original")
            .nth(1)
            .unwrap_or_else(|| panic!("{text}"));
        // Every thread copies its share, 8 bytes at a time, then the block synchronizes.
        let end = copy.find("bar.sync 0").unwrap_or_else(|| panic!("{text}"));
        assert!(copy[..end].contains("ld.global.u64"), "{copy}");
        assert!(copy[..end].contains("st.global.u64"), "{copy}");
    }

    #[test]
    fn a_loops_copy_belongs_to_the_threads_of_one_iteration() {
        // `parallel loop` (gang vector): one copy per thread.
        let text = "let tmp = zeros(i64, 3)
let out = zeros(i64, 4)
acc parallel loop private(tmp)
for i in 0..4 {
    for k in 0..3 {
        tmp[k] = i + k
    }
    out[i] = tmp[0] + tmp[1] + tmp[2]
}
";
        assert_eq!(levels(text), [(1, CopyLevel::Vector, false)]);
        // A gang loop whose iteration's vector loops share the copy: one per block.
        let text = "let tmp = zeros(64)
let out = zeros(8, 64)
acc parallel copy(out) {
    acc loop gang private(tmp)
    for i in 0..8 {
        acc loop vector
        for j in 0..64 {
            tmp[j] = i * 1.0
        }
        acc loop vector
        for j in 0..64 {
            out[i, j] = tmp[63 - j]
        }
    }
}
";
        assert_eq!(levels(text), [(1, CopyLevel::Gang, false)]);
        // A worker loop's: one per row.
        let text = "let tmp = zeros(64)
let out = zeros(8, 64)
acc parallel num_workers(4) copy(out) {
    acc loop gang worker private(tmp)
    for i in 0..8 {
        acc loop vector
        for j in 0..64 {
            tmp[j] = i * 1.0
        }
        acc loop vector
        for j in 0..64 {
            out[i, j] = tmp[63 - j]
        }
    }
}
";
        assert_eq!(levels(text), [(1, CopyLevel::Worker, false)]);
        // A `seq` loop's inside a vector loop: one per thread.
        let text = "let tmp = zeros(i32, 2)
let out = zeros(i32, 8, 8)
acc parallel copy(out) {
    acc loop gang vector
    for i in 0..8 {
        acc loop seq private(tmp)
        for j in 0..8 {
            tmp[0] = i
            tmp[1] = j
            out[i, j] = tmp[0] * tmp[1]
        }
    }
}
";
        assert_eq!(levels(text), [(1, CopyLevel::Vector, false)]);
    }

    #[test]
    fn loops_sharing_a_private_array_agree_on_its_level() {
        // Two vector loops of one gang loop, each making `t` private: one copy per thread
        // (not the gang's, which the two loops' threads would share).
        let text = "let t = zeros(i64, 2)
let out = zeros(i64, 8, 16)
acc parallel copy(out) {
    acc loop gang
    for i in 0..8 {
        acc loop vector private(t)
        for j in 0..16 {
            t[0] = j
            out[i, j] = t[0]
        }
        acc loop vector private(t)
        for j in 0..16 {
            t[1] = i
            out[i, j] += t[1]
        }
    }
}
";
        assert_eq!(levels(text), [(1, CopyLevel::Vector, false)]);
        // A gang loop's and a vector loop's: no one level fits both.
        let m = module(
            "let t = zeros(i64, 2)
let out = zeros(i64, 8)
acc parallel copy(out) {
    acc loop gang private(t)
    for i in 0..8 {
        t[0] = i
        out[i] = t[0]
    }
    acc loop gang vector private(t)
    for i in 0..8 {
        t[1] = i
        out[i] += t[1]
    }
}
",
        );
        assert_eq!(m.unsupported.len(), 1, "{:?}", m.unsupported);
        assert!(
            m.unsupported[0].1.contains("different levels"),
            "{:?}",
            m.unsupported
        );
    }

    #[test]
    fn a_private_array_passed_to_a_routine_runs_on_the_host() {
        let m = module(
            "acc routine seq
fn first(a: f64[]) -> f64 {
    return a[0]
}
let t = zeros(4)
let out = zeros(8)
acc parallel loop private(t) copy(out)
for i in 0..8 {
    t[0] = i * 1.0
    out[i] = first(t)
}
",
        );
        assert_eq!(m.unsupported.len(), 1, "{:?}", m.unsupported);
        assert!(
            m.unsupported[0].1.contains("passed to a routine"),
            "{:?}",
            m.unsupported
        );
    }
}
