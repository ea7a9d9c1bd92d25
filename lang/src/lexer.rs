//! Text to tokens.
//!
//! Besides splitting the text, the lexer owns two rules of LANGUAGE.md section 1 so the parser
//! never has to think about them:
//! - which newlines end a statement: none inside `( )` or `[ ]`, none after a binary operator
//!   or comma, none after a trailing `\`, and none before `else` (so C's `}` newline `else`
//!   style works);
//! - bracket balance: every unclosed, unopened or mismatched bracket is reported here, with
//!   the opening bracket labelled, and the parser is not run on such a file (its errors would
//!   only repeat the same mistake);
//! - depth limits (`MAX_NESTING`, `MAX_OPERATORS`), so no later pass can overflow its stack.

use crate::diag::{closest, Diagnostic};
use crate::span::Span;
use crate::token::{FloatSuffix, IntSuffix, Keyword, Punct, Token};

/// What `lex` found: tokens with spans, and diagnostics. When `parseable` is false the tokens
/// must not be parsed: a bracket error (every parse error would repeat it) or nesting beyond
/// the limits below (the tree would be too deep for the passes after the parser).
pub struct Lexed<'src> {
    pub tokens: Vec<(Token<'src>, Span)>,
    pub diags: Vec<Diagnostic>,
    pub parseable: bool,
}

/// Lex `src`. Always returns tokens (malformed literals become placeholder tokens) so that the
/// parser can go on and report further errors.
pub fn lex(src: &str) -> Lexed<'_> {
    let mut lexer = Lexer {
        src,
        bytes: src.as_bytes(),
        pos: 0,
        // About a token per three bytes in real code: reserving (not touching) room for one per
        // two saves the copies and page faults of growing a large program's token vector.
        tokens: Vec::with_capacity(src.len() / 2 + 16),
        diags: Vec::new(),
        open: Vec::new(),
        suspicious_closer: None,
        parseable: true,
        operators: 0,
        chains: Vec::new(),
        lines: Lines::new(src),
        brace_scan: (0, None),
    };
    lexer.run();
    Lexed {
        tokens: lexer.tokens,
        diags: lexer.diags,
        parseable: lexer.parseable,
    }
}

/// Deeper nesting is rejected, so that every recursive pass after the parser has a bounded depth.
pub const MAX_NESTING: usize = 256;

/// Brackets and `else if` arms around any point, at most. An `else if` nests its `if` in the
/// `else` of the one before, so a chain of arms is as deep a tree as as many brackets; the
/// passes after the parser recurse over it.
pub const MAX_CHAIN_DEPTH: usize = 2048;

/// Operators in one statement line, at most: a longer chain (`a + b + …`) would make a syntax
/// tree deeper than later recursive passes can walk on a normal stack.
pub const MAX_OPERATORS: usize = 1000;

struct Lexer<'src> {
    src: &'src str,
    bytes: &'src [u8],
    pos: usize,
    tokens: Vec<(Token<'src>, Span)>,
    diags: Vec<Diagnostic>,
    /// Open brackets: the bracket and where it stands.
    open: Vec<(Punct, Span)>,
    /// The first `}` whose indentation differs from its `{` line's: where a missing `}` most
    /// likely belongs when the file ends with a block still open.
    suspicious_closer: Option<(Span, Span)>,
    parseable: bool,
    /// Operators since the last statement boundary (see `MAX_OPERATORS`).
    operators: usize,
    /// `else if` arms of the statement under way at each bracket depth (index: `open.len()`),
    /// see `MAX_CHAIN_DEPTH`.
    chains: Vec<usize>,
    /// Where lines start and how they are indented, for the brace hints: found once, so that
    /// many brackets on long lines or in long files cost no rescans (a fuzzed file of 20,000
    /// unopened `}` took 25 s when each rescanned the text before it).
    lines: Lines,
    /// `missing_open_brace`'s progress: the first line not yet examined, and the answer for
    /// the lines before it (closers come in text order, so each line is examined once).
    brace_scan: (usize, Option<usize>),
}

/// Line starts and indentation (spaces and tabs) of a text.
struct Lines {
    starts: Vec<usize>,
    indents: Vec<usize>,
}

impl Lines {
    fn new(src: &str) -> Lines {
        let starts: Vec<usize> = std::iter::once(0)
            .chain(src.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        let indents = starts
            .iter()
            .map(|&s| {
                let line = &src[s..];
                line.len() - line.trim_start_matches([' ', '\t']).len()
            })
            .collect();
        Lines { starts, indents }
    }

    /// The 0-based line of a byte offset.
    fn line_of(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset) - 1
    }
}

impl<'src> Lexer<'src> {
    fn run(&mut self) {
        while let Some(&byte) = self.bytes.get(self.pos) {
            // Source is almost all ASCII: decode a character only where it is not.
            let c = if byte.is_ascii() {
                char::from(byte)
            } else {
                self.peek_char().unwrap_or_default()
            };
            let start = self.pos;
            match c {
                '\n' => {
                    self.pos += 1;
                    self.newline(Span::new(start, start + 1));
                }
                ' ' | '\t' | '\r' => self.pos += 1,
                '/' if self.at("//") => self.skip_line_comment(),
                '/' if self.at("/*") => self.skip_block_comment(),
                '\\' => self.continuation(),
                '0'..='9' => self.number(),
                '"' => self.string(),
                c if c == '_' || c.is_ascii_alphabetic() => self.ident(),
                c => {
                    if !self.punct() {
                        self.bad_char(c);
                    }
                }
            }
        }
        self.close_at_eof();
    }

