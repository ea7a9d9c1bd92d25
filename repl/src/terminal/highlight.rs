//! Colours for the input being edited: keywords, directive words on `acc` lines, literals and
//! comments, and the bracket matching the one at the cursor. ANSI escapes only: the text keeps
//! its width, as the line editor requires.

use std::collections::HashSet;
use std::sync::OnceLock;

use acc::lang::ast::{Construct, ScalarType};
use acc::lang::token::Keyword;
use acc::lang::validate::clause_names;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Style {
    Keyword,
    Directive,
    Type,
    Literal,
    Str,
    Comment,
    Bracket,
}

impl Style {
    fn escape(self) -> &'static str {
        match self {
            Style::Keyword => "\x1b[1;35m",
            Style::Directive => "\x1b[36m",
            Style::Type => "\x1b[34m",
            Style::Literal => "\x1b[33m",
            Style::Str => "\x1b[32m",
            Style::Comment => "\x1b[90m",
            Style::Bracket => "\x1b[1;4m",
        }
    }
}

const RESET: &str = "\x1b[0m";

/// `text` with colours; with `cursor`, the bracket at or just before it and its match stand
/// out.
pub fn colour(text: &str, cursor: Option<usize>) -> String {
    let (mut spans, pairs) = scan(text);
    if let Some(pos) = cursor {
        let at = |p: usize| pairs.iter().find(|&&(a, b)| a == p || b == p);
        let pair = at(pos).or_else(|| pos.checked_sub(1).and_then(at));
        if let Some(&(open, close)) = pair {
            spans.push((open, open + 1, Style::Bracket));
            spans.push((close, close + 1, Style::Bracket));
            spans.sort_by_key(|s| s.0);
        }
    }
    let mut out = String::with_capacity(text.len() * 2);
    let mut done = 0;
    for (start, end, style) in spans {
        out += &text[done..start];
        out += style.escape();
        out += &text[start..end];
        out += RESET;
        done = end;
    }
    out += &text[done..];
    out
}

/// A styled piece of text: its start and end (byte offsets) and style.
type Span = (usize, usize, Style);

/// The styled spans of `text` in order, and the pairs of matching brackets (byte offsets).
fn scan(text: &str) -> (Vec<Span>, Vec<(usize, usize)>) {
    let bytes = text.as_bytes();
    let mut spans = Vec::new();
    let mut pairs = Vec::new();
    let mut open: Vec<(u8, usize)> = Vec::new();
    let mut directive_line = false;
    let mut line_start = true;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let start = i;
        if b == b'\n' {
            line_start = true;
            directive_line = false;
            i += 1;
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'/') {
            i = text[i..].find('\n').map_or(text.len(), |n| i + n);
            spans.push((start, i, Style::Comment));
            continue;
        }
        if b == b'/' && bytes.get(i + 1) == Some(&b'*') {
            i = text[i + 2..]
                .find("*/")
                .map_or(text.len(), |n| i + 2 + n + 2);
            spans.push((start, i, Style::Comment));
            continue;
        }
        if b == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            // The closing quote belongs to the string; a newline does not.
            if bytes.get(i) == Some(&b'"') {
                i += 1;
            }
            // An escaped character may be several bytes long.
            while !text.is_char_boundary(i.min(text.len())) {
                i += 1;
            }
            i = i.min(bytes.len());
            spans.push((start, i, Style::Str));
            continue;
        }
        if b.is_ascii_digit() {
            i = number_end(bytes, i);
            spans.push((start, i, Style::Literal));
            line_start = false;
            continue;
        }
        if b.is_ascii_alphabetic() || b == b'_' {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let word = &text[start..i];
            if line_start && word == "acc" {
                directive_line = true;
            }
            line_start = false;
            let style = match Keyword::from_word(word) {
                Some(Keyword::True | Keyword::False) => Some(Style::Literal),
                Some(_) => Some(Style::Keyword),
                None if directive_line && open.is_empty() && directive_words().contains(word) => {
                    Some(Style::Directive)
                }
                None if ScalarType::from_name(word).is_some() => Some(Style::Type),
                None => None,
            };
            if let Some(style) = style {
                spans.push((start, i, style));
            }
            continue;
        }
        match b {
            b'(' | b'[' | b'{' => open.push((b, i)),
            b')' | b']' | b'}' => {
                let opener = match b {
                    b')' => b'(',
                    b']' => b'[',
                    _ => b'{',
                };
                if let Some(&(o, at)) = open.last() {
                    if o == opener {
                        open.pop();
                        pairs.push((at, i));
                    }
                }
            }
            _ => {}
        }
        if !b.is_ascii_whitespace() {
            line_start = false;
        }
        // Step over a whole character.
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    (spans, pairs)
}

