//! What every request reads: the configuration, the loaded models, the worker pool, the cache of
//! request templates and the metrics.

use crate::cache::TemplateCache;
use crate::config::Config;
use crate::error::{Error, ErrorKind};
use crate::metrics::Metrics;
use crate::models::Models;
use crate::pool::Pool;

/// What every request reads.
pub struct Shared {
    pub config: Config,
    pub models: Models,
    pub pool: Pool,
    pub cache: TemplateCache,
    pub metrics: Metrics,
}

impl Shared {
    /// Loads every model and starts the worker threads.
    pub fn load(config: Config) -> Result<Shared, Error> {
        let models = Models::load(&config.models, config.max_model_len, config.max_steps)?;
        let pool = Pool::new(config.workers, config.queue)
            .map_err(|e| Error::new(ErrorKind::Io, "cannot start the worker threads").with_source(e))?;
        let cache = TemplateCache::new(config.template_cache, config.request_limits.clone());
        Ok(Shared {
            config,
            models,
            pool,
            cache,
            metrics: Metrics::default(),
        })
    }
}
