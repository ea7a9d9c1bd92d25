-- mandelbrot.lua: escape-time Mandelbrot over [-2, 1] x [-1.5, 1.5] in Lua 5.4.
-- usage: lua5.4 mandelbrot.lua WIDTH HEIGHT MAX_ITER
local width = tonumber(arg[1] or "1024") // 1
local height = tonumber(arg[2] or tostring(width)) // 1
local max_iter = tonumber(arg[3] or "255") // 1

local function mandel(px, py)
  local cx = -2.0 + 3.0 * px / width
  local cy = -1.5 + 3.0 * py / height
  local zx, zy = 0.0, 0.0
  local k = 0
  while k < max_iter and zx * zx + zy * zy <= 4.0 do
    local t = zx * zx - zy * zy + cx
    zy = 2.0 * zx * zy + cy
    zx = t
    k = k + 1
  end
  return k
end

local total, inside = 0, 0
for y = 0, height - 1 do
  for x = 0, width - 1 do
    local k = mandel(x, y)
    total = total + k
    if k == max_iter then inside = inside + 1 end
  end
end
print(string.format("mandelbrot %d x %d, max_iter %d: total iterations %d, inside %d",
  width, height, max_iter, total, inside))
