//! Delta debugging over the program tree: delete removable statements (in halving chunks, then
//! one by one), then simplify expressions, for as long as the program stays interesting (still
//! differs between the same devices in the same way).

use crate::tree::Program;

/// The smallest program found that `interesting` accepts; `budget` bounds the number of
/// candidates tried.
pub fn shrink(
    start: &Program,
    budget: usize,
    mut interesting: impl FnMut(&Program) -> bool,
) -> Program {
    let mut best = start.clone();
    let mut tries = 0;
    loop {
        let mut changed = false;
        // statements
        let mut ids = best.removable_ids();
        let mut chunk = (ids.len() / 2).max(1);
        while !ids.is_empty() {
            let mut i = 0;
            while i < ids.len() && tries < budget {
                let end = (i + chunk).min(ids.len());
                let cand = best.without(&ids[i..end]);
                tries += 1;
                if interesting(&cand) {
                    best = cand;
                    ids = best.removable_ids();
                    changed = true;
                } else {
                    i += chunk;
                }
            }
            if chunk == 1 || tries >= budget {
                break;
            }
            chunk /= 2;
        }
        // expressions
        let mut k = 0;
        loop {
            let edits = best.expr_edits();
            if k >= edits.len() || tries >= budget {
                break;
            }
            let (id, with) = &edits[k];
            let cand = best.replace_expr(*id, with);
            tries += 1;
            if cand.source() != best.source() && interesting(&cand) {
                best = cand;
                changed = true;
            } else {
                k += 1;
            }
        }
        if !changed || tries >= budget {
            return best;
        }
    }
}
