//! What a session holds, for people: the type of an expression, the globals with their shapes
//! and where they are present, the functions with their signatures, the devices. The REPL's
//! `:type`, `:vars`, `:funcs`, `:devices` and `:device` show these, and so can an embedder.

use acc_lang::SourceFile;
use acc_runtime::device::DeviceKind;
use acc_runtime::profile::SiteStats;

use crate::{Engine, Error};

/// A global as [`Engine::globals_info`] describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobalInfo {
    pub name: String,
    /// Its type as acc writes it: `i64`, `f64[,]`.
    pub ty: String,
    /// An array's extents; `None` for a scalar, or an array whose `let` has not run.
    pub shape: Option<Vec<usize>>,
    /// The devices with memory of their own on which some of the array is present
    /// (`emulated:0`, `nvidia:1`), in that order.
    pub present_on: Vec<String>,
}

/// A function as [`Engine::functions_info`] describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionInfo {
    pub name: String,
    /// `fn dot(x: f64[], y: f64[]) -> f64`.
    pub signature: String,
}

/// A device as [`Engine::devices_info`] describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceInfo {
    /// `host:0`, `multicore:0`, `emulated:1`, `nvidia:0`: what `--device` and
    /// [`Engine::select_device`] take.
    pub name: String,
    /// A GPU's total and free memory in bytes (`None` for the devices of host memory).
    pub memory: Option<(u64, u64)>,
    /// Compute regions run here now.
    pub current: bool,
}

/// One construct's line of the profile ([`Engine::profile_sites`]): where it is and what it
/// did, the numbers the `--profile` report prints, for a display of one's own (a notebook's
/// table).
#[derive(Clone, Debug)]
pub struct ProfileSite {
    /// `parallel loop`, `data`, `update`, …
    pub construct: String,
    /// The name the source was run under (a file, `<repl:3>`).
    pub file: String,
    pub line: u32,
    pub stats: SiteStats,
}

impl Engine {
    /// Compile `text` (named `name` in messages) against the session as [`Engine::run`] would,
    /// without running it or keeping anything: its diagnostics, or `Ok` when it would compile.
    /// A notebook checks a cell whole before it runs the cell in parts.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("a.acc", "let n = 4")?;
    /// engine.check("b.acc", "let m = n * 2\nprint(m)")?;
    /// let err = engine.check("c.acc", "print(n)\nprint(nope)").unwrap_err();
    /// assert!(err.to_string().contains("c.acc:2:7"), "{err}");
    /// assert!(engine.run("d.acc", "print(m)").is_err()); // `m` was not kept
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn check(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let source = SourceFile::new(name, text);
        self.frontend
            .compile_trial(&source, |_| ())
            .map_err(|diagnostics| Error::Compile {
                diagnostics,
                source,
            })
    }

    /// The profile so far, construct by construct in source order (with profiling on:
    /// [`Engine::set_profiling`]); the sites of code the engine has freed are left out.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.select_device("emulated")?;
    /// engine.set_profiling(true);
    /// engine.run("a.acc", "let a = zeros(8)\nacc parallel loop copy(a)\nfor i in 0..8 { a[i] = 1.0 }")?;
    /// let sites = engine.profile_sites();
    /// let region = sites.iter().find(|s| s.construct == "parallel loop").expect("the region");
    /// assert_eq!((region.file.as_str(), region.line), ("a.acc", 2));
    /// assert_eq!(region.stats.launches.count, 1);
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn profile_sites(&mut self) -> Vec<ProfileSite> {
        let profiler = self.context.devices().profiler().clone();
        let resolve = self.site_resolver();
        let mut sites: Vec<ProfileSite> = profiler
            .sites()
            .into_iter()
            .map(|(site, stats)| {
                let (construct, file, line) = resolve(site);
                ProfileSite {
                    construct,
                    file,
                    line,
                    stats,
                }
            })
            .filter(|s| !s.file.is_empty())
            .collect();
        sites.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
        sites
    }

