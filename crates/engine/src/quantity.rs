//! Kubernetes resource quantities (`100m`, `1.5`, `1Gi`, `1G`, `1e3`, `12E`, `0.1Ki`).
//!
//! A quantity is kept exactly, in nano-units (the finest scale Kubernetes keeps), as an `i128`.
//! The scheduler reads two projections of it, as kube-scheduler does: `milli_value()` for cpu and
//! `value()` for everything else, both rounded up (away from zero) like `resource.Quantity`.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::Deserialize;

/// Why a string is not a quantity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid quantity {input:?}: {why}")]
pub struct QuantityError {
    /// The text that was given.
    pub input: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// A parsed quantity, exact to the nano-unit; saturates at about 1.7e29 units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Quantity {
    nanos: i128,
}

const NANOS_PER_UNIT: i128 = 1_000_000_000;
const NANOS_PER_MILLI: i128 = 1_000_000;
/// More significant digits than this are rounded (up) away: 10^36 still fits an i128 with room.
const MAX_DIGITS: u32 = 36;

impl Quantity {
    /// A whole number of units.
    pub fn from_units(units: i64) -> Self {
        Quantity { nanos: i128::from(units) * NANOS_PER_UNIT }
    }

    /// A whole number of thousandths of a unit (millicores).
    pub fn from_milli_units(millis: i64) -> Self {
        Quantity { nanos: i128::from(millis) * NANOS_PER_MILLI }
    }

    /// Parses the Kubernetes quantity syntax: `<sign?><digits[.digits]><suffix?>`, where the suffix
    /// is a binary SI suffix (`Ki`..`Ei`), a decimal SI suffix (`n`, `u`, `m`, `k`, `M`..`E`) or a
    /// decimal exponent (`e3`, `E-2`).
    pub fn parse(input: &str) -> Result<Self, QuantityError> {
        let err = |why| QuantityError { input: input.to_string(), why };
        let bytes = input.as_bytes();
        if bytes.is_empty() {
            return Err(err("empty string"));
        }
        let mut i = 0;
        let negative = match bytes[0] {
            b'-' => {
                i += 1;
                true
            }
            b'+' => {
                i += 1;
                false
            }
            _ => false,
        };

        // Mantissa: digits, optionally one '.', digits.
        let mut mantissa: u128 = 0;
        let mut digits = 0u32; // significant digits kept in `mantissa`
        let mut scale: i32 = 0; // value = mantissa * 10^-scale (before the suffix)
        let mut dropped_nonzero = false; // digits beyond MAX_DIGITS that were not zero
        let mut seen_digit = false;
        let mut seen_dot = false;
        while i < bytes.len() {
            let b = bytes[i];
            if b == b'.' {
                if seen_dot {
                    return Err(err("more than one decimal point"));
                }
                seen_dot = true;
            } else if b.is_ascii_digit() {
                seen_digit = true;
                let d = u128::from(b - b'0');
                if digits < MAX_DIGITS {
                    if mantissa != 0 || d != 0 {
                        digits += 1;
                    }
                    mantissa = mantissa * 10 + d;
                    if seen_dot {
                        scale += 1;
                    }
                } else if seen_dot {
                    dropped_nonzero |= d != 0;
                } else {
                    // An integer digit we cannot keep: the magnitude still grows.
                    scale -= 1;
                    dropped_nonzero |= d != 0;
                }
            } else {
                break;
            }
            i += 1;
        }
        if !seen_digit {
            return Err(err("expected a number with an optional suffix, such as 100m, 1.5 or 1Gi"));
        }

        let (exp10, exp2) = parse_suffix(&input[i..]).ok_or_else(|| {
            err("unknown suffix (use one of n u m k M G T P E Ki Mi Gi Ti Pi Ei, or an exponent such as e3)")
        })?;
        let nanos = scale_to_nanos(mantissa, exp10 - scale + 9, exp2, dropped_nonzero);
        Ok(Quantity { nanos: if negative { -nanos } else { nanos } })
    }

    /// The value in whole units, rounded up (as `Quantity.Value()`): memory, storage, counts.
    pub fn value(&self) -> i64 {
        div_round_away(self.nanos, NANOS_PER_UNIT)
    }

