//! `imshow(a[, "file.png"])` and `plot([x,] y[, "file.png"])` (LANGUAGE.md section 6): the
//! ranks are part of the arrays' types, so a wrong rank is a compile error here; lengths and
//! emptiness are known only at run time (the library reports them at the call).

use crate::ast::{self, ExprKind as A};
use crate::builtins::Builtin;
use crate::diag::Diagnostic;
use crate::hir::{Expr, Type};

use super::Cx;
use crate::span::Span;

impl Cx<'_> {
    /// `imshow(a[, path])`: a rank-2 array, then the optional path.
    pub(super) fn imshow(&mut self, args: &[ast::Expr], span: Span) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(Builtin::Imshow, args, span, 1, 2) {
            return None;
        }
        let a = self.picture_array(Builtin::Imshow, &args[0], 2);
        let path = args.get(1).map(|p| self.picture_path(Builtin::Imshow, p));
        let mut xs = vec![a?];
        if let Some(p) = path {
            xs.push(p?);
        }
        Some((xs, Type::Void))
    }

    /// `plot(y)`, `plot(x, y)`, each with an optional path last: rank-1 arrays, then the path.
    pub(super) fn plot(&mut self, args: &[ast::Expr], span: Span) -> Option<(Vec<Expr>, Type)> {
        if !self.arity(Builtin::Plot, args, span, 1, 3) {
            return None;
        }
        // A string literal last is the path; with three arguments the third must be one.
        let named_path = args.len() == 3 || matches!(args.last().map(|a| &a.kind), Some(A::Str(_)));
        let (arrays, path) = if named_path && args.len() > 1 {
            (&args[..args.len() - 1], args.last())
        } else {
            (args, None)
        };
        let xs: Vec<Option<Expr>> = arrays
            .iter()
            .map(|a| self.picture_array(Builtin::Plot, a, 1))
            .collect();
        let path = path.map(|p| self.picture_path(Builtin::Plot, p));
        let mut out: Vec<Expr> = xs.into_iter().collect::<Option<_>>()?;
        if let Some(p) = path {
            out.push(p?);
        }
        Some((out, Type::Void))
    }

    /// An array argument of `rank`, of any element type (`bool` draws as 0 and 1).
    fn picture_array(&mut self, b: Builtin, a: &ast::Expr, rank: u8) -> Option<Expr> {
        let (x, _, found) = self.array_arg(b, a)?;
        if found == rank {
            return Some(x);
        }
        let ty = x.ty;
        let (wanted, help) = match b {
            Builtin::Imshow if found == 1 => (
                "a rank-2 array",
                "a rank-1 array is a line: `plot(a)`; or give it rows: \
                 `imshow(reshape(a, rows, cols))`",
            ),
            Builtin::Imshow => (
                "a rank-2 array",
                "draw one plane: copy it into a rank-2 array, or `reshape` the array to 2 dimensions",
            ),
            _ => (
                "rank-1 arrays",
                "draw a rank-2 array as a heat map with `imshow(a)`, or its elements in order with \
                 `plot(reshape(a, len(a)))`",
            ),
        };
        self.error(
            Diagnostic::error(
                format!("`{}` draws {wanted}, found {ty}", b.name()),
                x.span,
                format!("this is {ty}"),
            )
            .with_help(help),
        );
        None
    }

    /// The file a picture is written to: a non-empty string literal.
    fn picture_path(&mut self, b: Builtin, p: &ast::Expr) -> Option<Expr> {
        let what = format!("the file name of `{}`", b.name());
        let path = self.string_literal(p, &what)?;
        if matches!(&p.kind, A::Str(s) if s.is_empty()) {
            self.error(
                Diagnostic::error(format!("{what} is empty"), p.span, "no file name").with_help(
                    format!(
                        "name a PNG file, `{}(…, \"picture.png\")`, or leave the name out for \
                         `acc-plot-N.png`",
                        b.name()
                    ),
                ),
            );
            return None;
        }
        Some(path)
    }
}
