"""The URL of an RPC, read by the URLconf (to route it) and by the middleware (to tell an RPC
from a console page before routing): /<package>.<Service>/<Method>; a service name always has
a dot, which keeps RPCs apart from every other route."""

RPC_ROUTE = r"(?P<service>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)/(?P<method>[A-Za-z_]\w*)"
