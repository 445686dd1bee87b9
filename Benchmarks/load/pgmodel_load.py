#!/usr/bin/env python3
"""Load test for a running PGModel service: N concurrent clients with a realistic mix for a set time.

    python3 Benchmarks/load/pgmodel_load.py --port 7432 --database-url "$DATABASE_URL" \\
        --clients 500 --idle 1000 --duration 600 --server-pid "$(pgrep -f 'pgmodel serve')"

What each of the `--clients` active clients does (each logged in as one of `--users` service users, so
row-level security is on every request): with a pause between requests (exponential, mean
`--think-ms`), it fetches its latest rows (55 %), saves one to three new rows (20 %), updates one of
its rows (10 %), counts (10 %) or reads history (5 %). One client in ten also subscribes and consumes
change events. `--idle` more connections log in and only ping every two minutes, as idle apps do.

Reported: requests and errors per operation (the run passes only with zero errors and zero dropped
connections), latency percentiles, throughput, events received, and the server's resident memory
(from /proc/<pid>/status, when `--server-pid` is given) at the start, every minute, and at the end.

The client speaks only what docs/PROTOCOL.md says (one JSON object per line over TCP), with Python's
standard library: it is also a second-language client of the protocol.
"""

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import time
import uuid
from collections import defaultdict

MIX = [("fetch", 0.55), ("save", 0.20), ("update", 0.10), ("count", 0.10), ("history", 0.05)]


def rss_kib(pid):
    if not pid:
        return None
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def percentile(values, fraction):
    if not values:
        return 0.0
    index = min(len(values) - 1, int(round(fraction * (len(values) - 1))))
    return values[index]


class Connection:
    """One protocol connection; requests pipelined by id, events handed to a callback."""

    def __init__(self, reader, writer, on_event=None):
        self.reader, self.writer = reader, writer
        self.next_id = 1
        self.waiting = {}
        self.on_event = on_event
        self.reading = asyncio.get_running_loop().create_task(self.read_loop())
        self.closed = False

    @classmethod
    async def open(cls, host, port, user, password, on_event=None):
        reader, writer = await asyncio.open_connection(host, port, limit=64 << 20)
        connection = cls(reader, writer, on_event)
        answer = await connection.request({"op": "hello", "user": user, "password": password, "protocol": 1})
        if not answer.get("ok"):
            raise RuntimeError(f"hello failed for {user}: {answer}")
        return connection

    async def read_loop(self):
        try:
            while True:
                line = await self.reader.readline()
                if not line:
                    break
                message = json.loads(line)
                if "event" in message:
                    if self.on_event:
                        self.on_event(message)
                    continue
                future = self.waiting.pop(message.get("id"), None)
                if future and not future.done():
                    future.set_result(message)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError) as error:
            self.fail(error)
            return
        self.fail(ConnectionError("the server closed the connection"))

    def fail(self, error):
        self.closed = True
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(error)
        self.waiting.clear()

    async def request(self, message):
        if self.closed:
            raise ConnectionError("connection closed")
        request_id = self.next_id
        self.next_id += 1
        future = asyncio.get_running_loop().create_future()
        self.waiting[request_id] = future
        self.writer.write((json.dumps(dict(message, id=request_id)) + "\n").encode())
        await self.writer.drain()
        return await future

    async def close(self):
        self.reading.cancel()
        self.writer.close()
        try:
            await self.writer.wait_closed()
        except (ConnectionError, OSError):
            pass


