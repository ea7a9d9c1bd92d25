//! Byte-offset spans into one source text, and the source files they point into.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

/// A half-open byte range `start..end` in one source text.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// An empty span at this span's end (where something is missing).
    pub fn after(self) -> Span {
        Span {
            start: self.end,
            end: self.end,
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

impl fmt::Debug for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

impl From<Range<usize>> for Span {
    fn from(r: Range<usize>) -> Span {
        Span::new(r.start, r.end)
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(s: Span) -> miette::SourceSpan {
        (s.start as usize, s.len()).into()
    }
}

impl chumsky::span::Span for Span {
    type Context = ();
    type Offset = usize;

    fn new(_context: (), range: Range<usize>) -> Span {
        Span::from(range)
    }
    fn context(&self) {}
    fn start(&self) -> usize {
        self.start as usize
    }
    fn end(&self) -> usize {
        self.end as usize
    }
}

/// A named source text. Cheap to clone; diagnostics keep one to show the offending line.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: Arc<str>,
    pub text: Arc<str>,
    /// Where lines start, found on the first `line_col` (shared by clones), so that locating
    /// many diagnostics stays linear in the text.
    lines: Arc<LineIndex>,
}

#[derive(Debug, Default)]
struct LineIndex {
    /// The byte offset of each line's start.
    starts: std::sync::OnceLock<Vec<usize>>,
    /// The 0-based line the last lookup found. Diagnostics are located and rendered in source
    /// order, several lookups per diagnostic on the same few lines: looking near the last one
    /// first spares a binary search over every line of a large file, whose cache misses made
    /// rendering each of 100,000 diagnostics of a million-line file twice as slow.
    last: std::sync::atomic::AtomicUsize,
}

impl SourceFile {
    pub fn new(name: impl Into<Arc<str>>, text: impl Into<Arc<str>>) -> SourceFile {
        SourceFile {
            name: name.into(),
            text: text.into(),
            lines: Arc::default(),
        }
    }

    fn line_starts(&self) -> &[usize] {
        self.lines.starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        })
    }

    /// The 0-based line containing byte `offset` (at most the text's length).
    fn line_of(&self, offset: usize) -> usize {
        use std::sync::atomic::Ordering::Relaxed;
        const NEAR: usize = 4;
        let starts = self.line_starts();
        let last = self.lines.last.load(Relaxed).min(starts.len() - 1);
        let (lo, hi) = (
            last.saturating_sub(NEAR),
            (last + NEAR + 1).min(starts.len()),
        );
        // The lines `lo..hi` hold `offset` when it is at or after the first's start and before
        // the start of the line after them.
        let line = if starts[lo] <= offset && starts.get(hi).is_none_or(|&s| offset < s) {
            lo + starts[lo..hi].partition_point(|&s| s <= offset) - 1
        } else {
            starts.partition_point(|&s| s <= offset) - 1
        };
        self.lines.last.store(line, Relaxed);
        line
    }

    /// The byte offset where 0-based line `line` starts (the text's length past the last).
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts()
            .get(line)
            .copied()
            .unwrap_or(self.text.len())
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = (offset as usize).min(self.text.len());
        let line = self.line_of(offset);
        let line_start = self.line_starts()[line];
        let col = self.text[line_start..offset].chars().count() + 1;
        (line + 1, col)
    }
}
