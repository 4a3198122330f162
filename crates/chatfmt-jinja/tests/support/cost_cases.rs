//! Templates doing 100,000 items of work with built-ins: what they render (or the limit they hit)
//! and the most steps they may be charged.

/// How a case ends.
pub enum End {
    /// Renders this text.
    Text(&'static str),
    /// Stops with a `LimitExceeded` error whose message names this limit.
    Limit(&'static str),
}

/// One case.
pub struct Case {
    pub name: &'static str,
    pub source: &'static str,
    pub end: End,
    /// The most steps a render may be charged (for a case that renders).
    pub max_steps: u64,
}

pub const CASES: &[Case] = &[
    Case {
        name: "unique-ints",
        source: "{{ range(100000)|unique|list|length }}",
        end: End::Text("100000"),
        max_steps: 130_000,
    },
    Case {
        name: "unique-strings",
        source: "{{ range(100000)|map('string')|unique|list|length }}",
        end: End::Text("100000"),
        max_steps: 650_000,
    },
    Case {
        name: "unique-repeated-strings",
        source: "{{ (['a', 'b', 'c'] * 40000)|unique|join }}",
        end: End::Text("abc"),
        max_steps: 140_000,
    },
    Case {
        name: "select-in-range",
        source: "{{ range(100000)|select('in', range(100000))|list|length }}",
        end: End::Text("100000"),
        max_steps: 130_000,
    },
    Case {
        name: "in-range-loop",
        source: "{% set r = range(100000) %}{% set ns = namespace(n=0) %}{% for i in r %}{% if i in r %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.n }}",
        end: End::Text("100000"),
        max_steps: 320_000,
    },
    Case {
        name: "sort-strings",
        source: "{{ (range(100000)|map('string')|sort)[-1] }}",
        end: End::Text("99999"),
        max_steps: 3_400_000,
    },
    Case {
        name: "dict-fromkeys",
        source: "{{ dict.fromkeys(range(100000))|length }}",
        end: End::Text("100000"),
        max_steps: 120_000,
    },
    Case {
        name: "dict-lookups",
        source: "{% set d = dict.fromkeys(range(100000), 1) %}{{ range(100000)|map('string')|map('int')|select('in', d)|list|length }}",
        end: End::Text("100000"),
        max_steps: 1_300_000,
    },
    Case {
        name: "output-loop",
        source: "{% for i in range(100000) %}{{ i }},{% endfor %}",
        end: End::Text("0,1,2,3,4,5,6,7,8,9,"),
        max_steps: 320_000,
    },
    Case {
        name: "join-100k",
        source: "{{ (range(100000)|join(','))|length }}",
        end: End::Text("588889"),
        max_steps: 160_000,
    },
    Case {
        name: "string-building-loop",
        source: "{% set ns = namespace(s='') %}{% for i in range(100000) %}{% set ns.s = ns.s ~ 'x' %}{% endfor %}{{ ns.s|length }}",
        end: End::Text("100000"),
        // Copying 5 GB in all, as Jinja2 does too: within the default limit, though not by much.
        max_steps: 20_000_000,
    },
    Case {
        name: "string-building-loop-10x",
        source: "{% set ns = namespace(s='') %}{% for i in range(100000) %}{% set ns.s = ns.s ~ '0123456789' %}{% endfor %}{{ ns.s|length }}",
        end: End::Limit("Limits::max_steps"),
        max_steps: 0,
    },
    Case {
        name: "in-list-quadratic",
        source: "{% set l = range(100000)|list %}{{ range(100000)|select('in', l)|list|length }}",
        end: End::Limit("Limits::max_steps"),
        max_steps: 0,
    },
];
