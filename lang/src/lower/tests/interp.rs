//! A reference interpreter of the IR, for tests: it runs lowered programs sequentially (regions
//! as one gang on the host) and checks the reference counting as it goes. Reading an
//! unassigned local, touching a freed array, releasing one twice, or ending `main` with an
//! array whose count disagrees with the references the globals hold is a lowering bug, reported
//! as `Err("bug: …")`; run-time errors of the program are `Err("error: …")`.
//!
//! Output formatting is simplified (floats as Rust's `{:?}`); it is not the language's printer.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use crate::builtins::{Builtin, FormatPiece, FormatSpec};
use crate::hir::{BinOp, Const, ReductionOp, ScalarType, UnOp, VarId};
use crate::ir::*;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum V {
    B(bool),
    I32(i32),
    I64(i64),
    F32(f32),
    F64(f64),
    /// An array handle.
    A(usize),
    /// Unassigned (or the value of a void call).
    Unit,
}

impl V {
    fn f64(self) -> f64 {
        match self {
            V::B(b) => b as i64 as f64,
            V::I32(x) => x as f64,
            V::I64(x) => x as f64,
            V::F32(x) => x as f64,
            V::F64(x) => x,
            _ => f64::NAN,
        }
    }

    fn i64(self) -> i64 {
        match self {
            V::B(b) => b as i64,
            V::I32(x) => x as i64,
            V::I64(x) => x,
            V::F32(x) => x as i64,
            V::F64(x) => x as i64,
            _ => 0,
        }
    }

    fn bool(self) -> bool {
        matches!(self, V::B(true))
    }

    fn of(t: ScalarType, x: f64, i: i64) -> V {
        match t {
            ScalarType::Bool => V::B(i != 0),
            ScalarType::I32 => V::I32(i as i32),
            ScalarType::I64 => V::I64(i),
            ScalarType::F32 => V::F32(x as f32),
            ScalarType::F64 => V::F64(x),
        }
    }

    /// `self` converted to `t` (float to integer saturates, as Rust's `as`).
    fn convert(self, t: ScalarType) -> V {
        match (self, t) {
            (V::F32(x), ScalarType::I32) => V::I32(x as i32),
            (V::F32(x), ScalarType::I64) => V::I64(x as i64),
            (V::F64(x), ScalarType::I32) => V::I32(x as i32),
            (V::F64(x), ScalarType::I64) => V::I64(x as i64),
            (V::I64(x), ScalarType::I32) => V::I32(x as i32),
            (v, t) => V::of(t, v.f64(), v.i64()),
        }
    }
}

struct Arr {
    dims: Vec<i64>,
    /// Shared by `reshape`s of one array.
    data: Rc<RefCell<Vec<V>>>,
    rc: i64,
    freed: bool,
}

enum Flow {
    Normal,
    Break,
    Continue,
    Return(Option<V>),
}

type R<T> = Result<T, String>;

fn bug<T>(what: impl Into<String>) -> R<T> {
    Err(format!("bug: {}", what.into()))
}

fn error<T>(what: impl Into<String>) -> R<T> {
    Err(format!("error: {}", what.into()))
}

pub struct Interp<'m> {
    m: &'m Module,
    heap: Vec<Arr>,
    globals: HashMap<VarId, V>,
    pub out: String,
    params: HashMap<String, f64>,
    steps: u64,
    max_steps: u64,
    /// User-function calls in progress (the interpreter recurses on the Rust stack).
    depth: u32,
    /// The gang running (index, count): gang loops share their iterations among gangs.
    gang: (i64, i64),
    default_async: i32,
    /// Pictures drawn so far without a path (`acc-plot-N.png`).
    pictures: u32,
}

/// Run `main`; the output, or the first error (the output so far is in the message).
pub fn run(m: &Module, params: &[(&str, f64)]) -> Result<String, String> {
    run_limited(m, params, 20_000_000)
}

/// `run`, giving up (`Err("error: too many steps")`) after `max_steps` statements.
pub fn run_limited(m: &Module, params: &[(&str, f64)], max_steps: u64) -> Result<String, String> {
    let mut it = Interp {
        max_steps,
        depth: 0,
        m,
        heap: Vec::new(),
        globals: HashMap::new(),
        out: String::new(),
        params: params.iter().map(|(k, v)| (k.to_string(), *v)).collect(),
        steps: 0,
        gang: (0, 1),
        default_async: 0,
        pictures: 0,
    };
    match it.call_main() {
        Ok(()) => it.leak_check()?,
        // `exit` ends the program where it stands: the arrays of the frames it leaves are
        // still held (the process frees them), so there is no balance to check.
        Err(e) if e == "exit" => {}
        Err(e) => return Err(format!("{e}\noutput so far:\n{}", it.out)),
    }
    Ok(it.out)
}

