//! The contents of the kernel's answers: kernel info, completion and inspection by the
//! session's own completer and inspector, is-complete by the REPL's reading-on rule, and errors
//! as Jupyter shows them.

use jupyter_protocol::{
    CodeMirrorMode, CompleteReply, CompleteRequest, InspectReply, InspectRequest, IsCompleteReply,
    IsCompleteRequest, KernelInfoReply, LanguageInfo, Media, MediaType, ReplyError, ReplyStatus,
};

use acc_repl::session::{Kind, Session};

/// Completion by the session's completer. Jupyter counts positions in characters (Unicode
/// code points); the completer, in bytes.
pub fn complete(session: &mut Session, r: &CompleteRequest) -> CompleteReply {
    let cursor = byte_offset(&r.code, r.cursor_pos);
    let names = session.names();
    let completion = acc_repl::session::complete(&names, &r.code, cursor);
    let start = char_offset(&r.code, completion.start);
    let end = char_offset(&r.code, cursor);
    let types: Vec<serde_json::Value> = completion
        .candidates
        .iter()
        .map(|c| {
            serde_json::json!({
                "start": start,
                "end": end,
                "text": c.text,
                "type": kind_name(c.kind),
                "signature": c.detail,
            })
        })
        .collect();
    let mut metadata = serde_json::Map::new();
    metadata.insert(
        "_jupyter_types_experimental".into(),
        serde_json::Value::Array(types),
    );
    CompleteReply {
        matches: completion.candidates.into_iter().map(|c| c.text).collect(),
        cursor_start: start,
        cursor_end: end,
        metadata,
        status: ReplyStatus::Ok,
        error: None,
    }
}

/// Inspection (Shift-Tab) by the session's `inspect`: a type or a signature.
pub fn inspect(session: &mut Session, r: &InspectRequest) -> InspectReply {
    let cursor = byte_offset(&r.code, r.cursor_pos);
    let names = session.names();
    match acc_repl::session::inspect(&names, &r.code, cursor) {
        Some(about) => InspectReply {
            found: true,
            data: plain(&about),
            ..InspectReply::default()
        },
        None => InspectReply::default(),
    }
}

/// Whether the code is a whole input (a console runs it on Enter) by the REPL's rule.
pub fn is_complete(r: &IsCompleteRequest) -> IsCompleteReply {
    if Session::awaits_more(&r.code) {
        IsCompleteReply::incomplete(String::new())
    } else {
        IsCompleteReply::complete()
    }
}

pub fn kernel_info() -> KernelInfoReply {
    let version = env!("CARGO_PKG_VERSION").to_string();
    KernelInfoReply {
        status: ReplyStatus::Ok,
        protocol_version: "5.3".into(),
        implementation: "acc".into(),
        implementation_version: version.clone(),
        language_info: LanguageInfo {
            name: "acc".into(),
            version: version.clone(),
            mimetype: Some("text/x-acc".into()),
            file_extension: Some(".acc".into()),
            // acc reads much like Rust (`let`, `fn`, `for i in 0..n`, `//` comments): Rust's
            // highlighting is the closest the front ends have.
            pygments_lexer: Some("rust".into()),
            codemirror_mode: Some(CodeMirrorMode::Simple("rust".into())),
            nbconvert_exporter: None,
        },
        banner: format!("acc {version} (OpenACC arrays, JIT-compiled): `:help` lists the commands"),
        help_links: Vec::new(),
        debugger: false,
        error: None,
    }
}

/// An error as Jupyter shows it: a name for its kind, its first line, and the rendered
/// diagnostic (without colours) as the traceback.
pub fn error_of(e: &acc::Error) -> ReplyError {
    let ename = match e {
        acc::Error::Compile { .. } => "CompileError",
        acc::Error::Runtime { .. } => "RuntimeError",
        acc::Error::Interrupted { .. } => "Interrupted",
        acc::Error::Limit { .. } => "LimitError",
        acc::Error::Io { .. } => "IOError",
        acc::Error::Usage(_) => "UsageError",
        _ => "Error",
    };
    let rendered = e.render(false);
    let evalue = match e.diagnostics().first() {
        Some(d) => d.message.clone(),
        None => rendered
            .lines()
            .next()
            .unwrap_or_default()
            .trim_start_matches("error: ")
            .to_string(),
    };
    ReplyError {
        ename: ename.into(),
        evalue,
        traceback: rendered.trim_end().lines().map(str::to_string).collect(),
    }
}

pub fn plain(text: &str) -> Media {
    Media::new(vec![MediaType::Plain(text.to_string())])
}

/// The byte offset of character `chars` of `text` (its end when past it).
fn byte_offset(text: &str, chars: usize) -> usize {
    text.char_indices()
        .nth(chars)
        .map_or(text.len(), |(i, _)| i)
}

/// How many characters come before byte `offset` of `text`.
fn char_offset(text: &str, offset: usize) -> usize {
    text.get(..offset).map_or(0, |t| t.chars().count())
}

/// The completion types JupyterLab shows beside a candidate.
fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Command => "magic",
        Kind::File => "path",
        Kind::Keyword | Kind::Directive | Kind::Clause => "keyword",
        Kind::Type => "class",
        Kind::Builtin | Kind::Function => "function",
        Kind::Constant => "constant",
        Kind::Global | Kind::Local => "variable",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_in_characters_and_bytes() {
        let text = "let é = 1\né";
        assert_eq!(byte_offset(text, 5), 6);
        assert_eq!(byte_offset(text, 100), text.len());
        assert_eq!(char_offset(text, 6), 5);
        assert_eq!(char_offset(text, text.len()), 11);
    }

    #[test]
    fn errors_name_their_kind_and_keep_the_diagnostic() {
        let mut engine = acc::Engine::with_output(Box::new(std::io::sink())).expect("an engine");
        let e = engine.run("<repl:1>", "let x = 1\nprint(y)").unwrap_err();
        let error = error_of(&e);
        assert_eq!(error.ename, "CompileError");
        assert!(error.evalue.contains("`y`"), "{}", error.evalue);
        let traceback = error.traceback.join("\n");
        assert!(traceback.contains("<repl:1>:2:7"), "{traceback}");
        assert!(!traceback.contains('\x1b'), "{traceback}");
    }
}
