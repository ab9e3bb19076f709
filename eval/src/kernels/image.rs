//! ImageDecoder: an encoded image (BMP, JPEG, PNG, PNM, TIFF, WebP) into an
//! [height, width, channels] uint8 tensor in RGB, BGR or grayscale. Grayscale is
//! computed from RGB with the ITU-R 601 weights Pillow uses (onnx's reference decodes
//! with Pillow), not the decoder's own conversion.

use super::{Ctx, Kernel, input, one};
use crate::error::{KernelError, bad_attribute, bad_input};
use crate::value::{Data, Tensor, Value};

pub fn kernel(op: &str) -> Option<Kernel> {
    let k: Kernel = match op {
        "ImageDecoder" => image_decoder,
        _ => return None,
    };
    Some(k)
}

fn image_decoder(ctx: &Ctx<'_>, inputs: &[Option<&Value>]) -> Result<Vec<Value>, KernelError> {
    let stream = input(inputs, 0)?;
    let Data::U8(bytes) = &*stream.data else {
        return Err(bad_input!("the encoded stream must be uint8, not {}", stream.data_type().name()));
    };
    let format = image::guess_format(bytes).map_err(|e| bad_input!("cannot tell the image format: {e}"))?;
    let mut reader = image::ImageReader::with_format(std::io::Cursor::new(bytes.as_slice()), format);
    // Bounds from the run's limits, so a small stream cannot claim a huge image.
    let mut limits = image::Limits::default();
    limits.max_alloc = Some((ctx.limits.max_tensor_elements as u64).saturating_mul(4));
    reader.limits(limits);
    let decoded = reader.decode().map_err(|e| bad_input!("cannot decode the image: {e}"))?;
    let rgb = decoded.to_rgb8();
    let (w, h) = (rgb.width() as usize, rgb.height() as usize);
    let pixels = rgb.into_raw();
    let (channels, data) = match ctx.string("pixel_format").unwrap_or("RGB") {
        "RGB" => (3, pixels),
        "BGR" => (3, pixels.chunks_exact(3).flat_map(|p| [p[2], p[1], p[0]]).collect()),
        "Grayscale" => (
            1,
            pixels
                .chunks_exact(3)
                .map(|p| {
                    ((u32::from(p[0]) * 19595 + u32::from(p[1]) * 38470 + u32::from(p[2]) * 7471 + 0x8000) >> 16) as u8
                })
                .collect(),
        ),
        other => return Err(bad_attribute!("pixel_format '{other}' is not RGB, BGR or Grayscale")),
    };
    one(Tensor::new(vec![h, w, channels], Data::U8(data.into())))
}
