//! `acc test`: run `.acc` test scripts, each in its own `acc run` process (a script that
//! crashes or hangs fails alone) in a scratch directory of its own (so the files a script
//! writes, such as its pictures, neither land beside the scripts nor meet another run's), and
//! end with the line `N passed, N failed`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A script running longer than this fails.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Runs the scripts under `paths` (on `device`, `TYPE[:N]`, when given).
pub fn run_tests(paths: &[PathBuf], device: Option<&str>) -> i32 {
    let roots = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut scripts = Vec::new();
    for root in &roots {
        collect(root, &mut scripts);
    }
    scripts.sort();
    // Scripts headed `// requires: mpi` need the `mpi_*` built-ins: skipped by an acc built
    // without them (run singly, as one rank, by one built with them).
    let (skipped, scripts): (Vec<PathBuf>, Vec<PathBuf>) = scripts
        .into_iter()
        .partition(|s| requires_mpi(s) && !acc::lang::builtins::mpi_enabled());
    for s in &skipped {
        println!(
            "skip {}: needs acc built with the `mpi` feature",
            s.display()
        );
    }
    let failures = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(script) = scripts.get(i) else { break };
                if let Err(why) = run_one(script, device) {
                    failures
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((script.clone(), why));
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap_or_else(|e| e.into_inner());
    failures.sort();
    for (script, why) in &failures {
        println!("FAIL {}\n{}", script.display(), indent(why));
    }
    let failed = failures.len();
    if skipped.is_empty() {
        println!("{} passed, {} failed", scripts.len() - failed, failed);
    } else {
        println!(
            "{} passed, {} failed, {} skipped",
            scripts.len() - failed,
            failed,
            skipped.len()
        );
    }
    i32::from(failed > 0)
}

/// Whether the script's leading comment lines include `// requires: mpi`.
fn requires_mpi(script: &Path) -> bool {
    std::fs::read_to_string(script).is_ok_and(|text| {
        text.lines()
            .take_while(|l| l.starts_with("//"))
            .any(|l| l.trim() == "// requires: mpi")
    })
}

/// The environment a script's leading comment lines ask for, `// env: NAME=VALUE` each (a
/// script about device numbers names its number of emulated devices, so that it gives its
/// output whatever `ACC_EMULATED_DEVICES` the suite runs under).
fn script_env(text: &str) -> Result<Vec<(&str, &str)>, String> {
    text.lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| l.strip_prefix("// env:"))
        .map(|pair| {
            pair.trim()
                .split_once('=')
                .filter(|(name, _)| !name.is_empty())
                .ok_or_else(|| format!("`// env:` needs NAME=VALUE, found {:?}", pair.trim()))
        })
        .collect()
}

fn collect(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let Ok(entries) = std::fs::read_dir(path) else {
            return;
        };
        for entry in entries.flatten() {
            collect(&entry.path(), out);
        }
    } else if path.extension().is_some_and(|e| e == "acc") {
        out.push(path.to_path_buf());
    }
}

/// What a script expects: an error containing some text, or its `.out` file's output (on a
/// device with memory of its own, `emulated` or `nvidia`, its `NAME.discrete.out` when there
/// is one: where discrete memory legitimately shows different values than shared memory).
fn expectation(script: &Path, text: &str, device: Option<&str>) -> Result<Expect, String> {
    let first = text.lines().next().unwrap_or_default();
    if let Some(rest) = first.strip_prefix("// expect-error:") {
        // Its `.out` file, if any, is what it prints before the error.
        let out = script.with_extension("out");
        let output = std::fs::read_to_string(&out).ok();
        return Ok(Expect::Error(rest.trim().to_string(), output));
    }
    // `// expect-exit: N`: the script ends with `exit(N)`, printing its `.out` file first.
    let status = match first.strip_prefix("// expect-exit:") {
        Some(n) => n
            .trim()
            .parse()
            .map_err(|_| format!("`// expect-exit:` needs a number, found {:?}", n.trim()))?,
        None => 0,
    };
    let env = std::env::var("ACC_DEVICE_TYPE").ok();
    let kind = device
        .or(env.as_deref())
        .map(|d| d.split(':').next().unwrap_or(d).trim());
    let discrete = matches!(kind, Some("emulated" | "nvidia"));
    let out = Some(script.with_extension("discrete.out"))
        .filter(|p| discrete && p.exists())
        .unwrap_or_else(|| script.with_extension("out"));
    let output = match std::fs::read_to_string(&out) {
        Ok(expected) => Some(expected),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(format!("cannot read {}: {e}", out.display())),
    };
    Ok(Expect::Output { status, output })
}

