//! Helpers in templates: of lists, `{queue|count}`, `{tags|join ', '}`,
//! `{api_s[response.items]|first 3|join}`; of text, `{user_name|upper}`,
//! `{option_tags|split ','|count}`, `{id|pad 4 '0'}`. The one place that knows them:
//! their names, how a template writes them, and what they make of a value.
//! They do what a loop cannot say in a few words; anything more is a loop
//! (docs/language.md, "Helpers").

use bigdecimal::BigDecimal;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

use crate::base::diagnostics::{did_you_mean, Code, Diagnostic};
use crate::base::numbers::{self, CalcError};
use crate::base::source::Span;
use crate::base::when;
use crate::base::world::World;

/// One helper after `|`, applied left to right.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Helper {
    /// The number of elements.
    Count,
    /// The first N elements, as a list.
    First(u32),
    /// The elements as text, with a separator between them (`, ` unless
    /// one is given).
    Join(String),
    /// The text in capitals, or in small letters (Unicode's case mapping).
    Upper,
    Lower,
    /// The text without the blanks around it.
    Trim,
    /// How many characters the text has (of a list, how many elements).
    Length,
    /// The text with every `from` made `to`.
    Replace(String, String),
    /// The text cut at each separator, as a list.
    Split(String),
    /// Characters (of a list, elements) from the first number to before
    /// the second, counted from 0; to the end without the second.
    Slice(u32, Option<u32>),
    /// The text made at least N characters long, the character added
    /// before it (a space unless one is given): `{n|pad 3 '0'}` is `007`.
    Pad(u32, char),
    /// The number rounded to N decimal places (0 unless given), halves
    /// away from zero: `{price|round 2}`.
    Round(u32),
    /// The whole number at or below, at or above, the number.
    Floor,
    Ceil,
    /// The number without its sign.
    Abs,
    /// The smaller (`min`) or larger (`max`) of the number and N: `{bet|min
    /// 100}` is at most 100. Without N, of a list, its smallest or largest
    /// element.
    Min(Option<String>),
    Max(Option<String>),
    /// The sum of a list's numbers, exactly (0 of an empty list).
    Sum,
    /// One element of the list drawn at random (`null` of an empty list).
    Pick,
    /// The list's elements in an order drawn at random.
    Shuffle,
    /// A time as the platform's timestamp markup in a style (`f` unless
    /// given): `{now|timestamp 'R'}` shows "in 3 hours" in each reader's zone.
    Timestamp(char),
    /// A time written with a strftime pattern, in a zone (UTC unless
    /// given); without a pattern, as RFC 3339 in UTC.
    Date(Option<String>, Option<String>),
    /// A time as seconds since 1970.
    Unix,
    /// A time moved later (`add`) or earlier (`sub`) by a duration as
    /// written (`'2h30m'`).
    Add(String),
    Sub(String),
    /// A duration (`"10m"`, `"2h30m"`, `"1d"`, or seconds) as seconds;
    /// `null` of text that is no duration.
    Seconds,
    /// A duration from the time now: the time it ends.
    FromNow,
}

impl Helper {
    /// Whether it works on a number (and fails on anything else).
    pub fn takes_number(&self) -> bool {
        matches!(
            self,
            Helper::Round(_) | Helper::Floor | Helper::Ceil | Helper::Abs | Helper::Min(Some(_)) | Helper::Max(Some(_))
        )
    }
}

/// `{random 1 6}`, `{chance 25}`: a value drawn at random where the run
/// reaches it, from bounds written as numbers or read from variables.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Draw {
    /// A whole number from the first bound to the second, both included.
    Between(Bound, Bound),
    /// `true` with this chance in percent (0 to 100), else `false`.
    Chance(Bound),
    /// Dice in the tabletop notation, `2d6`: each die's roll, as a list.
    Dice(Bound),
}

/// A bound of a draw: a number as written, or a variable's name.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    Number(String),
    Var(String),
}

impl Draw {
    /// The draw as a template writes it, without its braces.
    pub fn written(&self) -> String {
        let bound = |b: &Bound| match b {
            Bound::Number(n) | Bound::Var(n) => n.clone(),
        };
        match self {
            Draw::Between(low, high) => format!("random {} {}", bound(low), bound(high)),
            Draw::Chance(p) => format!("chance {}", bound(p)),
            Draw::Dice(d) => format!("dice {}", bound(d)),
        }
    }

    /// Its bounds that are variables, with where each is written (`at`:
    /// the offset of the draw's first character).
    pub fn variables(&self) -> Vec<&str> {
        let bounds = match self {
            Draw::Between(low, high) => vec![low, high],
            Draw::Chance(p) | Draw::Dice(p) => vec![p],
        };
        bounds.into_iter().filter_map(|b| if let Bound::Var(v) = b { Some(v.as_str()) } else { None }).collect()
    }
}

/// Whether `inner` (a `{…}`'s inside) is a draw: `random` or `chance`
/// followed by a blank. (`{random}` alone is a variable.)
pub fn is_draw(inner: &str) -> bool {
    ["random", "chance", "dice"].iter().any(|w| inner.strip_prefix(w).is_some_and(|rest| rest.starts_with([' ', '\t'])))
}

/// The largest bound of `random`: 2^53, what every JSON reader keeps exact.
const MAX_BOUND: i64 = 1 << 53;

/// Reads a draw (`inner` is the `{…}`'s inside, at byte `start`); one
/// written wrong is B150.
pub fn scan_draw(inner: &str, start: usize, diags: &mut Vec<Diagnostic>) -> Option<(Draw, Vec<(String, Span)>)> {
    let word_len = inner.find([' ', '\t']).unwrap_or(inner.len());
    let (word, rest) = inner.split_at(word_len);
    let mut words = Vec::new();
    let mut at = start + word_len;
    for w in rest.split([' ', '\t']) {
        if !w.is_empty() {
            words.push((w, Span::new(at, at + w.len())));
        }
        at += w.len() + 1;
    }
    let mut variables = Vec::new();
    let mut bound = |(w, span): (&str, Span), whole: bool| -> Option<Bound> {
        if is_name(w) {
            variables.push((w.to_string(), span));
            return Some(Bound::Var(w.to_string()));
        }
        let n = numbers::parse(w).ok()?;
        let ok = if whole {
            n.is_integer() && n.abs() <= MAX_BOUND
        } else {
            n.sign() != bigdecimal::num_bigint::Sign::Minus && n <= 100
        };
        ok.then(|| Bound::Number(w.to_string()))
    };
    let draw = match (word, words.as_slice()) {
        ("random", [low, high]) => match (bound(*low, true), bound(*high, true)) {
            (Some(Bound::Number(l)), Some(Bound::Number(h))) if numbers::parse(&l).ok() > numbers::parse(&h).ok() => {
                None
            }
            (Some(l), Some(h)) => Some(Draw::Between(l, h)),
            _ => None,
        },
        ("chance", [p]) => bound(*p, false).map(Draw::Chance),
        // (`d20` is dice, not a variable.)
        ("dice", [(w, _)]) if dice(w).is_ok() => Some(Draw::Dice(Bound::Number(w.to_string()))),
        ("dice", [(w, span)]) if is_name(w) => {
            variables.push((w.to_string(), *span));
            Some(Draw::Dice(Bound::Var(w.to_string())))
        }
        _ => None,
    };
    if draw.is_none() {
        let span = Span::new(start, start + inner.len());
        let (what, example) = match word {
            "random" => {
                ("two whole numbers (or variables that hold them), the smaller first, up to 2^53", "{random 1 6}")
            }
            "dice" => {
                ("dice as `NdM` (1 to 100 dice of 2 to 1,000 sides), or a variable that holds them", "{dice 2d6|sum}")
            }
            _ => ("a percentage from 0 to 100 (or a variable that holds one)", "{chance 25}"),
        };
        diags.push(
            Diagnostic::new(Code::BadHelper, format!("`{word}` needs {what}"))
                .label(span, "written wrong")
                .help(format!("write it as `{example}`; `{{random 1 option_sides}}` reads a bound from an option")),
        );
        return None;
    }
    draw.map(|d| (d, variables))
}

