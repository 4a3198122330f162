#!/usr/bin/env python3
"""Write the CPython 3.11 results the pystr unit tests compare with.

    python3 scripts/gen_pystr_cases.py

Each case family becomes `crates/chatfmt-jinja/tests/data/pystr/<family>.jsonl`: one JSON array per
line, one case per array (its fields are listed in that family's comment below). Python values in
the cases are written as:

- `str`, `int`, `bool` and `None` as JSON strings, integers, booleans and `null`;
- a `float` as `{"float": BITS}`, BITS being its IEEE 754 bit pattern as an unsigned integer (bare
  float bit patterns in a field documented as "bits" are such integers too);
- a `list` / `tuple` as `{"list": [...]}` / `{"tuple": [...]}`, a `dict` as `{"dict": [[key, value], ...]}`
  in insertion order, any other object as `{"object": TYPE_NAME}`;
- a result as `{"ok": VALUE}` or `{"err": [CLASS, MESSAGE]}` (`{"err": MESSAGE}` where only the message is
  kept); a string result holding a lone surrogate, which Rust cannot represent, as
  `{"err": ["ValueError", "lone surrogate"]}`;
- an optional argument left out as `null`.
"""
import calendar
import json
import os
import random
import struct
import sys

assert sys.version_info[:2] == (3, 11), sys.version

OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "crates", "chatfmt-jinja", "tests", "data", "pystr")
os.makedirs(OUT_DIR, exist_ok=True)


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def table(name, rows):
    """Writes one case family, one JSON array per line."""
    with open(os.path.join(OUT_DIR, name + ".jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


def err_or(f):
    """('Ok', value) or ('Err', kind, message)."""
    try:
        return ("Ok", f())
    except Exception as e:  # noqa: BLE001
        return ("Err", type(e).__name__, str(e))


def has_surrogate(r):
    """Whether a result holds a lone surrogate (not representable in Rust)."""
    return r[0] == "Ok" and isinstance(r[1], str) and any(0xD800 <= ord(c) < 0xE000 for c in r[1])


def res(r, conv=lambda v: v):
    if has_surrogate(r):
        return {"err": ["ValueError", "lone surrogate"]}
    if r[0] == "Ok":
        return {"ok": conv(r[1])}
    return {"err": [r[1], r[2]]}


random.seed(1234)

# ---------------------------------------------------------------- floats
FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2 + 0.1, 1e16, 1e15, 1e-5, 1e-4, 0.0001234, 5e-324,
          1.7976931348623157e308, float("inf"), float("-inf"), float("nan"), 2.5, 1 / 3, 100.0,
          1e22, 1e-7, -1.5e-10, 9999999999999998.0, 123456789012345680.0, 1234567890123456.7,
          2.675, 0.5, 1.5, 1e100, 1.2345e-300, 3.14159, -273.15, 65536.0, 1e21, 12345.678]
FLOATS += [random.uniform(-1e6, 1e6) for _ in range(20)]
FLOATS += [struct.unpack("<d", struct.pack("<Q", random.getrandbits(64)))[0] for _ in range(30)]
FLOATS += [random.random() * 10 ** random.randint(-30, 30) for _ in range(30)]
# Values with short binary fractions: many are exact ties between two shortest candidates.
FLOATS += [(2**52 + random.getrandbits(52)) / 2 ** random.randint(1, 12) for _ in range(1500)]
FLOATS += [struct.unpack("<d", struct.pack("<Q", random.getrandbits(64)))[0] for _ in range(1500)]
# (float bits, repr, json.dumps)
table("float", [[bits(x), repr(x), json.dumps(x)] for x in FLOATS])

# ---------------------------------------------------------------- strings
STRS = ["", "a", "hello world", "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\there",
        "new\nline\r\n", "\x00\x01\x1f\x7f", "é日本😀", "\xa0\u200b\x85\u2028\u2029", "\ud7ff\ue000\uffff",
        "\U0010ffff\U000e0001", "caf\u00e9 \u0301", "\u0378", "ß İ ﬁ ǆ Σ", "\x1c\x1d\x1e\x1f",
        "\u3000 \u00ad", "\x80\x9f\xa0\xff", "\\x41", "''\"", "\u180e\u061c\ufeff"]
# (input, repr, ascii)
table("repr", [[s, repr(s), ascii(s)] for s in STRS])
# (input, json ensure_ascii=True, json ensure_ascii=False)
table("json_str", [[s, json.dumps(s), json.dumps(s, ensure_ascii=False)] for s in STRS + ["\b\f/<>&"]])


# ---------------------------------------------------------------- methods
SAMPLES = ["", " ", "a", "  hello  world  ", "\t\na b\x1c c\x85d\xa0e\u3000 ", "a,b,,c,", ",", "ab" * 4,
           "xxhixx", "ß日本ß語ß", "one\ntwo\r\nthree\rfour\x0bfive\x0c\x1c\x1d\x1e\x85\u2028\u2029end",
           "trailing\n", "\n\n", "\r\n\r", "mississippi", "😀a😀b😀", "+42", "-7", "a\tb\tc\n\txy\r\tz",
           "\u200bzero\u200bwidth"]
CHARSETS = [None, "", " ", "ax", "x", "ß", "😀", "\n "]
rows = []
for x in SAMPLES:
    for c in CHARSETS:
        rows.append([x, c, x.strip(c), x.lstrip(c), x.rstrip(c)])
# (s, chars, strip, lstrip, rstrip)
table("strip", rows)

SEPS = [None, "", ",", " ", "ss", "ß", "😀", "\n", "xx", "abab"]
rows = []
for x in SAMPLES:
    for sep in SEPS:
        for m in [-1, 0, 1, 2, 100]:
            rows.append([x, sep, m, res(err_or(lambda: x.split(sep, m))), res(err_or(lambda: x.rsplit(sep, m)))])
# (s, sep, maxsplit, split, rsplit)
table("split", rows)

rows = [[x, x.splitlines(), x.splitlines(True)] for x in SAMPLES]
# (s, splitlines(), splitlines(True))
table("splitlines", rows)

SUBS = ["", "a", "ss", "ß", "😀", "hello", "xx", "abab", "\n", "iss"]
IDX = [None, 0, 1, 2, -1, -3, 5, 100, -100]
rows = []
for x in SAMPLES:
    for sub in SUBS:
        for st, en in [(None, None), (1, None), (-2, None), (0, 3), (2, -1), (5, 2), (100, None), (None, -100), (-100, 100), (3, 3), (len(x), None), (len(x) + 1, None)]:
            rows.append([x, sub, st, en, x.startswith(sub, st, en), x.endswith(sub, st, en),
                         x.find(sub, st, en), x.rfind(sub, st, en), x.count(sub, st, en)])
# (s, sub, start, end, startswith, endswith, find, rfind, count)
table("find", rows)

rows = []
for x in SAMPLES:
    for old in ["", "a", "ss", "ß", "😀", "\n", "xx"]:
        for new in ["", "-", "ØØ"]:
            for c in [-1, 0, 1, 2, 100]:
                rows.append([x, old, new, c, x.replace(old, new, c)])
# (s, old, new, count, replace)
table("replace", rows)


rows = []
for x in SAMPLES:
    for sep in SEPS[1:]:
        rows.append([x, sep, res(err_or(lambda: x.partition(sep)), list), res(err_or(lambda: x.rpartition(sep)), list), x.removeprefix(sep), x.removesuffix(sep)])
# (s, sep, partition, rpartition, removeprefix, removesuffix)
table("partition", rows)

rows = []
for x in SAMPLES[:10] + ["+42", "-7", "+", "ab", "abc"]:
    for width in [-5, 0, 1, 5, 6, 7, 8, 20]:
        for fill in [None, "*", "ß", "", "ab"]:
            rows.append([x, width, fill, res(err_or(lambda: x.center(width, *([fill] if fill is not None else [])))),
                         res(err_or(lambda: x.ljust(width, *([fill] if fill is not None else [])))), res(err_or(lambda: x.rjust(width, *([fill] if fill is not None else [])))), x.zfill(width)])
# (s, width, fillchar, center, ljust, rjust, zfill)
table("just", rows)

rows = []
for x in SAMPLES:
    for t in [-1, 0, 1, 4, 8]:
        rows.append([x, t, x.expandtabs(t)])
# (s, tabsize, expandtabs)
table("expandtabs", rows)

# ---------------------------------------------------------------- case
CASE_STRS = SAMPLES + ["hello WORLD", "they're bill's friends", "ß straße", "İstanbul İ", "ΣΑΣ ΟΔΥΣΣΕΥΣ", "Σ", "aΣ", "aΣb",
                       "aΣ.", "a.Σ", "aΣ'", "ab\u0301Σ\u0301", "AΣ\u0301b", "ﬁ ﬂ ﬀ ﬃ ŉ", "ǆ ǅ Ǆ ǉ ǈ", "ǆemal ǅemal",
                       "hello2world 3rd", "ǰ ΐ ᾳ ᾼ ﬓ", "123", "²³½", "五", "١٢٣", "Ⅻ ⅻ", "_private", "2abc", "a b",
                       "mIxEd CaSe", "ÀÉÎÕÜ àéîõü", "ꭰꭱ Ꭰ", "𐐀𐐨", "ǅa", "Aǅ", "ᾈ", "ﬀ", "\u0345", "ΑΣ\u0345",
                       "a1", "A1 B2", "hello, world!", "Title Case String", "Not a Title", "ÉCOLE", "école", "ⓐⓑ ⒶⒷ",
                       "\u00b5\u017f\u1e9e", "K Å Ω", "x\u0307", "I\u0307", "\u1f80\u1f88", "ß".upper()]
rows = [[x, x.upper(), x.lower(), x.capitalize(), x.title(), x.swapcase(), x.casefold()] for x in CASE_STRS]
# (s, upper, lower, capitalize, title, swapcase, casefold)
table("case", rows)

PREDS = [str.isalpha, str.isdigit, str.isdecimal, str.isnumeric, str.isalnum, str.isspace, str.isupper, str.islower,
         str.istitle, str.isidentifier, str.isprintable, str.isascii, lambda x: x == ""]


def mask(x):
    return sum(1 << i for i, p in enumerate(PREDS) if p(x))


PRED_STRS = CASE_STRS + ["", "abc", "ABC", "Abc", "aBC", "abc123", "12.5", " \t", "\u200b", "Ǆ", "ǅ", "ǆ", "ǅa", "Aǅ",
                         "if", "ℌ", "℘x", "x·", "·x", "٠", "\u0660\u06f0", "೦", "𝟘", "①", "¼", "〇", "a\u0300"]
for cp in random.sample(range(0x30000), 3000) + list(range(0, 0x300)):
    if not 0xD800 <= cp < 0xE000:
        PRED_STRS.append(chr(cp))
rows = [[x, mask(x)] for x in PRED_STRS]
# (s, bit i set when predicate i holds: isalpha isdigit isdecimal isnumeric isalnum isspace isupper islower
# istitle isidentifier isprintable isascii is-empty)
table("predicate", rows)

# ---------------------------------------------------------------- percent


def arg(v):
    """A format argument: a str, int, bool, float or None."""
    if isinstance(v, float):
        return {"float": bits(v)}
    if v is None or isinstance(v, (bool, int, str)):
        return v
    raise TypeError(v)


def args(vs):
    return [arg(v) for v in vs]


NUMS = [0, 1, -1, 42, -42, 255, 123456789, -2**63, 2**63 - 1, True, False, 0.0, -0.0, 1.5, -2.5, 2.675, 1e-5, 123456.789,
        1e16, 1e100, -1e-300, float("inf"), float("-inf"), float("nan"), 0.1, 999.9999, 5e-324]
VALS = NUMS + ["", "x", "hello", "é😀", "it's", None, "\n"]
PFMTS = ["%s", "%r", "%a", "%d", "%i", "%u", "%o", "%x", "%X", "%e", "%E", "%f", "%F", "%g", "%G", "%c",
         "%5s", "%-5s|", "%.2s", "%5.1s", "%05d", "%-5d|", "%+d", "% d", "%+ d", "%.3d", "%8.3d", "%-+8.3d|", "%#o", "%#x",
         "%#X", "%#08x", "%-#8x|", "%.10f", "%.0f", "%#.0f", "%.0e", "%#.0e", "%.3e", "%12.4e", "%-12.4e|", "%+.2f",
         "%010.3f", "%-010.3f|", "% f", "%.0g", "%.1g", "%.3g", "%#.3g", "%.10g", "%#g", "%g", "%.20g", "%015.6g",
         "%.17g", "%.50f", "%5c", "%-3c|", "%y", "%", "%5", "%.", "%05s", "%+s", "%.1r", "%#5d", "%0-5d|", "%.0d", "%.0x",
         "%ld", "%hd", "%Lf", "%lx", "%5.2lf", "%ls", "%lld", "%l", "%hl", "%l%"]
rows = []
for f in PFMTS:
    for v in VALS:
        rows.append([f, "single", args([v]), [], res(err_or(lambda: f % (v,)))])
MULTI = [("%s %s", (1, 2)), ("%s %s", (1,)), ("%s", (1, 2)), ("", ()), ("", (1,)), ("abc", ()), ("%%", ()),
         ("%s%%%s", ("a", "b")), ("%*d", (5, 42)), ("%-*d|", (5, 42)), ("%*d", (-5, 42)), ("%.*f", (2, 3.14159)),
         ("%.*f", (-2, 3.14159)), ("%*.*f", (10, 3, 2.5)), ("%*s", ("a", 1)), ("%.*f", (1.5, 2.0)), ("%*d", (True, 5)),
         ("%5%", (1,)), ("%5%", ()), ("%s %d %f %r", ("a", 2, 3.0, "b")), ("%c%c%c", (72, "i", 0x1F600)),
         ("%c", (0x110000,)), ("%c", (-1,)), ("%c", ("ab",)), ("%c", (1.0,)), ("%d%%", (50,)), ("a%\x01", (1,)),
         ("ü%é", (1,)), ("%\x1f", (1,)), ("%\x1e", (1,)), ("%\x7f", (1,)), ("% \x1f", (1,)), ("%(a)s", (1,)), ("%s" * 3, (1, 2, 3)), ("%.3s|%-6.2r|", ("hello", "hi")), ("%x", (1.5,)),
         ("%d", ("5",)), ("%f", ("x",)), ("%f", (None,)), ("%s %s", (None, True)), ("%0*d", (6, -42)), ("%-0*.*f|", (9, 2, -1.005))]
for f, t in MULTI:
    rows.append([f, "tuple", args(t), [], res(err_or(lambda: f % t))])
for f, v in [("%s", 5), ("", 5), ("%s %s", 5), ("%d", "x")]:
    rows.append([f, "single", args([v]), [], res(err_or(lambda: f % v))])
DICTS = [("%(a)s", {"a": 1}), ("%(a)s %(b)r", {"a": "x", "b": "y"}), ("%(a)s", {}), ("%(a)s %s", {"a": 1}), ("%s %(a)s", {"a": 1}),
         ("%s", {"a": 1}), ("", {"a": 1}), ("%(a)05.1f", {"a": 2.25}), ("%(a(b))s", {"a(b)": 3}), ("%(a", {"a": 1}),
         ("%(x)%", {"x": 1}), ("%(x)%", {}), ("%(a)*d", {"a": 1}), ("%(a)s%(a)s", {"a": "é"}), ("%()s", {"": "empty"}),
         ("%(a)d", {"a": "s"}), ("%(a)ld", {"a": 3})]
for f, d in DICTS:
    rows.append([f, "dict", args(list(d.values())), list(d.keys()), res(err_or(lambda: f % d))])
# (fmt, "tuple" / "single" / "dict", values, dict keys, fmt % args)
table("percent", rows)

# ---------------------------------------------------------------- format spec
SPECS = ["", "s", "d", "5", "<5", ">5", "^5", "^6", "=5", "*^7", "é>4", "05", "010", "+", "-", " ", "+5", "=+8", "08", "<08",
         ",", "_", ",d", "_d", "010,", "09,", "08,", "0=10,", "x=10,", "_b", "_x", "_o", "_X", ",x", "#x", "#X", "#o", "#b",
         "#010x", "#010b", "b", "o", "x", "X", "c", "5c", "05c", "+c", "#c", "n", ",n", "n,", "e", "E", ".3e", "#.0e", "f", "F",
         ".2f", ".0f", "#.0f", "g", "G", ".3g", "#.3g", "#g", ".0", ".1", ".2", ".3", ".5", ".10", ".17", "#", "#.0", "%", ".1%",
         ",.2%", "z", "z.2f", "z.0f", "ze", "+.3", "010.3f", "=+12,.1f", "_.3f", ",.2f", "^+15,.3e", ".", ".x", "abc", ",,",
         ",_", "_,", "99999999999999999999", ".99999999999999999999", "\x01", "é", "0000005", "00", ".1s", ">10.3s", "+s",
         "#s", "=s", "zs", " s", "\x7f", ",\x7f", ",\x1f", " \x7f", "10", "-10", " 10", "+010", "-08.3f", "0<5", "0>5", "0^5", "0=5"]
FVALS = [0, 1, -1, 42, -42, 255, 1234, -1234567, 123456789, 65, 0x1F600, 0x110000, -2**63, 2**63 - 1, True, False,
         0.0, -0.0, 1.0, -1.5, 2.5, 0.125, 1234.5, -1234.5, 1234567.891, 1e16, 1e-5, 123.0, 100.0, 2.675, 1e300, -1e-300,
         5e-324, 0.1, -0.0001, float("inf"), float("-inf"), float("nan"), "", "a", "abc", "héllo wörld", "😀", None]
rows = []
for sp in SPECS:
    for v in FVALS:
        rows.append([sp, arg(v), res(err_or(lambda: format(v, sp)))])
rows.append(["c", arg(0xDF24), res(err_or(lambda: format(0xDF24, "c")))])
# (spec, value, format(value, spec))
table("format_spec", rows)

FSTRS = ["", "abc", "{}", "{0}{1}", "{}{}", "{0}{}", "{}{0}", "{a}", "{0[x}", "{0.}", "{!r}", "{0!}", "{0!x}", "{0!rr}",
         "{0!r:>5}", "{:{}}", "{:{}{}}", "{:{:{}}}", "{{}}", "}", "{", "a}}b", "{0:}}", "{ 0 }", "{-1}", "{99999999999999999999}",
         "{0:{{}}}", "{:}", "{0!\x01}", "{0!é}", "{a{b}", "x{0:{1}}y{2!s:{3}<{4}}", "{2}", "{:{}}{}", "{0:{1}}{}", "{a b}",
         "{!r:}", "{:x<{}}", "{0!a}", "{0!s:^9}", "{0}{0}{1}", "{b}{a}{b}", "{{{0}}}", "{{0}}", "}}{{", "{0:{a}}", "{0!r",
         "{0:", "{0", "é{0}ü", "{}{}{}{}{}{}", "{0:>{1}.{2}}", "{:.{}f}", "{a:{b}}", "{:{}}}", "{0::}", "{0:!r}", "{0!:}",
         "{0[]}", "{0[0]x}", "{0[2]}{0[0]}", "{0!\x7f}", "{0! }"]
FARGS = ("x", 5, 2.5, "<", 7, "ü")
FKW = {"a": "A", "b": 3}
rows = []
for f in FSTRS:
    rows.append([f, res(err_or(lambda: f.format(*FARGS, **FKW)))])
# (format string, fmt.format('x', 5, 2.5, '<', 7, 'ü', a='A', b=3))
table("format", rows)

# ---------------------------------------------------------------- strftime
from datetime import datetime, timedelta, timezone  # noqa: E402

DATES = [datetime(2024, 2, 29, 13, 5, 9, 1234), datetime(5, 1, 1), datetime(99, 12, 31, 23, 59, 59),
         datetime(999, 6, 15, 0, 0, 0, 500000), datetime(1000, 1, 1, 12, 0, 0), datetime(1969, 12, 31, 23, 59, 59, 999999),
         datetime(2017, 1, 1, 11, 59, 59), datetime(2023, 1, 1), datetime(2020, 12, 31, 1), datetime(2021, 1, 3),
         datetime(2026, 12, 28), datetime(2015, 12, 31), datetime(2016, 1, 1), datetime(2000, 2, 29), datetime(1900, 3, 1),
         datetime(9999, 12, 31, 23, 59, 59, 999999), datetime(1, 1, 1), datetime(2009, 12, 31), datetime(2010, 1, 4),
         datetime(2024, 7, 4, 0, 30)]
TZS = [None, timezone.utc, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-1, minutes=-30)),
       timezone(timedelta(seconds=-3725)), timezone(timedelta(seconds=3725, microseconds=5))]
