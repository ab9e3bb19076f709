-- Driven by tests/nvim_e2e.rs: Neovim, headless, opens a binary model as text through the
-- ready config in editors/nvim (`:OnnxOpenBinary`), asks for completion at an input, breaks
-- the model and waits for the diagnostic, mends it with another operator, then `:w` writes
-- the binary model back. What it saw goes to $OUT as JSON; any failure too, then it quits.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)")
dofile(here .. "harness.lua").run(function()
  vim.opt.runtimepath:prepend(os.getenv("EDITORS_NVIM"))
  require("onnx_lsp").setup({ cmd = { os.getenv("ONNX_LSP") } })
  vim.cmd("OnnxOpenBinary " .. vim.fn.fnameescape(os.getenv("MODEL")))
  local buf = vim.api.nvim_get_current_buf()
  local result = {
    name = vim.api.nvim_buf_get_name(buf),
    filetype = vim.bo.filetype,
    buftype = vim.bo.buftype,
    text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n"),
  }
  local attached = vim.wait(20000, function()
    for _, client in pairs(vim.lsp.buf_get_clients(buf)) do
      if client.initialized then
        return true
      end
    end
    return false
  end, 50)
  if not attached then
    error("onnx-lsp did not attach to the binary model's text")
  end

  -- The node's line: completion right after its `(`.
  local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  local node
  for i, line in ipairs(lines) do
    if line:find("y = Add %(") then
      node = i
    end
  end
  if not node then
    error("no `y = Add (` line in the text")
  end
  local column = lines[node]:find("%(")
  vim.api.nvim_win_set_cursor(0, { node, column })
  local params = vim.lsp.util.make_position_params()
  local answers = vim.lsp.buf_request_sync(buf, "textDocument/completion", params, 10000) or {}
  result.completion = {}
  for _, answer in pairs(answers) do
    for _, item in ipairs(answer.result or {}) do
      table.insert(result.completion, item.label)
    end
  end

  -- Broken: an undefined input; the server says so.
  vim.api.nvim_buf_set_lines(buf, node - 1, node, false, { "  y = Sub (x, missing)" })
  vim.wait(20000, function()
    return #vim.diagnostic.get(buf) > 0
  end, 50)
  result.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.diagnostics, { line = d.lnum, code = d.code })
  end
  -- Mended with another operator, and written back.
  vim.api.nvim_buf_set_lines(buf, node - 1, node, false, { "  y = Sub (x, w)" })
  vim.wait(20000, function()
    return #vim.diagnostic.get(buf) == 0
  end, 50)
  vim.cmd("write")
  result.modified_after_write = vim.bo[buf].modified
  return result
end)
