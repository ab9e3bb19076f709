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

The models in GENAI_STEMS need onnxruntime-genai's model builder and those in DIFFUSERS_STEMS
need diffusers; each is looked for in the folder given by --genai or --diffusers (installed
there with pip --target), else in the running interpreter:

    pip install --no-deps --target GENAI_DIR 'onnxruntime-genai==0.18.0'
    pip install --no-deps --target DIFFUSERS_DIR 'diffusers==0.42.1' requests urllib3 \
        charset_normalizer idna certifi pillow
    python tests/corpus/contrib/gen_contrib_models.py --transformers4 DIR --genai GENAI_DIR \
        --diffusers DIFFUSERS_DIR

The builder runs in a child process (`python -m onnxruntime_genai.models.builder`, as users
run it) with GENAI_DIR first on PYTHONPATH; DIFFUSERS_DIR goes last on sys.path, so that the
helper packages installed beside diffusers do not shadow the interpreter's own. A run of some
stems only rewrites those stems' entries of not_made.json.

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
sequence 7) so that batching and masking are exercised; a model listed in STEM_DIM_SIZES
takes its own sizes there (the genai builder's models: batch 1, a prompt of 5 tokens, an empty
cache). A model in REFERENCE_RUNS, which onnxruntime's CPU provider cannot run (it has no CPU
kernel for some of its operators), gets the outputs of the model it was made from, run on
the same inputs (expected.json says so under "outputs_from").
"""
from __future__ import annotations

import collections
import importlib.util
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


def randomize_batch_norms(net) -> None:
    """Random running statistics and affine parameters for every BatchNorm2d of `net`, so
    that the BatchNorms the exporter folds into the convolutions are not identities."""
    import torch

    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)


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
    randomize_batch_norms(net)
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


# ---------------------------------------------------------------------------------------------
# Models added third (issue 54, "onnxruntime's other tools"): onnxruntime-genai's model builder
# (the tool that turns a Hugging Face LLM checkpoint into an onnxruntime model), the
# packing-mode converter, and the transformer optimizer's UNet fusions.

# Folders holding onnxruntime-genai and diffusers (pip install --target), set by main from
# --genai and --diffusers; None: the running interpreter's own.
GENAI_DIR: str | None = None
DIFFUSERS_DIR: str | None = None

# The checkpoints the builder reads: the sizes of the Llama models above (hidden 64,
# feed-forward 128, 2 layers, 4 query heads sharing 2 key/value heads, head size 16), per
# architecture. Phi keeps 2 heads of size 32 (key/value heads = heads, as in Phi-2): its
# partial rotary embedding (factor 0.5) then covers 16 dimensions, and onnxruntime's
# GroupQueryAttention wants the rotary cache's width (half the rotary dimensions) to be a
# multiple of 8.
GENAI_HEAD_SIZE = {"llama": 16, "qwen3": 16, "gemma": 16, "phi": 32, "mistral": 16,
                   # the fifth batch (below): Qwen3.5's full-attention layer has heads of 64 (its
                   # rotary embedding covers a quarter of them, 16, as in the released model)
                   "gptoss": 16, "qwen35": 64, "phi3": 16, "smollm3": 16, "gemma3": 16,
                   # the sixth batch (below); Whisper's decoder: d_model 32 over 2 heads
                   "gemma2": 16, "ernie": 16, "granite": 16, "hunyuan": 16, "whisper": 16}


def genai_checkpoint(arch: str) -> pathlib.Path:
    """A tiny random-weight Hugging Face checkpoint of `arch`, saved with save_pretrained as
    the builder reads it (`-i FOLDER`), with a word-level tokenizer of VOCAB tokens: the builder
    loads a tokenizer (AutoTokenizer.from_pretrained in its get_hf_details) and copies it
    beside the model; nothing here uses it. Made once per run."""
    import torch
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder = TMP / f"hf_{arch}"
    if folder.exists():
        return folder
    torch.manual_seed(0)
    sizes = dict(vocab_size=VOCAB, hidden_size=64, intermediate_size=128, num_hidden_layers=LAYERS,
                 num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=MAX_POS,
                 bos_token_id=1, eos_token_id=2, pad_token_id=0)
    if arch == "llama":
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**sizes))
    elif arch == "qwen3":
        # Qwen3: RMS norms on the queries and keys of each head (q_norm, k_norm)
        model = transformers.Qwen3ForCausalLM(transformers.Qwen3Config(**sizes, head_dim=16, tie_word_embeddings=False))
    elif arch == "gemma":
        # Gemma: tied input/output embeddings (its default), tanh Gelu, embeddings scaled by
        # sqrt(hidden)
        model = transformers.GemmaForCausalLM(transformers.GemmaConfig(**sizes, head_dim=16))
    elif arch == "mistral":
        # Mistral with a sliding window of 4 on its first layer: the builder takes the local
        # layers from config.layer_types (without them it writes local_window_size -1 for
        # every layer, sliding_window notwithstanding)
        model = transformers.MistralForCausalLM(transformers.MistralConfig(
            **sizes, sliding_window=4, layer_types=["sliding_attention", "full_attention"]))
    elif arch == "phi":
        # Phi (Phi-2's architecture): LayerNorm with bias, attention and MLP in parallel,
        # biased projections, partial rotary embedding
        sizes |= dict(num_attention_heads=2, num_key_value_heads=2)
        model = transformers.PhiForCausalLM(transformers.PhiConfig(**sizes, partial_rotary_factor=0.5))
    elif arch == "gptoss":
        # GPT-OSS (fifth batch): 4 experts of feed-forward 32, 2 chosen per token, attention
        # sinks, biased projections, a sliding window of 4 on the first layer, YaRN rotary
        # embedding (transformers' defaults: factor 32 over 4,096 original positions)
        model = transformers.GptOssForCausalLM(transformers.GptOssConfig(
            **(sizes | dict(intermediate_size=32)), head_dim=16, num_local_experts=4, num_experts_per_tok=2,
            sliding_window=4, layer_types=["sliding_attention", "full_attention"]))
    elif arch == "qwen35":
        # Qwen3.5 (fifth batch; its text model, which the builder reads from the
        # image-text-to-text checkpoint): a gated delta-net linear-attention layer (2 key
        # heads, 4 value heads of 16, causal convolution of width 4) and a full-attention
        # layer (gated output, q/k norms, interleaved multimodal rotary embedding over 16 of
        # its 64 dimensions, sections 3/3/2). The vision tower is the smallest transformers
        # accepts; the builder does not read it.
        rope = {"rope_type": "default", "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
                "mrope_section": [3, 3, 2], "mrope_interleaved": True}
        text = dict(**sizes, head_dim=64, rope_parameters=rope, linear_conv_kernel_dim=4, linear_key_head_dim=16,
                    linear_value_head_dim=16, linear_num_key_heads=2, linear_num_value_heads=4,
                    layer_types=["linear_attention", "full_attention"])
        vision = dict(depth=1, hidden_size=32, intermediate_size=64, num_heads=2, out_hidden_size=64,
                      num_position_embeddings=16)
        model = transformers.Qwen3_5ForConditionalGeneration(
            transformers.Qwen3_5Config(text_config=text, vision_config=vision))
    elif arch == "phi3":
        # Phi-3 mini with LongRoPE (fifth batch): max_position_embeddings 128 over an original 64,
        # so the builder takes Phi3MiniLongRoPEModel (short and long cos/sin caches chosen by
        # an If on the sequence length)
        model = transformers.Phi3ForCausalLM(transformers.Phi3Config(
            **(sizes | dict(max_position_embeddings=2 * MAX_POS)), original_max_position_embeddings=MAX_POS,
            rope_scaling={"type": "longrope", "short_factor": [1.0] * 8, "long_factor": [2.0] * 8}))
    elif arch == "smollm3":
        # SmolLM3 (fifth batch): no rotary embedding on its second layer (no_rope_layers)
        model = transformers.SmolLM3ForCausalLM(transformers.SmolLM3Config(**sizes, no_rope_layers=[1, 0],
                                                                          use_sliding_window=False))
    elif arch == "gemma3":
        # Gemma 3 (fifth batch): local (window 4) and global layers, q/k norms
        model = transformers.Gemma3ForCausalLM(transformers.Gemma3TextConfig(
            **sizes, head_dim=16, sliding_window=4, layer_types=["sliding_attention", "full_attention"],
            query_pre_attn_scalar=16))
    elif arch == "gemma2":
        # Gemma 2 (sixth batch): local (window 4) and global layers, attention logits soft-capped
        # (tanh) at 1.0 and final logits at 3.0; initializer_range 0.1 (transformers' default is
        # 0.02) so that the attention scores reach the cap: with 0.02 they stay near 0.01 and the
        # attention cap changes the logits by 1e-4 only
        model = transformers.Gemma2ForCausalLM(transformers.Gemma2Config(
            **sizes, head_dim=16, sliding_window=4, layer_types=["sliding_attention", "full_attention"],
            query_pre_attn_scalar=16, attn_logit_softcapping=1.0, final_logit_softcapping=3.0,
            initializer_range=0.1))
    elif arch == "ernie":
        # ERNIE 4.5 (sixth batch): interleaved rotary embedding (pairs of adjacent dimensions),
        # tied embeddings (its default)
        model = transformers.Ernie4_5ForCausalLM(transformers.Ernie4_5Config(**sizes, head_dim=16))
    elif arch == "granite":
        # Granite (sixth batch): scaled embeddings (x 2), attention scale 0.1 instead of
        # 1/sqrt(head size), residual branches scaled by 0.5, logits divided by 4
        model = transformers.GraniteForCausalLM(transformers.GraniteConfig(
            **sizes, embedding_multiplier=2.0, attention_multiplier=0.1, residual_multiplier=0.5,
            logits_scaling=4.0))
    elif arch == "hunyuan":
        # Hunyuan dense (sixth batch): RMS norms on the queries and keys after the rotary
        # embedding (Qwen3 has them before)
        model = transformers.HunYuanDenseV1ForCausalLM(transformers.HunYuanDenseV1Config(**sizes, head_dim=16))
    elif arch == "whisper":
        # Whisper (sixth batch), the builder's encoder-decoder: the script's transformer sizes
        # (d_model 32, 2+2 layers, 2 heads of 16, feed-forward 64), 8 mel bins, 16 encoder
        # positions (so 32 input frames), 64 decoder positions
        model = transformers.WhisperForConditionalGeneration(transformers.WhisperConfig(
            vocab_size=VOCAB, d_model=HIDDEN, encoder_layers=LAYERS, decoder_layers=LAYERS,
            encoder_attention_heads=HEADS, decoder_attention_heads=HEADS, encoder_ffn_dim=INTERMEDIATE,
            decoder_ffn_dim=INTERMEDIATE, num_mel_bins=8, max_source_positions=16, max_target_positions=MAX_POS,
            bos_token_id=1, eos_token_id=2, pad_token_id=0, decoder_start_token_id=1))
    else:
        raise ValueError(arch)
    text_config = model.config.get_text_config()
    head_size = getattr(text_config, "head_dim", None) or text_config.hidden_size // text_config.num_attention_heads
    assert head_size == GENAI_HEAD_SIZE[arch]
    # transformers initializes biases to 0 and norm weights to 1; the builder leaves out a bias
    # that is all zeros (torch.count_nonzero), and a kernel that ignored a norm weight of ones
    # would go unnoticed, so every 1-D parameter gets uniform noise in [-0.2, 0.2).
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.ndim == 1:
                parameter.add_(torch.empty_like(parameter).uniform_(-0.2, 0.2))
    mxfp4 = gptoss_mxfp4(model) if arch == "gptoss" else {}
    model.eval().save_pretrained(str(folder))
    if arch == "gemma3":
        gemma3_flat_rope(folder / "config.json")
    if mxfp4:
        # the original release's expert tensors, beside the float ones transformers reads
        from safetensors.torch import load_file, save_file

        weights = folder / "model.safetensors"
        tensors = load_file(str(weights))
        tensors.update(mxfp4)
        save_file(tensors, str(weights), metadata={"format": "pt"})
    tokenizer = Tokenizer(models.WordLevel({f"t{i}": i for i in range(VOCAB)}, unk_token="t0"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="t0", pad_token="t0",
                                         bos_token="t1", eos_token="t2").save_pretrained(str(folder))
    return folder


def gemma3_flat_rope(config_path: pathlib.Path) -> None:
    """Gemma 3's rotary settings in the flat form the builder 0.18 reads, beside transformers 5's
    own. transformers 5 writes one `rope_parameters` entry per layer type
    ({"full_attention": {...}, "sliding_attention": {...}}); the builder reads
    `rope_parameters["rope_type"]` (KeyError: 'rope_type' without it) and the local layers'
    base from `rope_local_base_freq` (a transformers 4 field, which transformers 5 drops from
    the top level of config.json on loading, but keeps inside rope_parameters, whose keys the
    builder copies to the top level). So `rope_type`, `rope_theta` (the global layers') and
    `rope_local_base_freq` (the local layers') go into rope_parameters, with the values of the
    per-type entries: transformers still reads the per-type ones, and both read the same
    thetas."""
    config = json.loads(config_path.read_text())
    rope = config["rope_parameters"]
    rope |= {"rope_type": "default", "rope_theta": rope["full_attention"]["rope_theta"],
             "rope_local_base_freq": rope["sliding_attention"]["rope_theta"]}
    config_path.write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")


def gptoss_mxfp4(model) -> dict:
    """GPT-OSS's experts as its released checkpoints hold them, MXFP4 (OCP microscaling: blocks
    of 32 FP4 E2M1 values, two a byte, low nibble first, sharing a power-of-two scale stored
    as a biased exponent byte): `model.layers.N.mlp.experts.{gate_up,down}_proj_{blocks,scales}`,
    of shapes (experts, out, in / 32, 16) and (experts, out, in / 32). The builder reads
    these (not transformers' float parameters) to write QMoE; without them it stops
    (`Original GPT-OSS MXFP4 tensor ... was not found`). The float parameters are set to the
    dequantized values, so that both forms of the checkpoint hold the same weights."""
    import torch

    magnitudes = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0])
    tensors = {}
    with torch.no_grad():
        for layer_id, layer in enumerate(model.model.layers):
            for name in ("gate_up_proj", "down_proj"):
                parameter = getattr(layer.mlp.experts, name)
                weight = parameter.transpose(-1, -2).contiguous()  # (experts, out, in), as released
                experts, rows, cols = weight.shape
                blocks = weight.reshape(experts, rows, cols // 32, 32)
                # the shared exponent: the largest magnitude of a block maps into [4, 8), the top
                # binade of E2M1 (whose largest value is 6; larger ones saturate)
                exponent = torch.floor(torch.log2(blocks.abs().amax(-1).clamp_min(2.0 ** -126))) - 2
                scaled = (blocks / torch.pow(2.0, exponent).unsqueeze(-1)).clamp(-6, 6)
                index = (scaled.abs().unsqueeze(-1) - magnitudes).abs().argmin(-1)
                codes = torch.where(index == 0, 0, index | torch.where(scaled < 0, 8, 0)).to(torch.uint8)
                values = magnitudes[index] * torch.where(scaled < 0, -1.0, 1.0) * torch.pow(2.0, exponent).unsqueeze(-1)
                parameter.copy_(values.reshape(experts, rows, cols).transpose(-1, -2))
                prefix = f"model.layers.{layer_id}.mlp.experts.{name}"
                tensors[f"{prefix}_blocks"] = (codes[..., 0::2] | (codes[..., 1::2] << 4)).contiguous()
                tensors[f"{prefix}_scales"] = (exponent + 127).to(torch.uint8).contiguous()
    return tensors


def genai_tool(module: str, *args: str) -> None:
    """`python -m MODULE ARGS` for one of onnxruntime-genai's tools, in a child process with
    GENAI_DIR first on PYTHONPATH and the Hugging Face hub offline."""
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    if GENAI_DIR:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (GENAI_DIR, os.environ.get("PYTHONPATH")) if p)
    result = subprocess.run([sys.executable, "-m", module, *args], env=env, capture_output=True, text=True)
    if result.returncode != 0:
        lines = (result.stderr or result.stdout).strip().splitlines()
        raise RuntimeError(f"{module} failed: {lines[-1] if lines else result.returncode}")


def genai_run(out: pathlib.Path, arch: str, precision: str, provider: str = "cpu",
              extra: tuple[str, ...] = ()) -> pathlib.Path:
    """`python -m onnxruntime_genai.models.builder -i CHECKPOINT -o OUT -p PRECISION -e PROVIDER
    [--extra_options KEY=VALUE ...]`, the builder's command line; OUT/model.onnx, its weights in
    OUT/model.onnx.data, beside genai_config.json and the tokenizer files."""
    args = ["-i", str(genai_checkpoint(arch)), "-o", str(out), "-p", precision, "-e", provider,
            "-c", str(TMP / "genai_cache")]
    genai_tool("onnxruntime_genai.models.builder", *args, *(["--extra_options", *extra] if extra else []))
    return out / "model.onnx"


def genai_build(stem: str, arch: str, precision: str, provider: str = "cpu", extra: tuple[str, ...] = ()) -> pathlib.Path:
    """The builder's model.onnx saved as STEM.onnx with every weight inline (genai_config.json
    and the tokenizer files are not kept)."""
    return save(onnx.load(str(genai_run(TMP / f"genai_{stem}", arch, precision, provider, extra))), stem)


def genai_kv_scales() -> pathlib.Path:
    """KV-cache scales for the Llama checkpoint by the builder's own calibration tool, the
    documented two-step route to a quantized KV cache: `python -m
    onnxruntime_genai.models.quantization.kv_cache_calibration --model BASELINE --tokenizer
    CHECKPOINT --out SCALES` on the build without a quantized cache (the int4 one), with its
    default scheme (int8_per_channel, percentile 99.99) over 8 sequences of 32 tokens from a
    corpus file of 8 fixed texts of 48 random tokens (the tool's own English corpus would
    be mostly unknown words to the tiny vocabulary). The file records its qmax; the builder
    rescales it for int4. Made once per run."""
    scales = TMP / "kv_scales.json"
    if scales.exists():
        return scales
    baseline = TMP / "genai_kv_baseline"
    genai_run(baseline, "llama", "int4")
    rng = np.random.default_rng(0)
    corpus = TMP / "kv_corpus.json"
    corpus.write_text(json.dumps([" ".join(f"t{i}" for i in rng.integers(3, VOCAB, 48)) for _ in range(8)]))
    genai_tool("onnxruntime_genai.models.quantization.kv_cache_calibration", "--model", str(baseline),
               "--tokenizer", str(genai_checkpoint("llama")), "--out", str(scales), "--target-seq", "32",
               "--num-seqs", "8", "--corpus-file", str(corpus))
    return scales


def make_llama_genai_fp32() -> pathlib.Path:
    # float32 for the CPU: GroupQueryAttention with the rotary embedding inside (do_rotary,
    # cos/sin caches of MAX_POS rows) and packed QKV, SkipSimplifiedLayerNormalization.
    return genai_build("llama_genai_fp32", "llama", "fp32")


def make_llama_genai_int4() -> pathlib.Path:
    # the builder's defaults for int4 on the CPU: MatMulNBits, symmetric, block 32,
    # accuracy_level 4 (int8 activations); the embedding stays float (not tied).
    return genai_build("llama_genai_int4", "llama", "int4")


def make_llama_genai_int8() -> pathlib.Path:
    return genai_build("llama_genai_int8", "llama", "int8")


def make_llama_genai_int4_asym() -> pathlib.Path:
    # the builder's other quantization options: asymmetric (uint4 with zero points), block 16,
    # accuracy_level 1 (float32 activations).
    return genai_build("llama_genai_int4_asym", "llama", "int4",
                       extra=("is_symmetric=false", "block_size=16", "accuracy_level=1"))


def make_llama_genai_int4_qdq() -> pathlib.Path:
    # use_qdq: the weights as ai.onnx DequantizeLinear (int4, block 32, opset 21+) + MatMul
    # instead of MatMulNBits.
    return genai_build("llama_genai_int4_qdq", "llama", "int4", extra=("use_qdq=true",))


def make_llama_genai_int4_dml() -> pathlib.Path:
    # int4 for DirectML: float16 inputs and outputs, separate Q/K/V MatMulNBits, and the
    # rotary embedding as RotaryEmbedding nodes (the builder fuses it into GroupQueryAttention
    # for every provider but DirectML), with position_ids an input. onnxruntime's CPU provider
    # runs every one of these operators in float16.
    return genai_build("llama_genai_int4_dml", "llama", "int4", provider="dml")


def make_llama_genai_int4_kv8() -> pathlib.Path:
    # a quantized KV cache (kv_cache_quant_scheme int8_per_channel with the calibrated scales):
    # the past/present key/value are int8, GroupQueryAttention gets k_scale/v_scale inputs
    # (one per channel) and k_quant_type/v_quant_type PER_CHANNEL, kv_cache_bit_width 8.
    return genai_build("llama_genai_int4_kv8", "llama", "int4",
                       extra=("kv_cache_quant_scheme=int8_per_channel", f"kv_cache_scale_file={genai_kv_scales()}"))


def make_llama_genai_int4_kv4() -> pathlib.Path:
    # the same with int4_per_channel: the cache is uint8 holding two 4-bit values a byte, so
    # its last axis is the fixed 8 (head size 16 / 2) instead of kv_cache_dim.
    return genai_build("llama_genai_int4_kv4", "llama", "int4",
                       extra=("kv_cache_quant_scheme=int4_per_channel", f"kv_cache_scale_file={genai_kv_scales()}"))


def make_qwen3_genai_int4() -> pathlib.Path:
    # q_norm/k_norm (SimplifiedLayerNormalization per head) between the packed QKV MatMulNBits
    # and GroupQueryAttention, which therefore takes separate query, key and value.
    return genai_build("qwen3_genai_int4", "qwen3", "int4")


def make_gemma_genai_int4() -> pathlib.Path:
    # tied embeddings: the shared int4 matrix feeds both GatherBlockQuantized (the embedding)
    # and MatMulNBits (the LM head).
    return genai_build("gemma_genai_int4", "gemma", "int4")


def make_mistral_genai_int4_window() -> pathlib.Path:
    # GroupQueryAttention with local_window_size 4 on the first layer (the prompt of 5 tokens
    # is longer than the window). windowed_kv_cache=false: the builder's default gives the
    # sliding layer a cache of its own length (input axis past_sliding_length, attribute
    # sliding_window_cache 1), which onnxruntime refuses for an empty cache ("KV cache
    # capacity (0) must be at least local_window_size (4)").
    return genai_build("mistral_genai_int4_window", "mistral", "int4", extra=("windowed_kv_cache=false",))


def make_phi_genai_int4() -> pathlib.Path:
    # LayerNormalization/SkipLayerNormalization with bias, bias Adds after MatMulNBits, Gelu
    # (tanh), GroupQueryAttention with a partial rotary embedding (16 of 32 dimensions).
    return genai_build("phi_genai_int4", "phi", "int4")


def packing_mode(source: str, stem: str) -> pathlib.Path:
    """`python -m onnxruntime.transformers.convert_to_packing_mode --input SOURCE --output OUT`:
    RemovePadding after the embedding, the attention nodes replaced by their packed forms
    (which take the tokens of all sequences as one (tokens, hidden) matrix), RestorePadding
    after the last (Skip)LayerNormalization. The tool also stores the shapes onnxruntime's
    symbolic shape inference gives (value_info)."""
    out = TMP / f"{stem}.onnx"
    subprocess.run([sys.executable, "-m", "onnxruntime.transformers.convert_to_packing_mode",
                    "--input", str(CORPUS / f"{source}.onnx"), "--output", str(out)],
                   check=True, capture_output=True)
    return save(onnx.load(str(out)), stem)


def make_bert_ts_opt_packed() -> pathlib.Path:
    return packing_mode("bert_ts_opt", "bert_ts_opt_packed")


def make_bert_ts_opt_mha_packed() -> pathlib.Path:
    return packing_mode("bert_ts_opt_mha", "bert_ts_opt_mha_packed")


UNET_INPUTS = ["sample", "timestep", "encoder_hidden_states"]


def unet_export(processor: str, path: pathlib.Path) -> pathlib.Path:
    """A tiny diffusers UNet2DConditionModel: one CrossAttnDownBlock2D and one
    CrossAttnUpBlock2D of 8 channels (4 groups), the cross-attention mid block, 2 heads,
    cross-attention dimension 8, a 4x4 latent of 4 channels. TorchScript export, batch and the
    text sequence dynamic. `processor`: "classic" is diffusers' AttnProcessor (explicit
    baddbmm/softmax/bmm), "sdpa" its default AttnProcessor2_0
    (scaled_dot_product_attention)."""
    import torch

    if DIFFUSERS_DIR and DIFFUSERS_DIR not in sys.path:
        sys.path.append(DIFFUSERS_DIR)
    from diffusers import UNet2DConditionModel
    from diffusers.models.attention_processor import AttnProcessor

    torch.manual_seed(0)
    unet = UNet2DConditionModel(sample_size=4, in_channels=4, out_channels=4, layers_per_block=1,
                                block_out_channels=(8,), norm_num_groups=4,
                                down_block_types=("CrossAttnDownBlock2D",), up_block_types=("CrossAttnUpBlock2D",),
                                cross_attention_dim=8, attention_head_dim=2)
    # as for the genai checkpoints: norm weights are 1 and biases 0 until given noise
    with torch.no_grad():
        for parameter in unet.parameters():
            if parameter.ndim == 1:
                parameter.add_(torch.empty_like(parameter).uniform_(-0.2, 0.2))
    if processor == "classic":
        unet.set_attn_processor(AttnProcessor())
    g = torch.Generator().manual_seed(0)
    args = (torch.randn(2, 4, 4, 4, generator=g), torch.tensor([3.0, 3.0]), torch.randn(2, 7, 8, generator=g))
    export_ts(wrap(unet.eval(), UNET_INPUTS), args, path, UNET_INPUTS, ["out_sample"],
              {"sample": {0: "batch"}, "timestep": {0: "batch"},
               "encoder_hidden_states": {0: "batch", 1: "sequence"}, "out_sample": {0: "batch"}})
    return path


def make_unet_ts() -> pathlib.Path:
    # The export itself (no com.microsoft operators): the model unet_ts_opt's golden outputs
    # come from (REFERENCE_RUNS). diffusers' AttnProcessor, the explicit attention
    # FusionAttentionUnet's "torch 1" paths match: the default AttnProcessor2_0's export does
    # not get through the optimizer (make_unet_sdpa_ts_opt).
    return save(onnx.load(str(unet_export("classic", TMP / "unet_ts.onnx"))), "unet_ts")


def make_unet_ts_opt() -> pathlib.Path:
    # model_type "unet" with the optimizer's defaults for it (FusionOptions("unet"): NhwcConv,
    # GroupNorm channels-last, SkipGroupNorm, BiasSplitGelu, packed QKV/KV MultiHeadAttention,
    # BiasAdd all on; nothing needs use_gpu or float16), num_heads and hidden_size 0 (found
    # per attention, as onnxruntime's Stable Diffusion scripts pass them).
    raw = TMP / "unet_ts.onnx"
    if not raw.exists():
        unet_export("classic", raw)
    return save(optimize(raw, "unet", 0, 0), "unet_ts_opt")


def make_unet_sdpa_ts_opt() -> pathlib.Path:
    # diffusers' default attention processor (scaled_dot_product_attention): onnxruntime
    # 1.32's FusionAttentionUnet.get_num_heads takes int() of a one-element array on this
    # "torch 2" path, which numpy 2.4 refuses (TypeError); expected to land in not_made.json.
    raw = unet_export("sdpa", TMP / "unet_sdpa_ts.onnx")
    return save(optimize(raw, "unet", 0, 0), "unet_sdpa_ts_opt")


# ---------------------------------------------------------------------------------------------
# Models added fifth (issue 54, "models made after the code, to try it on models it has not
# seen"): architectures and tool paths none of the models above has. Those named `tf4` run
# under transformers 4.46.3 (TRANSFORMERS4_STEMS), those named `genai` through the builder.


def make_distilbert_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    # DistilBERT: no token type embedding (EmbedLayerNormalization without segment inputs)
    # and no pooler.
    cfg = transformers.DistilBertConfig(vocab_size=VOCAB, dim=HIDDEN, n_layers=LAYERS, n_heads=HEADS,
                                        hidden_dim=INTERMEDIATE, max_position_embeddings=MAX_POS,
                                        attn_implementation="eager")
    names = ["input_ids", "attention_mask"]
    module = wrap(transformers.DistilBertModel(cfg).eval(), names)
    raw = TMP / "distilbert_ts.onnx"
    export_ts(module, bert_args()[:2], raw, names, ["last_hidden_state"],
              {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]})
    return save(optimize(raw, "bert", HEADS, HIDDEN), "distilbert_ts_opt")


def make_electra_ts_opt_qdyn() -> pathlib.Path:
    import torch
    import transformers
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(0)
    # ELECTRA: embeddings of 16 projected to the hidden size 32 (a MatMul between
    # EmbedLayerNormalization and the first attention).
    cfg = transformers.ElectraConfig(vocab_size=VOCAB, embedding_size=16, hidden_size=HIDDEN,
                                     num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                     intermediate_size=INTERMEDIATE, max_position_embeddings=MAX_POS,
                                     attn_implementation="eager")
    module = wrap(transformers.ElectraModel(cfg).eval(), BERT_INPUTS)
    raw = TMP / "electra_ts.onnx"
    export_ts(module, bert_args(), raw, BERT_INPUTS, ["last_hidden_state"],
              {n: {0: "batch", 1: "sequence"} for n in BERT_INPUTS + ["last_hidden_state"]})
    optimize(raw, "bert", HEADS, HIDDEN)
    out = TMP / "electra_qdyn.onnx"
    # quantize_dynamic's other documented switches (bert_ts_opt_qdyn has the defaults):
    # per-channel weights and reduce_range (7-bit weights, for CPUs without VNNI).
    quantize_dynamic(str(TMP / "electra_ts_opt.onnx"), str(out), weight_type=QuantType.QInt8, per_channel=True,
                     reduce_range=True, extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
    return save(onnx.load(str(out)), "electra_ts_opt_qdyn")


def t5_tf4_export() -> pathlib.Path:
    """T5Model (encoder-decoder, 2+2 layers, 2 heads of 16, feed-forward 64), TorchScript
    export; made once per run (t5_tf4_ts and t5_tf4_ts_opt start from it). The relative
    position buckets keep T5's 32 up to distance 128: the optimizer's RelativePositionBias
    fusion reads max_distance back from a constant assuming 32 buckets (onnx_model_t5.py), so
    with 8 buckets up to 16 it writes max_distance 64 and the fused model computes other
    biases than the export."""
    import torch
    import transformers

    raw = TMP / "t5_tf4_ts.onnx"
    if raw.exists():
        return raw
    torch.manual_seed(0)
    cfg = transformers.T5Config(vocab_size=VOCAB, d_model=HIDDEN, d_kv=HIDDEN // HEADS, d_ff=INTERMEDIATE,
                                num_layers=LAYERS, num_decoder_layers=LAYERS, num_heads=HEADS,
                                attn_implementation="eager", use_cache=False, decoder_start_token_id=0)
    names = ["input_ids", "attention_mask", "decoder_input_ids"]
    module = wrap(transformers.T5Model(cfg).eval(), names)
    ids, mask, _ = bert_args()
    export_ts(module, (ids, mask, ids[:, :5]), raw, names, ["last_hidden_state", "encoder_last_hidden_state"],
              {"input_ids": {0: "batch", 1: "sequence"}, "attention_mask": {0: "batch", 1: "sequence"},
               "decoder_input_ids": {0: "batch", 1: "decode_sequence"},
               "last_hidden_state": {0: "batch", 1: "decode_sequence"},
               "encoder_last_hidden_state": {0: "batch", 1: "sequence"}})
    return raw


def make_t5_tf4_ts() -> pathlib.Path:
    # The export itself: the model t5_tf4_ts_opt's golden outputs come from (REFERENCE_RUNS).
    return save(onnx.load(str(t5_tf4_export())), "t5_tf4_ts")


def make_t5_tf4_ts_opt() -> pathlib.Path:
    # model_type "t5": the encoder's self-attention becomes Attention with the relative
    # position bias (RelativePositionBias, one per stack) as its attention bias, the RMS norms
    # (Skip)SimplifiedLayerNormalization. onnxruntime's CPU provider has no kernel for
    # RelativePositionBias.
    return save(optimize(t5_tf4_export(), "t5", HEADS, HIDDEN), "t5_tf4_ts_opt")


def make_clip_text_tf4_ts_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.CLIPTextConfig(vocab_size=VOCAB, hidden_size=HIDDEN, intermediate_size=INTERMEDIATE,
                                      num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                                      max_position_embeddings=MAX_POS, projection_dim=16,
                                      attn_implementation="eager")
    # input_ids only, as Stable Diffusion's text encoder is exported (onnxruntime's own
    # scripts and the optimum exporter): the causal mask is then the model's only mask, and
    # the attention fuses as unidirectional Attention.
    module = wrap(transformers.CLIPTextModel(cfg).eval(), ["input_ids"])
    raw = TMP / "clip_text_tf4_ts.onnx"
    export_ts(module, bert_args()[:1], raw, ["input_ids"], ["last_hidden_state", "pooler_output"],
              {"input_ids": {0: "batch", 1: "sequence"}, "last_hidden_state": {0: "batch", 1: "sequence"},
               "pooler_output": {0: "batch"}})
    return save(optimize(raw, "clip", HEADS, HIDDEN), "clip_text_tf4_ts_opt")


def make_gpt2_past_tf4_ts_opt_fp16() -> pathlib.Path:
    from onnxruntime.transformers.float16 import convert_float_to_float16

    # keep_io_types=False: the inputs (past_0, past_1) and outputs are float16 too, as for a
    # GPU deployment; bert_ts_opt_fp16 keeps float32 at the borders. In TRANSFORMERS4_STEMS
    # only so that it runs after the model it starts from.
    model = convert_float_to_float16(onnx.load(str(CORPUS / "gpt2_past_tf4_ts_opt.onnx")), keep_io_types=False)
    return save(model, "gpt2_past_tf4_ts_opt_fp16")


def mobilenet_export() -> pathlib.Path:
    """A MobileNetV2-like CNN: a stride-2 Conv/BatchNorm/ReLU6 stem, three inverted residual
    blocks (1x1 expansion, 3x3 depthwise, 1x1 linear projection; a residual Add where shapes
    allow), a 1x1 head convolution, global average pooling and a Linear. ReLU6 exports as
    Clip; the BatchNorms fold into the convolutions."""
    import torch

    torch.manual_seed(0)

    def conv_bn(cin, cout, kernel, stride=1, groups=1, relu6=True):
        layers = [torch.nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
                  torch.nn.BatchNorm2d(cout)]
        return layers + [torch.nn.ReLU6()] if relu6 else layers

    class InvertedResidual(torch.nn.Module):
        def __init__(self, cin, cout, stride, expand):
            super().__init__()
            hidden = cin * expand
            self.residual = stride == 1 and cin == cout
            self.body = torch.nn.Sequential(*conv_bn(cin, hidden, 1), *conv_bn(hidden, hidden, 3, stride, hidden),
                                            *conv_bn(hidden, cout, 1, relu6=False))

        def forward(self, x):
            return x + self.body(x) if self.residual else self.body(x)

    class MobileNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = torch.nn.Sequential(*conv_bn(3, 8, 3, 2), InvertedResidual(8, 8, 1, 2),
                                                InvertedResidual(8, 16, 2, 3), InvertedResidual(16, 16, 1, 3),
                                                *conv_bn(16, 32, 1))
            self.fc = torch.nn.Linear(32, 10)

        def forward(self, x):
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))

    net = MobileNet()
    randomize_batch_norms(net)
    raw = TMP / "mobilenet.onnx"
    args = (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)
    export_ts(net.eval(), args, raw, ["image"], ["logits"], {"image": {0: "batch"}, "logits": {0: "batch"}})
    return raw


def make_mobilenet_qop() -> pathlib.Path:
    from onnxruntime.quantization import QuantFormat, QuantType, quantize_static

    out = TMP / "mobilenet_qop.onnx"
    # QOperator format with per-channel weights (a scale and zero point per output channel of
    # every QLinearConv, depthwise ones included) and reduce_range (7-bit weights); the Clip
    # of ReLU6 folds into the QLinearConv before it (its output range). U8 activations, S8
    # weights, 8 fixed calibration batches (cnn_qop is per-tensor, without reduce_range).
    quantize_static(str(mobilenet_export()), str(out), ImageReader((1, 3, 32, 32)), quant_format=QuantFormat.QOperator,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
    return save(onnx.load(str(out)), "mobilenet_qop")


def ort_offline(source: pathlib.Path, out: pathlib.Path) -> onnx.ModelProto:
    """onnxruntime's own offline optimization, as its documentation shows it: a session with
    graph_optimization_level ORT_ENABLE_EXTENDED and optimized_model_filepath (CPU provider),
    which writes the graph after onnxruntime's C++ rewrites (FusedMatMul, FusedGemm, Gelu,
    SkipLayerNormalization, QuickGelu, DynamicQuantizeMatMul, MatMulIntegerToFloat, ...)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(out)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
    return onnx.load(str(out))


