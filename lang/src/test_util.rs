//! Helpers shared by the source-text tests of several passes.

use crate::diag::Diagnostic;

/// Asserts that `ds` holds exactly one error, whose message contains `message`, whose primary
/// span covers exactly `at` in `src`, and which has a help line; returns it for further checks.
#[track_caller]
pub(crate) fn single_error(ds: &[Diagnostic], src: &str, message: &str, at: &str) -> Diagnostic {
    let errors: Vec<&Diagnostic> = ds.iter().filter(|d| d.is_error()).collect();
    assert_eq!(
        errors.len(),
        1,
        "expected one error containing {message:?}, got {:#?}\n{src}",
        errors.iter().map(|d| &d.message).collect::<Vec<_>>()
    );
    let d = errors[0].clone();
    assert!(
        d.message.contains(message),
        "message {:?} lacks {message:?}",
        d.message
    );
    let text = src.get(d.span().range()).unwrap_or("<bad span>");
    assert_eq!(text, at, "primary span of {:?}", d.message);
    assert!(d.help.is_some(), "no help on {:?}", d.message);
    d
}
