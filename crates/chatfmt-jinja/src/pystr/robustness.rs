//! Randomised no-panic checks: every public function on arbitrary input.

use super::test_support::A;
use super::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn int(&mut self) -> i64 {
        match self.below(4) {
            0 => self.next() as i64,
            1 => [i64::MIN, i64::MAX, 0, -1, 1 << 40][self.below(5)],
            _ => self.below(40) as i64 - 20,
        }
    }

    fn string(&mut self, alphabet: &[&str], max: usize) -> String {
        let n = self.below(max + 1);
        (0..n).map(|_| alphabet[self.below(alphabet.len())]).collect()
    }
}

const ALPHABET: &[&str] = &[
    "a",
    "Z",
    "0",
    "9",
    "5",
    " ",
    "\t",
    "\n",
    "\r",
    "{",
    "}",
    "[",
    "]",
    ".",
    ":",
    "!",
    "%",
    "(",
    ")",
    "-",
    "+",
    "#",
    "_",
    ",",
    "<",
    ">",
    "^",
    "=",
    "*",
    "s",
    "r",
    "d",
    "x",
    "f",
    "g",
    "e",
    "c",
    "z",
    "E",
    "O",
    "Y",
    "W",
    "T",
    "ß",
    "İ",
    "Σ",
    "ﬁ",
    "ǅ",
    "😀",
    "\u{a0}",
    "\u{85}",
    "\u{200b}",
    "\u{301}",
    "\u{2028}",
    "\u{0}",
    "99999999999999999999",
    "70000",
    ".70000",
    "100000",
];

#[test]
fn no_panics_on_random_input() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let vals = [
        A::I(5),
        A::I(-1 << 62),
        A::B(true),
        A::F(f64::NAN.to_bits()),
        A::F((-1e300f64).to_bits()),
        A::F(0.5f64.to_bits()),
        A::S("é"),
        A::S(""),
        A::N,
    ];
    for _ in 0..4000 {
        let s = rng.string(ALPHABET, 12);
        let t = rng.string(ALPHABET, 3);
        let (i, j) = (rng.int(), rng.int());
        let opt = |r: &mut Rng, v: i64| if r.below(3) == 0 { None } else { Some(v) };
        let (oi, oj) = (opt(&mut rng, i), opt(&mut rng, j));
        let _ = strip(&s, Some(&t));
        let _ = split(&s, Some(&t), i);
        let _ = rsplit(&s, None, j);
        let _ = splitlines(&s, i > 0);
        let _ = startswith(&s, &t, oi, oj);
        let _ = endswith(&s, &t, oj, oi);
        let _ = find(&s, &t, oi, oj);
        let _ = rfind(&s, &t, oi, oj);
        let _ = count(&s, &t, oi, oj);
        let _ = replace_sized(&s, &t, &s, i, replaced_len(&s, &t, &s, i));
        let _ = partition(&s, &t);
        let _ = rpartition(&s, &t);
        let _ = zfill(&s, i);
        let _ = center(&s, i, Some(&t));
        let _ = expandtabs(&s, j);
        for f in [upper, lower, title, capitalize, swapcase, casefold] {
            let _ = f(&s);
        }
        let _ = (isidentifier(&s), istitle(&s), isupper(&s), islower(&s));
        let mut out = String::new();
        str_repr(&s, &mut out);
        json_write_str(&s, i > 0, &mut out);
        let _ = float_repr(f64::from_bits(rng.next()));
        let v = &vals[rng.below(vals.len())];
        let refs: Vec<&dyn FormatArg> = vals[..rng.below(4)].iter().map(|v| v as &dyn FormatArg).collect();
        let _ = percent_format(&s, PercentArgs::Tuple(&refs));
        let _ = percent_format(&s, PercentArgs::Single(v));
        let _ = apply_format_spec(&s, v);
        let mut pieces = format_iter(&s);
        while let Some(Ok(piece)) = pieces.next() {
            if let FormatPiece::Field(f) = piece {
                let _ = f.conversion();
                let _ = f.accessors().count();
                if let Ok(spec) = pieces.spec_iter(f.spec_text) {
                    let _ = spec.count();
                }
            }
        }
        let dt = DateTimeFields {
            year: rng.next() as i32,
            month: rng.next() as u32,
            day: rng.next() as u32,
            hour: rng.next() as u32,
            minute: rng.next() as u32,
            second: rng.next() as u32,
            microsecond: rng.next() as u32,
            weekday: rng.next() as u32,
            yday: rng.next() as u32,
            utc_offset_us: Some(rng.next() as i64 >> 20),
            local_epoch: None,
        };
        let _ = strftime(&s, &dt);
        let _ = DateTimeFields::from_iso(&s);
        let _ = DateTimeFields::from_unix(i, rng.next() as u32, j as i32);
        let step = rng.int();
        let _ = str_slice(&s, oi, oj, opt(&mut rng, step));
        let (x, y) = (f64::from_bits(rng.next()), f64::from_bits(rng.next()));
        let _ = (int_floordiv(i, j), int_mod(i, j), int_truediv(i, j), int_pow(i, j));
        let _ = (
            float_floordiv(x, y),
            float_mod(x, y),
            float_pow(x, y),
            float_truediv(x, y),
        );
        let _ = (cmp_int_float(i, x), float_to_int(x));
        let _ = parse_float(&s);
        let _ = parse_int(&s, j.rem_euclid(40));
        let _ = py_round(f64::from_bits(rng.next()), i.rem_euclid(700) - 350);
        let wide = num_bigint::BigInt::from(i) << j.rem_euclid(2200) as usize;
        let _ = (big_truediv(&wide, &j.into()), big_truediv(&j.into(), &wide));
        let _ = (cmp_big_float(&wide, x), int_to_float(&wide));
    }
}
