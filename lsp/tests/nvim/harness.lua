-- Shared by the end-to-end scripts: runs a script's body, writes the table it returns (or the
-- error it raised, as { error = … }) as JSON to $OUT, and quits Neovim.
local M = {}

function M.run(body)
  local ok, result = pcall(body)
  local file = io.open(os.getenv("OUT"), "w")
  file:write(vim.fn.json_encode(ok and result or { error = tostring(result) }))
  file:close()
  vim.cmd("qa!")
end

return M
