//! `Model`: one model's chat template(s), tokenizer and special tokens, loaded once and used from
//! Python. Rendering and encoding run with the GIL released.

use crate::convert::{to_json, to_object};
use crate::errors::{jinja_error, jinja_error_text, load_error, tokenize_error};
use chatfmt::jinja::{Clock, CodePoints, Limits};
use chatfmt::masks::stop_markers;
use chatfmt::{ApplyOptions, ChatTemplate, ErrorKind, HubCache, MaskSource, ModelSource, SpanOptions, TemplateInfo};
use chatfmt_tokenize::chat::{message_spans, tokenize_chats, ChatTokenizeOptions};
use chatfmt_tokenize::{ChatTokenizer, EncodeOptions, Padding, Side, Text};
use pyo3::exceptions::{PyOSError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::{json, Map, Value as Json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A model's template(s), tokenizer (when its folder has `tokenizer.json`) and special tokens.
#[pyclass(module = "chatfmt._native")]
pub struct Model {
    template: Option<ChatTemplate>,
    tokenizer: Option<ChatTokenizer>,
    /// The special tokens templates see (`special_tokens_map`).
    special: Map<String, Json>,
    path: Option<PathBuf>,
    /// The limits every render runs under, the model's templates and a caller's alike.
    limits: Limits,
}

/// One rendered (and maybe encoded) conversation: text, ids, attention mask, assistant mask.
/// Masks are widened from bytes: PyO3 gives a `Vec<u8>` to Python as `bytes`.
type Row = (String, Option<Vec<u32>>, Option<Vec<u32>>, Option<Vec<u32>>);

fn widen(mask: Vec<u8>) -> Vec<u32> {
    mask.into_iter().map(u32::from).collect()
}

/// The clock `strftime_now` reads: a fixed naive local time, else the machine's.
pub fn clock_of(now: Option<String>) -> Clock {
    now.map_or(Clock::Local, Clock::Fixed)
}

/// `padding` as the Python layer normalizes it: `none`, `longest` or `max_length`.
pub fn padding_of(padding: &str) -> PyResult<Padding> {
    match padding {
        "none" => Ok(Padding::None),
        "longest" => Ok(Padding::Longest),
        "max_length" => Ok(Padding::MaxLength),
        other => Err(PyValueError::new_err(format!("unknown padding strategy {other:?}"))),
    }
}

/// The options of one of `apply_chat_template`'s conversations, from its arguments as Python
/// passes them.
fn conversation_options(
    tools: Option<&Bound<'_, PyAny>>,
    documents: Option<&Bound<'_, PyAny>>,
    chat_template: Option<String>,
    add_generation_prompt: bool,
    continue_final_message: Option<String>,
    kwargs: Map<String, Json>,
    now: Option<String>,
) -> PyResult<ApplyOptions> {
    Ok(ApplyOptions {
        add_generation_prompt,
        continue_final_message,
        tools: tools.map(to_json).transpose()?,
        documents: documents.map(to_json).transpose()?,
        chat_template,
        kwargs,
        clock: clock_of(now),
        ..ApplyOptions::default()
    })
}

fn side_of(side: Option<&str>) -> PyResult<Option<Side>> {
    side.map(|s| {
        Side::parse(s)
            .ok_or_else(|| PyValueError::new_err(format!("padding_side must be 'left' or 'right', not {s:?}")))
    })
    .transpose()
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Left => "left",
        Side::Right => "right",
    }
}

/// The snapshot folder of `repo_id` at `revision` (a branch or tag under `refs/`, or a commit).
fn snapshot_at(cache: &HubCache, repo_id: &str, revision: &str) -> Option<PathBuf> {
    let repo = cache.repo_dir(repo_id);
    let commit = std::fs::read_to_string(repo.join("refs").join(revision))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| revision.to_string());
    let dir = repo.join("snapshots").join(commit);
    dir.is_dir().then_some(dir)
}

