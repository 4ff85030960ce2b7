-- Drives Neovim (0.7, and 0.11+) like a person: the user's config (the docs/editors.md snippet, loaded with -u)
-- has started aoti-lsp for the opened file; wait for its diagnostics, open the code actions on the
-- flagged line, pick the migration, save. Everything seen goes to $AOTI_RESULT as JSON;
-- the pytest side judges it.
local result = { steps = {} }
local out_path = assert(os.getenv("AOTI_RESULT"), "AOTI_RESULT not set")
local timeout = tonumber(os.getenv("AOTI_TIMEOUT_MS") or "30000")

local function finish(code)
  local f = assert(io.open(out_path, "w"))
  f:write(vim.fn.json_encode(result))
  f:close()
  vim.cmd(code == 0 and "qall!" or "cquit 1")
end

local function step(name)
  table.insert(result.steps, name)
end

local function aoti_diagnostics(buf)
  local found = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    local lsp = (d.user_data or {}).lsp or {}
    if d.source == "aoti-lsp" then
      table.insert(found, {
        lnum = d.lnum,
        col = d.col,
        end_col = d.end_col,
        severity = d.severity,
        code = d.code or lsp.code,
        message = d.message,
        href = (lsp.codeDescription or {}).href,
      })
    end
  end
  return found
end

local ok, err = pcall(function()
  local buf = vim.api.nvim_get_current_buf()
  result.filetype = vim.bo[buf].filetype
  step("opened")

  if not vim.wait(timeout, function()
    return #aoti_diagnostics(buf) > 0
  end, 50) then
    result.error = "no aoti-lsp diagnostics within " .. timeout .. " ms"
    return
  end
  result.diagnostics = aoti_diagnostics(buf)
  result.clients = {}
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = buf }) or vim.lsp.buf_get_clients(buf)
  for _, c in pairs(clients) do
    table.insert(result.clients, c.name)
  end
  step("diagnostics")

  local target
  for _, d in ipairs(result.diagnostics) do
    if d.code == "AOTI001" then
      target = d
    end
  end
  if not target then
    result.error = "no AOTI001 diagnostic"
    return
  end
  -- Put the cursor on the flagged call, as a person would, and ask for code actions there.
  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })

  -- 0.7 has no code_action{apply=true}: answer the selection menu like a person would.
  -- Items are {client_id, action} in 0.7, {action = ..., ctx = ...} from 0.10 on.
  local chosen = false
  vim.ui.select = function(items, _, on_choice)
    result.actions = {}
    local pick
    for i, item in ipairs(items) do
      local action = item.action or item[2]
      table.insert(result.actions, { title = action.title, kind = action.kind })
      if pick == nil and action.title:match("^aoti%-lsp %(AOTI001%): Migrate") then
        pick = i
      end
    end
    if pick then
      chosen = true
      on_choice(items[pick], pick)
    else
      on_choice(nil, nil)
    end
  end
  local before = vim.api.nvim_buf_get_changedtick(buf)
  vim.lsp.buf.code_action()
  if not vim.wait(timeout, function()
    return result.actions ~= nil
  end, 50) then
    result.error = "the code action menu never opened"
    return
  end
  step("code actions listed")
  if not chosen then
    result.error = "no 'aoti-lsp (AOTI001): Migrate ...' action in the menu"
    return
  end
  if not vim.wait(timeout, function()
    return vim.api.nvim_buf_get_changedtick(buf) ~= before
  end, 50) then
    result.error = "the chosen action did not change the buffer"
    return
  end
  step("fix applied")
  result.fixed_line = vim.api.nvim_buf_get_lines(buf, target.lnum, target.lnum + 1, false)[1]

  vim.cmd("write")
  result.modified_after_write = vim.bo[buf].modified
  step("saved")

  -- The server re-checks the changed buffer: the AOTI001 finding must go away.
  vim.wait(timeout, function()
    for _, d in ipairs(aoti_diagnostics(buf)) do
      if d.code == "AOTI001" then
        return false
      end
    end
    return true
  end, 50)
  result.diagnostics_after = aoti_diagnostics(buf)
  step("done")
end)

if not ok then
  result.error = tostring(err)
end
finish(result.error and 1 or 0)
