//! `print` and `printf` in device code, as output records (the kernel ABI's `out` buffer).
//!
//! Each statement gets a print id and a [`DevicePrint`] that says what its records hold; the
//! code writes one record per execution: the printing thread reserves the record's bytes with
//! one `atom.global.add` on the buffer's cursor, then stores the header slot (`id | n << 32`)
//! and the `n` value slots. The runtime reads the records once the kernel's stream is
//! synchronized and writes them with the host's own formatting, so device output is the
//! host's text for every type (a float's shortest round-trip form included). Nothing orders
//! the stores of a record: the runtime never reads a buffer while a kernel that writes it runs.
//! A record that does not fit adds 1 to the buffer's `lost` count instead, and lowers its `end`
//! to where the record would have started (so the records that fit end there).
//!
//! Where the threads of a block or row run the code redundantly, only the leader prints: a gang
//! prints once (LANGUAGE.md 7.1). Records of one thread keep its order; the order between
//! threads is the order in which they reserved.
//!
//! `print` of an array is not compiled (the region runs on the host).

use std::mem::{offset_of, size_of};

use acc_abi::OutputHeader;
use acc_lang::builtins::FormatPiece;
use acc_lang::ir::{Expr, FormatId, PrintArg, ScalarType, Ty};

use crate::fx::Fx;
use crate::ptx::{Class, Reg};
use crate::{unsupported, DevicePrint, PrintPiece, Result};

/// Bytes of the output buffer's header (`acc_abi::OutputHeader`) before its records.
const OUT_HEADER: usize = size_of::<OutputHeader>();
/// Where the header's fields are; the cursor is the buffer's first word.
const LOST: usize = offset_of!(OutputHeader, lost);
const CAPACITY: usize = offset_of!(OutputHeader, capacity);
const END: usize = offset_of!(OutputHeader, end);
const _: () = assert!(offset_of!(OutputHeader, cursor) == 0);

/// Appends `text` to `print`'s pieces, joining it with a text piece before it.
fn push_text(pieces: &mut Vec<PrintPiece>, text: &str) {
    match pieces.last_mut() {
        Some(PrintPiece::Text(t)) => t.push_str(text),
        _ => pieces.push(PrintPiece::Text(text.to_string())),
    }
}

impl Fx<'_, '_> {
    /// `print(values…)`: one space between values, then a newline.
    pub(crate) fn print(&mut self, args: &[PrintArg]) -> Result<()> {
        let mut pieces = Vec::new();
        let mut slots = Vec::new();
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                push_text(&mut pieces, " ");
            }
            match a {
                PrintArg::Str(s) => {
                    let Some(text) = self.cx().module.strings.get(s.0 as usize) else {
                        return unsupported("an unknown string");
                    };
                    push_text(&mut pieces, text);
                }
                PrintArg::Value(e) => {
                    if let Ty::Array { .. } = e.ty {
                        return unsupported("`print` of an array in device code");
                    }
                    let (v, s) = self.scalar(e)?;
                    slots.push(self.slot_bits(v, s));
                    pieces.push(PrintPiece::Value(s));
                }
            }
        }
        push_text(&mut pieces, "\n");
        self.record(DevicePrint::Print(pieces), &slots);
        Ok(())
    }

    /// `print` as a call expression (`Builtin::Print`): its arguments are values.
    pub(crate) fn print_values(&mut self, args: &[Expr]) -> Result<()> {
        let args: Vec<PrintArg> = args.iter().cloned().map(PrintArg::Value).collect();
        self.print(&args)
    }

    /// `printf(format, values…)`: each argument in a slot as jit-host passes it to
    /// `acc_printf` (by the argument's type: integers sign-extended, `bool` 0 or 1, floats as
    /// `f64`).
    pub(crate) fn printf(&mut self, fmt: FormatId, args: &[Expr]) -> Result<()> {
        let Some(pieces) = self.cx().module.formats.get(fmt.0 as usize) else {
            return unsupported("an unknown format");
        };
        let print = DevicePrint::Printf(pieces.clone());
        if print.slots() != args.len() {
            return unsupported("a `printf` whose arguments do not match its conversions");
        }
        if pieces
            .iter()
            .any(|p| matches!(p, FormatPiece::Spec(s) if s.conv == 's'))
        {
            return unsupported("a `printf` `%s` of a value that is not a string literal");
        }
        let mut slots = Vec::with_capacity(args.len());
        for a in args {
            let (v, s) = self.scalar(a)?;
            let slot = match s {
                ScalarType::F32 | ScalarType::F64 => {
                    let d = self.convert(v, s, ScalarType::F64);
                    let bits = self.fresh(Class::B64);
                    self.ins(format!("mov.b64 {bits}, {d}"));
                    bits
                }
                _ => self.convert(v, s, ScalarType::I64),
            };
            slots.push(slot);
        }
        self.record(print, &slots);
        Ok(())
    }

    /// Append one record of `print` holding `slots` (64-bit registers) to the output buffer
    /// (only the leader where threads run the code redundantly).
    fn record(&mut self, print: DevicePrint, slots: &[Reg]) {
        let cx = self.cx();
        let id = cx.first_print + cx.prints.len() as u32;
        cx.prints.push(print);
        self.mark_prints();
        let bytes = 8 * (1 + slots.len() as u64);
        let header = u64::from(id) | (slots.len() as u64) << 32;
        self.comment(format!("print {id}: a record of {bytes} bytes"));
        let skip = self.label("noprint");
        let lost = self.label("lost");
        if let Some(lead) = self.leader() {
            self.ins(format!("@!{lead} bra {skip}"));
        }
        let out = self.fresh(Class::B64);
        let none = self.fresh(Class::Pred);
        self.ins(format!("ld.param.u64 {out}, [out]"));
        self.ins(format!("setp.eq.u64 {none}, {out}, 0"));
        self.ins(format!("@{none} bra {skip}"));
        let (at, cap, end) = (
            self.fresh(Class::B64),
            self.fresh(Class::B64),
            self.fresh(Class::B64),
        );
        self.ins(format!("atom.global.add.u64 {at}, [{out}], {bytes}"));
        self.ins(format!("ld.global.u64 {cap}, [{out}+{CAPACITY}]"));
        self.ins(format!("add.u64 {end}, {at}, {bytes}"));
        let full = self.fresh(Class::Pred);
        self.ins(format!("setp.gt.u64 {full}, {end}, {cap}"));
        self.ins(format!("@{full} bra {lost}"));
        let rec = self.fresh(Class::B64);
        self.ins(format!("add.u64 {rec}, {out}, {at}"));
        self.ins(format!("st.global.u64 [{rec}+{OUT_HEADER}], {header}"));
        for (i, r) in slots.iter().enumerate() {
            let at = OUT_HEADER + 8 * (1 + i);
            self.ins(format!("st.global.u64 [{rec}+{at}], {r}"));
        }
        self.ins(format!("bra {skip}"));
        self.place(&lost);
        self.ins(format!("red.global.add.u64 [{out}+{LOST}], 1"));
        self.ins(format!("red.global.min.u64 [{out}+{END}], {at}"));
        self.place(&skip);
    }
}

