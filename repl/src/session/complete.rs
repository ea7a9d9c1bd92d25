//! Tab completion: what may stand at the cursor, from the front end's own tables (keywords,
//! directive and clause names, built-ins, types) and the session's names (`Names`).
//!
//! - at the start of an input: the `:` commands; after `:load` and `:save`, file names; after
//!   a command that takes code, what code completes to;
//! - on a directive line (`acc …`): the construct names, then the clauses the construct being
//!   typed takes (`validate::clause_names`, the table the validator enforces), and inside a
//!   clause's parentheses the variables;
//! - elsewhere: variables (globals, and those this input declares), functions, built-ins,
//!   constants, keywords and type names;
//! - nothing inside a string or a comment.

use acc::lang::ast::{Construct, ScalarType};
use acc::lang::builtins::{Builtin, BuiltinConst};
use acc::lang::token::{Keyword, Token};
use acc::lang::validate::clause_names;

use super::commands::{Command, COMMANDS};
use super::reply;
use super::Names;

/// What a candidate is, for a list that shows it (a notebook's completion types).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Command,
    File,
    Keyword,
    Directive,
    Clause,
    Type,
    Builtin,
    Constant,
    Function,
    Global,
    /// A variable the input itself declares (`let`, `for`, `fn`).
    Local,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// What replaces the text from `Completion::start` to the cursor.
    pub text: String,
    pub kind: Kind,
    /// A signature, a type, a command's help: one line.
    pub detail: String,
}

/// Candidates for the text from `start` to the cursor, sorted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Completion {
    pub start: usize,
    pub candidates: Vec<Candidate>,
}

/// What may replace the word before byte offset `cursor` of `text` (an input, all its lines).
pub fn complete(names: &Names, text: &str, cursor: usize) -> Completion {
    let mut cursor = cursor.min(text.len());
    while !text.is_char_boundary(cursor) {
        cursor -= 1;
    }
    let before = &text[..cursor];
    let Some(command) = Command::parse(text) else {
        return code(names, text, cursor);
    };
    let lead = before.len() - before.trim_start().len();
    let typed = &before[lead..];
    if !typed.contains(char::is_whitespace) {
        let candidates = COMMANDS
            .iter()
            .filter(|c| c.name.starts_with(typed))
            .map(|c| candidate(c.name, Kind::Command, c.help.to_string()))
            .collect();
        return Completion {
            start: lead,
            candidates,
        };
    }
    let Some(spec) = command.spec() else {
        return Completion::default();
    };
    // Where the argument starts: after the name and the blanks that follow it.
    let after_name = lead + command.name.len();
    let arg_start = after_name + (text[after_name..].len() - text[after_name..].trim_start().len());
    if cursor < arg_start {
        return Completion::default();
    }
    if spec.takes_file() {
        return files(&text[arg_start..cursor], arg_start);
    }
    if spec.takes_code() {
        let mut c = code(names, &text[arg_start..], cursor - arg_start);
        c.start += arg_start;
        return c;
    }
    let words: &[&str] = match spec.name {
        ":profile" => &["on", "off"],
        ":device" => &["host", "multicore", "emulated", "nvidia"],
        _ => &[],
    };
    let typed = &text[arg_start..cursor];
    Completion {
        start: arg_start,
        candidates: words
            .iter()
            .filter(|w| w.starts_with(typed))
            .map(|w| candidate(w, Kind::Keyword, String::new()))
            .collect(),
    }
}

/// Completion in acc code.
fn code(names: &Names, text: &str, cursor: usize) -> Completion {
    let before = &text[..cursor];
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    if in_string_or_comment(line) {
        return Completion::default();
    }
    let word_len = line.len()
        - line
            .trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_')
            .len();
    let prefix = &line[line.len() - word_len..];
    if prefix.starts_with(|c: char| c.is_ascii_digit()) {
        return Completion::default(); // a number
    }
    let head = &line[..line.len() - word_len];
    let mut found = Vec::new();
    match directive_words(head) {
        Some(Directive::Words(words)) => directive(&words, &mut found),
        Some(Directive::InParens) => variables(names, text, &mut found),
        None => {
            variables(names, text, &mut found);
            everything_else(names, &mut found);
        }
    }
    Completion {
        start: cursor - word_len,
        candidates: finish(found, prefix),
    }
}

