//! FastChat's separator styles: how `get_prompt` joins the system part and the turns.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

macro_rules! styles {
    ($($name:ident = $value:literal),* $(,)?) => {
        /// One of FastChat's 23 separator styles (`SeparatorStyle`), serialised by name.
        ///
        /// FastChat's integer values are not stable across versions; [`SeparatorStyle::value`]
        /// gives the one of the reference commit for callers that need it on the wire.
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum SeparatorStyle {
            $(
                #[doc = concat!("`", stringify!($name), "`")]
                $name,
            )*
        }

        impl SeparatorStyle {
            /// Every style, in FastChat's declaration order.
            pub const ALL: &'static [SeparatorStyle] = &[$(SeparatorStyle::$name),*];

            /// The style's name as FastChat spells it.
            pub fn name(self) -> &'static str {
                match self {
                    $(SeparatorStyle::$name => stringify!($name),)*
                }
            }

            /// FastChat's `IntEnum` value at the reference commit.
            pub fn value(self) -> u8 {
                match self {
                    $(SeparatorStyle::$name => $value,)*
                }
            }
        }
    };
}

styles! {
    ADD_COLON_SINGLE = 1,
    ADD_COLON_TWO = 2,
    ADD_COLON_SPACE_SINGLE = 3,
    NO_COLON_SINGLE = 4,
    NO_COLON_TWO = 5,
    ADD_NEW_LINE_SINGLE = 6,
    LLAMA2 = 7,
    LLAMA3 = 8,
    CHATGLM = 9,
    CHATML = 10,
    CHATINTERN = 11,
    DOLLY = 12,
    RWKV = 13,
    PHOENIX = 14,
    ROBIN = 15,
    FALCON_CHAT = 16,
    CHATGLM3 = 17,
    DEEPSEEK_CHAT = 18,
    METAMATH = 19,
    YUAN2 = 20,
    GEMMA = 21,
    CLLM = 22,
    DEFAULT = 23,
}

impl SeparatorStyle {
    /// The style with FastChat's integer `value`, if any.
    pub fn from_value(value: u8) -> Option<SeparatorStyle> {
        SeparatorStyle::ALL.iter().copied().find(|s| s.value() == value)
    }

    /// Whether `get_prompt` shows images in this style (as one placeholder per image before the
    /// text) or drops them (`DEFAULT`); in every other style FastChat cannot render them.
    pub fn accepts_images(self) -> bool {
        use SeparatorStyle::*;
        matches!(self, ADD_COLON_SINGLE | ADD_COLON_TWO | CHATML | CLLM | DEFAULT)
    }
}

impl fmt::Display for SeparatorStyle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SeparatorStyle {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        SeparatorStyle::ALL
            .iter()
            .copied()
            .find(|style| style.name() == s)
            .ok_or_else(|| format!("unknown separator style {s:?}"))
    }
}
