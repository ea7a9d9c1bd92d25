//! The plan: what the emitter does with each counted loop of a function, decided from the IR
//! before any PTX is written, keyed by the loop's `LoopId`; and how a region's gangs map to
//! blocks (`splits`; whether it runs as one gang is `ir::gangs::one_gang`, shared with the host
//! back end). The emitter (`schedule`) carries
//! it out: which threads run which iterations, which variables a loop reduces and over which
//! threads, which reductions a gang loop gathers for the vector loops inside it, and where the
//! barrier after a loop goes; and (`versions`) which bounds checks a loop hoists, the
//! versions of its code that follow, and which of them run unrolled trips (`straight`: the
//! bodies that can).
//!
//! The walk follows the emitter's: a loop's plan depends on the mode the threads are in where
//! it stands, the reductions of the constructs around it and the gang loop it is in; its
//! versions on what the versioned loops around it proved.

mod straight;
mod versions;

use std::collections::HashMap;

use acc_lang::ir::gangs::has_call;
pub(crate) use acc_lang::ir::gangs::one_gang;
use acc_lang::ir::{Block, Expr, ExprKind, ForLoop, LocalId, LoopId, Reduction, Region, Stmt};

pub(crate) use straight::element_key;
use versions::VersionPlan;
pub(crate) use versions::{Unroll, Version, VersionId, Versions};

/// How the threads of a block share the code at a point (LANGUAGE.md 7.2: gang-redundant,
/// worker-single, vector-single execution).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Mode {
    /// Every thread of the block runs the same code on the same values (outside worker and
    /// vector loops): thread (0,0) alone performs stores, atomics and output, then the block
    /// synchronizes (`bar.sync 0`) so that every thread sees them.
    Block,
    /// Each row of threads (one `%tid.y`) runs its own worker-loop iteration, its threads
    /// redundantly: the row's thread `x = 0` performs the effects, then the row synchronizes.
    Row,
    /// Each thread runs its own iterations (vector loops, and routines called from them).
    Thread,
}

impl Mode {
    /// The mode of the body of a loop with these levels that stands in this mode: its
    /// share's, or this mode for a sequential loop and one that cannot be shared here.
    pub(crate) fn inside(self, gang: bool, worker: bool, vector: bool) -> Mode {
        if !(gang || worker || vector) {
            return self;
        }
        Share::of(self, gang, worker, vector).map_or(self, Share::body)
    }
}

/// The threads a shared loop's reduction combines over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Group {
    /// Every thread of the block (vector loops outside worker loops, `worker vector`).
    Block,
    /// The threads of one row (`%tid.y`): a vector loop inside a worker loop.
    Row,
    /// The rows of the block, one value per row (that of its thread `x = 0`): worker loops.
    Rows,
}

/// Which threads run which iteration numbers of a shared loop: the rows of `schedule`'s table
/// (first iteration, stride).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Share {
    /// A gang loop: `gang`, `gangs`.
    Gangs,
    /// A worker loop: `ty`, `nty`.
    Rows,
    /// A vector or `worker vector` loop outside worker loops: `tid`, `nthreads` (in a split
    /// kernel, over the threads of the gang's blocks).
    Threads,
    /// `gang worker`: `gang * nty + ty`, `gangs * nty`.
    GangRows,
    /// `gang vector`, `gang worker vector`: `gang * nthreads + tid`, `gangs * nthreads`.
    GangThreads,
    /// A vector loop inside a worker loop: `tx`, `ntx`.
    Lanes,
}

