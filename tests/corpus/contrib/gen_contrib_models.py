"""A small corpus of real models that use onnxruntime's `com.microsoft` contrib operators, and
onnxruntime's outputs on them (issue 54).

Usage (from the repository root; needs torch, transformers 5, onnx==1.23.2,
onnxruntime==1.32.0, onnxscript and numpy, e.g. in a virtual environment, and a second
transformers release, 4.46.3, installed into a folder of its own for the models in
TRANSFORMERS4_STEMS):

    pip install --no-deps --target DIR 'transformers==4.46.3' 'tokenizers==0.20.3' \
        'huggingface_hub==0.36.2' requests urllib3 charset_normalizer idna certifi
    python tests/corpus/contrib/gen_contrib_models.py --transformers4 DIR   # models, then data
    python tests/corpus/contrib/gen_contrib_models.py --data                # golden data only
    python tests/corpus/contrib/gen_contrib_models.py --transformers4 DIR STEM...  # some models

The models in TRANSFORMERS4_STEMS are made by a second run of this script (a child process
with DIR first on PYTHONPATH), because onnxruntime's optimizer matches the graphs that
transformers 4.x exports for them and not transformers 5's (see MANIFEST.md); every other
model is made with the transformers the script is started with (5.24.0 for the files here).

Why: the contrib operators (Attention, SkipLayerNormalization, EmbedLayerNormalization,
BiasGelu, QAttention, MatMulNBits, DynamicQuantizeLSTM, ...) are never written by an exporter;
they appear only after onnxruntime's own tools rewrite a model: the transformer optimizer
(`onnxruntime.transformers.optimizer`) fuses subgraphs into them and the quantizers
(`onnxruntime.quantization`) swap MatMul/LSTM for quantized forms. So each model here is a
tiny transformers (or torch) model with random weights (torch.manual_seed(0); no pretrained
weights are downloaded), exported with torch.onnx.export and then put through one of those
tools, exactly the way users produce such files.

What it writes:
  tests/corpus/contrib/STEM.onnx                   the models, every weight inline
  tests/fixtures/run_contrib/STEM/input_K.pb       fixed inputs (TensorProto, named after
                                                   the graph input)
  tests/fixtures/run_contrib/STEM/output_K.pb      onnxruntime's outputs (CPU provider, one
                                                   thread, graph optimizations off)
  tests/fixtures/run_contrib/STEM/ORT_VERSION
  tests/fixtures/run_contrib/STEM/expected.json    contrib op counts, onnx.checker verdict,
                                                   whether onnxruntime loads it, and the shapes
                                                   onnxruntime's symbolic shape inference gives
                                                   every value a com.microsoft node produces
  tests/corpus/contrib/not_made.json               the models that could not be made, with
                                                   the error (read by MANIFEST.md's author)

The layout of the run data follows tests/fixtures/run/gen_run_data.py; the values differ in
that integer inputs are token ids in [0, vocab), attention masks are all ones and token type
ids all zeros (a random mask or type id would be legal but is not what the fused kernels
are specified for), and symbolic dimensions take the sizes in DIM_SIZES (batch 2,
sequence 7) so that batching and masking are exercised.
"""
from __future__ import annotations

import collections
import json
import pathlib
import os
import re
import subprocess
import sys
import tempfile
import traceback
import warnings
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

ROOT = pathlib.Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests/corpus/contrib"
OUT = ROOT / "tests/fixtures/run_contrib"
TMP = pathlib.Path(tempfile.mkdtemp(prefix="contrib_gen_"))

# Tiny sizes: each model stays well under 1 MB and runs in milliseconds, while still having
# two layers (so fusions must repeat) and more than one head (so head splitting matters).
VOCAB = 200
HIDDEN = 32
HEADS = 2
LAYERS = 2
INTERMEDIATE = 64
MAX_POS = 64

# Sizes for symbolic dimensions in the golden data, by dim_param name. The second line holds
# the names onnxruntime's GPT-2 export helper gives its axes (Gpt2Helper.export_onnx): three
# new tokens after four cached ones, so that total_seq_len = past_seq_len + seq_len.
DIM_SIZES = {"batch": 2, "sequence": 7, "decode_sequence": 5,
             "batch_size": 2, "seq_len": 3, "past_seq_len": 4, "total_seq_len": 7}

# The transformers release the models in TRANSFORMERS4_STEMS are made with.
TRANSFORMERS4 = "4.46.3"

NOT_MADE: dict[str, str] = {}


def log(message: str) -> None:
    print(message, flush=True)


