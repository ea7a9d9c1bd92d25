//! How the REPL shows the value of a top-level expression statement (`Options::print_values`):
//! as `print` writes it, except that
//! - an array too large to print whole (a dimension longer than `PRINT_ELIDE_ABOVE`, which
//!   `print` elides in the middle) is headed by its element type and shape, `f64[1000, 1000]`,
//!   as NumPy adds the shape to an array it summarizes;
//! - a device type (the value of `acc_get_device_type()`, or a device type named on its own,
//!   `acc_device_nvidia`) shows its name, `acc_device_host`, rather than its number.

use super::body::Body;
use super::expr::{constant, expr};
use crate::builtins::{parse_format, Builtin, BuiltinConst, PRINT_ELIDE_ABOVE};
use crate::hir::{self, Const};
use crate::ir::{self, BinOp, ExprKind, PrintArg, ScalarType, SiteId, Stmt, Ty};

impl Body<'_, '_> {
    /// Print the value of `e`, a top-level expression statement of the REPL.
    pub(super) fn show_value(&mut self, e: &hir::Expr) {
        let x = self.operand(e);
        let site = self.cx.site(e.span, "print");
        let names_device_type = matches!(e.kind, hir::ExprKind::Const(Const::I32(_)))
            && self.cx.program.device_type_names.contains(&e.span);
        if names_device_type
            || matches!(e.kind, hir::ExprKind::Builtin(Builtin::AccGetDeviceType, _))
        {
            self.show_device_type(x, site);
            return;
        }
        if let Ty::Array { elem, rank } = x.ty {
            let x = self.reusable(x);
            self.show_shape_if_elided(&x, elem, rank, site);
            self.emit(Stmt::Print(vec![PrintArg::Value(x)], site));
            return;
        }
        self.emit(Stmt::Print(vec![PrintArg::Value(x)], site));
    }

    /// `x` as an expression that may be evaluated again: a variable, or a temporary holding it.
    fn reusable(&mut self, x: ir::Expr) -> ir::Expr {
        if matches!(x.kind, ExprKind::Local(_) | ExprKind::Global(_)) {
            return x;
        }
        let t = self.temp(x.ty);
        self.emit(Stmt::Set(t, x));
        self.local(t)
    }

    /// `if size(x, 0) > N || … { printf("f64[%d, %d]\n", size(x, 0), …) }`.
    fn show_shape_if_elided(&mut self, x: &ir::Expr, elem: ScalarType, rank: u8, site: SiteId) {
        let extents: Vec<ir::Expr> = (0..i64::from(rank))
            .map(|d| {
                expr(
                    ExprKind::CheckedBuiltin(
                        Builtin::Size,
                        vec![x.clone(), constant(Const::I64(d))],
                        site,
                    ),
                    Ty::Scalar(ScalarType::I64),
                )
            })
            .collect();
        let limit = constant(Const::I64(PRINT_ELIDE_ABOVE as i64));
        let bool_ty = Ty::Scalar(ScalarType::Bool);
        let elided = extents
            .iter()
            .map(|n| {
                let gt = ExprKind::Binary(
                    BinOp::Gt,
                    Box::new(n.clone()),
                    Box::new(limit.clone()),
                    None,
                );
                expr(gt, bool_ty)
            })
            .reduce(|a, b| {
                expr(
                    ExprKind::Binary(BinOp::Or, Box::new(a), Box::new(b), None),
                    bool_ty,
                )
            });
        let Some(cond) = elided else {
            return;
        };
        let dims = vec!["%d"; extents.len()].join(", ");
        let Ok(pieces) = parse_format(&format!("{}[{dims}]\n", elem.name())) else {
            return;
        };
        let header = Stmt::Printf(self.cx.format(pieces), extents, site);
        self.emit(Stmt::If {
            cond,
            then: vec![header],
            els: Vec::new(),
        });
    }

    /// `if t == acc_device_host { print("acc_device_host") } else if … else { print(t) }`.
    fn show_device_type(&mut self, x: ir::Expr, site: SiteId) {
        let t = self.temp(x.ty);
        self.emit(Stmt::Set(t, x));
        let value = self.local(t);
        let mut shown = Stmt::Print(vec![PrintArg::Value(value.clone())], site);
        let device_types = BuiltinConst::ALL.iter().filter(|c| c.is_device_type());
        for c in device_types.rev() {
            let cond = expr(
                ExprKind::Binary(
                    BinOp::Eq,
                    Box::new(value.clone()),
                    Box::new(constant(Const::I32(c.value()))),
                    None,
                ),
                Ty::Scalar(ScalarType::Bool),
            );
            let name = Stmt::Print(vec![PrintArg::Str(self.cx.string(c.name()))], site);
            shown = Stmt::If {
                cond,
                then: vec![name],
                els: vec![shown],
            };
        }
        self.emit(shown);
    }
}
