//! Which loop bodies can run unrolled (`crate::unroll` generates them): straight-line code.
//!
//! A sequential loop's body qualifies when it is assignments of locals in registers and
//! stores whose checks are proven, of expressions without calls or checks other than loads'
//! bounds (those a trip decides at its end). A thread loop's copies hold their stores back
//! until every copy has loaded, so for them every load must be proven too, and a load of an
//! array the body has stored to must read the very element stored (which the copy then takes
//! from the stored register); a read of another array name after a store qualifies only
//! where the two names are different arrays at run time, which the loop checks first.

use std::collections::HashSet;

use acc_lang::ir::bounds;
use acc_lang::ir::{Block, Expr, ExprKind, LocalId, Stmt};

/// Pairs of an array stored to and an array read after it, which must be different arrays
/// at run time (arrays are references: two names can be one array) for a thread loop's
/// copies to load before they store.
pub(crate) type Distinct<'a> = Vec<(&'a Expr, &'a Expr)>;

/// What a body's accesses may count on: whether an access's checks are proven (or left
/// out), and which locals live in memory cells (not registers).
pub(super) struct Facts<'f> {
    pub proven: &'f dyn Fn(&[Expr]) -> bool,
    pub cell: &'f dyn Fn(LocalId) -> bool,
}

/// Whether a sequential loop's `body` can run unrolled.
pub(super) fn sequential(body: &Block, facts: &Facts<'_>) -> bool {
    Straight {
        facts,
        forwarding: None,
    }
    .block(body)
}

/// Whether the body of a loop shared among threads can run unrolled, its copies' stores held
/// back: if so, the pairs of arrays that must be distinct at run time.
pub(super) fn threads<'a>(body: &'a Block, facts: &Facts<'_>) -> Option<Distinct<'a>> {
    let mut f = Forwarding::default();
    bounds::assigned(body, &mut f.assigned);
    let mut s = Straight {
        facts,
        forwarding: Some(f),
    };
    s.block(body)
        .then(|| s.forwarding.map(|f| f.distinct).unwrap_or_default())
}

/// The name of an element, `array[indices]`, for matching a load with a store (here, and
/// in the unrolled copies' forwarding).
pub(crate) fn element_key(array: &Expr, indices: &[Expr]) -> String {
    format!("{array:?}{indices:?}")
}

/// The walk over a body: straight-line, and for a thread loop's copies (`forwarding`) every
/// load proven and forwarded where it must be.
struct Straight<'f, 'a> {
    facts: &'f Facts<'f>,
    forwarding: Option<Forwarding<'a>>,
}

/// What a body stored so far, for `Straight`'s forwarding rule.
#[derive(Default)]
struct Forwarding<'a> {
    assigned: HashSet<LocalId>,
    stored: Vec<(String, &'a Expr)>,
    elements: HashSet<String>,
    distinct: Distinct<'a>,
    /// The pairs of `distinct` by name, either way round.
    pairs: HashSet<(String, String)>,
}

impl<'a> Straight<'_, 'a> {
    fn block(&mut self, body: &'a Block) -> bool {
        body.iter().all(|s| match s {
            Stmt::Set(l, e) => !(self.facts.cell)(*l) && self.expr(e),
            Stmt::Store {
                array,
                indices,
                value,
                site,
            } => {
                let ok = self.expr(array)
                    && indices.iter().all(|e| self.expr(e))
                    && self.expr(value)
                    && (site.is_none() || (self.facts.proven)(indices));
                match self.forwarding.as_mut() {
                    Some(f) => ok && f.store(array, indices),
                    None => ok,
                }
            }
            _ => false,
        })
    }

    fn expr(&mut self, e: &'a Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) | ExprKind::Local(_) => true,
            ExprKind::Unary(_, x) | ExprKind::Convert(x) => self.expr(x),
            ExprKind::Binary(_, l, r, site) => site.is_none() && self.expr(l) && self.expr(r),
            ExprKind::Builtin(b, args) => b.is_math() && args.iter().all(|a| self.expr(a)),
            ExprKind::Load {
                array,
                indices,
                site,
            } => {
                let parts = self.expr(array) && indices.iter().all(|e| self.expr(e));
                match self.forwarding.as_mut() {
                    Some(f) => {
                        parts
                            && (site.is_none() || (self.facts.proven)(indices))
                            && f.load(array, indices)
                    }
                    None => parts,
                }
            }
            _ => false,
        }
    }
}

impl<'a> Forwarding<'a> {
    fn store(&mut self, array: &'a Expr, indices: &[Expr]) -> bool {
        let key = format!("{array:?}");
        if !self.stored.iter().any(|(k, _)| *k == key) {
            self.stored.push((key, array));
        }
        self.elements.insert(element_key(array, indices));
        indices.iter().all(|e| self.fixed(e))
    }

    /// A read of `array[indices]`: one of an array not stored to before, or of an element
    /// stored before (forwarded). Either way no array stored to under another name may be
    /// the same array: the read would have to see that store.
    fn load(&mut self, array: &'a Expr, indices: &[Expr]) -> bool {
        let key = format!("{array:?}");
        let mut forwarded = false;
        for &(ref k, s) in &self.stored {
            if *k == key {
                forwarded = true;
            } else if self.pairs.insert(if *k < key {
                (k.clone(), key.clone())
            } else {
                (key.clone(), k.clone())
            }) {
                self.distinct.push((s, array));
            }
        }
        !forwarded
            || (self.elements.contains(&element_key(array, indices))
                && indices.iter().all(|e| self.fixed(e)))
    }

    /// Whether an index names the same element wherever it appears in the body: it reads no
    /// local the body assigns.
    fn fixed(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Const(_) => true,
            ExprKind::Local(l) => !self.assigned.contains(l),
            ExprKind::Unary(_, x) | ExprKind::Convert(x) => self.fixed(x),
            ExprKind::Binary(_, l, r, None) => self.fixed(l) && self.fixed(r),
            _ => false,
        }
    }
}
