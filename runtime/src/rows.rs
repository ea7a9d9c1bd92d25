//! The row directory of one array split across devices (`devices(...)`, issue 19): which places
//! (the host, devices `0..n`) hold the current contents of which rows, and what must move so
//! that a device can run its block of a loop.
//!
//! Under `devices(...)` an array is split along its first, slowest dimension. A *row* is one
//! index of that dimension: a whole row of a matrix, one element of a vector. A range of rows is
//! one contiguous range of bytes in a row-major array, so every [`Transfer`] this module asks
//! for is one copy.
//!
//! Why it is shaped the way it is:
//!
//! - **A set of valid holders per row** ([`Holders`]), not an owner. A device holds the rows its
//!   block reads (its own rows plus halos), several devices may hold the same row (a halo, or a
//!   replicated read-only array), and the host is one more holder. A row written by a launch has
//!   exactly one holder, the device that wrote it ([`Directory::wrote`]); copying it somewhere
//!   adds the destination to the set. So "send written rows to whoever reads them next, and
//!   nothing else" falls out: a row moves when a place that lacks it asks for it
//!   ([`Directory::acquire`]), never when it is written.
//! - **Lazy filling.** After `copyin` only the host holds the rows; a device receives the rows
//!   it touches on its first `acquire`, so the rows no device touches never move, and a device
//!   never receives rows outside its block and halo.
//! - **"No valid copy yet" is "every place holds it".** After `create` (or `copyout` on entry)
//!   the contents are undefined, and any place's garbage is as good as any other's: modelling
//!   the rows as held by the host and every device makes `acquire` and `to_host` of unwritten
//!   rows move nothing, and a write then makes the writer the only holder as usual, so the
//!   answers stay right once something is written. [`Directory::new`] with an empty holder set
//!   means exactly this ([`Holders::all`] says it explicitly). It also keeps the invariant that
//!   **every row has at least one holder**: no operation can lose the current contents
//!   ([`Directory::drop_device`] hands a device's only copies to the host first).
//! - **Where a row comes from is a policy** ([`Policy`]): by default from a device that holds it
//!   (a peer copy, faster than through the host where devices have peer access), the
//!   lowest-numbered one; on machines without peer access, rows only devices hold are staged
//!   through the host ([`Policy::NoPeer`]), which then holds them too. A range held by several
//!   devices keeps coming from the device the previous rows came from while that device holds
//!   them, so it moves in one piece rather than one piece per holder set.
//! - **Maximal runs.** The rows are kept as a partition of `0..rows` into maximal runs with the
//!   same holder set (a `BTreeMap` from each run's first row to its holders; neighbours always
//!   differ). A block split keeps a handful of runs whatever the array's size (an 8192-row
//!   array over four devices is at most seven after a halo exchange), and every operation costs
//!   O(runs touched · log runs).
//! - **The directory moves no data.** Like the presence table (`presence.rs`), its answers are
//!   what the caller must do: the transfers, in an order that is safe to perform one after
//!   another (staging copies to the host come before the copies out of the host that need
//!   them). It records them as done when it answers, so the caller must make them before the
//!   launch that needs them, and order them after the launches that wrote their sources (the
//!   queues' business, not this table's). Being independent of any device keeps it testable
//!   against a model (the tests simulate the memories and check every answer) and
//!   shared by every discrete device.
//!
//! The caller's side of a launch of a split loop: for each device, [`Directory::acquire`] the
//! rows it reads and the rows it writes only partly (a row it overwrites entirely needs no
//! acquire); make the transfers; launch; then [`Directory::wrote`] each device's written rows.
//! The written blocks of one launch must be disjoint (the split of an affine first subscript
//! makes them so); the directory records the writes in the order it is told, so of two devices
//! claiming one row the last wins. At a region's end or an `update self`, [`Directory::to_host`];
//! for `update device` or a host write, [`Directory::host_wrote`] (devices refetch lazily).
//!
//! Row ranges are `Range<u64>` and are **clipped** to `0..rows`: a halo computed as `block ± 1`
//! may run past the array's end, and the rows past it do not exist. An empty or reversed range
//! (`5..2`) is empty and does nothing. The only error is naming a device the directory does not
//! have ([`RowsError`]); an operation that fails changes nothing.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;

/// The most devices a directory can track (one bit each beside the host's in a `u64`).
pub const MAX_DEVICES: usize = 63;

