"""Faults and overload: database outages, deadlines from arrival, load shedding.

Kept apart from the RPC runtime (it imports nothing of it), so that any runtime uses the same
pieces: `arrival.current_deadline`, the call's deadline computed once where the request enters
(`shedding.LoadSheddingMiddleware`), and `classify.classify` in its error mapping.
"""