/// Dice as the tabletop writes them, `2d6` (`d20`: one die): how many, and
/// their sides; why not, in words.
pub fn dice(text: &str) -> Result<(u32, u32), String> {
    let text = text.trim();
    let (count, sides) = text
        .split_once(['d', 'D'])
        .ok_or_else(|| format!("\"{}\" (dice are written like 2d6)", text.chars().take(20).collect::<String>()))?;
    let count = if count.is_empty() { Ok(1) } else { count.parse::<u32>() };
    match (count, sides.parse::<u32>()) {
        (Ok(n @ 1..=100), Ok(s @ 2..=1000)) => Ok((n, s)),
        _ => Err(format!(
            "\"{}\" (1 to 100 dice of 2 to 1,000 sides, like 2d6)",
            text.chars().take(20).collect::<String>()
        )),
    }
}

/// A variable's name as a draw's bound (an option's in any script).
fn is_name(w: &str) -> bool {
    let mut chars = w.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        || crate::discord::names::is_option_variable(w)
}

/// What a draw draws, its variable bounds read with `bound`; a bound of
/// `random` that is not a whole number up to 2^53, or a chance that is
/// not a number, fails as a calculation's operand does (B323).
pub fn drawn_value(draw: &Draw, bound: &mut dyn FnMut(&str) -> Json, world: &mut dyn World) -> Result<Json, CalcError> {
    use rand::Rng as _;
    let mut number = |b: &Bound| match b {
        Bound::Number(n) => numbers::parse(n),
        Bound::Var(v) => numbers::number(&bound(v)),
    };
    match draw {
        Draw::Between(low, high) => {
            let whole = |n: BigDecimal| -> Result<i64, CalcError> {
                use bigdecimal::ToPrimitive as _;
                let is = || CalcError::NotANumber(format!("{n} (a bound of `random` is a whole number up to 2^53)"));
                if !n.is_integer() {
                    return Err(is());
                }
                n.to_i64().filter(|n| n.abs() <= MAX_BOUND).ok_or_else(is)
            };
            let (a, b) = (whole(number(low)?)?, whole(number(high)?)?);
            // Bounds read from values may come in either order.
            Ok(Json::from(world.rng().random_range(a.min(b)..=a.max(b))))
        }
        Draw::Dice(d) => {
            let text = match d {
                Bound::Number(n) => n.clone(),
                Bound::Var(v) => crate::base::values::as_text(&bound(v)),
            };
            let (count, sides) = dice(&text).map_err(CalcError::NotANumber)?;
            Ok(Json::Array((0..count).map(|_| Json::from(world.rng().random_range(1..=sides))).collect()))
        }
        Draw::Chance(p) => {
            use bigdecimal::ToPrimitive as _;
            // In millionths of a percent: below 0 never, above 100 always.
            let percent = number(p)?.max(BigDecimal::from(0)).min(BigDecimal::from(100));
            let millionths = (percent * BigDecimal::from(1_000_000)).to_u64().unwrap_or(0);
            Ok(Json::Bool(world.rng().random_range(0..100_000_000) < millionths))
        }
    }
}

/// The helpers' names, as templates write them.
pub const NAMES: [&str; 27] = [
    "count",
    "first",
    "join",
    "upper",
    "lower",
    "trim",
    "length",
    "replace",
    "split",
    "slice",
    "pad",
    "round",
    "floor",
    "ceil",
    "abs",
    "min",
    "max",
    "sum",
    "pick",
    "shuffle",
    "timestamp",
    "date",
    "unix",
    "add",
    "sub",
    "seconds",
    "from_now",
];

/// Each helper and what it gives, for the editor.
pub const ABOUT: [(&str, &str); 27] = [
    ("count", "the number of elements"),
    ("first", "`first N`: the first N elements, as a list"),
    ("join", "`join` or `join 'SEP'`: the elements as text, `, ` or SEP between them"),
    ("upper", "the text in capitals"),
    ("lower", "the text in small letters"),
    ("trim", "the text without the blanks around it"),
    ("length", "how many characters the text has (of a list, how many elements)"),
    ("replace", "`replace 'FROM' 'TO'`: the text with every FROM made TO"),
    ("split", "`split 'SEP'`: the text cut at each SEP, as a list"),
    ("slice", "`slice N` or `slice N M`: the characters (of a list, the elements) from N to before M, from 0"),
    ("pad", "`pad N` or `pad N 'C'`: the text made at least N characters long, C (a space) added before it"),
    ("round", "`round` or `round N`: the number rounded to N decimal places (0), halves away from zero"),
    ("floor", "the whole number at or below the number"),
    ("ceil", "the whole number at or above the number"),
    ("abs", "the number without its sign"),
    ("min", "`min N`: the smaller of the number and N; of a list, `min` is its smallest element"),
    ("max", "`max N`: the larger of the number and N; of a list, `max` is its largest element"),
    ("sum", "the sum of a list's numbers, exactly"),
    ("pick", "one element of the list, drawn at random"),
    ("shuffle", "the list's elements in an order drawn at random"),
    ("timestamp", "`timestamp` or `timestamp 'R'`: a time as the platform's timestamp, drawn in each reader's zone (styles t T d D f F s S R)"),
    ("date", "`date`, `date '%Y-%m-%d'` or `date '%H:%M' 'Europe/Paris'`: a time written as RFC 3339, or with a pattern in a zone"),
    ("unix", "a time as seconds since 1970"),
    ("add", "`add '2h30m'`: the time that much later"),
    ("sub", "`sub '1d'`: the time that much earlier"),
    ("seconds", "a duration (`10m`, `2h30m`, `1d`) as seconds; nothing if the text is no duration"),
    ("from_now", "a duration (`10m`, or seconds) from now: the time it ends"),
];

