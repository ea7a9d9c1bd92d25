//! acc's vocabulary for generated and mutated inputs: keywords, directive and clause words,
//! built-ins, names, punctuation, literals good and bad, comments, odd characters. One list for
//! the front end's fuzz smoke test (`tests/fuzz_smoke.rs`) and `acc-fuzz`'s mutator.

#[rustfmt::skip]
pub const VOCABULARY: &[&str] = &[
    "let", "fn", "return", "if", "else", "while", "for", "in", "step", "break", "continue",
    "true", "false", "as", "acc",
    "parallel", "kernels", "serial", "loop", "data", "enter", "exit", "update", "wait",
    "atomic", "read", "write", "capture", "routine", "declare", "set", "host", "device", "self",
    "gang", "worker", "vector", "seq", "auto", "independent", "collapse", "tile", "private",
    "firstprivate", "reduction", "default", "none", "present", "copy", "copyin", "copyout",
    "create", "no_create", "delete", "pcopy", "present_or_copy", "async", "num_gangs",
    "num_workers", "vector_length", "device_type", "nvidia", "multicore", "finalize",
    "if_present", "device_num", "default_async", "attach", "detach", "deviceptr", "bind",
    "i32", "i64", "f32", "f64", "bool", "zeros", "ones", "fill", "len", "size", "print",
    "printf", "param", "max", "min", "abs", "sqrt", "sum", "reshape", "copy", "iota",
    "linspace", "exit", "assert", "clock", "rank", "acc_on_device", "acc_device_host",
    "acc_copyin", "acc_copyout", "acc_delete", "acc_is_present", "acc_wait", "acc_async_test",
    "acc_set_device_type", "acc_get_num_devices", "acc_update_self", "acc_update_device",
    "a", "b", "x", "y", "n", "i", "j", "s", "err", "_tmp", "A2",
    "(", ")", "[", "]", "{", "}", ",", ";", ":", "->", "..", "..=", "+", "-", "*", "/", "%",
    "&", "|", "^", "~", "!", "<<", ">>", "&&", "||", "==", "!=", "<", "<=", ">", ">=", "=",
    "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=", "\\", ".", "@", "#", "$",
    "0", "1", "42", "1_000", "0x1f", "0b101", "7i32", "9i64", "0x", "0b2", "99999999999999999999",
    "1.0", "2.5e-3", "1e6", "2.0f32", "1f32", "1e", "1.0f16", "3i8", "\"s\"", "\"%5d\\n\"",
    "\"unterminated", "\"bad \\q escape\"",
    "// comment", "/* block */", "/* open", "*/", "\n", "\n", "\t", "é", "∑", "\r", "\r\n",
    "\u{feff}", "\u{202e}", "\u{0}", "𝔸", "e\u{301}",
];