impl Interp<'_> {
    fn call_main(&mut self) -> R<()> {
        let m = self.m;
        let mut frame = vec![V::Unit; m.main.locals.len()];
        match self.block(&mut frame, &m.main.body)? {
            Flow::Normal | Flow::Return(None) => Ok(()),
            _ => bug("main ended with a jump"),
        }
    }

    fn leak_check(&self) -> R<()> {
        let mut held = vec![0i64; self.heap.len()];
        for v in self.globals.values() {
            if let V::A(h) = v {
                held[*h] += 1;
            }
        }
        for (i, a) in self.heap.iter().enumerate() {
            if a.freed && held[i] > 0 {
                return bug(format!("array {i} freed while a global holds it"));
            }
            if !a.freed && a.rc != held[i] {
                return bug(format!(
                    "array {i} ({:?}) ends with count {} but {} global references (leak)",
                    a.dims, a.rc, held[i]
                ));
            }
        }
        Ok(())
    }

    fn arr(&self, v: V) -> R<&Arr> {
        let V::A(h) = v else {
            return bug(format!("{v:?} used as an array"));
        };
        let a = &self.heap[h];
        if a.freed {
            return bug(format!("use of freed array {h}"));
        }
        Ok(a)
    }

    fn new_array(&mut self, dims: Vec<i64>, data: Vec<V>) -> R<V> {
        if dims.iter().any(|&d| d < 0) {
            return error("negative extent");
        }
        self.heap.push(Arr {
            dims,
            data: Rc::new(RefCell::new(data)),
            rc: 1,
            freed: false,
        });
        Ok(V::A(self.heap.len() - 1))
    }

    fn retain(&mut self, v: V) -> R<()> {
        self.arr(v)?;
        if let V::A(h) = v {
            self.heap[h].rc += 1;
        }
        Ok(())
    }

    fn release(&mut self, v: V) -> R<()> {
        self.arr(v)?;
        if let V::A(h) = v {
            let a = &mut self.heap[h];
            a.rc -= 1;
            if a.rc == 0 {
                a.freed = true;
                a.data = Rc::default();
            }
        }
        Ok(())
    }

    // ---- statements ----------------------------------------------------------------------

    fn block(&mut self, fr: &mut Vec<V>, b: &Block) -> R<Flow> {
        for s in b {
            match self.stmt(fr, s)? {
                Flow::Normal => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Normal)
    }

    fn stmt(&mut self, fr: &mut Vec<V>, s: &Stmt) -> R<Flow> {
        self.steps += 1;
        if self.steps > self.max_steps {
            return error("too many steps");
        }
        match s {
            Stmt::Set(l, e) => {
                let v = self.expr(fr, e)?;
                fr[l.0 as usize] = v;
            }
            Stmt::SetGlobal(g, e) => {
                let v = self.expr(fr, e)?;
                self.globals.insert(*g, v);
            }
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                let a = self.expr(fr, array)?;
                let idx = self.exprs(fr, indices)?;
                let v = self.expr(fr, value)?;
                let at = self.offset(a, &idx, site.is_some())?;
                if let V::A(h) = a {
                    self.heap[h].data.borrow_mut()[at] = v;
                }
            }
            Stmt::Eval(e) => {
                let v = self.expr(fr, e)?;
                let owned = matches!(
                    e.kind,
                    ExprKind::Call(..)
                        | ExprKind::Builtin(..)
                        | ExprKind::CheckedBuiltin(..)
                        | ExprKind::ArrayLit(..)
                );
                if e.ty.is_array() && owned && v != V::Unit {
                    self.release(v)?;
                }
            }
            Stmt::If { cond, then, els } => {
                let c = self.expr(fr, cond)?.bool();
                return self.block(fr, if c { then } else { els });
            }
            Stmt::While { cond, body, .. } => loop {
                self.steps += 1;
                if self.steps > self.max_steps {
                    return error("too many steps");
                }
                if !self.expr(fr, cond)?.bool() {
                    break;
                }
                match self.block(fr, body)? {
                    Flow::Break => break,
                    Flow::Normal | Flow::Continue => {}
                    r @ Flow::Return(_) => return Ok(r),
                }
            },
            Stmt::For(f) => {
                let start = self.expr(fr, &f.start)?.i64();
                let end = self.expr(fr, &f.end)?.i64();
                let step = self.expr(fr, &f.step)?.i64();
                if step == 0 {
                    return match f.step_site {
                        Some(_) => error("a `for` loop with a step of 0"),
                        None => bug("a step of 0 without a site"),
                    };
                }
                let t = f.start.ty.scalar().unwrap_or(ScalarType::I64);
                let (gang, gangs) = if f.schedule.gang { self.gang } else { (0, 1) };
                let mut i = start;
                let mut k = 0i64;
                loop {
                    let go = match (step > 0, f.inclusive) {
                        (true, false) => i < end,
                        (true, true) => i <= end,
                        (false, false) => i > end,
                        (false, true) => i >= end,
                    };
                    if !go {
                        break;
                    }
                    k += 1;
                    self.steps += 1;
                    if self.steps > self.max_steps {
                        return error("too many steps");
                    }
                    if (k - 1) % gangs != gang {
                        i = i.wrapping_add(step);
                        continue;
                    }
                    fr[f.var.0 as usize] = V::of(t, i as f64, i);
                    match self.block(fr, &f.body)? {
                        Flow::Break => break,
                        Flow::Normal | Flow::Continue => {}
                        r @ Flow::Return(_) => return Ok(r),
                    }
                    i = i.wrapping_add(step);
                }
            }
            Stmt::Break => return Ok(Flow::Break),
            Stmt::Continue => return Ok(Flow::Continue),
            Stmt::Return(e) => {
                let v = match e {
                    Some(e) => Some(self.expr(fr, e)?),
                    None => None,
                };
                return Ok(Flow::Return(v));
            }
            Stmt::Retain(e) => {
                let v = self.expr(fr, e)?;
                self.retain(v)?;
            }
            Stmt::Release(e) => {
                let v = self.expr(fr, e)?;
                self.release(v)?;
            }
            Stmt::Print(args, _) => {
                let mut parts = Vec::new();
                for a in args {
                    parts.push(match a {
                        PrintArg::Str(s) => self.m.strings[s.0 as usize].clone(),
                        PrintArg::Value(e) => {
                            let v = self.expr(fr, e)?;
                            self.show(v)?
                        }
                    });
                }
                self.out.push_str(&parts.join(" "));
                self.out.push('\n');
            }
            Stmt::Printf(f, args, _) => {
                let vals = self.exprs(fr, args)?;
                let mut vals = vals.into_iter();
                let pieces = &self.m.formats[f.0 as usize];
                let mut text = String::new();
                for p in pieces {
                    match p {
                        FormatPiece::Text(t) => text.push_str(t),
                        FormatPiece::Spec(s) => {
                            text.push_str(&printf_one(s, vals.next().unwrap_or(V::Unit)))
                        }
                    }
                }
                self.out.push_str(&text);
            }
            Stmt::Assert { cond, message, .. } => {
                if !self.expr(fr, cond)?.bool() {
                    let msg =
                        message.map_or(String::new(), |m| self.m.strings[m.0 as usize].clone());
                    return error(format!("assertion failed {msg}"));
                }
            }
            Stmt::Launch(l) => self.launch(fr, l)?,
            Stmt::Data(d) => self.data(fr, d)?,
            Stmt::DataRegion { enter, body, exit } => {
                self.data(fr, enter)?;
                let flow = self.block(fr, body)?;
                if let Flow::Normal = flow {
                    self.data(fr, exit)?;
                }
                return Ok(flow);
            }
            Stmt::Wait {
                queues,
                async_queue,
                ..
            } => {
                self.exprs(fr, queues)?;
                if let Some(Queue::Numbered(q)) = async_queue {
                    self.expr(fr, q)?;
                }
            }
            Stmt::Atomic(a) => return self.stmt(fr, &a.body),
            Stmt::Block(b) => return self.block(fr, b),
        }
        Ok(Flow::Normal)
    }

    fn data(&mut self, fr: &mut Vec<V>, d: &DataDirective) -> R<()> {
        if let Some(c) = &d.if_cond {
            self.expr(fr, c)?;
        }
        for op in &d.ops {
            let a = self.expr(fr, &op.array)?;
            self.arr(a)?;
            for r in op.ranges.iter().flatten() {
                for e in [&r.start, &r.count].into_iter().flatten() {
                    self.expr(fr, e)?;
                }
            }
        }
        Ok(())
    }

    fn launch(&mut self, fr: &mut Vec<V>, l: &Launch) -> R<()> {
        let m = self.m;
        let region = &m.regions[l.region.0 as usize];
        let args = self.exprs(fr, &l.args)?;
        if let Some(c) = &l.if_cond {
            self.expr(fr, c)?;
        }
        for op in &l.data {
            let a = self.expr(fr, &op.array)?;
            self.arr(a)?;
        }
        // Gang-redundant execution, one gang after another: `InOut` scalars are shared,
        // reductions combined after each gang.
        let gangs = match &l.num_gangs.host {
            Some(e) => self.expr(fr, e)?.i64().max(1),
            None => 1,
        };
        let mut shared = args.clone();
        for g in 0..gangs {
            let mut rf = vec![V::Unit; region.locals.len()];
            for (i, p) in region.params.iter().enumerate() {
                if p.pass == Pass::Array {
                    self.arr(args[i])?;
                }
                rf[i] = match p.pass {
                    Pass::Private => V::Unit,
                    Pass::InOut => shared[i],
                    Pass::PrivateArray | Pass::FirstPrivateArray => {
                        let a = self.arr(args[i])?;
                        let (d, data) = (a.dims.clone(), a.data.borrow().clone());
                        self.new_array(d, data)?
                    }
                    _ => args[i],
                };
            }
            self.gang = (g, gangs);
            let flow = self.block(&mut rf, &region.body);
            self.gang = (0, 1);
            match flow? {
                Flow::Normal => {}
                _ => return bug("a region ended with a jump"),
            }
            for (i, p) in region.params.iter().enumerate() {
                match p.pass {
                    Pass::InOut => shared[i] = rf[i],
                    Pass::PrivateArray | Pass::FirstPrivateArray => self.release(rf[i])?,
                    _ => {}
                }
            }
            for RegionReduction { reduction, param } in &region.reductions {
                let partial = rf[reduction.var.0 as usize];
                shared[*param] = combine(reduction.op, shared[*param], partial);
            }
        }
        let rf = shared;
        for (i, place) in &l.results {
            match place {
                Place::Local(x) => fr[x.0 as usize] = rf[*i],
                Place::Global(g) => {
                    self.globals.insert(*g, rf[*i]);
                }
            }
        }
        Ok(())
    }

    fn offset(&self, a: V, idx: &[V], checked: bool) -> R<usize> {
        let arr = self.arr(a)?;
        if idx.len() != arr.dims.len() {
            return bug("wrong number of indices");
        }
        let mut at = 0i64;
        for (d, i) in arr.dims.iter().zip(idx) {
            let i = i.i64();
            if i < 0 || i >= *d {
                if checked {
                    return error(format!("index out of bounds: index {i} in {:?}", arr.dims));
                }
                return bug("unchecked access out of bounds");
            }
            at = at * d + i;
        }
        Ok(at as usize)
    }

    // ---- expressions ---------------------------------------------------------------------

    fn exprs(&mut self, fr: &mut Vec<V>, es: &[Expr]) -> R<Vec<V>> {
        es.iter().map(|e| self.expr(fr, e)).collect()
    }

    fn expr(&mut self, fr: &mut Vec<V>, e: &Expr) -> R<V> {
        Ok(match &e.kind {
            ExprKind::Const(c) => match *c {
                Const::Bool(b) => V::B(b),
                Const::I32(x) => V::I32(x),
                Const::I64(x) => V::I64(x),
                Const::F32(x) => V::F32(x),
                Const::F64(x) => V::F64(x),
            },
            ExprKind::Local(l) => match fr[l.0 as usize] {
                V::Unit => return bug(format!("read of unassigned local {}", l.0)),
                v => v,
            },
            ExprKind::Global(g) => match self.globals.get(g) {
                Some(v) => *v,
                None => return bug(format!("read of unset global {}", g.0)),
            },
            ExprKind::Unary(op, x) => {
                let v = self.expr(fr, x)?;
                match (op, v) {
                    (UnOp::Not, V::B(b)) => V::B(!b),
                    (UnOp::Neg, V::I32(x)) => V::I32(x.wrapping_neg()),
                    (UnOp::Neg, V::I64(x)) => V::I64(x.wrapping_neg()),
                    (UnOp::Neg, V::F32(x)) => V::F32(-x),
                    (UnOp::Neg, V::F64(x)) => V::F64(-x),
                    (UnOp::BitNot, V::I32(x)) => V::I32(!x),
                    (UnOp::BitNot, V::I64(x)) => V::I64(!x),
                    _ => return bug(format!("unary {op:?} on {v:?}")),
                }
            }
            ExprKind::Binary(op, a, b, _) => {
                let x = self.expr(fr, a)?;
                if matches!(op, BinOp::And | BinOp::Or) {
                    if (*op == BinOp::And) != x.bool() {
                        return Ok(x);
                    }
                    return self.expr(fr, b);
                }
                let y = self.expr(fr, b)?;
                binary(*op, x, y)?
            }
            ExprKind::Convert(x) => {
                let v = self.expr(fr, x)?;
                v.convert(e.ty.scalar().unwrap_or(ScalarType::I64))
            }
            ExprKind::Load {
                array,
                indices,
                site,
            } => {
                let a = self.expr(fr, array)?;
                let idx = self.exprs(fr, indices)?;
                let at = self.offset(a, &idx, site.is_some())?;
                let x = self.arr(a)?.data.borrow()[at];
                x
            }
            ExprKind::Call(f, args) => {
                let args = self.exprs(fr, args)?;
                let m = self.m;
                let Some(func) = m.functions.iter().find(|x| x.id == Some(*f)) else {
                    return bug("call of a function of another compile");
                };
                let mut frame = vec![V::Unit; func.locals.len()];
                for (p, a) in func.params.iter().zip(args) {
                    frame[p.0 as usize] = a;
                }
                if self.depth >= 40 {
                    return error("calls too deep for the test interpreter");
                }
                self.depth += 1;
                let flow = self.block(&mut frame, &func.body);
                self.depth -= 1;
                match flow? {
                    Flow::Return(Some(v)) => v,
                    Flow::Return(None) | Flow::Normal if func.ret.is_none() => V::Unit,
                    _ => return bug(format!("`{}` ended without its value", func.name)),
                }
            }
            ExprKind::Builtin(b, args) | ExprKind::CheckedBuiltin(b, args, _) => {
                let vals = self.exprs(fr, args)?;
                self.builtin(*b, &vals, e.ty)?
            }
            ExprKind::Param(name, default, _) => {
                let d = self.expr(fr, default)?;
                let name = &self.m.strings[name.0 as usize];
                match (self.params.get(name), e.ty.scalar()) {
                    (Some(&x), Some(t)) => V::of(t, x, x as i64),
                    _ => d,
                }
            }
            ExprKind::Section { array, ranges } => {
                let a = self.expr(fr, array)?;
                for r in ranges {
                    for x in [&r.start, &r.count].into_iter().flatten() {
                        self.expr(fr, x)?;
                    }
                }
                a
            }
            ExprKind::ArrayLit(xs, _) => {
                let vals = self.exprs(fr, xs)?;
                self.new_array(vec![vals.len() as i64], vals)?
            }
        })
    }

    fn builtin(&mut self, b: Builtin, v: &[V], t: Ty) -> R<V> {
        use Builtin::*;
        let elem = match t {
            Ty::Array { elem, .. } => elem,
            Ty::Scalar(s) => s,
        };
        let f = |i: usize| v.get(i).copied().unwrap_or(V::Unit);
        let make = |it: &mut Self, dims: Vec<i64>, fill: &dyn Fn(usize) -> V| {
            let n = dims.iter().product::<i64>().max(0) as usize;
            let data = (0..n).map(fill).collect();
            it.new_array(dims, data)
        };
        let dims = |from: usize| v[from..].iter().map(|d| d.i64()).collect::<Vec<_>>();
        Ok(match b {
            Zeros => make(self, dims(0), &|_| V::of(elem, 0.0, 0))?,
            Ones => make(self, dims(0), &|_| V::of(elem, 1.0, 1))?,
            Random => make(self, dims(0), &|_| V::of(elem, 0.5, 0))?,
            Fill => {
                let x = f(0);
                make(self, dims(1), &|_| x)?
            }
            Iota => make(self, vec![f(0).i64()], &|i| V::I64(i as i64))?,
            Linspace => {
                let (a, z, n) = (f(0).f64(), f(1).f64(), f(2).i64());
                let step = if n > 1 { (z - a) / (n - 1) as f64 } else { 0.0 };
                make(self, vec![n], &|i| V::F64(a + step * i as f64))?
            }
            Len => V::I64(self.arr(f(0))?.data.borrow().len() as i64),
            Rank => V::I64(self.arr(f(0))?.dims.len() as i64),
            Size => {
                let a = self.arr(f(0))?;
                match a.dims.get(f(1).i64() as usize) {
                    Some(d) => V::I64(*d),
                    None => return error("size: no such dimension"),
                }
            }
            Copy => {
                let a = self.arr(f(0))?;
                let (d, data) = (a.dims.clone(), a.data.borrow().clone());
                self.new_array(d, data)?
            }
            Reshape => {
                let a = self.arr(f(0))?;
                let data = a.data.clone();
                let d = dims(1);
                if d.iter().product::<i64>() != data.borrow().len() as i64 {
                    return error("reshape: element count differs");
                }
                self.heap.push(Arr {
                    dims: d,
                    data,
                    rc: 1,
                    freed: false,
                });
                V::A(self.heap.len() - 1)
            }
            Sum | Product => {
                let xs: Vec<V> = self
                    .arr(f(0))?
                    .data
                    .borrow()
                    .iter()
                    .map(|x| x.convert(elem))
                    .collect();
                let (op, start) = if b == Sum {
                    (BinOp::Add, 0)
                } else {
                    (BinOp::Mul, 1)
                };
                let mut acc = V::of(elem, start as f64, start);
                for x in xs {
                    acc = binary(op, acc, x)?;
                }
                acc
            }
            Maximum | Minimum => {
                let xs: Vec<V> = self.arr(f(0))?.data.borrow().clone();
                let Some(mut best) = xs.first().copied() else {
                    return error("empty array");
                };
                for x in xs {
                    let better = if b == Maximum {
                        x.f64() > best.f64()
                    } else {
                        x.f64() < best.f64()
                    };
                    if better {
                        best = x;
                    }
                }
                best
            }
            Abs | Fabs => match f(0) {
                V::I32(x) => V::I32(x.wrapping_abs()),
                V::I64(x) => V::I64(x.wrapping_abs()),
                x => V::of(elem, x.f64().abs(), 0),
            },
            Min | Max | Fmin | Fmax => {
                let (x, y) = (f(0), f(1));
                let less = x.f64() < y.f64();
                let pick_x = if matches!(b, Min | Fmin) { less } else { !less };
                if pick_x {
                    x
                } else {
                    y
                }
            }
            Sqrt | Cbrt | Exp | Exp2 | Expm1 | Log | Log2 | Log10 | Log1p | Sin | Cos | Tan
            | Asin | Acos | Atan | Sinh | Cosh | Tanh | Floor | Ceil | Round | Trunc => {
                let x = f(0).f64();
                let r = match b {
                    Sqrt => x.sqrt(),
                    Cbrt => x.cbrt(),
                    Exp => x.exp(),
                    Exp2 => x.exp2(),
                    Expm1 => x.exp_m1(),
                    Log => x.ln(),
                    Log2 => x.log2(),
                    Log10 => x.log10(),
                    Log1p => x.ln_1p(),
                    Sin => x.sin(),
                    Cos => x.cos(),
                    Tan => x.tan(),
                    Asin => x.asin(),
                    Acos => x.acos(),
                    Atan => x.atan(),
                    Sinh => x.sinh(),
                    Cosh => x.cosh(),
                    Tanh => x.tanh(),
                    Floor => x.floor(),
                    Ceil => x.ceil(),
                    Round => x.round(),
                    _ => x.trunc(),
                };
                V::of(elem, r, 0)
            }
            Pow | Atan2 | Hypot | Fmod | Copysign => {
                let (x, y) = (f(0).f64(), f(1).f64());
                let r = match b {
                    Pow => x.powf(y),
                    Atan2 => x.atan2(y),
                    Hypot => x.hypot(y),
                    Fmod => x % y,
                    _ => x.copysign(y),
                };
                V::of(elem, r, 0)
            }
            Fma => V::of(elem, f(0).f64().mul_add(f(1).f64(), f(2).f64()), 0),
            Isnan => V::B(f(0).f64().is_nan()),
            Isinf => V::B(f(0).f64().is_infinite()),
            Isfinite => V::B(f(0).f64().is_finite()),
            Clock => V::F64(0.0),
            AccSetDefaultAsync => {
                self.default_async = f(0).i64() as i32;
                V::Unit
            }
            AccGetDefaultAsync => V::I32(self.default_async),
            Seed | AccSetDeviceType | AccSetDeviceNum | AccWait | AccWaitAll | AccWaitAsync => {
                V::Unit
            }
            AccCopyin | AccCreate | AccCopyout | AccDelete | AccUpdateDevice | AccUpdateSelf => {
                self.arr(f(0))?;
                V::Unit
            }
            AccIsPresent => {
                self.arr(f(0))?;
                V::B(true)
            }
            AccMemcpyD2d => {
                // One host device: the arrays are their own copies.
                let dst = self.arr(f(0))?.data.clone();
                let src = self.arr(f(1))?.data.clone();
                let (dl, sl) = (dst.borrow().len(), src.borrow().len());
                if dl != sl {
                    return error(format!(
                        "`acc_memcpy_d2d`: the arrays differ in length ({dl} and {sl})"
                    ));
                }
                let values = src.borrow().clone();
                *dst.borrow_mut() = values;
                V::Unit
            }
            // One rank: collectives return their data as it is.
            MpiRank => V::I32(0),
            MpiSize => V::I32(1),
            MpiWtime => V::F64(0.0),
            MpiBarrier => V::Unit,
            MpiAllreduce | MpiBcast => match f(0) {
                V::A(_) => V::Unit,
                x => x,
            },
            MpiSend | MpiRecv | MpiSendrecv => return Err("MPI messages (not modelled)".into()),
            AccGetNumDevices => V::I32(1),
            AccGetDeviceType => V::I32(2),
            AccGetDeviceNum => V::I32(0),
            AccOnDevice => V::B(f(0).i64() == 2),
            AccAsyncTest | AccAsyncTestAll => V::B(true),
            AccGetProperty => V::I64(0),
            Exit => return Err("exit".into()),
            HostCall => return Err("a host function (not modelled)".into()),
            Imshow | Plot => self.picture(b, v)?,
            Print | Printf | Assert | Param => {
                return bug(format!("{} as an expression", b.name()))
            }
        })
    }

    /// `imshow`/`plot`: the library's checks and its line of output; nothing is drawn.
    fn picture(&mut self, b: Builtin, v: &[V]) -> R<V> {
        let Some((path, arrays)) = v.split_last() else {
            return bug("a picture without its path");
        };
        let mut lengths = Vec::new();
        for &a in arrays {
            lengths.push(self.arr(a)?.data.borrow().len());
        }
        if let [x, y] = lengths[..] {
            if x != y {
                return error(format!("`plot`: x has {x} elements but y has {y}"));
            }
        }
        if lengths.contains(&0) {
            return error(format!("`{}` of an empty array", b.name()));
        }
        let path = match path.i64() {
            p if p >= 0 => self.m.strings[p as usize].clone(),
            _ => {
                self.pictures += 1;
                format!("acc-plot-{}.png", self.pictures)
            }
        };
        self.out.push_str(&format!("wrote {path}\n"));
        Ok(V::Unit)
    }

    fn show(&self, v: V) -> R<String> {
        Ok(match v {
            V::A(_) => {
                let a = self.arr(v)?;
                show_dim(a, 0, 0)
            }
            x => scalar_text(x),
        })
    }
}