def op_counts(model: onnx.ModelProto) -> dict[str, int]:
    counter = collections.Counter(f"{n.domain or 'ai.onnx'}::{n.op_type}" for n in model.graph.node)
    return dict(sorted(counter.items()))


def contrib_counts(model: onnx.ModelProto) -> dict[str, int]:
    return {k: v for k, v in op_counts(model).items() if k.startswith("com.microsoft::")}


def save(model: onnx.ModelProto, stem: str) -> pathlib.Path:
    """Every weight inline (no external data), doc strings and the dynamo exporter's
    `pkg.torch.onnx.stack_trace` metadata dropped (they hold stack traces with local paths
    and line numbers, which would make the files depend on the machine and on this script's
    layout); the rest of the exporter's node metadata is kept."""
    for node in model.graph.node:
        node.doc_string = ""
        kept = [p for p in node.metadata_props if p.key != "pkg.torch.onnx.stack_trace"]
        del node.metadata_props[:]
        node.metadata_props.extend(kept)
    model.doc_string = ""
    onnx.external_data_helper.convert_model_from_external_data(model)
    path = CORPUS / f"{stem}.onnx"
    onnx.save(model, str(path), save_as_external_data=False)
    log(f"saved {path.name}: {path.stat().st_size} bytes, contrib ops {contrib_counts(model)}")
    return path


def wrap(model, names: list[str]):
    """transformers 5's forward takes its optional arguments by keyword only in practice
    (positional calls collide with `use_cache`), so the exported module names them and
    returns a plain tuple."""
    import torch

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, *args):
            out = self.inner(**dict(zip(names, args)), return_dict=False)
            return tuple(out) if isinstance(out, (tuple, list)) else out

    return Wrapper().eval()


def export_ts(module, args, path: pathlib.Path, input_names, output_names, dynamic_axes) -> None:
    """The TorchScript exporter (dynamo=False), opset 17: the exporter whose graphs
    onnxruntime's optimizer was written against."""
    import torch

    torch.onnx.export(
        module, tuple(args), str(path), dynamo=False, opset_version=17,
        input_names=input_names, output_names=output_names, dynamic_axes=dynamic_axes,
    )


def optimize(path: pathlib.Path, model_type: str, num_heads: int, hidden_size: int, **kw) -> onnx.ModelProto:
    """opt_level 0: only the Python fusions (the onnxruntime graph optimizer's own rewrites
    would write onnxruntime-internal ops and layouts into the file)."""
    from onnxruntime.transformers import optimizer

    opt = optimizer.optimize_model(str(path), model_type=model_type, num_heads=num_heads,
                                   hidden_size=hidden_size, opt_level=0, **kw)
    # save_model_to_file, as users do: it is what adds the com.microsoft opset import.
    out = path.with_name(path.stem + "_opt.onnx")
    opt.save_model_to_file(str(out), use_external_data_format=False)
    return onnx.load(str(out))


# ---------------------------------------------------------------------------------------------
# The models

BERT_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def bert_module(attn: str = "eager"):
    import torch
    import transformers

    torch.manual_seed(0)
    # eager attention: the optimizer's Attention fusion matches the explicit
    # MatMul/Softmax/MatMul pattern, not scaled_dot_product_attention's export.
    cfg = transformers.BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                                  num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
                                  max_position_embeddings=MAX_POS, attn_implementation=attn)
    return wrap(transformers.BertModel(cfg).eval(), BERT_INPUTS)


def bert_args():
    import torch

    g = torch.Generator().manual_seed(0)
    return (torch.randint(0, VOCAB, (2, 7), generator=g), torch.ones(2, 7, dtype=torch.int64),
            torch.zeros(2, 7, dtype=torch.int64))


BERT_OUTPUTS = ["last_hidden_state", "pooler_output"]
BERT_AXES = {n: {0: "batch", 1: "sequence"} for n in BERT_INPUTS} | {
    "last_hidden_state": {0: "batch", 1: "sequence"}, "pooler_output": {0: "batch"}}


def make_bert_ts_opt() -> pathlib.Path:
    raw = TMP / "bert_ts.onnx"
    export_ts(bert_module(), bert_args(), raw, BERT_INPUTS, BERT_OUTPUTS, BERT_AXES)
    model = optimize(raw, "bert", HEADS, HIDDEN)
    return save(model, "bert_ts_opt")


