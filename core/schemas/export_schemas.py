"""Writes core/schemas/onnx_schemas.json: every operator schema onnx 1.23.2 knows, in every
domain and every version, and the contrib schemas onnxruntime 1.32.0 registers in its own
domains (`com.microsoft`, `com.microsoft.nchwc`), for the checker, the inference and the
language server (core/src/schema reads it; core/build.rs indexes it at build time).

Usage (from the repository root; needs onnx==1.23.2, onnxruntime==1.32.0 and numpy in .venv):
    .venv/bin/python core/schemas/export_schemas.py [-o FILE] [--summary]

The documentation of the schemas is written apart, by gen_docs.py (onnx_docs.json), so that
checking never reads it. Layout ("onnx-opschema/1"), one line, keys short, false and empty
fields left out:

{
  "format": "onnx-opschema/1",
  "onnx_version": "1.23.2",             # the onnx package that wrote the file
  "onnxruntime_version": "1.32.0",      # the onnxruntime package the contrib schemas are from
  "ir_version": 14,                     # its onnx.IR_VERSION
  "domains": {"": 28, "ai.onnx.ml": 5, ...},   # the highest opset of each domain
  "typesets": [["tensor(double)", "tensor(float)"], ...],  # each set of allowed types once
  "schemas": [                          # onnx's, then onnxruntime's, each sorted by (domain, name, since)
    {
      "op": "Add", "dom": "", "since": 14,
      "in":  [["A", "T", "s", 1, 1], ...],  # [name, type string, option, homogeneous, min arity]
      "out": [["C", "T", "s", 1, 1]],       #   option: s single, o optional, v variadic
      "arity": [2, 2, 1, 1],                # min in, max in, min out, max out (-1: unbounded)
      "tc": {"T": 17},                      # type parameter -> index into "typesets"
      "attr": [["alpha", "f", 0, 0.01], ...],  # [name, type code, required, default or null]
      "si": 1,                              # has a type and shape inference function
      "dp": 1,                              # has a data propagation function
      "fn": {"16": "<the body as onnx text>"},  # function bodies by opset
      "cfn": [18, 21],                      # opsets whose body depends on the node
      "dep": 1, "exp": 1, "nd": 1,          # deprecated, experimental, non-deterministic
      "ort": 1                              # onnxruntime's contrib schema (onnx does not know it)
    }, ...
  ],
  "extras": {...}                       # facts onnx's Python API does not give (EXTRAS)
}

Attribute type codes: f i s t g st tp (FLOAT INT STRING TENSOR GRAPH SPARSE_TENSOR
TYPE_PROTO) and their plurals fs is ss ts gs sts tps. A FLOAT default is written as the
shortest decimal that reads back as the same f32; INT, STRING, INTS, FLOATS and STRINGS as
JSON numbers, strings and lists. Other kinds carry no default in onnx 1.23; one that did
would be kept as {"proto_b64": the serialized AttributeProto}.

onnxruntime's binding gives less than onnx's: no minimum arity of a variadic formal (1, its
default, is written), no function bodies, no data propagation, no determinism flag, and only
the newest version of each contrib operator (onnxruntime registers one, since 1, for nearly
all). Its copies of onnx's own domains are left out: onnx's are the reference.

A node (domain d, op o) under an imported opset v takes the schema of the largest `since`
<= v, with no upper bound (onnx's OpSchemaRegistry::GetSchema); a deprecated one is an
error of the checker.
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import pathlib
import sys

import numpy as np
import onnx
import onnx.defs
import onnx.printer

OUT = pathlib.Path(__file__).resolve().parent / "onnx_schemas.json"

ATTRIBUTE_CODES = {
    "FLOAT": "f", "INT": "i", "STRING": "s", "TENSOR": "t", "GRAPH": "g",
    "SPARSE_TENSOR": "st", "TYPE_PROTO": "tp",
    "FLOATS": "fs", "INTS": "is", "STRINGS": "ss", "TENSORS": "ts",
    "GRAPHS": "gs", "SPARSE_TENSORS": "sts", "TYPE_PROTOS": "tps",
}
OPTIONS = {"Single": "s", "Optional": "o", "Variadic": "v"}
UNBOUNDED = 2147483647  # onnx's INT_MAX for "no limit"

# Facts of onnx's schemas that its Python binding does not give, read from onnx's sources
# (onnx/defs/nn/{defs,old}.cc and onnx/checker.cc at f7546912, 1.23). The checker needs them:
# onnx's Verify() refuses output counts outside `allowed_output_counts`, and an operator
# with AllowUncheckedAttributes accepts attributes it does not declare.
EXTRAS = {
    # OpSchema::NumOutputs({...}): the output counts allowed beside min and max
    "allowed_output_counts": [
        {"op": "BatchNormalization", "dom": "", "since": since, "counts": counts}
        for since, counts in [(1, [1, 5]), (6, [1, 5]), (7, [1, 5]), (9, [1, 5]), (14, [1, 3]), (15, [1, 3])]
    ],
    # OpSchema::AllowUncheckedAttributes()
    "allow_unchecked_attributes": [{"op": "LayerNormalization", "dom": "", "since": 17}],
    # checker.cc: operators of the default domain that only get a warning ("experimental")
    "checker_experimental_ops": [
        "ATen", "Affine", "ConstantFill", "Crop", "DynamicSlice", "GRUUnit",
        "GivenTensorFill", "ImageScaler", "ParametricSoftplus", "Scale", "ScaledTanh",
    ],
    # OpSchema::Verify ignores attributes whose names start with this
    "internal_attribute_prefix": "__",
}


def f32(x: float):
    """The shortest decimal that reads back as the same f32; non-finite values as strings."""
    v = np.float32(x)
    if np.isnan(v):
        return "nan"
    if np.isinf(v):
        return "inf" if v > 0 else "-inf"
    return float(str(v))


def default(attribute):
    value = attribute.default_value
    a = onnx.AttributeProto
    if value.type == a.UNDEFINED:
        return None
    if value.type == a.FLOAT:
        return f32(value.f)
    if value.type == a.INT:
        return int(value.i)
    if value.type == a.STRING:
        return value.s.decode("utf-8")
    if value.type == a.FLOATS:
        return [f32(x) for x in value.floats]
    if value.type == a.INTS:
        return [int(x) for x in value.ints]
    if value.type == a.STRINGS:
        return [x.decode("utf-8") for x in value.strings]
    return {"proto_b64": base64.b64encode(value.SerializeToString()).decode("ascii")}


def formal(p) -> list:
    return [p.name, p.type_str, OPTIONS[p.option.name], int(bool(p.is_homogeneous)), int(p.min_arity)]


def bound(n: int) -> int:
    return -1 if n >= UNBOUNDED else int(n)


def head(s, formals: tuple[list, list], typesets: dict[tuple, int], default_of) -> dict:
    """What both packages' schemas give alike: name, formals, arity, constraints, attributes."""
    e: dict = {"op": s.name, "dom": s.domain, "since": int(s.since_version)}
    e["in"], e["out"] = formals
    e["arity"] = [int(s.min_input), bound(s.max_input), int(s.min_output), bound(s.max_output)]
    # Type sets are numbered in order of first use, schemas in sorted order: stable.
    constraints = {
        c.type_param_str: typesets.setdefault(tuple(sorted(c.allowed_type_strs)), len(typesets))
        for c in s.type_constraints
    }
    if constraints:
        e["tc"] = constraints
    attributes = [
        [a.name, ATTRIBUTE_CODES[a.type.name], int(bool(a.required)), default_of(a)]
        for a in (s.attributes[name] for name in sorted(s.attributes))
    ]
    if attributes:
        e["attr"] = attributes
    if s.has_type_and_shape_inference_function:
        e["si"] = 1
    return e


