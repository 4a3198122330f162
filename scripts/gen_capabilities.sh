#!/usr/bin/env bash
# Regenerates docs/CAPABILITIES.md: `chatfmt check` over every template of the hf kit's corpus
# (kits from $CHATFMT_KITS, else ../shared/conformance). The test `check_kit` fails when it is stale.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release -q -p chatfmt-cli -- check --hf-kit --markdown > docs/CAPABILITIES.md || [ $? -eq 1 ]
echo "wrote docs/CAPABILITIES.md"