impl Share {
    /// How a loop with these levels shares its iterations in `mode`.
    fn of(mode: Mode, gang: bool, worker: bool, vector: bool) -> Result<Share, &'static str> {
        Ok(match (mode, gang, worker, vector) {
            (Mode::Block, true, false, false) => Share::Gangs,
            (Mode::Block, false, true, false) => Share::Rows,
            (Mode::Block, false, _, true) => Share::Threads,
            (Mode::Block, true, true, false) => Share::GangRows,
            (Mode::Block, true, _, true) => Share::GangThreads,
            (Mode::Row, false, false, true) => Share::Lanes,
            (Mode::Row, ..) => return Err("a gang or worker loop inside a worker loop"),
            (Mode::Thread, ..) => return Err("a gang, worker or vector loop inside a vector loop"),
            (Mode::Block, false, false, false) => unreachable!("sequential loops are not shared"),
        })
    }

    /// The mode the loop's body runs in.
    pub(crate) fn body(self) -> Mode {
        match self {
            Share::Gangs => Mode::Block,
            Share::Rows | Share::GangRows => Mode::Row,
            Share::Threads | Share::GangThreads | Share::Lanes => Mode::Thread,
        }
    }

    /// The threads a reduction combines over, when the loop divides work among threads.
    pub(crate) fn group(self) -> Option<Group> {
        match self {
            Share::Gangs => None,
            Share::Rows | Share::GangRows => Some(Group::Rows),
            Share::Threads | Share::GangThreads => Some(Group::Block),
            Share::Lanes => Some(Group::Row),
        }
    }
}

/// Where the threads that shared a loop's iterations wait for each other after it, before
/// the code after the loop reads what they wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Barrier {
    /// Nowhere: the loop's reductions over threads end with a barrier, or no thread shared
    /// another's work.
    None,
    /// Right after the loop.
    After,
    /// At the end of the enclosing gang loop, whose body is this loop alone: nothing in the
    /// gang loop reads what the threads wrote before then (gang-loop iterations are
    /// independent).
    AtGangLoopEnd,
}

/// What the emitter does with one loop.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum LoopPlan {
    /// Every thread that shares the code runs it whole (no level, or `seq`).
    Seq,
    /// Its iterations (of a `collapse` nest, flattened) are shared among gangs and threads.
    Shared(SharedLoop),
}

/// The plan of a shared loop.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SharedLoop {
    /// Which threads run which iterations; the error where the loop cannot be shared where it
    /// stands (reported once its bounds are generated, where the emitter meets it).
    pub share: Result<Share, &'static str>,
    /// The variables it reduces: its nest's own reductions and, where it divides work among
    /// threads, the enclosing constructs' reduction variables its body assigns.
    pub reductions: Vec<Reduction>,
    /// The reductions it leaves apart in each thread, for the enclosing gang loop to reduce
    /// over the block once at its end, instead of once per gang-loop iteration (a vector loop
    /// in a gang loop that reduces the same variable with the same operator, which the gang
    /// loop's body uses nowhere else, where the threads would have to agree on it).
    pub deferred: Vec<LocalId>,
    /// A gang loop's reductions that vector loops inside it deferred to it: it reduces them
    /// over the block.
    pub gathered: Vec<LocalId>,
    pub barrier: Barrier,
}

impl SharedLoop {
    /// The threads variable `l`'s copies are reduced over after the loop, if any.
    pub(crate) fn group_of(&self, l: LocalId) -> Option<Group> {
        if self.deferred.contains(&l) {
            None
        } else if self.gathered.contains(&l) {
            Some(Group::Block)
        } else {
            self.share.ok().and_then(Share::group)
        }
    }
}

/// The plans of a function's loops.
#[derive(Debug)]
pub(crate) struct Plan<'a> {
    /// The mode the function starts in.
    mode: Mode,
    loops: HashMap<LoopId, LoopPlan>,
    versions: VersionPlan<'a>,
}

/// What the plan of a function's loops starts from besides its body.
pub(crate) struct Entry<'e> {
    /// The mode the function starts in.
    pub mode: Mode,
    /// The reductions of the constructs around the body (a region's).
    pub reductions: &'e [Reduction],
    /// The locals that live in memory cells (a kernel's `copy` scalars), which other threads
    /// may change.
    pub cells: &'e [LocalId],
    /// Bounds checks are left out (`PtxOptions::unchecked`).
    pub unchecked: bool,
}

