" ONNX text models: .onnxtxt and .onnxtext files get the `onnx` filetype.
autocmd BufRead,BufNewFile *.onnxtxt,*.onnxtext setfiletype onnx
