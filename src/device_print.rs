//! The text of device output records: every `print` and `printf` statement that the engine's
//! compiles put in device code, by print id (numbered across compiles, as the kernels of every
//! compile share a GPU's output buffers), formatted by the standard library's own `print` and
//! `printf` code so that device output reads exactly as host output.

use std::sync::RwLock;

use acc_jit_ptx::{DevicePrint, PrintPiece};
use acc_runtime::launch::DevicePrints;

/// The print statements of an engine's compiles; entry `i` is print id `i`.
#[derive(Debug, Default)]
pub(crate) struct PrintTable(RwLock<Vec<DevicePrint>>);

impl PrintTable {
    /// The id the next compile's first print statement gets.
    pub(crate) fn next_id(&self) -> u32 {
        self.0.read().unwrap_or_else(|e| e.into_inner()).len() as u32
    }

    /// Adds a compile's print statements (numbered from `next_id()`).
    pub(crate) fn extend(&self, prints: Vec<DevicePrint>) {
        self.0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .extend(prints);
    }
}

impl DevicePrints for PrintTable {
    fn text(&self, id: u32, slots: &[u64]) -> Option<String> {
        let table = self.0.read().unwrap_or_else(|e| e.into_inner());
        let print = table.get(id as usize)?;
        if print.slots() != slots.len() {
            return None;
        }
        Some(match print {
            DevicePrint::Print(pieces) => {
                let mut text = String::new();
                let mut values = slots.iter();
                for piece in pieces {
                    match piece {
                        PrintPiece::Text(t) => text.push_str(t),
                        PrintPiece::Value(ty) => {
                            let slot = values.next().copied().unwrap_or_default();
                            text.push_str(&acc_stdlib::print::scalar_text(*ty, slot));
                        }
                    }
                }
                text
            }
            // Device formats have no `%s` (string arguments are folded into the text).
            DevicePrint::Printf(pieces) => {
                acc_stdlib::print::printf_text(pieces, slots, |_| String::new())
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use acc_lang::builtins::parse_format;
    use acc_lang::ir::ScalarType;

    #[test]
    fn records_read_as_the_host_prints() {
        let table = PrintTable::default();
        assert_eq!(table.next_id(), 0);
        table.extend(vec![
            DevicePrint::Print(vec![
                PrintPiece::Text("x = ".into()),
                PrintPiece::Value(ScalarType::F32),
                PrintPiece::Text(" ".into()),
                PrintPiece::Value(ScalarType::F64),
                PrintPiece::Text(" ".into()),
                PrintPiece::Value(ScalarType::Bool),
                PrintPiece::Text(" ".into()),
                PrintPiece::Value(ScalarType::I32),
                PrintPiece::Text("\n".into()),
            ]),
            DevicePrint::Printf(parse_format("%d|%8.3e|%c\n").unwrap()),
        ]);
        assert_eq!(table.next_id(), 2);
        let slots = [
            u64::from(0.1f32.to_bits()),
            f64::NAN.to_bits(),
            1,
            (-3i64) as u64,
        ];
        assert_eq!(
            table.text(0, &slots).as_deref(),
            Some("x = 0.1 nan true -3\n")
        );
        let slots = [(-12i64) as u64, 1e16f64.to_bits(), 'z' as u64];
        assert_eq!(table.text(1, &slots).as_deref(), Some("-12|1.000e+16|z\n"));
        // An unknown id, or a record with the wrong number of values, has no text.
        assert_eq!(table.text(2, &[]), None);
        assert_eq!(table.text(1, &[0]), None);
    }
}
