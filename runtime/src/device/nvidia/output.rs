//! Device output: the records that kernels' `print` and `printf` statements append to an
//! output buffer (jit-ptx's kernel ABI, parameter `out`), written as text by the host.
//!
//! Each stream has its own buffer of page-locked host memory mapped into the GPU, made when a
//! kernel that prints is first launched on it. Kernels of one stream run one after another, so
//! once the stream is synchronized every record in its buffer is complete: the runtime reads
//! the buffer then (after a synchronous launch, and when a queue is waited on, as the emulated
//! device delivers queued kernels' output), writes the records' text to the run's output with
//! the host's formatting (`DevicePrints`), and empties it. So device output goes where host
//! output goes, in program order with it, and reads exactly like it.
//!
//! A buffer holds 1 MiB of records at first (a record is 8 bytes plus 8 per value). Records
//! that do not fit are counted by the kernel and not written; the host writes those that fit
//! (the first ones), says on standard error how many were lost, and doubles the buffer for
//! later launches (up to 256 MiB).

use std::collections::HashMap;
use std::sync::Arc;

use acc_abi::OutputHeader;
use cudarc::driver::sys;

use super::Pinned;
use crate::abi::Ctx;
use crate::error::RunErrorKind;
use crate::host::{fail, host_state};
use crate::kernels::DevicePrints;

/// Bytes of a buffer's header (`acc_abi::OutputHeader`), before its records.
const HEADER: usize = std::mem::size_of::<OutputHeader>();
/// Bytes of records a new buffer holds.
const FIRST_CAPACITY: usize = 1 << 20;
/// The most a buffer grows to after losing records.
const MAX_CAPACITY: usize = 256 << 20;

/// What a buffer's records say.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Decoded {
    /// The text of the records that fit, in buffer order.
    pub text: String,
    /// How many records did not fit.
    pub lost: u64,
    /// A record the host cannot read (an unknown print id): the records from there on are
    /// not written.
    pub bad: Option<String>,
}

/// The records of a buffer: `header` its header, `records` its words from byte `HEADER` (at
/// least up to `records_end(header)`).
pub(crate) fn decode(header: OutputHeader, records: &[u64], prints: &dyn DevicePrints) -> Decoded {
    let mut d = Decoded {
        lost: header.lost,
        ..Decoded::default()
    };
    let words = (records_end(header) / 8).min(records.len());
    let mut at = 0;
    while at < words {
        let (id, n) = (records[at] as u32, (records[at] >> 32) as usize);
        let text = records
            .get(at + 1..at + 1 + n)
            .filter(|_| at + 1 + n <= words)
            .and_then(|slots| prints.text(id, slots));
        match text {
            Some(t) => d.text.push_str(&t),
            None => {
                d.bad = Some(format!(
                    "device output record {id} with {n} values at byte {} is not one of this \
                     program's print statements",
                    HEADER + 8 * at
                ));
                break;
            }
        }
        at += 1 + n;
    }
    d
}

/// Bytes of records that fit: up to the cursor, or to where the first record that did not fit
/// would have started.
fn records_end(header: OutputHeader) -> usize {
    header.cursor.min(header.end).min(header.capacity) as usize
}