def entry(s, typesets: dict[tuple, int]) -> dict:
    e = head(s, ([formal(p) for p in s.inputs], [formal(p) for p in s.outputs]), typesets, default)
    if s.has_data_propagation_function:
        e["dp"] = 1
    if s.function_opset_versions:
        bodies = {}
        for version in s.function_opset_versions:
            body = onnx.FunctionProto()
            body.ParseFromString(s.get_function_with_opset_version(version))
            body.ClearField("doc_string")
            bodies[str(version)] = onnx.printer.to_text(body)
        e["fn"] = bodies
    if s.context_dependent_function_opset_versions:
        e["cfn"] = [int(v) for v in s.context_dependent_function_opset_versions]
    if s.deprecated:
        e["dep"] = 1
    if s.support_level == onnx.defs.OpSchema.SupportType.EXPERIMENTAL:
        e["exp"] = 1
    if s.non_deterministic:
        e["nd"] = 1
    return e


# The domains of onnxruntime's contrib schemas taken (its internal NHWC domain, which only
# its own layout transformer writes while running, is left out).
ORT_DOMAINS = ("com.microsoft", "com.microsoft.nchwc")
# Contrib operators onnxruntime registers in onnx's own domain that its tools write into
# models: its optimizer fuses RMS norms into SimplifiedLayerNormalization. onnx's checker
# refuses such a node (no schema); onnxruntime runs it. Its older copies of onnx's
# operators (LayerNormalization-1, the experimental ones) are left out.
ORT_DEFAULT_DOMAIN_OPS = ("SimplifiedLayerNormalization",)
ORT_VERSION = "1.32.0"


