//! Run-time errors: what compiled code's checks and the library's functions record in the
//! context. The engine turns a `RunError` into a diagnostic with the site's source location.

use std::fmt;

/// A recorded run-time error and where it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct RunError {
    pub kind: RunErrorKind,
    /// The `ir::SiteId` of the check that failed; `None` for functions that take no site
    /// (array constructors, `param`): the engine points at the statement being run or at
    /// nothing.
    pub site: Option<u32>,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq)]
pub enum RunErrorKind {
    /// `a[…]`: `index` outside `0..shape[dim]`. The array's name is the site's `what`.
    Bounds {
        index: i64,
        dim: u32,
        shape: Vec<i64>,
    },
    /// Integer `/` or `%` by zero.
    DivZero,
    /// `assert(cond[, message])` with `cond` false.
    AssertFailed { message: Option<String> },
    /// An array constructor (or `iota`/`linspace`) given a negative extent or count.
    NegativeExtent { dim: usize, extent: i64 },
    /// An array whose size in bytes does not fit in memory's address range.
    TooLarge { shape: Vec<i64> },
    /// The allocator refused.
    OutOfMemory { bytes: usize },
    /// `size(a, d)` with `d` outside `0..rank`.
    BadDimension { dim: i64, rank: u32 },
    /// `reshape(a, …)` to a shape with a different element count.
    ReshapeMismatch { from: Vec<i64>, to: Vec<i64> },
    /// `maximum`/`minimum` of an empty array.
    EmptyReduction { function: &'static str },
    /// `--set name=value` whose value is not a `ty`.
    BadParam {
        name: String,
        value: String,
        ty: &'static str,
    },
    /// A `present` clause (or `default(present)`) for data not on the device. The variable's
    /// name is the site's `what`; `section` is the clause's section after it (`[0:10]`, or
    /// empty for the whole array); `device` like `emulated:0`.
    NotPresent { section: String, device: String },
    /// A section that overlaps present data without lying inside one present section
    /// (`present` as `section`).
    PartlyPresent {
        section: String,
        present: String,
        device: String,
    },
    /// `update` (without `if_present`) of data not on the device.
    UpdateAbsent { section: String, device: String },
    /// A data clause's section outside its array (`a[5:10]` of a 12-element array).
    BadSection(SectionError),
    /// A data clause's section of a `reshape` view that is not a section (a box) of the
    /// shape of the storage the view shares (`storage`), which presence is kept in.
    ViewSection { section: String, storage: Vec<i64> },
    /// An `async`/`wait` queue argument that is not a queue (a negative number other than
    /// the `acc_async_*` values).
    BadQueue { queue: i64 },
    /// A launch size (`num_gangs`, `num_workers`, `vector_length`) below 1, or a gang count
    /// above `MAX_GANGS`.
    BadLaunchSize { clause: &'static str, value: i64 },
    /// A counted loop whose `step`, computed at run time, is 0.
    ZeroStep,
    /// A call found the thread's stack exhausted (runaway recursion). The site is the called
    /// function's name.
    StackOverflow,
    /// The embedding program interrupted the run (`acc::InterruptHandle`); the site is the loop
    /// it stopped in.
    Interrupted,
    /// The run took longer than the embedding program's `Limits::max_run_time`.
    TimeLimit,
    /// A call nested deeper than the embedding program's `Limits::max_call_depth`; the site is
    /// the called function's name.
    CallDepth { limit: u64 },
    /// A function of the embedding program returned an error.
    HostFunction { name: String, message: String },
    /// `imshow`/`plot` could not draw its picture (an empty array, lengths that differ) or
    /// write its file.
    Picture {
        message: String,
        help: Option<String>,
    },
    /// `acc_set_device_num`/`acc_set_device_type` asked for a device that does not exist.
    NoSuchDevice { message: String },
    /// The device failed (out of device memory, a launch failure): the runtime stays usable.
    Device { message: String },
    /// Compiled code broke the ABI (a bad element code or rank): a compiler bug.
    Internal { message: String },
    /// A loop the compiler parallelized because `written` and `other` were different arrays
    /// (LANGUAGE.md 7.6) was launched with both naming one storage (a later REPL input or the
    /// embedding program bound one to the other). The site is the loop.
    SharedStorage { written: String, other: String },
    /// An error in one device's part of a launch split over devices (LANGUAGE.md 7.11):
    /// `error` as that device reported it (indices are global), and the device's name and
    /// block of the split loop.
    OnDevice {
        device: String,
        block: String,
        error: Box<RunErrorKind>,
    },
    /// A `data … devices(…)` region that cannot hold its data split (a section, data already
    /// on a device outside such a region).
    SplitData { message: String, help: String },
    /// An MPI built-in failed (a rank outside the world, a message of another size than the
    /// receiving section, MPI's own error). The `acc` command ends every rank after it.
    Mpi {
        message: String,
        help: Option<String>,
    },
}

impl RunErrorKind {
    /// The error's message. `what` is the site's text (the indexed array's name, the asserted
    /// expression), empty when there is no site.
    pub fn message(&self, what: &str) -> String {
        match self {
            RunErrorKind::Bounds { index, dim, shape } => {
                let name = if what.is_empty() {
                    "the array".to_string()
                } else {
                    format!("`{what}`")
                };
                if shape.len() == 1 {
                    format!(
                        "index out of bounds: index {index} for {name} of length {}",
                        shape[0]
                    )
                } else {
                    format!(
                        "index out of bounds: index {index} in dimension {dim} of {name} with shape {}",
                        shape_text(shape)
                    )
                }
            }
            RunErrorKind::AssertFailed { message: Some(m) } => format!("assertion failed: {m}"),
            RunErrorKind::AssertFailed { message: None } if !what.is_empty() => {
                format!("assertion failed: `{what}`")
            }
            RunErrorKind::NotPresent { section, device } => {
                format!("`{what}{section}` is not present on {device}")
            }
            RunErrorKind::PartlyPresent {
                section,
                present,
                device,
            } => format!(
                "`{what}{section}` is only partly present on {device} (present: `{what}{present}`)"
            ),
            RunErrorKind::UpdateAbsent { section, device } => {
                format!("`update` of `{what}{section}`, which is not present on {device}")
            }
            RunErrorKind::BadSection(e) => e.message(what),
            RunErrorKind::OnDevice {
                device,
                block,
                error,
            } => format!("{} (on {device}, which ran {block})", error.message(what)),
            RunErrorKind::SplitData { message, .. } => format!("`{what}`: {message}"),
            RunErrorKind::ViewSection { section, storage } => format!(
                "section `{what}{section}` of a reshaped array is not a section of the data it \
                 shares, of shape {}",
                shape_text(storage)
            ),
            _ => self.to_string(),
        }
    }
}

impl RunErrorKind {
    /// The label under the offending source text.
    pub fn label(&self) -> String {
        match self {
            RunErrorKind::Bounds { .. } => "index out of bounds here".into(),
            RunErrorKind::DivZero => "the divisor is zero".into(),
            RunErrorKind::AssertFailed { .. } => "this assertion is false".into(),
            RunErrorKind::NegativeExtent { .. } => "negative extent".into(),
            RunErrorKind::BadDimension { .. } => "no such dimension".into(),
            RunErrorKind::ReshapeMismatch { .. } => "element counts differ".into(),
            RunErrorKind::EmptyReduction { .. } => "the array is empty".into(),
            RunErrorKind::NotPresent { .. } => "not present on the device".into(),
            RunErrorKind::PartlyPresent { .. } => "only partly present".into(),
            RunErrorKind::UpdateAbsent { .. } => "not present on the device".into(),
            RunErrorKind::BadSection { .. } => "section out of range".into(),
            RunErrorKind::ViewSection { .. } => "not a section of the shared data".into(),
            RunErrorKind::BadQueue { .. } => "not a queue".into(),
            RunErrorKind::BadLaunchSize { clause, .. } => format!("this `{clause}` value"),
            RunErrorKind::ZeroStep => "the step is 0".into(),
            RunErrorKind::BadParam { ty, .. } => format!("its `--set` value is not {ty}"),
            RunErrorKind::StackOverflow => "called with the stack exhausted".into(),
            RunErrorKind::Interrupted | RunErrorKind::TimeLimit => "stopped in this loop".into(),
            RunErrorKind::CallDepth { .. } => "called one level too deep".into(),
            RunErrorKind::HostFunction { .. } => "in this call".into(),
            RunErrorKind::Picture { .. } => "this picture".into(),
            RunErrorKind::OnDevice { error, .. } => error.label(),
            RunErrorKind::SplitData { .. } => "in this `devices(…)` region".into(),
            RunErrorKind::Mpi { .. } => "in this MPI call".into(),
            _ => "here".into(),
        }
    }

    /// How to fix it, where that is known.
    pub fn help(&self) -> Option<String> {
        match self {
            RunErrorKind::Bounds { dim, shape, .. } => {
                let extent = shape.get(*dim as usize).copied().unwrap_or(0);
                Some(if extent == 0 {
                    "the dimension is empty: no index is valid".into()
                } else {
                    format!("valid indices are 0 to {}", extent - 1)
                })
            }
            RunErrorKind::DivZero => Some("check the divisor before dividing".into()),
            RunErrorKind::BadParam { .. } => Some("change the `--set` value".into()),
            RunErrorKind::NotPresent { .. } => Some(
                "put the data on the device first (`acc data copyin(…)` or `acc enter data`), \
                 or use `copy`/`copyin` instead of `present`"
                    .into(),
            ),
            RunErrorKind::PartlyPresent { .. } => Some(
                "name a section that lies inside the present one, or enter the whole array".into(),
            ),
            RunErrorKind::UpdateAbsent { .. } => {
                Some("enter the data first, or add `if_present` to skip absent data".into())
            }
            RunErrorKind::Picture { help, .. } => help.clone(),
            RunErrorKind::ViewSection { .. } => Some(
                "presence is kept for the array a `reshape` shares: name elements that form a \
                 section of that array (whole rows, or the whole array)"
                    .into(),
            ),
            RunErrorKind::BadQueue { .. } => {
                Some("queues are integers >= 0 (`async` alone uses the default queue)".into())
            }
            RunErrorKind::BadLaunchSize { clause, .. } => Some(format!(
                "`{clause}` takes a count from 1 to {}",
                acc_abi::MAX_GANGS
            )),
            RunErrorKind::ZeroStep => {
                Some("a loop's step must not be 0: it would never reach its end".into())
            }
            RunErrorKind::StackOverflow => Some(
                "a recursion without an end, or one too deep for the stack: check the case that stops it"
                    .into(),
            ),
            RunErrorKind::OnDevice { error, .. } => error.help(),
            RunErrorKind::SplitData { help, .. } => Some(help.clone()),
            RunErrorKind::Mpi { help, .. } => help.clone(),
            RunErrorKind::SharedStorage { written, other } => Some(format!(
                "add `acc loop seq` before the loop, or give `{written}` its own storage with \
                 `{written} = copy({other})`"
            )),
            _ => None,
        }
    }
}

impl fmt::Display for RunErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunErrorKind::Bounds { .. } => f.write_str(&self.message("")),
            RunErrorKind::DivZero => f.write_str("integer division by zero"),
            RunErrorKind::AssertFailed { message: Some(m) } => write!(f, "assertion failed: {m}"),
            RunErrorKind::AssertFailed { message: None } => f.write_str("assertion failed"),
            RunErrorKind::NegativeExtent { dim, extent } => {
                write!(f, "negative array extent {extent} in dimension {dim}")
            }
            RunErrorKind::TooLarge { shape } => {
                write!(f, "an array of shape {} is too large", shape_text(shape))
            }
            RunErrorKind::OutOfMemory { bytes } => {
                write!(f, "out of memory allocating an array of {bytes} bytes")
            }
            RunErrorKind::BadDimension { dim, rank } => write!(
                f,
                "dimension {dim} out of range for an array of rank {rank} (expected 0 to {})",
                i64::from(*rank) - 1
            ),
            RunErrorKind::ReshapeMismatch { from, to } => write!(
                f,
                "cannot reshape an array of shape {} ({} elements) to {} ({} elements)",
                shape_text(from),
                count(from),
                shape_text(to),
                count(to)
            ),
            RunErrorKind::EmptyReduction { function } => {
                write!(f, "`{function}` of an empty array")
            }
            RunErrorKind::BadParam { name, value, ty } => {
                write!(f, "parameter `{name}` expects {ty}, found `{value}`")
            }
            RunErrorKind::NotPresent { .. }
            | RunErrorKind::PartlyPresent { .. }
            | RunErrorKind::UpdateAbsent { .. }
            | RunErrorKind::ViewSection { .. } => f.write_str(&self.message("the data")),
            RunErrorKind::BadSection(e) => f.write_str(&e.message("the array")),
            RunErrorKind::BadQueue { queue } => write!(f, "`{queue}` is not an async queue"),
            RunErrorKind::BadLaunchSize { clause, value } if *value < 1 => {
                write!(f, "`{clause}({value})`: a count must be at least 1")
            }
            RunErrorKind::BadLaunchSize { clause, value } => write!(
                f,
                "`{clause}({value})`: above {}, the largest count a device runs",
                acc_abi::MAX_GANGS
            ),
            RunErrorKind::ZeroStep => f.write_str("a `for` loop with a step of 0"),
            RunErrorKind::StackOverflow => {
                f.write_str("recursion too deep: the call stack is full")
            }
            RunErrorKind::Interrupted => f.write_str("the run was interrupted"),
            RunErrorKind::HostFunction { name, message } => write!(f, "`{name}` failed: {message}"),
            RunErrorKind::Picture { message, .. } => f.write_str(message),
            RunErrorKind::CallDepth { limit } => {
                write!(f, "calls nested deeper than the limit of {limit}")
            }
            RunErrorKind::TimeLimit => f.write_str("the run exceeded its time limit"),
            RunErrorKind::NoSuchDevice { message } => f.write_str(message),
            RunErrorKind::Device { message } => f.write_str(message),
            RunErrorKind::Mpi { message, .. } => write!(f, "MPI: {message}"),
            RunErrorKind::OnDevice { .. } | RunErrorKind::SplitData { .. } => {
                f.write_str(&self.message(""))
            }
            RunErrorKind::Internal { message } => write!(f, "internal error: {message}"),
            RunErrorKind::SharedStorage { written, other } => write!(
                f,
                "`{written}` and `{other}` are the same array, but this loop was parallelized \
                 because they were different: its iterations would race"
            ),
        }
    }
}