    // ---- helpers ---------------------------------------------------------------------------

    fn peek_char(&self) -> Option<char> {
        self.src[self.pos..].chars().next()
    }

    fn byte_at(&self, i: usize) -> u8 {
        self.bytes.get(i).copied().unwrap_or(0)
    }

    fn at(&self, s: &str) -> bool {
        self.src[self.pos..].starts_with(s)
    }

    fn push(&mut self, tok: Token<'src>, start: usize) {
        let span = Span::new(start, self.pos);
        self.count_operator(&tok, span);
        self.count_chain(&tok, span);
        self.tokens.push((tok, span));
    }

    /// Counts `else if` arms per bracket depth: a statement boundary at that depth ends the
    /// chain; a chain arm adds a level of nesting to everything inside it.
    fn count_chain(&mut self, tok: &Token<'src>, span: Span) {
        // A closing bracket belongs to the depth inside it (`close` has already popped it):
        // a `}` on its own line ends the block's statements, not the chain around the block.
        let closer = matches!(
            tok,
            Token::P(Punct::RParen | Punct::RBracket | Punct::RBrace)
        );
        let depth = self.open.len() + usize::from(closer);
        self.chains.resize(depth + 1, 0);
        match (self.tokens.last(), tok) {
            (Some((Token::Kw(Keyword::Else), _)), Token::Kw(Keyword::If)) => {
                self.chains[depth] += 1;
                let nesting = depth + self.chains.iter().sum::<usize>();
                if nesting == MAX_CHAIN_DEPTH + 1 {
                    self.parseable = false;
                    self.error(
                        Diagnostic::error(
                            format!("`else if` arms and brackets nested more than {MAX_CHAIN_DEPTH} levels deep"),
                            span,
                            "too deeply nested",
                        )
                        .with_help("each `else if` nests inside the one before: split a long chain (a function per range of cases, or a table indexed by the case)"),
                    );
                }
            }
            (None | Some((Token::Newline | Token::P(Punct::Semi), _)), _) => self.chains[depth] = 0,
            _ => {}
        }
    }

    fn count_operator(&mut self, tok: &Token<'src>, span: Span) {
        use Punct::*;
        match tok {
            Token::Newline | Token::P(Semi | LBrace | RBrace) => self.operators = 0,
            Token::P(LParen | RParen | LBracket | RBracket | Comma | Colon) => {}
            Token::P(_) | Token::Kw(Keyword::As) => {
                self.operators += 1;
                if self.operators == MAX_OPERATORS + 1 {
                    self.parseable = false;
                    self.error(
                        Diagnostic::error(
                            format!("more than {MAX_OPERATORS} operators in one statement"),
                            span,
                            "this expression is too long",
                        )
                        .with_help("split it into several statements, accumulating partial results in variables"),
                    );
                }
            }
            _ => {}
        }
    }

