//! Writing the text to a file as it is printed ([`super::write_model`]): finished lines are
//! drained, a big item goes straight out, and a big tensor's values are formatted and written
//! a chunk at a time, so that no model's text, nor any tensor's, is ever whole in memory.

use super::Printer;
use super::nan::{any_payload_nan_f32, any_payload_nan_f32_le, nan_with_payload_f64};
use super::values::{Packer, value_texts};
use crate::ir::tensor_data;
use crate::ir::*;
use crate::print::bulk;
use crate::print::number::push_f32;

/// Where a streaming printer writes; the first error is kept and later writes are skipped.
pub(super) struct Sink<'w> {
    pub(super) out: &'w mut dyn std::io::Write,
    pub(super) error: Option<std::io::Error>,
}

impl Sink<'_> {
    pub(super) fn write(&mut self, text: &str) {
        if self.error.is_none()
            && let Err(e) = self.out.write_all(text.as_bytes())
        {
            self.error = Some(e);
        }
    }
}

/// Text held back before it is written to the sink (whole lines).
pub(super) const DRAIN_AT: usize = 1 << 20;

impl Printer<'_, '_> {
    /// Whether a tensor's values are left to [`stream_values`]: when streaming at the top
    /// level, for a big tensor whose every value reads back exactly.
    pub(super) fn streams(&self, t: &Tensor, dt: DataType) -> bool {
        self.sink.is_some()
            && self.capturing == 0
            && stream_source(t, dt).is_some_and(|(_, count)| count >= STREAM_FROM)
    }

    /// When streaming, writes the finished lines held once there are enough of them; the
    /// current line stays, so that layout can still measure it.
    pub(super) fn drain(&mut self) {
        if self.capturing > 0 || self.out.len() < DRAIN_AT {
            return;
        }
        let Some(sink) = self.sink.as_mut() else { return };
        let Some(last_break) = self.out.rfind('\n') else { return };
        sink.write(&self.out[..=last_break]);
        self.out.drain(..=last_break);
    }
}

/// Tensors of at least this many values are printed a chunk at a time when streaming, so the
/// text of a big model's biggest tensor is never whole in memory either.
const STREAM_FROM: usize = if cfg!(test) { 1000 } else { 1 << 16 };

/// Values formatted at once when a tensor is streamed.
const STREAM_CHUNK: usize = if cfg!(test) { 777 } else { 1 << 16 };

/// Chunks of a streamed tensor formatted but not yet written, at most.
const STREAMS_AHEAD: usize = 8;

/// Brackets a placeholder for a tensor's values in an item (`\u{1}address:indent\u{1}`): a
/// character printed text never holds (control characters are always escaped).
pub(super) const STREAM_MARK: char = '\u{1}';

/// Tensors [`stream_values`] printed, for the tests to see that streaming happened.
#[cfg(test)]
static STREAMED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub(super) fn stream_marker(t: &Tensor, indent: usize) -> String {
    format!("{STREAM_MARK}{:x}:{indent}{STREAM_MARK}", std::ptr::from_ref(t) as usize)
}

/// Where a streamed tensor's values are: raw bytes of `width` per value, or its typed field.
#[derive(Clone, Copy)]
enum StreamSource {
    Raw { width: usize },
    Typed(TypedField),
}