/// One range of a section as written: `start:count`, either part optional (`a[:n]`, `a[i:]`).
pub type SectionRange = (Option<i64>, Option<i64>);

/// A section that does not fit its array, from `presence::Section::from_ranges`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionError {
    /// The ranges as written, and the array's extents.
    pub ranges: Vec<SectionRange>,
    pub dims: Vec<i64>,
    pub kind: SectionErrorKind,
}

/// What is wrong with a section. Dimensions are numbered from 0, as in `size(a, d)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SectionErrorKind {
    /// More ranges than the array has dimensions.
    TooManyRanges,
    NegativeStart {
        dim: usize,
        start: i64,
    },
    NegativeCount {
        dim: usize,
        count: i64,
    },
    /// The start is past the end of the dimension (a start equal to the extent is allowed: it
    /// gives an empty section).
    StartPastEnd {
        dim: usize,
        start: i64,
    },
    /// `start + count` is past the end of the dimension.
    PastEnd {
        dim: usize,
    },
}

impl SectionError {
    /// The error as a run-time error message, for the array called `name`.
    pub fn message(&self, name: &str) -> String {
        let written = self.written(name);
        let rank = self.dims.len();
        // Rank-1 arrays have a length, like in index errors; higher ranks name the dimension.
        let end_of = |dim: usize| {
            let extent = self.dims.get(dim).copied().unwrap_or(0);
            if rank == 1 {
                format!("the end of `{name}` (length {extent})")
            } else {
                format!("the end of dimension {dim} of `{name}` (extent {extent})")
            }
        };
        let in_dim = |dim: usize| {
            if rank == 1 {
                String::new()
            } else {
                format!(" in dimension {dim}")
            }
        };
        match self.kind {
            SectionErrorKind::TooManyRanges => format!(
                "section `{written}` has {} ranges but `{name}` has rank {rank}",
                self.ranges.len()
            ),
            SectionErrorKind::NegativeStart { dim, start } => format!(
                "section `{written}` has a negative start ({start}){}",
                in_dim(dim)
            ),
            SectionErrorKind::NegativeCount { dim, count } => format!(
                "section `{written}` has a negative count ({count}){}",
                in_dim(dim)
            ),
            SectionErrorKind::StartPastEnd { dim, .. } => {
                format!("section `{written}` starts past {}", end_of(dim))
            }
            SectionErrorKind::PastEnd { dim } => {
                format!("section `{written}` runs past {}", end_of(dim))
            }
        }
    }