/// A template from Python: source text, or a dict of named sources.
fn template_of(value: &Bound<'_, PyAny>, special: Map<String, Json>) -> PyResult<ChatTemplate> {
    if let Ok(s) = value.cast::<PyString>() {
        return Ok(ChatTemplate::new(&s.to_cow()?, special));
    }
    if let Ok(d) = value.cast::<PyDict>() {
        let named: Vec<(String, String)> = d
            .iter()
            .map(|(k, v)| Ok((k.extract()?, v.extract()?)))
            .collect::<PyResult<_>>()?;
        return Ok(ChatTemplate::named(
            named.iter().map(|(n, s)| (n.as_str(), s.as_str())),
            special,
        ));
    }
    Err(PyTypeError::new_err(
        "chat_template must be a string, a dict of named templates, or None",
    ))
}

impl Model {
    pub(crate) fn tokenizer(&self) -> PyResult<&ChatTokenizer> {
        self.tokenizer.as_ref().ok_or_else(|| {
            let place = self
                .path
                .as_deref()
                .map_or_else(String::new, |p| format!(" {}", p.display()));
            PyOSError::new_err(format!(
                "the model{place} has no tokenizer.json: it can render (tokenize=False) but not encode"
            ))
        })
    }

    /// The template to apply with `opts`: the model's (a `chat_template` naming one of its templates
    /// selects it), or, for a `chat_template` that names none, that source compiled here into
    /// `scratch` and taken out of `opts`, so that renders use it without compiling it each time.
    pub(crate) fn template_for<'s>(
        &'s self,
        opts: &mut ApplyOptions,
        scratch: &'s mut Option<ChatTemplate>,
    ) -> PyResult<&'s ChatTemplate> {
        match (&self.template, opts.chat_template.take()) {
            (Some(t), Some(name)) if t.names().contains(&name.as_str()) => {
                opts.chat_template = Some(name);
                Ok(t)
            }
            (_, Some(source)) => {
                Ok(scratch.insert(ChatTemplate::new(&source, self.special.clone()).with_limits(self.limits.clone())))
            }
            (Some(t), None) => Ok(t),
            (None, None) => Err(PyValueError::new_err(chatfmt::template::NO_TEMPLATE_MESSAGE)),
        }
    }
}

/// The source of the template `opts` selects (for `sanitize_control_tokens`).
fn selected_source(template: &ChatTemplate, opts: &ApplyOptions) -> Option<String> {
    let (name, _) = template.selected(opts).ok()?;
    match (name, opts.chat_template.as_deref()) {
        (None, Some(source)) => Some(source.to_string()),
        _ => template
            .sources()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, s)| s.to_string()),
    }
}

#[pymethods]
impl Model {
    /// Loads a model folder, GGUF file or Hub repo id of the local cache. A folder needs a chat
    /// template or `tokenizer.json` (or both).
    #[staticmethod]
    #[pyo3(signature = (name, cache_dir=None, revision=None))]
    fn load(py: Python<'_>, name: &str, cache_dir: Option<PathBuf>, revision: Option<String>) -> PyResult<Model> {
        let name = name.to_string();
        py.detach(move || {
            let cache = cache_dir.map_or_else(HubCache::from_env, HubCache::new);
            let source = match revision.as_deref() {
                Some(rev) if rev != "main" && !Path::new(&name).exists() => {
                    let dir = snapshot_at(&cache, &name, rev).ok_or_else(|| {
                        PyOSError::new_err(format!(
                            "revision '{rev}' of '{name}' is not in the local Hugging Face cache {}",
                            cache.dir().display()
                        ))
                    })?;
                    ModelSource::Dir(dir)
                }
                _ => ModelSource::resolve_in(&name, &cache).map_err(|e| load_error(&e))?,
            };
            let template = match source.chat_template() {
                Ok(t) => Some(t),
                Err(e) if e.kind() == ErrorKind::NoTemplate => None,
                Err(e) => return Err(load_error(&e)),
            };
            let tokenizer = match source.tokenizer_dir() {
                Some(dir) if dir.join("tokenizer.json").is_file() => {
                    Some(ChatTokenizer::from_model_dir(dir).map_err(|e| PyOSError::new_err(e.with_causes()))?)
                }
                _ => None,
            };
            if template.is_none() && tokenizer.is_none() {
                return Err(PyOSError::new_err(format!(
                    "{}: neither a chat template nor tokenizer.json",
                    source.path().display()
                )));
            }
            let special = match &tokenizer {
                Some(t) => t.special_tokens().clone(),
                None => source.special_tokens().map_err(|e| load_error(&e))?,
            };
            Ok(Model {
                template: template.map(|t| t.with_special_tokens(special.clone())),
                tokenizer,
                special,
                path: Some(source.path().to_path_buf()),
                limits: Limits::default(),
            })
        })
    }

