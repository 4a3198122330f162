"""Writes sglang_chat.json: what SGLang 0.5.23's `POST /v1/tokenize` answers for `messages` bodies,
computed by the wheel's own code on a Jinja chat template (no reasoning or tool-call parser, no
conversation template): the request models of `protocol.py`, then `_tokenize_chat_request`
(serving_tokenize.py) with `_validate_request`, `_process_messages`, `_apply_jinja_template`,
`_render_and_encode_chat_template`, `_handle_last_assistant_message` and
`_append_assistant_prefix_to_prompt_ids` (serving_chat.py) and the content-format functions of
parser/jinja_template_utils.py, each taken from the wheel's source and run here. What the engine
would add around them is stubbed (tool-call grammars, reasoning parsers, multimodal inputs).

chatfmt renders tools as they are sent (docs/INTERFACES.md): `Tool.model_dump()` is made to give
the tool as sent, and the schema normalization of `_validate_request` is left out.

Run with pydantic 2, openai, msgspec, jinja2 and transformers 5.23 installed (what protocol.py and
the rendering import), on the tokens kit's Qwen3 and Mistral 7B v0.1 tokenizers:
    python gen_sglang_chat.py sglang-0.5.23-cp311-cp311-manylinux_2_34_x86_64.whl \
        ../../../../../shared/conformance/tokens/tokenizers > sglang_chat.json
"""

import __future__
import ast
import copy
import enum
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
import types
import zipfile

import jinja2
import pydantic
from transformers import AutoTokenizer

WHEEL, TOKENIZERS = sys.argv[1], sys.argv[2]
ZIP = zipfile.ZipFile(WHEEL)


def source(path):
    return ZIP.read(path).decode()


def module(name, **attrs):
    m = types.ModuleType(name)
    m.__dict__.update(attrs)
    sys.modules[name] = m
    return m


# The packages around protocol.py, which imports only `sglang.utils` of SGLang.
for pkg in ["sglang", "sglang.srt", "sglang.srt.entrypoints", "sglang.srt.entrypoints.openai"]:
    module(pkg, __path__=[])
module("sglang.utils", convert_json_schema_to_str=lambda s: s if isinstance(s, str) else json.dumps(s))
spec = importlib.util.spec_from_loader("sglang.srt.entrypoints.openai.protocol", loader=None)
protocol = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = protocol
exec(compile(source("sglang/srt/entrypoints/openai/protocol.py"), "protocol.py", "exec"), protocol.__dict__)

# parser/jinja_template_utils.py, whole, with the media data classes it imports stubbed.
module("sglang.srt.utils", GLM_MEDIA_CONFIG_KEYS=(), ImageData=dict, VideoData=dict)
jtu = types.ModuleType("jinja_template_utils")
exec(compile(source("sglang/srt/parser/jinja_template_utils.py"), "jinja_template_utils.py", "exec"), jtu.__dict__)


def functions(path, names, namespace, cls=None):
    """The functions and constants `names` (methods of class `cls`) of a wheel file, compiled in
    `namespace`."""
    tree = ast.parse(source(path))
    body = tree.body
    if cls:
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls).body
    out = {}
    for node in body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] in [[n] for n in names]:
            exec(compile(ast.Module(body=[node], type_ignores=[]), path, "exec"), namespace)
            out[node.targets[0].id] = namespace[node.targets[0].id]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
            node.decorator_list = [d for d in node.decorator_list if not (isinstance(d, ast.Name) and d.id == "classmethod")]
            mod = ast.Module(body=[node], type_ignores=[])
            # The file's `from __future__ import annotations` keeps its annotations unevaluated.
            exec(compile(mod, path, "exec", flags=__future__.annotations.compiler_flag, dont_inherit=True), namespace)
            out[node.name] = namespace[node.name]
    missing = set(names) - set(out)
    assert not missing, missing
    return out


class Env:
    def __init__(self, value):
        self.value = value

    def get(self):
        return self.value


class Envs:
    SGLANG_DEFAULT_THINKING = Env(False)
    SGLANG_ENABLE_RESPONSE_TEMPLATE_TURN_GRAMMAR = Env(False)


class NoParser:
    ToolCallParserEnum = {}


class NeverDetector:
    pass


class ThinkingMode(str, enum.Enum):
    CHAT = "chat"
    THINKING = "thinking"