def make_roberta_ort_opt() -> pathlib.Path:
    import torch
    import transformers

    torch.manual_seed(0)
    # RoBERTa: position ids counted from the padding id (CumSum of the non-padding tokens),
    # one token type. The plain export goes through onnxruntime's graph optimizer, not the
    # transformer optimizer.
    cfg = transformers.RobertaConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS,
                                     num_attention_heads=HEADS, intermediate_size=INTERMEDIATE,
                                     max_position_embeddings=MAX_POS + 2, type_vocab_size=1,
                                     attn_implementation="eager")
    names = ["input_ids", "attention_mask"]
    module = wrap(transformers.RobertaModel(cfg).eval(), names)
    raw = TMP / "roberta_ts.onnx"
    export_ts(module, bert_args()[:2], raw, names, ["last_hidden_state", "pooler_output"],
              {n: {0: "batch", 1: "sequence"} for n in names + ["last_hidden_state"]} | {"pooler_output": {0: "batch"}})
    return save(ort_offline(raw, TMP / "roberta_ort_opt.onnx"), "roberta_ort_opt")


def make_clip_vision_qdyn_ort_opt() -> pathlib.Path:
    import torch
    import transformers
    from onnxruntime.quantization import QuantType, quantize_dynamic

    torch.manual_seed(0)
    cfg = transformers.CLIPVisionConfig(hidden_size=HIDDEN, intermediate_size=INTERMEDIATE, num_hidden_layers=LAYERS,
                                        num_attention_heads=HEADS, image_size=32, patch_size=8, projection_dim=16,
                                        attn_implementation="eager")
    module = wrap(transformers.CLIPVisionModel(cfg).eval(), ["pixel_values"])
    args = (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(0)),)
    raw = TMP / "clip_vision_ts.onnx"
    export_ts(module, args, raw, ["pixel_values"], ["last_hidden_state", "pooler_output"],
              {"pixel_values": {0: "batch"}, "last_hidden_state": {0: "batch"}, "pooler_output": {0: "batch"}})
    # quantize_dynamic's defaults (QInt8 weights; MatMul and the patch Conv become
    # MatMulInteger and ConvInteger after DynamicQuantizeLinear), then onnxruntime's offline
    # optimization, which folds DynamicQuantizeLinear + MatMulInteger + the scale Muls into
    # DynamicQuantizeMatMul or MatMulIntegerToFloat.
    quantized = TMP / "clip_vision_qdyn.onnx"
    quantize_dynamic(str(raw), str(quantized), weight_type=QuantType.QInt8)
    return save(ort_offline(quantized, TMP / "clip_vision_qdyn_ort_opt.onnx"), "clip_vision_qdyn_ort_opt")