/// How a tensor's values would be streamed and how many there are; `None` when they cannot be
/// cut into chunks that print as the whole does (strings, mixed fields, NaN payloads, raw
/// bytes of sub-byte types or not a whole number of values).
fn stream_source(t: &Tensor, dt: DataType) -> Option<(StreamSource, usize)> {
    use DataType as D;
    let no_payloads_f32 = |v: &[f32]| !any_payload_nan_f32(v.iter().map(|x| x.to_bits()));
    let no_payloads_f64 = |v: &[f64]| !v.iter().any(|&x| nan_with_payload_f64(x));
    if let Some(raw) = &t.raw_data {
        let width = match dt {
            D::Complex64 => 4,
            D::Complex128 => 8,
            _ => (dt.bits() / 8) as usize,
        };
        if !tensor_data::has_no_typed_values(t)
            || !tensor_data::converts_raw(dt)
            || width == 0
            || !raw.len().is_multiple_of(width)
        {
            return None;
        }
        let payloads = match width {
            4 if matches!(dt, D::Float | D::Complex64) => any_payload_nan_f32_le(raw),
            8 if matches!(dt, D::Double | D::Complex128) => {
                raw.chunks_exact(8).any(|c| nan_with_payload_f64(f64::from_le_bytes(c.try_into().unwrap_or([0; 8]))))
            }
            _ => false,
        };
        return (!payloads).then_some((StreamSource::Raw { width }, raw.len() / width));
    }
    let field = dt.typed_field();
    let count = match field {
        TypedField::FloatData => no_payloads_f32(&t.float_data).then_some(t.float_data.len())?,
        TypedField::DoubleData => no_payloads_f64(&t.double_data).then_some(t.double_data.len())?,
        TypedField::Int32Data => t.int32_data.len(),
        TypedField::Int64Data => t.int64_data.len(),
        TypedField::Uint64Data => t.uint64_data.len(),
        TypedField::StringData | TypedField::None => return None,
    };
    let lengths = [t.float_data.len(), t.int32_data.len(), t.string_data.len(), t.int64_data.len()];
    let others: usize = lengths.iter().sum::<usize>() + t.double_data.len() + t.uint64_data.len() - count;
    (others == 0).then_some((StreamSource::Typed(field), count))
}

/// The texts of values `range` of a tensor, as [`value_texts`] gives them for the whole.
fn chunk_texts(t: &Tensor, dt: DataType, source: StreamSource, range: std::ops::Range<usize>) -> Option<bulk::Texts> {
    // The common case, raw float32 (`stream_source` has checked it for NaN payloads), is
    // formatted from the bytes where they are: no chunk copied into a tensor of its own.
    if let (StreamSource::Raw { width: 4 }, DataType::Float) = (source, dt) {
        let bytes = t.raw_data.as_ref()?.get(range.start * 4..range.end * 4)?;
        let values: &[[u8; 4]] = bytemuck::try_cast_slice(bytes).ok()?;
        return Some(bulk::texts(values, bulk::Spread::ThisThread, |out, v| push_f32(out, f32::from_le_bytes(*v))));
    }
    let mut chunk = Tensor { data_type: t.data_type, ..Tensor::default() };
    match source {
        StreamSource::Raw { width } => {
            let raw = t.raw_data.as_ref()?;
            chunk.raw_data = Some(raw.slice(range.start * width..range.end * width));
            chunk = tensor_data::raw_to_typed(&chunk)?;
        }
        StreamSource::Typed(TypedField::FloatData) => chunk.float_data = t.float_data[range].to_vec(),
        StreamSource::Typed(TypedField::DoubleData) => chunk.double_data = t.double_data[range].to_vec(),
        StreamSource::Typed(TypedField::Int32Data) => chunk.int32_data = t.int32_data[range].to_vec(),
        StreamSource::Typed(TypedField::Int64Data) => chunk.int64_data = t.int64_data[range].to_vec(),
        StreamSource::Typed(TypedField::Uint64Data) => chunk.uint64_data = t.uint64_data[range].to_vec(),
        StreamSource::Typed(_) => return None,
    }
    value_texts(&chunk, dt, bulk::Spread::ThisThread)
}