    fn error(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    fn inside_parens(&self) -> bool {
        matches!(self.open.last(), Some((Punct::LParen | Punct::LBracket, _)))
    }

    // ---- newlines ----------------------------------------------------------------------------

    fn newline(&mut self, span: Span) {
        if self.inside_parens() {
            return;
        }
        match self.tokens.last() {
            None | Some((Token::Newline, _)) => {}
            Some((Token::P(p), _)) if p.continues_line() => {}
            _ => {
                self.operators = 0;
                self.tokens.push((Token::Newline, span));
            }
        }
    }

    /// `else` continues an `if` even on a new line: drop the newline before it.
    fn drop_newline_before_else(&mut self) {
        if matches!(self.tokens.last(), Some((Token::Newline, _))) {
            self.tokens.pop();
        }
    }

    fn continuation(&mut self) {
        let start = self.pos;
        self.pos += 1;
        // Only blanks and a line comment may follow the backslash on its line.
        while matches!(self.byte_at(self.pos), b' ' | b'\t' | b'\r') {
            self.pos += 1;
        }
        if self.at("//") {
            self.skip_line_comment();
        }
        match self.byte_at(self.pos) {
            b'\n' => self.pos += 1,
            0 if self.pos >= self.bytes.len() => {}
            _ => self.error(
                Diagnostic::error(
                    "unexpected `\\`",
                    Span::new(start, start + 1),
                    "a backslash only continues a line at its very end",
                )
                .with_help("remove it, or move what follows it to the next line"),
            ),
        }
    }

    // ---- comments ----------------------------------------------------------------------------

    fn skip_line_comment(&mut self) {
        while self.pos < self.bytes.len() && self.bytes[self.pos] != b'\n' {
            self.pos += 1;
        }
    }

    fn skip_block_comment(&mut self) {
        let start = self.pos;
        match self.src[self.pos + 2..].find("*/") {
            Some(end) => {
                let body_end = self.pos + 2 + end;
                // A comment spanning lines separates statements like a newline would.
                let has_newline = self.src[self.pos..body_end].contains('\n');
                self.pos = body_end + 2;
                if has_newline {
                    self.newline(Span::new(start, self.pos));
                }
            }
            None => {
                self.pos = self.bytes.len();
                self.error(
                    Diagnostic::error(
                        "unterminated block comment",
                        Span::new(start, start + 2),
                        "this comment is never closed",
                    )
                    .with_help("end it with `*/` (block comments do not nest)"),
                );
            }
        }
    }

    // ---- literals and names ----------------------------------------------------------------

    fn number(&mut self) {
        let start = self.pos;
        let radix = match (self.byte_at(self.pos), self.byte_at(self.pos + 1)) {
            (b'0', b'x' | b'X') => 16,
            (b'0', b'b' | b'B') => 2,
            _ => 10,
        };
        if radix != 10 {
            self.pos += 2;
            return self.radix_int(start, radix);
        }
        self.eat_digits(10);
        let mut is_float = false;
        if self.byte_at(self.pos) == b'.' && self.byte_at(self.pos + 1).is_ascii_digit() {
            is_float = true;
            self.pos += 1;
            self.eat_digits(10);
        } else if self.byte_at(self.pos) == b'.' && self.byte_at(self.pos + 1) != b'.' {
            // `1.` followed by something else: not a float acc knows.
            self.pos += 1;
            return self.bad_number(
                start,
                "a float literal needs digits after the point: write `1.0`",
            );
        }
        if matches!(self.byte_at(self.pos), b'e' | b'E') {
            let save = self.pos;
            self.pos += 1;
            if matches!(self.byte_at(self.pos), b'+' | b'-') {
                self.pos += 1;
            }
            if !self.byte_at(self.pos).is_ascii_digit() {
                self.pos = save + 1;
                return self.bad_number(start, "an exponent needs digits: write `1e6` or `2.5e-3`");
            }
            is_float = true;
            self.eat_digits(10);
        }
        let digits_end = self.pos;
        let suffix = self.suffix();
        if self.malformed_tail() {
            return self.bad_number(
                start,
                "a number literal looks like `42`, `1_000`, `0x1f`, `2.5e-3` or `7i32`",
            );
        }
        let text = &self.src[start..digits_end];
        match suffix {
            Some(s @ ("f32" | "f64")) => {
                let suf = if s == "f32" {
                    FloatSuffix::F32
                } else {
                    FloatSuffix::F64
                };
                self.push(Token::Float(text, Some(suf)), start);
            }
            Some(s @ ("i32" | "i64")) if !is_float => {
                let suf = if s == "i32" {
                    IntSuffix::I32
                } else {
                    IntSuffix::I64
                };
                self.int_token(start, text, 10, Some(suf));
            }
            Some(s) => self.bad_suffix(start, digits_end, s, is_float),
            None if is_float => self.push(Token::Float(text, None), start),
            None => self.int_token(start, text, 10, None),
        }
    }

    fn radix_int(&mut self, start: usize, radix: u32) {
        let digits_start = self.pos;
        self.eat_digits(radix);
        let digits_end = self.pos;
        let text = &self.src[digits_start..digits_end];
        if text.bytes().all(|b| b == b'_') {
            return self.bad_number(start, "write digits after the prefix: `0x1f`, `0b101`");
        }
        let next = self.byte_at(self.pos);
        let is_suffix =
            matches!(&self.src[self.pos..], t if t.starts_with("i32") || t.starts_with("i64"));
        if next.is_ascii_alphanumeric() && !is_suffix {
            return self.bad_digit(start, radix);
        }
        let suffix = if next == b'i' { self.suffix() } else { None };
        if self.malformed_tail() {
            return self.bad_number(
                start,
                "a number literal looks like `42`, `1_000`, `0x1f`, `2.5e-3` or `7i32`",
            );
        }
        match suffix {
            None => self.int_token(start, text, radix, None),
            Some("i32") => self.int_token(start, text, radix, Some(IntSuffix::I32)),
            Some("i64") => self.int_token(start, text, radix, Some(IntSuffix::I64)),
            Some(s) => self.bad_suffix(start, digits_end, s, false),
        }
    }

    /// `0b102`, `0x1g`: name the digit that does not belong.
    fn bad_digit(&mut self, start: usize, radix: u32) {
        let digit_at = self.pos;
        let digit = self.peek_char().unwrap_or('?');
        while self.byte_at(self.pos).is_ascii_alphanumeric() || self.byte_at(self.pos) == b'_' {
            self.pos += 1;
        }
        let (kind, digits) = if radix == 2 {
            ("binary", "`0` and `1`")
        } else {
            ("hexadecimal", "`0`-`9` and `a`-`f`")
        };
        self.error(
            Diagnostic::error(
                format!("invalid digit `{digit}` in a {kind} literal"),
                Span::new(digit_at, digit_at + digit.len_utf8()),
                "not a digit of this base",
            )
            .with_label(Span::new(start, self.pos), "in this literal")
            .with_help(format!("{kind} literals use only the digits {digits}")),
        );
        self.push(Token::Int(0, None), start);
    }

    fn eat_digits(&mut self, radix: u32) {
        while (self.byte_at(self.pos) as char).is_digit(radix) || self.byte_at(self.pos) == b'_' {
            self.pos += 1;
        }
    }

    /// An identifier-like run right after the digits: a type suffix, or garbage.
    fn suffix(&mut self) -> Option<&'src str> {
        let start = self.pos;
        while self.byte_at(self.pos).is_ascii_alphanumeric() || self.byte_at(self.pos) == b'_' {
            self.pos += 1;
        }
        (self.pos > start).then(|| &self.src[start..self.pos])
    }

