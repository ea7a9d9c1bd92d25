//! private and firstprivate scalars and arrays, and scalars in data clauses.

use super::*;

impl Gen {
    pub(super) fn private(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
                let dv = self.devices_suffix();
                let dir = format!("{dir}{dv}");
                let mut l = self.block(vec![dir], vec![t(format!("for i in 0..{n}"))], body);
                l.removable = false;
                if self.rng.chance(40) {
                    // the same as an orphaned loop in a parallel region
                    l.pre = vec![format!("acc loop private({p}, {tmp})")];
                    let mut r =
                        self.block(vec![], vec![t(format!("acc parallel{fp}{dv}"))], vec![l]);
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
                let dv = self.devices_suffix();
                let mut l = self.block(
                    vec![format!("acc parallel loop gang private({tmp}){vlen}{dv}")],
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
                let dv = self.devices_suffix();
                let mut l = self.block(
                    vec![format!("acc parallel loop firstprivate({tmp}, {f}){dv}")],
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

    /// Scalars in data clauses and kernels' implicit copy: a serial or kernels region writes
    /// them, and the host sees the final value.
    pub(super) fn scalar_data(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
            2 => format!("acc kernels{}", self.devices_suffix()),
            _ => format!(
                "acc kernels {}",
                self.with_devices(&format!("copyout({k})"))
            ),
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
        let head = format!("acc kernels{}", self.devices_suffix());
        let mut r = self.block(vec![], vec![t(head)], vec![lp]);
        r.removable = false;
        nodes.push(r);
        nodes.push(self.fixed(format!("print({sum})")));
        (vec![], nodes)
    }
}
