-- Driven by tests/nvim_e2e.rs: Neovim, headless, opens a fixture through the ready config
-- in editors/nvim, waits for onnx-lsp's diagnostics, asks for a hover and a definition, and
-- writes what it received as JSON to $OUT. Any failure is written too, then Neovim quits.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
dofile(here .. "harness.lua").run(function()
  vim.opt.runtimepath:prepend(os.getenv("EDITORS_NVIM"))
  require("onnx_lsp").setup({ cmd = { os.getenv("ONNX_LSP") } })
  vim.cmd("edit " .. os.getenv("FIXTURE"))
  local result = { filetype = vim.bo.filetype }

  local attached = vim.wait(20000, function()
    for _, client in pairs(vim.lsp.buf_get_clients(0)) do
      if client.initialized then
        return true
      end
    end
    return false
  end, 50)
  if not attached then
    error("onnx-lsp did not attach")
  end
  vim.wait(20000, function()
    return #vim.diagnostic.get(0) > 0
  end, 50)
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(0)) do
    table.insert(result.diagnostics, { line = d.lnum, col = d.col, message = d.message, code = d.code })
  end

  local function request(method, line, col)
    vim.api.nvim_win_set_cursor(0, { line, col })
    local params = vim.lsp.util.make_position_params()
    local answers = vim.lsp.buf_request_sync(0, method, params, 10000) or {}
    for _, answer in pairs(answers) do
      if answer.result then
        return answer.result
      end
    end
    return vim.NIL
  end
  -- Cursor positions: line 1-based, column 0-based bytes (see the fixture).
  result.hover = request("textDocument/hover", tonumber(os.getenv("HOVER_LINE")), tonumber(os.getenv("HOVER_COL")))
  result.definition =
    request("textDocument/definition", tonumber(os.getenv("DEF_LINE")), tonumber(os.getenv("DEF_COL")))
  return result
end)