/// A place that can hold a copy of a row. Ordered host first, then devices by number, which is
/// the order answers list sources and destinations in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Place {
    Host,
    /// A device by its number among the devices of the current type (0-based).
    Device(usize),
}

impl Place {
    /// The place's bit in a [`Holders`]; 0 for a device number no `Holders` can represent.
    fn bit(self) -> u64 {
        match self {
            Place::Host => 1,
            Place::Device(d) if d < MAX_DEVICES => 1 << (d + 1),
            Place::Device(_) => 0,
        }
    }
}

/// A set of places: the host's bit and one bit per device.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Holders(u64);

impl Holders {
    pub const NONE: Holders = Holders(0);
    pub const HOST: Holders = Holders(1);

    /// The host and devices `0..devices` (at most [`MAX_DEVICES`] of them): the holders of rows
    /// with no valid copy yet (see the module doc).
    pub fn all(devices: usize) -> Holders {
        let places = devices.min(MAX_DEVICES) + 1;
        Holders(if places >= 64 {
            u64::MAX
        } else {
            (1 << places) - 1
        })
    }

    /// The set of one place (empty for a device number past [`MAX_DEVICES`]).
    pub fn only(place: Place) -> Holders {
        Holders(place.bit())
    }

    pub fn with(self, place: Place) -> Holders {
        Holders(self.0 | place.bit())
    }

    pub fn without(self, place: Place) -> Holders {
        Holders(self.0 & !place.bit())
    }

    pub fn contains(self, place: Place) -> bool {
        self.0 & place.bit() != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The places in the set, host first, then devices in increasing order.
    pub fn places(self) -> impl Iterator<Item = Place> {
        let host = self.contains(Place::Host).then_some(Place::Host);
        let devices = (0..MAX_DEVICES)
            .filter(move |&d| self.0 & (1 << (d + 1)) != 0)
            .map(Place::Device);
        host.into_iter().chain(devices)
    }

    /// The device to copy a run from: `previous` (the device the rows just before came from)
    /// while it holds this run too, so a range moves in as few pieces as the holders allow;
    /// else the lowest-numbered device holding it.
    fn pick_device(self, previous: Option<usize>) -> Option<usize> {
        match previous {
            Some(d) if self.contains(Place::Device(d)) => Some(d),
            _ => {
                let devices = self.0 >> 1;
                (devices != 0).then(|| devices.trailing_zeros() as usize)
            }
        }
    }

    fn intersect(self, other: Holders) -> Holders {
        Holders(self.0 & other.0)
    }
}

impl fmt::Debug for Holders {
    /// `{host, 0, 2}`: the places by name, devices by number.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.places().map(|p| match p {
            Place::Host => "host".to_string(),
            Place::Device(d) => d.to_string(),
        });
        write!(f, "{{{}}}", names.collect::<Vec<_>>().join(", "))
    }
}

/// Where [`Directory::acquire`] takes rows a device lacks from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// From a device that holds them (a peer copy), else from the host.
    #[default]
    PreferPeer,
    /// From the host when it holds them, else from a device (a peer copy).
    PreferHost,
    /// Never device to device, for machines without peer access: from the host, and rows only
    /// devices hold go to the host first (the host then holds them too).
    NoPeer,
}

/// One copy the caller must make: rows `rows` from `from` to `to`. `rows` is never empty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transfer {
    pub from: Place,
    pub to: Place,
    pub rows: Range<u64>,
}

impl Transfer {
    /// The number of rows the transfer copies.
    pub fn row_count(&self) -> u64 {
        self.rows.end.saturating_sub(self.rows.start)
    }
}

/// The number of rows a list of transfers copies, for profiling (times the row's size in
/// bytes, the bytes moved).
pub fn rows_moved(transfers: &[Transfer]) -> u64 {
    transfers.iter().map(Transfer::row_count).sum()
}

/// The ways an operation of the directory can be refused: the caller named more devices, or a
/// device, than the directory has. Both are mistakes of the caller, which reports them as an
/// internal error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowsError {
    TooManyDevices { devices: usize },
    NoSuchDevice { device: usize, devices: usize },
}

impl fmt::Display for RowsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowsError::TooManyDevices { devices } => write!(
                f,
                "a row directory over {devices} devices (at most {MAX_DEVICES})"
            ),
            RowsError::NoSuchDevice { device, devices } => write!(
                f,
                "device {device} of a row directory over {devices} devices"
            ),
        }
    }
}

impl std::error::Error for RowsError {}

