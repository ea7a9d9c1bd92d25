//! How many gangs a region may run with, for every back end: `serial` regions and most
//! `kernels` regions run as one gang (LANGUAGE.md 7.6); GPUs and the host devices read the same
//! answer.

use super::{Construct, Expr, ExprKind, Region, Stmt};

/// Whether a region must run as one gang: `serial` regions, and `kernels` regions other than
/// a single gang loop nest (whose statements outside the nest run once, LANGUAGE.md 7.6, and
/// whose loops may read what earlier statements wrote, which gangs cannot wait for). Every
/// block of a launch runs the code outside gang loops, so only assignments of a gang's own
/// scalars may stand beside the one loop nest: an assignment of a `copy` scalar's cell, run
/// by every block, would apply as many times as there are blocks, and a region with no gang
/// loop at all is all such code.
pub fn one_gang(r: &Region) -> bool {
    match r.construct {
        Construct::Serial | Construct::SerialLoop => true,
        Construct::Kernels | Construct::KernelsLoop => {
            let mut gang_loops = 0;
            for s in &r.body {
                match s {
                    Stmt::For(f) if f.schedule.gang => gang_loops += 1,
                    Stmt::Set(l, e) if !has_call(e) && !r.is_cell(l.0 as usize) => {}
                    _ => return true,
                }
            }
            gang_loops != 1
        }
        _ => false,
    }
}

/// Whether evaluating `e` calls a function (whose effects every gang would repeat).
pub fn has_call(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Call(..) => true,
        ExprKind::Unary(_, x) | ExprKind::Convert(x) | ExprKind::Param(_, x, _) => has_call(x),
        ExprKind::Binary(_, a, b, _) => has_call(a) || has_call(b),
        ExprKind::Load { array, indices, .. } => has_call(array) || indices.iter().any(has_call),
        ExprKind::Builtin(_, args) | ExprKind::CheckedBuiltin(_, args, _) => {
            args.iter().any(has_call)
        }
        _ => false,
    }
}
