//! `devices(…)` (LANGUAGE.md 7.11, acc's extension): how a compute construct's work is cut over
//! several devices, decided here once and carried out by lowering (the cut loop, the plan in
//! `ir::Region::split`) and the runtime.
//!
//! The *split loop* is the construct's outermost gang loop: a combined construct's own loop,
//! or the one gang loop nest of a `parallel`/`kernels` region. Its iterations are cut into
//! contiguous blocks, one per device. For every array the region uses, the rows (first, slowest
//! dimension) one block reads and writes follow from the subscripts: a first index `a*j + c`
//! of the loop variable `j` alone, with constants `a > 0` and `c`, uses rows `a*first + cmin ..=
//! a*last + cmax` of a block running `j = first ..= last`; any other first index reads the whole
//! array. The construct is not split (it runs on one device) when:
//! - a write's first index is not of that form (an indirect write `a[idx[j]]`), or an array is
//!   written outside the split loop, by a called function, or under `acc atomic`;
//! - a written array is also read at rows its block does not write (a halo on a written array:
//!   a dependence between devices);
//! - a scalar other than a reduction is copied back (which device's value would win?);
//! - the loop's step is not a positive constant, or its bounds are computed in the region;
//! - there is no single gang loop nest, or a `kernels` region runs as several kernels.
//!
//! Reductions are fine: the runtime combines the devices' results in device order.

use acc_abi::split::{DeviceList, RowSpan};

use super::visit::{self, Visitor};
use super::{Cx, DataAttr, Implicit, LoopInfo, Schedule, VarUse};
use crate::hir::{
    BinOp, ClauseKind, DataClause, Directive, Expr, ExprKind, Place, PlaceKind, Stmt, StmtKind,
    UnOp, VarId,
};
use crate::span::Span;

/// A construct's `devices(…)` clause and what the analysis made of it.
#[derive(Clone, Debug)]
pub struct SplitInfo {
    /// The clause.
    pub clause: Span,
    pub devices: DeviceList,
    /// The split, or why the construct runs on one device.
    pub verdict: Result<SplitLoop, String>,
}

/// The loop that is cut, and the rows each array's block uses.
#[derive(Clone, Debug)]
pub struct SplitLoop {
    pub var: VarId,
    pub var_name: String,
    /// The loop's `for` statement (`LoopInfo::for_span`).
    pub for_span: Span,
    /// Every array from outside the region that it uses, in `RegionInfo::vars` order.
    pub arrays: Vec<ArrayRows>,
}

/// The rows of one array that a block uses, in terms of the loop variable's values.
#[derive(Clone, Debug)]
pub struct ArrayRows {
    pub var: VarId,
    pub name: String,
    pub reads: RowSpan,
    pub writes: RowSpan,
    /// Why the reads are the whole array: the first subscript (or use) that is not `a*j + c`.
    pub whole_because: Option<String>,
}

/// The devices of a `devices(…)` clause (`None` without one). Numbers are literals (validation
/// rejects anything else in this version).
pub fn devices_clause(d: &Directive) -> Option<(Span, DeviceList)> {
    d.clauses.iter().find_map(|c| match &c.kind {
        ClauseKind::Devices(None) => Some((c.span, DeviceList::All)),
        ClauseKind::Devices(Some(es)) => Some((
            c.span,
            DeviceList::Numbers(
                es.iter()
                    .filter_map(|e| e.as_const().and_then(|c| c.as_i64()))
                    .collect(),
            ),
        )),
        _ => None,
    })
}

/// The split of compute construct `d` with a `devices` clause: its loops, variables, and
/// whether it runs as several kernels, as the region's analysis found them.
pub(super) fn plan(
    cx: &Cx,
    d: &Directive,
    loops: &[LoopInfo],
    vars: &[VarUse],
    kernel_parts: usize,
) -> Option<SplitInfo> {
    let (clause, devices) = devices_clause(d)?;
    Some(SplitInfo {
        clause,
        devices,
        verdict: split_loop(cx, d, loops, vars, kernel_parts),
    })
}

