//! Compiled templates, render contexts and render results.

use crate::ast::{Scopes, Stmt};
use crate::causal::{CausalLoop, LoopPrefix};
pub use crate::context::{Borrowed, Clock, Context, Layer, Rendered};
use crate::direct::{Plan, Stop};
use crate::error::{Error, Result};
use crate::eval::Evaluator;
use crate::limits::BudgetScope;
pub use crate::limits::Limits;
use crate::output::SpanSizes;
use crate::syntax::{lexer, parser};
use std::sync::OnceLock;

/// A template compiled once and rendered many times.
#[derive(Debug)]
pub struct Template {
    name: String,
    source: String,
    body: Vec<Stmt>,
    scopes: Scopes,
    /// Whether a `{% generation %}` block appears.
    generation: bool,
    /// The first variable [`render_pair`](Template::render_pair) was asked to fork on, with its
    /// fork point.
    fork: OnceLock<(Box<str>, Option<usize>)>,
    /// The first list and flag variables [`causal_loop`](Template::causal_loop) was asked about,
    /// with its answer.
    causal: OnceLock<(Box<str>, Box<str>, Option<CausalLoop>)>,
    /// The span buffer sizes of the last render with spans.
    span_sizes: SpanSizes,
    /// The template as a direct plan, when it has that shape (see [`crate::direct`]).
    direct: Option<Plan>,
}

/// Lexes and parses as Jinja2 does, lexing while parsing: when the source has a lexing error, a
/// parse error in the tokens before it is the one raised.
fn parse_lazily(source: &str) -> Result<Vec<Stmt>> {
    let (tokens, lex_error) = lexer::tokenize_lazily(source);
    let Some(lex_error) = lex_error else {
        return parser::parse(tokens);
    };
    let before = |e: &Error| (e.line(), e.column()) < (lex_error.line(), lex_error.column());
    match parser::parse(tokens) {
        Err(e) if before(&e) => Err(e),
        _ => Err(lex_error),
    }
}

impl Template {
    /// Parses `source` (named `name` in errors) into a template ready to render.
    pub fn new(name: &str, source: &str) -> Result<Template> {
        let normalized = lexer::normalize_source(source);
        let mut body = parse_lazily(&normalized)
            .and_then(|body| {
                parser::check_names(&body)?;
                Ok(body)
            })
            .map_err(|e| e.in_template(name, &normalized))?;
        let scopes = crate::syntax::scopes::resolve(&mut body);
        let generation = crate::analysis::has_generation(&body);
        let direct = crate::direct::compile(&body);
        Ok(Template {
            name: name.to_string(),
            source: normalized,
            body,
            scopes,
            generation,
            fork: OnceLock::new(),
            causal: OnceLock::new(),
            span_sizes: SpanSizes::default(),
            direct,
        })
    }

    /// Analyses the template's syntax tree over every branch (see [`crate::analysis::Analysis`]).
    pub fn analyze(&self) -> crate::analysis::Analysis {
        crate::analysis::analyze(&self.body)
    }

    /// Whether a `{% generation %}` block appears (as [`analyze`](Self::analyze)'s `uses_generation`,
    /// known since compilation).
    pub fn has_generation_blocks(&self) -> bool {
        self.generation
    }

    /// The template's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The source after newline normalisation.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Whether the template text mentions `needle` (e.g. a message field).
    pub fn mentions(&self, needle: &str) -> bool {
        self.source.contains(needle)
    }

    /// Renders with the given context.
    pub fn render(&self, ctx: &Context) -> Result<Rendered> {
        let mut out = Rendered::default();
        self.render_into(ctx, &mut out)?;
        Ok(out)
    }

    /// Where [`render_pair`](Self::render_pair) forks on `var`: the index of the top-level statement
    /// from which it renders twice (what comes before runs once), or `None` when it renders both
    /// whole.
    pub fn fork_point(&self, var: &str) -> Option<usize> {
        match self
            .fork
            .get_or_init(|| (var.into(), crate::analysis::fork_point(&self.body, var)))
        {
            (name, fork) if **name == *var => *fork,
            _ => crate::analysis::fork_point(&self.body, var),
        }
    }