/// Where the cursor is on a directive line.
enum Directive<'a> {
    /// After these construct and clause words (their parentheses left out).
    Words(Vec<&'a str>),
    /// Inside a clause's parentheses.
    InParens,
}

/// `head`: the line before the word being typed. `None` when it is no directive line.
fn directive_words(head: &str) -> Option<Directive<'_>> {
    let rest = head.trim_start().strip_prefix("acc")?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let mut words = Vec::new();
    let mut depth = 0usize;
    let mut word_start = None;
    for (i, c) in rest.char_indices() {
        let in_word = c.is_ascii_alphanumeric() || c == '_';
        if depth == 0 && in_word {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(s) = word_start.take() {
            words.push(&rest[s..i]);
        }
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    if let Some(s) = word_start {
        words.push(&rest[s..]);
    }
    Some(if depth > 0 {
        Directive::InParens
    } else {
        Directive::Words(words)
    })
}

/// After `acc` and `words`: the words that continue a construct's name, and the clauses of
/// the construct named.
fn directive(words: &[&str], found: &mut Vec<Candidate>) {
    let name_words = |c: &Construct| c.name().split(' ').collect::<Vec<_>>();
    for c in &Construct::ALL {
        let name = name_words(c);
        if name.len() > words.len() && name[..words.len()] == *words {
            let next = name[words.len()];
            found.push(candidate(
                next,
                Kind::Directive,
                format!("acc {}", c.name()),
            ));
        }
    }
    let named = Construct::ALL
        .iter()
        .filter(|c| {
            let name = name_words(c);
            words.len() >= name.len() && words[..name.len()] == name[..]
        })
        .max_by_key(|c| name_words(c).len());
    if let Some(&c) = named {
        for clause in clause_names(c) {
            found.push(candidate(
                clause,
                Kind::Clause,
                format!("clause of acc {}", c.name()),
            ));
        }
    }
}

/// The globals and the variables this input declares.
fn variables(names: &Names, text: &str, found: &mut Vec<Candidate>) {
    let lexed = acc::lang::lexer::lex(text);
    let mut previous = None;
    for (token, _) in &lexed.tokens {
        if let (Some(Token::Kw(Keyword::Let | Keyword::For | Keyword::Fn)), Token::Ident(name)) =
            (previous, token)
        {
            found.push(candidate(
                name,
                Kind::Local,
                "declared in this input".into(),
            ));
        }
        previous = Some(token.clone());
    }
    for g in &names.globals {
        let detail = match &g.shape {
            Some(extents) => format!("{}  shape {}", g.ty, reply::shape(extents)),
            None => g.ty.clone(),
        };
        found.push(candidate(&g.name, Kind::Global, detail));
    }
}

/// Functions, built-ins, constants, keywords and types.
fn everything_else(names: &Names, found: &mut Vec<Candidate>) {
    for f in &names.functions {
        found.push(candidate(&f.name, Kind::Function, f.signature.clone()));
    }
    for b in Builtin::ALL {
        if b.name()
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            found.push(candidate(
                b.name(),
                Kind::Builtin,
                b.signature().to_string(),
            ));
        }
    }
    for c in BuiltinConst::ALL {
        found.push(candidate(
            c.name(),
            Kind::Constant,
            format!("i32 = {}", c.value()),
        ));
    }
    for k in Keyword::ALL {
        found.push(candidate(k.as_str(), Kind::Keyword, "keyword".into()));
    }
    for t in ScalarType::ALL {
        found.push(candidate(t.name(), Kind::Type, "type".into()));
    }
}

/// Those starting with `prefix`, the first of each text kept (a variable before a built-in
/// of its name: user names shadow built-ins), sorted.
fn finish(found: Vec<Candidate>, prefix: &str) -> Vec<Candidate> {
    let mut seen = std::collections::HashSet::new();
    let mut out: Vec<Candidate> = found
        .into_iter()
        .filter(|c| c.text.starts_with(prefix) && seen.insert(c.text.clone()))
        .collect();
    out.sort_by(|a, b| a.text.cmp(&b.text));
    out
}

