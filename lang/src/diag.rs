//! Diagnostics: what every pass reports, and how it is rendered (file:line:col, the source line,
//! labels, help) through miette.

use crate::span::{SourceFile, Span};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A labelled span; the first label of a diagnostic is its primary location.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error at `span`, labelled `label`.
    pub fn error(message: impl Into<String>, span: Span, label: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            labels: vec![Label {
                span,
                message: label.into(),
            }],
            help: None,
        }
    }

    /// An error with no place in the source to show (a run-time error whose site is not
    /// known): no label, so that nothing points at a place that did not fail.
    pub fn unlocated(message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            labels: Vec::new(),
            ..Diagnostic::error(message, Span::default(), "")
        }
    }

    pub fn warning(message: impl Into<String>, span: Span, label: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(message, span, label)
        }
    }

    /// A second location that explains the first (where a thing was declared, opened, …).
    pub fn with_label(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: label.into(),
        });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The primary location.
    pub fn span(&self) -> Span {
        self.labels.first().map_or(Span::default(), |l| l.span)
    }

    /// Attach the source, making a value miette can render.
    pub fn with_source<'a>(&'a self, source: &'a SourceFile) -> SourceDiagnostic<'a> {
        SourceDiagnostic {
            diag: self,
            source,
            location: {
                let (line, col) = source.line_col(self.span().start);
                format!("{}:{}:{}", source.name, line, col)
            },
            show_source: self
                .labels
                .iter()
                .all(|l| line_len_at(&source.text, l.span.start as usize) <= MAX_SHOWN_LINE),
        }
    }
}

/// A diagnostic with its source text, ready for miette's report handlers. It borrows both:
/// copying each diagnostic to render it was a tenth of rendering a hundred thousand.
#[derive(Debug)]
pub struct SourceDiagnostic<'a> {
    pub diag: &'a Diagnostic,
    pub source: &'a SourceFile,
    /// `file:line:col` of the primary label.
    pub location: String,
    /// False when a labelled line is too long to show (minified or generated text): the
    /// diagnostic then names its location in words.
    pub show_source: bool,
}

/// miette reads a snippet by scanning its source from the start; it is given only the lines
/// around the span (found through the source's line index), so that rendering each of many
/// diagnostics of a long file does not take time in proportion to the whole file.
impl miette::SourceCode for SourceFile {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let text = &*self.text;
        let (start, end) = (span.offset(), span.offset() + span.len());
        if end > text.len() {
            return Err(miette::MietteError::OutOfBounds);
        }
        // The window: whole lines from `context_lines_before` above the span's first line to
        // `context_lines_after` below its last.
        let first_line = self.line_col(start as u32).0 - 1;
        let last_line = self.line_col(end as u32).0 - 1;
        let window_first = first_line.saturating_sub(context_lines_before);
        let from = self.line_start(window_first);
        let to = self
            .line_start(last_line + context_lines_after + 1)
            .min(text.len());
        let window = &text[from..to];
        let inner = miette::SourceCode::read_span(
            window,
            &miette::SourceSpan::from((start - from, end - start)),
            context_lines_before,
            context_lines_after,
        )?;
        let offset = from + inner.span().offset();
        let data = &text.as_bytes()[offset..offset + inner.data().len()];
        // Line and column as `line_col` counts them, not as miette's scan does: miette breaks
        // lines at a lone `\r` and counts columns in bytes, so its `[file:line:col]` header
        // disagreed with the snippet under it and with every other location acc prints
        // (found by fuzzing: a `\r` before the error moved the header a line down).
        let (line, column) = self.line_col(offset as u32);
        let end_line = self.line_col((offset + data.len()) as u32).0;
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.to_string(),
            data,
            miette::SourceSpan::from((offset, inner.data().len())),
            line - 1,
            column - 1,
            // miette's own `line_count` counts the lines from the text's start (its report
            // handler merges labels' snippets by it): the line where the window ends.
            end_line - 1,
        )))
    }
}

/// Lines longer than this are not drawn under a diagnostic (miette cannot draw columns past
/// 65535, and such a line is unreadable anyway).
const MAX_SHOWN_LINE: usize = 4096;

fn line_len_at(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    end - start
}

impl fmt::Display for SourceDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.diag.message)?;
        if !self.show_source {
            write!(f, "\n  at {}", self.location)?;
        }
        Ok(())
    }
}

impl std::error::Error for SourceDiagnostic<'_> {}

impl miette::Diagnostic for SourceDiagnostic<'_> {
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.diag.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.diag
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.show_source
            .then_some(self.source as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        if !self.show_source {
            return None;
        }
        Some(Box::new(self.diag.labels.iter().enumerate().map(
            |(i, l)| {
                let text = (!l.message.is_empty()).then(|| l.message.clone());
                if i == 0 {
                    miette::LabeledSpan::new_primary_with_span(text, l.span)
                } else {
                    miette::LabeledSpan::new_with_span(text, l.span)
                }
            },
        )))
    }
}

/// Render diagnostics as plain text (no colour, fixed width): what `acc check` prints when
/// standard error is not a terminal, and what the snapshot tests compare.
pub fn render_plain(diags: &[Diagnostic], source: &SourceFile) -> String {
    let wrapping =
        miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
            .with_width(PLAIN_WIDTH)
            .with_links(false);
    // Wrapping a text that fits its line changes nothing, but textwrap's Unicode line breaking
    // finds every break opportunity first: a quarter of the rendering time of a program with
    // a hundred thousand diagnostics.
    let unwrapped = wrapping.clone().with_wrap_lines(false);
    let mut out = String::new();
    for d in diags {
        let sd = d.with_source(source);
        let handler = if fits_unwrapped(&sd) {
            &unwrapped
        } else {
            &wrapping
        };
        let _ = handler.render_report(&mut out, &sd);
    }
    out
}

