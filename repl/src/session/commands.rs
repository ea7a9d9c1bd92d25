//! The `:` commands: one table (`COMMANDS`) that `:help`, parsing and completion read, and
//! what each does to the session.

use std::path::Path;
use std::time::{Duration, Instant};

use super::reply::{self, Reply, Table};
use super::{Outcome, Session};

/// A command as `:help` lists it.
pub struct CommandSpec {
    /// `:vars`.
    pub name: &'static str,
    /// What follows the name: `EXPR`, `CODE`, `FILE`, or nothing.
    pub args: &'static str,
    pub help: &'static str,
    action: Action,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Action {
    Help,
    Type,
    Vars,
    Funcs,
    Emit(acc::Emit),
    Time,
    Profile,
    Info,
    Devices,
    Device,
    Load,
    Save,
    Reset,
    Quit,
}

impl CommandSpec {
    /// Its argument is acc code, which reads on like any input.
    pub fn takes_code(&self) -> bool {
        matches!(self.action, Action::Type | Action::Emit(_) | Action::Time)
    }

    /// Its argument is a file name.
    pub fn takes_file(&self) -> bool {
        matches!(self.action, Action::Load | Action::Save)
    }
}

/// Every command, in the order `:help` lists them.
pub const COMMANDS: &[CommandSpec] = &[
    spec(":help", "", "list the commands", Action::Help),
    spec(
        ":type",
        "EXPR",
        "the type of an expression (and an array variable's shape)",
        Action::Type,
    ),
    spec(
        ":vars",
        "",
        "the globals: type, shape, devices where present",
        Action::Vars,
    ),
    spec(
        ":funcs",
        "",
        "the functions with their signatures",
        Action::Funcs,
    ),
    spec(
        ":ptx",
        "CODE",
        "the PTX of CODE's compute regions (nothing runs or is kept)",
        Action::Emit(acc::Emit::Ptx),
    ),
    spec(
        ":ir",
        "CODE",
        "the compiler's IR of CODE (nothing runs or is kept)",
        Action::Emit(acc::Emit::Ir),
    ),
    spec(
        ":clif",
        "CODE",
        "the Cranelift IR of CODE's host code (nothing runs or is kept)",
        Action::Emit(acc::Emit::Clif),
    ),
    spec(
        ":time",
        "CODE",
        "run CODE; report wall time, device time, launches, bytes moved",
        Action::Time,
    ),
    spec(
        ":profile",
        "on|off",
        "collect the per-construct profile; `:profile` alone shows it",
        Action::Profile,
    ),
    spec(
        ":info",
        "on|off",
        "before each input runs, the compiler's feedback on it (schedules, data, warnings)",
        Action::Info,
    ),
    spec(
        ":devices",
        "",
        "the devices with their memory, the current one marked",
        Action::Devices,
    ),
    spec(
        ":device",
        "TYPE[:N]",
        "make a device current: nvidia:1, emulated, multicore, host",
        Action::Device,
    ),
    spec(
        ":load",
        "FILE",
        "run a script in this session",
        Action::Load,
    ),
    spec(
        ":save",
        "FILE",
        "write the inputs that ran without error as a script",
        Action::Save,
    ),
    spec(
        ":reset",
        "",
        "start the session again: no globals, functions or inputs",
        Action::Reset,
    ),
    spec(
        ":quit",
        "",
        "end the session (so does Ctrl-D)",
        Action::Quit,
    ),
];

const fn spec(
    name: &'static str,
    args: &'static str,
    help: &'static str,
    action: Action,
) -> CommandSpec {
    CommandSpec {
        name,
        args,
        help,
        action,
    }
}

/// A `:` command as typed: its name and the text after it.
pub struct Command<'a> {
    /// `:vars` (as typed; it may be no command).
    pub name: &'a str,
    /// What follows the name, without the blanks between.
    pub arg: &'a str,
}

impl<'a> Command<'a> {
    /// The command `input` is, when it starts with `:`.
    pub fn parse(input: &'a str) -> Option<Command<'a>> {
        let text = input.trim_start();
        if !text.starts_with(':') {
            return None;
        }
        let end = text.find(char::is_whitespace).unwrap_or(text.len());
        Some(Command {
            name: &text[..end],
            arg: text[end..].trim(),
        })
    }

    pub fn spec(&self) -> Option<&'static CommandSpec> {
        COMMANDS.iter().find(|c| c.name == self.name)
    }

    /// The code the command takes, if it takes code.
    pub fn code(&self) -> Option<&'a str> {
        self.spec().filter(|s| s.takes_code()).map(|_| self.arg)
    }
}

/// The profiler's counts over every construct, for `:time`'s differences.
struct Totals {
    launches: u64,
    device: Duration,
    uploaded: u64,
    downloaded: u64,
}

