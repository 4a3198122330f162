//! A request's `chat_template_kwargs` as transformers receives them: the stacks pass them to
//! `apply_chat_template(**kwargs)`, where a key naming one of its own arguments (`tools`,
//! `documents`, `chat_template`, `add_generation_prompt`, ...) binds that argument instead of
//! becoming a template variable, and `messages` or `conversation` collide with the ones the stack
//! passes itself (a `TypeError` there). Left as template variables, such keys would be shadowed by
//! the arguments and have no effect, silently.

use crate::api::ApiError;
use serde_json::{Map, Value as Json};

/// Which value wins when the request sets an argument both as a field and in
/// `chat_template_kwargs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// vLLM 0.33.0's `merge_kwargs` (`build_chat_params`, then `ChatParams.with_defaults`): a kwarg
    /// whose value is null or `"auto"` is left out; the kwargs' `tools` override the request's; the
    /// request's `documents` and `chat_template` override the kwargs'; `add_generation_prompt` and
    /// `continue_final_message` always come from the fields.
    Vllm,
    /// Python's keyword binding, for routes that take transformers' arguments as they are: a kwarg
    /// binds an argument the request leaves out, and one the request also sets is a `TypeError`.
    Binding,
    /// SGLang 0.5.23's call, `apply_chat_template(messages, tokenize=False, add_generation_prompt=...,
    /// tools=..., return_dict=False, **kwargs)`: a kwarg naming an argument it passes itself is a
    /// `TypeError`, the others bind, and the tokenizing ones do nothing there (two raise).
    Sglang,
}

/// The arguments of a request that a kwarg can set: `None` when the request leaves them out.
pub struct Arguments<'a> {
    pub tools: &'a mut Option<Json>,
    pub documents: &'a mut Option<Json>,
    pub chat_template: &'a mut Option<String>,
    pub add_generation_prompt: &'a mut bool,
    pub continue_final_message: &'a mut Option<String>,
}

/// Which of the fields a kwarg can also set the request's body gave (not null), for
/// [`Rule::Binding`].
#[derive(Debug, Clone, Copy, Default)]
pub struct Given {
    pub add_generation_prompt: bool,
    pub continue_final_message: bool,
}

/// `apply_chat_template`'s arguments that tokenize: the routes render and tokenize with their own
/// fields, so one of these with a value other than null or false is refused rather than ignored.
const TOKENIZING: [&str; 7] = [
    "padding",
    "truncation",
    "max_length",
    "return_tensors",
    "return_assistant_tokens_mask",
    "tokenizer_kwargs",
    "sanitize_control_tokens",
];

const APPLY_CHAT_TEMPLATE: &str = "transformers.tokenization_utils_base.PreTrainedTokenizerBase.apply_chat_template()";

fn refused(message: String) -> ApiError {
    ApiError::bad(message, Some("body.chat_template_kwargs"))
}

fn multiple_values(owner: &str, name: &str) -> ApiError {
    refused(format!("{owner} got multiple values for keyword argument '{name}'"))
}

