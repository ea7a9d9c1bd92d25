//! The IR's contract, checked: what `ir` promises a back end (the module doc), as rules over a
//! whole `Module`. Lowering runs it in debug builds (a broken rule is a compiler bug, so it
//! panics: `assert_valid`), and the lowering tests run it on every module they make.
//!
//! Each function and region is checked on its own; the first broken rule in each is reported.
//! Functions and globals of earlier compiles are not in the module: calls of them and reads of
//! them are not checked. "Assigned before read" is checked per body, not per path: a local
//! that is read must be assigned somewhere in the body (or be a parameter).

use std::collections::HashSet;
use std::fmt;

use super::*;
use crate::builtins::FormatPiece;

/// A rule of the IR's contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// Ids name what exists: locals, sites, strings, formats, regions.
    InRange,
    /// Operands, results, stores, calls and returns agree on types.
    Types,
    /// A local that is read is assigned somewhere (parameters are assigned on entry; a region's
    /// `Pass::Private` parameters are read uninitialized).
    AssignedBeforeRead,
    /// Nothing follows `Break`, `Continue` or `Return` in a block; `Break` and `Continue` are
    /// inside loops, `Return` inside functions.
    Jumps,
    /// Run-time checks carry their sites: integer division, a step that may be 0.
    Sites,
    /// A `for` variable is an integer; `collapse(n)` heads a nest of `n` loops; loop ids are
    /// unique within a body (jit-ptx keys its loop plans by them).
    Loops,
    /// `Retain` and `Release` name an array local or global.
    RefCounts,
    /// Every `Stmt::Atomic` has a form, the one its statement has in its body (`Atomic::form`),
    /// and the parts that form names (`Atomic::parts`).
    Atomics,
    /// A launch matches its region: one argument per parameter, of its type; results of
    /// `InOut` parameters; `i64` sizes; the statements its results wait for
    /// (`Launch::results_after`) are launches of its block, and only a launch with results has
    /// any.
    Launches,
    /// Regions are numbered by position, and their parameters are their first locals.
    Regions,
    /// A reduction's local exists and is of its type, it starts from its operator's identity,
    /// and a region's reduction combines with an `InOut` parameter.
    Reductions,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::InRange => "ids in range",
            Rule::Types => "types agree",
            Rule::AssignedBeforeRead => "locals assigned before read",
            Rule::Jumps => "nothing after a jump",
            Rule::Sites => "checks carry sites",
            Rule::Loops => "loops well formed",
            Rule::RefCounts => "reference counts of arrays",
            Rule::Atomics => "atomics have their form",
            Rule::Launches => "launches match regions",
            Rule::Regions => "regions well formed",
            Rule::Reductions => "reductions well formed",
        })
    }
}

/// A broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyError {
    /// The function (`main` for a compile's top level) or region (`region N`).
    pub body: String,
    pub rule: Rule,
    /// What breaks it.
    pub detail: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: rule `{}` broken: {}",
            self.body, self.rule, self.detail
        )
    }
}

