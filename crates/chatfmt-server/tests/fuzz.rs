//! A seeded fuzz of malformed requests on every route: truncated JSON, wrong types, huge numbers,
//! deep nesting, unknown fields, bad UTF-8 and wrong content types, in-process and then over
//! loopback to a bound server. No answer may be a 5xx, every error has the one error shape and no
//! message shows a source path, and every request finishes within a deadline.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::print_stderr)]

mod support;

use axum::http::StatusCode;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::time::Duration;
use support::{app, call, check_route_error, error_message, fixture, qwen3};

/// A small seeded generator (xorshift).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Values of the wrong type, shape or size for any field.
fn odd_values() -> Vec<Value> {
    vec![
        json!(null),
        json!(1),
        json!(-1),
        json!(1.5),
        json!(-1e300),
        json!("s"),
        json!(""),
        json!([]),
        json!({}),
        json!([1, "a"]),
        json!([[1], 2]),
        json!([{"role": 1}]),
        json!(true),
        json!(u64::MAX),
        json!(i64::MIN),
        json!([4294967296u64]),
        json!([{"role": "user", "content": {"a": [null]}}]),
        json!([{"role": "user", "content": [{"type": "text"}]}]),
        json!({"5": "x"}),
        json!(["", ""]),
    ]
}

/// Raw JSON text no `serde_json::Value` can hold: out-of-range numbers.
const HUGE: [&str; 4] = ["1e999", "-1e999", "123456789012345678901234567890", "-0.0e-99999"];

/// A mutation of a valid body.
fn mutate(rng: &mut Rng, valid: &Value) -> Vec<u8> {
    let odd = odd_values();
    let text = valid.to_string();
    let mut value = valid.clone();
    let obj = value.as_object_mut().unwrap();
    let keys: Vec<String> = obj.keys().cloned().collect();
    match rng.below(9) {
        // Truncated.
        0 => text.as_bytes()[..rng.below(text.len() + 1)].to_vec(),
        // Bytes changed, often into invalid UTF-8.
        1 => {
            let mut bytes = text.into_bytes();
            for _ in 0..=rng.below(4) {
                let i = rng.below(bytes.len());
                bytes[i] = [0xff, 0xc3, 0x80, 0xed, rng.next() as u8][rng.below(5)];
            }
            bytes
        }
        // A field of another type.
        2 | 3 => {
            let k = keys[rng.below(keys.len())].clone();
            obj.insert(k, odd[rng.below(odd.len())].clone());
            value.to_string().into_bytes()
        }
        // A field of another route, or an unknown one.
        4 => {
            let names = [
                "model",
                "messages",
                "tools",
                "tokens",
                "content",
                "prompt",
                "stream",
                "stream_options",
                "temperature",
                "max_tokens",
                "n",
                "logit_bias",
                "stop",
                "request_id",
                "zzz",
            ];
            obj.insert(
                names[rng.below(names.len())].to_string(),
                odd[rng.below(odd.len())].clone(),
            );
            value.to_string().into_bytes()
        }
        // A huge number spliced in as raw text.
        5 => {
            let k = &keys[rng.below(keys.len())];
            obj.insert(k.clone(), json!("@@"));
            value
                .to_string()
                .replace("\"@@\"", HUGE[rng.below(HUGE.len())])
                .into_bytes()
        }
        // Deeply nested arrays or objects, alone or in a field.
        6 => {
            let depth = rng.below(400);
            let nested = if rng.below(2) == 0 {
                format!("{}{}", "[".repeat(depth), "]".repeat(rng.below(depth + 1)))
            } else {
                format!("{}1{}", "{\"a\":".repeat(depth), "}".repeat(depth))
            };
            if rng.below(2) == 0 {
                return nested.into_bytes();
            }
            let k = &keys[rng.below(keys.len())];
            obj.insert(k.clone(), json!("@@"));
            value.to_string().replace("\"@@\"", &nested).into_bytes()
        }
        // Not an object.
        7 => [&b"[]"[..], b"\"x\"", b"null", b"", b"   ", b"\xef\xbb\xbf{}"][rng.below(6)].to_vec(),
        // Valid: the route's own request.
        _ => text.into_bytes(),
    }
}