SFMTS = ["%Y-%m-%d %H:%M:%S", "%a %A %b %B %h", "%c", "%x", "%X", "%D", "%F", "%T", "%R", "%r", "%C %y %Y %g %G",
         "%d %e %-d %-m %_m %0e %-e", "%H %I %k %l %-H %-I %_k %0l", "%j %-j %_j %3j %1j %5j", "%U %W %V %u %w",
         "%p %P %^p %#p %^P %#P", "%s", "%15s %-15s %_15s %015s", "%n%t%%", "%z %Z", "%f %-f %10f %%f %%%f",
         "%Q %q %i %v %J %N %L %+ %+Y %:z %E %Ej %OY %Oa %ED", "%", "%5", "%-", "%_", "%05", "%010E", "%4Q %04Q %-4Q %^q %#Q",
         "%^a %#a %^A %#A %^b %#B %^10B %#10b %_10A %-10A %010A %#10A", "%10T %-10T %010T %^c %#c %^r %^10p %010p",
         "%10Y %-Y %_Y %0Y %_5Y %-5Y %05Y %5C %0C %_C %-C %_G %0G %5G", "%_5d %010d %-10d %_10d %_010d %0_10d %-_d %_-d",
         "%^5j %^-5j %#5j %_1j %0k %_e %-_e %2e %3e %_3e %_H", "%5n %5t %3% %03% %-5% %_5% %05n %^5n",
         "%-z %^Z %#Z %10z %Ez %Oz %EZ %^10z", "%EC %EY %Ey %Ec %Ex %EX %Od %Oe %OH %OI %Om %OM %OS %Ou %OU %OV %Ow %OW %Oy %Oj %Ob %OB %Op %Og %OG %Ok %Ol",
         "%1000d", "literal ü 日本 😀 %Y", "", "no directives", "%%Y %%%Y %%%%", "%m%%", "a\0b", "%\0", "%Y\0%m", "\0"]