/// Moves the `kwargs` that name `apply_chat_template`'s arguments onto `args`, by `rule`.
pub fn bind(kwargs: &mut Map<String, Json>, args: Arguments<'_>, rule: Rule, given: Given) -> Result<(), ApiError> {
    // Most requests send none: nothing to look up on every request.
    if kwargs.is_empty() {
        return Ok(());
    }
    if rule == Rule::Vllm {
        kwargs.retain(|_, v| !(v.is_null() || v == "auto"));
    }
    if kwargs.contains_key("messages") {
        return Err(multiple_values("jinja2.environment.Template.render()", "messages"));
    }
    if kwargs.contains_key("conversation") {
        return Err(match rule {
            // SGLang passes the messages as the first positional argument.
            Rule::Sglang => refused(format!(
                "{APPLY_CHAT_TEMPLATE} got multiple values for argument 'conversation'"
            )),
            _ => multiple_values(APPLY_CHAT_TEMPLATE, "conversation"),
        });
    }
    if rule == Rule::Sglang {
        return bind_sglang(kwargs, args);
    }
    if let Some(name) = TOKENIZING.iter().find(|k| {
        kwargs
            .get(**k)
            .is_some_and(|v| !matches!(v, Json::Null | Json::Bool(false)))
    }) {
        return Err(refused(format!(
            "`{name}` in chat_template_kwargs is an argument of apply_chat_template's tokenizing, which \
             this route does not apply: leave it out"
        )));
    }
    for name in TOKENIZING.iter().chain(&["tokenize", "return_dict"]) {
        kwargs.remove(*name);
    }
    let both = |set: bool, name: &str| match (rule, set) {
        (Rule::Binding, true) => Err(multiple_values(APPLY_CHAT_TEMPLATE, name)),
        _ => Ok(()),
    };
    match kwargs.remove("chat_template") {
        None | Some(Json::Null) => {}
        Some(Json::String(source)) => {
            both(args.chat_template.is_some(), "chat_template")?;
            args.chat_template.get_or_insert(source);
        }
        Some(_) => {
            return Err(ApiError::bad(
                "Input should be a valid string",
                Some("body.chat_template_kwargs.chat_template"),
            ))
        }
    }
    for (name, field) in [("tools", args.tools), ("documents", args.documents)] {
        match kwargs.remove(name) {
            None | Some(Json::Null) => {}
            Some(value) => {
                both(field.is_some(), name)?;
                if field.is_none() || (rule == Rule::Vllm && name == "tools") {
                    *field = Some(value);
                }
            }
        }
    }
    let prompt = kwargs.remove("add_generation_prompt");
    let continued = kwargs.remove("continue_final_message");
    if rule == Rule::Vllm {
        return Ok(());
    }
    if let Some(value) = prompt {
        both(given.add_generation_prompt, "add_generation_prompt")?;
        *args.add_generation_prompt = chatfmt::json_input::py_truthy(&value);
    }
    if let Some(value) = continued {
        both(given.continue_final_message, "continue_final_message")?;
        *args.continue_final_message = match value {
            Json::Null | Json::Bool(false) => None,
            Json::Bool(true) => Some("content".to_string()),
            Json::String(field) => Some(field),
            _ => {
                return Err(ApiError::bad(
                    "Input should be a boolean or the name of the field to continue",
                    Some("body.chat_template_kwargs.continue_final_message"),
                ))
            }
        };
    }
    Ok(())
}

