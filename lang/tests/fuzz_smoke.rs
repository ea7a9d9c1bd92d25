//! Fuzzing smoke test of the front end: whatever the input, `check_source` returns (never
//! panics, never overflows the stack), every diagnostic points inside the source, and rendering
//! the diagnostics never panics either.
//!
//! Inputs: random strings, soups of acc's own tokens (which get much deeper into the parser than
//! random text), mutations of the example programs (which get into the checker and the
//! analysis), and pathologically deep nesting.

use acc_lang::diag::{render_plain, Diagnostic};
use acc_lang::SourceFile;
use proptest::prelude::*;

/// Run the whole front end on `text` and check the shape of what comes back.
fn front_end_survives(text: &str) {
    let source = SourceFile::new("fuzz.acc", text);
    let diags = match acc_lang::check_source(&source) {
        Ok(compiled) => compiled.warnings,
        Err(diags) => {
            assert!(
                diags.iter().any(Diagnostic::is_error),
                "check_source failed without an error diagnostic on {text:?}: {diags:?}"
            );
            diags
        }
    };
    for diag in &diags {
        assert!(
            !diag.message.is_empty(),
            "empty diagnostic message: {diag:?}"
        );
        assert!(
            !diag.labels.is_empty(),
            "diagnostic without a location: {diag:?}"
        );
        for label in &diag.labels {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(
                start <= end && end <= text.len(),
                "span {start}..{end} outside the source ({} bytes) in {diag:?}\nsource: {text:?}",
                text.len()
            );
            assert!(
                text.is_char_boundary(start) && text.is_char_boundary(end),
                "span {start}..{end} splits a character in {diag:?}\nsource: {text:?}"
            );
        }
    }
    // Rendering is per diagnostic; the first few are enough to find a panic, and rendering
    // thousands (one per unclosed bracket of a 10,000-deep nest) would take the test's time.
    let _ = render_plain(&diags[..diags.len().min(RENDERED)], &source);
}

/// How many diagnostics of one input are rendered.
const RENDERED: usize = 20;

// ---------------------------------------------------------------------------------------------
// Token soups
// ---------------------------------------------------------------------------------------------

use acc_lang::vocabulary::VOCABULARY;

/// A soup of vocabulary words, each followed by a separator (none, a space or a newline), so
/// that tokens also run into each other (`..=` next to `1`, `/` next to `*`).
fn token_soup() -> impl Strategy<Value = String> {
    let piece = (
        prop::sample::select(VOCABULARY),
        prop::sample::select(&["", " ", " ", " ", "\n"][..]),
    );
    prop::collection::vec(piece, 0..300).prop_map(|pieces| {
        let mut text = String::new();
        for (word, sep) in pieces {
            text.push_str(word);
            text.push_str(sep);
        }
        text
    })
}

/// A token soup shaped like a directive line, to reach clause parsing and validation.
fn directive_soup() -> impl Strategy<Value = String> {
    (
        prop::sample::select(
            &[
                "parallel loop",
                "kernels",
                "serial",
                "loop",
                "data",
                "update",
                "enter data",
                "atomic",
                "wait",
                "routine",
            ][..],
        ),
        token_soup(),
        prop::sample::select(
            &[
                "for i in 0..n { x[i] = 1.0 }",
                "{ s += 1 }",
                "",
                "fn f() {}",
            ][..],
        ),
    )
        .prop_map(|(construct, clauses, body)| {
            format!(
                "let n = 10\nlet x = zeros(n)\nlet s = 0\nacc {construct} {}\n{body}\n",
                clauses.replace('\n', " ")
            )
        })
}

// ---------------------------------------------------------------------------------------------
// Mutations of real programs
// ---------------------------------------------------------------------------------------------

const EXAMPLES: &[(&str, &str)] = &[
    ("saxpy.acc", include_str!("../../examples/saxpy.acc")),
    ("dot.acc", include_str!("../../examples/dot.acc")),
    ("jacobi.acc", include_str!("../../examples/jacobi.acc")),
    ("life.acc", include_str!("../../examples/life.acc")),
    ("spmv.acc", include_str!("../../examples/spmv.acc")),
    (
        "mandelbrot.acc",
        include_str!("../../examples/mandelbrot.acc"),
    ),
    (
        "histogram.acc",
        include_str!("../../examples/histogram.acc"),
    ),
    ("routine.acc", include_str!("../../examples/routine.acc")),
];

