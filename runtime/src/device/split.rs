//! `devices(…)` at run time (LANGUAGE.md 7.11, acc's extension): a compute construct's split
//! loop cut over several devices of the current type, and `data … devices(…)` regions whose
//! arrays are held split.
//!
//! The compiler decides the split (`acc_abi::split::SplitPlan` in the region's descriptor):
//! which loop, which rows of each array one block of it reads and writes. Here it is carried
//! out, for `emulated` and `nvidia` alike (the host devices are one device and run the whole
//! loop):
//!
//! - **A launch** (`launch_split`) divides the split loop's trip count into contiguous blocks
//!   in device order (`acc_abi::split::blocks`) and runs each block on its device with the
//!   code that device would run alone (the hidden `split_lo`/`split_hi` parameters bound it).
//!   Reductions: the first device starts from the value before the construct, the others from
//!   the operator's identity, and the devices' results are combined in device order, as gangs'
//!   are.
//! - **Data outside a devices region.** Each device's part of the construct's data clauses is
//!   narrowed to the rows its block touches: `copyin` and `copy` send those rows, the copy-out
//!   brings back the rows it wrote (an array the construct only reads is not copied back).
//! - **Data in a `data … devices(…)` region.** Each listed device holds a copy of the array's
//!   whole shape (so that kernels index it as they would alone), and a row directory
//!   (`crate::rows::Directory`) records which places hold each row's current contents. On
//!   entry, `copy` and `copyin` data is dealt out: each device receives an equal block of
//!   rows. Then rows move when needed: before a block runs, its device acquires the rows the
//!   block reads and writes (from a peer that holds them, else from the host), which after a
//!   launch are only the halo rows another device wrote. The region's copy-out brings the host
//!   the rows it lacks, each from a device that holds it. `update self` brings the host the
//!   rows it lacks; `update device` makes the host's rows the current ones.
//! - **Anything else that uses such an array** (a construct without the clause, or one that
//!   cannot be split) runs whole on the current device, after the directory brought that
//!   device (or the host, when the current device does not hold the array) every row.
//!
//! A construct runs whole on the current device, as without the clause, when its split cannot
//! be carried out here: the plan says why not (`--info`), the trip count cannot be read, an
//! array is a `reshape` view, or an array is on a listed device outside a devices region.
//! Device numbers past the last device are skipped, so a script written for more devices runs
//! on fewer.

use std::collections::HashMap;
use std::ops::Range;
use std::time::Instant;

use acc_abi::split::{blocks, DeviceList, LoopSplit, RowSpan};

use super::compute::Launch;
use super::discrete::Handle;
use super::edges::{self, Edges, EdgesFirst};
use super::ops::{placed, storage, DataOpArg, QueueArg, NO_SECTION};
use super::ops::{ACTION_COPY, ACTION_COPYIN, ACTION_COPYOUT, ACTION_CREATE};
use super::peer::PeerCopy;
use super::{Current, DeviceKind, Devices};
use crate::abi::{ArrayHeader, Ctx, STATUS_OK};
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::gang_loop::LaunchArgs;
use crate::host::host_state;
use crate::kernels::GpuKernel;
use crate::launch::{combine, RegionDesc};
use crate::presence::Section;
use crate::rows::{Directory, Holders, Place, Transfer};

/// An array a `data … devices(…)` region holds split.
pub(crate) struct SplitArray {
    /// The devices holding a copy, of type `kind`, in the region's order.
    kind: DeviceKind,
    devices: Vec<usize>,
    /// Which places hold each row's current contents.
    directory: Directory,
    /// The array (a storage, never a view); the entry holds a reference.
    host: Handle,
    /// The regions holding it (a nested `devices` region over the same array counts up).
    holds: usize,
}

impl SplitArray {
    /// The array (its storage), which the entry holds a reference on.
    pub(crate) fn host(&self) -> *mut ArrayHeader {
        self.host.0
    }
}

/// The arrays held split, by storage id.
pub(crate) type SplitArrays = HashMap<u64, SplitArray>;

/// A region's array parameter that a split launch on the current device's behalf brought up
/// to date, for `Devices::after_split_use`.
pub(super) struct SplitUse {
    id: u64,
    written: bool,
    /// The current device holds the array (else the launch used the host's copy).
    on_device: bool,
}

impl Current<'_> {
    unsafe fn enter_ops(self, ops: &[DataOpArg]) -> Result<(), RunError> {
        match self {
            Current::Shared => Ok(()),
            Current::Emulated(e) => e.enter_ops(ops, QueueArg::Sync),
            Current::Nvidia(g) => g.enter_ops(ops, QueueArg::Sync),
        }
    }

    unsafe fn exit_ops(self, ops: &[DataOpArg]) -> Result<(), RunError> {
        match self {
            Current::Shared => Ok(()),
            Current::Emulated(e) => e.exit_ops(ops, QueueArg::Sync),
            Current::Nvidia(g) => g.exit_ops(ops, QueueArg::Sync),
        }
    }

    unsafe fn holds(self, a: *mut ArrayHeader) -> bool {
        match self {
            Current::Shared => false,
            Current::Emulated(e) => e.copy_of(a).is_some(),
            Current::Nvidia(g) => g.holds(a),
        }
    }

    unsafe fn transfer(
        self,
        host: *mut ArrayHeader,
        section: &Section,
        upload: bool,
        site: u32,
    ) -> Result<(), RunErrorKind> {
        match self {
            Current::Shared => Ok(()),
            Current::Emulated(e) => e.transfer_present(host, section, upload, site),
            Current::Nvidia(g) => g.transfer_present(host, section, upload, site),
        }
    }

    /// The references (structured and dynamic) on the device's copy of the whole of `a`.
    unsafe fn references(self, a: *mut ArrayHeader) -> u32 {
        match self {
            Current::Shared => 0,
            Current::Emulated(e) => e.references(a),
            Current::Nvidia(g) => g.references(a),
        }
    }

    /// Waits for the work queued on the device.
    fn quiesce(self) -> Result<(), RunErrorKind> {
        match self {
            Current::Shared => Ok(()),
            Current::Emulated(e) => {
                e.wait_all();
                Ok(())
            }
            Current::Nvidia(g) => g.quiesce(),
        }
    }
}

/// Rows `rows` of an array of extents `dims`, every other dimension whole.
fn row_section(dims: &[i64], rows: &Range<u64>) -> Section {
    let mut s = Section::whole(dims);
    s.lo[0] = rows.start as i64;
    s.hi[0] = rows.end as i64;
    s
}

/// The rows (first extent; a scalar's one element) of array `a`.
unsafe fn row_count(a: *mut ArrayHeader) -> u64 {
    array::shape(a).first().map_or(1, |&n| n.max(0) as u64)
}

/// The rows either of two inclusive ranges touches, as a half-open range clipped to `0..rows`
/// (`None`: none).
fn touched(a: Option<(i64, i64)>, b: Option<(i64, i64)>, rows: u64) -> Option<Range<u64>> {
    let hull = match (a, b) {
        (Some((a0, a1)), Some((b0, b1))) => (a0.min(b0), a1.max(b1)),
        (Some(x), None) | (None, Some(x)) => x,
        (None, None) => return None,
    };
    let lo = hull.0.max(0) as u64;
    let hi = (hull.1.saturating_add(1)).clamp(0, rows as i64) as u64;
    (lo < hi).then_some(lo..hi)
}

