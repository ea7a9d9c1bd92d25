//! Dependence analysis: may the iterations of a loop run in parallel (LANGUAGE.md 7.6)?
//!
//! Used for the loops whose schedule the compiler chooses (`kernels` regions, `auto`). A loop is
//! parallel when no iteration can touch what another one writes:
//! - **Arrays.** Every pair of accesses to one array, at least one a write, is tested on its
//!   subscripts. A subscript that is affine in the loop variables (`2*i + j - 1`, with
//!   loop-invariant variables as symbols) is tested exactly per dimension: a dimension whose two
//!   subscripts are the same function of the loop's own variable proves both iterations equal;
//!   one whose equation has no integer solution (GCD test), whose distance exceeds a constant
//!   trip count, or whose two subscripts range over disjoint values while the loop's variable
//!   runs over its bounds ([`disjoint_ranges`]), proves no conflict at all. Other subscripts are
//!   assumed to conflict. Distinct array variables are distinct storage unless the compile binds
//!   one to the other (`let b = a`, `reshape`), a function returns it, or one is a function
//!   parameter ([`Aliases`]); the pairs a proof relied on are kept for the launch to check,
//!   since a later compile or the embedding program may still bind them together.
//! - **Scalars.** A scalar declared inside the loop is private to each iteration, and so is one
//!   from outside that every iteration assigns before reading it and whose value after the loop
//!   nothing reads ([`privatizable`]). One assigned from outside is otherwise a reduction when every use is one accumulation with one operator
//!   (`s += e`, `s = s * e`, `s = max(s, e)`, `&`, `|`, `^`, `&&`, `||`, with `e` free of `s`);
//!   any other write is a dependence.
//! - **Calls** of user functions that write no global and no argument are known to be free of
//!   effects (their array arguments count as reads anywhere in them); any other call, `print`
//!   and `printf` keep the loop sequential, as does a `break`.
//!
//! The verdict keeps the reason, naming the variable and the accesses, for `--info`.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::visit::{self, Visitor};
use super::{Cx, ReductionInfo};
use crate::builtins::Builtin;
use crate::hir::{
    BinOp, Block, Const, Construct, Expr, ExprKind, FnId, ForLoop, Place, PlaceKind, ReductionOp,
    ScalarType, Stmt, StmtKind, Type, UnOp, VarId, VarKind,
};
use crate::span::Span;

/// What the analysis decided for one loop.
#[derive(Clone, Debug)]
pub(super) enum Verdict {
    /// No iteration depends on another; these scalars accumulate (reductions to generate), and
    /// these are private to each iteration (assigned before they are read, their value dead
    /// after the loop).
    Parallel {
        reductions: Vec<ReductionInfo>,
        privatized: Vec<VarId>,
        /// Pairs of array variables the proof took to be different storage (one written, the
        /// other accessed): a later compile, or the embedding program, may still make them
        /// one, so the launch checks them (`ir::Region::distinct`).
        distinct: Vec<(VarId, VarId)>,
    },
    /// The reason the loop stays sequential.
    Sequential(String),
}

/// The loop to test: its variables (several for `collapse`), the bounds of the outermost, and
/// the body of the innermost.
pub(super) struct LoopNest<'a> {
    pub vars: &'a [VarId],
    /// The loop's own `private` clauses.
    pub private: &'a [VarId],
    pub outer: &'a ForLoop,
    pub body: &'a Block,
    pub has_break: bool,
}

/// Whether the iterations of `nest` are independent.
pub(super) fn test(cx: &Cx, nest: &LoopNest) -> Verdict {
    if nest.has_break {
        return Verdict::Sequential("contains a `break`".into());
    }
    let mut scan = Scan::new(cx, nest);
    visit::walk_block(&mut scan, nest.body);
    if let Some(why) = scan.unknown_call.take() {
        return Verdict::Sequential(why);
    }
    let privatized = scan.privatize(nest.body);
    let reductions = match scan.scalars() {
        Ok(r) => r,
        Err(why) => return Verdict::Sequential(why),
    };
    let bounds = Bounds {
        trips: constant_trips(nest.outer),
        range: scan.range(nest.outer),
    };
    let distinct = match scan.array_conflict(&cx.aliases, &bounds) {
        Ok(distinct) => distinct,
        Err(why) => return Verdict::Sequential(why),
    };
    Verdict::Parallel {
        reductions,
        privatized,
        distinct,
    }
}

/// An assignment of a scalar from outside a loop, by every iteration of it (outside `acc
/// atomic`): `op` when it accumulates with that operator.
pub(super) struct OutsideWrite {
    pub var: VarId,
    pub span: Span,
    pub op: Option<ReductionOp>,
}

