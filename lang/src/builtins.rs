//! The built-in functions and constants (LANGUAGE.md sections 6 and 7.10): one table shared by
//! the checker, the standard library and both back ends.
//!
//! After checking, a `hir::ExprKind::Builtin(b, args)` has these arguments (type arguments such
//! as the `f32` of `zeros(f32, n)` are dropped; the call's result type carries them):
//! - array constructors `zeros ones random`: the dimensions, each `i64`; `fill`: the value (the
//!   element type) then the dimensions (`i64`); `iota(n: i64)`; `linspace(a: f64, b: f64, n: i64)`.
//! - `len(a)`, `rank(a)`, `copy(a)`, `sum product maximum minimum (a)`: the array;
//!   `size(a, d: i64)`; `reshape(a, dims: i64…)`.
//! - math: each argument has the instantiated type (the result type, or for `isnan isinf
//!   isfinite` the float type tested); integer arguments of the float-only functions were
//!   converted to `f64`, as in C.
//! - `print(…)`: any values (strings, scalars, arrays). `printf(fmt: string, …)`: `fmt` is an
//!   `ExprKind::Str` that `parse_format` accepts, and each argument matches its conversion
//!   (integers keep their type, floats keep theirs, `%s` takes a string, `%c` an integer).
//! - `assert(cond: bool[, msg: string])`, `exit(code: i32)`, `seed(s: i64)`, `clock()`,
//!   `param(name: string, default)` whose result has the default's (scalar) type.
//! - `imshow(a[, path])`: the rank-2 array, then the path; `plot([x,] y[, path])`: the rank-1
//!   arrays, then the path. The path is an `ExprKind::Str` when the call names one; after
//!   lowering it is an `i64` constant, the `ir::StringId` of the path or `NO_PATH`.
//! - runtime routines: device types, device numbers, queues and property ids are `i32`; the data
//!   routines (`acc_copyin` …, `acc_is_present`) take an array or an `ExprKind::Section`.
//! - MPI: `mpi_allreduce(x, op: i32)` with `x` a scalar (the result has its type) or an array or
//!   `ExprKind::Section` (void), `op` the constant index of the string in `MPI_OPS`;
//!   `mpi_bcast(x, root: i32)` likewise; `mpi_send(s, dest: i32)`, `mpi_recv(s, src: i32)`,
//!   `mpi_sendrecv(s, dest: i32, r, src: i32)` with `s`, `r` arrays or sections (one element
//!   type); a section's single index `i` is the range `i:1`.

use crate::ast::ScalarType;

/// `print` of an array shows a dimension longer than this by its first and last entries around
/// `...` (the library's formatter; the REPL heads such an array with its shape).
pub const PRINT_ELIDE_ABOVE: usize = 10;

/// How a built-in's arguments are checked and what it returns (the checker's guide; the
/// signature text is what error messages show).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// `[T,] d0, …`: optional leading element-type name, then 1..=6 dimensions. `f64` by default.
    ArrayOfType,
    /// `v, d0, …`: an array of `v`'s type.
    Fill,
    /// Fixed scalar parameters and result (`None` for void).
    Fixed(&'static [ScalarType], Option<ScalarType>),
    /// One array argument; the result depends on the function (`len`, `sum`, …).
    ArrayQuery,
    /// Generic math over `f32`/`f64` with this many arguments (integers convert to `f64`).
    FloatMath(u8),
    /// Generic over integers and floats with this many arguments (`abs min max`).
    NumMath(u8),
    /// `isnan isinf isfinite`: a float, giving bool.
    FloatTest,
    /// A data routine taking an array or a section (`acc_copyin(a[0:n])`); result bool or void.
    DataRoutine(Option<ScalarType>),
    /// Checked by hand: `size reshape linspace iota print printf assert param acc_memcpy_d2d`.
    Special,
}

macro_rules! builtins {
    ($($variant:ident = $name:literal : $shape:expr, $sig:literal;)*) => {
        /// A built-in function.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Builtin {
            $($variant,)*
        }

        impl Builtin {
            pub const ALL: &'static [Builtin] = &[$(Builtin::$variant,)*];

            /// The name a script calls it by.
            pub fn name(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $name,)*
                }
            }

            /// How its arguments are checked.
            pub fn shape(self) -> Shape {
                match self {
                    $(Builtin::$variant => $shape,)*
                }
            }

            /// Its signature as error messages show it.
            pub fn signature(self) -> &'static str {
                match self {
                    $(Builtin::$variant => $sig,)*
                }
            }
        }
    };
}

