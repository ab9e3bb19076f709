//! A fast path for the bulk of big text models: `{…}` lists of numbers.
//!
//! A printed model's size is almost all tensor values. Going through the general lexer and
//! the LR parser costs tokens, tree nodes and allocations per value; instead the parser asks
//! [`scan_list`] whether a `{` starts a plain list of numbers (with any whitespace and
//! comments) and, if so, takes it as one token whose values are converted, once, when
//! lowering ([`read_all`]). Anything unusual in the list (a string, a malformed number, an
//! annotation, a missing `}`) makes the scan give up, and the general path then parses the
//! list and reports errors.
//!
//! The scanner accepts exactly the numbers the lexer does: `-?[0-9]+` (integer),
//! `-?[0-9]+.[0-9]*([eE][+-]?[0-9]+)?` and `-?[0-9]+[eE][+-]?[0-9]+` (float), and inf,
//! infinity, nan in any letter case, optionally negative; each must end at whitespace, a
//! comment, a comma or the closing brace.
//!
//! Lists without comments (all that printers write) are cut at commas into pieces that are
//! checked and converted on all cores: a comma can then only separate two values.

use crate::lexer::LiteralKind;
use onnx_threads::{cores, map_in_order};

/// What a number list holds: its first and last value's range ends, the value count and
/// where its `}` is; and, for a list without comments whose values all read as f32, those
/// values (the tensors of a big model are mostly float lists, and converting them during
/// the scan saves reading every list twice).
#[derive(Clone, Debug, PartialEq)]
pub struct ListScan {
    pub first: usize,
    pub last_end: usize,
    pub count: u32,
    pub close: usize,
    pub floats: Option<Vec<f32>>,
}

/// The f32 values of the lists [`scan_list`] read while parsing, by the source offset of each
/// list's first value ([`crate::ast::NumberRun::start`]), for the lowering to take instead
/// of reading the list again.
#[derive(Clone, Debug, Default)]
pub struct ReadFloats(std::collections::HashMap<u32, Vec<f32>>);

impl ReadFloats {
    pub fn insert(&mut self, start: u32, values: Vec<f32>) {
        self.0.insert(start, values);
    }

    /// The values of the list whose first value starts at `start`, once.
    pub fn take(&mut self, start: u32) -> Option<Vec<f32>> {
        self.0.remove(&start)
    }

    /// Every list, with where it starts.
    pub fn into_entries(self) -> impl Iterator<Item = (u32, Vec<f32>)> {
        self.0.into_iter()
    }
}

/// Scans a list of numbers starting at `from` (just after a `{`) up to its `}`; `None` when
/// the list is not exactly numbers separated by commas.
pub fn scan_list(source: &str, from: usize) -> Option<ListScan> {
    scan_list_on(source, from, cores())
}

/// [`scan_list`] with at most `threads` threads.
fn scan_list_on(source: &str, from: usize, threads: usize) -> Option<ListScan> {
    let bytes = source.as_bytes();
    let close = from + memchr::memchr(b'}', bytes.get(from..)?)?;
    // Without a comment the first `}` ends the list (a `}` inside a string would make it no
    // list of numbers anyway) and every comma separates two values: a valid piece holds one
    // more value than commas. A piece with a `#` may have cut a comment at one of its
    // commas: such a list is scanned value by value.
    let Some(ranges) = counted_pieces(bytes, from, close, threads) else {
        return scan_with_comments(bytes, from);
    };
    let count = u32::try_from(ranges.iter().map(|&(_, _, n)| n).sum::<usize>()).ok()?;
    let mut floats = vec![0f32; count as usize];
    let jobs = with_slots(&ranges, &mut floats)?;
    let pieces = map_in_order(jobs, |(a, b, slots)| check_piece(bytes, a, b, slots));
    let mut all_f32 = true;
    for piece in &pieces {
        all_f32 &= piece.as_ref()?.2;
    }
    let first = pieces.first()?.as_ref()?.0;
    let last_end = pieces.last()?.as_ref()?.1;
    Some(ListScan { first, last_end, count, close, floats: all_f32.then_some(floats) })
}

/// The values of a list [`scan_list`] accepted: each value's kind and range within `text`.
pub fn values(text: &str) -> impl Iterator<Item = (LiteralKind, usize, usize)> + '_ {
    let bytes = text.as_bytes();
    let mut pos = 0;
    std::iter::from_fn(move || {
        pos = skip_trivia(bytes, pos)?;
        let start = pos;
        let (kind, end) = number_at(bytes, start)?;
        pos = skip_trivia(bytes, end)?;
        if bytes.get(pos) == Some(&b',') {
            pos += 1;
        }
        Some((kind, start, end))
    })
}

