//! PTX vocabulary: register classes, virtual registers, the type suffixes of instructions and
//! the spelling of constants.
//!
//! Every value lives in a virtual register (PTX has as many as it likes; `ptxas` allocates the
//! hardware ones). A function's registers are numbered per class and declared once at its top
//! (`.reg .b64 %rd<12>;`), after its body is generated and the counts are known.

use std::fmt;

use acc_lang::ir::ScalarType;

/// The register classes the emitter uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Class {
    /// `bool` values.
    Pred,
    /// `i32` values and 32-bit temporaries (bits of an `f32`, `u8` loads of `bool` elements).
    B32,
    /// `i64` values, addresses, 64-bit temporaries.
    B64,
    F32,
    F64,
}

impl Class {
    pub(crate) const ALL: [Class; 5] =
        [Class::Pred, Class::B32, Class::B64, Class::F32, Class::F64];

    fn index(self) -> usize {
        match self {
            Class::Pred => 0,
            Class::B32 => 1,
            Class::B64 => 2,
            Class::F32 => 3,
            Class::F64 => 4,
        }
    }

    /// The register name prefix (`%rd` for `%rd7`).
    fn prefix(self) -> &'static str {
        match self {
            Class::Pred => "%p",
            Class::B32 => "%r",
            Class::B64 => "%rd",
            Class::F32 => "%f",
            Class::F64 => "%fd",
        }
    }

    /// The type in a `.reg` declaration.
    fn decl_type(self) -> &'static str {
        match self {
            Class::Pred => ".pred",
            Class::B32 => ".b32",
            Class::B64 => ".b64",
            Class::F32 => ".f32",
            Class::F64 => ".f64",
        }
    }
}

/// The register class that holds a value of scalar type `s`.
pub(crate) fn class_of(s: ScalarType) -> Class {
    match s {
        ScalarType::Bool => Class::Pred,
        ScalarType::I32 => Class::B32,
        ScalarType::I64 => Class::B64,
        ScalarType::F32 => Class::F32,
        ScalarType::F64 => Class::F64,
    }
}

/// A virtual register.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Reg {
    pub class: Class,
    pub n: u32,
}

impl fmt::Display for Reg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.class.prefix(), self.n)
    }
}

/// The registers of one function, numbered per class from 1.
#[derive(Clone, Debug, Default)]
pub(crate) struct Regs {
    used: [u32; 5],
}

impl Regs {
    pub(crate) fn fresh(&mut self, class: Class) -> Reg {
        let i = class.index();
        self.used[i] += 1;
        Reg {
            class,
            n: self.used[i],
        }
    }

    /// How many registers of `class` were handed out.
    pub(crate) fn count(&self, class: Class) -> u32 {
        self.used[class.index()]
    }

    /// The `.reg` declarations of every class in use.
    pub(crate) fn declarations(&self) -> String {
        let mut out = String::new();
        for class in Class::ALL {
            let n = self.count(class);
            if n > 0 {
                out += &format!(
                    "\t.reg {} {}<{}>;\n",
                    class.decl_type(),
                    class.prefix(),
                    n + 1
                );
            }
        }
        out
    }
}

pub(crate) fn is_float(s: ScalarType) -> bool {
    matches!(s, ScalarType::F32 | ScalarType::F64)
}

/// The suffix of arithmetic and comparison instructions on `s` (`add.s32`, `setp.lt.f64`).
/// `bool` has none: its operations are `.pred` logic.
pub(crate) fn arith(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "pred",
        ScalarType::I32 => "s32",
        ScalarType::I64 => "s64",
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
    }
}

/// The untyped suffix of moves and bitwise instructions on `s` (`mov.b32`, `and.b64`).
pub(crate) fn bits(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "pred",
        ScalarType::I32 | ScalarType::F32 => "b32",
        ScalarType::I64 | ScalarType::F64 => "b64",
    }
}

/// The suffix of a memory access to an element of type `s` (`bool` elements are bytes).
pub(crate) fn mem(s: ScalarType) -> &'static str {
    match s {
        ScalarType::Bool => "u8",
        ScalarType::I32 => "b32",
        ScalarType::I64 => "b64",
        ScalarType::F32 => "f32",
        ScalarType::F64 => "f64",
    }
}

/// Bytes per element of an array of `s`.
pub(crate) fn elem_size(s: ScalarType) -> u64 {
    s.elem_type().size() as u64
}

/// An `f32` constant, exactly (`0f3F800000`).
pub(crate) fn f32_literal(v: f32) -> String {
    format!("0f{:08X}", v.to_bits())
}

/// An `f64` constant, exactly (`0d3FF0000000000000`).
pub(crate) fn f64_literal(v: f64) -> String {
    format!("0d{:016X}", v.to_bits())
}

/// An integer constant: decimal when non-negative, else its two's complement bits in hex
/// (PTX reads `0xFFFFFFFF` as the 32-bit -1 in a `.b32` instruction).
pub(crate) fn int_literal(v: i64, s: ScalarType) -> String {
    if v >= 0 {
        v.to_string()
    } else if s == ScalarType::I32 {
        format!("0x{:08X}", v as i32 as u32)
    } else {
        format!("0x{:016X}", v as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_types_map_to_register_classes() {
        assert_eq!(class_of(ScalarType::Bool), Class::Pred);
        assert_eq!(class_of(ScalarType::I32), Class::B32);
        assert_eq!(class_of(ScalarType::I64), Class::B64);
        assert_eq!(class_of(ScalarType::F32), Class::F32);
        assert_eq!(class_of(ScalarType::F64), Class::F64);
        assert_eq!(arith(ScalarType::I32), "s32");
        assert_eq!(bits(ScalarType::F64), "b64");
        assert_eq!(mem(ScalarType::Bool), "u8");
        assert_eq!(elem_size(ScalarType::Bool), 1);
        assert_eq!(elem_size(ScalarType::F32), 4);
    }

    #[test]
    fn registers_are_numbered_per_class_and_declared() {
        let mut regs = Regs::default();
        let a = regs.fresh(Class::B64);
        let b = regs.fresh(Class::B64);
        let p = regs.fresh(Class::Pred);
        assert_eq!(a.to_string(), "%rd1");
        assert_eq!(b.to_string(), "%rd2");
        assert_eq!(p.to_string(), "%p1");
        assert_eq!(
            regs.declarations(),
            "\t.reg .pred %p<2>;\n\t.reg .b64 %rd<3>;\n"
        );
    }

    #[test]
    fn constants_are_exact() {
        assert_eq!(f32_literal(1.0), "0f3F800000");
        assert_eq!(f64_literal(-0.0), "0d8000000000000000");
        assert_eq!(f64_literal(0.1), "0d3FB999999999999A");
        assert_eq!(int_literal(-1, ScalarType::I32), "0xFFFFFFFF");
        assert_eq!(int_literal(i64::MIN, ScalarType::I64), "0x8000000000000000");
        assert_eq!(int_literal(42, ScalarType::I64), "42");
    }
}
