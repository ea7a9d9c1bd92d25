//! Reductions (LANGUAGE.md 7.5) as the back ends receive them: which local accumulates, with
//! which operator, of which type, starting from which value. Lowering builds each one here, so
//! that the operator's identity is decided once; a back end only reads it.

use super::{Const, LocalId, ReductionOp, ScalarType};

/// A reduction: `var` accumulates with `op` from `identity`. A loop's reduction
/// (`LoopSchedule::reductions`) gives each thread a copy of `var` starting at `identity` and
/// combines the copies into it after the loop; a region's (`RegionReduction`) gives each gang
/// one, combined with the host value after the launch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reduction {
    /// The accumulating local, of type `ty`.
    pub var: LocalId,
    pub op: ReductionOp,
    pub ty: ScalarType,
    /// `x op identity == x` for every `x` of `ty`: each copy's starting value.
    pub identity: Const,
}

impl Reduction {
    /// The reduction of `var` (of type `ty`) with `op`; `None` when `op` does not apply to
    /// `ty` (the checker rejects those: arithmetic and `max`/`min` need a number, the bitwise
    /// operators an integer, `&&`/`||` a bool).
    pub fn new(var: LocalId, op: ReductionOp, ty: ScalarType) -> Option<Reduction> {
        Some(Reduction {
            var,
            op,
            ty,
            identity: identity(op, ty)?,
        })
    }
}

/// The value a reduction with `op` on `ty` starts from, where `op` applies to `ty`.
fn identity(op: ReductionOp, t: ScalarType) -> Option<Const> {
    use ReductionOp as R;
    use ScalarType as S;
    Some(match (op, t) {
        (R::And, S::Bool) => Const::Bool(true),
        (R::Or, S::Bool) => Const::Bool(false),
        (R::Add | R::BitOr | R::BitXor, S::I32) => Const::I32(0),
        (R::Add | R::BitOr | R::BitXor, S::I64) => Const::I64(0),
        (R::Add, S::F32) => Const::F32(0.0),
        (R::Add, S::F64) => Const::F64(0.0),
        (R::Mul, S::I32) => Const::I32(1),
        (R::Mul, S::I64) => Const::I64(1),
        (R::Mul, S::F32) => Const::F32(1.0),
        (R::Mul, S::F64) => Const::F64(1.0),
        (R::BitAnd, S::I32) => Const::I32(-1),
        (R::BitAnd, S::I64) => Const::I64(-1),
        (R::Max, S::I32) => Const::I32(i32::MIN),
        (R::Max, S::I64) => Const::I64(i64::MIN),
        (R::Max, S::F32) => Const::F32(f32::NEG_INFINITY),
        (R::Max, S::F64) => Const::F64(f64::NEG_INFINITY),
        (R::Min, S::I32) => Const::I32(i32::MAX),
        (R::Min, S::I64) => Const::I64(i64::MAX),
        (R::Min, S::F32) => Const::F32(f32::INFINITY),
        (R::Min, S::F64) => Const::F64(f64::INFINITY),
        (R::And | R::Or, _)
        | (R::Add | R::Mul | R::Max | R::Min | R::BitAnd | R::BitOr | R::BitXor, S::Bool)
        | (R::BitAnd | R::BitOr | R::BitXor, S::F32 | S::F64) => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_leave_every_value_as_it_is() {
        let red = |op, t| Reduction::new(LocalId(0), op, t).map(|r| r.identity);
        assert_eq!(
            red(ReductionOp::Add, ScalarType::F64),
            Some(Const::F64(0.0))
        );
        assert_eq!(
            red(ReductionOp::Max, ScalarType::I32),
            Some(Const::I32(i32::MIN))
        );
        assert_eq!(
            red(ReductionOp::Min, ScalarType::F32),
            Some(Const::F32(f32::INFINITY))
        );
        assert_eq!(
            red(ReductionOp::BitAnd, ScalarType::I64),
            Some(Const::I64(-1))
        );
        assert_eq!(
            red(ReductionOp::And, ScalarType::Bool),
            Some(Const::Bool(true))
        );
        assert_eq!(
            red(ReductionOp::Or, ScalarType::Bool),
            Some(Const::Bool(false))
        );
        // Every identity is of the reduction's type.
        for op in [
            ReductionOp::Add,
            ReductionOp::Mul,
            ReductionOp::Max,
            ReductionOp::Min,
            ReductionOp::BitAnd,
            ReductionOp::BitOr,
            ReductionOp::BitXor,
            ReductionOp::And,
            ReductionOp::Or,
        ] {
            for t in [
                ScalarType::Bool,
                ScalarType::I32,
                ScalarType::I64,
                ScalarType::F32,
                ScalarType::F64,
            ] {
                if let Some(c) = red(op, t) {
                    assert_eq!(c.ty(), t, "{op:?} {t:?}");
                }
            }
        }
    }

    #[test]
    fn operators_that_do_not_apply_have_no_identity() {
        assert!(Reduction::new(LocalId(0), ReductionOp::BitAnd, ScalarType::F64).is_none());
        assert!(Reduction::new(LocalId(0), ReductionOp::Add, ScalarType::Bool).is_none());
        assert!(Reduction::new(LocalId(0), ReductionOp::And, ScalarType::I32).is_none());
    }
}