impl<'a> Plan<'a> {
    /// The plan of the loops of `body`, a function's, which starts as `entry` says.
    pub(crate) fn new(body: &'a Block, entry: &Entry<'_>) -> Plan<'a> {
        let mut planner = Planner {
            loops: HashMap::new(),
            mode: entry.mode,
            reductions: entry.reductions.to_vec(),
            frames: Vec::new(),
        };
        planner.block(body);
        let versions = VersionPlan::new(body, &planner.loops, entry.cells, entry.unchecked);
        Plan {
            mode: entry.mode,
            loops: planner.loops,
            versions,
        }
    }

    /// The plan of code without loops (the math library's helpers), which starts in `mode`.
    pub(crate) fn no_loops(mode: Mode) -> Plan<'a> {
        Plan {
            mode,
            loops: HashMap::new(),
            versions: VersionPlan::default(),
        }
    }

    /// The mode the function starts in.
    pub(crate) fn entry_mode(&self) -> Mode {
        self.mode
    }

    /// The plan of loop `id`, which `new` walked.
    pub(crate) fn get(&self, id: LoopId) -> &LoopPlan {
        &self.loops[&id]
    }

    /// The versions of loop `id` in version `v` of the code around it.
    pub(crate) fn versions(&self, v: VersionId, id: LoopId) -> &Versions<'a> {
        self.versions.get(v, id)
    }

    /// Whether version `v` of the code counts the access with key `key`
    /// (`bounds::access_key`) as proven in bounds.
    pub(crate) fn is_proven(&self, v: VersionId, key: usize) -> bool {
        self.versions.is_proven(v, key)
    }

    /// Whether some loop runs unrolled trips.
    pub(crate) fn unrolled(&self) -> bool {
        self.versions.unrolled()
    }
}

/// A gang loop with reductions, for the loops inside it (worker and vector loops open an
/// empty one: what their bodies hold is not the gang loop's own).
#[derive(Default)]
struct GangFrame {
    reds: Vec<Reduction>,
    /// The locals its body reads or assigns outside worker and vector loops.
    mentioned: Vec<LocalId>,
    /// The reductions vector loops inside deferred to it.
    deferred: Vec<LocalId>,
    /// Its body is this loop alone.
    sole: Option<LoopId>,
    /// A loop inside left its barrier to the gang loop's end.
    sync_owed: bool,
}

struct Planner {
    loops: HashMap<LoopId, LoopPlan>,
    mode: Mode,
    /// The reductions of the enclosing constructs (region, loops).
    reductions: Vec<Reduction>,
    frames: Vec<GangFrame>,
}