    /// The type of the expression `text`, as acc writes it (`f32[,]`), checked against the
    /// session's globals and functions; nothing is run or kept.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("a.acc", "let a = zeros(f32, 3, 4)")?;
    /// assert_eq!(engine.type_of("a")?, "f32[,]");
    /// assert_eq!(engine.type_of("a[0, 0] * 2.0")?, "f32");
    /// assert!(engine.type_of("let b = 1").is_err()); // a statement, not an expression
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn type_of(&mut self, text: &str) -> Result<String, Error> {
        let source = SourceFile::new("<type>", text);
        match self.frontend.expression_type(&source) {
            Ok(ty) => Ok(ty.to_string()),
            Err(diagnostics) => Err(Error::Compile {
                diagnostics,
                source,
            }),
        }
    }

    /// The compiler's feedback on `text` as `--info` prints it (LANGUAGE.md 8): each compute
    /// construct's data clauses and each loop's schedule with its reason, then the compile's
    /// warnings, checked against the session's globals and functions; nothing is run or kept.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("a.acc", "let a = zeros(8)")?;
    /// let info = engine.feedback("b.acc", "acc kernels loop\nfor i in 1..8 { a[i] = a[i - 1] }")?;
    /// assert!(info.contains("b.acc:1:1:   loop `i`: sequential (not parallelized"));
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn feedback(&mut self, name: &str, text: &str) -> Result<String, Error> {
        let source = SourceFile::new(name, text);
        let found = self.frontend.compile_trial(&source, |compiled| {
            let info = acc_lang::analysis::feedback(&source, &compiled.hir, &compiled.analysis);
            let warnings = acc_lang::diag::render_plain(&compiled.warnings, &source);
            warnings + &info
        });
        found.map_err(|diagnostics| Error::Compile {
            diagnostics,
            source,
        })
    }

    /// Every global, sorted by name, with its type, an array's shape, and the devices where
    /// it is present.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("a.acc", "let a = zeros(3, 4)\nlet n: i32 = 2")?;
    /// let globals = engine.globals_info();
    /// assert_eq!(globals[0].name, "a");
    /// assert_eq!(globals[0].ty, "f64[,]");
    /// assert_eq!(globals[0].shape, Some(vec![3, 4]));
    /// assert_eq!((globals[1].ty.as_str(), &globals[1].shape), ("i32", &None));
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn globals_info(&mut self) -> Vec<GlobalInfo> {
        let globals = self.frontend.globals();
        let mut out = Vec::with_capacity(globals.len());
        for (name, var, ty) in globals {
            let array = match (ty.is_array(), self.slots.get(&var)) {
                (true, Some(&slot)) => self.context.globals().get(slot as usize).copied(),
                _ => None,
            };
            let array = array
                .map(|bits| bits as usize as *mut acc_runtime::abi::ArrayHeader)
                .filter(|a| !a.is_null());
            let (shape, present_on) = match array {
                // SAFETY: an array global's slot holds a live array (or null, filtered out).
                Some(a) => unsafe {
                    let shape = acc_runtime::array::shape(a);
                    let present_on = match self.context.devices_if_made() {
                        Some(devices) => devices.present_on(a),
                        None => Vec::new(),
                    };
                    (
                        Some(shape.iter().map(|&d| d as usize).collect()),
                        present_on.iter().map(ToString::to_string).collect(),
                    )
                },
                None => (None, Vec::new()),
            };
            out.push(GlobalInfo {
                name,
                ty: ty.to_string(),
                shape,
                present_on,
            });
        }
        out
    }

    /// Every function a script can call, its own and those the embedder registered, sorted by
    /// name, with its signature.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.run("a.acc", "fn dot(x: f64[], y: f64[]) -> f64 { return 0.0 }")?;
    /// let f = &engine.functions_info()[0];
    /// assert_eq!((f.name.as_str(), f.signature.as_str()), ("dot", "fn dot(x: f64[], y: f64[]) -> f64"));
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn functions_info(&self) -> Vec<FunctionInfo> {
        self.frontend
            .function_signatures()
            .into_iter()
            .map(|(name, signature)| FunctionInfo { name, signature })
            .collect()
    }

