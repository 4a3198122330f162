"use strict";
// The playground: keeps the conversation (chat editor and JSON in sync), renders it through
// /v1/render, tokenizes the prompt through /v1/playground/tokens and draws the prompt with each
// message's characters in its colour, special tokens, token boundaries and trained-on tokens.
// Spans from the server are Python code-point indices; JavaScript strings index UTF-16 units, so
// every span is converted through a code-point-to-unit table before use.
(function () {
  const $ = (id) => document.getElementById(id);
  const el = {
    key: $("api-key"),
    model: $("model-select"),
    template: $("template-input"),
    templateLines: $("template-lines"),
    loadTemplate: $("load-template"),
    clearTemplate: $("clear-template"),
    genPrompt: $("add-generation-prompt"),
    continueFinal: $("continue-final-message"),
    useTools: $("use-tools"),
    tools: $("tools-json"),
    toolsError: $("tools-error"),
    chat: $("chat"),
    newRole: $("new-role"),
    addMessage: $("add-message"),
    json: $("messages-json"),
    jsonError: $("messages-error"),
    status: $("status"),
    tokenInfo: $("hover-info"),
    templateError: $("template-error"),
    renderError: $("render-error"),
    legend: $("legend"),
    prompt: $("prompt-text"),
  };
  const COLOURS = 8;
  const ROLES = ["system", "user", "assistant", "tool"];

  let messages = [
    { role: "system", content: "You are a helpful assistant." },
    { role: "user", content: "Hi! \u{1F44B} What's the weather in Paris?" },
    { role: "assistant", content: "It is sunny in Paris today \u{2600}\u{FE0F}." },
    { role: "user", content: "Thanks!" },
  ];
  el.tools.value = JSON.stringify([{
    type: "function",
    function: {
      name: "get_weather",
      description: "The current weather in a city.",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  }], null, 2);

  /** Per served model: {id, tokenizer, special_tokens, templates}. */
  let models = new Map();
  let sequence = 0;
  let timer = null;

  function setState(state) {
    document.body.dataset.state = state;
  }

  // ---- API calls ---------------------------------------------------------------------------

  async function call(method, path, body) {
    const headers = {};
    const key = el.key.value.trim();
    if (key) headers["Authorization"] = "Bearer " + key;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store",
      });
    } catch (e) {
      return { ok: false, status: 0, data: { error: { message: "cannot reach the server: " + e.message } } };
    }
    let data = null;
    try {
      data = await response.json();
    } catch (_) {
      data = { error: { message: "the server answered " + response.status + " without JSON" } };
    }
    return { ok: response.ok, status: response.status, data };
  }

  function errorOf(answer) {
    const e = (answer.data && answer.data.error) || {};
    return { message: e.message || "HTTP " + answer.status, line: e.line, column: e.column, param: e.param, status: answer.status };
  }

  function unauthorized(answer) {
    if (answer.status !== 401) return false;
    showError("The server needs an API key: enter it at the top right.");
    el.key.focus();
    return true;
  }

  async function loadModels() {
    setState("pending");
    const list = await call("GET", "/v1/models");
    if (!list.ok) {
      if (!unauthorized(list)) showError(errorOf(list).message);
      setState("done");
      return;
    }
    const details = await call("GET", "/v1/playground/models");
    const byId = new Map(details.ok ? details.data.data.map((m) => [m.id, m]) : []);
    const chosen = el.model.value;
    models = new Map();
    el.model.textContent = "";
    for (const m of list.data.data) {
      const d = byId.get(m.id) || { templates: [], special_tokens: [], tokenizer: false };
      models.set(m.id, { id: m.id, tokenizer: d.tokenizer, special_tokens: d.special_tokens, templates: d.templates });
      const option = document.createElement("option");
      option.value = m.id;
      option.textContent = m.id + (d.tokenizer ? "" : " (no tokenizer: text only)");
      el.model.appendChild(option);
    }
    if (models.has(chosen)) el.model.value = chosen;
    renderNow();
  }

  // ---- The conversation ------------------------------------------------------------------

  function syncJson() {
    el.json.value = JSON.stringify(messages, null, 2);
    el.jsonError.hidden = true;
  }

  function drawChat() {
    el.chat.textContent = "";
    messages.forEach((m, i) => {
      const box = document.createElement("div");
      box.className = "message m" + (i % COLOURS);
      box.setAttribute("data-testid", "message-" + i);
      const head = document.createElement("div");
      head.className = "head";
      const index = document.createElement("span");
      index.className = "index";
      index.textContent = "#" + i;
      const role = document.createElement("select");
      role.setAttribute("data-testid", "message-role-" + i);
      const roles = ROLES.includes(m.role) ? ROLES : ROLES.concat([String(m.role)]);
      for (const r of roles) {
        const option = document.createElement("option");
        option.textContent = r;
        role.appendChild(option);
      }
      role.value = String(m.role);
      role.addEventListener("change", () => {
        messages[i].role = role.value;
        syncJson();
        scheduleRender();
      });
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "remove";
      remove.textContent = "Remove";
      remove.setAttribute("data-testid", "message-remove-" + i);
      remove.addEventListener("click", () => {
        messages.splice(i, 1);
        syncJson();
        drawChat();
        scheduleRender();
      });
      head.append(index, role, remove);
      box.appendChild(head);
      if (m.content === undefined || m.content === null || typeof m.content === "string") {
        const content = document.createElement("textarea");
        content.rows = Math.min(8, Math.max(2, String(m.content || "").split("\n").length));
        content.spellcheck = false;
        content.value = m.content || "";
        content.setAttribute("data-testid", "message-content-" + i);
        content.addEventListener("input", () => {
          messages[i].content = content.value;
          syncJson();
          scheduleRender();
        });
        box.appendChild(content);
      } else {
        const note = document.createElement("p");
        note.className = "structured";
        note.setAttribute("data-testid", "message-content-" + i);
        note.textContent = "Structured content: edit it in the JSON below.";
        box.appendChild(note);
      }
      el.chat.appendChild(box);
    });
  }

  el.json.addEventListener("input", () => {
    let parsed;
    try {
      parsed = JSON.parse(el.json.value);
    } catch (e) {
      el.jsonError.textContent = "Not valid JSON: " + e.message;
      el.jsonError.hidden = false;
      return;
    }
    if (!Array.isArray(parsed) || !parsed.every((m) => m && typeof m === "object" && !Array.isArray(m))) {
      el.jsonError.textContent = "The messages are a list of objects, each with a role.";
      el.jsonError.hidden = false;
      return;
    }
    el.jsonError.hidden = true;
    messages = parsed;
    drawChat();
    scheduleRender();
  });

  el.addMessage.addEventListener("click", () => {
    messages.push({ role: el.newRole.value, content: "" });
    syncJson();
    drawChat();
    scheduleRender();
  });

  // ---- Options and template --------------------------------------------------------------

  function selectedModel() {
    return models.get(el.model.value);
  }

  function modelTemplate(model) {
    if (!model || model.templates.length === 0) return null;
    const named = model.templates.find((t) => t.name === null || t.name === "default");
    return (named || model.templates[0]).source;
  }

  el.loadTemplate.addEventListener("click", () => {
    const source = modelTemplate(selectedModel());
    if (source !== null) {
      el.template.value = source;
      scheduleRender();
    }
  });
  el.clearTemplate.addEventListener("click", () => {
    el.template.value = "";
    scheduleRender();
  });
  el.useTools.addEventListener("change", () => {
    el.tools.hidden = !el.useTools.checked;
    scheduleRender();
  });
  el.key.addEventListener("change", () => {
    sessionStorage.setItem("chatfmt-api-key", el.key.value);
    loadModels();
  });
  for (const input of [el.template, el.tools]) input.addEventListener("input", scheduleRender);
  for (const input of [el.model, el.genPrompt, el.continueFinal]) input.addEventListener("change", scheduleRender);

  // ---- Rendering --------------------------------------------------------------------------

  function scheduleRender() {
    // A render still under way is stale now: its answer is dropped.
    sequence++;
    setState("pending");
    clearTimeout(timer);
    timer = setTimeout(renderNow, 150);
  }

  function showError(message) {
    el.renderError.textContent = message;
    el.renderError.hidden = false;
  }

  function clearErrors() {
    el.renderError.hidden = true;
    el.templateError.hidden = true;
    el.templateLines.hidden = true;
    el.toolsError.hidden = true;
  }

  async function renderNow() {
    clearTimeout(timer);
    const mine = ++sequence;
    const model = selectedModel();
    if (!model) {
      setState("done");
      return;
    }
    const body = {
      model: model.id,
      messages,
      add_generation_prompt: el.genPrompt.checked,
      continue_final_message: el.continueFinal.checked,
      tokenize: model.tokenizer,
    };
    if (el.useTools.checked) {
      try {
        body.tools = JSON.parse(el.tools.value);
      } catch (e) {
        clearErrors();
        el.toolsError.textContent = "Tools: not valid JSON: " + e.message;
        el.toolsError.hidden = false;
        setState("done");
        return;
      }
    }
    const template = el.template.value;
    if (template !== "") body.chat_template = template;
    el.status.textContent = "rendering…";
    let answer = await call("POST", "/v1/render", body);
    let note = "";
    if (!answer.ok && body.tokenize && errorOf(answer).param === "body.masks") {
      // No assistant span: show the prompt without tokens rather than nothing.
      note = errorOf(answer).message;
      answer = await call("POST", "/v1/render", Object.assign({}, body, { tokenize: false }));
    }
    let tokens = null;
    if (answer.ok && answer.data.input_ids) {
      const t = await call("POST", "/v1/playground/tokens", { model: model.id, text: answer.data.text });
      if (t.ok) tokens = t.data;
      else note = errorOf(t).message;
    }
    if (mine !== sequence) return;
    clearErrors();
    if (!answer.ok) {
      if (!unauthorized(answer)) showRenderError(errorOf(answer), template === "" ? modelTemplate(model) : template);
      el.status.textContent = "";
      setState("done");
      return;
    }
    draw(answer.data, tokens, model);
    if (note) showError(note);
    setState("done");
  }

  function showRenderError(error, source) {
    if (error.line === undefined || error.line === null) {
      showError(error.message);
      return;
    }
    const where = "line " + error.line + (error.column ? ", column " + error.column : "");
    el.templateError.textContent = error.message + " (" + where + ")";
    el.templateError.hidden = false;
    if (source === null) return;
    el.templateLines.textContent = "";
    source.split("\n").forEach((text, i) => {
      const li = document.createElement("li");
      li.textContent = text;
      if (i + 1 === error.line) {
        li.className = "error-line";
        if (error.column) {
          const caret = document.createElement("span");
          caret.className = "caret";
          caret.textContent = Array.from(text).slice(0, error.column - 1).map((c) => (c === "\t" ? "\t" : " ")).join("") + "^";
          li.appendChild(caret);
        }
      }
      el.templateLines.appendChild(li);
    });
    el.templateLines.hidden = false;
    const line = el.templateLines.children[error.line - 1];
    if (line) el.templateLines.scrollTop = line.offsetTop - el.templateLines.clientHeight / 2;
  }

  /** The UTF-16 index of every code point of `text`, and its length at the end. */
  function codePointUnits(text) {
    const units = [];
    let i = 0;
    while (i < text.length) {
      units.push(i);
      i += text.codePointAt(i) > 0xffff ? 2 : 1;
    }
    units.push(text.length);
    return units;
  }

  /** Looks up which of `ranges` ([start, end) in units, sorted, not overlapping) holds a unit. */
  function finder(ranges) {
    const sorted = ranges.filter((r) => r[1] > r[0]).sort((a, b) => a[0] - b[0]);
    return (at) => {
      let lo = 0, hi = sorted.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sorted[mid][0] <= at) lo = mid + 1; else hi = mid;
      }
      const r = sorted[lo - 1];
      return r && at < r[1] ? r : null;
    };
  }

  /** Where the special-token strings occur in `text` (units), leftmost and longest first. */
  function specialRanges(text, specials) {
    const sorted = specials.filter((s) => s.length > 0).sort((a, b) => b.length - a.length);
    const out = [];
    let i = 0;
    while (i < text.length && sorted.length > 0) {
      let best = -1, bestToken = null;
      for (const s of sorted) {
        const at = text.indexOf(s, i);
        if (at >= 0 && (best < 0 || at < best)) {
          best = at;
          bestToken = s;
        }
      }
      if (best < 0) break;
      out.push([best, best + bestToken.length]);
      i = best + bestToken.length;
    }
    return out;
  }

  function draw(result, tokens, model) {
    const text = result.text;
    const units = codePointUnits(text);
    const u = (cp) => units[Math.min(cp, units.length - 1)];
    const cuts = new Set([0, text.length]);
    const mark = (r) => { cuts.add(r[0]); cuts.add(r[1]); };

    // Messages: each one's turn and content ranges.
    const turns = [];
    const contents = [];
    for (const m of result.message_spans || []) {
      if (m.turn) {
        const r = [u(m.turn[0]), u(m.turn[1]), m.index, m.role];
        turns.push(r);
        mark(r);
      }
      for (const c of m.content) {
        const r = [u(c[0]), u(c[1]), m.index];
        contents.push(r);
        mark(r);
      }
    }
    // Tokens: each one's characters, the text cut into consecutive pieces (tokens that split a
    // character share it; the first one shows it).
    const pieces = [];
    let specials = [];
    if (tokens) {
      let cursor = 0;
      tokens.offsets.forEach((o, n) => {
        const start = Math.max(o[0], cursor);
        const end = Math.max(o[1], start);
        pieces.push([u(start), u(end), n]);
        cursor = end;
        if (tokens.special[n]) specials.push([u(o[0]), u(o[1])]);
      });
      pieces.forEach(mark);
    } else {
      specials = specialRanges(text, model.special_tokens);
    }
    specials.forEach(mark);
    const trained = tokens ? [] : (result.assistant_spans || []).map((s) => [u(s[0]), u(s[1])]);
    trained.forEach(mark);

    const turnAt = finder(turns), contentAt = finder(contents), specialAt = finder(specials), trainedAt = finder(trained);
    const sortedCuts = Array.from(cuts).sort((a, b) => a - b);

    function segment(a, b) {
      const piece = text.slice(a, b);
      const turn = turnAt(a), content = contentAt(a);
      const message = content ? content[2] : turn ? turn[2] : null;
      const classes = [];
      if (message !== null) classes.push("m" + (message % COLOURS));
      if (content) classes.push("content");
      if (specialAt(a)) classes.push("special");
      if (trainedAt(a)) classes.push("trained");
      if (classes.length === 0) return document.createTextNode(piece);
      const span = document.createElement("span");
      span.className = classes.join(" ");
      if (message !== null) {
        span.dataset.message = String(message);
        span.dataset.part = content ? "content" : "turn";
      }
      span.textContent = piece;
      return span;
    }

    function fill(parent, from, to) {
      // The first cut after `from`.
      let lo = 0, hi = sortedCuts.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (sortedCuts[mid] <= from) lo = mid + 1; else hi = mid;
      }
      let k = lo;
      let a = from;
      while (a < to) {
        const b = Math.min(k < sortedCuts.length ? sortedCuts[k] : to, to);
        parent.appendChild(segment(a, b));
        a = b;
        k++;
      }
    }

    const out = document.createDocumentFragment();
    if (tokens) {
      let at = 0;
      for (const [a, b, n] of pieces) {
        if (a > at) fill(out, at, a);
        const span = document.createElement("span");
        span.className = "tok";
        span.setAttribute("data-testid", "token-" + n);
        span.dataset.index = String(n);
        span.setAttribute("data-id", String(result.input_ids[n]));
        span.setAttribute("data-mask", String(result.assistant_masks ? result.assistant_masks[n] : 0));
        span.title = tokenTitle(result, tokens, n);
        fill(span, a, b);
        out.appendChild(span);
        at = b;
      }
      if (at < text.length) fill(out, at, text.length);
    } else {
      fill(out, 0, text.length);
    }
    el.prompt.textContent = "";
    el.prompt.appendChild(out);
    drawLegend(result, model, tokens);
    const trainedOn = (result.assistant_masks || []).reduce((s, m) => s + m, 0);
    const count = tokens ? result.input_ids.length + " tokens, " + trainedOn + " trained on" : "not tokenized";
    const template = result.template ? result.template.source.split("/").pop() : "";
    el.status.textContent = units.length - 1 + " characters, " + count + " · template: " + template;
    el.tokenInfo.textContent = "";
    if (tokens && tokens.input_ids.join(",") !== result.input_ids.join(",")) {
      showError("The token boundaries come from encoding the prompt again, which gave other ids; they may be misplaced.");
    }
  }

  function tokenTitle(result, tokens, n) {
    const parts = ["token " + n, "id " + result.input_ids[n]];
    if (tokens.special[n]) parts.push("special");
    if (result.assistant_masks && result.assistant_masks[n]) parts.push("trained on (assistant mask 1)");
    return parts.join(" · ");
  }

  function drawLegend(result, model, tokens) {
    el.legend.textContent = "";
    for (const m of result.message_spans || []) {
      const span = document.createElement("span");
      span.className = "m" + (m.index % COLOURS) + " content";
      span.textContent = "#" + m.index + " " + m.role;
      el.legend.appendChild(span);
    }
    const special = document.createElement("span");
    special.className = "special";
    special.textContent = "special token";
    const trained = document.createElement("span");
    trained.className = "trained";
    trained.textContent = tokens ? "trained-on token (assistant mask)" : "trained-on text (assistant span)";
    el.legend.append(special, trained);
    if (tokens) {
      const hint = document.createElement("span");
      hint.textContent = "hover a token for its id";
      el.legend.appendChild(hint);
    }
  }

  el.prompt.addEventListener("mouseover", (event) => {
    const token = event.target.closest(".tok");
    if (token) el.tokenInfo.textContent = token.title;
  });

  el.key.value = sessionStorage.getItem("chatfmt-api-key") || "";
  syncJson();
  drawChat();
  loadModels();
})();