fn split_loop(
    cx: &Cx,
    d: &Directive,
    loops: &[LoopInfo],
    vars: &[VarUse],
    kernel_parts: usize,
) -> Result<SplitLoop, String> {
    if kernel_parts > 1 {
        return Err(format!(
            "the `kernels` region runs as {kernel_parts} kernels (only a single loop nest is \
             split in this version)"
        ));
    }
    let gang = |l: &&LoopInfo| {
        l.parent.is_none() && matches!(l.schedule, Schedule::Parallel(levels) if levels.gang)
    };
    let mut gang_loops = loops.iter().filter(gang);
    let (Some(info), None) = (gang_loops.next(), gang_loops.next()) else {
        return Err(match loops.iter().filter(gang).count() {
            0 => "it has no gang loop to split".to_string(),
            n => format!("it has {n} gang loop nests (one is split in this version)"),
        });
    };
    // The loop must be the body (combined construct) or a statement of the region's block,
    // so that its bounds are evaluated once, before any other code of the region.
    let body = d.body.as_deref().ok_or("it has no body")?;
    let (for_loop, others): (&crate::hir::ForLoop, Vec<&Stmt>) = match &body.kind {
        StmtKind::For(f) if body.span == info.for_span => (f, Vec::new()),
        StmtKind::Block(b) => {
            let top = b.stmts.iter().find_map(|s| top_loop(s, info.for_span));
            let Some(f) = top else {
                return Err("its gang loop is not a statement of the region's block".into());
            };
            let rest = b
                .stmts
                .iter()
                .filter(|s| top_loop(s, info.for_span).is_none())
                .collect();
            (f, rest)
        }
        _ => return Err("its gang loop is not at the top of the region".into()),
    };
    let var = for_loop.var;
    let var_name = cx.var_name(var);
    match for_loop
        .step
        .as_ref()
        .map(|s| s.as_const().and_then(|c| c.as_i64()))
    {
        None => {}
        Some(Some(step)) if step > 0 => {}
        _ => {
            return Err(format!(
                "loop `{var_name}`'s step is not a positive constant"
            ))
        }
    }
    let outside = |v: VarId| vars.iter().any(|u| u.var == v);
    for bound in [&for_loop.start, &for_loop.end] {
        if let Some(v) = first_var(bound, &|v| !outside(v)) {
            return Err(format!(
                "loop `{var_name}`'s bounds use `{}`, computed inside the region",
                cx.var_name(v)
            ));
        }
    }
    // The runtime evaluates the bounds on a launch's arguments (`acc_abi::gang_loop`): `+ - *`
    // of constants, scalars, `len` and `size`.
    if ![&for_loop.start, &for_loop.end]
        .into_iter()
        .all(formula_shaped)
    {
        return Err(format!(
            "loop `{var_name}`'s bounds are not sums and products of scalars, `len` and `size`"
        ));
    }
    // A `kernels` region's reductions are found by the analysis, not written: their scalars
    // stay implicit `copy` data but are combined like a clause's.
    let reduced = |u: &VarUse| info.reductions.iter().any(|r| r.var == u.var);
    if let Some(u) = vars.iter().find(|u| copied_back_scalar(u) && !reduced(u)) {
        return Err(format!(
            "the scalar `{}` is copied back (only reductions combine across devices)",
            u.name
        ));
    }

    let mut scan = Rows {
        cx,
        var,
        arrays: vars
            .iter()
            .filter(|u| u.ty.is_array())
            .map(|u| ArrayRows {
                var: u.var,
                name: u.name.clone(),
                reads: RowSpan::None,
                writes: RowSpan::None,
                whole_because: None,
            })
            .collect(),
        in_loop: true,
        in_atomic: false,
        unsplittable: None,
    };
    visit::walk_block(&mut scan, &for_loop.body);
    scan.in_loop = false;
    for s in &others {
        scan.stmt(s);
    }
    // Statements outside the split loop run on every gang: split, on every gang of every
    // device. Where that shows (output, an update of a variable from outside, a call that may
    // print), the construct stays on one device.
    let mut redundant = Redundant {
        outside: &outside,
        what: None,
    };
    for s in &others {
        redundant.stmt(s);
    }
    if let Some(what) = redundant.what {
        let what = match what {
            Effect::Assigns(v) => format!("the assignment to `{}`", cx.var_name(v)),
            Effect::Calls => "a function call".into(),
            Effect::Prints(name) => format!("`{name}`"),
        };
        return Err(format!(
            "{what} before or after loop `{var_name}` would run on every device's gangs"
        ));
    }
    if let Some(why) = scan.unsplittable {
        return Err(why);
    }
    // Arrays used only through called functions (globals of routines) are read whole, and
    // one a function writes cannot be cut.
    for u in vars.iter().filter(|u| u.ty.is_array()) {
        let Some(a) = scan.arrays.iter_mut().find(|a| a.var == u.var) else {
            continue;
        };
        if u.written && a.writes == RowSpan::None {
            return Err(format!(
                "`{}` is written by a function the region calls",
                u.name
            ));
        }
        if u.read && a.reads == RowSpan::None && a.writes == RowSpan::None {
            a.reads = RowSpan::Whole;
            a.whole_because
                .get_or_insert_with(|| "a function the region calls reads it".into());
        }
    }
    for a in &scan.arrays {
        if let Some(why) = halo_on_written(a, &var_name) {
            return Err(why);
        }
    }
    Ok(SplitLoop {
        var,
        var_name,
        for_span: info.for_span,
        arrays: scan.arrays,
    })
}

