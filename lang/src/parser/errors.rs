//! Turning chumsky's errors into diagnostics a person can act on.

use super::OPERATOR;
use crate::diag::Diagnostic;
use crate::lexer::keyword_suggestion;
use crate::span::Span;
use crate::token::{Punct, Token};
use chumsky::error::{Rich, RichPattern, RichReason};

const SEP: char = '\u{1}';

/// Pack message, label and help into one custom-error string.
pub(super) fn pack(message: &str, label: &str, help: &str) -> String {
    format!("{message}{SEP}{label}{SEP}{help}")
}

pub(super) fn to_diagnostic(
    e: Rich<'_, Token<'_>, Span>,
    tokens: &[(Token<'_>, Span)],
) -> Diagnostic {
    let span = *e.span();
    match e.reason() {
        RichReason::Custom(text) => {
            let mut parts = text.split(SEP);
            let message = parts.next().unwrap_or_default();
            let label = parts.next().unwrap_or_default();
            let d = Diagnostic::error(message, span, label);
            match parts.next() {
                Some(help) if !help.is_empty() => d.with_help(help),
                _ => d,
            }
        }
        RichReason::ExpectedFound { expected, found } => {
            let found = found.as_deref();
            expected_found(span, expected, found, tokens)
        }
    }
}

fn expected_found(
    span: Span,
    expected: &[RichPattern<'_, Token<'_>>],
    found: Option<&Token<'_>>,
    tokens: &[(Token<'_>, Span)],
) -> Diagnostic {
    if let Some(d) = c_declaration(span, tokens).or_else(|| misspelled_keyword(span, tokens, found))
    {
        return d;
    }
    // At the end of the file or a line, point at the last token so a caret shows.
    let span = match found {
        None | Some(Token::Newline) => last_token_before(span, tokens).map_or(span, Span::after),
        Some(_) => span,
    };
    let wanted = describe_expected(expected);
    let found_text = found.map_or("end of file".to_string(), |t| t.to_string());
    let message = if wanted.is_empty() {
        format!("unexpected {found_text}")
    } else {
        format!("expected {wanted}, found {found_text}")
    };
    let label = match found {
        None | Some(Token::Newline) => format!("expected {wanted} here"),
        Some(_) => "unexpected here".to_string(),
    };
    let d = Diagnostic::error(message, span, label);
    if let Some((op, op_span)) = operator_before(span, tokens).filter(|_| wants_operand(expected)) {
        return Diagnostic::error(
            format!("`{}` has no right operand", op.as_str()),
            op_span,
            "needs a value after it",
        )
        .with_help(format!(
            "write the value after `{}`, or remove the operator",
            op.as_str()
        ));
    }
    if let Some(Token::Kw(k)) = found {
        if expects_label(expected, "a name") || expects_label(expected, "expression") {
            let k = k.as_str();
            return d.with_help(format!(
                "`{k}` is a keyword and cannot be used as a name; choose another name"
            ));
        }
    }
    match help_for(expected, found) {
        Some(help) => d.with_help(help),
        None => d,
    }
}

/// `whlie x < 3 {`: an unknown word at the start of a statement followed by more tokens is
/// most likely a misspelled keyword.
fn misspelled_keyword(
    span: Span,
    tokens: &[(Token<'_>, Span)],
    found: Option<&Token<'_>>,
) -> Option<Diagnostic> {
    let at = first_at(tokens, span.start)?;
    if let (Some(Token::Ident(word)), Some((Token::P(Punct::RBrace), _))) =
        (found, at.checked_sub(1).map(|p| &tokens[p]))
    {
        if let Some(k @ ("else if" | "else")) = keyword_suggestion(word) {
            return Some(
                Diagnostic::error(
                    format!("unknown word `{word}` after an `if` block"),
                    span,
                    "not a keyword",
                )
                .with_help(format!("did you mean `{k}`?")),
            );
        }
    }
    let prev = at.checked_sub(1)?;
    let Token::Ident(word) = tokens[prev].0 else {
        return None;
    };
    let starts_statement = prev == 0
        || matches!(
            tokens[prev - 1].0,
            Token::Newline
                | Token::P(Punct::Semi)
                | Token::P(Punct::LBrace)
                | Token::P(Punct::RBrace)
        );
    let suggestion = keyword_suggestion(word)?;
    if !starts_statement {
        return None;
    }
    Some(
        Diagnostic::error(
            format!("unknown word `{word}` at the start of a statement"),
            tokens[prev].1,
            "not a keyword",
        )
        .with_help(format!("did you mean `{suggestion}`?")),
    )
}

/// The index of the first token starting at or after `offset` (tokens are in source order: a
/// binary search, so that explaining each of many errors does not rescan the file).
fn first_at(tokens: &[(Token<'_>, Span)], offset: u32) -> Option<usize> {
    let at = tokens.partition_point(|(_, s)| s.start < offset);
    (at < tokens.len()).then_some(at)
}

/// The binary operator right before `span`, if any, with its span.
fn operator_before(span: Span, tokens: &[(Token<'_>, Span)]) -> Option<(Punct, Span)> {
    let at = first_at(tokens, span.start).unwrap_or(tokens.len());
    match tokens.get(at.checked_sub(1)?)? {
        (Token::P(p), s) if is_operator(*p) => Some((*p, *s)),
        _ => None,
    }
}

/// The last token before `span` that is not a newline.
fn last_token_before(span: Span, tokens: &[(Token<'_>, Span)]) -> Option<Span> {
    tokens
        .iter()
        .take_while(|(_, s)| s.start < span.start)
        .filter(|(t, _)| *t != Token::Newline)
        .last()
        .map(|(_, s)| *s)
}

/// `int n = 10`: a C declaration.
fn c_declaration(span: Span, tokens: &[(Token<'_>, Span)]) -> Option<Diagnostic> {
    const C_TYPES: [&str; 12] = [
        "int", "float", "double", "long", "char", "auto", "unsigned", "short", "void", "size_t",
        "boolean", "real",
    ];
    let at = first_at(tokens, span.start)?;
    let (Token::Ident(ty), ty_span) = &tokens[at.checked_sub(1)?] else {
        return None;
    };
    let Some((Token::Ident(name), _)) = tokens.get(at) else {
        return None;
    };
    if !C_TYPES.contains(ty) {
        return None;
    }
    Some(
        Diagnostic::error(
            "acc declares variables with `let`",
            *ty_span,
            "a C type name, not acc syntax",
        )
        .with_help(format!(
            "write `let {name} = …`, or with a type: `let {name}: i32 = …` (types are bool, i32, i64, f32, f64)"
        )),
    )
}

fn expects_label(expected: &[RichPattern<'_, Token<'_>>], l: &str) -> bool {
    expected
        .iter()
        .any(|p| matches!(p, RichPattern::Label(x) if x.contains(l)))
}

fn expects_operator(expected: &[RichPattern<'_, Token<'_>>]) -> bool {
    expects_label(expected, OPERATOR)
}

fn wants_operand(expected: &[RichPattern<'_, Token<'_>>]) -> bool {
    expected
        .iter()
        .any(|p| matches!(p, RichPattern::Label(l) if l == "an expression"))
}

fn describe_expected(expected: &[RichPattern<'_, Token<'_>>]) -> String {
    let mut items: Vec<String> = Vec::new();
    let mut operator = false;
    for p in expected {
        let text = match p {
            RichPattern::Token(t) => t.to_string(),
            RichPattern::Label(l) if *l == OPERATOR => {
                operator = true;
                continue;
            }
            RichPattern::Label(l) => l.to_string(),
            RichPattern::Identifier(i) => format!("`{i}`"),
            RichPattern::EndOfInput => "end of file".to_string(),
            _ => continue,
        };
        if !items.contains(&text) {
            items.push(text);
        }
    }
    let wants_expression = items.iter().any(|i| i == "an expression");
    if wants_expression {
        // Prefix operators and brackets are all "an expression"; operators that could have
        // continued the previous operand only distract from the missing operand.
        items.retain(|i| !matches!(i.as_str(), "`!`" | "`~`" | "`-`" | "`(`" | "`[`" | "`as`"));
        operator = false;
    } else if items.len() > 1 {
        // A call's `(`, an index's `[` or `as` could continue almost anything: noise here.
        items.retain(|i| !matches!(i.as_str(), "`(`" | "`[`" | "`as`"));
    }
    if operator {
        items.push("an operator".to_string());
    }
    // Keep the list short: the first entries are the most specific.
    items.truncate(5);
    match items.len() {
        0 => String::new(),
        1 => items.remove(0),
        _ => {
            let last = items.pop().unwrap_or_default();
            format!("{} or {last}", items.join(", "))
        }
    }
}

fn is_operator(p: Punct) -> bool {
    use Punct::*;
    matches!(
        p,
        Plus | Minus
            | Star
            | Slash
            | Percent
            | Amp
            | Pipe
            | Caret
            | Shl
            | Shr
            | AndAnd
            | OrOr
            | EqEq
            | NotEq
            | Lt
            | Le
            | Gt
            | Ge
    )
}

fn help_for(expected: &[RichPattern<'_, Token<'_>>], found: Option<&Token<'_>>) -> Option<String> {
    let expects = |t: Token<'_>| {
        expected
            .iter()
            .any(|p| matches!(p, RichPattern::Token(x) if **x == t))
    };
    let expects_label = |l: &str| expects_label(expected, l);
    let in_call = expects(Token::P(Punct::Comma)) && expects(Token::P(Punct::RParen));
    let ends_statement = expects(Token::P(Punct::Semi)) || expects(Token::Newline);
    match found {
        Some(Token::P(Punct::Assign)) if in_call => Some(
            "acc has no named arguments: pass arguments by position, e.g. `linspace(0.0, 1.0, 10)`".into(),
        ),
        Some(Token::P(Punct::Assign)) if expects(Token::P(Punct::LBrace)) || expects_label("block") => {
            Some("to compare two values use `==`; `=` assigns".into())
        }
        Some(Token::P(Punct::Assign)) if expects_operator(expected) && !expects_label("a name") => {
            Some("`=` assigns and is a statement of its own; to compare use `==`".into())
        }
        Some(Token::Newline) | None if expects_label("`=` and a value") => {
            Some("every variable needs an initial value, e.g. `let total: f64 = 0.0`".into())
        }
        Some(Token::Newline) | None if expects_label("expression") => {
            Some("the expression is incomplete: an operand is missing".into())
        }
        Some(Token::P(Punct::LBracket)) if expects_label("a type") => {
            Some("array types are written after the element type: `f64[]`, `f32[,]` for rank 2".into())
        }
        Some(Token::P(Punct::LBrace)) if expects_label("a type") => {
            Some("write the return type after `->` (`-> f64`), or remove `->` if the function returns nothing".into())
        }
        Some(Token::Ident(_)) if expects(Token::P(Punct::Arrow)) => {
            Some("write the return type after `->`: `fn square(x: f64) -> f64 { … }`".into())
        }
        Some(Token::Ident(_)) if in_call => Some("separate arguments and list items with `,`".into()),
        Some(Token::Kw(crate::token::Keyword::Else)) => {
            Some("`else` must follow the `}` that closes an `if` block".into())
        }
        Some(_) if ends_statement => Some("put a line break or `;` between two statements".into()),
        _ => None,
    }
}
