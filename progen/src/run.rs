//! Running a program with the `acc` binary on several devices and comparing the results.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one run printed and how it ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    /// The exit status; `None` when the run was killed (timeout) or died of a signal.
    pub status: Option<i32>,
    pub timed_out: bool,
}

impl Outcome {
    pub fn describe(&self) -> String {
        let status = match (self.timed_out, self.status) {
            (true, _) => "timed out".to_string(),
            (false, Some(c)) => format!("exit {c}"),
            (false, None) => "killed by a signal".to_string(),
        };
        format!(
            "{status}\n--- stdout\n{}--- stderr\n{}",
            self.stdout, self.stderr
        )
    }
}

/// How a program fared on all devices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Every device gave the same outcome.
    Same,
    /// Every device rejected the program at compile time (exit 2): a generator bug.
    Invalid,
    /// The devices disagree; the value says which devices gave which outcome: devices with the
    /// same number agreed (numbered in order of first appearance).
    Differ(Vec<usize>),
}

/// One device of the comparison, as `--devices` names it: `TYPE[:NUM]` (what `acc --device`
/// takes) and, for `emulated`, `@N` for a machine of N emulated devices
/// (`ACC_EMULATED_DEVICES=N`), so that `emulated@1,emulated@2,emulated@3` compare one program
/// split over one, two and three devices (`devices(…)`). Such a machine also runs each part's
/// edge iterations first wherever it sends rows (`ACC_EDGES_FIRST=on`), as GPUs do with large
/// arrays: generated arrays are small, and under the default the edges never go first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceSpec {
    /// The `--device` argument.
    pub device: String,
    /// `ACC_EMULATED_DEVICES` for the run; `None` leaves the environment's (default 2).
    pub emulated_devices: Option<u32>,
}

impl DeviceSpec {
    pub fn parse(spec: &str) -> Result<DeviceSpec, String> {
        let Some((device, count)) = spec.split_once('@') else {
            if spec.is_empty() {
                return Err("an empty device name".into());
            }
            return Ok(DeviceSpec {
                device: spec.to_string(),
                emulated_devices: None,
            });
        };
        if device.split(':').next() != Some("emulated") {
            return Err(format!(
                "{spec}: only `emulated` takes a device count (`emulated@3`)"
            ));
        }
        match count.parse::<u32>() {
            Ok(n) if n >= 1 => Ok(DeviceSpec {
                device: device.to_string(),
                emulated_devices: Some(n),
            }),
            _ => Err(format!(
                "{spec}: the device count after `@` must be a number from 1 up"
            )),
        }
    }
}

/// Runs programs with one `acc` binary on a list of devices.
pub struct Runner {
    pub acc: PathBuf,
    /// The devices as given (`host`, `emulated:1`, `emulated@3`, see [`DeviceSpec`]).
    pub devices: Vec<String>,
    pub timeout: Duration,
    pub dir: PathBuf,
}

static NEXT_FILE: AtomicU64 = AtomicU64::new(0);
static NEXT_RUNNER: AtomicU64 = AtomicU64::new(0);

impl Runner {
    pub fn new(acc: PathBuf, devices: Vec<String>, timeout: Duration) -> Runner {
        // A folder per runner: a runner removes its own when dropped, and runners of one
        // process (tests on parallel threads) must not remove each other's.
        let k = NEXT_RUNNER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("acc-progen-{}-{k}", std::process::id()));
        let _ = std::fs::create_dir_all(&dir);
        Runner {
            acc,
            devices,
            timeout,
            dir,
        }
    }

    /// Runs `source` on every device (in order).
    pub fn run(&self, source: &str) -> Vec<Outcome> {
        let n = NEXT_FILE.fetch_add(1, Ordering::Relaxed);
        // The same file name for every device: diagnostics quote it.
        let path = self.dir.join(format!("p{n}.acc"));
        std::fs::write(&path, source).expect("write the program to a temporary file");
        let out = self
            .devices
            .iter()
            .map(|d| self.run_file(&path, d))
            .collect();
        let _ = std::fs::remove_file(&path);
        out
    }

    /// Runs `acc FILE --device DEVICE` with the timeout (and `ACC_EMULATED_DEVICES=N`,
    /// `ACC_EDGES_FIRST=on` for `DEVICE@N`).
    pub fn run_file(&self, path: &Path, device: &str) -> Outcome {
        let spec = DeviceSpec::parse(device).unwrap_or_else(|e| panic!("bad device: {e}"));
        let mut cmd = Command::new(&self.acc);
        if let Some(n) = spec.emulated_devices {
            cmd.env("ACC_EMULATED_DEVICES", n.to_string())
                .env("ACC_EDGES_FIRST", "on");
        }
        let mut child = cmd
            .arg(path)
            .arg("--device")
            .arg(&spec.device)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", self.acc.display()));
        let mut so = child.stdout.take().unwrap();
        let mut se = child.stderr.take().unwrap();
        // Read both pipes while waiting, so a chatty program cannot block on a full pipe.
        let so_t = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = so.read_to_end(&mut b);
            b
        });
        let se_t = std::thread::spawn(move || {
            let mut b = Vec::new();
            let _ = se.read_to_end(&mut b);
            b
        });
        let start = Instant::now();
        let mut timed_out = false;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s.code(),
                Ok(None) if start.elapsed() > self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    timed_out = true;
                    break None;
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(_) => break None,
            }
        };
        let stdout = String::from_utf8_lossy(&so_t.join().unwrap_or_default()).into_owned();
        let stderr = String::from_utf8_lossy(&se_t.join().unwrap_or_default()).into_owned();
        Outcome {
            stdout,
            stderr,
            status,
            timed_out,
        }
    }

    pub fn verdict(outcomes: &[Outcome]) -> Verdict {
        if outcomes.iter().all(|o| o.status == Some(2) && !o.timed_out) {
            return Verdict::Invalid;
        }
        let mut classes: Vec<&Outcome> = Vec::new();
        let mut groups = Vec::new();
        for o in outcomes {
            let k = match classes.iter().position(|c| *c == o) {
                Some(k) => k,
                None => {
                    classes.push(o);
                    classes.len() - 1
                }
            };
            groups.push(k);
        }
        if classes.len() == 1 {
            Verdict::Same
        } else {
            Verdict::Differ(groups)
        }
    }
}

impl Drop for Runner {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