/// The row directory of one array: see the module doc.
#[derive(Clone, Debug)]
pub struct Directory {
    rows: u64,
    devices: usize,
    policy: Policy,
    /// The first row of each maximal run of rows with one holder set, and that set. The runs
    /// partition `0..rows` (a run ends where the next begins, the last at `rows`), neighbours
    /// have different sets, and no set is empty.
    runs: BTreeMap<u64, Holders>,
}

/// The transfers of one answer as they are found, in row order, merged where one continues the
/// previous one of the same source and destination.
#[derive(Default)]
struct Plan {
    transfers: Vec<Transfer>,
}

impl Plan {
    fn push(&mut self, from: Place, to: Place, rows: Range<u64>) {
        let same = self
            .transfers
            .iter_mut()
            .rev()
            .find(|t| t.from == from && t.to == to);
        match same {
            Some(t) if t.rows.end == rows.start => t.rows.end = rows.end,
            _ => self.transfers.push(Transfer { from, to, rows }),
        }
    }

    /// The transfers ordered by destination (the host first, so staging copies come before
    /// the copies that read them), then source, then first row.
    fn finish(mut self) -> Vec<Transfer> {
        self.transfers.sort_by_key(|t| (t.to, t.from, t.rows.start));
        self.transfers
    }
}

impl Directory {
    /// A directory of `rows` rows over devices `0..devices`, every row held by `valid` (places
    /// past `devices` are ignored). After `copyin`, `Holders::HOST`; with no valid copy yet
    /// (`create`), `Holders::NONE`, which means every place (see the module doc).
    pub fn new(rows: u64, devices: usize, valid: Holders) -> Result<Directory, RowsError> {
        if devices > MAX_DEVICES {
            return Err(RowsError::TooManyDevices { devices });
        }
        let all = Holders::all(devices);
        let valid = match valid.intersect(all) {
            Holders::NONE => all,
            some => some,
        };
        let mut runs = BTreeMap::new();
        if rows > 0 {
            runs.insert(0, valid);
        }
        Ok(Directory {
            rows,
            devices,
            policy: Policy::default(),
            runs,
        })
    }

    /// The same directory taking rows by `policy` from now on.
    pub fn with_policy(mut self, policy: Policy) -> Directory {
        self.policy = policy;
        self
    }

    pub fn rows(&self) -> u64 {
        self.rows
    }

    pub fn devices(&self) -> usize {
        self.devices
    }

    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The places holding the current contents of `row`; `None` past the last row.
    pub fn holders(&self, row: u64) -> Option<Holders> {
        if row >= self.rows {
            return None;
        }
        self.runs.range(..=row).next_back().map(|(_, &h)| h)
    }