use ScalarType::{Bool as B, F64, I32, I64};

builtins! {
    // Arrays
    Zeros = "zeros": Shape::ArrayOfType, "zeros([T,] d0, …) -> T[…] (T defaults to f64)";
    Ones = "ones": Shape::ArrayOfType, "ones([T,] d0, …) -> T[…] (T defaults to f64)";
    Random = "random": Shape::ArrayOfType, "random([T,] d0, …) -> T[…] (T defaults to f64)";
    Fill = "fill": Shape::Fill, "fill(v: T, d0, …) -> T[…]";
    Iota = "iota": Shape::Special, "iota(n) -> i64[]";
    Linspace = "linspace": Shape::Special, "linspace(a: f64, b: f64, n) -> f64[]";
    Seed = "seed": Shape::Fixed(&[I64], None), "seed(s: i64)";
    Len = "len": Shape::ArrayQuery, "len(a: T[…]) -> i64";
    Size = "size": Shape::Special, "size(a: T[…], d) -> i64";
    Rank = "rank": Shape::ArrayQuery, "rank(a: T[…]) -> i64";
    Copy = "copy": Shape::ArrayQuery, "copy(a: T[…]) -> T[…]";
    Reshape = "reshape": Shape::Special, "reshape(a: T[…], d0, …) -> T[…]";
    Sum = "sum": Shape::ArrayQuery, "sum(a: T[…]) -> T (i64 for integer arrays)";
    Product = "product": Shape::ArrayQuery, "product(a: T[…]) -> T (i64 for integer arrays)";
    Maximum = "maximum": Shape::ArrayQuery, "maximum(a: T[…]) -> T";
    Minimum = "minimum": Shape::ArrayQuery, "minimum(a: T[…]) -> T";
    // Math
    Abs = "abs": Shape::NumMath(1), "abs(x: T) -> T";
    Min = "min": Shape::NumMath(2), "min(x: T, y: T) -> T";
    Max = "max": Shape::NumMath(2), "max(x: T, y: T) -> T";
    Sqrt = "sqrt": Shape::FloatMath(1), "sqrt(x: F) -> F";
    Cbrt = "cbrt": Shape::FloatMath(1), "cbrt(x: F) -> F";
    Exp = "exp": Shape::FloatMath(1), "exp(x: F) -> F";
    Exp2 = "exp2": Shape::FloatMath(1), "exp2(x: F) -> F";
    Expm1 = "expm1": Shape::FloatMath(1), "expm1(x: F) -> F";
    Log = "log": Shape::FloatMath(1), "log(x: F) -> F";
    Log2 = "log2": Shape::FloatMath(1), "log2(x: F) -> F";
    Log10 = "log10": Shape::FloatMath(1), "log10(x: F) -> F";
    Log1p = "log1p": Shape::FloatMath(1), "log1p(x: F) -> F";
    Pow = "pow": Shape::FloatMath(2), "pow(x: F, y: F) -> F";
    Sin = "sin": Shape::FloatMath(1), "sin(x: F) -> F";
    Cos = "cos": Shape::FloatMath(1), "cos(x: F) -> F";
    Tan = "tan": Shape::FloatMath(1), "tan(x: F) -> F";
    Asin = "asin": Shape::FloatMath(1), "asin(x: F) -> F";
    Acos = "acos": Shape::FloatMath(1), "acos(x: F) -> F";
    Atan = "atan": Shape::FloatMath(1), "atan(x: F) -> F";
    Atan2 = "atan2": Shape::FloatMath(2), "atan2(y: F, x: F) -> F";
    Sinh = "sinh": Shape::FloatMath(1), "sinh(x: F) -> F";
    Cosh = "cosh": Shape::FloatMath(1), "cosh(x: F) -> F";
    Tanh = "tanh": Shape::FloatMath(1), "tanh(x: F) -> F";
    Floor = "floor": Shape::FloatMath(1), "floor(x: F) -> F";
    Ceil = "ceil": Shape::FloatMath(1), "ceil(x: F) -> F";
    Round = "round": Shape::FloatMath(1), "round(x: F) -> F";
    Trunc = "trunc": Shape::FloatMath(1), "trunc(x: F) -> F";
    Hypot = "hypot": Shape::FloatMath(2), "hypot(x: F, y: F) -> F";
    Fma = "fma": Shape::FloatMath(3), "fma(a: F, b: F, c: F) -> F";
    Copysign = "copysign": Shape::FloatMath(2), "copysign(x: F, y: F) -> F";
    Fabs = "fabs": Shape::FloatMath(1), "fabs(x: F) -> F";
    Fmin = "fmin": Shape::FloatMath(2), "fmin(x: F, y: F) -> F";
    Fmax = "fmax": Shape::FloatMath(2), "fmax(x: F, y: F) -> F";
    Fmod = "fmod": Shape::FloatMath(2), "fmod(x: F, y: F) -> F";
    Isnan = "isnan": Shape::FloatTest, "isnan(x: F) -> bool";
    Isinf = "isinf": Shape::FloatTest, "isinf(x: F) -> bool";
    Isfinite = "isfinite": Shape::FloatTest, "isfinite(x: F) -> bool";
    // Output and control
    Print = "print": Shape::Special, "print(values…)";
    Printf = "printf": Shape::Special, "printf(\"format\", values…)";
    Clock = "clock": Shape::Fixed(&[], Some(F64)), "clock() -> f64";
    Assert = "assert": Shape::Special, "assert(cond: bool[, \"message\"])";
    Exit = "exit": Shape::Fixed(&[I32], None), "exit(code: i32)";
    Param = "param": Shape::Special, "param(\"name\", default: T) -> T";
    // Pictures (host only): written to a PNG file, or shown by the embedding program
    Imshow = "imshow": Shape::Special, "imshow(a: T[,][, \"file.png\"])";
    Plot = "plot": Shape::Special, "plot([x: T[],] y: T[][, \"file.png\"])";
    // OpenACC runtime routines (7.10)
    AccGetNumDevices = "acc_get_num_devices": Shape::Fixed(&[I32], Some(I32)),
        "acc_get_num_devices(t: i32) -> i32";
    AccSetDeviceType = "acc_set_device_type": Shape::Fixed(&[I32], None),
        "acc_set_device_type(t: i32)";
    AccGetDeviceType = "acc_get_device_type": Shape::Fixed(&[], Some(I32)),
        "acc_get_device_type() -> i32";
    AccSetDeviceNum = "acc_set_device_num": Shape::Fixed(&[I32, I32], None),
        "acc_set_device_num(n: i32, t: i32)";
    AccGetDeviceNum = "acc_get_device_num": Shape::Fixed(&[I32], Some(I32)),
        "acc_get_device_num(t: i32) -> i32";
    AccOnDevice = "acc_on_device": Shape::Fixed(&[I32], Some(B)), "acc_on_device(t: i32) -> bool";
    AccIsPresent = "acc_is_present": Shape::DataRoutine(Some(B)),
        "acc_is_present(a or a[start:count, …]) -> bool";
    AccCopyin = "acc_copyin": Shape::DataRoutine(None), "acc_copyin(a or a[start:count, …])";
    AccCreate = "acc_create": Shape::DataRoutine(None), "acc_create(a or a[start:count, …])";
    AccCopyout = "acc_copyout": Shape::DataRoutine(None), "acc_copyout(a or a[start:count, …])";
    AccDelete = "acc_delete": Shape::DataRoutine(None), "acc_delete(a or a[start:count, …])";
    AccUpdateDevice = "acc_update_device": Shape::DataRoutine(None),
        "acc_update_device(a or a[start:count, …])";
    AccUpdateSelf = "acc_update_self": Shape::DataRoutine(None),
        "acc_update_self(a or a[start:count, …])";
    AccWait = "acc_wait": Shape::Fixed(&[I32], None), "acc_wait(q: i32)";
    AccWaitAll = "acc_wait_all": Shape::Fixed(&[], None), "acc_wait_all()";
    AccWaitAsync = "acc_wait_async": Shape::Fixed(&[I32, I32], None),
        "acc_wait_async(q: i32, r: i32)";
    AccAsyncTest = "acc_async_test": Shape::Fixed(&[I32], Some(B)),
        "acc_async_test(q: i32) -> bool";
    AccAsyncTestAll = "acc_async_test_all": Shape::Fixed(&[], Some(B)),
        "acc_async_test_all() -> bool";
    AccGetProperty = "acc_get_property": Shape::Fixed(&[I32, I32, I32], Some(I64)),
        "acc_get_property(n: i32, t: i32, p: i32) -> i64";
    AccSetDefaultAsync = "acc_set_default_async": Shape::Fixed(&[I32], None),
        "acc_set_default_async(q: i32)";
    AccGetDefaultAsync = "acc_get_default_async": Shape::Fixed(&[], Some(I32)),
        "acc_get_default_async() -> i32";
    AccMemcpyD2d = "acc_memcpy_d2d": Shape::Special,
        "acc_memcpy_d2d(dst: T[…], src: T[…], dst_num: i32, src_num: i32)";
    // Across nodes (the `mpi` feature of the `acc` command): MPI_COMM_WORLD, host code only.
    MpiRank = "mpi_rank": Shape::Fixed(&[], Some(I32)), "mpi_rank() -> i32";
    MpiSize = "mpi_size": Shape::Fixed(&[], Some(I32)), "mpi_size() -> i32";
    MpiBarrier = "mpi_barrier": Shape::Fixed(&[], None), "mpi_barrier()";
    MpiWtime = "mpi_wtime": Shape::Fixed(&[], Some(F64)), "mpi_wtime() -> f64";
    MpiAllreduce = "mpi_allreduce": Shape::Special,
        "mpi_allreduce(x: T, \"op\") -> T, or mpi_allreduce(a or a[section], \"op\") in place";
    MpiBcast = "mpi_bcast": Shape::Special,
        "mpi_bcast(x: T, root: i32) -> T, or mpi_bcast(a or a[section], root: i32) in place";
    MpiSend = "mpi_send": Shape::Special, "mpi_send(a or a[section], dest: i32)";
    MpiRecv = "mpi_recv": Shape::Special, "mpi_recv(a or a[section], src: i32)";
    MpiSendrecv = "mpi_sendrecv": Shape::Special,
        "mpi_sendrecv(send: a or a[section], dest: i32, recv: b or b[section], src: i32)";
    // A Rust function the embedding program registered (`acc::Engine::register_fn`): its first
    // argument is its number (an `i64` constant), the others its own. Not callable by this
    // name, which no script can write.
    HostCall = "#host": Shape::Special, "a function registered by the embedding program";
}

