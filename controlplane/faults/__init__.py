"""Faults and overload: database outages, deadlines from arrival, load shedding.

Kept apart from the RPC runtime so that any runtime (today's views.py, a WSGI Connect
runtime) uses the same pieces: `database.unavailable_error` in its error mapping,
`arrival.call_deadline` for Connect-Timeout-Ms, and the WSGI/Django layers before it.
"""
