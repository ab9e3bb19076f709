"""`onnx_text.parse` and `to_text` as drop-ins for onnx's parser and printer, on the corpus,
and the canonical text's round trip."""

from __future__ import annotations

import onnx
import onnx.parser
import onnx.printer
import pytest

import onnx_text
from conftest import CORPUS, corpus_models, real_models

GOLDEN = CORPUS / "golden" / "onnx-text"


def test_parse_gives_the_model_onnxs_parser_gives_for_every_text_it_reads() -> None:
    # The golden texts are what onnx's printer prints for every corpus model: onnx's own
    # text, every construct its printer writes.
    texts = sorted(GOLDEN.rglob("*.onnxtxt"))
    assert len(texts) > 1900, f"only {len(texts)} golden texts under {GOLDEN}"
    compared, different = 0, []
    for path in texts:
        text = path.read_text(encoding="utf-8")
        try:
            want = onnx.parser.parse_model(text)
        except Exception:  # onnx cannot read its own text back (golden/onnx-reparse.tsv says which)
            continue
        got = onnx_text.parse(text)
        assert isinstance(got, onnx.ModelProto)
        if got != want:
            different.append(str(path.relative_to(GOLDEN)))
        compared += 1
    assert not different, f"{len(different)} of {compared} texts parse to another model than onnx's: {different[:10]}"
    assert compared > 1800, f"onnx's parser read only {compared} of {len(texts)} texts"


def test_to_text_in_onnx_style_is_what_onnxs_printer_prints_for_every_model() -> None:
    models = corpus_models()
    assert len(models) > 1900
    printed, functions, different = 0, 0, []
    for path in models:
        model = onnx.load(str(path), load_external_data=False)
        try:
            want = onnx.printer.to_text(model)
        except Exception:  # golden/onnx-text/failures.txt lists the one onnx cannot print
            continue
        if onnx_text.to_text(model, style="onnx") != want:
            different.append(str(path.relative_to(CORPUS)))
        # A graph or a function alone, as onnx prints them.
        if onnx_text.to_text(model.graph, style="onnx") != onnx.printer.to_text(model.graph):
            different.append(f"{path.relative_to(CORPUS)}: its graph")
        for function in model.functions:
            if onnx_text.to_text(function, style="onnx") != onnx.printer.to_text(function):
                different.append(f"{path.relative_to(CORPUS)}: function {function.name}")
            functions += 1
        printed += 1
    assert not different, f"{len(different)} of {printed} models print otherwise than onnx's printer: {different[:10]}"
    assert printed > 1900
    assert functions >= 9, f"only {functions} functions in the corpus"


@pytest.mark.parametrize("path", real_models(), ids=lambda p: p.stem)
def test_canonical_text_reads_back_to_the_same_model(path) -> None:
    data = path.read_bytes()
    text = onnx_text.to_text(data)
    again = onnx_text.parse(text, as_bytes=True)
    assert onnx.ModelProto.FromString(again) == onnx.ModelProto.FromString(data)
    # A path, a ModelProto and bytes are the same model.
    assert onnx_text.to_text(path) == text
    assert onnx_text.to_text(onnx.ModelProto.FromString(data)) == text


def test_parse_errors_are_placed_and_parse_nothing() -> None:
    text = '<ir_version: 8, opset_import: ["" : 17]>\ng (float[2] x) => (float[2] y) {\n  y = Relu (x\n}\n'
    with pytest.raises(onnx_text.OnnxTextError) as failure:
        onnx_text.parse(text)
    diagnostics = failure.value.diagnostics
    assert diagnostics, "a syntax error comes with its diagnostic"
    first = diagnostics[0]
    assert (first.severity, first.line) == ("error", 4)
    assert first.code == "unexpected-token"
    assert first.place == f"{first.line}:{first.column}"
    assert "4:" in str(failure.value)


def test_a_text_that_breaks_a_rule_of_meaning_parses_unless_strict() -> None:
    text = (CORPUS.parent / "fixtures" / "invalid_models" / "undefined_value.onnxtxt").read_text()
    model = onnx_text.parse(text)
    assert model == onnx.parser.parse_model(text)
    with pytest.raises(onnx_text.OnnxTextError) as failure:
        onnx_text.parse(text, strict=True)
    assert [d.code for d in failure.value.diagnostics] == ["undefined-value"]


def test_bad_arguments_are_refused_clearly() -> None:
    with pytest.raises(onnx_text.OnnxTextError, match="not a readable ONNX model"):
        onnx_text.to_text(b"\xff\xff\xff not protobuf")
    with pytest.raises(ValueError, match="unknown style"):
        onnx_text.to_text(onnx_text.parse("<ir_version: 8> g () => () {}", as_bytes=True), style="pretty")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="onnx style only"):
        onnx_text.to_text(onnx.parser.parse_model("<ir_version: 8> g () => () {}").graph)
    with pytest.raises(TypeError, match="a str is taken as a model's text"):
        onnx_text.to_text("model.onnx")  # type: ignore[arg-type]


def test_format_is_what_onnx_fmt_writes(onnx_binary) -> None:
    import subprocess

    texts = sorted((CORPUS.parent / "fixtures" / "check" / "text").glob("*.onnxtxt"))
    assert len(texts) > 100
    for path in texts:
        text = path.read_text(encoding="utf-8")
        cli = subprocess.run([onnx_binary, "fmt", "-"], input=text, capture_output=True, text=True)
        if cli.returncode != 0:
            with pytest.raises(onnx_text.OnnxTextError):
                onnx_text.format(text)
            continue
        formatted = onnx_text.format(text)
        assert formatted == cli.stdout, path.name
        assert onnx_text.format(formatted) == formatted, f"{path.name}: formatting twice changes the text"