impl Builtin {
    /// The built-in called `name`, if any.
    pub fn from_name(name: &str) -> Option<Builtin> {
        Builtin::ALL.iter().copied().find(|b| b.name() == name)
    }

    /// Math functions: callable on host and device.
    pub fn is_math(self) -> bool {
        matches!(
            self.shape(),
            Shape::FloatMath(_) | Shape::NumMath(_) | Shape::FloatTest
        )
    }

    /// OpenACC runtime routines (`acc_*`).
    pub fn is_runtime_routine(self) -> bool {
        self.name().starts_with("acc_")
    }

    /// The MPI built-ins (`mpi_*`): compile errors unless `mpi_enabled`.
    pub fn is_mpi(self) -> bool {
        self.name().starts_with("mpi_")
    }

    /// Allocates a new array (not allowed in device code).
    pub fn allocates(self) -> bool {
        use Builtin::*;
        matches!(
            self,
            Zeros | Ones | Random | Fill | Iota | Linspace | Copy | Reshape
        )
    }

    /// May appear in device code (compute regions and routines), LANGUAGE.md 7.9: math,
    /// `print`/`printf`, `acc_on_device`, and the array queries that read no elements.
    pub fn allowed_on_device(self) -> bool {
        use Builtin::*;
        self.is_math() || matches!(self, Print | Printf | AccOnDevice | Len | Size | Rank)
    }
}

