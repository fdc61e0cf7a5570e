"""A gunicorn hook for bench/runner_bench.py only (`-c bench/runner_gunicorn.py`): counts the
SQL statements each worker runs (Django cursors; the BEGIN/COMMIT of a transaction are not
among them) and writes the count to RUNNER_BENCH_COUNTS/<pid> as it changes."""

import os
import threading


def post_worker_init(worker):
    from django.db.backends.signals import connection_created

    directory = os.environ["RUNNER_BENCH_COUNTS"]
    path = os.path.join(directory, str(os.getpid()))
    lock = threading.Lock()
    count = [0]

    def counted(execute, sql, params, many, context):
        with lock:
            count[0] += 1
            with open(path, "w") as out:
                out.write(str(count[0]))
        return execute(sql, params, many, context)

    def install(sender, connection, **kwargs):
        if counted not in connection.execute_wrappers:
            connection.execute_wrappers.append(counted)

    connection_created.connect(install, weak=False)
