//! Input generation: mutations of corpus programs (bytes, tokens, lines, and edits aimed at the
//! front end's limits and odd corners) and programs from the structure-aware generator
//! (`acc-progen`), whose devices must agree.

use crate::corpus::Corpus;
use acc_lang::vocabulary::VOCABULARY;
use acc_progen::rng::Rng;

/// What the pipeline target expects of an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Front end only.
    Frontend,
    /// A generated program: deterministic by construction, so every device must print the
    /// same output and end with the same error.
    Generated,
    /// A mutated program: it may race or rely on shared memory, so devices may differ; it must
    /// still never crash, and its errors must be located.
    Mutated,
}

impl Mode {
    pub fn letter(self) -> char {
        match self {
            Mode::Frontend => 'F',
            Mode::Generated => 'G',
            Mode::Mutated => 'M',
        }
    }

    pub fn from_letter(c: char) -> Option<Mode> {
        match c {
            'F' => Some(Mode::Frontend),
            'G' => Some(Mode::Generated),
            'M' => Some(Mode::Mutated),
            _ => None,
        }
    }
}

/// Literals at and past the edges of the types, and malformed ones.
#[rustfmt::skip]
const ODD_LITERALS: &[&str] = &[
    "1<<62", "1 << 63", "-0", "-0.0", "1e400", "-1e400", "1e-400", "9223372036854775807",
    "9223372036854775808", "-9223372036854775808", "(-9223372036854775807 - 1)",
    "2147483647i32", "2147483648i32", "-2147483648i32", "0x8000000000000000",
    "0xffffffffffffffff", "0x7fffffff", "18446744073709551616", "0b", "0x", "1e", "1.e5", ".5",
    "5.", "1__0", "1_", "0_1", "00", "0777", "1f32", "1e39f32", "3.4028235e38f32", "1e-46f32",
    "4.9e-324", "1.7976931348623157e308", "nan", "inf", "(1.0 / 0.0)", "(0.0 / 0.0)", "(0 / 0)",
    "(1 % 0)", "(-9223372036854775807 - 1) / -1", "0", "1", "-1", "2", "3", "7", "8", "16", "0.5",
    "true", "false", "1i64", "0i32", "-1i32", "255", "256", "1000", "65536", "2147483648",
    "4294967296",
    "123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890",
];

/// Small literals for programs that should still run quickly.
const SMALL_LITERALS: &[&str] = &[
    "0", "1", "2", "3", "-1", "4", "5", "7", "8", "16", "0.5", "-0.0", "1.5", "true", "false",
    "1i32", "2i64", "0.25f32", "1e-3", "100",
];

#[rustfmt::skip]
const OPERATORS: &[&str] = &[
    "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "&&", "||", "==", "!=", "<", "<=", ">",
    ">=", "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "!", "~", "..",
    "..=", "as",
];

#[rustfmt::skip]
const STRINGS: &[&str] = &[
    "\"%\"", "\"%d%d%d\\n\"", "\"%*d\"", "\"%.*f\"", "\"%lld\"", "\"%s\"", "\"%c\"", "\"%5.2q\"",
    "\"\\u{0}\"", "\"\\x\"", "\"\\\\\"", "\"%%\"", "\"% d\"", "\"%-+ #0d\\n\"", "\"%e %g %f\"",
    "\"%.400f\"", "\"%999999999d\"", "\"%x %o %X\"", "\"%5.3s\"", "\"\"", "\"unterminated",
    "\"\\", "\"a\nb\"", "\"%.3e\\n\"", "\"%i %u\"", "\"%p\"", "\"%n\"",
];

#[rustfmt::skip]
const CONSTRUCTS: &[&str] = &[
    "parallel", "parallel loop", "kernels", "kernels loop", "serial", "serial loop", "loop",
    "data", "enter data", "exit data", "update", "wait", "atomic", "atomic update",
    "atomic read", "atomic write", "atomic capture", "routine", "routine seq",
    "routine gang", "routine worker", "routine vector", "declare", "set", "host_data", "init",
    "shutdown", "cache", "loop seq", "loop gang vector", "parallel loop collapse(2)",
];

