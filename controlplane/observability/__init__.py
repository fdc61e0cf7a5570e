"""Operations: Prometheus metrics, OpenTelemetry traces and request logs (docs/observability.md).

Each concern has its own module, and the request path calls into them through a few small
functions, so the cost of each stays visible: `requests` (one observation per HTTP request:
request id, statements, the log line, the RPC metrics), `interceptors` (what the RPC runtime
knows: the Connect code, the principal, the namespace), `metrics` (the instruments),
`tracing` (set up from OTEL_* only), `exposition` (the /metrics view) and `collectors`
(values read at scrape time).
"""
