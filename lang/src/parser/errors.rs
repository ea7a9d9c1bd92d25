//! Turning chumsky's errors into diagnostics a person can act on.

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
    if let Some(d) = misspelled_keyword(span, tokens) {
        return d;
    }
    let wanted = describe_expected(expected);
    let found_text = found.map_or("end of file".to_string(), |t| t.to_string());
    let message = if wanted.is_empty() {
        format!("unexpected {found_text}")
    } else {
        format!("expected {wanted}, found {found_text}")
    };
    let label = match found {
        None => format!("expected {wanted} here"),
        Some(_) => "unexpected here".to_string(),
    };
    let d = Diagnostic::error(message, span, label);
    if let Some(op) = operator_before(span, tokens).filter(|_| wants_operand(expected)) {
        return d.with_help(format!("`{}` needs an operand on its right", op.as_str()));
    }
    match help_for(expected, found) {
        Some(help) => d.with_help(help),
        None => d,
    }
}

/// `whlie x < 3 {`: an unknown word at the start of a statement followed by more tokens is
/// most likely a misspelled keyword.
fn misspelled_keyword(span: Span, tokens: &[(Token<'_>, Span)]) -> Option<Diagnostic> {
    let at = tokens.iter().position(|(_, s)| s.start >= span.start)?;
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

/// The binary operator right before `span`, if any.
fn operator_before(span: Span, tokens: &[(Token<'_>, Span)]) -> Option<Punct> {
    let at = tokens
        .iter()
        .position(|(_, s)| s.start >= span.start)
        .unwrap_or(tokens.len());
    match tokens.get(at.checked_sub(1)?)?.0 {
        Token::P(p) if is_operator(p) => Some(p),
        _ => None,
    }
}

fn expects_operator(expected: &[RichPattern<'_, Token<'_>>]) -> bool {
    expected
        .iter()
        .any(|p| matches!(p, RichPattern::Token(t) if matches!(**t, Token::P(p) if is_operator(p))))
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
            RichPattern::Token(t) => match &**t {
                Token::P(p) if is_operator(*p) => {
                    operator = true;
                    continue;
                }
                t => t.to_string(),
            },
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
        let before = items.len();
        items.retain(|i| !matches!(i.as_str(), "`(`" | "`[`" | "`as`"));
        operator |= items.len() != before;
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
    let expects_label = |l: &str| {
        expected
            .iter()
            .any(|p| matches!(p, RichPattern::Label(x) if x.contains(l)))
    };
    match found {
        Some(Token::P(Punct::Assign))
            if expects(Token::P(Punct::LBrace)) || expects_label("block") =>
        {
            Some("to compare two values use `==`; `=` assigns".into())
        }
        Some(Token::P(Punct::Assign)) if expects_operator(expected) && !expects_label("a name") => {
            Some("`=` assigns and is a statement of its own; to compare use `==`".into())
        }
        Some(Token::Newline) | None if expects_label("expression") => {
            Some("the expression is incomplete: an operand is missing".into())
        }
        Some(Token::Ident(_)) if expects(Token::P(Punct::Comma)) => {
            Some("separate arguments and list items with `,`".into())
        }
        Some(Token::Kw(crate::token::Keyword::Else)) => {
            Some("`else` must follow the `}` that closes an `if` block".into())
        }
        _ => None,
    }
}