/// The `for` loop that statement `s` is (or that its `acc loop` directive holds), when its span
/// is `for_span`.
fn top_loop(s: &Stmt, for_span: Span) -> Option<&crate::hir::ForLoop> {
    match &s.kind {
        StmtKind::For(f) if s.span == for_span => Some(f),
        StmtKind::Directive(d) => top_loop(d.body.as_deref()?, for_span),
        _ => None,
    }
}

/// A scalar whose value after the region comes back from the device, and is not a reduction.
fn copied_back_scalar(u: &VarUse) -> bool {
    !u.ty.is_array()
        && u.written
        && matches!(
            u.attr,
            DataAttr::Clause {
                clause: DataClause::Copy | DataClause::CopyOut,
                ..
            } | DataAttr::Implicit(Implicit::Copy)
        )
}

/// Why a written array cannot be cut: a block reads rows of it that the block does not write,
/// which another device writes.
fn halo_on_written(a: &ArrayRows, var: &str) -> Option<String> {
    let (reads, writes) = (&a.reads, &a.writes);
    let within = match (reads, writes) {
        (_, RowSpan::None) | (RowSpan::None, _) => true,
        (
            RowSpan::Rows {
                coef: rc,
                lo_offset: rlo,
                hi_offset: rhi,
            },
            RowSpan::Rows {
                coef: wc,
                lo_offset: wlo,
                hi_offset: whi,
            },
        ) => rc == wc && rlo >= wlo && rhi <= whi,
        _ => false,
    };
    (!within).then(|| {
        format!(
            "`{}` is written at rows {} and read at rows {} (a dependence between devices)",
            a.name,
            rows_text(writes, var),
            rows_text(reads, var)
        )
    })
}

/// `j-1..j+1`, `2*j`, `whole`: rows as `--info` shows them.
pub fn rows_text(r: &RowSpan, var: &str) -> String {
    let one = |coef: i64, c: i64| {
        let base = if coef == 1 {
            var.to_string()
        } else {
            format!("{coef}*{var}")
        };
        match c {
            0 => base,
            c if c > 0 => format!("{base}+{c}"),
            c => format!("{base}{c}"),
        }
    };
    match *r {
        RowSpan::None => "none".into(),
        RowSpan::Whole => "whole".into(),
        RowSpan::Rows {
            coef,
            lo_offset,
            hi_offset,
        } if lo_offset == hi_offset => one(coef, lo_offset),
        RowSpan::Rows {
            coef,
            lo_offset,
            hi_offset,
        } => format!("{}..{}", one(coef, lo_offset), one(coef, hi_offset)),
    }
}