def make_gptoss_genai_int4() -> pathlib.Path:
    # QMoE (int4 experts from the checkpoint's MXFP4 tensors, SwiGLU with the clamp limit,
    # top-2 routing), GroupQueryAttention with attention sinks (input `head_sink`) and a
    # sliding window of 4 on the first layer (windowed_kv_cache=false, as for
    # mistral_genai_int4_window), YaRN-scaled cos/sin caches.
    return genai_build("gptoss_genai_int4", "gptoss", "int4", extra=("windowed_kv_cache=false",))


def make_gptoss_genai_fp32() -> pathlib.Path:
    # the same checkpoint in float32: the float MoE operator, its experts from transformers'
    # parameters (the dequantized MXFP4 values).
    return genai_build("gptoss_genai_fp32", "gptoss", "fp32", extra=("windowed_kv_cache=false",))


def make_qwen35_genai_int4() -> pathlib.Path:
    # the linear-attention layer: CausalConvWithState (state input past.0.conv), LinearAttention
    # (gated delta rule, state past.0.recurrent), LinearAttentionGate, GatedRMSNorm; the
    # full-attention layer: MRotaryEmbedding on 3-D position_ids (3, batch, sequence) before
    # GroupQueryAttention.
    return genai_build("qwen35_genai_int4", "qwen35", "int4")