rows = []
for dt in DATES:
    for tz in TZS:
        if tz is not None and dt not in DATES[:4]:
            continue
        d = dt.replace(tzinfo=tz)
        off = None if tz is None else tz.utcoffset(None) // timedelta(microseconds=1)
        for f in SFMTS:
            rows.append([[d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond], off, f, d.strftime(f)])
# ([y, m, d, H, M, S, us], utc offset in microseconds, format, strftime)
table("strftime", rows)


def fields(d):
    return [d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond]


def offset(d):
    return None if d.tzinfo is None else d.utcoffset() // timedelta(microseconds=1)


rows = []
for ts in [0, 1, -1, 1.5, -1.5, 1709211909.0012345, 1e9 + 0.0000005, 1e9 + 0.0000015, -0.0000005, 253402300799, -62135596800,
           951782400, 1234567890.999999, 1234567890.9999996, -86400 * 365.25 * 50]:
    for off in [0, 3600, -19800, 86399]:
        r = err_or(lambda: datetime.fromtimestamp(ts, timezone(timedelta(seconds=off))).replace(tzinfo=None))
        if r[0] != "Ok":
            continue
        dt = r[1]
        rows.append([bits(float(ts)), off, fields(dt)])
# (timestamp bits, utc offset in seconds, fields of datetime.fromtimestamp(ts, tz) made naive)
table("timestamp", rows)

rows = []
for s in ["2024-02-29", "20240229", "2024-02-29T13:05:09", "2024-02-29 13:05:09.123", "2024-02-29T13:05:09,123456789",
          "2024-02-29T13", "2024-02-29T1305", "2024-02-29T130509", "2024-02-29T13:05:09Z", "2024-02-29T13:05:09+05:30",
          "2024-02-29T13:05:09-0130", "2024-02-29T13:05+01", "2024-02-29T13:05:09.5-01:02:03", "2024-W09", "2024-W09-4",
          "2024W094", "2024W09", "2020-W53-7", "2021-W53", "2024-02-30", "2024-13-01", "24-02-29", "2024-02-29T", "2024-02-29T25:00",
          "2024-02-29T13:60", "2024-02-29T13:05:09.", "2024-02-29X13:05", "2024-02-29ü13:05", "0000-01-01", "", "abc",
          "2024-02-29T13:05:09+24:00", "2024-02-29T13:5", "2024-02-29T13:05:09.1234567Z", "2024-02-29T13:05:09+00:00",
          "2024-02-29 00:00:00.000000", "9999-12-31T23:59:59.999999",
          '2024-02-29T13:05:09-24:00', '2024-02-29T13:05:09+25:30', '2024-02-29T13:05:09+01:60', '2024-02-29T13:05:09+01:00:60',
          '2024-02-29T13:05:60', '2024-02-29T13:05:09+99', '2024-02-29T13:05:09+0', '2024-02-29T13:05:09+01:00.5',
          '2024-02-29T13:05:09+01:00:00.5', '2024-02-29T1:05', '2024-02-29T13:05:09Z+01', '2024-02-29T13:05:09+01Z',
          '2024-02-29T13:05:9', '2024-02-29T13:05:09-00:00', '2024-02-29T13:05:09+01:02:03.000001', '2024-02-29T13:05:09+0102.5',
          '2024-02-29T13:0509', '2024-02-29T1305:09', '2024-02-29T13:05:09.+01', '2024-02-29T13:05:09,5Z', '2024-02-29t13:05',
          '2024-W53-1', '2020-W53-8', '2024-W00', '2024-02-29T13:05:09 +01:00', '2024-02-29T13:05:09+1:00', '2024-02-29T13.5',
          '2024-02-29T13:05.5', '2024-02-29T13:05:09:10', '2024-02-29T13:05:09 ', '2024-02-29T13:05:09-01:00:00.000001',
          '2024-W01-1T10', '2024W011T10', '2024W01T10', '2024-W01T10', '2024-W01-110', '2024W0112', '2024W01123', '2024-02',
          '2024-02-2', '2024-0229', '202402-29', '2024-02-29T', '2024-02-29TZ', '2024-02-29T10:00:00.000001-23:59:59.999999',
          '0001-01-01T00:00:00+01:00', '2024-02-29T10+01:30:45.123456', '2024-02-29T10:20:30.1Z', '2020-W53', '2015-W53-7',
          '2024-02-29\U0001f600' + '10:00', '2024-02-29\u00e910:00']:
    r = err_or(lambda: datetime.fromisoformat(s))
    if r[0] == "Ok":
        rows.append([s, {"ok": [fields(r[1]), offset(r[1])]}])
    else:
        rows.append([s, {"err": r[2]}])
