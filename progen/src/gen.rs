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
}

impl Default for Config {
    fn default() -> Config {
        Config {
            max_units: 4,
            known_bugs: false,
            errors: true,
        }
    }
}

/// The program for `seed`.
pub fn generate(seed: u64, cfg: &Config) -> Program {
    let mut g = Gen {
        rng: Rng::new(seed),
        next_id: 0,
        cfg: cfg.clone(),
        routines: Vec::new(),
    };
    let mut nodes = g.routines();
    let units = 1 + g.rng.below(cfg.max_units);
    for u in 0..units {
        nodes.push(g.unit(u));
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

    // ---------------------------------------------------------------- routines

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

    // ---------------------------------------------------------------- units

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
                    ],
                    _ => &[
                        &["", "", ""],
                        &["gang", "worker", "vector"],
                        &["gang", "seq", "vector"],
                        &["gang", "", "vector"],
                        &["gang", "worker", "seq"],
                        &["gang worker", "vector", ""],
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

    /// An element-wise loop nest: `y[i…] = f(x, i…)`, in every compute construct, schedule,
    /// collapse and tile, with the data in clauses, a data region or enter/exit data.
    fn elementwise(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let r = self.rng.pick(&[1, 1, 2, 2, 3, 3, 4]);
        let dims = self.dims(r);
        let (x, y, s) = (format!("x{u}"), format!("y{u}"), format!("s{u}"));
        let (tin, tout, sty) = (self.elem_ty(), self.elem_ty(), self.int_ty());
        let mut out = Vec::new();
        let sv = self.ex().literal(sty);
        let decl = self.stmt(vec![t(format!("let {s}: {} = ", sty.name())), e(sv)]);
        out.push(decl);
        let base = self.scope().with(&s, sty);
        out.extend(self.host_array(&x, tin, &dims, &base));
        let ydecl = self.stmt(vec![t(format!(
            "let {y} = zeros({}, {})",
            tout.name(),
            dims_text(&dims)
        ))]);
        out.push(ydecl);

        let kind = self.rng.pick(&[
            Construct::Parallel,
            Construct::Parallel,
            Construct::Kernels,
            Construct::Serial,
        ]);
        let wrap = self.rng.below(6);
        let ycl = self.rng.below(4);
        // Loops that skip elements leave them as they were: only where y is copied in.
        let gaps_ok = wrap == 2 || (wrap <= 1 && ycl != 1);
        let combined = self.rng.chance(60);
        let mut levels = self.levels(kind, r);
        // collapse / tile over the outer loops of a perfect nest
        let mut nest_clause = String::new();
        let mut perfect = 0;
        if r >= 2 && kind != Construct::Serial && self.rng.chance(45) {
            perfect = 2 + self.rng.below(r - 1);
            if self.rng.chance(50) {
                nest_clause = format!(" collapse({perfect})");
            } else {
                let sizes: Vec<String> = (0..perfect)
                    .map(|_| self.rng.pick(&["1", "2", "3", "4", "8", "*"]).to_string())
                    .collect();
                nest_clause = format!(" tile({})", sizes.join(", "));
            }
            let lvl = if kind == Construct::Parallel {
                "gang"
            } else {
                "independent"
            };
            levels[0] = Some(if self.rng.chance(50) {
                lvl.to_string()
            } else {
                String::new()
            });
            for l in levels.iter_mut().take(perfect).skip(1) {
                *l = None;
            }
            for l in levels.iter_mut().skip(perfect) {
                if l.as_deref().is_some_and(|s| s != "seq") {
                    *l = Some("seq".into());
                }
            }
        }

        // The loop nest, innermost first.
        let mut sc = base.clone();
        sc.arrays.push(ArrayVar {
            name: x.clone(),
            ty: tin,
            dims: dims.clone(),
        });
        // a gang-redundant local of a parallel region, read by the loop
        let has_g = kind == Construct::Parallel && !combined && self.rng.chance(30);
        if has_g {
            sc = sc.with("g", Ty::I64);
        }
        let mut scopes = vec![sc.clone()];
        // t_scope[k]: what `let tk`, between loops k and k + 1 (an imperfect nest), may read
        let mut t_scope: Vec<Option<Scope>> = vec![None; r];
        let mut headers = Vec::new();
        for k in 0..r {
            let (d, i) = (dims[k], format!("i{k}"));
            let (header, ity) = match self.rng.below(12) {
                0 => (format!("for {i} in {} ..= 0 step -1", d - 1), Ty::I64),
                1 => (format!("for {i} in 0i32..{d}i32"), Ty::I32),
                2 if gaps_ok => {
                    let st = self.rng.pick(&[2, 3]);
                    (
                        format!("for {i} in {} .. {d} step {st}", self.rng.below(2)),
                        Ty::I64,
                    )
                }
                3 if gaps_ok => (format!("for {i} in {d} - 1 .. -1 step -2"), Ty::I64),
                4 => (format!("for {i} in 0..={}", d - 1), Ty::I64),
                _ => (format!("for {i} in 0..{d}"), Ty::I64),
            };
            headers.push(header);
            sc = sc.with(&i, ity);
            if k + 1 >= perfect && k + 1 < r && self.rng.chance(30) {
                t_scope[k] = Some(sc.clone());
                sc = sc.with(&format!("t{k}"), Ty::I64);
            }
            scopes.push(sc.clone());
        }
        let target = format!("{y}[{}] = ", idx(r));
        let mut body = self.element_body(&target, tout, &scopes[r]);
        if gaps_ok && self.rng.chance(15) {
            // `continue` skips some elements (they keep the value copied in)
            let c = self.ex().boolean(&scopes[r], 2);
            let skip = self.fixed("continue");
            let n = self.block(vec![], vec![t("if "), e(c)], vec![skip]);
            body.insert(0, n);
        }
        for k in (0..r).rev() {
            let mut pre = Vec::new();
            if k > 0 {
                if let Some(l) = &levels[k] {
                    pre.push(format!("acc loop {l}").trim_end().to_string());
                }
            }
            let header = headers[k].clone();
            let lp = self.block(pre, vec![t(header)], body);
            body = vec![lp];
            // a private scalar computed between levels (imperfect nest)
            if let Some(ts) = k.checked_sub(1).and_then(|p| t_scope[p].clone()) {
                let v = self.ex().int(&ts, Ty::I64, 2);
                let tn = self.stmt(vec![t(format!("let t{} = ", k - 1)), e(v)]);
                body.insert(0, tn);
            }
        }
        let outer_level = levels[0].clone().unwrap_or_default();

        // Clauses of the compute construct and the data around it.
        let mut clauses = Vec::new();
        if kind == Construct::Parallel && self.rng.chance(30) {
            clauses.push(format!("num_gangs({})", self.rng.pick(&[1, 2, 3, 4, 8])));
        }
        if kind == Construct::Parallel && self.rng.chance(25) {
            clauses.push(format!(
                "vector_length({})",
                self.rng.pick(&[1, 32, 64, 128, 256])
            ));
        }
        if kind == Construct::Parallel && self.rng.chance(20) {
            clauses.push(format!("num_workers({})", self.rng.pick(&[1, 2, 4])));
        }
        if self.rng.chance(20) {
            clauses.push(format!("firstprivate({s})"));
        }
        let mut async_q: Option<Queue> = None;
        let mut data_q: Option<Queue> = None;
        match wrap {
            0 | 1 => {
                match ycl {
                    0 => clauses.push(format!("copyin({x}) copy({y})")),
                    1 => clauses.push(format!("copyin({x}) copyout({y})")),
                    2 => clauses.push(format!("copy({x}, {y})")),
                    _ => {}
                }
                if self.rng.chance(20) {
                    clauses.push(format!("if({s} >= 0)"));
                }
                if self.rng.chance(30) {
                    let q = self.queue();
                    clauses.push(async_clause(q));
                    async_q = Some(q);
                }
            }
            2 | 3 => clauses.push(self.rng.pick(&[
                format!("present({x}, {y})"),
                "default(present)".to_string(),
                String::new(),
            ])),
            _ => {
                clauses.push(format!("present({x}) present({y})"));
                if wrap == 5 {
                    // enter data, the region and exit data all on one queue: ordered
                    let q = self.queue();
                    clauses.push(async_clause(q));
                    data_q = Some(q);
                }
            }
        }
        if wrap <= 1 && self.rng.chance(15) && clauses.iter().any(|c| c.starts_with("copyin")) {
            clauses.push("default(none)".into());
            if !clauses.iter().any(|c| c.starts_with("firstprivate")) {
                clauses.push(format!("firstprivate({s})"));
            }
        }
        let clause_text = clauses
            .iter()
            .filter(|c| !c.is_empty())
            .cloned()
            .collect::<Vec<_>>()
            .join(" ");
        let kname = kind.name();
        let compute = if combined {
            let line = format!("acc {kname} loop {outer_level}{nest_clause} {clause_text}");
            let mut lp = body.pop().unwrap();
            lp.pre = vec![squash(&line)];
            lp.removable = false;
            let mut v = body;
            v.push(lp);
            v
        } else {
            let mut lp = body.pop().unwrap();
            if kind != Construct::Serial || !outer_level.is_empty() || !nest_clause.is_empty() {
                lp.pre = vec![squash(&format!("acc loop {outer_level}{nest_clause}"))];
            }
            let mut inner = body;
            inner.push(lp);
            if has_g {
                // a gang-redundant private local used by the loop
                let v = self.ex().int(&base, Ty::I64, 2);
                let g = self.stmt(vec![t("let g = "), e(v)]);
                inner.insert(0, g);
            }
            if kind == Construct::Kernels && tout != Ty::Bool && self.rng.chance(50) {
                // a second loop nest, its own kernel, reading what the first one wrote
                let one = tout.literal(1);
                let w = self.fixed(format!("{y}[{0}] = {y}[{0}] + {one}", idx(r)));
                let mut nest = vec![w];
                for h in headers.iter().rev() {
                    let mut l = self.block(vec![], vec![t(h.clone())], nest);
                    l.removable = false;
                    nest = vec![l];
                }
                inner.extend(nest);
            }
            let mut region = self.block(
                vec![],
                vec![t(squash(&format!("acc {kname} {clause_text}")))],
                inner,
            );
            region.removable = false;
            vec![region]
        };
        let mut compute = compute;
        if let Some(q) = async_q {
            compute.push(self.wait_for(q));
        }
        match wrap {
            2 => {
                let r = self.block(
                    vec![],
                    vec![t(format!("acc data copyin({x}) copy({y})"))],
                    compute,
                );
                out.push(r);
            }
            3 => {
                compute.push(self.fixed(format!("acc update host({y})")));
                let r = self.block(
                    vec![],
                    vec![t(format!("acc data copyin({x}) create({y})"))],
                    compute,
                );
                out.push(r);
            }
            4 | 5 => {
                let q = data_q;
                let a = q
                    .map(|q| format!(" {}", async_clause(q)))
                    .unwrap_or_default();
                out.push(self.fixed(format!("acc enter data copyin({x}) create({y}){a}")));
                out.extend(compute);
                out.push(self.fixed(format!("acc exit data copyout({y}) delete({x}){a}")));
                if let Some(q) = q {
                    out.push(self.wait_for(q));
                }
            }
            _ => out.extend(compute),
        }
        out.push(self.print_array(&y, tout));
        (vec![], out)
    }

    /// The statements of one iteration that write `target` (`y[i…] = `).
    fn element_body(&mut self, target: &str, ty: Ty, sc: &Scope) -> Vec<Node> {
        let choice = self.rng.below(5);
        // (no running sum of bools)
        let choice = if ty == Ty::Bool && choice == 2 {
            3
        } else {
            choice
        };
        match choice {
            0 => {
                let v = self.ex().value(sc, ty, 3);
                let tn = self.stmt(vec![t("let t = "), e(v)]);
                let sc2 = sc.with("t", ty);
                let w = self.ex().value(&sc2, ty, 3);
                vec![tn, self.stmt(vec![t(target), e(w)])]
            }
            1 => {
                let c = self.ex().boolean(sc, 3);
                let a = self.ex().value(sc, ty, 3);
                let b = self.ex().value(sc, ty, 3);
                let then = vec![self.stmt(vec![t(target), e(a)])];
                let els = self.stmt(vec![t(target), e(b)]);
                let mut n = self.block(vec![], vec![t("if "), e(c)], then);
                n.removable = false;
                let mut el = self.block(vec![], vec![t("else")], vec![els]);
                el.removable = false;
                // printed as `if c { … }` then `else { … }` on the next line: acc continues an
                // `if` when `else` follows its `}`.
                vec![n, el]
            }
            2 => {
                let v = self.ex().value(sc, ty, 2);
                let a = self.stmt(vec![t("let w = "), e(v)]);
                let inner = sc.with("w", ty).with("q", Ty::I64);
                let w = self.ex().value(&inner, ty, 2);
                let upd = self.stmt(vec![t("w = w + "), e(w)]);
                let n = 1 + self.rng.below(4);
                let lp = if self.rng.chance(50) {
                    self.block(vec![], vec![t(format!("for q in 0..{n}"))], vec![upd])
                } else {
                    // the same as a while loop, with a break that may end it early
                    let c = self.ex().boolean(&inner, 1);
                    let brk = self.fixed("break");
                    let b = self.block(vec![], vec![t("if "), e(c)], vec![brk]);
                    let inc = self.fixed("q += 1");
                    let mut wl =
                        self.block(vec![], vec![t(format!("while q < {n}"))], vec![upd, b, inc]);
                    wl.removable = false;
                    let q0 = self.fixed("let q = 0");
                    self.group(vec![q0, wl])
                };
                let sc2 = sc.with("w", ty);
                let fin = self.ex().value(&sc2, ty, 1);
                vec![a, lp, self.stmt(vec![t(target), e(fin)])]
            }
            _ => {
                let v = self.ex().value(sc, ty, 4);
                vec![self.stmt(vec![t(target), e(v)])]
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

    // ---------------------------------------------------------------- reductions

    fn reduction(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let n = self.rng.pick(&[1, 2, 7, 16, 33, 100, 257, 1000]);
        let m = self.rng.pick(&[1, 3, 4, 9]);
        let shape = self.rng.below(9);
        let nested = matches!(shape, 5 | 6);
        let mut out = Vec::new();
        let mut vars = Vec::new();
        for k in 0..1 + self.rng.below(3) {
            let ty = self
                .rng
                .pick(&[Ty::I32, Ty::I64, Ty::I64, Ty::F32, Ty::F64, Ty::Bool]);
            let op = match ty {
                Ty::Bool => self.rng.pick(&["&&", "||"]),
                Ty::I32 | Ty::I64 => self.rng.pick(&["+", "*", "max", "min", "&", "|", "^"]),
                _ => self.rng.pick(&["+", "+", "*", "max", "min"]),
            };
            let name = format!("r{u}_{k}");
            let init = match (ty, op) {
                (Ty::Bool, _) => self.ex().literal(Ty::Bool),
                (_, "*") if ty.is_float() => {
                    let v = 1 + self.rng.below(3) as i64;
                    self.ex().atom(ty.literal(v), ty)
                }
                _ if ty.is_float() => {
                    let v = self.rng.below(20) as i64 - 5;
                    self.ex().atom(ty.literal(v), ty)
                }
                _ => self.ex().literal(ty),
            };
            let d = self.stmt(vec![t(format!("let {name}: {} = ", ty.name())), e(init)]);
            out.push(d);
            vars.push((name, ty, op));
        }
        let arr = format!("d{u}");
        let aty = self.int_ty();
        out.extend(self.host_array(&arr, aty, &[n], &self.scope()));
        let mut sc = self.scope();
        sc.arrays.push(ArrayVar {
            name: arr.clone(),
            ty: aty,
            dims: vec![n],
        });
        let sc_i = sc.with("i", Ty::I64);
        let sc_ij = sc_i.with("j", Ty::I64);
        let inner_sc = if nested || shape == 7 { &sc_ij } else { &sc_i };
        // float products: few enough factors of 2 or 0.5 to stay exact
        let float_mul_ok = n * if nested || shape == 7 { m } else { 1 } <= 100;
        let mut updates = Vec::new();
        for (name, ty, op) in vars.iter_mut() {
            if ty.is_float() && *op == "*" && !float_mul_ok {
                *op = "+";
            }
            let upd = self.reduction_update(name, *ty, op, inner_sc);
            updates.push(upd);
        }
        if self.rng.chance(15) {
            let c = self.ex().boolean(inner_sc, 2);
            let skip = self.fixed("continue");
            let n = self.block(vec![], vec![t("if "), e(c)], vec![skip]);
            updates.insert(0, n);
        }
        let clause = |vars: &[(String, Ty, &str)], rng: &mut Rng| -> String {
            if rng.chance(50) {
                vars.iter()
                    .map(|(n, _, op)| format!("reduction({op}: {n})"))
                    .collect::<Vec<_>>()
                    .join(" ")
            } else {
                // one clause per operator, listing its variables
                let mut ops: Vec<&str> = vars.iter().map(|v| v.2).collect();
                ops.dedup();
                ops.sort();
                ops.dedup();
                ops.iter()
                    .map(|op| {
                        let names: Vec<&str> = vars
                            .iter()
                            .filter(|v| v.2 == *op)
                            .map(|v| v.0.as_str())
                            .collect();
                        format!("reduction({op}: {})", names.join(", "))
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            }
        };
        let red = clause(&vars, &mut self.rng);
        let loop_i = |g: &mut Gen, pre: Vec<String>, body: Vec<Node>| {
            let mut l = g.block(pre, vec![t(format!("for i in 0..{n}"))], body);
            l.removable = false;
            l
        };
        let loop_j = |g: &mut Gen, pre: Vec<String>, body: Vec<Node>| {
            let mut l = g.block(pre, vec![t(format!("for j in 0..{m}"))], body);
            l.removable = false;
            l
        };
        let gangs = self.rng.pick(&[1, 2, 3, 4]);
        // if(false) and self(true) run the construct on the host
        let ifc = self.rng.pick(&[
            "",
            "",
            "",
            " if(true)",
            " if(false)",
            " self(true)",
            " self(false)",
            // a construct with a reduction waits for its own queue, even with async
            " async(1)",
            " async",
        ]);
        let nest = self.rng.pick(&["collapse(2)", "tile(2, 2)", "tile(*, 3)"]);
        let compute: Vec<Node> = match shape {
            0 => vec![loop_i(
                self,
                vec![format!("acc parallel loop {red}{ifc}")],
                updates,
            )],
            1 => vec![loop_i(
                self,
                vec![format!("acc kernels loop {red}{ifc}")],
                updates,
            )],
            2 => vec![loop_i(
                self,
                vec![format!("acc serial loop {red}{ifc}")],
                updates,
            )],
            3 => {
                let l = loop_i(self, vec![format!("acc loop {red}")], updates);
                let mut p = self.block(
                    vec![],
                    vec![t(format!("acc parallel num_gangs({gangs})"))],
                    vec![l],
                );
                p.removable = false;
                vec![p]
            }
            4 => {
                // the clause on the parallel construct covers the loop that does not repeat it,
                // and gang-redundant updates (once per gang)
                let l = loop_i(self, vec!["acc loop".into()], updates);
                let mut body = vec![l];
                if let Some((name, ty, "+")) = vars.first().cloned() {
                    if ty.is_int() {
                        body.push(self.stmt(vec![t(format!("{name} += 1"))]));
                    }
                }
                let mut p = self.block(
                    vec![],
                    vec![t(format!("acc parallel num_gangs({gangs}) {red}"))],
                    body,
                );
                p.removable = false;
                vec![p]
            }
            5 | 6 => {
                let inner_dir = if shape == 5 {
                    format!("acc loop {red}")
                } else {
                    format!("acc loop vector {red}")
                };
                let inner = loop_j(self, vec![inner_dir], updates);
                vec![loop_i(
                    self,
                    vec![format!("acc parallel loop {red}")],
                    vec![inner],
                )]
            }
            7 => {
                let inner = loop_j(self, vec![], updates);
                vec![loop_i(
                    self,
                    vec![format!("acc parallel loop {nest} {red}")],
                    vec![inner],
                )]
            }
            _ => {
                let l = loop_i(self, vec![], updates);
                let mut p = self.block(vec![], vec![t(format!("acc serial {red}"))], vec![l]);
                p.removable = false;
                vec![p]
            }
        };
        out.extend(compute);
        let names: Vec<String> = vars.iter().map(|v| v.0.clone()).collect();
        out.push(self.fixed(format!("print({})", names.join(", "))));
        (vec![], out)
    }

    /// One update of reduction variable `name` with operator `op`.
    fn reduction_update(&mut self, name: &str, ty: Ty, op: &str, sc: &Scope) -> Node {
        let line = match op {
            "&&" | "||" => {
                let c = self.ex().boolean(sc, 3);
                vec![t(format!("{name} = {name} {op} ")), e(c)]
            }
            "*" if ty.is_float() => {
                let c = self.ex().boolean(sc, 2);
                let (two, half) = (ty.literal(2), format!("0.5{}", ty.name()));
                let f = self.ex().frozen(
                    ty,
                    &["(if ", &format!(" {{ {two} }} else {{ {half} }})")],
                    vec![c],
                );
                vec![t(format!("{name} *= ")), e(f)]
            }
            "max" | "min" => {
                let v = self.ex().order_free(sc, ty, 3);
                if self.rng.chance(70) {
                    vec![t(format!("{name} = {op}({name}, ")), e(v), t(")")]
                } else {
                    let cmp = if op == "max" { ">" } else { "<" };
                    let v2 = v.clone();
                    let set = self.stmt(vec![t(format!("{name} = ")), e(v2)]);
                    return self.block(
                        vec![],
                        vec![t("if "), e(v), t(format!(" {cmp} {name}"))],
                        vec![set],
                    );
                }
            }
            _ => {
                let v = self.wide_value(sc, ty, 3);
                match self.rng.below(3) {
                    0 => vec![t(format!("{name} {op}= ")), e(v)],
                    1 => vec![t(format!("{name} = {name} {op} ")), e(v)],
                    _ => vec![e(v), t(format!(" {op} {name}"))].into_iter().fold(
                        vec![t(format!("{name} = "))],
                        |mut a, p| {
                            a.push(p);
                            a
                        },
                    ),
                }
            }
        };
        self.stmt(line)
    }

    // ---------------------------------------------------------------- private / firstprivate

    fn private(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let n = self.rng.pick(&[1, 5, 16, 100]);
        let (y, p, f, tmp) = (
            format!("y{u}"),
            format!("p{u}"),
            format!("f{u}"),
            format!("tmp{u}"),
        );
        let ty = self.num_ty();
        let k = self.rng.pick(&[1, 2, 3, 5]);
        let mut out = Vec::new();
        let pv = self.ex().literal(ty);
        let fv = self.ex().literal(ty);
        for (name, v) in [(&p, pv), (&f, fv)] {
            let d = self.stmt(vec![t(format!("let {name}: {} = ", ty.name())), e(v)]);
            out.push(d);
        }
        out.extend(self.host_array(&tmp, ty, &[k], &self.scope()));
        let yd = self.fixed(format!("let {y} = zeros({}, {n})", ty.name()));
        out.push(yd);
        let sc = self.scope().with("i", Ty::I64).with(&f, ty);
        let mut sc_t = sc.clone();
        sc_t.arrays.push(ArrayVar {
            name: tmp.clone(),
            ty,
            dims: vec![k],
        });
        match self.rng.below(6) {
            0 | 1 => {
                // private scalar and private array, written before they are read
                let v = self.ex().value(&sc, ty, 3);
                let mut body = vec![self.stmt(vec![t(format!("{p} = ")), e(v)])];
                let inner = sc.with("q", Ty::I64).with(&p, ty);
                let w = self.ex().value(&inner, ty, 2);
                let fill = self.stmt(vec![t(format!("{tmp}[q] = ")), e(w)]);
                let mut l = self.block(vec![], vec![t(format!("for q in 0..{k}"))], vec![fill]);
                l.removable = false;
                body.push(l);
                let mut sc2 = sc_t.with(&p, ty);
                sc2.scalars.push((p.clone(), ty));
                let r = self.ex().value(&sc2, ty, 3);
                body.push(self.stmt(vec![t(format!("{y}[i] = ")), e(r)]));
                let fp = if self.rng.chance(50) {
                    format!(" firstprivate({f})")
                } else {
                    String::new()
                };
                let dir = if self.rng.chance(50) {
                    format!("acc parallel loop private({p}, {tmp}){fp}")
                } else {
                    format!("acc parallel loop private({p}) private({tmp}){fp}")
                };
                let mut l = self.block(vec![dir], vec![t(format!("for i in 0..{n}"))], body);
                l.removable = false;
                if self.rng.chance(40) {
                    // the same as an orphaned loop in a parallel region
                    l.pre = vec![format!("acc loop private({p}, {tmp})")];
                    let mut r = self.block(vec![], vec![t(format!("acc parallel{fp}"))], vec![l]);
                    r.removable = false;
                    out.push(r);
                } else {
                    out.push(l);
                }
            }
            5 => {
                // a private array of a gang loop, filled by its vector loop and read after
                // it by the gang loop's (vector-single) code
                let inner = sc.with("q", Ty::I64);
                let w = self.ex().value(&inner, ty, 3);
                let fill = self.stmt(vec![t(format!("{tmp}[q] = ")), e(w)]);
                let mut vl = self.block(
                    vec!["acc loop vector".into()],
                    vec![t(format!("for q in 0..{k}"))],
                    vec![fill],
                );
                vl.removable = false;
                let zero = ty.literal(0);
                let acc0 = self.fixed(format!("let w: {} = {zero}", ty.name()));
                let add = self.fixed(format!("w = w + {tmp}[q]"));
                let mut sl = self.block(vec![], vec![t(format!("for q in 0..{k}"))], vec![add]);
                sl.removable = false;
                let st = self.fixed(format!("{y}[i] = w"));
                let vlen = self.rng.pick(&["", " vector_length(32)", " num_gangs(2)"]);
                let mut l = self.block(
                    vec![format!("acc parallel loop gang private({tmp}){vlen}")],
                    vec![t(format!("for i in 0..{n}"))],
                    vec![vl, acc0, sl, st],
                );
                l.removable = false;
                out.push(l);
            }
            2 => {
                // firstprivate arrays and scalars are read-only copies
                let r = self.ex().value(&sc_t, ty, 3);
                let body = vec![self.stmt(vec![t(format!("{y}[i] = ")), e(r)])];
                let mut l = self.block(
                    vec![format!("acc parallel loop firstprivate({tmp}, {f})")],
                    vec![t(format!("for i in 0..{n}"))],
                    body,
                );
                l.removable = false;
                out.push(l);
            }
            _ => {
                // a serial region may write its firstprivate copy; the host's is unchanged
                let sc0 = self.scope().with(&f, ty);
                let v = self.ex().value(&sc0, ty, 2);
                let w = self.ex().value(&sc0, ty, 2);
                let body = vec![
                    self.stmt(vec![t(format!("{f} = ")), e(v)]),
                    self.stmt(vec![t(format!("{y}[0] = ")), e(w)]),
                ];
                let mut r = self.block(
                    vec![],
                    vec![t(format!("acc serial firstprivate({f}) copy({y})"))],
                    body,
                );
                r.removable = false;
                out.push(r);
            }
        }
        out.push(self.fixed(format!("print({y}, {p}, {f}, {tmp})")));
        (vec![], out)
    }

    // ---------------------------------------------------------------- atomics

    fn atomics(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let n = self.rng.pick(&[1, 3, 16, 64, 100, 500]);
        let bins = self.rng.pick(&[1, 2, 4, 7]);
        let shape = self.rng.below(4); // 0 parallel loop, 1 kernels loop, 2 parallel + loop, 3 serial loop
        let mut globals = Vec::new();
        let mut out = Vec::new();
        let mut body = Vec::new();
        let mut copies = Vec::new();
        let mut prints = Vec::new();
        let sc = self.scope().with("i", Ty::I64);
        for k in 0..1 + self.rng.below(3) {
            let ty = self
                .rng
                .pick(&[Ty::I32, Ty::I64, Ty::I64, Ty::F32, Ty::F64]);
            let x = format!("a{u}_{k}");
            // where the atomic's location lives: a scalar (global or local, by `copy` or kernels'
            // implicit copy) or an array element
            let elem = self.rng.chance(30);
            let loc = if elem {
                format!("{x}[i % {bins}]")
            } else {
                x.clone()
            };
            let form = self.rng.below(10);
            let init = match form {
                7 => ty.literal(1),
                _ => ty.literal(self.rng.below(10) as i64),
            };
            let decl = if elem {
                format!("let {x} = fill({init}, {bins})")
            } else {
                format!("let {x}: {} = {init}", ty.name())
            };
            let d = self.fixed(decl);
            if !elem && self.rng.chance(30) {
                globals.push(d);
            } else {
                out.push(d);
            }
            copies.push(x.clone());
            prints.push(x.clone());
            match form {
                0..=4 => {
                    // update: one operator class per location, so the result is order-free
                    let ops: &[&str] = if ty.is_int() {
                        &["+", "-", "*", "/", "&", "|", "^", "max", "min"]
                    } else {
                        &["+", "-", "*", "/", "max", "min"]
                    };
                    let op = self.rng.pick(ops);
                    for _ in 0..1 + self.rng.below(2) {
                        let st = self.atomic_update(&loc, ty, op, &sc, n);
                        body.push(st);
                    }
                }
                5 => {
                    // read of a location nobody writes in the region
                    let v = format!("v{k}");
                    let got = format!("got{u}_{k}");
                    out.push(self.fixed(format!("let {got} = zeros({}, {n})", ty.name())));
                    copies.push(got.clone());
                    prints.push(format!("sum({got})"));
                    body.push(self.fixed(format!("let {v}: {} = {}", ty.name(), ty.literal(0))));
                    let mut r = self.fixed(format!("{v} = {loc}"));
                    r.pre = vec!["acc atomic read".into()];
                    body.push(r);
                    body.push(self.fixed(format!("{got}[i] = {v}")));
                }
                6 => {
                    // write of one value from every iteration
                    let base = self.scope();
                    let v = self.ex().value(&base, ty, 2);
                    let mut w = self.stmt(vec![t(format!("{loc} = ")), e(v)]);
                    w.pre = vec!["acc atomic write".into()];
                    body.push(w);
                }
                _ => {
                    // capture: the captured values are a permutation, whatever the order
                    let c = 1 + self.rng.below(3) as i64;
                    let seen = format!("seen{u}_{k}");
                    out.push(self.fixed(format!("let {seen} = zeros({}, {n})", ty.name())));
                    copies.push(seen.clone());
                    prints.push(format!("sum({seen}), minimum({seen}), maximum({seen})"));
                    let into_elem = self.cfg.known_bugs && self.rng.chance(30);
                    let v = if into_elem {
                        format!("{seen}[i]")
                    } else {
                        format!("c{k}")
                    };
                    if !into_elem {
                        body.push(self.fixed(format!(
                            "let {v}: {} = {}",
                            ty.name(),
                            ty.literal(0)
                        )));
                    }
                    let lit = ty.literal(c);
                    let upd = self.rng.pick(&[
                        format!("{loc} += {lit}"),
                        format!("{loc} = {loc} + {lit}"),
                        format!("{loc} -= {lit}"),
                    ]);
                    let read = format!("{v} = {loc}");
                    let (s1, s2) = if self.rng.chance(50) {
                        (read, upd)
                    } else {
                        (upd, read)
                    };
                    let b = vec![self.fixed(s1), self.fixed(s2)];
                    let mut cap = self.block(vec!["acc atomic capture".into()], vec![], b);
                    cap.removable = false;
                    body.push(cap);
                    if !into_elem {
                        body.push(self.fixed(format!("{seen}[i] = {v}")));
                    }
                }
            }
        }
        if body.is_empty() {
            return (globals, out);
        }
        let mut copy = format!("copy({})", copies.join(", "));
        let mut lp = self.block(vec![], vec![t(format!("for i in 0..{n}"))], body);
        lp.removable = false;
        match shape {
            0 => {
                lp.pre = vec![format!("acc parallel loop {copy}")];
                out.push(lp);
            }
            1 => {
                // kernels: scalars are copy without a clause
                let cl = if self.rng.chance(50) {
                    copy
                } else {
                    String::new()
                };
                lp.pre = vec![squash(&format!("acc kernels loop {cl}"))];
                out.push(lp);
            }
            2 => {
                lp.pre = vec!["acc loop".into()];
                let g = self.rng.pick(&[
                    "",
                    " num_gangs(3)",
                    " vector_length(32)",
                    " num_gangs(2) num_workers(2)",
                ]);
                let mut inner = vec![lp];
                if g.contains("num_gangs") {
                    // gang-redundant code runs once per gang: an atomic count of the gangs
                    let gc = format!("gangs{u}");
                    out.push(self.fixed(format!("let {gc} = 0")));
                    prints.push(gc.clone());
                    copy = format!("{copy} copy({gc})");
                    let mut a = self.fixed(format!("{gc} += 1"));
                    a.pre = vec!["acc atomic".into()];
                    inner.insert(self.rng.below(2), a);
                }
                let mut r = self.block(vec![], vec![t(format!("acc parallel{g} {copy}"))], inner);
                r.removable = false;
                out.push(r);
            }
            _ => {
                lp.pre = vec![format!("acc serial loop {copy}")];
                out.push(lp);
            }
        }
        out.push(self.fixed(format!("print({})", prints.join(", "))));
        (globals, out)
    }

    /// `acc atomic [update]` of `loc` with operator class `op`.
    fn atomic_update(&mut self, loc: &str, ty: Ty, op: &str, sc: &Scope, n: usize) -> Node {
        let factor = |g: &mut Gen| -> Expr {
            // integer factors may be anything (wrapping products commute); float factors are
            // 2 or 0.5 while few enough to stay exact, else 1
            if ty.is_int() {
                let v = g.ex().int(sc, ty, 2);
                return v;
            }
            let c = g.ex().boolean(sc, 2);
            let big = if n <= 100 {
                ty.literal(2)
            } else {
                ty.literal(1)
            };
            let small = if n <= 100 {
                format!("0.5{}", ty.name())
            } else {
                ty.literal(1)
            };
            g.ex().frozen(
                ty,
                &["(if ", &format!(" {{ {big} }} else {{ {small} }})")],
                vec![c],
            )
        };
        let line = match op {
            "*" => {
                let f = factor(self);
                match self.rng.below(3) {
                    0 => vec![t(format!("{loc} *= ")), e(f)],
                    1 => vec![t(format!("{loc} = {loc} * ")), e(f)],
                    _ => vec![t(format!("{loc} = ")), e(f), t(format!(" * {loc}"))],
                }
            }
            "/" => {
                let d = if ty.is_int() {
                    // positive divisors: truncating divisions by them commute
                    let v = self.ex().int(sc, ty, 2);
                    let one = ty.literal(1);
                    let three = ty.literal(3);
                    self.ex()
                        .frozen(ty, &["((", &format!(" & {three}) + {one})")], vec![v])
                } else {
                    factor(self)
                };
                if self.rng.chance(50) {
                    vec![t(format!("{loc} /= ")), e(d)]
                } else {
                    vec![t(format!("{loc} = {loc} / ")), e(d)]
                }
            }
            "max" | "min" => {
                let v = self.ex().order_free(sc, ty, 2);
                vec![t(format!("{loc} = {op}({loc}, ")), e(v), t(")")]
            }
            "-" => {
                let v = self.ex().order_free(sc, ty, 2);
                if self.rng.chance(50) {
                    vec![t(format!("{loc} -= ")), e(v)]
                } else {
                    vec![t(format!("{loc} = {loc} - ")), e(v)]
                }
            }
            _ => {
                let v = self.wide_value(sc, ty, 2);
                match self.rng.below(3) {
                    0 => vec![t(format!("{loc} {op}= ")), e(v)],
                    1 => vec![t(format!("{loc} = {loc} {op} ")), e(v)],
                    _ => vec![t(format!("{loc} = ")), e(v), t(format!(" {op} {loc}"))],
                }
            }
        };
        let mut st = self.stmt(line);
        st.pre = vec![self
            .rng
            .pick(&["acc atomic update", "acc atomic"])
            .to_string()];
        st
    }

    // ---------------------------------------------------------------- data movement

    /// enter/exit data and update with sections, data regions, async queues and waits. Every
    /// device operation after an asynchronous one first waits for its queue (by a `wait`
    /// clause, `acc wait(q) async(r)` or a blocking wait), so the program is ordered.
    fn data_movement(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let ty = self.num_ty();
        let two_d = self.rng.chance(30);
        let (rows, cols) = (
            self.rng.pick(&[2, 5, 8, 40]),
            if two_d { self.rng.pick(&[1, 3, 6]) } else { 1 },
        );
        let a = format!("m{u}");
        let dims = if two_d { vec![rows, cols] } else { vec![rows] };
        let mut out = self.host_array(&a, ty, &dims, &self.scope());
        // the section the device holds: rows lo..lo+cnt
        let lo = self.rng.below(rows);
        let cnt = 1 + self.rng.below(rows - lo);
        // and columns c0..c0+cc (a strided section when not all of them)
        let (c0, cc) = if two_d && self.rng.chance(50) {
            let c0 = self.rng.below(cols);
            (c0, 1 + self.rng.below(cols - c0))
        } else {
            (0, cols)
        };
        let all_cols = c0 == 0 && cc == cols;
        let sect = |lo: usize, cnt: usize| {
            if two_d {
                format!("{a}[{lo}:{cnt}, {c0}:{cc}]")
            } else if lo == 0 && cnt == rows {
                format!("{a}[:{cnt}]")
            } else {
                format!("{a}[{lo}:{cnt}]")
            }
        };
        let mut pending: Option<Queue> = None;
        let structured = self.rng.chance(35);
        let mut ops = Vec::new();
        if !structured {
            let (cl, aq) = self.async_for(&mut pending, &mut ops);
            let how = self.rng.pick(&["copyin", "copyin", "create"]);
            let create = how == "create";
            if lo == 0 && cnt == rows && all_cols && self.rng.chance(30) {
                // the runtime routine instead of the directive (whole arrays only)
                // (a blanket wait: the clauses chosen above are not used)
                ops.push(self.fixed("acc wait"));
                pending = None;
                ops.push(self.fixed(format!("acc_{how}({a})")));
            } else {
                ops.push(self.fixed(format!("acc enter data {how}({}){cl}{aq}", sect(lo, cnt))));
            }
            if create {
                // a created section holds garbage until written: fill it on the device
                let (cl, aq) = self.async_for(&mut pending, &mut ops);
                let v = self.ex().atom(ty.literal(3), ty);
                ops.push(self.section_loop(
                    &a,
                    two_d,
                    (c0, cc),
                    lo,
                    cnt,
                    &format!("present({}){cl}{aq}", sect(lo, cnt)),
                    v,
                    false,
                ));
            }
        }
        for _ in 0..1 + self.rng.below(3) {
            match self.rng.below(3) {
                0 | 1 => {
                    let (cl, aq) = self.async_for(&mut pending, &mut ops);
                    let mut sc = self.scope().with("i", Ty::I64).with("old", ty);
                    if two_d {
                        sc = sc.with("j", Ty::I64);
                    }
                    let v = self.ex().value(&sc, ty, 3);
                    // default(present) asks for the whole array: only when it is all present
                    let whole = lo == 0 && cnt == rows && all_cols;
                    let clause = if whole && self.rng.chance(40) {
                        "default(present)".into()
                    } else if self.rng.chance(25) {
                        // present data: no_create uses the device copy
                        format!("no_create({})", sect(lo, cnt))
                    } else {
                        format!("present({})", sect(lo, cnt))
                    };
                    ops.push(self.section_loop(
                        &a,
                        two_d,
                        (c0, cc),
                        lo,
                        cnt,
                        &format!("{clause}{cl}{aq}"),
                        v,
                        true,
                    ));
                }
                _ => {
                    // host writes one row then sends it to the device
                    self.wait_pending(&mut pending, &mut ops);
                    let row = lo + self.rng.below(cnt);
                    let base = self.scope();
                    let v = self.ex().value(&base, ty, 2);
                    if two_d {
                        // the whole row, which update device sends
                        let w = self.stmt(vec![t(format!("{a}[{row}, j] = ")), e(v)]);
                        let mut l = self.block(
                            vec![],
                            vec![t(format!("for j in {c0}..{}", c0 + cc))],
                            vec![w],
                        );
                        l.removable = false;
                        ops.push(l);
                    } else {
                        ops.push(self.stmt(vec![t(format!("{a}[{row}] = ")), e(v)]));
                    }
                    let (cl, aq) = self.async_for(&mut pending, &mut ops);
                    ops.push(self.fixed(format!("acc update device({}){cl}{aq}", sect(row, 1))));
                }
            }
            if self.rng.chance(40) {
                // copy part of the section back and read exactly that part on the host
                let lo2 = lo + self.rng.below(cnt);
                let cnt2 = 1 + self.rng.below(lo + cnt - lo2);
                let dir = if self.rng.chance(50) { "host" } else { "self" };
                let (cl, aq) = self.async_for(&mut pending, &mut ops);
                if lo2 == 0 && cnt2 == rows && all_cols && self.rng.chance(30) {
                    ops.push(self.fixed("acc wait"));
                    pending = None;
                    ops.push(self.fixed(format!("acc_update_self({a})")));
                } else {
                    ops.push(self.fixed(format!("acc update {dir}({}){cl}{aq}", sect(lo2, cnt2))));
                }
                self.wait_pending(&mut pending, &mut ops);
                let read = if two_d {
                    format!("{a}[k, {}]", c0 + cc - 1)
                } else {
                    format!("{a}[k]")
                };
                ops.push(self.fixed(format!("let h{u} = zeros({}, {cnt2})", ty.name())));
                let mut l = self.fixed(format!(
                    "for k in {lo2}..{} {{ h{u}[k - {lo2}] = {read} }}",
                    lo2 + cnt2
                ));
                l.removable = false;
                ops.push(l);
                ops.push(self.fixed(format!("print(h{u})")));
            }
        }
        if structured {
            self.wait_pending(&mut pending, &mut ops);
            let how = self.rng.pick(&["copy", "pcopy", "present_or_copy"]);
            let mut r = self.block(
                vec![],
                vec![t(format!("acc data {how}({})", sect(lo, cnt)))],
                ops,
            );
            r.removable = false;
            out.push(r);
        } else {
            out.extend(ops);
            let mut tail = Vec::new();
            let (cl, aq) = self.async_for(&mut pending, &mut tail);
            match self.rng.below(3) {
                0 if lo == 0 && cnt == rows && all_cols && self.rng.chance(30) => {
                    tail.push(self.fixed("acc wait"));
                    pending = None;
                    tail.push(self.fixed(format!("acc_copyout({a})")));
                }
                0 => tail
                    .push(self.fixed(format!("acc exit data copyout({}){cl}{aq}", sect(lo, cnt)))),
                1 => {
                    // a second reference: the first exit only decrements
                    let mut v = vec![
                        self.fixed(format!("acc enter data copyin({}){cl}{aq}", sect(lo, cnt)))
                    ];
                    let (cl2, aq2) = self.async_for(&mut pending, &mut v);
                    v.push(self.fixed(format!(
                        "acc exit data copyout({}){cl2}{aq2}",
                        sect(lo, cnt)
                    )));
                    let (cl3, aq3) = self.async_for(&mut pending, &mut v);
                    v.push(self.fixed(format!(
                        "acc exit data copyout({}){cl3}{aq3}",
                        sect(lo, cnt)
                    )));
                    tail.extend(v);
                }
                _ => {
                    let mut v = vec![
                        self.fixed(format!("acc enter data copyin({}){cl}{aq}", sect(lo, cnt)))
                    ];
                    let (cl2, aq2) = self.async_for(&mut pending, &mut v);
                    v.push(self.fixed(format!(
                        "acc exit data copyout({}) finalize{cl2}{aq2}",
                        sect(lo, cnt)
                    )));
                    tail.extend(v);
                }
            }
            self.wait_pending(&mut pending, &mut tail);
            out.extend(tail);
        }
        out.push(self.print_array(&a, ty));
        (vec![], out)
    }

    /// `acc parallel loop CLAUSES` over the section's rows: `a[i…] = v` (v may read `old`, the
    /// element's value before).
    #[allow(clippy::too_many_arguments)]
    fn section_loop(
        &mut self,
        a: &str,
        two_d: bool,
        (c0, cc): (usize, usize),
        lo: usize,
        cnt: usize,
        clauses: &str,
        v: Expr,
        read_old: bool,
    ) -> Node {
        let kind = self.rng.pick(&[
            "parallel loop",
            "parallel loop",
            "kernels loop",
            "serial loop",
        ]);
        let elem = if two_d {
            format!("{a}[i, j]")
        } else {
            format!("{a}[i]")
        };
        let mut body = Vec::new();
        if read_old {
            body.push(self.fixed(format!("let old = {elem}")));
        }
        body.push(self.stmt(vec![t(format!("{elem} = ")), e(v)]));
        if two_d {
            let header = format!("for j in {c0}..{}", c0 + cc);
            let mut inner = self.block(vec![], vec![t(header)], body);
            inner.removable = false;
            body = vec![inner];
        }
        let mut l = self.block(
            vec![squash(&format!("acc {kind} {clauses}"))],
            vec![t(format!("for i in {lo}..{}", lo + cnt))],
            body,
        );
        l.removable = false;
        l
    }

    /// Picks a queue (or none) for the next device operation and makes it wait for the pending
    /// one: returns the `wait(…)` clause text (or "") and the `async(…)` clause text (or "").
    fn async_for(&mut self, pending: &mut Option<Queue>, ops: &mut Vec<Node>) -> (String, String) {
        let next = if self.rng.chance(40) {
            Some(self.queue())
        } else {
            None
        };
        let mut wait = String::new();
        if let Some(p) = *pending {
            if p == next.flatten() && next.is_some() {
                // same queue: ordered already
            } else {
                match (p, next, self.rng.below(3)) {
                    (Some(pq), _, 0) => wait = format!(" wait({pq})"),
                    (Some(pq), Some(Some(nq)), 1) => {
                        ops.push(self.fixed(format!("acc wait({pq}) async({nq})")))
                    }
                    _ => ops.push(self.wait_for(p)),
                }
            }
        }
        *pending = next;
        (
            wait,
            next.map(|q| format!(" {}", async_clause(q)))
                .unwrap_or_default(),
        )
    }

    fn wait_pending(&mut self, pending: &mut Option<Queue>, ops: &mut Vec<Node>) {
        if let Some(p) = pending.take() {
            ops.push(self.wait_for(p));
        }
    }

    // ---------------------------------------------------------------- more units

    /// Per-row reductions inside a gang loop: `out[i] = reduce over j`, by an `acc loop
    /// worker/vector reduction` in the region or in an `acc routine worker/vector`.
    fn row_reduction(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let n = self.rng.pick(&[1, 3, 8, 40]);
        let m = self.rng.pick(&[1, 2, 5, 32, 100, 200]);
        let ty = self.rng.pick(&[Ty::I32, Ty::I64, Ty::F32, Ty::F64]);
        let ops: &[&str] = if ty.is_int() {
            &["+", "*", "max", "min", "&", "|", "^"]
        } else {
            &["+", "max", "min"]
        };
        let op = self.rng.pick(ops);
        let (mat, out) = (format!("mat{u}"), format!("out{u}"));
        let mut nodes = self.host_array(&mat, ty, &[n, m], &self.scope());
        // exact floats in the matrix: sums in any order are exact
        if ty.is_float() {
            let mut sc = self.scope().with("i0", Ty::I64).with("i1", Ty::I64);
            sc.arrays.clear();
            let v = self.ex().exact_float(&sc, ty, 2);
            let w = self.stmt(vec![t(format!("{mat}[i0, i1] = ")), e(v)]);
            let inner = self.block(vec![], vec![t(format!("for i1 in 0..{m}"))], vec![w]);
            nodes.push(self.block(vec![], vec![t(format!("for i0 in 0..{n}"))], vec![inner]));
        }
        nodes.push(self.fixed(format!("let {out} = zeros({}, {n})", ty.name())));
        let init = if op == "*" {
            ty.literal(1)
        } else {
            ty.literal(self.rng.below(3) as i64)
        };
        let upd = match op {
            "max" | "min" => format!("s = {op}(s, {mat}[i, j])"),
            _ => format!("s {op}= {mat}[i, j]"),
        };
        let level = self.rng.pick(&["vector", "worker", "worker vector", ""]);
        let mut row = vec![self.fixed(format!("let s: {} = {init}", ty.name()))];
        let mut globals = Vec::new();
        let inner_loop = {
            let u = self.fixed(upd);
            let mut l = self.block(
                vec![squash(&format!("acc loop {level} reduction({op}: s)"))],
                vec![t(format!("for j in 0..{m}"))],
                vec![u],
            );
            l.removable = false;
            l
        };
        let workers = self
            .rng
            .pick(&["", " num_workers(2)", " num_workers(4) vector_length(32)"]);
        let call_routine = self.rng.chance(40);
        if call_routine {
            // the same, in a routine of the loop's level
            let rlevel = if level.contains("worker") {
                "worker"
            } else {
                "vector"
            };
            let decl = self.fixed(format!("let s: {} = {init}", ty.name()));
            let u2 = self.fixed(match op {
                "max" | "min" => format!("s = {op}(s, m[i, j])"),
                _ => format!("s {op}= m[i, j]"),
            });
            let lv = if level.is_empty() { rlevel } else { level };
            let mut l = self.block(
                vec![format!("acc loop {lv} reduction({op}: s)")],
                vec![t("for j in 0..n")],
                vec![u2],
            );
            l.removable = false;
            let store = self.fixed("o[i] = s");
            let f = self.block(
                vec![format!("acc routine {rlevel}")],
                vec![t(format!(
                    "fn rowred{u}(m: {0}[,], o: {0}[], i: i64, n: i64)",
                    ty.name()
                ))],
                vec![decl, l, store],
            );
            globals.push(f);
            row = vec![self.fixed(format!("rowred{u}({mat}, {out}, i, {m})"))];
        } else {
            row.push(inner_loop);
            row.push(self.fixed(format!("{out}[i] = s")));
        }
        // Code of a gang loop outside its worker and vector loops runs once per iteration
        // (worker-single, vector-single): an atomic count of it is the trip count.
        let count = self.rng.chance(50);
        let cnt = format!("cnt{u}");
        if count {
            nodes.push(self.fixed(format!("let {cnt} = 0")));
            let mut a = self.fixed(format!("{cnt} += 1"));
            a.pre = vec!["acc atomic update".into()];
            let at = self.rng.below(row.len() + 1);
            row.insert(at, a);
        }
        let copy = if count {
            format!(" copy({cnt})")
        } else {
            String::new()
        };
        let mut l = self.block(
            vec![format!("acc parallel loop gang{workers}{copy}")],
            vec![t(format!("for i in 0..{n}"))],
            row,
        );
        l.removable = false;
        nodes.push(l);
        nodes.push(self.print_array(&out, ty));
        if count {
            nodes.push(self.fixed(format!("print({cnt})")));
        }
        (globals, nodes)
    }

    /// `print` and `printf` in device code that one thread runs (serial, kernels outside loops,
    /// a one-gang parallel region): formatted exactly as on the host.
    fn device_print(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let v = format!("pv{u}");
        let ty = self.num_ty();
        let lit = self.ex().literal(ty);
        let mut nodes = vec![{
            let d = self.stmt(vec![t(format!("let {v}: {} = ", ty.name())), e(lit)]);
            d
        }];
        let sc = self.scope().with(&v, ty);
        let mut body = Vec::new();
        for _ in 0..1 + self.rng.below(3) {
            if self.rng.chance(60) {
                let mut parts = vec![t("print(")];
                for k in 0..1 + self.rng.below(3) {
                    if k > 0 {
                        parts.push(t(", "));
                    }
                    let pty = self
                        .rng
                        .pick(&[Ty::I32, Ty::I64, Ty::F32, Ty::F64, Ty::Bool]);
                    let x = self.ex().value(&sc, pty, 3);
                    parts.push(e(x));
                }
                parts.push(t(")"));
                body.push(self.stmt(parts));
            } else {
                let i = self.ex().int(&sc, Ty::I64, 3);
                let f = self.ex().float(&sc, Ty::F64, 3);
                let fmt = self
                    .rng
                    .pick(&["%d %f", "%5d|%.3f", "%-4d|%e", "%x %g", "%d %10.2f"]);
                let int = if fmt.starts_with("%x") {
                    self.ex().frozen(Ty::I64, &["(", " & 65535)"], vec![i])
                } else {
                    i
                };
                body.push(self.stmt(vec![
                    t(format!("printf(\"{fmt}\\n\", ")),
                    e(int),
                    t(", "),
                    e(f),
                    t(")"),
                ]));
            }
        }
        let head = self
            .rng
            .pick(&["acc serial", "acc kernels", "acc parallel num_gangs(1)"]);
        let mut r = self.block(vec![], vec![t(head)], body);
        r.removable = false;
        nodes.push(self.fixed(format!("print(\"host\", {v})")));
        nodes.push(r);
        nodes.push(self.fixed(format!("print(\"after\", {v})")));
        (vec![], nodes)
    }

    /// Scalars in data clauses and kernels' implicit copy: a serial or kernels region writes
    /// them, and the host sees the final value.
    fn scalar_data(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let (k, f) = (format!("k{u}"), format!("kf{u}"));
        let ty = self.num_ty();
        let lit = self.ex().literal(ty);
        let lit2 = self.ex().literal(ty);
        let mut nodes = Vec::new();
        for (name, l) in [(&k, lit), (&f, lit2)] {
            let d = self.stmt(vec![t(format!("let {name}: {} = ", ty.name())), e(l)]);
            nodes.push(d);
        }
        let sc = self.scope().with(&k, ty).with(&f, ty);
        let v = self.ex().value(&sc, ty, 3);
        let w = self.ex().value(&sc, ty, 3);
        let body = vec![
            self.stmt(vec![t(format!("{k} = ")), e(v)]),
            self.stmt(vec![t(format!("{f} = ")), e(w)]),
        ];
        let head = match self.rng.below(4) {
            0 => format!("acc serial copy({k})"),
            1 => format!("acc serial copy({k}) firstprivate({f})"),
            2 => "acc kernels".to_string(),
            _ => format!("acc kernels copyout({k})"),
        };
        let mut r = self.block(vec![], vec![t(head)], body);
        r.removable = false;
        nodes.push(r);
        // in serial regions f is firstprivate (implicitly or not): the host's is unchanged
        nodes.push(self.fixed(format!("print({k}, {f})")));
        // kernels: a scalar accumulation recognized as a reduction
        let n = self.rng.pick(&[1, 10, 100, 1000]);
        let acc_ty = self.int_ty();
        let sum = format!("ks{u}");
        nodes.push(self.fixed(format!(
            "let {sum}: {} = {}",
            acc_ty.name(),
            acc_ty.literal(3)
        )));
        let isc = self.scope().with("i", Ty::I64);
        let v = self.ex().int(&isc, acc_ty, 3);
        let upd = match self.rng.below(3) {
            0 => vec![t(format!("{sum} += ")), e(v)],
            1 => vec![t(format!("{sum} = max({sum}, ")), e(v), t(")")],
            _ => vec![t(format!("{sum} = min({sum}, ")), e(v), t(")")],
        };
        let st = self.stmt(upd);
        let lp = self.block(vec![], vec![t(format!("for i in 0..{n}"))], vec![st]);
        let mut r = self.block(vec![], vec![t("acc kernels")], vec![lp]);
        r.removable = false;
        nodes.push(r);
        nodes.push(self.fixed(format!("print({sum})")));
        (vec![], nodes)
    }

    /// Arrays reach compute regions as function parameters and as other names of one array
    /// (`let z = y`): presence follows the array, whatever its name.
    fn array_params(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
        let n = self.rng.pick(&[1, 7, 64, 300]);
        let ty = self.num_ty();
        let (x, y, z) = (format!("x{u}"), format!("y{u}"), format!("z{u}"));
        let mut sc = self.scope().with("i", Ty::I64);
        sc.arrays.push(ArrayVar {
            name: "a".into(),
            ty,
            dims: vec![n],
        });
        let v = self.ex().value(&sc, ty, 3);
        let body = vec![self.stmt(vec![t("b[i] = "), e(v)])];
        let clause = self
            .rng
            .pick(&["copyin(a) copy(b)", "present(a, b)", "", "default(present)"]);
        let inside_data = clause.contains("present");
        let mut l = self.block(
            vec![squash(&format!("acc parallel loop {clause}"))],
            vec![t(format!("for i in 0..{n}"))],
            body,
        );
        l.removable = false;
        let f = self.block(
            vec![],
            vec![t(format!("fn kern{u}(a: {0}[], b: {0}[])", ty.name()))],
            vec![l],
        );
        let mut nodes = self.host_array(&x, ty, &[n], &self.scope());
        nodes.push(self.fixed(format!("let {y} = zeros({}, {n})", ty.name())));
        if self.cfg.known_bugs && self.rng.chance(50) {
            // a reshape view: the same data under another shape (a known bug: a view of
            // present data gets a device copy of its own)
            nodes.push(self.fixed(format!("let {z} = reshape({y}, {n})")));
        } else {
            nodes.push(self.fixed(format!("let {z} = {y}")));
        }
        let call = self.fixed(format!("kern{u}({x}, {z})"));
        if inside_data || self.rng.chance(50) {
            let how = self
                .rng
                .pick(&["copyin({x}) copy({y})", "copyin({x}) copy({z})"]);
            let how = how.replace("{x}", &x).replace("{y}", &y).replace("{z}", &z);
            let mut inner = vec![call];
            if self.rng.chance(50) {
                // a second region through the other name, in the same data region
                let add = self.fixed(format!("{y}[i] = {y}[i] + {}", ty.literal(1)));
                let mut l2 = self.block(
                    vec![format!("acc parallel loop present({y})")],
                    vec![t(format!("for i in 0..{n}"))],
                    vec![add],
                );
                l2.removable = false;
                inner.push(l2);
            }
            let mut r = self.block(vec![], vec![t(format!("acc data {how}"))], inner);
            r.removable = false;
            nodes.push(r);
        } else {
            nodes.push(call);
        }
        nodes.push(self.print_array(&y, ty));
        (vec![f], nodes)
    }

    // ---------------------------------------------------------------- run-time errors

    /// A run-time error in exactly one iteration of a compute region, or a failed assert.
    fn error_unit(&mut self, u: usize) -> Node {
        let n = self.rng.pick(&[1, 4, 50]);
        let z = format!("z{u}");
        let mut nodes = vec![self.fixed(format!("let {z} = zeros(i64, {n})"))];
        let dir = self
            .rng
            .pick(&["acc parallel loop", "acc kernels loop", "acc serial loop"]);
        let bad = self.rng.below(n);
        let kind = self.rng.below(5);
        let stmt = match kind {
            0 => format!("{z}[i + (if i == {bad} {{ {n} }} else {{ 0 }})] = i"),
            1 => format!("{z}[i] = 10 / (i - {bad})"),
            2 => format!("{z}[i] = 10 % (i - {bad})"),
            _ => format!("{z}[i] = i * 2"),
        };
        let body = vec![self.fixed(stmt)];
        let mut l = self.block(
            vec![dir.to_string()],
            vec![t(format!("for i in 0..{n}"))],
            body,
        );
        l.removable = false;
        nodes.push(l);
        nodes.push(self.fixed(format!("print({z})")));
        // the host's errors and exit status after device work
        match kind {
            3 => nodes.push(self.fixed(format!(
                "assert(sum({z}) < 0, \"progen: the sum is not negative\")"
            ))),
            4 => nodes.push(self.fixed(format!("exit((sum({z}) % 100) as i32 + 3)"))),
            _ => {}
        }
        self.group(nodes)
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