#[cfg(test)]
mod tests {
    use acc_lang::builtins::FormatPiece;
    use acc_lang::ir::ScalarType::*;
    use acc_lang::span::SourceFile;

    use crate::{
        emit_module, emit_module_numbered, DevicePrint, PrintPiece, PtxModule, PtxOptions,
    };

    fn emit(text: &str, first_print: u32) -> PtxModule {
        let m = acc_lang::lower_source(&SourceFile::new("test.acc", text))
            .unwrap_or_else(|d| panic!("{d:?}"));
        emit_module_numbered(&m, &PtxOptions::default(), first_print)
    }

    fn text(t: &str) -> PrintPiece {
        PrintPiece::Text(t.into())
    }

    #[test]
    fn print_describes_its_text_and_the_type_of_each_value() {
        let m = emit(
            "let x = 0.1f32
acc serial copyin(x) {
    print(\"x =\", x, 1.0 / 3.0, true, 7i32, 8, \"%\")
}
",
            0,
        );
        assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
        assert_eq!(
            m.prints,
            [DevicePrint::Print(vec![
                text("x = "),
                PrintPiece::Value(F32),
                text(" "),
                PrintPiece::Value(F64),
                text(" "),
                PrintPiece::Value(Bool),
                text(" "),
                PrintPiece::Value(I32),
                text(" "),
                PrintPiece::Value(I64),
                text(" %\n"),
            ])]
        );
        assert_eq!(m.prints[0].slots(), 5);
        assert!(m.kernels[0].prints);
        // One reservation of the header and 5 slots, the header slot `id | 5 << 32`.
        assert!(m.text.contains("atom.global.add.u64 %rd"), "{}", m.text);
        assert!(m.text.contains(", 48;"));
        assert!(m.text.contains(&format!("+32], {};", 5u64 << 32)));
        assert!(m.text.contains("red.global.add.u64"));
        assert!(!m.text.contains("vprintf"));
    }

    #[test]
    fn printf_keeps_its_format_and_ids_start_where_asked() {
        let m = emit(
            "let n = 4
acc parallel loop
for i in 0..n {
    printf(\"%d %5.2f %s\\n\", i, 0.5, \"ok\")
}
",
            7,
        );
        assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
        let Some(DevicePrint::Printf(pieces)) = m.prints.first() else {
            panic!("{:?}", m.prints)
        };
        // `%s` of a literal is folded into the text: two conversions, two slots.
        assert_eq!(m.prints[0].slots(), 2);
        assert_eq!(pieces.last(), Some(&FormatPiece::Text(" ok\n".into())));
        let header = 7u64 | 2 << 32;
        assert!(m.text.contains(&format!("+32], {header};")), "{}", m.text);
    }

    #[test]
    fn routines_that_print_take_the_buffer_and_their_callers_pass_it() {
        let m = emit(
            "acc routine seq
fn show(x: f64) {
    print(x)
}
acc routine seq
fn quiet(x: f64) -> f64 {
    return x * 2.0
}
let v = zeros(8)
acc parallel loop copy(v)
for i in 0..8 {
    show(v[i])
}
acc parallel loop copy(v)
for i in 0..8 {
    v[i] = quiet(v[i])
}
",
            0,
        );
        assert!(m.unsupported.is_empty(), "{:?}", m.unsupported);
        assert!(m
            .text
            .contains("show(.param .b64 err, .param .b64 out, .param .f64 a0)"));
        assert!(m.text.contains("quiet(.param .b64 err, .param .f64 a0)"));
        assert!(m.text.contains("st.param.b64 [c_out], "));
        let prints: Vec<bool> = m.kernels.iter().map(|k| k.prints).collect();
        assert_eq!(prints, [true, false]);
        // Every kernel takes `out`, printing or not (the ABI is uniform).
        assert_eq!(m.text.matches(".param .u64 out").count(), 2);
    }

    #[test]
    fn print_of_an_array_runs_on_the_host() {
        let m = emit_module(
            &acc_lang::lower_source(&SourceFile::new(
                "test.acc",
                "let a = zeros(4)\nacc serial copyin(a) {\n    print(a)\n}\n",
            ))
            .unwrap(),
            &PtxOptions::default(),
        );
        assert_eq!(m.unsupported.len(), 1);
        assert!(m.unsupported[0].1.contains("`print` of an array"));
    }
}
