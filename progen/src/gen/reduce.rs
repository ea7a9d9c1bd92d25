//! Reductions: every operator and type, on loops, on parallel constructs, nested, collapsed,
//! tiled, serial, and per row inside a gang loop or a worker/vector routine.

use super::*;

impl Gen {
    pub(super) fn reduction(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
        // devices(…) on the parallel and kernels constructs, not where a float sum or product
        // is combined over devices (its rounding may depend on the split)
        let float_sum = vars
            .iter()
            .any(|(_, ty, op)| ty.is_float() && matches!(*op, "+" | "*"));
        let dv = if float_sum || matches!(shape, 2 | 8) {
            String::new()
        } else {
            self.devices_suffix()
        };
        let compute: Vec<Node> = match shape {
            0 => vec![loop_i(
                self,
                vec![format!("acc parallel loop {red}{ifc}{dv}")],
                updates,
            )],
            1 => vec![loop_i(
                self,
                vec![format!("acc kernels loop {red}{ifc}{dv}")],
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
                    vec![t(format!("acc parallel num_gangs({gangs}){dv}"))],
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
                        // With `devices(…)` this keeps the region on one device (the update
                        // would run on every device's gangs): the answer must not change.
                        body.push(self.stmt(vec![t(format!("{name} += 1"))]));
                    }
                }
                let mut p = self.block(
                    vec![],
                    vec![t(format!("acc parallel num_gangs({gangs}) {red}{dv}"))],
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
                    vec![format!("acc parallel loop {red}{dv}")],
                    vec![inner],
                )]
            }
            7 => {
                let inner = loop_j(self, vec![], updates);
                vec![loop_i(
                    self,
                    vec![format!("acc parallel loop {nest} {red}{dv}")],
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
        // Now and then a construct that does not use the results follows: the host may start
        // it before it takes them (LANGUAGE.md 7.11, results taken late). It overwrites the
        // array the reduction read, which must not reach the reduction.
        let follower = self.rng.chance(30);
        if follower {
            let dv = self.devices_suffix();
            let body = vec![self.stmt(vec![t(format!("{arr}[i] = {arr}[i] - {arr}[i]"))])];
            out.push(loop_i(self, vec![format!("acc parallel loop{dv}")], body));
        }
        let names: Vec<String> = vars.iter().map(|v| v.0.clone()).collect();
        out.push(self.fixed(format!("print({})", names.join(", "))));
        if follower {
            out.push(self.fixed(format!("print({arr})")));
        }
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

    /// Per-row reductions inside a gang loop: `out[i] = reduce over j`, by an `acc loop
    /// worker/vector reduction` in the region or in an `acc routine worker/vector`.
    pub(super) fn row_reduction(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
        // devices(…) splits the gang loop; each row's reduction stays within one iteration, on
        // one device, whatever its type
        let dv = self.devices_suffix();
        let mut l = self.block(
            vec![format!("acc parallel loop gang{workers}{copy}{dv}")],
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
}