    /// `1.2.3`, `3x4`: consume the rest of a malformed number so one error covers it.
    fn malformed_tail(&mut self) -> bool {
        let dot_digit =
            self.byte_at(self.pos) == b'.' && self.byte_at(self.pos + 1).is_ascii_digit();
        if !dot_digit {
            return false;
        }
        while self.byte_at(self.pos).is_ascii_alphanumeric()
            || matches!(self.byte_at(self.pos), b'_' | b'.')
        {
            self.pos += 1;
        }
        true
    }

    fn int_token(&mut self, start: usize, text: &str, radix: u32, suffix: Option<IntSuffix>) {
        let digits: String = text.chars().filter(|&c| c != '_').collect();
        match u64::from_str_radix(&digits, radix) {
            Ok(v) => self.push(Token::Int(v, suffix), start),
            Err(_) => {
                self.error(
                    Diagnostic::error(
                        "integer literal is too large",
                        Span::new(start, self.pos),
                        "does not fit in 64 bits",
                    )
                    .with_help("the largest integer is 9223372036854775807 (i64); use a float literal like `1e20` for larger values"),
                );
                self.push(Token::Int(0, suffix), start);
            }
        }
    }

    fn bad_number(&mut self, start: usize, help: &str) {
        // Swallow the rest of an identifier-like tail so the error is reported once.
        while self.byte_at(self.pos).is_ascii_alphanumeric() || self.byte_at(self.pos) == b'_' {
            self.pos += 1;
        }
        let text = &self.src[start..self.pos];
        self.error(
            Diagnostic::error(
                format!("invalid number literal `{text}`"),
                Span::new(start, self.pos),
                "not a number acc can read",
            )
            .with_help(help),
        );
        self.push(Token::Int(0, None), start);
    }

    fn bad_suffix(&mut self, start: usize, digits_end: usize, suffix: &str, is_float: bool) {
        let help = if is_float && matches!(suffix, "i32" | "i64") {
            "a float literal cannot have an integer type; use `as` to convert: `(2.5 as i32)`"
                .to_string()
        } else {
            "number suffixes are `i32`, `i64`, `f32` and `f64` (`7i32`, `2.0f32`)".to_string()
        };
        self.error(
            Diagnostic::error(
                format!("invalid suffix `{suffix}` on a number literal"),
                Span::new(digits_end, self.pos),
                "unknown suffix",
            )
            .with_help(help),
        );
        self.push(Token::Int(0, None), start);
    }

    fn string(&mut self) {
        let start = self.pos;
        self.pos += 1;
        loop {
            if self.pos >= self.bytes.len() || self.bytes[self.pos] == b'\n' {
                self.error(
                    Diagnostic::error(
                        "unterminated string",
                        Span::new(start, self.pos),
                        "this string is never closed",
                    )
                    .with_help("close it with `\"` on the same line; write `\\n` for a line break"),
                );
                let body = &self.src[start + 1..self.pos];
                self.forget_brackets_opened_after(self.line_start(start));
                return self.push(Token::Str(body), start);
            }
            match self.bytes[self.pos] {
                b'"' => {
                    self.pos += 1;
                    let body = &self.src[start + 1..self.pos - 1];
                    return self.push(Token::Str(body), start);
                }
                b'\\' => {
                    let esc = self.byte_at(self.pos + 1);
                    if !matches!(esc, b'n' | b't' | b'"' | b'\\') {
                        self.bad_escape(self.pos);
                    }
                    self.pos += 1;
                    if matches!(esc, b'n' | b't' | b'"' | b'\\') {
                        self.pos += 1;
                    }
                }
                _ => {
                    self.pos += self.src[self.pos..]
                        .chars()
                        .next()
                        .map_or(1, char::len_utf8);
                }
            }
        }
    }

    fn line_start(&self, offset: usize) -> usize {
        self.src[..offset].rfind('\n').map_or(0, |i| i + 1)
    }

    /// An unterminated string swallowed the rest of its line, closing brackets included: the
    /// brackets opened on that line are not reported as unclosed too, and are taken out of the
    /// tokens, so that the parser never sees unbalanced brackets (its recovery takes time
    /// exponential in the depth of unclosed ones: found by fuzzing, 255 `[` before an
    /// unterminated string never finished).
    fn forget_brackets_opened_after(&mut self, offset: usize) {
        let mut forgotten = Vec::new();
        while let Some(&(_, span)) = self.open.last() {
            if (span.start as usize) < offset {
                break;
            }
            self.open.pop();
            forgotten.push(span.start);
        }
        if forgotten.is_empty() {
            return;
        }
        forgotten.sort_unstable();
        let first = self
            .tokens
            .partition_point(|(_, s)| (s.start as usize) < offset);
        let kept: Vec<_> = self
            .tokens
            .drain(first..)
            .filter(|(_, s)| forgotten.binary_search(&s.start).is_err())
            .collect();
        self.tokens.extend(kept);
    }

    fn bad_escape(&mut self, at: usize) {
        let end = (at + 1 + self.src[at + 1..].chars().next().map_or(0, char::len_utf8))
            .min(self.bytes.len());
        let text = &self.src[at..end];
        self.error(
            Diagnostic::error(
                format!("unknown escape `{}` in a string", text.trim_end()),
                Span::new(at, end),
                "unknown escape",
            )
            .with_help("strings know `\\n`, `\\t`, `\\\"` and `\\\\`"),
        );
    }