/// A clause entering the array on a device of a devices region: storage only, the rows come
/// when a block needs them.
fn allocating(op: &DataOpArg) -> DataOpArg {
    let mut op = *op;
    if matches!(
        op.action,
        ACTION_COPY | ACTION_COPYIN | ACTION_COPYOUT | ACTION_CREATE
    ) {
        op.action = ACTION_CREATE;
    }
    op
}

/// A device's copy of a split array sends rows it wrote to a neighbour holding stale copies
/// only when those are at most 1 / `PUSH_SHARE` of the rows it wrote (see `push_stale_rows`):
/// a halo is a row or two beside a block of many.
const PUSH_SHARE: u64 = 2;

/// Rows a writer sent to a device whose copy of them its write had made stale.
pub(super) struct Pushed {
    id: u64,
    host: *mut ArrayHeader,
    from: usize,
    to: usize,
    rows: Range<u64>,
}

/// One device's part of a split launch.
pub(super) struct Part {
    device: usize,
    /// The split loop's normalized iterations `lo..hi` and its variable's values.
    block: (i64, i64),
    values: (i64, i64),
    args: Vec<u64>,
    ops: Vec<DataOpArg>,
    /// Arrays held split: the rows the block reads or writes, and the rows it writes.
    acquire: Vec<(u64, *mut ArrayHeader, Range<u64>)>,
    wrote: Vec<(u64, Range<u64>)>,
    /// A failure names this part's device and block: the launch has other parts, or this
    /// one runs on a device other than the current one (else it fails as it would unsplit).
    told: bool,
}

/// A split launch's results from its parts' argument slots, in device order, into `args`:
/// reductions combined in device order, the first device's values of the other results.
pub(super) fn combine_parts(desc: &RegionDesc, parts: &[Vec<u64>], args: &mut [u64]) {
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    for (i, p) in desc.params.iter().enumerate() {
        if p.pass.is_result() {
            args[i] = first[i];
        }
    }
    for r in &desc.reductions {
        args[r.param] = rest.iter().fold(first[r.param], |v, res| {
            combine(r.op, r.elem, v, res[r.param])
        });
    }
}

impl Part {
    /// Starts this part on `gpu` (`Nvidia::launch_start`). With `edges`, the edge iterations
    /// go first, as launches of their own without clauses (the part's data is present on the
    /// GPU: `Devices::edges_first`), and the mark after them is recorded; then the rest of the
    /// block with the part's clauses, whose pending launch stands for all of them once it is
    /// started (they are before it on the stream and share its error record). Where a step
    /// after an edge launch fails, the edge launches are waited for before the failure is
    /// returned, so that nothing of the part runs on unwatched.
    ///
    /// # Safety
    /// As `Devices::launch`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn start(
        &mut self,
        gpu: &mut super::Nvidia,
        ctx: *mut Ctx,
        l: &Launch<'_>,
        q: QueueArg,
        kernel: &GpuKernel,
        edges: Option<&Edges>,
    ) -> Result<Option<super::nvidia::Pending>, RunError> {
        let Some(edges) = edges else {
            return gpu.launch_start(ctx, &mut self.launch(l, None), q, kernel);
        };
        let (lo, hi) = edges.bounds;
        let block = (self.args[lo], self.args[hi]);
        let mut started: Result<(), RunError> = Ok(());
        let mut last = None;
        for r in edges.first() {
            let mut args = self.args.clone();
            (args[lo], args[hi]) = (r.start as u64, r.end as u64);
            let mut launch = Launch {
                args: &mut args,
                ops: &[],
                ..self.launch(l, None)
            };
            match gpu.launch_start(ctx, &mut launch, q, kernel) {
                Ok(p) => last = p.map(|p| (args, p)),
                Err(e) => {
                    started = Err(e);
                    break;
                }
            }
        }
        if started.is_ok() {
            started = gpu.mark_edges().map_err(|kind| l.error(kind));
        }
        let interior = started.and_then(|()| {
            (self.args[lo], self.args[hi]) =
                (edges.interior.start as u64, edges.interior.end as u64);
            let interior = gpu.launch_start(ctx, &mut self.launch(l, None), q, kernel);
            (self.args[lo], self.args[hi]) = block;
            interior
        });
        if interior.is_err() {
            if let Some((mut args, p)) = last {
                let mut launch = Launch {
                    args: &mut args,
                    ops: &[],
                    ..self.launch(l, None)
                };
                if let Err(e) = gpu.launch_finish(ctx, &mut launch, p) {
                    super::report(ctx, e);
                }
            }
        }
        interior
    }

    /// A launch that is not split as the one part of one, on device `num` (the current one).
    pub(super) fn whole(num: usize, l: &Launch<'_>) -> Part {
        Part {
            device: num,
            block: (0, 0),
            values: (0, 0),
            args: l.args.to_vec(),
            ops: l.ops.to_vec(),
            acquire: Vec::new(),
            wrote: Vec::new(),
            told: false,
        }
    }

    /// The part's argument slots, its results in them once it is done.
    pub(super) fn into_args(self) -> Vec<u64> {
        self.args
    }

    /// This part's launch of `l`'s construct: its own arguments and clauses, and `waits`.
    fn launch<'a>(&'a mut self, l: &'a Launch<'_>, waits: Option<&'a [i64]>) -> Launch<'a> {
        Launch {
            desc: l.desc,
            args: &mut self.args,
            ops: &self.ops,
            sizes: l.sizes,
            queue: l.queue,
            waits,
            site: l.site,
            late: l.late,
        }
    }
}

/// The part of one data clause a block needs: the clause narrowed to rows `rows` (keeping
/// its own section's other dimensions and its own rows' limits); `None` when they miss.
/// A clause of an array the block does not write copies nothing back.
unsafe fn narrowed(op: &DataOpArg, rows: &Range<u64>, writes: bool) -> Option<DataOpArg> {
    let mut op = *op;
    let total = row_count(op.array) as i64;
    let (mut lo, mut hi) = (rows.start as i64, rows.end as i64);
    if op.nranges != NO_SECTION && op.nranges > 0 {
        let [start, count] = op.ranges[0];
        let start = if start == acc_abi::ABSENT { 0 } else { start };
        let end = if count == acc_abi::ABSENT {
            total
        } else {
            start.saturating_add(count)
        };
        lo = lo.max(start);
        hi = hi.min(end);
    } else {
        op.nranges = 1;
    }
    if lo >= hi {
        return None;
    }
    op.ranges[0] = [lo, hi - lo];
    if !writes {
        op.action = match op.action {
            ACTION_COPY => ACTION_COPYIN,
            ACTION_COPYOUT => ACTION_CREATE,
            a => a,
        };
    }
    Some(op)
}

impl Devices {
    /// The devices of the current type a `devices(…)` list names, in its order, each once;
    /// numbers past the last device are skipped.
    pub(super) fn listed_devices(&self, list: &DeviceList) -> Vec<usize> {
        let count = self.count(self.kind.code());
        match list {
            DeviceList::All => (0..count).collect(),
            DeviceList::Numbers(ns) => {
                let mut out = Vec::new();
                for &n in ns {
                    match usize::try_from(n) {
                        Ok(n) if n < count && !out.contains(&n) => out.push(n),
                        _ => {}
                    }
                }
                out
            }
        }
    }