# (string, datetime.fromisoformat [fields, utc offset in microseconds] or error message)
table("iso", rows)

# ---------------------------------------------------------------- random differential cases
rnd = random.Random(20261122)


def rand_spec():
    out = ""
    if rnd.random() < 0.3:
        out += rnd.choice("*0x é<>") + rnd.choice("<>=^")
    elif rnd.random() < 0.3:
        out += rnd.choice("<>=^")
    if rnd.random() < 0.3:
        out += rnd.choice("+- ")
    if rnd.random() < 0.1:
        out += "z"
    if rnd.random() < 0.2:
        out += "#"
    if rnd.random() < 0.25:
        out += "0"
    if rnd.random() < 0.5:
        out += str(rnd.randint(0, 25))
    if rnd.random() < 0.25:
        out += rnd.choice([",", "_"])
    if rnd.random() < 0.4:
        out += "." + str(rnd.randint(0, 20))
    if rnd.random() < 0.8:
        out += rnd.choice("bcdoxXneEfFgG%s")
    return out


def rand_float():
    k = rnd.random()
    if k < 0.3:
        return rnd.uniform(-1e6, 1e6)
    if k < 0.5:
        return rnd.choice([0.5, 1.5, 2.5, 0.125, 0.375, 1e-5, 9.995, 0.05, 99.5, 1e21, 123456789.125])
    if k < 0.8:
        return rnd.random() * 10 ** rnd.randint(-12, 22) * rnd.choice([1, -1])
    return struct.unpack("<d", struct.pack("<Q", rnd.getrandbits(64)))[0]


def rand_val():
    k = rnd.random()
    if k < 0.35:
        return rnd.choice([rnd.randint(-10**6, 10**6), rnd.randint(-2**63, 2**63 - 1), rnd.randint(0, 300)])
    if k < 0.8:
        return rand_float()
    if k < 0.85:
        return rnd.choice([True, False])
    return rnd.choice(["", "abc", "héllo", "😀x"])


rows = []
for _ in range(4000):
    sp = rand_spec()
    v = rand_val()
    rows.append([sp, arg(v), res(err_or(lambda: format(v, sp)))])
# Random (spec, value, format(value, spec))
table("random_spec", rows)


def rand_pct():
    out = "%"
    for f in "-+ #0":
        if rnd.random() < 0.15:
            out += f
    if rnd.random() < 0.5:
        out += str(rnd.randint(0, 25))
    if rnd.random() < 0.4:
        out += "." + str(rnd.randint(0, 20))
    out += rnd.choice("sradiuoxXeEfFgGc")
    return out


rows = []
for _ in range(3000):
    f = rand_pct()
    v = rand_val()
    rows.append([f, "single", args([v]), [], res(err_or(lambda: f % (v,)))])
# Random (fmt, "single", [value], [], fmt % (value,))
table("random_percent", rows)


def rand_strftime():
    out = ""
    for _ in range(rnd.randint(1, 4)):
        out += "%"
        for f in "-_0^#":
            if rnd.random() < 0.12:
                out += f
        if rnd.random() < 0.25:
            out += str(rnd.randint(0, 12))
        if rnd.random() < 0.15:
            out += rnd.choice("EO")
        out += rnd.choice("aAbBcCdDeFgGhHIjklmMnpPrRsStTuUVwWxXyYzZf%q")
        if rnd.random() < 0.3:
            out += rnd.choice([" ", "-", ":", "x"])
    return out


rows = []
for _ in range(3000):
    d = datetime(rnd.randint(1, 9999), rnd.randint(1, 12), rnd.randint(1, 28), rnd.randint(0, 23), rnd.randint(0, 59),
                 rnd.randint(0, 59), rnd.choice([0, rnd.randint(0, 999999)]))
    if rnd.random() < 0.2:
        d = d.replace(day=calendar.monthrange(d.year, d.month)[1])
    if rnd.random() < 0.3:
        d = d.replace(tzinfo=timezone(timedelta(minutes=rnd.randint(-1439, 1439))))
    f = rand_strftime()
    rows.append([fields(d), offset(d), f, d.strftime(f)])
# Random ([y, m, d, H, M, S, us], utc offset, format, strftime)
table("random_strftime", rows)

POOL = ["a", "b", "A", "Σ", "σ", "ß", "İ", "ı", "ﬁ", "ǅ", "ǆ", "Ǆ", " ", "\t", "\n", "\x1c", "\xa0", "\u2028", "'", ".", "\u0301",
        "1", "²", "½", "😀", "ΐ", "ᾳ", "ῼ", "Å", "K", "\u0345", "-", "_", "x", "\r", "\x85", "ŉ"]
rows = []
for _ in range(1500):
    x = "".join(rnd.choice(POOL) for _ in range(rnd.randint(0, 10)))
    rows.append([x, x.upper(), x.lower(), x.capitalize(), x.title(), x.swapcase(), x.casefold()])
