//! The endgame database an agent with `"egdb": true` reads: the largest one built for the
//! board and rules in the cache folder (`kalah-tuner egdb build`), opened the first time the
//! agent sees a board of that size.
//!
//! Agents (the server's above all, which runs for days) read a private copy of the file, not
//! the file: a database mapped from its file gave wrong answers when the file was overwritten
//! and killed the process with SIGBUS when it was truncated. The copy is made into sealed
//! anonymous memory (Linux `memfd` with its size and contents sealed), and its size and
//! checksum are verified on that copy, so what was verified is exactly what is read and
//! nothing outside the process can change it afterwards.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::game::Rules;
use crate::search::egdb::{self, Egdb, EgdbError, MAX_EGDB_SEEDS};

/// An agent's database, looked up once per board size.
#[derive(Debug, Default)]
pub struct EndgameTable {
    wanted: bool,
    /// The board size and rules looked up last, and what was found for them.
    loaded: Option<(usize, Rules, Option<Arc<Egdb>>)>,
}

impl EndgameTable {
    pub(crate) fn new(wanted: bool) -> EndgameTable {
        EndgameTable {
            wanted,
            loaded: None,
        }
    }

    /// The database for boards of `pits` pits under `rules`, when the agent wants one and one
    /// is built. A missing or unreadable database is reported once (the agent then plays
    /// without it, as it would with `"egdb": false`).
    pub(crate) fn get(&mut self, pits: usize, rules: Rules) -> Option<Arc<Egdb>> {
        if !self.wanted {
            return None;
        }
        match &self.loaded {
            Some((loaded_pits, loaded_rules, db))
                if *loaded_pits == pits && *loaded_rules == rules =>
            {
                db.clone()
            }
            _ => {
                let db = match shared_private(pits, rules) {
                    Ok(Some(db)) => Some(db),
                    Ok(None) => {
                        tracing::warn!(
                            "no endgame database for Kalah({pits}) {rules} in {}: playing without \
                             one (build it with `kalah-tuner egdb build --pits {pits} --seeds 16 \
                             --rules {rules}`)",
                            egdb::default_dir().display()
                        );
                        None
                    }
                    // Reported when it was opened (once a process), and never used.
                    Err(_) => None,
                };
                self.loaded = Some((pits, rules, db.clone()));
                db
            }
        }
    }
}

/// The path of the largest database for `pits` and `rules` in `dir`, if any.
fn largest_in(dir: &Path, pits: usize, rules: Rules) -> Option<PathBuf> {
    (0..=MAX_EGDB_SEEDS)
        .rev()
        .map(|seeds| dir.join(Egdb::file_name(pits, seeds, rules)))
        .find(|path| path.is_file())
}

/// Why a database was not used, once per process and board size.
#[derive(Debug, Clone, thiserror::Error)]
#[error("endgame database {path}: {reason}; playing without it (build it again with `kalah-tuner egdb build`)")]
pub(crate) struct Unusable {
    pub path: PathBuf,
    pub reason: String,
}

/// The largest database of [`egdb::default_dir`] for `pits` and `rules` as a verified private
/// copy ([`open_private`]), loaded once per process and shared by every agent. A damaged
/// file is logged once and not used until the process starts again; `Ok(None)` when there is
/// none.
pub(crate) fn shared_private(pits: usize, rules: Rules) -> Result<Option<Arc<Egdb>>, Unusable> {
    type Loaded = Mutex<HashMap<(usize, Rules), Result<Option<Arc<Egdb>>, Unusable>>>;
    static LOADED: OnceLock<Loaded> = OnceLock::new();
    // Held while loading: agents of other threads wait for the one copy rather than make
    // their own (a 5 GB database must not be copied twice).
    let mut loaded = LOADED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(found) = loaded.get(&(pits, rules)) {
        return found.clone();
    }
    let found = match largest_in(&egdb::default_dir(), pits, rules) {
        None => Ok(None),
        Some(path) => {
            let started = std::time::Instant::now();
            match open_private(&path).and_then(|db| fits(db, &path, pits, rules)) {
                Ok(db) => {
                    tracing::info!(
                        "endgame database {} verified and loaded in {:.2} s",
                        path.display(),
                        started.elapsed().as_secs_f64()
                    );
                    Ok(Some(Arc::new(db)))
                }
                Err(e) => {
                    let unusable = Unusable {
                        path: path.clone(),
                        reason: e.to_string(),
                    };
                    tracing::error!("{unusable}");
                    Err(unusable)
                }
            }
        }
    };
    loaded.insert((pits, rules), found.clone());
    found
}

