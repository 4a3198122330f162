//! Adapter records: model paths, with PEFT fixtures written to a temporary folder.

use super::{bad_record, Checks, Run};
use chatfmt_fastchat::{match_model_in, matching_adapters, ADAPTERS};
use chatfmt_fastchat::{Error, ErrorKind, Result};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A temporary folder holding the PEFT fixtures of the adapter records; removed on drop.
pub(super) struct FixtureDir(PathBuf);

impl FixtureDir {
    pub(super) fn create(records: &[Value]) -> Result<FixtureDir> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!("chatfmt-fastchat-kit-{}-{n}", std::process::id()));
        let io = |e: std::io::Error| Error::new(ErrorKind::InvalidInput, format!("fixture folder: {e}"));
        let dir = FixtureDir(root);
        std::fs::create_dir_all(&dir.0).map_err(io)?;
        for record in records {
            let Some(fixture) = record.get("fixture") else {
                continue;
            };
            let id = record["id"].as_str().unwrap_or("?");
            let sub = fixture["dir"]
                .as_str()
                .ok_or_else(|| bad_record(id, "fixture without dir"))?;
            if Path::new(sub).is_absolute() || sub.split('/').any(|c| c == "..") {
                return Err(bad_record(id, "fixture dir must be relative"));
            }
            let folder = dir.0.join(sub);
            std::fs::create_dir_all(&folder).map_err(io)?;
            if let Some(config) = fixture.get("adapter_config.json") {
                std::fs::write(folder.join("adapter_config.json"), config.to_string()).map_err(io)?;
            }
        }
        Ok(dir)
    }

    pub(super) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for FixtureDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Run {
    pub(super) fn check_adapter(&mut self, record: &Value, dir: &Path) -> Result<()> {
        let id = record["id"]
            .as_str()
            .ok_or_else(|| bad_record("?", "no id"))?
            .to_owned();
        let path = record["model_path"]
            .as_str()
            .ok_or_else(|| bad_record(&id, "no model_path"))?;
        let found = match_model_in(path, dir);
        let mut c = Checks::new(&id, record);
        c.plain("adapter", &record["adapter"], json!(found.adapter), true);
        match record.get("error") {
            Some(err) => c.result(
                "template",
                &json!({"error": err}),
                found.template.map(Value::from),
                true,
            ),
            None => c.result(
                "template",
                &json!({"ok": record["template"]}),
                found.template.map(Value::from),
                true,
            ),
        }
        let indices = |v: &Value| -> Value {
            json!(v
                .as_array()
                .map(|a| a.iter().map(|m| m["index"].clone()).collect::<Vec<_>>()))
        };
        let basename = record["basename"].as_str().unwrap_or_default();
        // The basename pass skips the catch-all adapter.
        let mut on_basename = matching_adapters(basename, dir);
        on_basename.retain(|&i| i + 1 < ADAPTERS.len());
        c.plain(
            "basename_matches",
            &indices(&record["basename_matches"]),
            json!(on_basename),
            false,
        );
        if !record["full_path_matches"].is_null() {
            c.plain(
                "full_path_matches",
                &indices(&record["full_path_matches"]),
                json!(matching_adapters(path, dir)),
                false,
            );
        }
        self.finish(c);
        Ok(())
    }
}