def make_phi3_genai_int4_longrope() -> pathlib.Path:
    # LongRoPE (an If picks the short or long cos/sin caches by sequence length) and two
    # --extra_options none of the other builder models has: fuse_mlp_gate_up (one
    # MatMulNBits for the gate and up projections, then Split) and prune_lm_head (logits for
    # the last token only: a Gather before the LM head, output (batch, 1, vocabulary)).
    return genai_build("phi3_genai_int4_longrope", "phi3", "int4",
                       extra=("fuse_mlp_gate_up=true", "prune_lm_head=true"))


def make_smollm3_genai_int4() -> pathlib.Path:
    # expected in not_made.json: on the layer without rotary embedding (no_rope_layers 0) the
    # builder 0.18 turns off GroupQueryAttention's rotary embedding but still writes separate
    # RotaryEmbedding nodes, which need a position_ids input its CPU models do not have
    # (KeyError: 'position_ids'). No config avoids it but one without a no-rope layer (tried in
    # the sixth batch, see MANIFEST.md).
    return genai_build("smollm3_genai_int4", "smollm3", "int4")


def make_gemma3_genai_int4() -> pathlib.Path:
    # made in the sixth batch (the fifth's try is in MANIFEST.md): the checkpoint's config gets
    # the flat rotary fields the builder reads (gemma3_flat_rope). Two cos/sin caches (global
    # layers theta 1,000,000, local ones 10,000), q/k norms (SimplifiedLayerNormalization per
    # head) before GroupQueryAttention, local_window_size 4 on the first layer
    # (windowed_kv_cache=false, as for mistral_genai_int4_window), tied embeddings
    # (GatherBlockQuantized).
    return genai_build("gemma3_genai_int4", "gemma3", "int4", extra=("windowed_kv_cache=false",))