/// Where a number literal starting at `i` ends: digits, letters (`0x1f`, `7i32`, `1e6`),
/// underscores, a decimal point before a digit, and an exponent's sign.
fn number_end(bytes: &[u8], mut i: usize) -> usize {
    let hex = bytes.get(i + 1).is_some_and(|b| matches!(b, b'x' | b'X'));
    while i < bytes.len() {
        let b = bytes[i];
        let exponent_sign =
            matches!(b, b'+' | b'-') && !hex && i > 0 && matches!(bytes[i - 1], b'e' | b'E');
        let point = b == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if b.is_ascii_alphanumeric() || b == b'_' || exponent_sign || point {
            i += 1;
        } else {
            break;
        }
    }
    i
}

/// The words of construct and clause names (`parallel`, `enter`, `copyin`, …).
fn directive_words() -> &'static HashSet<&'static str> {
    static WORDS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    WORDS.get_or_init(|| {
        let mut words = HashSet::new();
        for c in Construct::ALL {
            words.extend(c.name().split(' '));
            words.extend(clause_names(c));
        }
        words
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text with each span shown as `<style:text>`.
    fn marked(text: &str, cursor: Option<usize>) -> String {
        colour(text, cursor)
            .replace("\x1b[1;35m", "<k:")
            .replace("\x1b[36m", "<d:")
            .replace("\x1b[34m", "<t:")
            .replace("\x1b[33m", "<l:")
            .replace("\x1b[32m", "<s:")
            .replace("\x1b[90m", "<c:")
            .replace("\x1b[1;4m", "<b:")
            .replace(RESET, ">")
    }

    #[test]
    fn keywords_literals_strings_comments() {
        assert_eq!(
            marked("let x: f32 = 2.5e-3 // half", None),
            "<k:let> x: <t:f32> = <l:2.5e-3> <c:// half>"
        );
        assert_eq!(
            marked("if true { print(\"a\\\"b\", 0x1f) } /* c */", None),
            "<k:if> <l:true> { print(<s:\"a\\\"b\">, <l:0x1f>) } <c:/* c */>"
        );
        assert_eq!(
            marked("for i in 0..n {", None),
            "<k:for> i <k:in> <l:0>..n {"
        );
        // Names that are not keywords stay as they are; so does text without anything to colour.
        assert_eq!(marked("parallel = copy", None), "parallel = copy");
        assert_eq!(colour("a + b", None), "a + b");
    }

    #[test]
    fn directive_words_on_acc_lines_only() {
        assert_eq!(
            marked("acc parallel loop copy(a) reduction(+: s)", None),
            "<k:acc> <d:parallel> <d:loop> <d:copy>(a) <d:reduction>(+: s)"
        );
        // Inside a clause's parentheses a directive word is a variable.
        assert_eq!(
            marked("acc data copy(host)", None),
            "<k:acc> <d:data> <d:copy>(host)"
        );
        assert_eq!(
            marked("let loop_n = 1\nacc loop", None),
            "<k:let> loop_n = <l:1>\n<k:acc> <d:loop>"
        );
    }

    #[test]
    fn the_bracket_matching_the_cursor_stands_out() {
        assert_eq!(marked("f(a[1])", Some(7)), "f<b:(>a[<l:1>]<b:)>");
        assert_eq!(marked("f(a[1])", Some(3)), "f(a<b:[><l:1><b:]>)");
        assert_eq!(marked("f(a[1])", Some(1)), "f<b:(>a[<l:1>]<b:)>");
        assert_eq!(
            marked("for i in 0..3 {\n  x\n}", Some(20)),
            "<k:for> i <k:in> <l:0>..<l:3> <b:{>\n  x\n<b:}>"
        );
        // An unmatched bracket has no partner to show.
        assert_eq!(marked("f(a", Some(2)), "f(a");
    }

    #[test]
    fn any_text_and_cursor_is_safe() {
        for text in [
            "\"\\é", "\"é", "/*", "1e", "acc ∑(", "é\n\"x", "0x", "\"a\nb\"",
        ] {
            for cursor in 0..=text.len() + 1 {
                let _ = colour(text, Some(cursor));
            }
        }
        // An unterminated string ends at its line.
        assert_eq!(marked("\"ab\nlet", None), "<s:\"ab>\n<k:let>");
    }

    #[test]
    fn the_width_is_kept() {
        let text = "acc parallel loop gang vector_length(128) // é ∑\nlet s = \"∑\" + 1";
        let plain = colour(text, Some(5)).replace('\x1b', "");
        let stripped: String = {
            let mut out = String::new();
            let mut skip = false;
            for c in colour(text, Some(5)).chars() {
                match c {
                    '\x1b' => skip = true,
                    'm' if skip => skip = false,
                    _ if skip => {}
                    _ => out.push(c),
                }
            }
            out
        };
        assert_eq!(stripped, text);
        assert!(plain.len() > text.len());
    }
}