    /// The maximal runs of rows with one holder set, in order: for tests, and for `--info`.
    pub fn runs(&self) -> impl Iterator<Item = (Range<u64>, Holders)> + '_ {
        let ends = self
            .runs
            .keys()
            .skip(1)
            .copied()
            .chain(std::iter::once(self.rows));
        self.runs.iter().zip(ends).map(|((&start, &h), end)| (start..end, h))
    }

    /// Before a launch: device `dev` needs the current contents of `rows`. Returns the
    /// transfers that bring them (none for rows it holds), and records `dev` (and with
    /// [`Policy::NoPeer`], the host for staged rows) as holding them. `Place::Host` is
    /// [`Directory::to_host`].
    pub fn acquire(&mut self, dev: Place, rows: Range<u64>) -> Result<Vec<Transfer>, RowsError> {
        self.check(dev)?;
        Ok(self.fetch(dev, rows))
    }

    /// After a launch: `dev` wrote `rows` and holds their only current copy. Also a host write
    /// with `Place::Host` ([`Directory::host_wrote`]).
    pub fn wrote(&mut self, dev: Place, rows: Range<u64>) -> Result<(), RowsError> {
        self.check(dev)?;
        let rows = self.clip(rows);
        self.update(rows, |_| Holders::only(dev));
        Ok(())
    }

    /// For `update self` and the copy-out at a region's end: the transfers that bring the host
    /// the current contents of `rows` (none for rows it holds); the host then holds them.
    pub fn to_host(&mut self, rows: Range<u64>) -> Vec<Transfer> {
        self.fetch(Place::Host, rows)
    }

    /// The host wrote `rows` (or `update device` made its copy the one to use): it holds their
    /// only current copy, and devices fetch them again on their next acquire.
    pub fn host_wrote(&mut self, rows: Range<u64>) {
        let rows = self.clip(rows);
        self.update(rows, |_| Holders::HOST);
    }

    /// Device `dev` leaves (its copy is about to be freed): returns the transfers that save to
    /// the host the rows only `dev` holds, and forgets `dev` as a holder everywhere.
    pub fn drop_device(&mut self, dev: usize) -> Result<Vec<Transfer>, RowsError> {
        let place = Place::Device(dev);
        self.check(place)?;
        let mut plan = Plan::default();
        for (rows, holders) in self.runs() {
            if holders == Holders::only(place) {
                plan.push(place, Place::Host, rows);
            }
        }
        self.update(0..self.rows, |h| match h.without(place) {
            Holders::NONE => Holders::HOST,
            rest => rest,
        });
        Ok(plan.finish())
    }

    fn check(&self, place: Place) -> Result<(), RowsError> {
        match place {
            Place::Device(device) if device >= self.devices => Err(RowsError::NoSuchDevice {
                device,
                devices: self.devices,
            }),
            _ => Ok(()),
        }
    }

    /// `rows` within `0..self.rows`; empty if reversed.
    fn clip(&self, rows: Range<u64>) -> Range<u64> {
        let end = rows.end.min(self.rows);
        rows.start.min(end)..end
    }

    /// [`Directory::acquire`] of a place already checked.
    fn fetch(&mut self, to: Place, rows: Range<u64>) -> Vec<Transfer> {
        let rows = self.clip(rows);
        let mut plan = Plan::default();
        let mut staged = Vec::new();
        let mut previous = None;
        for (run, holders) in self.runs_within(rows.clone()) {
            if holders.contains(to) {
                continue;
            }
            let host = holders.contains(Place::Host);
            let device = holders.pick_device(previous);
            let peer_ok = match self.policy {
                Policy::PreferPeer => true,
                Policy::PreferHost => !host,
                Policy::NoPeer => false,
            };
            let from = match device {
                Some(d) if to == Place::Host || peer_ok => Place::Device(d),
                Some(d) if !host => {
                    // NoPeer and only devices hold the run: through the host.
                    plan.push(Place::Device(d), Place::Host, run.clone());
                    staged.push(run.clone());
                    Place::Host
                }
                _ if host => Place::Host,
                // A run with no holder: the invariant says there is none; move nothing rather
                // than invent a source.
                _ => continue,
            };
            if device.is_some() && (from != Place::Host || !host) {
                previous = device;
            }
            plan.push(from, to, run);
        }
        self.update(rows, |h| h.with(to));
        for run in staged {
            self.update(run, |h| h.with(Place::Host));
        }
        plan.finish()
    }

    /// The runs overlapping `rows` (already clipped), cut to `rows`.
    fn runs_within(&self, rows: Range<u64>) -> Vec<(Range<u64>, Holders)> {
        let Some(mut holders) = self.holders(rows.start).filter(|_| !rows.is_empty()) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let mut start = rows.start;
        for (&next, &h) in self.runs.range(rows.start + 1..rows.end) {
            out.push((start..next, holders));
            start = next;
            holders = h;
        }
        out.push((start..rows.end, holders));
        out
    }

    /// Replaces the holders of `rows` (already clipped) by `f` of them, keeping the runs
    /// maximal.
    fn update(&mut self, rows: Range<u64>, f: impl Fn(Holders) -> Holders) {
        if rows.is_empty() {
            return;
        }
        self.split(rows.start);
        self.split(rows.end);
        for (_, h) in self.runs.range_mut(rows.start..rows.end) {
            *h = f(*h);
        }
        // Merge from the run before `rows` through the run starting at its end: only runs
        // whose holders changed or that now border a changed one can equal a neighbour.
        let first = self
            .runs
            .range(..rows.start)
            .next_back()
            .map_or(rows.start, |(&k, _)| k);
        let window: Vec<(u64, Holders)> = self
            .runs
            .range(first..=rows.end)
            .map(|(&k, &h)| (k, h))
            .collect();
        let mut previous = None;
        for (start, holders) in window {
            if previous == Some(holders) {
                self.runs.remove(&start);
            } else {
                previous = Some(holders);
            }
        }
    }

    /// Makes `at` the first row of a run (a no-op at 0, past the end, or where one starts).
    fn split(&mut self, at: u64) {
        if at == 0 || at >= self.rows || self.runs.contains_key(&at) {
            return;
        }
        if let Some(h) = self.holders(at) {
            self.runs.insert(at, h);
        }
    }
}
