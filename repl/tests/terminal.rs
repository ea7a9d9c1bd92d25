//! The REPL in a real pseudo-terminal, as a person uses it: the banner, Tab completion, Ctrl-C
//! stopping a computation with the session intact, Ctrl-C and Ctrl-D at the prompt, the
//! history across sessions (and Ctrl-R), each command, and colours.
//!
//! Keys are sent as a terminal sends them (`\r` for Enter, `\t`, `\x03` for Ctrl-C); what is
//! expected is output the input's echo cannot contain.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

mod support;
use support::Scratch;

use expectrl::process::unix::WaitStatus;
use expectrl::{Eof, Expect, Session};

const ENTER: &str = "\r";
const CTRL_C: &str = "\x03";
const CTRL_D: &str = "\x04";
const CTRL_R: &str = "\x12";
const UP: &str = "\x1b[A";
/// What the line editor writes as it starts reading an input (it turns bracketed paste on):
/// keys sent before it may be read ahead by the previous input's reader and lost, as keys
/// typed ahead by a person would be.
const READY: &str = "\x1b[?2004h";

type Repl = expectrl::session::OsSession;

/// `acc ARGS` in a terminal, its history under `state`, without colours unless `colour`,
/// ready for input; and what it wrote first (the banner).
fn start(state: &Path, args: &[&str], colour: bool) -> (Repl, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_acc"));
    command
        .args(args)
        .env("XDG_STATE_HOME", state)
        .env("TERM", "xterm")
        .env_remove("ACC_DEVICE_TYPE")
        .env_remove("ACC_PROFILE")
        .env_remove("ACC_NOTIFY");
    if colour {
        command.env_remove("NO_COLOR");
    } else {
        command.env("NO_COLOR", "1");
    }
    let mut repl = Session::spawn(command).expect("acc starts in a terminal");
    repl.set_expect_timeout(Some(Duration::from_secs(60)));
    let banner = expect(&mut repl, READY);
    (repl, banner)
}

/// Waits for `text` in the output; gives what came before it.
#[track_caller]
fn expect(repl: &mut Repl, text: &str) -> String {
    match repl.expect(text) {
        Ok(found) => String::from_utf8_lossy(found.before()).into_owned(),
        Err(e) => panic!("waiting for {text:?}: {e}"),
    }
}

/// Sends keys without waiting for anything.
#[track_caller]
fn send(repl: &mut Repl, keys: &str) {
    repl.send(keys).expect("keys sent");
}

/// Types `line` and Enter; gives what the terminal showed until the next input's prompt
/// (the echo and the input's output).
#[track_caller]
fn enter(repl: &mut Repl, line: &str) -> String {
    send(repl, &format!("{line}{ENTER}"));
    expect(repl, READY)
}

/// Waits until the input just entered is being run: the line editor has given the terminal
/// back (it turns bracketed paste off), so that Ctrl-C is the terminal's interrupt and not a
/// key the editor reads; and a little longer, as a person would.
#[track_caller]
fn started(repl: &mut Repl) {
    expect(repl, "\x1b[?2004l");
    std::thread::sleep(Duration::from_millis(200));
}

/// Whether the output has `line` as a line of its own.
fn has_line(output: &str, line: &str) -> bool {
    output.split("\r\n").any(|l| l == line)
}

/// Waits for the process to end; its exit status.
#[track_caller]
fn ended(mut repl: Repl) -> i32 {
    repl.expect(Eof).expect("the session ends");
    match repl.get_process().wait() {
        Ok(WaitStatus::Exited(_, status)) => status,
        other => panic!("acc did not exit: {other:?}"),
    }
}

#[test]
fn banner_help_and_quit() {
    let scratch = Scratch::new("terminal-banner");
    let (mut repl, banner) = start(&scratch.0, &["--device", "emulated:1"], false);
    let version = format!("acc {} ", env!("CARGO_PKG_VERSION"));
    assert!(banner.contains(&version), "{banner:?}");
    assert!(banner.contains("on emulated:1"), "{banner:?}");
    assert!(banner.contains(":help lists the commands"), "{banner:?}");
    let help = enter(&mut repl, ":help");
    for c in acc_repl::session::COMMANDS {
        assert!(
            help.contains(c.name) && help.contains(c.help),
            "{} in {help:?}",
            c.name
        );
    }
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
    // Ctrl-D at an empty prompt ends the session too.
    let (mut repl, _) = start(&scratch.0, &["--device", "host"], false);
    send(&mut repl, CTRL_D);
    assert_eq!(ended(repl), 0);
}

