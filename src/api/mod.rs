//! The embedding API beyond running source text: compiled [`Script`]s, [`Func`] calls of
//! script functions, typed access to globals, and [`Array`]s shared with scripts without a copy.
//!
//! Everything here is an owned value without lifetimes, so that an application can keep it in
//! its own structs; what needs the engine takes it as `&mut Engine`.

mod array;
mod display;
mod func;
mod globals;
mod host_fn;
mod inspect;
mod limits;
mod script;
mod value;

pub use array::{Array, Elem};
pub use func::Func;
pub use host_fn::{HostFunction, HostRet, Scalar};
pub use inspect::{DeviceInfo, FunctionInfo, GlobalInfo, ProfileSite};
pub(crate) use limits::Watchdog;
pub use limits::{InterruptHandle, Limits};
pub use script::Script;
pub use value::{Args, Ret, Value};