/// The longest a helper makes a text (`pad`, `replace`): what a message
/// can hold, many times over.
const MAX_TEXT: usize = 100_000;

/// The largest N of `first N` (a list variable holds at most as many).
const MAX_FIRST: u32 = crate::language::vocab::MAX_LIST as u32;

/// Where a `{…}`'s helpers start: after its reference or element path
/// (`api_x[…]`, `item[…]`, whose path ends at its first `]`) or its name.
/// `None` when it has none.
pub fn split(inner: &str) -> Option<usize> {
    let base_end = match inner.find('[') {
        Some(open) => open + inner[open..].find(']')? + 1,
        None => inner.find('|')?,
    };
    inner[base_end..].trim_start().starts_with('|').then_some(base_end)
}

/// Reads `|count|first 3|join ', '` (the text after the base, at byte
/// `start` of the file); a helper it cannot read is B150.
pub fn scan(text: &str, start: usize, diags: &mut Vec<Diagnostic>) -> Option<Vec<Helper>> {
    let mut helpers = Vec::new();
    let mut rest = text;
    loop {
        rest = rest.trim_start();
        if rest.is_empty() {
            return Some(helpers);
        }
        let at = start + text.len() - rest.len();
        let Some(after_bar) = rest.strip_prefix('|') else {
            diags.push(bad(
                at,
                rest,
                "a `|` before each helper",
                "write the helpers one after another: `{list|first 3|join}`",
            ));
            return None;
        };
        let after_bar = after_bar.trim_start();
        let word_len = after_bar.bytes().take_while(|b| b.is_ascii_alphanumeric() || *b == b'_').count();
        let (word, args) = after_bar.split_at(word_len);
        let here = start + text.len() - after_bar.len();
        let (helper, left) = match word {
            "count" => (Helper::Count, args),
            "upper" => (Helper::Upper, args),
            "lower" => (Helper::Lower, args),
            "trim" => (Helper::Trim, args),
            "length" => (Helper::Length, args),
            "floor" => (Helper::Floor, args),
            "ceil" => (Helper::Ceil, args),
            "abs" => (Helper::Abs, args),
            "pick" => (Helper::Pick, args),
            "sum" => (Helper::Sum, args),
            "shuffle" => (Helper::Shuffle, args),
            "unix" => (Helper::Unix, args),
            "seconds" => (Helper::Seconds, args),
            "from_now" => (Helper::FromNow, args),
            "first" => first(args, here, word_len, diags)?,
            "join" => join(args, here, word_len, diags)?,
            "replace" | "split" | "slice" | "pad" | "round" | "min" | "max" | "timestamp" | "date" | "add" | "sub" => {
                with_args(word, args, Span::new(here, here + word_len), diags)?
            }
            _ => {
                let span = Span::new(here, here + word_len.max(1));
                let mut d =
                    Diagnostic::new(Code::BadHelper, format!("`{word}` is not a helper")).label(span, "not a helper");
                // Other languages' words for these.
                let other = match word {
                    "lenght" | "len" | "size" | "size_of" => Some("length"),
                    "uppercase" | "to_upper" | "capitalize" => Some("upper"),
                    "lowercase" | "to_lower" => Some("lower"),
                    "strip" => Some("trim"),
                    "substring" | "substr" => Some("slice"),
                    "ceiling" => Some("ceil"),
                    "absolute" => Some("abs"),
                    "fixed" | "to_fixed" | "tofixed" => Some("round"),
                    "random" | "choice" | "sample" => Some("pick"),
                    "total" | "add_all" => Some("sum"),
                    "format" | "strftime" | "iso" => Some("date"),
                    "epoch" | "timestamp_s" => Some("unix"),
                    "plus" => Some("add"),
                    "minus" | "subtract" => Some("sub"),
                    "later" | "in" => Some("from_now"),
                    _ => None,
                };
                let meant = other.or_else(|| did_you_mean(word, NAMES.iter().copied()));
                d = d.meant(span, meant, "the helpers are `count`, `first N`, `join 'SEP'`, `upper`, `lower`, `trim`, `length`, `replace 'A' 'B'`, `split 'SEP'`, `slice N M`, `pad N 'C'`, `round N`, `floor`, `ceil`, `abs`, `min N`, `max N`, `sum`, `pick`, `shuffle`, `timestamp 'R'`, `date '%Y-%m-%d'`, `unix`, `add '1h'`, `sub '1h'`, `seconds` and `from_now`");
                diags.push(d);
                return None;
            }
        };
        helpers.push(helper);
        rest = left;
    }
}

/// `first N`: a whole number from 1 to 10,000.
fn first<'t>(args: &'t str, at: usize, word_len: usize, diags: &mut Vec<Diagnostic>) -> Option<(Helper, &'t str)> {
    let digits = args.trim_start();
    let len = digits.bytes().take_while(u8::is_ascii_digit).count();
    match digits[..len].parse::<u32>() {
        Ok(n) if (1..=MAX_FIRST).contains(&n) => Some((Helper::First(n), &digits[len..])),
        _ => {
            let span = Span::new(at, at + word_len + (args.len() - digits.len()) + len);
            diags.push(
                Diagnostic::new(Code::BadHelper, "`first` needs how many: a whole number from 1 to 10,000")
                    .label(span, "no count")
                    .help("write how many elements to keep: `{list|first 5}`"),
            );
            None
        }
    }
}

/// `join` or `join 'SEP'`: the separator in single quotes, with `\n`, `\t`,
/// `\\` and `\'` (the string around it is in double quotes).
fn join<'t>(args: &'t str, at: usize, word_len: usize, diags: &mut Vec<Diagnostic>) -> Option<(Helper, &'t str)> {
    match quoted(args) {
        Quoted::None => Some((Helper::Join(", ".to_string()), args)),
        Quoted::Text(separator, rest) => Some((Helper::Join(separator), rest)),
        Quoted::Open => {
            let span = Span::new(at, at + word_len + args.len());
            diags.push(
                Diagnostic::new(Code::BadHelper, "`join`'s separator has no closing `'`")
                    .label(span, "not closed")
                    .help("write the separator in single quotes: `{list|join ', '}` (a `}` cannot be in it)"),
            );
            None
        }
    }
}

/// A text in single quotes at the start of `args` (blanks before it).
enum Quoted<'t> {
    None,
    Text(String, &'t str),
    /// One that never closes.
    Open,
}

fn quoted(args: &str) -> Quoted<'_> {
    let Some(quoted) = args.trim_start().strip_prefix('\'') else { return Quoted::None };
    let mut text = String::new();
    let mut chars = quoted.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => return Quoted::Text(text, &quoted[i + 1..]),
            '\\' => match chars.next().map(|(_, c)| c) {
                Some('n') => text.push('\n'),
                Some('t') => text.push('\t'),
                Some(other) => text.push(other),
                None => break,
            },
            c => text.push(c),
        }
    }
    Quoted::Open
}