#[rustfmt::skip]
const CLAUSES: &[&str] = &[
    "gang", "worker", "vector", "seq", "auto", "independent", "collapse({n})", "tile({n})",
    "tile(*, {n})", "tile({n}, {n}, {n})", "private({v})", "firstprivate({v})",
    "reduction(+: {v})", "reduction(max: {v})", "reduction(&&: {v})", "reduction(^: {v})",
    "reduction(*: {v}, {v})", "reduction(foo: {v})", "default(none)", "default(present)",
    "default(shared)", "present({v})", "copy({v})", "copyin({v})", "copyout({v})",
    "create({v})", "no_create({v})", "delete({v})", "copy({v}[0:{n}])", "copyin({v}[{n}:{n}])",
    "copyout({v}[0:{n}, 1:{n}])", "copy({v}[:])", "copy({v}[{n}:])", "copy({v}[-1:2])",
    "async", "async({n})", "async(-1)", "async({v})", "wait", "wait({n})", "wait({n}, {n})",
    "wait(devnum: 0: queues: {n})", "num_gangs({n})", "num_gangs(0)", "num_gangs(-5)",
    "num_gangs({n}, {n}, {n})", "num_workers({n})", "vector_length({n})",
    "vector_length(100000)", "device_type(*)", "device_type(nvidia)", "device_type(host)",
    "dtype(multicore)", "if({v})", "if(true)", "if(false)", "self", "self({v})", "finalize",
    "if_present", "device_num({n})", "default_async({n})", "host({v})", "device({v})",
    "attach({v})", "bind(x)", "nohost", "read", "write", "update", "capture", "gang(static: *)",
    "gang(num: {n})", "worker({n})", "vector({n})", "collapse(force: {n})", "(", ")", ",",
];

/// A token: a range of bytes of the text.
#[derive(Clone, Copy, Debug)]
struct Tok {
    start: usize,
    end: usize,
    kind: TokKind,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TokKind {
    Word,
    Number,
    Str,
    Space,
    Punct,
}

/// A rough tokenizer: enough to splice whole words, numbers and strings (it need not agree
/// with the real lexer, and must not fail on any text).
fn tokens(text: &str) -> Vec<Tok> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let c = bytes[i];
        let kind = if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 {
            while i < bytes.len()
                && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_' || bytes[i] >= 0x80)
            {
                i += 1;
            }
            TokKind::Word
        } else if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1].is_ascii_digit() {
                i += 1;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
            }
            TokKind::Number
        } else if c == b'"' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                i += if bytes[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(bytes.len());
            TokKind::Str
        } else if c.is_ascii_whitespace() {
            while i < bytes.len() && bytes[i].is_ascii_whitespace() {
                i += 1;
            }
            TokKind::Space
        } else {
            i += 1;
            TokKind::Punct
        };
        // Keep ranges on char boundaries (a word may end inside nothing but ASCII or whole
        // multi-byte characters, since bytes >= 0x80 all belong to words).
        while i < bytes.len() && !text.is_char_boundary(i) {
            i += 1;
        }
        out.push(Tok {
            start,
            end: i,
            kind,
        });
    }
    out
}

/// The input generator of one job.
pub struct Mutator<'c> {
    pub rng: Rng,
    corpus: &'c Corpus,
}