    fn ident(&mut self) {
        let start = self.pos;
        while self.byte_at(self.pos).is_ascii_alphanumeric() || self.byte_at(self.pos) == b'_' {
            self.pos += 1;
        }
        if self
            .peek_char()
            .is_some_and(|c| c.is_alphanumeric() && !c.is_ascii())
        {
            return self.non_ascii_ident(start);
        }
        let text = &self.src[start..self.pos];
        match Keyword::from_word(text) {
            Some(Keyword::Else) => {
                self.drop_newline_before_else();
                self.push(Token::Kw(Keyword::Else), start);
            }
            Some(k) => self.push(Token::Kw(k), start),
            None => self.push(Token::Ident(text), start),
        }
    }

    fn non_ascii_ident(&mut self, start: usize) {
        while let Some(c) = self.peek_char() {
            if !(c.is_alphanumeric() || c == '_') {
                break;
            }
            self.pos += c.len_utf8();
        }
        let text = &self.src[start..self.pos];
        self.error(
            Diagnostic::error(
                format!("identifier `{text}` has non-ASCII letters"),
                Span::new(start, self.pos),
                "not a valid name",
            )
            .with_help("names are ASCII letters, digits and `_`, starting with a letter or `_`"),
        );
        self.push(Token::Ident(text), start);
    }

    fn bad_char(&mut self, c: char) {
        if matches!(c, '\u{201C}' | '\u{201D}') {
            return self.curly_string();
        }
        if let Some((what, ascii)) = look_alike(c) {
            return self.look_alike_char(c, what, ascii);
        }
        let start = self.pos;
        self.pos += c.len_utf8();
        let help = match c {
            '\'' => "strings use double quotes: \"text\"",
            '.' => "`.` only appears in numbers (`1.5`) and ranges (`0..n`)",
            '#' => "comments start with `//`; directives start with `acc`, not `#pragma acc`",
            '?' => "acc has no `?:` operator; use `if c { a } else { b }`",
            '$' => "names are ASCII letters, digits and `_`, starting with a letter or `_`",
            '@' | '`' => "this character has no meaning in acc",
            _ if c.is_alphabetic() => "names are ASCII letters, digits and `_`",
            _ => "this character has no meaning in acc",
        };
        self.error(
            Diagnostic::error(
                format!("unexpected character `{}`", c.escape_debug()),
                Span::new(start, self.pos),
                "not valid here",
            )
            .with_help(help),
        );
    }

    /// A character copied from a document that looks like an ASCII one (`−`, `×`, `’`).
    fn look_alike_char(&mut self, c: char, what: &str, ascii: &str) {
        let start = self.pos;
        self.pos += c.len_utf8();
        self.error(
            Diagnostic::error(
                format!("{what} `{c}` instead of `{ascii}`"),
                Span::new(start, self.pos),
                "looks like an ASCII character, but is not one",
            )
            .with_help(format!(
                "type the ASCII `{ascii}` (text copied from documents often has look-alikes)"
            )),
        );
        // Stand in the ASCII operator so the rest of the line parses as meant.
        if let Some(&(_, p)) = PUNCT_TABLE.iter().find(|(t, _)| *t == ascii) {
            self.push(Token::P(p), start);
        }
    }

    /// `“hello”`: read it as the string it was meant to be, with one error.
    fn curly_string(&mut self) {
        let start = self.pos;
        let open_len = '\u{201C}'.len_utf8();
        let body_start = start + open_len;
        let rest = &self.src[body_start..];
        let line_end = rest.find('\n').unwrap_or(rest.len());
        let close = rest[..line_end].find(['\u{201D}', '\u{201C}', '"']);
        let body_end = body_start + close.unwrap_or(line_end);
        self.pos = match close {
            Some(_) => {
                body_end
                    + self.src[body_end..]
                        .chars()
                        .next()
                        .map_or(0, char::len_utf8)
            }
            None => body_end,
        };
        self.error(
            Diagnostic::error(
                "curly quotes are not string quotes",
                Span::new(start, self.pos),
                "this string uses `“ ”`",
            )
            .with_help("use straight double quotes: \"…\""),
        );
        let body = &self.src[body_start..body_end];
        self.push(Token::Str(body), start);
    }

    // ---- punctuation and brackets -----------------------------------------------------------

    /// Longest-match punctuation. Returns false when no operator starts here.
    fn punct(&mut self) -> bool {
        if self.at("++") || self.at("--") {
            self.increment_operator();
            return true;
        }
        // The first byte first: most entries differ in it, and a byte test is much cheaper
        // than the slice comparison `at` makes (which was the lexer's largest cost).
        let first = self.src.as_bytes()[self.pos];
        let Some(&(text, p)) = PUNCT_TABLE
            .iter()
            .find(|(t, _)| t.as_bytes()[0] == first && self.at(t))
        else {
            return false;
        };
        let start = self.pos;
        self.pos += text.len();
        let span = Span::new(start, self.pos);
        match p {
            Punct::LParen | Punct::LBracket | Punct::LBrace => {
                if self.open.len() == MAX_NESTING {
                    self.too_deep(span);
                }
                self.open.push((p, span));
            }
            Punct::RParen | Punct::RBracket | Punct::RBrace => self.close(p, span),
            _ => {}
        }
        self.push(Token::P(p), start);
        true
    }

    fn too_deep(&mut self, span: Span) {
        self.parseable = false;
        self.error(
            Diagnostic::error(
                format!("brackets nested more than {MAX_NESTING} levels deep"),
                span,
                "too deeply nested",
            )
            .with_help("split the expression or block into smaller pieces (a `let`, a function)"),
        );
    }