/// A whole number at the start of `args` (blanks before it), at most `max`.
fn whole(args: &str, max: u32) -> Option<(u32, &str)> {
    let digits = args.trim_start();
    let len = digits.bytes().take_while(u8::is_ascii_digit).count();
    let n = digits[..len].parse::<u32>().ok().filter(|n| *n <= max)?;
    Some((n, &digits[len..]))
}

/// `replace 'A' 'B'`, `split 'SEP'`, `slice N [M]`, `pad N ['C']`.
fn with_args<'t>(word: &str, args: &'t str, span: Span, diags: &mut Vec<Diagnostic>) -> Option<(Helper, &'t str)> {
    let text = |a: &'t str| match quoted(a) {
        Quoted::Text(t, rest) => Some((t, rest)),
        _ => None,
    };
    let read = match word {
        "replace" => text(args).and_then(|(from, rest)| {
            let (to, rest) = text(rest)?;
            (!from.is_empty()).then_some((Helper::Replace(from, to), rest))
        }),
        "split" => text(args).filter(|(sep, _)| !sep.is_empty()).map(|(sep, rest)| (Helper::Split(sep), rest)),
        "round" => match whole(args, 100) {
            Some((n, rest)) => Some((Helper::Round(n), rest)),
            None if args.trim_start().starts_with(|c: char| c.is_ascii_digit() || c == '-') => None,
            None => Some((Helper::Round(0), args)),
        },
        "timestamp" => match quoted(args) {
            Quoted::None => Some((Helper::Timestamp('f'), args)),
            Quoted::Text(style, rest) => {
                let mut chars = style.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) if crate::base::when::STYLES.iter().any(|(s, _)| *s == c) => {
                        Some((Helper::Timestamp(c), rest))
                    }
                    _ => None,
                }
            }
            Quoted::Open => None,
        },
        "date" => match quoted(args) {
            Quoted::None => Some((Helper::Date(None, None), args)),
            Quoted::Text(pattern, rest) if crate::base::when::pattern_ok(&pattern).is_ok() => match quoted(rest) {
                Quoted::None => Some((Helper::Date(Some(pattern), None), rest)),
                Quoted::Text(zone, rest) if crate::base::when::zone_ok(&zone) => {
                    Some((Helper::Date(Some(pattern), Some(zone)), rest))
                }
                _ => None,
            },
            _ => None,
        },
        "add" | "sub" => text(args)
            .filter(|(d, _)| crate::language::vocab::parse_duration(d).is_ok())
            .map(|(d, rest)| (if word == "add" { Helper::Add(d) } else { Helper::Sub(d) }, rest)),
        "min" | "max" => {
            let (n, rest) = match number(args) {
                Some((n, rest)) => (Some(n), rest),
                None if args.trim_start().is_empty() || args.trim_start().starts_with('|') => (None, args),
                None => return bad_args(word, span, diags),
            };
            Some((if word == "min" { Helper::Min(n) } else { Helper::Max(n) }, rest))
        }
        "slice" => whole(args, MAX_TEXT as u32).map(|(from, rest)| match whole(rest, MAX_TEXT as u32) {
            Some((to, rest)) => (Helper::Slice(from, Some(to)), rest),
            None => (Helper::Slice(from, None), rest),
        }),
        _ => whole(args, 1000).and_then(|(n, rest)| match quoted(rest) {
            Quoted::None => Some((Helper::Pad(n, ' '), rest)),
            Quoted::Text(c, rest) => {
                let mut chars = c.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Some((Helper::Pad(n, c), rest)),
                    _ => None,
                }
            }
            Quoted::Open => None,
        }),
    };
    if read.is_none() {
        return bad_args(word, span, diags);
    }
    read
}

/// A number at the start of `args` (blanks before it), in JSON's syntax and
/// within the limits numbers are computed with.
fn number(args: &str) -> Option<(String, &str)> {
    let text = args.trim_start();
    let len = text.bytes().take_while(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')).count();
    crate::base::numbers::parse(&text[..len]).ok()?;
    Some((text[..len].to_string(), &text[len..]))
}

/// B150 for a helper whose arguments are written wrong.
fn bad_args<'t>(word: &str, span: Span, diags: &mut Vec<Diagnostic>) -> Option<(Helper, &'t str)> {
    {
        let (how, example) = match word {
            "replace" => ("what to replace and with what, each in single quotes", "{text|replace 'colour' 'color'}"),
            "split" => ("the separator, in single quotes, not empty", "{option_tags|split ','}"),
            "slice" => ("where to start and, if not at the end, where to stop: whole numbers", "{text|slice 0 20}"),
            "round" => ("how many decimal places, a whole number up to 100, or nothing", "{price|round 2}"),
            "min" => ("a number to compare with (or nothing, of a list)", "{bet|min 100}"),
            "timestamp" => ("a style in single quotes, one of t T d D f F s S R (or none: f)", "{now|timestamp 'R'}"),
            "date" => (
                "a strftime pattern in single quotes (or none: RFC 3339), and a zone of the IANA database after it if not UTC",
                "{now|date '%A %H:%M' 'Europe/Paris'}",
            ),
            "add" | "sub" => ("a duration in single quotes: `'90s'`, `'10m'`, `'2h30m'`, `'1d'` (up to 366 days)", "{now|add '1d'}"),
            "max" => ("a number to compare with (or nothing, of a list)", "{balance|max 0}"),
            _ => (
                "how long, a whole number up to 1,000, and the character to add in single quotes",
                "{number|pad 3 '0'}",
            ),
        };
        diags.push(
            Diagnostic::new(Code::BadHelper, format!("`{word}` needs {how}"))
                .label(span, "written wrong")
                .help(format!("write it as `{example}`")),
        );
    }
    None
}

fn bad(at: usize, rest: &str, what: &str, help: &str) -> Diagnostic {
    let len = rest.chars().next().map_or(1, char::len_utf8);
    Diagnostic::new(Code::BadHelper, format!("expected {what}"))
        .label(Span::new(at, at + len), "not a helper")
        .help(help.to_string())
}

