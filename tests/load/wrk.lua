-- wrk.lua - the load test's request generator: cycles through the bodies in $IKD_LOAD_BODIES
-- (length-prefixed records written by load.py), counts replies by status, and prints one JSON
-- line of results (latency percentiles in microseconds) when wrk finishes.
local bodies = {}
local path = os.getenv("IKD_LOAD_PATH") or "/v1/solve"
local ctype = os.getenv("IKD_LOAD_CTYPE") or "application/json"
local threads = {}

local function load_bodies()
  local f = assert(io.open(os.getenv("IKD_LOAD_BODIES"), "rb"))
  local data = f:read("*a")
  f:close()
  local pos = 1
  while pos <= #data do
    local nl = data:find("\n", pos, true)
    local len = tonumber(data:sub(pos, nl - 1))
    bodies[#bodies + 1] = data:sub(nl + 1, nl + len)
    pos = nl + 1 + len
  end
end

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  load_bodies()
  counter = id or 0
  statuses = {}
  requests_made = {}
  for i, b in ipairs(bodies) do
    local headers = {["Content-Type"] = ctype}
    local accept = os.getenv("IKD_LOAD_ACCEPT")
    if accept and accept ~= "" then headers["Accept"] = accept end
    requests_made[i] = wrk.format("POST", path, headers, b)
  end
end

function request()
  counter = counter + 1
  return requests_made[(counter % #requests_made) + 1]
end

-- Counting replies by status needs wrk's response() hook, and with it wrk copies every reply
-- body into Lua (with 128 kB batch replies wrk used 2.1 instead of 1.3 core-seconds in 5 s). So it is on only when
-- $IKD_LOAD_COUNT_STATUSES=1 (soak and scale tests); otherwise wrk's own count of non-2xx/3xx replies
-- is reported, and load.py takes the exact codes from ikd's /metrics.
if os.getenv("IKD_LOAD_COUNT_STATUSES") == "1" then
  function response(status, headers, body)
    statuses[status] = (statuses[status] or 0) + 1
  end
end

function done(summary, latency, requests)
  local codes = {}
  for _, t in ipairs(threads) do
    local s = t:get("statuses")
    for code, n in pairs(s) do codes[code] = (codes[code] or 0) + n end
  end
  local parts = {}
  for code, n in pairs(codes) do parts[#parts + 1] = string.format('"%d":%d', code, n) end
  if #parts == 0 and summary.requests > 0 then -- not counted by code: wrk's own split
    parts[1] = string.format('"2xx/3xx":%d', summary.requests - summary.errors.status)
    if summary.errors.status > 0 then parts[2] = string.format('"non-2xx/3xx":%d', summary.errors.status) end
  end
  io.write(string.format(
    'IKD_RESULT {"requests":%d,"duration_us":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d,"mean":%.1f,' ..
    '"errors":{"connect":%d,"read":%d,"write":%d,"timeout":%d,"status":%d},"statuses":{%s}}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency:percentile(99.9), latency.mean,
    summary.errors.connect, summary.errors.read, summary.errors.write, summary.errors.timeout,
    summary.errors.status, table.concat(parts, ",")))
end
