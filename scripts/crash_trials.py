#!/usr/bin/env python3
"""kill -9 the PGModel service during saves, over and over, and check that nothing acknowledged is lost.

Each trial starts `pgmodel serve`, lets several clients save batches of rows (one `save` per batch, each
batch one transaction), kills the server with SIGKILL at a random moment, and then checks PostgreSQL
directly (psql, as the database owner):

  * no partial save is visible: every batch in the table has all of its rows;
  * every save a client saw acknowledged (`"ok":true`) is in the table;
  * clients reconnect to the restarted server and go on (the next trial's clients are the same
    clients reconnecting: they log in again and keep saving).

The client speaks only what docs/PROTOCOL.md says: one JSON object per line over TCP.

    python3 scripts/crash_trials.py --trials 200 --bin .build/debug/pgmodel --database-url "$DATABASE_URL"

Exit status 0 only when every trial passed. The summary's figures are what the closing note reports.
"""

import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid

BATCH = 5
CLIENTS = 4


def wait_for_port(port, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.02)
    return False


class Client:
    """A blocking line-protocol client: one request in flight at a time."""

    def __init__(self, port, user, password):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.file = self.sock.makefile("rb")
        self.next_id = 1
        answer = self.request({"op": "hello", "user": user, "password": password, "protocol": 1})
        if not answer.get("ok"):
            raise RuntimeError(f"hello failed: {answer}")

    def request(self, message):
        message = dict(message, id=self.next_id)
        self.next_id += 1
        self.sock.sendall((json.dumps(message) + "\n").encode())
        while True:
            line = self.file.readline()
            if not line:
                raise ConnectionError("the server closed the connection")
            answer = json.loads(line)
            if "event" in answer:
                continue
            if answer.get("id") != message["id"]:
                raise RuntimeError(f"answer for id {answer.get('id')} while waiting for {message['id']}")
            return answer

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


def psql(url, sql):
    out = subprocess.run(["psql", url, "-AtX", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         check=True, capture_output=True, text=True)
    return out.stdout


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--bin", default=".build/debug/pgmodel")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--port", type=int, default=7499)
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args()
    if not args.database_url:
        sys.exit("set DATABASE_URL or pass --database-url")
    rng = random.Random(args.seed)

    suffix = uuid.uuid4().hex[:10]
    schema = f"crash_{suffix}"
    entity = f"CrashRow_{suffix}"
    table = f"crash_row_{suffix}"
    admin, password = f"crash_{suffix}", "crash-secret"
    subprocess.run([args.bin, "user", "add", admin, "--admin", "--password-stdin", "--database-url", args.database_url],
                   input=password + "\n", text=True, check=True, capture_output=True)

    register = {"op": "register", "schema": {"version": "1.0.0", "entities": [{
        "name": entity, "tableName": table, "uniquenessConstraints": [], "indexes": [],
        "attributes": [
            {"name": "batch", "columnName": "batch", "type": "string", "isOptional": False, "isUnique": False},
            {"name": "seq", "columnName": "seq", "type": "int64", "isOptional": False, "isUnique": False},
        ]}]}}

    acknowledged = set()   # batches answered ok
    sent = set()           # batches whose save was written to the socket
    lock = threading.Lock()
    figures = {"saves_acknowledged": 0, "unacknowledged_committed": 0, "unacknowledged_absent": 0,
               "partial_batches": 0, "lost_acknowledged": 0, "reconnect_ms": [], "failed_trials": 0}

    def save_loop(stop):
        started = time.monotonic()
        try:
            client = Client(args.port, admin, password)
        except (OSError, ConnectionError, RuntimeError):
            return
        with lock:
            figures["reconnect_ms"].append((time.monotonic() - started) * 1000)
        try:
            while not stop.is_set():
                batch = uuid.uuid4().hex
                inserts = [{"entity": entity, "id": str(uuid.uuid4()), "values": {"batch": batch, "seq": i}}
                           for i in range(BATCH)]
                with lock:
                    sent.add(batch)
                answer = client.request({"op": "save", "inserts": inserts})
                if not answer.get("ok"):
                    raise RuntimeError(f"save refused: {answer}")
                with lock:
                    acknowledged.add(batch)
                    figures["saves_acknowledged"] += 1
        except (OSError, ConnectionError, json.JSONDecodeError):
            pass   # the server was killed mid-conversation
        finally:
            client.close()

    url = args.database_url + ("&" if "?" in args.database_url else "?")
    server_cmd = [args.bin, "serve", "--port", str(args.port), "--database-url", args.database_url,
                  "--schema", schema, "--log-level", "error"]
    started_all = time.monotonic()
    for trial in range(1, args.trials + 1):
        server = subprocess.Popen(server_cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            if not wait_for_port(args.port, 30):
                print(f"trial {trial}: the server did not start", file=sys.stderr)
                figures["failed_trials"] += 1
                continue
            if trial == 1:
                setup = Client(args.port, admin, password)
                answer = setup.request(register)
                setup.close()
                if not answer.get("ok"):
                    sys.exit(f"register failed: {answer}")
            stop = threading.Event()
            workers = [threading.Thread(target=save_loop, args=(stop,)) for _ in range(CLIENTS)]
            for worker in workers:
                worker.start()
            time.sleep(rng.uniform(0.05, 1.0))
            server.send_signal(signal.SIGKILL)
            server.wait()
            stop.set()
            for worker in workers:
                worker.join()
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()

        rows = psql(args.database_url, f'SELECT batch, count(*) FROM "{schema}"."{table}" GROUP BY batch')
        counts = dict(line.split("|") for line in rows.splitlines() if line)
        partial = [b for b, c in counts.items() if int(c) != BATCH]
        with lock:
            lost = [b for b in acknowledged if b not in counts]
            unacked = sent - acknowledged
            figures["partial_batches"] += len(partial)
            figures["lost_acknowledged"] += len(lost)
            figures["unacknowledged_committed"] += len([b for b in unacked if b in counts])
            figures["unacknowledged_absent"] += len([b for b in unacked if b not in counts])
            sent.clear()
            acknowledged.clear()
        if partial or lost:
            figures["failed_trials"] += 1
            print(f"trial {trial}: {len(partial)} partial batch(es), {len(lost)} acknowledged batch(es) missing", file=sys.stderr)
        if trial % 20 == 0:
            print(f"[crash] {trial}/{args.trials} trials, {figures['saves_acknowledged']} saves acknowledged", flush=True)

    total_rows = int(psql(args.database_url, f'SELECT count(*) FROM "{schema}"."{table}"').strip())
    reconnects = sorted(figures["reconnect_ms"])
    median = reconnects[len(reconnects) // 2] if reconnects else 0
    print(json.dumps({
        "trials": args.trials, "clients": CLIENTS, "rows_per_save": BATCH,
        "seconds": round(time.monotonic() - started_all, 1),
        "saves_acknowledged": figures["saves_acknowledged"], "rows_in_table": total_rows,
        "acknowledged_saves_lost": figures["lost_acknowledged"], "partial_saves_visible": figures["partial_batches"],
        "unacknowledged_saves_committed": figures["unacknowledged_committed"],
        "unacknowledged_saves_absent": figures["unacknowledged_absent"],
        "client_connections": len(reconnects), "median_connect_and_login_ms": round(median, 1),
        "failed_trials": figures["failed_trials"],
    }, indent=2))
    psql(args.database_url, f'DROP SCHEMA "{schema}" CASCADE')
    psql(args.database_url, f"DELETE FROM pgmodel.entities WHERE schema_name = '{schema}'")
    sys.exit(1 if figures["failed_trials"] else 0)


if __name__ == "__main__":
    main()
