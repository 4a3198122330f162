//! Prometheus metrics: requests by route and status, a latency histogram by route, errors by kind.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS: [f64; 12] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0];

#[derive(Default)]
struct Histogram {
    counts: [u64; BUCKETS.len()],
    count: u64,
    sum: f64,
}

#[derive(Default)]
struct State {
    requests: BTreeMap<(String, u16), u64>,
    latency: BTreeMap<String, Histogram>,
    errors: BTreeMap<String, u64>,
}

/// The counters of one server.
#[derive(Default)]
pub struct Metrics {
    state: Mutex<State>,
}

impl Metrics {
    /// Counts one answered request.
    pub fn record(&self, route: &str, status: u16, elapsed: Duration, error_kind: Option<&str>) {
        let Ok(mut s) = self.state.lock() else {
            return;
        };
        *s.requests.entry((route.to_string(), status)).or_default() += 1;
        let h = s.latency.entry(route.to_string()).or_default();
        let secs = elapsed.as_secs_f64();
        for (i, bound) in BUCKETS.iter().enumerate() {
            if secs <= *bound {
                h.counts[i] += 1;
            }
        }
        h.count += 1;
        h.sum += secs;
        if let Some(kind) = error_kind {
            *s.errors.entry(kind.to_string()).or_default() += 1;
        }
    }

    /// The text exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(s) = self.state.lock() else {
            return out;
        };
        out.push_str("# HELP chatfmt_requests_total Requests answered, by route and HTTP status.\n");
        out.push_str("# TYPE chatfmt_requests_total counter\n");
        for ((route, status), n) in &s.requests {
            let _ = writeln!(
                out,
                "chatfmt_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}"
            );
        }
        out.push_str("# HELP chatfmt_request_duration_seconds Time to answer a request, by route.\n");
        out.push_str("# TYPE chatfmt_request_duration_seconds histogram\n");
        for (route, h) in &s.latency {
            for (bound, n) in BUCKETS.iter().zip(h.counts) {
                let _ = writeln!(
                    out,
                    "chatfmt_request_duration_seconds_bucket{{route=\"{route}\",le=\"{bound}\"}} {n}"
                );
            }
            let _ = writeln!(
                out,
                "chatfmt_request_duration_seconds_bucket{{route=\"{route}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "chatfmt_request_duration_seconds_sum{{route=\"{route}\"}} {}",
                h.sum
            );
            let _ = writeln!(
                out,
                "chatfmt_request_duration_seconds_count{{route=\"{route}\"}} {}",
                h.count
            );
        }
        out.push_str("# HELP chatfmt_errors_total Error answers, by error type.\n");
        out.push_str("# TYPE chatfmt_errors_total counter\n");
        for (kind, n) in &s.errors {
            let _ = writeln!(out, "chatfmt_errors_total{{kind=\"{kind}\"}} {n}");
        }
        out
    }
}
