//! The progress bar of long runs (on a terminal only): rows against the total where the input
//! records it (Parquet), else input bytes against the file size (JSON Lines), with an ETA and
//! integer rates.

use chatfmt_dataset::Total;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};

/// A progress bar on stderr.
pub struct Bar {
    bar: ProgressBar,
    rows: AtomicU64,
    by_bytes: std::sync::atomic::AtomicBool,
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key("rate", |s: &ProgressState, w: &mut dyn std::fmt::Write| {
            let _ = write!(w, "{:.0}/s", s.per_sec());
        })
}

impl Bar {
    /// A bar that draws once the run says how much input there is.
    pub fn new() -> Bar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        Bar {
            bar,
            rows: AtomicU64::new(0),
            by_bytes: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl chatfmt_dataset::Progress for Bar {
    fn start(&self, total: Option<Total>) {
        match total {
            Some(Total::Rows(n)) => {
                self.bar.set_length(n);
                self.bar
                    .set_style(style("{bar:40} {pos}/{len} rows, {rate}, eta {eta}"));
            }
            Some(Total::Bytes(n)) => {
                self.by_bytes.store(true, Ordering::Relaxed);
                self.bar.set_length(n);
                self.bar.set_style(style(
                    "{bar:40} {binary_bytes}/{binary_total_bytes}, {msg} rows, eta {eta}",
                ));
            }
            None => self.bar.set_style(style("{spinner} {pos} rows, {rate}")),
        }
    }

    fn advance(&self, rows: u64, bytes: u64) {
        if self.by_bytes.load(Ordering::Relaxed) {
            let done = self.rows.fetch_add(rows, Ordering::Relaxed) + rows;
            self.bar.set_message(done.to_string());
            self.bar.inc(bytes);
        } else {
            self.bar.inc(rows);
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