/// Whether `e` is a bound the runtime can evaluate (`ir::gang_loop`'s formulas).
fn formula_shaped(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Const(c) => c.as_i64().is_some(),
        ExprKind::Var(_) => true,
        ExprKind::Convert { expr, .. } => formula_shaped(expr),
        ExprKind::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul, a, b) => {
            formula_shaped(a) && formula_shaped(b)
        }
        ExprKind::Builtin(b, args) => {
            matches!(b.name(), "len" | "size")
                && args.first().and_then(|a| a.as_var()).is_some()
                && args.iter().skip(1).all(|a| a.as_const().is_some())
        }
        _ => false,
    }
}

/// The first variable of `e` that `pick` accepts.
fn first_var(e: &Expr, pick: &impl Fn(VarId) -> bool) -> Option<VarId> {
    struct Find<'p, P> {
        pick: &'p P,
        found: Option<VarId>,
    }
    impl<P: Fn(VarId) -> bool> Visitor for Find<'_, P> {
        fn expr(&mut self, e: &Expr) {
            match e.as_var() {
                Some(v) if self.found.is_none() && (self.pick)(v) => self.found = Some(v),
                _ => visit::walk_expr(self, e),
            }
        }
    }
    let mut f = Find { pick, found: None };
    f.expr(e);
    f.found
}

/// `(a, c)` when `e` is `a*var + c` with constants, `var` the only variable.
fn affine(e: &Expr, var: VarId) -> Option<(i64, i64)> {
    Some(match &e.kind {
        ExprKind::Const(c) => (0, c.as_i64()?),
        ExprKind::Var(v) if *v == var => (1, 0),
        ExprKind::Convert { expr, .. } => affine(expr, var)?,
        ExprKind::Unary(UnOp::Neg, a) => {
            let (a, c) = affine(a, var)?;
            (a.checked_neg()?, c.checked_neg()?)
        }
        ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), x, y) => {
            let ((a1, c1), (a2, c2)) = (affine(x, var)?, affine(y, var)?);
            match op {
                BinOp::Add => (a1.checked_add(a2)?, c1.checked_add(c2)?),
                _ => (a1.checked_sub(a2)?, c1.checked_sub(c2)?),
            }
        }
        ExprKind::Binary(BinOp::Mul, x, y) => {
            let ((a1, c1), (a2, c2)) = (affine(x, var)?, affine(y, var)?);
            match (a1, a2) {
                (0, _) => (c1.checked_mul(a2)?, c1.checked_mul(c2)?),
                (_, 0) => (a1.checked_mul(c2)?, c1.checked_mul(c2)?),
                _ => return None,
            }
        }
        _ => return None,
    })
}

/// The walk that collects each array's rows.
struct Rows<'c, 'p> {
    cx: &'c Cx<'p>,
    /// The split loop's variable.
    var: VarId,
    arrays: Vec<ArrayRows>,
    /// Inside the split loop (outside it, every access is to the whole array).
    in_loop: bool,
    in_atomic: bool,
    unsplittable: Option<String>,
}

impl Rows<'_, '_> {
    fn refuse(&mut self, why: String) {
        self.unsplittable.get_or_insert(why);
    }

    /// An access to an element of `array` whose first index is `first`.
    fn element(&mut self, array: VarId, first: Option<&Expr>, write: bool) {
        let var = self.var;
        let rows = match first {
            Some(i) if self.in_loop => match affine(i, var) {
                Some((a, c)) if a > 0 => Ok(RowSpan::Rows {
                    coef: a,
                    lo_offset: c,
                    hi_offset: c,
                }),
                other => Err(self.not_rows(i, other.is_some())),
            },
            Some(_) => Err("it is used outside the split loop".into()),
            None => Err("it is used whole".into()),
        };
        let name = self.cx.var_name(array);
        if write && self.in_atomic {
            return self.refuse(format!("`{name}` is updated under `acc atomic`"));
        }
        let Some(a) = self.arrays.iter_mut().find(|a| a.var == array) else {
            return;
        };
        let refused = match (rows, write) {
            (Ok(r), true) => {
                a.writes = a.writes.union(&r);
                (a.writes == RowSpan::Whole)
                    .then(|| format!("`{name}` is written at rows of different strides"))
            }
            (Ok(r), false) => {
                a.reads = a.reads.union(&r);
                None
            }
            (Err(why), true) => Some(format!(
                "`{name}` is written where {}",
                why.replacen("its ", "", 1)
            )),
            (Err(why), false) => {
                a.reads = RowSpan::Whole;
                a.whole_because.get_or_insert(why);
                None
            }
        };
        if let Some(why) = refused {
            self.refuse(why);
        }
    }