class Run:
    def __init__(self, args):
        self.args = args
        self.latencies = defaultdict(list)
        self.errors = defaultdict(int)
        self.dropped = 0
        self.events = 0
        self.stop_at = 0.0

    def schema(self, entity, table):
        return {"version": "1.0.0", "entities": [{
            "name": entity, "tableName": table, "uniquenessConstraints": [], "indexes": [["owner", "rank"]],
            "attributes": [
                {"name": "title", "columnName": "title", "type": "string", "isOptional": False, "isUnique": False},
                {"name": "owner", "columnName": "owner", "type": "string", "isOptional": False, "isUnique": False},
                {"name": "rank", "columnName": "rank", "type": "int64", "isOptional": False, "isUnique": False},
                {"name": "done", "columnName": "done", "type": "bool", "isOptional": False, "isUnique": False},
            ]}]}

    async def timed(self, op, connection, message):
        started = time.perf_counter()
        try:
            answer = await connection.request(message)
        except (ConnectionError, OSError) as error:
            self.errors[f"{op}: {type(error).__name__}"] += 1
            raise
        self.latencies[op].append((time.perf_counter() - started) * 1000)
        if not answer.get("ok"):
            self.errors[f"{op}: {answer.get('error', {}).get('code')}"] += 1
        return answer

    async def active_client(self, index, user, entity):
        rng = random.Random(index)
        subscribe = index % 10 == 0

        def on_event(_):
            self.events += 1

        try:
            connection = await Connection.open(self.args.host, self.args.port, user, self.args.password,
                                               on_event if subscribe else None)
        except (OSError, RuntimeError) as error:
            self.errors[f"hello: {error}"] += 1
            return
        mine = []
        try:
            await self.timed("register", connection, {"op": "register", "schema": self.schema(entity, self.table)})
            if subscribe:
                await self.timed("subscribe", connection, {"op": "subscribe", "entities": [entity]})
            ops, weights = zip(*MIX)
            while time.monotonic() < self.stop_at:
                await asyncio.sleep(rng.expovariate(1000.0 / self.args.think_ms))
                op = rng.choices(ops, weights)[0]
                if op == "update" and not mine:
                    op = "save"
                if op == "fetch":
                    await self.timed(op, connection, {"op": "fetch", "entity": entity, "limit": 20,
                                                      "where": {"eq": [{"key": "done"}, {"value": False}]},
                                                      "sort": [{"key": "rank", "order": "reverse"}]})
                elif op == "save":
                    inserts = []
                    for _ in range(rng.randint(1, 3)):
                        row_id = str(uuid.uuid4())
                        mine.append(row_id)
                        inserts.append({"entity": entity, "id": row_id, "values": {
                            "title": f"task {rng.randint(0, 1 << 30)}", "owner": user,
                            "rank": rng.randint(0, 1000), "done": False}})
                    answer = await self.timed(op, connection, {"op": "save", "inserts": inserts})
                    if not answer.get("ok"):
                        del mine[-len(inserts):]
                    del mine[:-200]
                elif op == "update":
                    await self.timed(op, connection, {"op": "save", "updates": [{
                        "entity": entity, "id": rng.choice(mine),
                        "values": {"done": rng.random() < 0.3, "rank": rng.randint(0, 1000)}}]})
                elif op == "count":
                    await self.timed(op, connection, {"op": "count", "entity": entity})
                else:
                    await self.timed(op, connection, {"op": "history", "history": {"limit": 20, "newestFirst": True}})
        except (ConnectionError, OSError):
            self.dropped += 1
        finally:
            await connection.close()

    async def idle_client(self, user):
        try:
            connection = await Connection.open(self.args.host, self.args.port, user, self.args.password)
        except (OSError, RuntimeError) as error:
            self.errors[f"idle hello: {error}"] += 1
            return
        try:
            while time.monotonic() < self.stop_at:
                await asyncio.sleep(min(120, max(0.0, self.stop_at - time.monotonic())))
                await self.timed("idle ping", connection, {"op": "ping"})
        except (ConnectionError, OSError):
            self.dropped += 1
        finally:
            await connection.close()

    async def memory_sampler(self, samples):
        while time.monotonic() < self.stop_at:
            await asyncio.sleep(60)
            samples.append((round(time.monotonic() - self.started), rss_kib(self.args.server_pid)))

    async def main(self):
        args = self.args
        suffix = uuid.uuid4().hex[:8]
        entity, self.table = f"LoadTask_{suffix}", f"load_task_{suffix}"
        users = [f"load_{suffix}_{n}" for n in range(args.users)]
        admin = f"load_{suffix}_admin"
        for name, extra in [(admin, ["--admin"])] + [(u, []) for u in users]:
            subprocess.run([args.bin, "user", "add", name, *extra, "--password-stdin", "--database-url", args.database_url],
                           input=args.password + "\n", text=True, check=True, capture_output=True)
        setup = await Connection.open(args.host, args.port, admin, args.password)
        answer = await setup.request({"op": "register", "schema": self.schema(entity, self.table)})
        await setup.close()
        if not answer.get("ok"):
            sys.exit(f"register failed: {answer}")

        rss_start = rss_kib(args.server_pid)
        self.started = time.monotonic()
        self.stop_at = self.started + args.duration
        samples = [(0, rss_start)]
        tasks = [asyncio.create_task(self.idle_client(users[n % len(users)])) for n in range(args.idle)]
        # Clients arrive over the first seconds, as a fleet of apps would, not in one instant.
        for n in range(args.clients):
            tasks.append(asyncio.create_task(self.active_client(n, users[n % len(users)], entity)))
            await asyncio.sleep(args.ramp / max(1, args.clients))
        sampler = asyncio.create_task(self.memory_sampler(samples))
        await asyncio.gather(*tasks)
        sampler.cancel()
        elapsed = time.monotonic() - self.started
        rss_end = rss_kib(args.server_pid)
        samples.append((round(elapsed), rss_end))

        total = sum(len(v) for v in self.latencies.values())
        report = {
            "clients": args.clients, "idle_connections": args.idle, "users": args.users,
            "seconds": round(elapsed, 1), "think_ms_mean": args.think_ms,
            "requests": total, "requests_per_second": round(total / elapsed, 1),
            "errors": dict(self.errors), "error_count": sum(self.errors.values()),
            "dropped_connections": self.dropped, "events_received": self.events,
            "latency_ms": {op: {"count": len(v), "p50": round(percentile(sorted(v), 0.5), 2),
                                "p90": round(percentile(sorted(v), 0.9), 2),
                                "p99": round(percentile(sorted(v), 0.99), 2), "max": round(max(v), 2)}
                           for op, v in sorted(self.latencies.items()) if v},
            "server_rss_kib": {"start": rss_start, "end": rss_end,
                               "samples": " ".join(f"{t}s:{kib}" for t, kib in samples)},
        }
        print(json.dumps(report, indent=2))
        return 0 if report["error_count"] == 0 and self.dropped == 0 else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=7432)
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--bin", default=".build/release/pgmodel", help="pgmodel, to create the load users")
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--idle", type=int, default=1000)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--duration", type=float, default=600)
    parser.add_argument("--ramp", type=float, default=10, help="seconds over which active clients connect")
    parser.add_argument("--think-ms", type=float, default=250)
    parser.add_argument("--password", default="load-secret")
    parser.add_argument("--server-pid", type=int, default=None)
    args = parser.parse_args()
    if not args.database_url:
        sys.exit("set DATABASE_URL or pass --database-url")
    sys.exit(asyncio.run(Run(args).main()))


if __name__ == "__main__":
    main()
