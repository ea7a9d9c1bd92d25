//! A notebook cell: an input whose last expression's value is shown apart from what the code
//! printed (the cell's `Out[n]`), where the terminal REPL writes every value among the output.
//!
//! The engine writes a top-level expression's value to its output like `print` does, so the
//! session runs a cell that ends in an expression in two parts: everything before that
//! statement, then the statement alone, with a call in between that lets the caller collect
//! what follows. The whole cell is checked first, so that a mistake anywhere stops all of it,
//! as it does for one input of the REPL; both parts run under the cell's name, and the last
//! statement keeps its place in the text, so that messages give the cell's own lines.

use acc::lang::ast::StmtKind;
use acc::SourceFile;

use super::commands::Command;
use super::{Outcome, Session};

/// What a cell came to.
pub struct CellOutcome {
    pub outcome: Outcome,
    /// The type of the value that was written after `value_starts` was called (`f64`,
    /// `f32[,]`); `None` when the cell had no value to show.
    pub value_type: Option<String>,
}

impl Session {
    /// Run a notebook cell: a `:` command, as [`Session::eval`] does, or code under `name`
    /// (`<cell:3>` in messages), except that when the code ends in an expression with a
    /// value, `value_starts` is called just before the statement that writes it runs. What the
    /// engine's output receives from then on is that statement's output: the value, after
    /// whatever its evaluation printed ([`split_value`] tells them apart).
    pub fn eval_cell(
        &mut self,
        cell: &str,
        name: &str,
        value_starts: &mut dyn FnMut(),
    ) -> CellOutcome {
        let whole = |outcome| CellOutcome {
            outcome,
            value_type: None,
        };
        if Command::parse(cell).is_some() || cell.trim().is_empty() {
            return whole(self.eval(cell));
        }
        let Some(last) = trailing_expression(cell) else {
            return whole(self.run_named(name, cell));
        };
        if let Err(e) = self.engine.check(name, cell) {
            return whole(Outcome::Failed(e));
        }
        let (head, tail) = cell.split_at(last.start);
        if !head.trim().is_empty() {
            match self.engine.run(name, head) {
                Ok(()) => {}
                Err(acc::Error::Exit(status)) => return whole(Outcome::End(status)),
                Err(e) => return whole(Outcome::Failed(e)),
            }
        }
        // A call of a function without a result has no value to show.
        let value_type = self
            .engine
            .type_of(&cell[last])
            .ok()
            .filter(|ty| ty != "void");
        if value_type.is_some() {
            value_starts();
        }
        let in_place = blank_out(head) + tail;
        let outcome = match self.engine.run(name, &in_place) {
            Ok(()) => {
                self.inputs.push(cell.to_string());
                Outcome::Ran
            }
            Err(e) => {
                if !head.trim().is_empty() {
                    self.inputs.push(head.to_string());
                }
                match e {
                    acc::Error::Exit(status) => Outcome::End(status),
                    e => Outcome::Failed(e),
                }
            }
        };
        let value_type = value_type.filter(|_| matches!(outcome, Outcome::Ran));
        CellOutcome {
            outcome,
            value_type,
        }
    }
}

/// The byte range of `code`'s last top-level statement when it is an expression statement
/// (whose value the REPL shows); `None` when it is another statement or `code` does not parse
/// (the run reports why).
fn trailing_expression(code: &str) -> Option<std::ops::Range<usize>> {
    let source = SourceFile::new("<cell>", code);
    let program = acc::lang::with_deep_stack(|| acc::lang::parse(&source).ok())?;
    let last = program.stmts.last()?;
    match last.kind {
        StmtKind::Expr(_) => Some(last.span.start as usize..last.span.end as usize),
        _ => None,
    }
}

/// `text` with every character but line ends made a space: what stands before the last
/// statement when it runs alone, so that its lines and columns stay the cell's.
fn blank_out(text: &str) -> String {
    text.chars()
        .map(|c| if c == '\n' || c == '\r' { c } else { ' ' })
        .collect()
}

/// The output of a cell's last statement (what followed `value_starts`) split into what its
/// evaluation printed and the value the REPL writes after it, as `(printed, value)`; the value
/// without its final newline.
///
/// A value of type `ty` is written as `print` writes it: a scalar (or a device type's name) on
/// one line; an array on lines of which the first starts with `[` and the others with a
/// blank, headed by a line with its type and shape (`f64[1000, 1000]`) when it is elided.
pub fn split_value<'a>(output: &'a str, ty: &str) -> (&'a str, &'a str) {
    let body = output.strip_suffix('\n').unwrap_or(output);
    // Line starts from the last line up.
    let mut starts = body
        .char_indices()
        .filter(|&(_, c)| c == '\n')
        .map(|(i, _)| i + 1)
        .rev()
        .chain(std::iter::once(0));
    let line_at = |start: usize| body[start..].split('\n').next().unwrap_or("");
    let Some(elem) = ty.strip_suffix(']').and_then(|t| t.split_once('[')) else {
        // A scalar: the last line.
        let start = starts.next().unwrap_or(0);
        return (&output[..start], &body[start..]);
    };
    let mut start = 0;
    for s in starts.by_ref() {
        start = s;
        if !line_at(s).starts_with(' ') {
            break;
        }
    }
    if let Some(header) = starts.next() {
        if is_shape_header(line_at(header), elem.0) {
            start = header;
        }
    }
    (&output[..start], &body[start..])
}

/// `f64[1000, 1000]`: an elided array's heading line, of element type `elem`.
fn is_shape_header(line: &str, elem: &str) -> bool {
    line.strip_prefix(elem)
        .and_then(|rest| rest.strip_prefix('['))
        .and_then(|rest| rest.strip_suffix(']'))
        .is_some_and(|dims| {
            !dims.is_empty()
                && dims
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == ' ')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_statement_when_it_is_an_expression() {
        let code = "let x = 2\nprint(x)\nx * 3  // the answer\n";
        assert_eq!(trailing_expression(code).map(|r| &code[r]), Some("x * 3"));
        assert_eq!(trailing_expression("let x = 2\n"), None);
        assert_eq!(trailing_expression("while true { }"), None);
        assert_eq!(trailing_expression("print(("), None);
        assert_eq!(trailing_expression(""), None);
    }

    #[test]
    fn blanks_keep_lines_and_columns() {
        assert_eq!(blank_out("let é = 1\nx"), "         \n ");
    }

    #[test]
    fn values_apart_from_what_their_evaluation_printed() {
        assert_eq!(split_value("42\n", "i64"), ("", "42"));
        assert_eq!(
            split_value("working\n[x]\n3.5\n", "f64"),
            ("working\n[x]\n", "3.5")
        );
        assert_eq!(
            split_value("[[0.0, 1.0],\n [2.0, 3.0]]\n", "f64[,]"),
            ("", "[[0.0, 1.0],\n [2.0, 3.0]]")
        );
        assert_eq!(
            split_value("step 1\n indented\n[1, 2]\n", "i64[]"),
            ("step 1\n indented\n", "[1, 2]")
        );
        let elided = "f64[2000, 3]\n[[0.0, 0.0, 0.0],\n ...,\n [0.0, 0.0, 0.0]]\n";
        assert_eq!(
            split_value(&format!("f32[2]\n{elided}"), "f64[,]"),
            ("f32[2]\n", elided.trim_end())
        );
        assert_eq!(split_value("", "f64"), ("", ""));
    }
}