# ---------------------------------------------------------------------------------------------
# Models added sixth (issue 54, again made after the code to try it on models it has not seen):
# builder architectures and options, and a quantizer algorithm, none of the models above has.


def make_gemma2_genai_fp32_softcap() -> pathlib.Path:
    # GroupQueryAttention with `softcap` 1.0 (tanh on the attention scores) and
    # local_window_size 4 on the first layer; the final logits soft-capped by Div/Tanh/Mul;
    # four RMS norms a layer (post-attention and post-feed-forward ones too). float32, so that
    # nothing but the caps and the window differs from transformers.
    return genai_build("gemma2_genai_fp32_softcap", "gemma2", "fp32", extra=("windowed_kv_cache=false",))


def make_ernie_genai_int4_embeds() -> pathlib.Path:
    # GroupQueryAttention with rotary_interleaved 1 (ERNIE 4.5 rotates pairs of adjacent
    # dimensions), and exclude_embeds: the model takes `inputs_embeds` (batch, sequence, 64)
    # float instead of input_ids, as the text decoder of a multimodal pipeline does.
    # accuracy_level=1 (float32 activations): at level 4 one value of the LM head's input
    # lay 4e-6 of a quantization step from a half step, and which int8 it becomes depends
    # on the last bit of the sums before it, which onnxruntime's own kernels order
    # differently on AVX2 and AVX-512 machines (the golden data would be the machine's).
    return genai_build("ernie_genai_int4_embeds", "ernie", "int4", extra=("exclude_embeds=true", "accuracy_level=1"))


