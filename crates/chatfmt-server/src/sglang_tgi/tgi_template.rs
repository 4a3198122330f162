//! The template TGI renders a model's chat template as (router/src/infer/chat_template.rs
//! `ChatTemplate::new`), made once per model.

use chatfmt::ChatTemplate;
use serde_json::{Map, Value as Json};

/// The text TGI's template loader replaces in a chat template (chat_template.rs `ChatTemplate::new`),
/// and its replacement: the first message's content is a string there.
const FIRST_CONTENT: (&str, &str) = ("messages[0]['content'][0]['text']", "messages[0]['content']");

/// The template TGI renders a model's chat template as: its `default` one when it has several,
/// with [`FIRST_CONTENT`] replaced, seeing only `bos_token` and `eos_token`.
pub struct Template {
    /// The template, as TGI loads it.
    pub template: ChatTemplate,
    /// Whether the template reads `tools` (then the tools are not written into the last message).
    pub reads_tools: bool,
}

impl Template {
    /// The one made of a model's template, or nothing when it has named templates but no `default`
    /// one.
    pub fn of(template: &ChatTemplate) -> Option<Template> {
        let sources = template.sources();
        let source = match sources.as_slice() {
            [(None, source)] => *source,
            named => named.iter().find(|(n, _)| *n == Some("default"))?.1,
        };
        let special: Map<String, Json> = ["bos_token", "eos_token"]
            .into_iter()
            .map(|k| {
                (
                    k.to_string(),
                    template.special_tokens().get(k).cloned().unwrap_or(Json::Null),
                )
            })
            .collect();
        let template = ChatTemplate::new(&source.replace(FIRST_CONTENT.0, FIRST_CONTENT.1), special);
        let reads_tools = (template.templates().first())
            .and_then(|(_, t)| (*t).ok())
            .is_some_and(|t| t.analyze().free_variables.contains("tools"));
        Some(Template { template, reads_tools })
    }
}
