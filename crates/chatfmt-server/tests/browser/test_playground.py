"""The playground page at ``/`` in Chromium, checked against the command line.

Starts ``chatfmt serve`` (the release binary) with two models, ``examples/chatml-model`` (no tokenizer:
text only) and the tokens kit's Qwen3 folder, drives Debian's Chromium (``/usr/bin/chromium``) with
playwright, edits the conversation and the template, and compares the page with ``chatfmt render --json``
and ``chatfmt tokenize --json``: the prompt byte for byte, each token's id and mask, each message's
characters (emoji included) and the line and column of a template error.

The kits are found as the other tests find them: ``$CHATFMT_KITS``, else ``../shared/conformance`` beside
the repository; a missing kit skips the test, except under ``CI=true``. ``CHATFMT_PLAYGROUND_SCREENSHOT``
names a PNG to save a screenshot of the page to.
"""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import threading

import pytest
from playwright.sync_api import sync_playwright

REPO = pathlib.Path(__file__).resolve().parents[4]
sys.path.insert(0, str(REPO / "crates" / "chatfmt" / "tests" / "support"))

from kits import kit_dir  # noqa: E402
CHROMIUM = "/usr/bin/chromium"
TIMEOUT_S = 60
PAGE_TIMEOUT_MS = 20_000

CONVERSATION = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "Hi \U0001F600, can you say \U0001F680?"},
    {"role": "assistant", "content": "Sure: \U0001F680 \u2014 done."},
    {"role": "user", "content": "placeholder"},
]
# The edited message: non-BMP characters (two UTF-16 units each), a modifier sequence and a
# combining mark, around which each message's colour must start and stop exactly.
EDITED = "Again \U0001F44B\U0001F3FD with \U0001D518 and e\u0301 \u2713"
BROKEN = "{% for m in messages %}{{ m.content }}\n{% endfor %}\n{{ m.content | upper }\n"


def binary() -> pathlib.Path:
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target"))
    path = target / "release" / "chatfmt"
    if not path.is_file():
        pytest.fail(f"{path} is missing: build it with cargo build --release -p chatfmt-cli")
    return path


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(binary()), *args], capture_output=True, timeout=TIMEOUT_S, cwd=REPO, check=False
    )


def cli_json(*args: str) -> dict:
    done = cli(*args)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


