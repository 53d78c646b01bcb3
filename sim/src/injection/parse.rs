//! The spec of a fault plan: `slow-pe=3:4x, link=nvswitch:0.25x, stall=pe2-nic:10us..60us,
//! crash=2@50us` (docs/faults.md). Items are separated by commas; any part of an item may be
//! `random` or left out, and is then drawn when the run starts.

use std::str::FromStr;

use super::{Factor, FaultPlan, FaultPlanError, Injection, Interval, LinkScale, Pick};

/// The forms of an item, for error messages.
const FORMS: &str = "slow-pe=PE:FACTOR, link=LINKS:SCALE, stall=LINKS:FROM..TO or crash=PE@TIME \
                     (any part may be `random`), or `none`";

impl FromStr for FaultPlan {
    type Err = FaultPlanError;

    fn from_str(spec: &str) -> Result<FaultPlan, FaultPlanError> {
        let spec = spec.trim();
        if spec.is_empty() || spec == "none" {
            return Ok(FaultPlan::default());
        }
        let items = spec
            .split(',')
            .map(|item| parse_item(item.trim()))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(FaultPlan { items })
    }
}

fn error(item: &str, problem: impl Into<String>) -> FaultPlanError {
    FaultPlanError {
        item: item.to_string(),
        problem: problem.into(),
    }
}

fn parse_item(item: &str) -> Result<Injection, FaultPlanError> {
    if item.is_empty() {
        return Err(error(
            item,
            format!("an empty item (two commas in a row?); each item is one of {FORMS}"),
        ));
    }
    let Some((kind, value)) = item.split_once('=') else {
        return Err(error(item, format!("expected one of {FORMS}")));
    };
    let value = value.trim();
    match kind.trim() {
        "slow-pe" => {
            let (pe, factor) = split_part(value, ':');
            Ok(Injection::SlowPe {
                pe: pick(item, pe, parse_pe)?,
                factor: pick_or_random(item, factor, parse_slowdown)?,
            })
        }
        "link" => {
            let (links, scale) = split_part(value, ':');
            Ok(Injection::Link {
                links: pick(item, links, parse_links)?,
                scale: pick_or_random(item, scale, parse_link_scale)?,
            })
        }
        "stall" => {
            let (links, during) = split_part(value, ':');
            Ok(Injection::Stall {
                links: pick(item, links, parse_links)?,
                during: pick_or_random(item, during, parse_interval)?,
            })
        }
        "crash" => {
            let (pe, at) = split_part(value, '@');
            Ok(Injection::Crash {
                pe: pick(item, pe, parse_pe)?,
                at_ns: pick_or_random(item, at, parse_time)?,
            })
        }
        other => Err(error(
            item,
            format!("unknown fault {other:?}; expected one of {FORMS}"),
        )),
    }
}

/// Splits `value` at the first `sep` into a required part and an optional one.
fn split_part(value: &str, sep: char) -> (&str, Option<&str>) {
    match value.split_once(sep) {
        Some((a, b)) => (a.trim(), Some(b.trim())),
        None => (value, None),
    }
}