# Random (s, upper, lower, capitalize, title, swapcase, casefold)
table("random_case", rows)
rows = [[x, mask(x)] for x in ("".join(rnd.choice(POOL) for _ in range(rnd.randint(0, 5))) for _ in range(1500))]
# Random (s, predicate bits as in predicate)
table("random_predicate", rows)
rows = []
for _ in range(1500):
    x = "".join(rnd.choice(POOL) for _ in range(rnd.randint(0, 12)))
    sep = rnd.choice([None, None, "a", " ", "Σ", "ab", "\n"])
    m = rnd.choice([-1, 0, 1, 2, 3])
    rows.append([x, sep, m, res(err_or(lambda: x.split(sep, m))), res(err_or(lambda: x.rsplit(sep, m)))])
# Random (s, sep, maxsplit, split, rsplit)
table("random_split", rows)


def rand_field(depth):
    name = rnd.choice(["", "", "", "0", "1", "2", "5", "a", "b", "c", "0[1]", "0[9]", "[0]", "0.", "0[", "x y", "-1"])
    out = "{" + name
    if rnd.random() < 0.2:
        out += "!" + rnd.choice("rsaxr")
    if rnd.random() < 0.5:
        out += ":"
        if depth > 0 and rnd.random() < 0.4:
            out += rnd.choice(["", ">", "*^", "0"]) + rand_field(depth - 1)
        else:
            out += rand_spec()
    if rnd.random() < 0.97:
        out += "}"
    return out


def rand_format_string():
    out = ""
    for _ in range(rnd.randint(0, 4)):
        k = rnd.random()
        if k < 0.4:
            out += rand_field(2)
        elif k < 0.5:
            out += rnd.choice(["{{", "}}", "{", "}"])
        else:
            out += rnd.choice(["a", " ", "é", "😀", "xyz", ":", "!", "[", "]"])
    return out


rows = []
for _ in range(2500):
    f = rand_format_string()
    rows.append([f, res(err_or(lambda: f.format(*FARGS, **FKW)))])
# Random (format string, fmt.format(*FARGS, **FKW)) as in format
table("random_format", rows)

# ---------------------------------------------------------------- slicing, numbers
rows = []
SL = [None, 0, 1, 2, -1, -2, 3, 10, -10, 2**63 - 1, -2**63]
for x in ["", "a", "héllo", "ab😀cd", "0123456789"]:
    for st in SL:
        for sp in SL:
            for step in [None, 1, 2, -1, -2, 3, -3, 0, 2**63 - 1, -2**63]:
                rows.append([x, st, sp, step, res(err_or(lambda: x[st:sp:step]))])
# (s, start, stop, step, s[start:stop:step])
table("str_slice", rows)
rows = []
for x in ["", "a", "héllo", "ab😀cd"]:
    for i in [0, 1, 4, 5, -1, -5, -6, 2**63 - 1, -2**63]:
        rows.append([x, i, res(err_or(lambda: x[i]))])
# (s, i, s[i])
table("str_index", rows)

FLOAT_STRS = ['1', '  1.5\n', '1_000.5', '1__0', '_1', '1_', '1e5', '1E+05', '.5', '5.', '.', 'e5', '1e', 'inf', '-Infinity', '+nan',
              'NaN', '-nan', 'infinity ', '  ', '', '0x10', '1_0e1_0', '1.5_5', '1._5', '١٢٣', '１２３', '\xa01.5\u2003', '1.5\x00',
              '1,5', '- 1', '+-1', '1e500', '-1e500', '1e-400', '0001.5', 'infi', 'nana', '1.5e+', '\x1c1\x1f', '9' * 400,
              '-0', '+.5e-3', '1e+_5', '1_e5', '𝟙𝟚.𝟛', '\x85 2 \x85', '2\x7f', 'INF', '-iNfInItY', '0.1', '123456789012345678901234567890',
              '4.9e-324', '2.4703282292062328e-324', '1.7976931348623157e308', '1.7976931348623159e308', '٣.١٤', ' +3 ', '3 4',
              '\t\n\x0b\x0c\r7\r', '1.', '1e0', '00', '_', '1.5e', 'in f', '∞', '½']
rows = []
for t in FLOAT_STRS:
    r = err_or(lambda: float(t))
    rows.append([t, {"ok": bits(r[1])} if r[0] == "Ok" else {"err": r[2]}])
# (s, float(s) bits or error message)
table("parse_float", rows)
INT_STRS = [('1', 10), (' 42 ', 10), ('-0', 10), ('+7', 10), ('1_000', 10), ('1__0', 10), ('_1', 10), ('0x1f', 16), ('0x1f', 0),
            ('0X_1f', 0), ('010', 0), ('00', 0), ('0_0', 0), ('0b101', 0), ('0o17', 0), ('017', 8), ('z', 36), ('Z', 36), ('12', 2),
            ('١٢', 10), ('1.5', 10), ('', 10), (' ', 10), ('9' * 30, 10), ('-9223372036854775808', 10), ('9223372036854775807', 10),
            ('9223372036854775808', 10), ('-9223372036854775809', 10), ('1', 1), ('1', 37), ('1', -1), ('0x', 16), ('0b1', 16), ('0x_', 16),
            ('1 2', 10), ('+_1', 10), ('\u20031\u2003', 10), ('0x1f', 10), ('0b', 0), ('0_', 0), ('0_1', 0), ('1_0', 0), ('0o8', 0),
            ('ff', 16), ('-FF', 16), ('0xFF_FF', 0), ('𝟙𝟚', 10), ('12a', 10), ('١2', 10), ('x' * 300, 10), ('\x1c1', 10),
            ('7fffffffffffffff', 16), ('-8000000000000000', 16), ('8000000000000000', 16), ('0', 0), ('-0b1', 0), ('+0o7_7', 0),
            ('٠x10', 0), ('0\u0660', 0), ('2', 3), ('10', 36)]
rows = []
for t, base in INT_STRS:
    r = err_or(lambda: int(t, base))
    if r[0] == "Ok":
        if -2**63 <= r[1] < 2**63:
            val = {"ok": r[1]}
        else:
            val = {"err": ["OverflowError", "Python int too large to convert to C long"]}
    else:
        val = {"err": [r[1], r[2]]}
    rows.append([t, base, val])
