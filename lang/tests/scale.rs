//! The front end stays linear in the program's length, valid or full of errors (issue 14: a
//! million-line program is checked in seconds; docs/ARCHITECTURE.md, "Front-end scale").
//! Timing ratios with generous bounds, so that a loaded machine does not fail them: eight
//! times the program may take at most 24 times as long (a quadratic pass takes 64). Unknown
//! names are timed apart: their "did you mean" hints cost up to a fixed budget per compile, a
//! constant that would dominate the small program's time (`errors_are_all_reported_…`).

use acc_lang::{check_source, SourceFile};
use std::time::{Duration, Instant};

/// What `program` puts in each unit besides its global, function and loop.
#[derive(Clone, Copy, PartialEq)]
enum Mistakes {
    /// None: a call of the unit's function.
    None,
    /// Two type errors (a `bool` where an `i64` goes, a call with one argument too many).
    Types,
    /// An unknown name close to a real one, which asks for a "did you mean" hint over every
    /// name in scope (within the compile's hint budget), and a type error.
    UnknownNames,
}

/// `units` units of globals, functions and loops, with `mistakes`.
fn program(units: usize, mistakes: Mistakes) -> String {
    let mut s = String::new();
    for k in 0..units {
        s.push_str(&format!(
            "let g{k}: i64 = {k}\n\
             fn f{k}(a: i64) -> i64 {{\n    let t = a\n    for i in 0..a {{\n        t += i * g{k}\n    }}\n    return t\n}}\n"
        ));
        match mistakes {
            Mistakes::None => s.push_str(&format!("print(f{k}(3))\n")),
            Mistakes::Types => s.push_str(&format!("let h{k}: i64 = true\nprint(f{k}(1, 2))\n")),
            Mistakes::UnknownNames => {
                s.push_str(&format!("let h{k} = g{k}x + 1\nlet e{k}: i32 = true\n"))
            }
        }
    }
    s
}

/// The fastest of three checks of `text` (the others pay for what else the machine does).
fn check_time(text: &str, valid: bool) -> Duration {
    let source = SourceFile::new("scale.acc", text);
    (0..3)
        .map(|_| {
            let start = Instant::now();
            let result = check_source(&source);
            let took = start.elapsed();
            assert_eq!(result.is_ok(), valid);
            took
        })
        .min()
        .unwrap()
}

fn assert_linear(mistakes: Mistakes) {
    let valid = mistakes == Mistakes::None;
    // The timing tests take turns: run side by side, each would time the other.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let small = program(250, mistakes);
    let large = program(2000, mistakes);
    let (t1, t8) =
        acc_lang::with_deep_stack(|| (check_time(&small, valid), check_time(&large, valid)));
    assert!(
        t8 < t1 * 24,
        "8x the program took {:.1}x as long ({t1:?} -> {t8:?})",
        t8.as_secs_f64() / t1.as_secs_f64()
    );
}

#[test]
fn checking_a_valid_program_is_linear_in_its_length() {
    assert_linear(Mistakes::None);
}

#[test]
fn checking_a_program_with_an_error_on_every_fourth_line_is_linear_in_its_length() {
    assert_linear(Mistakes::Types);
}

/// Every mistake is reported, and hints are given while they are cheap: the first unknown
/// names get one, and the budget stops them before they cost time quadratic in the program.
#[test]
fn errors_are_all_reported_with_hints_for_the_first() {
    let text = program(2000, Mistakes::UnknownNames);
    let source = SourceFile::new("scale.acc", text.as_str());
    let diags = acc_lang::with_deep_stack(|| check_source(&source).unwrap_err());
    let unknown: Vec<_> = diags
        .iter()
        .filter(|d| d.message.starts_with("unknown variable"))
        .collect();
    assert_eq!(unknown.len(), 2000);
    assert_eq!(
        unknown[0].help.as_deref(),
        Some("did you mean `g0`?"),
        "{:?}",
        unknown[0]
    );
    let hinted = unknown.iter().filter(|d| d.help.is_some()).count();
    // The k-th hint compares about 2k names (globals g and h so far, and the built-in
    // constants): 2,000,000 comparisons cover about the first 1,400.
    assert!((1000..2000).contains(&hinted), "{hinted} hints");
}