/// `db` when it holds the positions of `pits` pits under `rules`: a file renamed or copied
/// under another database's name is refused when it is opened, rather than reported loaded
/// and then never used.
fn fits(db: Egdb, path: &Path, pits: usize, rules: Rules) -> Result<Egdb, EgdbError> {
    if db.pits() == pits && db.rules() == rules {
        return Ok(db);
    }
    Err(EgdbError::Corrupt {
        path: path.to_path_buf(),
        reason: format!(
            "it holds Kalah({}) positions under the {} rules, not Kalah({pits}) under the {rules} \
             rules its name says",
            db.pits(),
            db.rules()
        ),
    })
}

/// Opens the database file at `path` as a private copy: the file is copied into sealed
/// anonymous memory, and the copy's header, size and checksum are checked. Whatever happens
/// to the file afterwards (truncated, overwritten, deleted), the database answers as it did
/// when verified. Costs a copy of the file in memory (shared with nobody) and reading it
/// once.
pub fn open_private(path: &Path) -> Result<Egdb, EgdbError> {
    #[cfg(target_os = "linux")]
    {
        sealed::open(path)
    }
    // Elsewhere there is no sealed memory file to map: the file itself is mapped, as the
    // command line does, and a file changed under the process is not guarded against.
    #[cfg(not(target_os = "linux"))]
    {
        Egdb::open(path)
    }
}

#[cfg(target_os = "linux")]
mod sealed {
    use std::fs::File;
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd};
    use std::path::Path;

    use crate::search::egdb::{Egdb, EgdbError};

    use crate::search::egdb::MAX_EGDB_ENTRIES;

    /// Header bytes before the entries (`search::egdb`'s format).
    const HEADER_BYTES: u64 = 64;

    fn io_error(path: &Path, what: &str, e: io::Error) -> EgdbError {
        EgdbError::Io {
            path: path.to_path_buf(),
            source: io::Error::new(e.kind(), format!("{what}: {e}")),
        }
    }

    pub(crate) fn open(path: &Path) -> Result<Egdb, EgdbError> {
        let mut source = File::open(path).map_err(|e| io_error(path, "opening", e))?;
        let len = source
            .metadata()
            .map_err(|e| io_error(path, "reading its size", e))?
            .len();
        // Checked before copying: no file may make the process copy more than the largest
        // database into memory.
        if len > HEADER_BYTES + MAX_EGDB_ENTRIES {
            return Err(EgdbError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("{len} bytes, more than any database holds"),
            });
        }
        // SAFETY: memfd_create takes a NUL-terminated name and flags; it returns a new file
        // descriptor or -1, and the descriptor is owned by the File made from it at once.
        let fd = unsafe {
            libc::memfd_create(
                c"kalah-tuner-egdb".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if fd < 0 {
            return Err(io_error(
                path,
                "making private memory for a copy",
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: fd is a fresh descriptor that nothing else owns.
        let mut copy = unsafe { File::from_raw_fd(fd) };
        io::copy(&mut source, &mut copy).map_err(|e| io_error(path, "copying", e))?;
        drop(source);
        let seals =
            libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;
        // SAFETY: fcntl on a descriptor we own; F_ADD_SEALS takes an int of seal bits.
        if unsafe { libc::fcntl(copy.as_raw_fd(), libc::F_ADD_SEALS, seals) } < 0 {
            return Err(io_error(
                path,
                "sealing the copy",
                io::Error::last_os_error(),
            ));
        }
        // Egdb::open maps what it verifies; through /proc it maps the sealed copy, which no
        // one can write, shrink or grow any more.
        let proc_path = format!("/proc/self/fd/{}", copy.as_raw_fd());
        // Errors name the file, not the copy.
        let db = Egdb::open(Path::new(&proc_path)).map_err(|e| match e {
            EgdbError::Corrupt { reason, .. } => EgdbError::Corrupt {
                path: path.to_path_buf(),
                reason,
            },
            EgdbError::Io { source, .. } => EgdbError::Io {
                path: path.to_path_buf(),
                source,
            },
            other => other,
        })?;
        // The mapping keeps the memory alive without the descriptor.
        drop(copy);
        Ok(db)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::egdb::Quiet;

    /// A database copied under another's name is refused when opened, not reported loaded.
    #[test]
    fn a_database_of_other_rules_is_refused() {
        let dir = std::env::temp_dir().join(format!("kalah-egdb-fits-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let built = Rules::EmptyCapture;
        let path = dir.join(Egdb::file_name(4, 3, Rules::Standard));
        Egdb::build(4, 3, built, &Quiet)
            .expect("build")
            .write(&path)
            .expect("write");
        let open = || open_private(&path).expect("a sound file");
        match fits(open(), &path, 4, Rules::Standard) {
            Err(EgdbError::Corrupt { reason, .. }) => {
                assert!(reason.contains("empty-capture"), "{reason}")
            }
            other => panic!("taken for the standard rules: {other:?}"),
        }
        assert!(fits(open(), &path, 5, built).is_err());
        assert!(fits(open(), &path, 4, built).is_ok());
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
