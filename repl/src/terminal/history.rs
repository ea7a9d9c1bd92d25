//! Where the history is kept across sessions: `$XDG_STATE_HOME/acc/history`, or
//! `~/.local/state/acc/history` (the XDG base directory specification's default).

use std::path::PathBuf;

/// The history file (its folder is made); `None` when there is no home to keep it in.
pub fn file() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        // The specification ignores a relative path.
        .filter(|p| p.is_absolute())
        .or_else(|| {
            let home = std::env::var_os("HOME").map(PathBuf::from)?;
            Some(home.join(".local").join("state"))
        })?;
    let dir = state.join("acc");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir.join("history"))
}
