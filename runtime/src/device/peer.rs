//! `acc_memcpy_d2d(dst, src, dst_num, src_num)` (OpenACC 3.3's device-to-device copy): the
//! whole of `src`'s copy on device `src_num` into `dst`'s copy on device `dst_num`, both of
//! the current device type, both present there, synchronous. GPUs copy peer to peer (directly
//! over NVLink or PCIe where the driver grants the two access to each other, staged by the
//! driver otherwise); emulated devices copy between their memories; `host` and `multicore`
//! (one device each, host memory) copy between the arrays themselves.

use crate::abi::ArrayHeader;
use crate::array;
use crate::error::RunErrorKind;

use super::{DeviceKind, Devices, Nvidia};

fn failure(message: String) -> RunErrorKind {
    RunErrorKind::Device {
        message: format!("`acc_memcpy_d2d`: {message}"),
    }
}

impl Devices {
    /// # Safety
    /// `dst` and `src` are live arrays.
    pub unsafe fn memcpy_d2d(
        &mut self,
        dst: *mut ArrayHeader,
        src: *mut ArrayHeader,
        dst_num: i32,
        src_num: i32,
    ) -> Result<(), RunErrorKind> {
        let kind = self.current().0;
        let count = self.count(kind.code());
        let num = |n: i32| {
            usize::try_from(n)
                .ok()
                .filter(|&n| n < count)
                .ok_or_else(|| {
                    failure(format!(
                        "there is no {} device {n} (there are {count})",
                        kind.name()
                    ))
                })
        };
        let (dn, sn) = (num(dst_num)?, num(src_num)?);
        if (*dst).len != (*src).len || (*dst).elem != (*src).elem {
            return Err(failure(format!(
                "the arrays differ in length ({} and {})",
                (*dst).len,
                (*src).len
            )));
        }
        let bytes = (*src).len as usize * array::elem_size((*src).elem).unwrap_or(1);
        let absent = |which: &str, n: usize| {
            failure(format!(
                "the {which} array is not present on {}:{n}",
                kind.name()
            ))
        };
        match kind {
            DeviceKind::Host | DeviceKind::Multicore => {
                std::ptr::copy((*src).data, (*dst).data, bytes);
            }
            DeviceKind::Emulated => {
                let from = self
                    .emulated(sn)
                    .copy_of(src)
                    .ok_or_else(|| absent("source", sn))?;
                let to = self
                    .emulated(dn)
                    .copy_of(dst)
                    .ok_or_else(|| absent("destination", dn))?;
                std::ptr::copy((*from).data, (*to).data, bytes);
            }
            DeviceKind::Nvidia => {
                let from = self.gpu(sn)?;
                let (from_end, from) = (from.endpoint(), from.device_address(src));
                let to = self.gpu(dn)?;
                let (to_end, to) = (to.endpoint(), to.device_address(dst));
                let from = from.ok_or_else(|| absent("source", sn))?;
                let to = to.ok_or_else(|| absent("destination", dn))?;
                let copied = super::nvidia::peer_copy(to_end, to, from_end, from, bytes);
                // Leave the current device's context current.
                let current = self.current().1;
                self.gpu(current)?;
                copied?;
            }
        }
        Ok(())
    }

    /// GPU `num`, opened on first use and made current.
    fn gpu(&mut self, num: usize) -> Result<&mut Nvidia, RunErrorKind> {
        while self.nvidia.len() <= num {
            self.nvidia.push(None);
        }
        if self.nvidia[num].is_none() {
            self.nvidia[num] = Some(Nvidia::new(num, self.profiler.clone())?);
        }
        match self.nvidia[num].as_mut() {
            Some(g) => {
                g.make_current()?;
                Ok(g)
            }
            None => Err(failure(format!("nvidia:{num} could not be opened"))),
        }
    }
}
