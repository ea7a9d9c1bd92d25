//! The seed corpus: every `.acc` program the repository already has (the conformance suite,
//! the examples, the generator's and the fuzzer's regression tests). Mutating real programs
//! reaches the checker, the analysis and the back ends; random text rarely gets past the lexer.

use std::path::{Path, PathBuf};

/// Programs to mutate, with the name each was read from.
#[derive(Clone, Debug, Default)]
pub struct Corpus {
    pub files: Vec<(String, String)>,
}

/// The repository's root, where the default corpus directories are.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

/// The directories read when no `--corpus` is given.
pub fn default_dirs() -> Vec<PathBuf> {
    let root = repo_root();
    [
        "tests/conformance",
        "examples",
        "tests/progen-regressions",
        "tests/fuzz-regressions",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect()
}

impl Corpus {
    /// Every `.acc` file directly inside `dirs` (missing directories are skipped), in name
    /// order so that a seed means the same inputs on every machine.
    pub fn load(dirs: &[PathBuf]) -> Corpus {
        let mut files = Vec::new();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut paths: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "acc"))
                .collect();
            paths.sort();
            for p in paths {
                if let Ok(text) = std::fs::read_to_string(&p) {
                    files.push((p.display().to_string(), text));
                }
            }
        }
        Corpus { files }
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}