def make_bert_ts_opt_qdyn() -> pathlib.Path:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out = TMP / "bert_qdyn.onnx"
    # QInt8 weights: onnxruntime's CPU kernels for QAttention and DynamicQuantizeMatMul take
    # signed weights; per_tensor keeps QAttention (per-channel rules it out for Attention).
    # DefaultTensorType: onnx's shape inference cannot type the outputs of the contrib ops
    # (Attention, SkipLayerNormalization), so the quantizer must be told they are float.
    quantize_dynamic(str(CORPUS / "bert_ts_opt.onnx"), str(out), weight_type=QuantType.QInt8,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return save(onnx.load(str(out)), "bert_ts_opt_qdyn")


def make_bert_ts_opt_nbits() -> pathlib.Path:
    from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

    # block 16 divides the hidden size 32 and the intermediate size 64, so every MatMul
    # weight (K = 32 or 64) is quantized in whole blocks.
    quant = MatMulNBitsQuantizer(onnx.load(str(CORPUS / "bert_ts_opt.onnx")), block_size=16,
                                 is_symmetric=True)
    quant.process()
    return save(quant.model.model, "bert_ts_opt_nbits")


def make_bert_ts_opt_fp16() -> pathlib.Path:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    # keep_io_types: inputs and outputs stay float32 (Cast nodes at the borders), the usual
    # way fp16 models are shipped; the fused ops run in float16 inside.
    model = convert_float_to_float16(onnx.load(str(CORPUS / "bert_ts_opt.onnx")), keep_io_types=True)
    return save(model, "bert_ts_opt_fp16")


def make_bert_dynamo_opt() -> pathlib.Path:
    import torch

    raw = TMP / "bert_dynamo.onnx"
    batch, seq = torch.export.Dim("batch"), torch.export.Dim("sequence")
    # the wrapper's forward takes *args, so the dynamic shapes are one tuple for `args`.
    shapes = (tuple({0: batch, 1: seq} for _ in BERT_INPUTS),)
    program = torch.onnx.export(bert_module(), bert_args(), dynamo=True, input_names=BERT_INPUTS,
                                output_names=BERT_OUTPUTS, dynamic_shapes=shapes)
    program.save(str(raw))
    model = optimize(raw, "bert", HEADS, HIDDEN)
    return save(model, "bert_dynamo_opt")


def make_gpt2_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                                  n_positions=MAX_POS, attn_implementation="eager", use_cache=False)
    names = ["input_ids", "attention_mask"]
    module = wrap(transformers.GPT2Model(cfg).eval(), names)
    args = bert_args()[:2]
    raw = TMP / "gpt2_ts.onnx"
    export_ts(module, args, raw, names, ["last_hidden_state"],
              {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]})
    model = optimize(raw, "gpt2", HEADS, HIDDEN)
    return save(model, "gpt2_ts_opt")


def make_vit_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=HIDDEN,
                                 num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                 intermediate_size=INTERMEDIATE, attn_implementation="eager")
    module = wrap(transformers.ViTModel(cfg).eval(), ["pixel_values"])
    args = (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)
    raw = TMP / "vit_ts.onnx"
    export_ts(module, args, raw, ["pixel_values"], ["last_hidden_state", "pooler_output"],
              {"pixel_values": {0: "batch"}, "last_hidden_state": {0: "batch"}, "pooler_output": {0: "batch"}})
    model = optimize(raw, "vit", HEADS, HIDDEN)
    return save(model, "vit_ts_opt")


def make_lstm_qdyn() -> pathlib.Path:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(0)

    class Tagger(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(input_size=8, hidden_size=16, num_layers=2, batch_first=True)
            self.head = torch.nn.Linear(16, 5)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.head(y)

    raw = TMP / "lstm.onnx"
    args = (torch.randn(2, 7, 8, generator=torch.Generator().manual_seed(0)),)
    export_ts(Tagger().eval(), args, raw, ["x"], ["logits"],
              {"x": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}})
    out = TMP / "lstm_qdyn.onnx"
    # LSTM is in quantize_dynamic's default op list only by name; ask for it explicitly.
    quantize_dynamic(str(raw), str(out), weight_type=QuantType.QInt8, op_types_to_quantize=["LSTM", "MatMul", "Gemm"])
    return save(onnx.load(str(out)), "lstm_qdyn")


def make_llama_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    # 4 query heads sharing 2 key/value heads (grouped-query attention), head size 16.
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=LAYERS, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=MAX_POS,
                                   attn_implementation="eager", use_cache=False)
    names = ["input_ids", "attention_mask"]
    module = wrap(transformers.LlamaModel(cfg).eval(), names)
    raw = TMP / "llama_ts.onnx"
    export_ts(module, bert_args()[:2], raw, names, ["last_hidden_state"],
              {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]})
    # the optimizer has no "llama" type for a plain export; "gpt2" runs the generic
    # fusions (SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization, ...).
    model = optimize(raw, "gpt2", 4, 64)
    return save(model, "llama_ts_opt")


