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
//!   never receives rows it did not ask for.
//! - **"No valid copy yet" is "every place holds it".** After `create` (or `copyout` on entry)
//!   the contents are undefined, and any place's garbage is as good as any other's: modelling
//!   the rows as held by the host and every device makes `acquire` and `to_host` of unwritten
//!   rows move nothing, and a write then makes the writer the only holder as usual, so the
//!   answers stay right once something is written. [`Directory::new`] with an empty holder set
//!   means exactly this ([`Holders::all`] says it explicitly). It also keeps the invariant that
//!   **every row has at least one holder**: no operation can lose the current contents
//!   ([`Directory::drop_device`] hands a device's only copies to the host first).
//! - **Fewest pieces first, then a policy** ([`Policy`]). Each copy has a fixed cost, so a range
//!   keeps coming from the place the previous rows came from while that place holds them, and
//!   where it must change, from the place that holds the most rows ahead: that moves a range
//!   in the fewest pieces its holders allow, not one per holder set. (Preferring a peer row by
//!   row would split the first halo fetch after `copyin` into a host piece and a peer piece.)
//!   Between sources that do equally well, by default a device (a peer copy, faster than
//!   through the host where devices have peer access), the lowest-numbered; on machines
//!   without peer access, rows only devices hold are staged through the host
//!   ([`Policy::NoPeer`]), which then holds them too.
//! - **Maximal runs.** The rows are kept as a partition of `0..rows` into maximal runs with the
//!   same holder set (a `BTreeMap` from each run's first row to its holders; neighbours always
//!   differ). A block split keeps a handful of runs whatever the array's size (an 8192-row
//!   array over four devices is at most seven after a halo exchange), and an operation on a
//!   range costs O(runs touched · (log runs + devices)); `drop_device` touches every run.
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
//! (`5..2`) is empty and does nothing. The only errors ([`RowsError`]) are a directory over more
//! than [`MAX_DEVICES`] devices and naming a device the directory does not have; an operation
//! that fails changes nothing.

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

