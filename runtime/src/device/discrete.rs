//! The data rules of a discrete device (one with memory of its own), written once for every
//! such device: present-or entry, reference-counted exit, `update`, `present`, and their
//! errors (LANGUAGE.md 7.3, 7.4; OpenACC 3.3, 2.6.7 and 2.7). A device supplies only the
//! primitives (`Memory`): make a device copy of an array, free it, copy a section either way,
//! now or on a queue.
//!
//! Presence changes when a directive is issued (data entered asynchronously counts as present
//! at once); the transfers are queued. The table holds a reference on every present host
//! array, so that its identity stays valid until its data leaves the device.
//!
//! Presence is a property of storage, not of a view: a `reshape` view and the array it shares
//! are one entry, keyed by the storage (`storage`), with every section in the storage's shape
//! (`Section::reshaped`), so they share one device copy. A launch gives a view that copy in
//! the view's own shape.
//!
//! `present` and `no_create` of present data hold a reference like every other clause of a
//! structured construct (OpenACC 3.3, 2.7.5 and 2.7.10): an `exit data` inside the construct
//! only takes the dynamic one, and the data stays until the construct ends.
//!
//! A construct's clauses enter and exit as a whole (`enter_ops`, `exit_ops`): a clause that
//! fails on entry undoes the clauses entered before it, and a failed exit still exits the
//! rest, so that an error leaves nothing present that the construct brought.

use super::ops::{placed, section_text, storage, Placed};
use super::ops::{
    DataOpArg, DataPhase, QueueArg, ACTION_COPY, ACTION_COPYIN, ACTION_COPYOUT, ACTION_CREATE,
    ACTION_DELETE, ACTION_NO_CREATE, ACTION_PRESENT, ACTION_UPDATE_DEVICE, ACTION_UPDATE_HOST,
};
use crate::abi::ArrayHeader;
use crate::array;
use crate::error::{RunError, RunErrorKind};
use crate::presence::{EnterError, Lookup, PresenceError, PresenceTable, RefKind, Section};
use acc_abi::DataModifiers;

/// An array handle that crosses threads. The runtime keeps a reference on the array for as
/// long as a job holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle(pub *mut ArrayHeader);

// SAFETY: array headers and data are plain memory; reference counts are atomic; the
// runtime's queue discipline (or the program's `wait`s, as in OpenACC) orders the accesses.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

/// What a discrete device provides to `Discrete`.
pub(crate) trait Memory {
    /// A device copy of one array (the whole array's shape; sections are parts of it).
    type Copy;

    /// `emulated:0`, `nvidia:1`: how errors name the device.
    fn name(&self) -> String;

    /// A device copy of `host`'s shape (contents unspecified).
    ///
    /// # Safety
    /// `host` is a live array.
    unsafe fn alloc(&mut self, host: *mut ArrayHeader) -> Result<Self::Copy, RunErrorKind>;

    /// Frees a copy once the work queued on `q` before now is done (work on other queues
    /// that uses it is the program's to wait for, as in OpenACC).
    fn free(&mut self, copy: Self::Copy, q: QueueArg);

    /// Copies `section` of `host` to (`upload`) or from the copy, now or on `q`; `site` names
    /// the variable for the profile.
    ///
    /// # Safety
    /// `host` is a live array of the copy's shape.
    unsafe fn transfer(
        &mut self,
        host: *mut ArrayHeader,
        copy: &Self::Copy,
        section: &Section,
        upload: bool,
        site: u32,
        q: QueueArg,
    ) -> Result<(), RunErrorKind>;
}

/// A present array: its device copy, and the host array (referenced by the table).
pub(crate) struct Present<C> {
    pub copy: C,
    pub host: Handle,
}

/// A discrete device's memory with its presence table.
pub(crate) struct Discrete<M: Memory> {
    presence: PresenceTable<Present<M::Copy>>,
    pub memory: M,
}

impl<M: Memory> Discrete<M> {
    pub fn new(memory: M) -> Discrete<M> {
        Discrete {
            presence: PresenceTable::new(),
            memory,
        }
    }

    /// Arrays with data on the device.
    pub fn present_arrays(&self) -> usize {
        self.presence.len()
    }

    /// The device copy of host array `a` (of its storage, in the storage's shape), when any
    /// part of it is present.
    ///
    /// # Safety
    /// `a` is a live array.
    pub unsafe fn copy_of(&self, a: *mut ArrayHeader) -> Option<&M::Copy> {
        self.presence.device((*storage(a)).id).map(|p| &p.copy)
    }