/// The reduction operators of `mpi_allreduce(x, "op")`, as the string names them; an
/// operator's code (its index here) is `acc_runtime::transport::ReduceOp`'s.
pub const MPI_OPS: [&str; 9] = ["+", "*", "max", "min", "&", "|", "^", "&&", "||"];

static MPI_ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes the `mpi_*` built-ins available to the scripts this process compiles: the `acc`
/// command built with the `mpi` feature calls it once MPI is initialized. Without it a call
/// of one is a compile error that says how to build acc with MPI.
pub fn enable_mpi(on: bool) {
    MPI_ENABLED.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether the `mpi_*` built-ins are available (`enable_mpi`).
pub fn mpi_enabled() -> bool {
    MPI_ENABLED.load(std::sync::atomic::Ordering::Relaxed)
}

/// The last argument of `imshow`/`plot` in the IR when the call names no file: the picture
/// goes to the embedding program's display, or to `acc-plot-N.png`.
pub const NO_PATH: i64 = -1;

/// A built-in constant: device types and property names of 7.10, all `i32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BuiltinConst {
    DeviceNone,
    DeviceDefault,
    DeviceHost,
    DeviceNotHost,
    DeviceNvidia,
    DeviceMulticore,
    DeviceEmulated,
    PropertyMemory,
    PropertyFreeMemory,
}