    /// The template's causal loop over the list variable `list` (see [`crate::causal`]), telling
    /// whether it reads the variable `flag` only after it; `None` when the template is not causal
    /// in `list`.
    pub fn causal_loop(&self, list: &str, flag: &str) -> Option<CausalLoop> {
        match self.causal.get_or_init(|| {
            (
                list.into(),
                flag.into(),
                crate::causal::causal_loop(&self.body, list, flag),
            )
        }) {
            (l, f, found) if **l == *list && **f == *flag => *found,
            _ => crate::causal::causal_loop(&self.body, list, flag),
        }
    }

    /// Renders with `ctx` into `out`, as [`render_into`](Self::render_into) does (spans included
    /// when `ctx` tracks them), and when the template is causal in the list variable `list` (see
    /// [`causal_loop`](Self::causal_loop)), gives for each `i` below the list's length what the
    /// render of `ctx` with `list[:i]` gives (the first [`LoopPrefix::len`] bytes of `out.text`,
    /// then [`LoopPrefix::tail`]) where `wanted(i).0`, and with `alt` where `wanted(i).1`, when
    /// `alt` differs from `ctx` only in the variable `flag` and the template reads `flag` only
    /// after the loop. A prefix
    /// render's limits are those of `ctx`; one that fails with
    /// [`LimitExceeded`](crate::error::ErrorKind::LimitExceeded) may not have exceeded them when
    /// rendered on its own. `None` (with nothing rendered) when the template is not causal in
    /// `list`. The prefixes' spans and generation spans are not given.
    pub fn render_prefixes(
        &self,
        ctx: &Context,
        alt: Option<&Context>,
        names: (&str, &str),
        wanted: &dyn Fn(usize) -> (bool, bool),
        out: &mut Rendered,
    ) -> Result<Option<Vec<LoopPrefix>>> {
        let (list, flag) = names;
        let Some(found) = self.causal_loop(list, flag) else {
            return Ok(None);
        };
        let alt = alt.filter(|_| found.flag_only_after);
        let in_template = |e: crate::error::Error| e.in_template(&self.name, &self.source);
        let text = Self::reuse(out);
        let mut prefixes = Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, ctx.track_spans, text)
            .run_prefixes(found.statement, alt, wanted, out)
            .map_err(in_template)?;
        for p in &mut prefixes {
            p.tail = p.tail.take().map(|t| t.map_err(in_template));
            p.alt_tail = p.alt_tail.take().map(|t| t.map_err(in_template));
        }
        Ok(Some(prefixes))
    }

    /// Renders with `ctx` into `out` and with `alt` into `alt_out`, where `alt` is `ctx` with another
    /// value of the variable `var`: what runs before the template first mentions `var` runs once,
    /// when the template allows it (see `analysis::fork_point`), else both render whole. Gives the
    /// first render's result and, when it succeeded, the second's: each exactly what
    /// [`render_into`](Self::render_into) gives. Spans are not tracked.
    pub fn render_pair(
        &self,
        ctx: &Context,
        alt: &Context,
        var: &str,
        out: &mut Rendered,
        alt_out: &mut Rendered,
    ) -> Result<Result<()>> {
        let fork = self.fork_point(var);
        let Some(fork) = fork.filter(|_| !ctx.track_spans && !alt.track_spans) else {
            self.render_into(ctx, out)?;
            return Ok(self.render_into(alt, alt_out));
        };
        alt_out.generation_spans.clear();
        alt_out.spans.clear();
        let in_template = |e: crate::error::Error| e.in_template(&self.name, &self.source);
        let text = Self::reuse(out);
        Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, false, text)
            .run_forked(fork, alt, out, alt_out)
            .map(|alt_result| alt_result.map_err(in_template))
            .map_err(in_template)
    }

    /// Renders into `out`, reusing its buffers (the text keeps its capacity from render to render).
    /// On error `out` holds no result.
    pub fn render_into(&self, ctx: &Context, out: &mut Rendered) -> Result<()> {
        let mut text = Self::reuse(out);
        if let (Some(plan), false) = (self.direct.as_ref().filter(|p| p.worth_trying()), ctx.track_spans) {
            let budget = BudgetScope::start(&ctx.limits);
            match plan.run(ctx, &mut text) {
                Ok(()) => {
                    out.steps = budget.used();
                    out.text = text;
                    return Ok(());
                }
                Err(Stop::Limit(e)) => return Err(e.in_template(&self.name, &self.source)),
                // The evaluator renders from scratch, with a budget of its own.
                Err(Stop::GiveUp) => text.clear(),
            }
        }
        Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, ctx.track_spans, text)
            .run(&self.body, out)
            .map_err(|e| e.in_template(&self.name, &self.source))
    }

    /// Renders into `out` as [`render_into`](Self::render_into) does, with spans tracked whatever
    /// `ctx` says, but gives only the spans whose origin names a context path `names` accepts (its
    /// input path, or one of the paths of computed text; see [`Origin`](crate::context::Origin)), in output
    /// order, instead of resolving every span's origin: `out.spans` stays empty. What a caller asks
    /// that needs to know where one value's text went and nothing else.
    pub fn render_named_spans(
        &self,
        ctx: &Context,
        out: &mut Rendered,
        names: &dyn Fn(&str) -> bool,
    ) -> Result<Vec<crate::context::ByteSpan>> {
        let text = Self::reuse(out);
        Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, true, text)
            .run_named(&self.body, out, names)
            .map_err(|e| e.in_template(&self.name, &self.source))
    }

    /// Empties `out` for a render and gives its text buffer.
    fn reuse(out: &mut Rendered) -> String {
        out.generation_spans.clear();
        out.spans.clear();
        let mut text = std::mem::take(&mut out.text);
        text.clear();
        text
    }
}