    /// The section as the program wrote it: `a[5:10]`, `a[:n]`, `a[2:]`.
    fn written(&self, name: &str) -> String {
        let part = |v: Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
        let ranges: Vec<String> = self
            .ranges
            .iter()
            .map(|&(start, count)| format!("{}:{}", part(start), part(count)))
            .collect();
        format!("{name}[{}]", ranges.join(", "))
    }
}

/// `[3, 4]`.
pub fn shape_text(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(i64::to_string).collect();
    format!("[{}]", dims.join(", "))
}

fn count(shape: &[i64]) -> i128 {
    shape.iter().map(|&d| i128::from(d)).product()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let b = RunErrorKind::Bounds {
            index: 10,
            dim: 0,
            shape: vec![10],
        };
        assert_eq!(
            b.message("a"),
            "index out of bounds: index 10 for `a` of length 10"
        );
        let b = RunErrorKind::Bounds {
            index: -1,
            dim: 1,
            shape: vec![3, 4],
        };
        assert_eq!(
            b.message("grid"),
            "index out of bounds: index -1 in dimension 1 of `grid` with shape [3, 4]"
        );
        assert_eq!(
            b.to_string(),
            "index out of bounds: index -1 in dimension 1 of the array with shape [3, 4]"
        );
        let a = RunErrorKind::AssertFailed { message: None };
        assert_eq!(a.message("x > 0"), "assertion failed: `x > 0`");
        assert_eq!(a.message(""), "assertion failed");
        let a = RunErrorKind::AssertFailed {
            message: Some("x must be positive".into()),
        };
        assert_eq!(a.message("x > 0"), "assertion failed: x must be positive");
        let r = RunErrorKind::ReshapeMismatch {
            from: vec![6],
            to: vec![4, 2],
        };
        assert_eq!(
            r.message(""),
            "cannot reshape an array of shape [6] (6 elements) to [4, 2] (8 elements)"
        );
        let p = RunErrorKind::BadParam {
            name: "n".into(),
            value: "abc".into(),
            ty: "i64",
        };
        assert_eq!(p.to_string(), "parameter `n` expects i64, found `abc`");
        let d = RunErrorKind::BadDimension { dim: 2, rank: 2 };
        assert_eq!(
            d.to_string(),
            "dimension 2 out of range for an array of rank 2 (expected 0 to 1)"
        );
        assert_eq!(
            RunErrorKind::DivZero.message("x"),
            "integer division by zero"
        );
    }
}