    /// The folder or file the model was loaded from.
    #[getter]
    fn path(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }

    #[getter]
    fn has_tokenizer(&self) -> bool {
        self.tokenizer.is_some()
    }

    /// The template source, a dict of named sources, or `None`.
    #[getter]
    fn chat_template<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(t) = &self.template else { return Ok(None) };
        let sources = t.sources();
        match sources.as_slice() {
            [(None, source)] => Ok(Some(PyString::new(py, source).into_any())),
            _ => {
                let d = PyDict::new(py);
                for (name, source) in sources {
                    d.set_item(name.unwrap_or("default"), source)?;
                }
                Ok(Some(d.into_any()))
            }
        }
    }

    /// Replaces the template(s): source text, a dict of named sources, or `None`.
    fn set_chat_template(&mut self, value: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        self.template = value
            .map(|v| template_of(v, self.special.clone()))
            .transpose()?
            .map(|t| t.with_limits(self.limits.clone()));
        Ok(())
    }

    /// The evaluation steps one render may take (`Limits::max_steps`).
    #[getter]
    fn max_steps(&self) -> u64 {
        self.limits.max_steps
    }

    /// Sets the steps one render may take, for the model's templates and a caller's (at least 1).
    #[setter]
    fn set_max_steps(&mut self, max_steps: u64) -> PyResult<()> {
        if max_steps == 0 {
            return Err(PyValueError::new_err("max_steps must be at least 1"));
        }
        self.limits.max_steps = max_steps;
        self.template = self.template.take().map(|t| t.with_limits(self.limits.clone()));
        Ok(())
    }

    /// The special tokens templates see, by name.
    #[getter]
    fn special_tokens(&self) -> HashMap<String, String> {
        self.special
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
            .collect()
    }

    /// Sets (or with `None` removes) a named special token, for the template and the tokenizer.
    #[pyo3(signature = (name, value))]
    fn set_special_token(&mut self, name: &str, value: Option<String>) {
        match &value {
            Some(v) => self.special.insert(name.to_string(), Json::String(v.clone())),
            None => self.special.remove(name),
        };
        if let Some(t) = &mut self.tokenizer {
            t.set_special_token(name, value);
        }
        self.template = self
            .template
            .take()
            .map(|t| t.with_special_tokens(self.special.clone()));
    }

    #[getter]
    fn padding_side(&self) -> Option<&'static str> {
        self.tokenizer.as_ref().map(|t| side_name(t.padding_side()))
    }

    #[getter]
    fn truncation_side(&self) -> Option<&'static str> {
        self.tokenizer.as_ref().map(|t| side_name(t.truncation_side()))
    }

    #[getter]
    fn model_type(&self) -> Option<String> {
        self.tokenizer.as_ref().and_then(|t| t.model_type()).map(str::to_string)
    }

    #[getter]
    fn model_max_length(&self) -> Option<usize> {
        self.tokenizer.as_ref().and_then(ChatTokenizer::model_max_length)
    }

    /// The added tokens marked special, in id order.
    #[getter]
    fn special_added_tokens(&self) -> Vec<String> {
        self.tokenizer
            .as_ref()
            .map(|t| t.special_added_tokens().into_iter().map(str::to_string).collect())
            .unwrap_or_default()
    }

    /// Renders (and, with `tokenize`, encodes) conversations as transformers'
    /// `apply_chat_template` does after its argument checks.
    #[pyo3(signature = (conversations, *, tools, documents, chat_template, add_generation_prompt, continue_final_message,
        kwargs, tokenize, assistant_masks, padding, truncation, max_length, padding_side, sanitize, now,
        pad_to_multiple_of=None, truncation_side=None))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of `apply_chat_template`
    fn apply(
        &self,
        py: Python<'_>,
        conversations: &Bound<'_, PyList>,
        tools: Option<&Bound<'_, PyAny>>,
        documents: Option<&Bound<'_, PyAny>>,
        chat_template: Option<String>,
        add_generation_prompt: &Bound<'_, PyAny>,
        continue_final_message: Option<String>,
        kwargs: &Bound<'_, PyDict>,
        tokenize: bool,
        assistant_masks: bool,
        padding: &str,
        truncation: bool,
        max_length: Option<usize>,
        padding_side: Option<&str>,
        sanitize: bool,
        now: Option<String>,
        pad_to_multiple_of: Option<usize>,
        truncation_side: Option<&str>,
    ) -> PyResult<Vec<Row>> {
        let convs: Vec<Vec<Json>> = conversations
            .iter()
            .map(|c| c.try_iter()?.map(|m| to_json(&m?)).collect())
            .collect::<PyResult<_>>()?;
        let kwargs = to_object(kwargs.as_any())?;
        if kwargs.contains_key("messages") {
            // transformers passes the template variables next to its own `messages=`.
            let render = match assistant_masks {
                true => "transformers.utils.chat_template_utils._render_with_assistant_indices",
                false => "jinja2.environment.Template.render",
            };
            return Err(PyTypeError::new_err(format!(
                "{render}() got multiple values for keyword argument 'messages'"
            )));
        }
        let mut opts = ApplyOptions {
            // Every conversation here is one of the caller's batch (a single one included), whose
            // emptiness the caller checked.
            in_batch: true,
            ..conversation_options(
                tools,
                documents,
                chat_template,
                // The template reads it as a condition: Python's truthiness decides.
                add_generation_prompt.is_truthy()?,
                continue_final_message,
                kwargs,
                now,
            )?
        };
        let encode = EncodeOptions {
            add_special_tokens: false,
            truncation,
            max_length,
            padding: padding_of(padding)?,
            padding_side: side_of(padding_side)?,
            pad_to_multiple_of,
            truncation_side: side_of(truncation_side)?,
            assistant_masks,
        };
        let mut scratch = None;
        let template = self.template_for(&mut opts, &mut scratch)?;
        if !tokenize {
            let rendered = py.detach(|| {
                convs
                    .iter()
                    .map(|c| template.apply(c, &opts))
                    .collect::<Result<Vec<_>, _>>()
            });
            return rendered
                .map(|rs| rs.into_iter().map(|r| (r.text, None, None, None)).collect())
                .map_err(|e| jinja_error(py, &e));
        }
        let tokenizer = self.tokenizer()?;
        let chat_opts = ChatTokenizeOptions {
            encode,
            sanitize_control_tokens: if sanitize {
                selected_source(template, &opts)
            } else {
                None
            },
            spans: None,
        };
        let refs: Vec<&[Json]> = convs.iter().map(Vec::as_slice).collect();
        let chats = py
            .detach(|| tokenize_chats(template, tokenizer, &refs, &opts, &chat_opts))
            .map_err(|e| tokenize_error(py, &e))?;
        Ok(chats
            .into_iter()
            .map(|c| {
                let e = c.encoded;
                (
                    c.text,
                    Some(e.input_ids),
                    Some(widen(e.attention_mask)),
                    e.assistant_masks.map(widen),
                )
            })
            .collect())
    }

    /// One conversation as `chatfmt tokenize --json` prints it (with `tokenize` false, as
    /// `chatfmt render --json` does), as JSON text. `masks`: `None` (no masks or spans), `"auto"`,
    /// `"tags"` or `"provenance"`, read as `format_batch` reads them.
    #[pyo3(signature = (messages, *, tools, documents, chat_template, add_generation_prompt, continue_final_message,
        kwargs, tokenize, masks, max_length, now))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of `Tokenizer.render`
    fn render_json(
        &self,
        py: Python<'_>,
        messages: &Bound<'_, PyAny>,
        tools: Option<&Bound<'_, PyAny>>,
        documents: Option<&Bound<'_, PyAny>>,
        chat_template: Option<String>,
        add_generation_prompt: bool,
        continue_final_message: Option<String>,
        kwargs: &Bound<'_, PyDict>,
        tokenize: bool,
        masks: Option<&str>,
        max_length: Option<usize>,
        now: Option<String>,
    ) -> PyResult<String> {
        let messages: Vec<Json> = messages.try_iter()?.map(|m| to_json(&m?)).collect::<PyResult<_>>()?;
        let mut opts = conversation_options(
            tools,
            documents,
            chat_template,
            add_generation_prompt,
            continue_final_message,
            to_object(kwargs.as_any())?,
            now,
        )?;
        let mut scratch = None;
        let template = self.template_for(&mut opts, &mut scratch)?;
        let (name, origin) = template.selected(&opts).map_err(|e| jinja_error(py, &e))?;
        let info = json!(TemplateInfo {
            kind: "jinja",
            name: name.map(str::to_string),
            source: origin.to_string(),
        });
        let spans = match mask_source(template, &opts, masks)? {
            Ok(None) => None,
            Ok(Some(source)) => {
                let eos = (opts.kwargs.get("eos_token"))
                    .or_else(|| template.special_tokens().get("eos_token"))
                    .and_then(Json::as_str);
                Some(self.span_options(source, eos, true)?)
            }
            Err(text) => return Err(PyValueError::new_err(text)),
        };
        if !tokenize {
            let found = match &spans {
                None => None,
                Some(span_opts) => {
                    Some((template.apply_with_spans(&messages, &opts, span_opts)).map_err(|e| jinja_error(py, &e))?)
                }
            };
            let text = match &found {
                Some(found) => found.rendered.text.clone(),
                None => template.apply(&messages, &opts).map_err(|e| jinja_error(py, &e))?.text,
            };
            let mut out = json!({"text": text, "template": info});
            if let (Some(o), Some(found)) = (out.as_object_mut(), found) {
                o.extend(found.to_json());
            }
            return Ok(out.to_string());
        }
        let tokenizer = self.tokenizer()?;
        let chat_opts = ChatTokenizeOptions {
            encode: EncodeOptions {
                truncation: max_length.is_some(),
                max_length,
                assistant_masks: spans.is_some(),
                ..EncodeOptions::default()
            },
            sanitize_control_tokens: None,
            spans,
        };
        let chat = py
            .detach(|| tokenize_chats(template, tokenizer, &[messages.as_slice()], &opts, &chat_opts))
            .map_err(|e| tokenize_error(py, &e))?
            .pop()
            .ok_or_else(|| PyValueError::new_err("no conversation was tokenized"))?;
        let enc = &chat.encoded;
        let mut out = json!({"input_ids": enc.input_ids, "attention_mask": enc.attention_mask});
        if let Some(found) = &chat.spans {
            if found.assistant_mask_is_empty(&messages) {
                return Err(PyValueError::new_err(format!(
                    "the conversation has assistant messages but no assistant span was found ({} masks): the \
                     assistant mask would be all zeros; try masks='provenance'",
                    found.source.name()
                )));
            }
            out["assistant_masks"] = json!(enc.assistant_masks);
            out["template"] = info;
            out["text"] = json!(chat.text);
            out.as_object_mut().into_iter().for_each(|o| o.extend(found.to_json()));
            out["message_spans"] = json!(message_spans(found, enc, &CodePoints::new(&chat.text)));
        } else {
            out["template"] = info;
            out["text"] = json!(chat.text);
        }
        Ok(out.to_string())
    }

    /// Encodes texts as `tokenizer(texts, ...)`: ids and attention masks.
    #[allow(clippy::too_many_arguments)] // the keyword arguments of `tokenizer(texts, ...)`
    #[pyo3(signature = (texts, *, add_special_tokens, truncation, max_length, padding, padding_side,
        pad_to_multiple_of=None, truncation_side=None))]
    fn encode(
        &self,
        py: Python<'_>,
        texts: Vec<String>,
        add_special_tokens: bool,
        truncation: bool,
        max_length: Option<usize>,
        padding: &str,
        padding_side: Option<&str>,
        pad_to_multiple_of: Option<usize>,
        truncation_side: Option<&str>,
    ) -> PyResult<Vec<(Vec<u32>, Vec<u32>)>> {
        let tokenizer = self.tokenizer()?;
        let opts = EncodeOptions {
            add_special_tokens,
            truncation,
            max_length,
            padding: padding_of(padding)?,
            padding_side: side_of(padding_side)?,
            pad_to_multiple_of,
            truncation_side: side_of(truncation_side)?,
            assistant_masks: false,
        };
        let items: Vec<Text<'_>> = texts
            .iter()
            .map(|t| Text {
                text: t,
                generation_spans: &[],
                token_spans: &[],
            })
            .collect();
        let encoded = py
            .detach(|| tokenizer.encode_batch(&items, &opts))
            .map_err(|e| tokenize_error(py, &e))?;
        Ok(encoded
            .into_iter()
            .map(|e| (e.input_ids, widen(e.attention_mask)))
            .collect())
    }

    /// The text of `ids`.
    #[pyo3(signature = (ids, skip_special_tokens=false))]
    fn decode(&self, py: Python<'_>, ids: Vec<u32>, skip_special_tokens: bool) -> PyResult<String> {
        self.tokenizer()?
            .decode_with(&ids, skip_special_tokens)
            .map_err(|e| tokenize_error(py, &e))
    }

    fn id_to_token(&self, id: u32) -> PyResult<Option<String>> {
        Ok(self.tokenizer()?.id_to_token(id))
    }

    fn token_to_id(&self, token: &str) -> PyResult<Option<u32>> {
        Ok(self.tokenizer()?.token_to_id(token))
    }

    /// Every token with its id.
    fn vocab(&self) -> PyResult<HashMap<String, u32>> {
        Ok(self.tokenizer()?.vocab().clone())
    }

    fn vocab_size(&self) -> PyResult<usize> {
        Ok(self.tokenizer()?.vocab().len())
    }

    /// The model's own vocabulary size, without the added tokens.
    fn model_vocab_size(&self) -> PyResult<usize> {
        Ok(self.tokenizer()?.model_vocab_size())
    }
}

