"""Every case of the tokens kit through ``Tokenizer.apply_chat_template(tokenize=True)`` (and the naive
``tok(apply_chat_template(tokenize=False))`` path): text, ids, attention and assistant masks, or the error
class and message, equal transformers' goldens."""

import json

import chatfmt
from conftest import error_record, kit_dir, read_jsonl
from test_hf_kit import check_class

TOKENS_CASES = 1579


def test_tokens_kit_through_python():
    d = kit_dir("tokens")
    index = json.loads((d / "index.json").read_text(encoding="utf-8"))
    scen = json.loads((d / index["scenarios_file"]).read_text(encoding="utf-8"))
    scenarios = dict(scen["scenarios"])
    scenarios.update(json.loads((d / index["extra_scenarios_file"]).read_text(encoding="utf-8"))["scenarios"])
    dirs = {t["name"]: d / t["dir"] for t in index["tokenizers"]}
    pairings = {(p["tokenizer"], p["template"]): p for p in index["pairings"]}
    tokenizers = {}
    failures = []
    ran = 0
    with chatfmt.clock(scen["frozen_now"]):
        for g in read_jsonl(d / "goldens.jsonl"):
            ran += 1
            opts = g["options"]
            overrides = opts.get("tokenizer_overrides") or {}
            key = (g["tokenizer"], json.dumps(overrides, sort_keys=True))
            if key not in tokenizers:
                tok = chatfmt.Tokenizer.from_pretrained(dirs[g["tokenizer"]])
                for name, value in overrides.items():
                    setattr(tok, name, value)
                tokenizers[key] = tok
            tok = tokenizers[key]
            pairing = pairings[(g["tokenizer"], g["template"])]
            source = None
            if g["template"] != "own":
                source = (d / pairing["template_file"]).read_bytes().decode("utf-8")
            ids = g["scenario"] if isinstance(g["scenario"], list) else [g["scenario"]]
            convs = [scenarios[s]["messages"] for s in ids]
            first = scenarios[ids[0]]
            sanitize = opts.get("sanitize_control_tokens", False)
            naive = opts.get("encode") == "tokenizer(text)"
            masks = pairing["generation_tags"] and not opts.get("continue_final_message") and not sanitize and not naive
            call = dict(
                tools=first.get("tools"),
                documents=first.get("documents"),
                chat_template=source,
                add_generation_prompt=opts.get("add_generation_prompt", False),
                continue_final_message=opts.get("continue_final_message", False),
                **opts.get("kwargs", {}),
            )
            conversation = convs if isinstance(g["scenario"], list) else convs[0]
            want = {"status": g["status"]}
            if g["status"] == "ok":
                want.update({k: g[k] for k in ("text", "input_ids", "attention_mask") if k in g})
                if "assistant_masks" in g:
                    want["assistant_masks"] = g["assistant_masks"]
            else:
                want["error"] = {"name": g["error"]["name"], "message": g["error"]["message"]}
            try:
                text = tok.apply_chat_template(conversation, tokenize=False, **call)
                if naive:
                    out = tok(text)
                else:
                    out = tok.apply_chat_template(
                        conversation,
                        tokenize=True,
                        return_dict=True,
                        return_assistant_tokens_mask=masks,
                        padding=opts.get("padding", False),
                        truncation=opts.get("truncation", False),
                        max_length=opts.get("max_length"),
                        tokenizer_kwargs=opts.get("tokenizer_kwargs"),
                        sanitize_control_tokens=sanitize,
                        **call,
                    )
                got = {"status": "ok", "text": text, "input_ids": out["input_ids"], "attention_mask": out["attention_mask"]}
                if "assistant_masks" in want:
                    got["assistant_masks"] = out.get("assistant_masks")
            except Exception as e:  # noqa: BLE001 - every failure is compared with the golden
                got = {"status": "raised", "error": error_record(e)}
                if g["status"] == "raised" and not check_class(e, g["error"]["name"]):
                    got["error"]["name"] = f"{type(e).__module__}.{type(e).__qualname__}"
            if tok.special_tokens_map != g["special_tokens"]:
                got["special_tokens"] = tok.special_tokens_map
            if got != want:
                failures.append((g["tokenizer"], g["template"], g["scenario"], opts, want, got))
    assert ran == TOKENS_CASES
    summary = "\n".join(
        f"{t} / {tp} / {s} / {o}:\n  want {str(w)[:300]}\n  got  {str(gt)[:300]}" for t, tp, s, o, w, gt in failures[:20]
    )
    assert not failures, f"{len(failures)} of {ran} cases differ:\n{summary}"