impl Planner {
    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            match s {
                Stmt::For(f) => self.for_loop(f),
                Stmt::If { then, els, .. } => {
                    self.block(then);
                    self.block(els);
                }
                Stmt::While { body, .. } | Stmt::Block(body) | Stmt::DataRegion { body, .. } => {
                    self.block(body)
                }
                Stmt::Atomic(a) => self.block(std::slice::from_ref(&*a.body)),
                _ => {}
            }
        }
    }

    /// Plans `body` with `reds` added to the enclosing reductions.
    fn inside(&mut self, reds: &[Reduction], body: &Block) {
        let depth = self.reductions.len();
        self.reductions.extend(reds.iter().copied());
        self.block(body);
        self.reductions.truncate(depth);
    }

    fn for_loop(&mut self, f: &ForLoop) {
        let s = &f.schedule;
        let plan = if !(s.gang || s.worker || s.vector) {
            self.inside(&s.reductions, &f.body);
            LoopPlan::Seq
        } else {
            // A nest the emitter cannot flatten fails there, before any plan is read.
            let Ok(nest) = collapse_nest(f) else {
                return;
            };
            LoopPlan::Shared(self.shared_loop(&nest))
        };
        let old = self.loops.insert(f.id, plan);
        debug_assert!(old.is_none(), "loop id {} used twice", f.id.0);
    }

    fn shared_loop(&mut self, nest: &[&ForLoop]) -> SharedLoop {
        let head = nest[0];
        let s = &head.schedule;
        let body = &nest[nest.len() - 1].body;
        let share = Share::of(self.mode, s.gang, s.worker, s.vector);
        let mut plan = SharedLoop {
            share,
            reductions: Vec::new(),
            deferred: Vec::new(),
            gathered: Vec::new(),
            barrier: Barrier::None,
        };
        let Ok(share) = share else {
            return plan;
        };
        let group = share.group();
        let reds = self.reductions_of(nest, group.is_some());
        if group == Some(Group::Block) {
            plan.deferred = self.defer(&reds);
        }
        let sole = group.is_some() && self.frames.last().is_some_and(|f| f.sole == Some(head.id));
        // A gang loop opens a frame for the loops inside it; worker and vector loops open an
        // empty one (what their bodies hold is not the gang loop's own).
        let frame = match group {
            None => {
                let mut mentioned = Vec::new();
                locals_outside_thread_loops(body, &mut mentioned);
                GangFrame {
                    reds: reds.clone(),
                    mentioned,
                    sole: match body.as_slice() {
                        [Stmt::For(f)] => Some(f.id),
                        _ => None,
                    },
                    ..GangFrame::default()
                }
            }
            Some(_) => GangFrame::default(),
        };
        self.frames.push(frame);
        let outer_mode = std::mem::replace(&mut self.mode, share.body());
        self.inside(&reds, body);
        self.mode = outer_mode;
        let frame = self.frames.pop().unwrap_or_default();
        plan.gathered = frame.deferred;

        // The reductions over threads end with a barrier; without one, the threads that
        // shared the iterations wait for each other after the loop (or the gang loop around
        // waits, see `GangFrame::sole`).
        let owes_sync = match group {
            Some(_) => reds.iter().all(|r| plan.deferred.contains(&r.var)),
            None => frame.sync_owed && !reds.iter().any(|r| plan.gathered.contains(&r.var)),
        };
        if owes_sync {
            plan.barrier = match self.frames.last_mut() {
                Some(f) if sole => {
                    f.sync_owed = true;
                    Barrier::AtGangLoopEnd
                }
                _ => Barrier::After,
            };
        }
        plan.reductions = reds;
        plan
    }

    /// The variables a shared loop reduces: its nest's own reductions and, where it divides
    /// work among threads (`among_threads`), the enclosing constructs' reduction variables
    /// its body assigns.
    fn reductions_of(&self, nest: &[&ForLoop], among_threads: bool) -> Vec<Reduction> {
        let mut reds: Vec<Reduction> = Vec::new();
        for f in nest {
            for &r in &f.schedule.reductions {
                if !reds.iter().any(|x| x.var == r.var) {
                    reds.push(r);
                }
            }
        }
        if among_threads {
            let mut assigned = Vec::new();
            assigned_locals(&nest[nest.len() - 1].body, &mut assigned);
            for &r in &self.reductions {
                if assigned.contains(&r.var) && !reds.iter().any(|x| x.var == r.var) {
                    reds.push(r);
                }
            }
        }
        reds
    }

    /// Of a vector loop's reductions (`reds`), those it leaves to the enclosing gang loop:
    /// the gang loop reduces the same variable with the same operator and uses it nowhere
    /// else in its body (outside worker and vector loops).
    fn defer(&mut self, reds: &[Reduction]) -> Vec<LocalId> {
        let mut deferred = Vec::new();
        if let Some(frame) = self.frames.last_mut() {
            for r in reds {
                if frame.reds.contains(r) && !frame.mentioned.contains(&r.var) {
                    deferred.push(r.var);
                    if !frame.deferred.contains(&r.var) {
                        frame.deferred.push(r.var);
                    }
                }
            }
        }
        deferred
    }
}

/// Whether a region may spread each gang over several blocks (`KernelLaunch::split`): its body is
/// one gang loop whose body is one vector loop, with no reductions and bounds without calls
/// (code that every block of a gang runs must be free of effects). Memory-bound loop nests
/// like Jacobi's copy want many small blocks, as hand-written CUDA launches (the H100 runs
/// the copy 10% faster with four iterations per thread than with a row per block), but a
/// gang loop of 4094 rows gives only 4094 blocks of rows.
pub(crate) fn splits(r: &Region) -> bool {
    fn only_loop(body: &[Stmt]) -> Option<&ForLoop> {
        match body {
            [Stmt::For(f)] if f.schedule.reductions.is_empty() && f.schedule.collapse <= 1 => {
                let bounds = [&f.start, &f.end, &f.step];
                bounds.iter().all(|e| !has_call(e)).then_some(f)
            }
            _ => None,
        }
    }
    let Some(gang) = only_loop(&r.body) else {
        return false;
    };
    let Some(vector) = only_loop(&gang.body) else {
        return false;
    };
    let (g, v) = (&gang.schedule, &vector.schedule);
    r.reductions.is_empty()
        && !one_gang(r)
        && (g.gang && !g.worker && !g.vector)
        && (v.vector && !v.gang && !v.worker)
}