    /// The value in thousandths, rounded up (as `Quantity.MilliValue()`): cpu.
    pub fn milli_value(&self) -> i64 {
        div_round_away(self.nanos, NANOS_PER_MILLI)
    }

    /// True for zero.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The exact sum (as `Quantity.Add`), saturating.
    pub fn saturating_add(self, other: Quantity) -> Quantity {
        Quantity { nanos: self.nanos.saturating_add(other.nanos) }
    }
}

/// Returns (power of ten, power of two) for a suffix, or None when it is not one.
fn parse_suffix(suffix: &str) -> Option<(i32, u32)> {
    let known = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E'])?;
            let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            // Exponents far outside i128's range saturate or vanish below; clamp before parsing.
            let exp: i32 = if digits.len() > 6 {
                if rest.starts_with('-') {
                    -1_000_000
                } else {
                    1_000_000
                }
            } else {
                rest.parse().ok()?
            };
            (exp, 0)
        }
    };
    Some(known)
}

/// mantissa * 10^exp10 * 2^exp2 in nano-units, rounded up, saturating at i128::MAX.
fn scale_to_nanos(mantissa: u128, exp10: i32, exp2: u32, dropped_nonzero: bool) -> i128 {
    if mantissa == 0 && !dropped_nonzero {
        return 0;
    }
    let saturate = i128::MAX;
    let mut n: u128 = mantissa;
    n = match n.checked_mul(1u128 << exp2) {
        Some(v) => v,
        None => return saturate,
    };
    let exact = if exp10 >= 0 {
        match 10u128.checked_pow(exp10 as u32).and_then(|p| n.checked_mul(p)) {
            Some(v) => v,
            None => return saturate,
        }
    } else {
        match 10u128.checked_pow(exp10.unsigned_abs()) {
            // Far below a nano-unit: any non-zero value rounds up to one nano.
            None => 1,
            Some(p) => n.div_ceil(p),
        }
    };
    // Digits we could not keep only ever round the value up.
    let with_dropped = if dropped_nonzero && exp10 < 0 { exact.max(1) } else { exact };
    i128::try_from(with_dropped).unwrap_or(saturate)
}

/// Divides rounding away from zero, saturating into an i64.
fn div_round_away(n: i128, d: i128) -> i64 {
    let q = if n >= 0 {
        n.div_euclid(d) + i128::from(n.rem_euclid(d) != 0)
    } else {
        -((-n).div_euclid(d) + i128::from((-n).rem_euclid(d) != 0))
    };
    i64::try_from(q).unwrap_or(if q > 0 { i64::MAX } else { i64::MIN })
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Quantity::parse(s)
    }
}

impl fmt::Display for Quantity {
    /// Writes the value in the unit the scheduler usually reads: milli-units when not whole.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.nanos % NANOS_PER_UNIT == 0 {
            write!(f, "{}", self.nanos / NANOS_PER_UNIT)
        } else {
            write!(f, "{}m", self.milli_value())
        }
    }
}