    /// Copies `section` of host array `host` (a storage, not a view) to (`upload`) or from
    /// its device copy, now: the row directory's transfers (`device::split`). Nothing when no
    /// part of it is present.
    ///
    /// # Safety
    /// `host` is a live array.
    pub unsafe fn transfer_present(
        &mut self,
        host: *mut ArrayHeader,
        section: &Section,
        upload: bool,
        site: u32,
    ) -> Result<(), RunErrorKind> {
        match self.presence.device((*host).id) {
            Some(present) => {
                self.memory
                    .transfer(host, &present.copy, section, upload, site, QueueArg::Sync)
            }
            None => Ok(()),
        }
    }

    /// The references, structured and dynamic, on the whole of array `a` (0 when it is not
    /// present whole).
    ///
    /// # Safety
    /// `a` is a live array.
    pub unsafe fn references(&self, a: *mut ArrayHeader) -> u32 {
        let host = storage(a);
        let whole = Section::whole(array::shape(host));
        (self.presence.counts((*host).id, &whole)).map_or(0, |(s, d)| s + d)
    }

    /// `acc_is_present`.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub unsafe fn is_present(&self, op: &DataOpArg) -> Result<bool, RunErrorKind> {
        let p = placed(op)?;
        Ok(matches!(
            self.presence.lookup((*p.storage).id, &p.section),
            Lookup::Present(_)
        ))
    }

    /// The entry of a construct's clauses, in order. When one fails, those entered before it
    /// are exited again (`exit_ops`) and its error is returned: nothing stays present.
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub unsafe fn enter_ops(&mut self, ops: &[DataOpArg], q: QueueArg) -> Result<(), RunError> {
        for (i, op) in ops.iter().enumerate() {
            if let Err(e) = self.data_op(DataPhase::RegionEntry, op, DataModifiers::NONE, q) {
                let _ = self.exit_ops(&ops[..i], q);
                return Err(e);
            }
        }
        Ok(())
    }

    /// The exit of a construct's clauses, in order, as at the construct's end (copy-outs
    /// included). A failing clause does not stop the others: every clause is exited, and the
    /// first error is returned.
    ///
    /// # Safety
    /// The ops' arrays are live.
    pub unsafe fn exit_ops(&mut self, ops: &[DataOpArg], q: QueueArg) -> Result<(), RunError> {
        let mut first = Ok(());
        for op in ops {
            let done = self.data_op(DataPhase::RegionExit, op, DataModifiers::NONE, q);
            if first.is_ok() {
                first = done;
            }
        }
        first
    }

    /// One op of a data directive or of a compute construct's entry or exit.
    ///
    /// # Safety
    /// `op.array` is a live array.
    pub unsafe fn data_op(
        &mut self,
        phase: DataPhase,
        op: &DataOpArg,
        modifiers: DataModifiers,
        q: QueueArg,
    ) -> Result<(), RunError> {
        let at = |kind| RunError {
            kind,
            site: Some(op.site),
        };
        let p = placed(op).map_err(at)?;
        let kind = if phase.structured() {
            RefKind::Structured
        } else {
            RefKind::Dynamic
        };
        let entering = matches!(phase, DataPhase::RegionEntry | DataPhase::Enter);
        let exiting = matches!(phase, DataPhase::RegionExit | DataPhase::Exit);
        match op.action {
            ACTION_PRESENT | ACTION_NO_CREATE if entering => self
                .enter_present(op, &p, kind, op.action == ACTION_PRESENT)
                .map_err(at),
            ACTION_COPY | ACTION_COPYIN | ACTION_COPYOUT | ACTION_CREATE if entering => {
                let upload = matches!(op.action, ACTION_COPY | ACTION_COPYIN);
                self.enter(op, &p, kind, upload, q).map_err(at)
            }
            ACTION_COPY | ACTION_COPYIN | ACTION_COPYOUT | ACTION_CREATE | ACTION_DELETE
            | ACTION_PRESENT | ACTION_NO_CREATE
                if exiting =>
            {
                let download = matches!(op.action, ACTION_COPY | ACTION_COPYOUT);
                let finalize = modifiers.contains(DataModifiers::FINALIZE);
                self.exit(op, &p, kind, finalize, download, q).map_err(at)
            }
            ACTION_UPDATE_HOST | ACTION_UPDATE_DEVICE => {
                let if_present = modifiers.contains(DataModifiers::IF_PRESENT);
                self.update(op, &p, op.action == ACTION_UPDATE_HOST, if_present, q)
                    .map_err(at)
            }
            _ => Ok(()),
        }
    }

    /// `present(a)` and `no_create(a)` on entry: present data gains a reference of `kind`
    /// (its exit is an ordinary exit, with nothing to copy out); absent data is an error for
    /// `present` and the host's data for `no_create`.
    unsafe fn enter_present(
        &mut self,
        op: &DataOpArg,
        p: &Placed,
        kind: RefKind,
        required: bool,
    ) -> Result<(), RunErrorKind> {
        match self
            .presence
            .enter_present((*p.storage).id, &p.section, kind)
        {
            Ok(_) => Ok(()),
            Err(PresenceError::Absent) if !required => Ok(()),
            Err(e) => Err(self.presence_error(op, p, e)),
        }
    }

    unsafe fn enter(
        &mut self,
        op: &DataOpArg,
        p: &Placed,
        kind: RefKind,
        upload: bool,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let host = p.storage;
        let memory = &mut self.memory;
        let entered = self.presence.try_enter((*host).id, p.section, kind, || {
            let copy = memory.alloc(host)?;
            array::retain(host);
            Ok(Present {
                copy,
                host: Handle(host),
            })
        });
        let fresh = match entered {
            Ok(e) => e.fresh(),
            Err(EnterError::Make(e)) => return Err(e),
            Err(EnterError::Presence(e)) => return Err(self.presence_error(op, p, e)),
        };
        if fresh && upload {
            if let Some(present) = self.presence.device((*host).id) {
                let copied =
                    self.memory
                        .transfer(host, &present.copy, &p.section, true, op.site, q);
                if let Err(e) = copied {
                    // The section never arrived: it leaves again, with nothing to copy out.
                    let gone = self.presence.exit((*host).id, &p.section, kind, false);
                    if let Some(present) = gone.ok().and_then(|x| x.into_freed()) {
                        self.memory.free(present.copy, q);
                        array::release(present.host.0);
                    }
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    unsafe fn exit(
        &mut self,
        op: &DataOpArg,
        p: &Placed,
        kind: RefKind,
        finalize: bool,
        download: bool,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let host = p.storage;
        let exited = match self.presence.exit((*host).id, &p.section, kind, finalize) {
            Ok(x) => x,
            // Exiting data that is not present does nothing (OpenACC 3.3, 2.7.11), nor does
            // the exit of a `no_create` that found its data absent.
            Err(PresenceError::Absent) => return Ok(()),
            Err(e) => return Err(self.presence_error(op, p, e)),
        };
        let removed = exited.removed();
        let freed = exited.into_freed();
        let mut copied = Ok(());
        if removed && download {
            let copy = match &freed {
                Some(present) => Some(&present.copy),
                None => self
                    .presence
                    .device((*host).id)
                    .map(|present| &present.copy),
            };
            if let Some(copy) = copy {
                copied = self
                    .memory
                    .transfer(host, copy, &p.section, false, op.site, q);
            }
        }
        // The data has left the table: its copy is freed even when the copy-out failed.
        if let Some(present) = freed {
            self.memory.free(present.copy, q);
            array::release(present.host.0);
        }
        copied
    }

    unsafe fn update(
        &mut self,
        op: &DataOpArg,
        p: &Placed,
        to_host: bool,
        if_present: bool,
        q: QueueArg,
    ) -> Result<(), RunErrorKind> {
        let copy = match self.presence.lookup((*p.storage).id, &p.section) {
            Lookup::Present(present) => &present.copy,
            Lookup::Absent if if_present => return Ok(()),
            Lookup::Absent => {
                return Err(RunErrorKind::UpdateAbsent {
                    section: section_text(op, &p.written),
                    device: self.memory.name(),
                })
            }
            Lookup::Partial { present } => return Err(self.partly_present(op, p, present)),
        };
        self.memory
            .transfer(p.storage, copy, &p.section, !to_host, op.site, q)
    }

    unsafe fn presence_error(&self, op: &DataOpArg, p: &Placed, e: PresenceError) -> RunErrorKind {
        match e {
            PresenceError::Partial { present } => self.partly_present(op, p, present),
            PresenceError::Absent => RunErrorKind::NotPresent {
                section: section_text(op, &p.written),
                device: self.memory.name(),
            },
        }
    }

    /// `present` is a present section in the storage's shape: it is shown in the shape of
    /// the clause's array where it is a section of it.
    unsafe fn partly_present(&self, op: &DataOpArg, p: &Placed, present: Section) -> RunErrorKind {
        let (view, storage) = (array::shape(op.array), array::shape(p.storage));
        let present = match present.reshaped(storage, view) {
            Some(s) => s.display("", view),
            None => present.display("", storage),
        };
        RunErrorKind::PartlyPresent {
            section: section_text(op, &p.written),
            present,
            device: self.memory.name(),
        }
    }

    /// Frees everything (the device is going away; its queues are drained).
    pub fn free_all(&mut self) {
        for (_, p) in self.presence.drain() {
            self.memory.free(p.copy, QueueArg::Sync);
            // SAFETY: the table's reference.
            unsafe { array::release(p.host.0) };
        }
    }
}
