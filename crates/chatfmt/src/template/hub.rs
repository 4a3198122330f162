//! Finding a model in the local Hugging Face hub cache, without network, as huggingface_hub lays it
//! out: `<cache>/models--<org>--<name>/refs/main` holds a commit hash and
//! `<cache>/models--<org>--<name>/snapshots/<hash>/` the files (often symlinks into `blobs/`).

use crate::{Error, ErrorKind};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The local Hugging Face hub cache folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HubCache {
    dir: PathBuf,
}

impl HubCache {
    /// The cache at `dir` (the folder holding `models--*` folders).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        HubCache { dir: dir.into() }
    }

    /// The cache huggingface_hub uses: `$HF_HUB_CACHE`, else `$HUGGINGFACE_HUB_CACHE`, else
    /// `$HF_HOME/hub`, else `$XDG_CACHE_HOME/huggingface/hub`, else `~/.cache/huggingface/hub`; a
    /// leading `~` and `$VAR` / `${VAR}` references in the value are expanded, as Python's
    /// `os.path.expanduser` and `os.path.expandvars` do.
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var_os(name).map(PathBuf::from))
    }

    /// [`HubCache::from_env`] over any source of environment variables.
    fn from_vars(var: impl Fn(&str) -> Option<PathBuf>) -> Self {
        let home = var("HOME")
            .or_else(|| var("USERPROFILE"))
            .unwrap_or_else(|| PathBuf::from("~"));
        let expand = |p: PathBuf| {
            let p = match p.strip_prefix("~") {
                Ok(rest) => home.join(rest),
                Err(_) => p,
            };
            match p.to_str() {
                Some(s) if s.contains('$') => PathBuf::from(expand_vars(s, &var)),
                _ => p,
            }
        };
        let dir = var("HF_HUB_CACHE")
            .or_else(|| var("HUGGINGFACE_HUB_CACHE"))
            .unwrap_or_else(|| {
                let hf_home = var("HF_HOME").unwrap_or_else(|| {
                    var("XDG_CACHE_HOME")
                        .unwrap_or_else(|| home.join(".cache"))
                        .join("huggingface")
                });
                expand(hf_home).join("hub")
            });
        HubCache { dir: expand(dir) }
    }

    /// The cache folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The folder huggingface_hub keeps a model repository in: `models--org--name`.
    pub fn repo_dir(&self, repo_id: &str) -> PathBuf {
        self.dir.join(format!("models--{}", repo_id.replace('/', "--")))
    }

    /// The snapshot folder of `repo_id` (`org/name`): the commit `refs/main` names, else the only
    /// snapshot, else the most recently modified one. The error says where it looked.
    pub fn snapshot(&self, repo_id: &str) -> Result<PathBuf, Error> {
        let repo = self.repo_dir(repo_id);
        let err = |path: &Path, message: String| Error::new(ErrorKind::Malformed, message).in_file(path);
        if !repo.is_dir() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!(
                    "'{repo_id}' is not in the local Hugging Face cache {} (the cache folder is $HF_HUB_CACHE, \
                     else $HF_HOME/hub, else ~/.cache/huggingface/hub); download it first, e.g. \
                     `hf download {repo_id}`, or pass a local folder",
                    self.dir.display()
                ),
            )
            .in_file(&repo));
        }
        let snapshots = repo.join("snapshots");
        let main = repo.join("refs").join("main");
        if let Ok(hash) = std::fs::read_to_string(&main) {
            let hash = hash.trim();
            let dir = snapshots.join(hash);
            if hash.is_empty() || !dir.is_dir() {
                return Err(err(
                    &main,
                    format!(
                        "refs/main names commit '{hash}' but {} is missing; download the model again",
                        dir.display()
                    ),
                ));
            }
            return Ok(dir);
        }
        let mut found: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(&snapshots)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.is_dir())
                    .map(|p| {
                        (
                            p.metadata()
                                .and_then(|m| m.modified())
                                .unwrap_or(SystemTime::UNIX_EPOCH),
                            p,
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found.pop().map(|(_, p)| p).ok_or_else(|| {
            err(
                &repo,
                format!(
                    "'{repo_id}' is in the Hugging Face cache but has neither refs/main nor any folder in {}; \
                     download it again",
                    snapshots.display()
                ),
            )
        })
    }
}

/// Python's `posixpath.expandvars`: `$name` (word characters) and `${name}` are replaced by the
/// variable's value when it is set and left as they are otherwise; values are not expanded again.
fn expand_vars(s: &str, var: &impl Fn(&str) -> Option<PathBuf>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, len) = match after.strip_prefix('{') {
            Some(braced) => match braced.find('}') {
                Some(j) => (&braced[..j], j + 2),
                None => ("", 0),
            },
            None => {
                let n = after
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(after.len());
                (&after[..n], n)
            }
        };
        match var(name).filter(|_| len > 0 && !name.is_empty()) {
            Some(value) => out.push_str(&value.to_string_lossy()),
            None => out.push_str(&rest[i..i + 1 + len]),
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// Whether `s` has the shape of a Hub repository id (`name` or `org/name`, of letters, digits,
/// `-`, `_` and `.`, without `--` or `..`), as huggingface_hub validates them.
pub fn is_repo_id(s: &str) -> bool {
    let part_ok = |p: &str| {
        !p.is_empty()
            && p.len() <= 96
            && p.chars().all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && !p.starts_with(['-', '.'])
            && !p.ends_with(['-', '.'])
    };
    !s.contains("--") && !s.contains("..") && {
        let parts: Vec<&str> = s.split('/').collect();
        parts.len() <= 2 && parts.iter().all(|p| part_ok(p))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cache_from(vars: &[(&str, &str)]) -> PathBuf {
        let vars: HashMap<&str, &str> = vars.iter().copied().collect();
        HubCache::from_vars(|k| vars.get(k).map(PathBuf::from)).dir
    }

    #[test]
    fn cache_folder_follows_huggingface_hub_priority() {
        let all = [
            ("HOME", "/home/u"),
            ("XDG_CACHE_HOME", "/xdg"),
            ("HF_HOME", "/hf"),
            ("HUGGINGFACE_HUB_CACHE", "/legacy"),
            ("HF_HUB_CACHE", "/hub"),
        ];
        assert_eq!(cache_from(&all), PathBuf::from("/hub"));
        assert_eq!(cache_from(&all[..4]), PathBuf::from("/legacy"));
        assert_eq!(cache_from(&all[..3]), PathBuf::from("/hf/hub"));
        assert_eq!(cache_from(&all[..2]), PathBuf::from("/xdg/huggingface/hub"));
        assert_eq!(cache_from(&all[..1]), PathBuf::from("/home/u/.cache/huggingface/hub"));
        assert_eq!(
            cache_from(&[("HOME", "/home/u"), ("HF_HOME", "~/hf")]),
            PathBuf::from("/home/u/hf/hub")
        );
        assert_eq!(
            cache_from(&[
                ("HOME", "/h"),
                ("D", "/data"),
                ("HF_HUB_CACHE", "$D/${D}x/$NOPE/${}/$/${D")
            ]),
            PathBuf::from("/data//datax/$NOPE/${}/$/${D")
        );
        assert_eq!(
            cache_from(&[("HOME", "/h"), ("XDG_CACHE_HOME", "$HOME/xdg")]),
            PathBuf::from("/h/xdg/huggingface/hub")
        );
    }

    #[test]
    fn repo_ids() {
        for ok in ["gpt2", "Qwen/Qwen2.5-0.5B-Instruct", "org_1/name.v2"] {
            assert!(is_repo_id(ok), "{ok}");
        }
        for bad in [
            "",
            "a/b/c",
            "org--x/name",
            "../x",
            "/abs",
            "a/",
            "x..y",
            "-a",
            "with space",
        ] {
            assert!(!is_repo_id(bad), "{bad}");
        }
    }

    #[test]
    fn folder_name_replaces_slashes() {
        let cache = HubCache::new("/c");
        assert_eq!(cache.repo_dir("org/name"), PathBuf::from("/c/models--org--name"));
        assert_eq!(cache.repo_dir("gpt2"), PathBuf::from("/c/models--gpt2"));
    }
}