    /// Why the first index `i` does not give rows of the split loop's blocks (`affine`: it is
    /// `a*j + c` with `a <= 0`).
    fn not_rows(&self, i: &Expr, affine: bool) -> String {
        let (text, var) = (self.text(i), self.cx.var_name(self.var));
        let scalar = |v: VarId| v != self.var && !self.cx.var_ty(v).is_array();
        if let Some(v) = first_var(i, &scalar) {
            let other = self.cx.var_name(v);
            format!("its subscript `{text}` depends on `{other}`, not only on `{var}`")
        } else if affine {
            format!("its subscript `{text}` does not increase with `{var}`")
        } else {
            format!("its subscript `{text}` is not affine in `{var}`")
        }
    }

    fn text(&self, e: &Expr) -> String {
        self.cx.expr_text(e)
    }
}

/// The first statement outside a split loop whose effect shows when it runs on more gangs.
struct Redundant<'o, F: Fn(VarId) -> bool> {
    /// Whether a variable is declared outside the construct.
    outside: &'o F,
    what: Option<Effect>,
}

/// What a statement does that more gangs would do more often.
enum Effect {
    /// Assigns a variable from outside the construct.
    Assigns(VarId),
    Calls,
    Prints(&'static str),
}

impl<F: Fn(VarId) -> bool> Visitor for Redundant<'_, F> {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call(..) if self.what.is_none() => self.what = Some(Effect::Calls),
            ExprKind::Builtin(b, _)
                if self.what.is_none() && matches!(b.name(), "print" | "printf") =>
            {
                self.what = Some(Effect::Prints(b.name()));
            }
            _ => {}
        }
        visit::walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, _compound: bool) {
        if let PlaceKind::Var(v) = p.kind {
            if self.what.is_none() && (self.outside)(v) {
                self.what = Some(Effect::Assigns(v));
            }
        }
        visit::walk_place(self, p);
    }
}

