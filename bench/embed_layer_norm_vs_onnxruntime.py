"""EmbedLayerNormalization at BERT-base's table sizes (30,522 words × 768, 512 positions),
one thread, onnxruntime against `onnx run`, side by side (issue 55).

    python3 bench/embed_layer_norm_vs_onnxruntime.py [--runs 100]

The embedding tables are random (seeded); the model is one node, written to a temporary
directory with its input and onnxruntime's outputs, which `onnx run --compare` checks.
Needs numpy, onnx and onnxruntime, and a release build (`cargo build --release`).
"""

import argparse
import pathlib
import subprocess
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORDS, HIDDEN, POSITIONS, TOKENS = 30522, 768, 512, 128


def model() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    table = lambda rows, name: numpy_helper.from_array(  # noqa: E731
        (rng.standard_normal((rows, HIDDEN)) * 0.02).astype(np.float32), name
    )
    initializers = [
        table(WORDS, "word"),
        table(POSITIONS, "position"),
        table(2, "segment"),
        numpy_helper.from_array(np.ones(HIDDEN, np.float32), "gamma"),
        numpy_helper.from_array(np.zeros(HIDDEN, np.float32), "beta"),
    ]
    node = helper.make_node(
        "EmbedLayerNormalization",
        ["ids", "segments", "word", "position", "segment", "gamma", "beta"],
        ["y", "mask_index"],
        domain="com.microsoft",
        epsilon=1e-12,
    )
    ids = lambda name: helper.make_tensor_value_info(name, TensorProto.INT32, [1, TOKENS])  # noqa: E731
    graph = helper.make_graph(
        [node],
        "embed",
        [ids("ids"), ids("segments")],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, TOKENS, HIDDEN]),
            helper.make_tensor_value_info("mask_index", TensorProto.INT32, [1]),
        ],
        initializers,
    )
    opsets = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    return helper.make_model(graph, opset_imports=opsets)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        path, data = tmp / "embed.onnx", tmp / "data"
        data.mkdir()
        onnx.save(model(), path)
        rng = np.random.default_rng(1)
        feeds = {
            "ids": rng.integers(0, WORDS, (1, TOKENS)).astype(np.int32),
            "segments": np.zeros((1, TOKENS), np.int32),
        }
        for i, (name, value) in enumerate(feeds.items()):
            (data / f"input_{i}.pb").write_bytes(numpy_helper.from_array(value, name).SerializeToString())
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        outputs = session.run(None, feeds)
        for i, (name, value) in enumerate(zip(["y", "mask_index"], outputs)):
            (data / f"output_{i}.pb").write_bytes(numpy_helper.from_array(value, name).SerializeToString())
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            session.run(None, feeds)
            times.append(time.perf_counter() - started)
        print(f"onnxruntime {ort.__version__}: median {np.median(times) * 1e3:.3f} ms ({args.runs} runs, one thread)")
        ours = subprocess.run(
            [str(ROOT / "target/release/onnx"), "run", str(path), "--test-data", str(data), "--compare", str(data),
             "--repeat", str(args.runs), "--threads", "1"],
            capture_output=True, text=True, check=True,
        )
        for line in ours.stdout.splitlines() + ours.stderr.splitlines():
            if line.startswith(("time per run", "all ")):
                print(f"onnx run: {line}")


if __name__ == "__main__":
    main()