/// A required part: given, or `random`.
fn pick<T>(
    item: &str,
    part: &str,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Pick<T>, FaultPlanError> {
    if part == "random" {
        return Ok(Pick::Random);
    }
    if part.is_empty() {
        return Err(error(
            item,
            "a part is empty; write a value or `random` (docs/faults.md)",
        ));
    }
    parse(part).map(Pick::Given).map_err(|p| error(item, p))
}

/// An optional part: left out means random.
fn pick_or_random<T>(
    item: &str,
    part: Option<&str>,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<Pick<T>, FaultPlanError> {
    match part {
        None => Ok(Pick::Random),
        Some(part) => pick(item, part, parse),
    }
}

fn parse_pe(s: &str) -> Result<u32, String> {
    s.parse::<u32>()
        .map_err(|_| format!("{s:?} is not a PE; write a PE number (0, 1, ...) or `random`"))
}

/// A link selector is checked against the machine later (`links.rs`); here it must only be a
/// word.
fn parse_links(s: &str) -> Result<String, String> {
    if s.chars().any(char::is_whitespace) {
        return Err(format!(
            "{s:?} is not a link selector: it has a space; write a link kind (nvlink, pcie, ib), \
             a node kind, a node name, peN, A-B for the links between two of those, or `all`"
        ));
    }
    Ok(s.to_string())
}

/// A slow PE's factor: how many times as long its own time takes.
fn parse_slowdown(s: &str) -> Result<Factor, String> {
    parse_factor(s)
}

fn parse_link_scale(s: &str) -> Result<LinkScale, String> {
    if let Some(f) = s.strip_prefix("bw=") {
        Ok(LinkScale::Bandwidth(parse_factor(f)?))
    } else if let Some(f) = s.strip_prefix("lat=") {
        Ok(LinkScale::Latency(parse_factor(f)?))
    } else {
        parse_factor(s)
            .map(LinkScale::Speed)
            .map_err(|e| format!("{e}; a link's scale is its speed (0.25x), bw=Fx or lat=Fx"))
    }
}

/// `4x`, `0.25x`, `1.5x`: a positive number of at most three decimals, then `x`.
pub(super) fn parse_factor(s: &str) -> Result<Factor, String> {
    let bad = || format!("{s:?} is not a factor; write a positive number and x: 4x, 0.25x, 1.5x");
    let number = s.strip_suffix('x').ok_or_else(bad)?;
    let milli = parse_fixed(number, 1000).ok_or_else(bad)?;
    Factor::from_milli(milli)
        .ok_or_else(|| format!("{s:?}: a factor of zero stops time; {}", bad()))
}

/// `10us..60us`: a start and a later end.
fn parse_interval(s: &str) -> Result<Interval, String> {
    let (from, to) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?} is not an interval; write FROM..TO, like 10us..60us"))?;
    let (from_ns, to_ns) = (parse_time(from.trim())?, parse_time(to.trim())?);
    if to_ns <= from_ns {
        return Err(format!(
            "the interval {s:?} ends before it starts; write FROM..TO with TO later, like \
             10us..60us"
        ));
    }
    Ok(Interval { from_ns, to_ns })
}

/// `50us`, `1.5ms`, `200ns`, `2s`: a number and a unit, in whole nanoseconds.
pub(super) fn parse_time(s: &str) -> Result<u64, String> {
    let bad = || {
        format!(
            "{s:?} is not a time; write a number and a unit (ns, us, ms, s): 50us, 1.5ms, 200ns"
        )
    };
    let units: [(&str, u64); 5] = [
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
    ];
    let (number, unit_ns) = units
        .iter()
        .find_map(|&(unit, ns)| s.strip_suffix(unit).map(|n| (n, ns)))
        .ok_or_else(bad)?;
    parse_fixed(number, unit_ns).ok_or_else(bad)
}

/// A decimal number times `unit`, when that is whole: `parse_fixed("1.5", 1000)` is 1500.
fn parse_fixed(number: &str, unit: u64) -> Option<u64> {
    let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
    let digits_only = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() || !digits_only(whole) || !digits_only(frac) || frac.len() > 9 {
        return None;
    }
    let whole: u64 = whole.parse().ok()?;
    let mut value = whole.checked_mul(unit)?;
    if !frac.is_empty() {
        let scale = 10u64.pow(frac.len() as u32);
        let frac: u64 = frac.parse().ok()?;
        let scaled = u128::from(frac) * u128::from(unit);
        if scaled % u128::from(scale) != 0 {
            return None;
        }
        value = value.checked_add(u64::try_from(scaled / u128::from(scale)).ok()?)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_exact() {
        assert_eq!(parse_fixed("1.5", 1000), Some(1500));
        assert_eq!(parse_fixed("0.25", 1000), Some(250));
        assert_eq!(parse_fixed("0.0001", 1000), None, "finer than the unit");
        assert_eq!(parse_fixed(".5", 1000), None);
        assert_eq!(parse_fixed("1e3", 1), None);
        assert_eq!(parse_time("73.214us"), Ok(73_214));
        assert_eq!(parse_time("2s"), Ok(2_000_000_000));
        assert!(parse_time("1.5ns").is_err());
    }
}
