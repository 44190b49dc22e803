//! Files that agent specs name: `a3c` model files and export documents (`export:PATH`). Who
//! may name which file is decided by the front end that received the spec, not by the agent's
//! limits: the same GA profile serves a config file at the command line, where the user owns
//! the machine, and a run created over HTTP, where the client does not. So every spec is
//! parsed under an explicit [`FileAccess`], and the policy is applied before anything is
//! opened.
//!
//! Whatever the policy, a file is read with `read_capped`: regular files only (a FIFO
//! would block the reader forever, `/dev/zero` never ends) and at most a fixed number of bytes.

use std::io::Read;
use std::path::{Component, Path, PathBuf};

use crate::game::excerpt;

/// Largest model file read: the embedded Kalah(6,4) network is 90 KB, and networks large
/// enough to need more than this would be far too slow to play.
pub const MAX_MODEL_BYTES: u64 = 64 << 20;
/// Largest export document read: the fitness curve of a 10,000-generation run with a panel
/// stays well below this.
pub const MAX_EXPORT_BYTES: u64 = 64 << 20;

/// Which files a spec may name, and where they are looked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileAccess {
    /// Paths are read as given: the command line and the library.
    Any,
    /// Nothing is opened, and a spec that names a file is refused: a server without a models
    /// folder.
    None,
    /// Names are file names inside this folder (the server's `--models-dir`, canonical):
    /// no absolute paths, no `..`, and no symbolic link that leads out of it. Specs keep the
    /// name; `super::AgentSpec::locate` gives the file to load.
    UnderDir(PathBuf),
    /// Specs read back from storage or from an export document's config: nothing is opened,
    /// and model paths are kept as data, since they were checked when the config was first
    /// loaded. An `export:` reference cannot be read back (it was resolved at load time).
    Stored,
}

/// A file a spec names that is not opened under the [`FileAccess`] in force, or a models
/// folder that cannot be one. Says why without the field; the spec's error names it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FileRefused(pub(crate) String);

impl FileAccess {
    /// A models folder policy for `dir`, which must exist.
    pub(crate) fn under_dir(dir: &Path) -> Result<FileAccess, FileRefused> {
        let canonical = dir
            .canonicalize()
            .map_err(|e| FileRefused(format!("models folder {}: {e}", dir.display())))?;
        if !canonical.is_dir() {
            return Err(FileRefused(format!(
                "models folder {}: not a folder",
                dir.display()
            )));
        }
        Ok(FileAccess::UnderDir(canonical))
    }

    /// The path to open for the file a spec names, checked against the policy before
    /// anything is opened; `Ok(None)` under [`FileAccess::Stored`], which opens nothing.
    /// `what` names the kind of file for messages ("model file", "export document").
    pub(crate) fn resolve(&self, name: &str, what: &str) -> Result<Option<PathBuf>, FileRefused> {
        match self {
            FileAccess::Any => Ok(Some(PathBuf::from(name))),
            FileAccess::Stored => Ok(None),
            FileAccess::None => Err(FileRefused(format!(
                "{what}s are not read here (a server reads them only from its models folder, \
                 serve --models-dir), so {} is not opened",
                quoted(name)
            ))),
            FileAccess::UnderDir(dir) => {
                let plain = !name.is_empty()
                    && Path::new(name)
                        .components()
                        .all(|c| matches!(c, Component::Normal(_)));
                if !plain {
                    return Err(FileRefused(format!(
                        "{} is not a name in the models folder: give a file name relative to \
                         it, without '..' or a leading '/'",
                        quoted(name)
                    )));
                }
                // One answer for a missing name and for a link that leads out, and no detail of
                // the failed lookup: a link planted in the folder must not become an oracle for
                // which files exist elsewhere on the machine.
                let not_found = || {
                    FileRefused(format!(
                        "there is no {what} {} in the models folder",
                        quoted(name)
                    ))
                };
                let path = dir.join(name).canonicalize().map_err(|_| not_found())?;
                if !path.starts_with(dir) {
                    return Err(not_found());
                }
                Ok(Some(path))
            }
        }
    }

    /// Whether a path named by a spec is opened at all.
    pub fn opens_files(&self) -> bool {
        !matches!(self, FileAccess::None | FileAccess::Stored)
    }
}

fn quoted(name: &str) -> String {
    format!("{:?}", excerpt(name))
}

/// Reads a regular file of at most `limit` bytes. Anything else is refused without reading
/// it: FIFOs and devices (opened without blocking, then checked), folders, and files that
/// grow past the limit while being read.
pub(crate) fn read_capped(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // Opening a FIFO for reading blocks until a writer comes; non-blocking returns at once,
        // and the type check below refuses it. Reads of a regular file ignore the flag.
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let too_big = || {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("larger than the {} MiB allowed", limit >> 20),
        )
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "kalah-files-{tag}-{}-{:?}",
            std::process::id(),
            std::thread::current().id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temporary folder");
        dir
    }

    #[test]
    fn names_resolve_only_inside_the_folder() {
        let root = temp_dir("under");
        let models = root.join("models");
        std::fs::create_dir_all(models.join("sub")).unwrap();
        std::fs::write(models.join("m.bin"), b"m").unwrap();
        std::fs::write(models.join("sub/n.bin"), b"n").unwrap();
        std::fs::write(root.join("secret"), b"s").unwrap();
        let access = FileAccess::under_dir(&models).unwrap();
        let canonical = models.canonicalize().unwrap();
        assert_eq!(
            access.resolve("m.bin", "model file").unwrap(),
            Some(canonical.join("m.bin"))
        );
        assert_eq!(
            access.resolve("sub/n.bin", "model file").unwrap(),
            Some(canonical.join("sub/n.bin"))
        );
        let outside = root.join("secret").display().to_string();
        for name in [
            "",
            "../secret",
            "sub/../../secret",
            &outside,
            "./m.bin",
            "missing",
        ] {
            let err = access
                .resolve(name, "model file")
                .expect_err(name)
                .to_string();
            assert!(!err.contains(&canonical.display().to_string()), "{err}");
        }
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(root.join("secret"), models.join("link")).unwrap();
            std::os::unix::fs::symlink(root.join("gone"), models.join("dangling")).unwrap();
            let same = |name: &str| {
                access
                    .resolve(name, "model file")
                    .expect_err(name)
                    .to_string()
                    .replace(name, "NAME")
            };
            // A link out to a file that exists answers as a missing name does.
            assert_eq!(same("link"), same("missing"));
            assert_eq!(same("dangling"), same("missing"));
        }
        assert!(FileAccess::None.resolve("m.bin", "model file").is_err());
        assert_eq!(FileAccess::Stored.resolve("/x", "model file"), Ok(None));
        std::fs::remove_dir_all(&root).ok();
    }

    #[test]
    fn reads_are_capped_and_only_of_regular_files() {
        let dir = temp_dir("capped");
        let small = dir.join("small");
        std::fs::write(&small, b"12345").unwrap();
        assert_eq!(read_capped(&small, 5).unwrap(), b"12345");
        assert!(read_capped(&small, 4).is_err());
        assert!(read_capped(&dir, 5).is_err());
        #[cfg(unix)]
        {
            assert!(read_capped(Path::new("/dev/zero"), 1 << 20).is_err());
            let fifo = dir.join("fifo");
            let status = std::process::Command::new("mkfifo").arg(&fifo).status();
            if status.is_ok_and(|s| s.success()) {
                // Returns at once instead of waiting for a writer.
                assert!(read_capped(&fifo, 1 << 20).is_err());
            }
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}
