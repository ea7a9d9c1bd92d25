-- fib.lua: naive doubly recursive Fibonacci. usage: lua5.4 fib.lua N
local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end
local n = tonumber(arg[1] or "32") // 1
print(string.format("fib(%d) = %d", n, fib(n)))