def make_bert_ts_opt_mha() -> pathlib.Path:
    from onnxruntime.transformers.fusion_options import FusionOptions

    # The same export with the optimizer's other documented choices: MultiHeadAttention
    # (separate Q/K/V inputs, as for cross-attention and GPU kernels) instead of the packed
    # Attention, and the tanh approximation of Gelu (FastGelu) instead of BiasGelu.
    raw = TMP / "bert_ts.onnx"
    if not raw.exists():
        export_ts(bert_module(), bert_args(), raw, BERT_INPUTS, BERT_OUTPUTS, BERT_AXES)
    options = FusionOptions("bert")
    options.use_multi_head_attention = True
    options.enable_gelu_approximation = True
    model = optimize(raw, "bert", HEADS, HIDDEN, optimization_options=options)
    return save(model, "bert_ts_opt_mha")


def make_cnn_qop() -> pathlib.Path:
    import torch
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    torch.manual_seed(0)

    class Net(torch.nn.Module):
        """Conv, LeakyRelu, a residual Add, Sigmoid, Concat, global average pooling and a
        Linear: each has a QOperator form, several of them only in com.microsoft."""

        def __init__(self):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(8, 8, 3, padding=1)
            self.act = torch.nn.LeakyReLU(0.1)
            self.head = torch.nn.Linear(16, 5)

        def forward(self, x):
            a = self.act(self.conv1(x))
            b = self.conv2(a) + a
            c = torch.cat([b, torch.sigmoid(b)], dim=1)
            return self.head(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(c, 1), 1))

    raw = TMP / "cnn.onnx"
    args = (torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0)),)
    export_ts(Net().eval(), args, raw, ["image"], ["logits"], {"image": {0: "batch"}, "logits": {0: "batch"}})

    class Reader(CalibrationDataReader):
        # eight fixed calibration batches: the scales and zero points depend only on them
        def __init__(self):
            rng = np.random.default_rng(7)
            self.items = iter([{"image": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.items, None)

    out = TMP / "cnn_qop.onnx"
    # QOperator format (not QDQ): the quantizer writes QLinear* operators, of which
    # QLinearAdd, QLinearLeakyRelu, QLinearSigmoid, QLinearConcat, QLinearGlobalAveragePool
    # and QGemm exist only in com.microsoft.
    quantize_static(str(raw), str(out), Reader(), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
    return save(onnx.load(str(out)), "cnn_qop")


# ---------------------------------------------------------------------------------------------
# Models added second (issue 54, "the fusions onnxruntime's optimizer is known for"). Those in
# TRANSFORMERS4_STEMS run under transformers 4.46.3 (see main): the fusion patterns of
# onnxruntime 1.32's optimizer were written against transformers 4.x exports.


def make_gpt2_past_tf4_ts_opt() -> pathlib.Path:
    import random

    import torch
    import transformers
    from onnxruntime.transformers.models.gpt2.gpt2_helper import Gpt2Helper, MyGPT2Model

    torch.manual_seed(0)
    # Gpt2Helper.get_dummy_inputs pads its dummy attention mask with `random`; the values do
    # not reach the graph, but seed it anyway.
    random.seed(0)
    cfg = transformers.GPT2Config(vocab_size=VOCAB, n_embd=HIDDEN, n_layer=LAYERS, n_head=HEADS,
                                  n_positions=MAX_POS, attn_implementation="eager")
    # onnxruntime's own GPT-2 route (models/gpt2/convert_to_onnx.py): MyGPT2Model takes one
    # past tensor per layer, (2, batch, heads, past, head size), and returns `present` the
    # same way; Gpt2Helper.export_onnx is its TorchScript export, with the helper's own
    # choices: opset 11, int32 input_ids, position_ids and attention_mask, inputs past_0 and
    # past_1, outputs last_state, present_0 and present_1, and its axis names (DIM_SIZES).
    raw = TMP / "gpt2_past_ts.onnx"
    Gpt2Helper.export_onnx(MyGPT2Model(cfg).eval(), torch.device("cpu"), str(raw))
    model = optimize(raw, "gpt2", HEADS, HIDDEN)
    return save(model, "gpt2_past_tf4_ts_opt")


def vit_tf4_module_args():
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.ViTConfig(image_size=32, patch_size=8, num_channels=3, hidden_size=HIDDEN,
                                 num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                 intermediate_size=INTERMEDIATE, attn_implementation="eager")
    module = wrap(transformers.ViTModel(cfg).eval(), ["pixel_values"])
    return module, (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)


def make_vit_tf4_ts_opt() -> pathlib.Path:
    # transformers 4.46's ViT divides the scores by sqrt(head size), Softmax(Div(MatMul)),
    # the form fusion_attention matches (transformers 5 multiplies by the scale instead).
    module, args = vit_tf4_module_args()
    raw = TMP / "vit_tf4_ts.onnx"
    export_ts(module, args, raw, ["pixel_values"], ["last_hidden_state", "pooler_output"],
              {"pixel_values": {0: "batch"}, "last_hidden_state": {0: "batch"}, "pooler_output": {0: "batch"}})
    return save(optimize(raw, "vit", HEADS, HIDDEN), "vit_tf4_ts_opt")


def make_vit_tf4_dynamo_opt() -> pathlib.Path:
    import torch

    module, args = vit_tf4_module_args()
    raw = TMP / "vit_tf4_dynamo.onnx"
    program = torch.onnx.export(module, args, dynamo=True, input_names=["pixel_values"],
                                output_names=["last_hidden_state", "pooler_output"],
                                dynamic_shapes=(({0: torch.export.Dim("batch")},),))
    program.save(str(raw))
    return save(optimize(raw, "vit", HEADS, HIDDEN), "vit_tf4_dynamo_opt")


def make_whisper_enc_tf4_ts_opt() -> pathlib.Path:
    import torch
    import transformers
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    torch.manual_seed(0)
    # 8 mel bins and 16 positions: the encoder takes exactly 2 * 16 = 32 frames (its two
    # convolutions, the second of stride 2, give the 16 positions).
    cfg = transformers.WhisperConfig(vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS,
                                     decoder_layers=LAYERS, encoder_attention_heads=HEADS,
                                     decoder_attention_heads=HEADS, encoder_ffn_dim=INTERMEDIATE,
                                     decoder_ffn_dim=INTERMEDIATE, num_mel_bins=8,
                                     max_source_positions=16, max_target_positions=MAX_POS,
                                     attn_implementation="eager")
    module = wrap(WhisperEncoder(cfg).eval(), ["input_features"])
    args = (torch.randn(2, 8, 32, generator=torch.Generator().manual_seed(0)),)
    raw = TMP / "whisper_enc_ts.onnx"
    export_ts(module, args, raw, ["input_features"], ["last_hidden_state"],
              {"input_features": {0: "batch"}, "last_hidden_state": {0: "batch"}})
    # onnxruntime's Whisper scripts optimize with model_type "bart" (fusion_bart_attention
    # covers both).
    return save(optimize(raw, "bart", HEADS, HIDDEN), "whisper_enc_tf4_ts_opt")


def make_llama_tf4_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=VOCAB, hidden_size=64, intermediate_size=128,
                                   num_hidden_layers=LAYERS, num_attention_heads=4,
                                   num_key_value_heads=2, max_position_embeddings=MAX_POS,
                                   attn_implementation="eager", use_cache=False)
    # position_ids is a graph input, as in onnxruntime's own Llama export: without it the
    # export computes (1, sequence) positions, and the fused RotaryEmbedding, which wants
    # (batch, sequence) or one offset, fails in onnxruntime for a batch of 2.
    names = ["input_ids", "attention_mask", "position_ids"]
    module = wrap(transformers.LlamaModel(cfg).eval(), names)
    raw = TMP / "llama_tf4_ts.onnx"
    ids, mask, _ = bert_args()
    positions = torch.arange(ids.shape[1]).unsqueeze(0).expand(ids.shape[0], -1)
    export_ts(module, (ids, mask, positions), raw, names, ["last_hidden_state"],
              {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]})
    model = optimize(raw, "gpt2", 4, 64)
    # The rotary fusion computes cos_cache and sin_cache itself for a rotary embedding
    # computed on the fly (transformers 4.4x), with a fixed 131,072 rows (8.4 MB here). The
    # rows past max_position_embeddings are never read (position ids index them), so they
    # are cut to MAX_POS rows: the one edit this script makes to a tool's output.
    for tensor in model.graph.initializer:
        if tensor.name in ("cos_cache", "sin_cache"):
            tensor.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(tensor)[:MAX_POS].copy(), tensor.name))
    return save(model, "llama_tf4_ts_opt")