impl Visitor for Rows<'_, '_> {
    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Index { base, indices } => {
                match base.as_var() {
                    Some(a) => self.element(a, indices.first(), false),
                    None => self.expr(base),
                }
                indices.iter().for_each(|i| self.expr(i))
            }
            // `len` and `size` read the header, not the data.
            ExprKind::Builtin(b, args)
                if matches!(b.name(), "len" | "size" | "rank")
                    && args.first().and_then(|a| a.as_var()).is_some() =>
            {
                args.iter().skip(1).for_each(|a| self.expr(a))
            }
            ExprKind::Call(f, args) => {
                for (i, a) in args.iter().enumerate() {
                    match a.as_var() {
                        Some(v) if self.cx.var_ty(v).is_array() => {
                            if self.cx.summaries.writes_param(*f, i) {
                                let (name, callee) = (self.cx.var_name(v), self.cx.fn_name(*f));
                                self.refuse(format!("`{name}` is written by `{callee}`"));
                            } else {
                                let why = format!("it is passed to `{}`", self.cx.fn_name(*f));
                                self.element(v, None, false);
                                if let Some(a) = self.arrays.iter_mut().find(|a| a.var == v) {
                                    a.whole_because = Some(why);
                                }
                            }
                        }
                        _ => self.expr(a),
                    }
                }
            }
            // Any other use of a whole array (a built-in's argument) reads all of it.
            ExprKind::Var(v) if self.cx.var_ty(*v).is_array() => self.element(*v, None, false),
            _ => visit::walk_expr(self, e),
        }
    }

    fn place(&mut self, p: &Place, compound: bool) {
        if let PlaceKind::Index { base, indices } = &p.kind {
            if let Some(a) = base.as_var() {
                if compound {
                    self.element(a, indices.first(), false);
                }
                self.element(a, indices.first(), true);
                for i in indices {
                    self.expr(i);
                }
                return;
            }
        }
        visit::walk_place(self, p)
    }

    fn directive(&mut self, d: &Directive, _s: &Stmt) {
        let atomic = matches!(d.construct, crate::hir::Construct::Atomic(_));
        let was = self.in_atomic;
        self.in_atomic |= atomic;
        visit::walk_directive(self, d);
        self.in_atomic = was;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Analysis;
    use crate::span::SourceFile;

    fn split_of(text: &str) -> SplitInfo {
        let c = crate::check_source(&SourceFile::new("t.acc", text)).expect("valid source");
        let a: &Analysis = &c.analysis;
        a.regions[0].split.clone().expect("a devices clause")
    }

    fn rows(coef: i64, lo: i64, hi: i64) -> RowSpan {
        RowSpan::Rows {
            coef,
            lo_offset: lo,
            hi_offset: hi,
        }
    }

    fn array<'s>(s: &'s SplitLoop, name: &str) -> &'s ArrayRows {
        s.arrays.iter().find(|a| a.name == name).expect(name)
    }

    #[test]
    fn jacobi_reads_a_halo_and_writes_its_rows() {
        let s = split_of(
            "let n = 8\nlet A = zeros(n, n)\nlet Anew = zeros(n, n)\n\
             acc parallel loop devices(all)\nfor j in 1..n-1 {\n  acc loop\n  \
             for i in 1..n-1 {\n    Anew[j, i] = 0.25 * (A[j, i+1] + A[j, i-1] + A[j-1, i] + \
             A[j+1, i])\n  }\n}\n",
        );
        assert_eq!(s.devices, DeviceList::All);
        let l = s.verdict.expect("split");
        assert_eq!(l.var_name, "j");
        let a = array(&l, "A");
        assert_eq!((&a.reads, &a.writes), (&rows(1, -1, 1), &RowSpan::None));
        let anew = array(&l, "Anew");
        assert_eq!(
            (&anew.reads, &anew.writes),
            (&RowSpan::None, &rows(1, 0, 0))
        );
        assert_eq!(rows_text(&a.reads, "j"), "j-1..j+1");
    }

    #[test]
    fn saxpy_reads_and_writes_its_elements() {
        let s = split_of(
            "let n = 8\nlet x = zeros(n)\nlet y = zeros(n)\nacc parallel loop devices(0, 1)\n\
             for i in 0..n {\n  y[i] = 2.0 * x[i] + y[i]\n}\n",
        );
        assert_eq!(s.devices, DeviceList::Numbers(vec![0, 1]));
        let l = s.verdict.expect("split");
        let x = array(&l, "x");
        assert_eq!((&x.reads, &x.writes), (&rows(1, 0, 0), &RowSpan::None));
        let y = array(&l, "y");
        assert_eq!((&y.reads, &y.writes), (&rows(1, 0, 0), &rows(1, 0, 0)));
    }

    #[test]
    fn a_transpose_reads_its_source_whole() {
        let s = split_of(
            "let n = 8\nlet a = zeros(n, n)\nlet b = zeros(n, n)\n\
             acc parallel loop devices(all)\nfor j in 0..n {\n  acc loop\n  \
             for i in 0..n {\n    b[i, j] = a[j, i]\n  }\n}\n",
        );
        // `b[i, j]`: the first index is the inner loop's: not the split loop's rows.
        let why = s.verdict.expect_err("b's rows do not follow j");
        assert!(why.contains("`b` is written where"), "{why}");
        let s = split_of(
            "let n = 8\nlet a = zeros(n, n)\nlet b = zeros(n, n)\n\
             acc parallel loop devices(all)\nfor j in 0..n {\n  acc loop\n  \
             for i in 0..n {\n    b[j, i] = a[i, j]\n  }\n}\n",
        );
        let l = s.verdict.expect("split");
        let a = array(&l, "a");
        assert_eq!(a.reads, RowSpan::Whole);
        assert_eq!(
            a.whole_because.as_deref(),
            Some("its subscript `i` depends on `i`, not only on `j`")
        );
        assert_eq!(array(&l, "b").writes, rows(1, 0, 0));
    }

    #[test]
    fn strides_and_offsets() {
        let s = split_of(
            "let n = 8\nlet a = zeros(2*n + 3)\nlet b = zeros(n)\nacc parallel loop devices(all)\n\
             for j in 0..n {\n  b[j] = a[2*j + 1] + a[2*(j + 1)] - a[1 + j*2]\n}\n",
        );
        let l = s.verdict.expect("split");
        assert_eq!(array(&l, "a").reads, rows(2, 1, 2));
    }

    #[test]
    fn reversed_and_symbolic_subscripts_are_read_whole() {
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nlet b = zeros(n)\nlet c = zeros(n)\n\
             acc parallel loop devices(all)\nfor j in 0..n {\n  c[j] = a[n - 1 - j] + b[7 - j]\n}\n",
        );
        let l = s.verdict.expect("split");
        assert_eq!(
            array(&l, "a").whole_because.as_deref(),
            Some("its subscript `n - 1 - j` depends on `n`, not only on `j`")
        );
        assert_eq!(
            array(&l, "b").whole_because.as_deref(),
            Some("its subscript `7 - j` does not increase with `j`")
        );
    }

    #[test]
    fn an_indirect_write_is_not_split() {
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nlet idx = zeros(i64, n)\nacc parallel loop devices(all)\n\
             for j in 0..n {\n  a[idx[j]] = 1.0\n}\n",
        );
        let why = s.verdict.expect_err("unsplittable");
        assert_eq!(
            why,
            "`a` is written where subscript `idx[j]` is not affine in `j`"
        );
    }

    #[test]
    fn an_indirect_read_is_replicated() {
        let s = split_of(
            "let n = 8\nlet x = zeros(n)\nlet y = zeros(n)\nlet idx = zeros(i64, n)\n\
             acc parallel loop devices(all)\nfor j in 0..n {\n  y[j] = x[idx[j]]\n}\n",
        );
        let l = s.verdict.expect("split");
        let x = array(&l, "x");
        assert_eq!(x.reads, RowSpan::Whole);
        assert_eq!(
            x.whole_because.as_deref(),
            Some("its subscript `idx[j]` is not affine in `j`")
        );
        assert_eq!(array(&l, "idx").reads, rows(1, 0, 0));
    }

    /// Reasons show a subscript as it must be read: a lower-binding operand in parentheses
    /// (it was shown `j + 1 * j / 11 + …`, another expression).
    #[test]
    fn a_reason_parenthesizes_subscripts_as_written() {
        let s = split_of(
            "let n = 12\nlet x = zeros(n)\nlet y = zeros(n)\nacc parallel loop devices(all)\n\
             for j in 0..n {\n  y[j] = x[(j + 1) * (j / 11) + j * (1 - j / 11)]\n}\n",
        );
        let l = s.verdict.expect("split");
        assert_eq!(
            array(&l, "x").whole_because.as_deref(),
            Some("its subscript `(j + 1) * (j / 11) + j * (1 - j / 11)` is not affine in `j`")
        );
    }

    #[test]
    fn a_halo_on_a_written_array_is_not_split() {
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nacc parallel loop devices(all)\n\
             for j in 1..n {\n  a[j] = a[j - 1] + 1.0\n}\n",
        );
        let why = s.verdict.expect_err("unsplittable");
        assert!(
            why.contains("`a` is written at rows j and read at rows j-1"),
            "{why}"
        );
    }

    #[test]
    fn reductions_split_and_atomics_do_not() {
        let s = split_of(
            "let n = 8\nlet x = zeros(n)\nlet s = 0.0\nacc parallel loop devices(all) \
             reduction(+: s)\nfor j in 0..n {\n  s += x[j]\n}\n",
        );
        assert!(s.verdict.is_ok(), "{:?}", s.verdict);
        let s = split_of(
            "let n = 8\nlet h = zeros(4)\nacc parallel loop devices(all)\nfor j in 0..n {\n  \
             acc atomic update\n  h[j % 4] += 1.0\n}\n",
        );
        let why = s.verdict.expect_err("unsplittable");
        assert!(why.contains("`h`"), "{why}");
    }

    #[test]
    fn a_kernels_regions_found_reduction_splits_but_a_copied_scalar_does_not() {
        // `total` is an implicit `copy` the analysis turns into a `+` reduction.
        let s = split_of(
            "let n = 8\nlet x = zeros(n)\nlet total = 0.0\nacc kernels devices(all)\n{\n  \
             for j in 0..n {\n    total += x[j]\n  }\n}\n",
        );
        assert!(s.verdict.is_ok(), "{:?}", s.verdict);
        // A scalar every iteration assigns is no reduction: which device's value would win?
        let s = split_of(
            "let n = 8\nlet x = zeros(n)\nlet last = 0.0\nacc parallel loop devices(all) \
             copy(last)\nfor j in 0..n {\n  last = x[j]\n}\n",
        );
        let why = s.verdict.expect_err("unsplittable");
        assert!(why.contains("`last` is copied back"), "{why}");
    }

    #[test]
    fn effects_outside_the_split_loop_keep_a_parallel_region_whole() {
        // Gang-redundant code would run on every device's gangs.
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nlet s = 0\nacc parallel devices(all) reduction(+: s)\n\
             {\n  s += 1\n  acc loop gang\n  for j in 0..n {\n    a[j] = 1.0\n  }\n}\n",
        );
        let why = s.verdict.expect_err("unsplittable");
        assert!(
            why.starts_with("the assignment to `s` before or after loop `j`"),
            "{why}"
        );
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nacc parallel devices(all)\n{\n  printf(\"hi\\n\")\n  \
             acc loop gang\n  for j in 0..n {\n    a[j] = 1.0\n  }\n}\n",
        );
        assert!(s.verdict.expect_err("unsplittable").starts_with("`printf`"));
        // A local of the region is the gang's own: that splits.
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nacc parallel devices(all)\n{\n  let k = 2.0\n  \
             acc loop gang\n  for j in 0..n {\n    a[j] = k\n  }\n}\n",
        );
        assert!(s.verdict.is_ok(), "{:?}", s.verdict);
    }

    #[test]
    fn loops_that_cannot_be_cut() {
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nacc parallel loop devices(all)\n\
             for j in n-1..=0 step -1 {\n  a[j] = 1.0\n}\n",
        );
        assert_eq!(
            s.verdict.expect_err("no"),
            "loop `j`'s step is not a positive constant"
        );
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nacc parallel devices(all)\n{\n  let m = n - 1\n  \
             acc loop gang\n  for j in 0..m {\n    a[j] = 1.0\n  }\n}\n",
        );
        assert_eq!(
            s.verdict.expect_err("no"),
            "loop `j`'s bounds use `m`, computed inside the region"
        );
        let s = split_of(
            "let n = 8\nlet a = zeros(n)\nacc parallel loop devices(all)\n\
             for j in 0..n / 2 {\n  a[j] = 1.0\n}\n",
        );
        assert_eq!(
            s.verdict.expect_err("no"),
            "loop `j`'s bounds are not sums and products of scalars, `len` and `size`"
        );
        let s = split_of(
            "let n = 8\nlet a = zeros(n, 3)\nacc parallel loop devices(all)\n\
             for j in 1..size(a, 0) - 1 {\n  a[j, 0] = len(a) * 1.0\n}\n",
        );
        assert!(s.verdict.is_ok(), "{:?}", s.verdict);
    }
}