/// The loops of a `collapse(n)` nest headed by `f`: the next `n - 1` loops are each the only
/// statement of the previous one's body.
pub(crate) fn collapse_nest(f: &ForLoop) -> Result<Vec<&ForLoop>, &'static str> {
    let n = f.schedule.collapse.max(1) as usize;
    let mut nest = vec![f];
    while nest.len() < n {
        let last = nest[nest.len() - 1];
        match last.body.as_slice() {
            [Stmt::For(inner)] => nest.push(inner),
            _ => return Err("a `collapse` nest that is not perfectly nested"),
        }
    }
    Ok(nest)
}

/// Every local that `stmts` assign (`Set`), at any depth.
fn assigned_locals(stmts: &[Stmt], out: &mut Vec<LocalId>) {
    for s in stmts {
        match s {
            Stmt::Set(l, _) => out.push(*l),
            Stmt::If { then, els, .. } => {
                assigned_locals(then, out);
                assigned_locals(els, out);
            }
            Stmt::While { body, .. } => assigned_locals(body, out),
            Stmt::For(f) => {
                out.push(f.var);
                assigned_locals(&f.body, out);
            }
            Stmt::Atomic(a) => assigned_locals(std::slice::from_ref(&*a.body), out),
            Stmt::Block(b) => assigned_locals(b, out),
            Stmt::DataRegion { body, .. } => assigned_locals(body, out),
            _ => {}
        }
    }
}

/// Every local that `stmts` read or assign outside the worker and vector loops in them.
fn locals_outside_thread_loops(stmts: &[Stmt], out: &mut Vec<LocalId>) {
    let expr = |e: &Expr, out: &mut Vec<LocalId>| locals_read(e, out);
    for s in stmts {
        match s {
            Stmt::For(f) if f.schedule.worker || f.schedule.vector => {}
            Stmt::For(f) => {
                out.push(f.var);
                expr(&f.start, out);
                expr(&f.end, out);
                expr(&f.step, out);
                locals_outside_thread_loops(&f.body, out);
            }
            Stmt::Set(l, e) => {
                out.push(*l);
                expr(e, out);
            }
            Stmt::Store {
                array,
                indices,
                value,
                ..
            } => {
                expr(array, out);
                indices.iter().for_each(|i| expr(i, out));
                expr(value, out);
            }
            Stmt::Eval(e) | Stmt::SetGlobal(_, e) | Stmt::Retain(e) | Stmt::Release(e) => {
                expr(e, out)
            }
            Stmt::Return(e) => e.iter().for_each(|e| expr(e, out)),
            Stmt::If { cond, then, els } => {
                expr(cond, out);
                locals_outside_thread_loops(then, out);
                locals_outside_thread_loops(els, out);
            }
            Stmt::While { cond, body, .. } => {
                expr(cond, out);
                locals_outside_thread_loops(body, out);
            }
            Stmt::Print(args, _) => {
                for a in args {
                    if let acc_lang::ir::PrintArg::Value(e) = a {
                        expr(e, out);
                    }
                }
            }
            Stmt::Printf(_, args, _) => args.iter().for_each(|a| expr(a, out)),
            Stmt::Assert { cond, .. } => expr(cond, out),
            Stmt::Atomic(a) => locals_outside_thread_loops(std::slice::from_ref(&*a.body), out),
            Stmt::Block(b) => locals_outside_thread_loops(b, out),
            Stmt::DataRegion { body, .. } => locals_outside_thread_loops(body, out),
            Stmt::Break | Stmt::Continue | Stmt::Launch(_) | Stmt::Data(_) | Stmt::Wait { .. } => {}
        }
    }
}