enum Expect {
    /// An error containing the text, after the output given.
    Error(String, Option<String>),
    Output {
        status: i32,
        output: Option<String>,
    },
}

fn run_one(script: &Path, device: Option<&str>) -> Result<(), String> {
    let text = std::fs::read_to_string(script).map_err(|e| format!("cannot read: {e}"))?;
    let expect = expectation(script, &text, device)?;
    let env = script_env(&text)?;
    let (status, stdout, stderr) = run_script(script, device, &env)?;
    match expect {
        Expect::Error(wanted, output) => {
            if status == Some(0) {
                return Err(format!(
                    "expected an error containing {wanted:?}, but it ran to the end"
                ));
            }
            if !stderr.contains(&wanted) {
                return Err(format!(
                    "expected an error containing {wanted:?}, got:\n{stderr}"
                ));
            }
            match output {
                Some(e) if e != stdout => Err(first_difference(&e, &stdout)),
                _ => Ok(()),
            }
        }
        Expect::Output {
            status: wanted,
            output: expected,
        } => {
            if status != Some(wanted) {
                return Err(format!(
                    "exit status {status:?}, expected {wanted}\n{stderr}"
                ));
            }
            match expected {
                Some(e) if e != stdout => Err(first_difference(&e, &stdout)),
                _ => Ok(()),
            }
        }
    }
}

/// A directory for one script's run, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "acc-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot make a scratch directory {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_script(
    script: &Path,
    device: Option<&str>,
    env: &[(&str, &str)],
) -> Result<(Option<i32>, String, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find acc itself: {e}"))?;
    // The script by its full path, since it runs in the scratch directory.
    let full = std::path::absolute(script)
        .map_err(|e| format!("cannot resolve {}: {e}", script.display()))?;
    let scratch = Scratch::new()?;
    let mut command = Command::new(exe);
    command
        .arg("run")
        .arg(&full)
        .current_dir(&scratch.0)
        .envs(env.iter().copied());
    if let Some(d) = device {
        command.arg("--device").arg(d);
    }
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start: {e}"))?;
    // Read both pipes while the script runs: one that fills a pipe would otherwise block.
    let read = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = read(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("timed out after {} s", TIMEOUT.as_secs()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(format!("cannot wait: {e}")),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    Ok((status.code(), stdout, stderr))
}

fn first_difference(expected: &str, actual: &str) -> String {
    let mut exp = expected.lines();
    let mut act = actual.lines();
    for line in 1.. {
        match (exp.next(), act.next()) {
            (Some(e), Some(a)) if e == a => continue,
            (None, None) => return "output differs in its final newline".into(),
            (e, a) => {
                return format!(
                    "output differs at line {line}:\n  expected: {}\n  actual:   {}",
                    e.unwrap_or("<end of output>"),
                    a.unwrap_or("<end of output>")
                )
            }
        }
    }
    unreachable!()
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::script_env;

    #[test]
    fn env_lines_are_read_from_the_leading_comments_only() {
        let text = "// expect-error: x\n// env: ACC_EMULATED_DEVICES=2\n// env: A=b=c\nlet x = 1\n// env: LATE=1\n";
        assert_eq!(
            script_env(text),
            Ok(vec![("ACC_EMULATED_DEVICES", "2"), ("A", "b=c")])
        );
        assert_eq!(script_env("let x = 1\n"), Ok(vec![]));
    }

    #[test]
    fn an_env_line_without_a_name_and_value_is_an_error() {
        let err = script_env("// env: JUSTANAME\n").unwrap_err();
        assert!(
            err.contains("NAME=VALUE") && err.contains("JUSTANAME"),
            "{err}"
        );
        assert!(script_env("// env: =3\n").is_err());
    }
}