def ort_default(attribute):
    """An onnxruntime attribute's default, from the AttributeProto its binding gives."""
    if not attribute._default_value:
        return None
    proto = onnx.AttributeProto()
    proto.ParseFromString(attribute._default_value)
    wrapped = onnx.defs.OpSchema.Attribute(attribute.name, proto, "")
    return default(wrapped)


def ort_entry(s, typesets: dict[tuple, int]) -> dict:
    """An onnxruntime contrib schema in the layout of `entry`."""
    # The binding gives no min_arity: 1, onnx's and onnxruntime's default, is written.
    def ort_formal(p) -> list:
        return [p.name, p.typeStr, OPTIONS[p.option.name], int(bool(p.isHomogeneous)), 1]

    e = head(s, ([ort_formal(p) for p in s.inputs], [ort_formal(p) for p in s.outputs]), typesets, ort_default)
    if s.deprecated:
        e["dep"] = 1
    if s.support_level.name == "EXPERIMENTAL":
        e["exp"] = 1
    e["ort"] = 1
    return e


def ort_schemas() -> list:
    import onnxruntime
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_c

    assert onnxruntime.__version__ == ORT_VERSION, f"onnxruntime {onnxruntime.__version__}: want {ORT_VERSION}"
    return [
        s for s in ort_c.get_all_operator_schema()
        if s.domain in ORT_DOMAINS or (s.domain == "" and s.name in ORT_DEFAULT_DOMAIN_OPS)
    ]


def export() -> dict:
    schemas = onnx.defs.get_all_schemas_with_history()
    typesets: dict[tuple, int] = {}
    entries = [entry(s, typesets) for s in sorted(schemas, key=lambda s: (s.domain, s.name, s.since_version))]
    # onnxruntime's schemas come after onnx's (sorted among themselves), so that onnx's
    # entries and typesets keep their numbers.
    contrib = sorted(ort_schemas(), key=lambda s: (s.domain, s.name, s.since_version))
    entries += [ort_entry(s, typesets) for s in contrib]
    domains: dict[str, int] = collections.defaultdict(int)
    for s in list(schemas) + contrib:
        domains[s.domain] = max(domains[s.domain], s.since_version)
    # The registry knows the opset ceiling of the two main domains, which may have no schema.
    domains[""] = max(domains[""], onnx.defs.onnx_opset_version())
    domains["ai.onnx.ml"] = max(domains["ai.onnx.ml"], onnx.defs.onnx_ml_opset_version())
    return {
        "format": "onnx-opschema/1",
        "onnx_version": onnx.__version__,
        "onnxruntime_version": ORT_VERSION,
        "ir_version": int(onnx.IR_VERSION),
        "domains": dict(sorted(domains.items())),
        "typesets": [list(k) for k, _ in sorted(typesets.items(), key=lambda kv: kv[1])],
        "schemas": entries,
        "extras": EXTRAS,
    }


def summary(doc: dict) -> str:
    """Per domain: how many schemas, and how many with inference, propagation, bodies."""
    counts: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    newest: dict[tuple, dict] = {}
    for e in doc["schemas"]:
        c = counts[e["dom"]]
        c["schemas (all versions)"] += 1
        c["with shape inference"] += "si" in e
        c["with data propagation"] += "dp" in e
        c["with a function body"] += "fn" in e or "cfn" in e
        c["deprecated"] += "dep" in e
        newest[(e["dom"], e["op"])] = e  # sorted by since: the last one is the newest
    for (dom, _), e in newest.items():
        counts[dom]["operators"] += 1
        counts[dom]["newest with shape inference"] += "si" in e
    return "\n".join(
        f"domain {dom or '(ai.onnx)'}: " + ", ".join(f"{k} {v}" for k, v in c.items())
        for dom, c in sorted(counts.items())
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", type=pathlib.Path, default=OUT)
    parser.add_argument("--summary", action="store_true", help="print counts per domain")
    args = parser.parse_args()
    assert onnx.__version__ == "1.23.2", f"onnx {onnx.__version__}: the schemas must come from 1.23.2"

    doc = export()
    args.output.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")
    back = json.loads(args.output.read_text(encoding="utf-8"))
    assert len(back["schemas"]) == len(onnx.defs.get_all_schemas_with_history()) + len(ort_schemas())
    assert all(0 <= i < len(back["typesets"]) for e in back["schemas"] for i in e.get("tc", {}).values())
    print(f"wrote {args.output}: {len(doc['schemas'])} schemas, {len(doc['typesets'])} type sets, "
          f"{args.output.stat().st_size} bytes")
    if args.summary:
        print(summary(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