/// The width `render_plain` wraps to.
const PLAIN_WIDTH: usize = 100;

/// Whether the texts miette wraps (the message, the help) each fit one line after their
/// indent, so that wrapping leaves them as they are: one line each, no whitespace at either
/// end (textwrap trims it), no control characters, and short enough even if every non-ASCII
/// character were two columns wide.
fn fits_unwrapped(sd: &SourceDiagnostic) -> bool {
    // miette wraps to two columns less than its width, after an indent of up to 8 columns
    // (`  × ` before the message, `  help: ` before the help).
    const ROOM: usize = PLAIN_WIDTH - 2 - 8;
    let fits = |text: &str| {
        let mut columns = 0;
        for c in text.chars() {
            if c.is_control() {
                return false;
            }
            columns += if c.is_ascii() { 1 } else { 2 };
        }
        columns <= ROOM
            && !text.starts_with(char::is_whitespace)
            && !text.ends_with(char::is_whitespace)
    };
    sd.show_source && fits(&sd.diag.message) && sd.diag.help.as_deref().is_none_or(fits)
}

/// Edit distance counting a swap of two neighbours as one edit (optimal string alignment),
/// for "did you mean" hints on misspelled names, keywords and clauses (`whlie` -> `while`).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    distance(&a, &b, &mut Rows::default())
}

/// The three rows of the dynamic programme, kept between candidates.
#[derive(Default)]
struct Rows {
    before: Vec<usize>,
    last: Vec<usize>,
    row: Vec<usize>,
}

/// `edit_distance` of two character slices, in three rows of `b.len() + 1` entries.
fn distance(a: &[char], b: &[char], r: &mut Rows) -> usize {
    let n = b.len();
    r.before.clear();
    r.before.resize(n + 1, 0);
    r.last.clear();
    r.last.extend(0..=n);
    r.row.clear();
    r.row.resize(n + 1, 0);
    for i in 1..=a.len() {
        r.row[0] = i;
        for j in 1..=n {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (r.last[j] + 1)
                .min(r.row[j - 1] + 1)
                .min(r.last[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(r.before[j - 2] + 1);
            }
            r.row[j] = best;
        }
        std::mem::swap(&mut r.before, &mut r.last);
        std::mem::swap(&mut r.last, &mut r.row);
    }
    r.last[n]
}

/// The candidate closest to `name`, if it is close enough to be a plausible misspelling (the
/// first of the closest, in the candidates' order). Linear in the candidates: a candidate
/// whose length differs by more than the allowed distance costs a length comparison.
pub fn closest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let a: Vec<char> = name.chars().collect();
    let limit = match a.len() {
        0..=2 => return None,
        3..=5 => 1,
        _ => 2,
    };
    let mut rows = Rows::default();
    let mut b = Vec::new();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        // Bytes bound characters from above: a candidate this short has too few characters.
        if c.len() + limit < a.len() || c == name {
            continue;
        }
        b.clear();
        b.extend(c.chars());
        if b.len() > a.len() + limit {
            continue;
        }
        let d = distance(&a, &b, &mut rows);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_finds_near_misses_only() {
        let words = ["parallel", "kernels", "serial", "loop"];
        assert_eq!(closest("paralel", words), Some("parallel"));
        assert_eq!(closest("kernel", words), Some("kernels"));
        assert_eq!(closest("update", words), None);
        assert_eq!(closest("whlie", ["while", "let"]), Some("while"));
        // Ties go to the first candidate; exact matches and short names get no hint.
        assert_eq!(closest("abcd", ["abce", "abcf"]), Some("abce"));
        assert_eq!(closest("abcd", ["abcd"]), None);
        assert_eq!(closest("ab", ["ac"]), None);
        assert_eq!(closest("éclair", ["eclair", "écl"]), Some("eclair"));
    }

    #[test]
    fn edit_distances_by_hand() {
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("whlie", "while"), 1);
        assert_eq!(edit_distance("ca", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }

    /// The rendered `[file:line:col]` header is the location `line_col` gives (and the
    /// unrendered form prints): with a lone `\r` earlier on the line, with multi-byte
    /// characters before the span, and both. Found by fuzzing (`tests/fuzz-regressions/`).
    #[test]
    fn rendered_header_agrees_with_line_col() {
        for (text, at) in [
            ("let x = 1\nelse if \r == 172 { y = 1 }\n", "=="),
            ("let é = 1 + $\n", "$"),
            ("let s = \"∑∑\"\r \u{1f600} @\n\n", "@"),
            ("\r\r\r#\n", "#"),
        ] {
            let source = SourceFile::new("t.acc", text);
            let start = text.find(at).unwrap();
            let d = Diagnostic::error("bad", Span::new(start, start + at.len()), "here");
            let location = d.with_source(&source).location;
            let rendered = render_plain(std::slice::from_ref(&d), &source);
            assert!(
                rendered.contains(&format!("[{location}]")),
                "expected [{location}] in\n{rendered}"
            );
        }
    }
}
