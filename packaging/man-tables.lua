-- SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
-- pandoc filter for optrace(8), for a terminal of 80 columns: it holds no wide table,
-- so each table becomes a list (its first column the term, the others its
-- text, each after its column's name); a link to another document of docs/
-- names where the Debian packages install it.

local function cell_inlines(blocks)
  return pandoc.utils.blocks_to_inlines(blocks, { pandoc.Space() })
end

function Table(element)
  local simple = pandoc.utils.to_simple_table(element)
  local items = {}
  for _, row in ipairs(simple.rows) do
    local definition = pandoc.List()
    for column = 2, #row do
      local text = cell_inlines(row[column])
      if #simple.headers >= column and #simple.headers[column] > 0 and #row > 2 then
        local name = cell_inlines(simple.headers[column])
        local line = pandoc.List({ pandoc.Emph(name), pandoc.Str(":"), pandoc.Space() })
        line:extend(text)
        text = line
      end
      if #definition > 0 then
        definition:insert(pandoc.RawInline("man", "\n.br\n"))
      end
      definition:extend(text)
    end
    table.insert(items, { cell_inlines(row[1]), { { pandoc.Plain(definition) } } })
  end
  return pandoc.DefinitionList(items)
end

function Link(link)
  local document = link.target:match("^([%w_-]+%.md)")
  if document then
    local path = "/usr/share/doc/optrace/" .. document
    if pandoc.utils.stringify(link.content) == document then
      return pandoc.Str(path)
    end
    local text = pandoc.List(link.content)
    text:extend({ pandoc.Space(), pandoc.Str("(" .. path .. ")") })
    return text
  end
end

-- Examples indented once, not twice: 7 columns more for each line of them.
function CodeBlock(block)
  local lines = {}
  for line in (block.text .. "\n"):gmatch("(.-)\n") do
    line = line:gsub("\\", "\\e"):gsub("%-", "\\-")
    if line:match("^[.']") then
      line = "\\&" .. line
    end
    table.insert(lines, line)
  end
  return pandoc.RawBlock("man", ".PP\n.nf\n\\f[C]\n" .. table.concat(lines, "\n") .. "\n\\f[R]\n.fi")
end