/// Dimension `d` of an array from element `base` on: rows one per line, aligned under the
/// first; more than 10 entries elided to the first and last three.
fn show_dim(a: &Arr, d: usize, base: usize) -> String {
    let n = a.dims.get(d).copied().unwrap_or(0).max(0) as usize;
    let stride: usize = a.dims[d + 1..].iter().product::<i64>().max(0) as usize;
    let entries: Vec<Option<usize>> = if n > 10 {
        vec![
            Some(0),
            Some(1),
            Some(2),
            None,
            Some(n - 3),
            Some(n - 2),
            Some(n - 1),
        ]
    } else {
        (0..n).map(Some).collect()
    };
    let last = d + 1 >= a.dims.len();
    let items: Vec<String> = entries
        .into_iter()
        .map(|e| match e {
            None => "...".to_string(),
            Some(i) if last => scalar_text(a.data.borrow()[base + i]),
            Some(i) => show_dim(a, d + 1, base + i * stride),
        })
        .collect();
    let sep = if last {
        ", ".to_string()
    } else {
        format!(",\n{}", " ".repeat(d + 1))
    };
    format!("[{}]", items.join(&sep))
}

fn scalar_text(v: V) -> String {
    match v {
        V::B(b) => b.to_string(),
        V::I32(x) => x.to_string(),
        V::I64(x) => x.to_string(),
        V::F32(x) => float_text(format!("{x:?}")),
        V::F64(x) => float_text(format!("{x:?}")),
        V::A(h) => format!("array{h}"),
        V::Unit => "()".into(),
    }
}