/// A direct plan renders what the evaluator renders (see [`crate::direct`]).
#[cfg(test)]
mod direct_tests {
    use super::{Borrowed, Context, Layer, Limits, Rendered, Template};
    use crate::error::Result;
    use crate::eval::Evaluator;
    use serde_json::{json, Map, Value as Json};

    impl Template {
        /// [`render_into`](Template::render_into) by the evaluator, whatever the template's shape.
        fn render_evaluated(&self, ctx: &Context, out: &mut Rendered) -> Result<()> {
            let text = Self::reuse(out);
            Evaluator::new(&self.body, &self.scopes, &self.span_sizes, ctx, ctx.track_spans, text)
                .run(&self.body, out)
                .map_err(|e| e.in_template(&self.name, &self.source))
        }

        fn has_direct_plan(&self) -> bool {
            self.direct.is_some()
        }

        /// Whether the plan renders `ctx` to the end itself, without giving way to the evaluator.
        fn plan_completes(&self, ctx: &Context) -> bool {
            let _budget = super::BudgetScope::start(&ctx.limits);
            let mut text = String::new();
            self.direct.as_ref().is_some_and(|p| p.run(ctx, &mut text).is_ok())
        }
    }

    const CHATML: &str = "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
    const ROLES: &str = "{{ bos_token }}{% for m in messages %}{% if m['role'] == 'system' %}<|system|>\n{{ m.content }}<|end|>\n{% elif m.role == 'user' and not (m['content'] == '') %}<|user|>\n{{ m['content'] ~ '<|end|>' }}\n{% elif m['role'] != 'assistant' or m %}?{{ m.role }}{% else %}<|assistant|>\n{{ m.content + eos_token }}\n{% endif %}{% endfor %}{% if messages %}[{{ extra }}]{% endif %}{% if add_generation_prompt %}<|assistant|>\n{% else %}{{ eos_token }}{% endif %}";
    const SHADOW: &str =
        "{% for messages in messages %}{{ messages.content }}{% endfor %}{{ messages }}{% if not flag %}no{% endif %}";
    const LOOP: &str = "{% for m in messages %}{% if loop.first and m.role != 'system' %}[default]{% endif %}{{ m.content }}{% if not loop.last %}|{% elif add_generation_prompt or loop.first %}<|assistant|>{% endif %}{% endfor %}";
    /// Gemma 2's template: an item of the list, `raise_exception`, `loop.index0 % 2`, a local set
    /// in both branches, `trim`.
    const GEMMA: &str = "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";
    /// Locals set outside the loop and in its body, items from the end, integer tests.
    const LOCALS: &str = "{% set first = messages[0]['content'] %}{% set tag = '[' %}{% if messages[-1].role == 'user' %}{% set last = messages[-1]['content'] %}{% else %}{% set last = 'none' %}{% endif %}{{ tag + first + '|' + last }}{% for m in messages %}{% if loop.index % 3 == 1 or loop.index0 != 4 %}{% set r = m.role %}{% set t = r %}{% else %}{% set r = tag %}{% set t = extra %}{% endif %}{{ r ~ ':' ~ m.content | trim ~ t }}{% if (loop.index0 == 2) == (m.role == 'tool') %}!{% endif %}{% if 7 % 4 != loop.index %}{{ messages[2].role }}{% endif %}{% endfor %}{{ messages[1]['role'] }}";

