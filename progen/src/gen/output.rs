//! Device print/printf, and run-time errors, failed asserts and exit codes.

use super::*;

impl Gen {
    /// `print` and `printf` in device code that one thread runs (serial, kernels outside loops,
    /// a one-gang parallel region): formatted exactly as on the host.
    pub(super) fn device_print(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
        let mut head = self
            .rng
            .pick(&["acc serial", "acc kernels", "acc parallel num_gangs(1)"])
            .to_string();
        if head != "acc serial" {
            // nothing to split: the region runs on one device
            head += &self.devices_suffix();
        }
        let mut r = self.block(vec![], vec![t(head)], body);
        r.removable = false;
        nodes.push(self.fixed(format!("print(\"host\", {v})")));
        nodes.push(r);
        nodes.push(self.fixed(format!("print(\"after\", {v})")));
        (vec![], nodes)
    }

    /// A run-time error in exactly one iteration of a compute region, or a failed assert.
    pub(super) fn error_unit(&mut self, u: usize) -> Node {
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
