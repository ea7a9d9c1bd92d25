//! The IR as text: what `acc --emit ir` prints and what lowering's snapshot tests compare.
//!
//! Layout: globals, then each function, `main`, each region, and the table of check sites.
//! Locals print by name (`x`; temporaries `$t0`), with `.N` (the local's number) added where
//! two locals of one body share a name; globals print as `@name`. A check names its site after
//! the checked expression or statement (`a[i]!s3`, `(n / d)!s4`). Constants carry their type
//! (`1i64`, `0.5f64`); `f64(x)` is a conversion; `call f(…)` calls a user function and
//! `name(…)` a built-in.

use std::fmt::{self, Write};

use super::*;

impl fmt::Display for Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut p = Printer {
            module: self,
            names: Vec::new(),
            out: String::new(),
            depth: 0,
        };
        p.module();
        f.write_str(&p.out)
    }
}

struct Printer<'m> {
    module: &'m Module,
    /// The names of the current body's locals.
    names: Vec<String>,
    out: String,
    depth: usize,
}

impl Printer<'_> {
    fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn module(&mut self) {
        let m = self.module;
        for g in &m.globals {
            let text = format!("global @{}: {}", g.name, ty(g.ty));
            self.line(&text);
        }
        if !m.globals.is_empty() {
            self.out.push('\n');
        }
        for f in &m.functions {
            self.function(f);
            self.out.push('\n');
        }
        self.function(&m.main);
        for r in &m.regions {
            self.out.push('\n');
            self.region(r);
        }
        if !m.sites.is_empty() {
            self.out.push('\n');
            self.line("sites");
            for (i, s) in m.sites.iter().enumerate() {
                let what = if s.what.is_empty() {
                    String::new()
                } else {
                    format!(" {}", s.what)
                };
                let id = m.first_site as usize + i;
                let text = format!("  s{id} {}..{}{what}", s.span.start, s.span.end);
                self.line(&text);
            }
        }
    }

    fn set_locals(&mut self, locals: &[Local]) {
        self.names = locals
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let shared = locals.iter().filter(|x| x.name == l.name).count() > 1;
                if shared {
                    format!("{}.{i}", l.name)
                } else {
                    l.name.clone()
                }
            })
            .collect();
    }

    fn locals_line(&mut self, locals: &[Local], skip: usize) {
        let list: Vec<String> = locals
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, l)| format!("{}: {}", self.local(LocalId(i as u32)), ty(l.ty)))
            .collect();
        if !list.is_empty() {
            let text = format!("  locals {}", list.join(", "));
            self.line(&text);
        }
    }

    fn function(&mut self, f: &Function) {
        self.set_locals(&f.locals);
        let params: Vec<String> = f
            .params
            .iter()
            .map(|&p| {
                let t = f.locals.get(p.0 as usize).map_or("?".into(), |l| ty(l.ty));
                format!("{}: {t}", self.local(p))
            })
            .collect();
        let mut head = match f.id {
            Some(_) => format!("fn {}({})", f.name, params.join(", ")),
            None => f.name.clone(),
        };
        if let Some(r) = f.ret {
            let _ = write!(head, " -> {}", ty(r));
        }
        if let Some(level) = f.device {
            let _ = write!(head, " [device {}]", level.name());
        }
        self.line(&head);
        self.locals_line(&f.locals, f.params.len());
        self.block_braced(&f.body);
    }

    fn region(&mut self, r: &Region) {
        self.set_locals(&r.locals);
        let text = format!("region {}: {}", r.id.0, r.construct.name());
        self.line(&text);
        let params: Vec<String> = r
            .params
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let pass = match p.pass {
                    Pass::Value => "value",
                    Pass::InOut => "inout",
                    Pass::Private => "private",
                    Pass::Array => "array",
                    Pass::PrivateArray => "private array",
                    Pass::FirstPrivateArray => "firstprivate array",
                };
                format!("{}: {} {pass}", self.local(LocalId(i as u32)), ty(p.ty))
            })
            .collect();
        if !params.is_empty() {
            let text = format!("  params {}", params.join(", "));
            self.line(&text);
        }
        self.locals_line(&r.locals, r.params.len());
        for red in &r.reductions {
            let text = format!(
                "  reduction {}: {} into {}",
                red.reduction.op.as_str(),
                self.local(red.reduction.var),
                self.local(LocalId(red.param as u32))
            );
            self.line(&text);
        }
        for d in &r.distinct {
            let text = format!(
                "  distinct {} {} (checked at launch) !s{}",
                self.local(LocalId(d.written as u32)),
                self.local(LocalId(d.other as u32)),
                d.site.0
            );
            self.line(&text);
        }
        if let Some(plan) = &r.split {
            let devices = match &plan.devices {
                acc_abi::split::DeviceList::All => "all".to_string(),
                acc_abi::split::DeviceList::Numbers(ns) => ns
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            let text = match &plan.split {
                Ok(cut) => {
                    let arrays: Vec<String> = cut
                        .arrays
                        .iter()
                        .map(|a| {
                            format!(
                                "{} reads {:?} writes {:?}",
                                self.local(LocalId(a.param as u32)),
                                a.reads,
                                a.writes
                            )
                        })
                        .collect();
                    format!(
                        "  split devices({devices}) block [{}, {}) of {:?}; {}",
                        self.local(LocalId(cut.lo_param as u32)),
                        self.local(LocalId(cut.hi_param as u32)),
                        cut.counted,
                        arrays.join("; ")
                    )
                }
                Err(why) => format!("  devices({devices}) not split: {why}"),
            };
            self.line(&text);
        }
        self.block_braced(&r.body);
    }

    fn block_braced(&mut self, b: &Block) {
        self.line("{");
        self.block(b);
        self.line("}");
    }

    fn block(&mut self, b: &Block) {
        self.depth += 1;
        for s in b {
            self.stmt(s);
        }
        self.depth -= 1;
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Set(l, e) => {
                let text = format!("{} = {}", self.local(*l), self.expr(e));
                self.line(&text);
            }
            Stmt::SetGlobal(g, e) => {
                let text = format!("{} = {}", self.global(*g), self.expr(e));
                self.line(&text);
            }
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                let text = format!(
                    "{}[{}]{} = {}",
                    self.base(array),
                    self.list(indices),
                    site_suffix(*site),
                    self.expr(value)
                );
                self.line(&text);
            }
            Stmt::Eval(e) => {
                let text = format!("eval {}", self.expr(e));
                self.line(&text);
            }
            Stmt::If { cond, then, els } => {
                let text = format!("if {} {{", self.expr(cond));
                self.line(&text);
                self.block(then);
                if !els.is_empty() {
                    self.line("} else {");
                    self.block(els);
                }
                self.line("}");
            }
            Stmt::While { cond, body, .. } => {
                let text = format!("while {} {{", self.expr(cond));
                self.line(&text);
                self.block(body);
                self.line("}");
            }
            Stmt::For(f) => {
                let text = format!(
                    "for {} in {}{}{} step {}{}{} {{",
                    self.local(f.var),
                    self.expr(&f.start),
                    if f.inclusive { "..=" } else { ".." },
                    self.expr(&f.end),
                    self.expr(&f.step),
                    site_suffix(f.step_site),
                    self.schedule(&f.schedule)
                );
                self.line(&text);
                self.block(&f.body);
                self.line("}");
            }
            Stmt::Break => self.line("break"),
            Stmt::Continue => self.line("continue"),
            Stmt::Return(None) => self.line("return"),
            Stmt::Return(Some(e)) => {
                let text = format!("return {}", self.expr(e));
                self.line(&text);
            }
            Stmt::Retain(e) => {
                let text = format!("retain {}", self.expr(e));
                self.line(&text);
            }
            Stmt::Release(e) => {
                let text = format!("release {}", self.expr(e));
                self.line(&text);
            }
            Stmt::Print(args, site) => {
                let args: Vec<String> = args
                    .iter()
                    .map(|a| match a {
                        PrintArg::Value(e) => self.expr(e),
                        PrintArg::Str(s) => self.string(*s),
                    })
                    .collect();
                let text = format!("print({})!s{}", args.join(", "), site.0);
                self.line(&text);
            }
            Stmt::Printf(fmt, args, site) => {
                let mut parts = vec![self.format(*fmt)];
                parts.extend(args.iter().map(|a| self.expr(a)));
                let text = format!("printf({})!s{}", parts.join(", "), site.0);
                self.line(&text);
            }
            Stmt::Assert {
                cond,
                message,
                site,
            } => {
                let mut text = format!("assert {}", self.expr(cond));
                if let Some(m) = message {
                    let _ = write!(text, ", {}", self.string(*m));
                }
                let _ = write!(text, " !s{}", site.0);
                self.line(&text);
            }
            Stmt::Launch(l) => self.launch(l),
            Stmt::Data(d) => {
                let phase = match d.phase {
                    DataPhase::RegionEntry => "data entry",
                    DataPhase::RegionExit => "data exit",
                    DataPhase::Enter => "enter data",
                    DataPhase::Exit => "exit data",
                    DataPhase::Update => "update",
                };
                let text = format!("{phase} {}", self.data(d));
                self.line(&text);
            }
            Stmt::DataRegion { enter, body, exit } => {
                let text = format!("data region {} {{", self.data(enter));
                self.line(&text);
                self.block(body);
                let text = format!("}} exit {}", self.data(exit));
                self.line(&text);
            }
            Stmt::Wait {
                queues,
                async_queue,
                site,
            } => {
                let mut text = "wait".to_string();
                if !queues.is_empty() {
                    let _ = write!(text, "({})", self.list(queues));
                }
                if let Some(q) = async_queue {
                    text.push_str(&self.queue(q));
                }
                let _ = write!(text, " !s{}", site.0);
                self.line(&text);
            }
            Stmt::Atomic(a) => {
                let kind = match a.kind {
                    AtomicKind::Update => "update",
                    AtomicKind::Read => "read",
                    AtomicKind::Write => "write",
                    AtomicKind::Capture => "capture",
                };
                match &*a.body {
                    Stmt::Block(b) => {
                        self.line(&format!("atomic {kind} {{"));
                        self.block(b);
                        self.line("}");
                    }
                    other => {
                        let start = self.out.len();
                        self.stmt(other);
                        let indent = "  ".repeat(self.depth);
                        self.out
                            .insert_str(start + indent.len(), &format!("atomic {kind} "));
                    }
                }
            }
            Stmt::Block(b) => {
                self.line("{");
                self.block(b);
                self.line("}");
            }
        }
    }

    fn launch(&mut self, l: &Launch) {
        let construct = self
            .module
            .regions
            .get(l.region.0 as usize)
            .map_or("?", |r| r.construct.name());
        let text = format!("launch region {} ({construct}) !s{}", l.region.0, l.site.0);
        self.line(&text);
        self.depth += 1;
        if !l.args.is_empty() {
            let text = format!("args {}", self.list(&l.args));
            self.line(&text);
        }
        for (i, place) in &l.results {
            let text = format!("result {} <- param {i}", self.place(place));
            self.line(&text);
        }
        if l.results_after > 0 {
            let n = l.results_after;
            let text = format!(
                "results taken after {n} launch{}",
                if n == 1 { "" } else { "es" }
            );
            self.line(&text);
        }
        if let Some(c) = &l.if_cond {
            let text = format!("if {}", self.expr(c));
            self.line(&text);
        }
        for (name, d) in [
            ("num_gangs", &l.num_gangs),
            ("num_workers", &l.num_workers),
            ("vector_length", &l.vector_length),
        ] {
            let per: Vec<String> = [
                ("nvidia", &d.nvidia),
                ("host", &d.host),
                ("multicore", &d.multicore),
            ]
            .into_iter()
            .filter_map(|(dev, e)| e.as_ref().map(|e| format!("{dev}={}", self.expr(e))))
            .collect();
            if !per.is_empty() {
                let text = format!("{name} {}", per.join(" "));
                self.line(&text);
            }
        }
        if let Some(q) = &l.async_queue {
            let text = self.queue(q).trim_start().to_string();
            self.line(&text);
        }
        if let Some(w) = &l.wait {
            let text = format!("wait({})", self.list(w));
            self.line(&text);
        }
        if !l.data.is_empty() {
            let ops: Vec<String> = l.data.iter().map(|op| self.data_op(op)).collect();
            let text = format!("data {}", ops.join(", "));
            self.line(&text);
        }
        self.depth -= 1;
    }

    fn data(&self, d: &DataDirective) -> String {
        let ops: Vec<String> = d.ops.iter().map(|op| self.data_op(op)).collect();
        let mut text = ops.join(", ");
        if let Some(c) = &d.if_cond {
            let _ = write!(text, " if({})", self.expr(c));
        }
        if let Some(q) = &d.async_queue {
            text.push_str(&self.queue(q));
        }
        if let Some(w) = &d.wait {
            let _ = write!(text, " wait({})", self.list(w));
        }
        if d.modifiers.contains(DataModifiers::FINALIZE) {
            text.push_str(" finalize");
        }
        if d.modifiers.contains(DataModifiers::IF_PRESENT) {
            text.push_str(" if_present");
        }
        match d.modifiers.device_list() {
            Some(acc_abi::split::DeviceList::All) => text.push_str(" devices(all)"),
            Some(acc_abi::split::DeviceList::Numbers(ns)) => {
                let ns: Vec<String> = ns.iter().map(i64::to_string).collect();
                let _ = write!(text, " devices({})", ns.join(", "));
            }
            None => {}
        }
        let _ = write!(text, " !s{}", d.site.0);
        text
    }

    fn data_op(&self, op: &DataOp) -> String {
        let action = match op.action {
            DataAction::Clause(c) => c.name(),
            DataAction::Update(UpdateDir::Host) => "host",
            DataAction::Update(UpdateDir::Self_) => "self",
            DataAction::Update(UpdateDir::Device) => "device",
        };
        let mut text = format!("{action}({}", self.expr(&op.array));
        if let Some(ranges) = &op.ranges {
            let _ = write!(text, "[{}]", self.ranges(ranges));
        }
        text.push(')');
        text
    }

    fn queue(&self, q: &Queue) -> String {
        match q {
            Queue::Default => " async".into(),
            Queue::Numbered(e) => format!(" async({})", self.expr(e)),
        }
    }

    fn schedule(&self, s: &LoopSchedule) -> String {
        let mut parts: Vec<String> = Vec::new();
        for (on, name) in [(s.gang, "gang"), (s.worker, "worker"), (s.vector, "vector")] {
            if on {
                parts.push(name.into());
            }
        }
        if s.collapse > 1 {
            parts.push(format!("collapse({})", s.collapse));
        }
        for red in &s.reductions {
            parts.push(format!(
                "reduction({}: {})",
                red.op.as_str(),
                self.local(red.var)
            ));
        }
        if parts.is_empty() {
            String::new()
        } else {
            format!(" [{}]", parts.join(" "))
        }
    }

    // ---- expressions ---------------------------------------------------------------------

    fn expr(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::Const(c) => c.to_string(),
            ExprKind::Local(l) => self.local(*l),
            ExprKind::Global(g) => self.global(*g),
            ExprKind::Unary(op, x) => {
                let op = match op {
                    UnOp::Neg => "-",
                    UnOp::Not => "!",
                    UnOp::BitNot => "~",
                };
                format!("{op}{}", self.expr(x))
            }
            ExprKind::Binary(op, a, b, site) => format!(
                "({} {} {}){}",
                self.expr(a),
                op.as_str(),
                self.expr(b),
                site_suffix(*site)
            ),
            ExprKind::Convert(x) => format!("{}({})", ty(e.ty), self.expr(x)),
            ExprKind::Load {
                array,
                indices,
                site,
            } => format!(
                "{}[{}]{}",
                self.base(array),
                self.list(indices),
                site_suffix(*site)
            ),
            ExprKind::Call(f, args) => {
                let name = self
                    .module
                    .functions
                    .iter()
                    .find(|x| x.id == Some(*f))
                    .map_or_else(|| format!("fn{}", f.0), |x| x.name.clone());
                format!("call {name}({})", self.list(args))
            }
            ExprKind::Builtin(b, args) => format!("{}({})", b.name(), self.list(args)),
            ExprKind::CheckedBuiltin(b @ (Builtin::Imshow | Builtin::Plot), args, site) => {
                // The path is a string's number: shown as the string.
                let (path, arrays) = match args.split_last() {
                    Some((p, a)) => (Some(p), a),
                    None => (None, &args[..]),
                };
                let path = match path.map(|p| &p.kind) {
                    Some(ExprKind::Const(Const::I64(s))) if *s >= 0 => {
                        format!(", {}", self.string(StringId(*s as u32)))
                    }
                    _ => String::new(),
                };
                format!("{}({}{path})!s{}", b.name(), self.list(arrays), site.0)
            }
            ExprKind::CheckedBuiltin(b, args, site) => {
                format!("{}({})!s{}", b.name(), self.list(args), site.0)
            }
            ExprKind::Param(name, default, site) => {
                format!(
                    "param({}, {})!s{}",
                    self.string(*name),
                    self.expr(default),
                    site.0
                )
            }
            ExprKind::Section { array, ranges } => {
                format!("{}[{}]", self.base(array), self.ranges(ranges))
            }
            ExprKind::ArrayLit(xs, site) => format!("[{}]!s{}", self.list(xs), site.0),
        }
    }

    /// An indexed expression: parenthesized unless it is a variable.
    fn base(&self, e: &Expr) -> String {
        match e.kind {
            ExprKind::Local(_) | ExprKind::Global(_) => self.expr(e),
            _ => format!("({})", self.expr(e)),
        }
    }

    fn list(&self, xs: &[Expr]) -> String {
        xs.iter()
            .map(|x| self.expr(x))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn ranges(&self, ranges: &[SectionRange]) -> String {
        ranges
            .iter()
            .map(|r| {
                format!(
                    "{}:{}",
                    r.start.as_ref().map_or(String::new(), |x| self.expr(x)),
                    r.count.as_ref().map_or(String::new(), |x| self.expr(x))
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn local(&self, l: LocalId) -> String {
        self.names
            .get(l.0 as usize)
            .cloned()
            .unwrap_or_else(|| format!("%{}", l.0))
    }

    fn global(&self, g: GlobalId) -> String {
        match self.module.globals.iter().find(|x| x.id == g) {
            Some(x) => format!("@{}", x.name),
            None => format!("@g{}", g.0),
        }
    }

    fn place(&self, p: &Place) -> String {
        match p {
            Place::Local(l) => self.local(*l),
            Place::Global(g) => self.global(*g),
        }
    }

    fn string(&self, s: StringId) -> String {
        match self.module.strings.get(s.0 as usize) {
            Some(text) => format!("{text:?}"),
            None => format!("str{}", s.0),
        }
    }

    /// A format as the C format string it stands for.
    fn format(&self, f: FormatId) -> String {
        let Some(pieces) = self.module.formats.get(f.0 as usize) else {
            return format!("fmt{}", f.0);
        };
        let mut text = String::new();
        for p in pieces {
            match p {
                FormatPiece::Text(t) => text.push_str(&t.replace('%', "%%")),
                FormatPiece::Spec(s) => text.push_str(&s.text()),
            }
        }
        format!("{text:?}")
    }
}

fn site_suffix(site: Option<SiteId>) -> String {
    site.map_or(String::new(), |s| format!("!s{}", s.0))
}

fn ty(t: Ty) -> String {
    match t {
        Ty::Scalar(s) => s.name().to_string(),
        Ty::Array { elem, rank } => {
            format!(
                "{}[{}]",
                elem.name(),
                ",".repeat(rank.saturating_sub(1) as usize)
            )
        }
    }
}