/// [`Rule::Sglang`] past `messages` and `conversation`.
fn bind_sglang(kwargs: &mut Map<String, Json>, args: Arguments<'_>) -> Result<(), ApiError> {
    if let Some(name) = ["tokenize", "add_generation_prompt", "tools", "return_dict"]
        .into_iter()
        .find(|k| kwargs.contains_key(*k))
    {
        return Err(multiple_values(APPLY_CHAT_TEMPLATE, name));
    }
    let truthy = |v: Option<&Json>| v.is_some_and(chatfmt::json_input::py_truthy);
    if truthy(kwargs.get("return_assistant_tokens_mask")) {
        return Err(refused(
            "`return_assistant_tokens_mask=True` requires `return_dict=True` and `tokenize=True`".into(),
        ));
    }
    if truthy(kwargs.get("sanitize_control_tokens")) {
        return Err(refused(
            "`sanitize_control_tokens=True` requires `tokenize=True` and is not compatible with \
             `return_assistant_tokens_mask=True`."
                .into(),
        ));
    }
    for name in TOKENIZING {
        kwargs.remove(name);
    }
    if let Some(documents) = kwargs.remove("documents").filter(|d| !d.is_null()) {
        *args.documents = Some(documents);
    }
    match kwargs.remove("continue_final_message") {
        None => {}
        Some(Json::String(field)) => *args.continue_final_message = Some(field),
        Some(value) => {
            *args.continue_final_message = chatfmt::json_input::py_truthy(&value).then(|| "content".to_string())
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Default)]
    struct Chat {
        tools: Option<Json>,
        documents: Option<Json>,
        chat_template: Option<String>,
        add_generation_prompt: bool,
        continue_final_message: Option<String>,
        kwargs: Map<String, Json>,
    }

    fn chat(kwargs: Json) -> Chat {
        let Json::Object(kwargs) = kwargs else { panic!("kwargs") };
        Chat {
            add_generation_prompt: true,
            kwargs,
            ..Chat::default()
        }
    }

    fn bind(c: &mut Chat, rule: Rule, given: Given) -> Result<(), ApiError> {
        let args = Arguments {
            tools: &mut c.tools,
            documents: &mut c.documents,
            chat_template: &mut c.chat_template,
            add_generation_prompt: &mut c.add_generation_prompt,
            continue_final_message: &mut c.continue_final_message,
        };
        super::bind(&mut c.kwargs, args, rule, given)
    }

    #[test]
    fn arguments_in_kwargs_bind_the_arguments() {
        let mut c = chat(json!({"tools": [1], "documents": [2], "chat_template": "T", "x": 3,
                                "add_generation_prompt": false, "tokenize": true, "return_dict": false}));
        bind(&mut c, Rule::Vllm, Given::default()).unwrap();
        assert_eq!(
            (c.tools, c.documents, c.chat_template),
            (Some(json!([1])), Some(json!([2])), Some("T".into()))
        );
        assert!(c.add_generation_prompt, "vLLM's field wins");
        assert_eq!(Json::Object(c.kwargs), json!({"x": 3}));

        let mut c = chat(json!({"add_generation_prompt": 0, "continue_final_message": "reasoning"}));
        bind(&mut c, Rule::Binding, Given::default()).unwrap();
        assert!(!c.add_generation_prompt);
        assert_eq!(c.continue_final_message.as_deref(), Some("reasoning"));
        assert_eq!(c.kwargs, Map::new());
    }

    #[test]
    fn the_requests_own_fields_win_or_collide() {
        let mut c = chat(json!({"tools": [1], "documents": [2], "chat_template": "T", "x": null, "y": "auto"}));
        c.tools = Some(json!([9]));
        c.documents = Some(json!([8]));
        c.chat_template = Some("mine".into());
        bind(&mut c, Rule::Vllm, Given::default()).unwrap();
        assert_eq!(
            (c.tools, c.documents, c.chat_template.as_deref()),
            (Some(json!([1])), Some(json!([8])), Some("mine")),
            "vLLM: the kwargs' tools win, the request's documents and template win"
        );
        assert_eq!(c.kwargs, Map::new(), "vLLM leaves out kwargs that are null or \"auto\"");

        let mut c = chat(json!({"tools": [1]}));
        c.tools = Some(json!([9]));
        let e = bind(&mut c, Rule::Binding, Given::default()).unwrap_err();
        assert!(
            e.message.ends_with("got multiple values for keyword argument 'tools'"),
            "{}",
            e.message
        );
        let mut c = chat(json!({"add_generation_prompt": true}));
        let given = Given {
            add_generation_prompt: true,
            ..Given::default()
        };
        assert!(bind(&mut c, Rule::Binding, given).is_err());
    }

    #[test]
    fn colliding_and_tokenizing_kwargs_are_refused() {
        for (kwargs, says) in [
            (
                json!({"messages": []}),
                "render() got multiple values for keyword argument 'messages'",
            ),
            (
                json!({"conversation": []}),
                "got multiple values for keyword argument 'conversation'",
            ),
            (json!({"max_length": 5}), "`max_length` in chat_template_kwargs"),
            (json!({"chat_template": 1}), "Input should be a valid string"),
        ] {
            let e = bind(&mut chat(kwargs.clone()), Rule::Vllm, Given::default()).unwrap_err();
            assert!(e.message.contains(says), "{kwargs}: {}", e.message);
        }
        let mut c = chat(json!({"truncation": false, "padding": null}));
        bind(&mut c, Rule::Vllm, Given::default()).unwrap();
        assert_eq!(c.kwargs, Map::new());
    }

    #[test]
    fn sglangs_call_passes_some_arguments_itself() {
        for (kwargs, says) in [
            (json!({"tools": []}), "got multiple values for keyword argument 'tools'"),
            (
                json!({"add_generation_prompt": false}),
                "keyword argument 'add_generation_prompt'",
            ),
            (
                json!({"conversation": []}),
                "got multiple values for argument 'conversation'",
            ),
            (json!({"sanitize_control_tokens": true}), "requires `tokenize=True`"),
        ] {
            let e = bind(&mut chat(kwargs.clone()), Rule::Sglang, Given::default()).unwrap_err();
            assert!(e.message.contains(says), "{kwargs}: {}", e.message);
        }
        let mut c = chat(json!({"documents": [1], "continue_final_message": true, "max_length": 3, "x": 1}));
        bind(&mut c, Rule::Sglang, Given::default()).unwrap();
        assert_eq!(
            (c.documents, c.continue_final_message.as_deref()),
            (Some(json!([1])), Some("content"))
        );
        assert_eq!(Json::Object(c.kwargs), json!({"x": 1}));
    }
}