/// "1 MiB".
fn size_text(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// The output buffers of one GPU, by stream.
#[derive(Default)]
pub(super) struct DeviceOutput {
    buffers: HashMap<usize, Pinned>,
    /// Formats the records (the engine's: it knows every print statement of its compiles).
    prints: Option<Arc<dyn DevicePrints>>,
}

impl DeviceOutput {
    /// The device address of the output buffer of the kernels launched on `stream` (made on
    /// first use), for a kernel whose records `prints` formats.
    pub(super) fn buffer(
        &mut self,
        stream: sys::CUstream,
        prints: &Arc<dyn DevicePrints>,
    ) -> Result<u64, RunErrorKind> {
        self.prints = Some(prints.clone());
        let key = stream as usize;
        if let Some(b) = self.buffers.get(&key) {
            return Ok(b.dev);
        }
        let b = new_buffer(FIRST_CAPACITY)?;
        let dev = b.dev;
        self.buffers.insert(key, b);
        Ok(dev)
    }

    /// Empties every buffer without writing its records: the output of kernels whose run was
    /// stopped and abandoned them. Call once every stream is done.
    pub(super) fn discard(&mut self) {
        for b in self.buffers.values_mut() {
            let capacity = b.read::<OutputHeader>().capacity;
            b.write(OutputHeader::empty(capacity));
        }
    }

    /// Writes the records of `stream`'s buffer to the run's output and empties it. Call once
    /// the stream is synchronized.
    ///
    /// # Safety
    /// `ctx` is a live context.
    pub(super) unsafe fn drain(&mut self, ctx: *mut Ctx, stream: sys::CUstream) {
        let Some(b) = self.buffers.get_mut(&(stream as usize)) else {
            return;
        };
        let header: OutputHeader = b.read();
        if header.cursor == 0 && header.lost == 0 {
            return;
        }
        let capacity = header.capacity as usize;
        let records = b.slots(HEADER / 8, records_end(header) / 8);
        let decoded = match &self.prints {
            Some(p) => decode(header, &records, p.as_ref()),
            None => Decoded::default(),
        };
        b.write(OutputHeader::empty(capacity as u64));
        host_state(ctx).write_str(&decoded.text);
        if let Some(message) = decoded.bad {
            fail(ctx, RunErrorKind::Internal { message }, None);
        }
        if decoded.lost > 0 {
            let grown = (capacity * 2).min(MAX_CAPACITY);
            let note = match new_buffer(grown) {
                Ok(bigger) if grown > capacity => {
                    *b = bigger;
                    format!("; later launches get {}", size_text(grown))
                }
                _ => String::new(),
            };
            let _ = host_state(ctx).flush();
            eprintln!(
                "acc: device output of {} print statements was lost: the device output buffer \
                 ({}) was full{note}",
                decoded.lost,
                size_text(capacity)
            );
        }
    }
}

/// A buffer with room for `capacity` bytes of records, empty.
fn new_buffer(capacity: usize) -> Result<Pinned, RunErrorKind> {
    let mut b = Pinned::new(HEADER + capacity)?;
    b.write(OutputHeader::empty(capacity as u64));
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Print 0 is `print(i64, f64)`, print 1 `print("n =", bool)`.
    #[derive(Debug)]
    struct Two;

    impl DevicePrints for Two {
        fn text(&self, id: u32, slots: &[u64]) -> Option<String> {
            match (id, slots) {
                (0, &[i, f]) => Some(format!("{} {:?}\n", i as i64, f64::from_bits(f))),
                (1, &[b]) => Some(format!("n = {}\n", b != 0)),
                _ => None,
            }
        }
    }

    fn record(id: u32, slots: &[u64]) -> Vec<u64> {
        let mut r = vec![u64::from(id) | (slots.len() as u64) << 32];
        r.extend_from_slice(slots);
        r
    }

    fn header(cursor: usize, lost: u64, capacity: usize, end: usize) -> OutputHeader {
        OutputHeader {
            cursor: cursor as u64,
            lost,
            capacity: capacity as u64,
            end: end as u64,
        }
    }

    #[test]
    fn records_become_text_in_buffer_order() {
        let mut words = record(0, &[(-5i64) as u64, 0.5f64.to_bits()]);
        words.extend(record(1, &[1]));
        words.extend(record(1, &[0]));
        let bytes = 8 * words.len();
        let d = decode(header(bytes, 0, 1024, 1024), &words, &Two);
        assert_eq!(
            d,
            Decoded {
                text: "-5 0.5\nn = true\nn = false\n".into(),
                lost: 0,
                bad: None
            }
        );
        // Only the bytes before the cursor count.
        let d = decode(header(24, 0, 1024, 1024), &words, &Two);
        assert_eq!(d.text, "-5 0.5\n");
        assert_eq!(
            decode(header(0, 0, 1024, 1024), &words, &Two),
            Decoded::default()
        );
    }

    #[test]
    fn records_that_did_not_fit_are_counted_and_end_the_text() {
        // Capacity 40: the first record (24 bytes) fits, the next (16 bytes from 24) fits too,
        // a third (24 bytes from 40) did not: `end` is 40, the cursor went on to 88.
        let mut words = record(0, &[1, 2.0f64.to_bits()]);
        words.extend(record(1, &[1]));
        words.extend([0; 6]);
        let d = decode(header(88, 2, 40, 40), &words, &Two);
        assert_eq!(
            (d.text.as_str(), d.lost, d.bad),
            ("1 2.0\nn = true\n", 2, None)
        );
        // A first lost record that started before the capacity ends the records there.
        let d = decode(header(88, 2, 40, 24), &words, &Two);
        assert_eq!((d.text.as_str(), d.lost), ("1 2.0\n", 2));
    }

    #[test]
    fn an_unknown_record_stops_the_text_with_a_reason() {
        let mut words = record(1, &[1]);
        words.extend(record(9, &[1, 2]));
        words.extend(record(1, &[0]));
        let d = decode(header(8 * words.len(), 0, 1024, 1024), &words, &Two);
        assert_eq!(d.text, "n = true\n");
        assert!(d
            .bad
            .is_some_and(|b| b.contains("record 9 with 2 values at byte 48")));
        // A record whose values run past the records that fit is not read either.
        let words = record(0, &[1, 2]);
        let d = decode(header(16, 0, 1024, 1024), &words, &Two);
        assert!(d.text.is_empty() && d.bad.is_some());
    }

    #[test]
    fn sizes_read_in_mebibytes() {
        assert_eq!(size_text(1 << 20), "1 MiB");
        assert_eq!(size_text(256 << 20), "256 MiB");
        assert_eq!(size_text(40), "40 bytes");
    }
}