/// Rust's `{:?}` of a float is the shortest round-trip form, plain for 1e-4 <= |x| < 1e16 and
/// with an exponent otherwise: the language's rule, except for the spelling of NaN.
fn float_text(s: String) -> String {
    if s == "NaN" {
        "nan".into()
    } else {
        s
    }
}

/// C's `printf` of one conversion (integers as `long long`, floats as `double`).
fn printf_one(s: &FormatSpec, v: V) -> String {
    let left = s.flags.contains('-');
    let zero = s.flags.contains('0') && !left;
    let plus = s.flags.contains('+');
    let space = s.flags.contains(' ');
    let alt = s.flags.contains('#');
    let (sign, body, numeric) = match s.conv {
        'd' | 'i' => {
            let x = v.i64();
            let mut digits = x.unsigned_abs().to_string();
            if let Some(p) = s.precision {
                if p == 0 && x == 0 {
                    digits.clear();
                }
                while digits.len() < p as usize {
                    digits.insert(0, '0');
                }
            }
            (sign_of(x < 0, plus, space), digits, s.precision.is_none())
        }
        'u' | 'x' => {
            let x = v.i64() as u64;
            let mut digits = if s.conv == 'x' {
                format!("{x:x}")
            } else {
                x.to_string()
            };
            if let Some(p) = s.precision {
                while digits.len() < p as usize {
                    digits.insert(0, '0');
                }
            }
            let prefix = if alt && s.conv == 'x' && x != 0 {
                "0x"
            } else {
                ""
            };
            (prefix.to_string(), digits, s.precision.is_none())
        }
        'c' => (
            String::new(),
            char::from_u32(v.i64() as u32).map_or(String::new(), String::from),
            false,
        ),
        _ => {
            let x = v.f64();
            let neg = x.is_sign_negative() && !x.is_nan();
            let a = x.abs();
            let body = if a.is_nan() {
                "nan".to_string()
            } else if a.is_infinite() {
                "inf".to_string()
            } else {
                let p = s.precision.unwrap_or(6) as usize;
                match s.conv {
                    'f' => {
                        let mut t = format!("{a:.p$}");
                        if alt && p == 0 {
                            t.push('.');
                        }
                        t
                    }
                    'e' => c_exp(a, p, alt),
                    _ => c_general(a, p, alt),
                }
            };
            (sign_of(neg, plus, space), body, a.is_finite())
        }
    };
    let w = s.width.unwrap_or(0) as usize;
    let len = sign.len() + body.chars().count();
    if len >= w {
        format!("{sign}{body}")
    } else if left {
        format!("{sign}{body}{}", " ".repeat(w - len))
    } else if zero && numeric {
        format!("{sign}{}{body}", "0".repeat(w - len))
    } else {
        format!("{}{sign}{body}", " ".repeat(w - len))
    }
}

