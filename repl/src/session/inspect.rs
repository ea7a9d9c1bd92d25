//! What the name at the cursor is: a function's or built-in's signature, a variable's type and
//! shape, a constant's value, the clauses a construct takes. For a notebook's inspection
//! (Shift-Tab) and anything else that explains a name in place.

use acc::lang::ast::Construct;
use acc::lang::builtins::{Builtin, BuiltinConst};
use acc::lang::token::Keyword;
use acc::lang::validate::clause_names;

use super::reply;
use super::Names;

/// One line about the name at byte offset `cursor` of `text` (the name the cursor is in or
/// just after), or else about the function whose call's parentheses the cursor is in; `None`
/// when there is no name there the session knows.
pub fn inspect(names: &Names, text: &str, cursor: usize) -> Option<String> {
    let mut cursor = cursor.min(text.len());
    while !text.is_char_boundary(cursor) {
        cursor -= 1;
    }
    let word = word_at(text, cursor);
    let directive_line = {
        let line_start = text[..cursor].rfind('\n').map_or(0, |i| i + 1);
        text[line_start..].trim_start().starts_with("acc ")
    };
    if let Some(about) = describe(names, word, directive_line) {
        return Some(about);
    }
    let callee = callee_at(text, cursor)?;
    describe(names, callee, false)
}

fn describe(names: &Names, word: &str, directive_line: bool) -> Option<String> {
    if word.is_empty() {
        return None;
    }
    if directive_line {
        if let Some(c) = Construct::ALL.iter().find(|c| c.name() == word) {
            let clauses = clause_names(*c);
            return Some(if clauses.is_empty() {
                format!("acc {word} takes no clauses")
            } else {
                format!("acc {word} takes: {}", clauses.join(", "))
            });
        }
    }
    if let Some(g) = names.globals.iter().find(|g| g.name == word) {
        let mut about = format!("{}: {}", g.name, g.ty);
        if let Some(extents) = &g.shape {
            about += &format!("  shape {}", reply::shape(extents));
        }
        if !g.present_on.is_empty() {
            about += &format!("  present on {}", g.present_on.join(", "));
        }
        return Some(about);
    }
    if let Some(f) = names.functions.iter().find(|f| f.name == word) {
        return Some(f.signature.clone());
    }
    if let Some(b) = Builtin::from_name(word) {
        return Some(b.signature().to_string());
    }
    if let Some(c) = BuiltinConst::from_name(word) {
        return Some(format!("{word}: i32 = {}", c.value()));
    }
    Keyword::from_word(word).map(|_| format!("`{word}` is a keyword"))
}

/// The identifier around `cursor` (empty when there is none).
fn word_at(text: &str, cursor: usize) -> &str {
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let start = text[..cursor]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_word(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[cursor..]
        .find(|c: char| !is_word(c))
        .map_or(text.len(), |i| cursor + i);
    &text[start..end]
}

/// The name before the innermost `(` still open at `cursor`.
fn callee_at(text: &str, cursor: usize) -> Option<&str> {
    let mut depth = 0usize;
    for (i, c) in text[..cursor].char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' if depth > 0 => depth -= 1,
            '(' => {
                let name = word_at(text, i);
                return (!name.is_empty()).then_some(name);
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            globals: vec![acc::GlobalInfo {
                name: "grid".into(),
                ty: "f32[,]".into(),
                shape: Some(vec![256, 256]),
                present_on: vec!["emulated:0".into()],
            }],
            functions: vec![acc::FunctionInfo {
                name: "dot".into(),
                signature: "fn dot(x: f64[], y: f64[]) -> f64".into(),
            }],
        }
    }

    fn at(text: &str) -> Option<String> {
        let cursor = text.find('|').unwrap_or(text.len());
        inspect(&names(), &text.replace('|', ""), cursor)
    }

    #[test]
    fn names_at_the_cursor() {
        assert_eq!(
            at("gr|id[0, 0]").as_deref(),
            Some("grid: f32[,]  shape [256, 256]  present on emulated:0")
        );
        assert_eq!(
            at("dot").as_deref(),
            Some("fn dot(x: f64[], y: f64[]) -> f64")
        );
        assert_eq!(at("sqrt").as_deref(), Some("sqrt(x: F) -> F"));
        assert_eq!(
            at("acc_device_host").as_deref(),
            Some("acc_device_host: i32 = 2")
        );
        assert_eq!(at("wh|ile").as_deref(), Some("`while` is a keyword"));
        assert_eq!(at("nothing_here"), None);
        assert_eq!(at(""), None);
    }

    #[test]
    fn the_call_the_cursor_is_in() {
        assert_eq!(
            at("dot(a, |").as_deref(),
            Some("fn dot(x: f64[], y: f64[]) -> f64")
        );
        assert_eq!(
            at("let s = dot(ones(3), |)").as_deref(),
            Some("fn dot(x: f64[], y: f64[]) -> f64")
        );
        assert_eq!(
            at("zeros(f32, |").as_deref(),
            Some("zeros([T,] d0, …) -> T[…] (T defaults to f64)")
        );
    }

    #[test]
    fn any_text_and_cursor_is_safe() {
        for text in [
            "é(x",
            "dot(∑, grid",
            "\"é\" + gr",
            "acc ∑ copy(é",
            "((((",
            ")))",
            "𝔸b(c",
        ] {
            for cursor in 0..=text.len() + 1 {
                let _ = inspect(&names(), text, cursor);
                let _ = crate::session::complete(&names(), text, cursor);
            }
        }
    }

    #[test]
    fn constructs_on_a_directive_line() {
        let about = at("acc upd|ate self(grid)").expect("a construct");
        assert!(about.starts_with("acc update takes: "), "{about}");
        assert!(about.contains("if_present"), "{about}");
        assert_eq!(at("acc wait").map(|a| a.contains("async")), Some(true));
    }
}