/// One edit of a program. Positions and lengths are fractions of the current text (in 1/10000),
/// so the same edit applies to texts of any length.
#[derive(Clone, Debug)]
enum Edit {
    Delete { at: u32, len: u32 },
    Duplicate { at: u32, len: u32, to: u32 },
    Swap { a: u32, b: u32, len: u32 },
    Insert { at: u32, word: &'static str },
}

fn edit() -> impl Strategy<Value = Edit> {
    let pos = 0..10_000u32;
    let len = 0..300u32;
    prop_oneof![
        (pos.clone(), len.clone()).prop_map(|(at, len)| Edit::Delete { at, len }),
        (pos.clone(), len.clone(), pos.clone()).prop_map(|(at, len, to)| Edit::Duplicate {
            at,
            len,
            to
        }),
        (pos.clone(), pos.clone(), len).prop_map(|(a, b, len)| Edit::Swap { a, b, len }),
        (pos, prop::sample::select(VOCABULARY)).prop_map(|(at, word)| Edit::Insert { at, word }),
    ]
}

/// The byte offset `fraction`/10000 of the way through `text`, moved back to a char boundary.
fn offset(text: &str, fraction: u32) -> usize {
    let mut at = text.len() * fraction as usize / 10_000;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `start..start+len` clamped to the text and to char boundaries.
fn range(text: &str, start: u32, len: u32) -> (usize, usize) {
    let start = offset(text, start);
    let mut end = (start + len as usize).min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (start, end)
}

fn apply(text: &mut String, edit: &Edit) {
    match *edit {
        Edit::Delete { at, len } => {
            let (start, end) = range(text, at, len);
            text.replace_range(start..end, "");
        }
        Edit::Duplicate { at, len, to } => {
            let (start, end) = range(text, at, len);
            let piece = text[start..end].to_string();
            let to = offset(text, to);
            text.insert_str(to, &piece);
        }
        Edit::Swap { a, b, len } => {
            let (a, b) = (a.min(b), a.max(b));
            let (a_start, a_end) = range(text, a, len);
            let (b_start, b_end) = range(text, b, len);
            if a_end <= b_start {
                let first = text[a_start..a_end].to_string();
                let second = text[b_start..b_end].to_string();
                text.replace_range(b_start..b_end, &first);
                text.replace_range(a_start..a_end, &second);
            }
        }
        Edit::Insert { at, word } => {
            let at = offset(text, at);
            text.insert_str(at, &format!(" {word} "));
        }
    }
}

fn mutated_example() -> impl Strategy<Value = String> {
    (
        prop::sample::select(EXAMPLES),
        prop::collection::vec(edit(), 1..6),
    )
        .prop_map(|((_, example), edits)| {
            let mut text = example.to_string();
            for e in &edits {
                apply(&mut text, e);
            }
            text
        })
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_text(text in any::<String>()) {
        front_end_survives(&text);
    }

    #[test]
    fn random_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        front_end_survives(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn token_soups(text in token_soup()) {
        front_end_survives(&text);
    }

    #[test]
    fn directive_soups(text in directive_soup()) {
        front_end_survives(&text);
    }

    #[test]
    fn mutated_examples(text in mutated_example()) {
        front_end_survives(&text);
    }
}

/// The unmutated examples are valid programs: the mutations above start from correct code.
#[test]
fn examples_check_cleanly() {
    for &(name, text) in EXAMPLES {
        let source = SourceFile::new(format!("examples/{name}"), text);
        if let Err(diags) = acc_lang::check_source(&source) {
            panic!("{}", render_plain(&diags, &source));
        }
    }
}

#[test]
fn empty_and_blank_sources() {
    for text in [
        "", "\n", "   ", "\n\n\t\n", ";", ";;;", "\\", "\\\n", "//", "/*",
    ] {
        front_end_survives(text);
    }
}

// ---------------------------------------------------------------------------------------------
// Deep nesting: must be reported or accepted, never overflow the stack. Runs on the test
// harness's own thread (2 MiB of stack), stricter than the `acc` binary's main thread.
// ---------------------------------------------------------------------------------------------

const DEPTH: usize = 10_000;

#[test]
fn deep_unclosed_parens() {
    front_end_survives(&"(".repeat(DEPTH));
    front_end_survives(&format!("let x = {}", "(".repeat(DEPTH)));
}

#[test]
fn deep_unclosed_brackets_and_braces() {
    front_end_survives(&format!("let x = a{}", "[".repeat(DEPTH)));
    front_end_survives(&"{".repeat(DEPTH));
    front_end_survives(&"if true {\n".repeat(DEPTH));
}

#[test]
fn deep_balanced_expression() {
    let text = format!(
        "let x = {}1{}\nprint(x)\n",
        "(".repeat(DEPTH),
        ")".repeat(DEPTH)
    );
    front_end_survives(&text);
}

#[test]
fn deep_balanced_blocks() {
    let text = format!("{}let x = 1\n{}", "{\n".repeat(DEPTH), "}\n".repeat(DEPTH));
    front_end_survives(&text);
}

/// A diagnostic far along a very long line (generated code, minified data). Column numbers above
/// 65535 once made miette's renderer panic ("Formatting argument out of range").
#[test]
fn diagnostic_on_a_very_long_line() {
    for columns in [60_000, 70_000, 200_000] {
        front_end_survives(&format!("let x = {} $", "1 + ".repeat(columns / 4)));
        front_end_survives(&format!("{}@", " ".repeat(columns)));
    }
}

#[test]
fn long_operator_chains() {
    front_end_survives(&format!("let x = {}1", "-".repeat(DEPTH)));
    front_end_survives(&format!("let x = {}true", "!".repeat(DEPTH)));
    front_end_survives(&format!("let x = 1{}", " + 1".repeat(DEPTH)));
    front_end_survives(&format!("let x = 1.0{}", " as f64".repeat(DEPTH)));
}

/// The deepest programs the lexer's limits allow compile on a small (2 MiB) thread stack, as
/// an embedder's thread might have: the passes run on a thread of their own.
#[test]
fn deepest_allowed_programs_compile_on_a_small_stack() {
    let ops = format!(
        "let x = 1{}\nprint(x)\n",
        " + 1".repeat(acc_lang::lexer::MAX_OPERATORS - 1)
    );
    let mut nested = String::from("let c = true\nlet v = ");
    for _ in 0..120 {
        nested += "if c { ";
    }
    nested += "1";
    for _ in 0..120 {
        nested += " } else { 0 }";
    }
    nested += "\nprint(v)\n";
    for text in [ops, nested] {
        let t = text.clone();
        let result = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || acc_lang::check_source(&SourceFile::new("deep.acc", t)).is_ok())
            .expect("thread")
            .join()
            .expect("no stack overflow");
        assert!(result, "{}", &text[..60]);
    }
}

/// The lexer's brace hints take time linear in the text (found by fuzzing: 20,000 unopened `}`
/// took 25 s in a release build, each rescanning the lines before it; every `}` of a long line
/// rescanned the line for its indentation). Quadratic versions take minutes here.
#[test]
fn brace_hints_take_linear_time() {
    let unopened = format!("while true\n    print(1)\n{}", "}\n".repeat(40_000));
    let one_line = format!("let x = 1 {}", "{ }".repeat(200_000));
    let indented = format!("{}{}", " ".repeat(100_000), "{}".repeat(100_000));
    for text in [unopened, one_line, indented] {
        let start = std::time::Instant::now();
        let lexed = acc_lang::lexer::lex(&text);
        assert!(!lexed.diags.is_empty() || lexed.parseable);
        let took = start.elapsed();
        assert!(took.as_secs() < 5, "lexing took {took:?}");
    }
}

/// Brackets opened on the line of an unterminated string are dropped with it, so the parser
/// never sees them unbalanced (found by fuzzing: its recovery took time exponential in their
/// depth, and 255 `[` never finished).
#[test]
fn brackets_before_an_unterminated_string() {
    for depth in [1, 20, 255] {
        let text = format!("let y = x as i64{}\"open\nprint(1)\n", "[".repeat(depth));
        let start = std::time::Instant::now();
        front_end_survives(&text);
        let took = start.elapsed();
        assert!(took.as_secs() < 5, "depth {depth}: {took:?}");
        let diags = acc_lang::check_source(&SourceFile::new("s.acc", text)).unwrap_err();
        assert_eq!(diags[0].message, "unterminated string", "{diags:?}");
    }
}
