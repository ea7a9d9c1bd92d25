//! What a command answers: text, or a table that a terminal aligns in columns and a notebook
//! can render as HTML. Also the number formats the answers share.

use std::time::Duration;

/// A command's answer, for people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// Lines of text (each ends in a newline).
    Text(String),
    Table(Table),
    /// A report with a layout of its own for terminals (the `--profile` report), and the same
    /// numbers as a table for displays that draw tables (a notebook).
    Report {
        text: String,
        table: Table,
    },
}

impl Reply {
    /// The answer as a terminal shows it.
    pub fn to_text(&self) -> String {
        match self {
            Reply::Text(t) | Reply::Report { text: t, .. } => t.clone(),
            Reply::Table(t) => t.to_text(),
        }
    }

    /// The answer's table, when it has one (a notebook renders it as HTML).
    pub fn table(&self) -> Option<&Table> {
        match self {
            Reply::Text(_) => None,
            Reply::Table(t) | Reply::Report { table: t, .. } => Some(t),
        }
    }
}

/// Rows under column headings; every row has a cell per heading.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub headings: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new(headings: &[&str]) -> Table {
        Table {
            headings: headings.iter().map(|h| h.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    pub fn push(&mut self, row: Vec<String>) {
        self.rows.push(row);
    }

    /// Columns left-aligned to their widest cell, two spaces apart, without trailing blanks.
    pub fn to_text(&self) -> String {
        let mut widths: Vec<usize> = self.headings.iter().map(|h| h.chars().count()).collect();
        for row in &self.rows {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.headings).chain(&self.rows) {
            let mut line = String::new();
            for (cell, w) in row.iter().zip(&widths) {
                line += &format!("{cell:<w$}  ");
            }
            out += line.trim_end();
            out.push('\n');
        }
        out
    }

    /// An HTML `<table>`: the headings in `<th>`, every cell escaped.
    pub fn to_html(&self) -> String {
        let row = |cells: &[String], tag: &str| {
            let cells: String = cells
                .iter()
                .map(|c| format!("<{tag}>{}</{tag}>", escape_html(c)))
                .collect();
            format!("<tr>{cells}</tr>\n")
        };
        let mut out = String::from("<table>\n<thead>\n");
        out += &row(&self.headings, "th");
        out += "</thead>\n<tbody>\n";
        for r in &self.rows {
            out += &row(r, "td");
        }
        out += "</tbody>\n</table>\n";
        out
    }
}

/// `text` with the characters that mean something in HTML written as entities.
pub fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out += "&amp;",
            '<' => out += "&lt;",
            '>' => out += "&gt;",
            '"' => out += "&quot;",
            '\'' => out += "&#39;",
            c => out.push(c),
        }
    }
    out
}

/// `812 B`, `8.0 kB`, `1.5 MB`, `2.0 GB` (powers of 1000, as transfer rates are given).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];
    if n < 1000 {
        return format!("{n} B");
    }
    let mut value = n as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// `850 ns`, `12.3 µs`, `4.56 ms`, `1.234 s`.
pub fn duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns < 1_000 {
        format!("{ns} ns")
    } else if ns < 1_000_000 {
        format!("{:.1} µs", ns as f64 / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.2} ms", ns as f64 / 1e6)
    } else {
        format!("{:.3} s", d.as_secs_f64())
    }
}

/// `[3, 4]`: an array's extents as `:type` and `:vars` show them.
pub fn shape(extents: &[usize]) -> String {
    let parts: Vec<String> = extents.iter().map(usize::to_string).collect();
    format!("[{}]", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_align_their_columns() {
        let mut t = Table::new(&["name", "type", "shape"]);
        t.push(vec!["a".into(), "f64[,]".into(), "[3, 4]".into()]);
        t.push(vec!["count".into(), "i64".into(), String::new()]);
        assert_eq!(
            t.to_text(),
            "name   type    shape\na      f64[,]  [3, 4]\ncount  i64\n"
        );
    }

    #[test]
    fn tables_in_html_escape_their_cells() {
        let mut t = Table::new(&["name", "type"]);
        t.push(vec!["a<b".into(), "f64[,] & \"more\"".into()]);
        assert_eq!(
            t.to_html(),
            "<table>\n<thead>\n<tr><th>name</th><th>type</th></tr>\n</thead>\n<tbody>\n\
             <tr><td>a&lt;b</td><td>f64[,] &amp; &quot;more&quot;</td></tr>\n</tbody>\n</table>\n"
        );
    }

    #[test]
    fn sizes_and_times_read_at_a_glance() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(8000), "8.0 kB");
        assert_eq!(bytes(1_500_000), "1.5 MB");
        assert_eq!(bytes(80_000_000_000), "80.0 GB");
        assert_eq!(duration(Duration::from_nanos(850)), "850 ns");
        assert_eq!(duration(Duration::from_nanos(12_345)), "12.3 µs");
        assert_eq!(duration(Duration::from_micros(4_560)), "4.56 ms");
        assert_eq!(duration(Duration::from_millis(1_234)), "1.234 s");
        assert_eq!(shape(&[3, 4]), "[3, 4]");
        assert_eq!(shape(&[1000]), "[1000]");
    }
}
