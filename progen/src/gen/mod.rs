//! The program generator: a program is a few routines followed by independent *units*, each of
//! which declares its own data, runs one OpenACC scenario and prints what it computed.
//!
//! Every unit is written so that its output is the same on every device:
//! - each loop iteration writes only its own elements; iterations communicate only through
//!   reductions and atomics, and those use integers or exact floats (see `expr.rs`);
//! - atomic captures print only order-free facts (sum, minimum, maximum of what was captured);
//! - the host reads data only after it has been copied back (exit data, end of a data region,
//!   `update host`) and after waiting for the queue that copied it, so a discrete device
//!   (`emulated`, `nvidia`) prints what a shared-memory one (`host`, `multicore`) prints.
//!
//! Units live at the top level (their variables are globals) or inside a function that the
//! next line calls (locals).

use crate::expr::{ArrayVar, ExprGen, RoutineSig, Scope};
use crate::rng::Rng;
use crate::tree::{Expr, Node, Piece, Program, Ty};

mod atomics;
mod data;
mod elementwise;
mod halo;
mod output;
mod private;
mod reduce;

/// What the generator may produce.
#[derive(Clone, Debug)]
pub struct Config {
    /// At most this many units per program.
    pub max_units: usize,
    /// Also generate forms that hit bugs known and being fixed (atomic capture into an array
    /// element, reshape views of present data): programs that use them differ or are flaky on
    /// multicore and emulated until then.
    pub known_bugs: bool,
    /// Now and then end a program with a run-time error (same diagnostic expected everywhere).
    pub errors: bool,
    /// Now and then add `devices(all)` (or `devices(0, 1)`, `devices(1, 0)`) to a compute
    /// construct or a data region: the program must print the same with it, on any number of
    /// devices (`emulated@N`). Drawn from a random stream of its own, so a seed gives the same
    /// program with or without it, apart from these clauses.
    pub devices: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_units: 4,
            known_bugs: false,
            errors: true,
            devices: true,
        }
    }
}

/// The program for `seed`.
pub fn generate(seed: u64, cfg: &Config) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        drng: Rng::new(seed ^ 0xd5a1_7c3b_0e49_8f26),
        next_id: 0,
        cfg: cfg.clone(),
        routines: Vec::new(),
    };
    let mut nodes = g.routines();
    let units = 1 + g.rng.below(cfg.max_units);
    for u in 0..units {
        nodes.push(g.unit(u));
    }
    // (Its own draws: the rest of the program is the same with a sweep or without, and with
    // devices clauses or without.)
    let mut sweep = Rng::new(seed ^ 0x6a09_e667_f3bc_c909);
    if sweep.chance(12) {
        nodes.push(g.halo_sweep(units, &mut sweep));
    }
    if cfg.errors && g.rng.chance(6) {
        nodes.push(g.error_unit(units));
    }
    let header = format!("// acc-progen seed {seed}\n");
    Program { header, nodes }
}

fn t(s: impl Into<String>) -> Piece {
    Piece::T(s.into())
}

fn e(x: Expr) -> Piece {
    Piece::E(x)
}

/// A pending asynchronous queue: `None` is the default async queue.
type Queue = Option<usize>;

struct Gen {
    rng: Rng,
    /// The stream for `devices(…)` clauses only (see [`Config::devices`]).
    drng: Rng,
    next_id: u32,
    cfg: Config,
    routines: Vec<RoutineSig>,
}

