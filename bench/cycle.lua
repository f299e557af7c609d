-- wrk script: request each target of the file named by $TARGETS in turn, with a
-- User-Agent, so every target passes through the server once per cycle.
local targets = {}
for line in io.lines(os.getenv("TARGETS")) do
  targets[#targets + 1] = line
end
local i = 0
request = function()
  i = i % #targets + 1
  return wrk.format("GET", targets[i], { ["User-Agent"] = "bench/1.0 (+http://localhost)", ["Accept-Encoding"] = "gzip" })
end
