//! The documented differences the `conformance` commands count as expected: `--known-differences
//! FILE`, else `KNOWN_DIFFERENCES.md` of the current folder.

use anyhow::{Context as _, Result};
use chatfmt_conformance::KnownDifferences;
use std::path::Path;

/// The documented differences: the file given, else `KNOWN_DIFFERENCES.md` of the current folder;
/// without either every mismatch is a failure (said on stderr).
pub fn known_differences(path: Option<&Path>) -> Result<KnownDifferences> {
    let default = Path::new("KNOWN_DIFFERENCES.md");
    match path {
        Some(p) => KnownDifferences::read(p).with_context(|| "reading --known-differences"),
        None if default.is_file() => Ok(KnownDifferences::read(default)?),
        None => {
            eprintln!(
                "note: no KNOWN_DIFFERENCES.md in the current folder; every mismatch counts as a failure \
                 (pass --known-differences FILE)"
            );
            Ok(KnownDifferences::default())
        }
    }
}