/// Where [`Directory::acquire`] takes rows a device lacks from. The rows always come in the
/// fewest pieces their holders allow (each copy has a fixed cost); the policy decides between
/// sources that do equally well.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Policy {
    /// A device that holds them (a peer copy, the lowest-numbered), else the host.
    #[default]
    PreferPeer,
    /// The host, else the lowest-numbered device that holds them (a peer copy).
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
        self.runs
            .iter()
            .zip(ends)
            .map(|((&start, &h), end)| (start..end, h))
    }

    /// Before a launch: device `dev` needs the current contents of `rows`. Returns the
    /// transfers that bring them (none for rows it holds), and records `dev` (and with
    /// [`Policy::NoPeer`], the host for staged rows) as holding them. `Place::Host` is
    /// [`Directory::to_host`].
    pub fn acquire(&mut self, dev: Place, rows: Range<u64>) -> Result<Vec<Transfer>, RowsError> {
        self.check(dev)?;
        Ok(self.fetch(dev, rows))
    }

    /// After a launch: `dev` wrote `rows` and holds their only current copy. The directory takes
    /// `dev`'s copy of `rows` as whole: the launch overwrote them entirely, or `dev` acquired
    /// them before it. Also a host write with `Place::Host` ([`Directory::host_wrote`]).
    pub fn wrote(&mut self, dev: Place, rows: Range<u64>) -> Result<(), RowsError> {
        self.check(dev)?;
        let rows = self.clip(rows);
        self.update(rows, |_| Holders::only(dev));
        Ok(())
    }

    /// Before `dev`'s write of `rows` is recorded: the copies that write will make stale, as
    /// the rows of `rows` that each other device holds a current copy of (merged per device,
    /// in device order). Rows with no valid copy yet count as every device's (they cannot be
    /// told from rows every place holds). A caller that sends a device its listed rows after
    /// the write ([`Directory::acquire`] records it) keeps a halo current without waiting to
    /// be asked.
    pub fn stale_after_write(&self, dev: Place, rows: Range<u64>) -> Vec<(usize, Range<u64>)> {
        let rows = self.clip(rows);
        let mut stale: Vec<(usize, Range<u64>)> = Vec::new();
        for (run, holders) in self.runs_within(rows) {
            for place in holders.without(dev).places() {
                let Place::Device(d) = place else { continue };
                match stale
                    .iter_mut()
                    .find(|(e, r)| *e == d && r.end == run.start)
                {
                    Some((_, r)) => r.end = run.end,
                    None => stale.push((d, run.clone())),
                }
            }
        }
        stale.sort_by_key(|(d, r)| (*d, r.start));
        stale
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
        let staging = self.policy == Policy::NoPeer && to != Place::Host;
        let runs = self.runs_within(rows.clone());
        let furthest = self.furthest(&runs, to, staging);
        let mut plan = Plan::default();
        let mut staged = Vec::new();
        // The source of the previous run, while the piece it started can go on.
        let mut previous: Option<Place> = None;
        for ((run, holders), furthest) in runs.into_iter().zip(furthest) {
            if holders.contains(to) {
                previous = None;
                continue;
            }
            let source = previous.filter(|&p| holders.contains(p)).or(furthest);
            let from = if staging && holders.contains(Place::Host) {
                previous = None;
                Place::Host
            } else if let Some(source) = source {
                previous = Some(source);
                if staging {
                    // No peer access, and only devices hold the run: through the host.
                    plan.push(source, Place::Host, run.clone());
                    staged.push(run.clone());
                    Place::Host
                } else {
                    source
                }
            } else {
                // A run with no holder: the invariant says there is none; move nothing rather
                // than invent a source.
                continue;
            };
            plan.push(from, to, run);
        }
        self.update(rows, |h| h.with(to));
        for run in staged {
            self.update(run, |h| h.with(Place::Host));
        }
        plan.finish()
    }

    /// For each run of an answer bringing rows to `to`, the source to take it from when the
    /// previous run's source does not hold it: of the places holding it, the one holding the
    /// longest stretch of runs `to` lacks from here on, ties broken by the policy (devices
    /// first, lowest number first, for `PreferPeer`; the host first for `PreferHost`). Staying
    /// with a source while it holds the rows and otherwise taking the one that reaches furthest
    /// makes every piece as long as it can be, which is the fewest pieces (the greedy cover of
    /// a line by intervals). The host is no candidate when it is the destination, or when
    /// staging (`NoPeer`: the candidates are the devices a run only devices hold goes to the
    /// host from).
    fn furthest(
        &self,
        runs: &[(Range<u64>, Holders)],
        to: Place,
        staging: bool,
    ) -> Vec<Option<Place>> {
        let devices = (0..self.devices).map(Place::Device);
        let host = (to != Place::Host && !staging).then_some(Place::Host);
        let order: Vec<Place> = match self.policy {
            Policy::PreferHost => host.into_iter().chain(devices).collect(),
            Policy::PreferPeer | Policy::NoPeer => devices.chain(host).collect(),
        };
        let mut streak = vec![0usize; order.len()];
        let mut best = vec![None; runs.len()];
        for (i, (_, holders)) in runs.iter().enumerate().rev() {
            let needed = !holders.contains(to);
            let mut chosen: Option<(usize, Place)> = None;
            for (streak, &place) in streak.iter_mut().zip(&order) {
                *streak = if needed && holders.contains(place) {
                    *streak + 1
                } else {
                    0
                };
                // Strictly longer only: the first in the policy's order wins a tie.
                if *streak > 0 && chosen.is_none_or(|(n, _)| *streak > n) {
                    chosen = Some((*streak, place));
                }
            }
            best[i] = chosen.map(|(_, place)| place);
        }
        best
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use Place::{Device, Host};

    fn t(from: Place, to: Place, rows: Range<u64>) -> Transfer {
        Transfer { from, to, rows }
    }

    fn set(places: &[Place]) -> Holders {
        places.iter().fold(Holders::NONE, |h, &p| h.with(p))
    }

    fn runs(dir: &Directory) -> Vec<(Range<u64>, Holders)> {
        dir.runs().collect()
    }

    /// The halo rows a write makes stale are the neighbours' copies of the writer's block,
    /// and nothing else: not the writer's own, not the host's.
    #[test]
    fn a_write_makes_the_neighbours_halo_rows_stale() {
        let mut dir = Directory::new(10, 3, Holders::HOST).unwrap();
        for (d, rows) in [(0, 0..5), (1, 2..8), (2, 6..10)] {
            dir.acquire(Device(d), rows).unwrap();
        }
        // Device 1's block 3..7: device 0 holds 3..5, device 2 holds 6..7.
        assert_eq!(
            dir.stale_after_write(Device(1), 3..7),
            vec![(0, 3..5), (2, 6..7)]
        );
        // Rows only the host holds are no device's stale copy.
        let host_only = Directory::new(10, 2, Holders::HOST).unwrap();
        assert_eq!(host_only.stale_after_write(Device(0), 0..10), vec![]);
        // Undefined rows (after `create`) are every device's; the range is clipped.
        let created = Directory::new(10, 2, Holders::NONE).unwrap();
        assert_eq!(
            created.stale_after_write(Device(0), 0..20),
            vec![(1, 0..10)]
        );
        // After device 0 writes 0..5, device 1 gets its halo row 4 pushed, and the write of
        // 5..10 by device 1 makes device 0's row 5 stale.
        let mut dir = Directory::new(10, 2, Holders::HOST).unwrap();
        dir.acquire(Device(0), 0..6).unwrap();
        dir.acquire(Device(1), 4..10).unwrap();
        assert_eq!(dir.stale_after_write(Device(0), 0..5), vec![(1, 4..5)]);
        assert_eq!(dir.stale_after_write(Device(1), 5..10), vec![(0, 5..6)]);
    }

    /// Two devices, rows 0..10: device 0 runs rows 0..5 and reads 0..6, device 1 runs 5..10 and
    /// reads 4..10 (Jacobi's block ± 1, clipped at the edges).
    #[test]
    fn two_device_jacobi_cycle() {
        let mut dir = Directory::new(10, 2, Holders::HOST).unwrap();
        // First launch: each device gets its block and halo from the host, nothing more.
        assert_eq!(
            dir.acquire(Device(0), 0..6),
            Ok(vec![t(Host, Device(0), 0..6)])
        );
        assert_eq!(
            dir.acquire(Device(1), 4..10),
            Ok(vec![t(Host, Device(1), 4..10)])
        );
        assert_eq!(
            runs(&dir),
            vec![
                (0..4, set(&[Host, Device(0)])),
                (4..6, set(&[Host, Device(0), Device(1)])),
                (6..10, set(&[Host, Device(1)])),
            ]
        );
        dir.wrote(Device(0), 0..5).unwrap();
        dir.wrote(Device(1), 5..10).unwrap();
        assert_eq!(
            runs(&dir),
            vec![(0..5, set(&[Device(0)])), (5..10, set(&[Device(1)]))]
        );
        // Every later launch: one halo row each way, peer to peer.
        for _ in 0..3 {
            assert_eq!(
                dir.acquire(Device(0), 0..6),
                Ok(vec![t(Device(1), Device(0), 5..6)])
            );
            assert_eq!(
                dir.acquire(Device(1), 4..10),
                Ok(vec![t(Device(0), Device(1), 4..5)])
            );
            dir.wrote(Device(0), 0..5).unwrap();
            dir.wrote(Device(1), 5..10).unwrap();
        }
        // The copy-out: each device's block once; then the host has everything.
        let out = dir.to_host(0..10);
        assert_eq!(
            out,
            vec![t(Device(0), Host, 0..5), t(Device(1), Host, 5..10)]
        );
        assert_eq!(rows_moved(&out), 10);
        assert_eq!(dir.to_host(0..10), vec![]);
        assert_eq!(
            runs(&dir),
            vec![
                (0..5, set(&[Host, Device(0)])),
                (5..10, set(&[Host, Device(1)])),
            ]
        );
    }

    /// A copy-out right after a halo exchange: the shared halo rows come with the piece they
    /// continue, so still two transfers and every row once.
    #[test]
    fn copy_out_after_a_halo_exchange() {
        let mut dir = Directory::new(10, 2, Holders::HOST).unwrap();
        dir.wrote(Device(0), 0..5).unwrap();
        dir.wrote(Device(1), 5..10).unwrap();
        dir.acquire(Device(0), 0..6).unwrap();
        dir.acquire(Device(1), 4..10).unwrap();
        // Rows 0..4 {0}, 4..6 {0, 1}, 6..10 {1}: device 0 reaches row 6, then device 1.
        assert_eq!(
            dir.to_host(0..10),
            vec![t(Device(0), Host, 0..6), t(Device(1), Host, 6..10)]
        );
    }

    /// An 8192-row array over four devices of 2048 rows each stays a few runs.
    #[test]
    fn block_split_stays_a_few_runs() {
        let mut dir = Directory::new(8192, 4, Holders::HOST).unwrap();
        let block = |d: u64| d * 2048..(d + 1) * 2048;
        let halo = |d: u64| (d * 2048).saturating_sub(1)..(d + 1) * 2048 + 1;
        for d in 0..4 {
            let got = dir.acquire(Device(d as usize), halo(d)).unwrap();
            assert_eq!(
                got,
                vec![t(
                    Host,
                    Device(d as usize),
                    halo(d).start..halo(d).end.min(8192)
                )]
            );
        }
        for d in 0..4 {
            dir.wrote(Device(d as usize), block(d)).unwrap();
        }
        assert_eq!(dir.runs().count(), 4);
        let mut moved = 0;
        for d in 0..4 {
            moved += rows_moved(&dir.acquire(Device(d as usize), halo(d)).unwrap());
        }
        // Three inner boundaries, one row each way.
        assert_eq!(moved, 6);
        assert_eq!(
            dir.acquire(Device(1), halo(1)),
            Ok(vec![]),
            "a second acquire moves nothing"
        );
        assert_eq!(
            runs(&dir),
            vec![
                (0..2047, set(&[Device(0)])),
                (2047..2049, set(&[Device(0), Device(1)])),
                (2049..4095, set(&[Device(1)])),
                (4095..4097, set(&[Device(1), Device(2)])),
                (4097..6143, set(&[Device(2)])),
                (6143..6145, set(&[Device(2), Device(3)])),
                (6145..8192, set(&[Device(3)])),
            ]
        );
    }

    /// After `create` nothing is valid: nothing moves until something is written.
    #[test]
    fn undefined_rows_move_nothing_until_written() {
        let mut dir = Directory::new(10, 2, Holders::NONE).unwrap();
        assert_eq!(dir.holders(3), Some(Holders::all(2)));
        assert_eq!(dir.acquire(Device(0), 0..6), Ok(vec![]));
        assert_eq!(dir.to_host(0..10), vec![]);
        dir.wrote(Device(1), 5..10).unwrap();
        assert_eq!(
            dir.acquire(Device(0), 0..6),
            Ok(vec![t(Device(1), Device(0), 5..6)])
        );
        // Row 5 is on both devices, 6..10 on device 1 only: one piece from device 1, since
        // device 1 holds the longer stretch.
        assert_eq!(dir.to_host(0..10), vec![t(Device(1), Host, 5..10)]);
        assert_eq!(dir.runs().count(), 2);
    }

    /// Rows 0..2 held by devices {0, 1}, 2..4 by {1, 2}, 4..6 by {2}: the lowest holder of each
    /// would take three pieces, the furthest-reaching two.
    #[test]
    fn sources_cover_a_range_in_the_fewest_pieces() {
        let mut dir = Directory::new(6, 3, Holders::NONE).unwrap();
        dir.wrote(Device(1), 0..4).unwrap();
        assert_eq!(
            dir.acquire(Device(0), 0..2),
            Ok(vec![t(Device(1), Device(0), 0..2)])
        );
        dir.wrote(Device(2), 4..6).unwrap();
        assert_eq!(
            dir.acquire(Device(2), 2..4),
            Ok(vec![t(Device(1), Device(2), 2..4)])
        );
        assert_eq!(
            dir.to_host(0..6),
            vec![t(Device(1), Host, 0..4), t(Device(2), Host, 4..6)]
        );
    }

    /// A directory of `rows` rows over three devices taking rows by `policy`, where device 1
    /// wrote `written` and then fetched `fetched` from the host.
    fn policy_fixture(
        policy: Policy,
        rows: u64,
        written: Range<u64>,
        fetched: Range<u64>,
    ) -> Directory {
        let mut dir = Directory::new(rows, 3, Holders::HOST)
            .unwrap()
            .with_policy(policy);
        dir.wrote(Device(1), written).unwrap();
        dir.acquire(Device(1), fetched).unwrap();
        dir
    }

    /// Rows 0..4 held by device 1 and the host: the policy breaks the tie.
    #[test]
    fn policies_break_ties() {
        let expect = [
            (Policy::PreferPeer, t(Device(1), Device(0), 0..4)),
            (Policy::PreferHost, t(Host, Device(0), 0..4)),
            (Policy::NoPeer, t(Host, Device(0), 0..4)),
        ];
        for (policy, transfer) in expect {
            let mut dir = policy_fixture(policy, 4, 0..0, 0..4);
            assert_eq!(
                dir.acquire(Device(0), 0..4),
                Ok(vec![transfer]),
                "{policy:?}"
            );
        }
    }

    /// Rows 0..2 held by device 1 only, 2..4 by device 1 and the host: one piece from device 1
    /// beats a host piece and a peer piece, whatever the preference, unless there is no peer
    /// access.
    #[test]
    fn fewer_pieces_beat_the_preference() {
        for policy in [Policy::PreferPeer, Policy::PreferHost] {
            let mut dir = policy_fixture(policy, 4, 0..2, 2..4);
            assert_eq!(
                runs(&dir),
                vec![(0..2, set(&[Device(1)])), (2..4, set(&[Host, Device(1)]))]
            );
            assert_eq!(
                dir.acquire(Device(0), 0..4),
                Ok(vec![t(Device(1), Device(0), 0..4)]),
                "{policy:?}"
            );
            assert_eq!(dir.holders(0), Some(set(&[Device(0), Device(1)])));
        }
        // No peer access: rows 0..2 go through the host, staged first, and then the host sends
        // the whole range at once.
        let mut none = policy_fixture(Policy::NoPeer, 4, 0..2, 2..4);
        assert_eq!(
            none.acquire(Device(0), 0..4),
            Ok(vec![t(Device(1), Host, 0..2), t(Host, Device(0), 0..4)])
        );
        assert_eq!(
            runs(&none),
            vec![(0..4, set(&[Host, Device(0), Device(1)]))]
        );
    }

    /// Rows 0..2 on the host, 2..4 on the host and device 1, 4..6 on device 1: the host reaches
    /// further from row 0, and a piece goes on while its source holds the rows.
    #[test]
    fn a_piece_goes_on_while_its_source_holds() {
        for policy in [Policy::PreferPeer, Policy::PreferHost] {
            let mut dir = policy_fixture(policy, 6, 4..6, 2..4);
            assert_eq!(
                dir.acquire(Device(0), 0..6),
                Ok(vec![
                    t(Host, Device(0), 0..4),
                    t(Device(1), Device(0), 4..6)
                ]),
                "{policy:?}"
            );
        }
    }

    #[test]
    fn host_writes_make_devices_refetch() {
        let mut dir = Directory::new(8, 2, Holders::HOST).unwrap();
        dir.acquire(Device(0), 0..8).unwrap();
        dir.acquire(Device(1), 0..8).unwrap();
        dir.host_wrote(2..5);
        assert_eq!(dir.holders(2), Some(Holders::HOST));
        assert_eq!(dir.holders(5), Some(Holders::all(2)));
        assert_eq!(
            dir.acquire(Device(1), 0..8),
            Ok(vec![t(Host, Device(1), 2..5)])
        );
        // `wrote(Host, …)` is the same thing.
        dir.wrote(Host, 7..8).unwrap();
        assert_eq!(dir.holders(7), Some(Holders::HOST));
    }

    #[test]
    fn dropping_a_device_saves_its_only_copies() {
        let mut dir = Directory::new(10, 2, Holders::HOST).unwrap();
        dir.wrote(Device(0), 0..5).unwrap();
        dir.wrote(Device(1), 5..10).unwrap();
        dir.acquire(Device(0), 0..6).unwrap();
        dir.acquire(Device(1), 4..10).unwrap();
        // Row 4 is on device 1 too; rows 0..4 only on device 0.
        assert_eq!(dir.drop_device(0), Ok(vec![t(Device(0), Host, 0..4)]));
        assert_eq!(
            runs(&dir),
            vec![(0..4, Holders::HOST), (4..10, set(&[Device(1)]))]
        );
        // A dropped device fetches everything again.
        assert_eq!(
            dir.acquire(Device(0), 0..6),
            Ok(vec![
                t(Host, Device(0), 0..4),
                t(Device(1), Device(0), 4..6)
            ])
        );
    }

    #[test]
    fn ranges_are_clipped_and_devices_checked() {
        let mut dir = Directory::new(4, 1, Holders::HOST).unwrap();
        assert_eq!(
            dir.acquire(Device(0), 2..100),
            Ok(vec![t(Host, Device(0), 2..4)])
        );
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = 3..1;
        assert_eq!(dir.acquire(Device(0), reversed.clone()), Ok(vec![]));
        assert_eq!(dir.to_host(7..9), vec![]);
        dir.wrote(Device(0), 9..12).unwrap();
        dir.wrote(Device(0), reversed).unwrap();
        assert_eq!(dir.holders(0), Some(Holders::HOST));
        assert_eq!(dir.holders(3), Some(set(&[Host, Device(0)])));
        assert_eq!(dir.holders(4), None);

        let before = runs(&dir);
        let missing = Err(RowsError::NoSuchDevice {
            device: 1,
            devices: 1,
        });
        assert_eq!(dir.acquire(Device(1), 0..4), missing);
        assert_eq!(
            dir.wrote(Device(1), 0..4),
            Err(missing.clone().unwrap_err())
        );
        assert_eq!(dir.drop_device(1), missing);
        assert!(dir.acquire(Device(usize::MAX), 0..4).is_err());
        assert_eq!(runs(&dir), before, "a refused operation changes nothing");

        assert_eq!(
            Directory::new(4, 64, Holders::HOST).map(|_| ()),
            Err(RowsError::TooManyDevices { devices: 64 })
        );
        let widest = Directory::new(4, MAX_DEVICES, Holders::NONE).unwrap();
        assert_eq!(widest.holders(0), Some(Holders(u64::MAX)));
        assert!(Holders::all(MAX_DEVICES).contains(Device(62)));
        assert!(!Holders::all(2).contains(Device(2)));

        // No rows: nothing to hold or move.
        let mut empty = Directory::new(0, 2, Holders::HOST).unwrap();
        assert_eq!(empty.acquire(Device(0), 0..5), Ok(vec![]));
        assert_eq!(empty.to_host(0..5), vec![]);
        assert_eq!(empty.drop_device(1), Ok(vec![]));
        assert_eq!(empty.runs().count(), 0);
        assert_eq!(empty.holders(0), None);
    }

    #[test]
    fn holders_print_as_sets() {
        assert_eq!(
            format!("{:?}", set(&[Device(2), Host, Device(0)])),
            "{host, 0, 2}"
        );
        assert_eq!(format!("{:?}", Holders::NONE), "{}");
        assert_eq!(Holders::only(Device(MAX_DEVICES)), Holders::NONE);
    }

    // --- the model ------------------------------------------------------------------------

    /// What a freed device's memory holds: never a version anyone wrote.
    const GONE: u64 = u64::MAX;

    /// The simulated memories: each place's copy of each row holds the version of the write it
    /// came from (0: the contents the array started with).
    struct World {
        latest: Vec<u64>,
        /// Index 0 the host, 1 + d device d.
        mem: Vec<Vec<u64>>,
        next: u64,
    }

    fn slot(p: Place) -> usize {
        match p {
            Host => 0,
            Device(d) => d + 1,
        }
    }

    impl World {
        /// The places whose copy of `row` is current: the truth the directory must tell.
        fn current(&self, row: u64) -> Holders {
            let r = row as usize;
            let mut h = Holders::NONE;
            for (i, mem) in self.mem.iter().enumerate() {
                if mem[r] == self.latest[r] {
                    h = h.with(if i == 0 { Host } else { Device(i - 1) });
                }
            }
            h
        }

        fn write(&mut self, p: Place, rows: Range<u64>) {
            self.next += 1;
            for r in rows {
                self.mem[slot(p)][r as usize] = self.next;
                self.latest[r as usize] = self.next;
            }
        }
    }

    #[derive(Clone, Debug)]
    enum Op {
        Acquire(Place, Range<u64>),
        Wrote(Place, Range<u64>),
        ToHost(Range<u64>),
        HostWrote(Range<u64>),
        Drop(usize),
    }

    /// Places including one device past the largest directory, to exercise refusals.
    fn place() -> impl Strategy<Value = Place> {
        prop_oneof![Just(Host), (0usize..5).prop_map(Device)]
    }

    /// Ranges that may be empty, reversed, or run past the end of up to 12 rows.
    fn range() -> impl Strategy<Value = Range<u64>> {
        (0u64..15, 0u64..15).prop_map(|(a, b)| a..b)
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (place(), range()).prop_map(|(p, r)| Op::Acquire(p, r)),
            3 => (place(), range()).prop_map(|(p, r)| Op::Wrote(p, r)),
            2 => range().prop_map(Op::ToHost),
            1 => range().prop_map(Op::HostWrote),
            1 => (0usize..5).prop_map(Op::Drop),
        ]
    }

    fn policy() -> impl Strategy<Value = Policy> {
        prop_oneof![
            Just(Policy::PreferPeer),
            Just(Policy::PreferHost),
            Just(Policy::NoPeer)
        ]
    }

    /// The fewest pieces that bring the rows of `rows` the destination lacks to it, each from
    /// one of `sources` that holds all of its rows, by dynamic programming over the rows'
    /// current holders.
    fn fewest_pieces(world: &World, to: Place, rows: Range<u64>, sources: Holders) -> usize {
        let rows: Vec<u64> = rows.collect();
        let need = |i: usize| !world.current(rows[i]).contains(to);
        // best[i]: the fewest pieces for rows[..i].
        let mut best = vec![usize::MAX; rows.len() + 1];
        best[0] = 0;
        for i in 1..=rows.len() {
            if !need(i - 1) {
                best[i] = best[i - 1];
                continue;
            }
            // A piece rows[j..i] from one device that holds every row of it.
            let mut common = sources;
            for j in (0..i).rev() {
                if !need(j) {
                    break;
                }
                common = common.intersect(world.current(rows[j]));
                if common.is_empty() {
                    break;
                }
                best[i] = best[i].min(best[j].saturating_add(1));
            }
        }
        best[rows.len()]
    }

    /// Makes the transfers in the simulated world, checking each one: the source holds the
    /// current row, the destination does not, and no device-to-device copy without peer access.
    fn make(
        world: &mut World,
        transfers: &[Transfer],
        within: Range<u64>,
        policy: Policy,
    ) -> Result<(), TestCaseError> {
        for (i, tr) in transfers.iter().enumerate() {
            prop_assert!(!tr.rows.is_empty(), "empty transfer {:?}", tr);
            prop_assert!(tr.from != tr.to);
            prop_assert!(within.start <= tr.rows.start && tr.rows.end <= within.end);
            if policy == Policy::NoPeer {
                prop_assert!(tr.from == Host || tr.to == Host, "a peer copy {:?}", tr);
            }
            // Sorted, and maximal: no transfer continues another of the same places.
            for other in &transfers[i + 1..] {
                prop_assert!(
                    (tr.to, tr.from, tr.rows.start) < (other.to, other.from, other.rows.start)
                );
                if (tr.from, tr.to) == (other.from, other.to) {
                    prop_assert!(
                        tr.rows.end != other.rows.start && other.rows.end != tr.rows.start
                    );
                }
            }
            for r in tr.rows.clone() {
                let r = r as usize;
                let value = world.mem[slot(tr.from)][r];
                prop_assert_eq!(value, world.latest[r], "{:?}: a stale source", tr);
                prop_assert!(
                    world.mem[slot(tr.to)][r] != world.latest[r],
                    "{:?}: already held",
                    tr
                );
                world.mem[slot(tr.to)][r] = value;
            }
        }
        Ok(())
    }

    /// The directory tells the truth about every row, and its runs are a maximal partition.
    fn check_consistent(dir: &Directory, world: &World) -> Result<(), TestCaseError> {
        let mut end = 0;
        let mut last = None;
        for (run, holders) in dir.runs() {
            prop_assert_eq!(run.start, end);
            prop_assert!(run.start < run.end);
            prop_assert!(!holders.is_empty());
            prop_assert!(last != Some(holders), "runs not merged at {}", run.start);
            end = run.end;
            last = Some(holders);
        }
        prop_assert_eq!(end, dir.rows());
        for row in 0..dir.rows() {
            prop_assert_eq!(dir.holders(row), Some(world.current(row)), "row {}", row);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn random_sequences_follow_the_model(
            rows in 0u64..=12,
            devices in 1usize..=4,
            valid in 0u64..32,
            policy in policy(),
            ops in prop::collection::vec(op(), 1..60),
        ) {
            let mut dir = Directory::new(rows, devices, Holders(valid))
                .unwrap()
                .with_policy(policy);
            // The memories start as the directory says: current where valid (everywhere when
            // nothing is, the undefined contents), stale elsewhere.
            let start = match Holders(valid).intersect(Holders::all(devices)) {
                Holders::NONE => Holders::all(devices),
                some => some,
            };
            let mut world = World {
                latest: vec![0; rows as usize],
                mem: (0..=devices)
                    .map(|i| {
                        let p = if i == 0 { Host } else { Device(i - 1) };
                        vec![if start.contains(p) { 0 } else { GONE }; rows as usize]
                    })
                    .collect(),
                next: 0,
            };
            check_consistent(&dir, &world)?;
            let missing = |p: Place| matches!(p, Device(d) if d >= devices);
            for op in ops {
                let before: Vec<_> = dir.runs().collect();
                match op {
                    Op::Acquire(p, r) if missing(p) => {
                        prop_assert!(dir.acquire(p, r).is_err());
                        prop_assert_eq!(dir.runs().collect::<Vec<_>>(), before);
                    }
                    Op::Wrote(p, r) if missing(p) => {
                        prop_assert!(dir.wrote(p, r).is_err());
                        prop_assert_eq!(dir.runs().collect::<Vec<_>>(), before);
                    }
                    Op::Drop(d) if d >= devices => {
                        prop_assert!(dir.drop_device(d).is_err());
                        prop_assert_eq!(dir.runs().collect::<Vec<_>>(), before);
                    }
                    Op::Acquire(p, r) => {
                        let within = r.start.min(r.end).min(rows)..r.end.min(rows);
                        let everyone = Holders::all(devices).without(p);
                        let devices_only = everyone.without(Host);
                        let fewest = fewest_pieces(&world, p, within.clone(), everyone);
                        // Without peer access, the pieces out of the host are the stretches of
                        // rows the device lacks.
                        let lacks = |row: u64| !world.current(row).contains(p);
                        let stretches = within
                            .clone()
                            .filter(|&row| lacks(row) && (row == within.start || !lacks(row - 1)))
                            .count();
                        let got = dir.acquire(p, r).unwrap();
                        if p == Host {
                            prop_assert_eq!(got.len(), fewest_pieces(&world, p, within.clone(), devices_only));
                        } else if policy == Policy::NoPeer {
                            let from_host = got.iter().filter(|t| t.to == p).count();
                            prop_assert_eq!(from_host, stretches);
                        } else {
                            prop_assert_eq!(got.len(), fewest);
                        }
                        make(&mut world, &got, within.clone(), policy)?;
                        for row in within {
                            prop_assert_eq!(world.mem[slot(p)][row as usize], world.latest[row as usize]);
                        }
                    }
                    Op::ToHost(r) => {
                        let within = r.start.min(r.end).min(rows)..r.end.min(rows);
                        let devices_only = Holders::all(devices).without(Host);
                        let fewest = fewest_pieces(&world, Host, within.clone(), devices_only);
                        let got = dir.to_host(r);
                        prop_assert_eq!(got.len(), fewest);
                        make(&mut world, &got, within.clone(), policy)?;
                        for row in within {
                            prop_assert_eq!(world.mem[0][row as usize], world.latest[row as usize]);
                        }
                    }
                    Op::Wrote(p, r) => {
                        dir.wrote(p, r.clone()).unwrap();
                        world.write(p, r.start.min(r.end).min(rows)..r.end.min(rows));
                    }
                    Op::HostWrote(r) => {
                        dir.host_wrote(r.clone());
                        world.write(Host, r.start.min(r.end).min(rows)..r.end.min(rows));
                    }
                    Op::Drop(d) => {
                        let got = dir.drop_device(d).unwrap();
                        make(&mut world, &got, 0..rows, policy)?;
                        world.mem[d + 1].fill(GONE);
                    }
                }
                check_consistent(&dir, &world)?;
            }
        }
    }
}