    /// `i++`: C's increment, which acc spells `i += 1`. The operator is dropped.
    fn increment_operator(&mut self) {
        let start = self.pos;
        let op = &self.src[start..start + 2];
        self.pos += 2;
        let assign = if op == "++" { "+=" } else { "-=" };
        self.error(
            Diagnostic::error(
                format!("acc has no `{op}` operator"),
                Span::new(start, self.pos),
                "not an acc operator",
            )
            .with_help(format!("write `i {assign} 1`")),
        );
    }

    fn close(&mut self, closer: Punct, span: Span) {
        let expected_opener = match closer {
            Punct::RParen => Punct::LParen,
            Punct::RBracket => Punct::LBracket,
            _ => Punct::LBrace,
        };
        match self.open.pop() {
            Some((opener, open_span)) if opener == expected_opener => {
                if closer == Punct::RBrace {
                    self.note_indentation(open_span, span);
                }
            }
            Some((opener, open_span)) => {
                self.parseable = false;
                self.error(
                    Diagnostic::error(
                        format!(
                            "mismatched `{}`: expected `{}` to close the `{}`",
                            closer.as_str(),
                            matching(opener).as_str(),
                            opener.as_str()
                        ),
                        span,
                        format!("this `{}` does not match", closer.as_str()),
                    )
                    .with_label(
                        open_span,
                        format!("this `{}` is still open", opener.as_str()),
                    )
                    .with_help(format!(
                        "close the `{}` with `{}` before this point",
                        opener.as_str(),
                        matching(opener).as_str()
                    )),
                );
                // Recover: the closer was meant for an outer opener of its kind, if one is open;
                // otherwise it closes the mismatched opener (one error, not two).
                if let Some(i) = self.open.iter().rposition(|(o, _)| *o == expected_opener) {
                    self.open.truncate(i);
                }
            }
            None if closer == Punct::RBrace && self.missing_open_brace(span).is_some() => {
                self.parseable = false;
                let line_end = self.brace_scan.1.unwrap_or_default();
                self.error(
                    Diagnostic::error(
                        "a `{` seems to be missing at the end of this line",
                        Span::new(line_end, line_end),
                        "expected `{` here",
                    )
                    .with_label(span, "this `}` has no matching `{`")
                    .with_help("a block opens with `{` on the line of its `if`, `while`, `for`, `fn` or directive"),
                );
            }
            None => {
                self.parseable = false;
                self.error(
                    Diagnostic::error(
                        format!("unexpected `{}`", closer.as_str()),
                        span,
                        format!("no `{}` is open here", expected_opener.as_str()),
                    )
                    .with_help(format!(
                        "remove it, or add the `{}` it should close",
                        expected_opener.as_str()
                    )),
                );
            }
        }
    }

    /// For a `}` that closes nothing: the end of the nearest line above that starts a block
    /// (`while`, `if`, `for`, `fn`, `else`, `acc …`) without `{`, when the line after it is
    /// indented deeper — where the `{` was most likely forgotten.
    ///
    /// Whether a line qualifies depends only on it and the next line, so the lines above the
    /// closer's are examined once for the whole file, in order, as closers come.
    fn missing_open_brace(&mut self, closer: Span) -> Option<usize> {
        let closer_line = self.lines.line_of(closer.start as usize);
        let (mut line, mut found) = self.brace_scan;
        if line > closer_line {
            // Closers come in text order; start over if one ever does not.
            (line, found) = (0, None);
        }
        while line < closer_line {
            let start = self.lines.starts[line];
            let end = self.lines.starts[line + 1];
            let text = self.src[start..end].trim_end();
            let head = text.trim_start();
            let opens = ["while ", "if ", "for ", "fn ", "else", "acc "]
                .iter()
                .any(|k| head.starts_with(k));
            let next_end = self
                .lines
                .starts
                .get(line + 2)
                .copied()
                .unwrap_or(self.src.len());
            let next = &self.src[end..next_end];
            let next_indent = next.len() - next.trim_start().len();
            let indent = text.len() - head.len();
            if opens && !text.ends_with('{') && next_indent > indent {
                found = Some(start + text.len());
            }
            line += 1;
        }
        self.brace_scan = (line, found);
        found
    }

    /// The indentation of the line holding `offset`, and whether `offset` is the line's first
    /// non-blank character.
    fn line_indent(&self, offset: usize) -> (usize, bool) {
        let line = self.lines.line_of(offset);
        let indent = self.lines.indents[line];
        (indent, self.lines.starts[line] + indent == offset)
    }

    /// Remember the first `}` that is not indented like the line of its `{`.
    fn note_indentation(&mut self, open: Span, close: Span) {
        if self.suspicious_closer.is_some() {
            return;
        }
        let (open_line_indent, _) = self.line_indent(open.start as usize);
        let (close_indent, first_on_line) = self.line_indent(close.start as usize);
        if first_on_line && close_indent != open_line_indent {
            self.suspicious_closer = Some((open, close));
        }
    }