/// A value type a list of numbers converts to in bulk, as the lowering converts one literal
/// (the same results, bit for bit); values it would report an error for are `None`.
pub trait ListValue: Copy + Default + Send + Sync {
    /// The value written at `pos` and where it ends.
    fn read(bytes: &[u8], pos: usize) -> Option<(Self, usize)>;
}

impl ListValue for f32 {
    fn read(bytes: &[u8], pos: usize) -> Option<(f32, usize)> {
        f32_through_f64(bytes, pos).or_else(|| f32_general(bytes, pos))
    }
}

/// An f32 the shortcut does not take: a word, an exponent, many digits, a midpoint.
fn f32_general(bytes: &[u8], pos: usize) -> Option<(f32, usize)> {
    if let Some((v, end)) = float_word(bytes, pos) {
        return Some((v as f32, end));
    }
    let (v, len) = fast_float2::parse_partial::<f32, _>(&bytes[pos..]).ok()?;
    (v.is_finite() && ends_number(bytes, pos + len)).then_some((v, pos + len))
}

impl ListValue for f64 {
    fn read(bytes: &[u8], pos: usize) -> Option<(f64, usize)> {
        if let Some(word) = float_word(bytes, pos) {
            return Some(word);
        }
        let (v, len) = fast_float2::parse_partial::<f64, _>(&bytes[pos..]).ok()?;
        (v.is_finite() && ends_number(bytes, pos + len)).then_some((v, pos + len))
    }
}

impl ListValue for i64 {
    fn read(bytes: &[u8], pos: usize) -> Option<(i64, usize)> {
        let negative = bytes.get(pos) == Some(&b'-');
        let digits = pos + usize::from(negative);
        let mut end = digits;
        let mut magnitude = 0u64;
        while let Some(&b) = bytes.get(end)
            && b.is_ascii_digit()
        {
            magnitude = magnitude.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
            end += 1;
        }
        if end == digits || !ends_number(bytes, end) {
            return None;
        }
        let value = if negative {
            // -2^63 has no positive counterpart: negate in the unsigned domain.
            (magnitude <= 1 << 63).then(|| (magnitude as i64).wrapping_neg())?
        } else {
            i64::try_from(magnitude).ok()?
        };
        Some((value, end))
    }
}

impl ListValue for i32 {
    fn read(bytes: &[u8], pos: usize) -> Option<(i32, usize)> {
        let (v, end) = i64::read(bytes, pos)?;
        Some((i32::try_from(v).ok()?, end))
    }
}

/// Exact powers of ten as f64 (every one up to 10^22 is representable).
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20,
    1e21, 1e22,
];

/// The common case of a printed f32 (`-0.54585695`: at most 19 digits, no exponent), in
/// one pass and without the general algorithm; `None` sends the value to fast-float2.
///
/// Printed f32 values have 8 or 9 significant digits, too many for f32 arithmetic to be
/// exact, so fast-float2 takes its slower general path on almost all of them. Through f64
/// they are exact: with a mantissa below 2^53 and a power of ten up to 10^22, one f64
/// division is correctly rounded (Clinger's fast path). Rounding that f64 to f32 again gives
/// the correctly rounded f32 unless the f64 lies exactly halfway between two f32 values
/// (those midpoints are f64 values, so rounding to f64 never crosses one); that case, and
/// subnormal results, go to the general path.
#[inline]
fn f32_through_f64(bytes: &[u8], pos: usize) -> Option<(f32, usize)> {
    let negative = bytes.get(pos) == Some(&b'-');
    let digits_start = pos + usize::from(negative);
    let (int_end, mut mantissa) = digit_run(bytes, digits_start, 0);
    if int_end == digits_start {
        return None;
    }
    let (end, fraction_digits) = if bytes.get(int_end) == Some(&b'.') {
        let (end, value) = digit_run(bytes, int_end + 1, mantissa);
        mantissa = value;
        (end, end - int_end - 1)
    } else {
        (int_end, 0)
    };
    // Up to 19 digits cannot have wrapped; an exponent or anything else is the general
    // path's.
    let digits = int_end - digits_start + fraction_digits;
    if digits > 19 || mantissa > 1 << 53 || fraction_digits >= POWERS_OF_TEN.len() || !ends_number(bytes, end) {
        return None;
    }
    let wide = mantissa as f64 / POWERS_OF_TEN[fraction_digits];
    const BELOW_F32: u64 = (1 << 29) - 1;
    if wide != 0.0 && (wide < f64::from(f32::MIN_POSITIVE) || wide.to_bits() & BELOW_F32 == 1 << 28) {
        return None;
    }
    let value = wide as f32;
    Some((if negative { -value } else { value }, end))
}

