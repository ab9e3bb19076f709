//! A count (multiply-accumulates, elements, bytes) that may depend on a model's symbolic
//! dimensions: a polynomial with integer coefficients in the symbols, so that a model with
//! `batch` and `seq` inputs gets `1,024*batch*seq + 64*batch` instead of nothing. Inference
//! writes derived sizes as expressions (`past_seq + seq`, `4*seq`, `min(64, seq)`); sums and
//! products are read as such, anything else (`min(…)`) is one symbol spelled as written.
//! Arithmetic is checked: a count past `i128` (hostile sizes) is `None`, never a wrong number.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// A product of symbols, each with its power, sorted by name; empty is the constant term.
type Monomial = Vec<(Arc<str>, u32)>;

/// A polynomial in the symbolic dimensions with integer coefficients; no zero terms kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Count {
    terms: BTreeMap<Monomial, i128>,
}

impl Count {
    pub fn zero() -> Count {
        Count::default()
    }

    pub fn of(value: i128) -> Count {
        let mut terms = BTreeMap::new();
        if value != 0 {
            terms.insert(Vec::new(), value);
        }
        Count { terms }
    }

    pub fn symbol(name: &str) -> Count {
        Count { terms: BTreeMap::from([(vec![(Arc::from(name), 1)], 1)]) }
    }

    /// Its value, when it depends on no symbol.
    pub fn known(&self) -> Option<i128> {
        match self.terms.len() {
            0 => Some(0),
            1 => self.terms.get(&Vec::new()).copied(),
            _ => None,
        }
    }

    pub fn is_zero(&self) -> bool {
        self.terms.is_empty()
    }

    pub fn plus(&self, other: &Count) -> Option<Count> {
        let mut terms = self.terms.clone();
        for (m, &c) in &other.terms {
            let entry = terms.entry(m.clone()).or_insert(0);
            *entry = entry.checked_add(c)?;
            if *entry == 0 {
                terms.remove(m);
            }
        }
        Some(Count { terms })
    }

    pub fn times(&self, other: &Count) -> Option<Count> {
        let mut product = Count::zero();
        for (ma, &ca) in &self.terms {
            for (mb, &cb) in &other.terms {
                let term = Count { terms: BTreeMap::from([(multiply(ma, mb)?, ca.checked_mul(cb)?)]) };
                product = product.plus(&term)?;
            }
        }
        Some(product)
    }

    pub fn scaled(&self, factor: i128) -> Option<Count> {
        self.times(&Count::of(factor))
    }

    /// The product of `counts` (1 for none).
    pub fn product<'a>(counts: impl IntoIterator<Item = &'a Count>) -> Option<Count> {
        counts.into_iter().try_fold(Count::of(1), |acc, c| acc.times(c))
    }

    /// Its value with every symbol set to `at` (how the browser and the peak compare
    /// counts that depend on symbols: at a size typical of them). `None` past `i128`.
    pub fn at(&self, at: i128) -> Option<i128> {
        self.terms.iter().try_fold(0i128, |sum, (m, &c)| {
            let term = m.iter().try_fold(c, |acc, (_, power)| acc.checked_mul(at.checked_pow(*power)?))?;
            sum.checked_add(term)
        })
    }

    /// The count a dimension's symbol stands for: `seq`, `past_seq + seq`, `4*seq`,
    /// `batch*heads`; a part that is neither a whole number nor a name (`min(64, seq)`,
    /// `sum(C)`) is one symbol spelled as written.
    pub fn parse_dim(text: &str) -> Count {
        parse_sum(text.trim()).unwrap_or_else(|| Count::symbol(text.trim()))
    }
}

/// The product of two monomials, powers of the same symbol added.
fn multiply(a: &Monomial, b: &Monomial) -> Option<Monomial> {
    let mut out: Monomial = a.clone();
    for (name, power) in b {
        match out.binary_search_by(|(n, _)| n.as_ref().cmp(name.as_ref())) {
            Ok(i) => out[i].1 = out[i].1.checked_add(*power)?,
            Err(i) => out.insert(i, (name.clone(), *power)),
        }
    }
    Some(out)
}

/// Splits `text` at `sep` where no bracket is open.
fn split_top(text: &str, seps: &[char]) -> Vec<(char, String)> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    let mut sign = '+';
    for ch in text.chars() {
        match ch {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if depth == 0 && seps.contains(&ch) {
            parts.push((sign, std::mem::take(&mut current)));
            sign = ch;
        } else {
            current.push(ch);
        }
    }
    parts.push((sign, current));
    parts
}

