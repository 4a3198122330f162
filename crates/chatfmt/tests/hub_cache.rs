//! Resolving `org/name` from a synthetic Hugging Face cache laid out as huggingface_hub does.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr
)]

use chatfmt::{ApplyOptions, ChatTemplate, ErrorKind, HubCache};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

fn temp_cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("chatfmt-hub-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// Stores `text` as a blob and links it into the snapshot, as huggingface_hub does on Unix.
fn cached_file(repo: &Path, commit: &str, name: &str, text: &str) {
    let blobs = repo.join("blobs");
    let snapshot = repo.join("snapshots").join(commit);
    std::fs::create_dir_all(&blobs).expect("blobs");
    std::fs::create_dir_all(&snapshot).expect("snapshot");
    let blob = blobs.join(format!("{commit}-{name}"));
    std::fs::write(&blob, text).expect("blob");
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        Path::new("../../blobs").join(blob.file_name().expect("name")),
        snapshot.join(name),
    )
    .expect("symlink");
    #[cfg(not(unix))]
    std::fs::copy(&blob, snapshot.join(name)).expect("copy");
}

fn config(template: &str) -> String {
    json!({"bos_token": "<s>", "eos_token": "</s>", "chat_template": template}).to_string()
}

fn render(dir: &Path) -> String {
    let t = ChatTemplate::from_model_dir(dir).expect("loads");
    t.apply(&[json!({"role": "user", "content": "hi"})], &ApplyOptions::default())
        .expect("renders")
        .text
}

#[test]
fn refs_main_picks_the_snapshot_through_symlinks() {
    let cache = temp_cache("refs");
    let repo = cache.join("models--acme--tiny-chat");
    cached_file(
        &repo,
        "1111",
        "tokenizer_config.json",
        &config("old {{ messages[0].content }}"),
    );
    cached_file(
        &repo,
        "2222",
        "tokenizer_config.json",
        &config("main {{ messages[0].content }}{{ eos_token }}"),
    );
    cached_file(
        &repo,
        "2222",
        "chat_template.jinja",
        "jinja {{ bos_token }}{{ messages[0].content }}",
    );
    std::fs::create_dir_all(repo.join("refs")).expect("refs");
    std::fs::write(repo.join("refs/main"), "2222").expect("refs/main");
    let snapshot = HubCache::new(&cache).snapshot("acme/tiny-chat").expect("found");
    assert_eq!(snapshot, repo.join("snapshots/2222"));
    assert_eq!(render(&snapshot), "jinja <s>hi");
}

#[test]
fn without_refs_main_the_newest_snapshot_is_used() {
    let cache = temp_cache("newest");
    let repo = cache.join("models--tiny");
    cached_file(&repo, "aaaa", "tokenizer_config.json", &config("newer"));
    cached_file(&repo, "bbbb", "tokenizer_config.json", &config("older"));
    let now = SystemTime::now();
    for (commit, age) in [("aaaa", 0), ("bbbb", 3600)] {
        let dir = std::fs::File::open(repo.join("snapshots").join(commit)).expect("open snapshot");
        dir.set_modified(now - Duration::from_secs(age)).expect("set mtime");
    }
    let snapshot = HubCache::new(&cache).snapshot("tiny").expect("found");
    assert_eq!(render(&snapshot), "newer");
}

#[test]
fn absent_models_and_broken_refs_say_where_they_looked() {
    let cache = temp_cache("absent");
    let e = HubCache::new(&cache).snapshot("acme/missing").unwrap_err();
    assert_eq!(e.path(), Some(cache.join("models--acme--missing").as_path()));
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let text = e.to_string();
    assert!(
        text.contains("'acme/missing' is not in the local Hugging Face cache"),
        "{text}"
    );
    assert!(
        text.starts_with(&format!("{}: ", cache.join("models--acme--missing").display())),
        "{text}"
    );
    assert!(
        text.contains(&format!("Hugging Face cache {} (", cache.display())),
        "{text}"
    );

    let repo = cache.join("models--acme--broken");
    std::fs::create_dir_all(repo.join("refs")).expect("refs");
    std::fs::write(repo.join("refs/main"), "dead\n").expect("refs/main");
    let text = HubCache::new(&cache).snapshot("acme/broken").unwrap_err().to_string();
    assert!(text.contains("refs/main names commit 'dead'"), "{text}");

    std::fs::create_dir_all(cache.join("models--acme--empty/snapshots")).expect("empty");
    let text = HubCache::new(&cache).snapshot("acme/empty").unwrap_err().to_string();
    assert!(text.contains("neither refs/main nor any folder"), "{text}");
}