/// Writes the values a [`stream_marker`] stands for, laid out as `values::pack` lays them out
/// (by the same [`Packer`]), a chunk of [`STREAM_CHUNK`] values at a time.
pub(super) fn stream_values(m: &Model, marker: &str, sink: &mut Sink<'_>) {
    // The marker was made from a tensor `stream_source` accepted: none of this fails, but a
    // text missing its values must end in an error, never be written as if whole.
    let broken = |sink: &mut Sink<'_>| {
        sink.error.get_or_insert_with(|| std::io::Error::other("a streamed tensor could not be printed"));
    };
    let parsed = marker.split_once(':').and_then(|(a, i)| Some((usize::from_str_radix(a, 16).ok()?, i.parse().ok()?)));
    let Some((address, indent)) = parsed else { return broken(sink) };
    let Some((_, t)) = m.tensors.iter().find(|(_, t)| std::ptr::from_ref(*t) as usize == address) else {
        return broken(sink);
    };
    let Some((dt, (source, count))) = t.elem_type().and_then(|dt| Some((dt, stream_source(t, dt)?))) else {
        return broken(sink);
    };
    #[cfg(test)]
    STREAMED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut packer = Packer::new(indent, count);
    // Room for a chunk laid out (values, separators, line ends and indentation), so that it
    // is not grown by copying, chunk after chunk into fresh memory.
    let mut out = String::with_capacity(STREAM_CHUNK * 20 + 1024);
    packer.start(&mut out);
    // Chunks are formatted on every core, a few ahead of the one being laid out and written
    // here; each is small enough to still be in the cache when it is copied into lines and
    // then into the file (measured: 1 MiB-value chunks spent a third of the print in the
    // kernel copying cold text, 64 Ki-value ones a fortieth).
    let mut whole = true;
    onnx_threads::pipeline(
        count.div_ceil(STREAM_CHUNK),
        STREAMS_AHEAD,
        |i| chunk_texts(t, dt, source, i * STREAM_CHUNK..((i + 1) * STREAM_CHUNK).min(count)),
        |texts| {
            let Some(texts) = texts else {
                whole = false;
                return false;
            };
            packer.feed(&texts, &mut out);
            sink.write(&out);
            out.clear();
            sink.error.is_none()
        },
    );
    if !whole {
        return broken(sink);
    }
    packer.finish(&mut out);
    sink.write(&out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::canonical::{model, write_model};

    #[test]
    fn streamed_text_is_the_text() {
        // Big tensors at the top level (written straight out) and in a subgraph (printed into
        // a buffer of its own, which must not leak out early), and enough nodes to drain.
        let big = |n: usize| (0..n).map(|i| (i % 97).to_string()).collect::<Vec<_>>().join(", ");
        // Typed floats, raw floats, raw int64 and typed int64: each streamed a chunk at a
        // time (of 777 values under test), the layout carried across chunks.
        let mut text = format!(
            "<ir_version: 8, opset_import: [\"\" : 17]>\ng (bool c, float[300000] x) => (float[300000] y) <\n  \
             float[300000] w = {{{}}},\n  #@ storage: raw\n  float[5000] r = {{{}}},\n  \
             #@ storage: raw\n  int64[4000] i = {{{}}},\n  int64[3000] j = {{{}}},\n  \
             float[3] small = {{1, 2, 3}}\n> {{\n  t = Add(x, w)\n",
            big(300_000),
            big(5000).replace(", 1,", ", 1.5e-7,"),
            big(4000).replace(", 2,", ", -9223372036854775808,"),
            big(3000)
        );
        for i in 0..20_000 {
            text.push_str(&format!("  t{i} = Relu(t)\n"));
        }
        text.push_str(&format!(
            "  y = If(c) <then_branch: graph = th () => (float[300000] o) {{\n    o = Constant <value: tensor = \
             float[300000] {{{}}}> ()\n  }}, else_branch: graph = el () => (float[300000] o) {{\n    o = Identity(x)\n  \
             }}>\n}}\n",
            big(300_000)
        ));
        let analysis = crate::analysis::analyze_text(&text);
        assert!(analysis.readable, "{:?}", analysis.diagnostics.first());
        let whole = model(&analysis.model);
        assert!(whole.len() > 2 * DRAIN_AT);
        let mut streamed = Vec::new();
        let before = STREAMED.load(std::sync::atomic::Ordering::Relaxed);
        write_model(&analysis.model, &mut streamed).expect("writes to memory");
        assert!(STREAMED.load(std::sync::atomic::Ordering::Relaxed) >= before + 4, "the big tensors were not streamed");
        assert!(streamed == whole.as_bytes(), "the streamed text differs");
    }
}