    /// Runs `f` on device `num` of type `kind` (a GPU's context made current), then makes
    /// the current device current again.
    fn with_device<R>(
        &mut self,
        (kind, num): (DeviceKind, usize),
        f: impl FnOnce(Current<'_>) -> Result<R, RunError>,
    ) -> Result<R, RunError> {
        let saved = (self.kind, self.num);
        (self.kind, self.num) = (kind, num);
        let r = match self.current_device() {
            Ok(c) => f(c),
            Err(kind) => Err(RunError { kind, site: None }),
        };
        (self.kind, self.num) = saved;
        if (kind, num) != saved {
            let _ = self.current_device();
        }
        r
    }

    /// Whether any part of `a` is on device `num` of the current type.
    unsafe fn holds_on(&mut self, num: usize, a: *mut ArrayHeader) -> bool {
        let kind = self.kind;
        self.with_device((kind, num), |c| Ok(c.holds(a)))
            .unwrap_or(false)
    }

    /// Makes the row directory's transfers of array `host` (held on `devices`), in order,
    /// after the work queued on those devices. `queued`: copies between GPUs may be left
    /// queued on the destination's synchronous stream, where the next synchronous launch
    /// follows them (the host waits for that launch).
    unsafe fn move_rows(
        &mut self,
        host: *mut ArrayHeader,
        (kind, devices): (DeviceKind, &[usize]),
        transfers: &[Transfer],
        site: u32,
        queued: bool,
    ) -> Result<(), RunError> {
        if transfers.is_empty() {
            return Ok(());
        }
        let at = |kind| RunError {
            kind,
            site: Some(site),
        };
        for &d in devices {
            self.with_device((kind, d), |c| c.quiesce().map_err(at))?;
        }
        let dims = array::shape(host).to_vec();
        for t in transfers {
            let section = row_section(&dims, &t.rows);
            match (t.from, t.to) {
                (Place::Host, Place::Device(d)) => self.with_device((kind, d), |c| {
                    c.transfer(host, &section, true, site).map_err(at)
                })?,
                (Place::Device(d), Place::Host) => self.with_device((kind, d), |c| {
                    c.transfer(host, &section, false, site).map_err(at)
                })?,
                (Place::Device(from), Place::Device(to)) => {
                    let saved = self.kind;
                    self.kind = kind;
                    let copied = self.peer_rows(host, from, to, &section, site, queued);
                    self.kind = saved;
                    let _ = self.current_device();
                    copied.map_err(at)?
                }
                (Place::Host, Place::Host) => {}
            }
        }
        Ok(())
    }

    /// Copies `section` (whole rows) of `host`'s copies from device `from` to device `to`,
    /// recorded in the profile as a peer copy at `site` on `to`.
    unsafe fn peer_rows(
        &mut self,
        host: *mut ArrayHeader,
        from: usize,
        to: usize,
        section: &Section,
        site: u32,
        queued: bool,
    ) -> Result<(), RunErrorKind> {
        let start = Instant::now();
        self.copy_between(host, from, to, section, queued)?;
        let place = crate::profile::Place {
            site,
            device: crate::profile::DeviceRef {
                kind: self.kind.name(),
                num: to as u32,
            },
            queue: None,
        };
        let size = array::elem_size((*host).elem).unwrap_or(1) as u64;
        let bytes = section.elements().max(0) as u64 * size;
        let peer = crate::profile::EventKind::Peer { bytes };
        self.profiler.record(place, peer, start, Instant::now());
        Ok(())
    }

    unsafe fn copy_between(
        &mut self,
        host: *mut ArrayHeader,
        from: usize,
        to: usize,
        section: &Section,
        queued: bool,
    ) -> Result<(), RunErrorKind> {
        let absent = |n: usize| RunErrorKind::Internal {
            message: format!("a split array is not on device {n}"),
        };
        match self.kind {
            DeviceKind::Emulated => {
                let a = self
                    .emulated(from)
                    .copy_of(host)
                    .ok_or_else(|| absent(from))?;
                let b = self.emulated(to).copy_of(host).ok_or_else(|| absent(to))?;
                super::emulated::copy_section(a, b, section);
                Ok(())
            }
            DeviceKind::Nvidia => {
                let c = self.gpu_rows_copy(host, from, to, section)?;
                let copy = match queued {
                    true => super::peer::peer_copy_queued,
                    false => super::peer::peer_copy,
                };
                let copied = copy(c.to_end, c.to, c.from_end, c.from, c.bytes);
                let current = self.num;
                self.gpu(current)?;
                copied
            }
            DeviceKind::Host | DeviceKind::Multicore => Ok(()),
        }
    }

    /// The copy of `section` (whole rows) of `host`'s copies from GPU `from` to GPU `to`.
    unsafe fn gpu_rows_copy(
        &mut self,
        host: *mut ArrayHeader,
        from: usize,
        to: usize,
        section: &Section,
    ) -> Result<PeerCopy, RunErrorKind> {
        let absent = |n: usize| RunErrorKind::Internal {
            message: format!("a split array is not on device {n}"),
        };
        let size = array::elem_size((*host).elem).unwrap_or(1);
        let dims = array::shape(host);
        let row: usize = dims[1..].iter().map(|&d| d.max(0) as usize).product();
        let offset = (section.lo[0] as usize * row * size) as u64;
        let bytes = (section.hi[0] - section.lo[0]).max(0) as usize * row * size;
        let a = self.gpu(from)?;
        let (from_end, a) = (a.endpoint(), a.device_address(host));
        let b = self.gpu(to)?;
        let (to_end, b) = (b.endpoint(), b.device_address(host));
        Ok(PeerCopy {
            from_end,
            from: a.ok_or_else(|| absent(from))? + offset,
            to_end,
            to: b.ok_or_else(|| absent(to))? + offset,
            bytes,
        })
    }

    /// The rows the parts of a launch write that other devices hold stale copies of
    /// afterwards (halo rows a neighbour acquired before), for `push_stale_rows`. A device
    /// gets its rows only where they are few beside the block (`PUSH_SHARE`), as halos are;
    /// a device that holds much of a block (a whole array gathered for an unsplit construct)
    /// fetches it when it needs it.
    fn stale_pushes(&self, parts: &[Part]) -> Vec<Pushed> {
        let mut pushed = Vec::new();
        for part in parts {
            for (id, rows) in &part.wrote {
                let Some(s) = self.split.get(id) else {
                    continue;
                };
                if s.kind != self.kind {
                    continue;
                }
                let written = rows.end.min(s.directory.rows()).saturating_sub(rows.start);
                let stale = s
                    .directory
                    .stale_after_write(Place::Device(part.device), rows.clone());
                for (d, r) in stale {
                    // (Rows nobody wrote yet count as every device's, also those outside
                    // the region.)
                    let total: u64 = r.end - r.start;
                    if !s.devices.contains(&d) || total * PUSH_SHARE > written {
                        continue;
                    }
                    pushed.push(Pushed {
                        id: *id,
                        host: s.host(),
                        from: part.device,
                        to: d,
                        rows: r,
                    });
                }
            }
        }
        pushed
    }

    /// After the parts of a launch wrote their rows, sends `pushed` (`stale_pushes`) from
    /// the writers, so that the next launch finds them current instead of fetching them while
    /// the devices wait.
    ///
    /// `queued` (GPUs whose parts are started, not yet waited for): the copies follow the
    /// writers' kernels and the destinations' work so far on the GPUs' queues
    /// (`peer::push_after`), so the host does not wait; those from the devices in `early`
    /// follow their edge launches only (`edges.rs`). Otherwise the parts are done and each
    /// copy is made and recorded in the profile at `site` as any copy between devices is.
    /// Returns what was sent, for `record_pushed` once the writes are recorded.
    ///
    /// # Safety
    /// The split arrays' storages are live.
    unsafe fn push_stale_rows(
        &mut self,
        parts: &[Part],
        mut pushed: Vec<Pushed>,
        site: u32,
        queued: bool,
        marked: &[usize],
        early: &[usize],
    ) -> Result<Vec<Pushed>, RunErrorKind> {
        match self.kind {
            DeviceKind::Emulated | DeviceKind::Nvidia if !queued => {
                for p in &pushed {
                    let dims = array::shape(p.host).to_vec();
                    let section = row_section(&dims, &p.rows);
                    self.peer_rows(p.host, p.from, p.to, &section, site, false)?;
                }
            }
            DeviceKind::Emulated | DeviceKind::Nvidia => {
                let mut copies = Vec::with_capacity(pushed.len());
                for p in &pushed {
                    let dims = array::shape(p.host).to_vec();
                    let section = row_section(&dims, &p.rows);
                    copies.push(self.gpu_rows_copy(p.host, p.from, p.to, &section)?);
                }
                // A destination marked before the launch whose own part touches none of the
                // rows it receives need not finish that part first.
                let touches = |d: usize| {
                    pushed.iter().filter(|p| p.to == d).any(|p| {
                        parts.iter().filter(|q| q.device == d).any(|q| {
                            q.acquire.iter().any(|(id, _, rows)| {
                                *id == p.id && rows.start < p.rows.end && p.rows.start < rows.end
                            })
                        })
                    })
                };
                let mut marks = Vec::new();
                for &d in marked.iter().filter(|&&d| !touches(d)) {
                    marks.push(self.gpu(d)?.endpoint().context);
                }
                let mut edges_first = Vec::new();
                for &d in early {
                    edges_first.push(self.gpu(d)?.endpoint().context);
                }
                let sent = super::peer::push_after(&copies, &marks, &edges_first);
                let current = self.num;
                self.gpu(current)?;
                sent?;
            }
            DeviceKind::Host | DeviceKind::Multicore => pushed.clear(),
        }
        Ok(pushed)
    }

    /// Records rows `push_stale_rows` sent as held by their destinations again (after the
    /// launch's writes are recorded, which made them stale).
    fn record_pushed(&mut self, pushed: &[Pushed]) {
        for p in pushed {
            if let Some(s) = self.split.get_mut(&p.id) {
                let _ = s.directory.acquire(Place::Device(p.to), p.rows.clone());
            }
        }
    }

    // ---- data regions ----------------------------------------------------------------------

    /// The entry of a `data … devices(…)` region over `devices`: every clause's array is
    /// given storage on every device (present data must be present on each), and the arrays
    /// it brings get a row directory, with the host holding every row after `copy`/`copyin`
    /// and no row holding anything yet after `create`/`copyout`. Nothing is copied yet.
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub(super) unsafe fn enter_split_region(
        &mut self,
        ops: &[DataOpArg],
        devices: &[usize],
    ) -> Result<(), RunError> {
        let kind = self.kind;
        let count = self.count(kind.code());
        if count > crate::rows::MAX_DEVICES {
            return Err(RunError {
                kind: RunErrorKind::SplitData {
                    message: format!(
                        "{count} {} devices: a `devices(…)` region holds data over at most {}",
                        kind.name(),
                        crate::rows::MAX_DEVICES
                    ),
                    help: "list the devices to use, such as `devices(0, 1)`".into(),
                },
                site: ops.first().map(|op| op.site),
            });
        }
        for op in ops {
            let at = |kind| RunError {
                kind,
                site: Some(op.site),
            };
            let p = placed(op).map_err(at)?;
            if !p.section.is_whole(array::shape(p.storage)) || p.storage != op.array {
                return Err(at(RunErrorKind::SplitData {
                    message: "a `data … devices(…)` region holds whole arrays, not sections \
                              or reshaped views"
                        .into(),
                    help: "name the whole array, or hold the section in a plain `data` region"
                        .into(),
                }));
            }
            match self.split.get(&(*p.storage).id) {
                Some(s) if s.kind != kind || s.devices != devices => {
                    return Err(at(RunErrorKind::SplitData {
                        message: format!(
                            "is already held split over devices {:?} by an enclosing region",
                            s.devices
                        ),
                        help: "give both `devices(…)` regions the same devices".into(),
                    }))
                }
                Some(_) => {}
                None => {
                    let on = devices
                        .iter()
                        .copied()
                        .find(|&d| self.holds_on(d, p.storage));
                    let Some(d) = on else { continue };
                    if matches!(
                        op.action,
                        ACTION_COPY | ACTION_COPYIN | ACTION_COPYOUT | ACTION_CREATE
                    ) {
                        return Err(at(RunErrorKind::SplitData {
                            message: format!(
                                "is already on {}:{d}, put there outside a `devices(…)` region",
                                kind.name()
                            ),
                            help: "enter it in the `devices(…)` region only (not also in an \
                                   enclosing `data` or an `enter data`)"
                                .into(),
                        }));
                    }
                }
            }
        }
        let entry: Vec<DataOpArg> = ops.iter().map(allocating).collect();
        for (i, &d) in devices.iter().enumerate() {
            if let Err(e) = self.with_device((kind, d), |c| c.enter_ops(&entry)) {
                for &prev in &devices[..i] {
                    let _ = self.with_device((kind, prev), |c| c.exit_ops(&entry));
                }
                return Err(e);
            }
        }
        for op in ops {
            let host = storage(op.array);
            let id = (*host).id;
            if let Some(s) = self.split.get_mut(&id) {
                s.holds += 1;
                continue;
            }
            let valid = match op.action {
                ACTION_COPY | ACTION_COPYIN => Holders::HOST,
                ACTION_COPYOUT | ACTION_CREATE => Holders::NONE,
                _ => continue,
            };
            let directory =
                Directory::new(row_count(host), count, valid).map_err(|e| RunError {
                    kind: RunErrorKind::Internal {
                        message: e.to_string(),
                    },
                    site: Some(op.site),
                })?;
            let mut directory = directory;
            array::retain(host);
            // Copied data goes to the devices now, as a `data` region's would, each device
            // taking an equal block of rows: a block split of a loop over the rows then finds
            // its rows in place, and fetches only the rows where the blocks differ (halos).
            let mut transfers = Vec::new();
            if valid == Holders::HOST {
                let rows = row_count(host) as i64;
                for (&d, &(lo, hi)) in devices.iter().zip(&blocks(rows, devices.len())) {
                    let t = directory.acquire(Place::Device(d), lo as u64..hi as u64);
                    transfers.extend(t.unwrap_or_default());
                }
            }
            self.split.insert(
                id,
                SplitArray {
                    kind,
                    devices: devices.to_vec(),
                    directory,
                    host: Handle(host),
                    holds: 1,
                },
            );
            self.move_rows(host, (kind, devices), &transfers, op.site, false)?;
        }
        Ok(())
    }

    /// The exit of a `data … devices(…)` region: `copy` and `copyout` arrays leaving the
    /// devices bring the host the rows it lacks, each from a device that holds it; then every
    /// device lets go of its copies. A device whose copy stays (an `enter data` or
    /// `acc_copyin` inside the region holds it) first receives every row it lacks, and the
    /// host then receives nothing (data still present is copied out when it leaves, as
    /// OpenACC says). Every clause is exited; the first error is returned.
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub(super) unsafe fn exit_split_region(
        &mut self,
        ops: &[DataOpArg],
        devices: &[usize],
    ) -> Result<(), RunError> {
        let mut first = Ok(());
        for op in ops {
            let host = storage(op.array);
            let id = (*host).id;
            let Some(s) = self.split.get_mut(&id) else {
                continue;
            };
            s.holds -= 1;
            if s.holds > 0 {
                continue;
            }
            let Some(mut s) = self.split.remove(&id) else {
                continue;
            };
            let rows = 0..row_count(host);
            let staying: Vec<usize> = (s.devices.iter().copied())
                .filter(|&d| {
                    self.with_device((s.kind, d), |c| Ok(c.references(host)))
                        .unwrap_or(0)
                        > 1
                })
                .collect();
            let mut transfers = Vec::new();
            for &d in &staying {
                let t = s.directory.acquire(Place::Device(d), rows.clone());
                transfers.extend(t.unwrap_or_default());
            }
            if staying.is_empty() && matches!(op.action, ACTION_COPY | ACTION_COPYOUT) {
                transfers = s.directory.to_host(rows);
            }
            let moved = self.move_rows(host, (s.kind, &s.devices), &transfers, op.site, false);
            if first.is_ok() {
                first = moved;
            }
            array::release(s.host.0);
        }
        let exit: Vec<DataOpArg> = ops.iter().map(allocating).collect();
        let kind = self.kind;
        for &d in devices {
            let done = self.with_device((kind, d), |c| c.exit_ops(&exit));
            if first.is_ok() {
                first = done;
            }
        }
        first
    }

    /// `update self` / `update device` of arrays held split (the others are left to the
    /// device): `update self` brings the host the rows of the section it lacks (of part of a
    /// row, only that part, from a device that holds the row); `update device` makes the
    /// host's copy of the rows the current one (devices fetch them again when a block needs
    /// them). Returns the ops left for the current device.
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub(super) unsafe fn update_split(
        &mut self,
        ops: &[DataOpArg],
    ) -> Result<Vec<DataOpArg>, RunError> {
        let mut rest = Vec::new();
        for op in ops {
            let host = storage(op.array);
            let id = (*host).id;
            if !self.split.contains_key(&id) {
                rest.push(*op);
                continue;
            }
            let at = |kind| RunError {
                kind,
                site: Some(op.site),
            };
            let p = placed(op).map_err(at)?;
            let dims = array::shape(host);
            let rows = p.section.lo[0].max(0) as u64..p.section.hi[0].max(0) as u64;
            let whole_rows = row_section(dims, &rows) == p.section;
            let Some(s) = self.split.get_mut(&id) else {
                continue;
            };
            let held = (s.kind, s.devices.clone());
            if op.action == super::ops::ACTION_UPDATE_HOST && whole_rows {
                let transfers = s.directory.to_host(rows);
                self.move_rows(host, (held.0, &held.1), &transfers, op.site, false)?;
            } else if op.action == super::ops::ACTION_UPDATE_HOST {
                // Part of each row: the host does not hold the rows after it, so the directory
                // stays as it is; each run of rows comes from a device that holds it.
                let sources: Vec<(Range<u64>, usize)> = (s.directory.runs())
                    .filter(|(run, h)| {
                        run.start < rows.end && rows.start < run.end && !h.contains(Place::Host)
                    })
                    .filter_map(|(run, h)| {
                        let d = h.places().find_map(|p| match p {
                            Place::Device(d) => Some(d),
                            Place::Host => None,
                        })?;
                        Some((run.start.max(rows.start)..run.end.min(rows.end), d))
                    })
                    .collect();
                for &d in &held.1 {
                    self.with_device((held.0, d), |c| c.quiesce().map_err(at))?;
                }
                for (run, d) in sources {
                    let mut section = p.section;
                    section.lo[0] = run.start as i64;
                    section.hi[0] = run.end as i64;
                    self.with_device((held.0, d), |c| {
                        c.transfer(host, &section, false, op.site).map_err(at)
                    })?;
                }
            } else if whole_rows {
                s.directory.host_wrote(rows);
            } else {
                return Err(at(RunErrorKind::SplitData {
                    message: "`update device` of part of a row of an array held split".into(),
                    help: "update whole rows (`A[i:n]`, every column)".into(),
                }));
            }
        }
        Ok(rest)
    }

    // ---- launches ---------------------------------------------------------------------------

    /// Before a launch that runs whole on the current device: each array parameter held split
    /// gets its current contents in the place the launch reads it, the current device's copy
    /// (or the host's, when the current device holds none).
    ///
    /// # Safety
    /// The array parameters' slots of `args` hold live array headers.
    pub(super) unsafe fn before_split_use(
        &mut self,
        desc: &RegionDesc,
        args: &[u64],
        site: u32,
    ) -> Result<Vec<SplitUse>, RunError> {
        let mut used = Vec::new();
        if self.split.is_empty() {
            return Ok(used);
        }
        let current = self.num;
        for (p, &slot) in desc.params.iter().zip(args) {
            let a = slot as usize as *mut ArrayHeader;
            if !p.is_array() || a.is_null() {
                continue;
            }
            let host = storage(a);
            let id = (*host).id;
            let Some(s) = self.split.get_mut(&id) else {
                continue;
            };
            let rows = 0..row_count(host);
            // A launch on another device type (after `acc_set_device_type`) uses the host's
            // copy, as does one on a device that holds none.
            let on_device = s.kind == self.kind && s.devices.contains(&current);
            let transfers = if on_device {
                s.directory
                    .acquire(Place::Device(current), rows)
                    .unwrap_or_default()
            } else {
                s.directory.to_host(rows)
            };
            let held = (s.kind, s.devices.clone());
            self.move_rows(host, (held.0, &held.1), &transfers, site, false)?;
            used.push(SplitUse {
                id,
                written: p.written,
                on_device,
            });
        }
        Ok(used)
    }

    /// After such a launch: what it wrote is current where it ran.
    pub(super) fn after_split_use(&mut self, used: &[SplitUse]) {
        let current = self.num;
        for u in used.iter().filter(|u| u.written) {
            if let Some(s) = self.split.get_mut(&u.id) {
                let rows = 0..s.directory.rows();
                if u.on_device {
                    let _ = s.directory.wrote(Place::Device(current), rows);
                } else {
                    s.directory.host_wrote(rows);
                }
            }
        }
    }

    /// A synchronous construct on the current GPU as the one part of a split launch
    /// (`launch_on_gpus`), so that it queues behind a launch left running and may be left
    /// running itself (`deferred.rs`). False, having done nothing, where it must go the
    /// ordinary way (no kernel, data that is the host's): the caller catches up first.
    ///
    /// # Safety
    /// As `launch`.
    pub(super) unsafe fn launch_left_running(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>) -> bool {
        let mut parts = [Part::whole(self.num, l)];
        if self
            .launch_on_gpus(ctx, l, QueueArg::Sync, &mut parts, false, true)
            .is_none()
        {
            return false;
        }
        let [part] = parts;
        combine_parts(l.desc, &[part.into_args()], l.args);
        true
    }

    /// A launch of a region whose `devices(…)` split can be carried out: each listed device
    /// runs its block. False when the launch must run whole on the current device instead
    /// (see the module doc), having done nothing.
    ///
    /// # Safety
    /// As `Devices::launch`.
    pub(super) unsafe fn launch_split(&mut self, ctx: *mut Ctx, l: &mut Launch<'_>) -> bool {
        let desc = l.desc;
        let Some(plan) = desc.split.as_ref() else {
            return false;
        };
        let Ok(split) = plan.split.as_ref() else {
            return false;
        };
        if !matches!(self.kind, DeviceKind::Emulated | DeviceKind::Nvidia)
            || self.autocompare.is_some()
        {
            return false;
        }
        // Whether GPUs may run this construct while the host goes on: pushing halo rows
        // (`queued`) and leaving the launch running (`may_defer`, `deferred.rs`). Under
        // `--profile` and `--trace` everything is waited for, so that its time is its own.
        let push = l.waits.is_none() && l.queue == super::ASYNC_SYNC;
        let overlap = push && !self.opts.synchronous && !self.opts.profile.is_on();
        let queued = overlap && self.kind == DeviceKind::Nvidia;
        let may_defer = overlap && (l.late || !desc.has_results());
        let devices = self.listed_devices(&plan.devices);
        // On the current device alone the construct runs whole, as without the clause, unless
        // a GPU may leave it running: then it takes the way of a split over one GPU.
        let alone = devices == [self.num];
        if devices.is_empty() || (alone && !(queued && may_defer)) {
            return false;
        }
        let Some(parts) = self.plan_parts(l, split, &devices) else {
            return false;
        };
        // A `wait` clause orders the construct after work queued on the current device, on
        // which the parts on every device may depend (rows it copies back, say): the host
        // waits for it first.
        if l.waits.is_some() && !self.wait_clause(ctx, l.waits, QueueArg::Sync, l.site) {
            return true;
        }
        let Some(q) = self.queue_arg(ctx, l.queue, l.site) else {
            return true;
        };
        // Rows held split that blocks need from elsewhere move before any block runs; copies
        // between GPUs stay queued before a synchronous launch, which waits for them.
        // Likewise the rows the parts write go to the devices holding stale copies of them
        // (`push_stale_rows`): on GPUs while the parts run, else once they are done.
        for part in &parts {
            for (id, host, rows) in &part.acquire {
                let Some(s) = self.split.get_mut(id) else {
                    continue;
                };
                let transfers = s
                    .directory
                    .acquire(Place::Device(part.device), rows.clone())
                    .unwrap_or_default();
                let held = (s.kind, s.devices.clone());
                if let Err(e) = self.move_rows(*host, (held.0, &held.1), &transfers, l.site, queued)
                {
                    self.report_after_deferred(ctx, e);
                    return true;
                }
            }
        }
        let mut parts = parts;
        let mut pushed = self.launch_on_gpus(ctx, l, q, &mut parts, queued, may_defer);
        if pushed.is_none() {
            // The parts one after another, after whatever is left running.
            self.catch_up(ctx);
            if (*ctx).status != STATUS_OK {
                return true;
            }
            // Emulated devices run a part's edge iterations first where a GPU would
            // (`edges.rs`), so that CI runs the cut and the edge launches.
            let pushes = if push && self.kind == DeviceKind::Emulated {
                self.stale_pushes(&parts)
            } else {
                Vec::new()
            };
            let count = parts.len();
            let edges: Vec<Option<Edges>> = parts
                .iter()
                .map(|part| self.edges_first(l, part, count, &pushes))
                .collect();
            for (part, edges) in parts.iter_mut().zip(&edges) {
                let saved = self.num;
                self.num = part.device;
                match edges {
                    None => self.launch_on_device(ctx, &mut part.launch(l, None)),
                    Some(e) => self.launch_edges_first(ctx, l, part, e),
                }
                self.num = saved;
                let _ = self.current_device();
                if (*ctx).status != STATUS_OK {
                    self.tell_device(ctx, part);
                    // Emulated devices have run the part to its end, but tell its failure
                    // when a GPU's left running would be told.
                    if may_defer && self.kind == DeviceKind::Emulated {
                        if let Some(e) = host_state(ctx).take_error() {
                            (*ctx).status = STATUS_OK;
                            self.defer(ctx, super::deferred::Deferred::Failed(e));
                        }
                    }
                    return true;
                }
            }
        }
        // An `async` split construct completes before the host goes on (OpenACC allows it):
        // its parts are on every device's queue, where a later `wait`, which looks at the
        // current device, would not find them.
        if let QueueArg::Async(id) = q {
            self.finish_queued(ctx, &parts, id);
        }
        if (*ctx).status != STATUS_OK {
            return true;
        }
        if push && !queued {
            let stale = self.stale_pushes(&parts);
            match self.push_stale_rows(&parts, stale, l.site, false, &[], &[]) {
                Ok(p) => pushed = Some(p),
                Err(kind) => {
                    super::report(
                        ctx,
                        RunError {
                            kind,
                            site: Some(l.site),
                        },
                    );
                    return true;
                }
            }
        }
        let mut results: Vec<Vec<u64>> = Vec::new();
        for part in parts {
            for (id, rows) in &part.wrote {
                if let Some(s) = self.split.get_mut(id) {
                    let _ = s.directory.wrote(Place::Device(part.device), rows.clone());
                }
            }
            results.push(part.args);
        }
        self.record_pushed(&pushed.unwrap_or_default());
        // (A launch left running with its results has none yet: `catch_up` combines them.)
        combine_parts(desc, &results, l.args);
        true
    }

    /// `part` on the current device (an emulated one) as a GPU runs it with `edges`
    /// (`Part::start`): the edge iterations first, without clauses, then the rest of the
    /// block with the part's clauses; a failure ends it.
    ///
    /// # Safety
    /// As `Devices::launch`.
    unsafe fn launch_edges_first(
        &mut self,
        ctx: *mut Ctx,
        l: &Launch<'_>,
        part: &mut Part,
        edges: &Edges,
    ) {
        let (lo, hi) = edges.bounds;
        for r in edges.first() {
            let mut args = part.args.clone();
            (args[lo], args[hi]) = (r.start as u64, r.end as u64);
            self.launch_on_device(
                ctx,
                &mut Launch {
                    args: &mut args,
                    ops: &[],
                    ..part.launch(l, None)
                },
            );
            if (*ctx).status != STATUS_OK {
                return;
            }
        }
        let block = (part.args[lo], part.args[hi]);
        (part.args[lo], part.args[hi]) = (edges.interior.start as u64, edges.interior.end as u64);
        self.launch_on_device(ctx, &mut part.launch(l, None));
        (part.args[lo], part.args[hi]) = block;
    }

    /// Waits for queue `id` on every part's device, in device order, taking each device's
    /// output and errors (told with the device).
    ///
    /// # Safety
    /// `ctx` is a live context.
    unsafe fn finish_queued(&mut self, ctx: *mut Ctx, parts: &[Part], id: crate::queue::QueueId) {
        let kind = self.kind;
        for part in parts {
            let failed_before = (*ctx).status != STATUS_OK;
            let _ = self.with_device((kind, part.device), |c| {
                match c {
                    Current::Shared => {}
                    Current::Emulated(e) => {
                        e.wait(id);
                        e.drain(ctx);
                    }
                    Current::Nvidia(g) => g.wait(ctx, Some(id)),
                }
                Ok(())
            });
            if !failed_before && (*ctx).status != STATUS_OK {
                self.tell_device(ctx, part);
            }
        }
    }

    /// Reports `e` after catching up on a launch left running, whose failure came first.
    unsafe fn report_after_deferred(&mut self, ctx: *mut Ctx, e: RunError) {
        self.catch_up(ctx);
        super::report(ctx, e);
    }

    /// The error just recorded came from `part`'s device: its message says so (`Part::told`).
    unsafe fn tell_device(&self, ctx: *mut Ctx, part: &Part) {
        if part.told {
            self.tell_block(ctx, part.device, part.block, part.values)
        }
    }

    /// The error just recorded came from device `num` (of the current type), which ran the
    /// split loop's iterations `block` (values `values`): its message says so.
    pub(super) unsafe fn tell_block(
        &self,
        ctx: *mut Ctx,
        num: usize,
        block: (i64, i64),
        values: (i64, i64),
    ) {
        let device = format!("{}:{}", self.kind.name(), num);
        let block = format!(
            "iterations {} to {} of the split loop, values {} to {}",
            block.0,
            block.1 - 1,
            values.0,
            values.1
        );
        host_state(ctx).map_error(|error| match error {
            RunErrorKind::Interrupted | RunErrorKind::TimeLimit => error,
            error => RunErrorKind::OnDevice {
                device,
                block,
                error: Box::new(error),
            },
        });
    }

    /// The parts of a split launch on GPUs (one part or more), all at once: each GPU's part is
    /// started as it would start alone (clauses, kernel; its edge iterations first where it
    /// sends rows and that pays, `Part::start`), and only then does the host wait for each, in
    /// device order, taking its output, errors and results: the GPUs compute side by side.
    /// With `queued`, the rows the parts write that other GPUs hold stale copies of are sent
    /// between the starts and the waits (`push_stale_rows`), and returned. A launch left
    /// running before is caught up on between the starts and the waits (these parts queue
    /// behind it). With `may_defer`, a launch whose kernel prints nothing is itself left
    /// running instead of waited for (`deferred.rs`).
    /// `None`, having done nothing, where the parts must go the ordinary way one after
    /// another: not GPUs, a region with no kernel, or data that is the host's.
    ///
    /// # Safety
    /// As `Devices::launch`.
    pub(super) unsafe fn launch_on_gpus(
        &mut self,
        ctx: *mut Ctx,
        l: &Launch<'_>,
        q: QueueArg,
        parts: &mut [Part],
        queued: bool,
        may_defer: bool,
    ) -> Option<Vec<Pushed>> {
        if self.kind != DeviceKind::Nvidia || parts.is_empty() {
            return None;
        }
        let kernel = self.kernels.get(l.desc.key)?;
        for part in parts.iter() {
            match self.gpu(part.device) {
                Ok(gpu) if !gpu.uses_host_data(&part.ops) => {}
                _ => return None,
            }
        }
        // A part whose clauses copy an array out at its end gives something back: its exit
        // waits for the kernel (and could not be interrupted while left running).
        let mut copies_out = false;
        for part in parts.iter() {
            let gpu = self.gpu(part.device).ok()?;
            copies_out |= part.ops.iter().any(|op| {
                matches!(op.action, ACTION_COPY | ACTION_COPYOUT) && !gpu.holds(op.array)
            });
        }
        // Device printf output appears when the GPU synchronizes: the host's goes first.
        let _ = host_state(ctx).flush();
        // The point before the parts, which the halo rows they write wait for on the devices
        // receiving them (`push_stale_rows`).
        let mut marked = Vec::new();
        if queued {
            for part in parts.iter() {
                if self
                    .gpu(part.device)
                    .is_ok_and(|gpu| gpu.mark_work().is_ok())
                {
                    marked.push(part.device);
                }
            }
        }
        // The rows the parts will send, known before they start: a part that sends rows may
        // run the iterations writing them first (`edges.rs`).
        let pushes = if queued {
            self.stale_pushes(parts)
        } else {
            Vec::new()
        };
        let edges: Vec<Option<Edges>> = parts
            .iter()
            .map(|part| self.edges_first(l, part, parts.len(), &pushes))
            .collect();
        let early: Vec<usize> = parts
            .iter()
            .zip(&edges)
            .filter(|(_, e)| e.is_some())
            .map(|(part, _)| part.device)
            .collect();
        let mut pending = Vec::new();
        for (i, part) in parts.iter_mut().enumerate() {
            let device = part.device;
            let started = match self.gpu(device) {
                Ok(gpu) => part.start(gpu, ctx, l, q, &kernel, edges[i].as_ref()),
                Err(kind) => Err(RunError {
                    kind,
                    site: Some(l.site),
                }),
            };
            match started {
                Ok(p) => pending.push((i, p)),
                Err(e) => {
                    // A launch left running came first, and so does its failure.
                    self.catch_up(ctx);
                    if (*ctx).status == STATUS_OK {
                        super::report(ctx, e);
                        self.tell_device(ctx, part);
                    }
                    break;
                }
            }
        }
        let mut pushed = Vec::new();
        if queued && (*ctx).status == STATUS_OK {
            match self.push_stale_rows(parts, pushes, l.site, true, &marked, &early) {
                Ok(p) => pushed = p,
                Err(kind) => {
                    let e = RunError {
                        kind,
                        site: Some(l.site),
                    };
                    self.report_after_deferred(ctx, e);
                }
            }
        }
        self.catch_up(ctx);
        let all_started = pending.len() == parts.len() && pending.iter().all(|(_, p)| p.is_some());
        if may_defer
            && kernel.prints.is_none()
            && !copies_out
            && all_started
            && (*ctx).status == STATUS_OK
        {
            let mut left = Vec::new();
            for (i, p) in pending {
                let Some(mut p) = p else { continue };
                let part = &mut parts[i];
                let (device, block, values) = (part.device, part.block, part.values);
                let (args, part_told) = (part.args.clone(), part.told);
                let launch = part.launch(l, None);
                let deferred = match self.gpu(device) {
                    Ok(gpu) => gpu.defer(&launch, &mut p),
                    Err(kind) => Err(RunError {
                        kind,
                        site: Some(l.site),
                    }),
                };
                if let Err(e) = deferred {
                    super::report(ctx, e);
                }
                left.push(super::deferred::DeferredPart {
                    device,
                    pending: p,
                    block,
                    values,
                    told: part_told,
                    args,
                });
            }
            // Compiled code takes the results by the address of the slots it gave.
            let late = l.desc.has_results().then_some(super::deferred::LateLaunch {
                desc: l.desc,
                key: l.args.as_ptr() as usize,
            });
            self.defer(ctx, super::deferred::Deferred::Gpus(left, late));
            let _ = self.current_device();
            return Some(pushed);
        }
        // Every started part is waited for, even after an error, so that nothing runs on.
        for (i, p) in pending {
            let part = &mut parts[i];
            let Some(p) = p else { continue };
            let device = part.device;
            let mut launch = part.launch(l, None);
            let failed_before = (*ctx).status != STATUS_OK;
            let finished = match self.gpu(device) {
                Ok(gpu) => gpu.launch_finish(ctx, &mut launch, p),
                Err(kind) => Err(RunError {
                    kind,
                    site: Some(l.site),
                }),
            };
            if let Err(e) = finished {
                super::report(ctx, e);
            }
            if !failed_before && (*ctx).status != STATUS_OK {
                self.tell_device(ctx, part);
            }
        }
        let _ = self.current_device();
        Some(pushed)
    }

    /// Whether `part` (one of `count`) runs the iterations that write the rows it sends
    /// (`pushes`) first, and which they are (`edges.rs`): only for a launch without results
    /// whose order of iterations cannot be seen (`LoopSplit::ordered`: it neither prints nor
    /// calls a function), whose part has all its data present on its device (its clauses only
    /// count references), and where it pays (`EdgesFirst::pays`, from the bytes the part
    /// writes).
    ///
    /// # Safety
    /// The launch's arrays are live.
    unsafe fn edges_first(
        &self,
        l: &Launch<'_>,
        part: &Part,
        count: usize,
        pushes: &[Pushed],
    ) -> Option<Edges> {
        let mode = self.opts.edges_first;
        let sent: Vec<&Pushed> = pushes.iter().filter(|p| p.from == part.device).collect();
        if mode == EdgesFirst::Off || sent.is_empty() || l.desc.has_results() {
            return None;
        }
        // (Data only partly present would be entered by the rest of the block's clauses,
        // after the edges ran.)
        let present = |op: &DataOpArg| match self.kind {
            DeviceKind::Nvidia => (self.nvidia.get(part.device))
                .and_then(|g| g.as_ref())
                .is_some_and(|g| g.is_present(op).unwrap_or(false)),
            DeviceKind::Emulated => {
                (self.emulated.get(part.device)).is_some_and(|e| e.is_present(op).unwrap_or(false))
            }
            DeviceKind::Host | DeviceKind::Multicore => false,
        };
        if !part.ops.iter().all(present) {
            return None;
        }
        let split = l.desc.split.as_ref()?.split.as_ref().ok()?;
        if split.ordered {
            return None;
        }
        let launch_args = LaunchArgs::new(l.args, &l.desc.params);
        // Each split array the part sends rows of: its write span and rows.
        let mut spans = Vec::new();
        for a in &split.arrays {
            let host = *l.args.get(a.param)? as usize as *mut ArrayHeader;
            if sent.iter().any(|p| p.host == host) {
                spans.push((host, &a.writes, row_count(host)));
            }
        }
        let mut written = 0u64;
        for (id, rows) in &part.wrote {
            if let Some(s) = self.split.get(id) {
                let host = s.host();
                let row_bytes = array::shape(host)[1..].iter().fold(
                    array::elem_size((*host).elem).unwrap_or(1) as u64,
                    |b, &d| b.saturating_mul(d.max(0) as u64),
                );
                written = written.saturating_add((rows.end - rows.start).saturating_mul(row_bytes));
            }
        }
        if !mode.pays(written, count) {
            return None;
        }
        let misses = |a: i64, b: i64| {
            if a >= b {
                return true;
            }
            let Some((first, last)) = split.values(a, b, &launch_args) else {
                return false;
            };
            sent.iter().all(|p| {
                spans
                    .iter()
                    .filter(|(host, ..)| *host == p.host)
                    .all(|(_, writes, rows)| {
                        let w = touched(writes.rows(first, last, *rows as i64), None, *rows);
                        w.is_none_or(|w| w.end <= p.rows.start || p.rows.end <= w.start)
                    })
            })
        };
        edges::edges(
            part.block.0..part.block.1,
            misses,
            (split.lo_param, split.hi_param),
        )
    }

    /// The devices' parts of a split launch; `None` when it must run whole instead.
    unsafe fn plan_parts(
        &mut self,
        l: &Launch<'_>,
        split: &LoopSplit,
        devices: &[usize],
    ) -> Option<Vec<Part>> {
        let desc = l.desc;
        let launch_args = LaunchArgs::new(l.args, &desc.params);
        let trip = split.trip_count(&launch_args)?;
        if trip <= 0 {
            return None;
        }
        // A clause's section is checked whole, as on every device (LANGUAGE.md 7.3): a bad
        // one runs the construct whole, which reports it, before any part would clip it.
        if l.ops.iter().any(|op| placed(op).is_err()) {
            return None;
        }
        // The arrays: their storage, and whether a devices region holds them split.
        struct Arr<'s> {
            host: *mut ArrayHeader,
            id: u64,
            held: bool,
            reads: &'s RowSpan,
            writes: &'s RowSpan,
        }
        let mut arrays = Vec::new();
        for a in &split.arrays {
            let host = *l.args.get(a.param)? as usize as *mut ArrayHeader;
            if host.is_null() || storage(host) != host {
                return None;
            }
            let id = (*host).id;
            let held = match self.split.get(&id) {
                Some(s) if s.kind == self.kind && devices.iter().all(|d| s.devices.contains(d)) => {
                    true
                }
                Some(_) => return None,
                None => false,
            };
            if !held && devices.iter().any(|&d| self.holds_on(d, host)) {
                return None;
            }
            arrays.push(Arr {
                host,
                id,
                held,
                reads: &a.reads,
                writes: &a.writes,
            });
        }
        let find = |op: &DataOpArg| arrays.iter().find(|a| storage(op.array) == a.host);
        if l.ops
            .iter()
            .any(|op| find(op).is_some_and(|a| a.host != op.array))
        {
            return None;
        }
        let mut parts = Vec::new();
        for (&device, &(lo, hi)) in devices.iter().zip(&blocks(trip, devices.len())) {
            if lo >= hi {
                continue;
            }
            let values = split.values(lo, hi, &launch_args)?;
            let mut args = l.args.to_vec();
            *args.get_mut(split.lo_param)? = lo as u64;
            *args.get_mut(split.hi_param)? = hi as u64;
            if !parts.is_empty() {
                for r in &desc.reductions {
                    args[r.param] = r.identity;
                }
            }
            let mut part = Part {
                device,
                block: (lo, hi),
                values,
                args,
                ops: Vec::new(),
                acquire: Vec::new(),
                wrote: Vec::new(),
                told: false,
            };
            let mut spans = Vec::new();
            for a in &arrays {
                let rows = row_count(a.host);
                let read = a.reads.rows(values.0, values.1, rows as i64);
                let write = a.writes.rows(values.0, values.1, rows as i64);
                let used = touched(read, write, rows);
                let written = touched(write, None, rows);
                if a.held {
                    if let Some(r) = &used {
                        part.acquire.push((a.id, a.host, r.clone()));
                    }
                    if let Some(w) = &written {
                        part.wrote.push((a.id, w.clone()));
                    }
                }
                spans.push((used, written.is_some()));
            }
            for op in l.ops {
                let found = arrays.iter().position(|a| storage(op.array) == a.host);
                match found {
                    // Data the region does not use goes with the first device's part.
                    None if parts.is_empty() => part.ops.push(*op),
                    None => {}
                    Some(i) if arrays[i].held => part.ops.push(*op),
                    Some(i) => {
                        if let (Some(rows), writes) = &spans[i] {
                            part.ops.extend(narrowed(op, rows, *writes));
                        }
                    }
                }
            }
            parts.push(part);
        }
        let several = parts.len() > 1;
        for p in &mut parts {
            p.told = several || p.device != self.num;
        }
        (!parts.is_empty()).then_some(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_touched_are_the_hull_clipped_to_the_array() {
        assert_eq!(touched(Some((2, 6)), Some((3, 5)), 100), Some(2..7));
        assert_eq!(touched(Some((-1, 3)), None, 100), Some(0..4));
        assert_eq!(touched(None, Some((98, 101)), 100), Some(98..100));
        assert_eq!(touched(None, None, 100), None);
        assert_eq!(touched(Some((120, 130)), None, 100), None);
    }

    #[test]
    fn device_lists_skip_missing_devices_and_repeats() {
        let devices = Devices::new(
            super::super::DeviceOptions::new()
                .device(DeviceKind::Emulated, 0)
                .emulated_devices(3),
            Default::default(),
        );
        assert_eq!(devices.listed_devices(&DeviceList::All), vec![0, 1, 2]);
        assert_eq!(
            devices.listed_devices(&DeviceList::Numbers(vec![2, 0, 2, 7])),
            vec![2, 0]
        );
    }
}