    fn close_at_eof(&mut self) {
        /// More unclosed brackets than this are summed up in the last error's help.
        const SHOWN: usize = 3;
        let eof = Span::new(self.bytes.len(), self.bytes.len());
        let open = std::mem::take(&mut self.open);
        let hidden = open.len().saturating_sub(SHOWN);
        for (i, (opener, span)) in open.into_iter().rev().take(SHOWN).enumerate() {
            self.parseable = false;
            let mut d = Diagnostic::error(
                format!("{UNCLOSED}`{}`", opener.as_str()),
                span,
                format!("this `{}` is never closed", opener.as_str()),
            )
            .with_label(eof, "the file ends here");
            if opener == Punct::LBrace {
                if let Some((_, closer)) = self.suspicious_closer {
                    d = d.with_label(
                        closer,
                        "this `}` is indented differently from the line that opened its block: a `}` may be missing before it",
                    );
                }
            }
            let mut help = format!("add the missing `{}`", matching(opener).as_str());
            if i + 1 == SHOWN && hidden > 0 {
                help += &format!(" ({hidden} more brackets opened before it are unclosed too)");
            }
            self.error(d.with_help(help));
        }
    }
}

/// Operators, longest first so that `<<=` wins over `<<` and `<`.
/// How the error of a bracket that the input ends before closing begins.
const UNCLOSED: &str = "unclosed ";

/// The error is a bracket that the input ends before closing.
pub(crate) fn is_unclosed(d: &Diagnostic) -> bool {
    d.message.starts_with(UNCLOSED)
}

const PUNCT_TABLE: &[(&str, Punct)] = &[
    ("..=", Punct::DotDotEq),
    ("<<=", Punct::ShlEq),
    (">>=", Punct::ShrEq),
    ("..", Punct::DotDot),
    ("->", Punct::Arrow),
    ("<<", Punct::Shl),
    (">>", Punct::Shr),
    ("<=", Punct::Le),
    (">=", Punct::Ge),
    ("==", Punct::EqEq),
    ("!=", Punct::NotEq),
    ("&&", Punct::AndAnd),
    ("||", Punct::OrOr),
    ("+=", Punct::PlusEq),
    ("-=", Punct::MinusEq),
    ("*=", Punct::StarEq),
    ("/=", Punct::SlashEq),
    ("%=", Punct::PercentEq),
    ("&=", Punct::AmpEq),
    ("|=", Punct::PipeEq),
    ("^=", Punct::CaretEq),
    ("(", Punct::LParen),
    (")", Punct::RParen),
    ("[", Punct::LBracket),
    ("]", Punct::RBracket),
    ("{", Punct::LBrace),
    ("}", Punct::RBrace),
    (",", Punct::Comma),
    (";", Punct::Semi),
    (":", Punct::Colon),
    ("+", Punct::Plus),
    ("-", Punct::Minus),
    ("*", Punct::Star),
    ("/", Punct::Slash),
    ("%", Punct::Percent),
    ("&", Punct::Amp),
    ("|", Punct::Pipe),
    ("^", Punct::Caret),
    ("~", Punct::Tilde),
    ("!", Punct::Bang),
    ("<", Punct::Lt),
    (">", Punct::Gt),
    ("=", Punct::Assign),
];

/// Unicode characters that pass for ASCII ones: what they are, and the ASCII meant.
fn look_alike(c: char) -> Option<(&'static str, &'static str)> {
    Some(match c {
        '\u{2212}' => ("Unicode minus sign", "-"),
        '\u{2013}' | '\u{2014}' => ("dash", "-"),
        '\u{00D7}' => ("multiplication sign", "*"),
        '\u{00F7}' => ("division sign", "/"),
        '\u{2018}' | '\u{2019}' => ("curly quote", "\""),
        '\u{00A0}' => ("non-breaking space", " "),
        '\u{2264}' => ("Unicode `≤`", "<="),
        '\u{2265}' => ("Unicode `≥`", ">="),
        '\u{2260}' => ("Unicode `≠`", "!="),
        _ => return None,
    })
}

fn matching(p: Punct) -> Punct {
    match p {
        Punct::LParen => Punct::RParen,
        Punct::LBracket => Punct::RBracket,
        Punct::LBrace => Punct::RBrace,
        Punct::RParen => Punct::LParen,
        Punct::RBracket => Punct::LBracket,
        _ => Punct::LBrace,
    }
}

