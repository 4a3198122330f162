//! Exit codes: 0 success, 1 when records were rejected or `check` found problems, 2 for a usage or
//! input error (`chatfmt_tokenize::Error` always is one), 130 when interrupted. A closed standard
//! output (`chatfmt render ... | head -c1`) ends the program quietly with 0.

use std::process::ExitCode;

/// Success.
pub const SUCCESS: u8 = 0;
/// Some records were rejected, or `check` found errors.
pub const FOUND_PROBLEMS: u8 = 1;
/// A usage or input error.
pub const USAGE: u8 = 2;
/// Interrupted (SIGINT / SIGTERM), as shells report 128 + SIGINT.
pub const INTERRUPTED: u8 = 130;

/// The exit code of a failed command and whether to report the error.
pub fn code(error: &anyhow::Error) -> (u8, bool) {
    for cause in error.chain() {
        if let Some(e) = cause.downcast_ref::<std::io::Error>() {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return (SUCCESS, false);
            }
        }
        if let Some(e) = cause.downcast_ref::<chatfmt_dataset::Error>() {
            return match e.kind() {
                chatfmt_dataset::ErrorKind::Rejected => (FOUND_PROBLEMS, true),
                chatfmt_dataset::ErrorKind::Cancelled => (INTERRUPTED, true),
                _ => (USAGE, true),
            };
        }
    }
    (USAGE, true)
}

/// Reports a failed command on stderr (unless it needs no report) and gives its exit code.
pub fn fail(error: &anyhow::Error) -> ExitCode {
    let (code, report) = code(error);
    if report {
        eprintln!("error: {error:#}");
        if format!("{error:#}").contains("Limits::max_steps") {
            eprintln!("hint: a render may take more steps with --max-steps N");
        }
    }
    ExitCode::from(code)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chatfmt_dataset::{Error, ErrorKind};

    #[test]
    fn each_failure_has_its_code() {
        let pipe = anyhow::Error::from(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        assert_eq!(code(&pipe.context("writing the prompt")), (SUCCESS, false));
        let dataset = |kind| code(&anyhow::Error::from(Error::new(kind, "x"))).0;
        assert_eq!(dataset(ErrorKind::Rejected), FOUND_PROBLEMS);
        assert_eq!(dataset(ErrorKind::Cancelled), INTERRUPTED);
        assert_eq!(dataset(ErrorKind::Usage), USAGE);
        assert_eq!(dataset(ErrorKind::Input), USAGE);
        assert_eq!(code(&anyhow::anyhow!("bad flag")), (USAGE, true));
        // Every tokenizer failure (loading, rendering, encoding) is an input error.
        let tokenizer = chatfmt_tokenize::ChatTokenizer::from_model_dir(std::path::Path::new("no-such-model"))
            .err()
            .expect("no tokenizer there");
        assert_eq!(code(&anyhow::Error::from(tokenizer)), (USAGE, true));
    }
}