class Serving:
    trust_request_chat_template = False
    allow_auto_truncate = False
    default_chat_template_kwargs = None


class ModelContext:
    context_length = None


class SchemaCheck:
    @staticmethod
    def check_schema(schema):
        pass


class SchemaError(Exception):
    pass


class Result:
    def __init__(self, **kw):
        self.tool_call_constraint = None
        self.skip_special_tokens = True
        self.require_reasoning = False
        self.reasoning_end_token_ids = None
        self.uses_response_template = False
        self.__dict__.update(kw)


ns = {
    "copy": copy,
    "json": json,
    "jinja2": jinja2,
    "orjson": types.SimpleNamespace(loads=json.loads, JSONDecodeError=json.JSONDecodeError),
    "logger": logging.getLogger("sglang"),
    "envs": Envs,
    "get_serving": Serving,
    "get_model": ModelContext,
    "Draft202012Validator": SchemaCheck,
    "SchemaError": SchemaError,
    "normalize_json_schema_types": lambda schema: None,
    "normalize_hunyuan_reasoning_effort": lambda request, parser, config: None,
    "get_json_schema_constraint": lambda tools, choice, parallel_tool_calls: {},
    "FunctionCallParser": NoParser,
    "ResponseTemplateReasoningDetector": NeverDetector,
    "ResponseTemplateToolDetector": NeverDetector,
    "ThinkingMode": ThinkingMode,
    "MessageProcessingResult": Result,
    "parallel_prompt_encode": lambda tokenizer, text, kwargs: tokenizer.encode(text, **kwargs),
    "process_content_for_template_format": jtu.process_content_for_template_format,
    "MEDIA_URL_PART_TYPES": jtu.MEDIA_URL_PART_TYPES,
    "_CHAT_TEMPLATE_CLIENT_ERRORS": (jinja2.TemplateError, TypeError),
    "ChatCompletionRequest": protocol.ChatCompletionRequest,
    "ChatCompletionMessageGenericParam": protocol.ChatCompletionMessageGenericParam,
    "ToolChoice": protocol.ToolChoice,
    "Tool": protocol.Tool,
}
SERVING_CHAT = "sglang/srt/entrypoints/openai/serving_chat.py"
ns.update(functions(SERVING_CHAT, ["_MEDIA_CONTENT_PART_TYPES", "normalize_tool_content", "parse_tool_call_arguments",
                                   "normalize_assistant_tool_call_arguments"], ns))
METHODS = functions(SERVING_CHAT, [
    "_validate_request", "_validate_media_content", "_effective_tools", "_process_messages",
    "_apply_jinja_template", "_render_and_encode_chat_template", "_handle_last_assistant_message",
    "_append_assistant_prefix_to_prompt_ids", "_canonicalize_tool_message_order", "_sort_tool_message_run",
    "_encode_messages", "_thinking_requested", "_get_reasoning_from_request",
    "_patch_reasoning_skip_special_tokens", "_takes_turn_grammar", "_template_turn_grammar",
    "_requires_response_template_detokenization", "_probe_prompt_text_round_trip",
], ns, cls="OpenAIServingChat")
TOKENIZE = functions("sglang/srt/entrypoints/openai/serving_tokenize.py", ["_tokenize_chat_request"], ns,
                     cls="OpenAIServingTokenize")


def serving(folder):
    """An OpenAIServingTokenize over the model folder's tokenizer and Jinja template."""
    tokenizer = AutoTokenizer.from_pretrained(folder)
    template = tokenizer.chat_template
    tm = types.SimpleNamespace(
        chat_template_name=None,
        python_chat_template=None,
        reasoning_config=None,
        jinja_template_content_format=jtu.detect_jinja_template_content_format(template),
        jinja_template_may_reorder_tool_results=jtu.jinja_template_may_reorder_tool_results(template),
    )
    config = types.SimpleNamespace(is_multimodal=False, hf_config=types.SimpleNamespace(model_type="qwen3"))
    manager = types.SimpleNamespace(tokenizer=tokenizer, model_config=config, config_value=lambda k: None)
    chat = types.SimpleNamespace(
        tokenizer_manager=manager, template_manager=tm, tool_call_parser=None, reasoning_parser=None,
        default_chat_template_kwargs={}, chat_encoding_spec=None, _encoding_adapter=None,
        _reasoning_detector=None, is_minimax_m3=False, is_gpt_oss=False, is_gemma4=False,
        _tokenizer_auto_adds_specials=len(tokenizer.encode("")) > 0, _chat_template_cache={},
    )
    for name, f in METHODS.items():
        setattr(chat, name, types.MethodType(f, chat))
    chat._prompt_text_round_trip_is_lossy = chat._probe_prompt_text_round_trip()
    ns["cls"] = chat
    tok = types.SimpleNamespace(chat_serving=chat, tokenizer_manager=manager)
    return tok, tokenizer, tm.jinja_template_content_format


