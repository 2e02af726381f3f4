-- wrk script for bench/load.sh: POSTs the file named after `--` as the body of every request
-- and prints one machine-readable line at the end (latencies in microseconds).
function init(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end

function done(summary, latency, requests)
  local e = summary.errors
  local errors = e.connect + e.read + e.write + e.status + e.timeout
  io.write(string.format("RESULT %d %d %d %.2f %d %d\n",
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    summary.requests / (summary.duration / 1e6), summary.requests, errors))
end