/// The digits from `pos` appended to `value`: where they end and the new value (which
/// wraps past 19 digits; callers check the count).
#[inline]
fn digit_run(bytes: &[u8], mut pos: usize, mut value: u64) -> (usize, u64) {
    // Eight digits at a time while eight follow (a printed f32 has eight or nine after its
    // point), then one at a time.
    while let Some(eight) = bytes.get(pos..pos + 8).and_then(|b| <[u8; 8]>::try_from(b).ok())
        && let Some(digits) = eight_digits(u64::from_le_bytes(eight))
    {
        value = value.wrapping_mul(100_000_000).wrapping_add(digits);
        pos += 8;
    }
    while let Some(&b) = bytes.get(pos)
        && b.is_ascii_digit()
    {
        value = value.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        pos += 1;
    }
    (pos, value)
}

/// The value of eight ASCII digits read as a little-endian word (the first digit in the low
/// byte), or `None` if a byte is not a digit; computed in the word, without a loop.
#[inline]
fn eight_digits(word: u64) -> Option<u64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    // A byte is a digit when its high nibble is 3 and adding 6 to it does not carry into
    // that nibble (0x30..=0x39).
    let high_nibbles = word & (0xF0 * ONES);
    let carried = (word.wrapping_add(0x06 * ONES) & (0xF0 * ONES)) >> 4;
    if high_nibbles | carried != 0x33 * ONES {
        return None;
    }
    let d = word - 0x30 * ONES;
    // Pairs, then quads, then all eight: each step joins neighbours as tens and ones.
    let pairs = (d * 10 + (d >> 8)) & 0x00FF_00FF_00FF_00FF;
    let quads = (pairs * 100 + (pairs >> 16)) & 0x0000_FFFF_0000_FFFF;
    Some((quads * 10_000 + (quads >> 32)) & 0xFFFF_FFFF)
}

/// Converts the values of a list [`scan_list`] accepted (`text` from its first value to
/// the end of its last, holding `count` values); `None` when some value needs the
/// per-value path (an error to report: a float where an integer belongs, out of range).
pub fn read_all<T: ListValue>(text: &str, count: usize) -> Option<Vec<T>> {
    read_all_on(text, count, cores())
}

/// [`read_all`] with at most `threads` threads.
fn read_all_on<T: ListValue>(text: &str, count: usize, threads: usize) -> Option<Vec<T>> {
    let bytes = text.as_bytes();
    let mut out = vec![T::default(); count];
    let Some(pieces) = counted_pieces(bytes, 0, bytes.len(), threads) else {
        return read_piece(bytes, 0, bytes.len(), &mut out).then_some(out);
    };
    let jobs = with_slots(&pieces, &mut out)?;
    let done = map_in_order(jobs, |(a, b, slots)| read_piece(bytes, a, b, slots));
    done.into_iter().all(|ok| ok).then_some(out)
}

/// Converts the values in `a..b` into `slots`, exactly as many as there are slots.
fn read_piece<T: ListValue>(bytes: &[u8], a: usize, b: usize, slots: &mut [T]) -> bool {
    let mut pos = a;
    for slot in slots {
        let Some(start) = skip_trivia(bytes, pos) else {
            return false;
        };
        let Some((value, end)) = T::read(bytes, start) else {
            return false;
        };
        *slot = value;
        // Printers put the comma right after the value.
        if bytes.get(end) == Some(&b',') {
            pos = end + 1;
            continue;
        }
        pos = match skip_trivia(bytes, end) {
            Some(p) if bytes.get(p) == Some(&b',') => p + 1,
            Some(p) => p,
            None => return false,
        };
    }
    pos >= b
}

