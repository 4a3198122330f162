import datetime
import os
from typing import Any, Callable, Dict, List, Literal, Optional, TypeVar, Union

F = TypeVar("F", bound=Callable[..., Any])

__version__: str

class TemplateError(Exception):
    lineno: Optional[int]
    name: Optional[str]
    def __init__(self, message: Optional[str] = ..., lineno: Optional[int] = ..., name: Optional[str] = ...) -> None: ...
    @property
    def message(self) -> Optional[str]: ...

class TemplateSyntaxError(TemplateError): ...
class TemplateAssertionError(TemplateError): ...
class TemplateRuntimeError(TemplateError): ...
class UndefinedError(TemplateError): ...
class SecurityError(TemplateError): ...
class FilterArgumentError(TemplateError): ...
class LimitError(TemplateError): ...
class OffsetError(ValueError): ...
class DocstringParsingException(Exception): ...
class TypeHintParsingException(Exception): ...

class BatchEncoding(Dict[str, Any]):
    input_ids: Any
    attention_mask: Any
    assistant_masks: Any
    def convert_to_tensors(self, tensor_type: Optional[str] = ...) -> BatchEncoding: ...
    def to(self, device: Any) -> BatchEncoding: ...

class clock:
    def __init__(self, when: Union[str, datetime.datetime]) -> None: ...
    def __enter__(self) -> clock: ...
    def __exit__(self, *exc: Any) -> None: ...
    def __call__(self, func: F) -> F: ...

class Tokenizer:
    name_or_path: str
    bos_token: Optional[str]
    eos_token: Optional[str]
    unk_token: Optional[str]
    sep_token: Optional[str]
    pad_token: Optional[str]
    cls_token: Optional[str]
    mask_token: Optional[str]
    bos_token_id: Optional[int]
    eos_token_id: Optional[int]
    unk_token_id: Optional[int]
    sep_token_id: Optional[int]
    pad_token_id: Optional[int]
    cls_token_id: Optional[int]
    mask_token_id: Optional[int]
    padding_side: str
    truncation_side: str
    model_max_length: int
    clean_up_tokenization_spaces: bool
    clean_up_tokenization_spaces_for_bpe_even_though_it_will_corrupt_output: bool
    chat_template: Optional[Union[str, Dict[str, str]]]
    max_steps: int
    @classmethod
    def from_pretrained(
        cls,
        path_or_repo_id: Union[str, os.PathLike[str]],
        cache_dir: Optional[Union[str, os.PathLike[str]]] = ...,
        revision: Optional[str] = ...,
        local_files_only: bool = ...,
        trust_remote_code: bool = ...,
        **kwargs: Any,
    ) -> Tokenizer: ...
    @property
    def special_tokens_map(self) -> Dict[str, str]: ...
    @property
    def all_special_tokens(self) -> List[str]: ...
    @property
    def all_special_ids(self) -> List[Optional[int]]: ...
    @property
    def model_input_names(self) -> List[str]: ...
    @property
    def vocab_size(self) -> int: ...
    def get_chat_template(self, chat_template: Optional[str] = ..., tools: Optional[list] = ...) -> str: ...
    def apply_chat_template(
        self,
        conversation: Any,
        tools: Optional[List[Union[Dict[str, Any], Callable[..., Any]]]] = ...,
        documents: Optional[List[Dict[str, Any]]] = ...,
        chat_template: Optional[str] = ...,
        add_generation_prompt: bool = ...,
        continue_final_message: Union[bool, str] = ...,
        tokenize: bool = ...,
        padding: Union[bool, str] = ...,
        truncation: bool = ...,
        max_length: Optional[int] = ...,
        return_tensors: Optional[Literal["np", "pt"]] = ...,
        return_dict: bool = ...,
        return_assistant_tokens_mask: bool = ...,
        tokenizer_kwargs: Optional[Dict[str, Any]] = ...,
        sanitize_control_tokens: bool = ...,
        **kwargs: Any,
    ) -> Any: ...
    def render(
        self,
        conversation: Any,
        *,
        tools: Optional[List[Union[Dict[str, Any], Callable[..., Any]]]] = ...,
        documents: Optional[List[Dict[str, Any]]] = ...,
        chat_template: Optional[str] = ...,
        add_generation_prompt: bool = ...,
        continue_final_message: Union[bool, str] = ...,
        tokenize: bool = ...,
        masks: Union[bool, Literal["auto", "tags", "provenance"]] = ...,
        max_length: Optional[int] = ...,
        template_kwargs: Optional[Dict[str, Any]] = ...,
    ) -> Dict[str, Any]: ...
    def __call__(
        self,
        text: Union[str, List[str], None] = ...,
        text_pair: None = ...,
        text_target: None = ...,
        text_pair_target: None = ...,
        add_special_tokens: bool = ...,
        padding: Union[bool, str] = ...,
        truncation: Union[bool, str, None] = ...,
        max_length: Optional[int] = ...,
        stride: int = ...,
        is_split_into_words: bool = ...,
        pad_to_multiple_of: Optional[int] = ...,
        padding_side: Optional[str] = ...,
        return_tensors: Optional[Literal["np", "pt"]] = ...,
        return_token_type_ids: Optional[bool] = ...,
        return_attention_mask: Optional[bool] = ...,
        return_overflowing_tokens: bool = ...,
        return_special_tokens_mask: bool = ...,
        return_offsets_mapping: bool = ...,
        return_length: bool = ...,
        verbose: bool = ...,
        tokenizer_kwargs: Optional[Dict[str, Any]] = ...,
        **kwargs: Any,
    ) -> BatchEncoding: ...
    def encode(self, text: str, text_pair: Any = ..., add_special_tokens: bool = ..., **kwargs: Any) -> List[int]: ...
    def decode(
        self,
        token_ids: Any,
        skip_special_tokens: bool = ...,
        clean_up_tokenization_spaces: Optional[bool] = ...,
        **kwargs: Any,
    ) -> Union[str, List[str]]: ...
    def batch_decode(
        self,
        sequences: Any,
        skip_special_tokens: bool = ...,
        clean_up_tokenization_spaces: Optional[bool] = ...,
        **kwargs: Any,
    ) -> List[str]: ...
    def convert_ids_to_tokens(self, ids: Any, skip_special_tokens: bool = ...) -> Any: ...
    def convert_tokens_to_ids(self, tokens: Any) -> Any: ...
    def get_vocab(self) -> Dict[str, int]: ...
    def __len__(self) -> int: ...

def format_batch(
    batch: Any,
    tokenizer: Tokenizer,
    *,
    messages_column: str = ...,
    tools_column: str = ...,
    documents_column: Optional[str] = ...,
    format: Literal["auto", "messages", "sharegpt"] = ...,
    add_generation_prompt: bool = ...,
    continue_final_message: Union[bool, str] = ...,
    chat_template: Optional[str] = ...,
    template_kwargs: Optional[Dict[str, Any]] = ...,
    tokenize: bool = ...,
    masks: Union[bool, Literal["auto", "tags", "provenance"]] = ...,
    max_length: Optional[int] = ...,
    return_text: bool = ...,
    message_spans: bool = ...,
    num_threads: Optional[int] = ...,
) -> Any: ...
def get_json_schema(func: Callable[..., Any]) -> Dict[str, Any]: ...
def patch(hf_tokenizer: Any, *, max_steps: Optional[int] = ...) -> Any: ...
def unpatch(hf_tokenizer: Any) -> Any: ...
