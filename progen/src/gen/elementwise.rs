//! Element-wise loop nests: every compute construct, schedule, collapse and tile, with the
//! data in clauses, a data region or enter/exit data.

use super::*;

impl Gen {
    /// An element-wise loop nest: `y[i…] = f(x, i…)`, in every compute construct, schedule,
    /// collapse and tile, with the data in clauses, a data region or enter/exit data.
    pub(super) fn elementwise(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
        if kind != Construct::Serial {
            self.push_devices(&mut clauses);
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
                let cl = self.with_devices(&format!("copyin({x}) copy({y})"));
                let r = self.block(vec![], vec![t(format!("acc data {cl}"))], compute);
                out.push(r);
            }
            3 => {
                compute.push(self.fixed(format!("acc update host({y})")));
                let cl = self.with_devices(&format!("copyin({x}) create({y})"));
                let r = self.block(vec![], vec![t(format!("acc data {cl}"))], compute);
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
}
