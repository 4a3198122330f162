//! The native half of the `chatfmt` Python package (`chatfmt._native`): a model's template and
//! tokenizer behind one handle (`Model`), Python values read as transformers reads them
//! (`convert`), the Arrow batch kernel (`batch`), engine errors raised as the Python classes transformers raises (`errors`).

mod batch;
mod convert;
mod errors;
mod import;
mod model;

use pyo3::prelude::*;

/// transformers' `clean_up_tokenization` (the table the server's decoding uses too).
#[pyfunction]
fn clean_up_tokenization(text: &str) -> String {
    chatfmt_tokenize::clean_up_tokenization(text)
}

/// `chatfmt._native`.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<model::Model>()?;
    m.add_function(wrap_pyfunction!(batch::format_batch, m)?)?;
    m.add_function(wrap_pyfunction!(clean_up_tokenization, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