const CONTENT_TYPES: [Option<&str>; 7] = [
    Some("application/json"),
    Some("application/json; charset=utf-8"),
    Some("APPLICATION/JSON"),
    Some("text/plain"),
    Some("multipart/form-data; boundary=x"),
    Some("application/x-www-form-urlencoded"),
    None,
];

/// Every route of the fixture with its method, plus `/health` and `/metrics`.
fn routes() -> Vec<(String, String, Value)> {
    let mut all: Vec<(String, String, Value)> = (fixture()["routes"].as_array().unwrap().iter())
        .map(|r| {
            let request = r.get("request").cloned().unwrap_or_else(|| json!({"x": 1}));
            (
                r["method"].as_str().unwrap().to_string(),
                r["path"].as_str().unwrap().to_string(),
                request,
            )
        })
        .collect();
    for path in ["/health", "/metrics"] {
        all.push(("GET".into(), path.into(), json!({"x": 1})));
    }
    all
}

/// Checks one answer: no 5xx, and an error has its route's shape, without source paths.
fn check(path: &str, status: StatusCode, value: &Value, body: &[u8], dir: &str) {
    assert!(
        !status.is_server_error(),
        "{status} for {}: {value}",
        String::from_utf8_lossy(body)
    );
    if !status.is_success() {
        check_route_error(path, status, value);
        let message = error_message(value).replace(dir, "");
        assert!(
            !message.contains(".rs") && !message.contains("/shared/") && !message.contains("Traceback"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn malformed_requests_never_get_a_5xx() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let dir = dir.display().to_string();
    let routes = routes();
    let mut rng = Rng(0x5eed_c4a7_f0f0_1234);
    let mut statuses = BTreeMap::new();
    let deadline = Duration::from_secs(60);
    let run = async {
        for _ in 0..12_000 {
            let (method, path, valid) = &routes[rng.below(routes.len())];
            let body = mutate(&mut rng, valid);
            let ct = CONTENT_TYPES[rng.below(CONTENT_TYPES.len())];
            // Now and then the wrong method.
            let method = if rng.below(20) == 0 {
                ["GET", "POST", "PUT"][rng.below(3)]
            } else {
                method
            };
            let (s, v, _) = call(&app, method, path, ct, body.clone()).await;
            check(path, s, &v, &body, &dir);
            *statuses.entry(s.as_u16()).or_insert(0) += 1;
        }
    };
    tokio::time::timeout(deadline, run)
        .await
        .expect("the fuzz finishes in time");
    for status in [200, 400, 404, 405, 415] {
        assert!(statuses.contains_key(&status), "{status} never seen: {statuses:?}");
    }
}

/// One request over a fresh connection (blocking, with socket timeouts): the status and the JSON
/// body.
fn send(address: std::net::SocketAddr, method: &str, path: &str, ct: Option<&str>, body: &[u8]) -> (StatusCode, Value) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    stream.set_write_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(ct) = ct {
        head.push_str(&format!("Content-Type: {ct}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let text = String::from_utf8_lossy(&answer);
    let status = StatusCode::from_u16(text[9..12].parse().unwrap()).unwrap();
    let (_, body) = text.split_once("\r\n\r\n").unwrap();
    let value = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.to_string()));
    (status, value)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_over_loopback_never_get_a_5xx() {
    let Some(dir) = qwen3() else { return };
    let app = app(&dir);
    let dir = dir.display().to_string();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(chatfmt_server::serve(app, listener, async {
        let _ = stopped.await;
    }));
    let routes = routes();
    let mut rng = Rng(0x10_0ba5_eed5);
    let run = async {
        for _ in 0..200 {
            let (method, path, valid) = &routes[rng.below(routes.len())];
            let body = mutate(&mut rng, valid);
            let ct = CONTENT_TYPES[rng.below(CONTENT_TYPES.len())];
            let (method, route, ct, sent) = (method.clone(), path.clone(), ct.map(str::to_string), body.clone());
            let one = tokio::task::spawn_blocking(move || send(address, &method, &route, ct.as_deref(), &sent));
            let (s, v) = tokio::time::timeout(Duration::from_secs(15), one)
                .await
                .expect("an answer in time")
                .unwrap();
            check(path, s, &v, &body, &dir);
        }
    };
    tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .expect("the fuzz finishes in time");
    stop.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(15), server)
        .await
        .expect("the server stops")
        .unwrap()
        .unwrap();
}