/// What the helpers make of a value. A list helper takes a value that is
/// not a list as a list of that one value, and `null` (or a value that is
/// missing) as an empty list; a text helper takes the value as text (a
/// list or an object as its JSON text, `null` as empty); a number helper
/// takes a number or a text that holds one, exactly, and fails on anything
/// else (B323 where the run reaches it).
pub fn apply(value: Json, helpers: &[Helper], world: &mut dyn World) -> Result<Json, HelperError> {
    helpers.iter().try_fold(value, |value, helper| {
        Ok(match helper {
            Helper::Pick | Helper::Shuffle => drawn(value, helper, world),
            Helper::Timestamp(_) | Helper::Date(..) | Helper::Unix | Helper::Add(_) | Helper::Sub(_) => {
                timed(&when::time_of(&value).map_err(HelperError::NotATime)?, helper)?
            }
            // (`seconds` is how a tree tests a user's duration: nothing, not
            // a failure, for text that is none.)
            Helper::Seconds => {
                let text = crate::base::values::as_text(&value);
                crate::language::vocab::parse_duration(&text).map_or(Json::Null, Json::from)
            }
            Helper::FromNow => {
                let text = crate::base::values::as_text(&value);
                let seconds = crate::language::vocab::parse_duration(&text)
                    .map_err(|_| HelperError::NotADuration(shown(&text)))?;
                match helper {
                    Helper::Seconds => Json::from(seconds),
                    _ => Json::String(when::written(
                        when::moved(world.now(), seconds as i64).map_err(HelperError::NotATime)?,
                    )),
                }
            }
            Helper::Count | Helper::First(_) | Helper::Join(_) => list(value, helper),
            Helper::Length if value.is_array() || value.is_null() => list(value, &Helper::Count),
            Helper::Slice(from, to) if value.is_array() => {
                let items = value.as_array().cloned().unwrap_or_default();
                let (from, to) = (*from as usize, to.map_or(items.len(), |t| t as usize));
                Json::Array(items.into_iter().skip(from).take(to.saturating_sub(from)).collect())
            }
            Helper::Min(None) | Helper::Max(None) => extreme(value, matches!(helper, Helper::Max(_)))?,
            Helper::Sum => sum(value)?,
            Helper::Round(_) | Helper::Floor | Helper::Ceil | Helper::Abs | Helper::Min(_) | Helper::Max(_) => {
                arithmetic(&numbers::number(&value)?, helper)?
            }
            _ => text(&crate::base::values::as_text(&value), helper),
        })
    })
}

/// Why a helper could not make its value (the run fails at the `{…}`).
#[derive(Debug, Clone, PartialEq)]
pub enum HelperError {
    /// A number helper's value is not a number (B323).
    Calc(CalcError),
    /// A time helper's value is not a time: what it is (B335).
    NotATime(String),
    /// A duration helper's value is not a duration: what it is (B335).
    NotADuration(String),
}

impl From<CalcError> for HelperError {
    fn from(e: CalcError) -> HelperError {
        HelperError::Calc(e)
    }
}

impl HelperError {
    /// The run's diagnostic of this failure, at the `{…}`.
    pub fn diagnostic(&self, span: Span) -> Diagnostic {
        match self {
            HelperError::Calc(e) => e.diagnostic("the value before the helper", span),
            HelperError::NotATime(is) => Diagnostic::new(Code::NotATime, format!("the value is {is}, not a time"))
                .label(span, "a time helper's value")
                .help("a time is RFC 3339 text (`2026-11-28T09:00:00Z`), a date (`2026-11-28`) or seconds since 1970, as `{now}` and `|from_now` make"),
            HelperError::NotADuration(is) => {
                Diagnostic::new(Code::NotATime, format!("the value is {is}, not a duration"))
                    .label(span, "a duration helper's value")
                    .help("a duration is seconds, or text like \"90s\", \"10m\", \"2h30m\" or \"1d\" (up to 366 days); check it first: `if \"{option_in|seconds}\"`")
            }
        }
    }
}

fn shown(text: &str) -> String {
    let cut: String = text.chars().take(40).collect();
    match () {
        _ if text.is_empty() => "empty".to_string(),
        _ if cut.len() < text.len() => format!("\"{cut}…\""),
        _ => format!("\"{cut}\""),
    }
}

/// A random helper: an element drawn, or the elements in a drawn order.
fn drawn(value: Json, helper: &Helper, world: &mut dyn World) -> Json {
    use rand::seq::SliceRandom as _;
    use rand::Rng as _;
    let mut items = match value {
        Json::Array(items) => items,
        Json::Null => Vec::new(),
        one => vec![one],
    };
    match helper {
        Helper::Shuffle => {
            items.shuffle(world.rng());
            Json::Array(items)
        }
        _ if items.is_empty() => Json::Null,
        _ => {
            let at = world.rng().random_range(0..items.len());
            items.swap_remove(at)
        }
    }
}

/// A time helper on `t`.
fn timed(t: &time::OffsetDateTime, helper: &Helper) -> Result<Json, HelperError> {
    let seconds = |d: &str| crate::language::vocab::parse_duration(d).unwrap_or(0) as i64;
    Ok(match helper {
        Helper::Timestamp(style) => Json::String(when::markup(*t, *style)),
        Helper::Date(None, _) => Json::String(when::written(*t)),
        Helper::Date(Some(pattern), zone) => Json::String(when::format(*t, pattern, zone.as_deref())),
        Helper::Add(d) => Json::String(when::written(when::moved(*t, seconds(d)).map_err(HelperError::NotATime)?)),
        Helper::Sub(d) => Json::String(when::written(when::moved(*t, -seconds(d)).map_err(HelperError::NotATime)?)),
        _ => Json::from(t.unix_timestamp()),
    })
}

/// A number helper on `n`, exactly.
fn arithmetic(n: &BigDecimal, helper: &Helper) -> Result<Json, CalcError> {
    use bigdecimal::RoundingMode;
    let result = match helper {
        Helper::Round(places) => n.with_scale_round(i64::from(*places), RoundingMode::HalfUp),
        Helper::Floor => n.with_scale_round(0, RoundingMode::Floor),
        Helper::Ceil => n.with_scale_round(0, RoundingMode::Ceiling),
        Helper::Abs => n.abs(),
        Helper::Min(Some(m)) => n.clone().min(numbers::parse(m)?),
        Helper::Max(Some(m)) => n.clone().max(numbers::parse(m)?),
        _ => n.clone(),
    };
    Ok(numbers::to_json(&result))
}

/// The sum of a list of numbers, exactly; an element that is not a number
/// fails as any operand does.
fn sum(value: Json) -> Result<Json, CalcError> {
    let items = match value {
        Json::Array(items) => items,
        Json::Null => Vec::new(),
        one => vec![one],
    };
    let mut total = BigDecimal::from(0);
    for item in &items {
        total = numbers::add(&total, &numbers::number(item)?)?;
    }
    Ok(numbers::to_json(&total))
}

/// The smallest or largest element of a list of numbers (`null` of an
/// empty one); an element that is not a number fails as any operand does.
fn extreme(value: Json, largest: bool) -> Result<Json, CalcError> {
    let items = match value {
        Json::Array(items) => items,
        Json::Null => return Ok(Json::Null),
        one => vec![one],
    };
    let mut best: Option<BigDecimal> = None;
    for item in &items {
        let n = numbers::number(item)?;
        best = Some(match best {
            Some(b) if (n > b) == largest && n != b => n,
            Some(b) => b,
            None => n,
        });
    }
    Ok(best.map_or(Json::Null, |b| numbers::to_json(&b)))
}