/// The index list `i0, i1, …` of a loop nest of rank `r`.
fn idx(r: usize) -> String {
    (0..r)
        .map(|k| format!("i{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn dims_text(dims: &[usize]) -> String {
    dims.iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

impl Gen {
    fn ex(&mut self) -> ExprGen<'_> {
        ExprGen {
            rng: &mut self.rng,
            next_id: &mut self.next_id,
        }
    }

    fn node(&mut self, pre: Vec<String>, line: Vec<Piece>, body: Option<Vec<Node>>) -> Node {
        self.next_id += 1;
        Node {
            id: self.next_id,
            pre,
            line,
            body,
            group: false,
            removable: true,
        }
    }

    fn stmt(&mut self, line: Vec<Piece>) -> Node {
        self.node(vec![], line, None)
    }

    /// A statement the shrinker must keep (a wait, a copy back: without it the program would
    /// be wrong on a discrete device rather than smaller).
    ///
    /// Declarations and prints stay removable: without them the program either fails to
    /// compile everywhere (not interesting to the shrinker) or just prints less.
    fn fixed(&mut self, text: impl Into<String>) -> Node {
        let text = text.into();
        let keep = !(text.starts_with("let ") || text.starts_with("print("));
        let mut n = self.stmt(vec![t(text)]);
        n.removable = !keep;
        n
    }

    fn block(&mut self, pre: Vec<String>, line: Vec<Piece>, body: Vec<Node>) -> Node {
        self.node(pre, line, Some(body))
    }

    fn group(&mut self, body: Vec<Node>) -> Node {
        let mut n = self.node(vec![], vec![], Some(body));
        n.group = true;
        n
    }

    fn int_ty(&mut self) -> Ty {
        self.rng.pick(&[Ty::I32, Ty::I64, Ty::I64])
    }

    /// A value for `x op= v` with `op` one of `+ * & | ^`: for an `i32` x, sometimes an `i64`
    /// value (the result is narrowed, which commutes with these operators, so the reduction
    /// or atomic stays order-free).
    fn wide_value(&mut self, sc: &Scope, ty: Ty, depth: u32) -> Expr {
        if ty == Ty::I32 && self.rng.chance(30) {
            self.ex().int(sc, Ty::I64, depth)
        } else {
            self.ex().order_free(sc, ty, depth)
        }
    }

    /// An array element type: sometimes `bool`.
    fn elem_ty(&mut self) -> Ty {
        if self.rng.chance(10) {
            Ty::Bool
        } else {
            self.num_ty()
        }
    }

    fn num_ty(&mut self) -> Ty {
        self.rng
            .pick(&[Ty::I32, Ty::I64, Ty::I64, Ty::F32, Ty::F64])
    }

    fn scope(&self) -> Scope {
        Scope {
            routines: self.routines.clone(),
            ..Scope::default()
        }
    }

    /// Zero to three routines (`acc routine seq` or implicit), each may call the earlier ones.
    fn routines(&mut self) -> Vec<Node> {
        let mut out = Vec::new();
        for k in 0..self.rng.below(4) {
            let name = format!("r{k}");
            let ret = self.rng.pick(&[Ty::I64, Ty::I32, Ty::F64]);
            let mut sc = self.scope().with("p", Ty::I64).with("q", Ty::I32);
            let tty = if ret.is_float() { Ty::F64 } else { Ty::I64 };
            let v = self.ex().value(&sc, tty, 3);
            let mut body = vec![self.stmt(vec![t("let t = "), e(v)])];
            sc = sc.with("t", tty);
            if self.rng.chance(50) {
                let inner = sc.with("j", Ty::I64);
                let v = self.ex().value(&inner, tty, 2);
                let upd = self.stmt(vec![t("t = t + "), e(v)]);
                let n = 1 + self.rng.below(4);
                body.push(self.block(vec![], vec![t(format!("for j in 0..{n}"))], vec![upd]));
            }
            if self.rng.chance(40) {
                let c = self.ex().boolean(&sc, 2);
                let v = self.ex().value(&sc, tty, 2);
                let upd = self.stmt(vec![t("t = "), e(v)]);
                body.push(self.block(vec![], vec![t("if "), e(c)], vec![upd]));
            }
            let r = self.ex().value(&sc, ret, 2);
            let mut ret_node = self.stmt(vec![t("return "), e(r)]);
            ret_node.removable = false;
            body.push(ret_node);
            let pre = if self.rng.chance(70) {
                vec!["acc routine seq".to_string()]
            } else {
                vec![]
            };
            let sig = format!("fn {name}(p: i64, q: i32) -> {}", ret.name());
            let f = self.block(pre, vec![t(sig)], body);
            out.push(f);
            self.routines.push(RoutineSig {
                name,
                params: vec![Ty::I64, Ty::I32],
                ret,
            });
        }
        out
    }

    /// One unit, at the top level or wrapped in a function called right after it.
    fn unit(&mut self, u: usize) -> Node {
        let (globals, body) = match self.rng.below(15) {
            0..=2 => self.elementwise(u),
            3..=4 => self.reduction(u),
            5 => self.private(u),
            6..=7 => self.atomics(u),
            8..=9 => self.data_movement(u),
            10 | 11 => self.row_reduction(u),
            12 => self.device_print(u),
            13 if self.rng.chance(60) => self.array_params(u),
            _ => self.scalar_data(u),
        };
        let mut nodes = globals;
        if self.rng.chance(30) {
            let f = self.block(vec![], vec![t(format!("fn unit{u}()"))], body);
            nodes.push(f);
            let call = self.fixed(format!("unit{u}()"));
            nodes.push(call);
        } else {
            nodes.extend(body);
        }
        self.group(nodes)
    }

    /// Extents of a rank-`r` array, at most 4096 elements.
    fn dims(&mut self, r: usize) -> Vec<usize> {
        let sizes = [1, 2, 3, 4, 5, 7, 8, 13, 16, 33, 64, 100, 257];
        let mut d = Vec::new();
        let mut total = 1;
        for _ in 0..r {
            let mut n = self.rng.pick(&sizes);
            while total * n > 4096 {
                n = self.rng.pick(&sizes[..8]);
            }
            total *= n;
            d.push(n);
        }
        d
    }

    /// `let name = zeros(ty, dims)` and a host loop nest that fills it.
    fn host_array(&mut self, name: &str, ty: Ty, dims: &[usize], sc: &Scope) -> Vec<Node> {
        let decl = self.stmt(vec![t(format!(
            "let {name} = zeros({}, {})",
            ty.name(),
            dims_text(dims)
        ))]);
        let mut inner = sc.clone();
        for k in 0..dims.len() {
            inner = inner.with(&format!("i{k}"), Ty::I64);
        }
        let v = self.ex().value(&inner, ty, 2);
        let mut body = vec![self.stmt(vec![t(format!("{name}[{}] = ", idx(dims.len()))), e(v)])];
        for k in (0..dims.len()).rev() {
            body = vec![self.block(vec![], vec![t(format!("for i{k} in 0..{}", dims[k]))], body)];
        }
        let mut out = vec![decl];
        out.extend(body);
        out
    }

    /// The loop levels of a nest of depth `r` inside construct `kind`: one `acc loop` clause
    /// text (or `None`: a plain sequential `for`) per level, outermost first.
    fn levels(&mut self, kind: Construct, r: usize) -> Vec<Option<String>> {
        let opt = |s: &str| {
            if s.is_empty() {
                None
            } else {
                Some(s.to_string())
            }
        };
        match kind {
            Construct::Serial => (0..r)
                .map(|_| {
                    if self.rng.chance(30) {
                        Some("seq".to_string())
                    } else {
                        None
                    }
                })
                .collect(),
            Construct::Kernels => {
                let outer =
                    self.rng
                        .pick(&["", "independent", "gang", "seq", "auto", "gang vector"]);
                let mut v = vec![opt(outer)];
                for _ in 1..r {
                    let vector_used = outer.contains("vector")
                        || v.iter().any(|l| l.as_deref() == Some("vector"));
                    let inner = if vector_used {
                        self.rng.pick(&["", "seq"])
                    } else {
                        self.rng.pick(&["", "independent", "vector", "seq"])
                    };
                    v.push(opt(inner));
                }
                v
            }
            Construct::Parallel => {
                let shapes: &[&[&str]] = match r {
                    1 => &[
                        &[""],
                        &["gang"],
                        &["gang vector"],
                        &["gang worker"],
                        &["gang worker vector"],
                        // No gang loop: the construct runs as one gang (7.1).
                        &["worker"],
                        &["vector"],
                        &["worker vector"],
                        &["seq"],
                    ],
                    2 => &[
                        &["", ""],
                        &["gang", "vector"],
                        &["gang", "worker"],
                        &["gang worker", "vector"],
                        &["gang", "seq"],
                        &["", "vector"],
                        &["gang", "worker vector"],
                        &["gang vector", ""],
                        &["worker", "vector"],
                        &["seq", "vector"],
                    ],
                    _ => &[
                        &["", "", ""],
                        &["gang", "worker", "vector"],
                        &["gang", "seq", "vector"],
                        &["gang", "", "vector"],
                        &["gang", "worker", "seq"],
                        &["gang worker", "vector", ""],
                        &["seq", "worker", "vector"],
                    ],
                };
                let s = self.rng.pick(shapes);
                (0..r)
                    .map(|k| {
                        let text = s.get(k).copied().unwrap_or("");
                        // The outer level always carries a directive (it is the shared loop).
                        if k == 0 {
                            Some(text.to_string())
                        } else {
                            opt(text)
                        }
                    })
                    .collect()
            }
        }
    }

    fn print_array(&mut self, name: &str, ty: Ty) -> Node {
        let text = match self.rng.below(3) {
            0 => format!("print({name})"),
            _ if ty == Ty::Bool => format!("print({name})"),
            1 => format!("print(sum({name}), minimum({name}), maximum({name}))"),
            _ => format!("print({name}, sum({name}))"),
        };
        self.fixed(text)
    }

    /// A `devices(…)` clause for a compute construct (not `serial`) or a data region, now and
    /// then; `""` otherwise. The draws come from `drng`, so the rest of the program does not
    /// depend on them.
    fn devices(&mut self) -> String {
        if !self.cfg.devices || !self.drng.chance(30) {
            return String::new();
        }
        match self.drng.below(8) {
            0 => "devices(0, 1)".into(),
            1 => "devices(1, 0)".into(),
            _ => "devices(all)".into(),
        }
    }

    /// `" devices(…)"` now and then (see [`Gen::devices`]), to append to a directive.
    fn devices_suffix(&mut self) -> String {
        match self.devices() {
            d if d.is_empty() => d,
            d => format!(" {d}"),
        }
    }

    /// `clauses` with a `devices(…)` clause (see [`Gen::devices`]) at a random place among them
    /// (there is no `device_type` among generated clauses, which it may not follow).
    fn with_devices(&mut self, clauses: &str) -> String {
        let d = self.devices();
        if d.is_empty() {
            return clauses.to_string();
        }
        let mut v: Vec<&str> = if clauses.trim().is_empty() {
            Vec::new()
        } else {
            vec![clauses.trim()]
        };
        // before or after the other clauses
        let at = self.drng.below(v.len() + 1);
        v.insert(at, &d);
        v.join(" ")
    }

    /// Adds a `devices(…)` clause (see [`Gen::devices`]) at a random place in `clauses`, now
    /// and then.
    fn push_devices(&mut self, clauses: &mut Vec<String>) {
        let d = self.devices();
        if !d.is_empty() {
            let at = self.drng.below(clauses.len() + 1);
            clauses.insert(at, d);
        }
    }

    fn queue(&mut self) -> Queue {
        if self.rng.chance(20) {
            None
        } else {
            Some(self.rng.below(4))
        }
    }

    /// Some way of waiting for queue `q` on the host.
    fn wait_for(&mut self, q: Queue) -> Node {
        let text = match (q, self.rng.below(4)) {
            (_, 0) => "acc wait".to_string(),
            (_, 1) => "acc_wait_all()".to_string(),
            (Some(q), 2) => format!("acc_wait({q})"),
            (Some(q), _) => format!("acc wait({q})"),
            (None, _) => "acc wait".to_string(),
        };
        self.fixed(text)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Construct {
    Parallel,
    Kernels,
    Serial,
}

impl Construct {
    fn name(self) -> &'static str {
        match self {
            Construct::Parallel => "parallel",
            Construct::Kernels => "kernels",
            Construct::Serial => "serial",
        }
    }
}

fn async_clause(q: Queue) -> String {
    match q {
        Some(q) => format!("async({q})"),
        None => "async".into(),
    }
}

/// Collapses runs of spaces left by empty clause texts.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
