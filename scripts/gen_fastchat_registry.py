#!/usr/bin/env python3
"""Generate chatfmt's FastChat template registry from the conformance kit.

Reads the kit's `templates.json` (the facts extracted from FastChat's conversation.py) and writes
`crates/chatfmt-fastchat/data/fastchat_templates.json` in chatfmt's own schema (see
`crates/chatfmt-fastchat/src/registry.rs`):

    {"source": str, "templates": [{"name", "system_template", "system_message",
      "system_message_vision", "roles", "messages": [[role, text]], "offset",
      "sep_style": STYLE_NAME | null, "sep", "sep2", "stop_str": null | str | [str],
      "stop_token_ids": null | [int], "max_image_size_mb": null | number}]}

Usage: scripts/gen_fastchat_registry.py [KIT_DIR] [OUT_FILE]
KIT_DIR defaults to $CHATFMT_KITS/fastchat, else ../shared/conformance/fastchat beside the repo.
"""
import json
import os
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIELDS = [
    "name",
    "system_template",
    "system_message",
    "system_message_vision",
    "roles",
    "messages",
    "offset",
    "sep_style",
    "sep",
    "sep2",
    "stop_str",
    "stop_token_ids",
    "max_image_size_mb",
]


def default_kit():
    kits = os.environ.get("CHATFMT_KITS")
    if kits:
        return os.path.join(kits, "fastchat")
    return os.path.join(os.path.dirname(REPO), "shared", "conformance", "fastchat")


def convert(kit):
    with open(os.path.join(kit, "templates.json"), encoding="utf-8") as f:
        src = json.load(f)
    styles = [s["name"] for s in src["separator_styles"]]
    out = []
    for t in sorted(src["templates"], key=lambda t: t["registry_index"]):
        rec = {k: t[k] for k in FIELDS}
        if rec["sep_style"] is not None and rec["sep_style"] not in styles:
            raise SystemExit(f"{t['name']}: unknown style {rec['sep_style']}")
        rec["messages"] = [[role, text] for role, text in t["messages"]]
        out.append(rec)
    if len(out) != src["template_count"]:
        raise SystemExit("template count mismatch")
    return {"source": src["source"], "templates": out}


def main():
    kit = sys.argv[1] if len(sys.argv) > 1 else default_kit()
    dest = (
        sys.argv[2]
        if len(sys.argv) > 2
        else os.path.join(REPO, "crates", "chatfmt-fastchat", "data", "fastchat_templates.json")
    )
    data = convert(kit)
    with open(dest, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(data['templates'])} templates to {dest}")


if __name__ == "__main__":
    main()
