//! `print` and `printf` in device code, through CUDA's `vprintf(format, args)`: the format is
//! a module-scope string; the arguments go in a local buffer of 8-byte slots (integers as
//! `long long`, sign-extended, floats as `double`; a `%c` reads the low 4 bytes of its slot),
//! so every conversion's argument sits at an 8-byte boundary as `vprintf` expects. Where the
//! threads of a block or row run the code redundantly, only the leader prints: a gang prints
//! once (LANGUAGE.md 7.1).
//!
//! `print` of a float is not compiled: its shortest round-trip form (LANGUAGE.md 6) is not a
//! `printf` conversion.

use acc_lang::builtins::FormatPiece;
use acc_lang::ir::{Expr, FormatId, PrintArg, ScalarType, Ty};

use crate::fx::{unsupported, Fx, Result};
use crate::ptx::{Class, Reg};

/// What goes in one argument slot.
enum Slot {
    /// A 64-bit integer.
    Int(Reg),
    /// A double.
    Float(Reg),
    /// A generic address of a string.
    Str(Reg),
}

/// `text` as C format text (`%` doubled).
fn literal(text: &str) -> String {
    text.replace('%', "%%")
}

impl Fx<'_, '_> {
    /// `print(values…)`: one space between values, then a newline.
    pub(crate) fn print(&mut self, args: &[PrintArg]) -> Result<()> {
        let mut format = String::new();
        let mut slots = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                format.push(' ');
            }
            match a {
                PrintArg::Str(s) => {
                    let Some(text) = self.cx.module.strings.get(s.0 as usize) else {
                        return unsupported("an unknown string");
                    };
                    format += &literal(text);
                }
                PrintArg::Value(e) => self.print_value(e, &mut format, &mut slots)?,
            }
        }
        format.push('\n');
        self.vprintf(&format, &slots);
        Ok(())
    }

    /// `print` as a call expression (`Builtin::Print`): its arguments are values.
    pub(crate) fn print_values(&mut self, args: &[Expr]) -> Result<()> {
        let args: Vec<PrintArg> = args.iter().cloned().map(PrintArg::Value).collect();
        self.print(&args)
    }

    fn print_value(&mut self, e: &Expr, format: &mut String, slots: &mut Vec<Slot>) -> Result<()> {
        let s = match e.ty {
            Ty::Scalar(s) => s,
            Ty::Array { .. } => return unsupported("`print` of an array in device code"),
        };
        match s {
            ScalarType::F32 | ScalarType::F64 => {
                return unsupported(
                    "`print` of a float in device code (its shortest form is not a printf \
                     conversion; use printf)",
                )
            }
            ScalarType::Bool => {
                let (v, _) = self.scalar(e)?;
                let yes = self.string_address("true");
                let no = self.string_address("false");
                let d = self.fresh(Class::B64);
                self.ins(format!("selp.b64 {d}, {yes}, {no}, {v}"));
                format.push_str("%s");
                slots.push(Slot::Str(d));
            }
            ScalarType::I32 | ScalarType::I64 => {
                let (v, s) = self.scalar(e)?;
                let d = self.convert(v, s, ScalarType::I64);
                format.push_str("%lld");
                slots.push(Slot::Int(d));
            }
        }
        Ok(())
    }

    /// `printf(format, values…)`.
    pub(crate) fn printf(&mut self, fmt: FormatId, args: &[Expr]) -> Result<()> {
        let Some(pieces) = self.cx.module.formats.get(fmt.0 as usize) else {
            return unsupported("an unknown format");
        };
        let pieces = pieces.clone();
        let mut format = String::new();
        let mut slots = Vec::new();
        let mut args = args.iter();
        for piece in &pieces {
            match piece {
                FormatPiece::Text(t) => format += &literal(t),
                FormatPiece::Spec(spec) => {
                    let Some(arg) = args.next() else {
                        return unsupported("a `printf` with too few arguments");
                    };
                    let (v, s) = self.scalar(arg)?;
                    let mut conv = format!("%{}", spec.flags);
                    if let Some(w) = spec.width {
                        conv += &w.to_string();
                    }
                    if let Some(p) = spec.precision {
                        conv += &format!(".{p}");
                    }
                    match spec.conv {
                        'd' | 'i' | 'u' | 'x' => {
                            conv += &format!("ll{}", spec.conv);
                            slots.push(Slot::Int(self.convert(v, s, ScalarType::I64)));
                        }
                        'c' => {
                            conv.push('c');
                            slots.push(Slot::Int(self.convert(v, s, ScalarType::I64)));
                        }
                        'f' | 'e' | 'g' => {
                            conv.push(spec.conv);
                            slots.push(Slot::Float(self.convert(v, s, ScalarType::F64)));
                        }
                        c => return unsupported(format!("the `printf` conversion `%{c}`")),
                    }
                    format += &conv;
                }
            }
        }
        self.vprintf(&format, &slots);
        Ok(())
    }

    /// The generic address of a module-scope string constant.
    fn string_address(&mut self, text: &str) -> Reg {
        let name = self.cx.string(text);
        let a = self.fresh(Class::B64);
        self.ins(format!("mov.u64 {a}, {name}"));
        self.ins(format!("cvta.global.u64 {a}, {a}"));
        a
    }

    /// Call `vprintf` (only the leader where threads run the code redundantly).
    fn vprintf(&mut self, format: &str, slots: &[Slot]) {
        self.cx.uses_vprintf = true;
        self.print_bytes = self.print_bytes.max(8 * slots.len() as u32);
        let skip = self.label("noprint");
        if let Some(lead) = self.leader() {
            self.ins(format!("@!{lead} bra {skip}"));
        }
        for (i, slot) in slots.iter().enumerate() {
            let at = format!("[acc_printbuf+{}]", 8 * i);
            match slot {
                Slot::Int(r) | Slot::Str(r) => self.ins(format!("st.local.b64 {at}, {r}")),
                Slot::Float(r) => self.ins(format!("st.local.f64 {at}, {r}")),
            }
        }
        let fmt = self.string_address(format);
        let buf = self.fresh(Class::B64);
        if slots.is_empty() {
            self.ins(format!("mov.u64 {buf}, 0"));
        } else {
            self.ins(format!("mov.u64 {buf}, acc_printbuf"));
            self.ins(format!("cvta.local.u64 {buf}, {buf}"));
        }
        self.code.push_str("\t{\n");
        self.ins(".param .b64 v_fmt");
        self.ins(".param .b64 v_args");
        self.ins(".param .b32 v_ret");
        self.ins(format!("st.param.b64 [v_fmt], {fmt}"));
        self.ins(format!("st.param.b64 [v_args], {buf}"));
        self.ins("call (v_ret), vprintf, (v_fmt, v_args)");
        self.code.push_str("\t}\n");
        self.place(&skip);
    }
}