impl BuiltinConst {
    pub const ALL: &'static [BuiltinConst] = &[
        BuiltinConst::DeviceNone,
        BuiltinConst::DeviceDefault,
        BuiltinConst::DeviceHost,
        BuiltinConst::DeviceNotHost,
        BuiltinConst::DeviceNvidia,
        BuiltinConst::DeviceMulticore,
        BuiltinConst::DeviceEmulated,
        BuiltinConst::PropertyMemory,
        BuiltinConst::PropertyFreeMemory,
    ];

    /// A device type (`acc_device_host`, …), as `acc_get_device_type` returns.
    pub fn is_device_type(self) -> bool {
        self.name().starts_with("acc_device_")
    }

    pub fn name(self) -> &'static str {
        match self {
            BuiltinConst::DeviceNone => "acc_device_none",
            BuiltinConst::DeviceDefault => "acc_device_default",
            BuiltinConst::DeviceHost => "acc_device_host",
            BuiltinConst::DeviceNotHost => "acc_device_not_host",
            BuiltinConst::DeviceNvidia => "acc_device_nvidia",
            BuiltinConst::DeviceMulticore => "acc_device_multicore",
            BuiltinConst::DeviceEmulated => "acc_device_emulated",
            BuiltinConst::PropertyMemory => "acc_property_memory",
            BuiltinConst::PropertyFreeMemory => "acc_property_free_memory",
        }
    }

    /// Its value (the checker replaces the name by this `i32` constant): a device type's
    /// `acc_abi::DeviceType` code, which the runtime uses too.
    pub fn value(self) -> i32 {
        use acc_abi::{DeviceProperty, DeviceType};
        match self {
            BuiltinConst::DeviceNone => DeviceType::None.code(),
            BuiltinConst::DeviceDefault => DeviceType::Default.code(),
            BuiltinConst::DeviceHost => DeviceType::Host.code(),
            BuiltinConst::DeviceNotHost => DeviceType::NotHost.code(),
            BuiltinConst::DeviceNvidia => DeviceType::Nvidia.code(),
            BuiltinConst::DeviceMulticore => DeviceType::Multicore.code(),
            BuiltinConst::DeviceEmulated => DeviceType::Emulated.code(),
            BuiltinConst::PropertyMemory => DeviceProperty::Memory.code(),
            BuiltinConst::PropertyFreeMemory => DeviceProperty::FreeMemory.code(),
        }
    }

    pub fn from_name(name: &str) -> Option<BuiltinConst> {
        BuiltinConst::ALL.iter().copied().find(|c| c.name() == name)
    }
}

// ---------------------------------------------------------------------------------------------
// printf formats
// ---------------------------------------------------------------------------------------------

/// One piece of a `printf` format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatPiece {
    /// Text printed as is (`%%` already turned into `%`).
    Text(String),
    /// A conversion that consumes one argument.
    Spec(FormatSpec),
}

/// `%[flags][width][.precision][length]conv`, length modifiers (`l`, `ll`) dropped: any integer
/// type is accepted for `d i u x c`, any float for `f e g`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatSpec {
    /// Any of `-+ #0`, as written.
    pub flags: String,
    pub width: Option<u32>,
    pub precision: Option<u32>,
    /// One of `d i u x f e g s c`.
    pub conv: char,
    /// Byte range of the whole `%…` in the format string.
    pub start: usize,
    pub end: usize,
}

/// What kind of argument a conversion takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Int,
    Float,
    Str,
    Char,
}

impl FormatSpec {
    pub fn arg(&self) -> FormatArg {
        match self.conv {
            'f' | 'e' | 'g' => FormatArg::Float,
            's' => FormatArg::Str,
            'c' => FormatArg::Char,
            _ => FormatArg::Int,
        }
    }

    /// The conversion as written minus the length modifier, e.g. `%5.2f`.
    pub fn text(&self) -> String {
        let mut s = format!("%{}", self.flags);
        if let Some(w) = self.width {
            s += &w.to_string();
        }
        if let Some(p) = self.precision {
            s += &format!(".{p}");
        }
        s.push(self.conv);
        s
    }
}

