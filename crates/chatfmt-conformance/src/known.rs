//! KNOWN_DIFFERENCES.md: the one documented list of cases chatfmt deliberately does not reproduce,
//! read from the path the caller gives.
//!
//! Two forms are recognised: a bullet `` - `case-id`: reason `` documents one case of the hf, jinja or
//! tokens kit; inside the `## FastChat` section, a heading `### FC-n: ...` starts a deliberate
//! difference and the bullets `` - `record-id` `` under it are its evidence.

use crate::{Error, Result};
use std::collections::{BTreeSet, HashSet};
use std::path::Path;

/// The documented differences.
#[derive(Debug, Default, Clone)]
pub struct KnownDifferences {
    ids: HashSet<String>,
    fastchat: BTreeSet<(String, String)>,
}

impl KnownDifferences {
    /// Reads the list from a file (the repository's `KNOWN_DIFFERENCES.md`).
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
        Ok(Self::parse(&text))
    }

    /// Parses the markdown list.
    pub fn parse(text: &str) -> Self {
        let mut known = KnownDifferences::default();
        let mut in_fastchat = false;
        let mut code: Option<String> = None;
        for line in text.lines() {
            if let Some(title) = line.strip_prefix("## ") {
                in_fastchat = title.trim() == "FastChat";
                code = None;
            } else if let (true, Some(title)) = (in_fastchat, line.strip_prefix("### ")) {
                code = title
                    .split(':')
                    .next()
                    .filter(|c| c.starts_with("FC-"))
                    .map(str::to_owned);
            }
            let Some(id) = line
                .trim_start()
                .strip_prefix("- `")
                .and_then(|l| l.split_once('`'))
                .map(|(id, _)| id.to_string())
            else {
                continue;
            };
            match (&code, in_fastchat) {
                (Some(code), true) => {
                    known.fastchat.insert((code.clone(), id.clone()));
                }
                _ => {
                    known.ids.insert(id.clone());
                }
            }
        }
        known
    }

    /// Whether the case of the hf, jinja or tokens kit is documented.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }

    /// The FastChat evidence: (difference code, record id) pairs.
    pub fn fastchat_evidence(&self) -> &BTreeSet<(String, String)> {
        &self.fastchat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_and_fastchat_evidence_are_told_apart() {
        let k = KnownDifferences::parse(
            "# Known\n- `hf/a`: why\n## FastChat\n### FC-1: images\n- `rec-1`\n- `rec-2`\n## Other\n- `jinja/b`: why\n",
        );
        assert!(k.contains("hf/a") && k.contains("jinja/b") && !k.contains("rec-1"));
        let evidence: Vec<(String, String)> = k.fastchat_evidence().iter().cloned().collect();
        assert_eq!(
            evidence,
            [("FC-1".into(), "rec-1".into()), ("FC-1".into(), "rec-2".into())]
        );
    }
}