/// A list holding comments, checked from the start: a `}` or a comma inside a comment
/// neither closes the list nor separates values.
fn scan_with_comments(bytes: &[u8], from: usize) -> Option<ListScan> {
    let (mut pos, mut count, mut first) = (from, 0u32, None);
    loop {
        let start = skip_trivia(bytes, pos)?;
        let (_, end) = number_at(bytes, start)?;
        count = count.checked_add(1)?;
        first.get_or_insert(start);
        pos = skip_trivia(bytes, end)?;
        match bytes.get(pos)? {
            b',' => pos += 1,
            b'}' => return Some(ListScan { first: first?, last_end: end, count, close: pos, floats: None }),
            _ => return None,
        }
    }
}

/// Checks that `a..b` (no comments) is `slots.len()` numbers separated by commas, and reads
/// each as f32 on the way: the first value's start, the last value's end, and whether every
/// value read as a finite f32.
fn check_piece(bytes: &[u8], a: usize, b: usize, slots: &mut [f32]) -> Option<(usize, usize, bool)> {
    let (mut pos, mut first, mut all_f32) = (a, None, true);
    let last = slots.len().checked_sub(1)?;
    for (i, slot) in slots.iter_mut().enumerate() {
        let start = skip_trivia(bytes, pos)?;
        // The common form converts and proves itself a number in one pass.
        let end = match f32_through_f64(bytes, start) {
            Some((value, end)) => {
                *slot = value;
                end
            }
            None => {
                let (_, end) = number_at(bytes, start)?;
                match f32_general(bytes, start) {
                    Some((value, _)) => *slot = value,
                    None => all_f32 = false,
                }
                end
            }
        };
        if end > b {
            return None;
        }
        first.get_or_insert(start);
        pos = if end < b && bytes[end] == b',' { end } else { skip_trivia(bytes, end)? };
        if i == last {
            return (pos == b).then_some((first?, end, all_f32));
        }
        if pos >= b || bytes[pos] != b',' {
            return None;
        }
        pos += 1;
    }
    None
}

/// Bytes that end a number: whitespace, a comment, a comma, the closing brace.
const fn delimiters() -> [bool; 256] {
    let mut table = [false; 256];
    let list = [b' ', b'\t', b'\n', b'\r', 0x0B, 0x0C, b'#', b',', b'}'];
    let mut i = 0;
    while i < list.len() {
        table[list[i] as usize] = true;
        i += 1;
    }
    table
}

static DELIMITER: [bool; 256] = delimiters();

/// Whether a number may end at `end`: a delimiter or the end of the text follows.
#[inline]
fn ends_number(bytes: &[u8], end: usize) -> bool {
    bytes.get(end).is_none_or(|&c| DELIMITER[c as usize])
}

#[inline]
fn skip_digits(bytes: &[u8], mut pos: usize) -> usize {
    while bytes.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    pos
}

