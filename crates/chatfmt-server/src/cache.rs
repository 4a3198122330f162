//! Templates sent with requests, compiled once and kept by the hash of their source and model in a
//! bounded LRU cache, each set to render under the request limits.

use crate::models::Model;
use chatfmt::jinja::Limits;
use chatfmt::ChatTemplate;
use lru::LruCache;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

/// A compiled request template and the source it was compiled from.
struct Entry {
    model: String,
    source: String,
    template: Arc<ChatTemplate>,
}

/// The cache.
pub struct TemplateCache {
    entries: Mutex<LruCache<u64, Entry>>,
    limits: Limits,
}

impl TemplateCache {
    pub fn new(capacity: usize, limits: Limits) -> TemplateCache {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        TemplateCache {
            entries: Mutex::new(LruCache::new(capacity)),
            limits,
        }
    }

    /// `source` compiled for `model` (its special tokens), from the cache when there.
    pub fn get(&self, model: &Model, source: &str) -> Arc<ChatTemplate> {
        let mut hasher = DefaultHasher::new();
        (model.name.as_str(), source).hash(&mut hasher);
        let key = hasher.finish();
        if let Ok(mut entries) = self.entries.lock() {
            if let Some(e) = entries
                .get(&key)
                .filter(|e| e.model == model.name && e.source == source)
            {
                return Arc::clone(&e.template);
            }
        }
        let special = model.resolved.template.special_tokens().clone();
        let template = Arc::new(ChatTemplate::new(source, special).with_limits(self.limits.clone()));
        if let Ok(mut entries) = self.entries.lock() {
            entries.put(
                key,
                Entry {
                    model: model.name.clone(),
                    source: source.to_string(),
                    template: Arc::clone(&template),
                },
            );
        }
        template
    }

    /// How many templates are kept.
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }
}