def make_granite_genai_int4_mixed() -> pathlib.Path:
    # GroupQueryAttention `scale` 0.1 (Granite's attention multiplier), Muls for the embedding,
    # residual and logits multipliers; matmul_mixed_precision=last_matmul:int8 (the LM head a
    # MatMulNBits of 8 bits, the rest 4 bits) and include_hidden_states (a second output,
    # `hidden_states`, the final norm's output).
    return genai_build("granite_genai_int4_mixed", "granite", "int4",
                       extra=("matmul_mixed_precision=last_matmul:int8", "include_hidden_states=true"))


def make_hunyuan_genai_int4_block128() -> pathlib.Path:
    # the builder's Hunyuan class keeps the rotary embedding out of GroupQueryAttention (its q/k
    # norms come after it): RotaryEmbedding nodes in float32 on the CPU, `position_ids` a model
    # input, GroupQueryAttention with do_rotary 0. block_size=128 is wider than K (64 for every
    # projection but the down projection's 128), so most MatMulNBits weights are one block
    # padded with zeros; accuracy_level=1 (float32 activations).
    return genai_build("hunyuan_genai_int4_block128", "hunyuan", "int4", extra=("block_size=128", "accuracy_level=1"))


def make_whisper_dec_genai_fp32() -> pathlib.Path:
    # The builder writes Whisper as encoder.onnx and decoder.onnx; the decoder is kept:
    # MultiHeadAttention for the self-attention (unidirectional 1, Q/K/V separate, inputs 6/7
    # past_key_self_N/past_value_self_N, outputs present_key_self_N/present_value_self_N) and for
    # the cross-attention (key and value the graph inputs past_key_cross_N/past_value_cross_N,
    # (batch, 2, 16, 16), already split into heads), SkipLayerNormalization with bias.
    out = genai_run(TMP / "genai_whisper_dec_genai_fp32", "whisper", "fp32")
    return save(onnx.load(str(out.parent / "decoder.onnx")), "whisper_dec_genai_fp32")