impl Model {
    /// The folder or file the model was loaded from.
    /// How to find assistant spans from `source`, the turn ending at the model folder's
    /// end-of-turn markers and `eos` (see [`stop_markers`]).
    pub(crate) fn span_options(
        &self,
        source: MaskSource,
        eos: Option<&str>,
        message_spans: bool,
    ) -> PyResult<SpanOptions> {
        let dir = self.path.as_deref().filter(|p| p.is_dir());
        Ok(SpanOptions {
            source,
            stop_markers: stop_markers(dir, eos, &[]).map_err(|e| load_error(&e))?,
            message_spans,
            deadline: None,
        })
    }

    /// The special tokens templates see.
    pub(crate) fn special(&self) -> &Map<String, Json> {
        &self.special
    }
}

/// Where assistant masks come from: `auto` (the template's `{% generation %}` blocks when it has
/// them, else provenance), `tags`, `provenance`, or none.
/// A template that cannot be selected fails the rows that would use it.
pub(crate) fn mask_source(
    template: &ChatTemplate,
    apply: &ApplyOptions,
    masks: Option<&str>,
) -> PyResult<Result<Option<MaskSource>, String>> {
    let tagged = match template.has_generation_blocks(apply) {
        Ok(tagged) => tagged,
        Err(e) => return Ok(Err(jinja_error_text(&e))),
    };
    Ok(Ok(match masks {
        None => None,
        Some("provenance") => Some(MaskSource::Provenance),
        Some("tags") if !tagged => {
            return Err(PyValueError::new_err(
                "masks='tags' needs {% generation %} blocks in the template; use masks='provenance'",
            ))
        }
        _ if tagged => Some(MaskSource::Tags),
        _ => Some(MaskSource::Provenance),
    }))
}
