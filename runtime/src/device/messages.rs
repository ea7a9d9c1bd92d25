//! The sections of MPI messages (`mpi_send`, `mpi_sendrecv`, … in the standard library's
//! `mpi` module): a section present on the current device is sent from its device copy and
//! received into it, staged through the host array's own section (as a synchronous
//! `update self` before a send and `update device` after a receive would do: on a GPU through
//! page-locked buffers). The host's copy is used only where the data is the host's:
//! absent data, or a device that shares host memory. An array a `data … devices(…)` region
//! holds split is staged as `update` stages it: the host gets the rows it lacks from the
//! devices that hold them, and received rows become the current ones (devices fetch them when
//! a block needs them).

use acc_abi::DataModifiers;

use super::ops::{
    placed, DataOpArg, DataPhase, QueueArg, ACTION_UPDATE_DEVICE, ACTION_UPDATE_HOST,
};
use super::{Current, Devices};
use crate::error::RunError;
use crate::profile::{DeviceRef, EventKind, Place};

impl Devices {
    /// Brings `op`'s section to the host array from its device copy (`to_host`, before it is
    /// sent) or from the host array to its device copy (after it was received into the host
    /// array), where the section is present on the current device; whether it was. A
    /// section only partly present is an error (as for `update`); so is a section outside
    /// its array, on every device.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub unsafe fn mpi_stage(&mut self, op: &DataOpArg, to_host: bool) -> Result<bool, RunError> {
        let at = |kind| RunError {
            kind,
            site: Some(op.site),
        };
        let update = DataOpArg {
            action: if to_host {
                ACTION_UPDATE_HOST
            } else {
                ACTION_UPDATE_DEVICE
            },
            ..*op
        };
        let (phase, ifp, sync) = (DataPhase::Update, DataModifiers::IF_PRESENT, QueueArg::Sync);
        if self.update_split(std::slice::from_ref(&update))?.is_empty() {
            return Ok(true);
        }
        match self.current_device().map_err(at)? {
            Current::Shared => {
                placed(op).map_err(at)?;
                Ok(false)
            }
            Current::Emulated(dev) => {
                let present = dev.is_present(op).map_err(at)?;
                dev.data_op(phase, &update, ifp, sync)?;
                Ok(present)
            }
            Current::Nvidia(gpu) => {
                let present = gpu.is_present(op).map_err(at)?;
                gpu.data_op(phase, &update, ifp, sync)?;
                Ok(present)
            }
        }
    }

    /// Records an MPI call of this rank (`--profile`, `--trace`, `ACC_NOTIFY` 2) at `site`,
    /// on the device `mpi:RANK`.
    pub fn record_mpi(
        &self,
        site: u32,
        rank: i32,
        bytes: u64,
        start: std::time::Instant,
        end: std::time::Instant,
    ) {
        let place = Place {
            site,
            device: DeviceRef {
                kind: "mpi",
                num: rank.max(0) as u32,
            },
            queue: None,
        };
        self.profiler
            .record(place, EventKind::Mpi { bytes }, start, end);
    }
}
