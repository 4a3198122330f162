//! Output files that never destroy data: each output is first written to a temporary file beside
//! its target and renamed into place only when the run succeeds, and no output may be the input (or
//! the other output) under another name. Files are compared by identity (device and inode, links
//! resolved), never by the path string.

use crate::{Error, ErrorKind};
use std::fs::{File, OpenOptions};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What a path names on disk, for comparing two paths.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    /// An existing file: its device and inode.
    Inode(u64, u64),
    /// A path that does not exist yet: its resolved folder and file name.
    Future(PathBuf),
}

fn identity(path: &Path) -> Result<Identity, Error> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(Identity::Inode(m.dev(), m.ino())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let (dir, name) = split(path)?;
            let dir = std::fs::canonicalize(&dir).map_err(|e| {
                Error::new(
                    ErrorKind::Usage,
                    format!("its folder {} is not usable: {e}", dir.display()),
                )
                .at(path)
            })?;
            Ok(Identity::Future(dir.join(name)))
        }
        Err(e) => Err(Error::new(ErrorKind::Usage, format!("cannot inspect: {e}")).at(path)),
    }
}

/// The folder and file name of `path` (a bare name is in the current folder).
fn split(path: &Path) -> Result<(PathBuf, std::ffi::OsString), Error> {
    let name = path
        .file_name()
        .ok_or_else(|| Error::new(ErrorKind::Usage, "not a file name").at(path))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok((dir, name.to_os_string()))
}

/// Checks, before anything is opened for writing, that `outputs` (each with what it is, e.g. "the
/// output") can be written without destroying data: none is the input or another output, and none is a
/// symbolic link, a folder or anything but a regular file.
pub fn check_outputs(input: &Path, outputs: &[(&str, &Path)]) -> Result<(), Error> {
    let input_id = identity(input)?;
    let mut seen: Vec<(&str, Identity)> = Vec::new();
    for &(option, path) in outputs {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            let what = if m.file_type().is_symlink() {
                Some("a symbolic link")
            } else if m.is_dir() {
                Some("a folder")
            } else if !m.is_file() {
                Some("not a regular file")
            } else {
                None
            };
            if let Some(what) = what {
                return Err(Error::new(
                    ErrorKind::Usage,
                    format!("{option} is {what}; name a regular file (a new one or one to replace)"),
                )
                .at(path));
            }
        }
        let id = identity(path)?;
        if id == input_id {
            return Err(Error::new(
                ErrorKind::Usage,
                format!(
                    "{option} is the input file {}; writing it would destroy the input: name another file",
                    input.display()
                ),
            )
            .at(path));
        }
        if let Some((other, _)) = seen.iter().find(|(_, s)| *s == id) {
            return Err(Error::new(
                ErrorKind::Usage,
                format!("{option} and {other} name the same file; give them different paths"),
            )
            .at(path));
        }
        seen.push((option, id));
    }
    Ok(())
}

/// A file being written under a temporary name beside its target: `.<name>.chatfmt-<pid>.tmp`.
/// [`AtomicFile::commit`] renames it into place; dropped uncommitted, it is removed.
#[derive(Debug)]
pub struct AtomicFile {
    target: PathBuf,
    temp: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Creates the temporary file (never an existing one) and opens it for writing.
    pub fn create(target: &Path) -> Result<(AtomicFile, File), Error> {
        let (dir, name) = split(target)?;
        let mut temp_name = std::ffi::OsString::from(".");
        temp_name.push(&name);
        temp_name.push(format!(".chatfmt-{}.tmp", std::process::id()));
        let temp = dir.join(temp_name);
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)
            .map_err(|e| Error::new(ErrorKind::Output, format!("cannot create {}: {e}", temp.display())).at(target))?;
        Ok((
            AtomicFile {
                target: target.to_path_buf(),
                temp,
                committed: false,
            },
            file,
        ))
    }

    /// The temporary file's path.
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }

    /// Moves the finished file to its target (replacing a previous output there).
    pub fn commit(mut self) -> Result<(), Error> {
        std::fs::rename(&self.temp, &self.target).map_err(|e| {
            Error::new(
                ErrorKind::Output,
                format!("cannot move {} into place: {e}", self.temp.display()),
            )
            .at(&self.target)
        })?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("chatfmt-safe-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    #[test]
    fn the_input_by_another_path_is_refused() {
        let d = dir("alias");
        let input = d.join("in.jsonl");
        std::fs::write(&input, "{}\n").unwrap();
        let alias = d.join("sub/../in.jsonl");
        let e = check_outputs(&input, &[("the output", &alias)]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Usage);
        assert!(e.to_string().contains("is the input file"), "{e}");
        std::fs::hard_link(&input, d.join("hard.jsonl")).unwrap();
        assert!(check_outputs(&input, &[("the output", &d.join("hard.jsonl"))]).is_err());
        std::os::unix::fs::symlink(&input, d.join("link.jsonl")).unwrap();
        let e = check_outputs(&input, &[("the output", &d.join("link.jsonl"))]).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = check_outputs(&input, &[("the output", &d.join("sub"))]).unwrap_err();
        assert!(e.to_string().contains("a folder"), "{e}");
        let e = check_outputs(
            &input,
            &[("the output", &d.join("o")), ("the rejects file", &d.join("sub/../o"))],
        )
        .unwrap_err();
        assert!(e.to_string().contains("name the same file"), "{e}");
        assert!(check_outputs(&input, &[("the output", &d.join("new.parquet"))]).is_ok());
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_and_a_committed_one_replaces_the_target() {
        let d = dir("atomic");
        let target = d.join("out.jsonl");
        std::fs::write(&target, "old").unwrap();
        {
            let (file, mut f) = AtomicFile::create(&target).unwrap();
            f.write_all(b"new").unwrap();
            assert!(file.temp_path().exists());
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(&d).unwrap().count(),
            2,
            "only out.jsonl and sub remain"
        );
        let (file, mut f) = AtomicFile::create(&target).unwrap();
        f.write_all(b"new").unwrap();
        file.commit().unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