/// A format error: a message (a whole sentence, naming `printf`) and the byte range in the
/// format string it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    pub message: String,
    pub start: usize,
    pub end: usize,
}

/// Split a `printf` format into text and conversions.
pub fn parse_format(fmt: &str) -> Result<Vec<FormatPiece>, FormatError> {
    let bytes = fmt.as_bytes();
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    while i < bytes.len() {
        let Some(off) = fmt[i..].find('%') else {
            text.push_str(&fmt[i..]);
            break;
        };
        text.push_str(&fmt[i..i + off]);
        let start = i + off;
        let mut j = start + 1;
        if bytes.get(j) == Some(&b'%') {
            text.push('%');
            i = j + 1;
            continue;
        }
        let flags_start = j;
        while j < bytes.len() && b"-+ #0".contains(&bytes[j]) {
            j += 1;
        }
        let flags = fmt[flags_start..j].to_string();
        let number = |j: &mut usize| -> Result<Option<u32>, FormatError> {
            let s = *j;
            while *j < bytes.len() && bytes[*j].is_ascii_digit() {
                *j += 1;
            }
            if s == *j {
                return Ok(None);
            }
            fmt[s..*j].parse().map(Some).map_err(|_| FormatError {
                message: "`printf` width or precision too large".into(),
                start,
                end: *j,
            })
        };
        if bytes.get(j) == Some(&b'*') {
            return Err(FormatError {
                message: "`printf` does not support `*` widths and precisions; write the number"
                    .into(),
                start,
                end: j + 1,
            });
        }
        let width = number(&mut j)?;
        let mut precision = None;
        if bytes.get(j) == Some(&b'.') {
            j += 1;
            if bytes.get(j) == Some(&b'*') {
                return Err(FormatError {
                    message:
                        "`printf` does not support `*` widths and precisions; write the number"
                            .into(),
                    start,
                    end: j + 1,
                });
            }
            precision = Some(number(&mut j)?.unwrap_or(0));
        }
        // Length modifiers: `l`, `ll` (and `h`, `z`) are accepted and ignored.
        while j < bytes.len() && b"lhz".contains(&bytes[j]) {
            j += 1;
        }
        let Some(conv) = fmt[j..].chars().next() else {
            return Err(FormatError {
                message: "incomplete `printf` conversion at the end of the format".into(),
                start,
                end: fmt.len(),
            });
        };
        if !"diuxfegsc".contains(conv) {
            return Err(FormatError {
                message: format!("unsupported `printf` conversion `%{conv}`"),
                start,
                end: j + conv.len_utf8(),
            });
        }
        let end = j + conv.len_utf8();
        if !text.is_empty() {
            pieces.push(FormatPiece::Text(std::mem::take(&mut text)));
        }
        pieces.push(FormatPiece::Spec(FormatSpec {
            flags,
            width,
            precision,
            conv,
            start,
            end,
        }));
        i = end;
    }
    if !text.is_empty() {
        pieces.push(FormatPiece::Text(text));
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for &b in Builtin::ALL {
            assert_eq!(Builtin::from_name(b.name()), Some(b));
        }
        assert_eq!(Builtin::from_name("nope"), None);
        assert_eq!(
            BuiltinConst::from_name("acc_device_nvidia"),
            Some(BuiltinConst::DeviceNvidia)
        );
    }

    #[test]
    fn parses_formats() {
        let p = parse_format("x=%5d, %0.6f%%\n").unwrap();
        assert_eq!(p.len(), 5);
        assert_eq!(p[0], FormatPiece::Text("x=".into()));
        let FormatPiece::Spec(s) = &p[1] else {
            panic!()
        };
        assert_eq!((s.width, s.conv, s.arg()), (Some(5), 'd', FormatArg::Int));
        let FormatPiece::Spec(s) = &p[3] else {
            panic!()
        };
        assert_eq!((s.flags.as_str(), s.precision, s.conv), ("0", Some(6), 'f'));
        assert_eq!(s.text(), "%0.6f");
        assert_eq!(p[4], FormatPiece::Text("%\n".into()));
        let p = parse_format("%ld %lld %lf").unwrap();
        assert_eq!(
            p.iter()
                .filter(|p| matches!(p, FormatPiece::Spec(_)))
                .count(),
            3
        );
    }

    #[test]
    fn rejects_bad_formats() {
        assert!(parse_format("%q").unwrap_err().message.contains("`%q`"));
        assert!(parse_format("abc %").is_err());
        assert!(parse_format("%*d").is_err());
    }
}