#[test]
fn tab_completes_commands_names_clauses_and_files() {
    let scratch = Scratch::new("terminal-complete");
    let script = scratch.0.join("prog.acc");
    std::fs::write(&script, "print(1234 + 1)\n").unwrap();
    let (mut repl, _) = start(&scratch.0, &["--device", "host"], false);
    // A command.
    assert!(enter(&mut repl, ":va\t").contains("no globals yet"));
    // A global, then the rest of the line.
    enter(&mut repl, "let alpha = 21");
    let out = enter(&mut repl, "alp\t * 2");
    assert!(has_line(&out, "42"), "{out:?}");
    // A built-in.
    let out = enter(&mut repl, "sqr\t(1764.0)");
    assert!(has_line(&out, "42.0"), "{out:?}");
    // Clauses of the construct being typed: `cop` completes to `copy`, a second Tab lists.
    send(&mut repl, "acc parallel loop cop\t\t");
    let listed = expect(&mut repl, "copyout");
    assert!(listed.contains("copyin"), "{listed:?}");
    send(&mut repl, CTRL_C);
    expect(&mut repl, READY);
    // A file name after `:load`.
    let out = enter(&mut repl, &format!(":load {}/pr\t", scratch.0.display()));
    assert!(has_line(&out, "1235"), "{out:?}");
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
}

#[test]
fn ctrl_c_stops_a_running_loop_and_the_session_goes_on() {
    let scratch = Scratch::new("terminal-interrupt");
    let (mut repl, _) = start(&scratch.0, &["--device", "multicore"], false);
    // Ctrl-C at the prompt clears the line: nothing of it runs.
    send(&mut repl, "garbage_that_never_runs");
    send(&mut repl, CTRL_C);
    expect(&mut repl, READY);
    let out = enter(&mut repl, "600 + 66");
    assert!(has_line(&out, "666"), "{out:?}");
    // A host loop: Ctrl-C once it is running.
    enter(&mut repl, "let n = 0");
    let spin = "n = 1; while true { n += 1 }";
    send(&mut repl, &format!("{spin}{ENTER}"));
    started(&mut repl);
    send(&mut repl, CTRL_C);
    let stopped = expect(&mut repl, READY);
    assert!(stopped.contains("the run was interrupted"), "{stopped:?}");
    let column = spin.find("while").unwrap() + 1;
    assert!(
        stopped.contains(&format!("<repl:3>:1:{column}")),
        "{stopped:?}"
    );
    assert!(stopped.contains("stopped in this loop"), "{stopped:?}");
    let out = enter(&mut repl, "n > 1000");
    assert!(has_line(&out, "true"), "{out:?}");
    // Ctrl-C right after Enter, perhaps before the run starts, stops it too.
    send(&mut repl, &format!("while true {{ n += 1 }}{ENTER}"));
    expect(&mut repl, "\x1b[?2004l");
    send(&mut repl, CTRL_C);
    let stopped = expect(&mut repl, READY);
    assert!(stopped.contains("the run was interrupted"), "{stopped:?}");
    // A compute region on host threads.
    enter(&mut repl, "let a = zeros(4)");
    send(&mut repl, &format!("acc parallel loop copy(a){ENTER}"));
    send(
        &mut repl,
        &format!("for i in 0..4 {{ while a[i] >= 0.0 {{ a[i] += 1.0 }} }}{ENTER}"),
    );
    started(&mut repl);
    send(&mut repl, CTRL_C);
    let stopped = expect(&mut repl, READY);
    assert!(stopped.contains("the run was interrupted"), "{stopped:?}");
    // Everything declared before is still there.
    let out = enter(&mut repl, "print(len(a) * 100 + 7)");
    assert!(has_line(&out, "407"), "{out:?}");
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
}

#[test]
fn history_is_kept_across_sessions() {
    let scratch = Scratch::new("terminal-history");
    let (mut repl, _) = start(&scratch.0, &["--device", "host"], false);
    send(&mut repl, &format!("let s = 1 +{ENTER}"));
    enter(&mut repl, "1");
    enter(&mut repl, "let h = 41");
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
    let history =
        std::fs::read_to_string(scratch.0.join("acc").join("history")).expect("the history file");
    assert!(history.contains("let h = 41"), "{history}");
    // A second session: Up goes back over `:quit` to `let h = 41`.
    let (mut repl, _) = start(&scratch.0, &["--device", "host"], false);
    enter(&mut repl, &format!("{UP}{UP}"));
    let out = enter(&mut repl, "h + 1");
    assert!(has_line(&out, "42"), "{out:?}");
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
    // A third: Ctrl-R finds an input by a piece of it; a two-line input comes back whole.
    let (mut repl, _) = start(&scratch.0, &["--device", "host"], false);
    enter(&mut repl, &format!("{CTRL_R}h = 4"));
    let out = enter(&mut repl, "h * 2");
    assert!(has_line(&out, "82"), "{out:?}");
    enter(&mut repl, &format!("{CTRL_R}s = 1"));
    let out = enter(&mut repl, "s * 50");
    assert!(has_line(&out, "100"), "{out:?}");
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
}