fn parse_sum(text: &str) -> Option<Count> {
    let mut sum = Count::zero();
    for (sign, term) in split_top(text, &['+', '-']) {
        let term = parse_product(term.trim())?;
        let term = if sign == '-' { term.scaled(-1)? } else { term };
        sum = sum.plus(&term)?;
    }
    Some(sum)
}

fn parse_product(text: &str) -> Option<Count> {
    let mut product = Count::of(1);
    for (_, factor) in split_top(text, &['*']) {
        let factor = factor.trim();
        let count = if let Ok(v) = factor.parse::<i128>() {
            Count::of(v)
        } else if factor.starts_with('(') && factor.ends_with(')') && balanced(&factor[1..factor.len() - 1]) {
            parse_sum(&factor[1..factor.len() - 1])?
        } else if !factor.is_empty() && !factor.contains(['+', '-', '*']) || factor.contains('(') {
            Count::symbol(factor)
        } else {
            return None;
        };
        product = product.times(&count)?;
    }
    Some(product)
}

/// Whether no closing bracket in `text` closes one opened before it.
fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for ch in text.chars() {
        match ch {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

impl fmt::Display for Count {
    /// Highest degree first, whole numbers with thousands separators:
    /// `1,024*batch*seq + 64*batch + 8`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.terms.is_empty() {
            return f.write_str("0");
        }
        let mut terms: Vec<(&Monomial, i128)> = self.terms.iter().map(|(m, &c)| (m, c)).collect();
        terms.sort_by(|(a, _), (b, _)| {
            let degree = |m: &Monomial| m.iter().map(|(_, p)| *p).sum::<u32>();
            degree(b).cmp(&degree(a)).then_with(|| a.cmp(b))
        });
        for (i, (monomial, coefficient)) in terms.into_iter().enumerate() {
            let magnitude = coefficient.unsigned_abs();
            match (i, coefficient < 0) {
                (0, true) => f.write_str("-")?,
                (0, false) => {}
                (_, true) => f.write_str(" - ")?,
                (_, false) => f.write_str(" + ")?,
            }
            let mut wrote = false;
            if magnitude != 1 || monomial.is_empty() {
                f.write_str(&grouped(magnitude))?;
                wrote = true;
            }
            for (name, power) in monomial {
                if wrote {
                    f.write_str("*")?;
                }
                let plain = name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
                if plain {
                    f.write_str(name)?
                } else {
                    write!(f, "({name})")?
                }
                if *power > 1 {
                    write!(f, "^{power}")?;
                }
                wrote = true;
            }
        }
        Ok(())
    }
}

/// `1234567` as `1,234,567`.
pub fn grouped(value: u128) -> String {
    let digits = value.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dimension_expressions_read_as_polynomials() {
        assert_eq!(Count::parse_dim("seq").to_string(), "seq");
        assert_eq!(Count::parse_dim("past_seq + seq").to_string(), "past_seq + seq");
        assert_eq!(Count::parse_dim("4*seq").to_string(), "4*seq");
        assert_eq!(Count::parse_dim("batch*heads").to_string(), "batch*heads");
        assert_eq!(Count::parse_dim("min(64, seq)").to_string(), "(min(64, seq))");
        assert_eq!(Count::parse_dim("seq - 1").to_string(), "seq - 1");
        assert_eq!(Count::parse_dim("2*(a + b)").to_string(), "2*a + 2*b");
        // Not an expression we read: one symbol, as written.
        assert_eq!(Count::parse_dim("a +").to_string(), "(a +)");
    }

    #[test]
    fn counts_multiply_and_add_exactly() {
        let seq = Count::parse_dim("seq");
        let batch = Count::symbol("batch");
        let tokens = batch.times(&seq).unwrap();
        let macs = tokens.scaled(1024).unwrap().plus(&batch.scaled(64).unwrap()).unwrap().plus(&Count::of(8)).unwrap();
        assert_eq!(macs.to_string(), "1,024*batch*seq + 64*batch + 8");
        assert_eq!(macs.at(2), Some(1024 * 4 + 128 + 8));
        assert_eq!(seq.times(&seq).unwrap().to_string(), "seq^2");
        assert_eq!(Count::of(5).plus(&Count::of(-5)).unwrap(), Count::zero());
        assert_eq!(Count::of(1_234_567).known(), Some(1_234_567));
        assert_eq!(tokens.known(), None);
        // Past i128: no count rather than a wrong one.
        let huge = Count::of(i128::MAX / 2);
        assert!(huge.times(&Count::of(3)).is_none());
    }
}