def make_llama_ts_opt_hqq() -> pathlib.Path:
    from onnxruntime.quantization.matmul_nbits_quantizer import HQQWeightOnlyQuantConfig, MatMulNBitsQuantizer

    # MatMulNBitsQuantizer with HQQ (half-quadratic quantization: the zero points are optimized
    # with the scales, and stored as floats), 4 bits, block 32, on the 14 MatMuls of
    # llama_ts_opt (K = 64, or 128 for the down projections).
    quant = MatMulNBitsQuantizer(onnx.load(str(CORPUS / "llama_ts_opt.onnx")),
                                 algo_config=HQQWeightOnlyQuantConfig(block_size=32, bits=4))
    quant.process()
    return save(quant.model.model, "llama_ts_opt_hqq")


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
    ("llama_genai_fp32", make_llama_genai_fp32),
    ("llama_genai_int4", make_llama_genai_int4),
    ("llama_genai_int8", make_llama_genai_int8),
    ("llama_genai_int4_asym", make_llama_genai_int4_asym),
    ("llama_genai_int4_qdq", make_llama_genai_int4_qdq),
    ("llama_genai_int4_dml", make_llama_genai_int4_dml),
    ("llama_genai_int4_kv8", make_llama_genai_int4_kv8),
    ("llama_genai_int4_kv4", make_llama_genai_int4_kv4),
    ("qwen3_genai_int4", make_qwen3_genai_int4),
    ("gemma_genai_int4", make_gemma_genai_int4),
    ("mistral_genai_int4_window", make_mistral_genai_int4_window),
    ("phi_genai_int4", make_phi_genai_int4),
    ("bert_ts_opt_packed", make_bert_ts_opt_packed),
    ("bert_ts_opt_mha_packed", make_bert_ts_opt_mha_packed),
    ("unet_ts", make_unet_ts),
    ("unet_ts_opt", make_unet_ts_opt),
    ("unet_sdpa_ts_opt", make_unet_sdpa_ts_opt),
    ("distilbert_ts_opt", make_distilbert_ts_opt),
    ("electra_ts_opt_qdyn", make_electra_ts_opt_qdyn),
    ("t5_tf4_ts", make_t5_tf4_ts),
    ("t5_tf4_ts_opt", make_t5_tf4_ts_opt),
    ("clip_text_tf4_ts_opt", make_clip_text_tf4_ts_opt),
    ("gpt2_past_tf4_ts_opt_fp16", make_gpt2_past_tf4_ts_opt_fp16),
    ("mobilenet_qop", make_mobilenet_qop),
    ("roberta_ort_opt", make_roberta_ort_opt),
    ("clip_vision_qdyn_ort_opt", make_clip_vision_qdyn_ort_opt),
    ("gptoss_genai_int4", make_gptoss_genai_int4),
    ("gptoss_genai_fp32", make_gptoss_genai_fp32),
    ("qwen35_genai_int4", make_qwen35_genai_int4),
    ("phi3_genai_int4_longrope", make_phi3_genai_int4_longrope),
    ("smollm3_genai_int4", make_smollm3_genai_int4),
    ("gemma3_genai_int4", make_gemma3_genai_int4),
    ("gemma2_genai_fp32_softcap", make_gemma2_genai_fp32_softcap),
    ("ernie_genai_int4_embeds", make_ernie_genai_int4_embeds),
    ("granite_genai_int4_mixed", make_granite_genai_int4_mixed),
    ("hunyuan_genai_int4_block128", make_hunyuan_genai_int4_block128),
    ("whisper_dec_genai_fp32", make_whisper_dec_genai_fp32),
    ("llama_ts_opt_hqq", make_llama_ts_opt_hqq),
]