/// Checks every rule on every body of `m`.
pub fn verify(m: &Module) -> Result<(), Vec<VerifyError>> {
    let errors: Vec<VerifyError> = m
        .functions
        .iter()
        .chain([&m.main])
        .map(|f| function(m, f))
        .chain(m.regions.iter().enumerate().map(|(i, r)| region(m, i, r)))
        .filter_map(Result::err)
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

/// `verify`, panicking with the broken rules: for lowering, where they are compiler bugs.
pub fn assert_valid(m: &Module) {
    if let Err(errors) = verify(m) {
        let list: Vec<String> = errors.iter().map(|e| format!("  {e}")).collect();
        panic!(
            "compiler bug: lowering broke the IR's contract (ir::verify):\n{}",
            list.join("\n")
        );
    }
}

fn function(m: &Module, f: &Function) -> Result<(), VerifyError> {
    let mut b = BodyCheck::new(m, &f.locals, &f.name);
    for &p in &f.params {
        b.local(p)?;
        b.assigned[p.0 as usize] = true;
    }
    b.ret = Some(f.ret);
    b.block(&f.body, 0)?;
    b.reads_assigned()
}

fn region(m: &Module, i: usize, r: &Region) -> Result<(), VerifyError> {
    let name = format!("region {i}");
    let mut b = BodyCheck::new(m, &r.locals, &name);
    if r.id.0 as usize != i {
        return b.err(Rule::Regions, format!("region {i} has id {}", r.id.0));
    }
    b.cells = (0..r.params.len())
        .filter(|&i| r.is_cell(i))
        .map(|i| LocalId(i as u32))
        .collect();
    if r.params.len() > r.locals.len() {
        return b.err(Rule::Regions, "more params than locals".into());
    }
    for (i, p) in r.params.iter().enumerate() {
        if r.locals[i].ty != p.ty {
            return b.err(
                Rule::Regions,
                format!("param {i} type differs from its local"),
            );
        }
        b.assigned[i] = true;
    }
    for red in &r.reductions {
        b.reduction(&red.reduction)?;
        if r.params.get(red.param).map(|p| p.pass) != Some(Pass::InOut) {
            return b.err(
                Rule::Reductions,
                format!("a reduction into param {}, which is not inout", red.param),
            );
        }
    }
    b.block(&r.body, 0)?;
    b.reads_assigned()
}

struct BodyCheck<'m> {
    m: &'m Module,
    locals: &'m [Local],
    name: &'m str,
    assigned: Vec<bool>,
    read: Vec<bool>,
    /// `Some(ret)` in functions.
    ret: Option<Option<Ty>>,
    /// A region's `copy` scalars (`Region::is_cell`).
    cells: Vec<LocalId>,
    /// The loop ids seen so far.
    loop_ids: HashSet<LoopId>,
}

impl<'m> BodyCheck<'m> {
    fn new(m: &'m Module, locals: &'m [Local], name: &'m str) -> Self {
        BodyCheck {
            m,
            locals,
            name,
            assigned: vec![false; locals.len()],
            read: vec![false; locals.len()],
            ret: None,
            cells: Vec::new(),
            loop_ids: HashSet::new(),
        }
    }

    fn err<T>(&self, rule: Rule, detail: String) -> Result<T, VerifyError> {
        Err(VerifyError {
            body: self.name.to_string(),
            rule,
            detail,
        })
    }

    fn local(&self, l: LocalId) -> Result<(), VerifyError> {
        if (l.0 as usize) < self.locals.len() {
            Ok(())
        } else {
            self.err(Rule::InRange, format!("local {} out of range", l.0))
        }
    }

    fn ty(&self, l: LocalId) -> Ty {
        self.locals[l.0 as usize].ty
    }

    /// A reduction's local exists and is of its type, and it starts from its operator's
    /// identity.
    fn reduction(&self, red: &Reduction) -> Result<(), VerifyError> {
        self.local(red.var)?;
        if self.ty(red.var) != Ty::Scalar(red.ty) {
            return self.err(
                Rule::Reductions,
                format!("a {:?} reduction of a {:?} local", red.ty, self.ty(red.var)),
            );
        }
        match Reduction::new(red.var, red.op, red.ty) {
            Some(r) if r.identity == red.identity => Ok(()),
            Some(r) => self.err(
                Rule::Reductions,
                format!(
                    "a `{}` reduction from {:?}, not {:?}",
                    red.op.as_str(),
                    red.identity,
                    r.identity
                ),
            ),
            None => self.err(
                Rule::Reductions,
                format!("a `{}` reduction of {:?}", red.op.as_str(), red.ty),
            ),
        }
    }

    fn site(&self, s: SiteId) -> Result<(), VerifyError> {
        let i = s.0.wrapping_sub(self.m.first_site) as usize;
        if s.0 >= self.m.first_site && i < self.m.sites.len() {
            Ok(())
        } else {
            self.err(Rule::InRange, format!("site {} out of range", s.0))
        }
    }

    fn reads_assigned(&self) -> Result<(), VerifyError> {
        for (i, (&r, &a)) in self.read.iter().zip(&self.assigned).enumerate() {
            if r && !a {
                return self.err(
                    Rule::AssignedBeforeRead,
                    format!(
                        "local {} ({}) is read but never assigned",
                        i, self.locals[i].name
                    ),
                );
            }
        }
        Ok(())
    }

