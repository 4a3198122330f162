//! SGLang's `POST /v1/tokenize` and `POST /v1/detokenize`, and TGI's `POST /chat_tokenize`: each
//! prepares the messages, renders and answers (errors included) as its stack does.

pub mod content_format;
pub mod sglang;
pub mod tgi;
pub mod tgi_template;