fn list(value: Json, helper: &Helper) -> Json {
    let items = match value {
        Json::Array(items) => items,
        Json::Null => Vec::new(),
        one => vec![one],
    };
    match helper {
        Helper::First(n) => Json::Array(items.into_iter().take(*n as usize).collect()),
        Helper::Join(separator) => {
            let mut text = String::new();
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    text.push_str(separator);
                }
                crate::base::values::push_value(&mut text, item);
            }
            Json::String(text)
        }
        _ => Json::from(items.len()),
    }
}

/// A text helper on `t`: never past [`MAX_TEXT`] characters, a split never
/// past a list's bound.
fn text(t: &str, helper: &Helper) -> Json {
    let bounded = |s: String| if s.len() > MAX_TEXT * 4 { s.chars().take(MAX_TEXT).collect() } else { s };
    match helper {
        Helper::Upper => Json::String(bounded(t.to_uppercase())),
        Helper::Lower => Json::String(bounded(t.to_lowercase())),
        Helper::Trim => Json::String(t.trim().to_string()),
        Helper::Length => Json::from(t.chars().count()),
        Helper::Replace(from, to) => {
            // (At most as many replacements as keep the text within its bound.)
            let room = if to.len() > from.len() {
                (MAX_TEXT * 4 - t.len().min(MAX_TEXT * 4)) / (to.len() - from.len())
            } else {
                usize::MAX
            };
            Json::String(bounded(t.replacen(from.as_str(), to, room)))
        }
        Helper::Split(sep) => {
            let parts = t.split(sep.as_str()).take(crate::language::vocab::MAX_LIST);
            Json::Array(parts.map(|p| Json::String(p.to_string())).collect())
        }
        Helper::Slice(from, to) => {
            let (from, to) = (*from as usize, to.map_or(usize::MAX, |t| t as usize));
            Json::String(t.chars().skip(from).take(to.saturating_sub(from)).collect())
        }
        Helper::Pad(n, c) => {
            let missing = (*n as usize).saturating_sub(t.chars().count());
            Json::String(std::iter::repeat_n(*c, missing).chain(t.chars()).collect())
        }
        _ => Json::String(t.to_string()),
    }
}

/// The helpers as a template writes them (for the formatter and the editor).
pub fn written(helpers: &[Helper]) -> String {
    let mut out = String::new();
    for helper in helpers {
        match helper {
            Helper::Count => out.push_str("|count"),
            Helper::First(n) => out.push_str(&format!("|first {n}")),
            Helper::Join(separator) if separator == ", " => out.push_str("|join"),
            Helper::Join(separator) => out.push_str(&format!("|join {}", quote(separator))),
            Helper::Upper => out.push_str("|upper"),
            Helper::Lower => out.push_str("|lower"),
            Helper::Trim => out.push_str("|trim"),
            Helper::Length => out.push_str("|length"),
            Helper::Replace(from, to) => out.push_str(&format!("|replace {} {}", quote(from), quote(to))),
            Helper::Split(sep) => out.push_str(&format!("|split {}", quote(sep))),
            Helper::Slice(from, Some(to)) => out.push_str(&format!("|slice {from} {to}")),
            Helper::Slice(from, None) => out.push_str(&format!("|slice {from}")),
            Helper::Pad(n, ' ') => out.push_str(&format!("|pad {n}")),
            Helper::Pad(n, c) => out.push_str(&format!("|pad {n} {}", quote(&c.to_string()))),
            Helper::Round(0) => out.push_str("|round"),
            Helper::Round(n) => out.push_str(&format!("|round {n}")),
            Helper::Floor => out.push_str("|floor"),
            Helper::Ceil => out.push_str("|ceil"),
            Helper::Abs => out.push_str("|abs"),
            Helper::Pick => out.push_str("|pick"),
            Helper::Sum => out.push_str("|sum"),
            Helper::Shuffle => out.push_str("|shuffle"),
            Helper::Timestamp('f') => out.push_str("|timestamp"),
            Helper::Timestamp(style) => out.push_str(&format!("|timestamp '{style}'")),
            Helper::Date(None, _) => out.push_str("|date"),
            Helper::Date(Some(pattern), None) => out.push_str(&format!("|date {}", quote(pattern))),
            Helper::Date(Some(pattern), Some(zone)) => {
                out.push_str(&format!("|date {} {}", quote(pattern), quote(zone)))
            }
            Helper::Unix => out.push_str("|unix"),
            Helper::Add(d) => out.push_str(&format!("|add {}", quote(d))),
            Helper::Sub(d) => out.push_str(&format!("|sub {}", quote(d))),
            Helper::Seconds => out.push_str("|seconds"),
            Helper::FromNow => out.push_str("|from_now"),
            Helper::Min(n) | Helper::Max(n) => {
                out.push_str(if matches!(helper, Helper::Min(_)) { "|min" } else { "|max" });
                if let Some(n) = n {
                    out.push(' ');
                    out.push_str(n);
                }
            }
        }
    }
    out
}