impl<'c> Mutator<'c> {
    pub fn new(seed: u64, corpus: &'c Corpus) -> Mutator<'c> {
        Mutator {
            rng: Rng::new(seed),
            corpus,
        }
    }

    fn corpus_text(&mut self) -> String {
        if self.corpus.is_empty() {
            return String::new();
        }
        let i = self.rng.below(self.corpus.files.len());
        self.corpus.files[i].1.clone()
    }

    fn generated(&mut self) -> String {
        let seed = self.rng.next_u64() >> 24;
        let cfg = acc_progen::gen::Config {
            max_units: 1 + self.rng.below(5),
            known_bugs: false,
            errors: true,
            devices: true,
        };
        acc_progen::gen::generate(seed, &cfg).source()
    }

    /// A front-end input: a corpus program (now and then a generated one) with 1 to 6
    /// mutations stacked.
    pub fn frontend_input(&mut self) -> String {
        let mut text = if self.rng.chance(10) {
            self.generated()
        } else {
            self.corpus_text()
        };
        if self.rng.chance(3) {
            return text;
        }
        let most = if self.rng.chance(20) { 12 } else { 4 };
        let n = 1 + self.rng.below(most);
        for _ in 0..n {
            text = self.mutate(&text, false);
        }
        text
    }

    /// A pipeline input: a generated program whose devices must agree, or a mutated program
    /// (generated or from the corpus) with a few mutations that mostly keep it compiling.
    pub fn pipeline_input(&mut self) -> (Mode, String) {
        let roll = self.rng.below(100);
        if roll < 55 {
            return (Mode::Generated, self.generated());
        }
        let mut text = if roll < 80 {
            self.generated()
        } else {
            self.corpus_text()
        };
        let n = 1 + self.rng.below(3);
        for _ in 0..n {
            text = self.mutate(&text, true);
        }
        (Mode::Mutated, text)
    }

    /// One mutation of `text`. `gentle` (the pipeline) prefers edits that keep a program
    /// compiling and quick to run: small literals, operators, names, lines, clauses.
    pub fn mutate(&mut self, text: &str, gentle: bool) -> String {
        let choice = if gentle {
            [2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17][self.rng.below(12)]
        } else {
            self.rng.below(22)
        };
        let toks = tokens(text);
        match choice {
            0 => self.byte_flip(text),
            1 => self.byte_insert(text),
            2 => self.delete_range(text),
            3 => self.token_splice(text, &toks),
            4 => self.token_edit(text, &toks),
            5 | 6 => self.line_edit(text),
            7 => self.replace_token(text, &toks, TokKind::Number, gentle),
            8 => self.replace_token(text, &toks, TokKind::Word, gentle),
            9 => self.replace_token(text, &toks, TokKind::Punct, gentle),
            10 => self.replace_token(text, &toks, TokKind::Str, gentle),
            11 => self.insert_vocabulary(text, &toks),
            12 => self.insert_directive(text, gentle),
            13 => self.add_clause(text, gentle),
            14 => self.deep_nesting(text, &toks),
            15 => self.long_chain(text),
            16 => self.crossover(text),
            17 => self.replace_token(text, &toks, TokKind::Word, gentle),
            18 => self.truncate(text),
            19 => self.odd_characters(text, &toks),
            20 => self.wrap_lines(text),
            _ => self.insert_vocabulary(text, &toks),
        }
    }

    fn byte_flip(&mut self, text: &str) -> String {
        let mut bytes = text.as_bytes().to_vec();
        if bytes.is_empty() {
            return "\u{fffd}".into();
        }
        let at = self.rng.below(bytes.len());
        bytes[at] ^= 1 << self.rng.below(8);
        // Invalid UTF-8 becomes U+FFFD: the CLI rejects such a file before the front end and
        // the engine takes `&str`, so only valid text (with replacement characters) gets in.
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn byte_insert(&mut self, text: &str) -> String {
        const BYTES: &[u8] = b"\0\n\r\t\"\\{}()[];,:.'`#@$?~!^&|*+-/%<>=0123456789aeEfxi_ \x7f";
        let mut bytes = text.as_bytes().to_vec();
        let at = self.rng.below(bytes.len() + 1);
        let b = if self.rng.chance(10) {
            self.rng.below(256) as u8
        } else {
            self.rng.pick(BYTES)
        };
        bytes.insert(at, b);
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn boundary(text: &str, mut at: usize) -> usize {
        at = at.min(text.len());
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    }

    fn delete_range(&mut self, text: &str) -> String {
        if text.is_empty() {
            return String::new();
        }
        let start = Self::boundary(text, self.rng.below(text.len()));
        let end = Self::boundary(text, start + 1 + self.rng.below(16));
        format!("{}{}", &text[..start], &text[end..])
    }

    /// A run of tokens of another corpus program inserted here, or replacing a run here.
    fn token_splice(&mut self, text: &str, toks: &[Tok]) -> String {
        let other = self.corpus_text();
        let other_toks = tokens(&other);
        if other_toks.is_empty() {
            return text.to_string();
        }
        let from = self.rng.below(other_toks.len());
        let to = (from + 1 + self.rng.below(20)).min(other_toks.len());
        let piece = &other[other_toks[from].start..other_toks[to - 1].end];
        let replace = self.rng.chance(50);
        let (start, end) = self.token_range(toks, text.len(), replace);
        format!("{}{piece}{}", &text[..start], &text[end..])
    }

    /// A byte range covering a run of up to 8 tokens (`replace`) or an empty range at a token
    /// boundary.
    fn token_range(&mut self, toks: &[Tok], len: usize, replace: bool) -> (usize, usize) {
        if toks.is_empty() {
            return (len, len);
        }
        let i = self.rng.below(toks.len());
        if !replace {
            return (toks[i].start, toks[i].start);
        }
        let j = (i + 1 + self.rng.below(8)).min(toks.len());
        (toks[i].start, toks[j - 1].end)
    }

    /// Delete, duplicate or swap tokens of the text itself.
    fn token_edit(&mut self, text: &str, toks: &[Tok]) -> String {
        let solid: Vec<&Tok> = toks.iter().filter(|t| t.kind != TokKind::Space).collect();
        if solid.len() < 2 {
            return text.to_string();
        }
        let a = *solid[self.rng.below(solid.len())];
        let b = *solid[self.rng.below(solid.len())];
        let (a, b) = if a.start <= b.start { (a, b) } else { (b, a) };
        let (ta, tb) = (&text[a.start..a.end], &text[b.start..b.end]);
        match self.rng.below(3) {
            0 => format!("{}{}", &text[..a.start], &text[a.end..]),
            1 => format!("{}{ta}{}", &text[..b.end], &text[b.end..]),
            _ if a.end <= b.start => format!(
                "{}{tb}{}{ta}{}",
                &text[..a.start],
                &text[a.end..b.start],
                &text[b.end..]
            ),
            _ => text.to_string(),
        }
    }

    /// Duplicate, delete, swap or move a line, or a run of lines.
    fn line_edit(&mut self, text: &str) -> String {
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.is_empty() {
            return text.to_string();
        }
        let i = self.rng.below(lines.len());
        let j = self.rng.below(lines.len());
        match self.rng.below(5) {
            0 => {
                let l = lines[i];
                lines.insert(j, l);
            }
            1 => {
                let run = (1 + self.rng.below(4)).min(lines.len() - i);
                lines.drain(i..i + run);
            }
            2 => lines.swap(i, j),
            3 => {
                let l = lines.remove(i);
                lines.insert(j.min(lines.len()), l);
            }
            _ => {
                let run = (1 + self.rng.below(6)).min(lines.len() - i);
                let copy: Vec<&str> = lines[i..i + run].to_vec();
                for (k, l) in copy.into_iter().enumerate() {
                    lines.insert(j + k, l);
                }
            }
        }
        let mut out: String = lines.concat();
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        out
    }

    /// Replace one token of `kind` with another of its kind: an odd literal, another name of
    /// the text or a built-in, another operator, a printf format.
    fn replace_token(&mut self, text: &str, toks: &[Tok], kind: TokKind, gentle: bool) -> String {
        let of_kind: Vec<&Tok> = toks.iter().filter(|t| t.kind == kind).collect();
        if of_kind.is_empty() {
            return text.to_string();
        }
        let t = *of_kind[self.rng.below(of_kind.len())];
        let new: String = match kind {
            TokKind::Number if gentle && self.rng.chance(85) => {
                self.rng.pick(SMALL_LITERALS).into()
            }
            TokKind::Number => self.rng.pick(ODD_LITERALS).into(),
            TokKind::Word => {
                let words: Vec<&Tok> = toks.iter().filter(|t| t.kind == TokKind::Word).collect();
                if self.rng.chance(60) {
                    let w = words[self.rng.below(words.len())];
                    text[w.start..w.end].to_string()
                } else {
                    self.rng.pick(VOCABULARY).into()
                }
            }
            TokKind::Punct => self.rng.pick(OPERATORS).into(),
            TokKind::Str => self.rng.pick(STRINGS).into(),
            TokKind::Space => " ".into(),
        };
        format!("{}{new}{}", &text[..t.start], &text[t.end..])
    }

    fn insert_vocabulary(&mut self, text: &str, toks: &[Tok]) -> String {
        let (at, _) = self.token_range(toks, text.len(), false);
        let word = self.rng.pick(VOCABULARY);
        let sep = ["", " ", "\n"][self.rng.below(3)];
        format!("{}{sep}{word}{sep}{}", &text[..at], &text[at..])
    }

    /// Names of the text (to put in clauses), or a few common ones.
    fn some_name(&mut self, text: &str) -> String {
        let words: Vec<&str> = tokens(text)
            .iter()
            .filter(|t| t.kind == TokKind::Word)
            .map(|t| &text[t.start..t.end])
            .filter(|w| w.chars().next().is_some_and(|c| c.is_ascii_lowercase()))
            .collect();
        if words.is_empty() || self.rng.chance(10) {
            self.rng
                .pick(&["a", "x", "n", "s", "i", "err", "nosuch"])
                .into()
        } else {
            words[self.rng.below(words.len())].into()
        }
    }

    fn clause(&mut self, text: &str, gentle: bool) -> String {
        let pattern = self.rng.pick(CLAUSES);
        let mut out = String::new();
        let mut rest = pattern;
        while let Some(k) = rest.find('{') {
            out.push_str(&rest[..k]);
            let end = rest[k..].find('}').map_or(rest.len(), |e| k + e + 1);
            match &rest[k..end] {
                "{v}" => out.push_str(&self.some_name(text)),
                _ if gentle => out.push_str(self.rng.pick(&["1", "2", "4", "0", "n", "3"])),
                _ => out.push_str(self.rng.pick(ODD_LITERALS)),
            }
            rest = &rest[end..];
        }
        out.push_str(rest);
        out
    }

    /// A directive line with random clauses at the start of a random line.
    fn insert_directive(&mut self, text: &str, gentle: bool) -> String {
        let mut line = format!("acc {}", self.rng.pick(CONSTRUCTS));
        for _ in 0..self.rng.below(4) {
            line.push(' ');
            line += &self.clause(text, gentle);
        }
        let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
        let at = self.rng.below(lines.len() + 1);
        line.push('\n');
        lines.insert(at, &line);
        lines.concat()
    }

    /// One more clause on an existing directive line.
    fn add_clause(&mut self, text: &str, gentle: bool) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let directives: Vec<usize> = (0..lines.len())
            .filter(|&i| lines[i].trim_start().starts_with("acc "))
            .collect();
        if directives.is_empty() {
            return self.insert_directive(text, gentle);
        }
        let i = directives[self.rng.below(directives.len())];
        let clause = self.clause(text, gentle);
        let mut out = String::new();
        for (k, l) in lines.iter().enumerate() {
            if k == i {
                let body = l.trim_end_matches('\n');
                // Before a `{` that opens a data region's body, else at the end.
                match body.rfind('{') {
                    Some(b) if self.rng.chance(70) => {
                        out += &format!("{} {clause} {}\n", &body[..b], &body[b..])
                    }
                    _ => out += &format!("{body} {clause}\n"),
                }
            } else {
                out += l;
            }
        }
        out
    }

    /// Nesting around the limits (`MAX_NESTING` = 256 brackets): balanced or not.
    fn deep_nesting(&mut self, text: &str, toks: &[Tok]) -> String {
        // Mostly around the limit; far past it now and then (a big input costs as much as a
        // hundred small ones).
        let depth = if self.rng.chance(10) {
            self.rng.pick(&[2000, 20_000])
        } else {
            self.rng.pick(&[10, 100, 254, 255, 256, 257, 300])
        };
        let (open, close) = self
            .rng
            .pick(&[("(", ")"), ("[", "]"), ("{", "}"), ("{\n", "}\n")]);
        let (start, end) = self.token_range(toks, text.len(), true);
        if self.rng.chance(30) {
            return format!("{}{}{}", &text[..start], open.repeat(depth), &text[start..]);
        }
        match self.rng.below(4) {
            0 => format!(
                "{}{}{}{}{}",
                &text[..start],
                open.repeat(depth),
                &text[start..end],
                close.repeat(depth),
                &text[end..]
            ),
            1 => format!(
                "{text}\nlet deep_ = {}1{}\nprint(deep_)\n",
                "(".repeat(depth),
                ")".repeat(depth)
            ),
            2 => format!(
                "{text}\n{}let deep_ = 1\n{}",
                "if true {\n".repeat(depth),
                "}\n".repeat(depth)
            ),
            _ => format!(
                "{text}\nlet deep_ = {}1{}\n",
                "[".repeat(depth),
                "]".repeat(depth)
            ),
        }
    }

    /// Long else-if chains and operator chains, around `MAX_OPERATORS` (1000) and
    /// `MAX_CHAIN_DEPTH` (2048).
    fn long_chain(&mut self, text: &str) -> String {
        let n = if self.rng.chance(10) {
            self.rng.pick(&[2047, 2048, 2049, 5000])
        } else {
            self.rng.pick(&[10, 500, 999, 1000, 1001])
        };
        let chain = match self.rng.below(7) {
            0 => {
                let mut s = String::from("let c_ = 3\nlet v_ = if c_ == 0 { 0 }");
                for k in 1..n {
                    s += &format!(" else if c_ == {k} {{ {k} }}");
                }
                s + " else { -1 }\nprint(v_)\n"
            }
            1 => {
                let mut s = String::from("let c_ = 3\nif c_ == 0 { print(0) }");
                for k in 1..n {
                    s += &format!("\nelse if c_ == {k} {{ print({k}) }}");
                }
                s + "\n"
            }
            2 => format!("let v_ = 1{}\nprint(v_)\n", " + 1".repeat(n)),
            3 => format!("let v_ = {}1\nprint(v_)\n", "-".repeat(n)),
            4 => format!("let v_ = {}true\nprint(v_)\n", "!".repeat(n)),
            5 => format!("let v_ = 1.0{}\nprint(v_)\n", " as f64".repeat(n)),
            _ => format!(
                "let a_ = zeros(4)\nlet v_ = a_{}\n",
                "[0]".repeat(n.min(300))
            ),
        };
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let at = self.rng.below(lines.len() + 1);
        format!("{}{chain}{}", lines[..at].concat(), lines[at..].concat())
    }

    /// The first lines of this program and the last of another.
    fn crossover(&mut self, text: &str) -> String {
        let other = self.corpus_text();
        let a: Vec<&str> = text.split_inclusive('\n').collect();
        let b: Vec<&str> = other.split_inclusive('\n').collect();
        let i = self.rng.below(a.len() + 1);
        let j = self.rng.below(b.len() + 1);
        format!("{}{}", a[..i].concat(), b[j..].concat())
    }

    fn truncate(&mut self, text: &str) -> String {
        let at = Self::boundary(text, self.rng.below(text.len() + 1));
        text[..at].to_string()
    }

    fn odd_characters(&mut self, text: &str, toks: &[Tok]) -> String {
        let (at, _) = self.token_range(toks, text.len(), false);
        let odd = self.rng.pick(&[
            "\u{feff}",
            "\u{202e}",
            "\u{0}",
            "\r",
            "\r\n",
            "\u{b}",
            "\u{c}",
            "\u{85}",
            "\u{2028}",
            "𝔸",
            "é",
            "e\u{301}",
            "\u{fffd}",
            "\u{1f600}",
            "\t\t",
            "\u{a0}",
            "\u{3000}",
        ]);
        format!("{}{odd}{}", &text[..at], &text[at..])
    }

    /// Statements moved into a function or block, changing globals into locals (and device
    /// code's view of them).
    fn wrap_lines(&mut self, text: &str) -> String {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if lines.is_empty() {
            return text.to_string();
        }
        let i = self.rng.below(lines.len());
        let j = (i + 1 + self.rng.below(10)).min(lines.len());
        let (open, close) = self.rng.pick(&[
            ("fn wrapped_() {\n", "}\nwrapped_()\n"),
            ("{\n", "}\n"),
            ("if true {\n", "}\n"),
            ("for w_ in 0..2 {\n", "}\n"),
            ("acc data copy(a) {\n", "}\n"),
            ("acc serial {\n", "}\n"),
        ]);
        format!(
            "{}{open}{}{close}{}",
            lines[..i].concat(),
            lines[i..j].concat(),
            lines[j..].concat()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mutation keeps the text valid UTF-8 and never panics, whatever the text.
    #[test]
    fn mutations_never_panic() {
        let corpus = Corpus {
            files: vec![
                ("a".into(), "let x = 1\nprint(x)\n".into()),
                ("b".into(), "é∑ \"open\n((".into()),
                ("c".into(), String::new()),
            ],
        };
        let mut m = Mutator::new(7, &corpus);
        for text in [
            "",
            "x",
            "é",
            "let a = \"s\" // c\n",
            "\u{feff}acc parallel {\n}",
        ] {
            for _ in 0..300 {
                let gentle = m.rng.chance(50);
                let out = m.mutate(text, gentle);
                // Slicing the result exercises the char-boundary handling.
                let _ = tokens(&out);
            }
        }
    }

    #[test]
    fn tokens_cover_the_text() {
        let text = "let x = 1.5e3 + a_b[\"s\\\"t\"] // é\n";
        let toks = tokens(text);
        assert_eq!(toks.first().unwrap().start, 0);
        assert_eq!(toks.last().unwrap().end, text.len());
        for w in toks.windows(2) {
            assert_eq!(w[0].end, w[1].start);
        }
        assert!(toks.iter().any(|t| &text[t.start..t.end] == "1.5e3"));
        assert!(toks.iter().any(|t| &text[t.start..t.end] == "\"s\\\"t\""));
    }
}