    /// deepseek-llm-7b-chat's template: a context name set when the context lacks it.
    const DEEPSEEK: &str = "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ 'User: ' + message['content'] + '\n\n' }}{% elif message['role'] == 'assistant' %}{{ 'Assistant: ' + message['content'] + eos_token }}{% elif message['role'] == 'system' %}{{ message['content'] + '\n\n' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ 'Assistant:' }}{% endif %}";
    /// Yi's template: a local set on one branch, then tested with `is defined`.
    const YI: &str = "{% if messages[0]['role'] == 'system' %}{% set system_message = messages[0]['content'] %}{% endif %}{% if system_message is defined %}{{ system_message }}{% endif %}{% for message in messages %}{% set content = message['content'] %}{% if message['role'] == 'user' %}{{ '<|im_start|>user\n' + content + '<|im_end|>\n<|im_start|>assistant\n' }}{% elif message['role'] == 'assistant' %}{{ content + '<|im_end|>' + '\n' }}{% endif %}{% endfor %}";
    /// Jinja2's reads of names set in some frames: the context's value before the set, on a branch
    /// not taken, at each iteration's start and after the loop.
    const SCOPES: &str = "{{ r }}|{% set r = 'a' %}{{ r }}|{% if flag %}{% set q = 'set' %}{% endif %}{% if q is defined %}{{ q }}{% else %}noq{% endif %}|{% for m in messages %}{{ t }}{% if loop.index0 == 1 %}{% set t = m.role %}{% endif %}{% if t is defined %}{{ t }}{% else %}-{% endif %}{% if m.name is defined %}N{% endif %}{% endfor %}|{{ t }}{% if t is undefined %}after{% endif %}{% set n = none %}{% if n is defined %}D{% endif %}{% set k = 5 %}{% if k %}K{% endif %}{% set b = false %}{% if not b %}B{% endif %}";

    fn messages() -> Vec<Json> {
        vec![
            json!({"role": "system", "content": "Be brief."}),
            json!({"role": "user", "content": "Hello"}),
            json!({"role": "assistant", "content": "Hi!"}),
            json!({"role": "tool", "content": "42"}),
            json!({"role": "user", "content": ""}),
        ]
    }

    /// User and assistant in turn, with space around their text (Python's `strip` takes the
    /// Unicode spaces too).
    fn alternating() -> Vec<Json> {
        vec![
            json!({"role": "user", "content": "  Hello \n"}),
            json!({"role": "assistant", "content": "\u{3000}Hi!\u{2003}"}),
            json!({"role": "user", "content": "\u{85}"}),
            json!({"role": "assistant", "content": "x"}),
        ]
    }

    /// Llama 3.1's template, shortened: names set when the context lacks them, `is none`, a local
    /// list sliced and iterated, `'key' in item`, and branches the evaluator runs (tools, tool
    /// calls, tool results).
    const LLAMA: &str = "{{- bos_token }}{%- if custom_tools is defined %}{%- set tools = custom_tools %}{%- endif %}{%- if not tools_in_user_message is defined %}{%- set tools_in_user_message = true %}{%- endif %}{%- if not date_string is defined %}{%- set date_string = \"26 Jul 2024\" %}{%- endif %}{%- if not tools is defined %}{%- set tools = none %}{%- endif %}{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content']|trim %}{%- set messages = messages[1:] %}{%- else %}{%- set system_message = \"\" %}{%- endif %}{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}{%- if builtin_tools is defined or tools is not none %}{{- \"Environment: ipython\\n\" }}{%- endif %}{{- \"Today Date: \" + date_string + \"\\n\\n\" }}{%- if tools is not none and not tools_in_user_message %}{%- for t in tools %}{{- t | tojson(indent=4) }}{%- endfor %}{%- endif %}{{- system_message }}{{- \"<|eot_id|>\" }}{%- if tools_in_user_message and not tools is none %}{%- if messages | length != 0 %}{%- set first_user_message = messages[0]['content']|trim %}{%- set messages = messages[1:] %}{%- else %}{{- raise_exception(\"no first user message\") }}{%- endif %}{{- first_user_message + \"<|eot_id|>\"}}{%- endif %}{%- for message in messages %}{%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}{{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}{%- elif 'tool_calls' in message %}{%- set tool_call = message.tool_calls[0].function %}{{- '{\"name\": \"' + tool_call.name + '\"}' }}{{- \"<|eom_id|>\" }}{%- elif message.role == \"tool\" or message.role == \"ipython\" %}{%- if message.content is mapping or message.content is iterable %}{{- message.content | tojson }}{%- else %}{{- message.content }}{%- endif %}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}";