#[test]
fn each_command_in_a_terminal() {
    let scratch = Scratch::new("terminal-commands");
    let saved = scratch.0.join("saved.acc");
    let (mut repl, _) = start(&scratch.0, &["--device", "emulated"], false);
    enter(&mut repl, "let a = zeros(f32, 3, 4)");
    let out = enter(&mut repl, ":type a");
    assert!(has_line(&out, "f32[,]  shape [3, 4]"), "{out:?}");
    let out = enter(&mut repl, ":vars");
    assert!(
        has_line(&out, "name  type    shape   present on"),
        "{out:?}"
    );
    assert!(has_line(&out, "a     f32[,]  [3, 4]"), "{out:?}");
    enter(&mut repl, "fn twice(x: i64) -> i64 { return 2 * x }");
    let out = enter(&mut repl, ":funcs");
    assert!(has_line(&out, "fn twice(x: i64) -> i64"), "{out:?}");
    // A command's code reads on: the directive line waits for its loop.
    send(&mut repl, &format!(":ptx acc parallel loop copy(a){ENTER}"));
    let out = enter(&mut repl, "for i in 0..3 { a[i, 0] = 1.0 }");
    assert!(out.contains(".visible .entry acc_region_0("), "{out:?}");
    let out = enter(&mut repl, ":ir let m = 5");
    assert!(has_line(&out, "global @m: i64"), "{out:?}");
    assert!(enter(&mut repl, "m").contains("unknown variable `m`"));
    let out = enter(&mut repl, ":clif twice(3)");
    assert!(out.contains("function %main"), "{out:?}");
    // `:time`: one launch; the whole f32[3, 4] in and out, 48 bytes each way.
    send(
        &mut repl,
        &format!(":time acc parallel loop copy(a){ENTER}"),
    );
    let out = enter(&mut repl, "for i in 0..3 { a[i, 0] = 2.0 }");
    let rows: Vec<&str> = out
        .split("\r\n")
        .skip_while(|l| !l.starts_with("wall"))
        .collect();
    assert!(rows[0].ends_with("moved out"), "{out:?}");
    assert!(rows[1].ends_with("  1         48 B      48 B"), "{out:?}");
    assert!(enter(&mut repl, ":profile on").contains("profiling on"));
    send(&mut repl, &format!("acc parallel loop copy(a){ENTER}"));
    enter(&mut repl, "for i in 0..3 { a[i, 1] = 3.0 }");
    let out = enter(&mut repl, ":profile off");
    assert!(
        out.contains("parallel loop reached 1 time on emulated:0"),
        "{out:?}"
    );
    let out = enter(&mut repl, ":devices");
    let current: Vec<&str> = out
        .split("\r\n")
        .filter(|l| l.ends_with("current"))
        .collect();
    assert_eq!(current.len(), 1, "{out:?}");
    assert!(current[0].starts_with("emulated:0 "), "{out:?}");
    let out = enter(&mut repl, ":device emulated:1");
    assert!(has_line(&out, "current device: emulated:1"), "{out:?}");
    // Four inputs ran: `let a`, `fn twice`, the timed loop and the profiled one.
    let out = enter(&mut repl, &format!(":save {}", saved.display()));
    assert!(
        has_line(&out, &format!("wrote 4 inputs to {}", saved.display())),
        "{out:?}"
    );
    assert!(enter(&mut repl, ":reset").contains("starts again"));
    assert!(enter(&mut repl, ":vars").contains("no globals yet"));
    enter(&mut repl, &format!(":load {}", saved.display()));
    let out = enter(&mut repl, "print(twice(21), a[0, 0], a[2, 1])");
    assert!(has_line(&out, "42 2.0 3.0"), "{out:?}");
    send(&mut repl, &format!(":quit{ENTER}"));
    assert_eq!(ended(repl), 0);
}

#[test]
fn colours_and_exit_status() {
    let scratch = Scratch::new("terminal-colour");
    let (mut repl, _) = start(&scratch.0, &["--device", "host"], true);
    // The keyword is drawn in colour as it is typed.
    send(&mut repl, "let x = 1");
    expect(&mut repl, "\x1b[1;35mlet\x1b[0m");
    expect(&mut repl, "\x1b[33m1\x1b[0m");
    send(&mut repl, ENTER);
    expect(&mut repl, READY);
    send(&mut repl, &format!("exit(3){ENTER}"));
    assert_eq!(ended(repl), 3);
}
