//! File output that never destroys data. Output goes to a temporary file beside the target
//! and replaces the target only once it is complete and flushed, so a failed or interrupted
//! command leaves the old file as it was. Around that, the target is treated as the user
//! meant it:
//!
//! * a symbolic link is written through: the file it points to is replaced, the link stays;
//! * a file with other hard links is overwritten in place, once the new content is complete
//!   in the temporary file, so every name keeps seeing the same file;
//! * the file's mode (and, where the process may, its owner) is kept; a new file gets the
//!   usual mode (0666 less the umask), not the temporary file's 0600;
//! * a read-only file is refused, as `cp` or an editor would, rather than replaced;
//! * something that is not a regular file (`/dev/null`, a FIFO, a terminal) is written to
//!   directly, never replaced by a regular file;
//! * [`WriteOptions::unchanged_since`] refuses to replace a file that changed since it was
//!   read (an edit saved while `onnx fmt` ran);
//! * temporary files still being written are listed, so that a signal handler can remove
//!   them ([`remove_unfinished`]) before the process ends.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A file being written that asks the system to start writing what it holds to disk every
/// [`WRITEBACK_EVERY`] bytes, so that the `fsync` before the rename has little left to do:
/// the disk works while the rest of the output is still being made. For a 239 MB text the
/// final `fsync` took about 100 ms of the 520 ms a conversion took.
struct WritebackAhead<'f> {
    file: &'f File,
    written: u64,
    /// Where the bytes not yet handed to writeback start.
    pending_from: u64,
}

/// The write buffer: small writes are gathered, bigger ones pass through.
const WRITE_BUFFER: usize = 128 << 10;

/// How many written bytes are handed to writeback at once.
const WRITEBACK_EVERY: u64 = 8 << 20;

impl<'f> WritebackAhead<'f> {
    fn new(file: &'f File) -> Self {
        WritebackAhead { file, written: 0, pending_from: 0 }
    }
}

impl Write for WritebackAhead<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = (&mut &*self.file).write(buf)?;
        self.written += n as u64;
        let pending = self.written - self.pending_from;
        if pending >= WRITEBACK_EVERY {
            // "Not needed soon" starts writeback of the range's dirty pages without waiting
            // for it (and drops only pages already clean, none here: they were just
            // written). Only a hint: a failure changes nothing, the fsync still follows.
            #[cfg(any(target_os = "linux", target_os = "android"))]
            let _hint = rustix::fs::fadvise(
                self.file,
                self.pending_from,
                std::num::NonZeroU64::new(pending),
                rustix::fs::Advice::DontNeed,
            );
            self.pending_from = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// What a file was when it was read, to tell whether it changed since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileState {
    dev: u64,
    ino: u64,
    len: u64,
    modified_ns: i128,
}

impl FileState {
    /// The state of the file at `path` (following symbolic links).
    pub fn of(path: &Path) -> io::Result<FileState> {
        Ok(FileState::from(&fs::metadata(path)?))
    }
}

impl From<&fs::Metadata> for FileState {
    fn from(m: &fs::Metadata) -> FileState {
        FileState {
            dev: m.dev(),
            ino: m.ino(),
            len: m.size(),
            modified_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// Refuse to replace the target if it is no longer in this state.
    pub unchanged_since: Option<FileState>,
    /// Write only a file that does not exist yet: an existing target is refused (the error's
    /// kind is `AlreadyExists`), and the finished file takes its name without replacing one
    /// made meanwhile by another process (a link, not a rename). For output whose name the
    /// program picked, not the user: an export from `onnx-view`.
    pub new_file_only: bool,
}

/// Writes `path` by calling `fill` on a temporary file beside it, then replacing the target
/// (see the module comment for links, modes and special files).
pub fn write_atomically(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), WriteError> {
    write_file(path, WriteOptions::default(), fill)
}

/// [`write_atomically`] with options.
pub fn write_file(
    path: &Path,
    options: WriteOptions,
    fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), WriteError> {
    let target = through_links(path).map_err(|source| WriteError { path: path.to_owned(), source })?;
    let err = |source| WriteError { path: path.to_owned(), source };
    let existing = match fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(err(e)),
    };
    if options.new_file_only && existing.is_some() {
        return Err(err(io::Error::new(io::ErrorKind::AlreadyExists, "it exists; not replaced")));
    }
    if let Some(m) = &existing {
        if m.is_dir() {
            return Err(err(io::Error::new(io::ErrorKind::IsADirectory, "it is a directory")));
        }
        if !m.is_file() {
            return write_directly(&target, fill).map_err(err);
        }
        if m.permissions().mode() & 0o222 == 0 {
            return Err(err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "the file is read-only; make it writable to replace it",
            )));
        }
    }
    let unchanged = |now: Option<&fs::Metadata>| match (options.unchanged_since, now) {
        (Some(expected), Some(m)) if FileState::from(m) != expected => Err(err(io::Error::other(
            "the file changed since it was read (saved by another program?); it is left as it is",
        ))),
        (Some(_), None) => Err(err(io::Error::other("the file was removed since it was read; not written again"))),
        _ => Ok(()),
    };
    unchanged(existing.as_ref())?;
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the directory {} does not exist", dir.display()),
        )));
    }
    let mode = existing.as_ref().map_or(0o666, |m| m.permissions().mode() & 0o7777);
    // tempfile's own error names the temporary file, which means nothing to the user.
    let tmp = Temporary::create(dir, mode).map_err(|e| {
        err(io::Error::new(e.kind(), format!("cannot create a file in {}: {}", dir.display(), e.kind())))
    })?;
    {
        // Writes of at least the buffer's size go straight to the file: the printer hands
        // over its text in pieces of about a megabyte, which a 1 MiB buffer copied once more.
        let mut out = io::BufWriter::with_capacity(WRITE_BUFFER, WritebackAhead::new(tmp.file()));
        fill(&mut out).map_err(err)?;
        out.flush().map_err(err)?;
    }
    tmp.file().sync_all().map_err(err)?;
    // Looked at again just before the target is replaced: the window left is this call.
    let now = match fs::metadata(&target) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(err(e)),
    };
    unchanged(now.as_ref())?;
    if options.new_file_only {
        return tmp.link_to_new(&target).map_err(err);
    }
    match &now {
        // Other names share this file: change its content, not which file the name is.
        Some(m) if m.nlink() > 1 => tmp.copy_into(&target).map_err(err),
        Some(m) => {
            // Keeping the owner needs the right to give files away (root); without it the
            // new file is the writer's, as with any editor that saves by renaming.
            let _ = std::os::unix::fs::fchown(tmp.file(), Some(m.uid()), Some(m.gid()));
            tmp.rename_to(&target).map_err(err)
        }
        None => tmp.rename_to(&target).map_err(err),
    }
}

