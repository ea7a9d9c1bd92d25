//! The text of device output records: every `print` and `printf` statement that the engine's
//! compiles put in device code, by print id (numbered across compiles, as the kernels of every
//! compile share a GPU's output buffers), formatted by the standard library's own `print` and
//! `printf` code so that device output reads exactly as host output.

use std::collections::BTreeMap;
use std::sync::RwLock;

use acc_jit_ptx::{DevicePrint, PrintPiece};
use acc_runtime::kernels::DevicePrints;

/// The print statements of the engine's live compiles, by the id of each compile's first.
#[derive(Debug, Default)]
pub(crate) struct PrintTable(RwLock<Prints>);

#[derive(Debug, Default)]
struct Prints {
    by_first_id: BTreeMap<u32, Vec<DevicePrint>>,
    next_id: u32,
}

impl PrintTable {
    /// The id the next compile's first print statement gets.
    pub(crate) fn next_id(&self) -> u32 {
        self.0.read().unwrap_or_else(|e| e.into_inner()).next_id
    }

    /// Adds a compile's print statements (numbered from `next_id()`).
    pub(crate) fn extend(&self, prints: Vec<DevicePrint>) {
        let mut table = self.0.write().unwrap_or_else(|e| e.into_inner());
        let first = table.next_id;
        table.next_id += prints.len() as u32;
        if !prints.is_empty() {
            table.by_first_id.insert(first, prints);
        }
    }

    /// Drops the print statements of a compile whose code was freed.
    pub(crate) fn forget(&self, first_id: u32) {
        let mut table = self.0.write().unwrap_or_else(|e| e.into_inner());
        table.by_first_id.remove(&first_id);
    }
}

impl DevicePrints for PrintTable {
    fn text(&self, id: u32, slots: &[u64]) -> Option<String> {
        let table = self.0.read().unwrap_or_else(|e| e.into_inner());
        let (&first, prints) = table.by_first_id.range(..=id).next_back()?;
        let print = prints.get((id - first) as usize)?;
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
        // A second compile's prints follow; a freed compile's have no text any more.
        table.extend(vec![DevicePrint::Printf(parse_format("%d\n").unwrap())]);
        assert_eq!(table.text(2, &[7]).as_deref(), Some("7\n"));
        table.forget(0);
        assert_eq!(table.text(0, &slots[..0]), None);
        assert_eq!(table.text(1, &slots), None);
        assert_eq!(table.text(2, &[7]).as_deref(), Some("7\n"));
    }
}