    /// Every device of the session: `host:0`, `multicore:0`, the emulated devices and the
    /// GPUs (with their memory), the current one marked.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.select_device("emulated:1")?;
    /// let devices = engine.devices_info();
    /// let current: Vec<&str> = devices.iter().filter(|d| d.current).map(|d| d.name.as_str()).collect();
    /// assert_eq!(current, ["emulated:1"]);
    /// assert!(devices.iter().any(|d| d.name == "host:0"));
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn devices_info(&mut self) -> Vec<DeviceInfo> {
        let devices = self.context.devices();
        let (kind, num) = devices.current();
        let mut out = Vec::new();
        for k in [
            DeviceKind::Host,
            DeviceKind::Multicore,
            DeviceKind::Emulated,
            DeviceKind::Nvidia,
        ] {
            for n in 0..devices.count(k.code()) {
                let memory = match k {
                    DeviceKind::Nvidia => devices.gpu_memory(n),
                    _ => None,
                };
                out.push(DeviceInfo {
                    name: format!("{}:{n}", k.name()),
                    memory,
                    current: (k, n) == (kind, num),
                });
            }
        }
        out
    }

    /// The device compute regions run on now, as `--device` names it (`multicore:0`).
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.select_device("host")?;
    /// assert_eq!(engine.current_device(), "host:0");
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn current_device(&mut self) -> String {
        let (kind, num) = self.context.devices().current();
        format!("{}:{num}", kind.name())
    }

    /// Makes `spec` (`nvidia`, `emulated:1`: what `--device` takes) the current device, as
    /// `acc_set_device_num` does; the data on every device stays.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.select_device("emulated:1")?;
    /// engine.run("a.acc", "print(acc_get_device_num(acc_device_emulated))")?; // 1
    /// assert!(engine.select_device("emulated:99").is_err());
    /// assert!(engine.select_device("tpu").is_err());
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn select_device(&mut self, spec: &str) -> Result<(), Error> {
        let (name, num) = match spec.split_once(':') {
            Some((name, num)) => (name, Some(num)),
            None => (spec, None),
        };
        let kind = DeviceKind::from_name(name).ok_or_else(|| {
            Error::Usage(format!(
                "unknown device type `{}`: expected nvidia, host, multicore or emulated",
                name.trim()
            ))
        })?;
        let num = match num.map(|n| n.trim().parse::<usize>()) {
            None => 0,
            Some(Ok(n)) => n,
            Some(Err(_)) => {
                return Err(Error::Usage(format!(
                    "`{spec}`: the device number must be a number >= 0"
                )))
            }
        };
        let devices = self.context.devices();
        devices
            .select(kind, num)
            .map_err(|e| Error::Usage(e.message("")))
    }

    /// Starts or stops collecting the profile that [`Engine::profile_report`] and
    /// [`Engine::profile_totals`] give (`--profile` from the start), keeping the devices and
    /// their data. What was collected before stays in the report.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.select_device("emulated")?;
    /// engine.set_profiling(true);
    /// assert!(engine.profiling());
    /// engine.run("a.acc", "let a = zeros(8)\nacc parallel loop copy(a)\nfor i in 0..8 { a[i] = 1.0 }")?;
    /// assert_eq!(engine.profile_totals().launches.count, 1);
    /// engine.set_profiling(false);
    /// assert!(!engine.profiling());
    /// engine.run("b.acc", "acc parallel loop copy(a)\nfor i in 0..8 { a[i] = 2.0 }")?;
    /// assert_eq!(engine.profile_totals().launches.count, 1);
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn set_profiling(&mut self, on: bool) {
        self.context.devices().set_profile(on);
    }

    /// Forgets what the profile collected so far (the REPL's `:profile off` after showing
    /// it): a profile names the code it measured, which the engine frees once profiling is
    /// off.
    ///
    /// ```
    /// let mut engine = acc::Engine::new()?;
    /// engine.select_device("emulated")?;
    /// engine.set_profiling(true);
    /// engine.run("a.acc", "let a = zeros(8)\nacc parallel loop copy(a)\nfor i in 0..8 { a[i] = 1.0 }")?;
    /// engine.clear_profile();
    /// assert_eq!(engine.profile_totals().launches.count, 0);
    /// # Ok::<(), acc::Error>(())
    /// ```
    pub fn clear_profile(&mut self) {
        self.context.devices().profiler().reset();
    }

    /// Whether the profile is being collected ([`Engine::set_profiling`], `--profile`).
    pub fn profiling(&mut self) -> bool {
        self.context.devices().options().profile.profile
    }
}