fn sign_of(neg: bool, plus: bool, space: bool) -> String {
    if neg {
        "-".into()
    } else if plus {
        "+".into()
    } else if space {
        " ".into()
    } else {
        String::new()
    }
}

/// `%e` of a non-negative finite value.
fn c_exp(a: f64, p: usize, alt: bool) -> String {
    let t = format!("{a:.p$e}");
    let (mant, exp) = t.split_once('e').unwrap_or((&t, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut mant = mant.to_string();
    if alt && p == 0 {
        mant.push('.');
    }
    format!("{mant}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

/// `%g` of a non-negative finite value.
fn c_general(a: f64, p: usize, alt: bool) -> String {
    let p = p.max(1);
    let e = format!("{a:.*e}", p - 1);
    let x: i32 = e.split_once('e').map_or(0, |(_, x)| x.parse().unwrap_or(0));
    let mut t = if (p as i32) > x && x >= -4 {
        let prec = (p as i32 - 1 - x) as usize;
        format!("{a:.prec$}")
    } else {
        c_exp(a, p - 1, alt)
    };
    if !alt {
        let (m, rest) = match t.find('e') {
            Some(i) => (t[..i].to_string(), t[i..].to_string()),
            None => (t.clone(), String::new()),
        };
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            m
        };
        t = m + &rest;
    }
    t
}

fn binary(op: BinOp, x: V, y: V) -> R<V> {
    use BinOp::*;
    Ok(match (x, y) {
        (V::I32(a), V::I32(b)) => match op {
            Add => V::I32(a.wrapping_add(b)),
            Sub => V::I32(a.wrapping_sub(b)),
            Mul => V::I32(a.wrapping_mul(b)),
            Div | Rem if b == 0 => return error("integer division by zero"),
            Div => V::I32(a.wrapping_div(b)),
            Rem => V::I32(a.wrapping_rem(b)),
            BitAnd => V::I32(a & b),
            BitOr => V::I32(a | b),
            BitXor => V::I32(a ^ b),
            Shl => V::I32(a.wrapping_shl(b as u32)),
            Shr => V::I32(a.wrapping_shr(b as u32)),
            _ => compare(op, a.cmp(&b))?,
        },
        (V::I64(a), V::I64(b)) => match op {
            Add => V::I64(a.wrapping_add(b)),
            Sub => V::I64(a.wrapping_sub(b)),
            Mul => V::I64(a.wrapping_mul(b)),
            Div | Rem if b == 0 => return error("integer division by zero"),
            Div => V::I64(a.wrapping_div(b)),
            Rem => V::I64(a.wrapping_rem(b)),
            BitAnd => V::I64(a & b),
            BitOr => V::I64(a | b),
            BitXor => V::I64(a ^ b),
            Shl => V::I64(a.wrapping_shl(b as u32)),
            Shr => V::I64(a.wrapping_shr(b as u32)),
            _ => compare(op, a.cmp(&b))?,
        },
        (V::F32(a), V::F32(b)) => match op {
            Add => V::F32(a + b),
            Sub => V::F32(a - b),
            Mul => V::F32(a * b),
            Div => V::F32(a / b),
            Rem => V::F32(a % b),
            _ => float_compare(op, a as f64, b as f64)?,
        },
        (V::F64(a), V::F64(b)) => match op {
            Add => V::F64(a + b),
            Sub => V::F64(a - b),
            Mul => V::F64(a * b),
            Div => V::F64(a / b),
            Rem => V::F64(a % b),
            _ => float_compare(op, a, b)?,
        },
        (V::B(a), V::B(b)) => match op {
            BitAnd => V::B(a & b),
            BitOr => V::B(a | b),
            BitXor => V::B(a ^ b),
            _ => compare(op, a.cmp(&b))?,
        },
        // Shifts by another integer type.
        (V::I32(_), y) | (V::I64(_), y) if matches!(op, Shl | Shr) => {
            return binary(
                op,
                x,
                y.convert(if matches!(x, V::I32(_)) {
                    ScalarType::I32
                } else {
                    ScalarType::I64
                }),
            )
        }
        _ => return bug(format!("binary {op:?} of {x:?} and {y:?}")),
    })
}

fn compare(op: BinOp, o: std::cmp::Ordering) -> R<V> {
    use std::cmp::Ordering::*;
    Ok(V::B(match op {
        BinOp::Eq => o == Equal,
        BinOp::Ne => o != Equal,
        BinOp::Lt => o == Less,
        BinOp::Le => o != Greater,
        BinOp::Gt => o == Greater,
        BinOp::Ge => o != Less,
        _ => return bug(format!("{op:?} is not a comparison")),
    }))
}

fn float_compare(op: BinOp, a: f64, b: f64) -> R<V> {
    Ok(V::B(match op {
        BinOp::Eq => a == b,
        BinOp::Ne => a != b,
        BinOp::Lt => a < b,
        BinOp::Le => a <= b,
        BinOp::Gt => a > b,
        BinOp::Ge => a >= b,
        _ => return bug(format!("{op:?} on floats")),
    }))
}

fn combine(op: ReductionOp, a: V, b: V) -> V {
    use ReductionOp as R;
    let r = match op {
        R::Add => binary(BinOp::Add, a, b),
        R::Mul => binary(BinOp::Mul, a, b),
        R::BitAnd => binary(BinOp::BitAnd, a, b),
        R::BitOr => binary(BinOp::BitOr, a, b),
        R::BitXor => binary(BinOp::BitXor, a, b),
        R::And => Ok(V::B(a.bool() && b.bool())),
        R::Or => Ok(V::B(a.bool() || b.bool())),
        R::Max => Ok(if b.f64() > a.f64() { b } else { a }),
        R::Min => Ok(if b.f64() < a.f64() { b } else { a }),
    };
    r.unwrap_or(V::Unit)
}
