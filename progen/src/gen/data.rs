//! Data movement: enter/exit data and update with sections, data regions, async queues and
//! waits; arrays as function parameters and under other names.

use super::*;

impl Gen {
    /// enter/exit data and update with sections, data regions, async queues and waits. Every
    /// device operation after an asynchronous one first waits for its queue (by a `wait`
    /// clause, `acc wait(q) async(r)` or a blocking wait), so the program is ordered.
    pub(super) fn data_movement(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
            // a data region with devices(…) holds whole arrays: named whole, not as a section
            let whole = lo == 0 && cnt == rows && all_cols;
            let dv = if whole {
                self.devices_suffix()
            } else {
                String::new()
            };
            let what = if dv.is_empty() {
                sect(lo, cnt)
            } else {
                a.clone()
            };
            let mut r = self.block(vec![], vec![t(format!("acc data {how}({what}){dv}"))], ops);
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
        let clauses = if kind == "serial loop" {
            clauses.to_string()
        } else {
            self.with_devices(clauses)
        };
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

    /// Arrays reach compute regions as function parameters and as other names of one array
    /// (`let z = y`): presence follows the array, whatever its name.
    pub(super) fn array_params(&mut self, u: usize) -> (Vec<Node>, Vec<Node>) {
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
        let clause = self.with_devices(clause);
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
        let view = self.cfg.known_bugs && self.rng.chance(50);
        if view {
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
                let cl = self.with_devices(&format!("present({y})"));
                let mut l2 = self.block(
                    vec![format!("acc parallel loop {cl}")],
                    vec![t(format!("for i in 0..{n}"))],
                    vec![add],
                );
                l2.removable = false;
                inner.push(l2);
            }
            // a data region with devices(…) holds whole arrays: a view in it is an error
            let how = if view { how } else { self.with_devices(&how) };
            let mut r = self.block(vec![], vec![t(format!("acc data {how}"))], inner);
            r.removable = false;
            nodes.push(r);
        } else {
            nodes.push(call);
        }
        nodes.push(self.print_array(&y, ty));
        (vec![f], nodes)
    }
}