def tokenize(tok, tokenizer, body, raw_tools):
    """`/v1/tokenize`'s answer: 200 with the ids, or the error's status, `type` and message."""
    # Tools render as sent: their dump is the tool of the request.
    protocol.Tool.model_dump = lambda self, **kw: copy.deepcopy(raw_tools[self.function.name])
    try:
        request = protocol.TokenizeRequest.model_validate(copy.deepcopy(body))
    except pydantic.ValidationError as e:
        return {"status": 400, "type": "Bad Request", "detail": e.errors()[0]["msg"]}
    try:
        ids = TOKENIZE["_tokenize_chat_request"](tok, request)
    except ValueError as e:
        return {"status": 400, "type": "BadRequestError", "message": str(e)}
    except Exception as e:  # SGLang answers 500 InternalServerError; chatfmt 400
        return {"status": 500, "type": "InternalServerError", "message": f"{type(e).__name__}: {e}"}
    return {"status": 200, "tokens": list(ids), "text": tokenizer.decode(ids)}


WEATHER = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
TIME = {"type": "function", "function": {"name": "get_time", "description": "Now", "parameters": {"type": "object"}}}
CALL = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}
HI = {"role": "user", "content": "Hi"}
HELLO = {"role": "assistant", "content": "Hello there"}

# Templates on the Qwen3 tokenizer besides its own (which prints content as a string): ones that loop
# over a message's content parts (SGLang's "openai" content format), one whose text mentions an image
# (the same format, by the shortcut of `detect_jinja_template_content_format`), and others that show
# what the template is given. "mistral" is on the Mistral tokenizer, which adds a BOS token.
TEMPLATES = {
    "mistral": "{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}",
    "parts": (
        "{% for message in messages %}<{{ message.role }}>"
        "{% if message.content is string %}{{ message.content }}"
        "{% else %}{% for part in message['content'] | list %}[{{ part.type }}:{{ part.text }}]{% endfor %}{% endif %}"
        "{{ message | tojson }}</{{ message.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    ),
    "image_word": (
        "{# image #}{% for message in messages %}<{{ message.role }}>{{ message.content | tojson }}"
        "</{{ message.role }}>{% endfor %}{% if add_generation_prompt %}<assistant>{% endif %}"
    ),
    "sliced": (
        "{% for message in messages %}{% for p in message.content[1:] %}({{ p.text }}){% endfor %}"
        "{{ message.content }}|{% endfor %}"
    ),
    "keys": (
        "{% for message in messages %}{{ message | tojson }}\n{% endfor %}"
        "{% if tools %}{{ tools | tojson }}{% endif %}{% if add_generation_prompt %}<gen>{% endif %}"
        "{% if reasoning_effort is defined %}{{ reasoning_effort }}|{{ thinking }}|{{ enable_thinking }}{% endif %}"
    ),
    "documents": "{% for message in messages %}{{ message.content }}|{% endfor %}{{ documents | tojson }}",
    "tool_names": (
        "{% for message in messages %}{{ message.role }}: {{ message.content }}\n{% endfor %}"
        "{% for t in tools or [] %}{{ t.name or t.function.name }}{% if t.function is defined %}(wrapped){% endif %};{% endfor %}"
        "{% if tools and tools[0].function is defined %}{{ raise_exception('flat tools only') }}{% endif %}"
    ),
}

CASES = [
    ("plain", "qwen3", {"messages": [{"role": "user", "content": "What is 2+2?"}]}),
    ("trailing_assistant_becomes_user", "qwen3", {"messages": [HI, HELLO]}),
    ("trailing_assistant_keeps_only_role_and_content", "keys", {"messages": [HI, {"role": "assistant", "content": "Hey", "reasoning_content": "hmm", "name": "bot"}]}),
    ("continue_final_message", "qwen3", {"messages": [HI, HELLO], "continue_final_message": True}),
    ("continue_final_message_drops_the_bos", "mistral", {"messages": [HI, HELLO], "continue_final_message": True}),
    ("continue_final_message_empty_content", "qwen3", {"messages": [HI, {"role": "assistant", "content": ""}], "continue_final_message": True}),
    ("continue_final_message_parts_are_not_cut", "qwen3", {"messages": [HI, {"role": "assistant", "content": [{"type": "text", "text": "Hel"}]}], "continue_final_message": True}),
    ("continue_final_message_after_user", "qwen3", {"messages": [HI], "continue_final_message": True}),
    ("continue_with_generation_prompt_given", "qwen3", {"messages": [HI, HELLO], "continue_final_message": True, "add_generation_prompt": True}),
    ("generation_prompt_given_keeps_trailing_assistant", "qwen3", {"messages": [HI, HELLO], "add_generation_prompt": True}),
    ("generation_prompt_off", "qwen3", {"messages": [HI, HELLO], "add_generation_prompt": False}),
    ("generation_prompt_off_with_special_tokens", "qwen3", {"messages": [HI], "add_generation_prompt": False, "add_special_tokens": True}),
    ("continue_without_generation_prompt", "qwen3", {"messages": [HI, HELLO], "add_generation_prompt": False, "continue_final_message": True}),
    ("user_text_parts_joined_with_spaces", "qwen3", {"messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}]}]}),
    ("user_parts_without_text", "qwen3", {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]}),
    ("parts_kept_for_a_template_that_loops_over_them", "parts", {"messages": [
        {"role": "system", "content": [{"type": "text", "text": "Be brief."}]},
        {"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "tool_reference", "name": "get_time"}, {"type": "text", "text": "here"}]},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Sure"}]}]}),
    ("trailing_assistant_parts_stay_in_openai_format", "parts", {"messages": [HI, {"role": "assistant", "content": [{"type": "text", "text": "Hel"}]}], "continue_final_message": True}),
    ("special_tokens_with_a_generation_prompt_given", "mistral", {"messages": [HI], "add_generation_prompt": True, "add_special_tokens": True}),
    ("no_special_tokens_unless_the_generation_prompt_is_given", "mistral", {"messages": [HI], "add_special_tokens": True}),
    ("thinking_parts_dropped_from_a_string", "qwen3", {"messages": [
        HI, {"role": "assistant", "content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Sure"}]}, HI]}),
    ("media_refused", "parts", {"messages": [{"role": "user", "content": [{"type": "text", "text": "Look"}, {"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]}),
    ("thinking_part_in_a_user_message", "qwen3", {"messages": [{"role": "user", "content": [{"type": "thinking", "thinking": "hmm"}]}]}),
    ("tool_text_parts_joined_in_openai_format", "parts", {"messages": [
        HI, {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "sunny"}, {"type": "text", "text": "22C"}]}]}),
    ("image_word_means_openai_format", "image_word", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}),
    ("sliced_content_loop_means_openai_format", "sliced", {"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]}),
    ("tool_content_parts", "qwen3", {"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": "", "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "sunny"}, {"type": "text", "text": "22C"}]}]}),
    ("content_null_and_arguments_parsed", "qwen3", {"messages": [
        {"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]}),
    ("message_fields_as_dumped", "keys", {"messages": [
        {"role": "System", "content": "S", "extra": 1, "name": "sys"},
        {"role": "user", "content": "U", "name": "me"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": {"a": 1}}, "extra": 2}]},
        {"role": "tool", "content": "R", "tool_call_id": "c1"}]}),
    ("arguments_not_json", "qwen3", {"messages": [HI, {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}}]}, HI]}),
    ("arguments_not_an_object", "qwen3", {"messages": [HI, {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "[1]"}}]}, HI]}),
    ("tools", "qwen3", {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER]}),
    ("tools_tool_choice_none", "qwen3", {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER], "tool_choice": "none"}),
    ("tools_named_choice", "keys", {"messages": [HI], "tools": [WEATHER, TIME], "tool_choice": {"type": "function", "function": {"name": "get_time"}}}),
    ("tools_named_choice_unknown", "qwen3", {"messages": [HI], "tools": [WEATHER], "tool_choice": {"type": "function", "function": {"name": "nope"}}}),
    ("tools_required_without_tools", "qwen3", {"messages": [HI], "tool_choice": "required"}),
    ("tools_empty_list", "keys", {"messages": [HI], "tools": []}),
    ("tools_required", "keys", {"messages": [HI], "tools": [WEATHER, TIME], "tool_choice": "required"}),
    ("message_tools_count_for_the_choice", "qwen3", {"messages": [{"role": "system", "content": "S", "tools": [TIME]}, HI], "tool_choice": {"type": "function", "function": {"name": "get_time"}}}),
    ("message_tools_and_request_tools_share_a_name", "keys", {"messages": [{"role": "developer", "content": "S", "tools": [TIME]}, HI], "tools": [TIME]}),
    ("tools_flattened_when_the_template_fails", "tool_names", {"messages": [HI], "tools": [WEATHER, TIME]}),
    ("empty_messages", "qwen3", {"messages": []}),
    ("chat_template_kwarg_refused", "qwen3", {"messages": [HI], "chat_template_kwargs": {"chat_template": "{{ 1 }}"}}),
    ("enable_thinking_false", "qwen3", {"messages": [HI], "chat_template_kwargs": {"enable_thinking": False}}),
    ("kwargs_documents_bind", "documents", {"messages": [HI], "chat_template_kwargs": {"documents": [{"title": "t", "text": "x"}]}}),
    ("kwargs_tools_collide", "qwen3", {"messages": [HI], "chat_template_kwargs": {"tools": []}}),
    ("kwargs_add_generation_prompt_collide", "qwen3", {"messages": [HI], "chat_template_kwargs": {"add_generation_prompt": False}}),
    ("kwargs_messages_collide", "qwen3", {"messages": [HI], "chat_template_kwargs": {"messages": []}}),
    ("kwargs_tokenizing_do_nothing", "qwen3", {"messages": [HI], "chat_template_kwargs": {"max_length": 2, "truncation": True}}),
    ("kwargs_continue_final_message_binds", "qwen3", {"messages": [HI, HELLO], "add_generation_prompt": False, "chat_template_kwargs": {"continue_final_message": True}}),
    ("reasoning_effort_none", "qwen3", {"messages": [HI], "reasoning_effort": "none"}),
    ("reasoning_effort_low", "keys", {"messages": [HI], "reasoning_effort": "low"}),
    ("role_not_known", "qwen3", {"messages": [{"role": "User", "content": "Hi"}]}),
    ("user_content_null", "qwen3", {"messages": [{"role": "user", "content": None}]}),
    ("unknown_part_type", "qwen3", {"messages": [{"role": "user", "content": [{"type": "input_text", "text": "Hi"}]}]}),
    ("tool_choice_unknown_string", "qwen3", {"messages": [HI], "tools": [WEATHER], "tool_choice": "sometimes"}),
]


def main():
    tmp = tempfile.mkdtemp()
    qwen3 = os.path.join(TOKENIZERS, "qwen3")
    folders = {"qwen3": qwen3}
    for name, template in TEMPLATES.items():
        base = os.path.join(TOKENIZERS, "mistral-7b-v0.1") if name == "mistral" else qwen3
        d = os.path.join(tmp, name)
        os.makedirs(d)
        shutil.copy(os.path.join(base, "tokenizer.json"), d)
        with open(os.path.join(base, "tokenizer_config.json")) as f:
            config = json.load(f)
        config["chat_template"] = template
        with open(os.path.join(d, "tokenizer_config.json"), "w") as f:
            json.dump(config, f)
        folders[name] = d
    servings = {name: serving(folder) for name, folder in folders.items()}
    cases = []
    for name, model, body in CASES:
        tok, tokenizer, content_format = servings[model]
        listed = [*(body.get("tools") or []), *(t for m in body["messages"] if isinstance(m.get("tools"), list) for t in m["tools"])]
        raw_tools = {t["function"]["name"]: t for t in listed}
        outcome = tokenize(tok, tokenizer, body, raw_tools)
        cases.append({"name": name, "model": model, "content_format": content_format, "body": body, **outcome})
    shutil.rmtree(tmp)
    json.dump({"templates": TEMPLATES, "cases": cases}, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


main()
