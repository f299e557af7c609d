-- percentiles.lua - loaded with `wrk -s` by swap.sh and tails.sh: at the end of a
-- run, one line of wrk's own percentiles, p999 included (compare.sh's
-- wrk_report.lua prints up to p99):
--   rps=R p50_ms=.. p99_ms=.. p999_ms=.. max_ms=.. errors=N
done = function(summary, latency, requests)
  io.write(string.format("rps=%.0f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f errors=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout))
end