impl Totals {
    fn of(engine: &mut acc::Engine) -> Totals {
        let stats = engine.profile_totals();
        Totals {
            launches: stats.launches.count,
            device: stats.launches.total,
            uploaded: stats.uploads.bytes,
            downloaded: stats.downloads.bytes,
        }
    }
}

impl Session {
    pub(super) fn command(&mut self, command: Command) -> Outcome {
        let Some(spec) = command.spec() else {
            return unknown(command.name);
        };
        let arg = command.arg;
        if spec.args.is_empty() && !arg.is_empty() {
            return usage(spec, "takes nothing after it");
        }
        let needs_arg = matches!(
            spec.action,
            Action::Type | Action::Emit(_) | Action::Time | Action::Load | Action::Save
        );
        if needs_arg && arg.is_empty() {
            return usage(spec, "needs an argument");
        }
        match spec.action {
            Action::Help => Outcome::Reply(Reply::Text(help())),
            Action::Type => self.type_of(arg),
            Action::Vars => Outcome::Reply(self.vars()),
            Action::Funcs => Outcome::Reply(self.funcs()),
            Action::Emit(what) => {
                self.count += 1;
                let name = format!("<repl:{}>", self.count);
                match self.engine.emit(&name, arg, what) {
                    Ok(text) => Outcome::Reply(Reply::Text(text)),
                    Err(e) => Outcome::Failed(e),
                }
            }
            Action::Time => self.time(arg),
            Action::Profile => self.profile(spec, arg),
            Action::Info => match arg {
                "on" | "off" => {
                    self.info = arg == "on";
                    text(&format!("compiler feedback {arg}\n"))
                }
                "" => text(if self.info {
                    "compiler feedback is on\n"
                } else {
                    "compiler feedback is off: `:info on` shows it before each input runs\n"
                }),
                _ => usage(spec, "takes `on`, `off` or nothing"),
            },
            Action::Devices => Outcome::Reply(self.devices()),
            Action::Device => self.device(arg),
            Action::Load => self.load(arg),
            Action::Save => self.save(arg),
            Action::Reset => match self.reset() {
                Ok(()) => text("the session starts again: no globals, functions or inputs\n"),
                Err(e) => Outcome::Failed(e),
            },
            Action::Quit => Outcome::End(0),
        }
    }

    /// `:type EXPR`: its type, and the shape of an array variable.
    fn type_of(&mut self, expr: &str) -> Outcome {
        let ty = match self.engine.type_of(expr) {
            Ok(ty) => ty,
            Err(e) => return Outcome::Failed(e),
        };
        let shape = self
            .engine
            .globals_info()
            .into_iter()
            .find(|g| g.name == expr)
            .and_then(|g| g.shape);
        match shape {
            Some(extents) => text(&format!("{ty}  shape {}\n", reply::shape(&extents))),
            None => text(&format!("{ty}\n")),
        }
    }

    fn vars(&mut self) -> Reply {
        let globals = self.engine.globals_info();
        if globals.is_empty() {
            return Reply::Text("no globals yet\n".into());
        }
        let mut table = Table::new(&["name", "type", "shape", "present on"]);
        for g in globals {
            let shape = g.shape.as_deref().map(reply::shape).unwrap_or_default();
            table.push(vec![g.name, g.ty, shape, g.present_on.join(", ")]);
        }
        Reply::Table(table)
    }

    fn funcs(&mut self) -> Reply {
        let functions = self.engine.functions_info();
        if functions.is_empty() {
            return Reply::Text("no functions yet\n".into());
        }
        let lines: Vec<String> = functions.into_iter().map(|f| f.signature + "\n").collect();
        Reply::Text(lines.concat())
    }

    /// `:time CODE`: run it with the profiler on and report the difference it made.
    fn time(&mut self, code: &str) -> Outcome {
        let was_profiling = self.engine.profiling();
        self.engine.set_profiling(true);
        let before = Totals::of(&mut self.engine);
        let start = Instant::now();
        let ran = self.run_code(code);
        let wall = start.elapsed();
        let after = Totals::of(&mut self.engine);
        if !was_profiling {
            // What this run recorded must go with it: its code is freed from now on.
            self.engine.set_profiling(false);
            self.engine.clear_profile();
        }
        if !matches!(ran, Outcome::Ran) {
            return ran;
        }
        let mut table = Table::new(&["wall", "device", "launches", "moved in", "moved out"]);
        table.push(vec![
            reply::duration(wall),
            reply::duration(after.device.saturating_sub(before.device)),
            (after.launches - before.launches).to_string(),
            reply::bytes(after.uploaded - before.uploaded),
            reply::bytes(after.downloaded - before.downloaded),
        ]);
        Outcome::Reply(Reply::Table(table))
    }

    /// `:profile on|off`, or the report so far.
    fn profile(&mut self, spec: &CommandSpec, arg: &str) -> Outcome {
        match arg {
            "on" => {
                self.engine.set_profiling(true);
                text("profiling on: `:profile` shows the report, `:profile off` ends it\n")
            }
            "off" => {
                // The report names the code it measured, which is freed from now on.
                let report = self.profile_reply();
                self.engine.set_profiling(false);
                self.engine.clear_profile();
                Outcome::Reply(report)
            }
            "" => Outcome::Reply(self.profile_reply()),
            _ => usage(spec, "takes `on`, `off` or nothing"),
        }
    }