def make_bart_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BartConfig(vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS,
                                  decoder_layers=LAYERS, encoder_attention_heads=HEADS,
                                  decoder_attention_heads=HEADS, encoder_ffn_dim=INTERMEDIATE,
                                  decoder_ffn_dim=INTERMEDIATE, max_position_embeddings=MAX_POS,
                                  attn_implementation="eager", use_cache=False)
    names = ["input_ids", "attention_mask", "decoder_input_ids"]
    module = wrap(transformers.BartModel(cfg).eval(), names)
    ids, mask, _ = bert_args()
    raw = TMP / "bart_ts.onnx"
    export_ts(module, (ids, mask, ids[:, :5]), raw, names, ["last_hidden_state", "encoder_last_hidden_state"],
              {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
               "decoder_input_ids": {0: "batch", 1: "decode_sequence"},
               "last_hidden_state": {0: "batch", 1: "decode_sequence"},
               "encoder_last_hidden_state": {0: "batch", 1: "sequence"}})
    return save(optimize(raw, "bart", HEADS, HIDDEN), "bart_ts_opt")


def resnet_export() -> pathlib.Path:
    """A small ResNet (torchvision-free): a Conv/BatchNorm/ReLU/MaxPool stem, a basic block,
    a basic block with stride 2 and a 1x1 projection shortcut, global average pooling, a
    Linear head. Exported once per run (the three resnet models start from it)."""
    import torch

    raw = TMP / "resnet.onnx"
    if raw.exists():
        return raw
    torch.manual_seed(0)

    class Block(torch.nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = torch.nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = torch.nn.BatchNorm2d(cout)
            self.conv2 = torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = torch.nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 1, stride, bias=False),
                                                torch.nn.BatchNorm2d(cout))

        def forward(self, x):
            y = self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))
            return torch.relu(y + (x if self.down is None else self.down(x)))

    class ResNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(8),
                                            torch.nn.ReLU(), torch.nn.MaxPool2d(2))
            self.layer1 = Block(8, 8, 1)
            self.layer2 = Block(8, 16, 2)
            self.fc = torch.nn.Linear(16, 10)

        def forward(self, x):
            x = self.layer2(self.layer1(self.stem(x)))
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1))

    net = ResNet()
    # random running statistics, so that the BatchNorms the exporter folds into the
    # convolutions are not identities
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    args = (torch.randn(2, 3, 16, 16, generator=torch.Generator().manual_seed(0)),)
    export_ts(net.eval(), args, raw, ["image"], ["logits"], {"image": {0: "batch"}, "logits": {0: "batch"}})
    return raw