/// The kind and end of the number at `pos`, if one starts there and ends at a delimiter.
#[inline]
fn number_at(bytes: &[u8], pos: usize) -> Option<(LiteralKind, usize)> {
    let start = pos + usize::from(bytes.get(pos) == Some(&b'-'));
    let first = *bytes.get(start)?;
    if first.is_ascii_alphabetic() {
        let end = word_end(bytes, start);
        let word = &bytes[start..end];
        let known = [&b"inf"[..], b"infinity", b"nan"].iter().any(|w| w.eq_ignore_ascii_case(word));
        return (known && ends_number(bytes, end)).then_some((LiteralKind::FloatWord, end));
    }
    if !first.is_ascii_digit() {
        return None;
    }
    let mut end = skip_digits(bytes, start + 1);
    let mut float = false;
    if bytes.get(end) == Some(&b'.') {
        float = true;
        end = skip_digits(bytes, end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        float = true;
        end += 1;
        if matches!(bytes.get(end), Some(b'+' | b'-')) {
            end += 1;
        }
        let exponent_end = skip_digits(bytes, end);
        if exponent_end == end {
            return None;
        }
        end = exponent_end;
    }
    let kind = if float { LiteralKind::Float } else { LiteralKind::Int };
    ends_number(bytes, end).then_some((kind, end))
}

fn word_end(bytes: &[u8], start: usize) -> usize {
    start + bytes[start..].iter().position(|c| !c.is_ascii_alphabetic()).unwrap_or(bytes.len() - start)
}

/// `inf`, `infinity`, `nan` (any case, optionally negative) at `pos`, as the lowering reads
/// them one by one.
fn float_word(bytes: &[u8], pos: usize) -> Option<(f64, usize)> {
    let start = pos + usize::from(bytes.get(pos) == Some(&b'-'));
    if !bytes.get(start)?.is_ascii_alphabetic() {
        return None;
    }
    let end = word_end(bytes, start);
    Some((float_word_value(&bytes[pos..end]), end))
}

/// The value of a float word the lexer accepted (`inf`, `-Infinity`, `nan`, `-NaN`, …).
pub fn float_word_value(text: &[u8]) -> f64 {
    let (negative, word) = match text.strip_prefix(b"-") {
        Some(w) => (true, w),
        None => (false, text),
    };
    let magnitude = if word.eq_ignore_ascii_case(b"nan") { f64::NAN } else { f64::INFINITY };
    if negative { -magnitude } else { magnitude }
}

/// Skips whitespace and `#` comments; `None` at an annotation (`#@`), which the fast path
/// leaves to the parser.
#[inline]
fn skip_trivia(bytes: &[u8], mut pos: usize) -> Option<usize> {
    while let Some(&b) = bytes.get(pos) {
        match b {
            b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C => pos += 1,
            b'#' if bytes.get(pos + 1) == Some(&b'@') => return None,
            b'#' => pos += memchr::memchr(b'\n', &bytes[pos..]).unwrap_or(bytes.len() - pos),
            _ => break,
        }
    }
    Some(pos)
}

/// [`pieces`] of a list, each with how many values it holds if valid (one more than its
/// commas); `None` when the list has a comment. Both are found on every core: the two
/// passes over each piece's bytes were a tenth of parsing a big model on one thread.
fn counted_pieces(bytes: &[u8], a: usize, b: usize, threads: usize) -> Option<Vec<(usize, usize, usize)>> {
    let pieces = pieces(bytes, a, b, threads);
    let count = |(a, b): (usize, usize)| {
        let piece = &bytes[a..b];
        memchr::memchr(b'#', piece).is_none().then(|| (a, b, memchr::memchr_iter(b',', piece).count() + 1))
    };
    map_in_order(pieces, count).into_iter().collect()
}

/// Gives each piece its run of `slots`, in order; `None` unless the counts fill them exactly.
fn with_slots<'s, T>(pieces: &[(usize, usize, usize)], slots: &'s mut [T]) -> Option<Vec<(usize, usize, &'s mut [T])>> {
    let mut rest = slots;
    let mut jobs = Vec::with_capacity(pieces.len());
    for &(a, b, n) in pieces {
        if n > rest.len() {
            return None;
        }
        let (mine, tail) = std::mem::take(&mut rest).split_at_mut(n);
        rest = tail;
        jobs.push((a, b, mine));
    }
    rest.is_empty().then_some(jobs)
}

/// Below this many bytes a list is handled on the calling thread: starting a thread costs
/// more than it saves.
const MIN_PIECE: usize = 256 * 1024;