/// Every local that `e` reads.
fn locals_read(e: &Expr, out: &mut Vec<LocalId>) {
    match &e.kind {
        ExprKind::Local(l) => out.push(*l),
        ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => {
            locals_read(x, out)
        }
        ExprKind::Binary(_, a, b, _) => {
            locals_read(a, out);
            locals_read(b, out);
        }
        ExprKind::Load { array, indices, .. } => {
            locals_read(array, out);
            indices.iter().for_each(|i| locals_read(i, out));
        }
        ExprKind::Call(_, args)
        | ExprKind::Builtin(_, args)
        | ExprKind::CheckedBuiltin(_, args, _)
        | ExprKind::ArrayLit(args, _) => args.iter().for_each(|a| locals_read(a, out)),
        ExprKind::Section { array, ranges } => {
            locals_read(array, out);
            for r in ranges {
                r.start
                    .iter()
                    .chain(r.count.iter())
                    .for_each(|x| locals_read(x, out));
            }
        }
        ExprKind::Const(_) | ExprKind::Global(_) => {}
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use acc_lang::ir::{self, ForLoop, Stmt};
    use acc_lang::span::SourceFile;

    use super::{Barrier, Entry, Group, LoopPlan, Mode, Plan, Share, SharedLoop};

    /// The plans of the loops of the first region of `text`, outermost first.
    fn plans(text: &str) -> Vec<LoopPlan> {
        let m = acc_lang::lower_source(&SourceFile::new("test.acc", text))
            .unwrap_or_else(|d| panic!("{d:?}"));
        let r = &m.regions[0];
        let reductions: Vec<_> = r.reductions.iter().map(|x| x.reduction).collect();
        let entry = Entry {
            mode: Mode::Block,
            reductions: &reductions,
            cells: &[],
            unchecked: false,
        };
        let plan = Plan::new(&r.body, &entry);
        loops_in(&r.body)
            .iter()
            .map(|f| plan.get(f.id).clone())
            .collect()
    }

    /// The counted loops of `body` in pre-order (the plan tests' view of a region).
    pub(in crate::plan) fn loops_in(body: &[Stmt]) -> Vec<&ForLoop> {
        fn walk<'a>(body: &'a [Stmt], out: &mut Vec<&'a ForLoop>) {
            for s in body {
                match s {
                    Stmt::For(f) => {
                        out.push(f);
                        walk(&f.body, out);
                    }
                    Stmt::If { then, els, .. } => {
                        walk(then, out);
                        walk(els, out);
                    }
                    Stmt::Block(b) => walk(b, out),
                    _ => {}
                }
            }
        }
        let mut loops = Vec::new();
        walk(body, &mut loops);
        loops
    }

    fn shared(p: &LoopPlan) -> &SharedLoop {
        match p {
            LoopPlan::Shared(s) => s,
            LoopPlan::Seq => panic!("a sequential loop"),
        }
    }

    #[test]
    fn a_vector_loop_alone_in_a_gang_loop_leaves_its_reduction_and_barrier_to_it() {
        let p = plans(
            "let a = ones(8, 8)
let s = 0.0
acc parallel loop gang reduction(+: s)
for i in 0..8 {
    acc loop vector reduction(+: s)
    for j in 0..8 { s += a[i, j] }
}
",
        );
        let (gang, vector) = (shared(&p[0]), shared(&p[1]));
        assert_eq!(gang.share, Ok(Share::Gangs));
        assert_eq!(vector.share, Ok(Share::Threads));
        let s = vector.reductions[0].var;
        assert_eq!(vector.deferred, vec![s]);
        assert_eq!(vector.group_of(s), None);
        assert_eq!(vector.barrier, Barrier::AtGangLoopEnd);
        // The gang loop reduces the threads' copies once, which ends with a barrier.
        assert_eq!(gang.gathered, vec![s]);
        assert_eq!(gang.group_of(s), Some(Group::Block));
        assert_eq!(gang.barrier, Barrier::None);
    }

    #[test]
    fn a_vector_loop_beside_other_code_synchronizes_after_itself() {
        let p = plans(
            "let a = zeros(8, 8)
let b = zeros(8)
acc parallel loop gang copy(a, b)
for i in 0..8 {
    acc loop vector
    for j in 0..8 { a[i, j] = 1.0 }
    b[i] = a[i, 0]
}
",
        );
        let (gang, vector) = (shared(&p[0]), shared(&p[1]));
        assert_eq!(vector.barrier, Barrier::After);
        assert_eq!(gang.barrier, Barrier::None);
        assert!(vector.reductions.is_empty() && gang.gathered.is_empty());
    }

    #[test]
    fn a_vector_loop_in_a_worker_loop_shares_the_row_and_reduces_over_it() {
        let p = plans(
            "let a = ones(8, 8)
let s = 0.0
acc parallel loop gang worker reduction(+: s)
for i in 0..8 {
    acc loop vector
    for j in 0..8 {
        for k in 0..2 { s += a[i, j] }
    }
}
",
        );
        let (rows, lanes) = (shared(&p[0]), shared(&p[1]));
        assert_eq!(rows.share, Ok(Share::GangRows));
        assert_eq!(lanes.share, Ok(Share::Lanes));
        assert_eq!(p[2], LoopPlan::Seq);
        // The vector loop updates the worker loop's reduction variable: it reduces it over
        // its row's threads first.
        let s = rows.reductions[0].var;
        assert_eq!(lanes.reductions, rows.reductions);
        assert_eq!(lanes.group_of(s), Some(Group::Row));
        assert_eq!(rows.group_of(s), Some(Group::Rows));
    }

    #[test]
    fn shares_follow_the_levels_and_the_mode() {
        use Mode::*;
        let cases = [
            (Block, [true, false, false], Share::Gangs, Block, None),
            (
                Block,
                [false, true, false],
                Share::Rows,
                Row,
                Some(Group::Rows),
            ),
            (
                Block,
                [false, false, true],
                Share::Threads,
                Thread,
                Some(Group::Block),
            ),
            (
                Block,
                [false, true, true],
                Share::Threads,
                Thread,
                Some(Group::Block),
            ),
            (
                Block,
                [true, true, false],
                Share::GangRows,
                Row,
                Some(Group::Rows),
            ),
            (
                Block,
                [true, false, true],
                Share::GangThreads,
                Thread,
                Some(Group::Block),
            ),
            (
                Block,
                [true, true, true],
                Share::GangThreads,
                Thread,
                Some(Group::Block),
            ),
            (
                Row,
                [false, false, true],
                Share::Lanes,
                Thread,
                Some(Group::Row),
            ),
        ];
        for (mode, [g, w, v], share, body, group) in cases {
            assert_eq!(Share::of(mode, g, w, v), Ok(share), "{mode:?} {g} {w} {v}");
            assert_eq!((share.body(), share.group()), (body, group));
        }
        // A loop's body runs in its share's mode; a sequential loop's in the mode around it.
        assert_eq!(Block.inside(false, true, true), Thread);
        assert_eq!(Block.inside(false, false, false), Block);
        assert_eq!(Row.inside(false, false, false), Row);
        assert_eq!(Row.inside(false, false, true), Thread);
        // Levels the checker orders (a routine's callers too): refused, not mis-shared.
        assert!(Share::of(Row, false, true, false).is_err());
        assert!(Share::of(Row, true, false, false).is_err());
        assert!(Share::of(Thread, false, false, true).is_err());
    }

    #[test]
    fn loop_ids_are_unique_within_a_region() {
        let m = acc_lang::lower_source(&SourceFile::new(
            "test.acc",
            "let a = zeros(8, 8)
acc parallel loop gang copy(a)
for i in 0..8 {
    for j in 0..8 { a[i, j] = 1.0 }
    for j in 0..8 { a[i, j] += 1.0 }
}
",
        ))
        .unwrap_or_else(|d| panic!("{d:?}"));
        let ir::Stmt::For(f) = &m.regions[0].body[0] else {
            panic!("a loop");
        };
        let mut ids = vec![f.id];
        ids.extend(f.body.iter().filter_map(|s| match s {
            ir::Stmt::For(g) => Some(g.id),
            _ => None,
        }));
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 3);
    }
}