def make_resnet_ort_opt() -> pathlib.Path:
    from onnxruntime.transformers.optimizer import optimize_by_onnxruntime

    # The transformer optimizer has no CNN fusions of its own (its "unet" type writes
    # NhwcConv, a CUDA-only operator); a CNN goes through onnxruntime's graph optimizer, here
    # by the optimizer module's optimize_by_onnxruntime at level 2 (ORT_ENABLE_EXTENDED, CPU;
    # level 99 would add the NCHWc layout), which saves the rewritten graph: Conv+Relu become
    # com.microsoft FusedConv. The file imports every domain onnxruntime knows, as
    # onnxruntime writes it.
    out = TMP / "resnet_ort_opt.onnx"
    optimize_by_onnxruntime(str(resnet_export()), use_gpu=False, optimized_model_path=str(out), opt_level=2)
    return save(onnx.load(str(out)), "resnet_ort_opt")


class ImageReader:
    """Eight fixed calibration batches for quantize_static: the scales and zero points depend
    only on them."""

    def __init__(self, shape):
        rng = np.random.default_rng(7)
        self.items = iter([{"image": rng.uniform(-1, 1, shape).astype(np.float32)} for _ in range(8)])

    def get_next(self):
        return next(self.items, None)


def make_resnet_qdq() -> pathlib.Path:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    out = TMP / "resnet_qdq.onnx"
    # QDQ format, the default and the usual shipping form: QuantizeLinear/DequantizeLinear
    # pairs around float operators (all in ai.onnx); U8 activations, S8 per-channel weights.
    quantize_static(str(resnet_export()), str(out), ImageReader((1, 3, 16, 16)), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True)
    return save(onnx.load(str(out)), "resnet_qdq")


def make_resnet_qdq16() -> pathlib.Path:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    out = TMP / "resnet_qdq16.onnx"
    # 16-bit activations (A16W8) with the quantizer's UseQDQContribOps: the Q/DQ pairs are
    # com.microsoft QuantizeLinear/DequantizeLinear, which take uint16 at any opset (without
    # it the quantizer raises the model to opset 21 for ai.onnx's 16-bit Q/DQ).
    quantize_static(str(resnet_export()), str(out), ImageReader((1, 3, 16, 16)), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QUInt16, weight_type=QuantType.QInt8, per_channel=True,
                    extra_options={"UseQDQContribOps": True})
    return save(onnx.load(str(out)), "resnet_qdq16")