class Server:
    """``chatfmt serve`` on a free port, stopped by ``close``."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen(
            [str(binary()), "serve", "--port", "0", "--workers", "2", *args],
            cwd=REPO,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        found = {}

        def read_address():
            for line in self.process.stderr:
                m = re.search(r"listening on (http://\S+)", line)
                if m:
                    found["url"] = m.group(1)
                    break

        reader = threading.Thread(target=read_address, daemon=True)
        reader.start()
        reader.join(TIMEOUT_S)
        if "url" not in found:
            self.close()
            pytest.fail("chatfmt serve did not start listening")
        self.url = found["url"]

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)


def wait_rendered(page):
    page.wait_for_function("document.body.dataset.state === 'done'")


def hook(page, name: str):
    return page.locator(f'[data-testid="{name}"]')


def code_point_slice(text: str, span) -> str:
    """Python slices are code-point slices, as the spans are."""
    return text[span[0] : span[1]]


def check_messages(page, expected: dict):
    """Each message's coloured content on the page is the content the CLI's spans give."""
    for m in expected["message_spans"]:
        want = "".join(code_point_slice(expected["text"], c) for c in m["content"])
        got = page.evaluate(
            """(i) => Array.from(document.querySelectorAll(
                   `[data-testid="prompt-text"] [data-message="${i}"][data-part="content"]`))
                   .map((e) => e.textContent).join("")""",
            m["index"],
        )
        assert got == want, f"message {m['index']}"
        turn = m["turn"]
        if turn is not None:
            got_turn = page.evaluate(
                """(i) => Array.from(document.querySelectorAll(
                       `[data-testid="prompt-text"] [data-message="${i}"]`))
                       .map((e) => e.textContent).join("")""",
                m["index"],
            )
            assert got_turn == code_point_slice(expected["text"], turn), f"turn of message {m['index']}"


def check_model(page, name: str, source: str, tokenizer: bool, tmp: pathlib.Path, screenshot: str | None):
    hook(page, "model-select").select_option(name)
    hook(page, "template-input").fill("")
    hook(page, "messages-json").fill(json.dumps(CONVERSATION, ensure_ascii=False))
    hook(page, "message-content-3").fill(EDITED)
    hook(page, "add-generation-prompt").check()
    hook(page, "continue-final-message").uncheck()
    wait_rendered(page)
    conversation = [dict(m) for m in CONVERSATION]
    conversation[3]["content"] = EDITED
    # The JSON box follows the chat editor.
    assert json.loads(hook(page, "messages-json").input_value()) == conversation
    messages = tmp / "messages.json"
    messages.write_text(json.dumps(conversation, ensure_ascii=False), encoding="utf-8")
    args = ["--model", source, "--messages", str(messages), "--json", "--add-generation-prompt"]
    rendered = cli_json("render", *args)
    # textContent is what the browser decoded: compare the UTF-8 bytes.
    prompt = hook(page, "prompt-text").text_content()
    assert prompt.encode("utf-8") == rendered["text"].encode("utf-8")
    check_messages(page, rendered)
    tokens = page.evaluate(
        """() => Array.from(document.querySelectorAll('[data-testid="prompt-text"] [data-testid^="token-"]'))
               .map((e) => [e.getAttribute("data-testid"), Number(e.getAttribute("data-id")),
                            Number(e.getAttribute("data-mask"))])"""
    )
    if tokenizer:
        tokenized = cli_json("tokenize", *args)
        assert [t[0] for t in tokens] == [f"token-{i}" for i in range(len(tokens))]
        assert [t[1] for t in tokens] == tokenized["input_ids"]
        assert [t[2] for t in tokens] == tokenized["assistant_masks"]
        assert sum(t[2] for t in tokens) > 0
        special = page.locator('[data-testid="prompt-text"] .special').first.text_content()
        assert special == "<|im_start|>"
        token = page.locator('[data-testid="prompt-text"] [data-testid="token-1"]')
        token.hover()
        assert hook(page, "hover-info").text_content() == f"token 1 · id {tokenized['input_ids'][1]}"
        if screenshot:
            page.screenshot(path=screenshot, full_page=True)
    else:
        assert tokens == []
        assert page.locator('[data-testid="prompt-text"] .trained').count() > 0

    # Continuing the final message instead.
    hook(page, "add-generation-prompt").uncheck()
    hook(page, "continue-final-message").check()
    wait_rendered(page)
    continued = cli_json("render", "--model", source, "--messages", str(messages), "--json", "--continue-final-message")
    assert hook(page, "prompt-text").text_content() == continued["text"]
    hook(page, "continue-final-message").uncheck()

    # A broken template: the error at the line and column the CLI reports.
    hook(page, "template-input").fill(BROKEN)
    wait_rendered(page)
    template = tmp / "broken.jinja"
    template.write_text(BROKEN, encoding="utf-8")
    failed = cli("render", "--model", source, "--template", str(template), "--messages", str(messages))
    assert failed.returncode == 2
    where = re.search(r"line (\d+), column (\d+)", failed.stderr.decode())
    assert where, failed.stderr.decode()
    error = hook(page, "template-error")
    assert error.is_visible()
    assert f"line {where.group(1)}, column {where.group(2)}" in error.text_content()
    marked = page.locator('[data-testid="template-lines"] li.error-line')
    assert marked.count() == 1
    index = page.evaluate(
        "() => Array.from(document.querySelectorAll('[data-testid=\"template-lines\"] li')).findIndex((li) => li.classList.contains('error-line'))"
    )
    assert index + 1 == int(where.group(1))

    # Fixed, the pasted template renders as the CLI renders it.
    fixed = BROKEN.replace("{{ m.content | upper }", "{{ messages[0].content | upper }}")
    hook(page, "template-input").fill(fixed)
    wait_rendered(page)
    assert not error.is_visible()
    template.write_text(fixed, encoding="utf-8")
    pasted = cli_json("render", "--model", source, "--template", str(template), "--messages", str(messages), "--json")
    assert hook(page, "prompt-text").text_content() == pasted["text"]


@pytest.fixture()
def browser():
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, timeout=PAGE_TIMEOUT_MS)
        try:
            yield b
        finally:
            b.close()


def new_page(browser):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.set_default_timeout(PAGE_TIMEOUT_MS)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    return page, errors


def test_the_page_matches_the_cli_for_both_models(browser):
    qwen3 = kit_dir("tokens/tokenizers/qwen3")
    chatml = REPO / "examples" / "chatml-model"
    server = Server("--model", f"chatml={chatml}", "--model", f"qwen3={qwen3}")
    try:
        page, errors = new_page(browser)
        page.goto(server.url + "/")
        wait_rendered(page)
        names = hook(page, "model-select").locator("option").evaluate_all("(os) => os.map((o) => o.value)")
        assert names == ["chatml", "qwen3"]
        with tempfile.TemporaryDirectory() as tmp:
            screenshot = os.environ.get("CHATFMT_PLAYGROUND_SCREENSHOT")
            check_model(page, "chatml", str(chatml), False, pathlib.Path(tmp), None)
            check_model(page, "qwen3", str(qwen3), True, pathlib.Path(tmp), screenshot)
        assert errors == []
    finally:
        server.close()


def test_the_page_loads_without_the_key_and_asks_for_it(browser):
    chatml = REPO / "examples" / "chatml-model"
    server = Server("--model", f"chatml={chatml}", "--api-key", "s3cret")
    try:
        page, errors = new_page(browser)
        page.goto(server.url + "/")
        wait_rendered(page)
        assert "API key" in hook(page, "render-error").text_content()
        assert hook(page, "prompt-text").text_content() == ""
        hook(page, "api-key").fill("s3cret")
        hook(page, "api-key").press("Enter")
        hook(page, "api-key").blur()
        wait_rendered(page)
        page.wait_for_function("document.querySelector('[data-testid=\"prompt-text\"]').textContent !== ''")
        assert hook(page, "prompt-text").text_content().startswith("<|im_start|>system\n")
        assert errors == []
    finally:
        server.close()