/// File and folder names for `partial`, a path being typed that starts at byte `start` of
/// the input; a folder's name ends in `/`.
fn files(partial: &str, start: usize) -> Completion {
    let (dir, name) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let listing = std::fs::read_dir(if dir.is_empty() { "." } else { dir });
    let mut candidates: Vec<Candidate> = listing
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let file = entry.file_name().into_string().ok()?;
            if !file.starts_with(name) || (file.starts_with('.') && !name.starts_with('.')) {
                return None;
            }
            let folder = entry.file_type().is_ok_and(|t| t.is_dir());
            let (suffix, kind) = if folder {
                ("/", "folder")
            } else {
                ("", "file")
            };
            Some(candidate(
                &format!("{dir}{file}{suffix}"),
                Kind::File,
                kind.into(),
            ))
        })
        .collect();
    candidates.sort_by(|a, b| a.text.cmp(&b.text));
    Completion { start, candidates }
}

/// Whether the end of `line` is inside a string literal or a `//` comment.
fn in_string_or_comment(line: &str) -> bool {
    let mut in_string = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if in_string => {
                chars.next();
            }
            '"' => in_string = !in_string,
            '/' if !in_string && chars.peek() == Some(&'/') => return true,
            _ => {}
        }
    }
    in_string
}

fn candidate(text: &str, kind: Kind, detail: String) -> Candidate {
    Candidate {
        text: text.to_string(),
        kind,
        detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        Names {
            globals: vec![
                acc::GlobalInfo {
                    name: "alpha".into(),
                    ty: "f64[,]".into(),
                    shape: Some(vec![3, 4]),
                    present_on: Vec::new(),
                },
                acc::GlobalInfo {
                    name: "count".into(),
                    ty: "i64".into(),
                    shape: None,
                    present_on: Vec::new(),
                },
            ],
            functions: vec![acc::FunctionInfo {
                name: "axpy".into(),
                signature: "fn axpy(a: f64, x: f64[], y: f64[])".into(),
            }],
        }
    }

    /// The candidates' texts for `text` with the cursor at its end (or at `|`).
    fn texts(text: &str) -> (usize, Vec<String>) {
        let cursor = text.find('|').unwrap_or(text.len());
        let text = text.replace('|', "");
        let c = complete(&names(), &text, cursor);
        (c.start, c.candidates.into_iter().map(|c| c.text).collect())
    }

    #[test]
    fn commands_at_the_start() {
        assert_eq!(
            texts(":"),
            (0, COMMANDS.iter().map(|c| c.name.to_string()).collect())
        );
        assert_eq!(texts(":de"), (0, vec![":devices".into(), ":device".into()]));
        assert_eq!(texts("  :q"), (2, vec![":quit".into()]));
        assert_eq!(texts(":profile o").1, ["on", "off"]);
        assert_eq!(texts(":device em"), (8, vec!["emulated".into()]));
    }

    #[test]
    fn code_after_a_command_that_takes_code() {
        let (start, words) = texts(":type al");
        assert_eq!((start, words), (6, vec!["alpha".to_string()]));
        assert_eq!(texts(":time acc parallel l"), (19, vec!["loop".into()]));
    }

    #[test]
    fn globals_functions_builtins_keywords_types() {
        let all = texts("a").1;
        for name in [
            "alpha",
            "axpy",
            "abs",
            "acc",
            "acc_device_host",
            "acc_get_device_type",
        ] {
            assert!(all.contains(&name.to_string()), "{name} in {all:?}");
        }
        assert!(!all.contains(&"count".to_string()));
        assert_eq!(
            texts("let y = co").1,
            ["continue", "copy", "copysign", "cos", "cosh", "count"]
        );
        assert_eq!(texts("zeros(f3").1, ["f32"]);
        assert_eq!(texts("wh").1, ["while"]);
        // The word starts after the operator.
        assert_eq!(texts("1 + cou"), (4, vec!["count".into()]));
    }

    #[test]
    fn variables_this_input_declares() {
        assert_eq!(texts("let total = 0\nfor idx in 0..3 { tot").1, ["total"]);
        assert_eq!(texts("for idx in 0..3 { print(id").1, ["idx"]);
        assert_eq!(
            texts("fn scale(v: f64) -> f64 { return v }\nsca").1,
            ["scale"]
        );
    }

    #[test]
    fn directive_names_after_acc() {
        let first = texts("acc ").1;
        let want = [
            "atomic", "data", "declare", "enter", "exit", "kernels", "loop", "parallel", "routine",
            "serial", "set", "update", "wait",
        ];
        assert_eq!(first, want);
        assert_eq!(texts("acc en").1, ["enter"]);
        assert_eq!(texts("acc enter ").1, ["data"]);
        assert_eq!(
            texts("acc atomic ").1,
            ["capture", "read", "update", "write"]
        );
        assert_eq!(texts("  acc pa"), (6, vec!["parallel".into()]));
    }

    #[test]
    fn clauses_valid_for_the_construct_being_typed() {
        let parallel_loop = texts("acc parallel loop ").1;
        for c in [
            "gang",
            "vector",
            "collapse",
            "reduction",
            "copyin",
            "num_gangs",
            "async",
        ] {
            assert!(
                parallel_loop.contains(&c.to_string()),
                "{c} in {parallel_loop:?}"
            );
        }
        assert!(!parallel_loop.contains(&"finalize".to_string()));
        // `acc parallel` takes its clauses, and `loop` continues its name.
        let parallel = texts("acc parallel ").1;
        assert!(
            parallel.contains(&"loop".to_string()) && parallel.contains(&"num_gangs".to_string())
        );
        assert!(
            !parallel.contains(&"gang".to_string()),
            "gang is a loop clause"
        );
        // After other clauses, with their arguments left out.
        assert_eq!(texts("acc parallel loop copy(a, b) red").1, ["reduction"]);
        assert_eq!(texts("acc enter data copyin(a) c").1, ["copyin", "create"]);
        assert_eq!(texts("acc exit data fin").1, ["finalize"]);
        assert_eq!(texts("acc update s").1, ["self"]);
        // Inside a clause's parentheses: the variables.
        assert_eq!(texts("acc parallel loop copy(al").1, ["alpha"]);
        assert_eq!(texts("acc data copy(alpha, c").1, ["count"]);
    }

    #[test]
    fn nothing_in_strings_comments_or_numbers() {
        assert!(texts("print(\"al").1.is_empty());
        assert!(texts("let x = 1 // al").1.is_empty());
        assert!(texts("let x = 12").1.is_empty());
        // A closed string is behind the cursor.
        assert_eq!(texts("printf(\"%d\", cou").1, ["count"]);
    }

    #[test]
    fn the_cursor_may_stand_inside_the_text() {
        let (start, words) = texts("print(al|pha)");
        assert_eq!((start, words), (6, vec!["alpha".to_string()]));
    }

    #[test]
    fn file_names_after_load_and_save() {
        let dir = std::env::temp_dir().join(format!("acc-complete-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("jacobi.acc"), "").unwrap();
        std::fs::write(dir.join("jacobi.out"), "").unwrap();
        std::fs::write(dir.join(".hidden"), "").unwrap();
        let path = format!("{}/", dir.display());
        let (start, words) = texts(&format!(":load {path}j"));
        assert_eq!(start, 6);
        assert_eq!(
            words,
            [format!("{path}jacobi.acc"), format!("{path}jacobi.out")]
        );
        let (_, words) = texts(&format!(":save {path}"));
        assert_eq!(
            words,
            [
                format!("{path}jacobi.acc"),
                format!("{path}jacobi.out"),
                format!("{path}sub/")
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn candidates_carry_what_they_are() {
        let c = complete(&names(), "axp", 3);
        assert_eq!(c.candidates[0].kind, Kind::Function);
        assert_eq!(
            c.candidates[0].detail,
            "fn axpy(a: f64, x: f64[], y: f64[])"
        );
        let c = complete(&names(), "alp", 3);
        assert_eq!(c.candidates[0].detail, "f64[,]  shape [3, 4]");
        let c = complete(&names(), "sqr", 3);
        assert_eq!(
            (c.candidates[0].kind, c.candidates[0].detail.as_str()),
            (Kind::Builtin, "sqrt(x: F) -> F")
        );
    }
}