# Made under transformers TRANSFORMERS4 (a child process, see main), in MAKERS' order.
TRANSFORMERS4_STEMS = ["gpt2_past_tf4_ts_opt", "vit_tf4_ts_opt", "vit_tf4_dynamo_opt",
                       "whisper_enc_tf4_ts_opt", "llama_tf4_ts_opt",
                       "t5_tf4_ts", "t5_tf4_ts_opt", "clip_text_tf4_ts_opt", "gpt2_past_tf4_ts_opt_fp16"]

# Made with onnxruntime-genai's model builder (--genai) and with diffusers (--diffusers).
GENAI_STEMS = ["llama_genai_fp32", "llama_genai_int4", "llama_genai_int8", "llama_genai_int4_asym",
               "llama_genai_int4_qdq", "llama_genai_int4_dml", "llama_genai_int4_kv8", "llama_genai_int4_kv4",
               "qwen3_genai_int4", "gemma_genai_int4", "mistral_genai_int4_window", "phi_genai_int4",
               "gptoss_genai_int4", "gptoss_genai_fp32", "qwen35_genai_int4", "phi3_genai_int4_longrope",
               "smollm3_genai_int4", "gemma3_genai_int4", "gemma2_genai_fp32_softcap", "ernie_genai_int4_embeds",
               "granite_genai_int4_mixed", "hunyuan_genai_int4_block128", "whisper_dec_genai_fp32"]
DIFFUSERS_STEMS = ["unet_ts", "unet_ts_opt", "unet_sdpa_ts_opt"]

# The sizes of the builder's axis names for its models: batch 1, a prompt of 5 tokens and an
# empty cache (past_sequence_length 0, so total_sequence_length = sequence_length), the first
# call of a generation; kv_cache_dim is the head size.
STEM_DIM_SIZES = {
    stem: {"batch_size": 1, "sequence_length": 5, "past_sequence_length": 0, "total_sequence_length": 5,
           "kv_cache_dim": GENAI_HEAD_SIZE[stem.split("_")[0]]}
    for stem in GENAI_STEMS
}

# Models onnxruntime's CPU provider cannot run (it has no kernel for RemovePadding,
# RestorePadding, PackedAttention, PackedMultiHeadAttention, NhwcConv, GroupNorm, SkipGroupNorm,
# BiasSplitGelu, BiasAdd or RelativePositionBias; CUDA has), with the model each was made from:
# that model's outputs on the same inputs are the golden outputs.
REFERENCE_RUNS = {"bert_ts_opt_packed": "bert_ts_opt", "bert_ts_opt_mha_packed": "bert_ts_opt_mha",
                  "unet_ts_opt": "unet_ts", "t5_tf4_ts_opt": "t5_tf4_ts"}


# ---------------------------------------------------------------------------------------------
# Golden data


def session_for(path: pathlib.Path) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def concrete(value: onnx.ValueInfoProto, sizes: dict[str, int] = DIM_SIZES) -> list[int]:
    dims = value.type.tensor_type.shape.dim
    shape = []
    for d in dims:
        if d.HasField("dim_value") and d.dim_value > 0:
            shape.append(d.dim_value)
        else:
            shape.append(sizes.get(d.dim_param, 1))
    return shape


def past_length(model: onnx.ModelProto, sizes: dict[str, int] = DIM_SIZES) -> int:
    """The size of the cache's axis (past_seq_len, or past_sequence_length for the genai
    builder's models) when a graph input has one (a model with a cache)."""
    used = {d.dim_param for v in model.graph.input for d in v.type.tensor_type.shape.dim}
    for name in ("past_seq_len", "past_sequence_length"):
        if name in used:
            return sizes[name]
    return 0


def feeds_for(model: onnx.ModelProto, rng: np.random.Generator,
              sizes: dict[str, int] = DIM_SIZES) -> dict[str, np.ndarray]:
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    for value in model.graph.input:
        if value.name in initializers:
            continue
        dtype = onnx.helper.tensor_dtype_to_np_dtype(value.type.tensor_type.elem_type)
        shape = concrete(value, sizes)
        if np.issubdtype(dtype, np.floating):
            feeds[value.name] = rng.uniform(-1, 1, shape).astype(dtype)
        elif "mask" in value.name:
            feeds[value.name] = np.ones(shape, dtype)
        elif "position" in value.name:
            # positions of the new tokens: they follow the cached ones when there are any
            feeds[value.name] = np.broadcast_to(np.arange(shape[-1]) + past_length(model, sizes), shape).astype(dtype)
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
    reference = REFERENCE_RUNS.get(stem)
    if reference:
        # the outputs come from the model this one was made from, on this model's inputs
        expected["outputs_from"] = reference
        session = session_for(CORPUS / f"{reference}.onnx")
        assert [v.name for v in session.get_inputs()] == [v.name for v in model.graph.input]
        assert [v.name for v in session.get_outputs()] == [v.name for v in model.graph.output]
    if session is not None:
        feeds = feeds_for(model, rng, DIM_SIZES | STEM_DIM_SIZES.get(stem, {}))
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


def tool_folder(flag: str, module: str, stems: list[str]) -> str | None:
    """The folder given by `flag`, else None when the running interpreter has `module`; exits
    when neither (the models in `stems` cannot be made without it)."""
    folder = argument(flag)
    if folder:
        return str(pathlib.Path(folder).resolve())
    if importlib.util.find_spec(module) is None:
        sys.exit(f"{', '.join(stems)} need {module}: pass {flag} DIR (see the usage at the top of this file)")
    return None


def main() -> None:
    warnings.filterwarnings("ignore")
    ort.set_default_logger_severity(3)
    CORPUS.mkdir(parents=True, exist_ok=True)
    # the quantizers and the shape inference write scratch files (sym_shape_infer_temp.onnx,
    # UUID.data) into the working folder: keep them out of the checkout
    os.chdir(TMP)
    valued = {"--transformers4", "--child-transformers4", "--genai", "--diffusers"}
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
        global GENAI_DIR, DIFFUSERS_DIR
        stems = [stem for stem, _ in MAKERS if not only or stem in only]
        if any(s in GENAI_STEMS for s in stems):
            GENAI_DIR = tool_folder("--genai", "onnxruntime_genai", GENAI_STEMS)
        if any(s in DIFFUSERS_STEMS for s in stems):
            DIFFUSERS_DIR = tool_folder("--diffusers", "diffusers", DIFFUSERS_STEMS)
        make([s for s in stems if s not in TRANSFORMERS4_STEMS])
        later = [s for s in stems if s in TRANSFORMERS4_STEMS]
        if later:
            make_with_transformers4(later, argument("--transformers4"))
        not_made = {}
        if only and (CORPUS / "not_made.json").exists():
            # a run of some stems replaces only those stems' entries
            not_made = {k: v for k, v in json.loads((CORPUS / "not_made.json").read_text()).items() if k not in stems}
        not_made |= NOT_MADE
        (CORPUS / "not_made.json").write_text(json.dumps(dict(sorted(not_made.items())), indent=1) + "\n")
    # Each model's inputs come from its own generator, seeded from its name, so adding or
    # dropping a model leaves the other models' data unchanged.
    for stem, _ in MAKERS:
        if (CORPUS / f"{stem}.onnx").exists() and (not only or stem in only):
            write_data(stem, np.random.default_rng([2026, zlib.crc32(stem.encode())]))


if __name__ == "__main__":
    main()