    /// Qwen2.5's loop, shortened: keys read for their truth (false when missing, except a dict
    /// method's name read with `[]`), tool calls left to the evaluator.
    const QWEN: &str = "{%- for message in messages %}{%- if (message.role == \"user\") or (message.role == \"system\" and not loop.first) or (message.role == \"assistant\" and not message.tool_calls) %}{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}{%- elif message.role == \"assistant\" %}{{- '<|im_start|>' + message.role }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}{%- for tool_call in message.tool_calls %}{{- tool_call.function.name }}{%- endfor %}{%- endif %}{%- if message.role == 'tool' and message['items'] %}I{%- endif %}{%- if not message['name'] and message.k is undefined %}N{%- endif %}{%- endfor %}";

    /// Mistral v0.3's template: `selectattr(...) | list` charged and not held, tools left to the
    /// evaluator.
    const MISTRAL: &str = r#"{{- bos_token }}
{%- set user_messages = messages | selectattr('role', 'equalto', 'user') | list %}
{%- for message in messages %}
    {%- if message['role'] == 'user' %}
        {%- if tools and (message == user_messages[-1]) %}
            {{- ' [AVAILABLE_TOOLS] [' }}
            {%- for tool in tools %}
		{%- set tool = tool.function %}
		{{- '{"type": "function", "function": {' }}
		{%- for key, val in tool|items if key != "return" %}
		    {%- if val is string %}
			{{- '"' + key + '": "' + val + '"' }}
		    {%- else %}
			{{- '"' + key + '": ' + val|tojson }}
		    {%- endif %}
		    {%- if not loop.last %}
			{{- ", " }}
		    {%- endif %}
		{%- endfor %}
		{{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- ' [/AVAILABLE_TOOLS]' }}
            {%- endif %}
        {{- ' [INST] ' + message['content'] + ' [/INST]' }}
    {%- elif message['role'] == 'assistant' %}
        {%- if message.tool_calls is defined and message.tool_calls|length > 0 %}
            {{- ' [TOOL_CALLS] [' }}
            {%- for tool_call in message.tool_calls %}
                {{- {"name": tool_call.function.name, "arguments": tool_call.function.arguments, "id": tool_call.id}|tojson }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- endif %}
            {%- endfor %}
            {{- '] ' }}
            {{- eos_token }}
    	{%- elif message.content is defined %}
	    {{- ' ' + message.content + ' ' + eos_token}}
        {%- endif %}
    {%- elif message['role'] == 'tool' %}
        {{- ' [TOOL_RESULTS] ' }}
        {{- '{"call_id": "' + message.tool_call_id + '", "content": ' + message.content|string + '}' }}
        {{- ' [/TOOL_RESULTS] ' }}
    {%- endif %}
{%- endfor %}
"#;

    const SOURCES: [&str; 12] = [
        CHATML, ROLES, SHADOW, LOOP, GEMMA, LOCALS, DEEPSEEK, YI, SCOPES, LLAMA, QWEN, MISTRAL,
    ];

    fn tokens() -> Map<String, Json> {
        let Json::Object(m) =
            json!({"bos_token": "<s>", "eos_token": "</s>", "extra": "x", "flag": 0, "r": "R", "t": "T"})
        else {
            unreachable!()
        };
        m
    }

    /// Renders `source` with both the plan and the evaluator over the caller's list `messages`
    /// (or `vars` alone when `messages` is `None`) and asserts the same text, steps and error.
    fn same(
        source: &str,
        messages: Option<&[Json]>,
        vars: Json,
        limits: Limits,
    ) -> std::result::Result<String, String> {
        let t = Template::new("t", source).unwrap();
        assert!(t.has_direct_plan(), "{source} has no direct plan");
        let tokens = tokens();
        let Json::Object(vars) = vars else { unreachable!() };
        let layers: Vec<Layer> = match messages {
            Some(m) => vec![Layer::Var("messages", Borrowed::List(m)), Layer::Map(&tokens)],
            None => vec![Layer::Map(&tokens)],
        };
        let ctx = Context {
            vars,
            layers: &layers,
            limits,
            ..Context::default()
        };
        let (mut direct, mut evaluated) = (Rendered::default(), Rendered::default());
        let a = t.render_into(&ctx, &mut direct);
        let b = t.render_evaluated(&ctx, &mut evaluated);
        match (a, b) {
            (Ok(()), Ok(())) => {
                assert_eq!(direct, evaluated, "{source}");
                Ok(direct.text)
            }
            (Err(a), Err(b)) => {
                assert_eq!(
                    (a.kind(), a.message(), a.line(), a.column()),
                    (b.kind(), b.message(), b.line(), b.column()),
                    "{source}"
                );
                Err(a.to_string())
            }
            (a, b) => panic!("{source}: direct {a:?}, evaluator {b:?}"),
        }
    }

