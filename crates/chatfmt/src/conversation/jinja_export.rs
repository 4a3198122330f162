//! Export of FastChat templates as Hugging Face chat templates (Jinja source).
