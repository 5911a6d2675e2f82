-- Headless Neovim (0.7+) check of the coherence language server: start it with
-- vim.lsp.start_client, open textutils.py, wait for the diagnostics, hover on count_vowels, and
-- write what Neovim got to $COHERENCE_OUT as JSON.  Exits Neovim when done.
local python = os.getenv("COHERENCE_PY")
local ws = os.getenv("COHERENCE_WS")
local out = os.getenv("COHERENCE_OUT")
-- the file to open and the function to hover (the probe module's test sets both)
local file = os.getenv("COHERENCE_FILE") or "textutils.py"
local hovered = os.getenv("COHERENCE_HOVER") or "count_vowels"
local report = { errors = {} }

local function finish()
  local f = io.open(out, "w")
  f:write(vim.fn.json_encode(report))
  f:close()
  vim.cmd("qa!")
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    name = "coherence",
    cmd = { python, "-m", "coherence", "serve" },
    root_dir = ws,
    workspace_folders = { { uri = vim.uri_from_fname(ws), name = "ws" } },
    init_options = { settings = { inputs = 200, runOn = "open" } },
    on_error = function(code, e)
      table.insert(report.errors, tostring(code) .. ": " .. vim.inspect(e))
    end,
  })
  assert(client_id, "start_client failed")
  report.client_id = client_id

  vim.cmd("edit " .. vim.fn.fnameescape(ws .. "/" .. file))
  local bufnr = vim.api.nvim_get_current_buf()
  report.filetype = vim.bo[bufnr].filetype
  vim.lsp.buf_attach_client(bufnr, client_id)

  local got = vim.wait(60000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.source == "coherence" then
        return true
      end
    end
    return false
  end, 50)
  report.waited = got
  report.diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(report.diagnostics, { lnum = d.lnum, col = d.col, end_col = d.end_col, severity = d.severity, message = d.message, source = d.source, code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) })
  end

  -- Hover on the name of count_vowels (0-based line of its def).
  local line = nil
  for i, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if text:match("^def " .. hovered .. "%(") then
      line = i - 1
    end
  end
  local params = { textDocument = { uri = vim.uri_from_bufnr(bufnr) }, position = { line = line, character = 6 } }
  local responses = vim.lsp.buf_request_sync(bufnr, "textDocument/hover", params, 10000) or {}
  for _, r in pairs(responses) do
    if r.result and r.result.contents then
      local c = r.result.contents
      report.hover = type(c) == "table" and (c.value or vim.inspect(c)) or tostring(c)
      -- What Neovim shows in the hover window.
      report.hover_lines = vim.lsp.util.convert_input_to_markdown_lines(c)
    end
    if r.err then
      table.insert(report.errors, vim.inspect(r.err))
    end
  end

  -- The first diagnostic can come while the file's other function is still being checked (its
  -- lens says "checking…"): ask again until every lens shows a result, or 60 s.
  local function lenses()
    local got = {}
    local lens = vim.lsp.buf_request_sync(bufnr, "textDocument/codeLens", { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }, 10000) or {}
    for _, r in pairs(lens) do
      for _, l in ipairs(r.result or {}) do
        table.insert(got, l.command and l.command.title or "")
      end
    end
    return got
  end
  report.lenses = lenses()
  vim.wait(60000, function()
    for _, title in ipairs(report.lenses) do
      if title:match("checking") then
        report.lenses = lenses()
        return false
      end
    end
    return true
  end, 200)

  -- A lens answers from the results as they stand; their diagnostics come in a notification
  -- that can still be on its way: wait until every warning/information lens has its diagnostic.
  local expected = 0
  for _, title in ipairs(report.lenses) do
    if title:match("^coherence: warning") or title:match("^coherence: information") then
      expected = expected + 1
    end
  end
  vim.wait(10000, function()
    local seen = 0
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.source == "coherence" then
        seen = seen + 1
      end
    end
    return seen >= expected
  end, 50)

  -- every function checked: the diagnostics as they finally stand
  report.final_diagnostics = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(report.final_diagnostics, { lnum = d.lnum, severity = d.severity, message = d.message, source = d.source })
  end

  local client = vim.lsp.get_client_by_id(client_id)
  client.stop()
  report.stopped = vim.wait(10000, function()
    return vim.lsp.get_client_by_id(client_id) == nil or client.is_stopped()
  end, 50)
end)
if not ok then
  table.insert(report.errors, tostring(err))
end
finish()