# (s, base, int(s, base))
table("parse_int", rows)
ROUNDS = [(2.675, 2), (2.5, 0), (3.5, 0), (-0.4, 0), (1234.5, -1), (1250, -2), (1350, -2), (1250.0000001, -2), (0.125, 2),
          (1e308, -308), (1.7e308, -308), (5e-324, 323), (5e-324, 324), (123.456, -400), (-123.456, -400), (float('inf'), 2),
          (float('-inf'), -2), (0.0, 5), (-0.0, -2), (1e22, -22), (5e21, -22), (1.5e22, -22), (2.5e22, -22),
          (123456789.987654321, 5), (-2.5, 0), (0.5, 0), (-1.5, -1), (15, -1), (25, -1), (35, -1), (-25, -1), (999.9, -3),
          (9999.9, -4), (949.9, -3), (-950, -2), (1.7976931348623157e308, -300), (1.7976931348623157e308, -305), (0.1, 20),
          (1 / 3, 10), (-1 / 3, 3), (1e-10, 5), (-1e-10, 5), (0.5, -1), (5, -1), (5.000001, -1), (4.5, 0), (5.5, 0)]
ROUNDS += [(rnd.uniform(-1e6, 1e6), rnd.randint(-6, 8)) for _ in range(300)]
ROUNDS += [((2**52 + rnd.getrandbits(52)) / 2 ** rnd.randint(0, 12) * rnd.choice([1, -1]), rnd.randint(-17, 4)) for _ in range(300)]
rows = []
for x, n in ROUNDS:
    r = err_or(lambda: round(float(x), n))
    rows.append([bits(float(x)), n, {"ok": bits(r[1])} if r[0] == "Ok" else {"err": r[2]}])
# (x bits, ndigits, round(x, ndigits) bits or error message)
table("round", rows)

# ---------------------------------------------------------------- arithmetic
import math  # noqa: E402

I64 = (-2**63, 2**63 - 1)


OVERFLOW = {"err": ["OverflowError", "integer overflow"]}


def int_res(f):
    r = err_or(f)
    if r[0] == "Ok":
        v = r[1]
        if isinstance(v, complex):
            return {"err": ["ValueError", "negative number cannot be raised to a fractional power"]}
        if isinstance(v, float):
            return {"ok": {"float": bits(v)}}
        if I64[0] <= v <= I64[1]:
            return {"ok": v}
        return OVERFLOW
    return {"err": [r[1], r[2]]}


INTS = [0, 1, -1, 2, -2, 3, -3, 5, -5, 7, 10, -10, 63, 64, 2**31, 2**53, 2**53 + 1, -(2**53 + 1), 2**62, 2**63 - 1, -2**63,
        -2**63 + 1, 12345678901234567, -98765432109876543, 3**39]