/// A helper's text as written: in single quotes, escaped.
fn quote(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('\'', "\\'").replace('\n', "\\n").replace('\t', "\\t");
    format!("'{escaped}'")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The helpers applied in a world of seed 1, at 2026-11-28T09:30:00Z.
    fn ap(value: Json, helpers: &[Helper]) -> Result<Json, HelperError> {
        let now = time::OffsetDateTime::from_unix_timestamp(1_795_858_200).unwrap();
        apply(value, helpers, &mut crate::base::world::Real::new(Some(1), Some(now)))
    }

    fn read(text: &str) -> Result<Vec<Helper>, String> {
        let mut diags = Vec::new();
        scan(text, 0, &mut diags).ok_or_else(|| diags[0].message.clone())
    }

    #[test]
    fn helpers_are_read_and_applied_left_to_right() {
        assert_eq!(read("|first 2| join ' | '"), Ok(vec![Helper::First(2), Helper::Join(" | ".into())]));
        assert_eq!(read("|join '\\n'|count"), Ok(vec![Helper::Join("\n".into()), Helper::Count]));
        let list = json!(["a", 2, { "k": "v" }, null]);
        assert_eq!(ap(list.clone(), &[Helper::Count]).unwrap(), json!(4));
        assert_eq!(ap(list.clone(), &[Helper::First(2), Helper::Join(", ".into())]).unwrap(), json!("a, 2"));
        assert_eq!(ap(list, &[Helper::Join("/".into())]).unwrap(), json!("a/2/{\"k\":\"v\"}/null"));
        assert_eq!(ap(json!(null), &[Helper::Count]).unwrap(), json!(0));
        assert_eq!(ap(json!("one"), &[Helper::Count]).unwrap(), json!(1));
        assert_eq!(ap(json!([1, 2, 3]), &[Helper::First(5)]).unwrap(), json!([1, 2, 3]));
    }

    #[test]
    fn text_helpers_work_on_characters_and_keep_to_their_bounds() {
        let t = |value: Json, text: &str| ap(value, &read(text).unwrap()).unwrap();
        assert_eq!(t(json!("  Ève ß  "), "|trim|upper"), json!("ÈVE SS"));
        assert_eq!(t(json!("ÈVE"), "|lower"), json!("ève"));
        assert_eq!(t(json!("héllo 👋"), "|length"), json!(7));
        assert_eq!(t(json!([1, 2, 3]), "|length"), json!(3));
        assert_eq!(t(json!(null), "|length"), json!(0));
        assert_eq!(t(json!(""), "|length|pad 3 '0'"), json!("000"));
        assert_eq!(t(json!(7), "|pad 3 '0'"), json!("007"));
        assert_eq!(t(json!("long"), "|pad 2"), json!("long"));
        assert_eq!(t(json!("a,b,,c"), "|split ','"), json!(["a", "b", "", "c"]));
        assert_eq!(t(json!("a, b, c"), "|split ', '|count"), json!(3));
        assert_eq!(t(json!("a, b, c"), "|split ', '|join ' & '"), json!("a & b & c"));
        assert_eq!(t(json!("héllo wörld"), "|slice 1 4"), json!("éll"));
        assert_eq!(t(json!("héllo"), "|slice 3"), json!("lo"));
        assert_eq!(t(json!("héllo"), "|slice 9 2"), json!(""));
        assert_eq!(t(json!([1, 2, 3, 4]), "|slice 1 3"), json!([2, 3]));
        assert_eq!(t(json!("colour colour"), "|replace 'colour' 'color'"), json!("color color"));
        assert_eq!(t(json!({ "a": 1 }), "|upper"), json!("{\"A\":1}"));
        // Bounded: a split of a huge text, a replace that would grow it.
        let huge = "x,".repeat(50_000);
        assert_eq!(t(json!(huge), "|split ','|count"), json!(crate::language::vocab::MAX_LIST));
        let grown = t(json!("a".repeat(100_000)), "|replace 'a' 'aaaaaaaaaa'");
        assert!(grown.as_str().unwrap().len() <= MAX_TEXT * 4, "{}", grown.as_str().unwrap().len());
    }

    #[test]
    fn number_helpers_are_exact_and_fail_on_what_is_not_a_number() {
        let t = |value: Json, text: &str| ap(value, &read(text).unwrap());
        assert_eq!(t(json!(2.5), "|round"), Ok(json!(3)));
        assert_eq!(t(json!(-2.5), "|round"), Ok(json!(-3)));
        assert_eq!(t(json!("1.005"), "|round 2"), Ok(json!(1.01)));
        assert_eq!(t(json!(0.1), "|round 3"), Ok(json!(0.1)));
        assert_eq!(t(json!("-1.5"), "|floor"), Ok(json!(-2)));
        assert_eq!(t(json!("-1.5"), "|ceil"), Ok(json!(-1)));
        assert_eq!(t(json!(-7), "|abs"), Ok(json!(7)));
        assert_eq!(t(json!(250), "|min 100"), Ok(json!(100)));
        assert_eq!(t(json!(-3), "|max 0"), Ok(json!(0)));
        assert_eq!(t(json!("9007199254740993"), "|max 1"), Ok(json!(9007199254740993u64)));
        assert_eq!(t(json!([3, "12", 7.5]), "|max"), Ok(json!(12)));
        assert_eq!(t(json!([3, "12", 7.5]), "|min"), Ok(json!(3)));
        assert_eq!(t(json!([]), "|min"), Ok(json!(null)));
        assert_eq!(t(json!(["3", "x"]), "|max"), Err(HelperError::Calc(CalcError::NotANumber("\"x\"".into()))));
        assert_eq!(t(json!("Ève"), "|round"), Err(HelperError::Calc(CalcError::NotANumber("\"Ève\"".into()))));
        assert_eq!(t(json!(null), "|abs"), Err(HelperError::Calc(CalcError::NotANumber("null".into()))));
        assert_eq!(t(json!("1e5000"), "|abs"), Err(HelperError::Calc(CalcError::TooLarge)));
        assert_eq!(t(json!(12.345), "|round 1|pad 6 '0'"), Ok(json!("0012.3")));
        let huge = "9".repeat(4000);
        assert_eq!(t(json!(huge.clone()), "|floor"), Ok(serde_json::from_str::<Json>(&huge).unwrap()));
    }

    #[test]
    fn time_helpers_read_write_and_move_times() {
        let t = |value: Json, text: &str| ap(value, &read(text).unwrap());
        let now = json!("2026-11-28T09:30:00Z");
        assert_eq!(t(now.clone(), "|timestamp"), Ok(json!("<t:1795858200:f>")));
        assert_eq!(t(now.clone(), "|timestamp 'R'"), Ok(json!("<t:1795858200:R>")));
        assert_eq!(t(json!(1795858200), "|date"), Ok(json!("2026-11-28T09:30:00Z")));
        assert_eq!(t(now.clone(), "|date '%d/%m %H:%M' 'Asia/Tokyo'"), Ok(json!("28/11 18:30")));
        assert_eq!(t(now.clone(), "|add '2h30m'|date '%H:%M'"), Ok(json!("12:00")));
        assert_eq!(t(now.clone(), "|sub '1d'"), Ok(json!("2026-11-27T09:30:00Z")));
        assert_eq!(t(now.clone(), "|unix"), Ok(json!(1795858200)));
        assert_eq!(t(json!("2h30m"), "|seconds"), Ok(json!(9000)));
        assert_eq!(t(json!(" 90 "), "|seconds"), Ok(json!(90)));
        assert_eq!(t(json!("soon"), "|seconds"), Ok(json!(null)));
        assert_eq!(t(json!("10m"), "|from_now"), Ok(json!("2026-11-28T09:40:00Z")));
        assert_eq!(t(json!("10m"), "|from_now|timestamp 'R'"), Ok(json!("<t:1795858800:R>")));
        assert_eq!(t(json!("soon"), "|from_now"), Err(HelperError::NotADuration("\"soon\"".into())));
        assert_eq!(t(json!("next week"), "|timestamp"), Err(HelperError::NotATime("\"next week\"".into())));
        assert_eq!(t(json!(""), "|unix"), Err(HelperError::NotATime("empty".into())));
        assert!(t(json!("9999-12-31T00:00:00Z"), "|add '2d'").is_err());
    }

    #[test]
    fn draws_are_reproducible_uniform_and_within_their_bounds() {
        use crate::base::world::Real;
        let draw = |inner: &str| scan_draw(inner, 0, &mut Vec::new()).map(|(d, _)| d);
        let die = draw("random 1 6").unwrap();
        let roll = |world: &mut Real| drawn_value(&die, &mut |_| Json::Null, world).unwrap().as_i64().unwrap();
        let (mut a, mut b) = (Real::new(Some(42), None), Real::new(Some(42), None));
        let first: Vec<i64> = (0..50).map(|_| roll(&mut a)).collect();
        assert_eq!(first, (0..50).map(|_| roll(&mut b)).collect::<Vec<_>>());
        // Chi-square over 60,000 draws of a die: 5 degrees of freedom,
        // 20.52 is the 0.1% critical value.
        let mut world = Real::new(Some(7), None);
        let mut counts = [0u32; 6];
        for _ in 0..60_000 {
            counts[(roll(&mut world) - 1) as usize] += 1;
        }
        let chi: f64 = counts.iter().map(|&c| (f64::from(c) - 10_000.0).powi(2) / 10_000.0).sum();
        assert!(chi < 20.52, "{counts:?}: {chi}");
        // Bounds from variables, in either order; a chance of 0 and 100.
        let between = draw("random low option_high").unwrap();
        let mut vars = |name: &str| if name == "low" { json!(10) } else { json!("8") };
        for _ in 0..100 {
            let n = drawn_value(&between, &mut vars, &mut world).unwrap().as_i64().unwrap();
            assert!((8..=10).contains(&n), "{n}");
        }
        let never = draw("chance 0").unwrap();
        let always = draw("chance 100").unwrap();
        for _ in 0..1000 {
            assert_eq!(drawn_value(&never, &mut |_| Json::Null, &mut world), Ok(json!(false)));
            assert_eq!(drawn_value(&always, &mut |_| Json::Null, &mut world), Ok(json!(true)));
        }
        let quarter = draw("chance 25").unwrap();
        let hits =
            (0..40_000).filter(|_| drawn_value(&quarter, &mut |_| Json::Null, &mut world) == Ok(json!(true))).count();
        assert!((9_400..10_600).contains(&hits), "{hits}");
        // A bound that is not a whole number fails the run.
        let mut half = |_: &str| json!(2.5);
        assert!(drawn_value(&between, &mut half, &mut world).is_err());
        // pick and shuffle keep the elements.
        let list = json!(["a", "b", "c", "d"]);
        let picked = ap(list.clone(), &[Helper::Pick]).unwrap();
        assert!(list.as_array().unwrap().contains(&picked));
        let mut shuffled: Vec<String> = serde_json::from_value(ap(list, &[Helper::Shuffle]).unwrap()).unwrap();
        shuffled.sort();
        assert_eq!(shuffled, ["a", "b", "c", "d"]);
        assert_eq!(ap(json!([]), &[Helper::Pick]), Ok(json!(null)));
        // Dice: each die within its sides, summed exactly.
        let two = draw("dice 2d6").unwrap();
        for _ in 0..200 {
            let rolls = drawn_value(&two, &mut |_| Json::Null, &mut world).unwrap();
            let rolls = rolls.as_array().unwrap();
            assert_eq!(rolls.len(), 2);
            assert!(rolls.iter().all(|r| (1..=6).contains(&r.as_i64().unwrap())), "{rolls:?}");
        }
        assert_eq!(draw("dice d20"), Some(Draw::Dice(Bound::Number("d20".into()))));
        assert_eq!(dice("3D8"), Ok((3, 8)));
        assert!(dice("0d6").is_err() && dice("2d1").is_err() && dice("101d6").is_err() && dice("2x6").is_err());
        let mut text = |_: &str| json!("2x6");
        assert!(drawn_value(&draw("dice option_dice").unwrap(), &mut text, &mut world).is_err());
        assert_eq!(ap(json!([1, "2.5", 3]), &[Helper::Sum]), Ok(json!(6.5)));
        assert_eq!(ap(json!([]), &[Helper::Sum]), Ok(json!(0)));
        assert!(ap(json!([1, "x"]), &[Helper::Sum]).is_err());
        // Written wrong: B150.
        for wrong in [
            "random 6 1",
            "random 1",
            "random 1 2.5",
            "random 1 99999999999999999",
            "chance 101",
            "chance -1",
            "chance",
        ] {
            assert!(draw(wrong).is_none(), "{wrong}");
        }
        assert!(!is_draw("random") && is_draw("random 1 6") && is_draw("chance 5"));
    }

    #[test]
    fn a_helper_that_cannot_be_read_says_why() {
        assert!(read("|timestamp 'x'").unwrap_err().contains("`timestamp` needs"));
        assert!(read("|date '%Q'").unwrap_err().contains("`date` needs"));
        assert!(read("|date '%H' 'Mars/Base'").unwrap_err().contains("`date` needs"));
        assert!(read("|add 'soon'").unwrap_err().contains("`add` needs"));
        assert!(read("|format").unwrap_err().contains("`format` is not a helper"));
        assert!(read("|round 500").unwrap_err().contains("`round` needs"));
        assert!(read("|min x").unwrap_err().contains("`min` needs"));
        assert!(read("|ceiling").unwrap_err().contains("`ceiling` is not a helper"));
        assert!(read("|cuont").unwrap_err().contains("`cuont` is not a helper"));
        assert!(read("|replace 'a'").unwrap_err().contains("`replace` needs"));
        assert!(read("|split ''").unwrap_err().contains("`split` needs"));
        assert!(read("|pad 3 'ab'").unwrap_err().contains("`pad` needs"));
        assert!(read("|pad 5000").unwrap_err().contains("`pad` needs"));
        assert!(read("|slice x").unwrap_err().contains("`slice` needs"));
        assert!(read("|first").unwrap_err().contains("a whole number from 1"));
        assert!(read("|first 0").unwrap_err().contains("a whole number from 1"));
        assert!(read("|join ', ").unwrap_err().contains("no closing"));
        assert!(read("|count x").unwrap_err().contains("expected a `|`"));
        assert_eq!(split("queue|count"), Some(5));
        assert_eq!(split("api_x[response.a|b]"), None);
        assert_eq!(split("api_x[response.items] |join"), Some(21));
        assert_eq!(split("user_name"), None);
    }

    #[test]
    fn what_is_written_reads_back() {
        for text in [
            "|count",
            "|first 3|join",
            "|join ' | '",
            "|join '\\n'",
            "|join 'it\\'s'",
            "|upper|lower|trim|length",
            "|replace 'a\\'' ''|split ','|slice 1 3|slice 2",
            "|pad 4|pad 3 '0'|pad 2 '\\''",
            "|round|round 2|floor|ceil|abs|min|max|min -1.5|max 1e3",
            "|pick|shuffle|timestamp|timestamp 'R'|date|date '%H:%M'|date '%d %B' 'Europe/Paris'|unix|add '1h'|sub '2d'",
            "|seconds|from_now|sum",
        ] {
            let helpers = read(text).unwrap();
            assert_eq!(read(&written(&helpers)), Ok(helpers), "{text}");
        }
    }
}