/// The first of `protected` that `output` is the same file as (device and inode, through
/// links), so that a command can refuse to write over the model it reads or the side files
/// that model refers to.
pub fn overwritten<'p>(output: &Path, protected: &'p [PathBuf]) -> Option<&'p PathBuf> {
    let out = fs::metadata(output).ok().filter(fs::Metadata::is_file)?;
    protected.iter().find(|file| fs::metadata(file).is_ok_and(|m| (m.dev(), m.ino()) == (out.dev(), out.ino())))
}

/// The file a path names once symbolic links are followed (the path itself when it does not
/// exist; a dangling link gives the path it points to, which is then created).
fn through_links(path: &Path) -> io::Result<PathBuf> {
    let mut current = path.to_owned();
    for _ in 0..40 {
        match fs::symlink_metadata(&current) {
            Ok(m) if m.file_type().is_symlink() => {
                let next = fs::read_link(&current)?;
                current = if next.is_absolute() {
                    next
                } else {
                    current.parent().unwrap_or_else(|| Path::new("")).join(next)
                };
            }
            _ => return Ok(current),
        }
    }
    Err(io::Error::other("too many levels of symbolic links"))
}

/// A device, FIFO or socket: written as it is (opening it may wait for a reader, as any
/// program writing to a FIFO does).
fn write_directly(target: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    let file = OpenOptions::new().write(true).open(target)?;
    let mut out = io::BufWriter::with_capacity(1 << 20, file);
    fill(&mut out)?;
    out.flush()
}

/// Temporary files being written, for [`remove_unfinished`].
static UNFINISHED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Removes the temporary files of writes still under way. For a signal handler that is about
/// to end the process (destructors do not run then).
pub fn remove_unfinished() {
    for path in lock(&UNFINISHED).iter() {
        let _ = fs::remove_file(path);
    }
}

/// A temporary file beside the target, removed unless it becomes the target.
struct Temporary {
    file: tempfile::NamedTempFile,
    _listed: Listed,
}

/// A temporary file's place in [`UNFINISHED`] while it exists.
struct Listed(PathBuf);

impl Drop for Listed {
    fn drop(&mut self) {
        // NamedTempFile removes the file itself when it was not persisted.
        lock(&UNFINISHED).retain(|p| p != &self.0);
    }
}

impl Temporary {
    fn create(dir: &Path, mode: u32) -> io::Result<Temporary> {
        let file = tempfile::Builder::new()
            .prefix(".onnx-")
            .suffix(".tmp")
            .permissions(fs::Permissions::from_mode(mode))
            .tempfile_in(dir)?;
        // The umask applied at creation; an existing file's mode is given back exactly.
        if mode != 0o666 {
            file.as_file().set_permissions(fs::Permissions::from_mode(mode))?;
        }
        let path = file.path().to_owned();
        lock(&UNFINISHED).push(path.clone());
        Ok(Temporary { file, _listed: Listed(path) })
    }

    fn file(&self) -> &File {
        self.file.as_file()
    }

    fn rename_to(self, target: &Path) -> io::Result<()> {
        self.file.persist(target).map(drop).map_err(|e| e.error)
    }