/// Accepts a JSON string (the API's form) or a bare number, as Go's `Quantity.UnmarshalJSON` does.
impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct QuantityVisitor;
        impl Visitor<'_> for QuantityVisitor {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quantity such as \"100m\", \"1.5\" or \"1Gi\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Quantity, E> {
                Quantity::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity::from_units(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity { nanos: i128::from(v) * NANOS_PER_UNIT })
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Quantity, E> {
                if !v.is_finite() {
                    return Err(E::custom("invalid quantity: not a finite number"));
                }
                Quantity::parse(&v.to_string()).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(QuantityVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_every_kubernetes_form() {
        // (input, value(), milli_value())
        let cases: &[(&str, i64, i64)] = &[
            ("0", 0, 0),
            ("100m", 1, 100),
            ("1", 1, 1000),
            ("1.5", 2, 1500),
            ("0.5", 1, 500),
            (".5", 1, 500),
            ("5.", 5, 5000),
            ("+7", 7, 7000),
            ("-1", -1, -1000),
            ("-100m", -1, -100),
            ("7910m", 8, 7910),
            ("250u", 1, 1),
            ("1n", 1, 1),
            ("1k", 1_000, 1_000_000),
            ("1M", 1_000_000, 1_000_000_000),
            ("1G", 1_000_000_000, 1_000_000_000_000),
            ("1T", 1_000_000_000_000, 1_000_000_000_000_000),
            ("1P", 1_000_000_000_000_000, 1_000_000_000_000_000_000),
            ("12E", i64::MAX, i64::MAX),
            ("1E", 1_000_000_000_000_000_000, i64::MAX),
            ("1Ki", 1024, 1_024_000),
            ("0.1Ki", 103, 102_400),
            ("1Mi", 1 << 20, (1 << 20) * 1000),
            ("1Gi", 1 << 30, (1i64 << 30) * 1000),
            ("29535340Ki", 29_535_340 * 1024, 29_535_340 * 1024 * 1000),
            ("1Ti", 1 << 40, (1i64 << 40) * 1000),
            ("1Pi", 1 << 50, (1i64 << 50) * 1000),
            ("7Ei", 7 << 60, i64::MAX),
            ("8Ei", i64::MAX, i64::MAX),
            ("1e3", 1000, 1_000_000),
            ("1E3", 1000, 1_000_000),
            ("1e+3", 1000, 1_000_000),
            ("5e-3", 1, 5),
            ("1.5e1", 15, 15_000),
            ("1e-12", 1, 1),
            ("1e100", i64::MAX, i64::MAX),
            ("1e-100", 1, 1),
            ("000001", 1, 1000),
            ("47060071478", 47_060_071_478, 47_060_071_478_000),
        ];
        for &(input, value, milli) in cases {
            let q = Quantity::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
            assert_eq!(q.value(), value, "value() of {input}");
            assert_eq!(q.milli_value(), milli, "milli_value() of {input}");
        }
    }

    #[test]
    fn rejects_what_kubernetes_rejects() {
        for input in ["", "m", "abc", "1.2.3", "1Kb", "1kk", "1e", "1e+", "1 Gi", " 1", "1i", "--1", "1.5x", "Gi", "."]
        {
            assert!(Quantity::parse(input).is_err(), "{input:?} should be rejected");
        }
    }

    #[test]
    fn error_names_the_input() {
        let e = Quantity::parse("12 cores").unwrap_err();
        assert_eq!(
            e.to_string(),
            "invalid quantity \"12 cores\": unknown suffix (use one of n u m k M G T P E Ki Mi Gi Ti Pi Ei, or an exponent such as e3)"
        );
    }

    #[test]
    fn decodes_json_strings_and_numbers() {
        let q: Quantity = serde_json::from_str("\"250m\"").unwrap();
        assert_eq!(q.milli_value(), 250);
        let q: Quantity = serde_json::from_str("2").unwrap();
        assert_eq!(q.milli_value(), 2000);
        let q: Quantity = serde_json::from_str("0.25").unwrap();
        assert_eq!(q.milli_value(), 250);
        assert!(serde_json::from_str::<Quantity>("\"2 cores\"").is_err());
        assert!(serde_json::from_str::<Quantity>("true").is_err());
    }

    #[test]
    fn very_long_mantissas_round_up() {
        let q = Quantity::parse("0.0000000001000000000000000000000000000000000001").unwrap();
        assert_eq!(q.value(), 1);
        let q = Quantity::parse("123456789012345678901234567890123456789012345678901234567890").unwrap();
        assert_eq!(q.value(), i64::MAX);
    }

    proptest! {
        #[test]
        fn whole_numbers_round_trip(n in 0i64..1_000_000_000_000) {
            let q = Quantity::parse(&n.to_string()).unwrap();
            prop_assert_eq!(q.value(), n);
        }

        #[test]
        fn milli_values_round_trip(n in 0i64..1_000_000_000) {
            let q = Quantity::parse(&format!("{n}m")).unwrap();
            prop_assert_eq!(q.milli_value(), n);
        }

        #[test]
        fn binary_and_decimal_suffixes_scale(n in 0i64..1_000_000) {
            prop_assert_eq!(Quantity::parse(&format!("{n}Ki")).unwrap().value(), n * 1024);
            prop_assert_eq!(Quantity::parse(&format!("{n}k")).unwrap().value(), n * 1000);
            prop_assert_eq!(Quantity::parse(&format!("{n}e3")).unwrap().value(), n * 1000);
        }

        #[test]
        fn never_panics(s in "\\PC{0,24}") {
            let _ = Quantity::parse(&s);
        }
    }
}
