-- jacobi.lua: the Jacobi iteration of examples/jacobi.acc in Lua 5.4.
-- usage: lua5.4 jacobi.lua N M ITER_MAX
local n = tonumber(arg[1] or "256") // 1
local m = tonumber(arg[2] or tostring(n)) // 1
local iter_max = tonumber(arg[3] or "1000") // 1
local tol = 1e-6
local A, Anew = {}, {}
for k = 0, n * m - 1 do
  A[k] = 0.0
  Anew[k] = 0.0
end
for j = 0, m - 1 do
  A[j] = 1.0
  Anew[j] = 1.0
end
local abs = math.abs
local err, iter = 1.0, 0
while err > tol and iter < iter_max do
  err = 0.0
  for j = 1, n - 2 do
    local row = j * m
    for i = 1, m - 2 do
      local k = row + i
      local v = 0.25 * (A[k + 1] + A[k - 1] + A[k - m] + A[k + m])
      Anew[k] = v
      local d = abs(v - A[k])
      if d > err then err = d end
    end
  end
  for j = 1, n - 2 do
    local row = j * m
    for i = 1, m - 2 do
      A[row + i] = Anew[row + i]
    end
  end
  iter = iter + 1
end
local s = 0.0
for k = 0, n * m - 1 do
  s = s + A[k]
end
print(string.format("jacobi %d x %d: iterations: %d, error: %0.6e, sum(A): %0.6f", n, m, iter, err, s))
