"""Writes pydantic_lax.json: what pydantic's lax mode makes of JSON values for `int`, `bool` and
`float` fields, as vLLM and SGLang validate a request (`Model.model_validate(json.loads(body))`).

Run with pydantic 2.13 (pydantic-core 2.46): python3 gen_pydantic_lax.py > pydantic_lax.json
"""

import json
import math
import sys

import pydantic
from pydantic import BaseModel, ValidationError

# Each JSON text is one field value.
INPUTS = [
    # numbers
    "0", "1", "2", "-1", "-0", "-0.0", "0.0", "1.0", "-1.0", "2.0", "0.5", "1.5", "-1.5", "1e3", "1E2",
    "9707", "9707.0", "9.2e18", "9.3e18", "-9.3e18", "1e19", "1e300",
    "9223372036854775807", "-9223372036854775808",
    # other JSON types
    "true", "false", "null", "[]", "{}", "[1]", '{"a": 1}',
    # integer strings
    '"9707"', '" 9707 "', '"\\t12\\n"', '"\\u00a012"', '"\\u300012"', '"\\u001c12"', '"\\u200b12"',
    '"+5"', '"-5"', '"+-5"', '"-+5"', '"--5"', '" + 5"', '"- 5"', '"-0"', '"+0"', '"00"', '"0009"', '"-007"',
    '"1_000"', '"1__000"', '"_1"', '"1_"', '"0_1"', '"0__0"', '"0-10"', '"0_-1"', '"-_1"',
    '"9707.0"', '"9707.00"', '"9707."', '"9707.5"', '"1.0_0"', '"1_0.00"', '"1_0."', '".0"', '"0."', '"0.0"',
    '"1e3"', '"0x10"', '"1 000"', '"\\u0661"', '"\\uff11"', '""', '"  "', '"abc"',
    # boolean strings
    '"true"', '"True"', '"TRUE"', '"tRuE"', '"false"', '"yes"', '"YES"', '"no"', '"on"', '"On"', '"off"',
    '"y"', '"n"', '"t"', '"f"', '"F"', '"1"', '"0"', '"2"', '"1.0"', '" true"', '"true "', '"ye"', '"none"',
    '"\\u0130"',
    # float strings
    '"1.5"', '" 1.5 "', '"1.5\\u3000"', '"1."', '".5"', '"+1.5"', '"1e"', '"1e+5"', '"1e400"', '"1.5e-400"',
    '"inf"', '"-inf"', '"+inf"', '"INF"', '"infinity"', '"iNfInItY"', '"infin"', '"nan"', '"-nan"', '"NaN"',
    '"nan(1)"', '"1_5.2_5"', '"1_e5"', '"1._5"', '"1_0 "', '"1.5f"', '"1,5"',
]


class Int(BaseModel):
    v: int


class Bool(BaseModel):
    v: bool


class Float(BaseModel):
    v: float


def outcome(model, value):
    try:
        got = model.model_validate({"v": value}).v
    except ValidationError as e:
        return {"error": e.errors()[0]["msg"]}
    if isinstance(got, float) and not math.isfinite(got):
        got = repr(got)  # 'inf', '-inf', 'nan'
    return {"value": got}


cases = [
    {"json": text, **{t: outcome(m, json.loads(text)) for t, m in [("int", Int), ("bool", Bool), ("float", Float)]}}
    for text in INPUTS
]
source = (
    f"pydantic {pydantic.VERSION}: models with one field v: int / bool / float, each JSON text validated "
    "with model_validate({'v': json.loads(text)}); written by gen_pydantic_lax.py"
)
lines = ",\n".join("  " + json.dumps(c, ensure_ascii=True) for c in cases)
sys.stdout.write(f'{{\n "source": {json.dumps(source)},\n "cases": [\n{lines}\n ]\n}}\n')