# Order matters: the quantized and fp16 models start from bert_ts_opt.onnx.
MAKERS = [
    ("bert_ts_opt", make_bert_ts_opt),
    ("bert_ts_opt_qdyn", make_bert_ts_opt_qdyn),
    ("bert_ts_opt_nbits", make_bert_ts_opt_nbits),
    ("bert_ts_opt_fp16", make_bert_ts_opt_fp16),
    ("bert_ts_opt_mha", make_bert_ts_opt_mha),
    ("gpt2_ts_opt", make_gpt2_ts_opt),
    ("vit_ts_opt", make_vit_ts_opt),
    ("bert_dynamo_opt", make_bert_dynamo_opt),
    ("lstm_qdyn", make_lstm_qdyn),
    ("llama_ts_opt", make_llama_ts_opt),
    ("cnn_qop", make_cnn_qop),
    ("bart_ts_opt", make_bart_ts_opt),
    ("resnet_ort_opt", make_resnet_ort_opt),
    ("resnet_qdq", make_resnet_qdq),
    ("resnet_qdq16", make_resnet_qdq16),
    ("gpt2_past_tf4_ts_opt", make_gpt2_past_tf4_ts_opt),
    ("vit_tf4_ts_opt", make_vit_tf4_ts_opt),
    ("vit_tf4_dynamo_opt", make_vit_tf4_dynamo_opt),
    ("whisper_enc_tf4_ts_opt", make_whisper_enc_tf4_ts_opt),
    ("llama_tf4_ts_opt", make_llama_tf4_ts_opt),
]

# Made under transformers TRANSFORMERS4 (a child process, see main), in MAKERS' order.
TRANSFORMERS4_STEMS = ["gpt2_past_tf4_ts_opt", "vit_tf4_ts_opt", "vit_tf4_dynamo_opt",
                       "whisper_enc_tf4_ts_opt", "llama_tf4_ts_opt"]


# ---------------------------------------------------------------------------------------------
# Golden data


def session_for(path: pathlib.Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def concrete(value: onnx.ValueInfoProto) -> list[int]:
    dims = value.type.tensor_type.shape.dim
    shape = []
    for d in dims:
        if d.HasField("dim_value") and d.dim_value > 0:
            shape.append(d.dim_value)
        else:
            shape.append(DIM_SIZES.get(d.dim_param, 1))
    return shape


def past_length(model: onnx.ModelProto) -> int:
    """The size of the past_seq_len axis when a graph input has one (a model with a cache)."""
    uses = any(d.dim_param == "past_seq_len" for v in model.graph.input for d in v.type.tensor_type.shape.dim)
    return DIM_SIZES["past_seq_len"] if uses else 0


def feeds_for(model: onnx.ModelProto, rng: np.random.Generator) -> dict[str, np.ndarray]:
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = concrete(value)
        if np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.uniform(-1, 1, shape).astype(dtype)
        elif "mask" in value.name:
            feeds[value.name] = np.ones(shape, dtype)
        elif "position" in value.name:
            # positions of the new tokens: they follow the cached ones when there are any
            feeds[value.name] = np.broadcast_to(np.arange(shape[-1]) + past_length(model), shape).astype(dtype)
        elif "token_type" in value.name:
            feeds[value.name] = np.zeros(shape, dtype)
        else:
            feeds[value.name] = rng.integers(0, VOCAB, shape).astype(dtype)
    return feeds


def dims_of(value: onnx.ValueInfoProto):
    if not value.type.tensor_type.HasField("shape"):
        return None
    out = []
    for d in value.type.tensor_type.shape.dim:
        if d.HasField("dim_value"):
            out.append(d.dim_value)
        elif d.HasField("dim_param"):
            out.append(d.dim_param)
        else:
            out.append(None)
    return out


def symbolic_shapes(model: onnx.ModelProto):
    """What onnxruntime's symbolic shape inference says of every value a com.microsoft node
    produces; a string (the error) when it throws."""
    from onnxruntime.tools.symbolic_shape_infer import SymbolicShapeInference

    try:
        inferred = SymbolicShapeInference.infer_shapes(onnx.ModelProto.FromString(model.SerializeToString()),
                                                       auto_merge=True)
    except Exception as error:  # noqa: BLE001 - the error is the recorded result
        return f"{type(error).__name__}: {error}".strip()
    if inferred is None:
        return "infer_shapes returned None"
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    result = {}
    for node in inferred.graph.node:
        if node.domain != "com.microsoft":
            continue
        for name in node.output:
            if name:
                result[name] = dims_of(known[name]) if name in known else None
    return result


def write_data(stem: str, rng: np.random.Generator) -> None:
    path = CORPUS / f"{stem}.onnx"
    model = onnx.load(str(path))
    expected: dict = {"ops": op_counts(model)}
    try:
        onnx.checker.check_model(model, full_check=True)
        expected["onnx_check"] = "pass"
    except Exception as error:  # noqa: BLE001
        expected["onnx_check"] = f"{type(error).__name__}: {error}".strip()
    target = OUT / stem
    target.mkdir(parents=True, exist_ok=True)
    try:
        session = session_for(path)
        expected["ort_loads"] = True
    except Exception as error:  # noqa: BLE001
        expected["ort_loads"] = False
        expected["ort_error"] = str(error).splitlines()[0]
        session = None
    expected["symbolic_shapes"] = symbolic_shapes(model)
    if session is not None:
        feeds = feeds_for(model, rng)
        outputs = session.run(None, feeds)
        for k, (name, array) in enumerate(feeds.items()):
            (target / f"input_{k}.pb").write_bytes(numpy_helper.from_array(array, name).SerializeToString())
        for k, (info, value) in enumerate(zip(session.get_outputs(), outputs)):
            (target / f"output_{k}.pb").write_bytes(numpy_helper.from_array(value, info.name).SerializeToString())
        (target / "ORT_VERSION").write_text(ort.__version__ + "\n")
    text = json.dumps(expected, indent=1)
    # a shape on one line: [dims] rather than one dim a line
    text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]", text)
    (target / "expected.json").write_text(text + "\n")
    log(f"data {stem}: check {expected['onnx_check'][:60]}, loads {expected['ort_loads']}")


