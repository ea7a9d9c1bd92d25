//! Tokens produced by the lexer and consumed by the parser.

use std::fmt;

/// Integer literal suffix: `7i32`, `7i64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IntSuffix {
    I32,
    I64,
}

/// Float literal suffix: `2.0f32`, `1f64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FloatSuffix {
    F32,
    F64,
}

/// The reserved words of LANGUAGE.md section 1. Directive words (`parallel`, `copyin`, …) are
/// not keywords: the parser recognizes them by their text where a directive expects them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Keyword {
    Let,
    Fn,
    Return,
    If,
    Else,
    While,
    For,
    In,
    Step,
    Break,
    Continue,
    True,
    False,
    As,
    Acc,
}

impl Keyword {
    pub const ALL: [Keyword; 15] = [
        Keyword::Let,
        Keyword::Fn,
        Keyword::Return,
        Keyword::If,
        Keyword::Else,
        Keyword::While,
        Keyword::For,
        Keyword::In,
        Keyword::Step,
        Keyword::Break,
        Keyword::Continue,
        Keyword::True,
        Keyword::False,
        Keyword::As,
        Keyword::Acc,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Keyword::Let => "let",
            Keyword::Fn => "fn",
            Keyword::Return => "return",
            Keyword::If => "if",
            Keyword::Else => "else",
            Keyword::While => "while",
            Keyword::For => "for",
            Keyword::In => "in",
            Keyword::Step => "step",
            Keyword::Break => "break",
            Keyword::Continue => "continue",
            Keyword::True => "true",
            Keyword::False => "false",
            Keyword::As => "as",
            Keyword::Acc => "acc",
        }
    }

    /// The keyword spelled `s`. A `match` rather than a search of `ALL`: the lexer asks this
    /// of every word, and comparing a word with each keyword in turn was a tenth of its time.
    pub fn from_word(s: &str) -> Option<Keyword> {
        Some(match s {
            "let" => Keyword::Let,
            "fn" => Keyword::Fn,
            "return" => Keyword::Return,
            "if" => Keyword::If,
            "else" => Keyword::Else,
            "while" => Keyword::While,
            "for" => Keyword::For,
            "in" => Keyword::In,
            "step" => Keyword::Step,
            "break" => Keyword::Break,
            "continue" => Keyword::Continue,
            "true" => Keyword::True,
            "false" => Keyword::False,
            "as" => Keyword::As,
            "acc" => Keyword::Acc,
            _ => return None,
        })
    }
}

/// Punctuation and operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Punct {
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Semi,
    Colon,
    Arrow,    // ->
    DotDot,   // ..
    DotDotEq, // ..=
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Tilde,
    Bang,
    Shl,
    Shr,
    AndAnd,
    OrOr,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    Assign, // =
    PlusEq,
    MinusEq,
    StarEq,
    SlashEq,
    PercentEq,
    AmpEq,
    PipeEq,
    CaretEq,
    ShlEq,
    ShrEq,
}

impl Punct {
    pub fn as_str(self) -> &'static str {
        use Punct::*;
        match self {
            LParen => "(",
            RParen => ")",
            LBracket => "[",
            RBracket => "]",
            LBrace => "{",
            RBrace => "}",
            Comma => ",",
            Semi => ";",
            Colon => ":",
            Arrow => "->",
            DotDot => "..",
            DotDotEq => "..=",
            Plus => "+",
            Minus => "-",
            Star => "*",
            Slash => "/",
            Percent => "%",
            Amp => "&",
            Pipe => "|",
            Caret => "^",
            Tilde => "~",
            Bang => "!",
            Shl => "<<",
            Shr => ">>",
            AndAnd => "&&",
            OrOr => "||",
            EqEq => "==",
            NotEq => "!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Assign => "=",
            PlusEq => "+=",
            MinusEq => "-=",
            StarEq => "*=",
            SlashEq => "/=",
            PercentEq => "%=",
            AmpEq => "&=",
            PipeEq => "|=",
            CaretEq => "^=",
            ShlEq => "<<=",
            ShrEq => ">>=",
        }
    }

    /// A binary operator (or `=`-style assignment, or comma) at the end of a line continues
    /// the statement on the next line (LANGUAGE.md section 1).
    pub fn continues_line(self) -> bool {
        use Punct::*;
        !matches!(
            self,
            LParen | RParen | LBracket | RBracket | LBrace | RBrace | Semi | Tilde | Bang
        )
    }
}

/// One token. Literal tokens keep their source text; the parser and checker convert it, so that
/// a float literal is rounded once, straight from its decimal text, to the type it ends up with.
#[derive(Clone, Debug, PartialEq)]
pub enum Token<'src> {
    /// Integer literal: its value (digits and radix already decoded) and suffix.
    Int(u64, Option<IntSuffix>),
    /// Float literal: its text without suffix or underscores, and its suffix.
    Float(&'src str, Option<FloatSuffix>),
    /// String literal: the text between the quotes, escapes still in place (checked by the lexer).
    Str(&'src str),
    Ident(&'src str),
    Kw(Keyword),
    P(Punct),
    /// A statement-ending newline (newlines the lexer folds away never become tokens).
    Newline,
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Int(v, _) => write!(f, "integer `{v}`"),
            Token::Float(t, _) => write!(f, "number `{t}`"),
            Token::Str(_) => write!(f, "string"),
            Token::Ident(s) => write!(f, "`{s}`"),
            Token::Kw(k) => write!(f, "`{}`", k.as_str()),
            Token::P(p) => write!(f, "`{}`", p.as_str()),
            Token::Newline => write!(f, "end of line"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Keyword;

    #[test]
    fn every_keyword_is_read_back_from_its_word() {
        for k in Keyword::ALL {
            assert_eq!(Keyword::from_word(k.as_str()), Some(k));
        }
        assert_eq!(Keyword::from_word("parallel"), None);
        assert_eq!(Keyword::from_word("Let"), None);
    }
}
