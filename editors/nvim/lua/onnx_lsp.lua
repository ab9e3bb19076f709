-- onnx-lsp for Neovim (0.7 and later). Add this folder to 'runtimepath' and call
--   require("onnx_lsp").setup({ cmd = { "onnx-lsp" } })
-- On Neovim 0.11 and later this registers the server with the built-in `vim.lsp.config` /
-- `vim.lsp.enable`; on older versions it starts and attaches the client itself.
-- Every `onnx` buffer (.onnxtxt, .onnxtext) then gets diagnostics, hover, go to definition,
-- references, rename, completion, formatting and the rest from the server.
local M = {}

local defaults = {
  cmd = { "onnx-lsp" },
  name = "onnx-lsp",
}

-- One client for all onnx buffers of a session.
local client_id = nil

local function attach(config, bufnr)
  if client_id == nil or vim.lsp.get_client_by_id(client_id) == nil then
    client_id = vim.lsp.start_client({
      name = config.name,
      cmd = config.cmd,
      root_dir = vim.fn.getcwd(),
      on_attach = config.on_attach,
      capabilities = config.capabilities,
    })
  end
  if client_id ~= nil then
    vim.lsp.buf_attach_client(bufnr, client_id)
  end
end

-- The running client, however it was started.
local function find_client(name)
  if client_id ~= nil then
    return vim.lsp.get_client_by_id(client_id)
  end
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ name = name })[1]
  end
  return nil
end

function M.setup(opts)
  local config = vim.tbl_extend("force", defaults, opts or {})
  M.name = config.name
  vim.cmd([[autocmd BufRead,BufNewFile *.onnxtxt,*.onnxtext setfiletype onnx]])
  if vim.lsp.config and vim.lsp.enable then
    vim.lsp.config(config.name, {
      cmd = config.cmd,
      filetypes = { "onnx" },
      root_markers = { ".git" },
      on_attach = config.on_attach,
      capabilities = config.capabilities,
    })
    vim.lsp.enable(config.name)
  else
    M.attach_on_filetype(config)
  end
  -- `:OnnxOpenBinary model.onnx` opens a binary model as text in a new buffer.
  vim.api.nvim_create_user_command("OnnxOpenBinary", function(cmd)
    M.open_binary(cmd.args)
  end, { nargs = 1, complete = "file" })
end

-- Neovim before 0.11: start the client on the first onnx buffer, attach the others.
function M.attach_on_filetype(config)
  local group = vim.api.nvim_create_augroup("onnx_lsp", { clear = true })
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = "onnx",
    callback = function(args)
      attach(config, args.buf)
    end,
  })
end

function M.open_binary(path)
  local client = find_client(M.name or defaults.name)
  if not client then
    vim.notify("onnx-lsp is not running: open an .onnxtxt file first", vim.log.levels.ERROR)
    return
  end
  local uri = vim.uri_from_fname(vim.fn.fnamemodify(path, ":p"))
  local response = client.request_sync("onnx/binaryToText", { uri = uri }, 30000)
  if not response or response.err then
    vim.notify("onnx-lsp: " .. ((response and response.err and response.err.message) or "no answer"), vim.log.levels.ERROR)
    return
  end
  vim.cmd("enew")
  vim.api.nvim_buf_set_lines(0, 0, -1, false, vim.split(response.result.text, "\n"))
  vim.bo.filetype = "onnx"
end

return M