    #[test]
    fn renders_as_the_evaluator_does() {
        // Long enough for the evaluator's charge for a JSON array's items to count.
        let m: Vec<Json> = messages().into_iter().cycle().take(23).collect();
        let turns: Vec<Json> = alternating().into_iter().cycle().take(22).collect();
        for source in SOURCES {
            for prompt in [
                json!(true),
                json!(false),
                json!(0),
                json!(1.5),
                json!(""),
                json!([]),
                json!({"a": 1}),
            ] {
                let vars = json!({ "add_generation_prompt": prompt });
                same(source, Some(&m), vars.clone(), Limits::default()).ok();
                same(source, Some(&m[..1]), vars.clone(), Limits::default()).ok();
                same(source, Some(&[]), vars.clone(), Limits::default()).ok();
                same(source, Some(&turns), vars.clone(), Limits::default()).ok();
                same(source, Some(&turns[..3]), vars.clone(), Limits::default()).ok();
                // A JSON array in the variables, which the evaluator charges for as a list value.
                let mut with_list = vars.clone();
                with_list["messages"] = Json::Array(m.clone());
                same(source, None, with_list, Limits::default()).ok();
            }
        }
        let text = same(
            CHATML,
            Some(&m[1..3]),
            json!({"add_generation_prompt": true}),
            Limits::default(),
        );
        assert_eq!(
            text.unwrap(),
            "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\nHi!<|im_end|>\n<|im_start|>assistant\n"
        );
        let gemma = same(
            GEMMA,
            Some(&alternating()[..2]),
            json!({"add_generation_prompt": true}),
            Limits::default(),
        );
        assert_eq!(
            gemma.unwrap(),
            "<s><start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\nHi!<end_of_turn>\n<start_of_turn>model\n"
        );
        let locals = same(LOCALS, Some(&m[..5]), json!({}), Limits::default());
        assert_eq!(
            locals.unwrap(),
            // Jinja2 3.1.6's render of the same.
            "[Be brief.|system:Be brief.system!assistantuser:Hellouser!assistant\
             assistant:Hi!assistanttool:42toolassistant[:x!assistantuser"
        );
        // The plans render these themselves.
        for (source, m) in [
            (GEMMA, alternating()),
            (LOCALS, messages()),
            (CHATML, messages()),
            (DEEPSEEK, messages()),
            (YI, messages()),
            (SCOPES, messages()),
            (LLAMA, messages()[..3].to_vec()),
            (LLAMA, alternating()),
            (QWEN, alternating()),
            (MISTRAL, alternating()),
            (MISTRAL, messages()[..3].to_vec()),
        ] {
            let prompt = json!(true);
            let layers = [
                Layer::Var("messages", Borrowed::List(&m)),
                Layer::Var("add_generation_prompt", Borrowed::Json(&prompt)),
                Layer::Map(&tokens()),
            ];
            let ctx = Context {
                layers: &layers,
                ..Context::default()
            };
            assert!(Template::new("t", source).unwrap().plan_completes(&ctx), "{source}");
        }
        // Llama's variables: tools (the evaluator's branches), names the template sets otherwise.
        let tool = json!({"type": "function", "function": {"name": "f"}});
        for vars in [
            json!({"tools": [tool]}),
            json!({"tools": null, "tools_in_user_message": false}),
            json!({"custom_tools": [tool], "tools_in_user_message": false}),
            json!({"custom_tools": null, "date_string": "1 Jan 2025", "builtin_tools": ["x"]}),
            json!({"date_string": 3, "tools_in_user_message": ""}),
            json!({"date_string": "d", "tools_in_user_message": "", "tools": "none"}),
        ] {
            for m in [&m[..], &m[..3], &m[..1], &turns[..], &[]] {
                same(LLAMA, Some(m), vars.clone(), Limits::default()).ok();
                same(MISTRAL, Some(m), vars.clone(), Limits::default()).ok();
            }
        }
        let llama = same(
            LLAMA,
            Some(&m[..3]),
            json!({"add_generation_prompt": true}),
            Limits::default(),
        );
        assert_eq!(
            llama.unwrap(),
            // Jinja2 3.1.6's render of the same.
            "<s><|start_header_id|>system<|end_header_id|>\n\nToday Date: 26 Jul 2024\n\nBe brief.<|eot_id|>\
             <|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant<|end_header_id|>\
             \n\nHi!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        );
        let scopes = same(SCOPES, Some(&m[..5]), json!({}), Limits::default());
        // Jinja2 3.1.6's render of the same.
        assert_eq!(scopes.unwrap(), "R|a|noq|TTTuserTTTTTT|TDKB");
        // The roles do not alternate: the evaluator raises.
        let raised = same(GEMMA, Some(&m[..3]), json!({}), Limits::default());
        assert!(raised.unwrap_err().contains("System role not supported"));
    }

    /// Values the plan does not print or test itself: the evaluator renders them, or raises.
    #[test]
    fn gives_way_to_the_evaluator() {
        let odd = [
            json!({"role": "user", "content": 3}),
            json!({"role": "user", "content": null}),
            json!({"role": "user", "content": [{"type": "text", "text": "hi"}]}),
            json!({"role": "user"}),
            json!({"role": 7, "content": "x"}),
            json!({"content": "x"}),
            json!("a string message"),
            json!(["a", "list"]),
            json!(null),
            json!({"role": "assistant", "content": "x", "items": "y"}),
        ];
        for source in SOURCES {
            for item in &odd {
                let m = vec![json!({"role": "user", "content": "Hello"}), item.clone()];
                same(source, Some(&m), json!({}), Limits::default()).ok();
                let m = vec![
                    item.clone(),
                    json!({"role": "assistant", "content": "Hi"}),
                    item.clone(),
                ];
                same(
                    source,
                    Some(&m),
                    json!({"add_generation_prompt": true}),
                    Limits::default(),
                )
                .ok();
            }
            for messages in [json!("text"), json!({"role": "user"}), json!(null), json!(3)] {
                let vars = json!({"messages": messages, "add_generation_prompt": true});
                same(source, None, vars, Limits::default()).ok();
            }
            // No `messages` and no `add_generation_prompt` at all.
            same(source, None, json!({}), Limits::default()).ok();
        }
        assert!(same(CHATML, None, json!({"messages": 3}), Limits::default()).is_err());
    }

    #[test]
    fn limits_stop_where_the_evaluator_stops() {
        for (source, m) in SOURCES
            .into_iter()
            .map(|s| (s, messages()))
            .chain([(GEMMA, alternating()), (LOCALS, alternating()), (LLAMA, alternating())])
            .chain([(LLAMA, messages()[..3].to_vec()), (QWEN, alternating())])
            .chain([(MISTRAL, alternating()), (MISTRAL, messages())])
        {
            let vars = json!({"add_generation_prompt": true, "messages": m.clone()});
            for max_steps in 0..120 {
                let limits = Limits {
                    max_steps,
                    ..Limits::default()
                };
                same(source, Some(&m), json!({"add_generation_prompt": true}), limits.clone()).ok();
                same(source, None, vars.clone(), limits).ok();
            }
            for max_output_bytes in (0..200).step_by(7) {
                let limits = Limits {
                    max_output_bytes,
                    ..Limits::default()
                };
                same(source, Some(&m), json!({"add_generation_prompt": true}), limits).ok();
            }
        }
        let tight = Limits {
            max_steps: 5,
            ..Limits::default()
        };
        let m = messages();
        assert!(same(CHATML, Some(&m), json!({"add_generation_prompt": true}), tight).is_err());
    }

    #[test]
    fn compiles_only_what_it_runs() {
        let direct = |s: &str| Template::new("t", s).unwrap().has_direct_plan();
        assert!(SOURCES.iter().all(|s| direct(s)) && direct("plain text"));
        // No plan, or one that gives way to the evaluator where it reaches these.
        let m = json!({"role": "user", "content": "c", "items": "i"});
        let list = [m.clone(), m.clone()];
        let vars = json!({"a": 1, "b": 1, "c": 1, "n": 0, "x": "x", "m": m, "flag": true});
        let tokens = tokens();
        let layers = [Layer::Var("messages", Borrowed::List(&list)), Layer::Map(&tokens)];
        let Json::Object(vars) = vars else { unreachable!() };
        let ctx = Context {
            vars,
            layers: &layers,
            ..Context::default()
        };
        for source in [
            "{% for m in messages %}{{ loop.index }}{% endfor %}",
            "{{ loop }}",
            "{% if loop.first %}{% endif %}",
            "{% for m in messages %}{{ loop.first }}{% endfor %}",
            "{% for m in messages %}{% if loop.changed(m) %}{% endif %}{% endfor %}",
            "{% for m in messages %}{% if loop.index0 %}{% endif %}{% endfor %}",
            "{{ self }}",
            "{% set x = 1.5 %}{{ x }}",
            "{% set r = 'a' %}{% for m in messages %}{% set r = m.role %}{{ r }}{% endfor %}",
            "{% for m in messages %}{% set m = 'x' %}{% endfor %}",
            "{% if messages[0] is defined %}{% endif %}",
            "{% if raise_exception is defined %}{% endif %}",
            "{% for i in messages %}{{ x }}{% endfor %}{% set x = 'a' %}",
            "{% for i in messages %}{% if x is defined %}{% endif %}{% endfor %}{% if a %}{% set x = 'a' %}{% endif %}",
            "{% if range is undefined %}{% endif %}",
            "{% if x %}{% set namespace = 'n' %}{% endif %}{% if namespace is defined %}{% endif %}",
            "{% if messages.x is defined %}{% endif %}",
            "{% if x is defined(1) %}{% endif %}",
            "{% set loop = 'x' %}",
            "{% set a, b = x %}",
            "{% if a %}{% set a, b = x %}{% endif %}",
            "{% set r = 'a' %}{{ r.content }}",
            "{% set r = 'a' %}{{ r[0] }}",
            "{% set r = 'a' %}{% for r in messages %}{% endfor %}",
            "{{ m['content'] | trim('x') }}",
            "{{ m['content'] | upper }}",
            "{{ x | trim }}",
            "{{ messages[n] }}",
            "{{ messages[0][1] }}",
            "{% for m in messages %}{{ m[0] }}{% endfor %}",
            "{% for m in messages %}{% if loop.index0 % 0 == 0 %}{% endif %}{% endfor %}",
            "{% for m in messages %}{% if loop.index0 % -2 == 0 %}{% endif %}{% endfor %}",
            "{% for m in messages %}{% if loop.length == 2 %}{% endif %}{% endfor %}",
            "{% if a == b == c %}{% endif %}",
            "{% if (a == 'x') != b %}{% endif %}",
            "{{ raise }}{{ other_call('x') }}",
            "{% for m in messages if m %}{{ m.role }}{% endfor %}",
            "{% for m in messages %}{% else %}none{% endfor %}",
            "{% if a %}{% for m in messages %}{% else %}none{% endfor %}{% endif %}",
            "{% for m in messages %}{% for n in messages %}{% endfor %}{% endfor %}",
            "{% for a, b in messages %}{% endfor %}",
            "{% if m['role'] in ['a'] %}{% endif %}",
            "{% if m.role == 1 %}{% endif %}",
            "{% if 'role' in m.role %}{% endif %}",
            "{% if m.role is none(1) %}{% endif %}",
            "{% set l = messages[1:2] %}",
            "{% set l = messages[a:] %}{% for i in l %}{% endfor %}",
            "{{ m.items }}",
            "{% if a %}{% macro f() %}{% endmacro %}{% endif %}",
            "{% if a %}{% set x %}block{% endset %}{% endif %}",
            "{% if a %}{% generation %}x{% endgeneration %}{% endif %}",
            "{{ raise_exception('x') }}",
        ] {
            let t = Template::new("t", source).unwrap();
            assert!(!t.has_direct_plan() || !t.plan_completes(&ctx), "{source}");
        }
        // A name set past the plan's reach (in a branch the evaluator runs) is still a local: a
        // loop before it reads it as Jinja2 does, or gives way.
        let names = (0..9).map(|i| format!("{{% set v{i} = 1 %}}")).collect::<String>();
        assert!(!direct(&format!("{{% if a %}}{{{{ x | upper }}}}{names}{{% endif %}}")));
        let deep = format!("{}x{}", "{% if a %}".repeat(20), "{% endif %}".repeat(20));
        let deep = Template::new("t", &deep).unwrap();
        assert!(!deep.has_direct_plan() || !deep.plan_completes(&ctx));
    }
}