/// Keywords close to a misspelled identifier: used by the parser for "did you mean" hints.
pub fn keyword_suggestion(word: &str) -> Option<&'static str> {
    // Words from other languages, and what acc spells them as.
    const OTHER: [(&str, &str); 9] = [
        ("function", "fn"),
        ("func", "fn"),
        ("def", "fn"),
        ("elif", "else if"),
        ("elsif", "else if"),
        ("var", "let"),
        ("const", "let"),
        ("do", "while"),
        ("switch", "if"),
    ];
    if let Some(w) = closest(word, OTHER.iter().map(|(w, _)| *w))
        .or(OTHER.iter().map(|(w, _)| *w).find(|w| *w == word))
    {
        return OTHER.iter().find(|(o, _)| *o == w).map(|(_, k)| *k);
    }
    closest(word, Keyword::ALL.iter().map(|k| k.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Token<'_>> {
        let l = lex(src);
        assert!(l.diags.is_empty(), "{:?}", l.diags);
        l.tokens.into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn newlines_end_statements_except_inside_parens_and_after_operators() {
        use Token::*;
        assert_eq!(
            kinds("let x = (1 +\n 2)\ny = x *\n 3\n"),
            vec![
                Kw(Keyword::Let),
                Ident("x"),
                P(Punct::Assign),
                P(Punct::LParen),
                Int(1, None),
                P(Punct::Plus),
                Int(2, None),
                P(Punct::RParen),
                Newline,
                Ident("y"),
                P(Punct::Assign),
                Ident("x"),
                P(Punct::Star),
                Int(3, None),
                Newline,
            ]
        );
    }

    #[test]
    fn newlines_inside_braces_inside_parens_still_separate() {
        // inside `{` nested in `(`, newlines are statement ends again
        let toks = kinds("f({\na\nb\n})");
        assert_eq!(toks.iter().filter(|t| **t == Token::Newline).count(), 3);
    }

    #[test]
    fn backslash_continues_a_line() {
        let toks = kinds("acc parallel \\\n copy(a)\nx");
        assert_eq!(toks.iter().filter(|t| **t == Token::Newline).count(), 1);
    }

    #[test]
    fn else_on_next_line_joins_the_if() {
        let toks = kinds("if a {\n}\nelse {\n}");
        assert_eq!(toks.iter().filter(|t| **t == Token::Newline).count(), 2);
    }

    #[test]
    fn numbers() {
        use Token::*;
        assert_eq!(
            kinds("42 1_000_000 0x1f 0b101 7i32 2.0f32 1f32 2.5e-3 1e6 0..n"),
            vec![
                Int(42, None),
                Int(1_000_000, None),
                Int(31, None),
                Int(5, None),
                Int(7, Some(IntSuffix::I32)),
                Float("2.0", Some(FloatSuffix::F32)),
                Float("1", Some(FloatSuffix::F32)),
                Float("2.5e-3", None),
                Float("1e6", None),
                Int(0, None),
                P(Punct::DotDot),
                Ident("n"),
            ]
        );
    }

    #[test]
    fn malformed_numbers_are_single_errors() {
        for src in [
            "1.2.3",
            "0x",
            "1e",
            "3u8",
            "1.",
            "2.5i32",
            "99999999999999999999",
        ] {
            let l = lex(src);
            assert_eq!(l.diags.len(), 1, "{src}: {:?}", l.diags);
        }
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(kinds(r#""a\n\"b""#), vec![Token::Str(r#"a\n\"b"#)]);
        assert_eq!(lex(r#""bad \q""#).diags.len(), 1);
        assert_eq!(lex("\"open\nx").diags[0].message, "unterminated string");
    }

    #[test]
    fn unbalanced_brackets_are_reported_with_the_opener() {
        let l = lex("fn f() {\n  if x {\n    y = 1\n}\n");
        assert!(!l.parseable);
        assert_eq!(l.diags.len(), 1);
        assert_eq!(l.diags[0].message, "unclosed `{`");
        let l = lex("f(a]");
        assert!(l.diags[0].message.starts_with("mismatched `]`"));
        let l = lex("x)\n");
        assert_eq!(l.diags[0].message, "unexpected `)`");
    }

    #[test]
    fn nesting_is_bounded() {
        let ok = format!("{}{}", "(".repeat(MAX_NESTING), ")".repeat(MAX_NESTING));
        assert!(lex(&ok).diags.is_empty());
        let deep = format!(
            "{}{}",
            "{".repeat(MAX_NESTING + 1),
            "}".repeat(MAX_NESTING + 1)
        );
        let l = lex(&deep);
        assert!(!l.parseable);
        assert_eq!(l.diags.len(), 1, "{:?}", l.diags);
    }

    #[test]
    fn operator_chains_are_bounded() {
        let ok = format!("x = 1{}", " + 1".repeat(MAX_OPERATORS - 1));
        assert!(lex(&ok).parseable);
        let long = format!("x = 1{}", " + 1".repeat(MAX_OPERATORS));
        let l = lex(&long);
        assert!(!l.parseable);
        assert_eq!(l.diags.len(), 1);
        let many_lines = "x = 1 + 1\n".repeat(MAX_OPERATORS);
        assert!(lex(&many_lines).parseable);
    }

    /// An `else if` chain as people write it, one arm a line block: `MAX_CHAIN_DEPTH` arms
    /// lex, one more is a located error (a 500,000-arm chain overflowed the compiler's stack
    /// when the `}` before each `else` reset the count).
    #[test]
    fn else_if_chains_are_bounded() {
        let chain = |arms: usize| {
            let mut s = String::from("if x == 0 {\n    y = 0\n");
            for i in 1..=arms {
                s.push_str(&format!("}} else if x == {i} {{\n    y = {i}\n"));
            }
            s + "}\n"
        };
        assert!(lex(&chain(MAX_CHAIN_DEPTH)).parseable);
        let text = chain(MAX_CHAIN_DEPTH + 1);
        let l = lex(&text);
        assert!(!l.parseable);
        assert_eq!(l.diags.len(), 1, "{:?}", l.diags);
        let last = text.rfind("else if").unwrap() + "else ".len();
        assert_eq!(l.diags[0].span().start as usize, last);
        // Separate statements do not add up, nor do chains in separate blocks.
        let separate = "if a { } else if b { }\n".repeat(3 * MAX_CHAIN_DEPTH);
        assert!(lex(&separate).parseable);
        let blocks = format!("fn f() {{\n{}}}\n", chain(MAX_CHAIN_DEPTH - 1)).repeat(3);
        assert!(lex(&blocks).parseable);
    }

    #[test]
    fn comments() {
        assert_eq!(
            kinds("a // b\n/* c\n d */ e"),
            vec![Token::Ident("a"), Token::Newline, Token::Ident("e")]
        );
        assert_eq!(
            lex("/* open").diags[0].message,
            "unterminated block comment"
        );
    }

    #[test]
    fn bad_characters() {
        let l = lex("x @ y $ é");
        assert_eq!(l.diags.len(), 3);
    }
}