/// The scalars from outside `nest` that its body assigns (for the race warning of a loop the
/// program partitions).
pub(super) fn outside_writes(cx: &Cx, nest: &LoopNest) -> Vec<OutsideWrite> {
    let mut scan = Scan::new(cx, nest);
    visit::walk_block(&mut scan, nest.body);
    scan.scalar_writes
        .into_iter()
        .map(|w| OutsideWrite {
            var: w.var,
            span: w.span,
            op: w.accumulates,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Affine subscripts
// ---------------------------------------------------------------------------------------------

/// `constant + Σ coefficient × variable`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
struct Affine {
    constant: i64,
    terms: BTreeMap<VarId, i64>,
}

impl Affine {
    fn constant(c: i64) -> Affine {
        Affine {
            constant: c,
            terms: BTreeMap::new(),
        }
    }

    fn var(v: VarId) -> Affine {
        Affine {
            constant: 0,
            terms: BTreeMap::from([(v, 1)]),
        }
    }

    fn add(mut self, other: &Affine, sign: i64) -> Option<Affine> {
        self.constant = self
            .constant
            .checked_add(other.constant.checked_mul(sign)?)?;
        for (v, c) in &other.terms {
            let e = self.terms.entry(*v).or_insert(0);
            *e = e.checked_add(c.checked_mul(sign)?)?;
            if *e == 0 {
                self.terms.remove(v);
            }
        }
        Some(self)
    }

    fn scale(mut self, k: i64) -> Option<Affine> {
        if k == 0 {
            return Some(Affine::default());
        }
        self.constant = self.constant.checked_mul(k)?;
        for c in self.terms.values_mut() {
            *c = c.checked_mul(k)?;
        }
        Some(self)
    }

    fn as_constant(&self) -> Option<i64> {
        self.terms.is_empty().then_some(self.constant)
    }

    /// The subscript `e` as an affine form, when it is one. `invariant` says which variables
    /// keep one value during the loop (symbols); the loop variables are always allowed.
    fn of(e: &Expr, allowed: &impl Fn(VarId) -> bool) -> Option<Affine> {
        match &e.kind {
            ExprKind::Const(Const::I32(c)) => Some(Affine::constant(i64::from(*c))),
            ExprKind::Const(Const::I64(c)) => Some(Affine::constant(*c)),
            ExprKind::Var(v) if allowed(*v) => Some(Affine::var(*v)),
            ExprKind::Convert { expr, .. } if is_int(&e.ty) && is_int(&expr.ty) => {
                Affine::of(expr, allowed)
            }
            ExprKind::Unary(UnOp::Neg, a) => Affine::of(a, allowed)?.scale(-1),
            ExprKind::Binary(op @ (BinOp::Add | BinOp::Sub), a, b) => {
                let sign = if *op == BinOp::Add { 1 } else { -1 };
                Affine::of(a, allowed)?.add(&Affine::of(b, allowed)?, sign)
            }
            ExprKind::Binary(BinOp::Mul, a, b) => {
                let (a, b) = (Affine::of(a, allowed)?, Affine::of(b, allowed)?);
                match (a.as_constant(), b.as_constant()) {
                    (Some(k), _) => b.scale(k),
                    (_, Some(k)) => a.scale(k),
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// Whether `fa` and `fb` take values in ranges that do not overlap while `v` runs over
/// `lo..=last`: both depend on no loop variable but `v`, and one range ends below the other's
/// start by a constant (their symbols cancel).
fn disjoint_ranges(
    fa: &Affine,
    fb: &Affine,
    v: VarId,
    lo: &Affine,
    last: &Affine,
    free: &impl Fn(&VarId) -> bool,
) -> bool {
    let only_v = |f: &Affine| f.terms.keys().all(|w| *w == v || !free(w));
    if !only_v(fa) || !only_v(fb) {
        return false;
    }
    let (Some((min_a, max_a)), Some((min_b, max_b))) =
        (extremes(fa, v, lo, last), extremes(fb, v, lo, last))
    else {
        return false;
    };
    let above = |low: Affine, high: &Affine| {
        low.add(high, -1)
            .and_then(|d| d.as_constant())
            .is_some_and(|d| d > 0)
    };
    above(min_a, &max_b) || above(min_b, &max_a)
}

fn is_int(t: &Type) -> bool {
    matches!(t, Type::Scalar(ScalarType::I32 | ScalarType::I64))
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(i64::MAX)
}

/// What the loop's bounds say about its variable.
struct Bounds {
    /// The trip count, when the bounds and step are constants.
    trips: Option<i64>,
    /// The outer loop's variable and its first and last values as affine forms of the
    /// loop-invariant variables (`lo ≤ v ≤ last`), when the step is a positive constant.
    range: Option<(VarId, Affine, Affine)>,
}

/// The smallest and largest value of `f` as `v` runs over `lo..=last`, when `v` is the only
/// loop variable in it.
fn extremes(f: &Affine, v: VarId, lo: &Affine, last: &Affine) -> Option<(Affine, Affine)> {
    let c = f.terms.get(&v).copied().unwrap_or(0);
    let mut rest = f.clone();
    rest.terms.remove(&v);
    let at_lo = rest.clone().add(&lo.clone().scale(c)?, 1)?;
    let at_last = rest.add(&last.clone().scale(c)?, 1)?;
    Some(if c >= 0 {
        (at_lo, at_last)
    } else {
        (at_last, at_lo)
    })
}

/// The outer loop's trip count, when its bounds and step are constants.
fn constant_trips(f: &ForLoop) -> Option<i64> {
    let int = |e: &Expr| match e.as_const()? {
        Const::I32(v) => Some(i64::from(v)),
        Const::I64(v) => Some(v),
        _ => None,
    };
    let (start, end) = (int(&f.start)?, int(&f.end)?);
    let step = f.step.as_ref().map_or(Some(1), int)?;
    let end = if f.inclusive {
        end + step.signum()
    } else {
        end
    };
    Some(((end - start) / step).max(0))
}

// ---------------------------------------------------------------------------------------------
// What the body does
// ---------------------------------------------------------------------------------------------

/// One access to an array element.
struct Access {
    array: VarId,
    /// The subscripts, one per dimension; `None` for a use of the whole array (an argument of a
    /// call), which may touch any element.
    indices: Option<Vec<Expr>>,
    /// The access as the reason shows it: `` `a[i + 1]` ``.
    text: String,
    write: bool,
    /// Under `acc atomic`: atomic accesses do not conflict with each other.
    atomic: bool,
}

/// An assignment of a scalar from outside the loop.
struct ScalarWrite {
    var: VarId,
    span: Span,
    /// The operator when the assignment is an accumulation `s = s op e` with `e` free of `s`.
    accumulates: Option<ReductionOp>,
}

struct Scan<'c, 'p> {
    cx: &'c Cx<'p>,
    /// The loop's own variables.
    loop_vars: Vec<VarId>,
    /// Variables of loops inside it (free: different in each iteration).
    inner_vars: HashSet<VarId>,
    /// Variables declared inside the body, and those a loop inside makes `private`: private to
    /// an iteration.
    declared: HashSet<VarId>,
    accesses: Vec<Access>,
    scalar_writes: Vec<ScalarWrite>,
    /// Reads of outside scalars other than the `s` of an accumulation.
    scalar_reads: HashMap<VarId, Span>,
    /// Why a statement of unknown effect keeps the loop sequential (the first one).
    unknown_call: Option<String>,
    atomic_depth: u32,
    /// Scalars every iteration assigns first whose value may be read after the loop: why.
    live_out: HashMap<VarId, String>,
}

impl<'c, 'p> Scan<'c, 'p> {
    fn new(cx: &'c Cx<'p>, nest: &LoopNest) -> Self {
        Scan {
            cx,
            loop_vars: nest.vars.to_vec(),
            inner_vars: HashSet::new(),
            declared: nest.private.iter().copied().collect(),
            accesses: Vec::new(),
            scalar_writes: Vec::new(),
            scalar_reads: HashMap::new(),
            unknown_call: None,
            atomic_depth: 0,
            live_out: HashMap::new(),
        }
    }

    /// A scalar of the enclosing code (not the loop's, not declared inside it).
    fn outside_scalar(&self, v: VarId) -> bool {
        !self.cx.var_ty(v).is_array()
            && !self.loop_vars.contains(&v)
            && !self.inner_vars.contains(&v)
            && !self.declared.contains(&v)
    }

    fn unknown(&mut self, why: String) {
        self.unknown_call.get_or_insert(why);
    }

    fn element(&mut self, base: &Expr, indices: &[Expr], write: bool) {
        let Some(array) = base.as_var() else {
            self.unknown("indexes an array expression".into());
            return;
        };
        let text: Vec<String> = indices.iter().map(|i| self.text(i)).collect();
        self.accesses.push(Access {
            array,
            indices: Some(indices.to_vec()),
            text: format!("`{}[{}]`", self.cx.var_name(array), text.join(", ")),
            write,
            atomic: self.atomic_depth > 0,
        });
    }

    fn whole(&mut self, array: VarId, through: &str) {
        self.accesses.push(Access {
            array,
            indices: None,
            text: format!("`{}` (passed to `{through}`)", self.cx.var_name(array)),
            write: false,
            atomic: false,
        });
    }

    /// A user function call: known when it writes nothing the loop can see.
    fn call(&mut self, f: FnId, args: &[Expr]) {
        let name = self.cx.fn_name(f);
        let Some(summary) = self.cx.summaries.fns.get(f.index()) else {
            return self.unknown(format!("calls `{name}`, whose effects are unknown"));
        };
        if let Some(g) = summary.globals.iter().find(|g| g.written) {
            let global = self.cx.var_name(g.var);
            return self.unknown(format!(
                "calls `{name}`, which assigns the global `{global}`"
            ));
        }
        if let Some(i) = summary.writes_param.iter().position(|w| *w) {
            let arg = args.get(i).map_or_else(String::new, |a| self.text(a));
            return self.unknown(format!("calls `{name}`, which writes its argument `{arg}`"));
        }
        let reads: Vec<VarId> = summary.globals.iter().map(|g| g.var).collect();
        for v in reads {
            if self.cx.var_ty(v).is_array() {
                self.whole(v, &name);
            } else if self.outside_scalar(v) {
                self.scalar_reads.entry(v).or_default();
            }
        }
        for a in args {
            match a.as_var() {
                Some(v) if self.cx.var_ty(v).is_array() => self.whole(v, &name),
                _ => self.expr(a),
            }
        }
    }

    /// `s = s op e`, `s op= e`, `s = max(s, e)`, …: the operator and `e`.
    fn accumulation<'e>(
        &self,
        s: VarId,
        op: Option<BinOp>,
        value: &'e Expr,
    ) -> Option<(ReductionOp, &'e Expr)> {
        let is_s = |e: &Expr| e.as_var() == Some(s);
        let (op, e) = match (op, &value.kind) {
            (Some(op), _) => (op, value),
            (None, ExprKind::Binary(op, a, b)) if is_s(a) => (*op, &**b),
            (None, ExprKind::Binary(op, a, b)) if is_s(b) && *op != BinOp::Sub => (*op, &**a),
            (None, ExprKind::Builtin(f, args)) => {
                let op = match f {
                    Builtin::Max | Builtin::Fmax => ReductionOp::Max,
                    Builtin::Min | Builtin::Fmin => ReductionOp::Min,
                    _ => return None,
                };
                return match args.as_slice() {
                    [a, e] | [e, a] if is_s(a) && !mentions(e, s) => Some((op, e)),
                    _ => None,
                };
            }
            _ => return None,
        };
        let op = match op {
            BinOp::Add | BinOp::Sub => ReductionOp::Add,
            BinOp::Mul => ReductionOp::Mul,
            BinOp::BitAnd => ReductionOp::BitAnd,
            BinOp::BitOr => ReductionOp::BitOr,
            BinOp::BitXor => ReductionOp::BitXor,
            BinOp::And => ReductionOp::And,
            BinOp::Or => ReductionOp::Or,
            _ => return None,
        };
        (!mentions(e, s)).then_some((op, e))
    }

    /// The outside scalars that every iteration assigns before it reads them and whose value
    /// nothing reads after the loop ([`privatizable`]): they become private to each iteration,
    /// and their accesses no longer tie iterations together.
    fn privatize(&mut self, body: &Block) -> Vec<VarId> {
        let mut found: Vec<VarId> = Vec::new();
        for w in &self.scalar_writes {
            if found.contains(&w.var) || self.live_out.contains_key(&w.var) {
                continue;
            }
            match privatizable(self.cx, body, w.var) {
                Privatizable::Yes => found.push(w.var),
                Privatizable::ReadFirst => {}
                Privatizable::LiveAfter(why) => {
                    self.live_out.insert(w.var, why);
                }
            }
        }
        self.scalar_writes.retain(|w| !found.contains(&w.var));
        self.scalar_reads.retain(|v, _| !found.contains(v));
        // Private now: a different value in each iteration, so never a symbol of a subscript.
        self.declared.extend(found.iter().copied());
        found
    }

    /// The scalars the loop accumulates, or why a scalar makes it sequential.
    fn scalars(&self) -> Result<Vec<ReductionInfo>, String> {
        let mut reductions: Vec<ReductionInfo> = Vec::new();
        for w in &self.scalar_writes {
            let name = self.cx.var_name(w.var);
            let Some(op) = w.accumulates else {
                if let Some(why) = self.live_out.get(&w.var) {
                    return Err(format!(
                        "scalar `{name}` is assigned before it is read in every iteration, but \
                         {why} (declare it inside the loop, `let {name} = …`, to make it private \
                         to each iteration)"
                    ));
                }
                return Err(if self.scalar_reads.contains_key(&w.var) {
                    format!("scalar `{name}` is assigned in one iteration and read in another")
                } else {
                    format!(
                        "scalar `{name}` is assigned in every iteration and keeps its last value \
                         after the loop (declare it inside the loop, `let {name} = …`, to make it \
                         private to each iteration)"
                    )
                });
            };
            if self.scalar_reads.contains_key(&w.var) {
                return Err(format!(
                    "scalar `{name}` is accumulated and also read in the loop"
                ));
            }
            match reductions.iter().find(|r| r.var == w.var) {
                Some(r) if r.op != op => {
                    return Err(format!(
                        "scalar `{name}` is accumulated with both `{}` and `{}`",
                        r.op.as_str(),
                        op.as_str()
                    ))
                }
                Some(_) => {}
                None => {
                    let Some(ty) = self.cx.var_ty(w.var).scalar() else {
                        return Err(format!("`{name}` is assigned in the loop"));
                    };
                    if !op_fits(op, ty) {
                        return Err(format!(
                            "scalar `{name}` ({}) is accumulated with `{}`",
                            ty.name(),
                            op.as_str()
                        ));
                    }
                    reductions.push(ReductionInfo {
                        op,
                        var: w.var,
                        ty,
                        span: w.span,
                    });
                }
            }
        }
        Ok(reductions)
    }

    /// The first pair of accesses that iterations of the loop may make to one element, at least
    /// one of them a write, described.
    fn array_conflict(
        &self,
        aliases: &Aliases,
        bounds: &Bounds,
    ) -> Result<Vec<(VarId, VarId)>, String> {
        let allowed = |v: VarId| self.loop_var(v) || self.symbol(v);
        let mut distinct: Vec<(VarId, VarId)> = Vec::new();
        let forms: Vec<Option<Vec<Option<Affine>>>> = self
            .accesses
            .iter()
            .map(|a| {
                a.indices
                    .as_ref()
                    .map(|ix| ix.iter().map(|i| Affine::of(i, &allowed)).collect())
            })
            .collect();
        let elem = |v: VarId| self.cx.var_ty(v).elem();
        for (i, a) in self.accesses.iter().enumerate() {
            if !a.write {
                continue;
            }
            for (j, b) in self.accesses.iter().enumerate() {
                if (b.write && j < i) || (a.atomic && b.atomic) {
                    continue;
                }
                if a.array != b.array {
                    if elem(a.array) != elem(b.array) {
                        continue;
                    }
                    if aliases.may_alias(a.array, b.array) {
                        return Err(format!(
                            "`{}` is written and `{}` may be the same array ({})",
                            self.cx.var_name(a.array),
                            self.cx.var_name(b.array),
                            aliases.why(a.array, b.array, self.cx),
                        ));
                    }
                    for pair in aliases.assumed_distinct(a.array, b.array) {
                        if !distinct.contains(&pair) {
                            distinct.push(pair);
                        }
                    }
                    continue;
                }
                if self.independent(forms[i].as_deref(), forms[j].as_deref(), bounds) {
                    continue;
                }
                return Err(if i == j {
                    format!("{} is written by more than one iteration", a.text)
                } else {
                    format!(
                        "{} is written and {} {} by another iteration",
                        a.text,
                        b.text,
                        if b.write { "written" } else { "read" }
                    )
                });
            }
        }
        Ok(distinct)
    }

    /// A variable of the loop nest or of a loop inside it.
    fn loop_var(&self, v: VarId) -> bool {
        self.loop_vars.contains(&v) || self.inner_vars.contains(&v)
    }

    /// A scalar with one value during the whole loop (not assigned in it, not private to an
    /// iteration, not a loop's): a symbol of affine forms.
    fn symbol(&self, v: VarId) -> bool {
        !self.loop_var(v)
            && !self.declared.contains(&v)
            && !self.cx.var_ty(v).is_array()
            && !self.scalar_writes.iter().any(|w| w.var == v)
    }

    /// The outer loop's first and last values, when its step is a positive constant and its
    /// bounds are affine in symbols (bounds are evaluated once, on entry, and symbols keep
    /// their value through the loop, so the forms hold in every iteration).
    fn range(&self, f: &ForLoop) -> Option<(VarId, Affine, Affine)> {
        let step = match &f.step {
            None => 1,
            Some(e) => Affine::of(e, &|_| false)?.as_constant()?,
        };
        if step <= 0 {
            return None;
        }
        let symbol = |v: VarId| self.symbol(v);
        let lo = Affine::of(&f.start, &symbol)?;
        let end = Affine::of(&f.end, &symbol)?;
        let last = if f.inclusive {
            end
        } else {
            end.add(&Affine::constant(1), -1)?
        };
        Some((f.var, lo, last))
    }

    /// Whether two accesses to one array with these subscripts touch different elements in
    /// every pair of different iterations.
    fn independent(
        &self,
        a: Option<&[Option<Affine>]>,
        b: Option<&[Option<Affine>]>,
        bounds: &Bounds,
    ) -> bool {
        let (Some(a), Some(b)) = (a, b) else {
            return false;
        };
        let free = |v: &VarId| self.loop_var(*v);
        let mut pinned: HashSet<VarId> = HashSet::new();
        for (fa, fb) in a.iter().zip(b) {
            let (Some(fa), Some(fb)) = (fa, fb) else {
                continue;
            };
            // The values each subscript takes over the loop's range never meet (`a[0]` against
            // `a[i]` for `i` in `1..n`; `a[i]` against `a[i + n]` for `i` in `0..n`).
            if let Some((v, lo, last)) = &bounds.range {
                if disjoint_ranges(fa, fb, *v, lo, last, &free) {
                    return true;
                }
            }
            // Symbols (loop-invariant variables) have one value on both sides: they must cancel.
            let symbols = |f: &Affine| -> Vec<(VarId, i64)> {
                f.terms
                    .iter()
                    .filter(|(v, _)| !free(v))
                    .map(|(v, c)| (*v, *c))
                    .collect()
            };
            if symbols(fa) != symbols(fb) {
                continue;
            }
            let vars = |f: &Affine| -> Vec<(VarId, i64)> {
                f.terms
                    .iter()
                    .filter(|(v, _)| free(v))
                    .map(|(v, c)| (*v, *c))
                    .collect()
            };
            let (va, vb) = (vars(fa), vars(fb));
            let distance = fb.constant - fa.constant;
            // No integer solution at all (GCD test): no two iterations meet here.
            let g = va.iter().chain(&vb).fold(0, |g, (_, c)| gcd(g, *c));
            if (g == 0 && distance != 0) || (g != 0 && distance % g != 0) {
                return true;
            }
            // The same function of one loop variable on both sides, `c*v + k`: equal subscripts
            // need `c*(v1 - v2) == distance`.
            if let ([(v, c)], [(w, d)]) = (va.as_slice(), vb.as_slice()) {
                if v == w && c == d && self.loop_vars.contains(v) {
                    if distance == 0 {
                        pinned.insert(*v);
                    } else if self.loop_vars.len() == 1
                        && bounds.trips.is_some_and(|t| (distance / c).abs() >= t)
                    {
                        return true;
                    }
                }
            }
        }
        self.loop_vars.iter().all(|v| pinned.contains(v))
    }

    fn text(&self, e: &Expr) -> String {
        self.cx.expr_text(e)
    }
}

impl Visitor for Scan<'_, '_> {
    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, init } => {
                self.declared.insert(*var);
                self.expr(init);
            }
            StmtKind::Assign { place, op, value } => match &place.kind {
                PlaceKind::Var(v) if self.cx.var_ty(*v).is_array() => {
                    let name = self.cx.var_name(*v);
                    self.unknown(format!("assigns the whole array `{name}`"));
                }
                PlaceKind::Var(v) if self.outside_scalar(*v) => {
                    let acc = if self.atomic_depth > 0 {
                        None
                    } else {
                        self.accumulation(*v, op.map(|o| o.op), value)
                    };
                    match acc {
                        Some((op, e)) => {
                            self.scalar_writes.push(ScalarWrite {
                                var: *v,
                                span: place.span,
                                accumulates: Some(op),
                            });
                            self.expr(e);
                        }
                        None if self.atomic_depth > 0 => self.expr(value),
                        None => {
                            if op.is_some() {
                                self.scalar_reads.entry(*v).or_insert(place.span);
                            }
                            self.scalar_writes.push(ScalarWrite {
                                var: *v,
                                span: place.span,
                                accumulates: None,
                            });
                            self.expr(value);
                        }
                    }
                }
                PlaceKind::Var(_) => self.expr(value),
                PlaceKind::Index { base, indices } => {
                    if op.is_some() {
                        self.element(base, indices, false);
                    }
                    self.element(base, indices, true);
                    for i in indices {
                        self.expr(i);
                    }
                    self.expr(value);
                }
            },
            StmtKind::For(f) => {
                self.inner_vars.insert(f.var);
                visit::walk_stmt(self, s);
            }
            StmtKind::Return(_) => self.unknown("contains a `return`".into()),
            _ => visit::walk_stmt(self, s),
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(v) if self.outside_scalar(*v) => {
                self.scalar_reads.entry(*v).or_insert(e.span);
            }
            ExprKind::Index { base, indices } => {
                self.element(base, indices, false);
                for i in indices {
                    self.expr(i);
                }
            }
            ExprKind::Call(f, args) => self.call(*f, args),
            ExprKind::Builtin(b @ (Builtin::Print | Builtin::Printf | Builtin::HostCall), _) => {
                self.unknown(format!(
                    "calls `{}`, whose order of effects would change",
                    b.name()
                ))
            }
            ExprKind::Block(stmts, _) => {
                for s in stmts {
                    if let StmtKind::Let { var, .. } = &s.kind {
                        self.declared.insert(*var);
                    }
                }
                visit::walk_expr(self, e);
            }
            _ => visit::walk_expr(self, e),
        }
    }

    fn place(&mut self, p: &Place, compound: bool) {
        let _ = compound;
        visit::walk_place(self, p);
    }

    fn directive(&mut self, d: &crate::hir::Directive, _s: &Stmt) {
        for c in &d.clauses {
            if let crate::hir::ClauseKind::Private(refs) = &c.kind {
                self.declared.extend(refs.iter().map(|r| r.var));
            }
        }
        let atomic = matches!(d.construct, Construct::Atomic(_));
        self.atomic_depth += u32::from(atomic);
        if let Some(body) = &d.body {
            self.stmt(body);
        }
        self.atomic_depth -= u32::from(atomic);
    }
}

// ---------------------------------------------------------------------------------------------
// Scalar privatization
// ---------------------------------------------------------------------------------------------

/// Whether an outside scalar `v` that a loop assigns can be private to each of its iterations.
enum Privatizable {
    Yes,
    /// Some iteration may read the value an earlier one left.
    ReadFirst,
    /// Every iteration assigns it first, but its value may be read after the loop: why.
    LiveAfter(String),
}

/// `v` can be private to each iteration of a loop with this body when every iteration assigns
/// it before any read ([`first_access`]) and nothing reads the value the loop leaves in it: it
/// is a local (or parameter) of the function, or of the top-level code, that holds the loop
/// (later compiles and other functions cannot name it), and every mention of it there is
/// inside a loop whose iterations also assign it first ([`Escapes`]). The value after the loop
/// is then never read, so a private copy per iteration (what `private(v)` gives) computes what
/// the sequential loop does.
fn privatizable(cx: &Cx, body: &Block, v: VarId) -> Privatizable {
    if first_access(&body.stmts, v) == Access1::Read {
        return Privatizable::ReadFirst;
    }
    let info = cx.program.var(v);
    let name = &info.name;
    if !matches!(info.kind, VarKind::Local | VarKind::Param) || info.ty.is_array() {
        return Privatizable::LiveAfter(format!(
            "`{name}` is a global, whose value the host may read after the loop"
        ));
    }
    let mut escapes = Escapes { var: v, at: None };
    match info.owner {
        Some(f) => visit::walk_block(&mut escapes, &cx.program.function(f).body),
        None => {
            for s in &cx.program.top {
                escapes.stmt(s);
            }
        }
    }
    match escapes.at {
        None => Privatizable::Yes,
        Some(_) => Privatizable::LiveAfter(format!(
            "`{name}` is used outside the loops that assign it first, so its value after the \
             loop may be read"
        )),
    }
}

/// How a sequence of statements first touches a scalar, in the order they run.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access1 {
    /// A plain assignment `v = e` (with `e` free of `v`) runs before any read.
    Assigned,
    /// Nothing reads the value it had before (it may assign it, in a loop that may not run).
    Untouched,
    /// It may read the value it had before.
    Read,
}

/// How `stmts` first touch `v`. Conservative: an assignment under a condition, in a loop, or a
/// compound one (`v += e`) does not count; a loop counts as not reading `v` when each of its
/// iterations assigns it first (then the statements after it must assign it again).
fn first_access(stmts: &[Stmt], v: VarId) -> Access1 {
    for s in stmts {
        match stmt_access(s, v) {
            Access1::Untouched => {}
            found => return found,
        }
    }
    Access1::Untouched
}

fn stmt_access(s: &Stmt, v: VarId) -> Access1 {
    let loop_access = |bounds: &[Option<&Expr>], body: &Block| {
        let in_bounds = bounds.iter().flatten().any(|e| mentions(e, v));
        if !in_bounds && first_access(&body.stmts, v) != Access1::Read {
            Access1::Untouched
        } else {
            Access1::Read
        }
    };
    match &s.kind {
        StmtKind::Assign {
            place: Place {
                kind: PlaceKind::Var(w),
                ..
            },
            op: None,
            value,
        } if *w == v && !mentions(value, v) => Access1::Assigned,
        StmtKind::For(f) => loop_access(&[Some(&f.start), Some(&f.end), f.step.as_ref()], &f.body),
        StmtKind::While { cond, body } => loop_access(&[Some(cond)], body),
        StmtKind::Block(b) => first_access(&b.stmts, v),
        StmtKind::Directive(d) if d.construct == Construct::Loop && !clauses_mention(d, v) => d
            .body
            .as_deref()
            .map_or(Access1::Untouched, |b| stmt_access(b, v)),
        _ if stmt_mentions(s, v) => Access1::Read,
        _ => Access1::Untouched,
    }
}

/// Finds a mention of `var` outside the loops whose iterations assign it first (those are
/// skipped whole: they never read the value it had before them). A `private` clause is no
/// mention: it reads nothing.
struct Escapes {
    var: VarId,
    at: Option<Span>,
}

impl Visitor for Escapes {
    fn stmt(&mut self, s: &Stmt) {
        if self.at.is_some() {
            return;
        }
        let private_loop = match &s.kind {
            StmtKind::For(_) | StmtKind::While { .. } => {
                stmt_access(s, self.var) == Access1::Untouched
            }
            _ => false,
        };
        if !private_loop {
            visit::walk_stmt(self, s);
        }
    }

    fn expr(&mut self, e: &Expr) {
        if e.as_var() == Some(self.var) {
            self.at.get_or_insert(e.span);
        }
        visit::walk_expr(self, e);
    }

    fn place(&mut self, p: &Place, compound: bool) {
        if let PlaceKind::Var(w) = p.kind {
            if w == self.var {
                self.at.get_or_insert(p.span);
            }
        }
        let _ = compound;
        visit::walk_place(self, p);
    }

    fn data_ref(&mut self, r: &crate::hir::DataRef) {
        if r.var == self.var {
            self.at.get_or_insert(r.span);
        }
        visit::walk_data_ref(self, r);
    }

    fn directive(&mut self, d: &crate::hir::Directive, _s: &Stmt) {
        for c in &d.clauses {
            if !matches!(c.kind, crate::hir::ClauseKind::Private(_)) {
                visit::walk_clause(self, c);
            }
        }
        if let Some(body) = &d.body {
            self.stmt(body);
        }
    }
}

/// Whether a clause of `d` (other than `private`) names or mentions `v`.
fn clauses_mention(d: &crate::hir::Directive, v: VarId) -> bool {
    let mut f = Escapes { var: v, at: None };
    for c in &d.clauses {
        if !matches!(c.kind, crate::hir::ClauseKind::Private(_)) {
            visit::walk_clause(&mut f, c);
        }
    }
    f.at.is_some()
}

/// Whether `s` mentions `v` anywhere (read, assigned, or named in a clause).
fn stmt_mentions(s: &Stmt, v: VarId) -> bool {
    struct All(Escapes);
    impl Visitor for All {
        fn expr(&mut self, e: &Expr) {
            self.0.expr(e)
        }
        fn place(&mut self, p: &Place, compound: bool) {
            self.0.place(p, compound)
        }
        fn data_ref(&mut self, r: &crate::hir::DataRef) {
            self.0.data_ref(r)
        }
    }
    let mut f = All(Escapes { var: v, at: None });
    f.stmt(s);
    f.0.at.is_some()
}

/// Whether `e` mentions the variable `v`.
fn mentions(e: &Expr, v: VarId) -> bool {
    struct Finder(VarId, bool);
    impl Visitor for Finder {
        fn expr(&mut self, e: &Expr) {
            self.1 |= e.as_var() == Some(self.0);
            visit::walk_expr(self, e);
        }
    }
    let mut f = Finder(v, false);
    f.expr(e);
    f.1
}

fn op_fits(op: ReductionOp, ty: ScalarType) -> bool {
    match op {
        ReductionOp::Add | ReductionOp::Mul | ReductionOp::Max | ReductionOp::Min => {
            ty.is_numeric()
        }
        ReductionOp::BitAnd | ReductionOp::BitOr | ReductionOp::BitXor => ty.is_int(),
        ReductionOp::And | ReductionOp::Or => ty == ScalarType::Bool,
    }
}

// ---------------------------------------------------------------------------------------------
// Which array variables may share storage
// ---------------------------------------------------------------------------------------------

/// Array variables that may name the same storage, from what this compile binds them to: a
/// fresh array (`zeros`, `copy`, a literal, …) is distinct storage; `let b = a`, `b = a` and
/// `reshape(a, …)` join `b` to `a`; a function's array parameters and values returned by calls
/// may be any array. (Variables of earlier compiles keep the bindings this compile can see.)
#[derive(Default)]
pub(crate) struct Aliases {
    parent: HashMap<VarId, VarId>,
    /// Roots of classes that may hold any array.
    unknown: HashSet<VarId>,
}

impl Aliases {
    pub(super) fn build(cx: &Cx) -> Aliases {
        struct Bind<'a, 'p> {
            cx: &'a Cx<'p>,
            aliases: Aliases,
        }
        impl Visitor for Bind<'_, '_> {
            fn stmt(&mut self, s: &Stmt) {
                match &s.kind {
                    StmtKind::Let { var, init } if init.ty.is_array() => {
                        self.aliases.bind(*var, init)
                    }
                    StmtKind::Assign {
                        place:
                            Place {
                                kind: PlaceKind::Var(v),
                                ..
                            },
                        op: None,
                        value,
                    } if value.ty.is_array() => self.aliases.bind(*v, value),
                    _ => {}
                }
                visit::walk_stmt(self, s);
            }
        }
        let mut bind = Bind {
            cx,
            aliases: Aliases::default(),
        };
        for s in &cx.program.top {
            bind.stmt(s);
        }
        for f in cx.program.new_functions() {
            for p in &f.params {
                if bind.cx.var_ty(*p).is_array() {
                    bind.aliases.unknown.insert(*p);
                }
            }
            visit::walk_block(&mut bind, &f.body);
        }
        bind.aliases
    }

    fn find(&self, mut v: VarId) -> VarId {
        while let Some(&p) = self.parent.get(&v) {
            v = p;
        }
        v
    }

    fn union(&mut self, a: VarId, b: VarId) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            self.parent.insert(ra, rb);
            if self.unknown.remove(&ra) {
                self.unknown.insert(rb);
            }
        }
    }

    fn bind(&mut self, v: VarId, e: &Expr) {
        match &e.kind {
            ExprKind::Var(w) => self.union(v, *w),
            ExprKind::Builtin(Builtin::Reshape, args) => {
                if let Some(a) = args.first() {
                    self.bind(v, a)
                }
            }
            ExprKind::Builtin(b, _) if b.allocates() => {}
            ExprKind::ArrayLit(_) => {}
            ExprKind::If(_, a, b) => {
                self.bind(v, a);
                self.bind(v, b);
            }
            ExprKind::Block(_, last) => self.bind(v, last),
            _ => {
                let root = self.find(v);
                self.unknown.insert(root);
            }
        }
    }

    /// Whether `a` and `b` are bound to each other (directly or not): the same storage for
    /// all this compile can see. (Unlike `may_alias`, an array that may hold any array shares
    /// storage only with what it is bound to.)
    pub(super) fn same_storage(&self, a: VarId, b: VarId) -> bool {
        self.find(a) == self.find(b)
    }

    /// The variables bound to `v`'s storage (`v` included), or `None` when it may hold any
    /// array (a parameter, a call's result).
    pub(super) fn class_of(&self, v: VarId) -> Option<Vec<VarId>> {
        let root = self.find(v);
        if self.unknown.contains(&root) {
            return None;
        }
        let mut class = vec![v];
        for (&w, &p) in &self.parent {
            for x in [w, p] {
                if !class.contains(&x) && self.find(x) == root {
                    class.push(x);
                }
            }
        }
        Some(class)
    }

    pub(super) fn may_alias(&self, a: VarId, b: VarId) -> bool {
        let (ra, rb) = (self.find(a), self.find(b));
        ra == rb || self.unknown.contains(&ra) || self.unknown.contains(&rb)
    }

    /// The pairs of variables, one bound with `a` and one with `b`, whose storage a proof that
    /// `a` and `b` are distinct takes to differ: what the launch checks, since a later compile
    /// (`b = a` in the next REPL input) or the embedding program may bind them to one array.
    pub(super) fn assumed_distinct(&self, a: VarId, b: VarId) -> Vec<(VarId, VarId)> {
        let class = |v: VarId| {
            let root = self.find(v);
            let mut out = vec![v];
            for w in std::iter::once(root).chain(self.parent.keys().copied()) {
                if !out.contains(&w) && self.find(w) == root {
                    out.push(w);
                }
            }
            out.sort();
            out
        };
        let (ca, cb) = (class(a), class(b));
        ca.iter()
            .flat_map(|x| cb.iter().map(move |y| (*x, *y)))
            .collect()
    }

    /// Why two arrays may be one, for the reason.
    fn why(&self, a: VarId, b: VarId, cx: &Cx) -> String {
        let unknown = |v: VarId| self.unknown.contains(&self.find(v));
        match (unknown(a), unknown(b)) {
            (true, _) | (_, true) => {
                let v = if unknown(a) { a } else { b };
                match cx.program.var(v).kind {
                    crate::hir::VarKind::Param => format!(
                        "`{}` is a parameter; add `independent` if they never share storage",
                        cx.var_name(v)
                    ),
                    _ => format!(
                        "`{}` may hold any array; add `independent` if they never share storage",
                        cx.var_name(v)
                    ),
                }
            }
            _ => "one is bound to the other".into(),
        }
    }
}