def make(stems: list[str]) -> None:
    """Runs the makers of `stems` in MAKERS' order; a model that cannot be made goes to
    NOT_MADE with its error."""
    for stem, maker in MAKERS:
        if stem not in stems:
            continue
        try:
            maker()
        except Exception as error:  # noqa: BLE001 - a model that cannot be made is listed
            traceback.print_exc()
            NOT_MADE[stem] = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
            log(f"NOT MADE {stem}: {NOT_MADE[stem]}")


def make_with_transformers4(stems: list[str], folder: str | None) -> None:
    """Makes `stems` in a child run of this script with transformers TRANSFORMERS4 (installed
    with --target into `folder`) first on PYTHONPATH; its NOT_MADE comes back in a file."""
    if not folder:
        sys.exit(f"{', '.join(stems)} need transformers {TRANSFORMERS4}: pass --transformers4 DIR "
                 "(see the usage at the top of this file)")
    report = TMP / "not_made_transformers4.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (folder, os.environ.get("PYTHONPATH")) if p))
    subprocess.run([sys.executable, str(pathlib.Path(__file__).resolve()), "--child-transformers4", str(report), *stems], env=env, check=True)
    NOT_MADE.update(json.loads(report.read_text()))


def argument(name: str) -> str | None:
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else None


def main() -> None:
    warnings.filterwarnings("ignore")
    ort.set_default_logger_severity(3)
    CORPUS.mkdir(parents=True, exist_ok=True)
    # the quantizers and the shape inference write scratch files (sym_shape_infer_temp.onnx,
    # UUID.data) into the working folder: keep them out of the checkout
    os.chdir(TMP)
    valued = {"--transformers4", "--child-transformers4"}
    args = sys.argv[1:]
    only = [a for k, a in enumerate(args) if not a.startswith("--") and (k == 0 or args[k - 1] not in valued)]
    child_report = argument("--child-transformers4")
    if child_report:
        import transformers

        if transformers.__version__ != TRANSFORMERS4:
            sys.exit(f"the child run needs transformers {TRANSFORMERS4}, found {transformers.__version__}")
        make(only)
        pathlib.Path(child_report).write_text(json.dumps(NOT_MADE))
        return
    if "--data" not in sys.argv:
        stems = [stem for stem, _ in MAKERS if not only or stem in only]
        make([s for s in stems if s not in TRANSFORMERS4_STEMS])
        later = [s for s in stems if s in TRANSFORMERS4_STEMS]
        if later:
            make_with_transformers4(later, argument("--transformers4"))
        if not only:
            (CORPUS / "not_made.json").write_text(json.dumps(dict(sorted(NOT_MADE.items())), indent=1) + "\n")
    # Each model's inputs come from its own generator, seeded from its name, so adding or
    # dropping a model leaves the other models' data unchanged.
    for stem, _ in MAKERS:
        if (CORPUS / f"{stem}.onnx").exists() and (not only or stem in only):
            write_data(stem, np.random.default_rng([2026, zlib.crc32(stem.encode())]))


if __name__ == "__main__":
    main()
