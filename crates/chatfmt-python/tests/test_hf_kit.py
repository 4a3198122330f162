"""Every case of the Hugging Face kit through ``Tokenizer.apply_chat_template(tokenize=False)``: the
text, or the error class and message, equal transformers' goldens."""

import builtins
import json

import chatfmt
from conftest import error_record, kit_dir, read_jsonl

HF_CASES = 6248


def model_folder(tmp_path, kit, template_id, special, cache):
    """A model folder holding the kit template (or named set) and the case's special tokens."""
    key = (template_id, json.dumps(special, sort_keys=True))
    if key in cache:
        return cache[key]
    folder = tmp_path / f"m{len(cache)}"
    folder.mkdir()
    if template_id in kit["sets"]:
        template = [{"name": n, "template": kit["sources"][t]} for n, t in kit["sets"][template_id].items()]
    else:
        template = kit["sources"][template_id]
    config = {"chat_template": template, **special}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    cache[key] = chatfmt.Tokenizer.from_pretrained(folder)
    return cache[key]


def load_kit():
    d = kit_dir("hf")
    index = json.loads((d / "index.json").read_text(encoding="utf-8"))
    scenarios = json.loads((d / "scenarios.json").read_text(encoding="utf-8"))
    sources = {
        t["id"]: (d / "corpus" / t["file"]).read_bytes().decode("utf-8") for t in index["templates"]
    }
    sets = {s["id"]: s["templates"] for s in index.get("named_template_sets", [])}
    return {
        "sources": sources,
        "sets": sets,
        "scenarios": scenarios["scenarios"],
        "frozen_now": scenarios["frozen_now"],
        "goldens": read_jsonl(d / "goldens.jsonl"),
    }


def check_class(e: BaseException, name: str) -> bool:
    """A builtin class is raised as itself; a Jinja class as chatfmt's (a TemplateError)."""
    builtin = getattr(builtins, name, None)
    if isinstance(builtin, type) and issubclass(builtin, BaseException):
        return type(e) is builtin
    return type(e) is getattr(chatfmt, name, None) and isinstance(e, chatfmt.TemplateError)


def test_hf_kit_through_python(tmp_path):
    kit = load_kit()
    cache = {}
    failures = []
    ran = 0
    with chatfmt.clock(kit["frozen_now"]):
        for g in kit["goldens"]:
            ran += 1
            scenario = kit["scenarios"][g["scenario"]]
            opts = g["options"]
            tok = model_folder(tmp_path, kit, g["template"], g["special_tokens"], cache)
            try:
                got = {
                    "status": "ok",
                    "output": tok.apply_chat_template(
                        scenario["messages"],
                        tools=scenario.get("tools"),
                        documents=scenario.get("documents"),
                        chat_template=opts.get("chat_template"),
                        add_generation_prompt=opts.get("add_generation_prompt", False),
                        continue_final_message=opts.get("continue_final_message", False),
                        tokenize=False,
                        **opts.get("kwargs", {}),
                    ),
                }
            except Exception as e:  # noqa: BLE001 - every failure is compared with the golden
                got = {"status": "raised", "error": error_record(e)}
                if g["status"] == "raised" and not check_class(e, g["error"]["name"]):
                    got["error"]["name"] = f"{type(e).__module__}.{type(e).__qualname__}"
            if g["status"] == "ok":
                want = {"status": "ok", "output": g["output"]}
            else:
                want = {"status": "raised", "error": {"name": g["error"]["name"], "message": g["error"]["message"]}}
            if got != want:
                failures.append((g["template"], g["scenario"], opts, want, got))
    assert ran == HF_CASES
    summary = "\n".join(f"{t} / {s} / {o}:\n  want {str(w)[:300]}\n  got  {str(gt)[:300]}" for t, s, o, w, gt in failures[:20])
    assert not failures, f"{len(failures)} of {ran} cases differ:\n{summary}"
