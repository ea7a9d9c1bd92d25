//! The versions and unrolled trips of each loop, decided with the rest of the plan: which
//! bounds checks a loop hoists (loop versioning, which `crate::version` generates), and
//! which copies of its code run unrolled (`crate::unroll`).
//!
//! A versioned loop's body is generated twice, and so are the loops inside it: once in the
//! copy that counts the hoisted accesses as proven, once in the checked copy, each one more
//! versioned loop deep. What a loop inside may hoist and whether it unrolls depend on what is
//! proven where it stands, so each copy is a version of the code of its own (`VersionId`),
//! and a loop's versions are planned per version of the code around it.

use std::collections::{HashMap, HashSet};

use acc_lang::hir::Const;
use acc_lang::ir::bounds::{self, Hoisted, MAX_VERSION_DEPTH};
use acc_lang::ir::{Block, Expr, ExprKind, ForLoop, LocalId, LoopId, Stmt};

use super::straight::{self, Distinct, Facts};
use super::{collapse_nest, LoopPlan, Mode};

/// A version of a function's code: `ROOT` outside versioned loops; each copy of a versioned
/// loop's body is one of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct VersionId(u32);

impl VersionId {
    pub(crate) const ROOT: VersionId = VersionId(0);
}

/// How a loop's code is generated in one version of the code around it.
#[derive(Debug)]
pub(crate) enum Versions<'a> {
    /// One copy of it, in the version around it.
    One(Version<'a>),
    /// Two copies: one without the checks of `hoisted`, run where a predicate before the loop
    /// says every such access is in bounds for the loop variable's whole range, and the
    /// checked copy otherwise. A sequential loop is copied whole, a shared loop's body per
    /// iteration.
    Two {
        hoisted: Vec<Hoisted<'a>>,
        fast: Version<'a>,
        checked: Version<'a>,
    },
}

impl<'a> Versions<'a> {
    fn copies(&self) -> impl Iterator<Item = &Version<'a>> {
        let (first, second) = match self {
            Versions::One(v) => (v, None),
            Versions::Two { fast, checked, .. } => (fast, Some(checked)),
        };
        std::iter::once(first).chain(second)
    }
}

/// One copy of a loop's code.
#[derive(Debug)]
pub(crate) struct Version<'a> {
    /// The version of the code it is.
    pub id: VersionId,
    /// Its unrolled trips.
    pub unroll: Option<Unroll<'a>>,
}

/// How a copy of a loop runs unrolled trips before its ordinary loop (`crate::unroll`).
#[derive(Debug)]
pub(crate) enum Unroll<'a> {
    /// A sequential loop: `UNROLL` iterations a trip, their checks decided at its end.
    Seq,
    /// A thread loop: `THREAD_UNROLL` of a thread's iterations a trip, every load before
    /// any store, where the arrays of each pair are different arrays at run time.
    Threads(Distinct<'a>),
}

/// The versions of a function's loops.
#[derive(Debug, Default)]
pub(crate) struct VersionPlan<'a> {
    loops: HashMap<(VersionId, LoopId), Versions<'a>>,
    /// The accesses (`bounds::access_key`) each version counts as proven.
    proven: Vec<HashSet<usize>>,
}

impl<'a> VersionPlan<'a> {
    /// The versions of the loops of `body`, whose threads share loops as `shares` says;
    /// `cells` are the locals that live in memory cells, and `unchecked` leaves every bounds
    /// check out.
    pub(super) fn new(
        body: &'a Block,
        shares: &HashMap<LoopId, LoopPlan>,
        cells: &[LocalId],
        unchecked: bool,
    ) -> VersionPlan<'a> {
        let mut walk = Walk {
            shares,
            cells,
            unchecked,
            known: vec![Known::default()],
            loops: HashMap::new(),
        };
        walk.block(body, VersionId::ROOT);
        VersionPlan {
            loops: walk.loops,
            proven: walk.known.into_iter().map(|k| k.proven).collect(),
        }
    }

    /// The versions of loop `id` in version `v` of the code around it.
    pub(crate) fn get(&self, v: VersionId, id: LoopId) -> &Versions<'a> {
        &self.loops[&(v, id)]
    }

    /// Whether version `v` counts the access with key `key` as proven.
    pub(crate) fn is_proven(&self, v: VersionId, key: usize) -> bool {
        self.proven
            .get(v.0 as usize)
            .is_some_and(|p| p.contains(&key))
    }

    /// Whether some loop runs unrolled trips.
    pub(crate) fn unrolled(&self) -> bool {
        self.loops
            .values()
            .flat_map(Versions::copies)
            .any(|c| c.unroll.is_some())
    }
}

