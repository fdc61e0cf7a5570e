"""cprunner: leases work from the control plane's runner API and runs it with an engine."""

__version__ = "0.1.0"
