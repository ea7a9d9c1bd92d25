//! Atomics of every form on locals, globals, copy scalars and array elements.

use super::*;

impl Gen {
    pub(super) fn atomics(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
                let cl = self.with_devices(&copy);
                lp.pre = vec![format!("acc parallel loop {cl}")];
                out.push(lp);
            }
            1 => {
                // kernels: scalars are copy without a clause
                let cl = if self.rng.chance(50) {
                    copy
                } else {
                    String::new()
                };
                let cl = self.with_devices(&cl);
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
                let cl = self.with_devices(&copy);
                let mut r = self.block(vec![], vec![t(format!("acc parallel{g} {cl}"))], inner);
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
}
