//! Halo sweeps: a `data … devices(all)` region over a few steps of a stencil that reads rows
//! beside its own (a halo of one to three rows) and a copy back, as Jacobi does. Split over
//! several devices, the rows a block writes go to the neighbours holding stale copies of them
//! (LANGUAGE.md 7.11), and on `emulated@K` (which runs with `ACC_EDGES_FIRST=on`) each block's
//! iterations writing those rows run first. Every draw comes from the sweep's own generator,
//! so the rest of the program does not depend on whether a sweep is there; without devices
//! clauses (`Config::devices`) the sweep is the same without them.

use super::*;

impl Gen {
    pub(super) fn halo_sweep(&mut self, u: usize, r: &mut Rng) -> Node {
        let dv = if self.cfg.devices {
            " devices(all)"
        } else {
            ""
        };
        let w = 1 + r.below(3);
        let n = r.pick(&[8usize, 12, 16, 25, 40, 64]);
        let cols = r.pick(&[0usize, 0, 3, 5]);
        let steps = 1 + r.below(4);
        let k = [1 + r.below(5), 1 + r.below(5), 1 + r.below(5)];
        // The copy back over the stencil's rows, or over every row but the first and last
        // (its blocks are cut elsewhere).
        let back = if r.chance(50) { (w, n - w) } else { (1, n - 1) };
        let (a, b) = (format!("ha{u}"), format!("hb{u}"));
        let dims = if cols == 0 {
            format!("{n}")
        } else {
            format!("{n}, {cols}")
        };
        // element `x[j]`, or `x[j, i]` of a 2-D array
        let row = |x: &str, j: &str| {
            if cols == 0 {
                format!("{x}[{j}]")
            } else {
                format!("{x}[{j}, i]")
            }
        };
        // a statement over the row `j` (and each column `i` of a 2-D array)
        let over_row = |g: &mut Gen, body: String| -> Vec<Node> {
            let s = g.fixed(body);
            if cols == 0 {
                vec![s]
            } else {
                vec![g.block(vec![], vec![t(format!("for i in 0..{cols}"))], vec![s])]
            }
        };
        let mut nodes = vec![
            self.fixed(format!("let {a} = zeros(i64, {dims})")),
            self.fixed(format!("let {b} = zeros(i64, {dims})")),
        ];
        let init = if cols == 0 {
            format!("{a}[j] = (j * 7 + {u}) % 13")
        } else {
            format!("{a}[j, i] = (j * {cols} + i * 5 + {u}) % 17")
        };
        let init = over_row(self, init);
        nodes.push(self.block(vec![], vec![t(format!("for j in 0..{n}"))], init));
        let stencil = format!(
            "{} = ({} * {} + {} * {} + {} * {} + t) % 1009",
            row(&b, "j"),
            row(&a, &format!("j - {w}")),
            k[0],
            row(&a, "j"),
            k[1],
            row(&a, &format!("j + {w}")),
            k[2],
        );
        let stencil = over_row(self, stencil);
        let mut stencil = self.block(
            vec![format!("acc parallel loop{dv}")],
            vec![t(format!("for j in {w}..{}", n - w))],
            stencil,
        );
        stencil.removable = false;
        let copy = over_row(self, format!("{} = {}", row(&a, "j"), row(&b, "j")));
        let mut copy = self.block(
            vec![format!("acc parallel loop{dv}")],
            vec![t(format!("for j in {}..{}", back.0, back.1))],
            copy,
        );
        copy.removable = false;
        let sweep = self.block(
            vec![],
            vec![t(format!("for t in 0..{steps}"))],
            vec![stencil, copy],
        );
        let mut region = self.block(
            vec![],
            vec![t(format!("acc data copy({a}, {b}){dv}"))],
            vec![sweep],
        );
        region.removable = false;
        nodes.push(region);
        nodes.push(self.fixed(format!("print({a})")));
        self.group(nodes)
    }
}
