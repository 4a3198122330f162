//! Choosing a conversation template as a user names it: a registry name, or `auto` for the
//! template FastChat's model-path matching picks for a model path.

use super::adapter::match_model;
use super::error::{Error, ErrorKind, Result};
use super::record::Conversation;
use super::registry::get_conv_template;

/// The name that asks for model-path matching instead of a registry name.
pub const AUTO: &str = "auto";

/// How a template was chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChosenBy {
    /// By its registry name.
    Name,
    /// By model-path matching: the FastChat adapter class that claimed the path.
    ModelPath {
        /// FastChat's class name of the adapter.
        adapter: &'static str,
    },
}

/// A conversation template and how it was chosen.
#[derive(Debug, Clone)]
pub struct ChosenTemplate {
    /// A fresh copy of the template.
    pub conversation: Conversation,
    /// How it was chosen.
    pub chosen_by: ChosenBy,
}

/// The template `name` names, or for [`AUTO`] the one model-path matching picks for `model_path`.
pub fn choose_conv_template(name: &str, model_path: Option<&str>) -> Result<ChosenTemplate> {
    if name != AUTO {
        return Ok(ChosenTemplate {
            conversation: get_conv_template(name)?,
            chosen_by: ChosenBy::Name,
        });
    }
    let Some(model_path) = model_path else {
        return Err(Error::new(
            ErrorKind::NoModelPath,
            "the 'auto' conversation template is chosen by matching a model path, and none was given",
        ));
    };
    let found = match_model(model_path);
    Ok(ChosenTemplate {
        conversation: get_conv_template(&found.template?)?,
        chosen_by: ChosenBy::ModelPath { adapter: found.adapter },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_picks_that_template() {
        let chosen = choose_conv_template("vicuna_v1.1", Some("lmsys/vicuna-7b")).unwrap();
        assert_eq!(chosen.conversation.name, "vicuna_v1.1");
        assert_eq!(chosen.chosen_by, ChosenBy::Name);
    }

    #[test]
    fn auto_matches_the_model_path() {
        let chosen = choose_conv_template(AUTO, Some("meta-llama/Llama-2-7b-chat-hf")).unwrap();
        assert_eq!(chosen.conversation.name, "llama-2");
        assert_eq!(
            chosen.chosen_by,
            ChosenBy::ModelPath {
                adapter: "Llama2Adapter"
            }
        );
    }

    #[test]
    fn auto_without_a_model_path_is_refused() {
        let err = choose_conv_template(AUTO, None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NoModelPath);
    }

    #[test]
    fn an_unknown_name_is_refused() {
        let err = choose_conv_template("no-such-template", None).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::UnknownTemplate);
    }
}