INTS += [rnd.randint(-2**63, 2**63 - 1) for _ in range(15)] + [rnd.randint(-1000, 1000) for _ in range(10)]
rows = []
for a in INTS:
    for b_ in INTS:
        pw = int_res(lambda: a ** b_) if abs(b_) <= 64 or a in (0, 1, -1) else None
        if pw is None:
            pw = int_res(lambda: a ** b_) if abs(a) <= 1 else OVERFLOW if b_ > 0 else int_res(lambda: float(a) ** float(b_))
        rows.append([a, b_, int_res(lambda: a // b_), int_res(lambda: a % b_), int_res(lambda: a / b_), pw])
# (a, b, a // b, a % b, a / b, a ** b) for ints
table("int_arith", rows)

FLS = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 2.5, -7.0, 1e300, -1e300, 1e-300, 5e-324, math.inf, -math.inf, math.nan,
       0.1, 1 / 3, 10.0, 400.0, -3.5, 1e10, 1e10 + 1, 123.456]
rows = []
for a in FLS:
    for b_ in FLS:
        rows.append([bits(a), bits(b_), int_res(lambda: a / b_), int_res(lambda: a // b_), int_res(lambda: a % b_), int_res(lambda: a ** b_)])
# (a bits, b bits, a / b, a // b, a % b, a ** b) for floats
table("float_arith", rows)

rows = []
for a in INTS[:20]:
    for b_ in FLS + [float(2**53), float(2**63), -float(2**63), 9.223372036854775e18, 2.0**53 + 2]:
        c = None if math.isnan(b_) else (-1 if a < b_ else 1 if a > b_ else 0)
        rows.append([a, bits(b_), c])
# (int, float bits, exact comparison: -1, 0, 1, or null when the float is NaN)
table("cmp_int_float", rows)
rows = []
for x in FLS + [9.3e18, -9.3e18, 9.2e18, -9.223372036854775808e18, 1.5, -1.5, 2.9999]:
    rows.append([bits(x), int_res(lambda: int(x))])
# (float bits, int(float))
table("float_to_int", rows)

# ---------------------------------------------------------------- json.dumps
class Opaque:
    pass


def json_key(k):
    """A dict key as json.dumps sees it: a scalar, or any other object by type name."""
    if k is None or isinstance(k, (bool, int, str)):
        return k
    if isinstance(k, float):
        return {"float": bits(k)}
    return {"object": type(k).__name__}


def json_val(v):
    """A value as json.dumps sees it: a tuple is a list, an unknown object is known by type name."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return {"float": bits(v)}
    if isinstance(v, (list, tuple)):
        return {"list": [json_val(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[json_key(k), json_val(x)] for k, x in v.items()]}
    return {"object": type(v).__name__}


JVALS = [None, True, 1, -5, 1.5, 1e16, float("nan"), float("-inf"), "", "héllo \"q\" \\ \n 😀", [], {}, [1, [2, [3, []]], {}],
         {"b": 1, "a": [1, 2, {"c": None}], "é": "ü"}, {"z": {}, "y": [], "x": {"w": [True, False, None]}},
         {1: "int", "s": 2}, {2: 1, 1.5: 2, False: 3, None: 4}, {None: 1, 0.1: 2}, {float("nan"): 1, float("inf"): 2},
         {(1, 2): 3}, [Opaque()], {"a": Opaque()}, {"k": [1, 2.5, "x", None, True]},
         {"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather",
                                                       "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                                                      "required": ["city"]}}}]},
         {"b": 2, "a": 1, "c": 3, "a1": 0, "B": 5, "": 6}, {3: "c", 1: "a", 2: "b", -1: "z", 2.5: "h", True: "t"},
         {"x": 1, 2: 3, "y": 4}, {2: 3, "x": 1}, {None: 1, "a": 2}, {"a": 1, None: 2}, {1: 1, None: 2, "a": 3},
         [[], [[]], [{}], {"a": {}}], "\x7f\x00\u2028", 12345678901234567, -0.0, 0.1 + 0.2]
OPTS = [(True, None, None, False), (False, None, None, False), (True, "  ", None, False), (False, "\t", None, True),
        (True, "", None, False), (True, None, (",", ":"), True), (False, "  ", (", ", ": "), True), (True, "--", (";", "="), False)]
rows = []
for v in JVALS:
    for ea, ind, seps, sk in OPTS:
        r = err_or(lambda: json.dumps(v, ensure_ascii=ea, indent=ind, separators=seps, sort_keys=sk))
        rows.append([json_val(v), ea, ind, None if seps is None else list(seps), sk, res(r)])
# (value, ensure_ascii, indent, separators, sort_keys, json.dumps)
table("json_dumps", rows)

# ---------------------------------------------------------------- repr of values
def repr_val(v):
    """A value made of None, bool, int, float, str, list, tuple and dict."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        return {"float": bits(v)}
    if isinstance(v, list):
        return {"list": [repr_val(x) for x in v]}
    if isinstance(v, tuple):
        return {"tuple": [repr_val(x) for x in v]}
    if isinstance(v, dict):
        return {"dict": [[repr_val(k), repr_val(x)] for k, x in v.items()]}
    raise TypeError(v)


RVALS = [None, True, False, 0, -7, 1.0, 1e16, float("nan"), float("-inf"), -0.0, "", "it's", 'say "hi"', "é\n\x00",
         [], [1], [1, "a", None, 2.5, [True, ()]], (), (1,), (1, 2), ((),), {}, {"a": 1}, {"k": [1, {"x": (None,)}], 2: "two", None: 0.1},
         {(1, 2): "tuple key", 1.5: [], False: {}}, [{"role": "user", "content": "Hi 'there'"}, {"role": "assistant", "content": "\"ok\""}],
         {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}, "required": []}}}]
rows = [[repr_val(v), repr(v)] for v in RVALS]
# (value, repr(value))
table("value_repr", rows)

# ---------------------------------------------------------------- html
import markupsafe  # noqa: E402
from jinja2.utils import htmlsafe_json_dumps  # noqa: E402

rows = []
for x in STRS + ["<a href='x'>&amp;\"</a>", "", "&&<<>>''\"\"", "é<😀>"]:
    rows.append([x, str(markupsafe.escape(x)), str(htmlsafe_json_dumps(x))])
# (s, markupsafe.escape(s), jinja2 htmlsafe_json_dumps(s))
table("html", rows)

RI = [(1250, -2), (1350, -2), (-1250, -2), (-1350, -2), (15, -1), (25, -1), (-25, -1), (5, -1), (-5, -1), (4, -1), (6, -1), (1234, 0),
      (1234, 3), (2**63 - 1, -1), (2**63 - 1, -19), (-2**63, -19), (-2**63, -18), (2**63 - 1, -20), (123, -400), (0, -5), (499, -3),
      (500, -3), (1500, -3), (2500, -3), (2501, -3), (-2**63, -1), (-2**63, 5), (2**63 - 1, -500), (2**64, -1), (2**64, -30),
      (2**64 - 1, -1), (-2**70, -1), (-2**70, -21), (-2**70, -22), (5 * 10**40, -41), (15 * 10**40, -41), (-25 * 10**39, -40),
      (10**100 + 5, -1), (2**64, 3)]
RI += [(rnd.randint(-2**63, 2**63 - 1), rnd.randint(-20, 2)) for _ in range(200)]
_big = random.Random(130)  # its own stream: the tables after this one keep theirs
RI += [(_big.randint(-2**130, 2**130), _big.randint(-45, 1)) for _ in range(40)]
rows = []
for n, k in RI:
    rows.append([str(n), k, {"ok": str(round(n, k))}])
# (n, ndigits, round(n, ndigits)) for ints, the ints as decimal strings
table("round_int", rows)

# ---------------------------------------------------------------- random str methods
MPOOL = ["a", "b", "ab", " ", "  ", "\t", "\n", "\r\n", "\r", "\x0b", "\x1c", "\x85", "\u2028", "\xa0", "ß", "😀", "x", ",", "é"]
rows = []
for _ in range(1500):
    x = "".join(rnd.choice(MPOOL) for _ in range(rnd.randint(0, 8)))
    sub = "".join(rnd.choice(MPOOL) for _ in range(rnd.randint(0, 2)))
    st = rnd.choice([None, rnd.randint(-12, 12)])
    en = rnd.choice([None, rnd.randint(-12, 12)])
    rows.append([x, sub, st, en, x.startswith(sub, st, en), x.endswith(sub, st, en),
                 x.find(sub, st, en), x.rfind(sub, st, en), x.count(sub, st, en)])
# Random (s, sub, start, end, startswith, endswith, find, rfind, count)
table("random_find", rows)
rows = []
for _ in range(800):
    x = "".join(rnd.choice(MPOOL) for _ in range(rnd.randint(0, 8)))
    c = rnd.choice([None, "", " ", "ab", "\n\r", "😀a"])
    rows.append([x, c, x.strip(c), x.lstrip(c), x.rstrip(c)])
# Random (s, chars, strip, lstrip, rstrip)
table("random_strip", rows)
rows = [[x, x.splitlines(), x.splitlines(True)] for x in ("".join(rnd.choice(MPOOL) for _ in range(rnd.randint(0, 8))) for _ in range(800))]
# Random (s, splitlines(), splitlines(True))
table("random_splitlines", rows)


def rand_pct_multi():
    n = rnd.randint(0, 3)
    f = "".join(rnd.choice(["x", " ", "%%", rand_pct(), "%*d", "%.*f", "%-*s"]) for _ in range(n))
    args = tuple(rand_val() for _ in range(rnd.randint(0, 4)))
    return f, args


rows = []
for _ in range(1500):
    f, t = rand_pct_multi()
    rows.append([f, "tuple", args(t), [], res(err_or(lambda: f % t))])
# Random (fmt, "tuple", args, [], fmt % args)
table("random_percent_tuple", rows)

# ---------------------------------------------------------------- jinja filters
from jinja2.filters import do_title, do_wordcount  # noqa: E402

JSTRS = CASE_STRS + STRS + ["hello-world (foo) {bar} [baz] <qux>", "--x--y", "  lead trail  ", "ΣΑΣ-ΣΑΣ (ΣΑΣ)", "ǆemal-ǆ",
                            "ﬁne ﬂour", "a_b c1 ²x ½", "snake_case and kebab-case", "\u3000全角\u3000スペース", "tab\tsep\x1cx"]
JSTRS += ["".join(rnd.choice(POOL + ["-", "(", "{", "[", "<", "_"]) for _ in range(rnd.randint(0, 12))) for _ in range(500)]
rows = [[x, do_title(x), do_wordcount(x)] for x in JSTRS]
# (s, jinja2 do_title(s), do_wordcount(s))
table("jinja", rows)
