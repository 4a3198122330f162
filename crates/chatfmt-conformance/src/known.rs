//! KNOWN_DIFFERENCES.md: the one documented list of cases chatfmt deliberately does not reproduce.

use std::collections::HashSet;

/// Case ids listed in KNOWN_DIFFERENCES.md (lines of the form `- `case-id`: reason`).
#[derive(Debug, Default, Clone)]
pub struct KnownDifferences {
    ids: HashSet<String>,
}

impl KnownDifferences {
    /// Loads the list shipped with chatfmt.
    pub fn bundled() -> Self {
        Self::parse(include_str!("../../../../KNOWN_DIFFERENCES.md"))
    }

    /// Parses the markdown list.
    pub fn parse(text: &str) -> Self {
        let ids = text
            .lines()
            .filter_map(|l| l.trim_start().strip_prefix("- `"))
            .filter_map(|l| l.split_once('`').map(|(id, _)| id.to_string()))
            .collect();
        KnownDifferences { ids }
    }

    /// Whether the case is documented.
    pub fn contains(&self, id: &str) -> bool {
        self.ids.contains(id)
    }
}
