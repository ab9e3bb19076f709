-- onnx-lsp for Neovim (0.7 and later). Add this folder to 'runtimepath' and call
--   require("onnx_lsp").setup({ cmd = { "onnx-lsp" } })
-- On Neovim 0.11 and later this registers the server with the built-in `vim.lsp.config` /
-- `vim.lsp.enable`; on older versions it starts and attaches the client itself.
-- Every `onnx` buffer (.onnxtxt, .onnxtext) then gets diagnostics, hover, go to definition,
-- references, rename, completion, formatting and the rest from the server.
-- `:OnnxOpenBinary model.onnx` opens a binary model as text (a buffer named
-- `onnx-text:///…/model.onnx.onnxtxt`, the outline: big tensors by reference into the file);
-- `:w` in it writes the binary model back from the text through the server (atomically;
-- text that does not read is refused and nothing is written).
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

-- The scheme of a binary model's text, as the server and the VS Code extension name it.
local SCHEME = "onnx-text"

function M.setup(opts)
  local config = vim.tbl_extend("force", defaults, opts or {})
  M.name = config.name
  M.config = config
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
  -- `:OnnxOpenBinary model.onnx` opens a binary model as text; `:w` saves it back.
  vim.api.nvim_create_user_command("OnnxOpenBinary", function(cmd)
    M.open_binary(cmd.args)
  end, { nargs = 1, complete = "file" })
  local group = vim.api.nvim_create_augroup("onnx_lsp_binary", { clear = true })
  vim.api.nvim_create_autocmd("BufReadCmd", {
    group = group,
    pattern = SCHEME .. "://*",
    callback = function(args)
      M.read_binary(args.buf, args.match)
    end,
  })
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    group = group,
    pattern = SCHEME .. "://*",
    callback = function(args)
      M.write_binary(args.buf, args.match)
    end,
  })
end

-- The binary model a text buffer's name stands for.
local function binary_of(name)
  return (name:gsub("^" .. SCHEME:gsub("%-", "%%-") .. "://", ""):gsub("%.onnxtxt$", ""))
end

-- The running client, started (and initialized) if there is none yet.
local function ensure_client()
  local client = find_client(M.name or defaults.name)
  if client == nil then
    local config = M.config or defaults
    client_id = vim.lsp.start_client({
      name = config.name,
      cmd = config.cmd,
      root_dir = vim.fn.getcwd(),
      on_attach = config.on_attach,
      capabilities = config.capabilities,
    })
    client = client_id and vim.lsp.get_client_by_id(client_id)
  end
  if client then
    vim.wait(20000, function()
      return client.initialized
    end, 20)
  end
  return client
end

local function request(method, params, timeout)
  local client = ensure_client()
  if not client then
    return nil, "onnx-lsp did not start"
  end
  local response = client.request_sync(method, params, timeout)
  if not response then
    return nil, "no answer"
  end
  if response.err then
    return nil, response.err.message
  end
  return response.result
end

function M.read_binary(buf, name)
  local binary = binary_of(name)
  local result, err = request("onnx/binaryToText", { uri = vim.uri_from_fname(binary) }, 60000)
  if not result then
    vim.notify("onnx-lsp: " .. err, vim.log.levels.ERROR)
    return
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split((result.text:gsub("\n$", "")), "\n"))
  vim.bo[buf].buftype = "acwrite"
  vim.bo[buf].modified = false
  vim.bo[buf].filetype = "onnx"
end

function M.write_binary(buf, name)
  local binary = binary_of(name)
  local text = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
  local result, err =
    request("onnx/saveBinary", { text = text, destination = vim.uri_from_fname(binary) }, 120000)
  if not result then
    vim.notify("onnx-lsp: " .. binary .. " not written: " .. err, vim.log.levels.ERROR)
    return
  end
  vim.bo[buf].modified = false
  local warnings = result.warnings or {}
  if #warnings > 0 then
    vim.notify("wrote " .. result.destination .. "; " .. #warnings .. " warning(s): " .. warnings[1], vim.log.levels.WARN)
  else
    vim.notify("wrote " .. result.destination)
  end
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
  vim.cmd("edit " .. vim.fn.fnameescape(SCHEME .. "://" .. vim.fn.fnamemodify(path, ":p") .. ".onnxtxt"))
end

return M