    fn block(&mut self, b: &Block, loops: usize) -> Result<(), VerifyError> {
        for (i, s) in b.iter().enumerate() {
            if matches!(s, Stmt::Break | Stmt::Continue | Stmt::Return(_)) && i + 1 != b.len() {
                return self.err(Rule::Jumps, "statements after a jump".into());
            }
            if let Stmt::Launch(l) = s {
                let after = l.results_after as usize;
                let window = b.get(i + 1..i + 1 + after);
                let launches =
                    window.is_some_and(|w| w.iter().all(|s| matches!(s, Stmt::Launch(_))));
                if after > 0 && (l.results.is_empty() || !launches) {
                    return self.err(
                        Rule::Launches,
                        "results taken after statements that are not launches of the block".into(),
                    );
                }
            }
            self.stmt(s, loops)?;
        }
        Ok(())
    }

    fn stmt(&mut self, s: &Stmt, loops: usize) -> Result<(), VerifyError> {
        match s {
            Stmt::Set(l, e) => {
                self.local(*l)?;
                self.assigned[l.0 as usize] = true;
                let t = self.expr(e)?;
                if t != self.ty(*l) {
                    return self.err(
                        Rule::Types,
                        format!("set of {:?} local with {:?}", self.ty(*l), t),
                    );
                }
            }
            Stmt::SetGlobal(g, e) => {
                let t = self.expr(e)?;
                if let Some(global) = self.m.globals.iter().find(|x| x.id == *g) {
                    if global.ty != t {
                        return self.err(
                            Rule::Types,
                            format!("set of global {} with {t:?}", global.name),
                        );
                    }
                }
            }
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                let elem = self.access(array, indices, *site)?;
                if self.expr(value)? != Ty::Scalar(elem) {
                    return self.err(Rule::Types, "stored value of the wrong type".into());
                }
            }
            Stmt::Eval(e) => {
                self.expr(e)?;
            }
            Stmt::If { cond, then, els } => {
                self.cond(cond)?;
                self.block(then, loops)?;
                self.block(els, loops)?;
            }
            Stmt::While { cond, body, .. } => {
                self.cond(cond)?;
                self.block(body, loops + 1)?;
            }
            Stmt::For(f) => {
                self.local(f.var)?;
                if !self.loop_ids.insert(f.id) {
                    return self.err(Rule::Loops, format!("loop id {} used twice", f.id.0));
                }
                self.assigned[f.var.0 as usize] = true;
                let t = self.ty(f.var);
                for e in [&f.start, &f.end, &f.step] {
                    if self.expr(e)? != t {
                        return self.err(Rule::Types, "loop bound of the wrong type".into());
                    }
                }
                if !matches!(t, Ty::Scalar(ScalarType::I32 | ScalarType::I64)) {
                    return self.err(Rule::Types, "loop variable not an integer".into());
                }
                let constant_nonzero = matches!(
                    f.step.kind,
                    ExprKind::Const(Const::I32(s)) if s != 0
                ) || matches!(f.step.kind, ExprKind::Const(Const::I64(s)) if s != 0);
                match f.step_site {
                    Some(s) => self.site(s)?,
                    None if !constant_nonzero => {
                        return self.err(Rule::Sites, "a step that may be 0 without a site".into())
                    }
                    None => {}
                }
                for red in &f.schedule.reductions {
                    self.reduction(red)?;
                }
                if f.schedule.collapse == 0 {
                    return self.err(Rule::Loops, "collapse(0)".into());
                }
                let mut nest = &f.body;
                for _ in 1..f.schedule.collapse {
                    match nest.as_slice() {
                        [Stmt::For(inner)] => nest = &inner.body,
                        _ => {
                            return self
                                .err(Rule::Loops, "a collapse nest with other statements".into())
                        }
                    }
                }
                self.block(&f.body, loops + 1)?;
            }
            Stmt::Break | Stmt::Continue => {
                if loops == 0 {
                    return self.err(Rule::Jumps, "jump outside a loop".into());
                }
            }
            Stmt::Return(e) => {
                let t = match e {
                    Some(e) => Some(self.expr(e)?),
                    None => None,
                };
                if let Some(ret) = self.ret {
                    if ret != t {
                        return self.err(
                            Rule::Types,
                            format!("return of {t:?} from a function of {ret:?}"),
                        );
                    }
                } else {
                    return self.err(Rule::Jumps, "return in a region".into());
                }
            }
            Stmt::Retain(e) | Stmt::Release(e) => {
                if !self.expr(e)?.is_array() {
                    return self.err(Rule::RefCounts, "reference count of a scalar".into());
                }
                if !matches!(e.kind, ExprKind::Local(_) | ExprKind::Global(_)) {
                    return self.err(
                        Rule::RefCounts,
                        "reference count of a computed value".into(),
                    );
                }
            }
            Stmt::Print(args, site) => {
                self.site(*site)?;
                for a in args {
                    match a {
                        PrintArg::Value(e) => {
                            self.expr(e)?;
                        }
                        PrintArg::Str(s) => {
                            if s.0 as usize >= self.m.strings.len() {
                                return self.err(Rule::InRange, "string out of range".into());
                            }
                        }
                    }
                }
            }
            Stmt::Printf(f, args, site) => {
                self.site(*site)?;
                let Some(pieces) = self.m.formats.get(f.0 as usize) else {
                    return self.err(Rule::InRange, "format out of range".into());
                };
                let specs = pieces
                    .iter()
                    .filter(|p| matches!(p, FormatPiece::Spec(_)))
                    .count();
                if specs != args.len() {
                    return self.err(
                        Rule::Types,
                        format!("printf with {specs} conversions and {} values", args.len()),
                    );
                }
                for a in args {
                    if self.expr(a)?.is_array() {
                        return self.err(Rule::Types, "printf of an array".into());
                    }
                }
            }
            Stmt::Assert { cond, site, .. } => {
                self.cond(cond)?;
                self.site(*site)?;
            }
            Stmt::Launch(l) => self.launch(l)?,
            Stmt::Data(d) => self.data(d)?,
            Stmt::DataRegion { enter, body, exit } => {
                self.data(enter)?;
                self.block(body, loops)?;
                self.data(exit)?;
            }
            Stmt::Wait {
                queues,
                async_queue,
                site,
            } => {
                for q in queues {
                    self.int(q)?;
                }
                self.queue(async_queue.as_ref())?;
                self.site(*site)?;
            }
            Stmt::Atomic(a) => {
                self.atomic(a)?;
                match &*a.body {
                    Stmt::Set(..) | Stmt::SetGlobal(..) | Stmt::Store { .. } => {
                        self.stmt(&a.body, loops)?
                    }
                    Stmt::Block(b) if b.len() == 2 => self.block(b, loops)?,
                    _ => {
                        return self.err(Rule::Atomics, "atomic of an unexpected statement".into())
                    }
                }
            }
            Stmt::Block(b) => self.block(b, loops)?,
        }
        Ok(())
    }

    /// Both back ends act on the stored form: the atomic has one, the statement's own (as
    /// this body's cells make it), and its parts.
    fn atomic(&self, a: &Atomic) -> Result<(), VerifyError> {
        let form = match a.form {
            Ok(form) => form,
            Err(why) => return self.err(Rule::Atomics, format!("an atomic without a form: {why}")),
        };
        let own = atomic::classify(a.kind, &a.body, |l| self.cells.contains(&l));
        if own != Ok(form) {
            return self.err(
                Rule::Atomics,
                format!("an atomic stored as {form:?} whose statement is {own:?}"),
            );
        }
        match a.parts() {
            Ok(_) => Ok(()),
            Err(why) => self.err(Rule::Atomics, format!("an atomic without parts: {why}")),
        }
    }

    fn launch(&mut self, l: &Launch) -> Result<(), VerifyError> {
        let Some(r) = self.m.regions.get(l.region.0 as usize) else {
            return self.err(Rule::InRange, "launch of a missing region".into());
        };
        if l.args.len() != r.params.len() {
            return self.err(
                Rule::Launches,
                format!(
                    "launch with {} args for {} params",
                    l.args.len(),
                    r.params.len()
                ),
            );
        }
        for (a, p) in l.args.iter().zip(&r.params) {
            if self.expr(a)? != p.ty {
                return self.err(
                    Rule::Launches,
                    format!("launch arg for `{}` of the wrong type", p.name),
                );
            }
        }
        for (i, place) in &l.results {
            if r.params.get(*i).map(|p| p.pass) != Some(Pass::InOut) {
                return self.err(Rule::Launches, "result of a param that is not inout".into());
            }
            if let Place::Local(x) = place {
                self.local(*x)?;
            }
        }
        if let Some(c) = &l.if_cond {
            self.cond(c)?;
        }
        for d in [&l.num_gangs, &l.num_workers, &l.vector_length] {
            for e in [&d.nvidia, &d.host, &d.multicore].into_iter().flatten() {
                if self.expr(e)? != Ty::Scalar(ScalarType::I64) {
                    return self.err(Rule::Launches, "launch size not i64".into());
                }
            }
        }
        self.queue(l.async_queue.as_ref())?;
        for q in l.wait.iter().flatten() {
            self.int(q)?;
        }
        for op in &l.data {
            self.data_op(op)?;
        }
        self.site(l.site)
    }

    fn data(&mut self, d: &DataDirective) -> Result<(), VerifyError> {
        for op in &d.ops {
            self.data_op(op)?;
        }
        if let Some(c) = &d.if_cond {
            self.cond(c)?;
        }
        self.queue(d.async_queue.as_ref())?;
        for q in d.wait.iter().flatten() {
            self.int(q)?;
        }
        self.site(d.site)
    }

    fn data_op(&mut self, op: &DataOp) -> Result<(), VerifyError> {
        let t = self.expr(&op.array)?;
        let Ty::Array { rank, .. } = t else {
            return self.err(Rule::Types, format!("data op on scalar `{}`", op.name));
        };
        if let Some(ranges) = &op.ranges {
            if ranges.len() != rank as usize {
                return self.err(Rule::Types, "section of the wrong rank".into());
            }
            for r in ranges {
                for e in [&r.start, &r.count].into_iter().flatten() {
                    self.int(e)?;
                }
            }
        }
        Ok(())
    }

    fn queue(&mut self, q: Option<&Queue>) -> Result<(), VerifyError> {
        match q {
            Some(Queue::Numbered(e)) => self.int(e),
            _ => Ok(()),
        }
    }

    fn cond(&mut self, e: &Expr) -> Result<(), VerifyError> {
        if self.expr(e)? != Ty::Scalar(ScalarType::Bool) {
            return self.err(Rule::Types, "condition not bool".into());
        }
        Ok(())
    }

    fn int(&mut self, e: &Expr) -> Result<(), VerifyError> {
        match self.expr(e)? {
            Ty::Scalar(ScalarType::I32 | ScalarType::I64) => Ok(()),
            t => self.err(Rule::Types, format!("{t:?} where an integer is needed")),
        }
    }

    /// An element access; its element type.
    fn access(
        &mut self,
        array: &Expr,
        indices: &[Expr],
        site: Option<SiteId>,
    ) -> Result<ScalarType, VerifyError> {
        let Ty::Array { elem, rank } = self.expr(array)? else {
            return self.err(Rule::Types, "indexing a scalar".into());
        };
        if indices.len() != rank as usize {
            return self.err(Rule::Types, "wrong number of indices".into());
        }
        for i in indices {
            self.int(i)?;
        }
        if let Some(s) = site {
            self.site(s)?;
        }
        Ok(elem)
    }

    fn expr(&mut self, e: &Expr) -> Result<Ty, VerifyError> {
        let bool_ty = Ty::Scalar(ScalarType::Bool);
        match &e.kind {
            ExprKind::Const(c) => {
                if e.ty != Ty::Scalar(c.ty()) {
                    return self.err(Rule::Types, "constant of the wrong type".into());
                }
            }
            ExprKind::Local(l) => {
                self.local(*l)?;
                self.read[l.0 as usize] = true;
                if self.ty(*l) != e.ty {
                    return self.err(Rule::Types, "local read with the wrong type".into());
                }
            }
            ExprKind::Global(g) => {
                if let Some(global) = self.m.globals.iter().find(|x| x.id == *g) {
                    if global.ty != e.ty {
                        return self.err(Rule::Types, "global read with the wrong type".into());
                    }
                }
            }
            ExprKind::Unary(op, x) => {
                let t = self.expr(x)?;
                if t != e.ty || (*op == UnOp::Not) != (t == bool_ty) {
                    return self.err(Rule::Types, format!("unary {op:?} on {t:?}"));
                }
            }
            ExprKind::Binary(op, a, b, site) => {
                let (ta, tb) = (self.expr(a)?, self.expr(b)?);
                let ok = match op {
                    BinOp::And | BinOp::Or => ta == bool_ty && tb == bool_ty && e.ty == bool_ty,
                    BinOp::Shl | BinOp::Shr => {
                        ta == e.ty && tb.scalar().is_some_and(ScalarType::is_int)
                    }
                    o if o.is_comparison() => ta == tb && e.ty == bool_ty,
                    _ => ta == tb && ta == e.ty,
                };
                if !ok {
                    return self.err(
                        Rule::Types,
                        format!("binary {op:?} of {ta:?} and {tb:?} giving {:?}", e.ty),
                    );
                }
                let int_div = matches!(op, BinOp::Div | BinOp::Rem)
                    && ta.scalar().is_some_and(ScalarType::is_int);
                if int_div != site.is_some() {
                    return self.err(Rule::Sites, "division site missing or misplaced".into());
                }
                if let Some(s) = site {
                    self.site(*s)?;
                }
            }
            ExprKind::Convert(x) => {
                let t = self.expr(x)?;
                if t.is_array() || e.ty.is_array() {
                    return self.err(Rule::Types, "conversion of an array".into());
                }
            }
            ExprKind::Load {
                array,
                indices,
                site,
            } => {
                let elem = self.access(array, indices, *site)?;
                if e.ty != Ty::Scalar(elem) {
                    return self.err(Rule::Types, "load of the wrong type".into());
                }
            }
            ExprKind::Call(f, args) => {
                let mut ts = Vec::new();
                for a in args {
                    ts.push(self.expr(a)?);
                }
                if let Some(callee) = self.m.functions.iter().find(|x| x.id == Some(*f)) {
                    let params: Vec<Ty> = callee
                        .params
                        .iter()
                        .map(|p| callee.locals[p.0 as usize].ty)
                        .collect();
                    if params != ts {
                        return self
                            .err(Rule::Types, format!("call of {} with {ts:?}", callee.name));
                    }
                    if let Some(r) = callee.ret {
                        if r != e.ty {
                            return self.err(
                                Rule::Types,
                                format!("call of {} typed {:?}", callee.name, e.ty),
                            );
                        }
                    }
                }
            }
            ExprKind::Builtin(_, args) => {
                for a in args {
                    self.expr(a)?;
                }
            }
            ExprKind::CheckedBuiltin(_, args, site) | ExprKind::ArrayLit(args, site) => {
                for a in args {
                    self.expr(a)?;
                }
                self.site(*site)?;
            }
            ExprKind::Param(s, d, site) => {
                self.site(*site)?;
                if s.0 as usize >= self.m.strings.len() {
                    return self.err(Rule::InRange, "string out of range".into());
                }
                if self.expr(d)? != e.ty {
                    return self.err(Rule::Types, "param default of the wrong type".into());
                }
            }
            ExprKind::Section { array, ranges } => {
                if self.expr(array)? != e.ty {
                    return self.err(Rule::Types, "section typed unlike its array".into());
                }
                for r in ranges {
                    for x in [&r.start, &r.count].into_iter().flatten() {
                        self.int(x)?;
                    }
                }
            }
        }
        Ok(e.ty)
    }
}

#[cfg(test)]
mod tests;
