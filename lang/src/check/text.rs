//! Source-like text of simple expressions, for help lines that show the user's own code
//! (`declare it first: `let count = 0``) instead of made-up names.

use crate::ast::{Expr, ScalarType};
use crate::ast::{ExprKind as A, UnOp};
use crate::token::{FloatSuffix, IntSuffix};

/// Longer texts are left out of help lines: they would not read as a hint.
const MAX_TEXT: usize = 30;

/// The text of `e` as it could be written, if it is simple: a literal, a name, an element,
/// a call or one operator on such operands.
pub(super) fn source_text(e: &Expr) -> Option<String> {
    let text = write(e, 2)?;
    (text.chars().count() <= MAX_TEXT).then_some(text)
}

/// Whether `e` contains a float literal (its value is then most likely a float).
pub(super) fn mentions_float(e: &Expr) -> bool {
    match &e.kind {
        A::Float(..) => true,
        A::Unary(_, x) => mentions_float(x),
        A::Binary(_, l, r) => mentions_float(l) || mentions_float(r),
        A::Call(_, args) => args.iter().any(mentions_float),
        _ => false,
    }
}

/// `depth` bounds nesting; an operator's operands must be atoms (the AST has no parentheses,
/// so a nested operator could print with the wrong precedence).
fn write(e: &Expr, depth: u32) -> Option<String> {
    if depth == 0 {
        return None;
    }
    let atoms = |xs: &[Expr]| -> Option<String> {
        let texts: Option<Vec<String>> = xs.iter().map(|x| atom(x, depth - 1)).collect();
        texts.map(|t| t.join(", "))
    };
    Some(match &e.kind {
        A::Binary(op, l, r) => format!(
            "{} {} {}",
            atom(l, depth - 1)?,
            op.as_str(),
            atom(r, depth - 1)?
        ),
        A::Cast(x, t) if t.rank == 0 => format!("{} as {}", atom(x, depth - 1)?, t.elem.name()),
        A::Index(base, idx) => format!("{}[{}]", atom(base, depth)?, atoms(idx)?),
        A::Call(name, args) => format!("{}({})", name.name, atoms(args)?),
        _ => return literal_or_name(e),
    })
}

/// An operand that needs no parentheses.
fn atom(e: &Expr, depth: u32) -> Option<String> {
    match &e.kind {
        A::Index(..) | A::Call(..) => write(e, depth),
        _ => literal_or_name(e),
    }
}

fn literal_or_name(e: &Expr) -> Option<String> {
    Some(match &e.kind {
        A::Int(v, suffix) => format!(
            "{v}{}",
            match suffix {
                Some(IntSuffix::I32) => "i32",
                Some(IntSuffix::I64) => "i64",
                None => "",
            }
        ),
        A::Float(text, suffix) => format!(
            "{text}{}",
            match suffix {
                Some(FloatSuffix::F32) => ScalarType::F32.name(),
                Some(FloatSuffix::F64) => ScalarType::F64.name(),
                None => "",
            }
        ),
        A::Bool(b) => b.to_string(),
        A::Name(id) => id.name.clone(),
        A::Unary(UnOp::Neg, x) if matches!(x.kind, A::Int(..) | A::Float(..)) => {
            format!("-{}", literal_or_name(x)?)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::SourceFile;

    /// The text of the initializer of `let v = <src>`.
    fn text(src: &str) -> Option<String> {
        let program = crate::parse(&SourceFile::new("t.acc", format!("let v = {src}")))
            .unwrap_or_else(|d| panic!("parse error: {d:#?}"));
        match &program.stmts[0].kind {
            crate::ast::StmtKind::Let { init, .. } => source_text(init),
            _ => panic!("not a let"),
        }
    }

    #[test]
    fn simple_expressions_are_written_back() {
        assert_eq!(text("0").as_deref(), Some("0"));
        assert_eq!(text("-1.5f32").as_deref(), Some("-1.5f32"));
        assert_eq!(text("n").as_deref(), Some("n"));
        assert_eq!(text("a[i, 0]").as_deref(), Some("a[i, 0]"));
        assert_eq!(text("len(a) - 1").as_deref(), Some("len(a) - 1"));
        assert_eq!(text("n as f64").as_deref(), Some("n as f64"));
    }

    #[test]
    fn nested_operators_and_long_text_are_left_out() {
        assert_eq!(text("(a + b) * c"), None);
        assert_eq!(text("a + b * c"), None);
        assert_eq!(text("some_long_function_name(another_long_argument)"), None);
    }
}