    /// Gives the file the name `target` unless something has that name already.
    fn link_to_new(self, target: &Path) -> io::Result<()> {
        self.file.persist_noclobber(target).map(drop).map_err(|e| {
            let kind = e.error.kind();
            let why = if kind == io::ErrorKind::AlreadyExists {
                "it exists; not replaced".to_owned()
            } else {
                e.error.to_string()
            };
            io::Error::new(kind, why)
        })
    }

    /// Copies the content into `target` in place (same file, same links), then syncs it.
    fn copy_into(self, target: &Path) -> io::Result<()> {
        let mut from = File::open(self.file.path())?;
        let mut to = OpenOptions::new().write(true).truncate(true).open(target)?;
        io::copy(&mut from, &mut to)?;
        to.sync_all()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `remove_unfinished` removes every temporary of the process: the tests that write take
    /// turns (no other test of this crate writes files).
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    fn temporaries_in(dir: &Path) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> =
            fs::read_dir(dir).map(|entries| entries.flatten().map(|e| e.path()).collect()).unwrap_or_default();
        found.retain(|p| p.extension().is_some_and(|e| e == "tmp"));
        found
    }

    /// Past several writeback starts, in pieces both under and over the write buffer's
    /// size, the file holds exactly what was written.
    #[test]
    fn a_big_file_written_with_early_writeback_holds_what_was_written() {
        let _turn = lock(&ONE_AT_A_TIME);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("big.onnxtxt");
        let content: Vec<u8> = (0..(3 * WRITEBACK_EVERY as usize + 12_345)).map(|i| (i % 251) as u8).collect();
        write_atomically(&path, |w| {
            for (i, piece) in content.chunks(WRITE_BUFFER * 7 + 3).enumerate() {
                // Alternately one big write and many small ones.
                if i % 2 == 0 {
                    w.write_all(piece)?;
                } else {
                    for small in piece.chunks(1000) {
                        w.write_all(small)?;
                    }
                }
            }
            Ok(())
        })
        .expect("writes");
        assert!(fs::read(&path).expect("readable") == content);
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_left_alone() {
        let _turn = lock(&ONE_AT_A_TIME);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("m.onnxtxt");
        fs::write(&path, "first").expect("written");
        let read = FileState::of(&path).expect("state");
        // Another program saves while we work (a different length, so the state differs even
        // where the clock is coarse).
        fs::write(&path, "saved meanwhile").expect("written");
        let options = WriteOptions { unchanged_since: Some(read), ..WriteOptions::default() };
        let result = write_file(&path, options, |w| w.write_all(b"formatted"));
        assert!(result.is_err());
        assert_eq!(fs::read_to_string(&path).expect("readable"), "saved meanwhile");
        assert!(temporaries_in(dir.path()).is_empty(), "a temporary file was left behind");
        // Unchanged: written.
        let now = FileState::of(&path).expect("state");
        let options = WriteOptions { unchanged_since: Some(now), ..WriteOptions::default() };
        write_file(&path, options, |w| w.write_all(b"formatted")).expect("writes");
        assert_eq!(fs::read_to_string(&path).expect("readable"), "formatted");
    }

    /// A new-file-only write never replaces a file: neither one there before it started nor
    /// one made while it wrote; a free name is written whole.
    #[test]
    fn a_new_file_only_write_leaves_existing_files_alone() {
        let _turn = lock(&ONE_AT_A_TIME);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("x.npy");
        let options = WriteOptions { new_file_only: true, ..WriteOptions::default() };
        write_file(&path, options, |w| w.write_all(b"first")).expect("a free name is written");
        assert_eq!(fs::read_to_string(&path).expect("readable"), "first");
        let refused = write_file(&path, options, |w| w.write_all(b"second")).expect_err("an existing file");
        assert_eq!(refused.source.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&path).expect("readable"), "first");
        // Made by someone else while the content was being written.
        let raced = dir.path().join("y.npy");
        let refused = write_file(&raced, options, |w| {
            fs::write(&raced, "theirs")?;
            w.write_all(b"ours")
        })
        .expect_err("a file made meanwhile");
        assert_eq!(refused.source.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(fs::read_to_string(&raced).expect("readable"), "theirs");
        assert!(temporaries_in(dir.path()).is_empty(), "a temporary file was left behind");
    }

    #[test]
    fn unfinished_temporaries_can_be_removed_by_a_signal_handler() {
        let _turn = lock(&ONE_AT_A_TIME);
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("out.onnx");
        let result = write_atomically(&path, |w| {
            w.write_all(b"half")?;
            let listed = temporaries_in(dir.path());
            assert_eq!(listed.len(), 1, "the temporary file exists while it is written");
            // What the handler does when SIGINT or SIGTERM arrives.
            remove_unfinished();
            assert!(temporaries_in(dir.path()).is_empty(), "the handler did not remove it");
            Err(io::Error::other("interrupted"))
        });
        assert!(result.is_err());
        assert!(!path.exists(), "the target was written");
    }
}