    /// The profile so far: the `--profile` report, with its numbers as a table too (a
    /// construct a row, then the totals).
    fn profile_reply(&mut self) -> Reply {
        let mut table = Table::new(&[
            "where",
            "construct",
            "on",
            "reached",
            "launches",
            "device time",
            "moved in",
            "moved out",
            "peer",
            "MPI",
            "waits",
        ]);
        let row = |place: String, construct: String, s: &acc::SiteStats| {
            let devices: Vec<String> = s.devices.iter().map(ToString::to_string).collect();
            vec![
                place,
                construct,
                devices.join(", "),
                s.reached.to_string(),
                s.launches.count.to_string(),
                reply::duration(s.launches.total),
                reply::bytes(s.uploads.bytes),
                reply::bytes(s.downloads.bytes),
                reply::bytes(s.peers.bytes),
                reply::bytes(s.mpi.bytes),
                reply::duration(s.waits.total),
            ]
        };
        for site in self.engine.profile_sites() {
            let place = format!("{}:{}", site.file, site.line);
            table.push(row(place, site.construct, &site.stats));
        }
        let totals = self.engine.profile_totals();
        table.push(row("total".into(), String::new(), &totals));
        Reply::Report {
            text: self.engine.profile_report(),
            table,
        }
    }

    fn devices(&mut self) -> Reply {
        let mut table = Table::new(&["device", "memory", ""]);
        for d in self.engine.devices_info() {
            let memory = match (d.memory, d.name.starts_with("emulated")) {
                (Some((total, free)), _) => {
                    format!("{} ({} free)", reply::bytes(total), reply::bytes(free))
                }
                (None, true) => "its own, emulated in host memory".to_string(),
                (None, false) => "host memory".to_string(),
            };
            let mark = if d.current { "current" } else { "" };
            table.push(vec![d.name, memory, mark.to_string()]);
        }
        Reply::Table(table)
    }

    /// `:device TYPE[:N]`, or the current device.
    fn device(&mut self, spec: &str) -> Outcome {
        if !spec.is_empty() {
            if let Err(e) = self.engine.select_device(spec) {
                return Outcome::Failed(e);
            }
        }
        text(&format!(
            "current device: {}\n",
            self.engine.current_device()
        ))
    }

    /// `:load FILE`: run it as an input of its own (`:save` writes its text).
    fn load(&mut self, file: &str) -> Outcome {
        let path = Path::new(file);
        let script = match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                return Outcome::Failed(acc::Error::Io {
                    path: path.display().to_string(),
                    message: e.to_string(),
                })
            }
        };
        match self.engine.run(&path.display().to_string(), &script) {
            Ok(()) => {
                self.inputs.push(format!("// :load {file}\n{script}"));
                Outcome::Ran
            }
            Err(acc::Error::Exit(status)) => Outcome::End(status),
            Err(e) => Outcome::Failed(e),
        }
    }

    fn save(&mut self, file: &str) -> Outcome {
        match std::fs::write(file, self.script()) {
            Ok(()) => {
                let n = self.inputs.len();
                let plural = if n == 1 { "" } else { "s" };
                text(&format!("wrote {n} input{plural} to {file}\n"))
            }
            Err(e) => Outcome::Failed(acc::Error::Usage(format!("cannot write `{file}`: {e}"))),
        }
    }
}

fn text(s: &str) -> Outcome {
    Outcome::Reply(Reply::Text(s.to_string()))
}

/// `:help`: each command with its argument and one line.
fn help() -> String {
    let usage: Vec<String> = COMMANDS
        .iter()
        .map(|c| format!("{} {}", c.name, c.args).trim_end().to_string())
        .collect();
    let width = usage.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    for (u, c) in usage.iter().zip(COMMANDS) {
        out += &format!("  {u:<width$}  {}\n", c.help);
    }
    out += "Anything else is acc code. Tab completes; Ctrl-C stops a computation; Ctrl-R searches the history.\n";
    out
}

fn usage(spec: &CommandSpec, problem: &str) -> Outcome {
    let form = format!("{} {}", spec.name, spec.args);
    Outcome::Failed(acc::Error::Usage(format!(
        "`{}` {problem}: `{}`",
        spec.name,
        form.trim_end()
    )))
}

fn unknown(name: &str) -> Outcome {
    let names = COMMANDS.iter().map(|c| c.name);
    let hint = acc::lang::diag::closest(name, names)
        .map_or(String::new(), |c| format!(" (did you mean `{c}`?)"));
    Outcome::Failed(acc::Error::Usage(format!(
        "unknown command `{name}`{hint}: `:help` lists the commands"
    )))
}
