//! Atomic file output: nothing is ever half-written. Output goes to a temporary file in the
//! target's directory and is renamed over the target only once it is complete and flushed.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write: {source}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: io::Error,
}

/// Writes `path` by calling `fill` on a temporary file beside it, then renaming.
pub fn write_atomically(path: &Path, fill: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> Result<(), WriteError> {
    let err = |source| WriteError { path: path.to_owned(), source };
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new().prefix(".onnx-").suffix(".tmp").tempfile_in(dir).map_err(err)?;
    {
        let mut out = io::BufWriter::with_capacity(1 << 20, tmp.as_file_mut());
        fill(&mut out).map_err(err)?;
        out.flush().map_err(err)?;
    }
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