/// What holds in one version of the code.
#[derive(Default)]
struct Known {
    proven: HashSet<usize>,
    /// How many versioned loops enclose it.
    depth: u32,
}

struct Walk<'p, 'a> {
    shares: &'p HashMap<LoopId, LoopPlan>,
    cells: &'p [LocalId],
    unchecked: bool,
    /// By `VersionId`.
    known: Vec<Known>,
    loops: HashMap<(VersionId, LoopId), Versions<'a>>,
}

/// Which unrolled trips a loop's copies may have.
#[derive(Clone, Copy, PartialEq)]
enum Trips {
    Seq,
    Threads,
    None,
}

impl<'a> Walk<'_, 'a> {
    fn block(&mut self, body: &'a [Stmt], v: VersionId) {
        for s in body {
            match s {
                Stmt::For(f) => self.for_loop(f, v),
                Stmt::If { then, els, .. } => {
                    self.block(then, v);
                    self.block(els, v);
                }
                Stmt::While { body, .. } | Stmt::Block(body) | Stmt::DataRegion { body, .. } => {
                    self.block(body, v)
                }
                Stmt::Atomic(a) => self.block(std::slice::from_ref(&*a.body), v),
                _ => {}
            }
        }
    }

    fn for_loop(&mut self, f: &'a ForLoop, v: VersionId) {
        let s = &f.schedule;
        let (head, body, trips) = if !(s.gang || s.worker || s.vector) {
            (Some(f), &f.body, Trips::Seq)
        } else {
            // A nest the emitter cannot flatten fails there.
            let Ok(nest) = collapse_nest(f) else {
                return;
            };
            // Checks are hoisted out of a single loop, not a collapsed nest, and only a
            // single loop whose iterations are the threads' own unrolls.
            let single = (nest.len() == 1).then_some(f);
            let threads = single.is_some() && self.runs_in_threads(f.id);
            let trips = if threads { Trips::Threads } else { Trips::None };
            (single, &nest[nest.len() - 1].body, trips)
        };
        let versions = match head.and_then(|f| self.hoisted(f, v)) {
            None => Versions::One(self.version(v, body, trips)),
            Some(hoisted) => {
                let keys: Vec<usize> = hoisted.iter().map(|h| h.key).collect();
                let (fast, checked) = (self.branch(v, &keys), self.branch(v, &[]));
                // A shared loop's trips run before its loop, where the checks hold.
                let checked_trips = if trips == Trips::Seq {
                    trips
                } else {
                    Trips::None
                };
                Versions::Two {
                    hoisted,
                    fast: self.version(fast, body, trips),
                    checked: self.version(checked, body, checked_trips),
                }
            }
        };
        for copy in versions.copies() {
            self.block(body, copy.id);
        }
        let old = self.loops.insert((v, f.id), versions);
        debug_assert!(old.is_none(), "loop id {} used twice", f.id.0);
    }

    /// Whether loop `id`'s body runs in `Thread` mode (as its share says).
    fn runs_in_threads(&self, id: LoopId) -> bool {
        matches!(self.shares.get(&id), Some(LoopPlan::Shared(p))
            if p.share.is_ok_and(|s| s.body() == Mode::Thread))
    }

    /// The accesses of loop `f` in version `v` whose checks it hoists, if any: where its
    /// step is a positive constant, checks are on, and it is not too deep in versioned loops.
    fn hoisted(&self, f: &'a ForLoop, v: VersionId) -> Option<Vec<Hoisted<'a>>> {
        let positive = match f.step.kind {
            ExprKind::Const(Const::I32(s)) => s > 0,
            ExprKind::Const(Const::I64(s)) => s > 0,
            _ => false,
        };
        let known = &self.known[v.0 as usize];
        if !positive || self.unchecked || known.depth >= MAX_VERSION_DEPTH {
            return None;
        }
        let cells = self.cells.iter().copied();
        let hoisted: Vec<Hoisted<'a>> = bounds::hoistable(f.var, &f.body, cells, &|_| false)
            .into_iter()
            .filter(|h| !known.proven.contains(&h.key))
            .collect();
        (!hoisted.is_empty()).then_some(hoisted)
    }

    /// A new version inside version `v`'s code, one versioned loop deeper, that also counts
    /// the accesses of `keys` as proven.
    fn branch(&mut self, v: VersionId, keys: &[usize]) -> VersionId {
        let outer = &self.known[v.0 as usize];
        let mut proven = outer.proven.clone();
        proven.extend(keys.iter().copied());
        let depth = outer.depth + 1;
        self.known.push(Known { proven, depth });
        VersionId(self.known.len() as u32 - 1)
    }

    /// A copy in version `v` of a loop over `body`, with the unrolled trips it may have.
    fn version(&self, v: VersionId, body: &'a Block, trips: Trips) -> Version<'a> {
        let proven = &self.known[v.0 as usize].proven;
        let proven =
            |indices: &[Expr]| self.unchecked || proven.contains(&bounds::access_key(indices));
        let cell = |l: LocalId| self.cells.contains(&l);
        let facts = Facts {
            proven: &proven,
            cell: &cell,
        };
        let unroll = match trips {
            Trips::Seq => straight::sequential(body, &facts).then_some(Unroll::Seq),
            Trips::Threads => straight::threads(body, &facts).map(Unroll::Threads),
            Trips::None => None,
        };
        Version { id: v, unroll }
    }
}

#[cfg(test)]
mod tests {
    use acc_lang::ir::{self, ExprKind, ForLoop, Stmt};
    use acc_lang::span::SourceFile;

    use super::{Unroll, VersionId, Versions};
    use crate::plan::{Entry, Mode, Plan};

    /// `check` of the first region of `text`, its loops in pre-order and their plan
    /// (`unchecked` leaves bounds checks out).
    fn with_plan(text: &str, unchecked: bool, check: impl FnOnce(&ir::Region, &[&ForLoop], &Plan)) {
        let m = acc_lang::lower_source(&SourceFile::new("test.acc", text))
            .unwrap_or_else(|d| panic!("{d:?}"));
        let r = &m.regions[0];
        let reductions: Vec<_> = r.reductions.iter().map(|x| x.reduction).collect();
        let cells = crate::kernel::cells(r);
        let entry = Entry {
            mode: Mode::Block,
            reductions: &reductions,
            cells: &cells,
            unchecked,
        };
        let plan = Plan::new(&r.body, &entry);
        check(r, &crate::plan::tests::loops_in(&r.body), &plan);
    }

    /// The names of the arrays of the accesses a loop's versions hoist (none with one).
    fn hoisted_arrays(r: &ir::Region, v: &Versions<'_>) -> Vec<String> {
        let Versions::Two { hoisted, .. } = v else {
            return Vec::new();
        };
        hoisted
            .iter()
            .map(|h| match h.array.kind {
                ExprKind::Local(l) => r.locals[l.0 as usize].name.clone(),
                _ => panic!("an array that is not a local: {:?}", h.array),
            })
            .collect()
    }

    #[test]
    fn a_sequential_loop_has_two_versions_each_unrolled() {
        let text = "let x = zeros(100)
let s = 0.0
acc serial copy(s) {
    let t = 0.0
    for i in 0..100 { t += x[i] }
    s = t
}
";
        with_plan(text, false, |r, loops, plan| {
            let v = plan.versions(VersionId::ROOT, loops[0].id);
            assert_eq!(hoisted_arrays(r, v), ["x"]);
            let Versions::Two { fast, checked, .. } = v else {
                panic!("two versions");
            };
            // Loads need no proof to run unrolled (a trip decides their checks at its end).
            assert!(matches!(fast.unroll, Some(Unroll::Seq)));
            assert!(matches!(checked.unroll, Some(Unroll::Seq)));
            assert!(plan.unrolled());
        });
    }

    #[test]
    fn a_loop_inside_a_versioned_loop_is_planned_in_each_version() {
        let text = "let x = zeros(10)
let y = zeros(10)
let s = 0.0
acc serial copy(s) {
    let t = 0.0
    for i in 0..10 {
        for j in 0..10 {
            t += x[i] * y[j]
        }
    }
    s = t
}
";
        with_plan(text, false, |r, loops, plan| {
            let (outer, inner) = (loops[0].id, loops[1].id);
            // The outer loop hoists `x[i]` (`y[j]` changes with `j`).
            let v = plan.versions(VersionId::ROOT, outer);
            assert_eq!(hoisted_arrays(r, v), ["x"]);
            let Versions::Two { fast, checked, .. } = v else {
                panic!("two versions");
            };
            // Where the outer predicate held, `x[i]` is proven: the inner loop hoists `y[j]`
            // alone; in the checked copy it hoists both.
            assert_eq!(hoisted_arrays(r, plan.versions(fast.id, inner)), ["y"]);
            assert_eq!(
                hoisted_arrays(r, plan.versions(checked.id, inner)),
                ["x", "y"]
            );
            let x_i = match &loops[1].body[0] {
                Stmt::Set(_, e) => e,
                s => panic!("an assignment: {s:?}"),
            };
            let ExprKind::Binary(_, _, product, _) = &x_i.kind else {
                panic!("`t + x[i] * y[j]`: {x_i:?}");
            };
            let ExprKind::Binary(_, load, _, _) = &product.kind else {
                panic!("`x[i] * y[j]`: {product:?}");
            };
            let ExprKind::Load { indices, .. } = &load.kind else {
                panic!("`x[i]`: {load:?}");
            };
            let key = acc_lang::ir::bounds::access_key(indices);
            assert!(plan.is_proven(fast.id, key));
            assert!(!plan.is_proven(checked.id, key));
            assert!(!plan.is_proven(VersionId::ROOT, key));
        });
    }

    #[test]
    fn versioned_loops_nest_two_deep() {
        let text = "let x = zeros(4)
let y = zeros(4)
let z = zeros(4)
let s = 0.0
acc serial copy(s) {
    let t = 0.0
    for i in 0..4 {
        for j in 0..4 {
            for k in 0..4 {
                t += x[i] + y[j] + z[k]
            }
        }
    }
    s = t
}
";
        with_plan(text, false, |r, loops, plan| {
            let Versions::Two { fast, .. } = plan.versions(VersionId::ROOT, loops[0].id) else {
                panic!("two versions");
            };
            let Versions::Two { fast, .. } = plan.versions(fast.id, loops[1].id) else {
                panic!("two versions");
            };
            // Two versioned loops deep: the innermost keeps its checks.
            let innermost = plan.versions(fast.id, loops[2].id);
            assert!(hoisted_arrays(r, innermost).is_empty());
            assert!(matches!(innermost, Versions::One(_)));
        });
    }

    #[test]
    fn a_thread_loop_unrolls_where_its_checks_hold_and_its_arrays_differ() {
        let text = "let x = zeros(64)
let y = zeros(64)
let z = zeros(64)
acc parallel loop
for i in 0..64 {
    x[i] = 1.0
    y[i] = x[i] + z[i]
}
";
        with_plan(text, false, |r, loops, plan| {
            let v = plan.versions(VersionId::ROOT, loops[0].id);
            let Versions::Two {
                fast,
                checked,
                hoisted,
            } = v
            else {
                panic!("two versions");
            };
            assert_eq!(hoisted.len(), 4, "{hoisted:?}");
            // `x[i]` is read back from the register stored; `z` must not be `x`.
            let Some(Unroll::Threads(distinct)) = &fast.unroll else {
                panic!("unrolled: {fast:?}");
            };
            let name = |e: &ir::Expr| match e.kind {
                ExprKind::Local(l) => r.locals[l.0 as usize].name.clone(),
                _ => panic!("a local array"),
            };
            let pairs: Vec<_> = distinct.iter().map(|&(s, l)| (name(s), name(l))).collect();
            assert_eq!(pairs, [("x".to_string(), "z".to_string())]);
            assert!(checked.unroll.is_none());
        });
        // Without checks nothing is hoisted, and the one copy unrolls.
        with_plan(text, true, |_, loops, plan| {
            let Versions::One(one) = plan.versions(VersionId::ROOT, loops[0].id) else {
                panic!("one version");
            };
            assert!(matches!(one.unroll, Some(Unroll::Threads(_))));
        });
    }

    #[test]
    fn a_loop_with_a_branch_is_not_unrolled() {
        let text = "let x = zeros(64)
acc parallel loop
for i in 0..64 {
    if x[i] > 0.0 { x[i] = 1.0 }
}
";
        with_plan(text, false, |_, loops, plan| {
            let Versions::Two { fast, .. } = plan.versions(VersionId::ROOT, loops[0].id) else {
                panic!("two versions");
            };
            assert!(fast.unroll.is_none());
            assert!(!plan.unrolled());
        });
    }
}