/// Cuts `a..b` at commas into a piece per thread, each at least [`MIN_PIECE`] long;
/// the commas themselves belong to no piece.
fn pieces(bytes: &[u8], a: usize, b: usize, threads: usize) -> Vec<(usize, usize)> {
    let wanted = ((b - a) / MIN_PIECE).clamp(1, threads.max(1));
    let mut out = Vec::with_capacity(wanted);
    let mut start = a;
    for i in 1..wanted {
        let target = (a + (b - a) * i / wanted).max(start);
        match memchr::memchr(b',', &bytes[target..b]) {
            Some(offset) => {
                out.push((start, target + offset));
                start = target + offset + 1;
            }
            None => break,
        }
    }
    out.push((start, b));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::{self, TokenKind};

    #[test]
    fn eight_digits_at_once_read_as_one_at_a_time() {
        let samples = (0..100_000_000u64).step_by(9_999_991).chain([0, 1, 10_000_000, 99_999_999, 12_345_678]);
        for n in samples {
            let text = format!("{n:08}");
            let word = u64::from_le_bytes(text.as_bytes().try_into().unwrap());
            assert_eq!(eight_digits(word), Some(n), "{text}");
        }
        for bad in ["1234567a", "/2345678", ":2345678", "1234 678", "-1234567", "12345.78"] {
            let word = u64::from_le_bytes(bad.as_bytes().try_into().unwrap());
            assert_eq!(eight_digits(word), None, "{bad}");
        }
        // Every single byte in every place: only '0'..='9' pass.
        for place in 0..8 {
            for byte in 0..=255u8 {
                let mut text = *b"55555555";
                text[place] = byte;
                let expected =
                    byte.is_ascii_digit().then(|| std::str::from_utf8(&text).unwrap().parse::<u64>().unwrap());
                assert_eq!(eight_digits(u64::from_le_bytes(text)), expected, "{place} {byte}");
            }
        }
    }

    #[test]
    fn kinds_match_the_lexer() {
        for (text, kind) in [
            ("0", Some(LiteralKind::Int)),
            ("-12", Some(LiteralKind::Int)),
            ("1.", Some(LiteralKind::Float)),
            ("1.5e-3", Some(LiteralKind::Float)),
            ("2E+10", Some(LiteralKind::Float)),
            ("-Inf", Some(LiteralKind::FloatWord)),
            ("NaN", Some(LiteralKind::FloatWord)),
            ("infinity", Some(LiteralKind::FloatWord)),
            ("1e", None),
            (".5", None),
            ("+1", None),
            ("1.5.3", None),
            ("inf1", None),
            ("- 1", None),
            ("1x", None),
        ] {
            assert_eq!(number_kind(text), kind, "{text}");
            // Whatever the scanner accepts, the lexer reads as exactly one number token.
            if kind.is_some() {
                let tokens = lexer::lex(text);
                assert_eq!(tokens.len(), 1, "{text}");
                assert!(matches!(
                    tokens[0].kind,
                    TokenKind::Int | TokenKind::Float | TokenKind::SignedFloatWord | TokenKind::Ident
                ));
            }
        }
    }

    /// The kind of a number written as `text`, or `None` if the lexer would not read it as
    /// one number.
    fn number_kind(text: &str) -> Option<LiteralKind> {
        number_at(text.as_bytes(), 0).and_then(|(kind, end)| (end == text.len()).then_some(kind))
    }

    /// A small deterministic generator (xorshift), so the cases are the same on every run.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// Texts of numbers as printers and people write them, including the hard cases of the
    /// f32 shortcut: exact and near f32 midpoints, subnormals, 19 and 20 digits, exponents.
    fn number_texts() -> Vec<String> {
        let mut texts: Vec<String> = [
            "0",
            "-0",
            "0.",
            "-0.0",
            "1.",
            "1.5",
            "16777217",
            "16777219",
            "16777216.5",
            "33554435",
            "0.5000000298023223876953125",
            "3.4028235e38",
            "3.4028236e38",
            "1e-45",
            "1.4e-45",
            "1.1754942e-38",
            "1.17549435e-38",
            "9007199254740993",
            "1234567890123456789",
            "12345678901234567890",
            "0.1234567890123456789",
            "0.00000000000000000000001",
            "123456.789e3",
            "1E5",
            "2e+10",
            "7.0e-3",
            "nan",
            "-NaN",
            "inf",
            "-Infinity",
            "340282356779733661637539395458142568448",
            "4294967296",
            "-9223372036854775808",
            "9223372036854775807",
            "9223372036854775808",
            "2147483647",
            "-2147483649",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..20_000 {
            let bits = rng.next();
            let v = f32::from_bits(bits as u32);
            if v.is_finite() {
                texts.push(format!("{v}"));
                texts.push(format!("{v:e}"));
                texts.push(format!("{:.9}", v / 1e30));
            }
            // Midpoints between neighbouring f32 values, written exactly and nearly.
            let a = f32::from_bits((bits >> 32) as u32 & 0x7f7f_ffff);
            let mid = (f64::from(a) + f64::from(f32::from_bits(a.to_bits() + 1))) / 2.0;
            texts.push(format!("{mid}"));
            texts.push(format!("{mid:.12}"));
            texts.push(format!("{}", (bits % 1_000_000_000) as f64 / 10f64.powi((bits % 12) as i32)));
        }
        texts
    }

    #[test]
    fn bulk_values_equal_what_the_per_value_path_reads() {
        for text in number_texts() {
            let bytes = text.as_bytes();
            let expected_f32 = number_kind(&text).and_then(|kind| match kind {
                LiteralKind::FloatWord => None,
                _ => text.parse::<f32>().ok().filter(|v| v.is_finite()),
            });
            let got = f32::read(bytes, 0).filter(|_| number_kind(&text) != Some(LiteralKind::FloatWord));
            assert_eq!(
                got.map(|(v, end)| (v.to_bits(), end)),
                expected_f32.map(|v| (v.to_bits(), text.len())),
                "{text}"
            );
            let expected_f64 = text.parse::<f64>().ok().filter(|v| v.is_finite());
            if number_kind(&text) != Some(LiteralKind::FloatWord) && number_kind(&text).is_some() {
                assert_eq!(f64::read(bytes, 0).map(|(v, _)| v.to_bits()), expected_f64.map(f64::to_bits), "{text}");
            }
            let int = (number_kind(&text) == Some(LiteralKind::Int)).then(|| text.parse::<i64>().ok()).flatten();
            assert_eq!(i64::read(bytes, 0).map(|(v, _)| v), int, "{text}");
            let int32 = int.and_then(|v| i32::try_from(v).ok());
            assert_eq!(i32::read(bytes, 0).map(|(v, _)| v), int32, "{text}");
        }
        // Words read as the lowering reads them, sign included.
        for (text, bits) in
            [("nan", f32::NAN.to_bits()), ("-nan", (-f32::NAN).to_bits()), ("-Inf", f32::NEG_INFINITY.to_bits())]
        {
            assert_eq!(f32::read(text.as_bytes(), 0).map(|(v, _)| v.to_bits()), Some(bits), "{text}");
        }
    }

    /// A list of `count` values with some spacing, and the values each reads as alone.
    fn big_list(count: usize, seed: u64) -> (String, Vec<String>) {
        let mut rng = Rng(seed);
        let values: Vec<String> = (0..count)
            .map(|i| {
                let v = f32::from_bits((rng.next() as u32) & 0x3fff_ffff | (((i % 2) as u32) << 31));
                if i % 97 == 0 { format!("{}", rng.next() % 1000) } else { format!("{v}") }
            })
            .collect();
        let mut text = String::from("{");
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                text.push_str(if i % 13 == 0 { " ,\n  " } else { "," });
            }
            text.push_str(v);
        }
        text.push('}');
        (text, values)
    }

    #[test]
    fn lists_read_the_same_on_any_number_of_threads() {
        let (text, values) = big_list(400_000, 7);
        let expected: Vec<u32> = values.iter().map(|v| v.parse::<f32>().map(f32::to_bits).unwrap_or(0)).collect();
        let single = scan_list_on(&text, 1, 1).expect("a number list");
        assert_eq!(single.count as usize, values.len());
        let floats: Vec<u32> = single.floats.as_ref().expect("all f32").iter().map(|v| v.to_bits()).collect();
        assert_eq!(floats, expected);
        for threads in 2..=5 {
            assert_eq!(scan_list_on(&text, 1, threads).as_ref(), Some(&single), "{threads} threads");
            let run = &text[single.first..single.last_end];
            let read: Vec<u32> = read_all_on::<f32>(run, values.len(), threads)
                .expect("f32 values")
                .iter()
                .map(|v| v.to_bits())
                .collect();
            assert_eq!(read, expected, "{threads} threads");
        }
        // One bad value anywhere makes every thread count give up on the list.
        let mut bad = text.clone();
        let at = bad.len() * 3 / 4;
        let comma = at + bad[at..].find(',').expect("a comma");
        bad.insert_str(comma, "1e");
        for threads in 1..=5 {
            assert_eq!(scan_list_on(&bad, 1, threads), None, "{threads} threads");
        }
        // A value out of f32 range keeps the list but not its f32 values.
        let wide = text.replacen(&values[1], "1e39", 1);
        let scan = scan_list_on(&wide, 1, 3).expect("still a number list");
        assert_eq!((scan.count as usize, scan.floats), (values.len(), None));
    }

    #[test]
    fn scans_plain_lists_and_gives_up_on_anything_else() {
        let text = "{1, -2.5 # note\n , nan}rest";
        let scan = scan_list(text, 1).expect("a number list");
        assert_eq!((scan.first, scan.count, &text[scan.close..scan.close + 1]), (1, 3, "}"));
        let values: Vec<_> = values(&text[scan.first..scan.last_end]).map(|(_, s, e)| &text[1 + s..1 + e]).collect();
        assert_eq!(values, ["1", "-2.5", "nan"]);
        for bad in ["{}", "{1,}", "{1 2}", "{\"s\"}", "{1, 1e}", "{1\n#@ x: 1\n}", "{1, 2"] {
            assert_eq!(scan_list(bad, 1), None, "{bad}");
        }
    }
}
